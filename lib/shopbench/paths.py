"""Where things live: the repository root, the outputs tree of a profile, prompts and params."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARAMS_DIR = ROOT / "params"
PROMPTS_DIR = ROOT / "prompts"
NOTEBOOKS_DIR = ROOT / "notebooks"


def outputs_root() -> Path:
    """The outputs tree: ``$SHOPBENCH_OUTPUTS`` if set (tests use a temporary one), else ``<repo>/outputs``."""
    return Path(os.environ.get("SHOPBENCH_OUTPUTS") or ROOT / "outputs")


def profile_dir(profile: str) -> Path:
    """``outputs/<profile>/``: notebooks, paper artefacts, call logs and data of one profile."""
    return outputs_root() / profile


def default_cache_dir() -> Path:
    """The model-call cache is shared by all profiles (keys hold the full request)."""
    return Path(os.environ.get("SHOPBENCH_CACHE_DIR") or outputs_root() / "cache")


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
    """``prompts/<stem>.txt`` with its header stripped; a missing file names itself and its user."""
    path = PROMPTS_DIR / f"{stem}.txt"
    if not path.exists():
        raise FileNotFoundError(f"no prompt file {path}; {needed_by} needs prompts/{stem}.txt")
    return strip_header(path.read_text(encoding="utf-8"))
