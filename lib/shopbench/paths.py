"""Where things live: the repository root, the outputs tree of a profile, params and notebooks.

The prompts folder is :func:`prompts_dir`; the one prompt loader is :mod:`shopbench.prompts`.
"""

from __future__ import annotations

import os
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
