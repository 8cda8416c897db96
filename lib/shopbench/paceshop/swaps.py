"""Counterfactual persona swaps (seed 000, Section 5.2 scenario S1; Appendix E.3, Table 27).

"S1 uses persona-swap records that hold the query and response fixed while replacing the persona
with one that contradicts an attestation in the unchanged response." (E.3) "Each swap flips one axis
(budget, hard_constraint, brand_affinity, attribute_preference) to a value drawn from the
1,200-persona pool that directly contradicts an attestation in the unchanged response; the gold
label flips from GOOD to BAD." (Table 27) The gold of every swap is PREF_CONFLICT @ persona_swap;
the record builder sets it, this module returns the :class:`Swap` objects.

**The new value is drawn from the pool** (issue 15): for each axis we list the values that pool
personas actually hold and that contradict an attestation in the response, then draw one *donor*
persona uniformly among the pool personas holding any of them (so a value held by more personas is
drawn more often) and take its contradicting value; the donor's id is kept in :attr:`Swap.donor`.
The cue lists below only find attestations and say which values contradict them:

* ``budget`` — budget words ("budget", "affordable", "value", ...) for a budget or mid-range persona
  are contradicted by a pool persona's "premium" budget (PS-ex-04: "rqList refines by budget-friendly
  variants inconsistent with premium context"); premium words ("premium", "luxury", ...) for a
  premium persona by a "budget" one (PS-ex-09).
* ``hard_constraint`` — a recommended category / related query / category search (or, with a
  ``catalog``, a cited product) violates a constraint the persona does not have and some pool persona
  does → that constraint replaces the first hard constraint (PS-ex-01: "[avoid peanuts, quiet
  operation]" → "[avoid leather, quiet operation]" where the "categories list includes Leather
  Tote"; every hard-constraint example of Table 27 is of this kind). A response that *honours* one of
  the persona's constraints ("wool-free") is contradicted only by a pool persona holding the
  :data:`OPPOSITE_CONSTRAINT` value; our pool holds none, so that route yields no swap on our builds.
* ``brand`` — the response names a liked brand (or, with a ``catalog``, cites its products) → the
  brand moves from brand_likes to brand_avoids (PS-ex-07: "brand_likes=[Nexpak]" →
  "brand_avoids=[Nexpak]"); if no like is left, the donor's likes replace them (PS-ex-02:
  "brand_likes=[Kindle, Fire TV]; brand_avoids=[Ecco Press]"). When no liked brand is attested, a
  cited product's brand that the persona does not avoid is used (our extension: the offline generator
  rarely cites liked brands, which left the axis at 6 of 38 swaps); the avoided brand must be one the
  pool names (a like or avoid of some pool persona).
* ``attribute`` — the response markets one of the persona's attribute preferences ("portable",
  "travel", "compact", "eco", ...) → it is replaced by the pool value that contradicts it
  (:data:`OPPOSITE_ATTRIBUTE` = ``personas.CONTRARY_ATTRIBUTE``: PS-ex-06 portability → "heavy-duty
  durability", PS-ex-03 eco-conscious materials → "luxury finishes", PS-ex-10 smart-home → "no Wi-Fi
  devices"), when a pool persona holds it.

**When an axis cannot be contradicted** (nothing attested, or no pool persona holds a contradicting
value) the record gets no swap on that axis; :func:`swap_options` says which of the two it was, and
:func:`select_swaps` (one swap per GOOD record, as the paper's 680-record slice over 680 test GOODs)
assigns axes so that the four counts are as equal as the attestations allow, and reports the counts,
the feasible records per axis and the reasons.

The swapped persona differs from the original only on that axis (its B.7 field and the matching
taxonomy tag), its ``persona_id`` (``<id>::swap-<axis>``) and a ``context_summary`` that states the
new value.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..core import Persona, Product, Response
from ..core import taxonomy as T
from .personas import CONTRARY_ATTRIBUTE, render_summary, violates

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
OPPOSITE_ATTRIBUTE = CONTRARY_ATTRIBUTE  # the pool values that contradict a marketed preference


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
    donor: str = ""  # the pool persona the new value was drawn from


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


# ---- the pool's values ---------------------------------------------------------------------------
@dataclass(frozen=True)
class PoolValues:
    """Which pool personas hold each value of each swap axis (ids sorted), built once per pool."""

    budget: dict[str, tuple[str, ...]]
    hard_constraint: dict[str, tuple[str, ...]]
    attribute: dict[str, tuple[str, ...]]
    brand: dict[str, tuple[str, ...]]  # lower-cased brand -> personas that like or avoid it
    likes: dict[str, tuple[str, ...]]  # persona id -> its brand likes

    @classmethod
    def of(cls, pool: Sequence[Persona] | PoolValues) -> PoolValues:
        if isinstance(pool, PoolValues):
            return pool
        acc: dict[str, dict[str, set[str]]] = {
            k: {} for k in ("budget", "hard_constraint", "attribute", "brand")
        }
        for p in pool:
            if "::swap-" in p.persona_id:
                continue
            pr = p.preferences
            acc["budget"].setdefault(p.shopping_context.budget, set()).add(p.persona_id)
            for c in pr.hard_constraints:
                acc["hard_constraint"].setdefault(c, set()).add(p.persona_id)
            for a in pr.attribute_preferences:
                acc["attribute"].setdefault(a, set()).add(p.persona_id)
            for b in [*pr.brand_likes, *pr.brand_avoids]:
                if b.strip():
                    acc["brand"].setdefault(b.strip().lower(), set()).add(p.persona_id)
        frozen = {k: {v: tuple(sorted(ids)) for v, ids in d.items()} for k, d in acc.items()}
        likes = {
            p.persona_id: tuple(p.preferences.brand_likes) for p in pool if "::swap-" not in p.persona_id
        }
        return cls(**frozen, likes=likes)


@dataclass(frozen=True)
class _Cand:
    """A contradiction the response supports: attestation (field, text), the attested original value
    and the pool value that contradicts it."""

    field: str
    text: str
    old: str
    new: str
    route: str = ""


# ---- per-axis attestations ----------------------------------------------------------------------
def _budget_cands(response: Response, budget: str | None) -> list[_Cand]:
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
    out = []
    for rx, new in want:
        for f, s in _units(response, _ALL):
            if rx.search(_plain(s)):
                out.append(_Cand(f, s, budget or "", new))
                break
    return out


def _constraint_cands(response: Response, persona: Persona | None, catalog) -> list[_Cand]:
    own = persona.preferences.hard_constraints if persona else []
    first = own[0] if own else ""
    others = [c for c in T.CONSTRAINTS if c.text not in own]
    out: list[_Cand] = []
    seen: set[str] = set()
    for f, s in _units(response, _RECOMMENDATIONS):  # (a) a recommendation violates a new constraint
        for spec in others:
            if spec.text not in seen and _affirmed(_violation_rx(spec), _plain(s)):
                seen.add(spec.text)
                out.append(_Cand(f, s, first, spec.text, "violation"))
    for f, eid, product in _cited(response, catalog):
        for spec in others:
            if spec.text not in seen and violates(product, spec.text):
                seen.add(spec.text)
                out.append(_Cand(f, f"{eid} ({product.title})", first, spec.text, "violation"))
    texts = own if persona else [c.text for c in T.CONSTRAINTS]
    for c in texts:  # (b) the response honours one of the persona's constraints
        rx = _honour_rx(c)
        if rx is None or c not in OPPOSITE_CONSTRAINT:
            continue
        for f, s in _units(response, _ALL):
            if _affirmed(rx, _plain(s)):
                out.append(_Cand(f, s, c, OPPOSITE_CONSTRAINT[c], "honour"))
                break
    return out


def _brand_cands(response: Response, persona: Persona | None, catalog) -> list[_Cand]:
    likes = persona.preferences.brand_likes if persona else []
    avoids = {b.lower() for b in persona.preferences.brand_avoids} if persona else set()
    out: list[_Cand] = []
    for b in likes:
        rx = re.compile(r"(?<!\w)" + re.escape(b) + r"(?!\w)", re.I)
        hit = next(((f, s) for f, s in _units(response, _ALL) if rx.search(_plain(s))), None)
        if hit:
            out.append(_Cand(hit[0], hit[1], b, b, "liked"))
    named = {c.old.lower() for c in out}
    cited_other: list[_Cand] = []
    for f, eid, product in _cited(response, catalog):
        brand = product.brand.strip()
        if not brand or brand.lower() in named or brand.lower() in avoids:
            continue
        liked = next((b for b in likes if b.lower() == brand.lower()), None)
        named.add(brand.lower())
        cand = _Cand(f, f"{eid} ({product.brand}: {product.title})", liked or brand, liked or brand,
                     "liked" if liked else "cited")  # fmt: skip
        (out if liked else cited_other).append(cand)
    return out or cited_other  # a liked brand first (PS-ex-02, PS-ex-07); else any cited brand


def _attribute_cands(response: Response, persona: Persona | None) -> list[_Cand]:
    prefs = persona.preferences.attribute_preferences if persona else list(ATTRIBUTE_CUES)
    out = []
    for a in prefs:
        rx = _attribute_rx(a)
        for f, s in _units(response, _ALL):
            if _affirmed(rx, _plain(s)):
                out.append(_Cand(f, s, a, OPPOSITE_ATTRIBUTE.get(a, f"avoids {a}")))
                break
    return out


def _cands(response: Response, persona: Persona | None, catalog) -> dict[str, list[_Cand]]:
    return {
        "budget": _budget_cands(response, persona.shopping_context.budget if persona else None),
        "hard_constraint": _constraint_cands(response, persona, catalog),
        "brand": _brand_cands(response, persona, catalog),
        "attribute": _attribute_cands(response, persona),
    }


def attestations(response: Response, persona: Persona | None = None, *,
                 catalog: Mapping[str, Product] | None = None, every: bool = False) -> dict:  # fmt: skip
    """Per swap axis, the response text that attests a persona value a swap could contradict (the
    first one; ``every=True``: all of them, as a list).

    With ``persona``: the attestations :func:`make_swaps` draws from (its budget, its hard
    constraints, its liked brands, its attribute preferences). Without: persona-independent cues
    (budget/premium words, any constraint violated or honoured, any attribute cue; brands only via
    ``catalog``-resolved attributions)."""
    found = _cands(response, persona, catalog)
    if every:
        return {a: [c.text for c in cs] for a, cs in found.items() if cs}
    return {a: cs[0].text for a, cs in found.items() if cs}


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


def _swap(
    persona: Persona, axis: str, hit: _Cand, donor: str, values: PoolValues, response: Response
) -> Swap:
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
        likes = [b for b in pr.brand_likes if b.lower() != hit.old.lower()]
        avoids = [*pr.brand_avoids, hit.old]
        if not likes:  # the donor's likes replace them (PS-ex-02)
            text = " ".join(_plain(s) for _, s in _units(response, _ALL)).lower()
            likes = [b for b in values.likes.get(donor, ())
                     if b.lower() not in {a.lower() for a in avoids} and b.lower() not in text]  # fmt: skip
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
        was = f"brand_likes: {hit.old}" if hit.route == "liked" else f"no stance on {hit.old}"
        old_value, new_value = was, f"brand_avoids: {hit.old}"
    else:
        old_value, new_value = hit.old, hit.new
    return Swap(axis, swapped, old_value, new_value, hit.text, hit.field, donor)


NOT_ATTESTED = "not attested"
NO_POOL_VALUE = "no pool value contradicts it"


def swap_options(persona: Persona, response: Response, pool: Sequence[Persona] | PoolValues,
                 rng: random.Random, *, catalog: Mapping[str, Product] | None = None
                 ) -> tuple[list[Swap], dict[str, str]]:  # fmt: skip
    """Every axis's swap (at most one per axis, in :data:`SWAP_AXES` order) and, per axis, ``"ok"``,
    :data:`NOT_ATTESTED` or :data:`NO_POOL_VALUE` (module docstring). Per axis, one donor is drawn
    with ``rng`` uniformly among the pool personas that hold a value contradicting an attestation."""
    values = PoolValues.of(pool)
    found = _cands(response, persona, catalog)
    out: list[Swap] = []
    status: dict[str, str] = {}
    for axis in SWAP_AXES:
        cands = found[axis]
        if not cands:
            status[axis] = NOT_ATTESTED
            continue
        if axis == "brand":
            # a liked brand is the persona's own pool value; a merely cited one must be named by the
            # pool; the donor (whose likes replace an emptied like list, PS-ex-02) is any other pool
            # persona with likes that do not include the brand
            cands = [c for c in cands if c.route == "liked" or values.brand.get(c.old.lower())]
            brands = {c.old.lower() for c in cands}
            donors = sorted(d for d, lk in values.likes.items()
                            if d != persona.persona_id and lk and not {b.lower() for b in lk} & brands)  # fmt: skip
            if not cands or not donors:
                status[axis] = NO_POOL_VALUE
                continue
            donor = donors[rng.randrange(len(donors))]
            hit = cands[0]
        else:
            held = getattr(values, axis)
            cands = [c for c in cands if held.get(c.new)]
            donors = sorted({d for c in cands for d in held[c.new] if d != persona.persona_id})
            if not donors:
                status[axis] = NO_POOL_VALUE
                continue
            donor = donors[rng.randrange(len(donors))]
            hit = next(c for c in cands if donor in held[c.new])
        out.append(_swap(persona, axis, hit, donor, values, response))
        status[axis] = "ok"
    return out, status


def make_swaps(persona: Persona, response: Response, pool: Sequence[Persona] | PoolValues, rng: random.Random, *,
               catalog: Mapping[str, Product] | None = None) -> list[Swap]:  # fmt: skip
    """All persona swaps (at most one per axis, in :data:`SWAP_AXES` order) that the unchanged
    ``response`` contradicts with a value some pool persona holds (module docstring). ``catalog``
    (product_id → Product) additionally lets cited products attest brands and constraint violations."""
    return swap_options(persona, response, pool, rng, catalog=catalog)[0]


@dataclass
class SwapSelection:
    """One swap per chosen GOOD record and what limited the balance."""

    chosen: list[tuple[int, Swap]]  # (index into the goods given, swap), in goods order
    counts: dict[str, int]
    feasible: dict[str, int]  # GOOD records that could take a swap on each axis
    reasons: dict[str, dict[str, int]]  # axis -> {reason: records} for the axes that could not
    no_swap: int  # GOOD records with no feasible axis


def select_swaps(items: Sequence[tuple[Persona, Response]], pool: Sequence[Persona], seed: int | str, *,
                 limit: int | None = None, catalog: Mapping[str, Product] | None = None,
                 keys: Sequence[str] | None = None) -> SwapSelection:  # fmt: skip
    """Balance the four axes over a slice: one swap per GOOD record (the paper's 680-record swap slice
    over 680 test GOODs). Records are taken in order until ``limit`` have a feasible axis; they are
    then assigned most-constrained first (fewest feasible axes), each to its feasible axis with the
    fewest swaps so far (ties in :data:`SWAP_AXES` order). The counts are as equal as the
    attestations and the pool allow; an axis that cannot be contradicted on a record is never
    forced. ``keys`` (e.g. record ids) seed each record's draws, so a record's swap does not depend
    on its neighbours."""
    values = PoolValues.of(pool)
    options: list[tuple[int, dict[str, Swap]]] = []
    feasible: Counter = Counter()
    reasons: dict[str, Counter] = {a: Counter() for a in SWAP_AXES}
    no_swap = 0
    for i, (persona, response) in enumerate(items):
        if limit is not None and len(options) >= limit:
            break
        key = keys[i] if keys is not None else str(i)
        swaps, status = swap_options(
            persona, response, values, random.Random(f"{seed}:{key}:swap"), catalog=catalog
        )
        for a, st in status.items():
            if st == "ok":
                feasible[a] += 1
            else:
                reasons[a][st] += 1
        if swaps:
            options.append((i, {s.axis: s for s in swaps}))
        else:
            no_swap += 1
    counts: Counter = Counter()
    chosen: list[tuple[int, Swap]] = []
    for i, by_axis in sorted(options, key=lambda o: (len(o[1]), o[0])):
        axis = min(by_axis, key=lambda a: (counts[a], SWAP_AXES.index(a)))
        counts[axis] += 1
        chosen.append((i, by_axis[axis]))
    chosen.sort(key=lambda c: c[0])
    return SwapSelection(chosen, {a: counts[a] for a in SWAP_AXES}, {a: feasible[a] for a in SWAP_AXES},
                         {a: dict(reasons[a]) for a in SWAP_AXES}, no_swap)  # fmt: skip
