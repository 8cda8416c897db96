"""PACE metrics (shopbench.metrics) on small hand-built run tables; expected values worked by hand."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from shopbench.benchmarks.pace_metrics import synthetic_run_table
from shopbench.metrics import (
    accuracy_by_tier,
    bootstrap_ci,
    cross_component_detect_localize,
    false_fire_rate,
    format_headline,
    hallucinated_id_rate,
    headline_table,
    leakage_audit,
    lift,
    multi_defect_location_hit_rate,
    pace_closure_average,
    pace_score,
    persona_swap_accuracy_by_axis,
    s0_balanced_accuracy,
    s1_pjc,
    s2_j_strict,
    s3_grounding,
    s3_j_harmonic,
    s4_family_location,
    s4_j_strict,
    scenario_rows,
    select_s0_subset,
    tpr_specificity_breakdown,
)
from shopbench.metrics.pace.run_table import SWAP_AXES, location_field

CAND = ["e1", "e2", "e3"]
GOLD_LOC = {
    "PREF_CONFLICT": "productCategoryList[0]", "INTENT_DRIFT": "productCategoryList[0]", "XCOMP_MISMATCH": "rqList",
    "REDUNDANCY": "rqList[1]", "EVIDENCE_MISMATCH": "attribution_list",
    "OVER_PERSONALIZATION_HALLUCINATION": "overview_text", "UNSUPPORTED_CLAIM": "overview_text",
}  # fmt: skip


def judge(verdict="GOOD", family=None, location=None, sP=4.0, sC=4.0, sE=4.0, conf=0.9, sup=(), status="ok",
          protocol="pacejudge", backbone="bb", repeat=0):  # fmt: skip
    failed = status != "ok"
    return {
        "protocol": protocol, "backbone": backbone, "repeat": repeat, "status": status, "parse_ok": not failed,
        "verdict": verdict, "bad_prob": 0.5, "overall_quality": 4.0, "persona_alignment": sP,
        "component_consistency": sC, "evidence_grounding": sE, "format_safety": 4.0,
        "defect_family": family if family is not None else ("NONE" if verdict == "GOOD" else None),
        "defect_location": location if location is not None else ("NONE" if verdict == "GOOD" else None),
        "supporting_evidence_ids": list(sup), "confidence": conf,
    }  # fmt: skip


def good(rid, **j):
    return {"record_id": rid, "label": "GOOD", "kind": "good", "tier": 0, "gold_family": None, "gold_location": None,
            "base_record_id": None, "swap_axis": None, "split": "test", "candidate_evidence_ids": CAND,
            "used_evidence_ids": CAND[:2], **judge(**j)}  # fmt: skip


def bad(rid, families, base, **j):
    fams = families.split("+")
    return {"record_id": rid, "label": "BAD", "kind": "bad", "tier": len(fams), "gold_family": families,
            "gold_location": "+".join(GOLD_LOC[f] for f in fams), "base_record_id": base, "swap_axis": None,
            "split": "test", "candidate_evidence_ids": CAND, "used_evidence_ids": CAND[:2], **judge(**j)}  # fmt: skip


def swap(rid, base, axis, **j):
    return {"record_id": rid, "label": "BAD", "kind": "swap", "tier": 1, "gold_family": "PREF_CONFLICT",
            "gold_location": "persona_swap", "base_record_id": base, "swap_axis": axis, "split": "test",
            "candidate_evidence_ids": CAND, "used_evidence_ids": CAND[:2], **judge(**j)}  # fmt: skip


def table(*rows):
    return pd.DataFrame(list(rows))


def val(df, col, protocol="pacejudge", backbone="bb"):
    return df.loc[(protocol, backbone), col]


FAIL = {"status": "parse_error", "verdict": None, "conf": None}


# ---- scenarios, S0 ------------------------------------------------------------------------------------------


def test_location_field_and_swap_axes():
    from shopbench.paceshop.swaps import SWAP_AXES as PACESHOP_AXES

    assert location_field("productCategoryList[0]") == "productCategoryList"
    assert location_field("rqList[1]") == "rqList"
    assert location_field("persona_swap") is None
    assert tuple(SWAP_AXES) == tuple(PACESHOP_AXES)


def test_s0_balanced_accuracy_and_parse_failure_is_wrong():
    rt = table(
        good("g0"), good("g1"), good("g2", verdict="BAD", family="REDUNDANCY", location="rqList"), good("g3", **FAIL),
        bad("b0", "XCOMP_MISMATCH", "g0", verdict="BAD"), bad("b1", "REDUNDANCY", "g1", verdict="BAD"),
        bad("b2", "INTENT_DRIFT", "g2", verdict="BAD"), bad("b3", "EVIDENCE_MISMATCH", "g3", verdict="GOOD"),
    )  # fmt: skip
    # all 8: TNR = 2/4 (g3's parse failure is wrong, not dropped), TPR = 3/4 → (0.5 + 0.75) / 2 = 0.625
    assert val(s0_balanced_accuracy(rt), "s0_balanced_accuracy") == pytest.approx(0.625)
    # subset without g3, b3: TNR = 2/3, TPR = 3/3 → (2/3 + 1) / 2 = 5/6
    ids = ["g0", "g1", "g2", "b0", "b1", "b2"]
    assert val(s0_balanced_accuracy(rt, ids), "s0_balanced_accuracy") == pytest.approx(5 / 6)
    sub = select_s0_subset(rt, n_per_class=2, seed=0)
    assert (
        len(sub) == 4 and sum(s.startswith("g") for s in sub) == 2 and sub == select_s0_subset(rt, 2, seed=0)
    )


def test_scenario_rows():
    rt = table(
        good("g0"), good("g1"), swap("g0::swap-brand", "g0", "brand"),
        bad("c1", "XCOMP_MISMATCH", "g0"), bad("c2", "XCOMP_MISMATCH+EVIDENCE_MISMATCH", "g0"),
        bad("e1", "EVIDENCE_MISMATCH", "g1"), bad("h1", "OVER_PERSONALIZATION_HALLUCINATION", "g1"),
    )  # fmt: skip
    s1 = scenario_rows(rt, "S1")
    assert dict(zip(s1.record_id, s1.role, strict=True)) == {"g0": "good", "g0::swap-brand": "swap"}
    s2 = scenario_rows(rt, "S2")
    assert set(s2.loc[s2.role == "bad", "record_id"]) == {"c1"}  # the tier-2 record is not "in D_C"
    s3 = scenario_rows(rt, "S3")
    assert set(s3.loc[s3.role == "product", "record_id"]) == {"e1"}
    assert set(s3.loc[s3.role == "history", "record_id"]) == {"h1"}
    s4 = scenario_rows(rt, "S4")
    assert set(s4.loc[s4.role == "bad", "record_id"]) == {"c1", "e1", "h1"}  # swaps are S1, not S4


# ---- Table 4 -----------------------------------------------------------------------------------------------


def _pjc_table():
    return table(
        good("A"), swap("A::s", "A", "brand", verdict="BAD", family="PREF_CONFLICT", sP=2),  # credit
        good("B"), swap("B::s", "B", "budget", verdict="BAD", family="PREF_CONFLICT", sP=3.0),  # axis not < 3
        good("C", verdict="BAD", family="UNSUPPORTED_CLAIM"),
        swap("C::s", "C", "brand", verdict="BAD", family="PREF_CONFLICT", sP=2),  # base not GOOD
        good("D"), swap("D::s", "D", "attribute", verdict="BAD", family="INTENT_DRIFT", sP=2),  # wrong family
    )  # fmt: skip


def test_s1_pjc_by_hand():
    out = s1_pjc(_pjc_table())
    assert val(out, "s1_pjc") == pytest.approx(1 / 4)  # only A
    assert val(out, "swap_tpr") == pytest.approx(2 / 4)  # A, C
    assert val(out, "paired_good_spec") == pytest.approx(3 / 4)  # A, B, D
    assert val(out, "n_pairs") == 4


def test_s1_pjc_pairs_by_repeat():
    rt = table(
        good("A", repeat=0), good("A", repeat=1, verdict="BAD", family="PREF_CONFLICT"),
        swap("A::s", "A", "brand", verdict="BAD", family="PREF_CONFLICT", sP=1, repeat=0),
        swap("A::s", "A", "brand", verdict="BAD", family="PREF_CONFLICT", sP=1, repeat=1),
        swap("B::s", "B", "brand", verdict="BAD", family="PREF_CONFLICT", sP=1),  # base row missing: no credit
    )  # fmt: skip
    assert val(s1_pjc(rt), "s1_pjc") == pytest.approx(1 / 3)  # pair (A, repeat 0) only


def _always_bad(rt):
    """An always-BAD judge: every record BAD, XCOMP_MISMATCH @ rqList, every axis 1.0, confidence 0.9
    (except the persona swap gets PREF_CONFLICT — the best an over-flagger can do on S1)."""
    rt = rt.copy()
    rt["verdict"] = "BAD"
    rt["defect_family"] = np.where(rt["kind"] == "swap", "PREF_CONFLICT", "XCOMP_MISMATCH")
    rt["defect_location"] = "rqList"
    for c in ("persona_alignment", "component_consistency", "evidence_grounding"):
        rt[c] = 1.0
    rt["component_consistency"] = 0.5  # make C strictly lowest, so triage passes on C records
    rt["confidence"] = 0.9
    return rt


def test_always_bad_judge_gets_no_credit():
    rt = _always_bad(table(
        good("g0"), good("g1"), swap("g0::s", "g0", "brand"), swap("g1::s", "g1", "budget"),
        bad("x", "XCOMP_MISMATCH", "g0"), bad("r", "REDUNDANCY", "g0"), bad("i", "INTENT_DRIFT", "g1"),
        bad("e", "EVIDENCE_MISMATCH", "g1"), bad("h", "OVER_PERSONALIZATION_HALLUCINATION", "g0"),
    ))  # fmt: skip
    assert val(s1_pjc(rt), "s1_pjc") == 0  # every GOOD base is judged BAD
    s2 = s2_j_strict(rt)
    # TPR = 2/3 (x, r: family in D_C, location rqList, C-axis < 3; i has the wrong location); FPR = 2/2
    assert val(s2, "tpr") == pytest.approx(2 / 3) and val(s2, "fpr") == 1
    assert val(s2, "j_raw") == pytest.approx(-1 / 3) and val(s2, "s2_j_strict") == 0
    s4 = s4_j_strict(rt)
    # TPR = 1/5 (only x: exact family, location, triage C, conf 0.9); FPR = 2/2 confident alarms
    assert val(s4, "tpr") == pytest.approx(1 / 5) and val(s4, "s4_j_strict") == 0
    assert val(s3_j_harmonic(rt), "s3_j_harmonic") == 0
    assert val(pace_score(rt), "pace") == 0
    assert val(false_fire_rate(rt), "false_fire") == 1


def test_s2_j_strict_and_table6_by_hand():
    rt = table(
        bad("x", "XCOMP_MISMATCH", "g0", verdict="BAD", family="XCOMP_MISMATCH", location="rqList", sC=2),  # hit
        bad("i", "INTENT_DRIFT", "g0", verdict="BAD", family="INTENT_DRIFT", location="productCategoryList",
            sC=3.5),  # C axis not < 3.0
        bad("r", "REDUNDANCY", "g1", verdict="BAD", family="XCOMP_MISMATCH", location="rqList", sC=1),  # hit
        good("g0"), good("g1", **FAIL),  # the parse failure is a false C alarm
    )  # fmt: skip
    out = s2_j_strict(rt)
    # TPR = 2/3, FPR = 1/2 → J = 2/3 − 1/2 = 1/6
    assert val(out, "s2_j_strict") == pytest.approx(1 / 6)
    t6 = cross_component_detect_localize(rt)
    assert val(t6, "detect") == 1 and val(t6, "loc") == 1  # rqList[1] → rqList, productCategoryList[0] → ...


def _s3_table(hallucinate=False):
    fake = ["FAKE-1"] if hallucinate else []
    return table(
        bad("p1", "EVIDENCE_MISMATCH", "gp1", verdict="BAD", family="EVIDENCE_MISMATCH", sup=["e1", *fake]),
        bad("p2", "EVIDENCE_MISMATCH", "gp2", verdict="BAD", family="EVIDENCE_MISMATCH", sup=["e1", "ZZZ"]),
        bad("h1", "OVER_PERSONALIZATION_HALLUCINATION", "gh1", verdict="BAD",
            family="OVER_PERSONALIZATION_HALLUCINATION", sup=[*fake]),
        bad("h2", "OVER_PERSONALIZATION_HALLUCINATION", "gh2", verdict="BAD",
            family="OVER_PERSONALIZATION_HALLUCINATION", sup=["e2", *fake]),
        good("gp1"), good("gp2"), good("gh1"),
        good("gh2", verdict="BAD", family="UNSUPPORTED_CLAIM", location="overview_text"),
    )  # fmt: skip


def test_s3_j_harmonic_by_hand():
    out = s3_j_harmonic(_s3_table())
    # Ja: TPR 1/2 (p2 cites an id outside the pool), FPR 0/2 → 0.5
    # Jb: TPR 2/2 (an empty id list is contained), FPR 0/2 (gh2 fires UNSUPPORTED_CLAIM, not OPH) → 1
    # spec: 3/4 paired GOOD bases without an E-family label
    # J-harmonic = 3 / (1/0.5 + 1/1 + 1/0.75) = 3 / (13/3) = 9/13
    assert (
        val(out, "ja") == pytest.approx(0.5)
        and val(out, "jb") == 1
        and val(out, "spec") == pytest.approx(0.75)
    )
    assert val(out, "s3_j_harmonic") == pytest.approx(9 / 13)
    # Tab. 3 S3 grounding has no containment gate: (2/2, 2/2, 3/4) → 3 / (1 + 1 + 4/3) = 0.9
    assert val(s3_grounding(_s3_table()), "s3_grounding") == pytest.approx(0.9)
    # an unpaired GOOD that fires EVIDENCE_MISMATCH: outside the paired set of J-harmonic, inside Tab. 3's
    rt = pd.concat(
        [_s3_table(), table(good("gx", verdict="BAD", family="EVIDENCE_MISMATCH"))], ignore_index=True
    )
    assert val(s3_j_harmonic(rt), "s3_j_harmonic") == pytest.approx(9 / 13)
    assert val(s3_grounding(rt), "specificity") == pytest.approx(3 / 5)


def test_hallucinated_evidence_ids_fail_containment():
    out = s3_j_harmonic(_s3_table(hallucinate=True))
    assert val(out, "tpr_a") == 0 and val(out, "tpr_b") == 0  # every cited list has an id outside the pool
    assert val(out, "s3_j_harmonic") == 0
    h = hallucinated_id_rate(_s3_table(hallucinate=True))
    # cited distinct ids: p1 {e1, FAKE-1}, p2 {e1, ZZZ}, h1 {FAKE-1}, h2 {e2, FAKE-1} → 4 outside of 7
    assert val(h, "hallucinated_id_rate") == pytest.approx(4 / 7)


def _s4_table():
    return table(
        bad("s1", "PREF_CONFLICT", "g0", verdict="BAD", family="PREF_CONFLICT", location="productCategoryList",
            sP=2, sC=4, sE=4, conf=0.9),  # hit
        bad("s2", "XCOMP_MISMATCH", "g0", verdict="BAD", family="XCOMP_MISMATCH", location="rqList",
            sP=2, sC=2, sE=4, conf=0.9),  # tie for lowest axis: triage fails
        bad("s3", "EVIDENCE_MISMATCH", "g1", verdict="BAD", family="EVIDENCE_MISMATCH", location="attribution_list",
            sE=1, conf=0.4),  # confidence < 0.5
        bad("s4", "UNSUPPORTED_CLAIM", "g1", verdict="BAD", family="UNSUPPORTED_CLAIM", location="overview_text",
            sP=3, sC=None, sE=2, conf=0.5),  # hit: off-target C axis ignored, 0.5 passes the gate
        good("g0"), good("g1", verdict="BAD", family="REDUNDANCY", location="rqList", conf=0.3),  # not confident
        good("g2", verdict="BAD", family="XCOMP_MISMATCH", location="rqList", conf=0.8),  # confident false alarm
        good("g3", **FAIL),  # parse failure: a false alarm
        good("g4"),
    )  # fmt: skip


def test_s4_j_strict_by_hand():
    out = s4_j_strict(_s4_table())
    # TPR = 2/4 (s1, s4), FPR = 2/5 (g2, g3) → J = 0.1
    assert val(out, "tpr") == pytest.approx(0.5) and val(out, "fpr") == pytest.approx(0.4)
    assert val(out, "s4_j_strict") == pytest.approx(0.1)
    t3 = s4_family_location(_s4_table())
    assert val(t3, "family") == 1 and val(t3, "loc") == 1
    # False-fire: g1 (REDUNDANCY), g2, g3 (failed) of 5 GOOD records
    assert val(false_fire_rate(_s4_table()), "false_fire") == pytest.approx(3 / 5)


def test_parse_failure_never_earns_credit():
    rt = table(bad("s1", "PREF_CONFLICT", "g0", verdict="BAD", family="PREF_CONFLICT",
                   location="productCategoryList", sP=1, status="parse_error"), good("g0"))  # fmt: skip
    rt.loc[0, "parse_ok"] = True  # status alone marks the failure
    t3 = s4_family_location(rt)
    assert val(t3, "family") == 0 and val(t3, "loc") == 0
    assert val(s4_j_strict(rt), "tpr") == 0


def test_pace_averages_and_unsupported_cells():
    rt = synthetic_run_table(n_bases=40, protocols=("pacejudge", "persona_blind", "ares"), backbones=("b",))
    p = pace_score(rt)
    parts = p[["s1_pjc", "s2_j_strict", "s3_j_harmonic", "s4_j_strict"]]
    assert val(p, "pace", backbone="b") == pytest.approx(parts.loc[("pacejudge", "b")].mean())
    # persona-blind: no P target → S1 and PACE are "–" (NaN, flagged), never computed
    assert np.isnan(val(p, "s1_pjc", "persona_blind", "b")) and np.isnan(val(p, "pace", "persona_blind", "b"))
    assert not val(p, "supported", "persona_blind", "b")
    assert not np.isnan(val(p, "s2_j_strict", "persona_blind", "b"))
    # ARES-style: E only
    assert np.isnan(val(p, "s2_j_strict", "ares", "b")) and not np.isnan(val(p, "s3_j_harmonic", "ares", "b"))
    t3 = pace_closure_average(rt)
    r = t3.loc[("pacejudge", "b")]
    want = (r.s1_p_source + r.s2_loc + r.s3_grounding + r.s4_family + 1 - r.false_fire) / 5
    assert r.pace_avg == pytest.approx(want)
    assert np.isnan(t3.loc[("ares", "b"), "pace_avg"]) and not np.isnan(t3.loc[("ares", "b"), "false_fire"])
    # override the native map
    p2 = pace_score(rt, native_targets={"ares": "PCEA"})
    assert not np.isnan(val(p2, "pace", "ares", "b"))


def test_lift_rows_by_hand():
    idx = pd.MultiIndex.from_tuples([(q, b) for q in ("pj", "ga", "pb", "ares") for b in ("b1", "b2")],
                                    names=["protocol", "backbone"])  # fmt: skip
    t = pd.DataFrame({"S1": [0.3, 0.1, 0.2, 0.2, np.nan, np.nan, 0.9, 0.9],
                      "S2": [0.5, 0.7, 0.4, 0.4, 0.6, 0.2, np.nan, np.nan]}, index=idx)  # fmt: skip
    nt = {"pj": "PCEA", "ga": "PCEA", "pb": "CEA", "ares": "P"}
    lm = lift(t, "pj", native_targets=nt)  # ares is single-target: not a "PACE-compatible" baseline
    # S1: pj mean 0.2 − best(ga 0.2, pb NaN) = 0.0; S2: pj 0.6 − best(ga 0.4, pb 0.4) = 0.2
    assert lm["S1"] == pytest.approx(0.0) and lm["S2"] == pytest.approx(0.2)
    lb = lift(t, "pj", backbone="b1", native_targets=nt)
    # b1: S1 0.3 − 0.2 = 0.1; S2 0.5 − max(0.4, 0.6) = −0.1
    assert lb["S1"] == pytest.approx(0.1) and lb["S2"] == pytest.approx(-0.1)


# ---- diagnosis ----------------------------------------------------------------------------------------------


def test_table5_persona_swap_by_axis():
    rt = table(
        swap("a::b1", "a", "budget", verdict="BAD", family="PREF_CONFLICT"),
        swap("a::b2", "a", "budget", verdict="BAD", family="INTENT_DRIFT"),
        swap("a::b3", "a", "budget", **FAIL),
        swap("a::br", "a", "brand", verdict="BAD", family="PREF_CONFLICT"),
        swap("a::hc", "a", "hard_constraint", verdict="BAD", family="UNSUPPORTED_CLAIM"),  # BAD, wrong source
        good("a"),
    )  # fmt: skip
    out = persona_swap_accuracy_by_axis(rt)
    assert (
        val(out, "budget") == pytest.approx(1 / 3)
        and val(out, "brand") == 1
        and val(out, "hard_constraint") == 0
    )
    assert np.isnan(val(out, "attribute"))
    # S1 P-source = mean over axes with swaps = (1/3 + 1 + 0) / 3 = 4/9 (pooled would be 2/5)
    assert val(out, "s1_p_source") == pytest.approx(4 / 9)


def test_multi_defect_location_hit_rate():
    rt = table(
        bad("t2a", "PREF_CONFLICT+EVIDENCE_MISMATCH", "g", verdict="BAD", family="EVIDENCE_MISMATCH",
            location="attribution_list"),  # hit
        bad("t2b", "PREF_CONFLICT+EVIDENCE_MISMATCH", "g", verdict="BAD", family="PREF_CONFLICT",
            location="rqList"),  # miss
        bad("t3", "REDUNDANCY+EVIDENCE_MISMATCH+UNSUPPORTED_CLAIM", "g", verdict="BAD", family="REDUNDANCY",
            location="rqList"),  # hit: rqList[1] → rqList
        bad("t1", "XCOMP_MISMATCH", "g", verdict="BAD", family="XCOMP_MISMATCH", location="rqList"),
        good("g"),
    )  # fmt: skip
    out = multi_defect_location_hit_rate(rt)
    assert (
        val(out, "hit_t2") == pytest.approx(0.5) and val(out, "hit_t3") == 1 and np.isnan(val(out, "hit_t4"))
    )
    assert val(out, "hit_multi") == pytest.approx(2 / 3) and val(out, "exact_t1") == 1


def test_table28_matches_parts():
    rt = pd.concat([_pjc_table(), _s4_table()], ignore_index=True)
    t28 = tpr_specificity_breakdown(rt)
    assert val(t28, "s1_swap_tpr") == val(s1_pjc(rt), "swap_tpr")
    assert val(t28, "s4_tpr") == pytest.approx(val(s4_j_strict(rt), "tpr"))
    assert val(t28, "s4_fpr") == pytest.approx(val(s4_j_strict(rt), "fpr"))


def test_leakage_audit_by_hand():
    def recs(protocol):
        kw = {"protocol": protocol, "sP": 3.0, "sC": 3.0, "sE": 3.0}
        return [
            bad("P1", "PREF_CONFLICT", "G", **kw),
            bad("P2", "PREF_CONFLICT", "G", verdict="BAD", family="UNSUPPORTED_CLAIM", location="overview_text", **kw),
            bad("C1", "XCOMP_MISMATCH", "G", verdict="BAD", family="PREF_CONFLICT", location="productCategoryList",
                **{**kw, "sP": 2.0}),
            bad("C2", "REDUNDANCY", "G", **FAIL, protocol=protocol),
            bad("E1", "EVIDENCE_MISMATCH", "G", verdict="BAD", family="EVIDENCE_MISMATCH", location="attribution_list",
                **kw),
            good("G", **kw),
        ]  # fmt: skip

    rt = table(*recs("ARES-style"), *recs("pacejudge"))
    out = leakage_audit(rt)
    a = out.loc[("ARES-style", "bb")]
    assert a.row_kind == "leakage" and a.native == "E"
    # P-gold records P1 (NONE), P2 (fires UC): 1/2. C-gold C1 (fires), C2 (parse failure = leak): 2/2
    assert a.P_off_target == pytest.approx(0.5) and a.C_off_target == 1
    assert np.isnan(a.E_off_target) and a.E_off_target_status == "native"  # never filled
    # Any: over P1, P2, C1, C2 a non-E family or a failure: C1, C2 → 2/4
    assert a.any_off_target == pytest.approx(0.5)
    # our axis check: 5 ok rows, C1 reports persona_alignment 2.0 ≠ the 3.0 pin → 1/5
    assert a.axis_off_target == pytest.approx(0.2)
    r = out.loc[("pacejudge", "bb")]
    assert r.row_kind == "reference" and np.isnan(r.any_off_target) and r.any_off_target_status == "n/a"
    # misclassification: P: P2 labelled E → 1/2; C: C1 labelled P, C2 failed → 2/2; E: 0/1
    assert (r.P_off_target, r.C_off_target, r.E_off_target) == (0.5, 1.0, 0.0)


# ---- gradient -----------------------------------------------------------------------------------------------


def test_accuracy_by_tier_with_deterministic_row():
    rt = table(
        bad("a1", "PREF_CONFLICT", "g0", verdict="BAD", family="PREF_CONFLICT"),
        bad("b1", "XCOMP_MISMATCH", "g1"),
        bad("a2", "PREF_CONFLICT+XCOMP_MISMATCH", "g0", verdict="BAD", family="PREF_CONFLICT"),
        bad("a3", "PREF_CONFLICT+XCOMP_MISMATCH+EVIDENCE_MISMATCH", "g0", **FAIL),
        bad("a4", "PREF_CONFLICT+XCOMP_MISMATCH+EVIDENCE_MISMATCH+UNSUPPORTED_CLAIM", "g0", verdict="BAD",
            family="EVIDENCE_MISMATCH"),
        swap("g0::s", "g0", "brand"),  # a swap is tier 1 in the schema but not a defect tier
        good("g0"), good("g1", verdict="BAD", family="REDUNDANCY"),
    )  # fmt: skip
    checks = {"a1": {"bold_count": True, "evidence_id_validity": False}, "b1": True, "a2": False, "a3": False,
              "a4": {"x": False}, "g0": True, "g1": {"x": True}}  # fmt: skip
    out = accuracy_by_tier(rt, deterministic=checks)
    # tier 1: a1 hit, b1 miss → 0.5; tier 2: 1; tier 3: parse failure → 0; tier 4: 1; GOOD: 1/2
    r = out.loc[("pacejudge", "bb")]
    assert (r.tier_1, r.tier_2, r.tier_3, r.tier_4, r.good) == (0.5, 1.0, 0.0, 1.0, 0.5)
    assert r.gradient == pytest.approx(0.5)
    d = out.loc[("deterministic", "-")]
    # BAD iff a check fails: tier 1 a1 yes, b1 no → 0.5; tiers 2–4 → 1; GOOD both pass → 1
    assert (d.tier_1, d.tier_2, d.tier_3, d.tier_4, d.good) == (0.5, 1.0, 1.0, 1.0, 1.0)


# ---- bootstrap ----------------------------------------------------------------------------------------------


def _sibling_table(n=20):
    """Half the bases: GOOD judged BAD, BAD judged BAD (tp 1, tn 0); the other half: GOOD judged GOOD,
    BAD judged GOOD (tp 0, tn 1). Every base-record resample has TPR + TNR = 1, so balanced accuracy is
    exactly 0.5 in every resample; resampling rows independently would split siblings and vary it."""
    rows = []
    for i in range(n):
        over = i % 2 == 0
        rows.append(good(f"g{i}", verdict="BAD" if over else "GOOD", family="REDUNDANCY" if over else None,
                         location="rqList" if over else None))  # fmt: skip
        rows.append(bad(f"b{i}", "XCOMP_MISMATCH", f"g{i}", verdict="BAD" if over else "GOOD"))
    return table(*rows)


def test_bootstrap_keeps_siblings_together():
    rt = _sibling_table()
    ci = bootstrap_ci(rt, s0_balanced_accuracy, n_boot=500, seed=1)
    r = ci.loc[("pacejudge", "bb", "s0_balanced_accuracy")]
    assert r.estimate == 0.5 and r.ci_low == pytest.approx(0.5) and r.ci_high == pytest.approx(0.5)
    # the row-level bootstrap that splits siblings gives a wide interval on the same table
    rng = np.random.default_rng(1)
    g, b = rt[rt.kind == "good"], rt[rt.kind == "bad"]
    vals = []
    for _ in range(500):
        rs = rt.iloc[rng.integers(0, len(rt), len(rt))]
        gs, bs = rs[rs.kind == "good"], rs[rs.kind == "bad"]
        vals.append(((bs.verdict == "BAD").mean() + (gs.verdict == "GOOD").mean()) / 2)
    assert len(g) == len(b) and np.percentile(vals, 97.5) - np.percentile(vals, 2.5) > 0.1


def test_bootstrap_deterministic_and_matches_brute_force():
    rt = synthetic_run_table(n_bases=12, protocols=("pacejudge",), backbones=("b",), seed=3)
    a = bootstrap_ci(rt, s1_pjc, n_boot=60, seed=7)
    pd.testing.assert_frame_equal(a, bootstrap_ci(rt, s1_pjc, n_boot=60, seed=7))
    assert not a.equals(bootstrap_ci(rt, s1_pjc, n_boot=60, seed=8))
    # the vectorised weighted sums equal re-running the metric on explicitly resampled tables
    # (same seed → same multinomial base counts; the slow path copies each drawn base's rows)
    slow = bootstrap_ci(rt, lambda df: s1_pjc(df)["s1_pjc"].iloc[0], n_boot=60, seed=7)
    fast = a.xs("s1_pjc", level="metric")
    assert slow["ci_low"].iloc[0] == pytest.approx(fast["ci_low"].iloc[0])
    assert slow["ci_high"].iloc[0] == pytest.approx(fast["ci_high"].iloc[0])
    # partial binds metric parameters
    ids = select_s0_subset(rt, 5)
    part = bootstrap_ci(rt, functools.partial(s0_balanced_accuracy, subset_ids=ids), n_boot=50)
    assert part.loc[("pacejudge", "b", "s0_balanced_accuracy"), "estimate"] == pytest.approx(
        val(s0_balanced_accuracy(rt, ids), "s0_balanced_accuracy", backbone="b")
    )


def test_headline_table_cells_and_cis():
    rt = synthetic_run_table(n_bases=60, protocols=("pacejudge", "persona_aware", "persona_blind", "ares"),
                             backbones=("b1", "b2"), seed=1)  # fmt: skip
    h = headline_table(rt, s0_ids=select_s0_subset(rt, 20), n_boot=300, seed=0, lift_protocol="pacejudge",
                       lift_backbone="b1")  # fmt: skip
    cell = h.set_index(["table", "level", "protocol", "backbone", "column"])
    # backbone cells equal the metric functions; mean rows are means over backbones
    assert cell.loc[("tab4", "backbone", "pacejudge", "b1", "S2_J_strict"), "estimate"] == pytest.approx(
        s2_j_strict(rt).loc[("pacejudge", "b1"), "s2_j_strict"]
    )
    m = [cell.loc[("tab3", "backbone", "pacejudge", b, "S2_loc"), "estimate"] for b in ("b1", "b2")]
    assert cell.loc[("tab3", "mean", "pacejudge", "mean", "S2_loc"), "estimate"] == pytest.approx(np.mean(m))
    # unsupported cells stay "–": NaN estimate and CI, flagged, printed "–"
    un = cell.loc[("tab4", "backbone", "ares", "b1", "S1_PJC")]
    assert not un.supported and np.isnan(un.estimate) and np.isnan(un.ci_low)
    assert format_headline(h, "tab4").loc[("backbone", "ares", "b1"), "S1_PJC"] == "–"
    assert format_headline(h, "tab4").loc[("backbone", "ares", "b1"), "S3_J_harmonic"] != "–"
    # lift rows exist; lift_mean = pacejudge mean − best multi-target baseline mean (ares excluded)
    lm = cell.loc[("tab4", "lift_mean", "pacejudge", "mean", "S2_J_strict"), "estimate"]
    best = max(cell.loc[("tab4", "mean", q, "mean", "S2_J_strict"), "estimate"]
               for q in ("persona_aware", "persona_blind"))  # fmt: skip
    assert lm == pytest.approx(
        cell.loc[("tab4", "mean", "pacejudge", "mean", "S2_J_strict"), "estimate"] - best
    )
    assert ("tab4", "lift_backbone", "pacejudge", "b1", "PACE") in cell.index
    # mean rows can leave backbones out (e.g. a majority@k self-consistency row scored in the same table)
    h1 = headline_table(rt, n_boot=50, mean_backbones=["b1"]).set_index(
        ["table", "level", "protocol", "backbone", "column"]
    )
    assert h1.loc[("tab3", "mean", "pacejudge", "mean", "S2_loc"), "estimate"] == pytest.approx(m[0])
    # every supported cell's CI contains its point estimate
    s = h[h.supported & h.estimate.notna()]
    assert len(s) > 100
    assert ((s.ci_low <= s.estimate + 1e-12) & (s.estimate <= s.ci_high + 1e-12)).all(), s[
        ~((s.ci_low <= s.estimate + 1e-12) & (s.estimate <= s.ci_high + 1e-12))
    ]
