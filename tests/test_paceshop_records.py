"""PACEShop records: XML view, the 12 checks, GOOD generators (offline and LLM) and the BAD edits.

Inputs are built here from the schema models (a small local world), not from the catalog or
persona modules.
"""

import json
import random
import re

import pytest

from shopbench.core import (
    Defect,
    EvidencePool,
    EvidenceSnippet,
    Persona,
    PersonaHistory,
    PersonaPreferences,
    PersonaProfile,
    PersonaTaxonomy,
    Product,
    PurchaseItem,
    Query,
    Response,
    ShoppingContext,
)
from shopbench.core import taxonomy as T
from shopbench.llm import Gateway, register_local
from shopbench.paceshop import checks as C
from shopbench.paceshop.defects import (
    FABRICATED_CLAIMS,
    FABRICATED_HISTORY,
    OFF_INTENT_POOL,
    changed_fields,
    gold_strings,
    inject,
)
from shopbench.paceshop.generate import (
    BUDGET_FACT,
    RESPONSE_KEYS,
    LLMGenerator,
    OfflineGenerator,
    constraint_phrase,
    load_prompt_text,
    violates,
)
from shopbench.paceshop.response_xml import bold_spans, from_xml, to_struct_json, to_xml

# ---- a small local world --------------------------------------------------------------------
KINDS = {
    "Sports & Outdoors": (["Duffle Bag", "Backpack", "Gym Bag", "Range Bag", "Tote"],
                          ["Tactical", "Rolling", "Travel", "Waterproof", "Packable", "Gray", "Military"]),
    "Home & Kitchen": (["Saucepan", "Skillet", "Blender", "Kettle", "Stock Pot"],
                       ["Copper", "Nonstick", "Stainless", "Compact", "Quiet", "Ceramic"]),
    "Toys & Games": (["Puzzle", "Building Set", "Plush Toy", "Craft Kit"],
                     ["Wooden", "Magnetic", "Educational", "Colorful", "Holiday"]),
    "Electronics": (["Speaker", "Charger", "Headphones", "Power Bank", "USB Hub"],
                    ["Bluetooth", "Wireless", "Portable", "Fast", "Dual-Driver"]),
    "Apparel & Accessories": (["Hoodie", "Sweater", "Jacket", "Socks", "Scarf"],
                              ["Wool", "Fleece", "Organic", "Lightweight", "Classic", "Leather"]),
}  # fmt: skip
BRANDS = ["Nexpak", "Under Armour", "Gonex", "Samsonite", "Vertx", "SHINEURI", "Lodge", "Melissa & Doug",
          "LENRUE", "Anker", "Coleman", "Dr. Brown's", "Ecco Press", "Lansinoh", "Amazon Basics"]  # fmt: skip
EXTRAS = ['26" (040)/Black', "One Size Fits All", "for Home & Travel", "2-Pack", "- Great Gift", "XL"]
ATTR_VALUES = {"materials": ["wool", "leather", "latex", "polyester", "cotton", "bpa"],
               "allergens": ["fragrance", "peanut", "gluten", "lanolin"], "noise": ["loud", "quiet"],
               "size": ["oversized", "compact", "heavy"], "durability": ["fragile", "flimsy", "sturdy"]}  # fmt: skip
FEATURES = sorted({f for p in T.PREFERENCES for f in p.features})


def make_world(n: int, seed: int = 0):
    rng = random.Random(seed)
    products: dict[str, Product] = {}
    inputs = []
    for i in range(n):
        vertical = rng.choice(sorted(KINDS))
        nouns, adjs = KINDS[vertical]
        noun = rng.choice(nouns)
        query = f"{rng.choice(adjs).lower()} {noun.lower()}" + (
            f" {rng.choice(adjs).lower()}" if i % 3 else ""
        )
        pids = []
        snippets = []
        for j in range(rng.randint(3, 10)):
            pid = f"B{i:04d}{j:02d}X"
            brand = rng.choice(BRANDS)
            a1, a2 = rng.sample(adjs, 2)
            title = f"{brand} {a1} {a2} {rng.choice(nouns)}, {rng.choice(EXTRAS)}"
            attrs = {k: [rng.choice(v)] for k, v in ATTR_VALUES.items() if rng.random() < 0.25}
            attrs["features"] = rng.sample(FEATURES, rng.randint(0, 3))
            products[pid] = Product(product_id=pid, title=title, brand=brand, domain=vertical, attributes=attrs,
                                    price=round(rng.uniform(5, 200), 2), bullet_points=[f"{a1} design"])  # fmt: skip
            pids.append(pid)
            snippets += [
                EvidenceSnippet(canonical_product_id=pid, title=title, brand=brand, evidence_id=f"M:{pid}:0",
                                snippet=title, source_field="product_title"),
                EvidenceSnippet(canonical_product_id=pid, title=title, brand=brand, evidence_id=f"M:{pid}:1",
                                snippet=brand, source_field="product_brand"),
                EvidenceSnippet(canonical_product_id=pid, title=title, brand=brand, evidence_id=f"M:{pid}:2",
                                snippet=f"{a1} design", source_field="product_bullet_point"),
            ]  # fmt: skip
        qid = f"q{i:04d}"
        pool = EvidencePool(query_id=qid, snippets=snippets[:24], product_ids=pids[:8])
        q = Query(query_id=qid, query=query, vertical=vertical, mission="Broad Browse")
        inputs.append((f"a-{i:05d}", q, make_persona(rng, i), pool))
    return inputs, products


def make_persona(rng: random.Random, i: int, hard=None, history=None) -> Persona:
    hard = hard if hard is not None else [c.text for c in rng.sample(T.CONSTRAINTS, rng.randint(0, 2))]
    prefs = [p.text for p in rng.sample(T.PREFERENCES, 3)]
    budget = rng.choice(sorted(T.BUDGETS))
    hist = history if history is not None else [
        PurchaseItem(asin="0063028743", product_name="Barack Before Obama", brand="Ecco Press"),
        PurchaseItem(asin="B006XISCNA", product_name="Lansinoh Breastmilk Storage Bags", brand="Lansinoh"),
    ]  # fmt: skip
    return Persona(
        persona_id=f"persona-{i:04d}",
        profile=PersonaProfile(household="family with school-age kids", demographics="balances durability"),
        preferences=PersonaPreferences(
            hard_constraints=hard,
            soft_preferences=prefs[:1],
            brand_likes=rng.sample(BRANDS, rng.randint(0, 2)),
            brand_avoids=rng.sample(BRANDS, rng.randint(0, 1)),
            attribute_preferences=prefs[1:],
        ),  # fmt: skip
        shopping_context=ShoppingContext(
            budget=T.BUDGET_TEXT[budget], quality_sensitivity="balanced", shipping_urgency="standard shipping"
        ),  # fmt: skip
        history=PersonaHistory(purchase_history=hist, recent_searches=["Lansinoh upgrades"]),
        context_summary="A family shopper.",
        taxonomy=PersonaTaxonomy(
            household="parents school age",
            budget=budget,
            quality="balanced",
            urgency="standard",
            constraints=[],
            preferences=[],
            history="moderate",
        ),  # fmt: skip
    )


@pytest.fixture(scope="module")
def world():
    return make_world(300, seed=11)


@pytest.fixture(scope="module")
def goods(world):
    inputs, products = world
    gen = OfflineGenerator(seed=0)
    return [(it, *gen.generate(*it, products)) for it in inputs]


def good_response() -> Response:
    ov = ("For tactical duffle gray, with a focus on your mid-range budget, explore **Tactical**, **Gray Gym Bags**, "
          "**Rolling Duffles**, **Travel Duffles**, and **Range Bags**.")  # fmt: skip
    cats = ["Tactical", "Gray Gym Bags", "Rolling Duffles", "Travel Duffles", "Range Bags"]
    return Response(
        overview_text=ov, bold_categories=cats, productCategoryList=cats,
        category_search_queries=["tactical duffle", "gray gym bag", "rolling duffel bag", "travel duffle",
                                 "tactical range bag"],
        rqList=["tactical duffle with MOLLE webbing", "gray duffel bag water resistant",
                "wheeled tactical duffel carry-on", "packable lightweight gray duffle",
                "tactical range bag gunmetal grey"],
        attribution_list=["M:B079YYGMR3:0", "M:B079YYGMR3:1", "M:B077KKMFFN:0"],
    )  # fmt: skip


CAND = ["M:B079YYGMR3:0", "M:B079YYGMR3:1", "M:B077KKMFFN:0", "M:B077KKMFFN:1"]
USED = ["M:B079YYGMR3:0", "M:B079YYGMR3:1", "M:B077KKMFFN:0"]


# ---- XML view ------------------------------------------------------------------------------------
def test_xml_round_trip_with_special_characters():
    r = good_response().model_copy(update={
        "overview_text": 'Tom & Jerry\'s <"best"> picks: **A&B**, **<C>**, **"D"**, **E\'s**, and **F > G**.',
        "bold_categories": ["A&B", "<C>", '"D"', "E's", "F > G"],
        "productCategoryList": ["A&B", "<C>", '"D"', "E's", "F > G"],
        "category_search_queries": ['a & b "quoted"', "<c> search", "d\ttab", "e's\nnewline", "f > g & h"],
        "rqList": ["x & y", "<script>", "q'uote", '"dq"', "ünïcødé ✓"],
    })  # fmt: skip
    xml = to_xml(r)
    assert xml.startswith("<response><overview_text>") and "&amp;" in xml and "&lt;C&gt;" in xml
    assert from_xml(xml) == r
    assert bold_spans(r.overview_text) == r.productCategoryList
    assert json.loads(to_struct_json(r)) == r.model_dump() and list(json.loads(to_struct_json(r))) == list(
        RESPONSE_KEYS
    )


def test_xml_view_is_strict_and_lossy_cases_fail_round_trip():
    with pytest.raises(ValueError, match="not well-formed"):
        from_xml("<response><overview_text>x</response>")
    with pytest.raises(ValueError, match="exactly"):
        from_xml("<response><overview_text>x</overview_text></response>")
    with pytest.raises(ValueError, match="root"):
        from_xml("<answer/>")
    r = good_response()
    assert C.xml_round_trip(r.model_copy(update={"category_search_queries": ["only one"]}))  # no attribute
    assert not C.xml_round_trip(
        r.model_copy(update={"category_search_queries": ["q"] * 6})
    )  # no 6th category
    assert not C.xml_round_trip(
        r.model_copy(update={"bold_categories": ["Other"]})
    )  # recovered from overview
    assert not C.xml_round_trip(r.model_copy(update={"overview_text": r.overview_text + "\r\n"}))


# ---- the twelve checks: one pass and one fail each ------------------------------------------------
def _fail_cases(r: Response) -> dict[str, tuple[Response, list, list, str | None]]:
    cats5 = r.productCategoryList
    return {
        "overview_length": (r.model_copy(update={"overview_text": r.overview_text + " x" * 120}), CAND, USED, None),
        "bold_count": (r.model_copy(update={"overview_text": r.overview_text.replace("**Range Bags**", "Range Bags")
                                            .replace("**Tactical**", "Tactical")}), CAND, USED, None),
        "bold_category_match": (r.model_copy(update={"productCategoryList": [cats5[1], cats5[0], *cats5[2:]]}),
                                CAND, USED, None),
        "category_count": (r.model_copy(update={"productCategoryList": cats5[:3]}), CAND, USED, None),
        "category_label_length": (r.model_copy(update={"productCategoryList": ["A Very Long Category", *cats5[1:]]}),
                                  CAND, USED, None),
        "category_case_duplicates": (r.model_copy(update={"productCategoryList": [*cats5[:4], "tactical"]}),
                                     CAND, USED, None),
        "query_alignment": (r.model_copy(update={"category_search_queries": ["cat litter", *r.category_search_queries[1:]]}),
                            CAND, USED, None),
        "rq_count_unique": (r.model_copy(update={"rqList": [*r.rqList[:4], "Tactical  duffle with molle WEBBING"]}),
                            CAND, USED, None),
        "evidence_id_validity": (r.model_copy(update={"attribution_list": [*USED, "M:B000000000:0"]}),
                                 CAND, [*USED, "M:B000000000:0"], None),
        "evidence_exact_match": (r, CAND, USED[:2], None),
        "xml_round_trip": (r, CAND, USED, to_xml(r).replace("Range Bags</category>", "Range Bag</category>")),
        "banned_strings": (r.model_copy(update={"rqList": [*r.rqList[:4], "As an AI, I suggest duffles"]}),
                           CAND, USED, None),
    }  # fmt: skip


def test_every_check_passes_on_a_good_response_and_fails_on_its_counterexample():
    r = good_response()
    assert C.run_checks(r, CAND, USED) == {k: True for k in T.CHECKS}
    assert list(C.run_checks(r, CAND, USED, to_xml(r))) == T.CHECKS and C.failed_checks(r, CAND, USED) == []
    cases = _fail_cases(r)
    assert list(cases) == T.CHECKS
    for name, (bad, cand, used, xml) in cases.items():
        res = C.run_checks(bad, cand, used, xml)
        assert res[name] is False, name
        assert name in C.failed_checks(bad, cand, used, xml)


def test_check_details():
    r = good_response()
    # boundaries
    assert C.overview_length(r.model_copy(update={"overview_text": "x" * 350}))
    assert not C.overview_length(r.model_copy(update={"overview_text": "x" * 351}))
    assert not C.overview_length(r.model_copy(update={"overview_text": ""}))
    assert C.category_label_length(r.model_copy(update={"productCategoryList": ["X" * 15] * 4}))
    assert not C.category_label_length(r.model_copy(update={"productCategoryList": ["X" * 16] * 4}))
    assert not C.bold_count(r.model_copy(update={"overview_text": r.overview_text + " **stray"}))
    # malformed evidence ids and empty attribution lists are invalid
    assert not C.evidence_id_validity(
        r.model_copy(update={"attribution_list": ["B079YYGMR3"]}), {"B079YYGMR3"}
    )
    assert not C.evidence_id_validity(r.model_copy(update={"attribution_list": []}), CAND)
    # query alignment by shared (singularised) token, by containment, and 1:1
    assert C.query_alignment(r.model_copy(update={"category_search_queries": ["duffle"] * 5,
                                                  "productCategoryList": ["Duffles"] * 5}))  # fmt: skip
    assert not C.query_alignment(
        r.model_copy(update={"category_search_queries": r.category_search_queries[:4]})
    )
    assert not C.query_alignment(
        r.model_copy(update={"category_search_queries": ["  ", *r.category_search_queries[1:]]})
    )
    # banned strings: case-insensitive, whole words for word-like entries, anywhere in the response
    for s in ["lorem IPSUM dolor", "see http://x.example", "todo: fill", "{slot}", "n/a"]:
        assert not C.banned_strings(r.model_copy(update={"overview_text": s}))
    assert C.banned_strings(r.model_copy(update={"overview_text": "mastodon toddler bandana"}))
    assert not C.banned_strings(
        r.model_copy(update={"category_search_queries": ["<script>x", *r.category_search_queries[1:]]})
    )


# ---- the offline generator --------------------------------------------------------------------
def test_offline_generator_passes_checks_on_nearly_every_input(world, goods):
    _, products = world
    fails = []
    for (aid, _q, _persona, pool), resp, used in goods:
        failed = C.failed_checks(resp, [s.evidence_id for s in pool.snippets], used)
        if failed:
            fails.append((aid, failed))
        assert used == resp.attribution_list
    assert len(fails) <= 3, fails  # >= 99 % of 300 (speed: the paceshop_build benchmark)


def test_offline_generator_respects_constraints_and_avoided_brands(world, goods):
    _, products = world
    n_dropped = 0
    for (aid, _q, persona, pool), resp, used in goods:
        pids = {i.split(":")[1] for i in used}
        assert pids <= set(pool.product_ids)
        for pid in pids:
            p = products[pid]
            assert not violates(p, persona), (aid, pid)
            assert p.brand not in persona.preferences.brand_avoids
        n_dropped += any(violates(products[pid], persona) for pid in pool.product_ids)
        # never mentions purchase history, never a fabricated item
        for h in persona.history.purchase_history:
            assert h.product_name.lower() not in resp.overview_text.lower()
        assert not any(x.lower() in resp.overview_text.lower() for x in FABRICATED_HISTORY)
        # labels are Title Case, case-insensitively unique, <= 15 chars
        assert all(lab[0].isupper() for lab in resp.productCategoryList)
        assert len({lab.lower() for lab in resp.productCategoryList}) == len(resp.productCategoryList)
    assert n_dropped > 60  # the world does exercise the filter


def test_offline_generator_mentions_only_true_persona_facts(world, goods):
    _, products = world
    n_facts = 0
    for (aid, _q, persona, _pool), resp, used in goods:
        ov = resp.overview_text
        chosen = [products[pid] for pid in dict.fromkeys(i.split(":")[1] for i in used)]
        facts = 0
        for key, phrase in BUDGET_FACT.items():
            if phrase in ov:
                facts += 1
                assert persona.shopping_context.budget == key, (aid, phrase)
        for spec in T.CONSTRAINTS:
            if f" {constraint_phrase(spec)} options" in ov:
                facts += 1
                assert spec.text in persona.preferences.hard_constraints, (aid, spec.text)
        for spec in T.PREFERENCES:
            if f"focus on {spec.text}" in ov or f"and {spec.text}," in ov:
                facts += 1
                assert (
                    spec.text
                    in persona.preferences.attribute_preferences + persona.preferences.soft_preferences
                )
                assert any(set(spec.features) & set(p.attributes.get("features", [])) for p in chosen)
        m = re.search(r"brands you like such as (.+?)(?: and |,)", ov)
        if m:
            facts += 1
            assert m.group(1) in persona.preferences.brand_likes and m.group(1) in {p.brand for p in chosen}
        assert 1 <= facts <= 2, (aid, ov)
        n_facts += facts
    assert n_facts > 400


def test_offline_generator_is_deterministic_per_seed(world, goods):
    inputs, products = world
    again = [OfflineGenerator(seed=0).generate(*it, products) for it in inputs[:50]]
    assert again == [(r, u) for _, r, u in goods[:50]]
    other = [OfflineGenerator(seed=1).generate(*it, products) for it in inputs[:50]]
    assert other != again


def test_offline_generator_real_example_shape():
    """The B.6 record's query and pool shape: labels come from the evidence, overview bolds them."""
    titles = {"B079YYGMR3": ('26" Tactical Duffle Military Molle Gear Shoulder Strap Range Bag TF126 GMG Gunmetal Grey',
                             "Nexpak"),
              "B077KKMFFN": ("Under Armour Adult Contain 4.0 Duffle Bag, Graphite Medium Heat (040)/Black, One Size",
                             "Under Armour"),
              "B000GONEX1": ("Gonex 80L Packable Travel Duffle Bag Lightweight", "Gonex"),
              "B000SAMSO1": ("Samsonite Andante 2 Wheeled Rolling Duffel Bag", "Samsonite")}  # fmt: skip
    products = {pid: Product(product_id=pid, title=t, brand=b, domain="Sports & Outdoors",
                             attributes={"features": ["travel"] if "Travel" in t else []})
                for pid, (t, b) in titles.items()}  # fmt: skip
    snips = [EvidenceSnippet(canonical_product_id=pid, title=t, brand=b, evidence_id=f"M:{pid}:{k}",
                             snippet=s, source_field=f)
             for pid, (t, b) in titles.items() for k, (s, f) in enumerate([(t, "product_title"), (b, "product_brand")])]  # fmt: skip
    pool = EvidencePool(query_id="q", snippets=snips, product_ids=list(titles))
    persona = make_persona(random.Random(1), 1, hard=["quiet operation required"])
    persona.preferences.brand_avoids = ["Under Armour"]
    persona.preferences.attribute_preferences = ["travel friendly"]
    q = Query(
        query_id="q", query="tactical duffle gray", vertical="Sports & Outdoors", mission="Broad Browse"
    )
    r, used = OfflineGenerator().generate("a-1", q, persona, pool, products)
    assert C.failed_checks(r, [s.evidence_id for s in snips], used) == []
    assert not any("B077KKMFFN" in i for i in used)
    assert bold_spans(r.overview_text) == r.productCategoryList
    assert any("Duffle" in lab or "Tactical" in lab for lab in r.productCategoryList)


# ---- BAD edits ------------------------------------------------------------------------------------
FOOTPRINT = {  # which fields an edit may change (the category slot 0 is mirrored, see defects.py)
    "PREF_CONFLICT": {
        "productCategoryList[0]",
        "bold_categories[0]",
        "category_search_queries[0]",
        "overview_text",
    },
    "INTENT_DRIFT": {
        "productCategoryList[0]",
        "bold_categories[0]",
        "category_search_queries[0]",
        "overview_text",
    },
    "XCOMP_MISMATCH": {f"rqList[{i}]" for i in range(5)} | {"rqList"},
    "REDUNDANCY": {"rqList[1]"},
    "EVIDENCE_MISMATCH": {"attribution_list"} | {f"attribution_list[{i}]" for i in range(40)},
    "OVER_PERSONALIZATION_HALLUCINATION": {"overview_text"},
    "UNSUPPORTED_CLAIM": {"overview_text"},
}


def _unbold_first(ov: str) -> str:
    return re.sub(r"\*\*[^*]+\*\*", "**#**", ov, count=1)


def test_each_edit_changes_exactly_its_gold_location(goods):
    (it, good, _used), (_, donor, _) = goods[0], goods[150]
    persona = it[2].model_copy(update={"preferences": it[2].preferences.model_copy(
        update={"hard_constraints": ["avoid leather", "quiet operation required"]})})  # fmt: skip
    for fam in T.FAMILIES:
        bad, defects = inject(good, persona, (fam,), donor, random.Random(0))
        assert defects == [Defect(family=fam, location=T.DEFECTS[fam][1], group=T.DEFECTS[fam][0])]
        changed = changed_fields(good, bad)
        assert changed and changed <= FOOTPRINT[fam], (fam, changed)
        if fam in ("PREF_CONFLICT", "INTENT_DRIFT"):
            assert "productCategoryList[0]" in changed
            assert _unbold_first(bad.overview_text) == _unbold_first(good.overview_text)  # only the bold term
            new = bad.productCategoryList[0]
            assert bold_spans(bad.overview_text)[0] == bad.bold_categories[0] == new
            assert new.lower() not in {c.lower() for c in good.productCategoryList} and len(new) <= 15
        if fam == "PREF_CONFLICT":
            assert new == "Leather Bags"  # conflict_label of the FIRST hard constraint
        if fam == "INTENT_DRIFT":
            assert new in OFF_INTENT_POOL
        if fam == "XCOMP_MISMATCH":
            assert bad.rqList == donor.rqList
        if fam == "REDUNDANCY":
            assert bad.rqList[1] == bad.rqList[0] == good.rqList[0] and bad.rqList[2:] == good.rqList[2:]
        if fam == "EVIDENCE_MISMATCH":
            assert bad.attribution_list == donor.attribution_list
        if fam == "OVER_PERSONALIZATION_HALLUCINATION":
            m = re.match(r"Given their (.+?), ", bad.overview_text)
            assert m and m.group(1) in FABRICATED_HISTORY
            assert m.group(1).lower() not in json.dumps(persona.history.model_dump()).lower()
            assert bad.overview_text[m.end() :].lower() == good.overview_text.lower()
        if fam == "UNSUPPORTED_CLAIM":
            assert bad.overview_text.startswith(good.overview_text)
            assert bad.overview_text[len(good.overview_text) :].strip() in FABRICATED_CLAIMS
    # the strict reading: only productCategoryList[0] changes, and the checks then see it
    bad, _ = inject(good, persona, ("PREF_CONFLICT",), donor, random.Random(0), mirror=False)
    assert changed_fields(good, bad) == {"productCategoryList[0]"}
    assert not C.bold_category_match(bad)


def test_edits_are_deterministic_and_history_is_never_real():
    r = good_response()
    hist = [PurchaseItem(asin="X1", product_name="Dyson Airwrap Complete", brand="Dyson")]
    persona = make_persona(random.Random(0), 0, hard=[], history=hist)
    donor = r.model_copy(update={"rqList": [f"other {i}" for i in range(5)], "attribution_list": ["M:Z:0"]})
    a = inject(r, persona, ("OVER_PERSONALIZATION_HALLUCINATION",), donor, random.Random(3))
    b = inject(r, persona, ("OVER_PERSONALIZATION_HALLUCINATION",), donor, random.Random(3))
    assert a == b and "Dyson" not in a[0].overview_text
    # no known hard constraint: PREF_CONFLICT falls back to an avoided brand, then to the budget
    persona.preferences.brand_avoids = ["Nexpak"]
    assert (
        inject(r, persona, ("PREF_CONFLICT",), donor, random.Random(0))[0].productCategoryList[0] == "Nexpak"
    )
    persona.preferences.brand_avoids = []
    lab = inject(r, persona, ("PREF_CONFLICT",), donor, random.Random(0))[0].productCategoryList[0]
    assert lab in ("Luxury Splurges", "Bargain Bin")
    with pytest.raises(ValueError, match="different rqList"):
        inject(r, persona, ("XCOMP_MISMATCH",), r, random.Random(0))


def test_tier_combinations_apply_and_same_group_pairs_are_refused(goods):
    (it, good, _used), (_, donor, _) = goods[3], goods[200]
    persona = it[2]
    sizes = {}
    for tier in (1, 2, 3, 4):
        combos = T.tier_combinations(tier)
        sizes[tier] = len(combos)
        for k, combo in enumerate(combos):
            bad, defects = inject(good, persona, tuple(reversed(combo)), donor, random.Random(k))
            assert [d.family for d in defects] == list(combo)  # canonical order whatever the input order
            allowed = set().union(*(FOOTPRINT[f] for f in combo))
            assert changed_fields(good, bad) <= allowed
            fam, loc = gold_strings(defects)
            assert fam == "+".join(combo)
            assert loc == "+".join(T.DEFECTS[f][1] for f in combo)
    assert sizes == {1: 7, 2: 18, 3: 20, 4: 4}
    for f1 in T.FAMILIES:
        for f2 in T.FAMILIES:
            if f1 != f2 and T.DEFECTS[f1][0] == T.DEFECTS[f2][0]:
                with pytest.raises(ValueError, match="never combined"):
                    inject(good, persona, (f1, f2), donor, random.Random(0))
    with pytest.raises(ValueError, match="unknown"):
        inject(good, persona, ("TYPO",), donor, random.Random(0))


def test_gold_strings_canonical_order():
    ds = [Defect(family="OVER_PERSONALIZATION_HALLUCINATION", location="overview_text", group="overview"),
          Defect(family="EVIDENCE_MISMATCH", location="attribution_list", group="attributions")]  # fmt: skip
    assert gold_strings(ds) == ("EVIDENCE_MISMATCH+OVER_PERSONALIZATION_HALLUCINATION",
                                "attribution_list+overview_text")  # fmt: skip


def test_which_edits_the_checks_see(goods):
    """Stealth: PREF_CONFLICT, INTENT_DRIFT, XCOMP_MISMATCH, OVER_PERS., UNSUPPORTED_CLAIM pass all
    twelve checks on a GOOD that does; REDUNDANCY and EVIDENCE_MISMATCH never do."""
    seen = {f: 0 for f in T.FAMILIES}
    n = 0
    for i in range(0, 300, 10):
        (it, good, used), (_, donor, _) = goods[i], goods[(i + 150) % 300]
        cand = [s.evidence_id for s in it[3].snippets]
        if C.failed_checks(good, cand, used):
            continue
        n += 1
        for fam in T.FAMILIES:
            bad, _ = inject(good, it[2], (fam,), donor, random.Random(i))
            failed = C.failed_checks(bad, cand, used, to_xml(bad))
            seen[fam] += bool(failed)
            if fam == "REDUNDANCY":
                assert failed == ["rq_count_unique"]
            if fam == "EVIDENCE_MISMATCH":
                assert failed == ["evidence_id_validity", "evidence_exact_match"]
    assert n >= 25
    assert seen["REDUNDANCY"] == seen["EVIDENCE_MISMATCH"] == n
    for fam in ("PREF_CONFLICT", "INTENT_DRIFT", "XCOMP_MISMATCH", "OVER_PERSONALIZATION_HALLUCINATION",
                "UNSUPPORTED_CLAIM"):  # fmt: skip
        assert seen[fam] == 0, fam


# ---- the LLM generator through a real gateway ---------------------------------------------------
def test_prompt_file_is_b9_with_five_slots():
    text = load_prompt_text()
    assert text.startswith("You are generating a PACEShop V2 benchmark response.")
    slots = set(re.findall(r"(?<!\{)\{([a-z_]+)\}(?!\})", text))
    assert slots == {"assignment_id", "query", "persona_json", "group_json", "evidence_json"}
    assert "[QUERY]" not in text and "**...**" in text
    text.format(assignment_id="a", query="q", persona_json="{}", group_json="[]", evidence_json="[]")


def _good_json_backend(messages, params):
    """A stand-in model that answers the B.9 prompt with a contract-valid GOOD (offline generator)."""
    content = messages[-1]["content"]
    aid = re.search(r"^Assignment: (.+)$", content, re.M).group(1)
    query = re.search(r"^Query: (.+)$", content, re.M).group(1)
    snippets = json.loads(re.search(r"^Candidate evidence: (.+)$", content, re.M).group(1))
    persona = Persona.model_validate({**json.loads(re.search(r"^Persona JSON: (.+)$", content, re.M).group(1)),
                                      "taxonomy": make_persona(random.Random(0), 0).taxonomy.model_dump()})  # fmt: skip
    pool = EvidencePool(query_id="q", snippets=snippets,
                        product_ids=list(dict.fromkeys(s["canonical_product_id"] for s in snippets)))  # fmt: skip
    products = {s.canonical_product_id: Product(product_id=s.canonical_product_id, title=s.title, brand=s.brand,
                                                domain="General Merchandise") for s in pool.snippets}  # fmt: skip
    q = Query(query_id="q", query=query, vertical="General Merchandise", mission="Broad Browse")
    r, _ = OfflineGenerator().generate(aid, q, persona, pool, products)
    if aid.endswith("3"):
        return "not json at all"
    if aid.endswith("4"):
        return json.dumps({**r.model_dump(), "scores": [1]})
    return to_struct_json(r)


register_local("test-paceshop-good", _good_json_backend, "test: contract-valid PACEShop GOOD answers")


def test_llm_generator_contract_parse_and_rejections(world, tmp_path):
    inputs, _ = world
    items = inputs[:6]
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    gen = LLMGenerator(gw, "local/test-paceshop-good", load_prompt_text())
    assert gen.name == "llm:local/test-paceshop-good"
    calls = gen.calls(items)
    assert [c.item_id for c in calls] == [it[0] for it in items]
    assert all(c.params == {"temperature": 0} and c.schema["required"] == list(RESPONSE_KEYS) for c in calls)
    assert (
        items[0][1].query in calls[0].messages[0]["content"] and "M:B0000" in calls[0].messages[0]["content"]
    )
    res = gen.run(items, "good")
    for (aid, *_), (resp, used, reason) in zip(items, res, strict=True):
        if aid.endswith("3"):
            assert resp is None and reason.startswith("contract parse failure: invalid JSON")
        elif aid.endswith("4"):
            assert resp is None and "contract parse failure" in reason and "scores" in reason
        else:
            assert reason is None and resp is not None and used == resp.attribution_list
    # random documents satisfying the contract are rejected with a reason, not repaired
    rnd = LLMGenerator(gw, "local/schema-sampler", load_prompt_text())
    rows = gw.run(rnd.calls(items), "random")
    assert all(r["status"] == "ok" for r in rows)
    out = rnd.parse(rows, items)
    for row, (resp, used, reason) in zip(rows, out, strict=True):
        assert resp is None and used == [] and reason.startswith("failed hard checks:")
        assert "bold_count" in reason and "evidence_id_validity" in reason
        if row["parsed"]["attribution_list"]:
            assert "not in pool" in reason and row["parsed"]["attribution_list"][0] in reason
    # a gateway error row is a rejection too
    assert rnd.parse([{"item_id": items[0][0], "status": "error", "error": "boom"}], items[:1])[0][2] == (
        "contract parse failure: boom"
    )
