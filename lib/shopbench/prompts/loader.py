"""The one prompt loader (issue 27 "One house": ``prompts`` is the layer above ``llm`` and below
``judges``): ``prompts/<stem>.txt`` → text, :class:`Prompt`, with every read recorded for provenance.

Prompts are read when a step needs them (never at import time), from one folder:
``$SHOPBENCH_PROMPTS_DIR`` if set, else the checkout's ``prompts/`` (:func:`prompts_dir`). An
installed wheel imports without a checkout and says where to point the variable when a prompt is
asked for (:class:`PromptNotFound`).

Every prompt file starts with ``#`` header comments (what is verbatim from a paper and what is
reconstructed); :func:`strip_header` removes them (and one blank line) before rendering, while the
sha256 is the file's full text. Every read is reported to the run's recorder
(:func:`record_prompts_with`, :func:`note_prompt`), so a notebook's provenance lists the prompts its
code actually loaded, whichever function read them (issue 25 item 5).

- :func:`read_prompt` (full text), :func:`load_prompt` (header stripped): a prompt by stem;
- :func:`read_prompt_file`: a prompt file named by a profile key (:func:`prompt_file`);
- :func:`load_template`: a judge's prompt as a :class:`Prompt` (cached per file version; through
  a run context when one is given);
- :func:`placeholders` / :func:`check_placeholders`: the ``{slot}`` names of a template.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..paths import PROMPTS_ENV, ROOT, prompts_dir


@dataclass
class Prompt:
    """A prompt template from ``prompts/<name>.txt`` with named ``{slots}``."""

    name: str
    text: str
    sha256: str

    def render(self, **slots) -> str:
        try:
            return self.text.format(**slots)
        except KeyError as e:
            raise KeyError(f"prompt {self.name!r} needs slot {e.args[0]!r}; given: {sorted(slots)}") from None


class PromptNotFound(InputError, FileNotFoundError):
    """A prompt file a step needs is not in the prompts folder (an :class:`InputError` that is also a
    ``FileNotFoundError``, as callers caught before)."""


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
    """The prompt file's full text, header comments included (what provenance hashes); the read is
    reported to the run's recorder (:func:`record_prompts_with`)."""
    text = prompt_path(stem, needed_by).read_text(encoding="utf-8")
    note_prompt(stem, hashlib.sha256(text.encode()).hexdigest())
    return text


# ---- which prompts a run read (issue 25 item 5) -----------------------------------------------------
_RECORDER: Callable[[str, str], None] | None = None


def record_prompts_with(recorder: Callable[[str, str], None] | None) -> Callable[[str, str], None] | None:
    """Send every prompt read from now on (``recorder(name, sha256)``) to ``recorder``; returns the
    one it replaces. A notebook's run context registers itself here (:func:`shopbench.context.start`),
    so its provenance lists the prompts the notebook's code actually loaded, whichever loader read
    them (issue 25 item 5), not a hand-kept list."""
    global _RECORDER
    previous, _RECORDER = _RECORDER, recorder
    return previous


def note_prompt(name: str, sha256: str) -> None:
    """Report one prompt read (its name and the sha256 of the file's full text) to the recorder."""
    if _RECORDER is not None:
        _RECORDER(name, sha256)


def prompt_file(value: str | Path) -> Path:
    """A profile's prompt-file setting as a path (issue 25 item 5): absolute as given; ``prompts/...``
    inside the prompts folder (so ``$SHOPBENCH_PROMPTS_DIR``, when set, overrides where the default
    files are read from); any other relative path relative to the repository root."""
    p = Path(value).expanduser()
    if p.is_absolute():
        return p
    if p.parts and p.parts[0] == "prompts":
        return prompts_dir().joinpath(*p.parts[1:])
    return ROOT / p


def prompt_name(path: Path) -> str:
    """How provenance names a prompt file: its stem inside the prompts folder, else its path (relative
    to the repository when it is inside it)."""
    path = Path(path)
    try:
        if path.resolve().parent == prompts_dir().resolve() and path.suffix == ".txt":
            return path.stem
        return str(path.resolve().relative_to(ROOT.resolve()))
    except (OSError, ValueError):
        return str(path)


def read_prompt_file(path: str | Path, needed_by: str = "this step") -> tuple[str, str, str]:
    """``(name, full text, sha256)`` of a prompt file named by a profile key (:func:`prompt_file`);
    the read is recorded like :func:`read_prompt`'s. A missing file is a :class:`PromptNotFound`."""
    path = prompt_file(path)
    if not path.is_file():
        raise PromptNotFound(f"no prompt file {path}; {needed_by} needs it", file=path,
                             fix="give an existing file (absolute, or relative to the repository root)")  # fmt: skip
    text = path.read_text(encoding="utf-8")
    name, sha = prompt_name(path), hashlib.sha256(text.encode()).hexdigest()
    note_prompt(name, sha)
    return name, text, sha


def placeholders(template: str) -> set[str]:
    """The ``{slot}`` names a template (header stripped) fills with ``str.format``; a ``ValueError``
    for a malformed template (a lone ``{`` or ``}``)."""
    return {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(template) if f}


def check_placeholders(template: str, required: Iterable[str]) -> str | None:
    """What is wrong with ``template`` for a step that fills exactly ``required`` (None: nothing):
    a required slot it lacks, a slot nobody fills, or a malformed brace."""
    required = set(required)
    try:
        have = placeholders(template)
    except ValueError as e:
        return f"is not a valid template ({e}; write literal braces as {{{{ and }}}})"
    problems = []
    if required - have:
        problems.append(
            f"lacks the placeholder(s) {', '.join('{' + s + '}' for s in sorted(required - have))}"
        )
    if have - required:
        problems.append(
            f"has placeholder(s) nothing fills: {', '.join('{' + s + '}' for s in sorted(have - required))}"
        )
    return " and ".join(problems) or None


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
    """``<prompts>/<stem>.txt`` with its header stripped."""
    return strip_header(read_prompt(stem, needed_by))


# ---- judge templates: read when a judge first needs one, re-read when the file changes ------------
_CACHE: dict[tuple[str, int, int], tuple[str, str]] = {}


def _read(path: Path) -> tuple[str, str]:
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        text = path.read_text(encoding="utf-8")
        _CACHE[key] = (text, hashlib.sha256(text.encode()).hexdigest())
    return _CACHE[key]


def load_template(stem: str, ctx=None, needed_by: str = "this judge") -> Prompt:
    """The prompt ``stem`` as a :class:`Prompt` with its header stripped; ``sha256`` is the file's
    (header included). With a run context ``ctx`` the read goes through ``ctx.prompt`` (its
    provenance); otherwise the file is read from :func:`prompts_dir` as it is at that moment (cached
    per file version) and the read reported to the recorder (cached or not)."""
    if ctx is not None:
        pr = ctx.prompt(stem)
        return Prompt(pr.name, strip_header(pr.text), pr.sha256)
    folder = prompts_dir()
    path = folder / f"{stem}.txt"
    if not path.exists():
        known = sorted(p.stem for p in folder.glob(f"{stem.split('_')[0]}_*.txt"))
        raise FileNotFoundError(f"no prompt file {path}; {needed_by} needs prompts/{stem}.txt "
                                f"(similar prompts: {', '.join(known) or 'none'})")  # fmt: skip
    text, sha = _read(path)
    note_prompt(stem, sha)
    return Prompt(stem, strip_header(text), sha)


def __getattr__(name: str) -> Path:
    # ``PROMPTS_DIR`` is resolved on each access, so ``$SHOPBENCH_PROMPTS_DIR`` set after import counts
    if name == "PROMPTS_DIR":
        return prompts_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
