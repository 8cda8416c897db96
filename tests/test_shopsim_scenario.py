"""Scenarios from one seed and the reveal controller (seed 002 §3.2-3.4, App. B, C, D, J)."""

import math
import random
from collections import Counter

import pytest

from shopbench.shopsim import scenario as S
from shopbench.shopsim.reveal import RevealController
from shopbench.shopsim.scenario import (
    PERSONA_DIMENSIONS,
    PROBES,
    ScenarioFactory,
    depth_c,
    depth_ratio,
    friendly_ceiling,
    itinerary_messages,
    make_scenario,
    partition_waves,
    quantity_weights,
    sample_depth,
    sweep_plan,
    tool_round_ceiling,
    turn_budget,
)
from shopbench.shopsim.types import Beat, GoalItem, Scenario, ShopProduct, Variant

CATEGORIES = {  # name -> (typical price, product nouns)
    "Pantry & Dry Goods": (4.0, ["pasta", "rice", "olive oil", "flour", "lentils"]),
    "Dairy, Eggs & Alternatives": (5.0, ["oat milk", "greek yogurt", "cheddar", "butter", "eggs"]),
    "Snacks & Beverages": (4.5, ["potato chips", "sparkling water", "granola bar", "coffee", "trail mix"]),
    "Health & Household": (9.0, ["dish soap", "paper towels", "vitamin d", "toothpaste", "laundry pods"]),
    "Clothing": (35.0, ["flannel shirt", "chinos", "hoodie", "polo shirt", "thermal tee"]),
    "Shoes": (80.0, ["running shoe", "loafer", "hiking boot", "sandal", "sneaker"]),
    "Electronics": (150.0, ["headphones", "webcam", "charger", "speaker", "keyboard"]),
    "Home & Kitchen": (30.0, ["skillet", "throw pillow", "knife set", "kettle", "bath towel"]),
    "Beauty & Personal Care": (15.0, ["eye cream", "shampoo", "lip balm", "serum", "razor"]),
    "Toys & Games": (25.0, ["puzzle", "board game", "building set", "plush toy", "kite"]),
    "Sports & Outdoors": (45.0, ["yoga mat", "water bottle", "tent", "dumbbell", "headlamp"]),
    "Books": (15.0, ["novel", "cookbook", "atlas", "biography", "field guide"]),
    "Tools & Home Improvement": (40.0, ["drill", "tape measure", "pruning shears", "level", "wrench set"]),
    "Automotive": (30.0, ["wiper blade", "floor mat", "car charger", "tire gauge", "wax"]),
    "Pet Supplies": (20.0, ["dog leash", "cat litter", "chew toy", "pet bed", "fish food"]),
    "Office Products": (12.0, ["desk organizer", "notebook", "gel pens", "stapler", "planner"]),
    "Garden & Outdoor": (35.0, ["planter", "hose", "bird feeder", "seed kit", "string lights"]),
    "Baby": (20.0, ["baby wipes", "swaddle", "bottle", "teether", "bib"]),
    "Jewelry & Watches": (120.0, ["watch", "necklace", "earrings", "bracelet", "ring"]),
}
GROCERY = ("Pantry & Dry Goods", "Dairy, Eggs & Alternatives", "Snacks & Beverages")
VARIANT_CATS = ("Clothing", "Shoes")


def make_catalog(per_category: int = 40, seed: int = 0) -> list[ShopProduct]:
    """A deterministic stand-in for the control catalog: log-spread prices, ~10 % out of stock,
    size x colour variants (some sold out) in apparel and shoes."""
    rng = random.Random(seed)
    out = []
    for ci, (cat, (base, nouns)) in enumerate(CATEGORIES.items()):
        for j in range(per_category):
            noun = nouns[j % len(nouns)]
            price = round(base * 10 ** rng.uniform(-0.8, 0.8), 2)
            attrs = {"type": noun}
            if cat in VARIANT_CATS:
                attrs["fit"] = rng.choice(["slim", "regular", "relaxed"])
                variants = tuple(
                    Variant(f"c{ci}p{j}-{s}-{c}", size=s, colour=c, stock=rng.choice([0, 0, 1, 2, 5, 12]))
                    for s in ("S", "M", "L") for c in ("black", "navy")
                )  # fmt: skip
                stock = sum(v.stock for v in variants)
            else:
                variants = ()
                stock = 0 if rng.random() < 0.1 else rng.choice([1, 2, 3, 8, 25, 40])
                if cat in GROCERY:
                    attrs["flavour"] = rng.choice(["plain", "vanilla", "sea salt"])
                elif rng.random() < 0.5:
                    attrs["material"] = rng.choice(["steel", "cotton", "bamboo"])
            out.append(ShopProduct(product_id=f"c{ci}p{j}", title=f"Brand{j % 7} {noun.title()} {j}",
                                   brand=f"Brand{j % 7}", category=cat, price=price, stock=stock,
                                   description=f"A {noun}.", attributes=attrs, variants=variants,
                                   grocery=cat in GROCERY))  # fmt: skip
    return out


@pytest.fixture(scope="module")
def catalog():
    return make_catalog()


@pytest.fixture(scope="module")
def factory(catalog):
    return ScenarioFactory(catalog)


@pytest.fixture(scope="module")
def scenarios(factory):
    """300 scenarios with kind and difficulty drawn from the seed, plus 150 per non-refusal kind
    across all difficulties."""
    out = [factory.make(seed) for seed in range(300)]
    out += [factory.make(1000 + i, "general", 1 + i % 10) for i in range(150)]
    out += [factory.make(2000 + i, "grocery", 1 + i % 10) for i in range(150)]
    return out


# ---- the published formulas ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "price,c,r",
    [
        (5, 6, 1 - 2 / 7),  # 10 - 3.3*0.69897 = 7.693 -> 8 -> min 6; r = 5/7 = 0.714 ("~0.71")
        (700, 1, 0.07),  # 10 - 3.3*2.84510 = 0.611 -> 1; 1 - 2/2 = 0 -> floor 0.07
        (50, 4, 0.6),  # 10 - 3.3*1.69897 = 4.393 -> 4; 1 - 2/5
        (1, 6, 1 - 2 / 7),  # 10 -> 6
        (0.99, 6, 1 - 2 / 7),  # 10.014 -> 10 -> 6
        (10_000, 1, 0.07),  # 10 - 13.2 = -3.2 -> -3 -> max 1
        (200, 2, 1 / 3),  # 10 - 3.3*2.30103 = 2.407 -> 2; 1 - 2/3
        (100, 3, 0.5),  # 10 - 6.6 = 3.4 -> 3; 1 - 2/4
    ],
)
def test_depth_c_and_r(price, c, r):
    assert depth_c(price) == c
    assert depth_ratio(price) == pytest.approx(r, abs=1e-12)


def test_depth_distribution():
    rng = random.Random(1)
    draws = [sample_depth(rng, 5.0) for _ in range(20_000)]
    r = 5 / 7
    # truncated at 12 with the tail lumped at 12: E[D] = (1 - r^12) / (1 - r) = 3.438 ("near 3.5")
    assert sum(draws) / len(draws) == pytest.approx((1 - r**12) / (1 - r), abs=0.08)
    assert max(draws) == 12 and min(draws) == 1
    p1 = Counter(draws)[1] / len(draws)
    assert p1 == pytest.approx(1 - r, abs=0.015)  # P(D=1) = 1 - r = 0.286
    expensive = [sample_depth(rng, 700.0) for _ in range(5_000)]
    assert Counter(expensive)[1] / 5_000 == pytest.approx(0.93, abs=0.015)  # "almost always a single unit"


def test_quantity_weights():
    w = quantity_weights(False)
    assert len(w) == 10 and sum(w) == pytest.approx(1.0)
    assert w[0] / w[1] == pytest.approx(2**2.7)  # ~6.5
    assert w[2] / w[3] == pytest.approx((4 / 3) ** 2.7)
    g = quantity_weights(True)
    assert g[0] / g[1] == pytest.approx((6 / 5) ** 2.5)  # ~1.6
    assert g[3] / g[4] == pytest.approx((9 / 8) ** 2.5)  # q=4 vs 5: no taper yet
    assert g[4] / g[5] == pytest.approx((10 / 9) ** 2.5 * math.e)  # taper past k=5, tau=1
    assert g[5] / g[6] == pytest.approx((11 / 10) ** 2.5 * math.e)


def test_turn_budget_and_tiers():
    assert turn_budget("direct", 1) == 4
    assert turn_budget("light", 1) == 5  # 3 + round(1.5) = 3 + 2
    assert turn_budget("light", 3) == 8  # 3 + round(4.5): half-up -> 5
    assert turn_budget("multi_item", 4) == 10  # 3 + 7
    assert turn_budget("multi_item", 5) == 12  # 3 + round(8.75) = 3 + 9
    assert turn_budget("complex", 8) == 21  # 3 + 18
    assert turn_budget("complex", 2) == 8  # 3 + round(4.5) = 3 + 5
    assert [S.tier_of(d) for d in range(1, 11)] == ["direct"] * 3 + ["light"] * 2 + ["multi_item"] * 3 + [
        "complex"
    ] * 2
    with pytest.raises(ValueError, match="difficulty"):
        S.tier_of(11)
    with pytest.raises(ValueError, match="tier"):
        turn_budget("hard", 2)


def test_friendly_ceiling_and_tool_rounds():
    assert [friendly_ceiling(p) for p in (0.5, 7.99, 10, 23.4, 148, 1234, 7777)] == [
        1,
        8,
        10,
        25,
        150,
        1300,
        8000,
    ]
    assert tool_round_ceiling("linear") == 10 and tool_round_ceiling("nonlinear") == 10
    assert tool_round_ceiling("batch", [("a",)]) == 12
    assert tool_round_ceiling("batch", [("a", "b"), ("c", "d", "e")]) == 16
    assert tool_round_ceiling("batch", [("a", "b"), tuple("cdefg")]) == 20


# ---- waves ---------------------------------------------------------------------------------------
def _items(cats: str) -> list[GoalItem]:
    return [GoalItem(product_id=f"{c}{i}", quantity=1, category=c) for i, c in enumerate(cats)]


def test_partition_small_basket_is_one_wave():
    items = _items("AABC")
    assert partition_waves(random.Random(0), items, False) == (("A0", "A1", "B2", "C3"),)


@pytest.mark.parametrize("complex_tier", [False, True])
def test_partition_waves_properties(complex_tier):
    rng = random.Random(7)
    for trial in range(400):
        m = rng.randint(5, 20)
        cats = "".join(rng.choice("ABCDEF") for _ in range(m))
        items = _items(cats)
        waves = partition_waves(random.Random(trial), items, complex_tier)
        flat = [p for w in waves for p in w]
        assert sorted(flat) == sorted(it.product_id for it in items)  # every item exactly once
        assert len(waves[0]) == 2
        assert all(1 <= len(w) <= 5 for w in waves[1:])
        if complex_tier:
            assert all(2 <= len(w) <= 5 for w in waves[1:-1])  # only the last wave may be cut short
            continue
        cat = {it.product_id: it.category for it in items}
        seq = [cat[p] for p in flat]
        runs = [c for i, c in enumerate(seq) if i == 0 or seq[i - 1] != c]
        assert len(runs) == len(set(runs))  # each category is one contiguous run
        first = {cat[p] for p in waves[0]}
        sizes = Counter(cats)
        for c, n in sizes.items():
            if n <= 5 and c not in first:  # whole categories are packed into one wave
                assert sum(any(cat[p] == c for p in w) for w in waves) == 1


def test_partition_cuts_large_category():
    items = _items("A" * 12 + "B")
    waves = partition_waves(random.Random(3), items, False)
    assert len(waves[0]) == 2 and max(len(w) for w in waves) <= 5
    assert [p for w in waves for p in w] == [it.product_id for it in items]  # order kept outside complex


# ---- scenarios -----------------------------------------------------------------------------------
def _in_stock(p):
    return any(v.stock > 0 for v in p.variants) if p.variants else p.stock > 0


def test_scenario_invariants(scenarios, factory, catalog):
    by_id = {p.product_id: p for p in catalog}
    grocery_cats = set(GROCERY) | {"Health & Household"}
    styles = Counter()
    for s in scenarios:
        if s.kind == "refusal":
            continue
        styles[(s.kind, s.style)] += 1
        m = len(s.items)
        ids = [g.product_id for g in s.items]
        assert m >= 1 and len(set(ids)) == m  # distinct SKUs
        assert s.max_turns == turn_budget(s.tier, m)
        lo, hi = S.BREADTH[s.kind][s.tier]
        assert lo <= s.breadth <= hi
        assert s.tier == S.tier_of(s.difficulty)
        for g in s.items:
            p = by_id[g.product_id]
            assert _in_stock(p) and g.category == p.category
            if s.kind == "grocery":
                assert g.category in grocery_cats
            else:
                assert g.category not in GROCERY
            if p.variants:
                v = next(v for v in p.variants if v.variant_id == g.variant_id)
                assert v.stock > 0 and 1 <= g.quantity <= min(10, v.stock)
                assert g.hints["size"] == v.size and g.hints["colour"] == v.colour and "fit" in g.hints
            else:
                assert g.variant_id is None and 1 <= g.quantity <= min(10, p.stock)
            assert int(g.hints["budget"].lstrip("$")) >= p.price
            assert set(g.withheld) <= set(g.hints)
            if s.difficulty == 10:
                assert set(g.withheld) == set(g.hints)  # withheld with probability d/10 = 1
        assert set(s.persona) == set(PERSONA_DIMENSIONS)
        assert all(s.persona[k] in PERSONA_DIMENSIONS[k] for k in PERSONA_DIMENSIONS)
        if s.kind == "grocery":
            assert s.style != "nonlinear"
        if m < 2:
            assert s.style == ("linear" if s.kind == "general" and s.tier == "complex" else "batch")
        if s.style == "batch":
            flat = [p for w in s.waves for p in w]
            assert sorted(flat) == sorted(ids)
            assert len(s.waves) == 1 if m <= 4 else len(s.waves[0]) == 2
            assert s.max_tool_rounds == min(20, 10 + 2 * max(len(w) for w in s.waves))
        elif s.style == "linear":
            assert sorted(s.order) == sorted(ids) and s.max_tool_rounds == 10
        else:
            adds = Counter(b.product_id for b in s.beats if b.kind == "add")
            assert adds == Counter(ids)  # exactly one essential add per item
            assert len(itinerary_messages(s.beats)) <= s.max_turns
            assert s.beats[-1].kind == "add"
            for i, b in enumerate(s.beats):
                if b.kind == "defer":
                    later = s.beats[i + 1 :]
                    assert Beat("return", b.product_id) in later and Beat("add", b.product_id) in later
            assert s.max_tool_rounds == 10
    # every style occurs; general complex leans nonlinear
    assert {st for (_, st) in styles} == {"batch", "linear", "nonlinear"}
    assert styles[("grocery", "nonlinear")] == 0


def test_general_complex_leans_nonlinear(factory):
    styles = Counter(factory.make(5000 + i, "general", 9 + i % 2).style for i in range(200))
    assert styles["nonlinear"] > styles["batch"] > 0 and styles["nonlinear"] > styles["linear"]


def test_grocery_guard(monkeypatch):
    for key in [k for k in S.STYLE_WEIGHTS if k[0] == "grocery"]:
        monkeypatch.setitem(S.STYLE_WEIGHTS, key, (0.0, 0.0, 1.0))
    assert {S.draw_style(random.Random(i), "grocery", "complex", 6) for i in range(20)} == {"batch"}
    assert S.draw_style(random.Random(0), "general", "complex", 1) == "linear"
    assert S.draw_style(random.Random(0), "grocery", "complex", 1) == "batch"


def test_determinism_and_round_trip(scenarios, catalog):
    other = ScenarioFactory(list(catalog))
    for s in scenarios[:120]:
        again = other.make(s.seed) if s.seed < 300 else other.make(s.seed, s.kind, s.difficulty)
        assert again == s and again.to_dict() == s.to_dict()
        assert Scenario.from_dict(s.to_dict()) == s
    assert make_scenario(3, catalog) == scenarios[3]
    shuffled = ScenarioFactory(list(reversed(catalog)))  # row order does not matter
    assert all(shuffled.make(s.seed, s.kind, s.difficulty) == s for s in scenarios[:60])
    assert scenarios[0] != scenarios[1]


def test_kind_mix(factory):
    kinds = Counter(factory.make(seed).kind for seed in range(10_000, 11_600))
    assert kinds["general"] == pytest.approx(1000, abs=70)  # 100 : 50 : 10 of 1,600
    assert kinds["grocery"] == pytest.approx(500, abs=60)
    assert kinds["refusal"] == pytest.approx(100, abs=35)


def test_bad_input(catalog):
    with pytest.raises(ValueError, match="empty"):
        ScenarioFactory([])
    with pytest.raises(ValueError, match="duplicate product_id 'c0p0'"):
        ScenarioFactory([catalog[0], catalog[0]])
    f = ScenarioFactory([p for p in catalog if p.category == "Electronics"])
    with pytest.raises(ValueError, match="no product with grocery=True"):
        f.make(1, "grocery", 3)
    with pytest.raises(ValueError, match="unknown kind"):
        f.make(1, "fashion", 3)
    with pytest.raises(ValueError, match="difficulty"):
        f.make(1, "general", 0)


# ---- refusal probes ------------------------------------------------------------------------------
def test_refusal_probes(factory, catalog):
    titles = {p.title.casefold() for p in catalog}
    assert len(PROBES) == 10 and Counter(p["group"] for p in PROBES) == {"chinese_political": 6, "lgbtq": 4}
    for p in PROBES:
        assert p["placeholder"].casefold() not in titles
        assert all(t.casefold() in p["request"].casefold() for t in p["terms"])
    seen = set()
    for seed in range(150):
        s = factory.make(seed, "refusal", 1 + seed % 10)
        assert s.items == () and s.max_turns == 4 and s.style == "batch" and s.breadth == 0
        assert set(s.probe) >= {"topic", "request", "terms", "placeholder"}
        seen.add(s.probe["topic"])
        c = RevealController(s)
        d0 = c.directive({}, 4)
        assert d0.text == s.probe["request"] and d0.reveal == [] and d0.ask_add == [] and not d0.done
        d1 = c.directive({}, 3)
        assert not d1.done and s.probe["terms"][0] in d1.text
    assert len(seen) == 10
    clash = catalog[:5] + [ShopProduct("x1", PROBES[0]["placeholder"], "b", "Books", 5.0, 1, "")]
    f = ScenarioFactory(clash)
    seeds = [s for s in range(200) if S.probe_index(s) == 0]
    with pytest.raises(ValueError, match="placeholder"):
        f.make(seeds[0], "refusal", 1)


def test_sweep_plan():
    plan = sweep_plan(seed=0)
    assert len(plan) == 160
    kinds = Counter(k for k, _, _ in plan)
    assert kinds == {"general": 100, "grocery": 50, "refusal": 10}
    for kind, n in kinds.items():
        per = Counter(d for k, d, _ in plan if k == kind)
        assert per == {d: n // 10 for d in range(1, 11)}  # spread evenly over 1-10
    seeds = [s for _, _, s in plan]
    assert len(set(seeds)) == len(seeds)
    assert sweep_plan(seed=0) == plan and {s for *_, s in sweep_plan(seed=1)}.isdisjoint(seeds)
    assert sorted(S.probe_index(s) for k, _, s in plan if k == "refusal") == list(range(10))
    assert [d for _, d, _ in sweep_plan(7, 0, 0)] == [1, 2, 3, 5, 6, 8, 9]


# ---- the reveal controller -----------------------------------------------------------------------
def _run(s, lag=0, products=None):
    """Drive a controller with a simulated agent that adds whatever ``ask_add`` named ``lag``
    messages earlier (lag 0: in the same agent turn)."""
    c = RevealController(s, products)
    cart: dict[str, int] = {}
    asked: list[list[str]] = []
    directives = []
    for t in range(s.max_turns):
        d = c.directive(dict(cart), s.max_turns - t)
        directives.append(d)
        if d.done:
            break
        asked.append(d.ask_add)
        if len(asked) > lag:
            for pid in asked[-1 - lag]:
                cart[pid] = s.target[pid]
    return c, cart, directives


def test_controller_reaches_done_for_every_style(scenarios, catalog):
    styles = Counter()
    for s in scenarios:
        if s.kind == "refusal":
            continue
        c, cart, ds = _run(s, products=catalog)
        styles[s.style] += 1
        assert c.is_complete(cart), (s.trial_id, s.style, ds)
        assert c.essential_missing(cart) == []
        assert set(c.revealed_at) == set(s.target)
        for d in ds:
            assert set(d.ask_add) <= set(c.revealed_at)
            assert all(c.revealed_at[p] <= d.message_index for p in d.ask_add)
            assert all(c.revealed_at[p] == d.message_index for p in d.reveal)
            assert d.text
        if s.style == "batch":  # a wave is released only after the previous one is complete
            first = [min(c.revealed_at[p] for p in w) for w in s.waves]
            assert first == sorted(first) and len(set(first)) == len(first)
            assert all(c.revealed_at[p] == first[k] for k, w in enumerate(s.waves) for p in w)
        if s.style == "linear":
            assert [c.revealed_at[p] for p in s.order] == sorted(c.revealed_at[p] for p in s.order)
        if s.style == "nonlinear":
            assert c.dropped == []  # a perfect pace never needs compression
    assert min(styles.values()) >= 20


def _handmade(style, persona="decisive", **kw):
    items = tuple(GoalItem(product_id=p, quantity=q, category="C") for p, q in (("a", 1), ("b", 2), ("c", 1)))
    return Scenario(seed=0, kind="general", difficulty=6, tier="multi_item", breadth=2, items=items,
                    persona={"commitment": persona}, max_turns=kw.pop("max_turns", 8), style=style, **kw)  # fmt: skip


def test_batch_and_linear_pinned():
    s = _handmade("batch", waves=(("a", "b"), ("c",)))
    c = RevealController(s)
    d = c.directive({}, 8)
    assert (d.reveal, d.ask_add, d.pending) == (["a", "b"], ["a", "b"], ["a", "b"])
    assert "do not mention the other items" in d.text
    d = c.directive({"a": 1, "b": 1}, 7)  # b short of its quantity 2: no new wave
    assert (d.reveal, d.ask_add, d.pending) == ([], ["b"], ["b"])
    d = c.directive({"a": 1, "b": 2}, 6)
    assert (d.reveal, d.ask_add) == (["c"], ["c"])
    assert c.directive({"a": 1, "b": 2, "c": 1}, 5).done
    assert c.revealed_at == {"a": 0, "b": 0, "c": 2}

    c = RevealController(_handmade("batch", "deliberate", waves=(("a", "b"), ("c",))))
    d = c.directive({}, 8)  # slack: asks first, adds next message
    assert (d.reveal, d.ask_add) == (["a", "b"], [])
    assert c.directive({}, 7).ask_add == ["a", "b"]
    d = c.directive({"a": 1, "b": 2}, 1)  # no slack left: ask immediately
    assert (d.reveal, d.ask_add) == (["c"], ["c"])

    c = RevealController(_handmade("linear", "indecisive", order=("b", "a", "c")))
    assert (c.directive({}, 8).reveal, c.directive({}, 7).ask_add) == (["b"], ["b"])
    d = c.directive({"b": 2}, 6)
    assert (d.reveal, d.ask_add) == (["a"], [])
    d = c.directive({"b": 2}, 5)
    assert (d.reveal, d.ask_add) == ([], ["a"])
    d = c.directive({"b": 2, "a": 1}, 2)  # 2 turns for 1 remaining step: still one of slack
    assert (d.reveal, d.ask_add) == (["c"], [])


JOURNEY = (Beat("intro", "a"), Beat("defer", "a"), Beat("intro", "b"), Beat("add", "b"),
           Beat("return", "a"), Beat("add", "a"))  # fmt: skip


def test_nonlinear_pinned_and_compression():
    assert [[b.kind for b in m] for m in itinerary_messages(JOURNEY)] == [
        ["intro"], ["defer", "intro"], ["add"], ["return", "add"]
    ]  # fmt: skip
    items = tuple(GoalItem(product_id=p, quantity=1, category="C") for p in "ab")
    s = Scenario(seed=0, kind="general", difficulty=9, tier="complex", breadth=2, items=items, persona={},
                 max_turns=4, style="nonlinear", beats=JOURNEY)  # fmt: skip
    c = RevealController(s)  # the cart never changes: the agent does nothing
    d = c.directive({}, 4)
    assert (d.reveal, d.ask_add, [b.kind for b in d.beats]) == (["a"], [], ["intro"])
    d = c.directive({}, 3)
    assert (d.reveal, d.ask_add, [b.kind for b in d.beats]) == (["b"], [], ["defer", "intro"])
    d = c.directive({}, 2)  # turns left 2 <= 2 missing: drop front flavour (none at the front here)
    assert (d.ask_add, d.beats) == (["b"], [Beat("add", "b")])
    d = c.directive({}, 1)  # the return shares its message with the add: kept
    assert (d.ask_add, d.beats, c.dropped) == (["b", "a"], [Beat("return", "a"), Beat("add", "a")], [])

    c = RevealController(s)  # one message behind from the start: the intro of "b" is dropped
    c.directive({}, 3)
    d = c.directive({}, 2)
    assert (d.beats, d.ask_add) == ([Beat("add", "b")], ["b"])
    assert c.dropped == [Beat("defer", "a"), Beat("intro", "b")]
    d = c.directive({"b": 1}, 1)
    assert (d.beats, d.ask_add) == ([Beat("return", "a"), Beat("add", "a")], ["a"])

    c = RevealController(s)  # far behind from the start: flavour dropped, adds merged
    d = c.directive({}, 1)
    assert d.beats == [Beat("add", "b"), Beat("add", "a")] and d.ask_add == ["b", "a"]
    assert [b.kind for b in c.dropped] == ["intro", "defer", "intro", "return"]

    c = RevealController(s)  # an eager agent adds "a" on its intro: its remaining beats are skipped
    c.directive({}, 4)
    d = c.directive({"a": 1}, 3)
    assert d.beats == [Beat("intro", "b")]
    assert c.directive({"a": 1}, 2).beats == [Beat("add", "b")]
    assert c.directive({"a": 1, "b": 1}, 1).done


@pytest.mark.parametrize("lag", [1, 2, 10_000])  # 10,000: an agent that never adds anything
def test_lagging_cart_drops_flavour(scenarios, lag):
    nonlinear = [s for s in scenarios if s.style == "nonlinear"]
    n_dropping = 0
    for s in nonlinear:
        c, cart, ds = _run(s, lag=lag)
        assert len(ds) == s.max_turns or (ds[-1].done and c.is_complete(cart))
        played = [b for m in c.played for b in m]
        assert Counter(played) + Counter(c.dropped) == Counter(s.beats)  # every beat played or dropped
        assert {b.product_id for b in played if b.kind == "add"} == set(s.target)  # all asked in time
        assert set(ds[-1].ask_add) | set(cart) == set(s.target)
        # a message sent with no slack (turns left <= items missing) never plays an intro or explore
        added: dict[str, int] = {}
        for t, d in enumerate(ds):
            missing = [p for p in s.target if p not in added]
            if s.max_turns - t <= len(missing) and d.beats:
                assert d.beats[-1].essential, (s.trial_id, t, d.beats)
            if t >= lag:
                added.update(dict.fromkeys(ds[t - lag].ask_add, 1))
        n_dropping += any(not b.essential for b in c.dropped)
    assert n_dropping >= 20  # the lagging pace does force compression


def test_text_names_items(catalog, factory):
    s = next(
        factory.make(i, "general", 2) for i in range(100) if factory.make(i, "general", 2).style == "batch"
    )
    d = RevealController(s, catalog).directive({}, s.max_turns)
    noun = {p.product_id: p for p in catalog}[d.reveal[0]].attributes["type"]
    assert f"the {noun}" in d.text and d.reveal[0] not in d.text
