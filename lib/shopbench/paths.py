"""Where things live: the repository root, the outputs tree of a profile, prompts and params.

Prompts are read when a step needs them (never at import time), from one folder:
``$SHOPBENCH_PROMPTS_DIR`` if set, else the checkout's ``prompts/``. :func:`load_prompt` is the one
loader; an installed wheel imports without a checkout and says where to point the variable when a
prompt is asked for.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InputError

ROOT = Path(__file__).resolve().parents[2]
PARAMS_DIR = ROOT / "params"
NOTEBOOKS_DIR = ROOT / "notebooks"
PROMPTS_ENV = "SHOPBENCH_PROMPTS_DIR"


def outputs_root() -> Path:
    """The outputs tree: ``$SHOPBENCH_OUTPUTS`` if set (tests use a temporary one), else ``<repo>/outputs``."""
    return Path(os.environ.get("SHOPBENCH_OUTPUTS") or ROOT / "outputs")


def profile_dir(profile: str) -> Path:
    """``outputs/<profile>/``: notebooks, paper artefacts, call logs and data of one profile."""
    return outputs_root() / profile


def default_cache_dir() -> Path:
    """The model-call cache is shared by all profiles (keys hold the full request)."""
    return Path(os.environ.get("SHOPBENCH_CACHE_DIR") or outputs_root() / "cache")


# ---- prompts ------------------------------------------------------------------------------------
class PromptNotFound(InputError, FileNotFoundError):
    """A prompt file a step needs is not in the prompts folder (an :class:`InputError` that is also a
    ``FileNotFoundError``, as callers caught before)."""


def prompts_dir() -> Path:
    """The prompts folder: ``$SHOPBENCH_PROMPTS_DIR`` if set, else ``<repo>/prompts``."""
    return Path(os.environ.get(PROMPTS_ENV) or ROOT / "prompts")


def prompt_path(stem: str, needed_by: str = "this step") -> Path:
    """``<prompts>/<stem>.txt``; a missing file is a :class:`PromptNotFound` naming its user and the
    prompts that do exist."""
    folder = prompts_dir()
    path = folder / f"{stem}.txt"
    if path.is_file():
        return path
    known = sorted(p.stem for p in folder.glob("*.txt")) if folder.is_dir() else []
    raise PromptNotFound(
        f"no prompt file {stem}.txt; {needed_by} needs it"
        + (f" (known prompts: {', '.join(known)})" if known else f" (no folder {folder})"),
        file=path,
        fix=f"run from a checkout with prompts/, or set {PROMPTS_ENV} to a folder holding the prompt files",
    )


def read_prompt(stem: str, needed_by: str = "this step") -> str:
    """The prompt file's full text, header comments included (what provenance hashes)."""
    return prompt_path(stem, needed_by).read_text(encoding="utf-8")


def strip_header(text: str) -> str:
    """A prompt template without its leading ``#`` comment lines (and one blank line after them):
    prompt files start with a header that says where the text comes from."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    if i and i < len(lines) and not lines[i].strip():
        i += 1
    return "".join(lines[i:])


def load_prompt(stem: str, needed_by: str = "this step") -> str:
    """``<prompts>/<stem>.txt`` with its header stripped: the one prompt loader."""
    return strip_header(read_prompt(stem, needed_by))


def __getattr__(name: str) -> Path:
    # ``PROMPTS_DIR`` is resolved on each access, so ``$SHOPBENCH_PROMPTS_DIR`` set after import counts
    if name == "PROMPTS_DIR":
        return prompts_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
