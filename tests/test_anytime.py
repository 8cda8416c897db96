"""Anytime sweeps (issue 13 §4): the stratified order, the budget stop, resume and extension.

Every budget test runs the real gateway on an embedded backend (``local/echo``, instant) and a fake
clock that the unit runner advances, so no assertion depends on wall-clock time.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from shopbench.llm import Call
from shopbench.llm.anytime import (
    Ledger,
    prefix_counts,
    round_robin_order,
    run_anytime,
    stratified_order,
    unit_key,
)


# ---- the order ------------------------------------------------------------------------------------------
def _items():
    # 3 strata of unequal sizes: 60 a, 30 b, 10 c
    return [f"a{i}" for i in range(60)] + [f"b{i}" for i in range(30)] + [f"c{i}" for i in range(10)]


def test_stratified_order_is_seeded_and_independent_of_input_order():
    items = _items()
    o1 = stratified_order(items, lambda s: s[0], seed=7)
    o2 = stratified_order(list(reversed(items)), lambda s: s[0], seed=7)
    o3 = stratified_order(items, lambda s: s[0], seed=8)
    assert o1 == o2
    assert sorted(o1) == sorted(items)
    assert o1 != o3


def test_every_prefix_is_a_proportional_stratified_sample():
    items = _items()
    order = stratified_order(items, lambda s: s[0], seed=3)
    sizes = Counter(s[0] for s in items)
    for k in range(1, len(items) + 1):
        got = prefix_counts(order, lambda s: s[0], k)
        for st, n_s in sizes.items():
            assert abs(got.get(st, 0) - k * n_s / len(items)) <= 1.0, (k, st, got)
    # the rare stratum shows up within the first 10 items
    assert any(s.startswith("c") for s in order[:10])


def test_stratified_order_rejects_duplicate_keys():
    with pytest.raises(ValueError, match="duplicate"):
        stratified_order(["x", "x"], lambda s: 0, seed=0)


# ---- the budget ------------------------------------------------------------------------------------------
class FakeClock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _call(i: int) -> Call:
    return Call(f"u{i}", "local/echo", [{"role": "user", "content": f"unit {i}"}])


def _made(gw) -> int:
    """Model calls the gateway made (not served from its cache or call log)."""
    return gw.stats["calls"] - gw.stats["cache_hits"]


def _runner(gw, clock, per_call_s=10.0, run_id="anytime-test", fail_on=None):
    """``run(batch)``: one gateway run; the fake clock moves ``per_call_s`` for every call the cache missed."""

    def run(batch):
        if fail_on is not None and fail_on in batch:
            raise KeyboardInterrupt("killed")
        made = _made(gw)
        rows = gw.run([_call(i) for i in batch], run_id)
        clock.t += per_call_s * (_made(gw) - made)
        return rows

    return run


def test_budget_stop_resume_and_extension(gateway):
    gw = gateway()
    clock = FakeClock()
    units = list(range(10))
    run = _runner(gw, clock)

    first = run_anytime(gw, units, lambda i: [_call(i)], run, budget_s=35, clock=clock, progress=False)
    # 0 s → unit 0 (10 s), 10 + 10 ≤ 35 → unit 1, 20 + 10 ≤ 35 → unit 2, 30 + 10 > 35: stop
    assert first.done == [0, 1, 2] and first.stopped == "budget"
    assert (first.n, first.n_planned, first.n_of_N) == (3, 10, "3 of 10")
    assert first.spent_s == pytest.approx(30) and first.n_new == 3

    # the same budget again: the same prefix, all from the cache, nothing called, no time spent
    t_before, calls_before = clock.t, _made(gw)
    again = run_anytime(gw, units, lambda i: [_call(i)], run, budget_s=35, clock=clock, progress=False)
    assert again.done == first.done and again.n_cached == 3 and again.n_new == 0
    assert again.spent_s == pytest.approx(30)  # cached units count the time they took when made
    assert clock.t == t_before and _made(gw) == calls_before

    # a larger budget extends the same sample: the first three from the cache, then new units
    more = run_anytime(gw, units, lambda i: [_call(i)], run, budget_s=65, clock=clock, progress=False)
    assert more.done[:3] == first.done and more.done == [0, 1, 2, 3, 4, 5]
    assert (more.n_cached, more.n_new) == (3, 3) and more.spent_s == pytest.approx(60)

    # no budget: every planned unit; zero budget: nothing
    full = run_anytime(gw, units, lambda i: [_call(i)], run, budget_s=None, clock=clock, progress=False)
    assert full.done == units and full.stopped == "complete" and full.n_cached == 6
    zero = run_anytime(gw, units, lambda i: [_call(i)], run, budget_s=0, clock=clock, progress=False)
    assert zero.n == 0 and zero.stopped == "budget"


def test_a_killed_sweep_resumes_without_repeating_a_call(gateway):
    gw = gateway()
    clock = FakeClock()
    units = list(range(6))
    with pytest.raises(KeyboardInterrupt):
        run_anytime(gw, units, lambda i: [_call(i)], _runner(gw, clock, fail_on=3), budget_s=1000, clock=clock,
                    progress=False)  # fmt: skip
    assert gw.stats["calls"] == 3  # units 0-2 were made before the kill
    res = run_anytime(gw, units, lambda i: [_call(i)], _runner(gw, clock), budget_s=1000, clock=clock,
                      progress=False)  # fmt: skip
    assert res.done == units and res.stopped == "complete"
    assert (res.n_cached, res.n_new) == (3, 3)
    assert _made(gw) == 6  # each unit called exactly once in all
    assert res.spent_s == pytest.approx(60)


def test_the_ledger_keeps_unit_costs_beside_the_cache(gateway, tmp_path):
    gw = gateway()
    clock = FakeClock()
    run_anytime(gw, [0, 1], lambda i: [_call(i)], _runner(gw, clock, per_call_s=7), budget_s=None, clock=clock,
                progress=False)  # fmt: skip
    costs = Ledger(gw.cache.directory).get_many([unit_key([_call(0)]), unit_key([_call(1)])])
    assert sorted(costs.values()) == [7.0, 7.0]


def test_shared_calls_are_counted_once(gateway):
    """Two units that share a call (a GOOD record in two pairs): its time counts once."""
    gw = gateway()
    clock = FakeClock()
    units = [(0, 1), (0, 2)]

    def run(batch):
        ids = list(dict.fromkeys(i for u in batch for i in u))
        made = _made(gw)
        rows = gw.run([_call(i) for i in ids], "shared")
        clock.t += 10.0 * (_made(gw) - made)
        return rows

    res = run_anytime(
        gw, units, lambda u: [_call(i) for i in u], run, budget_s=None, clock=clock, progress=False
    )
    assert res.spent_s == pytest.approx(30)
    warm = run_anytime(
        gw, units, lambda u: [_call(i) for i in u], run, budget_s=None, clock=clock, progress=False
    )
    assert warm.spent_s == pytest.approx(30) and warm.n_cached == 2


def test_bad_budget_is_a_clear_error(gateway):
    with pytest.raises(ValueError, match="budget_s"):
        run_anytime(gateway(), [0], lambda i: [_call(i)], lambda b: None, budget_s=-1, progress=False)


# ---- the PACE judge sweep on a budget -----------------------------------------------------------------------
def test_judge_anytime_sweep_pairs_extends_and_reports_n_of_N(paceshop_small, gateway):
    from shopbench.judges.pace.sweep import anytime_sweep, judge_units
    from shopbench.llm.anytime import plan_columns

    build = paceshop_small[1]
    records = [r for r in build.records if r.split == "test"]
    s0 = build.subsets["s0_reference"]
    units = judge_units(records, ["s0", "swaps", "bad"], s0_ids=s0, seed=5)
    by_id = {r.record_id: r for r in records}
    assert all(by_id[u[0]].kind == "good" or (len(u) == 2 and by_id[u[1]].kind == "good") for u in units)
    assert {by_id[u[0]].kind for u in units} == {"good", "bad", "swap"}
    assert len({u[0] for u in units}) == len(units)

    gw = gateway()
    clock = FakeClock()
    real_run = gw.run

    def timed_run(calls, run_id, **kw):  # the fake clock: 5 s per call the gateway made
        made = _made(gw)
        rows = real_run(calls, run_id, **kw)
        clock.t += 5.0 * (_made(gw) - made)
        return rows

    gw.run = timed_run
    kw = dict(plan=["s0", "swaps", "bad"], s0_ids=s0, seed=5, run_id="anytime-judge", clock=clock)
    t1, r1 = anytime_sweep(gw, ["pacejudge"], "local/checks", records, budget_s=40, **kw)
    assert r1.stopped == "budget" and 1 <= r1.n < r1.n_planned == len(units)
    assert set(t1.record_id) == {i for u in r1.done for i in u}
    swaps = t1[t1.kind == "swap"]
    assert swaps.base_record_id.isin(set(t1.record_id)).all()  # every swap judged with its GOOD base
    t2, r2 = anytime_sweep(gw, ["pacejudge"], "local/checks", records, budget_s=80, **kw)
    assert (
        r2.done[: r1.n] == r1.done and r2.n > r1.n and r2.n_cached >= r1.n
    )  # a GOOD judged as a base is free later
    assert set(t1.item_id) <= set(t2.item_id)

    tab = pd.DataFrame({"backbone": ["local/checks", "local/always-bad"], "x": [1, 2]})
    out = plan_columns(tab, {"local/checks": r2.summary()}, full={"local/always-bad": 99})
    assert list(out["n_of_N"]) == [f"{r2.n} of {r2.n_planned}", "99 of 99"]
    assert list(out["n"]) == [r2.n, 99]


# ---- PADMÉ evaluators and the LLM filter judge on a budget ---------------------------------------------------
def test_padme_evaluator_and_filter_judge_anytime(gateway):
    from shopbench.judges.padme.filters import filter_pairs_anytime
    from shopbench.judges.padme.sweep import PairUnit, score_pairs_anytime
    from shopbench.padme.criteria import DEFAULT_CRITERIA
    from shopbench.padme.types import Rollout

    crit = DEFAULT_CRITERIA[0]

    def roll(rid, task):
        msgs = [
            {"role": "user", "content": f"help with {task}"},
            {"role": "assistant", "content": f"done {rid}"},
        ]
        return Rollout(rid, task, "airline", "test", crit.name, "good", "", "agent-m", "scripted", 0, 0, msgs)

    units = [
        PairUnit(f"p{i}", roll(f"w{i}", f"t{i % 3}"), roll(f"b{i}", f"t{i % 3}"), (f"t{i % 3}",))
        for i in range(9)
    ]
    gw = gateway()
    clock = FakeClock()
    real_run = gw.run

    def timed_run(calls, run_id, **kw):
        made = _made(gw)
        rows = real_run(calls, run_id, **kw)
        clock.t += 10.0 * (_made(gw) - made)
        return rows

    gw.run = timed_run
    kw = dict(gateway=gw, seed=1, runs=1, run_id="pairs", clock=clock)
    s1, r1 = score_pairs_anytime(units, lambda r: crit, "local/schema-sampler", budget_s=50, **kw)
    assert (
        r1.n == 2 and r1.n_planned == 9 and r1.stopped == "budget"
    )  # 20 s per pair: 0 → 20 → 40, 40 + 20 > 50
    assert set(s1.rollout_id) == {x.rollout_id for u in r1.done for x in (u.worse, u.better)}
    assert len({u.stratum for u in r1.done}) == 2  # a stratified prefix: two different tasks
    s2, r2 = score_pairs_anytime(units, lambda r: crit, "local/schema-sampler", budget_s=90, **kw)
    assert r2.done[:2] == r1.done and r2.n == 4 and r2.n_cached == 2
    with pytest.raises(ValueError, match="reference evaluator"):
        score_pairs_anytime(units, lambda r: crit, "heuristic", budget_s=1, **kw)

    f, rf = filter_pairs_anytime(units, lambda r: crit, gw, "local/schema-sampler", budget_s=None, seed=1,
                                 run_id="filter", clock=clock)  # fmt: skip
    assert rf.n == 9 and len(f) == 9 and set(f.better_slot) <= {1, 2}
    assert (f.passed == (f.choice == f.better_slot)).all()


def test_units_known_only_by_key_use_the_ledger(gateway):
    """An agent trial's calls are not known before it runs: ``key_of`` and the ledger decide."""
    gw = gateway()
    clock = FakeClock()
    ran: list[int] = []

    def run(batch):
        ran.extend(batch)
        clock.t += 10.0 * len([u for u in batch if u not in done_before])
        return batch

    done_before: set[int] = set()
    r1 = run_anytime(gw, list(range(8)), None, run, key_of=lambda u: f"trial-{u}", budget_s=25, clock=clock,
                     progress=False)  # fmt: skip
    assert r1.done == [0, 1] and r1.n_new == 2
    done_before.update(r1.done)
    r2 = run_anytime(gw, list(range(8)), None, run, key_of=lambda u: f"trial-{u}", budget_s=45, clock=clock,
                     progress=False)  # fmt: skip
    assert r2.done == [0, 1, 2, 3] and (r2.n_cached, r2.n_new) == (2, 2) and r2.spent_s == pytest.approx(40)
    with pytest.raises(ValueError, match="calls_of"):
        run_anytime(gw, [0], None, run, budget_s=1, progress=False)


# ---- units with their own record, the equal-allocation order --------------------------------------------
def test_round_robin_order_gives_each_stratum_a_turn():
    """Equal allocation: after k·S items every one of the S strata has given k (while it has items),
    whatever their sizes; seeded and independent of the input order."""
    items = _items()
    order = round_robin_order(items, lambda s: s[0], seed="x", key=lambda s: (s[0], int(s[1:])))
    assert sorted(order) == sorted(items)
    assert order == round_robin_order(
        list(reversed(items)), lambda s: s[0], "x", key=lambda s: (s[0], int(s[1:]))
    )
    assert order != round_robin_order(items, lambda s: s[0], "y", key=lambda s: (s[0], int(s[1:])))
    for k in range(1, 11):  # the smallest stratum (c) has 10 items: 3 per round until then
        assert Counter(s[0] for s in order[: 3 * k]) == {"a": k, "b": k, "c": k}
    assert all(s[0] != "c" for s in order[30:])
    with pytest.raises(ValueError, match="duplicate"):
        round_robin_order(["a1", "a1"], lambda s: s[0], 0, key=str)


def test_recorded_costs_replace_the_ledger_and_stop_when_spent():
    """Units with their own record (a shop trial in its store) need no gateway: a recorded unit is
    cached at its recorded cost, a new one costs what its record says once made; ``stop="spent"``
    starts a unit while the budget is not yet spent (so it passes the budget by the last unit)."""
    record: dict[int, float] = {}
    made: list[int] = []

    def run(batch):
        for u in batch:
            if u not in record:
                made.append(u)
                record[u] = 30.0 + u  # what the unit's own record says it cost
        return batch

    def go(budget_s):
        return run_anytime(None, list(range(6)), None, run, key_of=str, recorded_cost=record.get, stop="spent",
                           budget_s=budget_s, clock=FakeClock(), progress=False)  # fmt: skip

    r1 = go(60)
    assert r1.done == [0, 1] and made == [0, 1] and r1.spent_s == 61 and r1.stopped == "budget"
    r2 = go(60)  # same budget: same prefix, nothing made
    assert r2.done == [0, 1] and made == [0, 1] and (r2.n_cached, r2.n_new) == (2, 0)
    r3 = go(100)  # larger budget: the same prefix extended
    assert r3.done == [0, 1, 2, 3] and made == [0, 1, 2, 3] and r3.spent_s == 30 + 31 + 32 + 33
    r4 = go(None)
    assert r4.done == list(range(6)) and r4.stopped == "complete" and r4.results == [[0, 1, 2, 3], [4], [5]]
    assert go(0).done == []
    assert go(55).done == [0, 1]  # 30 s spent < 55: unit 1 starts
    # the default rule ("mean") does not start unit 1 under a 55-s budget: 30 spent + 30 mean > 55
    r5 = run_anytime(None, list(range(6)), None, run, key_of=str, recorded_cost=record.get, budget_s=55,
                     clock=FakeClock(), progress=False)  # fmt: skip
    assert r5.done == [0] and r5.spent_s == 30
    with pytest.raises(ValueError, match="without a gateway"):
        run_anytime(None, [0], None, run, key_of=str, budget_s=1, progress=False)
    with pytest.raises(ValueError, match="stop"):
        run_anytime(None, [0], None, run, key_of=str, recorded_cost=record.get, budget_s=1, stop="never",  # type: ignore[arg-type]
                    progress=False)  # fmt: skip


# ---- estimates: a new unit that would pass the budget does not start ---------------------------------------
def test_a_unit_estimated_over_the_budget_does_not_start_not_even_the_first(gateway):
    """The first unit of a model never seen runs (no estimate); once a sweep has made units of that
    model, the next sweep estimates a new unit from its prompt length and the measured seconds per
    character, and stops before it when it would pass the budget (n = 0, with the estimate)."""
    gw = gateway()
    clock = FakeClock()
    units = list(range(6))
    run = _runner(gw, clock, per_call_s=100.0, run_id="est-a")
    # no rate yet: the first unit runs although it takes 100 s of a 30 s budget (the old overshoot)
    first = run_anytime(gw, units, lambda i: [_call(i)], run, budget_s=30, clock=clock, progress=False)
    assert first.done == [0] and first.spent_s == pytest.approx(100) and first.next_unit_estimate_s is None
    ledger = Ledger(gw.cache.directory)
    rate = ledger.seconds_per_char("local/echo")
    assert rate == pytest.approx(100.0 / len(_call(0).messages_json))

    # another sweep of the same model (other calls): its first unit is estimated at ~100 s > 30 s
    def other(i):
        return [Call(f"v{i}", "local/echo", [{"role": "user", "content": f"other {i}"}])]

    def run_other(batch):
        made = _made(gw)
        rows = gw.run([c for i in batch for c in other(i)], "est-b")
        clock.t += 100.0 * (_made(gw) - made)
        return rows

    made = _made(gw)
    second = run_anytime(gw, units, other, run_other, budget_s=30, clock=clock, progress=False)
    assert second.n == 0 and second.stopped == "budget" and _made(gw) == made
    assert second.next_unit_estimate_s == pytest.approx(rate * len(other(0)[0].messages_json))
    assert second.summary()["next_unit_est_min"] == pytest.approx(second.next_unit_estimate_s / 60, abs=1e-3)
    # a budget that holds the estimate lets it run
    third = run_anytime(gw, units, other, run_other, budget_s=250, clock=clock, progress=False)
    assert third.n == 2  # 2 x 100 s; a third would pass 250 s (the mean rule stops it)


def test_cached_units_need_no_estimate(gateway):
    """A warm rerun re-reads its prefix from the cache whatever the estimate says."""
    gw = gateway()
    clock = FakeClock()
    units = list(range(4))
    run = _runner(gw, clock, per_call_s=100.0, run_id="est-c")
    a = run_anytime(gw, units, lambda i: [_call(i)], run, budget_s=250, clock=clock, progress=False)
    assert a.done == [0, 1]
    Ledger(gw.cache.directory).add_rate("local/echo", 1, 1e6)  # a wildly pessimistic rate now
    b = run_anytime(gw, units, lambda i: [_call(i)], run, budget_s=250, clock=clock, progress=False)
    assert b.done == [0, 1] and b.n_cached == 2 and b.n_new == 0
