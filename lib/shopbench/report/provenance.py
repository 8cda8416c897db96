"""What each notebook rested on, for provenance a user can follow (issue 25 item 5).

A notebook's run context records the prompt files its code read (every loader reports to
:func:`shopbench.prompts.record_prompts_with`, so nothing is listed by hand) and the backbones it used,
and keeps them in ``outputs/<profile>/paper/notebook_inputs.json``::

    {"20_pace_judge_sweep": {"prompts": {"judge_pacejudge": "<sha256>", ...},
                             "backbones": ["local/checks", ...], "date": "..."}, ...}

Each notebook's entry is replaced when it runs again (an up-to-date notebook keeps its entry, as it
keeps its data). An artefact's provenance then names, besides its own notebook's prompts and
backbones, those of every notebook it reads from (``needs:`` in ``notebooks/pipeline.yaml``,
transitively): Table 3 (notebook 30) names the judge prompts notebook 20 ran.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from filelock import FileLock

FILE = "notebook_inputs.json"


def read_inputs(paper_dir: str | Path) -> dict[str, dict]:
    """Every notebook's recorded inputs (empty when none was recorded)."""
    try:
        data = json.loads((Path(paper_dir) / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_inputs(paper_dir: str | Path, notebook: str, prompts: Mapping[str, str], backbones: Iterable[str],
                  date: str) -> None:  # fmt: skip
    """Replace ``notebook``'s entry: the prompts (name → sha256) and backbones it used so far."""
    path = Path(paper_dir) / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        data = read_inputs(path.parent)
        data[notebook] = {"prompts": dict(sorted(prompts.items())), "backbones": sorted(set(backbones)),
                          "date": date}  # fmt: skip
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)


def upstream_inputs(paper_dir: str | Path, notebooks: Iterable[str]) -> dict[str, dict | None]:
    """The notebooks a notebook reads from (``notebooks``: transitively, nearest first, as
    :func:`shopbench.pipeline_steps.upstream` lists them after the notebook itself) → their recorded
    prompts and backbones, or None for one whose run left no record (it has not run in this outputs
    folder since the record was introduced: run it to record what it used)."""
    recorded = read_inputs(paper_dir)
    out: dict[str, dict | None] = {}
    for nb in notebooks:
        rec = recorded.get(nb)
        out[nb] = ({"prompts": dict(rec.get("prompts") or {}), "backbones": list(rec.get("backbones") or [])}
                   if isinstance(rec, dict) else None)  # fmt: skip
    return out


def all_prompts(artefact: Mapping) -> list[dict]:
    """Every prompt an artefact rests on: ``[{name, sha256, notebook}]``, its own notebook's first."""
    rows = [{"name": k, "sha256": v, "notebook": artefact.get("notebook")}
            for k, v in sorted((artefact.get("prompts") or {}).items())]  # fmt: skip
    for nb, rec in (artefact.get("upstream") or {}).items():
        rows += [
            {"name": k, "sha256": v, "notebook": nb}
            for k, v in sorted(((rec or {}).get("prompts") or {}).items())
        ]
    return rows


def all_backbones(artefact: Mapping) -> list[str]:
    """Every backbone an artefact rests on (its notebook's and those of the notebooks it reads from)."""
    names = set(artefact.get("backbones") or [])
    for rec in (artefact.get("upstream") or {}).values():
        names.update((rec or {}).get("backbones") or [])
    return sorted(names)


def markdown_lines(artefact: Mapping) -> list[str]:
    """The index's provenance lines of one artefact: its own prompts, then each upstream notebook's."""

    def prompts(p: Mapping[str, str]) -> str:
        return ", ".join(f"`{k}` {v[:10]}" for k, v in sorted(p.items())) or "none"

    lines = [f"- prompts read by `{artefact.get('notebook')}`: {prompts(artefact.get('prompts') or {})}"]
    for nb, rec in (artefact.get("upstream") or {}).items():
        if rec is None:
            lines.append(f"- rests on `{nb}`: no record of its prompts and backbones (run it to record them)")
        else:
            lines.append(f"- rests on `{nb}`: prompts {prompts(rec.get('prompts') or {})}; backbones: "
                         f"{', '.join(rec.get('backbones') or []) or 'none'}")  # fmt: skip
    return lines
