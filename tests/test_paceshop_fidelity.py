"""Issue 15, seed 000: each deviation fixed, with the paper's sentence it follows.

Category-edit readings (B.9), persona swaps drawn from the pool and balanced (Table 27, S1), D.2's
S_swap / G(q, p) / GOOD–BAD gaps, the L4 and L5 slices (B.4, Table 16), the project's curated quads
(Table 17) and the one list of project choices.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from shopbench.core import taxonomy as T
from shopbench.errors import InputError
from shopbench.paceshop import choices, tables
from shopbench.paceshop.build import write
from shopbench.paceshop.defects import CATEGORY_FAMILIES, changed_fields
from shopbench.paceshop.io import read_jsonl
from shopbench.paceshop.personas import CONTRARY_ATTRIBUTE
from shopbench.paceshop.relaxed import is_placeholder, load_relaxed, normalise
from shopbench.paceshop.swaps import NO_POOL_VALUE, PoolValues, select_swaps, swap_options

FIXTURE = Path(__file__).parent / "fixtures" / "l5_assistant_outputs.jsonl"


@pytest.fixture(scope="module")
def built(paceshop_small):
    return paceshop_small


# ---- Table 27: swap values drawn from the pool ----------------------------------------------------
def test_swap_values_are_drawn_from_the_pool(built):
    """Table 27: "Each swap flips one axis (budget, hard_constraint, brand_affinity, attribute_preference)
    to a value drawn from the 1,200-persona pool that directly contradicts an attestation in the
    unchanged response"."""
    _, res = built
    pool = {p.persona_id: p for p in res.personas}
    meta = res.swap_report["swaps"]
    assert meta and len(meta) == len(res.by_kind("swap"))
    for m in meta:
        donor = pool[m["donor_persona_id"]]
        assert m["donor_persona_id"] != m["base_record_id"]
        if m["axis"] == "budget":
            assert donor.shopping_context.budget == m["new_value"]
        elif m["axis"] == "hard_constraint":
            assert m["new_value"] in donor.preferences.hard_constraints
        elif m["axis"] == "attribute":
            assert m["new_value"] in donor.preferences.attribute_preferences
            assert CONTRARY_ATTRIBUTE[m["old_value"]] == m["new_value"]
        else:
            assert m["new_value"].startswith("brand_avoids: ")
        assert m["attestation"]


def test_an_axis_that_cannot_be_contradicted_gets_no_swap(built):
    """No pool persona holds a contradicting value → that axis yields nothing (never an invented value)."""
    _, res = built
    g = next(s for s in res.by_kind("swap") if s.swap_axis == "attribute")
    base = next(r for r in res.by_kind("good") if r.record_id == g.base_record_id)
    contrary = set(CONTRARY_ATTRIBUTE.values())
    stripped = [p.model_copy(update={"preferences": p.preferences.model_copy(update={
        "attribute_preferences": [a for a in p.preferences.attribute_preferences if a not in contrary]})})
        for p in res.personas]  # fmt: skip
    swaps, status = swap_options(base.persona, base.response, stripped, random.Random(0))
    assert status["attribute"] == NO_POOL_VALUE and "attribute" not in {s.axis for s in swaps}
    assert not PoolValues.of(stripped).attribute.keys() & contrary


def test_swap_axes_are_balanced(built, paceshop_config):
    """One swap per test GOOD (the paper's 680-record swap slice over 680 test GOODs), the four axes
    (Table 5: budget, hard constraint, brand, attribute) as equal as the attestations allow."""
    _, res = built
    rep = res.swap_report
    counts = rep["counts"]
    assert sum(counts.values()) == len(res.by_kind("swap"))
    bases = Counter(s.base_record_id for s in res.by_kind("swap"))
    assert set(bases.values()) == {1}
    # every axis that some record can take is used; the counts differ by at most the shortfall of
    # the scarcest axis's feasible records
    assert max(counts.values()) - min(counts.values()) <= 1 or min(rep["feasible"].values()) < max(
        counts.values()
    )
    for axis, n in counts.items():
        assert n <= rep["feasible"][axis]


def test_select_swaps_prefers_the_least_used_feasible_axis(built):
    _, res = built
    goods = [g for g in res.by_kind("good") if g.split == "test"]
    sel = select_swaps([(g.persona, g.response) for g in goods], res.personas, 3,
                       keys=[g.record_id for g in goods])  # fmt: skip
    sel2 = select_swaps([(g.persona, g.response) for g in goods], res.personas, 3,
                        keys=[g.record_id for g in goods])  # fmt: skip
    assert [(i, s.axis, s.new_value) for i, s in sel.chosen] == [
        (i, s.axis, s.new_value) for i, s in sel2.chosen
    ]
    tbl = tables.swap_balance_table(res)
    assert list(tbl.index) == ["budget", "hard_constraint", "brand", "attribute", "total"]
    assert tbl.loc["total", "swaps"] == len(res.by_kind("swap"))


# ---- B.9: both readings of the category edits -----------------------------------------------------
def test_both_category_readings_are_built(built, tmp_path):
    """B.9: PREF_CONFLICT / INTENT_DRIFT "replace the first product category ... Location:
    productCategoryList[0]"; tiers are composed to avoid "interactions between overview-modifying edits
    and category-modifying edits (e.g., bolded-category alignment)". Mirrored (default) and literal."""
    cfg, res = built
    assert cfg.category_edit == "mirrored" and res.other_reading["reading"] == "literal"
    lit = {r.record_id: r for r in res.other_reading["records"]}
    bads = {b.record_id: b for b in res.by_kind("bad")}
    goods = {g.record_id: g for g in res.by_kind("good")}
    cat_bads = [b for b in bads.values() if {d.family for d in b.defects} & set(CATEGORY_FAMILIES)]
    assert set(lit) == {b.record_id for b in cat_bads}
    for rid, lr in lit.items():
        b = bads[rid]
        assert (lr.gold_family, lr.gold_location) == (b.gold_family, b.gold_location)
        if b.tier == 1:
            g = goods[b.base_record_id]
            assert changed_fields(g.response, lr.response) == {"productCategoryList[0]"}
            assert "productCategoryList[0]" in changed_fields(g.response, b.response)
            assert changed_fields(g.response, b.response) > {"productCategoryList[0]"}
            assert lr.response.productCategoryList[0] == b.response.productCategoryList[0]
    cr = tables.category_readings_table(res)
    assert cr.loc["mirrored", "stealth_fraction"] > cr.loc["literal", "stealth_fraction"]
    assert cr.loc["literal", "stealth_tier1_INTENT_DRIFT"] == 0
    write(res, tmp_path, cfg)
    back = read_jsonl(tmp_path / "records_reading_literal.jsonl", type(cat_bads[0]), id_field="record_id")
    assert len(back) == len(lit)
    assert json.loads((tmp_path / "swaps.json").read_text())["counts"] == res.swap_report["counts"]


def test_literal_default_is_a_parameter(paceshop_config):
    from shopbench.paceshop.build import build

    cfg = paceshop_config(category_edit="literal", n_queries=8, test_goods=6, dev_goods=6, swap_slice=6,
                          n_personas=20, n_holdout=4)  # fmt: skip
    res = build(cfg, progress=False)
    assert res.other_reading["reading"] == "mirrored"
    t1 = [b for b in res.by_kind("bad") if b.tier == 1 and b.gold_family == "INTENT_DRIFT"]
    assert t1 and not any(all(b.checks.values()) for b in t1)
    with pytest.raises(ValueError, match="category_edit"):
        build(paceshop_config(category_edit="both"), progress=False)


# ---- Table 17: the curated quads are ours --------------------------------------------------------
def test_curated_quads_are_marked_as_ours(built):
    """Table 17: "4 curated quads covering all 4 component groups" — the paper's four are in its code."""
    q = tables.curated_quads_table()
    assert len(q) == 4 and set(q["source"]) == {"ours (not in our copy of the paper)"}
    tiers = tables.table17_defects(built[1]).attrs["tiers"]
    assert tiers.loc[4, "combinations_from"].startswith("ours")
    strata = tables.persona_strata_table(built[1])
    assert strata.loc["raw-v1", "paper"] == 200 and "label" in strata.loc["raw-v1", "how ours were made"]


def test_project_choices_list_names_real_places():
    t = choices.choices_table()
    assert t.index.is_unique and len(t) >= 10
    assert (t[["paper", "missing", "ours", "where"]].map(len) > 0).all().all()
    assert "tier-4 quads" in t.index and "raw-v1 personas" in t.index


# ---- L5: the relaxed-schema import path ----------------------------------------------------------
def test_relaxed_import_repairs_and_rejects():
    """Table 16: "add a relaxed-schema import path for external outputs" — "100 normalized
    real-assistant outputs stored with raw originals preserved; persona claims withheld for this slice
    when persona context is unavailable"."""
    rep = load_relaxed(FIXTURE)
    ids = [o.output_id for o in rep.imported]
    assert ids == ["asst-001", "2", "asst-003", "asst-004"]
    reasons = {r["output_id"]: r["reason"] for r in rep.rejected}
    assert "no query" in reasons["asst-005"] and "JSON object" in reasons["l5-0005"]
    assert reasons["asst-001"] == "repeated id" and "no categories" in reasons["asst-008"]
    by = {o.output_id: o for o in rep.imported}
    two = by["2"]
    assert two.raw["summary"].startswith("Quiet blenders")  # the raw original kept verbatim
    assert two.response.productCategoryList == ["Personal Blenders", "Sound Enclosure", "Immersion Blenders",
                                                "Smoothie Makers"]  # fmt: skip
    assert two.response.attribution_list == ["M:B01ABCDEF1:0", "M:B01ABCDEF2:0"]
    assert any("split a string" in r for r in two.repairs) and any(
        "citation object" in r for r in two.repairs
    )
    assert any(r.startswith("bolded") for r in two.repairs) and not two.checks["bold_category_match"]
    three = by["asst-003"]
    assert three.response.productCategoryList.count("Rain Boots") == 1
    assert three.persona_claims_withheld and any("persona not in the B.7 schema" in r for r in three.repairs)
    assert not by["asst-004"].checks["overview_length"]  # kept, not truncated: the check says so
    assert by["asst-001"].candidate_ids is not None and all(by["asst-001"].checks[k] for k in
                                                            ("evidence_id_validity", "evidence_exact_match"))  # fmt: skip
    s = rep.summary()
    assert list(s.status).count("rejected") == 4


def test_relaxed_import_treats_template_placeholders_as_missing():
    """A model that copies the prompt's schema template ("...", "<overview>") has not answered: the
    output is rejected with the reason, and placeholder list items are dropped as repairs."""
    with pytest.raises(ValueError, match="no overview.*placeholder"):
        normalise({"query": "quiet blender", "overview": "...", "categories": ["Blenders"]}, 0)
    with pytest.raises(ValueError, match="no categories"):
        normalise(
            {"query": "quiet blender", "overview": "A quiet **Blender**.", "categories": ["…", "<category>"]},
            0,
        )
    out = normalise({"query": "quiet blender", "overview": "A quiet **Blender**.",
                     "categories": ["Blender", "..."], "related_queries": ["TODO", "quiet mixers"]}, 0)  # fmt: skip
    assert out.response.productCategoryList == ["Blender"] and out.response.rqList == ["quiet mixers"]
    assert sum("dropped placeholder" in r for r in out.repairs) == 2
    assert not is_placeholder("Immersion Blenders") and not is_placeholder("5... stars")


def test_relaxed_import_file_errors(tmp_path):
    with pytest.raises(InputError, match="no such"):
        load_relaxed(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "query": "x"}\n{"id": 2, query: oops}\n')
    with pytest.raises(InputError, match="line 2"):
        load_relaxed(bad)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(InputError, match="holds no output"):
        load_relaxed(empty)
    arr = tmp_path / "arr.json"
    arr.write_text(json.dumps([{"query": "q", "overview": "See **A**.", "categories": ["A"]}]))
    assert [o.output_id for o in load_relaxed(arr).imported] == ["l5-0000"]


# ---- D.2: S_swap, G(q, p), GOOD–BAD gaps ----------------------------------------------------------
def _rt(rows):
    base = dict(status="ok", parse_ok=True, repeat=0, backbone="b", tier=0, gold_family=None, gold_location=None,
                base_record_id=None, swap_axis=None, defect_family="NONE", defect_location="NONE",
                component_consistency=4.0, evidence_grounding=4.0, format_safety=5.0, confidence=0.9)  # fmt: skip
    return pd.DataFrame([{**base, **r} for r in rows])


def test_s_swap_and_gaps_follow_d2():
    """D.2: "S_swap = Σ_{a∈A_rel} w_a Δ_a − λ Σ_{a∈A_inv} w_a Δ_a, where Δ_a measures the distance
    between axis signatures of paired responses"; "GOOD–BAD score gap on D1 (larger gap = stronger
    persona discrimination)"."""
    from shopbench.metrics import axis_score_gaps, s_swap

    rows = []
    for proto, p_swap, c_swap in (("aware", 1.0, 4.0), ("blind_ish", 5.0, 2.0)):
        for i in range(2):
            rows.append(dict(protocol=proto, record_id=f"g{i}", kind="good", label="GOOD", verdict="GOOD",
                             persona_alignment=5.0, overall_quality=5.0))  # fmt: skip
            rows.append(dict(protocol=proto, record_id=f"g{i}::swap-budget", kind="swap", label="BAD", tier=1,
                             verdict="BAD", base_record_id=f"g{i}", swap_axis="budget", gold_family="PREF_CONFLICT",
                             gold_location="persona_swap", persona_alignment=p_swap, component_consistency=c_swap,
                             overall_quality=2.0))  # fmt: skip
    rt = _rt(rows)
    nat = {"aware": "PCEA", "blind_ish": "PCEA"}
    s = s_swap(rt, native_targets=nat).reset_index().set_index("protocol")
    # aware: Δ_P = 1, inv axes unchanged → 1; blind_ish: Δ_P = 0, Δ_C = 0.5 → mean inv 1/6 → −1/6
    assert s.loc["aware", "s_swap"] == pytest.approx(1.0)
    assert s.loc["blind_ish", "s_swap"] == pytest.approx(-0.5 / 3)
    assert s.loc["aware", "n_pairs"] == 2 and s.loc["aware", "p_drop"] == pytest.approx(1.0)
    g = axis_score_gaps(rt, native_targets=nat).reset_index().set_index("protocol")
    assert g.loc["aware", "gap_persona_alignment"] == pytest.approx(4.0)
    assert g.loc["blind_ish", "gap_persona_alignment"] == pytest.approx(0.0)
    assert g.loc["blind_ish", "gap_component_consistency"] == pytest.approx(2.0)
    assert g.loc["aware", "gap_persona_alignment_target"] == pytest.approx(4.0)
    # a protocol without the P target gets "–"
    g2 = (
        axis_score_gaps(rt, native_targets={"aware": "E", "blind_ish": "PCEA"})
        .reset_index()
        .set_index("protocol")
    )
    assert np.isnan(g2.loc["aware", "gap_persona_alignment"])


def test_alignment_gap_pairs_the_persona_blind_judge():
    """D.2: "G(q,p) = H_gen(f(q,∅)) − H_pers(f(q,p)), which quantifies the extent to which persona
    conditioning changes the evaluation outcome"."""
    from shopbench.metrics import alignment_gap

    rows = []
    for proto, q_swap in (("persona_blind", 4.0), ("pacejudge", 1.5)):
        rows.append(dict(protocol=proto, record_id="g0", kind="good", label="GOOD", verdict="GOOD",
                         persona_alignment=4.0, overall_quality=4.0))  # fmt: skip
        rows.append(dict(protocol=proto, record_id="g0::swap-brand", kind="swap", label="BAD", tier=1, verdict="BAD",
                         base_record_id="g0", swap_axis="brand", persona_alignment=2.0, overall_quality=q_swap))  # fmt: skip
    rows.append(
        dict(
            protocol="pacejudge",
            record_id="g1",
            kind="good",
            label="GOOD",
            verdict="GOOD",
            persona_alignment=4.0,
            overall_quality=3.0,
        )
    )  # no blind partner: left out
    out = alignment_gap(_rt(rows), native_targets={"persona_blind": "CEA", "pacejudge": "PCEA"})
    row = out.reset_index().set_index("protocol").loc["pacejudge"]
    assert row["G_good"] == pytest.approx(0.0) and row["G_swap"] == pytest.approx(2.5)
    assert row["G_swap_minus_good"] == pytest.approx(2.5) and row["n_good"] == 1


def test_paper_mean_rows_for_tables_23_to_25():
    from shopbench.metrics import PAPER_MEAN, per_backbone_table
    from shopbench.paceshop import reported

    df = pd.DataFrame({"protocol": ["pacejudge", "pacejudge"], "backbone": ["a", "b"], "detect": [0.5, 1.0],
                       "loc": [0.25, 0.75]})  # fmt: skip
    t = per_backbone_table(df, ["a", "b"], paper=reported.paper_rows(reported.TABLE25_MEAN, ["pacejudge"]))
    assert t.loc[("pacejudge", "Mean"), "detect"] == pytest.approx(0.75)
    assert t.loc[("pacejudge", PAPER_MEAN), "loc"] == 0.72  # Table 25: PACEJudge Mean 0.93 / 0.72
    assert reported.TABLE23_MEAN["pacejudge"]["PACE_avg"] == 0.56  # Table 23: PACEJudge Mean PACE 0.56
    assert set(reported.TABLE24_MEAN) == {"geval", "persona_aware_generic", "pacejudge"}


def test_contrary_values_leave_table12_untouched(built):
    _, res = built
    held = [
        p for p in res.personas if set(p.preferences.attribute_preferences) & set(CONTRARY_ATTRIBUTE.values())
    ]
    assert 0 < len(held) < len(res.personas)
    for p in held:
        assert all(f in {s.family for s in T.PREFERENCES} for f in p.taxonomy.preferences)


# ---- L4: the cross-generator slice (slices.py) ---------------------------------------------------
L4_FAKE = "test-l4-fake"


def test_cross_generator_slice_attributes_accepts_and_rejects_with_reasons(built, tmp_path):
    """Table 16: "50 shared held-out inputs across 3 generator families (completed)"; B.4: "a
    cross-generator slice on 50 shared inputs to confirm that GOOD generation does not overfit a
    single backbone"; B.9: "candidates that fail hard schema, evidence-ID, or XML round-trip checks are
    rejected". Three shared inputs, the build's offline generator plus two through the gateway: a fake
    generator (``local/test-l4-fake``) that returns the build's own GOOD on input 0, a truncated
    document on input 1 and the GOOD citing an evidence id outside the pool on input 2, and the
    seeded ``local/schema-sampler`` (random ids: every output fails the evidence-ID check)."""
    from shopbench.llm import Gateway, parse_backbones
    from shopbench.llm.local import register_local
    from shopbench.paceshop.slices import cross_generator_slice, cross_generator_summary, shared_inputs
    from shopbench.prompts import read_prompt

    cfg, res = built
    inputs = shared_inputs(res, 3, cfg.seed)
    aids = [it[0] for it, _ in inputs]
    goods = {it[0]: g for it, g in inputs}

    def fake(messages, params):
        text = messages[-1]["content"]
        aid = next(a for a in aids if f"Assignment: {a}\n" in text)
        doc = goods[aid].response.model_dump()
        if aid == aids[1]:
            return json.dumps(doc)[:60]  # cut off mid-document, as a model that hit max_tokens
        if aid == aids[2]:
            doc["attribution_list"] = ["ev-not-in-pool"]
        return json.dumps(doc)

    register_local(L4_FAKE, fake, "test: the build's GOOD, a truncated answer, a GOOD citing a foreign id")
    gens = ["local/schema-sampler", f"local/{L4_FAKE}"]
    gw = Gateway(
        cache_dir=tmp_path / "c", log_dir=tmp_path / "l", progress=False, backbones=parse_backbones(gens)
    )
    rows = cross_generator_slice(res, gens, gw, read_prompt("paceshop_good_generation"), 3, cfg.seed)

    # every (input, generator) once, attributed to its generator
    assert len(rows) == 9
    assert (
        list(rows["generator"])
        == ["offline-template-v1"] * 3 + ["local/schema-sampler"] * 3 + [f"local/{L4_FAKE}"] * 3
    )
    assert list(rows["input"]) == aids * 3
    fk = rows[rows["generator"] == f"local/{L4_FAKE}"].set_index("input")
    # input 0: the build's own GOOD → accepted, same checks, full category overlap
    g0 = goods[aids[0]]
    assert bool(fk.loc[aids[0], "accepted"]) and fk.loc[aids[0], "reason"] == ""
    assert fk.loc[aids[0], "checks_passed"] == sum(g0.checks.values())
    assert fk.loc[aids[0], "attributions"] == len(g0.response.attribution_list)
    assert fk.loc[aids[0], "category_overlap_with_build"] == 1.0
    # input 1: truncated → rejected as a contract parse failure, no check counts
    assert not fk.loc[aids[1], "accepted"] and fk.loc[aids[1], "reason"].startswith("contract parse failure")
    assert pd.isna(fk.loc[aids[1], "checks_passed"]) and not fk.loc[aids[1], "all_12"]
    # input 2: a foreign evidence id → rejected by the hard evidence-ID check, naming the id
    r2 = fk.loc[aids[2], "reason"]
    assert not fk.loc[aids[2], "accepted"] and r2.startswith("failed hard checks: ")
    assert "evidence_id_validity" in r2 and "ev-not-in-pool" in r2
    ss = rows[rows["generator"] == "local/schema-sampler"]
    assert not ss["accepted"].any() and all(r for r in ss["reason"])

    s = cross_generator_summary(rows)
    assert list(s.index) == ["offline-template-v1", "local/schema-sampler", f"local/{L4_FAKE}"]
    assert (s["inputs"] == 3).all()
    assert s.loc["offline-template-v1", "accepted"] == 1.0
    assert s.loc["local/schema-sampler", "accepted"] == 0.0
    assert s.loc["local/schema-sampler", "mean_checks_passed"] is None or pd.isna(
        s.loc["local/schema-sampler", "mean_checks_passed"]
    )
    assert s.loc["local/schema-sampler", "top_rejection"] != ""
    f = s.loc[f"local/{L4_FAKE}"]
    assert f["accepted"] == round(1 / 3, 3)
    assert f["all_12_pass"] == round(int(all(g0.checks.values())) / 3, 3)
    assert f["mean_checks_passed"] == sum(g0.checks.values()) and f["mean_attributions"] == len(
        g0.response.attribution_list
    )
    assert f["category_overlap_with_build"] == 1.0
    assert f["top_rejection"] in {fk.loc[aids[1], "reason"][:80], r2[:80]}
    offl = s.loc["offline-template-v1"]
    assert offl["mean_checks_passed"] == round(np.mean([sum(g.checks.values()) for g in goods.values()]), 2)


# ---- Tables 21 and 26, the category-reading localisation (metrics/pace/examples.py) --------------
def _runs(rows):
    base = dict(protocol="pacejudge", backbone="b1", status="ok", parse_ok=True, kind="bad", tier=1, label="BAD",
                gold_family=None, gold_location=None, base_record_id=None, verdict="BAD", defect_family="NONE",
                defect_location="NONE", confidence=0.9, persona_alignment=3.0, component_consistency=3.0,
                evidence_grounding=3.0, format_safety=3.0, overall_quality=None, rationale="why",
                parse_error_kind=None)  # fmt: skip
    return pd.DataFrame([{**base, **r} for r in rows])


GOOD = dict(kind="good", tier=0, label="GOOD")


def test_table21_picks_the_first_record_of_each_example_per_backbone():
    """Table 21: "Qualitative examples of PACEJudge (Opus 4.6) output on the development set" — "Example 1:
    GOOD record correctly classified", "Example 2: Single-defect BAD record … Defect: xcomp_mismatch @
    rqList ✓ matches gold", "Example 3: Triple-defect BAD record"; "per-axis scores identify which
    dimension failed (e.g., Consistency = 1.5 in Example 2)"."""
    from shopbench.metrics.pace.examples import table21_judge_examples

    rt = _runs([
        dict(record_id="r04", gold_family="XCOMP_MISMATCH", gold_location="rqList[0]", defect_family="XCOMP_MISMATCH",
             defect_location="rqList", confidence=0.94, persona_alignment=3.0, component_consistency=1.5,
             evidence_grounding=3.5, format_safety=4.5, query="toy story 4 toys", rationale="x" * 50),
        dict(record_id="r06", **GOOD, verdict="GOOD", confidence=0.5),  # a later correct GOOD: not picked
        dict(record_id="r01", **GOOD, verdict="BAD"),  # a GOOD called BAD: not example 1
        dict(record_id="r02", **GOOD, verdict="GOOD", confidence=0.7, persona_alignment=3.7,
             component_consistency=4.0, evidence_grounding=3.5, format_safety=4.8, query="lash extensions"),
        dict(record_id="r03", gold_family="INTENT_DRIFT", gold_location="productCategoryList[0]",
             defect_family="XCOMP_MISMATCH", defect_location="rqList"),  # wrong family: not example 2
        dict(record_id="r05", tier=3, gold_family="EVIDENCE_MISMATCH+INTENT_DRIFT+UNSUPPORTED_CLAIM",
             gold_location="attribution_list+productCategoryList[0]+overview_text", status="parse_error",
             parse_ok=False, parse_error_kind="truncated"),  # a failed triple is still example 3, said so
        dict(record_id="r00", protocol="ares", **GOOD, verdict="GOOD"),  # another protocol: ignored
        dict(record_id="r07", backbone="b2", **GOOD, verdict="GOOD", confidence=0.8),
    ])  # fmt: skip
    t = table21_judge_examples(rt, rationale_chars=20)
    assert list(t["backbone"]) == ["b1"] * 3 + ["b2"] * 3
    b1 = t[t["backbone"] == "b1"].set_index("example")
    e1, e2, e3 = b1.iloc[0], b1.iloc[1], b1.iloc[2]
    assert (e1["record"], e1["query"], e1["gold"]) == ("r02", "lash extensions", "GOOD")
    assert e1["judge output"] == "GOOD, confidence 0.70; defect: NONE @ NONE"
    assert e1["axis scores"] == "[P 3.7, C 4.0, G 3.5, F 4.8]"
    assert (e2["record"], e2["gold"]) == ("r04", "XCOMP_MISMATCH @ rqList[0]")
    assert e2["judge output"] == "BAD, confidence 0.94; defect: XCOMP_MISMATCH @ rqList"
    assert e2["axis scores"] == "[P 3.0, C 1.5, G 3.5, F 4.5]"
    assert e2["rationale"] == "x" * 19 + "…"
    assert e3["record"] == "r05" and e3["judge output"] == "parse failure (truncated)"
    assert (
        e3["gold"]
        == "EVIDENCE_MISMATCH+INTENT_DRIFT+UNSUPPORTED_CLAIM @ attribution_list+productCategoryList[0]+overview_text"
    )
    b2 = t[t["backbone"] == "b2"]
    assert list(b2["record"]) == ["r07", "–", "–"]
    assert list(b2["judge output"])[1:] == ["no such record in this run"] * 2
    assert table21_judge_examples(rt, backbones=["b2"])["backbone"].unique().tolist() == ["b2"]


def test_table26_spreads_failure_cases_over_the_case_types():
    """Table 26: "Ten concrete failure cases. Each row contrasts a scalar baseline's verdict and reasoning
    against PACEJudge's structured output on the same record. Axis scores abbreviated P/C/G/F." — cases
    PS (persona swap), CC (cross-component), GR (grounding), MD (multi-defect)."""
    from shopbench.metrics.pace.examples import table26_failure_cases

    recs = [
        dict(record_id="s1", kind="swap", tier=0, gold_family="PREF_CONFLICT", gold_location="persona_swap",
             base_record_id="g9"),
        dict(record_id="s2", kind="swap", tier=0, gold_family="PREF_CONFLICT", gold_location="persona_swap",
             base_record_id="g8"),
        dict(record_id="c1", gold_family="INTENT_DRIFT", gold_location="productCategoryList[0]"),
        dict(record_id="g1", gold_family="EVIDENCE_MISMATCH", gold_location="attribution_list"),
        dict(record_id="m1", tier=3, gold_family="EVIDENCE_MISMATCH+PREF_CONFLICT",
             gold_location="attribution_list+productCategoryList[0]"),
        dict(record_id="a1", gold_family="PREF_CONFLICT", gold_location="productCategoryList[0]"),
        dict(record_id="k1", **GOOD),  # a GOOD record is never a failure case
    ]  # fmt: skip
    rows = []
    for bb in ("b2", "b1"):  # both ran both protocols: the first in name order (b1) is used
        for r in recs:
            rows.append(
                dict(
                    r,
                    backbone=bb,
                    protocol="mtbench_scalar_first",
                    verdict="GOOD",
                    overall_quality=4.0,
                    rationale=f"baseline on {r['record_id']}",
                )
            )
            rows.append(
                dict(
                    r,
                    backbone=bb,
                    protocol="pacejudge",
                    defect_family="PREF_CONFLICT",
                    defect_location="overview_text",
                    persona_alignment=2.0,
                    component_consistency=3.0,
                    evidence_grounding=3.5,
                    format_safety=5.0,
                )
            )
    rows.append(
        dict(recs[2], record_id="c0", backbone="b1", protocol="pacejudge")
    )  # no baseline row: left out
    rows[0] = dict(
        rows[0], status="error", parse_ok=False, parse_error_kind=None
    )  # b2's baseline on s1 failed
    rt = _runs(rows)
    rt.loc[(rt.backbone == "b1") & (rt.record_id == "g1") & (rt.protocol == "mtbench_scalar_first"),
           ["status", "parse_ok", "parse_error_kind"]] = ["parse_error", False, "not_json"]  # fmt: skip
    t = table26_failure_cases(rt, n=10, queries={"g9": "air conditioner", "c1": "wine glasses"})
    # round robin over PS, CC, GR, MD (then AC), record-id order within each: s1 c1 g1 m1 a1 | s2
    assert list(t["record"]) == ["s1", "c1", "g1", "m1", "a1", "s2"]
    assert list(t["case"]) == ["PS", "CC", "GR", "MD", "AC", "PS"]
    assert set(t["backbone"]) == {"b1"}
    row = t.set_index("record")
    assert row.loc["s1", "query"] == "air conditioner" and row.loc["c1", "query"] == "wine glasses"
    assert row.loc["s2", "query"] == ""
    assert row.loc["s1", "gold"] == "PREF_CONFLICT @ persona_swap"
    assert row.loc["s1", "mtbench_scalar_first verdict"] == "GOOD, overall 4.0"
    assert row.loc["g1", "mtbench_scalar_first verdict"] == "parse failure (not_json)"
    assert row.loc["m1", "mtbench_scalar_first reasoning"] == "baseline on m1"
    assert row.loc["c1", "pacejudge verdict"] == "BAD, confidence 0.90; defect: PREF_CONFLICT @ overview_text"
    assert row.loc["c1", "pacejudge axes"] == "[P 2.0, C 3.0, G 3.5, F 5.0]"
    assert list(table26_failure_cases(rt, n=4)["record"]) == ["s1", "c1", "g1", "m1"]
    assert table26_failure_cases(rt[rt.protocol == "pacejudge"]).empty


def test_category_reading_localisation_scores_s2_and_s4_on_category_defects():
    """E.4: "S2 detect ... the fraction of records marked BAD"; "S2 loc. ... requires both a BAD verdict and
    correct 4-way response-field localization"; "S4 family: exact defect-family prediction on
    single-defect BAD records"; "S4 loc.: exact 4-way response-field localization on the same
    single-defect BAD slice" — on the single-defect category records of each B.9 reading."""
    from shopbench.metrics.pace.examples import category_reading_localisation

    ID = dict(gold_family="INTENT_DRIFT", gold_location="productCategoryList[0]")
    PC = dict(gold_family="PREF_CONFLICT", gold_location="productCategoryList[0]")
    mirrored = _runs([
        dict(record_id="r1", **ID, defect_family="INTENT_DRIFT", defect_location="productCategoryList"),  # all hits
        dict(record_id="r2", **ID, defect_family="XCOMP_MISMATCH", defect_location="rqList"),  # detected only
        dict(record_id="r3", **ID, status="error", parse_ok=False),  # failed call: no answer, left out (issue 25)
        dict(record_id="r3b", **ID, verdict="GOOD", defect_location="productCategoryList"),  # field, no BAD
        dict(record_id="r4", **PC, defect_family="PREF_CONFLICT", defect_location="overview_text"),  # S4 family
        dict(record_id="r5", tier=3, gold_family="INTENT_DRIFT+REDUNDANCY",
             gold_location="productCategoryList[0]+rqList[1]", defect_family="INTENT_DRIFT"),  # not single
        dict(record_id="r6", gold_family="XCOMP_MISMATCH", gold_location="rqList[0]"),  # not a category defect
        dict(record_id="r7", **GOOD, verdict="GOOD"),
    ])  # fmt: skip
    literal = _runs([dict(record_id="r4", **PC, verdict="GOOD", defect_family="PREF_CONFLICT",
                          defect_location="productCategoryList")])  # fmt: skip
    t = category_reading_localisation({"mirrored": mirrored, "literal": literal, "none": pd.DataFrame()})
    assert list(t.index) == [("literal", "pacejudge", "b1"), ("mirrored", "pacejudge", "b1")]
    m = t.loc[("mirrored", "pacejudge", "b1")]
    assert (m["n_S2"], m["n_S4"]) == (3, 4)
    assert m["S2_detect"] == pytest.approx(2 / 3) and m["S2_loc"] == pytest.approx(1 / 3)  # loc needs BAD
    assert m["S4_family"] == pytest.approx(2 / 4) and m["S4_loc"] == pytest.approx(2 / 4)  # r1, r3b
    lit = t.loc[("literal", "pacejudge", "b1")]
    assert lit["n_S2"] == 0 and np.isnan(lit["S2_detect"]) and np.isnan(lit["S2_loc"])
    # S4 reads the family and field, not the verdict: a GOOD verdict naming the right defect counts
    assert lit["n_S4"] == 1 and lit["S4_family"] == 1.0 and lit["S4_loc"] == 1.0
    assert category_reading_localisation({"x": pd.DataFrame()}).empty
