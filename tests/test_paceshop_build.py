"""The PACEShop build end to end at a small scale: splits, tiers, swaps, subsets, files, determinism."""

import hashlib
from collections import Counter

import pytest

from shopbench.paceshop.build import build, load_records, write
from shopbench.paceshop.io import DataFileError


@pytest.fixture(scope="module")
def built(paceshop_small):
    return paceshop_small


def test_counts_and_tiers(built):
    cfg, res = built
    goods, bads = res.by_kind("good"), res.by_kind("bad")
    assert len(res.queries) == cfg.n_queries
    assert len(goods) + len(res.rejected) == cfg.n_queries * cfg.personas_per_query
    assert all(r["reason"].startswith("failed hard checks") for r in res.rejected)
    # one BAD per tier per GOOD, each with gold family and location
    per_base = Counter((b.base_record_id, b.tier) for b in bads)
    assert set(per_base.values()) == {1} and len(per_base) == 4 * len(goods)
    for b in bads:
        assert len(b.defects) == b.tier and b.gold_family and b.gold_location
        assert len({d.group for d in b.defects}) == b.tier  # distinct field groups
        assert b.query == next(g for g in goods if g.record_id == b.base_record_id).query


def test_four_distinct_personas_per_query(built):
    _, res = built
    per_q: dict[str, list[str]] = {}
    for g in res.by_kind("good"):
        per_q.setdefault(g.query_id, []).append(g.persona.persona_id)
    for r in res.rejected:
        per_q.setdefault(r["query_id"], []).append(r["persona_id"])
    assert all(len(v) == 4 and len(set(v)) == 4 for v in per_q.values())


def test_no_holdout_persona_in_train(built):
    _, res = built
    for r in res.records:
        if r.persona.holdout_bundle:
            assert r.split in ("dev", "test"), r.record_id
    splits = Counter(g.split for g in res.by_kind("good"))
    assert splits["test"] == 20 and splits["dev"] == 20
    # a GOOD and its BADs share a split
    split_of = {g.record_id: g.split for g in res.by_kind("good")}
    assert all(b.split == split_of[b.base_record_id] for b in res.by_kind("bad"))


def test_swaps_and_subsets(built):
    cfg, res = built
    swaps = res.by_kind("swap")
    assert swaps and all(
        s.gold_family == "PREF_CONFLICT" and s.gold_location == "persona_swap" for s in swaps
    )
    goods = {g.record_id: g for g in res.by_kind("good")}
    for s in swaps:
        base = goods[s.base_record_id]
        assert s.response == base.response and s.persona != base.persona and base.split == "test"
        assert s.record_id.startswith(base.record_id + "::swap-")
    sub = res.subsets
    assert len(sub["s0_reference"]) == 2 * cfg.s0_per_label
    fams = Counter(next(r for r in res.records if r.record_id == i).gold_family for i in sub["human_calibration"]
                   if not i.startswith("full-good"))  # fmt: skip
    assert set(fams.values()) == {cfg.calibration_bad_per_family} and len(fams) == 7


def test_files_are_deterministic_and_validated(built, tmp_path, paceshop_config):
    cfg, res = built
    a, b = tmp_path / "a", tmp_path / "b"
    write(res, a, cfg)
    write(build(paceshop_config(), progress=False), b, cfg)
    names = sorted(p.name for p in a.iterdir())
    assert "manifest.json" in names and "records_explicit.parquet" in names
    for n in names:
        assert (
            hashlib.sha256((a / n).read_bytes()).digest() == hashlib.sha256((b / n).read_bytes()).digest()
        ), n
    recs = load_records(a)
    assert len(recs) == len(res.records)
    # a corrupted record is named by file, line and field
    lines = (a / "records_packaged.jsonl").read_text().splitlines()
    lines[2] = (
        lines[2].replace('"label":"GOOD"', '"label":"MAYBE"').replace('"label":"BAD"', '"label":"MAYBE"')
    )
    (a / "records_packaged.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(
        DataFileError, match=r"records_packaged\.jsonl, line 3 \(record '.+'\): field 'label'"
    ):
        load_records(a)


def test_other_seed_differs(built, paceshop_config):
    cfg, res = built
    other = build(paceshop_config(seed=4), progress=False)
    assert [g.response for g in other.by_kind("good")][:5] != [g.response for g in res.by_kind("good")][:5]


def test_incomplete_build_is_not_loaded(tmp_path):
    (tmp_path / "records_packaged.jsonl").write_text("")
    with pytest.raises(DataFileError, match="no complete PACEShop build"):
        load_records(tmp_path)


def test_llm_generator_path_rejects_with_reasons(tmp_path, paceshop_config):
    """The LLM generator runs through the gateway; contract-valid but wrong outputs are rejected, not repaired."""
    from shopbench.llm import Gateway, parse_backbones

    gw = Gateway(cache_dir=tmp_path / "c", log_dir=tmp_path / "l", progress=False,
                 backbones=parse_backbones(["local/schema-sampler"]))  # fmt: skip
    cfg = paceshop_config(n_queries=5, generator="local/schema-sampler")
    res = build(cfg, gateway=gw, backbone="local/schema-sampler", progress=False)
    assert len(res.rejected) == 5 * cfg.personas_per_query and not res.by_kind("good")
    assert all(r["reason"] for r in res.rejected)
    assert len(gw.log("10_paceshop_build/good_generation")) == 20


DUMMYJSON = (
    __import__("pathlib").Path(__file__).resolve().parents[1]
    / ".."
    / "shared"
    / "data"
    / "catalog_dummyjson"
    / "products.json"
)


@pytest.mark.skipif(not DUMMYJSON.exists(), reason="../shared/data/catalog_dummyjson is not present")
def test_build_on_an_external_json_catalog(paceshop_config):
    cfg = paceshop_config(catalog={"json": str(DUMMYJSON)})
    res = build(cfg, progress=False)
    assert len(res.products) == 194 and len(res.queries) == cfg.n_queries
    goods = res.by_kind("good")
    assert goods and sum(all(g.checks.values()) for g in goods) / len(goods) > 0.9


def test_build_on_esci_keeps_the_real_queries(tmp_path, paceshop_config):
    """An ESCI source: every candidate is one of the file's own queries (text, query_id, ESCI labels
    kept), none is generated, and Tables 10/11 count those queries (issue 14 §1)."""
    import json

    import pandas as pd

    from shopbench.catalog.importers import write_esci_fixture
    from shopbench.catalog.keywords import normalize_query
    from shopbench.paceshop.tables import table10_verticals

    ex_path, pr_path = write_esci_fixture(tmp_path / "esci", n_queries=60, seed=4, n_products=400)
    ex = pd.read_parquet(ex_path)
    ex = ex[ex.product_locale == "us"]
    real = {f"esci-{qid}": normalize_query(g["query"].iloc[0]) for qid, g in ex.groupby("query_id")}
    labels = {
        f"esci-{qid}": dict(zip(g.product_id, g.esci_label, strict=True)) for qid, g in ex.groupby("query_id")
    }
    cfg = paceshop_config(
        catalog={"esci": {"examples": str(ex_path), "products": str(pr_path)}}, n_queries=12
    )
    res = build(cfg, progress=False)
    assert {q.query_id for q in res.candidate_queries} == set(real)  # all of them, and nothing generated
    assert res.queries and all(q.source == "esci" for q in res.queries)
    for q in res.queries:
        assert q.query == real[q.query_id] and q.esci_labels == labels[q.query_id]
    goods = res.by_kind("good")
    assert goods and all(g.query == real[g.query_id] for g in goods)
    assert int(table10_verticals(res).loc["Total", "backbone"]) == len(real)  # "Backbone": every real query
    write(res, tmp_path / "out", cfg)
    first = json.loads((tmp_path / "out" / "queries.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["query_id"].startswith("esci-") and set(first["esci_labels"].values()) <= set("ESCI")
