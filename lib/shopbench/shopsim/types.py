"""The data model of the shop environment (seed 002, Sections 3-4): everything a trial precommits,
everything it records, and nothing else. Plain dataclasses with ``to_dict``/``from_dict`` so a
trial record round-trips through JSONL unchanged. Tool calls and agent steps are the shared types
of :mod:`shopbench.core` and :mod:`shopbench.env`.

Vocabulary (seed 002 §3.4): a *turn* is one customer message plus one agent turn, and an agent turn
may span several tool-call *rounds*. Customer-message indices start at 0 (the opening message).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..core.conversation import ToolCall, Trajectory, from_fields
from ..env.protocols import AgentStep as AgentStep  # the one agent-step type of every domain

CONTRACT_VERSION = "shopsim-1"  # stamped on every trial record and score artefact (App. I)

TrialKind = Literal["general", "grocery", "refusal"]
Tier = Literal["direct", "light", "multi_item", "complex"]
RevealStyle = Literal["batch", "linear", "nonlinear"]
BeatKind = Literal["intro", "explore", "defer", "return", "add"]

# The six termination reasons of §3.4, under the summary keys of Table 11 (App. I).
TERMINATION_REASONS = (
    "goal_met",
    "max_turns",
    "abandoned",
    "assistant_error",
    "judge_error",
    "no_opening_message",
)


@dataclass(frozen=True)
class Variant:
    """One purchasable option of a product (size and/or colour) with its own stock."""

    variant_id: str
    size: str | None = None
    colour: str | None = None
    stock: int = 0


@dataclass(frozen=True)
class ShopProduct:
    """One row of the control catalog (seed 002 §3.1). ``attributes`` hold the catalog facts that
    attribute claims are checked against (material, fit, flavour, pack size, ...)."""

    product_id: str
    title: str
    brand: str
    category: str
    price: float
    stock: int
    description: str
    attributes: dict[str, str] = field(default_factory=dict)
    variants: tuple[Variant, ...] = ()
    grocery: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> ShopProduct:
        d = dict(d)
        d["variants"] = tuple(Variant(**v) if isinstance(v, dict) else v for v in d.get("variants", ()))
        return from_fields(cls, d)


@dataclass
class ToolEvent:
    """An executed tool call and its result. ``result`` is the JSON the agent saw; it carries an
    ``"error"`` key when the call failed. Successful cart writes carry ``"product_id"`` and
    ``"quantity"`` (the product's new total quantity in the cart), which is all state replay needs."""

    turn: int  # customer-message index this agent turn answers
    round: int  # tool-call round within the agent turn (0-based)
    call: ToolCall
    result: dict[str, Any]

    @property
    def ok(self) -> bool:
        return "error" not in self.result

    def to_dict(self) -> dict:
        return {"turn": self.turn, "round": self.round, "call": self.call.to_dict(), "result": self.result}

    @classmethod
    def from_dict(cls, d: dict) -> ToolEvent:
        return cls(turn=d["turn"], round=d["round"], call=ToolCall.from_dict(d["call"]), result=d["result"])


@dataclass(frozen=True)
class GoalItem:
    """One hidden target-cart line (seed 002 §3.2 and App. B). ``hints`` are the optional details the
    customer may state (size, colour, fit, budget); ``withheld`` lists those the customer holds back
    (each withheld with probability d/10)."""

    product_id: str
    quantity: int
    category: str
    variant_id: str | None = None
    hints: dict[str, str] = field(default_factory=dict)
    withheld: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> GoalItem:
        d = dict(d)
        d["withheld"] = tuple(d.get("withheld", ()))
        return from_fields(cls, d)


@dataclass(frozen=True)
class Beat:
    """One step of a nonlinear itinerary (App. D): ``add`` beats are essential, the rest flavour."""

    kind: BeatKind
    product_id: str

    @property
    def essential(self) -> bool:
        return self.kind == "add"


@dataclass(frozen=True)
class Scenario:
    """Everything a trial precommits, derived from one integer seed (seed 002 §3.2-3.3, App. B-D)."""

    seed: int
    kind: TrialKind
    difficulty: int  # 1..10
    tier: Tier
    breadth: int  # drawn category slots B
    items: tuple[GoalItem, ...]  # the hidden target cart (empty for refusal probes)
    persona: dict[str, str]  # the six App. C dimensions
    max_turns: int  # 3 + round(w_tier * m)
    style: RevealStyle
    waves: tuple[tuple[str, ...], ...] = ()  # batch: ordered waves of product ids (one wave if <= 4 items)
    order: tuple[str, ...] = ()  # linear: release order of product ids
    beats: tuple[Beat, ...] = ()  # nonlinear: the compiled itinerary
    max_tool_rounds: int = 10  # per agent turn (App. D: 10; batch-aware up to 20)
    probe: dict[str, Any] | None = None  # refusal probes (App. J): topic, request, marked terms, placeholder

    @property
    def trial_id(self) -> str:
        return f"{self.kind}-{self.seed}"

    @property
    def target(self) -> dict[str, int]:
        return {g.product_id: g.quantity for g in self.items}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["beats"] = [asdict(b) for b in self.beats]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Scenario:
        d = dict(d)
        d["items"] = tuple(GoalItem.from_dict(g) for g in d.get("items", ()))
        d["waves"] = tuple(tuple(w) for w in d.get("waves", ()))
        d["order"] = tuple(d.get("order", ()))
        d["beats"] = tuple(Beat(**b) for b in d.get("beats", ()))
        return from_fields(cls, d)


@dataclass
class Directive:
    """What the reveal controller asks of the customer's next message (seed 002 §3.3)."""

    message_index: int
    reveal: list[str]  # product ids first requested in this message
    ask_add: list[str]  # product ids the customer asks to put in the cart now
    beats: list[Beat] = field(default_factory=list)  # nonlinear: the beats this message plays
    pending: list[str] = field(default_factory=list)  # revealed, not yet at the required quantity
    done: bool = False  # every goal item is in the cart at its quantity
    text: str = ""  # the directive as an instruction (for the LLM simulator)


@dataclass
class UserReply:
    """The user simulator's one structured answer per turn: the five fields of seed 002 §3.4, plus
    the structured intent the scripted simulator also exposes (scripted agents read it instead of
    parsing prose; it names descriptions, never product ids)."""

    rationale: str
    frustration: int  # 1 (calm) .. 5 (furious): the inline rating of §4.2
    message: str
    terminate: bool
    termination_reason: str | None  # goal_met | abandoned | None
    expected_calls: list[ToolCall] = field(default_factory=list)
    intent: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["expected_calls"] = [c.to_dict() for c in self.expected_calls]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> UserReply:
        d = dict(d)
        d["expected_calls"] = [ToolCall.from_dict(c) for c in d.get("expected_calls", [])]
        return from_fields(cls, d)


@dataclass
class Turn:
    """One customer message and the agent turn that answers it, with the controller's records."""

    index: int
    directive: Directive
    user: UserReply
    agent_message: str = ""
    events: list[ToolEvent] = field(default_factory=list)
    rounds: int = 0
    cart_after: dict[str, int] = field(default_factory=dict)  # ground-truth cart read by the controller
    agent_error: str | None = None

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "directive": asdict(self.directive),
            "user": self.user.to_dict(),
            "agent_message": self.agent_message,
            "events": [e.to_dict() for e in self.events],
            "rounds": self.rounds,
            "cart_after": self.cart_after,
            "agent_error": self.agent_error,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Turn:
        dd = dict(d["directive"])
        dd["beats"] = [Beat(**b) for b in dd.get("beats", [])]
        return cls(
            index=d["index"],
            directive=Directive(**dd),
            user=UserReply.from_dict(d["user"]),
            agent_message=d.get("agent_message", ""),
            events=[ToolEvent.from_dict(e) for e in d.get("events", [])],
            rounds=d.get("rounds", 0),
            cart_after=d.get("cart_after", {}),
            agent_error=d.get("agent_error"),
        )


@dataclass
class TrialRecord:
    """The full simulator record of one trial: the evidence the verifier reads (seed 002 §5.1).

    It is the shop domain's record around the conversation, as tau2-bench's ``SimulationRun`` is:
    the scenario, the controller's turn records (directives, the simulator's structured replies, the
    tool log with round indices and result objects, the cart read after every agent turn) and the
    termination. The conversation itself, as the project's one trajectory type, is
    :attr:`conversation` (a :class:`shopbench.core.Trajectory` read from those records); no other
    conversation type exists. (The record has no ``messages`` attribute on purpose: the one
    renderer reads it by its ``turns``, which keep the tool log paired with its calls.)"""

    scenario: Scenario
    agent: str
    user: str
    system_prompt: str
    turns: list[Turn]
    termination: str  # one of TERMINATION_REASONS
    final_cart: dict[str, int]
    revealed_at: dict[str, int]  # product id -> customer-message index where it was first requested
    usage: dict[str, dict[str, float]] = field(default_factory=dict)  # role -> tokens/cost
    wall_s: float = 0.0
    contract_version: str = CONTRACT_VERSION

    @property
    def trial_id(self) -> str:
        return self.scenario.trial_id

    @property
    def events(self) -> list[ToolEvent]:
        return [e for t in self.turns for e in t.events]

    @property
    def conversation(self) -> Trajectory:
        """The trial as the one :class:`shopbench.core.Trajectory` (domain ``shop``; no steering
        labels; ``reward`` unset: the verifier's exact-cart success is the reward, and a caller that
        has scored the trial sets it; ``meta``: termination, final cart, target, agent errors)."""
        target = self.scenario.target
        return Trajectory(
            rollout_id=f"{self.agent}/{self.trial_id}", task_id=self.trial_id, domain="shop", source="shopsim",
            criterion="", level="", steering="", agent_model=self.agent, user_model=self.user,
            seed=self.scenario.seed, attempt=0, messages=trial_messages(self),
            usage=dict(self.usage.get("agent") or {}),
            meta={"termination": self.termination, "final_cart": dict(self.final_cart), "target": target,
                  "agent_errors": [t.agent_error for t in self.turns if t.agent_error],
                  "contract_version": self.contract_version},
        )  # fmt: skip

    def to_dict(self) -> dict:
        return {
            "trial_id": self.trial_id,
            "scenario": self.scenario.to_dict(),
            "agent": self.agent,
            "user": self.user,
            "system_prompt": self.system_prompt,
            "turns": [t.to_dict() for t in self.turns],
            "termination": self.termination,
            "final_cart": self.final_cart,
            "revealed_at": self.revealed_at,
            "usage": self.usage,
            "wall_s": self.wall_s,
            "contract_version": self.contract_version,
        }

    @classmethod
    def from_dict(cls, d: dict) -> TrialRecord:
        return cls(
            scenario=Scenario.from_dict(d["scenario"]),
            agent=d["agent"],
            user=d["user"],
            system_prompt=d.get("system_prompt", ""),
            turns=[Turn.from_dict(t) for t in d["turns"]],
            termination=d["termination"],
            final_cart=d.get("final_cart", {}),
            revealed_at=d.get("revealed_at", {}),
            usage=d.get("usage", {}),
            wall_s=d.get("wall_s", 0.0),
            contract_version=d.get("contract_version", CONTRACT_VERSION),
        )


def trial_messages(record: TrialRecord) -> list[dict]:
    """A trial as OpenAI-format messages (the ``messages`` of :attr:`TrialRecord.conversation`): the
    system prompt, each customer message, one assistant message with ``tool_calls`` per tool round
    followed by the tool results (with the tool's ``name``), the agent's reply. An agent error is not
    a message (the conversation's ``meta`` records it)."""
    msgs: list[dict] = [{"role": "system", "content": record.system_prompt}]
    for t in record.turns:
        msgs.append({"role": "user", "content": t.user.message})
        rounds: dict[int, list[ToolEvent]] = {}
        for ev in t.events:
            rounds.setdefault(ev.round, []).append(ev)
        for r in sorted(rounds):
            evs = rounds[r]
            msgs.append(
                {"role": "assistant", "content": None, "tool_calls": [ev.call.to_openai() for ev in evs]}
            )
            msgs.extend({"role": "tool", "tool_call_id": ev.call.call_id, "name": ev.call.name,
                         "content": json.dumps(ev.result)} for ev in evs)  # fmt: skip
        if t.agent_message:
            msgs.append({"role": "assistant", "content": t.agent_message})
    return msgs
