"""Where things live: the repository root, the outputs tree of a profile, params and notebooks.

The prompts folder is :func:`prompts_dir`; the one prompt loader is :mod:`shopbench.prompts`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARAMS_DIR = ROOT / "params"
NOTEBOOKS_DIR = ROOT / "notebooks"


PROMPTS_ENV = "SHOPBENCH_PROMPTS_DIR"


def prompts_dir() -> Path:
    """The prompts folder: ``$SHOPBENCH_PROMPTS_DIR`` if set, else ``<repo>/prompts``."""
    return Path(os.environ.get(PROMPTS_ENV) or ROOT / "prompts")


def outputs_root() -> Path:
    """The outputs tree: ``$SHOPBENCH_OUTPUTS`` if set (tests use a temporary one), else ``<repo>/outputs``."""
    return Path(os.environ.get("SHOPBENCH_OUTPUTS") or ROOT / "outputs")


def profile_dir(profile: str) -> Path:
    """``outputs/<profile>/``: notebooks, paper artefacts, call logs and data of one profile."""
    return outputs_root() / profile


def default_cache_dir() -> Path:
    """The model-call cache is shared by all profiles (keys hold the full request)."""
    return Path(os.environ.get("SHOPBENCH_CACHE_DIR") or outputs_root() / "cache")


@contextmanager
def staged_folder(out: Path, tag: str) -> Iterator[Path]:
    """A new temporary folder ``.<out>.<tag>`` beside ``out`` to write into: renamed to ``out`` (which must be
    absent or empty) when the block ends, removed when it raises, so ``out`` is never half written."""
    tmp = out.with_name(f".{out.name}.{tag}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        if out.exists():
            out.rmdir()
        tmp.replace(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
