"""The τ²-retail reward over the task's basis (tau2-bench ``src/tau2/evaluator/evaluator.py``,
``EvaluationType.ALL``: "Only includes each component in the final reward if it's part of the task's
`reward_basis`. The final reward is the product of all applicable component rewards"), its
NL_ASSERTION judge and the PADMÉ default of App. C.3 ("Omitting the LLM judge component renders this
audit entirely deterministic")."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from shopbench.domains.tau2_retail import (
    KNOWN_ANSWER,
    KnownAnswerNLJudge,
    NLAssertionSpec,
    NLItem,
    RetailDB,
    action_reward,
    render_conversation,
    task_reward,
)
from shopbench.padme.sources.factory import make_source
from shopbench.padme.types import Context, Criterion

ROOT = Path(__file__).resolve().parents[1]
TAU2 = ROOT.parent / "shared" / "data" / "tau2_retail"
SCRIPTED = Context("scripted:test", "scripted", 0)
RESOLVE = Criterion("task_resolution", "")
TASK2 = "Agent should tell the user that there are 10 t-shirt options available."


@pytest.fixture(scope="module")
def data():
    if not (TAU2 / "tasks.json").exists():
        pytest.skip(f"no tau2 retail data at {TAU2} (external data beside the project)")
    from shopbench.domains.tau2_retail import load_tau2

    return load_tau2(TAU2)


def test_the_data_names_db_and_nl_assertion_never_communicate(data):
    """The shipped tasks: [DB, NL_ASSERTION] (112) or [DB] (tasks 33, 34); 40 tasks have assertions."""
    ev = {str(t["id"]): t["evaluation_criteria"] for t in data.tasks}
    assert Counter(tuple(e["reward_basis"]) for e in ev.values()) == {("DB", "NL_ASSERTION"): 112, ("DB",): 2}
    assert [k for k, e in ev.items() if e["reward_basis"] == ["DB"]] == ["33", "34"]
    assert sum(bool(e.get("nl_assertions")) for e in ev.values()) == 40
    assert ev["2"]["nl_assertions"] == [TASK2]


def test_reward_is_the_product_over_the_basis(data):
    db = RetailDB(data.db)
    gold = db.state_hash()  # a task whose expected actions change nothing would have this gold
    said = [{"role": "assistant", "content": "There are 10 options."}]
    crit = {"reward_basis": ["DB", "NL_ASSERTION"], "nl_assertions": [TASK2], "communicate_info": ["10"]}
    met = [{"nl_assertion": TASK2, "met": True, "justification": ""}]
    unmet = [{**met[0], "met": False}]
    assert task_reward(db, gold, crit, said, "user_stop", met)[0] == 1.0
    assert task_reward(db, gold, crit, said, "user_stop", unmet)[0] == 0.0
    assert task_reward(db, "other", crit, said, "user_stop", met)[0] == 0.0
    # COMMUNICATE is not in the basis: a silent agent with the right database and a met assertion scores 1
    assert task_reward(db, gold, crit, [], "user_stop", met)[0] == 1.0
    # not judged: the reward is the rest of the basis (App. C.3), and the breakdown says so
    r, parts = task_reward(db, gold, crit, [], "user_stop", None)
    assert r == 1.0 and parts["unjudged"] == ["NL_ASSERTION"] and parts["nl_assertion"] is None
    # no assertions: the component is 1.0 (tau2-bench: "No nl_assertions to evaluate")
    assert (
        task_reward(db, gold, {"reward_basis": ["DB", "NL_ASSERTION"]}, [], "user_stop")[1]["nl_assertion"]
        == 1.0
    )
    # tau2-bench: "Simulation terminated prematurely" -> 0.0 unless the user or the agent stopped
    assert task_reward(db, gold, crit, said, "max_steps", met)[0] == 0.0
    assert task_reward(db, gold, crit, said, "transfer", met)[0] == 1.0
    # the older release's basis, DB x COMMUNICATE, stays available
    assert task_reward(db, gold, crit, [], "user_stop", met, basis="db_communicate")[0] == 0.0
    assert task_reward(db, gold, crit, said, None, None, basis="db_communicate")[0] == action_reward(
        db, gold, ["10"], said)[0] == 1.0  # fmt: skip
    with pytest.raises(ValueError, match="cannot be evaluated"):
        task_reward(db, gold, {"reward_basis": ["DB", "ENV_ASSERTION"]}, [], "user_stop")


def test_llm_judge_contract_follows_tau2_bench():
    """tau2-bench sends a system message ("TASK - You will be given a list of expected outcomes ...") and a
    user message with the conversation as ``role: content`` lines and the assertions as a Python list."""
    spec = NLAssertionSpec()
    msgs = [{"role": "system", "content": "policy"}, {"role": "user", "content": "How many?"},
            {"role": "assistant", "content": None, "tool_calls": []}, {"role": "tool", "content": "{}"},
            {"role": "assistant", "content": "10"}]  # fmt: skip
    item = NLItem("t2", (TASK2,), msgs)
    system, user = spec.render(item)
    assert system["role"] == "system" and system["content"].startswith(
        "\n        TASK\n        - You will be given"
    )
    assert '"metExpectation": <false or true>,' in system["content"]
    assert render_conversation(msgs) == "user: How many?\nassistant: None\ntool: {}\nassistant: 10"
    assert f"expectedOutcomes:\n        {[TASK2]}" in user["content"] and "assistant: 10" in user["content"]
    good = {"results": [{"expectedOutcome": TASK2, "reasoning": "said 10", "metExpectation": True}]}
    out = spec.parse({"item_id": "t2", "status": "ok", "raw_output": json.dumps(good)}, item)
    assert out.ok and out.value[0]["met"] is True
    # tau2-bench would count an empty result list as met (all([]) is True); the contract calls it a failure
    out = spec.parse({"item_id": "t2", "status": "ok", "raw_output": '{"results": []}'}, item)
    assert not out.ok and "one per assertion" in out.reason
    out = spec.parse(
        {"item_id": "t2", "status": "ok", "raw_output": '{"results": [{"metExpectation": "yes"}]}'}, item
    )
    assert not out.ok


def test_known_answer_stand_in_reads_the_assertion_and_the_transcript():
    said = [{"role": "assistant", "content": "We have 10 t-shirt options; the refund is $8,276.23."}]
    judge = KnownAnswerNLJudge()
    assert judge.name == KNOWN_ANSWER == "known-answer"
    [c] = judge.check(NLItem("a", (TASK2,), said))
    assert c["met"] and c["justification"].startswith("known-answer")
    refund = "Agent should tell the user the total refund amount is $8,276.23."
    assert judge.check(NLItem("b", (refund,), said))[0]["met"]
    assert not judge.check(NLItem("c", (refund,), [{"role": "assistant", "content": "$8,276.2"}]))[0]["met"]
    mats = "Agent should tell the user the materials of the two t-shirts are polyester and cotton."
    assert not judge.check(NLItem("d", (mats,), said, ("polyester", "cotton")))[0]["met"]
    # an assertion naming no fact is met iff the database check passed: the answer key
    act = "Agent should cancel all pending orders"
    assert judge.check(NLItem("e", (act,), said, db_ok=True))[0]["met"]
    assert not judge.check(NLItem("f", (act,), said, db_ok=False))[0]["met"]


def test_padme_source_rewards(data):
    """PADMÉ default: NL_ASSERTION unjudged (App. C.3 omits the LLM judge); with nl_judge known-answer
    the reward is the full product and the breakdown names the judge."""
    plain = make_source({"kind": "tau2", "path": str(TAU2)}, ROOT)
    ka = make_source({"kind": "tau2", "path": str(TAU2), "nl_judge": "known-answer"}, ROOT)
    t2 = next(t for t in plain.tasks() if t.meta["tau2_id"] == "2")
    assert t2.meta["nl_assertions"] == [TASK2] and t2.meta["reward_basis"] == ["DB", "NL_ASSERTION"]
    r = plain.rollout(t2, RESOLVE, "good", "", SCRIPTED, 0)
    parts = r.meta["reward_breakdown"]
    assert parts["basis"] == ["DB", "NL_ASSERTION"] and parts["unjudged"] == ["NL_ASSERTION"]
    assert parts["fidelity"] == "tau2" and r.reward == parts["db"] == 1.0
    r = ka.rollout(t2, RESOLVE, "good", "", SCRIPTED, 0)
    parts = r.meta["reward_breakdown"]
    assert (
        parts["nl_judge"] == "known-answer"
        and parts["unjudged"] == []
        and r.reward == parts["nl_assertion"] == 1.0
    )
    # the product over the basis on every task with assertions (the scripted agent at each level)
    for t in [t for t in ka.tasks() if t.meta["nl_assertions"]][:6]:
        for level in ("good", "bad"):
            p = ka.rollout(t, RESOLVE, level, "", SCRIPTED, 0).meta["reward_breakdown"]
            assert p["nl_judge"] == "known-answer" and len(p["nl_checks"]) == len(t.meta["nl_assertions"])
            assert ka.rollout(t, RESOLVE, level, "", SCRIPTED, 0).reward == p["db"] * p["nl_assertion"]
    with pytest.raises(ValueError, match="fidelity 'x'"):
        make_source({"kind": "tau2", "path": str(TAU2), "fidelity": "x"}, ROOT)
    with pytest.raises(ValueError, match="reward_basis"):
        make_source({"kind": "tau2", "path": str(TAU2), "reward_basis": "communicate"}, ROOT)


class _FakeGateway:
    """Records the NL judge's call and answers it (the gateway's ``call`` / ``run`` surface)."""

    backbones: dict = {}

    def __init__(self, met: bool):
        self.met, self.calls = met, []

    def call(self, backbone, item_id, messages, **kw):
        self.calls.append({"backbone": backbone, "item_id": item_id, "messages": messages, **kw})
        return self.calls[-1]

    def run(self, calls, run_id, **kw):
        out = []
        for c in calls:
            asserted = c["messages"][1]["content"].split("expectedOutcomes:\n        ")[1].strip()
            n = len(eval(asserted))  # the Python list tau2-bench writes
            res = [{"expectedOutcome": "x", "reasoning": "r", "metExpectation": self.met}] * n
            out.append({"item_id": c["item_id"], "status": "ok", "raw_output": json.dumps({"results": res})})
        return out


def test_padme_source_nl_judge_through_the_gateway(data):
    """A backbone as nl_judge: one call per rollout with assertions, under the contract, run id padme-tau2-nl."""
    src = make_source({"kind": "tau2", "path": str(TAU2), "nl_judge": "judge-model"}, ROOT)
    t2 = next(t for t in src.tasks() if t.meta["tau2_id"] == "2")
    for met, want in ((True, 1.0), (False, 0.0)):
        gw = _FakeGateway(met)
        r = src.rollout(t2, RESOLVE, "good", "", SCRIPTED, 0, gateway=gw)
        [call] = gw.calls
        assert call["schema_name"] == "tau2_nl_assertions" and call["schema"]["required"] == ["results"]
        assert r.meta["reward_breakdown"]["nl_judge"] == "judge-model" and r.reward == want
    t0 = next(t for t in src.tasks() if t.meta["tau2_id"] == "0")  # no assertions: no call
    gw = _FakeGateway(False)
    assert src.rollout(t0, RESOLVE, "good", "", SCRIPTED, 0, gateway=gw).reward == 1.0 and gw.calls == []


def test_known_answer_nl_judge_makes_the_synthesis_tables_known_answer():
    from shopbench.report.evidence import padme_synthesis_kind

    llm = {"agent": "gpt-x", "steering": "gpt-x", "filter_judges": [{"backbone": "gpt-x"}]}
    ka = {**llm, "sources": [{"kind": "tau2", "nl_judge": "known-answer"}]}
    assert padme_synthesis_kind(ka)[0] == "known-answer" and "NL_ASSERTION" in padme_synthesis_kind(ka)[1]
    assert "NL_ASSERTION" not in padme_synthesis_kind(llm)[1]
