"""The one prompt loader of the judges: ``prompts/<stem>.txt`` → a :class:`~shopbench.context.Prompt`.

Every judge prompt file starts with ``#`` header comments (what is verbatim from the paper and what
is reconstructed); :func:`shopbench.paths.strip_header` removes them (and one blank line) before
rendering. The file is read when a judge first needs it (never at import), from
:data:`shopbench.paths.PROMPTS_DIR` as it is at that moment, and re-read when it changes on disk.
Every read (cached or not) is reported to the run's prompt recorder
(:func:`shopbench.paths.note_prompt`), so the notebook's provenance lists it (issue 25 item 5).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .. import paths
from ..context import Prompt

__all__ = ["load_template"]

_CACHE: dict[tuple[str, int, int], tuple[str, str]] = {}


def _read(path: Path) -> tuple[str, str]:
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        text = path.read_text(encoding="utf-8")
        _CACHE[key] = (text, hashlib.sha256(text.encode()).hexdigest())
    return _CACHE[key]


def load_template(stem: str, ctx=None, needed_by: str = "this judge") -> Prompt:
    """The prompt ``stem`` with its header stripped; ``sha256`` is the file's (header included)."""
    if ctx is not None:
        pr = ctx.prompt(stem)
        return Prompt(pr.name, paths.strip_header(pr.text), pr.sha256)
    path = paths.PROMPTS_DIR / f"{stem}.txt"
    if not path.exists():
        known = sorted(p.stem for p in paths.PROMPTS_DIR.glob(f"{stem.split('_')[0]}_*.txt"))
        raise FileNotFoundError(f"no prompt file {path}; {needed_by} needs prompts/{stem}.txt "
                                f"(similar prompts: {', '.join(known) or 'none'})")  # fmt: skip
    text, sha = _read(path)
    paths.note_prompt(stem, sha)
    return Prompt(stem, paths.strip_header(text), sha)
