"""PACEShop personas (Appendix B.2, B.3.2 Table 12, B.7), coverage-balanced assignment (B.2) and
persona swaps (Section 5.2 S1, Table 27)."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from shopbench.core import Persona, Product, Response
from shopbench.core import taxonomy as T
from shopbench.paceshop.assign import (
    assign_personas,
    random_assignment,
    taxonomy_reuse,
)
from shopbench.paceshop.personas import (
    CONTRARY_ATTRIBUTE,
    HOUSEHOLD_TEXT,
    build_personas,
    holdout_bundles,
    render_summary,
    scaled_counts,
)
from shopbench.paceshop.swaps import (
    ATTRIBUTE_CUES,
    HONOUR_CUES,
    NO_POOL_VALUE,
    OPPOSITE_ATTRIBUTE,
    OPPOSITE_CONSTRAINT,
    SWAP_AXES,
    VIOLATION_CUES,
    attestations,
    make_swaps,
    swap_options,
)

CONTRARY_VALUES = set(CONTRARY_ATTRIBUTE.values())


# ---- a tiny local catalog -----------------------------------------------------------------------
def make_products(n: int = 900, seed: int = 3) -> list[Product]:
    """Products whose attributes violate taxonomy.CONSTRAINTS often (about 45 % violate something)."""
    rng = random.Random(seed)
    brands = [f"Brand {chr(65 + i // 26)}{chr(65 + i % 26)}" for i in range(45)]
    out = []
    for i in range(n):
        attrs: dict[str, list[str]] = {}
        for spec in rng.sample(T.CONSTRAINTS, rng.choice((0, 0, 1, 2))):
            attrs.setdefault(spec.attribute, []).append(rng.choice(spec.violating))
        attrs["features"] = [rng.choice(rng.choice(T.PREFERENCES).features)]
        out.append(Product(product_id=f"B{i:09d}", title=f"Widget {i}: sturdy thing, pack of {i % 5 + 1}",
                           brand=rng.choice(brands), domain=rng.choice(T.VERTICALS), attributes=attrs))  # fmt: skip
    return out


@pytest.fixture(scope="module")
def products() -> list[Product]:
    return make_products()


@pytest.fixture(scope="module")
def pool(products) -> list[Persona]:
    return build_personas(products, n=1200, n_holdout=345, n_bundles=8, seed=11)


@pytest.fixture(scope="module")
def queries() -> list[str]:
    return [f"q-{i:05d}" for i in range(1132)]


def _count(personas, axis) -> Counter:
    c: Counter = Counter()
    for p in personas:
        v = getattr(p.taxonomy, axis)
        c.update(v if isinstance(v, list) else [v])
    return c


# ---- personas ------------------------------------------------------------------------------------
def test_table12_counts_exact_at_paper_scale(pool):
    assert len(pool) == 1200
    assert _count(pool, "household") == Counter(T.HOUSEHOLDS)
    assert _count(pool, "budget") == Counter(T.BUDGETS)
    assert _count(pool, "quality") == Counter(T.QUALITY)
    assert _count(pool, "urgency") == Counter(T.URGENCY)
    assert _count(pool, "history") == Counter(T.HISTORY_DENSITY)
    assert _count(pool, "holdout_flags") == Counter(T.HOLDOUT_FLAGS)
    # constraint families: 1–2 per persona; Table 12's 1,905 memberships reproduced exactly
    assert all(1 <= len(p.taxonomy.constraints) == len(set(p.taxonomy.constraints)) <= 2 for p in pool)
    assert _count(pool, "constraints") == Counter(T.CONSTRAINT_FAMILIES)
    # preference families: exactly 2 distinct per persona, Table 12 shares scaled to the 2,400 slots
    assert all(len(set(p.taxonomy.preferences)) == 2 for p in pool)
    assert _count(pool, "preferences") == Counter(scaled_counts(T.PREFERENCE_FAMILIES, 2400))


def test_shopping_context_and_texts_follow_the_taxonomy(pool):
    for p in pool:
        tx, pr = p.taxonomy, p.preferences
        assert p.shopping_context.budget == T.BUDGET_TEXT[tx.budget]
        assert p.shopping_context.shipping_urgency == T.URGENCY_TEXT[tx.urgency]
        assert p.shopping_context.quality_sensitivity == tx.quality
        assert p.profile.household == HOUSEHOLD_TEXT[tx.household]
        assert {T.CONSTRAINTS_BY_TEXT[c].family for c in pr.hard_constraints} == set(tx.constraints)
        texts = [t for t in pr.soft_preferences + pr.attribute_preferences
                 if t not in tx.holdout_flags and t not in CONTRARY_VALUES]  # fmt: skip
        assert {T.PREFERENCES_BY_TEXT[t].family for t in texts} <= set(tx.preferences)
        assert pr.soft_preferences and pr.attribute_preferences
        if tx.holdout_flags:  # the flag is an attribute preference, listed first (Table 14)
            assert pr.attribute_preferences[0] == tx.holdout_flags[0]
        assert p.context_summary == render_summary(p)
        assert p.shopping_context.budget in p.context_summary and p.profile.household in p.context_summary
    assert HOUSEHOLD_TEXT["parents school age"] == "family with school-age kids"  # B.7


def test_holdout_personas_form_eight_bundles(pool):
    bundles = {b.name: b for b in holdout_bundles(8)}
    assert len(bundles) == 8
    held = [p for p in pool if p.holdout_bundle is not None]
    assert len(held) == 345
    assert set(Counter(p.holdout_bundle for p in held)) == set(bundles)
    for p in pool:
        if p.taxonomy.holdout_flags:  # every persona with a holdout flag belongs to its bundle
            assert len(p.taxonomy.holdout_flags) == 1
            b = bundles[p.holdout_bundle]
            assert b.flag == p.taxonomy.holdout_flags[0] and p.taxonomy.household in b.households
        else:
            assert p.holdout_bundle is None
    sizes = Counter(p.holdout_bundle for p in held).values()
    assert min(sizes) >= 30  # spread, not piled into one household group
    assert (
        "holdout-eco-conscious-materials-a" in bundles
        and "holdout-smart-home-compatibility-priority-bc" in bundles
    )


def test_ids_and_origins(pool):
    raw = [p for p in pool if p.origin == "raw-v1"]
    syn = [p for p in pool if p.origin == "synthetic"]
    assert [p.persona_id for p in raw] == [f"persona-{i:04d}" for i in range(200)]
    assert [p.persona_id for p in syn] == [f"v2-persona-{i:04d}" for i in range(1000)]
    assert {p.origin for p in pool if p.holdout_bundle} == {"raw-v1", "synthetic"}


def test_history_never_violates_own_constraints(pool, products):
    by_id = {p.product_id: p for p in products}
    violating_share = sum(any(v for v in p.attributes.values() if v) for p in products) / len(products)
    assert violating_share > 0.3  # the catalog really offers violating products
    lengths = {"sparse": (0, 1), "moderate": (2, 4), "rich": (5, 8)}
    n_items = 0
    for p in pool:
        lo, hi = lengths[p.taxonomy.history]
        assert lo <= len(p.history.purchase_history) <= hi
        for item in p.history.purchase_history:
            prod = by_id[item.asin]
            assert (item.product_name, item.brand) == (prod.title, prod.brand)
            for text in p.preferences.hard_constraints:
                spec = T.CONSTRAINTS_BY_TEXT[text]
                assert not set(prod.attributes.get(spec.attribute, [])) & set(spec.violating), (
                    p.persona_id,
                    text,
                )
            n_items += 1
        hist = p.history.purchase_history
        if hist:  # "<product> alternatives" / "<brand> upgrades" (B.7)
            assert p.history.recent_searches[0].endswith(" alternatives")
        if len(hist) >= 2:
            assert p.history.recent_searches[1] == f"{hist[1].brand} upgrades"
        assert len(p.history.recent_searches) > len(hist[:3])  # plus preference-driven searches
    assert n_items > 4000


def test_brand_affinities(pool, products):
    brands = {p.brand for p in products}
    for p in pool:
        likes, avoids = p.preferences.brand_likes, p.preferences.brand_avoids
        assert 1 <= len(likes) <= 2 and 0 <= len(avoids) <= 2
        assert not set(likes) & set(avoids)
        assert set(likes) | set(avoids) <= brands
        assert not set(avoids) & {h.brand for h in p.history.purchase_history}
    assert Counter(len(p.preferences.brand_avoids) for p in pool).keys() == {0, 1, 2}


def test_deterministic_per_seed_and_input_order(pool, products):
    again = build_personas(products, n=1200, n_holdout=345, n_bundles=8, seed=11)
    assert [p.model_dump_json() for p in again] == [p.model_dump_json() for p in pool]
    shuffled = products[:]
    random.Random(5).shuffle(shuffled)
    small = [p.model_dump_json() for p in build_personas(products, n=60, n_holdout=17, seed=2)]
    assert [p.model_dump_json() for p in build_personas(shuffled, n=60, n_holdout=17, seed=2)] == small
    assert [p.model_dump_json() for p in build_personas(products, n=60, n_holdout=17, seed=3)] != small


def test_small_profile_scales_proportionally(products):
    small = build_personas(products, n=60, n_holdout=None, seed=7)  # None: 345 scaled → 17
    assert len(small) == 60
    assert sum(p.holdout_bundle is not None for p in small) == 17
    assert sum(p.origin == "raw-v1" for p in small) == 10
    assert _count(small, "household") == Counter(
        {k: v for k, v in scaled_counts(T.HOUSEHOLDS, 60).items() if v}
    )
    assert _count(small, "budget") == Counter(scaled_counts(T.BUDGETS, 60))
    assert sum(_count(small, "constraints").values()) == round(1905 * 60 / 1200)
    with pytest.raises(ValueError):
        build_personas(products, n=60, n_holdout=345)


# ---- assignment ----------------------------------------------------------------------------------
def test_assignment_at_paper_scale(pool, queries):
    pairs = assign_personas(
        queries, pool, k=4, seed=3, holdout_capacity=1360
    )  # speed: paceshop_build benchmark
    assert len(pairs) == 4 * len(queries)
    assert [q for q, _ in pairs[::4]] == queries  # query order, k consecutive pairs per query
    for i in range(0, len(pairs), 4):
        chunk = pairs[i : i + 4]
        assert len({q for q, _ in chunk}) == 1 and len({pid for _, pid in chunk}) == 4
    use = Counter(pid for _, pid in pairs)
    counts = [use[p.persona_id] for p in pool]
    assert max(counts) - min(counts) <= 2 and min(counts) >= 1
    held = {p.persona_id for p in pool if p.holdout_bundle}
    assert sum(pid in held for _, pid in pairs) <= 1360
    # taxonomy reuse within queries: lower than a random assignment (both computed)
    ours = taxonomy_reuse(pairs, pool)
    baseline = taxonomy_reuse(random_assignment(queries, pool, k=4, seed=3, holdout_capacity=1360), pool)
    assert ours < 0.75 * baseline, (ours, baseline)
    assert pairs == assign_personas(queries, pool, k=4, seed=3, holdout_capacity=1360)


@pytest.mark.parametrize("capacity", [0, 250])
def test_holdout_capacity_is_never_exceeded(pool, queries, capacity):
    pairs = assign_personas(queries[:400], pool, k=4, seed=1, holdout_capacity=capacity)
    held = {p.persona_id for p in pool if p.holdout_bundle}
    assert sum(pid in held for _, pid in pairs) == capacity  # filled, never exceeded
    assert all(len({pid for _, pid in pairs[i : i + 4]}) == 4 for i in range(0, len(pairs), 4))


def test_assignment_small_pool_and_errors(products):
    small = build_personas(products, n=60, n_holdout=17, seed=7)
    qs = [f"q{i}" for i in range(40)]
    pairs = assign_personas(qs, small, k=4, seed=7, holdout_capacity=48)
    use = Counter(pid for _, pid in pairs)
    assert len(pairs) == 160 and max(use.values()) - min(use[p.persona_id] for p in small) <= 2
    with pytest.raises(ValueError):
        assign_personas(qs, small[:3], k=4)


# ---- swaps ---------------------------------------------------------------------------------------
def _persona(pool, **pref) -> Persona:
    """A pool persona with controlled fields (summary re-rendered, as build_personas does)."""
    base = next(p for p in pool if not p.taxonomy.holdout_flags)
    prefs = base.preferences.model_copy(update=pref.pop("preferences", {}))
    p = base.model_copy(update={"preferences": prefs, **pref})
    tx_fams = [T.CONSTRAINTS_BY_TEXT[c].family for c in prefs.hard_constraints]
    p = p.model_copy(
        update={"taxonomy": p.taxonomy.model_copy(update={"constraints": list(dict.fromkeys(tx_fams))})}
    )
    return p.model_copy(update={"context_summary": render_summary(p)})


def _response(overview="For everyday use, explore **Gray Duffles** and **Gym Bags**.", cats=("Gray Duffles", "Gym Bags"),
              rq=("gray duffle bag", "duffle with shoe pocket"), attributions=("M:B000000001:0",)) -> Response:  # fmt: skip
    return Response(overview_text=overview, bold_categories=list(cats), productCategoryList=list(cats),
                    category_search_queries=[c.lower() for c in cats], rqList=list(rq),
                    attribution_list=list(attributions))  # fmt: skip


def _neutral_persona(pool):
    return _persona(pool, preferences={"hard_constraints": ["gluten-free only"], "brand_likes": ["Nexpak"],
                                       "brand_avoids": [], "attribute_preferences": ["organic cotton"]},
                    shopping_context=pool[0].shopping_context.model_copy(update={"budget": "mid-range"}))  # fmt: skip


AXIS_PATHS = {
    "budget": {"shopping_context.budget", "taxonomy.budget"},
    "hard_constraint": {"preferences.hard_constraints", "taxonomy.constraints"},
    "brand": {"preferences.brand_likes", "preferences.brand_avoids"},
    "attribute": {"preferences.attribute_preferences", "taxonomy.holdout_flags"},
}


def _diff(a: Persona, b: Persona) -> set[str]:
    da, db = a.model_dump(), b.model_dump()
    out = set()
    for k in da:
        if isinstance(da[k], dict):
            out |= {f"{k}.{kk}" for kk in da[k] if da[k][kk] != db[k][kk]}
        elif da[k] != db[k]:
            out.add(k)
    return out


def _check_swap(s, original: Persona, response: Response, axis: str):
    assert s.axis == axis and axis in SWAP_AXES
    assert s.persona.persona_id == f"{original.persona_id}::swap-{axis}"
    assert _diff(original, s.persona) - {"persona_id", "context_summary"} <= AXIS_PATHS[axis]
    assert _diff(original, s.persona) & AXIS_PATHS[axis]
    assert s.persona.context_summary == render_summary(s.persona) != original.context_summary
    assert s.attestation == attestations(response, original)[axis]
    assert s.old_value != s.new_value


def test_no_swap_when_nothing_is_attested(pool):
    p, r = _neutral_persona(pool), _response()
    assert attestations(r, p) == {}
    assert make_swaps(p, r, pool, random.Random(0)) == []
    # cues for values the persona does not hold attest nothing either
    r2 = _response(overview="A premium pick with **Wool-Free Socks** from Acme.", cats=("Wool-Free Socks", "Heavy-Duty Bags"),
                   rq=("fragrance-free duffle", "quiet gym bag"))  # fmt: skip
    assert make_swaps(p, r2, pool, random.Random(0)) == []


def test_budget_swap(pool):
    p = _neutral_persona(pool)
    r = _response(rq=("budget-friendly gray duffle", "duffle with shoe pocket"))
    (s,) = make_swaps(p, r, pool, random.Random(0))
    _check_swap(s, p, r, "budget")
    assert (s.old_value, s.new_value, s.field) == ("mid-range", "premium", "rqList[0]")
    assert "budget" in s.attestation and s.persona.taxonomy.budget == "premium"
    assert "on a premium budget" in s.persona.context_summary
    prem = p.model_copy(
        update={"shopping_context": p.shopping_context.model_copy(update={"budget": "premium"})}
    )
    prem = prem.model_copy(update={"context_summary": render_summary(prem)})
    assert make_swaps(prem, r, pool, random.Random(0)) == []  # budget words do not attest a premium budget
    r2 = _response(overview="Luxury **Gray Duffles** with a premium finish.")
    (s2,) = make_swaps(prem, r2, pool, random.Random(0))
    _check_swap(s2, prem, r2, "budget")
    assert s2.new_value == "budget" and s2.persona.taxonomy.budget == "budget conscious"


def test_hard_constraint_swap_on_a_violating_category(pool):
    p = _persona(pool, preferences={"hard_constraints": ["avoid peanuts in ingredients", "quiet operation required"],
                                    "brand_likes": ["Nexpak"], "attribute_preferences": ["organic cotton"]})  # fmt: skip
    r = _response(cats=("Leather Tote", "Gym Bags"))  # PS-ex-01
    (s,) = [x for x in make_swaps(p, r, pool, random.Random(0)) if x.axis == "hard_constraint"]
    _check_swap(s, p, r, "hard_constraint")
    assert s.persona.preferences.hard_constraints == ["avoid leather", "quiet operation required"]
    assert (s.old_value, s.new_value, s.attestation) == (
        "avoid peanuts in ingredients",
        "avoid leather",
        "Leather Tote",
    )
    spec = T.CONSTRAINTS_BY_TEXT[s.new_value]
    assert any(v in s.attestation.lower() for v in spec.violating)  # the new constraint is violated
    assert s.persona.taxonomy.constraints == ["material avoidance", "maintenance noise"]


def test_hard_constraint_swap_on_an_honoured_constraint(pool):
    """Table 27: the new value is "drawn from the 1,200-persona pool that directly contradicts an
    attestation in the unchanged response". An honoured constraint ("fragrance-free") is contradicted
    only by a pool persona holding its opposite; no persona of our pool does, so no swap, until one does."""
    p = _persona(pool, preferences={"hard_constraints": ["fragrance-free only"], "brand_likes": ["Nexpak"],
                                    "attribute_preferences": ["organic cotton"]})  # fmt: skip
    r = _response(overview="Gentle, fragrance-free **Gray Duffles** cleaners.")
    swaps, status = swap_options(p, r, pool, random.Random(0))
    assert swaps == [] and status["hard_constraint"] == NO_POOL_VALUE
    holder = pool[5].model_copy(update={"persona_id": "holder", "preferences": pool[5].preferences.model_copy(
        update={"hard_constraints": ["scented formulas only"]})})  # fmt: skip
    (s,) = make_swaps(p, r, [*pool, holder], random.Random(0))
    _check_swap(s, p, r, "hard_constraint")
    assert s.persona.preferences.hard_constraints == ["scented formulas only"] and s.donor == "holder"
    assert "fragrance-free" in s.attestation and s.field == "overview_text"
    assert "scented formulas only" in s.persona.context_summary


def test_hard_constraint_swap_from_cited_evidence(pool, products):
    p = _neutral_persona(pool)
    leather = next(
        x for x in products if x.attributes.get("materials") == ["leather"] and len(x.attributes) == 2
    )
    r = _response(attributions=(f"M:{leather.product_id}:0",))
    assert make_swaps(p, r, pool, random.Random(0)) == []  # without the catalog the id says nothing
    catalog = {x.product_id: x for x in products}
    swaps = {s.axis: s for s in make_swaps(p, r, pool, random.Random(0), catalog=catalog)}
    s = swaps["hard_constraint"]
    assert s.new_value == "avoid leather" and s.field == "attribution_list[0]"
    assert leather.product_id in s.attestation


@pytest.mark.parametrize("spec", T.CONSTRAINTS, ids=lambda s: s.text)
def test_every_conflict_label_is_caught_by_its_constraint(pool, spec):
    other = next(c.text for c in T.CONSTRAINTS if c.family != spec.family)
    p = _persona(pool, preferences={"hard_constraints": [other], "brand_likes": ["Nexpak"],
                                    "attribute_preferences": ["organic cotton"]})  # fmt: skip
    r = _response(cats=(spec.conflict_label, "Gym Bags"))
    hc = [s for s in make_swaps(p, r, pool, random.Random(0)) if s.axis == "hard_constraint"]
    assert [s.new_value for s in hc] == [spec.text]


def test_brand_swap(pool, products):
    p = _persona(pool, preferences={"hard_constraints": ["gluten-free only"], "brand_likes": ["Nexpak"],
                                    "brand_avoids": ["Acme"], "attribute_preferences": ["organic cotton"]})  # fmt: skip
    r = _response(overview="For range days, **Gray Duffles** from Nexpak hold up well.")  # PS-ex-07
    (s,) = make_swaps(p, r, pool, random.Random(0))
    _check_swap(s, p, r, "brand")
    pr = s.persona.preferences
    assert "Nexpak" in pr.brand_avoids and "Nexpak" not in pr.brand_likes
    assert not set(pr.brand_likes) & set(pr.brand_avoids)
    # the only like moved; the donor's likes replace it (PS-ex-02), drawn from the pool
    donor = next(q for q in pool if q.persona_id == s.donor)
    assert pr.brand_likes and set(pr.brand_likes) <= set(donor.preferences.brand_likes)
    assert "avoids Acme and Nexpak" in s.persona.context_summary
    # a liked brand cited through the catalog
    prod = products[7]
    p2 = _persona(pool, preferences={"hard_constraints": ["gluten-free only"], "brand_likes": [prod.brand, "Zeta"],
                                     "brand_avoids": [], "attribute_preferences": ["organic cotton"]})  # fmt: skip
    r2 = _response(attributions=(f"M:{prod.product_id}:1",))
    (s2,) = [
        x
        for x in make_swaps(p2, r2, pool, random.Random(0), catalog={prod.product_id: prod})
        if x.axis == "brand"
    ]
    assert s2.persona.preferences.brand_likes == ["Zeta"] and s2.persona.preferences.brand_avoids == [
        prod.brand
    ]


@pytest.mark.parametrize(
    ("attr", "text", "new"),
    [
        ("travel friendly", "packable and portable for weekend trips", "heavy-duty durability"),  # PS-ex-06
        ("smart-home compatibility priority", "duffle tracker with Alexa", "no Wi-Fi devices"),  # PS-ex-10
        ("eco-conscious materials", "recycled eco duffle", "luxury finishes"),  # PS-ex-03
        ("compact storage", "compact foldable duffle", "full-size heavy-duty builds"),
    ],
)
def test_attribute_swap(pool, attr, text, new):
    p = _persona(pool, preferences={"hard_constraints": ["gluten-free only"], "brand_likes": ["Nexpak"],
                                    "attribute_preferences": [attr, "organic cotton"]})  # fmt: skip
    r = _response(rq=(text, "duffle with shoe pocket"))
    (s,) = make_swaps(p, r, pool, random.Random(0))
    _check_swap(s, p, r, "attribute")
    assert s.persona.preferences.attribute_preferences == [new, "organic cotton"]
    assert (s.old_value, s.new_value, s.attestation, s.field) == (attr, new, text, "rqList[0]")
    assert new in s.persona.context_summary


def test_all_axes_together_and_holdout_flag(pool):
    held = next(p for p in pool if p.taxonomy.holdout_flags == ["smart-home compatibility priority"])
    like = held.preferences.brand_likes[0]
    r = _response(overview=f"Affordable **Oversized Sofas** from {like} that pair with Alexa.",
                  cats=("Oversized Sofas", "Gym Bags"))  # fmt: skip
    swaps = make_swaps(held, r, pool, random.Random(0))
    by_axis = {s.axis: s for s in swaps}
    assert [s.axis for s in swaps] == [a for a in SWAP_AXES if a in by_axis]
    assert {"brand", "attribute"} <= set(by_axis)
    for s in swaps:
        _check_swap(s, held, r, s.axis)
    assert by_axis["attribute"].persona.taxonomy.holdout_flags == []
    assert by_axis["attribute"].persona.holdout_bundle == held.holdout_bundle
    again = make_swaps(held, r, pool, random.Random(0))
    assert [s.persona.model_dump_json() for s in again] == [s.persona.model_dump_json() for s in swaps]


def test_vocabulary_covered_and_generic_attestations():
    for spec in T.CONSTRAINTS:
        assert spec.text in HONOUR_CUES and spec.text in VIOLATION_CUES and spec.text in OPPOSITE_CONSTRAINT
    for pref in T.PREFERENCES:
        assert pref.text in ATTRIBUTE_CUES and pref.text in OPPOSITE_ATTRIBUTE
    r = _response(overview="An affordable, **Wool-Free** pick for travel.", cats=("Wool-Free", "Gym Bags"))
    found = attestations(r)  # no persona: persona-independent cues
    assert set(found) == {"budget", "hard_constraint", "attribute"}
    assert re.search("affordable", found["budget"], re.I)
