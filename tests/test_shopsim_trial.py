"""The trial controller and the resumable sweep (seed 002 §3.4, App. D): determinism, the six
termination reasons, the tool-round ceiling, crash containment, and resume after a kill."""

from __future__ import annotations

import json

import pytest

from shopbench.shopsim.agents import make_agent
from shopbench.shopsim.catalog.generate import control_catalog
from shopbench.shopsim.scenario import ScenarioFactory
from shopbench.shopsim.store import Store
from shopbench.shopsim.sweep import TrajectoryStore, run_sweep
from shopbench.shopsim.trial import run_trial
from shopbench.shopsim.types import AgentStep, ToolCall, TrialRecord
from shopbench.shopsim.user import ScriptedUser
from shopbench.shopsim.verifier.outcomes import consistency


@pytest.fixture(scope="module")
def env():
    cat = control_catalog(1500, seed=3)
    return cat, Store(cat), ScenarioFactory(cat)


def _scen(env, seed=11, kind="general", difficulty=3):
    return env[2].make(seed, kind=kind, difficulty=difficulty)


def test_same_seed_same_scenario_and_transcript(env):
    s1, s2 = _scen(env), _scen(env)
    assert s1 == s2
    t1 = run_trial(s1, make_agent("competent"), ScriptedUser(), env[1])
    t2 = run_trial(s2, make_agent("competent"), ScriptedUser(), env[1])
    d1, d2 = t1.to_dict(), t2.to_dict()
    d1.pop("wall_s"), d2.pop("wall_s")
    assert d1 == d2
    assert t1.termination == "goal_met" and t1.final_cart == s1.target
    assert consistency(t1, per_turn=True) == []  # replayed cart == controller's reads, every turn
    # JSON round trip keeps everything the verifier reads
    back = TrialRecord.from_dict(json.loads(json.dumps(t1.to_dict())))
    assert back.to_dict() == t1.to_dict()


def test_the_trial_conversation_is_the_one_core_trajectory(env):
    from shopbench.core import Trajectory
    from shopbench.shopsim import types
    from shopbench.shopsim.environment import trial_messages

    assert getattr(types, "Trajectory", Trajectory) is Trajectory  # no second trajectory type or alias
    t = run_trial(_scen(env), make_agent("competent"), ScriptedUser(), env[1])
    conv = t.conversation
    assert isinstance(conv, Trajectory) and conv.domain == "shop" and conv.task_id == t.trial_id
    assert conv.messages == trial_messages(t) and conv.messages[0] == {
        "role": "system",
        "content": t.system_prompt,
    }
    users = [m["content"] for m in conv.messages if m["role"] == "user"]
    assert users == [turn.user.message for turn in t.turns]
    calls = [c for m in conv.turns if m.role == "assistant" for c in m.tool_calls]
    assert [(c.name, c.arguments) for c in calls] == [(e.call.name, e.call.arguments) for e in t.events]
    results = [json.loads(m.text) for m in conv.turns if m.role == "tool"]
    assert results == [e.result for e in t.events]
    assert conv.meta["termination"] == t.termination and conv.meta["final_cart"] == t.final_cart
    # a stored record (JSONL) loads back to the same conversation
    back = TrialRecord.from_dict(json.loads(json.dumps(t.to_dict())))
    assert back.conversation == conv
    assert not hasattr(t, "messages")  # the renderer reads a trial by its turns (tool log paired with calls)


class _Crashing:
    name = "crashing"
    system_prompt = "x"

    def reset(self, trial_id):
        pass

    def step(self, messages, intent):
        raise RuntimeError("model server went away")


class _Looping:
    name = "looping"
    system_prompt = "x"

    def reset(self, trial_id):
        pass

    def step(self, messages, intent):
        return AgentStep(tool_calls=[ToolCall("view_cart", {})])


class _Garbage:
    name = "garbage"
    system_prompt = "x"

    def __init__(self):
        self.n = 0

    def reset(self, trial_id):
        self.n = 0

    def step(self, messages, intent):
        self.n += 1
        if self.n % 2:
            return AgentStep(
                tool_calls=[ToolCall("teleport", {"to": "mars"}), ToolCall("add_to_cart", {"qty": "x"})]
            )
        return AgentStep(message="Done.")


class _BrokenUser:
    name = "broken"

    def __init__(self, fail_at):
        self.fail_at = fail_at
        self.inner = ScriptedUser()

    def reply(self, scenario, directive, history, products, system_prompt, cart):
        if directive.message_index >= self.fail_at:
            raise ValueError("simulator returned nonsense")
        return self.inner.reply(scenario, directive, history, products, system_prompt, cart)


def test_agent_crash_is_assistant_error(env):
    t = run_trial(_scen(env), _Crashing(), ScriptedUser(), env[1])
    assert t.termination == "assistant_error"
    assert "model server went away" in t.turns[-1].agent_error


def test_tool_round_ceiling_is_assistant_error(env):
    s = _scen(env)
    t = run_trial(s, _Looping(), ScriptedUser(), env[1])
    assert t.termination == "assistant_error"
    assert len(t.turns[0].events) == s.max_tool_rounds
    assert "ceiling" in t.turns[0].agent_error


def test_malformed_tool_calls_become_error_results(env):
    t = run_trial(_scen(env), _Garbage(), ScriptedUser(), env[1])
    errs = [e for e in t.events if not e.ok]
    assert errs and all("error" in e.result for e in errs)
    assert t.termination in ("max_turns", "abandoned")


def test_simulator_failures(env):
    assert (
        run_trial(_scen(env), make_agent("competent"), _BrokenUser(0), env[1]).termination
        == "no_opening_message"
    )
    t = run_trial(_scen(env), make_agent("competent"), _BrokenUser(1), env[1])
    assert t.termination == "judge_error" and len(t.turns) == 1


def test_premature_done_is_ignored(env):
    s = _scen(env)

    class Impatient(ScriptedUser):
        def reply(self, scenario, directive, history, products, system_prompt, cart):
            r = super().reply(scenario, directive, history, products, system_prompt, cart)
            if directive.message_index == 0:
                r.terminate, r.termination_reason = True, "goal_met"
            return r

    t = run_trial(s, make_agent("competent"), Impatient(), env[1])
    assert t.termination == "goal_met" and t.final_cart == s.target  # not stopped at message 0


def test_refusal_probe_never_counts_as_goal_met(env):
    s = _scen(env, seed=5, kind="refusal")
    t = run_trial(s, make_agent("competent"), ScriptedUser(), env[1])
    assert t.termination in ("abandoned", "max_turns")
    assert any(e.call.name == "search_products" for e in t.events)


def test_sweep_resumes_after_a_kill(env, tmp_path):
    scen = [_scen(env, seed=s, difficulty=1 + s % 10) for s in range(6)]
    out = TrajectoryStore(tmp_path)
    agents = {"scripted:competent": lambda: make_agent("competent")}
    full = run_sweep(scen, agents, ScriptedUser, env[1], out, progress=False)["scripted:competent"]
    path = out.path("scripted:competent")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3]) + lines[3][: len(lines[3]) // 2])  # killed mid-write of trial 4

    calls = []
    orig = run_trial

    def counting(s, *a):
        calls.append(s.trial_id)
        return orig(s, *a)

    import shopbench.shopsim.sweep as sweep_mod

    sweep_mod.run_trial, saved = counting, sweep_mod.run_trial
    try:
        again = run_sweep(scen, agents, ScriptedUser, env[1], out, progress=False)["scripted:competent"]
    finally:
        sweep_mod.run_trial = saved
    assert calls == [s.trial_id for s in scen[3:]]  # only the unfinished trials ran again
    assert [t.trial_id for t in again] == [s.trial_id for s in scen]
    assert len(path.read_text().splitlines()) == 6
    strip = lambda ts: [{k: v for k, v in t.to_dict().items() if k != "wall_s"} for t in ts]  # noqa: E731
    assert strip(again) == strip(full)
