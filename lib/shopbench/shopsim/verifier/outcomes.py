"""Outcome metrics from state replay (seed 002 §4.1 "Deterministic signals", first paragraph).

"The state replay reconstructs a final mapping from product to quantity, which the outcome metrics
compare against the target. *Exact-cart success* requires the cart to hold exactly the target items at
exactly the target quantities. We also report cart precision and recall to separate adding spurious
items from missing wanted ones. With m = sum_{(p,q) in G} min(C[p], q) over target G and reconstructed
cart C, precision is m / sum_p C[p] and recall is m / sum_{(p,q) in G} q. *Goal achievement* is the
weaker condition C[p] >= q for every target. *Goal progress* samples the fraction of exactly-satisfied
target products after every cart mutation and takes the trial's maximum, so over-adding drops an item
back out of the satisfied set." (§4.1)

Table 11 adds: turns to goal are the "customer turns before the goal was met, over trials that met it";
tool calls per conversation are the "calls issued across the whole trial", and per successful
conversation "the same count restricted to trials that met the goal".

The pure cart metrics live in :mod:`shopbench.metrics.shop.cart`; this module replays the trial and
applies them. Our reading where the paper is silent: a ratio whose denominator is zero is ``None`` (precision of an
empty cart, recall and progress of an empty target); turns to goal is the index of the first agent turn
after which goal achievement holds, plus one; "met the goal" means goal achievement on the replayed final
cart. Every cart here is read from the tool log (:mod:`shopbench.shopsim.replay`), never from the
controller's cart reads; :func:`consistency` compares the two.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ...metrics.shop.cart import (  # noqa: F401 - the pure cart metrics, re-exported here
    Cart,
    exact_cart,
    exactly_satisfied,
    goal_achieved,
    matched_units,
    precision,
    recall,
)
from ..replay import final_cart, replay
from ..types import TrialRecord


def goal_progress(traj: TrialRecord) -> float | None:
    """Maximum over cart mutations of the exactly-satisfied fraction; 0.0 with no mutation."""
    target = traj.scenario.target
    if not target:
        return None
    samples = [
        exactly_satisfied(m.cart, target) or 0.0 for m in replay(traj)
    ]  # never None: target is not empty
    return max(samples, default=0.0)


def turns_to_goal(traj: TrialRecord) -> int | None:
    """Customer turns before the goal was met: 1 + the index of the first agent turn after which the
    replayed cart achieves the goal; ``None`` if it never does (or the target is empty)."""
    target = traj.scenario.target
    if not target:
        return None
    mutations = replay(traj)
    cart: dict[str, int] = {}
    k = 0
    for turn in traj.turns:
        while k < len(mutations) and mutations[k].turn <= turn.index:
            cart = mutations[k].cart
            k += 1
        if goal_achieved(cart, target):
            return turn.index + 1
    return None


@dataclass(frozen=True)
class Outcome:
    """The per-trial outcome signals (keys as in :func:`trial_outcomes`)."""

    exact_cart_success: bool
    precision: float | None
    recall: float | None
    goal_achieved: bool
    goal_progress: float | None
    turns_to_goal: int | None
    total_tool_calls: int
    tool_calls_if_goal: int | None
    final_cart: dict[str, int]

    def to_dict(self) -> dict:
        return asdict(self)


def trial_outcomes(traj: TrialRecord) -> Outcome:
    """Every outcome signal of one trial, from the replayed tool log."""
    target = traj.scenario.target
    cart = final_cart(traj)
    goal = goal_achieved(cart, target)
    n_calls = len(traj.events)
    return Outcome(
        exact_cart_success=exact_cart(cart, target),
        precision=precision(cart, target),
        recall=recall(cart, target),
        goal_achieved=goal,
        goal_progress=goal_progress(traj),
        turns_to_goal=turns_to_goal(traj),
        total_tool_calls=n_calls,
        tool_calls_if_goal=n_calls if goal else None,
        final_cart=cart,
    )


def _answered(traj: TrialRecord, i: int) -> bool:
    """False only for a last turn the customer closed without an agent reply (no events, no text)."""
    t = traj.turns[i]
    last = i == len(traj.turns) - 1
    return not (last and t.user.terminate and not t.events and not t.agent_message and t.agent_error is None)


def _diff(where: str, replayed: Cart, recorded: Cart) -> list[dict]:
    out = []
    for p in sorted(set(replayed) | set(recorded)):
        a, b = int(replayed.get(p, 0)), int(recorded.get(p, 0))
        if a != b:
            out.append({"where": where, "product_id": p, "replayed": a, "recorded": b})
    return out


def consistency(traj: TrialRecord, per_turn: bool = False) -> list[dict]:
    """Mismatches between the replayed cart and the controller's cart reads.

    Compares the replayed final cart with ``traj.final_cart`` (and, with ``per_turn``, the replayed cart
    after each answered agent turn with ``turn.cart_after``). Each mismatch is
    ``{"where": "final" | "turn <i>", "product_id", "replayed", "recorded"}``; an empty list means the
    tool log and the store agree.
    """
    out: list[dict] = []
    if per_turn:
        mutations = replay(traj)
        cart: dict[str, int] = {}
        k = 0
        for i, turn in enumerate(traj.turns):
            while k < len(mutations) and mutations[k].turn <= turn.index:
                cart = mutations[k].cart
                k += 1
            if _answered(traj, i):
                out += _diff(f"turn {turn.index}", cart, turn.cart_after)
    out += _diff("final", final_cart(traj), traj.final_cart)
    return out
