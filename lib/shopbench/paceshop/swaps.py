"""Counterfactual persona swaps (seed 000, Section 5.2 scenario S1; Appendix E.3, Table 27).

"S1 uses persona-swap records that hold the query and response fixed while replacing the persona
with one that contradicts an attestation in the unchanged response." (E.3) "Each swap flips one axis
(budget, hard_constraint, brand_affinity, attribute_preference) to a value drawn from the
1,200-persona pool that directly contradicts an attestation in the unchanged response; the gold
label flips from GOOD to BAD." (Table 27) The gold of every swap is PREF_CONFLICT @ persona_swap;
the record builder sets it, this module returns the :class:`Swap` objects.

A swap is produced for an axis only when the unchanged response attests the persona's ORIGINAL value
in a way the new value contradicts:

* ``budget`` — budget words ("budget", "affordable", "value", ...) for a budget or mid-range persona
  → budget becomes "premium" (PS-ex-04: "rqList refines by budget-friendly variants inconsistent
  with premium context"); premium words ("premium", "luxury", ...) for a premium persona → "budget"
  (PS-ex-09: "Overview frames premium finish as the primary selling point").
* ``hard_constraint`` — (a) a recommended category / related query / category search (or, with a
  ``catalog``, a cited product) violates a constraint the persona does not have → that constraint
  replaces the first hard constraint (PS-ex-01: "[avoid peanuts, quiet operation]" →
  "[avoid leather, quiet operation]" where the "categories list includes Leather Tote"); otherwise
  (b) the response honours one of the persona's constraints ("wool-free", "fragrance-free",
  "quiet", ...) → that constraint is replaced by its opposite, which the honouring text contradicts.
* ``brand`` — the response names a liked brand (or, with a ``catalog``, cites its products) → the
  brand moves from brand_likes to brand_avoids (PS-ex-07: "brand_likes=[Nexpak]" →
  "brand_avoids=[Nexpak]"); if no like is left, one is drawn from the pool's likes (PS-ex-02).
* ``attribute`` — the response markets one of the persona's attribute preferences ("portable",
  "travel", "compact", "eco", ...) → it is replaced by its opposite (PS-ex-06 portability → "heavy-duty
  durability", PS-ex-03 eco-conscious materials → "luxury finishes", PS-ex-10 smart-home → "no Wi-Fi
  devices").

The swapped persona differs from the original only on that axis (its B.7 field and the matching
taxonomy tag), its ``persona_id`` (``<id>::swap-<axis>``) and a ``context_summary`` that states the
new value.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..core import Persona, Product, Response
from ..core import taxonomy as T
from .personas import render_summary, violates

SWAP_AXES = ("budget", "hard_constraint", "brand", "attribute")

BUDGET_CUES = r"\b(?:budget|affordable|value|cheap|inexpensive|low[- ]cost|bargain|economical|under \$\d+)"
PREMIUM_CUES = r"\b(?:premium|luxury|luxurious|high[- ]end|top[- ]tier|splurge|upscale)\b"

# constraint text -> words that honour it in a response (route b attestation)
HONOUR_CUES: dict[str, tuple[str, ...]] = {
    "avoid wool": (r"wool[- ]free", r"no wool", r"without wool"),
    "avoid leather": (r"leather[- ]free", r"vegan leather", r"faux leather", r"no leather"),
    "latex-free materials": (r"latex[- ]free", r"no latex"),
    "no polyester fabrics": (
        r"polyester[- ]free",
        r"no polyester",
        r"100% cotton",
        r"natural[- ]fib(?:er|re)s?",
    ),
    "avoid peanuts in ingredients": (r"peanut[- ]free", r"nut[- ]free", r"no peanuts?"),
    "fragrance-free only": (r"fragrance[- ]free", r"unscented", r"no fragrance"),
    "gluten-free only": (r"gluten[- ]free",),
    "no lanolin": (r"lanolin[- ]free", r"no lanolin"),
    "quiet operation required": (r"quiet", r"silent", r"low[- ]noise", r"whisper"),
    "easy-clean surfaces only": (r"easy[- ]clean", r"easy to clean", r"wipe[- ]clean", r"dishwasher[- ]safe"),
    "small-space friendly": (r"small[- ]space", r"space[- ]saving", r"compact"),
    "lightweight under 10 lbs": (r"lightweight", r"light[- ]weight", r"under 10 lbs?"),
    "must fit existing device compatibility": (r"compatib\w*", r"fits existing", r"universal fit"),
    "must work with iPhone": (r"iphone", r"magsafe", r"ios"),
    "durable enough for daily use": (r"durable", r"daily use", r"long[- ]lasting"),
    "heavy-duty construction": (r"heavy[- ]duty", r"rugged", r"reinforced"),
    "safe for ages 3+": (r"ages? 3\+", r"ages? 3 and up", r"3\+", r"toddler[- ]safe"),
    "kid-safe materials only": (r"kid[- ]safe", r"child[- ]safe", r"bpa[- ]free", r"non[- ]toxic"),
}
# constraint text -> words whose (non-negated) presence in a recommendation violates it (route a)
VIOLATION_CUES: dict[str, tuple[str, ...]] = {
    "avoid wool": (r"wool", r"merino", r"cashmere"),
    "avoid leather": (r"leather",),
    "latex-free materials": (r"latex",),
    "no polyester fabrics": (r"polyester",),
    "avoid peanuts in ingredients": (r"peanuts?",),
    "fragrance-free only": (r"fragrances?", r"fragranced", r"scented", r"perfumed?"),
    "gluten-free only": (r"gluten", r"wheat"),
    "no lanolin": (r"lanolin",),
    "quiet operation required": (r"loud",),
    "easy-clean surfaces only": (r"dry[- ]clean only",),
    "small-space friendly": (r"oversized",),
    "lightweight under 10 lbs": (r"heavy(?:weight)?",),
    "must fit existing device compatibility": (r"proprietary",),
    "must work with iPhone": (r"android(?:[- ]only)?",),
    "durable enough for daily use": (r"fragile",),
    "heavy-duty construction": (r"flimsy",),
    "safe for ages 3+": (r"small[- ]parts?",),
    "kid-safe materials only": (r"bpa",),
}
_NEGATED_BEFORE = re.compile(r"(?:\bno|\bnon|\bwithout|\bfree of|\bfaux|\bvegan|\banti|\bnot)[\s-]*$", re.I)
_NEGATED_AFTER = re.compile(r"^[\s-]*(?:free|duty)\b", re.I)
# constraint text -> the opposite requirement its honouring text contradicts (route b new value)
OPPOSITE_CONSTRAINT = {
    "avoid wool": "must be genuine wool",
    "avoid leather": "must be genuine leather",
    "latex-free materials": "must be natural latex",
    "no polyester fabrics": "polyester performance fabric only",
    "avoid peanuts in ingredients": "peanut-based recipes only",
    "fragrance-free only": "scented formulas only",
    "gluten-free only": "traditional wheat-based products only",
    "no lanolin": "lanolin-based formulas only",
    "quiet operation required": "loud, high-output operation required",
    "easy-clean surfaces only": "dry-clean only fabrics required",
    "small-space friendly": "full-size, oversized pieces only",
    "lightweight under 10 lbs": "heavyweight (over 25 lbs) for stability",
    "must fit existing device compatibility": "standalone proprietary system only",
    "must work with iPhone": "Android-only devices required",
    "durable enough for daily use": "disposable single-use items only",
    "heavy-duty construction": "ultralight minimalist builds only",
    "safe for ages 3+": "adult-only items with small parts",
    "kid-safe materials only": "industrial-grade materials only, not kid-rated",
}
# attribute preference -> words that market it in a response
ATTRIBUTE_CUES: dict[str, tuple[str, ...]] = {
    "modern minimalist look": (r"minimalist", r"sleek", r"modern"),
    "colorful designs": (r"colou?rful", r"vibrant", r"bright colou?rs?"),
    "easy to clean": (r"easy[- ]to[- ]clean", r"easy[- ]clean", r"dishwasher[- ]safe", r"wipe[- ]clean", r"washable"),
    "low-maintenance finishes": (r"low[- ]maintenance",),
    "gift-ready packaging": (r"gift[- ]ready", r"gift[- ]box(?:ed)?", r"gift sets?", r"giftable", r"gifts?"),
    "ergonomic support": (r"ergonomic\w*",),
    "high performance": (r"high[- ]performance", r"powerful", r"pro[- ]grade"),
    "travel friendly": (r"travel\w*", r"portable", r"packable"),
    "compact storage": (r"compact", r"foldable", r"collapsible", r"space[- ]saving"),
    "premium feel": (r"premium", r"luxury", r"luxe"),
    "eco-conscious materials": (r"eco", r"eco[- ]friendly", r"recycled", r"sustainab\w*", r"biodegradable"),
    "organic cotton": (r"organic",),
    "sensitive skin": (r"sensitive skin", r"hypoallergenic", r"gentle"),
    "smart-home compatibility priority": (r"smart[- ]home", r"wi-?fi", r"alexa", r"google home", r"app[- ]controlled"),
}  # fmt: skip
OPPOSITE_ATTRIBUTE = {
    "modern minimalist look": "ornate maximalist styling",
    "colorful designs": "neutral monochrome only",
    "easy to clean": "delicate hand-wash-only finishes",
    "low-maintenance finishes": "high-maintenance natural finishes",
    "gift-ready packaging": "plain bulk packaging, no gift wrap",
    "ergonomic support": "classic rigid designs over ergonomics",
    "high performance": "basic low-power models",
    "travel friendly": "heavy-duty durability",  # PS-ex-06
    "compact storage": "full-size heavy-duty builds",
    "premium feel": "basic utilitarian finish",
    "eco-conscious materials": "luxury finishes",  # PS-ex-03
    "organic cotton": "synthetic performance fabrics",
    "sensitive skin": "strongly scented formulas",
    "smart-home compatibility priority": "no Wi-Fi devices",  # PS-ex-10
}


@dataclass(frozen=True)
class Swap:
    """One persona swap. ``persona`` is the swapped copy (``<persona_id>::swap-<axis>``);
    ``attestation`` is the response text the new value contradicts, found at ``field``."""

    axis: str
    persona: Persona
    old_value: str
    new_value: str
    attestation: str
    field: str = ""


@dataclass(frozen=True)
class _Hit:
    field: str
    text: str
    old: str  # the attested original value (constraint text, brand, preference text, budget)
    new: str  # the contradicting new value
    route: str = ""  # hard_constraint: "violation" (a) or "honour" (b)


# ---- matching ----------------------------------------------------------------------------------
def _rx(patterns: Sequence[str]) -> re.Pattern:
    return re.compile(r"(?<![\w-])(?:" + "|".join(patterns) + r")(?![\w])", re.I)


_HONOUR_RX = {k: _rx(v) for k, v in HONOUR_CUES.items()}
_VIOLATION_RX = {k: _rx(v) for k, v in VIOLATION_CUES.items()}
_ATTRIBUTE_RX = {k: _rx(v) for k, v in ATTRIBUTE_CUES.items()}
_BUDGET_RX = re.compile(BUDGET_CUES, re.I)
_PREMIUM_RX = re.compile(PREMIUM_CUES, re.I)


def _violation_rx(spec: T.ConstraintSpec) -> re.Pattern:
    rx = _VIOLATION_RX.get(spec.text)
    return rx if rx is not None else _rx([re.escape(v) for v in spec.violating])


def _honour_rx(text: str) -> re.Pattern | None:
    rx = _HONOUR_RX.get(text)
    if rx is None and text in T.CONSTRAINTS_BY_TEXT:
        return _rx([re.escape(v) + r"[- ]free" for v in T.CONSTRAINTS_BY_TEXT[text].violating])
    return rx


def _attribute_rx(text: str) -> re.Pattern:
    rx = _ATTRIBUTE_RX.get(text)
    if rx is None:
        spec = T.PREFERENCES_BY_TEXT.get(text)
        rx = _rx([re.escape(f) for f in (spec.features if spec else ())] + [re.escape(text)])
    return rx


def _affirmed(rx: re.Pattern, text: str) -> bool:
    """A match not negated by "no / non / without / free of / faux / vegan" before it or
    "-free / -duty" after it ("wool-free" honours avoid-wool, it does not violate it)."""
    for m in rx.finditer(text):
        if _NEGATED_BEFORE.search(text[: m.start()]) or _NEGATED_AFTER.match(text[m.end() :]):
            continue
        return True
    return False


def _units(response: Response, fields: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(field, text) units of the response: overview sentences, list items."""
    for f in fields:
        if f == "overview_text":
            for s in re.split(r"(?<=[.!?])\s+", response.overview_text.strip()):
                if s:
                    yield f, s
        else:
            for i, s in enumerate(getattr(response, f)):
                yield f"{f}[{i}]", s


_ALL = ("productCategoryList", "overview_text", "rqList", "category_search_queries")
_RECOMMENDATIONS = ("productCategoryList", "rqList", "category_search_queries")


def _plain(s: str) -> str:
    return s.replace("**", "")


def _cited(response: Response, catalog: Mapping[str, Product] | None) -> Iterator[tuple[str, str, Product]]:
    if not catalog:
        return
    for i, eid in enumerate(response.attribution_list):
        parts = eid.split(":")
        pid = ":".join(parts[1:-1]) if len(parts) >= 3 else eid
        if pid in catalog:
            yield f"attribution_list[{i}]", eid, catalog[pid]


# ---- per-axis attestations ----------------------------------------------------------------------
def _budget_hit(response: Response, budget: str | None) -> _Hit | None:
    if budget is not None and budget not in T.BUDGET_TEXT.values():  # e.g. "budget-conscious", "luxury"
        premium = any(w in budget.lower() for w in ("premium", "luxury", "high"))
        budget_side = T.BUDGET_TEXT["premium"] if premium else T.BUDGET_TEXT["budget conscious"]
    else:
        budget_side = budget
    want = []
    if budget_side in (None, T.BUDGET_TEXT["budget conscious"], T.BUDGET_TEXT["value balanced"]):
        want.append((_BUDGET_RX, T.BUDGET_TEXT["premium"]))
    if budget_side in (None, T.BUDGET_TEXT["premium"]):
        want.append((_PREMIUM_RX, T.BUDGET_TEXT["budget conscious"]))
    for rx, new in want:
        for f, s in _units(response, _ALL):
            if rx.search(_plain(s)):
                return _Hit(f, s, budget or "", new)
    return None


def _constraint_hit(response: Response, persona: Persona | None, catalog) -> _Hit | None:
    own = persona.preferences.hard_constraints if persona else []
    first = own[0] if own else ""
    others = [c for c in T.CONSTRAINTS if c.text not in own]
    for f, s in _units(response, _RECOMMENDATIONS):  # (a) a recommendation violates a new constraint
        for spec in others:
            if _affirmed(_violation_rx(spec), _plain(s)):
                return _Hit(f, s, first, spec.text, "violation")
    for f, eid, product in _cited(response, catalog):
        for spec in others:
            if violates(product, spec.text):
                return _Hit(f, f"{eid} ({product.title})", first, spec.text, "violation")
    texts = own if persona else [c.text for c in T.CONSTRAINTS]
    for c in texts:  # (b) the response honours one of the persona's constraints
        rx = _honour_rx(c)
        if rx is None:
            continue
        for f, s in _units(response, _ALL):
            if _affirmed(rx, _plain(s)):
                return _Hit(f, s, c, OPPOSITE_CONSTRAINT.get(c, f"no longer requires: {c}"), "honour")
    return None


def _brand_hit(response: Response, persona: Persona | None, catalog) -> _Hit | None:
    likes = persona.preferences.brand_likes if persona else []
    for b in likes:
        rx = re.compile(r"(?<!\w)" + re.escape(b) + r"(?!\w)", re.I)
        for f, s in _units(response, _ALL):
            if rx.search(_plain(s)):
                return _Hit(f, s, b, b)
    for f, eid, product in _cited(response, catalog):
        if (persona is None and product.brand) or product.brand.lower() in {b.lower() for b in likes}:
            brand = next((b for b in likes if b.lower() == product.brand.lower()), product.brand)
            return _Hit(f, f"{eid} ({product.brand}: {product.title})", brand, brand)
    return None


def _attribute_hit(response: Response, persona: Persona | None) -> _Hit | None:
    prefs = persona.preferences.attribute_preferences if persona else list(ATTRIBUTE_CUES)
    for a in prefs:
        rx = _attribute_rx(a)
        for f, s in _units(response, _ALL):
            if _affirmed(rx, _plain(s)):
                return _Hit(f, s, a, OPPOSITE_ATTRIBUTE.get(a, f"avoids {a}"))
    return None


def _hits(response: Response, persona: Persona | None, catalog) -> dict[str, _Hit]:
    found = {
        "budget": _budget_hit(response, persona.shopping_context.budget if persona else None),
        "hard_constraint": _constraint_hit(response, persona, catalog),
        "brand": _brand_hit(response, persona, catalog),
        "attribute": _attribute_hit(response, persona),
    }
    return {a: h for a, h in found.items() if h is not None}


def attestations(response: Response, persona: Persona | None = None, *,
                 catalog: Mapping[str, Product] | None = None) -> dict[str, str]:  # fmt: skip
    """Per swap axis, the response text that attests a persona value a swap could contradict.

    With ``persona``: exactly the attestations :func:`make_swaps` uses (its budget, its hard
    constraints, its liked brands, its attribute preferences). Without: persona-independent cues
    (budget/premium words, any constraint violated or honoured, any attribute cue; brands only via
    ``catalog``-resolved attributions)."""
    return {a: h.text for a, h in _hits(response, persona, catalog).items()}


# ---- building the swapped persona ---------------------------------------------------------------
def _summary(original: Persona, swapped: Persona, old: str, new: str, label: str) -> str:
    if original.context_summary == render_summary(original):
        return render_summary(swapped)
    if old and old in original.context_summary:
        return original.context_summary.replace(old, new)
    return f"{original.context_summary} Update: {label} {new}."


def _families(texts: list[str], fallback: dict[str, str], old: list[str]) -> list[str]:
    out = []
    for t in texts:
        spec = T.CONSTRAINTS_BY_TEXT.get(t)
        fam = spec.family if spec else fallback.get(t)
        if fam and fam not in out:
            out.append(fam)
    return out or old


def _swap(persona: Persona, axis: str, hit: _Hit, pool: Sequence[Persona], response: Response,
          rng: random.Random) -> Swap:  # fmt: skip
    pr, tx, sc = persona.preferences, persona.taxonomy, persona.shopping_context
    upd: dict = {"persona_id": f"{persona.persona_id}::swap-{axis}"}
    if axis == "budget":
        rev = {v: k for k, v in T.BUDGET_TEXT.items()}
        upd["shopping_context"] = sc.model_copy(update={"budget": hit.new})
        upd["taxonomy"] = tx.model_copy(update={"budget": rev.get(hit.new, tx.budget)})
        old, new, label = sc.budget, hit.new, "budget is now"
    elif axis == "hard_constraint":
        hard = list(pr.hard_constraints)
        if hit.route == "honour" and hit.old in hard:
            hard[hard.index(hit.old)] = hit.new  # (b) the honoured constraint becomes its opposite
        elif hard:
            hard[0] = hit.new  # (a) replace the first hard constraint
        else:
            hard = [hit.new]
        fallback = {OPPOSITE_CONSTRAINT[c]: T.CONSTRAINTS_BY_TEXT[c].family
                    for c in pr.hard_constraints if c in OPPOSITE_CONSTRAINT and c in T.CONSTRAINTS_BY_TEXT}  # fmt: skip
        upd["preferences"] = pr.model_copy(update={"hard_constraints": hard})
        upd["taxonomy"] = tx.model_copy(update={"constraints": _families(hard, fallback, tx.constraints)})
        old, new, label = hit.old, hit.new, "hard constraint now"
    elif axis == "brand":
        likes = [b for b in pr.brand_likes if b != hit.old]
        avoids = [*pr.brand_avoids, hit.old]
        if not likes:  # draw a replacement like from the pool (PS-ex-02)
            text = " ".join(_plain(s) for _, s in _units(response, _ALL)).lower()
            cands = sorted({b for p in pool for b in p.preferences.brand_likes
                            if b not in avoids and b.lower() not in text})  # fmt: skip
            if cands:
                likes = [rng.choice(cands)]
        upd["preferences"] = pr.model_copy(update={"brand_likes": likes, "brand_avoids": avoids})
        old, new, label = hit.old, hit.old, "avoids"
    else:  # attribute
        attrs = [hit.new if a == hit.old else a for a in pr.attribute_preferences]
        upd["preferences"] = pr.model_copy(update={"attribute_preferences": attrs})
        if hit.old in tx.holdout_flags:
            upd["taxonomy"] = tx.model_copy(
                update={"holdout_flags": [f for f in tx.holdout_flags if f != hit.old]}
            )
        old, new, label = hit.old, hit.new, "prefers"
    swapped = persona.model_copy(update=upd)
    if axis == "brand":
        summary = _summary(persona, swapped, "", hit.old, label)
    else:
        summary = _summary(persona, swapped, old, new, label)
    swapped = swapped.model_copy(update={"context_summary": summary})
    Persona.model_validate(swapped.model_dump())  # still a valid B.7 persona
    if axis == "brand":
        old_value, new_value = f"brand_likes: {hit.old}", f"brand_avoids: {hit.old}"
    else:
        old_value, new_value = hit.old, hit.new
    return Swap(axis, swapped, old_value, new_value, hit.text, hit.field)


def make_swaps(persona: Persona, response: Response, pool: list[Persona], rng: random.Random, *,
               catalog: Mapping[str, Product] | None = None) -> list[Swap]:  # fmt: skip
    """All persona swaps (at most one per axis, in :data:`SWAP_AXES` order) that the unchanged
    ``response`` contradicts (module docstring). ``catalog`` (product_id → Product) additionally lets
    cited products attest brands and constraint violations."""
    hits = _hits(response, persona, catalog)
    return [_swap(persona, axis, hits[axis], pool, response, rng) for axis in SWAP_AXES if axis in hits]
