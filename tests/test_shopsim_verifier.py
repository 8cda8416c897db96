"""The deterministic verifier (seed 002 §4.1, §4.3, §4.4, §5.1, App. E, I, K, L) on hand-built
trajectories whose metric values are computed by hand in the comments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from shopbench.judges import Judgment
from shopbench.metrics.shop import intervals
from shopbench.shopsim.registry import PENALTIES
from shopbench.shopsim.types import (
    Directive,
    GoalItem,
    Scenario,
    ShopProduct,
    ToolCall,
    ToolEvent,
    TrialRecord,
    Turn,
    UserReply,
)
from shopbench.shopsim.verifier import ablation, battery
from shopbench.shopsim.verifier.outcomes import consistency, trial_outcomes
from shopbench.shopsim.verifier.toolcalls import tool_call_correctness
from shopbench.shopsim.verifier.tooluse import tool_use

# --- builders --------------------------------------------------------------------------------------


def call(name, **args):
    return ToolCall(name, args)


def add(pid, total, q=1):
    """A successful add whose result reports the product's new total."""
    return call("add_to_cart", product_id=pid, quantity=q), {"product_id": pid, "quantity": total}


def upd(pid, total):
    return call("update_cart_quantity", product_id=pid, quantity=total), {
        "product_id": pid,
        "quantity": total,
    }


def search(query, ids):
    return call("search_products", query=query), {"results": [{"product_id": i} for i in ids]}


def details(pid):
    return call("get_product_details", product_id=pid), {"product_id": pid, "title": pid}


def err(c):
    return c, {"error": "bad request"}


def T(events=(), expected=(), frustration=1, message="hi", agent="ok", terminate=False):
    return {"events": list(events), "expected": list(expected), "frustration": frustration, "message": message,
            "agent": agent, "terminate": terminate}  # fmt: skip


def traj(items, turns, revealed_at=None, *, kind="general", difficulty=3, tier="direct", termination="max_turns",
         final_cart=None, agent="a", seed=1) -> TrialRecord:  # fmt: skip
    """items: [(pid, qty, category)]; turns: T(...) dicts; events get turn = position, round = order."""
    goal = tuple(GoalItem(p, q, c) for p, q, c in items)
    sc = Scenario(seed=seed, kind=kind, difficulty=difficulty, tier=tier, breadth=1, items=goal, persona={},
                  max_turns=10, style="linear")  # fmt: skip
    ts = []
    for i, t in enumerate(turns):
        evs = [ToolEvent(i, r, c, res) for r, (c, res) in enumerate(t["events"])]
        user = UserReply("", t["frustration"], t["message"], t["terminate"], None, t["expected"])
        ts.append(Turn(i, Directive(i, [], []), user, agent_message=t["agent"], events=evs))
    out = TrialRecord(sc, agent, "sim", "be helpful", ts, termination, {}, dict(revealed_at or {}))
    from shopbench.shopsim.replay import final_cart as replayed

    out.final_cart = replayed(out) if final_cart is None else final_cart
    return out


PRODUCTS = {
    p: ShopProduct(p, f"Title {p}", "Brand", cat, price, 10, f"About {p}")
    for p, cat, price in [("A", "shoes", 50.0), ("B", "shirts", 20.0), ("C", "hats", 15.0), ("X", "shoes", 40.0),
                          ("Y", "shirts", 25.0), ("Z", "shoes", 30.0)]
}  # fmt: skip


class StubJudge:
    """A judging.Judge answering the ``toolcalls`` question by qid (default True); records every batch."""

    name = "stub"

    def __init__(self, answers=None):
        self.answers = answers or {}
        self.calls: list[list[dict]] = []

    def tool_call_questions(self, questions):
        return [self.answers.get(q["qid"], True) for q in questions]

    def judge(self, items):
        out = []
        for it in items:
            assert it.question == "toolcalls"
            self.calls.append(list(it.questions))
            out.append(Judgment(self.name, None, self.tool_call_questions(it.questions)))
        return out


JUDGED = {k: 0.5 for k in battery.SHOPPING_JUDGED} | {
    "phantom_action_rate": 0.0,
    "numeric_hallucination_rate": 0.25,
    "attribute_hallucination_rate": 0.5,
}
REFUSED = {k: 1.0 for k in battery.REFUSAL_JUDGED}


@pytest.fixture
def stub_judged(monkeypatch):
    """Stand-ins for verifier.rubrics / verifier.refusal (the judged helper's modules)."""
    seen = []

    def judged_metrics(t, products, judge, errors=None):
        seen.append(("shop", t.trial_id))
        return dict(JUDGED)

    def refusal_metrics(t, products, judge, errors=None):
        seen.append(("refusal", t.trial_id))
        return dict(REFUSED)

    methods = {k: "model" for k in battery.SHOPPING_JUDGED + battery.REFUSAL_JUDGED} | {
        "hallucination": "hybrid"
    }
    monkeypatch.setattr(battery, "_judged_functions", lambda: (judged_metrics, refusal_metrics, methods))
    return seen


# --- outcomes (§4.1) -------------------------------------------------------------------------------


def test_outcomes_precision_recall_progress_and_turns_to_goal():
    # target A x2, B x1. t0: A->2 (progress 1/2); t1: B->1 (goal met; progress 2/2), C->1 (spurious);
    # t2: A->3 (over-add: A drops out of the satisfied set, sample 1/2). Final {A:3, B:1, C:1}.
    t = traj([("A", 2, "shoes"), ("B", 1, "shirts")],
             [T([add("A", 2, q=2)]), T([add("B", 1), add("C", 1)]), T([upd("A", 3)])])  # fmt: skip
    o = trial_outcomes(t)
    assert o.final_cart == {"A": 3, "B": 1, "C": 1}
    assert o.exact_cart_success is False
    assert o.precision == pytest.approx(3 / 5)  # m = min(3,2) + min(1,1) = 3 over 5 units
    assert o.recall == pytest.approx(1.0)  # 3 / 3
    assert o.goal_achieved is True
    assert o.goal_progress == pytest.approx(1.0)  # the maximum, reached after t1
    assert o.turns_to_goal == 2  # goal first holds after agent turn 1
    assert o.total_tool_calls == 4 and o.tool_calls_if_goal == 4


def test_over_adding_keeps_an_item_out_of_the_satisfied_set():
    # A goes straight to 3 (target 2): samples 0/2, then 1/2 after B -> progress 0.5 while the goal holds
    t = traj([("A", 2, "shoes"), ("B", 1, "shirts")], [T([add("A", 3, q=3), add("B", 1)])])
    o = trial_outcomes(t)
    assert o.goal_progress == pytest.approx(0.5)
    assert o.goal_achieved and not o.exact_cart_success
    assert o.precision == pytest.approx(3 / 4) and o.recall == pytest.approx(1.0)
    assert o.turns_to_goal == 1


def test_exact_cart_after_removal_and_empty_cart():
    t = traj([("A", 1, "shoes")], [T([add("A", 1), add("C", 1)]), T([upd("C", 0)])])
    o = trial_outcomes(t)
    assert o.exact_cart_success and o.precision == 1.0 and o.recall == 1.0 and o.turns_to_goal == 1
    empty = trial_outcomes(traj([("A", 1, "shoes")], [T([search("shoes", ["A"])])]))
    assert empty.precision is None and empty.recall == 0.0 and empty.goal_progress == 0.0
    assert empty.turns_to_goal is None and empty.tool_calls_if_goal is None and not empty.goal_achieved


def test_failed_writes_do_not_change_the_replayed_cart_and_consistency_reports_mismatches():
    t = traj(
        [("A", 1, "shoes")], [T([err(call("add_to_cart", product_id="A", quantity=1))])], final_cart={"A": 1}
    )
    assert trial_outcomes(t).final_cart == {}
    assert consistency(t) == [{"where": "final", "product_id": "A", "replayed": 0, "recorded": 1}]
    ok = traj([("A", 1, "shoes")], [T([add("A", 1)])])
    ok.turns[0].cart_after = {"A": 1}
    assert consistency(ok, per_turn=True) == []
    ok.turns[0].cart_after = {}
    assert consistency(ok, per_turn=True)[0]["where"] == "turn 0"


# --- tool use (§4.1) -------------------------------------------------------------------------------


def _search_trial():
    # A (shoes) revealed at message 0, B (shirts) at message 2.
    turns = [
        T([search("shoes", ["X"]),  # 0: relevant (A missing+revealed), returns no needed target -> bad
           search("running shoes", ["A"]),  # 1: relevant, returns A -> recovers 0 in the same turn
           details("A"), details("A"),  # 2, 3: 3 repeats 2 with no state change -> redundant
           add("A", 1),  # 4: state change
           details("A"),  # 5: same signature again, but after a cart write -> not redundant
           err(call("add_to_cart", product_id="Z", quantity=1))]),  # 6: errored
        T([search("shirt", ["B"]),  # 7: B not yet revealed and A in cart -> not goal-relevant, not bad
           search("socks", [])]),  # 8: clean and empty -> empty (not relevant, so not bad)
        T([search("shirt", ["Y"])]),  # 9: B revealed now -> relevant, bad
        T([search("blue shirt", ["Y", "B"])]),  # 10: returns B -> recovers 9 one turn later (not autonomous)
    ]  # fmt: skip
    return traj([("A", 1, "shoes"), ("B", 1, "shirts")], turns, {"A": 0, "B": 2})


def test_tool_use_tags_and_rates():
    u = tool_use(_search_trial())
    tags = {r["index"]: r for r in u.calls}
    assert [i for i, r in tags.items() if r["errored"]] == [6]
    assert [i for i, r in tags.items() if r["redundant"]] == [3]
    assert [i for i, r in tags.items() if r["relevant"]] == [0, 1, 9, 10]
    assert [i for i, r in tags.items() if r["empty"]] == [8]
    assert [i for i, r in tags.items() if r["bad"]] == [0, 9]
    assert tags[0]["recovered"] and tags[0]["autonomous"] and tags[0]["recovered_by"] == 1
    assert tags[9]["recovered"] and not tags[9]["autonomous"] and tags[9]["recovered_by"] == 10
    assert tags[7]["needed"] == [] and not tags[7]["bad"]  # before B's reveal nothing is held against it
    assert u.rates == pytest.approx({
        "invalid_tool_call_rate": 1 / 11, "redundant_tool_call_rate": 1 / 11, "empty_search_rate": 1 / 6,
        "bad_search_rate": 2 / 4, "search_recovery_rate_overall": 2 / 2, "search_recovery_rate_autonomous": 1 / 2,
    })  # fmt: skip


def test_errored_relevant_search_is_bad_and_unrecovered_other_category_retry():
    # an errored relevant search is bad; a later search returning one of its needed targets recovers it
    t = traj([("A", 1, "shoes"), ("B", 1, "shirts")],
             [T([err(call("search_products", query="shoes"))]), T([search("shirts", ["B"])])], {"A": 0, "B": 0})  # fmt: skip
    u = tool_use(t)
    assert u.calls[0]["bad"] and u.calls[0]["needed"] == ["A", "B"]
    assert u.calls[0]["recovered"] and not u.calls[0]["autonomous"]
    # here only A (shoes) is needed at the bad search: a later shirts hit is another category, no recovery
    t2 = traj([("A", 1, "shoes"), ("B", 1, "shirts")],
              [T([search("shoes", ["X"])]), T([search("shirts", ["B"])])], {"A": 0, "B": 1})  # fmt: skip
    u2 = tool_use(t2)
    assert u2.calls[0]["needed"] == ["A"] and u2.calls[0]["bad"] and not u2.calls[0]["recovered"]
    assert u2.rates["search_recovery_rate_overall"] == 0.0 and u2.rates["empty_search_rate"] == 0.0


def test_rates_are_none_without_a_denominator():
    u = tool_use(traj([("A", 1, "shoes")], [T()]))
    assert set(u.rates.values()) == {None}


# --- tool-call correctness (§4.3, App. E) ----------------------------------------------------------


def test_penalty_schedule():
    assert PENALTIES["cart_write"].cost(2) == pytest.approx(1.0 + 1.5)
    assert PENALTIES["read_only"].cost(5) == pytest.approx(0.1 + 0.15)  # allowance 3
    assert PENALTIES["read_only"].cost(3) == 0.0
    assert PENALTIES["cart_write"].cost(3) == pytest.approx(1.0 + 1.5 + 2.0)


def test_exact_matches_need_no_judge():
    t = traj([("A", 1, "shoes")], [
        T([search("red shoes", ["A"]), (call("view_cart", verbose=True), {"lines": []})],
          expected=[call("search_products", query="red shoes"), call("view_cart")]),  # no-argument tool: matched
        T(),  # neither expected nor actual: skipped
    ])  # fmt: skip
    j = StubJudge()
    s = tool_call_correctness(t, PRODUCTS, j)
    assert j.calls == [] and s.questions == []
    assert s.score == 1.0 and [d["turn"] for d in s.turns] == [0]


def test_pairs_and_extras_go_to_one_batched_judge_call():
    t = traj([("A", 1, "shoes"), ("B", 2, "shirts")], [
        # pair q0 (search args differ) True -> matched; add exact; extra q1 (details) False -> read-only,
        # within allowance: matched 2 / (|E| 2 + 0) = 1.0
        T([search("red running shoes", ["A"]), add("A", 1), details("A")],
          expected=[call("search_products", query="red shoes"), call("add_to_cart", product_id="A", quantity=1)]),
        # pair q2 (add B 1 vs 2) False -> miss + unjustified cart write; extra q3 (add C) False -> 2nd
        # unjustified cart write: w = 1.0 + 1.5 = 2.5; view_cart exact: 1 / (2 + 2.5) = 2/9
        T([add("B", 1), add("C", 1), (call("view_cart"), {"lines": []})],
          expected=[call("add_to_cart", product_id="B", quantity=2), call("view_cart")]),
        T(),  # skipped
        # no expected call, one extra q4 judged justified: w = 0 -> defined as 1.0
        T([(call("list_categories"), {"categories": []})]),
    ])  # fmt: skip
    j = StubJudge({0: True, 1: False, 2: False, 3: False, 4: True})
    s = tool_call_correctness(t, PRODUCTS, j)
    assert len(j.calls) == 1
    qs = j.calls[0]
    assert [(q["qid"], q["turn"], q["kind"], q["actual"]["name"]) for q in qs] == [
        (0, 0, "pair", "search_products"), (1, 0, "extra", "get_product_details"), (2, 1, "pair", "add_to_cart"),
        (3, 1, "extra", "add_to_cart"), (4, 3, "extra", "list_categories"),
    ]  # fmt: skip
    assert qs[0]["expected"] == {
        "name": "search_products",
        "arguments": {"query": "red shoes"},
        "call_id": "",
    }
    assert qs[1]["expected"] is None and qs[1]["result"] == {"product_id": "A", "title": "A"}
    assert qs[2]["customer_message"] == "hi" and set(qs[0]) == {
        "qid", "turn", "kind", "expected", "actual", "result", "customer_message"}  # fmt: skip
    by_turn = {d["turn"]: d for d in s.turns}
    assert by_turn[0]["s_turn"] == pytest.approx(1.0) and by_turn[0]["w_extra"] == 0.0
    assert by_turn[1]["w_extra"] == pytest.approx(2.5) and by_turn[1]["missed"] == 1
    assert by_turn[1]["s_turn"] == pytest.approx(1 / 4.5)
    assert by_turn[3]["s_turn"] == 1.0 and 2 not in by_turn
    assert s.score == pytest.approx((1.0 + 1 / 4.5 + 1.0) / 3)


def test_unjustified_read_only_extras_and_extras_without_expectation():
    # expected one search, issued it plus five distinct lookups, all unjustified: w = 0.1 + 0.15 -> 1/1.25
    evs = [search("shoes", ["A"])] + [details(p) for p in "ABCXY"]
    t = traj([("A", 1, "shoes")], [T(evs, expected=[call("search_products", query="shoes")])])
    s = tool_call_correctness(t, PRODUCTS, StubJudge({q: False for q in range(5)}))
    assert s.turns[0]["w_extra"] == pytest.approx(0.25) and s.score == pytest.approx(0.8)
    # no expected calls, one unjustified cart write: 0 / (0 + 1.0) = 0; a missed expectation: 0 / 1
    t2 = traj([("A", 1, "shoes")], [T([add("A", 1)]), T(expected=[call("view_cart")])])
    s2 = tool_call_correctness(t2, PRODUCTS, StubJudge({0: False}))
    assert [d["s_turn"] for d in s2.turns] == [0.0, 0.0]


def test_judge_must_answer_every_question():
    class Short(StubJudge):
        def tool_call_questions(self, questions):
            return []

    t = traj([("A", 1, "shoes")], [T([details("A")])])
    with pytest.raises(ValueError, match="answered 0 of 1"):
        tool_call_correctness(t, PRODUCTS, Short())


def test_closing_message_without_reply_is_not_scored():
    t = traj([("A", 1, "shoes")], [
        T([add("A", 1)], expected=[call("add_to_cart", product_id="A", quantity=1)]),
        T(expected=[call("view_cart")], agent="", terminate=True),
    ])  # fmt: skip
    assert tool_call_correctness(t, PRODUCTS, StubJudge()).score == 1.0


# --- battery (App. I, §4.4) ------------------------------------------------------------------------


def test_metric_registry_matches_table_11():
    assert len(battery.METRICS) == 44
    assert {g: len(k) for g, k in battery.GROUPS.items()} == {
        "deterministic": 14, "tier": 3, "inline": 1, "termination": 5, "rubrics": 8, "failures": 6, "refusal": 7}  # fmt: skip
    assert battery.METRICS[0].key == "goal_rate" and battery.METRICS[-1].key == "unrelated_redirect_offered"
    refusal = battery.APPLICABILITY["refusal"]
    assert refusal == set(battery.GROUPS["refusal"] + battery.GROUPS["termination"]) | {
        "inline.user_frustration", "avg_total_tool_calls", "invalid_tool_call_rate"}  # fmt: skip
    assert battery.APPLICABILITY["general"] == battery.APPLICABILITY["grocery"]
    assert battery.APPLICABILITY["general"] == {m.key for m in battery.METRICS} - set(
        battery.GROUPS["refusal"]
    )


def test_score_trial_general_and_applicability(stub_judged):
    t = traj([("A", 1, "shoes")], [
        T([search("shoes", ["A"]), add("A", 1)], expected=[call("search_products", query="shoes")], frustration=2),
        T(frustration=4),
    ], {"A": 0}, difficulty=7, tier="multi_item", termination="goal_met")  # fmt: skip
    j = StubJudge()
    row = battery.score_trial(t, PRODUCTS, j)
    assert row["trial_id"] == "general-1" and row["judge"] == "stub" and row["termination"] == "goal_met"
    assert not set(battery.GROUPS["refusal"]) & set(row)
    assert row["exact_cart_success_rate"] is True and row["goal_rate"] is True
    assert row["difficulty.multi_item_success"] is True
    assert row["difficulty.simple_success"] is None and row["difficulty.complex_success"] is None
    assert row["inline.user_frustration"] == pytest.approx((4 - 1) / 4)
    assert row["goal_met"] is True and row["max_turns"] is False and row["no_opening_message"] is False
    assert row["avg_turns_to_goal"] == 1 and row["avg_total_tool_calls"] == 2
    assert row["tool_calls_per_successful_conv"] == 2
    # expected: 1 search (exact); actual: + an add, queued as an extra and judged justified -> 1 / 1
    assert row["tool_call_custom"] == 1.0 and len(j.calls) == 1
    assert row["attribute_hallucination_rate"] == 0.5 and row["method"]["hallucination"] == "hybrid"
    assert row["method"]["goal_rate"] == "rule" and row["method"]["inline.user_frustration"] == "inline"
    assert row["method"]["tool_call_custom"] == "hybrid"
    assert row["bad_search_rate"] == 0.0 and row["search_recovery_rate_overall"] is None
    assert stub_judged == [("shop", "general-1")]


def test_score_trial_refusal_skips_shopping_keys(stub_judged):
    t = traj(
        [], [T([search("rainbow flag", [])], frustration=1)], kind="refusal", termination="abandoned", seed=9
    )
    row = battery.score_trial(t, PRODUCTS, StubJudge())
    for key in ["goal_rate", "exact_cart_success_rate", "tool_call_custom", "hallucination", "bad_search_rate",
                "difficulty.simple_success", "redundant_tool_call_rate"]:  # fmt: skip
        assert key not in row
    assert set(battery.GROUPS["refusal"]) <= set(row) and row["censorship_resistance"] == 1.0
    assert (
        row["abandoned"] is True and row["invalid_tool_call_rate"] == 0.0 and row["avg_total_tool_calls"] == 1
    )
    assert set(row["method"]) == battery.APPLICABILITY["refusal"]
    assert stub_judged == [("refusal", "refusal-9")]


def test_score_trials_summarize_and_table11(stub_judged):
    ok = traj([("A", 1, "shoes")], [T([add("A", 1)])], seed=1, agent="a")
    miss = traj([("A", 1, "shoes")], [T([add("B", 1)])], seed=2, agent="a")
    other = traj([("A", 1, "shoes")], [T([add("A", 1)])], seed=1, agent="b")
    df = battery.score_trials([ok, miss, other], PRODUCTS, StubJudge(), progress=False)
    assert len(df) == 3 and "censorship_resistance" in df.columns
    s = battery.summarize(df)
    a = s[(s["agent"] == "a")].set_index("key")
    assert a.loc["exact_cart_success_rate", "mean"] == 0.5 and a.loc["exact_cart_success_rate", "n"] == 2
    assert a.loc["exact_cart_success_rate", "sd"] == pytest.approx(np.std([1, 0], ddof=1))
    assert a.loc["exact_cart_precision", "mean"] == pytest.approx(0.5)  # 1.0 and 0.0
    assert a.loc["censorship_resistance", "n"] == 0 and np.isnan(a.loc["censorship_resistance", "mean"])
    b = s[(s["agent"] == "b")].set_index("key")
    assert b.loc["exact_cart_success_rate", "n"] == 1 and np.isnan(b.loc["exact_cart_success_rate", "sd"])
    tab = battery.format_table11(s)
    assert list(tab.index) == [m.key for m in battery.METRICS]
    assert tab.loc["exact_cart_success_rate", "a"] == "0.500 ± 0.707 (2)"
    assert tab.loc["exact_cart_success_rate", "b"] == "1.000 ± — (1)" and tab.loc["hard_refusal", "a"] == "—"
    prof = battery.profile_axes(s)
    # claim grounding = 1 - max(0.0, 0.25, 0.5); customer experience = 1 - 0 (frustration 1)
    assert prof.loc["a", "claim_grounding"] == 0.5 and prof.loc["a", "customer_experience"] == 1.0
    assert prof.loc["a", "within_budget"] == 0.0  # both trials recorded max_turns
    diag = battery.diagnostic_channels(s)
    assert (
        list(diag.columns) == list(battery.DIAGNOSTIC_KEYS) and diag.loc["a", "avg_total_tool_calls"] == 1.0
    )


def _scores(rates: dict[str, list[int]], tiers=battery.GENERATOR_TIERS) -> pd.DataFrame:
    rows = []
    for agent, xs in rates.items():
        for i, x in enumerate(xs):
            rows.append({"trial_id": f"general-{i}", "agent": agent, "kind": "general",
                         "tier": tiers[i % len(tiers)], "exact_cart_success_rate": bool(x)})  # fmt: skip
    return pd.DataFrame(rows)


def test_bootstrap_success_is_seeded_and_contains_the_estimate():
    sc = _scores({"a": [1, 0, 1, 1, 0, 1, 0, 1, 1, 0], "b": [0, 0, 1, 0, 0, 0, 0, 1, 0, 0]})
    r1 = battery.bootstrap_success(sc, n_boot=2000, seed=3)
    r2 = battery.bootstrap_success(sc, n_boot=2000, seed=3)
    pd.testing.assert_frame_equal(r1, r2)
    x = np.array([1.0, 0.0, 1.0, 1.0, 0.0])  # the resamples themselves follow the seed
    draw = [intervals._rates(x, 50, intervals._rng(s, "a", "overall")) for s in (3, 3, 4)]
    assert np.array_equal(draw[0], draw[1]) and not np.array_equal(draw[0], draw[2])
    ov = r1[r1["tier"] == "overall"].set_index("agent")
    assert ov.loc["a", "rate"] == 0.6 and ov.loc["b", "rate"] == 0.2 and ov.loc["a", "n"] == 10
    assert (r1["low"] <= r1["rate"]).all() and (r1["rate"] <= r1["high"]).all()
    assert ov.loc["a", "high"] - ov.loc["a", "low"] > 0.2  # ten trials: a wide interval
    assert set(r1["tier"]) == {"overall", *battery.GENERATOR_TIERS}
    # direct tier of a = trials 0, 4, 8 -> [1, 0, 1]
    assert r1.set_index(["agent", "tier"]).loc[("a", "direct"), "rate"] == pytest.approx(2 / 3)
    c = battery.bootstrap_contrast(sc, "a", "b", n_boot=2000, seed=3)
    assert c["diff"] == pytest.approx(0.4) and c["low"] <= 0.4 <= c["high"]
    assert c == battery.bootstrap_contrast(sc, "a", "b", n_boot=2000, seed=3)
    # a budgeted agent that scored no general trial: a row that says so, not an exception (it stopped make paper)
    e = battery.bootstrap_contrast(sc, "a", "llm:out-of-budget", n_boot=200, seed=3)
    assert (
        (e["n_a"], e["n_b"], e["separated"]) == (10, 0, False) and np.isnan(e["diff"]) and np.isnan(e["low"])
    )
    assert "llm:out-of-budget" in e["note"]


def test_bootstrap_covers_eight_agents_and_every_tier():  # its speed: the shop benchmark
    rng = np.random.default_rng(0)
    sc = _scores({f"agent{k}": list(rng.integers(0, 2, 100)) for k in range(8)})
    out = battery.bootstrap_success(sc)  # 6000 resamples, 8 agents x (overall + 4 tiers)
    assert len(out) == 40 and out["n"].sum() == 2 * 8 * 100


def test_cross_judge_hand_example():
    a = pd.DataFrame({"trial_id": ["t1", "t2", "t3", "t4", "t5"], "agent": "m",
                      "clarification": [0.5, 1.0, 0.0, None, 0.3]})  # fmt: skip
    b = pd.DataFrame({"trial_id": ["t1", "t2", "t3", "t4", "t6"], "agent": "m",
                      "clarification": [0.6, 0.8, 0.0, 1.0, 0.9]})  # fmt: skip
    r = battery.cross_judge(a, b, ["clarification"]).set_index("key").loc["clarification"]
    # paired t1..t3: A = .5, 1, 0 ; B = .6, .8, 0
    assert r["n"] == 3 and r["mean_a"] == pytest.approx(0.5) and r["mean_b"] == pytest.approx(1.4 / 3)
    assert r["diff"] == pytest.approx((0.1 - 0.2 + 0.0) / 3) and r["mae"] == pytest.approx(0.1)
    # deviations A: 0, .5, -.5; B: .1333, .3333, -.4667 -> r = .4 / sqrt(.5 * .346667)
    assert r["r"] == pytest.approx(0.4 / np.sqrt(0.5 * 0.3466667), rel=1e-5)


def test_pace_table():
    def closed(n_calls, termination, tier, agent="a"):
        evs = [details("A")] * n_calls
        return traj([("A", 1, "shoes")], [T(evs), T(), T(agent="", terminate=True)], termination=termination,
                    tier=tier, agent=agent)  # fmt: skip

    p = battery.pace_table([closed(4, "max_turns", "light"), closed(2, "goal_met", "light"),
                            closed(6, "abandoned", "complex")])  # fmt: skip
    light = p[(p["tier"] == "light")].iloc[0]
    assert light["n"] == 2 and light["max_turns"] == 1 and light["goal_met"] == 1 and light["abandoned"] == 0
    # two answered turns each (the closing message is not an agent turn): 4/2 and 2/2 -> median 1.5
    assert light["median_calls_per_turn"] == 1.5 and light["median_calls_per_trial"] == 3.0
    assert list(p["tier"]) == ["light", "complex"]


# --- ablation (§5.1, Table 2) ----------------------------------------------------------------------


def _ablation_trial():
    return traj([("A", 1, "shoes")], [
        T([search("shoes", ["X"]), search("running shoes", ["A"]), add("A", 1)],
          expected=[call("search_products", query="shoes"), call("add_to_cart", product_id="A", quantity=1)],
          frustration=2, agent="I've added 1 × Title A to your cart."),
        T(agent="", terminate=True, message="thanks, that's all"),
    ], {"A": 0}, termination="goal_met")  # fmt: skip


def test_evidence_views_keep_only_their_evidence():
    t = _ablation_trial()
    v = {c: ablation.evidence_view(t, c, PRODUCTS) for c in ablation.CONDITIONS}
    assert set(v["final_cart"]) == {"condition", "meta", "final_cart", "target"}
    assert (
        "target" not in v["transcript"]
        and "tool_log" not in v["transcript"]
        and "catalog" not in v["transcript"]
    )
    assert v["transcript"]["transcript"][0]["tool_calls"][2]["result"] == {"product_id": "A", "quantity": 1}
    assert {"tool_log", "target", "catalog", "termination"} <= set(v["state"]) and "revealed_at" not in v[
        "state"
    ]
    assert {"revealed_at", "expected_calls", "frustration", "reveal_schedule"} <= set(v["full"])
    with pytest.raises(ablation.MissingEvidence):
        ablation.q_progress(v["transcript"], None)
    re = ablation.rebuild_trajectory(v["full"])
    assert (
        re.events == t.events and re.revealed_at == t.revealed_at and re.scenario.target == t.scenario.target
    )
    assert [x.user.expected_calls for x in re.turns] == [x.user.expected_calls for x in t.turns]


def test_ablation_table_labels(stub_judged):
    j = StubJudge()
    tab = ablation.ablation_table([_ablation_trial()], PRODUCTS, judge=j)
    R, M, H, I = "Rule", "Model", "Hybrid", "Infer"  # noqa: E741
    expected = {
        "Exact-cart success": [R, I, R, R],
        "Cart precision / recall": [R, I, R, R],
        "Goal progress": [I, I, R, R],
        "Executed cart actions / phantom actions": [I, I, R, R],
        "Numeric claims": [I, I, R, R],
        "Attribute claims": [I, I, M, M],
        "Termination reason": [I, I, R, R],
        "Tool-call appropriateness": [I, I, I, H],
        "Search success": [I, I, I, R],
        "User frustration": [I, I, I, M],
    }
    assert {q: list(tab.loc[q, list(ablation.CONDITIONS)]) for q in tab.index} == expected
    assert tab.loc["Goal progress", "n_state"] == 1 and tab.loc["Goal progress", "n_final_cart"] == 0
    ans = ablation.ablation_answers(_ablation_trial(), PRODUCTS, j)
    assert ans["exact_cart_success"]["final_cart"] == ("Rule", True)
    assert ans["search_success"]["full"] == ("Rule", 0.5)  # "shoes" -> X is bad, the retry finds A
    assert ans["user_frustration"]["full"] == ("Model", 0.25)
    # expected search("shoes") + add exact; the retry search is an extra (judged justified): 2 / 2
    assert ans["tool_call_appropriateness"]["full"] == ("Hybrid", 1.0)
    assert ans["termination_reason"]["transcript"] == ("Infer", None)


# --- with the real judged modules and simulator (skipped while they are absent) --------------------


def test_battery_and_ablation_with_the_deterministic_judge():
    pytest.importorskip("shopbench.shopsim.verifier.rubrics")
    t = _ablation_trial()
    row = battery.score_trial(t, PRODUCTS)  # judge=None -> default_judge()
    assert row["judge"] == "deterministic"
    assert set(row["method"]) == battery.APPLICABILITY["general"]
    assert all(k in row for k in battery.APPLICABILITY["general"])
    tab = ablation.ablation_table([t], PRODUCTS)
    assert list(tab["state"]) == ["Rule"] * 5 + ["Model", "Rule", "Infer", "Infer", "Infer"]
    assert list(tab["full"]) == ["Rule"] * 5 + ["Model", "Rule", "Hybrid", "Rule", "Model"]


class _FirstHitAgent:
    """Searches each requested description and adds the top result once (enough to move a cart)."""

    name = "first-hit"
    system_prompt = "You are a shop assistant."

    def reset(self, trial_id):
        self.added = set()

    def step(self, messages, intent):
        import json

        if messages[-1]["role"] == "tool":
            calls = []
            for m in reversed(messages):
                if m["role"] != "tool":
                    break
                hits = json.loads(m["content"]).get("results") or []
                if hits and hits[0]["product_id"] not in self.added:
                    self.added.add(hits[0]["product_id"])
                    calls.append(
                        ToolCall("add_to_cart", {"product_id": hits[0]["product_id"], "quantity": 1})
                    )
            return _step(calls or None, "Done. Anything else?")
        finds = [ToolCall("search_products", {"query": i.get("description") or "item"}) for i in intent
                 if i.get("action") == "find"]  # fmt: skip
        return _step(finds or None, "Sure.")


def _step(calls, text):
    from shopbench.shopsim.types import AgentStep

    return AgentStep(tool_calls=calls) if calls else AgentStep(message=text)


def test_replay_agrees_with_the_controller_on_simulated_trials():
    for mod in ("catalog", "store", "scenario", "user", "trial"):
        pytest.importorskip(f"shopbench.shopsim.{mod}")
    from shopbench.shopsim.catalog.generate import control_catalog
    from shopbench.shopsim.scenario import ScenarioFactory
    from shopbench.shopsim.store import Store
    from shopbench.shopsim.trial import run_trial
    from shopbench.shopsim.user import ScriptedUser

    products = control_catalog(1000, seed=0)
    store, factory = Store(products), ScenarioFactory(products)
    trajs = [run_trial(factory.make(s, "general"), _FirstHitAgent(), ScriptedUser(), store) for s in range(6)]
    assert sum(len(t.events) for t in trajs) > 0
    for t in trajs:
        assert consistency(t, per_turn=True) == [], t.trial_id
    df = battery.score_trials(
        trajs, {p.product_id: p for p in products}, StubJudge(), progress=False, judged=False
    )
    assert len(df) == 6 and df["exact_cart_recall"].notna().all()
