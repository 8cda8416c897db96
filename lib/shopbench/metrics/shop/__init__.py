"""Shop-agent metrics (seed 002 §4.1, §5, App. L): the pure cart outcome metrics and the bootstrap
intervals of exact-cart success. The verifier (:mod:`shopbench.shopsim.verifier`) extracts the
signals from a trajectory and the Table 11 battery; these functions only compute numbers.

- :mod:`.cart` — exact-cart success, precision, recall, goal achievement (§4.1);
- :mod:`.intervals` — Table 14 bootstrap intervals and two-agent contrasts (§5).
"""

from ..._lazy import lazy_exports

_EXPORTS = {
    ".cart": ["exact_cart", "exactly_satisfied", "goal_achieved", "matched_units", "precision", "recall"],
    ".intervals": ["GENERATOR_TIERS", "bootstrap_contrast", "bootstrap_success"],
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
