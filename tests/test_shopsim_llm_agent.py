"""The shop's LLM agent for small local models (issue 13 §4): the compact JSON tool mode, the
time-budgeted stratified trial order, and how trials that hit the tool-round ceiling are reported."""

from __future__ import annotations

import json
import time

import jsonschema
import pytest

from shopbench.shopsim import experiment as X
from shopbench.shopsim.agents import LLMAgent
from shopbench.shopsim.compact import COMPACT_SCHEMA, compact_messages, parse_compact, render_result
from shopbench.shopsim.reporting import ended_on, llm_agent_table
from shopbench.shopsim.sweep import TrajectoryStore, run_budgeted
from shopbench.shopsim.trial import run_trial
from shopbench.shopsim.types import AgentStep
from shopbench.shopsim.user import ScriptedUser


@pytest.fixture(scope="module")
def env():
    return X.build_environment({"n_products": 600}, seed=0)


@pytest.fixture(scope="module")
def scenarios(env):
    return X.plan_scenarios(env, {"general": 8, "grocery": 4, "refusal": 2}, seed=0)


def test_compact_schema_accepts_one_call_and_rejects_wrong_arguments():
    ok = [{"tool": "search_products", "args": {"query": "oat milk"}},
          {"tool": "add_to_cart", "args": {"product_id": "DA00012", "variant_id": None, "quantity": 2}},
          {"tool": "view_cart", "args": {}}, {"tool": "reply", "args": {"text": "Done."}}]  # fmt: skip
    for v in ok:
        jsonschema.validate(v, COMPACT_SCHEMA)
    for bad in ({"tool": "add_to_cart", "args": {"product_id": "X"}},  # quantity missing
                {"tool": "search_products", "args": {"query": "x", "limit": 3}},  # unknown argument
                {"tool": "reply", "args": {"text": ""}}, {"tool": "buy", "args": {}}):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, COMPACT_SCHEMA)
    assert parse_compact(ok[3], "c") == ("Done.", None)
    text, call = parse_compact(ok[1], "c1")
    assert (
        text is None
        and call.name == "add_to_cart"
        and call.arguments == {"product_id": "DA00012", "quantity": 2}
    )
    with pytest.raises(ValueError):
        parse_compact({"tool": "reply", "args": {}}, "c")


def test_results_are_short_text_and_errors_are_shown():
    r = render_result(
        "search_products",
        {"query": "x"},
        {
            "results": [
                {"product_id": f"P{i}", "title": f"T{i}", "price": 2.5, "in_stock": i != 1} for i in range(10)
            ],
            "count": 10,
        },
    )
    assert r.count("\n") == 6 and "P1 | T1 | $2.50 | OUT OF STOCK" in r  # at most 6 rows
    assert "ERROR: unknown product_id" in render_result(
        "add_to_cart", {}, {"error": "unknown product_id 'Q'"}
    )
    assert "no products found" in render_result(
        "search_products", {"query": "zz"}, {"results": [], "count": 0}
    )


class _Gateway:
    """Records what the agent sends; answers with a fixed list of compact steps."""

    def __init__(self, answers):
        self.answers, self.sent = list(answers), []

    def call(self, backbone, item_id, messages, **kw):
        self.sent.append(messages)
        return {"messages": messages}

    def run(self, calls, run_id, desc=None):
        obj = self.answers.pop(0) if self.answers else {"tool": "reply", "args": {"text": "ok"}}
        return [{"status": "ok", "parsed": obj, "raw_output": json.dumps(obj), "prompt_tokens": 10,
                 "completion_tokens": 5, "cost_usd": 0.0, "model_latency_s": 2.0}]  # fmt: skip


def test_agent_sees_only_the_conversation_never_the_intent_channel():
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "two oat milks please"}]
    a, b = _Gateway([]), _Gateway([])
    LLMAgent(a, "m", tool_mode="compact").step(msgs, [{"action": "add", "product_id": "SECRET"}])
    LLMAgent(b, "m", tool_mode="compact").step(msgs, None)
    assert a.sent == b.sent and "SECRET" not in json.dumps(a.sent)


def test_compact_transcript_is_append_only_so_the_kv_cache_prefix_holds(env, scenarios):
    gw = _Gateway([{"tool": "search_products", "args": {"query": "knee brace"}},
                   {"tool": "view_cart", "args": {}}, {"tool": "reply", "args": {"text": "Here you go."}}] * 5)  # fmt: skip
    agent = LLMAgent(gw, "m", tool_mode="compact")
    t = run_trial(scenarios[0], agent, ScriptedUser(), env.store)
    assert t.usage["agent"]["model_s"] == pytest.approx(2.0 * t.usage["agent"]["calls"])
    assert len(gw.sent) > 3
    for prev, cur in zip(gw.sent, gw.sent[1:], strict=False):
        assert cur[: len(prev)] == prev and len(cur) > len(prev)  # each call extends the previous one
    assert gw.sent[0][0]["content"] == agent.system_prompt and "{" not in agent.system_prompt.split("\n")[0]


def test_compact_messages_shorten_old_results_only_when_too_long():
    msgs = [{"role": "user", "content": "a"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function", "function": {
                "name": "view_cart", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "1", "content": json.dumps({"items": [], "total": 0})},
            {"role": "assistant", "content": "empty"}, {"role": "user", "content": "b"}]  # fmt: skip
    full = compact_messages(msgs, "SYS")
    assert [m["role"] for m in full] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "the cart is empty" in full[3]["content"]
    short = compact_messages(msgs, "SYS", max_chars=10)
    assert short[3]["content"] == "Result: (earlier result omitted)"


def test_round_ceiling_is_reported_as_such(env, scenarios):
    gw = _Gateway([{"tool": "view_cart", "args": {}}] * 100)
    t = run_trial(
        scenarios[0], LLMAgent(gw, "m", tool_mode="compact", name="llm:m"), ScriptedUser(), env.store
    )
    assert t.termination == "assistant_error" and ended_on(t) == "round_ceiling"


class _Slow:
    """An agent whose every step reports 40 s of model time (what the budget counts)."""

    name = "llm:slow"
    system_prompt = "s"

    def reset(self, trial_id):
        pass

    def step(self, messages, intent):
        return AgentStep(message="Sorry, I can't find that.", usage={"model_s": 40.0, "calls": 1.0})


def test_budget_stops_resumes_and_a_larger_budget_extends_the_same_order(env, scenarios, tmp_path):
    """Issue 13 §4: "trials run in a fixed seeded difficulty-stratified order and the sweep stops
    starting new trials when the budget is spent; a rerun resumes [...] and a larger budget extends
    the same order"."""
    order = X.stratified_order(scenarios, seed=3)
    assert [s.trial_id for s in order] == [s.trial_id for s in X.stratified_order(scenarios, seed=3)]
    strata = {(s.kind, s.tier) for s in scenarios}
    assert len({(s.kind, s.tier) for s in order[: len(strata)]}) == len(strata)  # every prefix stratified
    out = TrajectoryStore(tmp_path)
    done1, st1 = run_budgeted(
        order, "llm:slow", _Slow, ScriptedUser, env.store, out, budget_min=2, progress=False
    )
    assert st1["stopped_by_budget"] and 0 < st1["done"] < len(order) and st1["spent_s"] >= 120
    assert [t.trial_id for t in done1] == [s.trial_id for s in order[: st1["done"]]]
    again, st2 = run_budgeted(
        order, "llm:slow", _Slow, ScriptedUser, env.store, out, budget_min=2, progress=False
    )
    assert st2["done"] == st1["done"] and len(out.load("llm:slow")) == st1["done"]  # nothing repeated
    more, st3 = run_budgeted(
        order, "llm:slow", _Slow, ScriptedUser, env.store, out, budget_min=8, progress=False
    )
    assert st3["done"] > st1["done"] and [t.trial_id for t in more] == [
        s.trial_id for s in order[: st3["done"]]
    ]
    fewer, st4 = run_budgeted(  # a smaller budget re-reads the shorter prefix it allows (one anytime walk)
        order, "llm:slow", _Slow, ScriptedUser, env.store, out, budget_min=1, progress=False
    )
    assert (
        st4["stopped_by_budget"]
        and 0 < st4["done"] <= st1["done"]
        and [t.trial_id for t in fewer] == [s.trial_id for s in order[: st4["done"]]]
    )
    tab = llm_agent_table(more, [st3], n_boot=200)
    assert tab.loc[0, "trials"] == f"{st3['done']} of {len(order)} planned"
    assert 0 <= tab.loc[0, "low"] <= tab.loc[0, "exact_cart"] <= tab.loc[0, "high"] <= 1


class _Sleepy:
    """An agent whose every step takes real time (the deadline is wall time on the monotonic clock)."""

    name = "llm:sleepy"
    system_prompt = "s"

    def reset(self, trial_id):
        pass

    def step(self, messages, intent):
        time.sleep(0.05)
        return AgentStep(message="Sorry, I can't find that.", usage={"calls": 1.0})


def test_a_trial_past_the_budget_is_cut_not_scored_and_replayed_with_a_larger_budget(
    env, scenarios, tmp_path
):
    """A started trial gets the budget that is left as a deadline (shopsim.sweep.run_budgeted): past it
    the conversation ends as ``time_budget`` before the next agent step or customer turn; the cut trial
    is neither stored nor returned, and a larger budget plays it whole."""
    order = X.stratified_order(scenarios, seed=3)
    out = TrajectoryStore(tmp_path)
    done, st = run_budgeted(
        order, "llm:sleepy", _Sleepy, ScriptedUser, env.store, out, budget_min=0.12 / 60, progress=False
    )
    assert done == [] and st["done"] == 0 and st["cut_by_budget"] == [order[0].trial_id]
    assert st["stopped_by_budget"] and not out.path("llm:sleepy").exists()
    whole, st2 = run_budgeted(
        order[:1], "llm:sleepy", _Sleepy, ScriptedUser, env.store, out, budget_min=10, progress=False
    )
    assert [t.trial_id for t in whole] == [order[0].trial_id] and st2["cut_by_budget"] == []
    assert whole[0].termination != "time_budget" and len(out.load("llm:sleepy")) == 1
    tab = llm_agent_table(done, [st], n_boot=50)
    assert tab.loc[0, "cut_by_budget"] == 1 and tab.loc[0, "trials"] == f"0 of {len(order)} planned"


def test_the_orchestrator_ends_a_conversation_at_its_deadline(env, scenarios):
    """``Limits.deadline`` in the past: no agent step starts; the shop names the end ``time_budget``."""
    agent = _Sleepy()
    steps = []
    agent.step = lambda messages, intent: steps.append(1) or AgentStep(message="hi", usage={})  # type: ignore[method-assign]
    t = run_trial(scenarios[0], agent, ScriptedUser(), env.store, deadline=time.monotonic() - 1)
    assert t.termination == "time_budget" and steps == []
    t2 = run_trial(scenarios[0], agent, ScriptedUser(), env.store, deadline=time.monotonic() + 60)
    assert t2.termination != "time_budget" and steps  # a deadline ahead changes nothing
