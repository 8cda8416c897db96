"""The PACEShop persona pool (seed 000, Appendix B.2 "Persona construction", B.3.2 Tables 12 and 14,
B.7 persona JSON).

"We construct personas as structured shopping contexts rather than free-form user descriptions.
The released persona pool contains 1,200 personas, including public seed personas and
behavior-seeded synthetic personas normalized under a shared schema. Each persona specifies stable
shopper information, such as household type, budget, quality sensitivity, urgency, constraints,
preferences, and brand affinities, together with concrete shopping behavior in the form of purchase
history and recent searches." (B.2)

"Merge 200 public v1 personas with 1,000 behavior-seeded synthetic personas" (B.2 step 3) and
"reserve 345 holdout personas across 8 bundles for dev/test" (step 4); Table 12 gives the coverage
counts over the 1,200 personas, which :func:`build_personas` reproduces exactly at ``n=1200`` for
household, budget, quality, urgency, history density, constraint families and holdout flags, and
scales proportionally (largest remainder) for other ``n``.

Two departures, both forced by the paper's own numbers:

* Preference families: Table 12 sums to 3,243 over 1,200 personas (2.7 each), while Table 14 lists
  exactly two preference families per persona. We give every persona two families (Table 14) and
  scale the Table 12 counts to the 2n slots, so the *shares* match and the counts are ~74 % of the
  paper's (the paper's counts probably also count families reached by attribute preferences).
* Constraint families: Table 12 sums to 1,905, which with "1–2 families per persona" (Table 14)
  means 705 personas with two families and 495 with one; the counts are exact.

Holdout bundles (the paper names "8 holdout bundle families" but not their definition; ours):
a bundle crosses one Table 12 holdout flag with a household group —

====  ===========================  ========================================================================
key   group                        households
====  ===========================  ========================================================================
a     family & care                parents school age, parents young children, senior caregiver, pet owner
b     solo & work                  single professional, student, home office, creator hobbyist
c     shared & on-the-go           couple, roommates, small space, travel outdoor
====  ===========================  ========================================================================

With 8 bundles the flags take 3 + 3 + 2 groups in Table 12 order: ``holdout-eco-conscious-materials-{a,b,c}``,
``holdout-sensitive-skin-{a,b,c}``, ``holdout-smart-home-compatibility-priority-{a,bc}``. Every holdout
persona carries exactly one holdout flag (3 × 115 = 345) and its bundle follows from flag and
household; the holdout personas' households are drawn so each flag's personas are spread evenly over
its bundles.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core import (
    Persona,
    PersonaHistory,
    PersonaPreferences,
    PersonaProfile,
    PersonaTaxonomy,
    Product,
    PurchaseItem,
    ShoppingContext,
)
from ..core import taxonomy as T

N_RAW_V1 = 200  # "200 public v1 personas" (B.2 step 3; Table 16)
CONSTRAINT_SLOTS = sum(T.CONSTRAINT_FAMILIES.values())  # 1,905 family memberships over 1,200 personas

# profile.household text per Table 12 household value (Table 14 sketches, B.7 JSON), and the phrase
# the context summary uses ("This shopper is part of a family with school-age kids who ..." B.7)
HOUSEHOLD_TEXT = {
    "couple": "couple sharing a home",
    "creator hobbyist": "creator and hobbyist household",
    "home office": "home office household",
    "parents school age": "family with school-age kids",
    "parents young children": "family with young children",
    "pet owner": "pet owner household",
    "roommates": "roommates sharing an apartment",
    "senior caregiver": "senior caregiver household",
    "single professional": "single professional",
    "small space": "small-space apartment household",
    "student": "student",
    "travel outdoor": "active outdoor household",
}
HOUSEHOLD_SUMMARY = {
    "couple sharing a home": "part of a couple sharing a home",
    "creator and hobbyist household": "part of a creator and hobbyist household",
    "home office household": "part of a home office household",
    "family with school-age kids": "part of a family with school-age kids",
    "family with young children": "part of a family with young children",
    "pet owner household": "part of a pet owner household",
    "roommates sharing an apartment": "one of several roommates sharing an apartment",
    "senior caregiver household": "part of a senior caregiver household",
    "single professional": "a single professional",
    "small-space apartment household": "part of a small-space apartment household",
    "student": "a student",
    "active outdoor household": "part of an active outdoor household",
}
# profile.demographics by quality sensitivity (B.7: "balances durability and value")
DEMOGRAPHICS = {
    "high": ("prioritizes quality and longevity", "pays for build quality that lasts"),
    "functional": ("wants practical items that just work", "focuses on function over form"),
    "balanced": ("balances durability and value", "weighs quality against price"),
}
BUDGET_PHRASE = {"budget": "a tight budget", "mid-range": "a mid-range budget", "premium": "a premium budget"}
URGENCY_PHRASE = {
    "standard shipping": "is fine with standard shipping",
    "needs it this week": "needs it this week",
    "needs it urgently": "needs it urgently",
}
HISTORY_ITEMS = {"sparse": (0, 1), "moderate": (2, 4), "rich": (5, 8)}  # purchase-history length per density
# preference text -> search phrase for preference-driven recent searches
SEARCH_PHRASE = {
    "modern minimalist look": "minimalist", "colorful designs": "colorful", "easy to clean": "easy to clean",
    "low-maintenance finishes": "low maintenance", "gift-ready packaging": "gift set",
    "ergonomic support": "ergonomic", "high performance": "high performance", "travel friendly": "travel",
    "compact storage": "compact", "premium feel": "premium", "eco-conscious materials": "eco friendly",
    "organic cotton": "organic", "sensitive skin": "hypoallergenic",
    "smart-home compatibility priority": "alexa compatible",
}  # fmt: skip
# how the context summary words a preference text (default: the text itself)
PREF_SUMMARY = {
    "sensitive skin": "products gentle on sensitive skin",
    "smart-home compatibility priority": "smart-home compatibility",
}
VERTICAL_NOUN = {
    "Toys & Games": "toys", "Electronics": "electronics", "Tools & Automotive": "tools",
    "Home & Kitchen": "kitchen gear", "Apparel & Accessories": "clothing", "Pet & Baby": "baby gear",
    "General Merchandise": "essentials", "Sports & Outdoors": "outdoor gear", "Office & School": "office supplies",
    "Beauty & Health": "skincare", "Books & Media": "books",
}  # fmt: skip


# ---- holdout bundles ---------------------------------------------------------------------------
HOUSEHOLD_GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "a": ("family & care", ("parents school age", "parents young children", "senior caregiver", "pet owner")),
    "b": ("solo & work", ("single professional", "student", "home office", "creator hobbyist")),
    "c": ("shared & on-the-go", ("couple", "roommates", "small space", "travel outdoor")),
}
_GROUP_SPLITS = {1: ("abc",), 2: ("a", "bc"), 3: ("a", "b", "c")}


@dataclass(frozen=True)
class HoldoutBundle:
    """One holdout bundle: a Table 12 holdout flag crossed with a household group."""

    name: str
    flag: str
    groups: str  # e.g. "a", "bc", "abc"
    households: tuple[str, ...]


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def holdout_bundles(n_bundles: int = T.N_HOLDOUT_BUNDLES) -> list[HoldoutBundle]:
    """The holdout bundles (module docstring). 3 ≤ n_bundles ≤ 9: the flags take ``n_bundles // 3``
    household groups each, the first ``n_bundles % 3`` flags one more."""
    flags = list(T.HOLDOUT_FLAGS)
    if not len(flags) <= n_bundles <= 3 * len(flags):
        raise ValueError(f"n_bundles must be between {len(flags)} and {3 * len(flags)}, got {n_bundles}")
    base, extra = divmod(n_bundles, len(flags))
    out = []
    for i, flag in enumerate(flags):
        for groups in _GROUP_SPLITS[base + (i < extra)]:
            hh = tuple(h for g in groups for h in HOUSEHOLD_GROUPS[g][1])
            suffix = "all" if groups == "abc" else groups
            out.append(HoldoutBundle(f"holdout-{_slug(flag)}-{suffix}", flag, groups, hh))
    return out


def bundle_for(flag: str, household: str, bundles: Sequence[HoldoutBundle]) -> HoldoutBundle:
    for b in bundles:
        if b.flag == flag and household in b.households:
            return b
    raise ValueError(f"no holdout bundle for flag {flag!r} and household {household!r}")


# ---- constraints against products --------------------------------------------------------------
def violates(product: Product, constraint_text: str) -> bool:
    """True when ``product`` violates the hard constraint (taxonomy.ConstraintSpec: "A product
    violates it when product.attributes[attribute] contains any of violating"). Unknown constraint
    texts are never violated."""
    spec = T.CONSTRAINTS_BY_TEXT.get(constraint_text)
    if spec is None:
        return False
    values = {v.lower() for v in product.attributes.get(spec.attribute, [])}
    return any(v in values for v in spec.violating)


# ---- counts ------------------------------------------------------------------------------------
def scaled_counts(counts: dict[str, int], total: int) -> dict[str, int]:
    """Scale ``counts`` to sum to ``total`` by the largest-remainder method (ties: dict order).
    Exact when ``total`` equals the original sum."""
    s = sum(counts.values())
    raw = {k: v * total / s for k, v in counts.items()}
    out = {k: int(r) for k, r in raw.items()}
    by_remainder = sorted(raw, key=lambda k: out[k] - raw[k])  # stable: ties keep dict order
    for k in by_remainder[: total - sum(out.values())]:
        out[k] += 1
    return out


def _expand(counts: dict[str, int], rng: random.Random) -> list[str]:
    out = [k for k, v in counts.items() for _ in range(v)]
    rng.shuffle(out)
    return out


def _multi_assign(rng: random.Random, sizes: list[int], counts: dict[str, int]) -> list[list[str]]:
    """Give persona i ``sizes[i]`` (1 or 2) distinct families so that family f is used exactly
    ``counts[f]`` times. A valid layout (slots sorted by family, persona j takes slots j and n+j)
    is then mixed by count-preserving random swaps that keep each persona's families distinct."""
    n = len(sizes)
    if sum(sizes) != sum(counts.values()) or max(counts.values(), default=0) > n:
        raise ValueError("family counts do not fit the personas")
    fams = list(counts)
    rng.shuffle(fams)
    slots = [f for f in fams for _ in range(counts[f])]
    order = sorted(range(n), key=lambda i: -sizes[i])  # two-family personas first
    out: list[list[str]] = [[] for _ in range(n)]
    for j, i in enumerate(order):
        out[i].append(slots[j])
    for j, i in enumerate(order[: sum(sizes) - n]):
        out[i].append(slots[n + j])
    for _ in range(10 * n):
        a, b = rng.randrange(n), rng.randrange(n)
        ia, ib = rng.randrange(len(out[a])), rng.randrange(len(out[b]))
        fa, fb = out[a][ia], out[b][ib]
        if a == b or fa == fb or fb in out[a] or fa in out[b]:
            continue
        out[a][ia], out[b][ib] = fb, fa
    return out


# ---- text helpers ------------------------------------------------------------------------------
def short_name(title: str, max_words: int = 6) -> str:
    """ "Barack Before Obama: Life Before the Presidency" -> "Barack Before Obama" (B.7 searches)."""
    head = re.split(r"\s*(?::|,|\||\(|\s-\s|–)\s*", title.strip(), maxsplit=1)[0] or title.strip()
    return " ".join(head.split()[:max_words])


def _join(xs: Sequence[str]) -> str:
    xs = list(xs)
    if len(xs) <= 1:
        return "".join(xs)
    return ", ".join(xs[:-1]) + " and " + xs[-1]


def render_summary(persona: Persona) -> str:
    """The natural-language ``context_summary`` built from the persona's fields, in the style of B.7:
    "This shopper is part of a family with school-age kids who balances durability and value on a
    mid-range budget. They prioritize travel-friendly, low-maintenance products..."."""
    pr, sc = persona.preferences, persona.shopping_context
    hh = HOUSEHOLD_SUMMARY.get(
        persona.profile.household, f"a shopper in a {persona.profile.household} household"
    )
    budget = BUDGET_PHRASE.get(sc.budget, f"a {sc.budget} budget")
    urgency = URGENCY_PHRASE.get(sc.shipping_urgency, f"expects {sc.shipping_urgency}")
    parts = [f"This shopper is {hh} who {persona.profile.demographics} on {budget} and {urgency}."]
    if pr.hard_constraints:
        parts.append(f"Hard constraints: {'; '.join(pr.hard_constraints)}.")
    if pr.attribute_preferences or pr.soft_preferences:
        attrs = [PREF_SUMMARY.get(a, a) for a in pr.attribute_preferences]
        s = f"They prioritize {_join(attrs)}" if attrs else "They"
        if pr.soft_preferences:
            s += (" and also value " if attrs else " value ") + _join(pr.soft_preferences)
        parts.append(s + ".")
    if pr.brand_likes:
        s = f"Favorite brands: {_join(pr.brand_likes)}"
        parts.append(s + (f"; avoids {_join(pr.brand_avoids)}." if pr.brand_avoids else "."))
    elif pr.brand_avoids:
        parts.append(f"Avoids {_join(pr.brand_avoids)}.")
    hist = persona.history.purchase_history
    if hist:
        parts.append(f"Recent purchases include {_join([short_name(h.product_name) for h in hist[:3]])}.")
    else:
        parts.append("No purchase history on record.")
    return " ".join(parts)


# ---- the catalog view --------------------------------------------------------------------------
class _Catalog:
    def __init__(self, products: Sequence[Product]):
        if not products:
            raise ValueError("build_personas needs a non-empty product catalog")
        self.products = sorted(products, key=lambda p: p.product_id)  # input-order independent
        self.brands = sorted({p.brand for p in self.products if p.brand.strip()})

    def history(self, rng: random.Random, k: int, constraints: list[str]) -> list[Product]:
        chosen: list[Product] = []
        seen: set[str] = set()
        for _ in range(60 * max(k, 1)):
            if len(chosen) >= k:
                break
            p = self.products[rng.randrange(len(self.products))]
            if p.product_id in seen or any(violates(p, c) for c in constraints):
                continue
            seen.add(p.product_id)
            chosen.append(p)
        return chosen

    def brands_excluding(self, rng: random.Random, k: int, exclude: set[str]) -> list[str]:
        out: list[str] = []
        if not self.brands:
            return out
        for _ in range(30 * max(k, 1)):
            if len(out) >= k:
                break
            b = self.brands[rng.randrange(len(self.brands))]
            if b not in exclude and b not in out:
                out.append(b)
        return out


# Contrary attribute preferences (project choice, issue 15). Table 27: "Each swap flips one axis ...
# to a value drawn from the 1,200-persona pool that directly contradicts an attestation in the
# unchanged response", and its examples show pool values that contradict another persona's
# preference (PS-ex-03 eco-conscious materials -> "luxury finishes", PS-ex-06 portability ->
# "heavy-duty durability", PS-ex-10 smart-home -> "no Wi-Fi devices"). Our Table 12 vocabulary has
# no such pairs, so a share of the pool (``CONTRARY_SHARE``, the paper gives none) holds one
# contrary value as an extra attribute preference; the Table 12 taxonomy tags are unchanged.
# Key: the preference a response may market; value: the pool value that contradicts it.
CONTRARY_ATTRIBUTE = {
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
CONTRARY_SHARE = 0.25  # our choice: the share of pool personas holding one contrary value


def add_contrary_preferences(
    personas: list[Persona], seed: int, share: float = CONTRARY_SHARE
) -> list[Persona]:
    """Give about ``share`` of the pool one contrary attribute preference (:data:`CONTRARY_ATTRIBUTE`
    values), never one that contradicts the persona's own preferences. A separate seeded stream, so
    every other field of the pool is what it was without this step."""
    if not 0 <= share <= 1:
        raise ValueError(f"share must be in [0, 1], got {share}")
    rng = random.Random(f"{seed}:contrary-preferences")
    values = list(CONTRARY_ATTRIBUTE.items())
    out = []
    for p in personas:
        if rng.random() >= share:
            out.append(p)
            continue
        own = {*p.preferences.attribute_preferences, *p.preferences.soft_preferences}
        cands = [v for k, v in values if k not in own and v not in own]
        v = cands[rng.randrange(len(cands))]
        q = p.model_copy(update={"preferences": p.preferences.model_copy(
            update={"attribute_preferences": [*p.preferences.attribute_preferences, v]})})  # fmt: skip
        out.append(q.model_copy(update={"context_summary": render_summary(q)}))
    return out


# ---- the pool ----------------------------------------------------------------------------------
def _texts(specs, family: str, exclude: Sequence[str] = ()) -> list[str]:
    return [s.text for s in specs if s.family == family and s.text not in exclude]


def build_personas(
    products: list[Product],
    n: int = T.N_PERSONAS,
    n_holdout: int | None = T.N_HOLDOUT,
    n_bundles: int = T.N_HOLDOUT_BUNDLES,
    seed: int = 0,
) -> list[Persona]:
    """The persona pool: ``n`` personas in the B.7 schema covering the Table 12 taxonomy.

    Ids: the first ``round(200 n / 1200)`` are origin "raw-v1" (``persona-0000`` ...), the rest
    "synthetic" (``v2-persona-0000`` ...), both styles as in Table 14. The paper's pool is "200 raw-v1
    plus 1000 behavior-seeded synthetic personas" (Table 16; B.2: "Merge 200 public v1 personas with
    1,000 behavior-seeded synthetic personas"); the public v1 personas are not in our copy and the
    paper does not say how they differ beyond their source, so here BOTH strata are generated the same
    way and "raw-v1" is only an id/origin label (listed in ``paceshop.choices``). ``n_holdout`` personas (None:
    345 scaled to ``n``) carry one holdout flag each and the holdout bundle it implies. Purchase
    history items never violate the persona's own hard constraints. Deterministic per ``seed``.
    """
    if n < 1:
        raise ValueError("n must be positive")
    if n_holdout is None:
        n_holdout = round(T.N_HOLDOUT * n / T.N_PERSONAS)
    if not 0 <= n_holdout <= n:
        raise ValueError(f"n_holdout must be between 0 and n={n}, got {n_holdout}")
    rng = random.Random(seed)
    bundles = holdout_bundles(n_bundles)
    cat = _Catalog(products)

    # households and holdout flags/bundles, jointly: each flag's personas spread over its bundles
    households_pool = _expand(scaled_counts(T.HOUSEHOLDS, n), rng)
    holdout_idx = sorted(rng.sample(range(n), n_holdout))
    demands: list[HoldoutBundle] = []
    for flag, c in scaled_counts(T.HOLDOUT_FLAGS, n_holdout).items():
        fb = [b for b in bundles if b.flag == flag]
        for j in range(c):
            demands.append(fb[j % len(fb)])
    rng.shuffle(demands)
    household: list[str] = [""] * n
    flag_of: dict[int, str] = {}
    bundle_of: dict[int, str] = {}
    for i, want in zip(holdout_idx, demands, strict=True):
        k = next((j for j, h in enumerate(households_pool) if h in want.households), 0)
        household[i] = households_pool.pop(k)
        flag_of[i] = want.flag
        bundle_of[i] = bundle_for(want.flag, household[i], bundles).name
    rest = iter(households_pool)
    for i in range(n):
        if not household[i]:
            household[i] = next(rest)

    budget = _expand(scaled_counts(T.BUDGETS, n), rng)
    quality = _expand(scaled_counts(T.QUALITY, n), rng)
    urgency = _expand(scaled_counts(T.URGENCY, n), rng)
    history = _expand(scaled_counts(T.HISTORY_DENSITY, n), rng)

    n_slots = min(2 * n, max(n, round(CONSTRAINT_SLOTS * n / T.N_PERSONAS)))
    sizes = [2] * (n_slots - n) + [1] * (2 * n - n_slots)
    rng.shuffle(sizes)
    constraint_fams = _multi_assign(rng, sizes, scaled_counts(T.CONSTRAINT_FAMILIES, n_slots))
    preference_fams = _multi_assign(rng, [2] * n, scaled_counts(T.PREFERENCE_FAMILIES, 2 * n))

    n_raw = round(N_RAW_V1 * n / T.N_PERSONAS)
    flags_text = set(T.HOLDOUT_FLAGS)
    out: list[Persona] = []
    for i in range(n):
        flag = flag_of.get(i)
        # hard constraints: one text per family; a single family gives one or two texts (Table 14)
        cf = constraint_fams[i]
        if len(cf) == 1:
            texts = _texts(T.CONSTRAINTS, cf[0])
            hard = rng.sample(texts, min(len(texts), 2 if rng.random() < 0.35 else 1))
        else:
            hard = [rng.choice(_texts(T.CONSTRAINTS, f)) for f in cf]
        # soft preferences from the first preference family, attribute preferences from the second,
        # the holdout flag first among the attribute preferences (Table 14 "attrs: <flag>, ...")
        pa, pb = preference_fams[i]
        ta = _texts(T.PREFERENCES, pa, flags_text)
        soft = rng.sample(ta, min(len(ta), 2 if rng.random() < 0.6 else 1))
        tb = [t for t in _texts(T.PREFERENCES, pb, flags_text) if t not in soft]
        n_attr = 1 if flag else (2 if rng.random() < 0.6 else 1)
        attrs = ([flag] if flag else []) + rng.sample(tb, min(len(tb), n_attr))

        lo, hi = HISTORY_ITEMS[history[i]]
        items = cat.history(rng, rng.randint(lo, hi), hard)
        purchases = [PurchaseItem(asin=p.product_id, product_name=p.title, brand=p.brand) for p in items]
        hist_brands = list(dict.fromkeys(p.brand for p in items if p.brand.strip()))
        n_likes = 1 + (rng.random() < 0.5)
        likes = rng.sample(hist_brands, min(n_likes, len(hist_brands)))
        likes += cat.brands_excluding(rng, n_likes - len(likes), set(likes))
        n_avoid = rng.choice((0, 0, 1, 1, 2))
        avoids = cat.brands_excluding(rng, n_avoid, set(likes) | set(hist_brands))

        searches: list[str] = []
        for j, p in enumerate(items[:3]):  # "<product> alternatives", "<brand> upgrades" (B.7)
            searches.append(
                f"{p.brand} upgrades" if j % 2 and p.brand.strip() else f"{short_name(p.title)} alternatives"
            )
        domain_src = items or [cat.products[rng.randrange(len(cat.products))]]
        for pref in rng.sample(attrs + soft, min(len(attrs + soft), 1 + (rng.random() < 0.5))):
            noun = VERTICAL_NOUN.get(rng.choice(domain_src).domain, "essentials")
            searches.append(f"{SEARCH_PHRASE.get(pref, pref)} {noun}")
        searches = list(dict.fromkeys(searches))

        b_text = T.BUDGET_TEXT[budget[i]]
        persona = Persona(
            persona_id=f"persona-{i:04d}" if i < n_raw else f"v2-persona-{i - n_raw:04d}",
            origin="raw-v1" if i < n_raw else "synthetic",
            profile=PersonaProfile(household=HOUSEHOLD_TEXT[household[i]],
                                   demographics=rng.choice(DEMOGRAPHICS[quality[i]])),
            preferences=PersonaPreferences(hard_constraints=hard, soft_preferences=soft, brand_likes=likes,
                                           brand_avoids=avoids, attribute_preferences=attrs),
            shopping_context=ShoppingContext(budget=b_text, quality_sensitivity=quality[i],
                                             shipping_urgency=T.URGENCY_TEXT[urgency[i]]),
            history=PersonaHistory(purchase_history=purchases, recent_searches=searches),
            context_summary="",
            taxonomy=PersonaTaxonomy(household=household[i], budget=budget[i], quality=quality[i],
                                     urgency=urgency[i], constraints=list(cf), preferences=[pa, pb],
                                     history=history[i], holdout_flags=[flag] if flag else []),
            holdout_bundle=bundle_of.get(i),
        )  # fmt: skip
        out.append(persona.model_copy(update={"context_summary": render_summary(persona)}))
    return add_contrary_preferences(out, seed)


def load_personas(path: str | Path) -> list[Persona]:
    """A ``personas.jsonl`` written by the build, read back: every line strict JSON and a valid
    :class:`Persona`, ids unique; a bad line is a :class:`~.io.DataFileError` naming file, line,
    persona and field (issue 12 §2)."""
    from .io import read_jsonl

    return read_jsonl(path, Persona, id_field="persona_id",
                      fix="fix or remove that line, or rebuild the personas (notebook 10)")  # fmt: skip
