"""Catalog types shared by the catalog builders, PACEShop and the shop (seed 000 App. B.6-B.8): a
product, an evidence snippet, a query and a query's evidence pool. Validated with pydantic on write
and on read."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import Model

Provenance = Literal["metadata", "review"]
SourceField = Literal[
    "product_title", "product_brand", "product_color", "product_bullet_point", "product_description", "review"
]


class Product(Model):
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


class EvidenceSnippet(Model):
    """One evidence snippet (B.8): ``evidence_id`` is ``M:<product_id>:<k>``."""

    canonical_product_id: str
    title: str
    brand: str
    evidence_id: str
    snippet: str
    source_field: SourceField


class Query(Model):
    query_id: str
    query: str  # normalized text
    vertical: str  # retail vertical (Table 10), by the keyword-hit rule of B.3.1
    mission: str  # shopping mission (Table 11), same rule
    source: str = "synthetic"
    seed_product_id: str | None = None
    # ESCI's own judgements of this query (product_id -> E/S/C/I), as published; None for other sources
    esci_labels: dict[str, str] | None = None


class EvidencePool(Model):
    query_id: str
    snippets: list[EvidenceSnippet]  # at most 24
    product_ids: list[str]  # distinct products behind the snippets, in rank order
