"""Shopper personas (seed 000 App. B.7): profile, preferences, shopping context, history and the
Table 12 taxonomy tags. Validated with pydantic on write and on read."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import Model


class PurchaseItem(Model):
    asin: str
    product_name: str
    brand: str


class PersonaProfile(Model):
    household: str
    demographics: str


class PersonaPreferences(Model):
    hard_constraints: list[str]
    soft_preferences: list[str]
    brand_likes: list[str]
    brand_avoids: list[str]
    attribute_preferences: list[str]


class ShoppingContext(Model):
    budget: str  # "budget" | "mid-range" | "premium"
    quality_sensitivity: str
    shipping_urgency: str


class PersonaHistory(Model):
    purchase_history: list[PurchaseItem]
    recent_searches: list[str]


class PersonaTaxonomy(Model):
    """The Table 12 coverage axes of a persona (used for coverage-balanced assignment)."""

    household: str
    budget: str  # budget conscious | value balanced | premium
    quality: str  # balanced | functional | high
    urgency: str  # fast | standard | urgent
    constraints: list[str]  # constraint families, e.g. "material avoidance"
    preferences: list[str]  # preference families, e.g. "portability"
    history: str  # sparse | moderate | rich
    holdout_flags: list[str] = Field(default_factory=list)


class Persona(Model):
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
