"""The shop domain's environment: one trial of seed 002 as :func:`shopbench.env.run_conversation`
plays it (§3.4, App. D).

The shop domain is this package: its data model is :mod:`.types` (scenario, goal items, directives,
the trial record), its tools :mod:`.store` and :mod:`.registry`, its environment this module (the
reveal controller, the cart, termination) and its reward/verifier :mod:`.verifier` (exact-cart
success and the rest of §5).

"The controller reads the ground-truth cart after every agent turn rather than scraping the
transcript for it. On a nonlinear trial it also owns termination, ignoring a premature 'done' from
the simulator until the cart genuinely holds every goal item at its required quantity." (§3.4) We
ignore a premature "done" on every style, so ``goal_met`` is always a verified fact; a customer who
ends a refusal probe without the (unavailable) item is recorded as ``abandoned``. Termination
names (Table 11): ``goal_met``, ``max_turns``, ``abandoned``, ``assistant_error``, ``judge_error``
(the simulator failed) and ``no_opening_message``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..env.orchestrator import Stop
from ..env.protocols import Limits, ToolOutcome, ToolRecord, UserTurn
from .reveal import RevealController
from .types import Directive, Scenario, ShopProduct, ToolCall, ToolEvent, Turn, trial_messages

__all__ = ["ShopCustomer", "ShopEnvironment", "ShopUserView", "store_products", "trial_messages"]

_TERMINATION = {
    Stop.AGENT_ERROR: "assistant_error",
    Stop.USER_ERROR: "judge_error",
    Stop.NO_OPENING: "no_opening_message",
}


def store_products(store) -> Mapping[str, ShopProduct]:
    """product id -> product of a store (cached on the store)."""
    cached = getattr(store, "_products_by_id", None)
    if cached is None:
        cached = {p.product_id: p for ps in store.by_category.values() for p in ps}
        try:
            store._products_by_id = cached
        except AttributeError:  # a store with __slots__: rebuild each time
            pass
    return cached


@dataclass
class ShopUserView:
    """What the customer sees before writing message ``directive.message_index``."""

    scenario: Scenario
    directive: Directive
    history: list[Turn]
    products: Mapping[str, ShopProduct]
    system_prompt: str
    cart: dict[str, int]


class ShopCustomer:
    """A shop user simulator (``reply(scenario, directive, history, products, system_prompt, cart)
    -> UserReply``, :class:`shopbench.shopsim.user.ShopUser`) behind the one user protocol."""

    def __init__(self, user):
        self.user = user
        self.name = getattr(user, "name", type(user).__name__)

    def respond(self, view: ShopUserView) -> UserTurn:
        reply = self.user.reply(view.scenario, view.directive, view.history, view.products,
                                view.system_prompt, view.cart)  # fmt: skip
        return UserTurn(message=reply.message, stop=reply.terminate, reason=reply.termination_reason,
                        observation=reply.intent, record=reply)  # fmt: skip


class ShopEnvironment:
    """One trial: a fresh cart of ``store``, the reveal controller of ``scenario`` and the turn
    records the trial record keeps."""

    domain = "shop"
    greeting: str | None = None
    agent_opens = False
    empty_reply_stops = False

    def __init__(self, scenario: Scenario, store, system_prompt: str, deadline: float | None = None):
        self.scenario = scenario
        self.products = store_products(store)
        self.controller = RevealController(scenario)
        self.session = store.session()
        self.system_prompt = system_prompt
        self.turns: list[Turn] = []
        self._directive: Directive | None = None  # the directive of the user turn in progress
        self.limits = Limits(max_user_turns=scenario.max_turns, max_tool_rounds=scenario.max_tool_rounds,
                             deadline=deadline)  # fmt: skip

    def user_view(self, index: int, agent_text: str | None, final: bool) -> ShopUserView:
        directive = self.controller.directive(self.session.cart, turns_left=self.scenario.max_turns - index)
        self._directive = directive
        return ShopUserView(self.scenario, directive, self.turns, self.products, self.system_prompt,
                            self.session.cart)  # fmt: skip

    def on_user_turn(self, index: int, turn: UserTurn) -> bool:
        assert self._directive is not None, "on_user_turn before user_view"
        self.turns.append(Turn(index=index, directive=self._directive, user=turn.record))
        premature = turn.reason == "goal_met" and not self.controller.is_complete(self.session.cart)
        return turn.stop and not premature  # a premature "done" is ignored; the message still goes out

    def execute(self, call: ToolCall) -> ToolOutcome:
        result = self.session.execute(call)
        return self._outcome(call, result)

    def tool_failure(self, call: ToolCall, error: str) -> ToolOutcome:
        return self._outcome(call, {"error": f"tool failed: {error}"})

    @staticmethod
    def _outcome(call: ToolCall, result: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome(
            result, {"role": "tool", "tool_call_id": call.call_id, "content": json.dumps(result)}
        )

    def on_tool(self, record: ToolRecord) -> None:
        self.turns[record.turn].events.append(ToolEvent(turn=record.turn, round=record.round, call=record.call,
                                                        result=record.outcome.result))  # fmt: skip

    def observe_tools(self, observation: Any, outcomes: list[ToolOutcome]) -> Any:
        return observation  # the agent keeps the customer's intent for the whole turn

    def on_agent_message(self, text: str) -> str | None:
        return None

    def end_agent_turn(self, index: int, text: str, rounds: int, error: str | None) -> None:
        turn = self.turns[index]
        turn.agent_message, turn.rounds, turn.agent_error = text, rounds, error
        turn.cart_after = self.session.cart

    def goal_met(self) -> bool:
        return self.controller.is_complete(self.session.cart) and self.scenario.kind != "refusal"

    def termination(self, reason: str) -> str:
        if reason == Stop.USER_STOP:
            return "goal_met" if self.goal_met() else "abandoned"
        if reason == Stop.MAX_TURNS:
            return "goal_met" if self.goal_met() else "max_turns"
        return _TERMINATION.get(Stop(reason), reason)
