"""Save tables (CSV, Markdown, LaTeX) and figures (PNG, PDF) with captions and provenance."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from filelock import FileLock

from ..paths import ROOT

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass
class Provenance:
    """What produced an artefact: enough to rebuild it."""

    notebook: str
    profile: str
    params_file: str
    params_sha256: str
    prompts: dict[str, str] = field(default_factory=dict)  # prompt name -> sha256
    backbones: list[str] = field(default_factory=list)
    git_commit: str = ""
    date: str = ""


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
        raise ValueError(f"artefact name {name!r}: use letters, digits, '_', '-', '.' (e.g. paceshop_tab3_main)")


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
               float_format: str = "%.3f") -> dict:  # fmt: skip
    """Write ``<name>.csv``, ``.md`` and ``.tex`` under ``paper_dir/tables`` and register them."""
    _check_name(name)
    paper_dir = Path(paper_dir)
    out = paper_dir / "tables"
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / f"{name}.csv", index=True)
    md = df.to_markdown(floatfmt=float_format.strip("%")) if _has_tabulate() else _markdown(df, float_format)
    (out / f"{name}.md").write_text(f"**{name}.** {caption}\n\n{md}\n", encoding="utf-8")
    tex = df.to_latex(float_format=lambda x: float_format % x, caption=latex_escape(caption), label=f"tab:{name}",
                      escape=True)  # fmt: skip
    (out / f"{name}.tex").write_text(tex, encoding="utf-8")
    files = {ext: f"tables/{name}.{ext}" for ext in ("csv", "md", "tex")}
    rec = {"kind": "table", "name": name, "caption": caption, "files": files, "rows": len(df),
           **asdict(provenance), "date": provenance.date or now_iso()}  # fmt: skip
    return _register(paper_dir, rec)


def save_figure(fig, name: str, caption: str, paper_dir: str | Path, provenance: Provenance, dpi: int = 150) -> dict:
    """Write ``<name>.png`` and ``.pdf`` under ``paper_dir/figures`` and register them."""
    _check_name(name)
    paper_dir = Path(paper_dir)
    out = paper_dir / "figures"
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / f"{name}.png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(out / f"{name}.pdf", bbox_inches="tight", metadata={"CreationDate": None, "Creator": None})
    files = {"png": f"figures/{name}.png", "pdf": f"figures/{name}.pdf"}
    rec = {"kind": "figure", "name": name, "caption": caption, "files": files, **asdict(provenance),
           "date": provenance.date or now_iso()}  # fmt: skip
    return _register(paper_dir, rec)


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401

        return True
    except ImportError:
        return False


def _markdown(df, float_format: str) -> str:
    """A GitHub-flavoured Markdown table without the optional ``tabulate`` dependency."""
    idx_name = " / ".join(str(n) for n in df.index.names if n is not None) or ""
    show_index = not (df.index.dtype.kind == "i" and list(df.index) == list(range(len(df))))
    cols = ([idx_name] if show_index else []) + [str(c) for c in df.columns]

    def fmt(v) -> str:
        if isinstance(v, tuple):
            return " / ".join(fmt(x) for x in v)
        if isinstance(v, float):
            return float_format % v
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for idx, row in zip(df.index, df.itertuples(index=False), strict=True):
        cells = ([fmt(idx)] if show_index else []) + [fmt(v) for v in row]
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
