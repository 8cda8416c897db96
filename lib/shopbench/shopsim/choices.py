"""The values seed 002 gives in tables our copy lost, chosen by the project, in one place (issue 15).

Our copy of the paper (``shared/seeds/002_*.txt``) keeps only the captions of Tables 1, 4, 5, 6 and 7:

- Table 1: "The four difficulty tiers. Breadth is the number of catalog categories the target cart
  spans. Grocery trials use the wider breadth ranges. The turn-budget weight w_tier multiplies the
  realized basket size." The text gives the ends of w_tier ("a per-tier weight growing from 1.0 to
  2.25", §3.2) and the reporting split (simple 1-5, multi-item 6-8, complex 9-10, Table 11).
- Table 4: "Within-store category share (%) for each retailer and the aggregate used to populate the
  control catalog."
- Table 5: "The six persona dimensions." (the dimensions are named in §3.2; values and weights are not)
- Table 6: "Reveal-style draw weights for baskets of two or more products. Grocery never draws
  nonlinear" (and "non-grocery complex trials lean nonlinear", §3.3).
- Table 7: "Extra-call penalty by tool category." (App. E: "The k-th unjustified extra past a
  category's free allowance costs initial + (k-1)*increase [...] An unmatched cart mutation incurs
  the full penalty from its first occurrence, while read-only and exploratory calls receive limited
  allowances.")

Every value below is **our choice; the paper's values are not in our copy**. The modules that use
them import them from here (``scenario``, ``catalog``, ``registry``, ``verifier.toolcalls``), and
notebook 80 shows them with :func:`choices_table`. To run with the paper's values, edit this module
(the dicts are the single source; a test checks the users read them from here).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = [
    "BREADTH", "CATEGORY_SHARES", "PENALTIES", "PERSONA_DIMENSIONS", "Penalty", "STYLE_WEIGHTS",
    "TIER_DIFFICULTIES", "W_TIER", "choices_table", "tier_of_difficulty",
]  # fmt: skip

# ---- Table 1: tiers, breadth ranges, turn-budget weights -------------------------------------------
TIER_DIFFICULTIES: dict[str, tuple[int, int]] = {
    "direct": (1, 3),
    "light": (4, 5),
    "multi_item": (6, 8),
    "complex": (9, 10),
}
"""Raw difficulty range of each tier (inclusive). Ours; consistent with the paper's reporting split
(simple = direct + light = 1-5, multi-item 6-8, complex 9-10)."""

W_TIER: dict[str, float] = {"direct": 1.0, "light": 1.5, "multi_item": 1.75, "complex": 2.25}
"""Turn-budget weight per tier. The ends 1.0 and 2.25 are the paper's (§3.2); 1.5 and 1.75 are ours."""

BREADTH: dict[str, dict[str, tuple[int, int]]] = {
    "general": {"direct": (1, 1), "light": (1, 1), "multi_item": (2, 3), "complex": (4, 5)},
    "grocery": {"direct": (1, 2), "light": (2, 3), "multi_item": (3, 5), "complex": (5, 7)},
}
"""Breadth (categories in the target cart, drawn uniformly in the range) per trial kind and tier.
The paper says "the two simple tiers draw one category" and "Grocery trials use the wider breadth
ranges"; the numbers are ours."""

# ---- Table 4: the control catalog's category mix ---------------------------------------------------
CATEGORY_SHARES: dict[str, float] = {
    "Clothing": 0.13,
    "Shoes": 0.05,
    "Jewelry & Accessories": 0.06,
    "Home & Kitchen": 0.11,
    "Beauty & Personal Care": 0.07,
    "Electronics": 0.08,
    "Sports & Outdoors": 0.06,
    "Toys & Games": 0.05,
    "Tools & Home Improvement": 0.06,
    "Health & Household": 0.06,
    "Automotive": 0.04,
    "Books": 0.04,
    "Office Products": 0.03,
    "Pet Supplies": 0.03,
    "Baby": 0.025,
    "Patio & Garden": 0.03,
    "Pantry & Dry Goods": 0.03,
    "Dairy, Eggs & Alternatives": 0.015,
    "Snacks & Beverages": 0.03,
}
"""Share of the control catalog per category (19 categories, §3.1). Ours: a plausible average of
general retailers (apparel and home lead, groceries a small slice), not the paper's aggregate."""

# ---- Table 5: persona dimensions and their weights -------------------------------------------------
PERSONA_DIMENSIONS: dict[str, dict[str, float]] = {
    "specificity": {"precise": 0.25, "moderate": 0.55, "vague": 0.20},
    "commitment": {"decisive": 0.45, "deliberate": 0.40, "indecisive": 0.15},
    "price_sensitivity": {"low": 0.25, "moderate": 0.50, "high": 0.25},
    "vocabulary": {"expert": 0.15, "everyday": 0.70, "novice": 0.15},
    "message_length": {"terse": 0.25, "conversational": 0.60, "verbose": 0.15},
    "typing": {"clean": 0.70, "casual": 0.25, "garbled": 0.05},
}
"""The six dimensions are the paper's (§3.2: specificity, commitment, price, vocabulary, message
length, typing quality; "moderate specificity and conversational style are common while garbled
input is rare", App. C); the values and weights are ours."""

# ---- Table 6: reveal-style weights -----------------------------------------------------------------
STYLE_WEIGHTS: dict[tuple[str, str], tuple[float, float, float]] = {
    ("general", "2-3"): (0.45, 0.35, 0.20),
    ("general", "4-6"): (0.40, 0.25, 0.35),
    ("general", "7+"): (0.50, 0.10, 0.40),
    ("general", "complex"): (0.25, 0.15, 0.60),
    ("grocery", "2-3"): (0.75, 0.25, 0.0),
    ("grocery", "4-6"): (0.85, 0.15, 0.0),
    ("grocery", "7+"): (0.95, 0.05, 0.0),
}
"""(kind, basket bucket) -> weights over (batch, linear, nonlinear) for baskets of two or more
products; non-grocery complex trials use the "complex" row whatever their size. Grocery's nonlinear
weight is 0 (the paper's invariant, also guarded in ``scenario``); the numbers are ours."""


# ---- Table 7: extra-call penalty schedule ----------------------------------------------------------
@dataclass(frozen=True)
class Penalty:
    allowance: int  # unjustified extras forgiven per category per turn
    initial: float  # cost of the first extra past the allowance
    increase: float  # added to each further extra's cost

    def cost(self, n_extras: int) -> float:
        """Summed penalty of ``n_extras`` unjustified extras: sum over k > allowance of
        initial + (k - allowance - 1) * increase."""
        n = max(0, n_extras - self.allowance)
        return n * self.initial + self.increase * n * (n - 1) / 2


PENALTIES: dict[str, Penalty] = {
    "read_only": Penalty(allowance=3, initial=0.1, increase=0.05),
    "search": Penalty(allowance=2, initial=0.25, increase=0.25),
    "cart_write": Penalty(allowance=0, initial=1.0, increase=0.5),
    "other": Penalty(allowance=1, initial=0.25, increase=0.25),
}
"""Per registry category. The shape is the paper's (cart writes no allowance, read-only "forgiven in
bulk", linear growth per extra); the numbers are ours."""


def tier_of_difficulty(difficulty: int) -> str:
    """The tier whose :data:`TIER_DIFFICULTIES` range holds ``difficulty``."""
    for tier, (lo, hi) in TIER_DIFFICULTIES.items():
        if lo <= difficulty <= hi:
            return tier
    raise ValueError(f"difficulty {difficulty!r} is in no tier of TIER_DIFFICULTIES {TIER_DIFFICULTIES}")


NOTE = "our choice; the paper's values are not in our copy"


def choices_table() -> pd.DataFrame:
    """Every chosen value, one row each: the paper's table, what the value sets, the key, our value,
    and where the paper's text pins part of it (``paper_says``)."""
    rows: list[dict] = []

    def add(table: str, what: str, key: str, value, paper_says: str = "", status: str = NOTE) -> None:
        rows.append({"paper_table": table, "what": what, "key": key, "our_value": value,
                     "status": status, "paper_says": paper_says})  # fmt: skip

    for tier, (lo, hi) in TIER_DIFFICULTIES.items():
        add("Table 1", "difficulties of tier", tier, f"{lo}-{hi}", "simple 1-5, multi-item 6-8, complex 9-10")
    for tier, w in W_TIER.items():
        if tier in ("direct", "complex"):  # the two ends are in the text (§3.2)
            add(
                "Table 1",
                "turn-budget weight w_tier",
                tier,
                w,
                "growing from 1.0 to 2.25",
                "the paper's value (§3.2 text)",
            )
        else:
            add("Table 1", "turn-budget weight w_tier", tier, w)
    for kind, by_tier in BREADTH.items():
        for tier, (lo, hi) in by_tier.items():
            add("Table 1", f"breadth ({kind})", tier, f"{lo}-{hi}" if lo != hi else str(lo),
                "the two simple tiers draw one category" if kind == "general" and tier in ("direct", "light") else "")  # fmt: skip
    for cat, share in CATEGORY_SHARES.items():
        add("Table 4", "category share of the control catalog", cat, share)
    for dim, weights in PERSONA_DIMENSIONS.items():
        for val, w in weights.items():
            add("Table 5", f"persona weight ({dim})", val, w)
    for (kind, bucket), ws in STYLE_WEIGHTS.items():
        add("Table 6", f"reveal-style weights batch/linear/nonlinear ({kind})", bucket,
            "/".join(f"{w:g}" for w in ws), "grocery never draws nonlinear" if kind == "grocery" else "")  # fmt: skip
    for cat, p in PENALTIES.items():
        add("Table 7", "extra-call penalty allowance/initial/increase", cat,
            f"{p.allowance}/{p.initial:g}/{p.increase:g}",
            "cart writes: no free allowance" if cat == "cart_write" else "")  # fmt: skip
    df = pd.DataFrame(rows)
    df["our_value"] = df["our_value"].astype(str)
    return df
