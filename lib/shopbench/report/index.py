"""The paper index: every table and figure with its evidence kind (issue 13 §1), the notebook,
parameters, prompts, backbones, git commit and date that produced it (the prompts and backbones of
the notebooks it reads from included, issue 25 item 5: :mod:`.provenance`), plus the run summary
(``run.json``); ``index.json`` is the machine-readable copy (one entry per artefact)."""

from __future__ import annotations

import html
import json
from pathlib import Path

import markdown

from . import provenance
from .artifacts import read_artifacts
from .evidence import KINDS, audit


def write_run_json(paper_dir: str | Path, summary: dict) -> Path:
    """``run.json``: wall_s, notebooks [{name, wall_s}], cache_hit_rate, calls, cost_usd, ..."""
    path = Path(paper_dir) / "run.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def _fmt_run(run: dict) -> list[str]:
    rate = run.get("cache_hit_rate")
    lines = [
        "## Run",
        "",
        f"- profile: `{run.get('profile')}` (params `{run.get('params_file')}`, sha256 `{str(run.get('params_sha256'))[:12]}`)",
        f"- git commit: `{run.get('git_commit')}`; date: {run.get('date')}",
        f"- wall time: {run.get('wall_s', 0):.1f} s; model calls: {run.get('calls', 0)}; "
        f"cache hit rate: {'n/a' if rate is None else f'{rate:.1%}'}; cost: ${run.get('cost_usd', 0):.4f}",
        *_provider_cache_line(run),
        *[
            f"- substitute: `{name}` stands in for the paper's `{paper}`"
            for name, paper in sorted((run.get("substitutes") or {}).items())
        ],
        "",
        "| notebook | wall s | status |",
        "|---|---|---|",
    ]
    for nb in run.get("notebooks", []):
        lines.append(
            f"| [{nb['name']}](../notebooks/{nb['name']}.ipynb) | {nb['wall_s']:.1f} | {nb.get('status', 'ok')} |"
        )
    return lines + [""]


def _provider_cache_line(run: dict) -> list[str]:
    pc = run.get("provider_cache") or {}
    if not pc.get("provider_calls"):
        return []
    rate = pc.get("provider_cache_hit_rate")
    return [f"- provider prompt cache (issue 14 §4): {pc['provider_cached_tokens']} of {pc['provider_prompt_tokens']} "
            f"prompt tokens read from cache ({'n/a' if rate is None else f'{rate:.1%}'}), "
            f"{pc['provider_cache_write_tokens']} written, over {pc['provider_calls']} calls made"]  # fmt: skip


def _entry(a: dict) -> dict:
    """One artefact of ``index.json``."""
    return {"name": a["name"], "notebook": a["notebook"], "kind": a["kind"], "evidence": a.get("evidence"),
            "evidence_why": a.get("evidence_why", ""), "evidence_rows": a.get("evidence_rows") or {},
            "evidence_parts": a.get("evidence_parts") or {}, "n": a.get("n", a.get("rows")),
            "backbones": provenance.all_backbones(a), "prompts": provenance.all_prompts(a),
            "files": a["files"], "caption": a["caption"],
            "partial": a.get("partial"), **({"rehearsal": True} if a.get("rehearsal") else {})}  # fmt: skip


def _read_csv(paper_dir: Path):
    import pandas as pd

    def read(a: dict):
        path = paper_dir / a["files"].get("csv", "")
        return pd.read_csv(path) if path.is_file() else None

    return read


def _evidence_summary(arts: list[dict], problems: list[str]) -> list[str]:
    counts: dict[str, int] = {}
    for a in arts:
        counts[str(a.get("evidence"))] = counts.get(str(a.get("evidence")), 0) + 1
    order = [k for k in KINDS if k in counts] + sorted(set(counts) - set(KINDS))
    lines = ["## Evidence", "",
             f"{len(arts)} artefacts: " + (", ".join(f"**{counts[k]} {k}**" for k in order) or "none") + ".",
             ""]  # fmt: skip
    rows: dict[str, int] = {}
    for a in arts:
        if a.get("evidence") == "mixed":
            for k, n in (a.get("evidence_rows") or {}).items():
                rows[k] = rows.get(k, 0) + n
    if rows:
        lines += [
            "Rows of the mixed tables: " + ", ".join(f"{n} {k}" for k, n in sorted(rows.items())) + ".",
            "",
        ]
    lines += [
             "*measured*: a model or procedure that saw only what a real judge/agent/evaluator sees, scored "
             "against gold it never saw. *known-answer*: the outcome follows from how the data or the stand-in "
             "was built (a check of the machinery, not a finding). *reference*: the paper's numbers. *mixed*: "
             "see the table's `evidence` column (or its parts). *rehearsal*: made against the local provider "
             "server (schema-sampled answers): proves the code path, not the numbers.", ""]  # fmt: skip
    if problems:
        lines += (
            [f"**Evidence audit: {len(problems)} problem(s).**", ""] + [f"- {p}" for p in problems] + [""]
        )
    lines += ["| artefact | notebook | type | evidence | n |", "|---|---|---|---|---|"]
    for a in arts:
        n = a.get("n", a.get("rows"))
        lines.append(f"| `{a['name']}` | {a['notebook']} | {a['kind']} | {a.get('evidence') or '–'} | "
                     f"{'–' if n is None else n} |")  # fmt: skip
    return lines + [""]


def build_index(paper_dir: str | Path, run: dict | None = None) -> tuple[Path, Path]:
    """Write ``index.md``, ``index.html`` and ``index.json`` in ``paper_dir`` from the registered
    artefacts; the evidence audit's problems (:func:`.evidence.audit`) are listed at the top and
    returned by :func:`audit_index`."""
    paper_dir = Path(paper_dir)
    if run is None and (paper_dir / "run.json").exists():
        run = json.loads((paper_dir / "run.json").read_text())
    arts = read_artifacts(paper_dir)
    problems = audit(arts, _read_csv(paper_dir))
    title = f"Paper outputs — profile {run.get('profile') if run else paper_dir.parent.name}"
    lines = [f"# {title}", ""]
    lines += _evidence_summary(arts, problems)
    if run:
        lines += _fmt_run(run)
    by_nb: dict[str, list[dict]] = {}
    for a in arts:
        by_nb.setdefault(a["notebook"], []).append(a)
    lines += ["## Tables and figures", ""]
    if not arts:
        lines += ["(none registered yet)", ""]
    for nb in sorted(by_nb):
        lines += [f"### {nb}", ""]
        for a in by_nb[nb]:
            links = " · ".join(f"[{ext}]({p})" for ext, p in a["files"].items())
            lines += [
                f"#### {a['kind'].title()} `{a['name']}` · {a.get('evidence') or 'no evidence kind'}",
                "",
                f"{a['caption']}",
                "",
                f"- files: {links}",
                f"- notebook `{a['notebook']}`; params `{a['params_file']}` sha256 `{a['params_sha256'][:12]}`; "
                f"git `{a['git_commit']}`; {a['date']}",
                *provenance.markdown_lines(a),  # its prompts and backbones, upstream notebooks' included
                f"- backbones it rests on: {', '.join(provenance.all_backbones(a)) or 'none'}",
                "",
            ]
            if a["kind"] == "figure":
                lines += [f"![{a['name']}]({a['files']['png']})", ""]
            elif a["kind"] == "table":
                md_path = paper_dir / a["files"]["md"]
                if md_path.exists():
                    body = md_path.read_text(encoding="utf-8").split("\n\n", 1)[-1]
                    if body.count("\n") <= 40:
                        lines += [body.strip(), ""]
                    else:
                        lines += [
                            f"({body.count(chr(10)) - 2} rows: see [{a['name']}.md]({a['files']['md']}))",
                            "",
                        ]
    md_text = "\n".join(lines)
    md_path = paper_dir / "index.md"
    md_path.write_text(md_text, encoding="utf-8")
    body = markdown.markdown(md_text, extensions=["tables"])
    page = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>"
        "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.45}"
        "table{border-collapse:collapse;margin:.5em 0;display:block;max-width:100%;overflow-x:auto}"
        "td,th{border:1px solid #ccc;padding:3px 8px;font-size:90%;white-space:nowrap}"
        "img{max-width:100%;border:1px solid #eee}code{background:#f4f4f4;padding:0 3px}"
        f"</style></head><body>{body}</body></html>"
    )
    html_path = paper_dir / "index.html"
    html_path.write_text(page, encoding="utf-8")
    index = {"profile": run.get("profile") if run else paper_dir.parent.name, "evidence_problems": problems,
             "substitutes": (run or {}).get("substitutes") or {},
             "artifacts": [_entry(a) for a in arts]}  # fmt: skip
    (paper_dir / "index.json").write_text(
        json.dumps(index, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return md_path, html_path


def audit_index(paper_dir: str | Path) -> list[str]:
    """The evidence problems ``build_index`` wrote to ``index.json`` (empty: none)."""
    path = Path(paper_dir) / "index.json"
    return (
        list(json.loads(path.read_text(encoding="utf-8")).get("evidence_problems", []))
        if path.exists()
        else []
    )
