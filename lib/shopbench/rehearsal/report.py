"""The run-level tables of a rehearsal (issue 14 §3): cost and provider prompt cache per model.

Both are read from the run's call logs (``outputs/<profile>/calls/``) after the last notebook, and
registered in the paper index like a notebook's tables (notebook ``pipeline``). In a rehearsal their
rows are labelled ``rehearsal`` (the costs are litellm's prices applied to the local server's token
counts: they show that the accounting runs, not what a real run costs).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..llm.calllog import read_logs
from ..llm.usage import _n, summarize
from ..report.artifacts import Provenance, now_iso, save_table
from ..report.evidence import per_row
from .fleet import FLEET_PROVIDERS, FleetRun


def cost_and_cache(rows: list[dict]):
    """(cost table, provider-cache table) per model, with an ``all`` row."""
    import pandas as pd

    df = pd.DataFrame(rows)
    if df.empty:
        df = pd.DataFrame(columns=["model", "status", "cache_hit", "prompt_tokens", "completion_tokens",
                                   "cost_usd", "cached_tokens", "cache_write_tokens"])  # fmt: skip
    cost, cache = [], []
    groups = [*df.groupby("model", sort=True), ("all", df)]
    for model, g in groups:
        recs = g.to_dict("records")
        made = [r for r in recs if r.get("cache_hit") is not True and r.get("status") != "error"]
        cost.append({
            "model": model, "calls": len(recs), "calls_made": len(made),
            "errors": sum(r.get("status") == "error" for r in recs),
            "parse_errors": sum(r.get("status") == "parse_error" for r in recs),
            "prompt_tokens": sum(_n(r.get("prompt_tokens")) for r in made),
            "completion_tokens": sum(_n(r.get("completion_tokens")) for r in made),
            "cost_usd": float(pd.to_numeric(g["cost_usd"], errors="coerce").fillna(0).sum()),
        })  # fmt: skip
        pc = summarize(recs)
        cache.append({"model": model, "calls": len(recs), "gateway_cache_hits": sum(r.get("cache_hit") is True for r in recs),
                      **pc})  # fmt: skip
    return pd.DataFrame(cost), pd.DataFrame(cache)


def fleet_table(rows: list[dict], fleet_run: FleetRun):
    """One row per fleet server (address, set to die, how it ended) with the fleet's calls from the call
    logs: rows logged, distinct (run, item, request), rows repeated (a finished call logged twice),
    error rows and calls that needed more than one attempt."""
    import pandas as pd

    mine = [r for r in rows if str(r.get("model", "")).split("/", 1)[0] in FLEET_PROVIDERS]
    done = [(r.get("run_id"), r.get("item_id"), r.get("key")) for r in mine if r.get("status") != "error"]
    summary = {"fleet_rows": len(mine), "fleet_distinct_calls": len(set(done)),
               "fleet_repeated_rows": len(done) - len(set(done)),
               "fleet_error_rows": sum(r.get("status") == "error" for r in mine),
               "fleet_retried_calls": sum(int(r.get("attempts") or 0) > 1 for r in mine)}  # fmt: skip
    return pd.DataFrame([{**s, **summary} for s in fleet_run.states()])


def run_tables(prof, root: Path, fleet_run: FleetRun | None = None) -> list[dict]:
    """Write ``run_cost`` and ``run_provider_cache`` (and ``run_fleet`` when the rehearsal ran a fleet)
    for the run in ``root`` and register them."""
    rows = read_logs(root / "calls") if (root / "calls").exists() else []
    cost, cache = cost_and_cache(rows)
    prov = Provenance(notebook="pipeline", profile=prof.name, params_file=str(prof.path.name),
                      params_sha256=prof.sha256, git_commit=os.environ.get("SHOPBENCH_GIT_COMMIT", ""),
                      date=now_iso())  # fmt: skip
    paper = root / "paper"
    return [
        save_table(cost, "run_cost", "Calls, tokens and cost per model over the whole run (from the call logs; "
                   "cost is litellm's price map at the rates each call used: cached and batch rates included).",
                   paper, prov, evidence=per_row("model"), why="accounting of this run's calls"),
        save_table(cache, "run_provider_cache", "Prompt caching per model: the gateway's response cache "
                   "(gateway_cache_hit_rate: whole answers from disk) beside the provider's prompt cache "
                   "(provider_cache_hit_rate: cached-read / prompt tokens of the calls made; cache-write tokens "
                   "for Anthropic's cache_control).", paper, prov, evidence=per_row("model"),
                   why="accounting of this run's calls"),
    ] + ([] if fleet_run is None else [
        save_table(fleet_table(rows, fleet_run), "run_fleet", "The hosted_vllm/ models' fleet (issue 14 §5): "
                   "each server process, whether it was set to die mid-run and how it ended, with the fleet's "
                   "calls from the call logs (rows repeated: a finished call logged twice; it must be 0).",
                   paper, prov, evidence="measured", why="server states and call-log counts of this run"),
    ])  # fmt: skip


__all__ = ["cost_and_cache", "fleet_table", "run_tables"]
