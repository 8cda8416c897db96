"""The agent sweep (seed 002 §5): every agent plays the same scenarios; trajectories are appended to
one JSONL file per agent as each trial finishes, so a killed sweep resumes where it stopped without
losing or repeating a finished trial.

"Eight open-weight agents run the same 160-trial sweep, 100 general shopping, 50 grocery, and 10
refusal probes, across difficulties 1-10 [...] Every run uses the same tools, scoring contract,
controller, and stopping policy" (§5).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..env.orchestrator import Stop
from ..llm.anytime import budget_seconds, run_anytime
from ..progress import tqdm
from .trial import run_trial
from .types import CONTRACT_VERSION, Scenario, TrialRecord


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", name)


def read_records(p: Path) -> list[dict]:
    """The finished records of the append-only JSONL ``p`` ([] when there is none yet)."""
    if not p.exists():
        return []
    rows, good_bytes = [], 0
    with p.open("rb") as f:
        for line in f:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                break  # a line cut by a kill: drop it and everything after (nothing valid follows)
            good_bytes += len(line)
    if good_bytes != p.stat().st_size:  # truncate the torn tail so the next append starts clean
        with p.open("r+b") as f:
            f.truncate(good_bytes)
    return rows


def append_record(p: Path, rec: dict, **dumps) -> None:
    """Append ``rec`` to ``p`` as one JSON line (``json.dumps`` options ``dumps``), on disk before it returns."""
    with p.open("a", encoding="utf-8") as f:
        f.write(json.dumps(rec, **dumps) + "\n")
        f.flush()
        os.fsync(f.fileno())


class TrajectoryStore:
    """Append-only JSONL of finished trajectories, one file per agent under ``root``."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, agent: str) -> Path:
        return self.root / f"{_safe(agent)}.jsonl"

    def done_ids(self, agent: str) -> set[str]:
        return {r["trial_id"] for r in read_records(self.path(agent))}

    def append(self, traj: TrialRecord) -> None:
        append_record(self.path(traj.agent), traj.to_dict(), sort_keys=True)

    def load(self, agent: str) -> list[TrialRecord]:
        out = []
        for r in read_records(self.path(agent)):
            if r.get("contract_version") != CONTRACT_VERSION:
                raise ValueError(
                    f"{self.path(agent)}: trajectory {r.get('trial_id')} has scoring contract "
                    f"{r.get('contract_version')!r}, this code writes {CONTRACT_VERSION!r}; delete the file to re-run"
                )
            out.append(TrialRecord.from_dict(r))
        return out

    def agents(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*.jsonl"))


def _named(agent, name: str):
    """``agent``, checked to carry the name its factory is listed under."""
    if getattr(agent, "name", name) != name:
        raise ValueError(f"agent factory for {name!r} built an agent named {getattr(agent, 'name', None)!r}")
    return agent


def run_sweep(
    scenarios: Sequence[Scenario],
    agents: dict[str, Callable[[], object]],
    user_factory: Callable[[], object],
    store,
    out: TrajectoryStore,
    *,
    progress: bool = True,
) -> dict[str, list[TrialRecord]]:
    """Run every agent (name -> factory) on every scenario; skip trials already in ``out``.

    Returns all trajectories per agent (finished earlier plus new), in scenario order."""
    result: dict[str, list[TrialRecord]] = {}
    for name, make in agents.items():
        done = out.done_ids(name)
        todo = [s for s in scenarios if s.trial_id not in done]
        if todo:
            agent, user = _named(make(), name), user_factory()
            bar = tqdm(todo, desc=f"trials {name}", unit="trial", disable=not progress, mininterval=0.5)
            for s in bar:
                out.append(run_trial(s, agent, user, store))
        by_id = {t.trial_id: t for t in out.load(name)}
        result[name] = [by_id[s.trial_id] for s in scenarios if s.trial_id in by_id]
    return result


def trial_cost_s(t: TrialRecord) -> float:
    """What a finished trial spent against a time budget: the agent's model time (recorded per call,
    the original time also on a cache hit) or the trial's wall time, whichever is larger. A cached
    rerun therefore counts what the trials cost when they ran."""
    return max(float(t.wall_s or 0.0), float(t.usage.get("agent", {}).get("model_s", 0.0)))


def run_budgeted(
    scenarios: Sequence[Scenario],
    name: str,
    make: Callable[[], object],
    user_factory: Callable[[], object],
    store,
    out: TrajectoryStore,
    budget_min: float | None,
    *,
    progress: bool = True,
) -> tuple[list[TrialRecord], dict]:
    """Play ``scenarios`` in the given (fixed, stratified) order until the time budget is spent.

    Issue 13 §4: the trials "run in a fixed seeded difficulty-stratified order and the sweep stops
    starting new trials when the budget is spent; a rerun resumes [...] and a larger budget extends
    the same order". The walk is :func:`shopbench.llm.anytime.run_anytime`, the one anytime loop of
    every LLM sweep, with the trial store as its record: a trial already in ``out`` is done and costs
    its :func:`trial_cost_s`; a new trial costs the same once played. The stop rule is ``"spent"``:
    a trial starts while the trials before it in the order have spent less than ``budget_min``
    minutes. A started trial gets the budget that is left as a deadline: when it passes, the trial
    ends as ``time_budget`` before its next agent step or customer turn (one slow model call can still
    pass it). A cut trial is neither stored nor scored (a Qwen2.5-1.5B trial on 2 cores ran 43 tool
    rounds of 2-3.5 min each before this existed); the walk stops there, and a rerun with a larger
    budget plays it again from the start, its earlier calls served by the gateway's cache. ``None``
    plays every scenario without a deadline. The agent and the customer are made when the first new
    trial starts (a warm rerun makes neither).

    Returns the finished trials of the walked prefix in plan order and a status: ``agent``,
    ``planned`` (N), ``done`` (n), ``spent_s``, ``budget_s``, ``stopped_by_budget``, ``cut_by_budget``
    (the trial ids cut at the deadline)."""
    ids = {s.trial_id for s in scenarios}
    finished = {t.trial_id: t for t in out.load(name) if t.trial_id in ids} if out.path(name).exists() else {}
    party: list = []  # [agent, user], made for the first new trial
    budget_s = budget_seconds(budget_min)
    spent = [0.0]  # what the trials walked so far cost (cached ones at their recorded cost)
    cut: list[str] = []

    def play(batch: list[Scenario]) -> list[TrialRecord]:
        trials = []
        for s in batch:
            t = finished.get(s.trial_id)
            if t is None:
                if not party:
                    party.extend([_named(make(), name), user_factory()])
                left = None if budget_s is None else max(0.0, budget_s - spent[0])
                t = run_trial(s, party[0], party[1], store,
                              deadline=None if left is None else time.monotonic() + left)  # fmt: skip
                if t.termination == Stop.TIME_BUDGET:
                    cut.append(t.trial_id)
                    spent[0] += trial_cost_s(t)
                    continue
                out.append(t)
                finished[t.trial_id] = t
            spent[0] += trial_cost_s(t)
            trials.append(t)
        return trials

    def recorded(s: Scenario) -> float | None:
        t = finished.get(s.trial_id)
        return None if t is None else trial_cost_s(t)

    res = run_anytime(None, scenarios, None, play, budget_s=budget_s,
                      key_of=lambda s: s.trial_id, recorded_cost=recorded, stop="spent",
                      name=f"trials {name}", progress=progress)  # fmt: skip
    done = [t for batch in res.results for t in batch]
    status = {"agent": name, "planned": res.n_planned, "done": len(done), "spent_s": round(res.spent_s, 1),
              "budget_s": res.budget_s, "stopped_by_budget": res.stopped == "budget" or bool(cut),
              "cut_by_budget": list(cut)}  # fmt: skip
    return done, status
