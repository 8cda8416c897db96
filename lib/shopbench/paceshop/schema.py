"""PACEShop data model (seed 000, Appendix B.6–B.8): products, evidence, queries, personas, the
four-field response and the benchmark record. Validated with pydantic on write and on read.

"the candidate response is instantiated as a structured object y = (y^ov, y^cat, y^rq, y^attr),
where y^ov is the overview, y^cat is the product-category list, y^rq is the related-query list,
and y^attr is the evidence list" (B.6).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Provenance = Literal["metadata", "review"]
SourceField = Literal[
    "product_title", "product_brand", "product_color", "product_bullet_point", "product_description", "review"
]
Label = Literal["GOOD", "BAD"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Product(_Model):
    """A catalog product (ESCI product schema plus structured attributes the synthetic catalog knows)."""

    product_id: str
    title: str
    brand: str
    color: str = ""
    bullet_points: list[str] = Field(default_factory=list)
    description: str = ""
    price: float | None = None
    domain: str  # one of taxonomy.VERTICALS (Table 13 shopping domain)
    # structured facts used to honour or violate persona constraints, e.g.
    # {"materials": ["wool"], "allergens": ["fragrance"], "noise": ["quiet"], "size": ["compact"],
    #  "compatibility": ["iphone"], "safety_age": ["3+"], "features": ["wireless"]}
    attributes: dict[str, list[str]] = Field(default_factory=dict)
    reviews: list[str] = Field(default_factory=list)
    provenance: Provenance = "metadata"  # "review" when review snippets augment the listing (Table 13)
    source: str = "synthetic"  # synthetic | esci | json:<file>


class EvidenceSnippet(_Model):
    """One evidence snippet (B.8): ``evidence_id`` is ``M:<product_id>:<k>``."""

    canonical_product_id: str
    title: str
    brand: str
    evidence_id: str
    snippet: str
    source_field: SourceField


class Query(_Model):
    query_id: str
    query: str  # normalized text
    vertical: str  # retail vertical (Table 10), by the keyword-hit rule of B.3.1
    mission: str  # shopping mission (Table 11), same rule
    source: str = "synthetic"
    seed_product_id: str | None = None


class EvidencePool(_Model):
    query_id: str
    snippets: list[EvidenceSnippet]  # at most 24
    product_ids: list[str]  # distinct products behind the snippets, in rank order


class PurchaseItem(_Model):
    asin: str
    product_name: str
    brand: str


class PersonaProfile(_Model):
    household: str
    demographics: str


class PersonaPreferences(_Model):
    hard_constraints: list[str]
    soft_preferences: list[str]
    brand_likes: list[str]
    brand_avoids: list[str]
    attribute_preferences: list[str]


class ShoppingContext(_Model):
    budget: str  # "budget" | "mid-range" | "premium"
    quality_sensitivity: str
    shipping_urgency: str


class PersonaHistory(_Model):
    purchase_history: list[PurchaseItem]
    recent_searches: list[str]


class PersonaTaxonomy(_Model):
    """The Table 12 coverage axes of a persona (used for coverage-balanced assignment)."""

    household: str
    budget: str  # budget conscious | value balanced | premium
    quality: str  # balanced | functional | high
    urgency: str  # fast | standard | urgent
    constraints: list[str]  # constraint families, e.g. "material avoidance"
    preferences: list[str]  # preference families, e.g. "portability"
    history: str  # sparse | moderate | rich
    holdout_flags: list[str] = Field(default_factory=list)


class Persona(_Model):
    """The Appendix B.7 persona JSON, plus taxonomy tags and holdout bundle."""

    persona_id: str
    origin: Literal["raw-v1", "synthetic"] = "synthetic"
    profile: PersonaProfile
    preferences: PersonaPreferences
    shopping_context: ShoppingContext
    history: PersonaHistory
    context_summary: str
    taxonomy: PersonaTaxonomy
    holdout_bundle: str | None = None  # one of 8 bundles; holdout personas appear only in dev/test


class Response(_Model):
    """The four-field response contract of B.9 (plus the bold categories of the overview)."""

    overview_text: str
    bold_categories: list[str]
    productCategoryList: list[str]
    category_search_queries: list[str]
    rqList: list[str]
    attribution_list: list[str]


DefectFamily = Literal[
    "PREF_CONFLICT", "INTENT_DRIFT", "XCOMP_MISMATCH", "REDUNDANCY", "EVIDENCE_MISMATCH",
    "OVER_PERSONALIZATION_HALLUCINATION", "UNSUPPORTED_CLAIM",
]  # fmt: skip


class Defect(_Model):
    family: DefectFamily
    location: str  # productCategoryList[0] | rqList | rqList[1] | attribution_list | overview_text | persona_swap
    group: Literal["categories", "related_queries", "attributions", "overview", "persona"]


class Record(_Model):
    """One PACEShop record (GOOD, BAD or persona swap)."""

    record_id: str  # full-good-00042 | full-bad-t2-00042 | full-good-00042::swap-brand
    split: Literal["train", "dev", "test"] | None = None
    label: Label
    kind: Literal["good", "bad", "swap"]
    tier: int = 0  # number of injected defects (0 for GOOD; 1 for a swap)
    assignment_id: str
    query_id: str
    query: str
    vertical: str
    mission: str
    persona: Persona
    evidence: list[EvidenceSnippet]  # the candidate pool
    used_evidence_ids: list[str]  # what the GOOD generator grounded on
    response: Response
    response_xml: str
    checks: dict[str, bool]  # the 12 deterministic checks
    defects: list[Defect] = Field(default_factory=list)
    gold_family: str | None = None  # "+"-joined families in canonical order (None for GOOD)
    gold_location: str | None = None  # "+"-joined locations in canonical order
    base_record_id: str | None = None  # the GOOD record a BAD or swap derives from
    swap_axis: str | None = None  # budget | hard_constraint | brand | attribute
    generator: str  # "offline-template-v1" | "llm:<model>" | ...

    @property
    def candidate_evidence_ids(self) -> list[str]:
        return [s.evidence_id for s in self.evidence]
