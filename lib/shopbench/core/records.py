"""PACEShop records (seed 000 App. B.6-B.9): the four-field response, its injected defects and the
benchmark record.

"the candidate response is instantiated as a structured object y = (y^ov, y^cat, y^rq, y^attr),
where y^ov is the overview, y^cat is the product-category list, y^rq is the related-query list,
and y^attr is the evidence list" (B.6).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import Model
from .catalog import EvidenceSnippet
from .personas import Persona

Label = Literal["GOOD", "BAD"]


class Response(Model):
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


class Defect(Model):
    family: DefectFamily
    location: (
        str  # productCategoryList[0] | rqList | rqList[1] | attribution_list | overview_text | persona_swap
    )
    group: Literal["categories", "related_queries", "attributions", "overview", "persona"]


class Record(Model):
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
