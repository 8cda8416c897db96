"""State replay (seed 002 §4): "reapplying successful tool results in transcript order to reconstruct
the cart after each mutation". Reads only the tool log, never the controller's cart reads, so a
verifier can check the two against each other.

A successful cart write's result carries ``product_id`` and ``quantity`` (the product's new total),
so replay sets ``C[product_id] = quantity`` and drops the line at 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .registry import CART_WRITES
from .types import ToolEvent, TrialRecord


@dataclass(frozen=True)
class Mutation:
    """The cart after one successful cart write."""

    index: int  # position of the event in the trial's tool log
    turn: int
    round: int
    tool: str
    product_id: str
    cart: dict[str, int]


def is_mutation(e: ToolEvent) -> bool:
    return e.call.name in CART_WRITES and e.ok and "product_id" in e.result and "quantity" in e.result


def replay_events(events: Iterable[ToolEvent]) -> list[Mutation]:
    """Every cart state the log passes through, one per successful cart write, in order."""
    cart: dict[str, int] = {}
    out: list[Mutation] = []
    for i, e in enumerate(events):
        if not is_mutation(e):
            continue
        pid, q = str(e.result["product_id"]), int(e.result["quantity"])
        if q > 0:
            cart[pid] = q
        else:
            cart.pop(pid, None)
        out.append(Mutation(i, e.turn, e.round, e.call.name, pid, dict(cart)))
    return out


def replay(traj: TrialRecord) -> list[Mutation]:
    return replay_events(traj.events)


def final_cart(traj: TrialRecord) -> dict[str, int]:
    """The reconstructed final mapping from product to quantity."""
    m = replay(traj)
    return dict(m[-1].cart) if m else {}


def cart_before(events: list[ToolEvent], index: int) -> dict[str, int]:
    """The replayed cart just before event ``index`` of the log executed."""
    m = [x for x in replay_events(events[:index])]
    return dict(m[-1].cart) if m else {}


def cart_after_turn(traj: TrialRecord, turn: int) -> dict[str, int]:
    """The replayed cart at the end of agent turn ``turn``."""
    m = [x for x in replay(traj) if x.turn <= turn]
    return dict(m[-1].cart) if m else {}
