"""The one conversation loop: agent, user simulator and environment of any domain (seed 002 §3.4,
seed 003 §4 "Agent System").

"A turn contains one customer message and one agent turn, which may span several tool-call rounds"
(seed 002 §3.4); "The ceiling on tool-call rounds within a single agent turn is 10 [...] a turn that
hits it is recorded as an agent error" (App. D). τ²-bench's orchestrator (which seed 003 builds on)
passes messages between the same three roles until the user or the agent stops or a step ceiling
is reached.

What :func:`run_conversation` does: the user opens (or the agent, or a fixed greeting stands in
for the agent's first message); then user turns and agent turns alternate. An agent turn is a run
of steps: each step's tool calls are executed by the environment and their results appended, until
a step without tool calls gives the agent's message. The conversation ends, with a :class:`Stop`
reason that the environment names in its own vocabulary, when

- the user stops and the environment lets the stop stand (``user_stop``),
- the agent ends it (``agent_stop``: an empty step where the domain says so, or a message the
  domain treats as an ending, such as τ²'s transfer to a human),
- the agent fails (``agent_error``): an exception, a step with an ``error``, or the tool-round
  ceiling of one turn,
- the user simulator fails (``no_opening_message`` on the first user turn, else ``user_error``),
- a ceiling is reached (``max_turns`` user turns, ``max_steps`` agent steps), or the time budget's
  deadline has passed before the next agent step or user turn (``time_budget``: a cut conversation,
  which callers must not score as finished).

Dual control (τ²-bench's telecom and banking, issue 28 item 4): a user turn may be tool calls on the
user's own device or records (:attr:`UserTurn.tool_calls`), executed by the environment's
``execute_user_call`` and answered to the user (``tool_results``) until the user speaks (at most
:data:`USER_TOOL_ROUNDS` rounds, else ``user_error``); every call of either role is kept in
:attr:`Conversation.tools`, in order, with its ``role``. A domain without user tools answers a user's
call with its tool error.

Nothing a party does escapes: agent and user exceptions become terminations with their message
recorded in :attr:`Conversation.errors`, and a tool that raises becomes the environment's error
result, which the agent sees.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..core.conversation import ToolCall
from .protocols import Agent, AgentStep, Environment, ToolOutcome, ToolRecord, UserSimulator, UserTurn

__all__ = ["Conversation", "Stop", "ToolRecord", "run_conversation"]


class Stop(StrEnum):
    """Why a conversation ended, before the domain names it (:meth:`Environment.termination`)."""

    USER_STOP = "user_stop"
    AGENT_STOP = "agent_stop"
    AGENT_ERROR = "agent_error"
    USER_ERROR = "user_error"
    NO_OPENING = "no_opening_message"
    MAX_TURNS = "max_turns"
    MAX_STEPS = "max_steps"
    TIME_BUDGET = "time_budget"


def _past_deadline(s: _State) -> bool:
    d = s.env.limits.deadline
    return d is not None and time.monotonic() >= d


@dataclass
class Conversation:
    """What :func:`run_conversation` returns: the transcript as the agent saw it, the tool log,
    the agent's summed usage, the stop reason and the domain's termination name."""

    messages: list[dict]
    tools: list[ToolRecord] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=dict)
    stop: Stop | str | None = None
    termination: str = ""
    errors: dict[str, str] = field(default_factory=dict)  # role -> error text (agent / user)
    steps: int = 0


def error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"[:500]


def _add_usage(acc: dict[str, float], usage: Mapping[str, Any] | None) -> None:
    for k, v in (usage or {}).items():
        if isinstance(v, int | float):
            acc[k] = acc.get(k, 0.0) + float(v)


@dataclass
class _State:
    env: Environment
    agent: Agent
    user: UserSimulator
    conv: Conversation
    index: int = 0  # the next user turn
    agent_text: str | None = None
    final: bool = False
    observation: Any = None


def _user_turn(s: _State) -> Stop | str | None:
    lim = s.env.limits.max_user_turns
    if lim is not None and s.index >= lim:
        return Stop.MAX_TURNS
    if _past_deadline(s):
        return Stop.TIME_BUDGET
    i = s.index
    try:
        turn: UserTurn = s.user.respond(s.env.user_view(i, s.agent_text, s.final))
        rnd = 0
        while turn.tool_calls:  # dual control: the user acts on its own side before it speaks
            if rnd == USER_TOOL_ROUNDS:
                raise RuntimeError(f"user tool-round ceiling reached ({USER_TOOL_ROUNDS} rounds in one turn)")
            turn = s.user.tool_results(_user_tools(s, turn, i, rnd))  # type: ignore[attr-defined]
            rnd += 1
    except Exception as e:  # the simulator failed to produce a turn
        s.conv.errors["user"] = error_text(e)
        return Stop.NO_OPENING if i == 0 else Stop.USER_ERROR
    s.index += 1
    s.conv.messages.append({"role": "user", "content": turn.message})
    s.observation = turn.observation
    if s.env.on_user_turn(i, turn):
        return Stop.USER_STOP
    return None


USER_TOOL_ROUNDS = 10  # tool-call rounds in one user turn (as the agent's App. D ceiling)


def _user_tools(s: _State, turn: UserTurn, index: int, rnd: int) -> list[ToolOutcome]:
    """Execute the user's tool calls of one round (dual control, issue 28 item 4) in order, each kept in
    :attr:`Conversation.tools` with ``role="user"``; the agent's transcript does not show them."""
    run = getattr(s.env, "execute_user_call", None)
    outcomes = []
    for k, c in enumerate(turn.tool_calls):
        c = c if c.call_id else ToolCall(c.name, c.arguments, f"u{index}.{rnd}.{k}")
        if run is None:
            out = s.env.tool_failure(c, f"the {s.env.domain} domain gives the user no tools")
        else:
            try:
                out = run(c)
            except Exception as e:  # environments never raise on bad input; this guards their bugs
                out = s.env.tool_failure(c, error_text(e))
        rec = ToolRecord(index, rnd, c, out, role="user")
        s.conv.tools.append(rec)
        s.env.on_tool(rec)
        outcomes.append(out)
    return outcomes


def _call_ids(step: AgentStep, turn: int, rnd: int) -> list[ToolCall]:
    return [c if c.call_id else ToolCall(c.name, c.arguments, f"c{turn}.{rnd}.{k}")
            for k, c in enumerate(step.tool_calls)]  # fmt: skip


def _tool_round(s: _State, step: AgentStep, turn: int, rnd: int) -> None:
    calls = _call_ids(step, turn, rnd)
    s.conv.messages.append(
        {"role": "assistant", "content": step.message, "tool_calls": [c.to_openai() for c in calls]}
    )
    outcomes = []
    for c in calls:
        try:
            out = s.env.execute(c)
        except Exception as e:  # environments never raise on bad input; this guards their bugs
            out = s.env.tool_failure(c, error_text(e))
        rec = ToolRecord(turn, rnd, c, out)
        s.conv.tools.append(rec)
        s.env.on_tool(rec)
        s.conv.messages.append(out.message)
        outcomes.append(out)
    s.observation = s.env.observe_tools(s.observation, outcomes)


def _agent_step(s: _State) -> AgentStep:
    try:
        step = s.agent.step(s.conv.messages, s.observation)
    except Exception as e:  # an agent crash is a recorded termination, never a crashed run
        step = AgentStep(error=error_text(e))
    s.conv.steps += 1
    _add_usage(s.conv.usage, step.usage)
    return step


def _agent_turn(s: _State) -> Stop | str | None:
    """One agent turn: steps until a message, an error or a ceiling."""
    turn = max(s.index - 1, 0)
    lim = s.env.limits
    rnd, text = 0, ""
    error: str | None = None
    stop: Stop | str | None = None
    while True:
        if lim.max_tool_rounds is not None and rnd == lim.max_tool_rounds:
            error = f"tool-round ceiling reached ({lim.max_tool_rounds} rounds in one turn)"
            stop = Stop.AGENT_ERROR
            break
        if lim.max_agent_steps is not None and s.conv.steps >= lim.max_agent_steps:
            stop = Stop.MAX_STEPS
            break
        if _past_deadline(s):
            stop = Stop.TIME_BUDGET
            break
        step = _agent_step(s)
        if step.error:
            error, stop = step.error, Stop.AGENT_ERROR
            break
        if step.tool_calls:
            _tool_round(s, step, turn, rnd)
            rnd += 1
            continue
        if step.message is None and s.env.empty_reply_stops:
            stop = Stop.AGENT_STOP
            break
        text = step.message or ""
        s.conv.messages.append({"role": "assistant", "content": text})
        s.agent_text, s.final = text, step.final
        stop = s.env.on_agent_message(text)
        break
    if error:
        s.conv.errors["agent"] = error
    s.env.end_agent_turn(turn, text, rnd, error)
    return stop


def run_conversation(env: Environment, agent: Agent, user: UserSimulator, system_prompt: str) -> Conversation:
    """Play ``agent`` and ``user`` in ``env`` until the conversation ends (see the module docstring)."""
    conv = Conversation(messages=[{"role": "system", "content": system_prompt}])
    s = _State(env, agent, user, conv)
    agent_next = env.agent_opens
    if env.greeting is not None:
        conv.messages.append({"role": "assistant", "content": env.greeting})
        s.agent_text, agent_next = env.greeting, False
    stop: Stop | str | None = None
    while stop is None:
        stop = _agent_turn(s) if agent_next else _user_turn(s)
        agent_next = not agent_next
    conv.stop = stop
    conv.termination = env.termination(str(stop))
    return conv
