"""Shared PACEShop vocabulary (seed 000, Appendix B.3, B.5, B.9; Tables 10–13 and 17).

One place for the labels that the catalog, personas, GOOD generator, defect edits and persona
swaps must agree on. The paper's own keyword and constraint lists (``v2_taxonomy.py``) are not in
our copy, so the concrete lists here are ours; their shape follows the paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, product

# ---- retail verticals and missions (Tables 10, 11, 13) -----------------------------------------
VERTICALS = [
    "Toys & Games", "Electronics", "Tools & Automotive", "Home & Kitchen", "Apparel & Accessories",
    "Pet & Baby", "General Merchandise", "Sports & Outdoors", "Office & School", "Beauty & Health",
    "Books & Media",
]  # fmt: skip
FALLBACK_VERTICAL = "General Merchandise"
MISSIONS = [
    "Broad Browse", "Replenishment & Repeat", "Problem Solution", "Compatibility & Replacement",
    "Gift & Event", "Feature Constrained",
]  # fmt: skip
FALLBACK_MISSION = "Broad Browse"

# Table 13: evidence records per shopping domain (4,460 in all; 129 review-augmented)
EVIDENCE_DOMAIN_COUNTS = {
    "General Merchandise": 1232, "Toys & Games": 623, "Apparel & Accessories": 610, "Home & Kitchen": 418,
    "Tools & Automotive": 375, "Electronics": 335, "Pet & Baby": 267, "Sports & Outdoors": 225,
    "Office & School": 191, "Books & Media": 104, "Beauty & Health": 80,
}  # fmt: skip
REVIEW_AUGMENTED = 129

# ---- persona taxonomy (Table 12 counts over 1,200 personas) --------------------------------------
HOUSEHOLDS = {
    "couple": 117, "creator hobbyist": 38, "home office": 74, "parents school age": 121,
    "parents young children": 132, "pet owner": 97, "roommates": 81, "senior caregiver": 81,
    "single professional": 136, "small space": 104, "student": 88, "travel outdoor": 131,
}  # fmt: skip
BUDGETS = {"budget conscious": 380, "premium": 401, "value balanced": 419}
BUDGET_TEXT = {"budget conscious": "budget", "value balanced": "mid-range", "premium": "premium"}
QUALITY = {"balanced": 406, "functional": 416, "high": 378}
URGENCY = {"fast": 380, "standard": 420, "urgent": 400}
URGENCY_TEXT = {"fast": "needs it this week", "standard": "standard shipping", "urgent": "needs it urgently"}
CONSTRAINT_FAMILIES = {
    "allergen ingredient": 406, "compatibility": 162, "durability": 135, "maintenance noise": 334,
    "material avoidance": 514, "safety age": 148, "size space": 206,
}  # fmt: skip
PREFERENCE_FAMILIES = {
    "aesthetics": 467, "convenience": 665, "giftability": 224, "performance": 282, "portability": 619,
    "premium finish": 314, "sustainability": 672,
}  # fmt: skip
HISTORY_DENSITY = {"moderate": 566, "rich": 588, "sparse": 46}
HOLDOUT_FLAGS = {
    "eco-conscious materials": 115,
    "sensitive skin": 115,
    "smart-home compatibility priority": 115,
}
N_PERSONAS = 1200
N_HOLDOUT = 345
N_HOLDOUT_BUNDLES = 8


@dataclass(frozen=True)
class ConstraintSpec:
    """A hard constraint a product can honour or violate.

    A product violates it when ``product.attributes[attribute]`` contains any of ``violating``.
    ``conflict_label`` (≤ 15 chars) is the PREF_CONFLICT category that contradicts it (B.9:
    "replace the first product category with a label that contradicts the persona's first hard
    constraint (e.g., leather handbags for a persona with avoid_leather)").
    """

    family: str
    text: str
    attribute: str
    violating: tuple[str, ...]
    conflict_label: str


CONSTRAINTS: list[ConstraintSpec] = [
    ConstraintSpec("material avoidance", "avoid wool", "materials", ("wool",), "Wool Throws"),
    ConstraintSpec("material avoidance", "avoid leather", "materials", ("leather",), "Leather Bags"),
    ConstraintSpec("material avoidance", "latex-free materials", "materials", ("latex",), "Latex Gloves"),
    ConstraintSpec("material avoidance", "no polyester fabrics", "materials", ("polyester",), "Polyester Tees"),
    ConstraintSpec("allergen ingredient", "avoid peanuts in ingredients", "allergens", ("peanut",), "Peanut Snacks"),
    ConstraintSpec("allergen ingredient", "fragrance-free only", "allergens", ("fragrance",), "Scented Candles"),
    ConstraintSpec("allergen ingredient", "gluten-free only", "allergens", ("gluten",), "Wheat Crackers"),
    ConstraintSpec("allergen ingredient", "no lanolin", "allergens", ("lanolin",), "Lanolin Balms"),
    ConstraintSpec("maintenance noise", "quiet operation required", "noise", ("loud",), "Loud Blenders"),
    ConstraintSpec("maintenance noise", "easy-clean surfaces only", "maintenance", ("dry-clean only",),
                   "Dry-Clean Only"),
    ConstraintSpec("size space", "small-space friendly", "size", ("oversized",), "Oversized Sofas"),
    ConstraintSpec("size space", "lightweight under 10 lbs", "size", ("heavy",), "Heavy Dumbbells"),
    ConstraintSpec("compatibility", "must fit existing device compatibility", "compatibility", ("proprietary",),
                   "Proprietary Kit"),
    ConstraintSpec("compatibility", "must work with iPhone", "compatibility", ("android-only",), "Android Cases"),
    ConstraintSpec("durability", "durable enough for daily use", "durability", ("fragile",), "Fragile Glass"),
    ConstraintSpec("durability", "heavy-duty construction", "durability", ("flimsy",), "Flimsy Plastic"),
    ConstraintSpec("safety age", "safe for ages 3+", "safety_age", ("small parts",), "Small-Part Toys"),
    ConstraintSpec("safety age", "kid-safe materials only", "materials", ("bpa",), "BPA Plastics"),
]  # fmt: skip
CONSTRAINTS_BY_TEXT = {c.text: c for c in CONSTRAINTS}


@dataclass(frozen=True)
class PreferenceSpec:
    """A soft/attribute preference and the product feature tags that support it."""

    family: str
    text: str
    features: tuple[str, ...]


PREFERENCES: list[PreferenceSpec] = [
    PreferenceSpec("aesthetics", "modern minimalist look", ("minimalist", "sleek")),
    PreferenceSpec("aesthetics", "colorful designs", ("colorful",)),
    PreferenceSpec("convenience", "easy to clean", ("easy-clean", "dishwasher-safe")),
    PreferenceSpec("convenience", "low-maintenance finishes", ("low-maintenance",)),
    PreferenceSpec("giftability", "gift-ready packaging", ("gift-box",)),
    PreferenceSpec("performance", "ergonomic support", ("ergonomic",)),
    PreferenceSpec("performance", "high performance", ("high-performance", "fast")),
    PreferenceSpec("portability", "travel friendly", ("travel", "packable")),
    PreferenceSpec("portability", "compact storage", ("compact", "foldable")),
    PreferenceSpec("premium finish", "premium feel", ("premium",)),
    PreferenceSpec("sustainability", "eco-conscious materials", ("eco", "recycled")),
    PreferenceSpec("sustainability", "organic cotton", ("organic",)),
    # holdout flags (Table 12) are attribute preferences too
    PreferenceSpec("holdout", "sensitive skin", ("hypoallergenic",)),
    PreferenceSpec("holdout", "smart-home compatibility priority", ("smart-home",)),
]  # fmt: skip
PREFERENCES_BY_TEXT = {p.text: p for p in PREFERENCES}

# ---- defects (Table 17, B.9) ------------------------------------------------------------------
GROUP_ORDER = ["categories", "related_queries", "attributions", "overview"]  # canonical composition order
DEFECTS: dict[str, tuple[str, str]] = {  # family -> (field group, gold location)
    "PREF_CONFLICT": ("categories", "productCategoryList[0]"),
    "INTENT_DRIFT": ("categories", "productCategoryList[0]"),
    "XCOMP_MISMATCH": ("related_queries", "rqList"),
    "REDUNDANCY": ("related_queries", "rqList[1]"),
    "EVIDENCE_MISMATCH": ("attributions", "attribution_list"),
    "OVER_PERSONALIZATION_HALLUCINATION": ("overview", "overview_text"),
    "UNSUPPORTED_CLAIM": ("overview", "overview_text"),
}
FAMILIES = list(DEFECTS)

# E.4: "each defect family belongs to exactly one target" — P: persona conflict (S1); C: the three
# cross-component families (S2's D_C); E: product-evidence mismatch and persona-history hallucination,
# with the ARES-style label set {EVIDENCE_MISMATCH, OVER_PERSONALIZATION_HALLUCINATION,
# UNSUPPORTED_CLAIM} (S3). A (S4) is the diagnosis itself. One definition for the judges and the metrics.
FAMILY_TARGET: dict[str, str] = {
    "PREF_CONFLICT": "P",
    "INTENT_DRIFT": "C", "XCOMP_MISMATCH": "C", "REDUNDANCY": "C",
    "EVIDENCE_MISMATCH": "E", "OVER_PERSONALIZATION_HALLUCINATION": "E", "UNSUPPORTED_CLAIM": "E",
}  # fmt: skip
# the 4-way response-field labels (§4.1 R; D.4 "allowed_location_labels": overview, categories,
# related queries, evidence attributions), as the response's field names (Table 21)
LOCATIONS: tuple[str, ...] = ("overview_text", "productCategoryList", "rqList", "attribution_list")
# the PACEJudge axis of each family target (E.4 "target-triage": the lowest relevant axis)
TARGET_AXIS: dict[str, str] = {
    "P": "persona_alignment",
    "C": "component_consistency",
    "E": "evidence_grounding",
}


def _by_group() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {g: [] for g in GROUP_ORDER}
    for fam, (group, _) in DEFECTS.items():
        out[group].append(fam)
    return out


def tier_combinations(tier: int) -> list[tuple[str, ...]]:
    """Admissible defect combinations of a tier: families from distinct field groups, in canonical
    group order (Table 17: 7 singles, 18 doubles, 20 triples, 4 curated quads)."""
    groups = _by_group()
    if tier == 4:
        return list(CURATED_QUADS)
    out: list[tuple[str, ...]] = []
    for gs in combinations(GROUP_ORDER, tier):
        out.extend(product(*(groups[g] for g in gs)))
    return out


# Four quads covering all four groups with every family at least once (the paper's curated four
# are in its released code, not in our copy; these are ours).
CURATED_QUADS: tuple[tuple[str, ...], ...] = (
    ("PREF_CONFLICT", "XCOMP_MISMATCH", "EVIDENCE_MISMATCH", "OVER_PERSONALIZATION_HALLUCINATION"),
    ("INTENT_DRIFT", "REDUNDANCY", "EVIDENCE_MISMATCH", "UNSUPPORTED_CLAIM"),
    ("PREF_CONFLICT", "REDUNDANCY", "EVIDENCE_MISMATCH", "UNSUPPORTED_CLAIM"),
    ("INTENT_DRIFT", "XCOMP_MISMATCH", "EVIDENCE_MISMATCH", "OVER_PERSONALIZATION_HALLUCINATION"),
)

# the 12 deterministic checks (B.4, D.2 D6), in report order
CHECKS = [
    "overview_length", "bold_count", "bold_category_match", "category_count", "category_label_length",
    "category_case_duplicates", "query_alignment", "rq_count_unique", "evidence_id_validity",
    "evidence_exact_match", "xml_round_trip", "banned_strings",
]  # fmt: skip
