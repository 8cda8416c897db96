"""Cart outcome metrics (seed 002 §4.1 "Deterministic signals"): pure functions of a cart and the
target, both ``{product_id: quantity}``. The verifier (:mod:`shopbench.shopsim.verifier.outcomes`)
reconstructs the cart from the tool log and calls these.

"*Exact-cart success* requires the cart to hold exactly the target items at exactly the target
quantities. We also report cart precision and recall to separate adding spurious items from missing
wanted ones. With m = sum_{(p,q) in G} min(C[p], q) over target G and reconstructed cart C, precision
is m / sum_p C[p] and recall is m / sum_{(p,q) in G} q. *Goal achievement* is the weaker condition
C[p] >= q for every target." (§4.1) A ratio whose denominator is zero is ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping

Cart = Mapping[str, int]


def matched_units(cart: Cart, target: Cart) -> int:
    """m = sum over targets (p, q) of min(C[p], q)."""
    return sum(min(int(cart.get(p, 0)), int(q)) for p, q in target.items())


def exact_cart(cart: Cart, target: Cart) -> bool:
    """Exactly the target items at exactly the target quantities (zero lines ignored)."""
    return {p: q for p, q in cart.items() if q > 0} == {p: q for p, q in target.items() if q > 0}


def precision(cart: Cart, target: Cart) -> float | None:
    """m / sum_p C[p]; ``None`` for an empty cart."""
    total = sum(int(q) for q in cart.values())
    return matched_units(cart, target) / total if total > 0 else None


def recall(cart: Cart, target: Cart) -> float | None:
    """m / sum_q; ``None`` for an empty target."""
    total = sum(int(q) for q in target.values())
    return matched_units(cart, target) / total if total > 0 else None


def goal_achieved(cart: Cart, target: Cart) -> bool:
    """C[p] >= q for every target (vacuously true for an empty target)."""
    return all(int(cart.get(p, 0)) >= int(q) for p, q in target.items())


def exactly_satisfied(cart: Cart, target: Cart) -> float | None:
    """Fraction of target products held at exactly their quantity; ``None`` for an empty target."""
    if not target:
        return None
    return sum(int(cart.get(p, 0)) == int(q) for p, q in target.items()) / len(target)


__all__ = ["Cart", "matched_units", "exact_cart", "precision", "recall", "goal_achieved", "exactly_satisfied"]
