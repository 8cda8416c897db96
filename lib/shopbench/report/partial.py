"""Partial sweeps (issue 14 §2): when the cost cap stops a sweep, what was made and what was not.

The gateway (``budget_mode="partial"``, as notebooks use it) records each stopped run in
``outputs/<profile>/calls/partial.json`` (``{run_id: {"calls_done": n, "calls_total": N}}``) and
removes the entry when a later run of the same id finishes (a rerun with a higher cap makes only
the calls that were not made: the call log and the cache hold the rest). Every table and figure a
notebook registers afterwards, and those of the notebooks that read its data (``needs:`` in
``notebooks/pipeline.yaml``; the run context passes them to :func:`for_notebooks`), carry "partial: n
of N calls" in the caption and a ``partial`` field in ``index.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from filelock import FileLock

FILE = "partial.json"


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record(calls_dir: str | Path, run_id: str, calls_done: int, calls_total: int) -> None:
    """Note that ``run_id`` made ``calls_done`` of its ``calls_total`` calls; a finished run
    (``calls_done == calls_total``) removes its note."""
    path = Path(calls_dir) / FILE
    if calls_done >= calls_total and not path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        data = _read(path)
        if calls_done >= calls_total:
            if run_id not in data:
                return
            data.pop(run_id)
        else:
            data[run_id] = {"calls_done": int(calls_done), "calls_total": int(calls_total)}
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)


def for_notebooks(calls_dir: str | Path, notebooks: Iterable[str]) -> dict | None:
    """The partial runs whose id belongs to one of ``notebooks`` (``<notebook>/...``), summed; None when
    every run of theirs finished."""
    names = set(notebooks)
    data = _read(Path(calls_dir) / FILE)
    runs = {rid: v for rid, v in data.items() if rid.split("/", 1)[0] in names}
    if not runs:
        return None
    return {
        "calls_done": sum(int(v["calls_done"]) for v in runs.values()),
        "calls_total": sum(int(v["calls_total"]) for v in runs.values()),
        "runs": runs,
    }


def note(partial: dict | None) -> str:
    """The caption's sentence for a partial artefact (empty when complete)."""
    if not partial:
        return ""
    return (f"partial: {partial['calls_done']:,} of {partial['calls_total']:,} calls (the cost cap "
            "gateway.max_cost_usd stopped the sweep; raise it and rerun to finish).")  # fmt: skip
