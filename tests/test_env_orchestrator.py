"""The one conversation loop (shopbench.env): turn order, the three ceilings, crash containment and
termination names, on a small scripted domain; and the τ²-retail domain's contained crashes."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from shopbench.core import ToolCall, Trajectory
from shopbench.env import AgentStep, Limits, Stop, ToolOutcome, ToolRecord, UserTurn, run_conversation


class EchoEnv:
    """A domain with one tool, ``echo``, that returns its arguments (``boom`` raises)."""

    domain = "echo"

    def __init__(self, limits=None, greeting=None, agent_opens=False, empty_reply_stops=False, accept=True):
        self.limits, self.greeting, self.agent_opens = limits or Limits(), greeting, agent_opens
        self.empty_reply_stops, self.accept = empty_reply_stops, accept
        self.user_turns: list[int] = []
        self.tool_log: list[ToolRecord] = []
        self.ended: list[tuple[int, str, int, str | None]] = []

    def user_view(self, index, agent_text, final):
        return {"index": index, "agent_text": agent_text, "final": final}

    def on_user_turn(self, index, turn):
        self.user_turns.append(index)
        return turn.stop and self.accept

    def execute(self, call):
        if call.name == "boom":
            raise KeyError("no such record")
        return ToolOutcome(call.arguments, {"role": "tool", "tool_call_id": call.call_id,
                                            "content": json.dumps(call.arguments)})  # fmt: skip

    def tool_failure(self, call, error):
        return ToolOutcome({"error": error}, {"role": "tool", "tool_call_id": call.call_id, "content": error})

    def on_tool(self, record):
        self.tool_log.append(record)

    def observe_tools(self, observation, outcomes):
        return [o.result for o in outcomes]

    def on_agent_message(self, text):
        return "handed_over" if text == "HANDOVER" else None

    def end_agent_turn(self, index, text, rounds, error):
        self.ended.append((index, text, rounds, error))

    def termination(self, reason):
        return f"echo:{reason}"


class ListAgent:
    """Plays a fixed list of steps (an exception instance is raised), recording what it saw."""

    name = "list-agent"

    def __init__(self, steps):
        self.steps, self.seen = list(steps), []

    def reset(self, episode_id):
        pass

    def step(self, messages, observation):
        self.seen.append(observation)
        s = self.steps.pop(0) if self.steps else AgentStep(message="ok")
        if isinstance(s, BaseException):
            raise s
        return s


class ListUser:
    name = "list-user"

    def __init__(self, turns):
        self.turns, self.views = list(turns), []

    def respond(self, view):
        self.views.append(view)
        t = self.turns.pop(0) if self.turns else UserTurn("bye", stop=True)
        if isinstance(t, BaseException):
            raise t
        return t


def say(text, **kw):
    return AgentStep(message=text, **kw)


def call(name, **args):
    return AgentStep(tool_calls=[ToolCall(name, args)])


def test_turn_order_tool_rounds_and_user_stop():
    env = EchoEnv()
    agent = ListAgent([call("echo", x=1), call("echo", x=2), say("done?", usage={"cost_usd": 0.5})])
    user = ListUser([UserTurn("hi", observation="intent-0"), UserTurn("thanks", stop=True)])
    conv = run_conversation(env, agent, user, "SYS")
    assert [m["role"] for m in conv.messages] == ["system", "user", "assistant", "tool", "assistant", "tool",
                                                 "assistant", "user"]  # fmt: skip
    assert conv.messages[2]["tool_calls"][0]["id"] == "c0.0.0"  # ids given where the agent left them empty
    assert conv.messages[2]["tool_calls"][0]["function"] == {"name": "echo", "arguments": '{"x": 1}'}
    assert agent.seen == ["intent-0", [{"x": 1}], [{"x": 2}]]  # the user's observation, then tool results
    assert (
        [(r.turn, r.round) for r in env.tool_log]
        == [(0, 0), (0, 1)]
        == [(r.turn, r.round) for r in conv.tools]
    )
    assert env.ended == [(0, "done?", 2, None)]
    assert user.views[1] == {"index": 1, "agent_text": "done?", "final": False}
    assert (conv.stop, conv.termination, conv.usage, conv.steps) == (Stop.USER_STOP, "echo:user_stop",
                                                                     {"cost_usd": 0.5}, 3)  # fmt: skip


def test_a_stop_the_environment_refuses_goes_on_to_the_turn_budget():
    env = EchoEnv(limits=Limits(max_user_turns=3), accept=False)
    conv = run_conversation(env, ListAgent([]), ListUser([UserTurn("done", stop=True)] * 5), "")
    assert env.user_turns == [0, 1, 2] and conv.termination == "echo:max_turns"


def test_tool_round_ceiling_is_an_agent_error():
    env = EchoEnv(limits=Limits(max_tool_rounds=2))
    conv = run_conversation(env, ListAgent([call("echo")] * 5), ListUser([UserTurn("hi")]), "")
    assert conv.stop == Stop.AGENT_ERROR and len(conv.tools) == 2
    assert conv.errors == {"agent": "tool-round ceiling reached (2 rounds in one turn)"}
    assert env.ended == [(0, "", 2, "tool-round ceiling reached (2 rounds in one turn)")]


def test_agent_step_ceiling_counts_every_step():
    env = EchoEnv(limits=Limits(max_agent_steps=3))
    conv = run_conversation(env, ListAgent([say("a"), call("echo"), say("b"), say("c")]),
                            ListUser([UserTurn("1"), UserTurn("2"), UserTurn("3")]), "")  # fmt: skip
    assert conv.steps == 3 and conv.stop == Stop.MAX_STEPS


def test_crashes_are_contained():
    agent = ListAgent([RuntimeError("model exploded")])
    conv = run_conversation(EchoEnv(), agent, ListUser([UserTurn("hi")]), "")
    assert (conv.stop, conv.errors) == (Stop.AGENT_ERROR, {"agent": "RuntimeError: model exploded"})
    conv = run_conversation(EchoEnv(), ListAgent([]), ListUser([ValueError("no turn")]), "")
    assert (conv.stop, conv.errors["user"]) == (Stop.NO_OPENING, "ValueError: no turn")
    conv = run_conversation(EchoEnv(), ListAgent([]), ListUser([UserTurn("hi"), ValueError("later")]), "")
    assert conv.stop == Stop.USER_ERROR and [m["role"] for m in conv.messages] == [
        "system",
        "user",
        "assistant",
    ]
    agent = ListAgent([call("boom"), say("sorry")])
    conv = run_conversation(EchoEnv(), agent, ListUser([UserTurn("hi")]), "")
    assert agent.seen[1] == [{"error": "KeyError: 'no such record'"}]  # the agent sees the tool's failure
    assert conv.messages[3]["content"] == "KeyError: 'no such record'" and conv.stop == Stop.USER_STOP


def test_openers_empty_replies_and_domain_endings():
    user = ListUser([UserTurn("hello")])
    conv = run_conversation(EchoEnv(greeting="Hi!"), ListAgent([say("HANDOVER")]), user, "S")
    assert [m.get("content") for m in conv.messages] == ["S", "Hi!", "hello", "HANDOVER"]
    assert user.views[0]["agent_text"] == "Hi!" and conv.termination == "echo:handed_over"
    agent = ListAgent([say("welcome", final=True)])
    user = ListUser([UserTurn("bye", stop=True)])
    conv = run_conversation(EchoEnv(agent_opens=True), agent, user, "")
    assert agent.seen == [None] and user.views[0]["final"] is True
    conv = run_conversation(
        EchoEnv(empty_reply_stops=True), ListAgent([AgentStep()]), ListUser([UserTurn("x")]), ""
    )
    assert conv.stop == Stop.AGENT_STOP and conv.messages[-1]["role"] == "user"
    conv = run_conversation(EchoEnv(), ListAgent([AgentStep()]), ListUser([UserTurn("x")]), "")
    assert conv.messages[2] == {"role": "assistant", "content": ""}  # the shop's rule: an empty message


def test_trajectory_turns_are_typed():
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [ToolCall("echo", {"x": 1}, "c1").to_openai()]},
            {"role": "tool", "tool_call_id": "c1", "name": "echo", "content": '{"x": 1}'}]  # fmt: skip
    t = Trajectory("r", "t", "d", "s", "", "good", "", "m", "u", 0, 0, msgs, reward=1)
    assert t.reward == 1.0 and t.trajectory_id == "r" and t.termination is None
    roles = [(m.role, m.text, m.tool_result) for m in t.turns]
    assert roles == [("system", "S", None), ("user", "hi", None), ("assistant", None, None),
                     ("tool", '{"x": 1}', '{"x": 1}')]  # fmt: skip
    assert t.turns[2].tool_calls == (ToolCall("echo", {"x": 1}, "c1"),) and t.turns[3].name == "echo"
    assert Trajectory.from_dict({**t.to_dict(), "extra": 1}) == t


TAU2 = Path(__file__).resolve().parents[2] / "shared" / "data" / "tau2_retail"


def test_tau2_user_crash_is_a_recorded_user_error():
    """A user model without a usable turn used to crash the rollout; now it ends it as user_error."""
    if not TAU2.is_dir():
        pytest.skip("no tau2 data beside the project")
    from shopbench.padme.sources.tau2 import Tau2Source
    from shopbench.padme.types import Context, Criterion

    class Broken:
        def call(self, backbone, item_id, messages, **kw):
            return SimpleNamespace(item_id=item_id)

        def run(self, calls, run_id, desc=None) -> list[dict[str, Any]]:
            return [{"status": "error", "error": "backend down"}]

    src = Tau2Source(TAU2)
    task = src.tasks(1)[0]
    r = src.rollout(
        task, Criterion("task_resolution", "x"), "good", "", Context("scripted", "m"), 0, Broken()
    )
    assert r.meta["termination"] == "user_error" and "backend down" in r.meta["errors"]["user"]
    assert r.reward == 0.0 or task.meta["n_writes"] == 0
