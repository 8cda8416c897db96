"""The roles of a conversation and the values they exchange (seed 002 §3.4, seed 003 §3.1).

Three roles meet in :func:`shopbench.env.orchestrator.run_conversation`:

- an :class:`Agent` (the system under test, scripted or an LLM) answers the transcript with an
  :class:`AgentStep`: text for the user and/or tool calls;
- a :class:`UserSimulator` answers the agent with a :class:`UserTurn`, from a view its domain
  builds (the shop's customer sees the reveal directive and the cart; τ²'s user the agent's text);
- an :class:`Environment` (one episode of a domain: its data, tools and termination rules) builds
  the user's view, executes tool calls (never raising), decides whether a user's "stop" stands and
  names the end of the conversation in its own vocabulary.

A domain is a package with its own data model, tools, environment and reward: the seeded shop
(:mod:`shopbench.shopsim`, environment :mod:`shopbench.shopsim.environment`) and τ²-retail
(:mod:`shopbench.domains.tau2_retail`).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Protocol, runtime_checkable

from pydantic import ConfigDict
from pydantic.dataclasses import dataclass

from ..core.conversation import ToolCall

__all__ = [
    "Agent",
    "AgentStep",
    "DualControlUser",
    "Environment",
    "Limits",
    "ToolOutcome",
    "ToolRecord",
    "UserSimulator",
    "UserTurn",
]

_ANY = ConfigDict(arbitrary_types_allowed=True)


@dataclass
class AgentStep:
    """One step of the agent: text for the user and/or tool calls to execute. An agent turn ends at
    the first step without tool calls. ``final`` marks a closing message (τ²: the user should wrap
    up); ``error`` a step the agent could not produce (recorded, never raised)."""

    message: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)  # prompt_tokens, completion_tokens, cost_usd
    final: bool = False


@dataclass(config=_ANY)
class UserTurn:
    """One user message. ``stop`` asks to end the conversation (the environment decides whether it
    stands); ``observation`` is what the agent is given beside the transcript (the shop's
    structured intent; τ²: the text); ``record`` is the domain's own record of the turn.
    ``tool_calls`` (dual control, issue 28 item 4): calls on the user's own device or records,
    executed before the user speaks; the turn's text is then not sent, the results go back to the
    user (:meth:`DualControlUser.tool_results`), whose next :class:`UserTurn` continues the turn."""

    message: str
    stop: bool = False
    reason: str | None = None
    observation: Any = None
    record: Any = None
    tool_calls: list[ToolCall] = field(default_factory=list)


@dataclass(config=_ANY)
class ToolOutcome:
    """An executed tool call: the domain's ``result`` and the tool ``message`` the agent sees."""

    result: Any
    message: dict[str, Any]


@dataclass(config=_ANY)
class ToolRecord:
    """One executed tool call: the user turn it answers, its round in that (agent or user) turn, the
    outcome, and who called it (``"assistant"``, or ``"user"`` for a user-side tool)."""

    turn: int
    round: int
    call: ToolCall
    outcome: ToolOutcome
    role: str = "assistant"


@dataclass(frozen=True)
class Limits:
    """The ceilings of a conversation. ``max_user_turns``: user messages (the shop's turn budget);
    ``max_tool_rounds``: tool-call rounds in one agent turn, reaching it is an agent error (seed 002
    App. D: 10); ``max_agent_steps``: agent steps in the whole conversation (τ²-bench's max_steps);
    ``deadline``: a :func:`time.monotonic` instant after which no agent step or user turn starts (a
    time budget: the conversation ends as ``time_budget``). None = no ceiling."""

    max_user_turns: int | None = None
    max_tool_rounds: int | None = None
    max_agent_steps: int | None = None
    deadline: float | None = None


@runtime_checkable
class Agent(Protocol):
    """The agent under test."""

    name: str

    def reset(self, episode_id: str) -> None: ...

    def step(self, messages: list[dict], observation: Any) -> AgentStep: ...


@runtime_checkable
class UserSimulator(Protocol):
    """The simulated user: one :class:`UserTurn` per turn from its domain's view."""

    name: str

    def respond(self, view: Any) -> UserTurn: ...


@runtime_checkable
class DualControlUser(Protocol):
    """A simulated user with tools of its own (τ²-bench's dual control, issue 28 item 4): a turn may
    be tool calls (:attr:`UserTurn.tool_calls`); the orchestrator executes them with
    :meth:`Environment.execute_user_call` and gives the outcomes back here, in order."""

    name: str

    def respond(self, view: Any) -> UserTurn: ...

    def tool_results(self, outcomes: list[ToolOutcome]) -> UserTurn: ...


class Environment(Protocol):
    """One episode of a domain, as the orchestrator drives it."""

    domain: str
    limits: Limits
    greeting: str | None  # a fixed first agent message (τ²-bench's orchestrator), or None
    agent_opens: bool  # the agent speaks first (else the user opens)
    empty_reply_stops: bool  # a step with neither text nor tool calls ends the conversation

    def user_view(self, index: int, agent_text: str | None, final: bool) -> Any: ...

    def on_user_turn(self, index: int, turn: UserTurn) -> bool:
        """Record the turn; True when its ``stop`` ends the conversation."""
        ...

    def execute(self, call: ToolCall) -> ToolOutcome: ...

    def tool_failure(self, call: ToolCall, error: str) -> ToolOutcome: ...

    def on_tool(self, record: ToolRecord) -> None: ...

    def observe_tools(self, observation: Any, outcomes: list[ToolOutcome]) -> Any: ...

    def on_agent_message(self, text: str) -> str | None:
        """A termination reason when this agent message ends the conversation (τ²: a transfer)."""
        ...

    def end_agent_turn(self, index: int, text: str, rounds: int, error: str | None) -> None: ...

    # optional (dual control): ``execute_user_call(call) -> ToolOutcome`` runs a user-side tool on
    # the user's own device or records, never raising (see :class:`DualControlUser`)

    def termination(self, reason: str) -> str:
        """The domain's name for how the conversation ended: ``reason`` is a
        :class:`~shopbench.env.orchestrator.Stop` value or a reason :meth:`on_agent_message` gave."""
        ...
