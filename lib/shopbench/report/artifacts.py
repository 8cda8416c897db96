"""Save tables (CSV, Markdown, LaTeX) and figures (PNG, PDF) with captions and provenance."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from filelock import FileLock

from ..paths import ROOT
from .evidence import EVIDENCE_COLUMN, EvidenceError, PerRow
from .evidence import resolve as resolve_evidence
from .figures import mark_kinds, tidy
from .partial import note as partial_note

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass
class Provenance:
    """What produced an artefact: enough to rebuild it. ``prompts`` and ``backbones``: what its own
    notebook read and used; ``upstream``: the same for each notebook it reads from, transitively
    (``{notebook: {"prompts": {...}, "backbones": [...]}}``, None for one with no record; issue 25
    item 5, :mod:`.provenance`)."""

    notebook: str
    profile: str
    params_file: str
    params_sha256: str
    prompts: dict[str, str] = field(default_factory=dict)  # prompt name -> sha256
    backbones: list[str] = field(default_factory=list)
    git_commit: str = ""
    date: str = ""
    upstream: dict[str, dict | None] = field(default_factory=dict)


def git_commit() -> str:
    """The checkout's commit (with ``-dirty`` when the work tree has changes), or ``unknown``."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10).stdout.strip()  # fmt: skip
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()  # fmt: skip
        return (sha + ("-dirty" if dirty else "")) if sha else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise ValueError(
            f"artefact name {name!r}: use letters, digits, '_', '-', '.' (e.g. paceshop_tab3_main)"
        )


_LATEX = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
          "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}  # fmt: skip


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def _register(paper_dir: Path, record: dict) -> dict:
    paper_dir.mkdir(parents=True, exist_ok=True)
    path = paper_dir / "artifacts.jsonl"
    with FileLock(str(path) + ".lock"), open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return record


def save_table(df, name: str, caption: str, paper_dir: str | Path, provenance: Provenance,
               float_format: str = "%.3f", *, evidence=None, why: str = "", n: int | None = None,
               partial: dict | None = None, key: Sequence[str] | None = None) -> dict:  # fmt: skip
    """Write ``<name>.csv``, ``.md`` and ``.tex`` under ``paper_dir/tables`` and register them.

    ``evidence`` is required (:mod:`.evidence`): a kind, ``per_row(<producer column>)``, ``"mixed"``
    with an ``evidence`` column, or a ``{column: kind}`` mapping. The caption carries it. The CSV
    keeps every value; the Markdown and LaTeX show missing values as "–", integral counts as
    integers, and leave out all-empty rows and columns, saying so in the caption (issue 16 §3).

    ``key``: the columns (or index levels) that identify a row (``["backbone", "protocol"]``); stored
    in the registry, so ``python -m shopbench.report.diff`` matches rows by them (issue 25 item 7)."""
    _check_name(name)
    ev, df = resolve_evidence(evidence, name, df, why)
    key = _check_key(df, name, key)
    paper_dir = Path(paper_dir)
    out = paper_dir / "tables"
    out.mkdir(parents=True, exist_ok=True)
    # a default 0..n-1 index says nothing: leave it out (it read back as an "Unnamed: 0" column)
    import pandas as pd

    plain_index = isinstance(df.index, pd.RangeIndex) and df.index.name is None
    df.to_csv(out / f"{name}.csv", index=not plain_index)
    shown, omitted = present(df, float_format)
    full_caption = " ".join(x for x in (caption.strip(), omitted, partial_note(partial), ev.label()) if x)
    md = _markdown(shown)
    (out / f"{name}.md").write_text(f"**{name}.** {full_caption}\n\n{md}\n", encoding="utf-8")
    tex = shown.to_latex(caption=latex_escape(full_caption), label=f"tab:{name}", escape=True)
    (out / f"{name}.tex").write_text(tex, encoding="utf-8")
    files = {ext: f"tables/{name}.{ext}" for ext in ("csv", "md", "tex")}
    rec = {"kind": "table", "name": name, "caption": full_caption, "files": files, "rows": len(df),
           "n": len(df) if n is None else int(n), **ev.as_dict(), **_fixed(evidence), "partial": partial,
           **({"key": key} if key else {}),
           **asdict(provenance), "date": provenance.date or now_iso()}  # fmt: skip
    return _register(paper_dir, rec)


def _check_key(df, name: str, key: Sequence[str] | str | None) -> list[str]:
    """``key`` as a list of the CSV's column names; a name that is neither a column nor a named index
    level is a ``ValueError`` (a notebook's mistake, caught when it saves the table)."""
    if not key:
        return []
    cols = [key] if isinstance(key, str) else [str(k) for k in key]
    have = [str(c) for c in df.columns] + [str(n) for n in df.index.names if n is not None]
    missing = [c for c in cols if c not in have]
    if missing:
        raise ValueError(
            f"table {name!r}: key column(s) {missing} are not columns of the table; it has {have}"
        )
    return cols


def save_figure(fig, name: str, caption: str, paper_dir: str | Path, provenance: Provenance, dpi: int = 150, *,
                evidence=None, why: str = "", n: int | None = None, partial: dict | None = None) -> dict:  # fmt: skip
    """Write ``<name>.png`` and ``.pdf`` under ``paper_dir/figures`` and register them. ``evidence``
    is required: a kind, or a ``{series: kind}`` mapping for a figure that mixes kinds."""
    _check_name(name)
    if isinstance(evidence, PerRow):
        raise EvidenceError(
            f"figure {name!r}: per-row evidence needs a table; give a kind or {{series: kind}}"
        )
    ev, _ = resolve_evidence(evidence, name, None, why)
    paper_dir = Path(paper_dir)
    out = paper_dir / "figures"
    out.mkdir(parents=True, exist_ok=True)
    notes = tidy(fig, name, caption)  # title, legends outside the data, all-zero panels said (issue 16 §3)
    mark_kinds(fig, ev.parts)  # a mixed figure names the kind beside each non-measured series
    caption = " ".join([caption.strip(), *notes])
    fig.savefig(out / f"{name}.png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(out / f"{name}.pdf", bbox_inches="tight", metadata={"CreationDate": None, "Creator": None})
    files = {"png": f"figures/{name}.png", "pdf": f"figures/{name}.pdf"}
    cap = " ".join(x for x in (caption.strip(), partial_note(partial), ev.label()) if x)
    rec = {"kind": "figure", "name": name, "caption": cap, "files": files, "partial": partial,
           "n": None if n is None else int(n), **ev.as_dict(), **asdict(provenance),
           "date": provenance.date or now_iso()}  # fmt: skip
    return _register(paper_dir, rec)


def _fixed(evidence) -> dict:
    """Producers whose per-row kind the notebook fixed, and the members that ``majority@k`` / mean rows
    combine (both kept for the audit, which re-derives each row's kind)."""
    if not isinstance(evidence, PerRow):
        return {}
    return {**({"evidence_fixed": dict(evidence.fixed)} if evidence.fixed else {}),
            **({"evidence_members": list(evidence.members)} if evidence.members else {})}  # fmt: skip


# ---- presentation (issue 16 §3) ------------------------------------------------------------------
MISSING = "–"
_MISSING_TEXT = {"", "nan", "NaN", "None", "<NA>", "NaT", "-", "–", "—"}
_COUNT_WORDS = re.compile(r"(^n$|^n_|_n$|count|calls|records|trials|pairs|tokens|hits|rows|items|units|votes|"
                          r"cells|tasks|products|queries|personas|judgments|failures|errors|attempts|size|"
                          r"^k$|correct|total|kept|generated|passed|missing|flips|swaps)", re.I)  # fmt: skip


def _is_missing(v) -> bool:
    if v is None:
        return True
    if isinstance(v, float):
        return math.isnan(v)
    if isinstance(v, str):
        return v.strip() in _MISSING_TEXT
    try:
        import pandas as pd

        return bool(pd.isna(v)) if not isinstance(v, (list, tuple, dict, set)) else False
    except (TypeError, ValueError):
        return False


def _integral_column(values: list, name: str) -> bool:
    """Print a float column as integers: every value integral, and the name says count or a value
    exceeds 1 (so a rate column of 0.0/1.0 keeps its decimals)."""
    nums = [v for v in values if isinstance(v, float) and not math.isnan(v)]
    if not nums or len(nums) != sum(1 for v in values if not _is_missing(v)):
        return False
    if not all(v.is_integer() for v in nums):
        return False
    return bool(_COUNT_WORDS.search(name)) or max(abs(v) for v in nums) > 1


def _integral(v) -> bool:
    return isinstance(v, float) and not math.isnan(v) and v.is_integer()


def _big_integral(v) -> bool:
    """In a column of mixed types (a statistic per row), a float like 10.0 is a count: print "10"."""
    return isinstance(v, float) and not math.isnan(v) and v.is_integer() and abs(v) > 1


def _cell(v, float_format: str, as_int: bool) -> str:
    if isinstance(v, tuple):
        return " / ".join(_cell(x, float_format, as_int) for x in v)
    if _is_missing(v):
        return MISSING
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float) or type(v).__module__ == "numpy" and hasattr(v, "dtype") and v.dtype.kind == "f":
        v = float(v)
        return str(int(v)) if as_int else float_format % v
    return str(v)


def present(df, float_format: str = "%.3f"):
    """The table as shown in Markdown/LaTeX: strings, "–" for every missing value, integral counts as
    integers, all-empty rows and columns left out. Returns ``(shown, note)``, the note naming what was
    left out (empty when nothing was)."""
    import pandas as pd

    cols = list(df.columns)
    empty_cols = [c for c in cols if len(df) and all(_is_missing(v) for v in df[c])]
    keep = [c for c in cols if c not in empty_cols]
    body = df[keep]
    values = [c for c in keep if c != EVIDENCE_COLUMN]  # a row's evidence label is not a value
    empty_rows = [i for i in range(len(body)) if values and all(_is_missing(v) for v in body[values].iloc[i])]
    if empty_rows:
        body = body.drop(index=body.index[empty_rows])
    shown = pd.DataFrame(index=body.index)
    # a table with one statistic per row ("pairs annotated", "n_swaps") names its counts in the row label
    count_rows = [body.index.dtype.kind == "O" and bool(_COUNT_WORDS.search(_cell(i, float_format, False)))
                  for i in body.index]  # fmt: skip
    for c in keep:
        vals = [v.item() if hasattr(v, "item") and not isinstance(v, (str, bytes)) else v for v in body[c]]
        as_int = _integral_column(vals, str(c))
        mixed = not as_int and any(isinstance(v, float) for v in vals) and not all(
            isinstance(v, float) or _is_missing(v) for v in vals)  # fmt: skip
        shown[c] = [
            _cell(v, float_format, as_int or (mixed and _big_integral(v)) or (count_row and _integral(v)))
            for v, count_row in zip(vals, count_rows, strict=True)
        ]
    shown.index = pd.Index([_cell(i, float_format, False) if not isinstance(i, str) else i for i in body.index],
                           name=" / ".join(str(n) for n in df.index.names if n is not None) or None)  # fmt: skip
    default_index = df.index.nlevels == 1 and df.index.name is None and df.index.dtype.kind == "i" and (
        list(df.index) == list(range(len(df))))  # fmt: skip
    shown.attrs["show_index"] = not default_index
    notes = []
    if empty_cols:
        notes.append(f"Columns with no value in this run, not shown: {', '.join(map(str, empty_cols))}.")
    if empty_rows:
        labels = [_cell(df.index[i], float_format, False) for i in empty_rows]
        notes.append(f"Rows with no value in this run, not shown: {'; '.join(labels)}.")
    return shown, " ".join(notes)


def _markdown(shown) -> str:
    """A GitHub-flavoured Markdown table of :func:`present`'s output (no ``tabulate`` needed)."""
    idx_name = shown.index.name or ""
    show_index = shown.attrs.get("show_index", True)
    cols = ([idx_name] if show_index else []) + [str(c) for c in shown.columns]

    def esc(v) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(esc(c) for c in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for idx, row in zip(shown.index, shown.itertuples(index=False), strict=True):
        cells = ([esc(idx)] if show_index else []) + [esc(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def read_artifacts(paper_dir: str | Path) -> list[dict]:
    """Registered artefacts, last registration per name winning, in first-registration order."""
    path = Path(paper_dir) / "artifacts.jsonl"
    if not path.exists():
        return []
    recs: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            recs[f"{r['kind']}:{r['name']}"] = r
    return list(recs.values())
