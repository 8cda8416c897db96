"""Anytime sweeps: a fixed, seeded, stratified order of work units, run until a time budget is spent.

Issue 13 §4: "A sweep over a stratified random order of records (stratified by label, family, tier,
swap axis) that stops at a time budget, resumes from the cache, and extends the same sample when
rerun with a larger budget. The progress bar shows the ETA and the budget. Tables built from it
report n per cell [...] and say 'n of N planned'."

The small API (used by the PACE judge sweep, the PADMÉ evaluators and filter judge, and the shop LLM
agent sweep):

- :func:`stratified_order` — a fixed order of items from a seed and a stratum function, such that
  **every prefix is a proportional stratified sample**: within each stratum the items are shuffled
  (seeded), item ``j`` of a stratum of size ``n_s`` gets the position ``(j + u) / n_s`` with a seeded
  jitter ``u`` in [0, 1), and the order sorts by position. After ``k`` items each stratum holds
  ``k · n_s / N`` of them, up to one. The order depends only on the seed and the item keys (not on
  the order they were given in), so the same plan gives the same order on every machine.
- :func:`round_robin_order` — the equal-allocation variant: the strata take turns in a seeded order,
  each giving its items in a seeded shuffle, so after ``k · S`` items each of the ``S`` strata has
  given ``k`` (while it has items). For plans of one or two items per stratum (the shop LLM agents'
  difficulty-stratified trials), where a proportional order would leave a stratum out of a short prefix.
- :func:`run_anytime` — walks the order unit by unit, and before each unit decides whether the
  budget allows it; returns an :class:`AnytimeResult` (the results of the units done, ``n`` of
  ``N`` planned, time spent, why it stopped).

**What the budget measures.** The budget is the *model time of the sample*, not the wall time of
this run: a unit served entirely from the gateway's cache counts the time it took when it was made
(kept in a small ledger beside the cache, ``anytime.sqlite``, keyed by the unit's call keys; for a
unit made before the ledger existed, the latencies the cache stored). So

- a warm rerun with the same budget re-reads the same prefix from the cache in seconds and calls
  nothing (``make paper``'s warm goal);
- a rerun with a larger budget re-reads that prefix and extends it with new units: the sample of a
  larger budget is a prefix-extension of a smaller one's;
- a killed run resumes: finished units are in the cache (and the call log), a half-done unit gets its
  finished calls back from the cache and counts their stored latencies.

**The stop rule.** Units run in order. Before unit ``i`` (``i > 0``) the sweep stops when the time
spent so far plus the mean time of a unit so far would pass the budget (``stop="mean"``, the
default). A unit is never interrupted, so without an estimate a run may pass its budget by one
unit's time; and the first unit always ran, however long it took (a Qwen2.5-1.5B PADMÉ pair took
8.5 min against a 2-minute budget on 2 loaded cores).

**Estimates.** For units whose calls are known (``calls_of``), a new unit is also *estimated* before
it starts: each of its uncached calls costs its prompt length (characters of the request's messages)
times the model's measured seconds per character, the median over the last 50 units of that model
this ledger has seen made (any sweep sharing the cache: the PACE judge sweep of a model informs its
PADMÉ evaluator sweep). The sweep stops before a new unit whose estimate would pass the budget, the
first unit included (``n = 0`` then, and :attr:`AnytimeResult.next_unit_estimate_s` says why). A
model never seen has no estimate, and its first unit runs as before. The rate folds the output into
the prompt length, so it is a rough guide (within ~2× across the project's judge and evaluator
prompts on one machine); it is recorded for every new unit made of one model's calls. ``stop="spent"`` starts a unit
while any budget is left (stops once the time spent reaches the budget; the shop agent sweep's rule,
which always overshoots by the last unit). The decision for unit ``i`` reads only the costs of units
``< i`` (and, for a new unit, its estimate), so it is the same on every rerun with the same ledger:
same budget, same ``n``; larger budget, same or larger ``n`` (a sweep stopped by an estimate may take
one more unit on a rerun once more units of that model have changed the rate). ``budget_s=None``
runs every planned unit.

**Time.** ``clock`` (default :func:`time.monotonic`) times new units; tests pass a fake clock.
Consecutive fully cached units are run as one batch (one ``run`` call), new units one at a time.
"""

from __future__ import annotations

import hashlib
import math
import random
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from ..progress import report as report_progress
from ..progress import tqdm
from .cache import thread_connection
from .call import Call

T = TypeVar("T")
U = TypeVar("U")
R = TypeVar("R")

LEDGER_FILE = "anytime.sqlite"


# ---- the order ------------------------------------------------------------------------------------
def stratified_order(
    items: Iterable[T], stratum: Callable[[T], Hashable], seed: int | str, key: Callable[[T], str] = str
) -> list[T]:
    """``items`` in a seeded order whose every prefix is a proportional stratified sample (module doc).

    ``stratum(item)`` names the item's stratum (any hashable: e.g. ``(label, family, tier,
    swap_axis)``); ``key(item)`` is its stable identity (default ``str``): the order depends only on
    ``seed`` and the keys. Keys must be distinct."""
    items = list(items)
    keys = [key(it) for it in items]
    if len(set(keys)) != len(keys):
        dup = sorted({k for k in keys if keys.count(k) > 1})[:5]
        raise ValueError(f"stratified_order: duplicate item keys {dup}")
    by_stratum: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        by_stratum[repr(stratum(it))].append(i)
    positioned: list[tuple[float, str, int]] = []
    for s in sorted(by_stratum):
        idx = sorted(by_stratum[s], key=lambda i: keys[i])
        rng = random.Random(f"{seed}|{s}")
        rng.shuffle(idx)
        u = rng.random()
        n = len(idx)
        positioned += [((j + u) / n, keys[i], i) for j, i in enumerate(idx)]
    positioned.sort()
    return [items[i] for _, _, i in positioned]


def round_robin_order(
    items: Iterable[T], stratum: Callable[[T], Any], seed: int | str, key: Callable[[T], Any]
) -> list[T]:
    """``items`` with equal allocation over strata (module doc): the strata, sorted and then shuffled
    with ``random.Random(seed)``, take turns; each gives its items sorted by ``key`` and shuffled by
    the same generator (strata in their turn order). ``stratum(item)`` and ``key(item)`` must be
    orderable (tuples of str/int); keys must be distinct. The order depends only on ``seed``, the
    strata and the keys, not on the order the items were given in."""
    items = list(items)
    keys = [key(it) for it in items]
    if len({repr(k) for k in keys}) != len(keys):
        raise ValueError("round_robin_order: duplicate item keys")
    strata: dict[Any, list[T]] = {}
    for it in sorted(items, key=lambda it: (stratum(it), key(it))):
        strata.setdefault(stratum(it), []).append(it)
    rng = random.Random(seed)
    turns = sorted(strata)
    rng.shuffle(turns)
    for s in turns:
        rng.shuffle(strata[s])
    out: list[T] = []
    while any(strata[s] for s in turns):
        out += [strata[s].pop(0) for s in turns if strata[s]]
    return out


def prefix_counts(ordered: Sequence[T], stratum: Callable[[T], Hashable], k: int) -> dict[Hashable, int]:
    """How many of the first ``k`` items fall in each stratum (a table's 'n per stratum')."""
    out: dict[Hashable, int] = defaultdict(int)
    for it in ordered[:k]:
        out[stratum(it)] += 1
    return dict(out)


# ---- the ledger -------------------------------------------------------------------------------------
def unit_key(calls: Iterable[Call]) -> str:
    """A unit's identity: the sorted cache keys of its calls (a changed prompt is a new unit)."""
    return hashlib.sha256("\n".join(sorted(c.key for c in calls)).encode()).hexdigest()


class Ledger:
    """Unit key → seconds the unit took when it was made (SQLite beside the response cache)."""

    def __init__(self, directory: str | Path):
        self.path = Path(directory) / LEDGER_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conn().execute(
            "CREATE TABLE IF NOT EXISTS units (key TEXT PRIMARY KEY, seconds REAL NOT NULL, created REAL)"
        )
        self._conn().execute(
            "CREATE TABLE IF NOT EXISTS rates (model TEXT NOT NULL, chars INTEGER NOT NULL, seconds REAL NOT NULL,"
            " created REAL)"
        )

    def _conn(self) -> sqlite3.Connection:
        return thread_connection(self._local, self.path)

    def get_many(self, keys: Iterable[str]) -> dict[str, float]:
        keys = list(dict.fromkeys(keys))
        out: dict[str, float] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            q = f"SELECT key, seconds FROM units WHERE key IN ({','.join('?' * len(chunk))})"
            out.update(dict(self._conn().execute(q, chunk).fetchall()))
        return out

    def put(self, key: str, seconds: float) -> None:
        self._conn().execute(
            "INSERT OR REPLACE INTO units (key, seconds, created) VALUES (?, ?, ?)",
            (key, float(seconds), time.time()),
        )

    def add_rate(self, model: str, chars: int, seconds: float) -> None:
        """One made unit of ``model``: its prompt characters and the seconds it took."""
        if chars > 0 and seconds >= 0:
            self._conn().execute(
                "INSERT INTO rates (model, chars, seconds, created) VALUES (?, ?, ?, ?)",
                (model, int(chars), float(seconds), time.time()),
            )

    def seconds_per_char(self, model: str, last: int = 50) -> float | None:
        """Median seconds per prompt character over the last ``last`` units of ``model`` (None: never seen)."""
        rows = (
            self._conn()
            .execute(
                "SELECT chars, seconds FROM rates WHERE model = ? ORDER BY rowid DESC LIMIT ?", (model, last)
            )
            .fetchall()
        )
        ratios = sorted(sec / ch for ch, sec in rows if ch > 0)
        if not ratios:
            return None
        mid = len(ratios) // 2
        return ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2


# ---- the sweep ----------------------------------------------------------------------------------------
@dataclass
class AnytimeResult(Generic[U, R]):
    """What an anytime sweep did: the units done (a prefix of the order), their results, and the budget."""

    name: str
    done: list[U]
    results: list[R]
    n_planned: int
    budget_s: float | None
    spent_s: float  # model time of the units done (cached units at the time they took when made)
    new_s: float  # wall time this run spent on new units
    n_cached: int  # units served whole from the cache
    n_new: int  # units (partly) computed in this run
    stopped: str  # "budget" | "complete" | "empty"
    unit_seconds: list[float] = field(default_factory=list)
    next_unit_estimate_s: float | None = (
        None  # set when the sweep stopped before a unit estimated to pass the budget
    )

    @property
    def n(self) -> int:
        return len(self.done)

    @property
    def n_of_N(self) -> str:
        return f"{self.n} of {self.n_planned}"

    def summary(self) -> dict[str, Any]:
        """One row for a table or a JSON sidecar."""
        mean = (self.spent_s / self.n) if self.n else None
        return {
            "sweep": self.name, "n": self.n, "N_planned": self.n_planned, "n_of_N": self.n_of_N,
            "budget_min": None if self.budget_s is None else round(self.budget_s / 60, 3),
            "spent_min": round(self.spent_s / 60, 3), "new_min": round(self.new_s / 60, 3),
            "units_cached": self.n_cached, "units_new": self.n_new, "stopped": self.stopped,
            "mean_unit_s": None if mean is None else round(mean, 3),
            "next_unit_est_min": None if self.next_unit_estimate_s is None else round(self.next_unit_estimate_s / 60, 3),
        }  # fmt: skip


def _fmt_min(s: float) -> str:
    return f"{s / 60:.1f}"


def run_anytime(
    gateway,
    units: Sequence[U],
    calls_of: Callable[[U], Sequence[Call]] | None,
    run: Callable[[list[U]], R],
    *,
    budget_s: float | None,
    key_of: Callable[[U], str] | None = None,
    recorded_cost: Callable[[U], float | None] | None = None,
    stop: Literal["mean", "spent"] = "mean",
    name: str = "anytime",
    clock: Callable[[], float] = time.monotonic,
    progress: bool | None = None,
    ledger: Ledger | None = None,
) -> AnytimeResult[U, R]:
    """Run ``units`` (already in their fixed order, e.g. from :func:`stratified_order`) until
    ``budget_s`` seconds of model time are spent (module docstring for the rule).

    ``calls_of(unit)`` gives the gateway calls a unit will make (their keys say whether it is
    cached); ``run(batch)`` does the work for a list of units (through ``gateway.run``, so it is
    cached and logged) and returns anything; the results come back in ``AnytimeResult.results``, one
    per ``run`` call, in order. Units may share calls (a GOOD record in two pairs): ``run`` must
    then drop the repeats within a batch, and a shared call's time is counted once.

    Units whose calls cannot be known before they run (a multi-turn agent trial: each call depends on
    the last answer) pass ``calls_of=None`` and ``key_of(unit)``, a stable identity (e.g. the trial's
    scenario id, agent and settings): a unit is then cached when the ledger holds its key (it finished
    before; ``run`` must resume it cheaply, e.g. from the gateway cache or its own result file), and
    its cost is the time it took then.

    Units that keep their own record (a trial in its result file) pass ``recorded_cost(unit)``: the
    cost the unit's record holds, or None while it is not done. It then replaces the ledger: a unit
    with a recorded cost is cached at that cost, and a new unit costs what its record says once
    ``run`` has made it (its time on the clock when the record has none). No gateway is needed then
    (``gateway=None``).

    ``stop`` picks the stop rule (module docstring). The gateway's own progress bar is silenced while
    this one (units done of planned, model time spent of the budget, ETA) runs."""
    if budget_s is not None and (
        not isinstance(budget_s, int | float) or budget_s < 0 or math.isnan(budget_s)
    ):
        raise ValueError(f"budget_s must be a non-negative number of seconds or None, got {budget_s!r}")
    units = list(units)
    N = len(units)
    if calls_of is None and key_of is None:
        raise ValueError("run_anytime: give calls_of (the gateway calls of a unit) or key_of (its identity)")
    if stop not in ("mean", "spent"):
        raise ValueError(f"run_anytime: stop must be 'mean' or 'spent', got {stop!r}")
    if gateway is None and (calls_of is not None or (recorded_cost is None and ledger is None)):
        raise ValueError("run_anytime: without a gateway give key_of and recorded_cost (or a ledger)")
    calls: list[list[Call]] = (
        [list(calls_of(u)) for u in units] if calls_of is not None else [[] for _ in units]
    )
    if calls_of is not None:
        keys = [unit_key(cs) for cs in calls]
    else:
        assert key_of is not None
        keys = [hashlib.sha256(f"unit:{key_of(u)}".encode()).hexdigest() for u in units]
    if ledger is None and recorded_cost is None:
        ledger = Ledger(gateway.cache.directory)
    costs = ledger.get_many(keys) if ledger is not None else {}
    stored = gateway.cache.get_many(c.key for cs in calls for c in cs) if calls_of is not None else {}
    show = (gateway.progress if gateway is not None else True) if progress is None else progress

    counted: set[str] = set()  # calls whose time the sample has counted (units may share calls)

    def stored_latency(cs: Sequence[Call]) -> float:
        return float(
            sum((stored.get(c.key) or {}).get("latency_s") or 0.0 for c in cs if c.key not in counted)
        )

    done: list[U] = []
    results: list[R] = []
    seconds: list[float] = []
    spent = new_s = 0.0
    n_cached = n_new = 0
    pending_cached: list[int] = []
    stopped = "complete" if N else "empty"
    bar = tqdm(total=N, desc=name, disable=not show, unit="unit", mininterval=0.5,
               bar_format="{desc}: {n_fmt}/{total_fmt} units |{bar}| [{elapsed}{postfix}]")  # fmt: skip

    def status() -> None:
        mean = spent / len(seconds) if seconds else None
        left = N - len(seconds)
        if budget_s is None:
            eta = mean * left if mean is not None else None
            txt = f"model time {_fmt_min(spent)} min (no budget)"
        else:
            rest = max(0.0, budget_s - spent)
            eta = min(rest, mean * left) if mean is not None else rest
            txt = f"model time {_fmt_min(spent)}/{_fmt_min(budget_s)} min budget"
        eta_txt = "?" if eta is None else f"{_fmt_min(eta)} min"
        report_progress(bar, eta_s=eta)  # the pipeline's progress line (issue 25 §4)
        bar.set_postfix_str(
            f"{txt}, ETA {eta_txt}, cached {n_cached}, new {n_new}"
        )  # refreshes: units are slow

    def flush_cached() -> None:
        if pending_cached:
            results.append(run([units[i] for i in pending_cached]))
            pending_cached.clear()

    estimating = calls_of is not None and ledger is not None and budget_s is not None and stop == "mean"
    rates: dict[str, float | None] = {}
    next_est: float | None = None

    def estimate(todo: Sequence[Call]) -> float | None:
        """Seconds the uncached calls ``todo`` should take (None: a model with no measured rate)."""
        assert ledger is not None
        total = 0.0
        for c in todo:
            if c.model not in rates or rates[c.model] is None:
                rates[c.model] = ledger.seconds_per_char(c.model)
            rate = rates[c.model]
            if rate is None:
                return None
            total += rate * len(c.messages_json)
        return total

    def over_budget() -> bool:
        if budget_s is None:
            return False
        if budget_s <= 0:
            return True
        if stop == "spent":
            return spent >= budget_s
        return bool(seconds) and spent + spent / len(seconds) > budget_s

    old_progress = gateway.progress if gateway is not None else None
    if gateway is not None:
        gateway.progress = False
    try:
        status()
        for i, u in enumerate(units):
            if over_budget():
                stopped = "budget"
                break
            cs = calls[i]
            prior = recorded_cost(u) if recorded_cost is not None else None
            if recorded_cost is not None:
                whole = prior is not None
            else:
                whole = all(c.key in stored for c in cs) if calls_of is not None else keys[i] in costs
            if whole:
                cost = prior if prior is not None else costs.get(keys[i])
                if cost is None:
                    cost = stored_latency(cs)
                pending_cached.append(i)
                n_cached += 1
            else:
                before = stored_latency([c for c in cs if c.key in stored])  # a resumed unit's finished calls
                todo = [c for c in cs if c.key not in stored]
                est = estimate(todo) if estimating else None
                if est is not None and budget_s is not None and spent + before + est > budget_s:
                    stopped, next_est = "budget", est
                    break
                flush_cached()
                t0 = clock()
                results.append(run([u]))
                took = max(0.0, clock() - t0)
                new_s += took
                cost = took + before
                if recorded_cost is not None:
                    made = recorded_cost(u)
                    cost = took if made is None else float(made)
                elif ledger is not None:
                    fresh = gateway.cache.get_many(c.key for c in cs) if gateway is not None else {}
                    if all(c.key in fresh for c in cs):  # a unit with a failed call is retried next time
                        ledger.put(keys[i], cost)
                        costs[keys[i]] = cost
                        if len({c.model for c in todo}) == 1:  # the model's rate, for later estimates
                            ledger.add_rate(todo[0].model, sum(len(c.messages_json) for c in todo), took)
                    stored.update(fresh)
                n_new += 1
            counted.update(c.key for c in cs)
            spent += cost
            seconds.append(cost)
            done.append(u)
            bar.update(1)
            status()
        flush_cached()
    finally:
        if gateway is not None:
            gateway.progress = old_progress
        status()
        bar.close()
    return AnytimeResult(name=name, done=done, results=results, n_planned=N, budget_s=budget_s, spent_s=spent,
                         new_s=new_s, n_cached=n_cached, n_new=n_new, stopped=stopped, unit_seconds=seconds,
                         next_unit_estimate_s=next_est)  # fmt: skip


def budget_seconds(minutes: float | None) -> float | None:
    """A profile's ``llm_budget_min`` as seconds (``None``: no budget, every planned unit)."""
    return None if minutes is None else float(minutes) * 60.0


def plan_columns(table, plans: Mapping[str, Mapping[str, Any]], *, full: Mapping[str, int] | None = None,
                 column: str = "backbone"):  # fmt: skip
    """``table`` (a DataFrame) with the columns ``n``, ``N_planned`` and ``n_of_N`` ("12 of 300") per
    row, from the anytime summaries of the LLM runs (``plans[name]``, :meth:`AnytimeResult.summary`)
    and, for runs without a budget (deterministic judges on the whole split, heuristic evaluators on
    every pair), ``full[name]`` = n = N.
    ``column`` is a column or an index level; rows of other producers (protocol means, majority votes)
    get no count ("–")."""
    import pandas as pd

    names = table.index.get_level_values(column) if column in (table.index.names or []) else table[column]
    n, N = [], []
    for b in names:
        if b in plans:
            n.append(plans[b]["n"])
            N.append(plans[b]["N_planned"])
        elif full and b in full:
            n.append(full[b])
            N.append(full[b])
        else:
            n.append(None)
            N.append(None)
    out = table.copy()
    out["n"] = pd.array(n, dtype="Int64")
    out["N_planned"] = pd.array(N, dtype="Int64")
    out["n_of_N"] = [f"{a} of {b}" if a is not None else None for a, b in zip(n, N, strict=True)]
    return out


def plan_caption(plans: Mapping[str, Mapping[str, Any]]) -> str:
    """A caption sentence: each anytime run's "n of N planned" within its budget."""
    if not plans:
        return ""
    parts = []
    for b, s in plans.items():
        budget = "no budget" if s.get("budget_min") is None else f"{s['budget_min']:g}-min budget"
        est = s.get("next_unit_est_min")
        stop = (
            f"; the next unit, estimated at {est:.1f} min, would pass the budget" if est is not None else ""
        )
        parts.append(
            f"{b}: {s['n']} of {s['N_planned']} planned units ({budget}, {s['spent_min']:.1f} min of model time{stop})"
        )
    return " Anytime sweeps over a fixed stratified order: " + "; ".join(parts) + "."


__all__ = ["AnytimeResult", "LEDGER_FILE", "Ledger", "budget_seconds", "plan_caption", "plan_columns", "prefix_counts",
           "round_robin_order", "run_anytime", "stratified_order", "unit_key"]  # fmt: skip
