"""Diagnostic breakdowns (seed 000): the Table 3 closure columns, Table 5 persona-swap accuracy by
axis, Table 6 cross-component detection vs. 4-way localization, the D.3 multi-defect location hit
rate, the Table 28 TPR / specificity / FPR breakdown, the false-fire rate on GOOD records, and the
D.2 hallucinated-evidence rate.

Each function returns one row per group (default ``by=("protocol", "backbone")``) and a
``supported`` flag; cells of a PACE target the protocol does not natively cover are NaN ("–").
Failed rows (status ≠ ok or parse_ok false) are scored wrong — no credit on BAD/swap records, an
alarm on GOOD records — except where a docstring says otherwise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .paired import s1_pjc, s2_j_strict, s3_j_harmonic, s4_j_strict
from .run_table import E_FAMILIES, LOCATIONS, PERSONA_HISTORY_FAMILY, PRODUCT_EVIDENCE_FAMILY, SWAP_AXES
from .scenarios import s2_mask, s3_history_mask, s3_product_mask, s4_mask
from .spec import MetricSpec, _frame, compose, harmonic, metric, safe_div

P, C, E, A = (frozenset(t) for t in "PCEA")
ALL = frozenset("PCEA")
_AXES = (*SWAP_AXES, "other")


def _nanmean(arrays):
    stack = np.stack([np.asarray(a, float) for a in arrays])
    n = (~np.isnan(stack)).sum(axis=0)
    return np.where(n > 0, np.nansum(stack, axis=0) / np.maximum(n, 1), np.nan)


# ---- Table 5 / Tab. 3 S1 ---------------------------------------------------------------------------


def _axis_stats(p: pd.DataFrame) -> pd.DataFrame:
    swap = p["is_swap"].to_numpy(bool)
    ax = p["swap_axis"].astype("string").fillna("other").to_numpy(object) if "swap_axis" in p else "other"
    ax = np.where(np.isin(ax, SWAP_AXES), ax, "other")
    hit = swap & (p["fam"].to_numpy(object) == "PREF_CONFLICT")
    cols = {}
    for a in _AXES:
        m = swap & (ax == a)
        cols[f"n_{a}"], cols[f"hit_{a}"] = m, hit & m
    return _frame(p, **cols)


def _axis_combine(s):
    rates = {a: safe_div(s[f"hit_{a}"], s[f"n_{a}"]) for a in _AXES}
    return {**rates, "s1_p_source": _nanmean(rates.values()), "n_swaps": sum(s[f"n_{a}"] for a in _AXES)}


@metric
def persona_swap_accuracy_by_axis() -> MetricSpec:
    """Table 5 (persona-swap accuracy by conflict axis) and the Tab. 3 S1 "P-source" column.

    Paper: "A hit requires predicting PREF_CONFLICT on a counterfactual persona swap" (Tab. 5);
    "S1 (P-source): ... the fraction of swapped records on which the predicted family is
    PREF_CONFLICT. A judge that marks the record BAD without naming the persona conflict receives no
    credit" (E.4); "the axis-mean of each method's Mean row also populates the S1 P-source column of
    Tab. 3" (E.5.2).

    Columns budget, hard_constraint, brand, attribute (and ``other`` for an unknown swap_axis): share
    of that axis's swap rows whose predicted family is PREF_CONFLICT (the verdict is not checked; a
    failed row is a miss). ``s1_p_source`` is the unweighted mean over axes that have swaps, as E.5.2
    says (it equals the pooled fraction when axes are balanced). Target P.
    """
    return MetricSpec("s1_p_source", _axis_stats, _axis_combine, dict.fromkeys((*_AXES, "s1_p_source"), P))


# ---- Table 6 / Tab. 3 S2 ---------------------------------------------------------------------------


def _s2_stats(p: pd.DataFrame) -> pd.DataFrame:
    m = s2_mask(p)
    det = m & p["v_bad"].to_numpy(bool)
    loc = det & (p["loc"].to_numpy(object) == p["gold_loc1"].to_numpy(object))
    return _frame(p, n=m, detect=det, loc=loc)


def _s2_combine(s):
    return {"detect": safe_div(s["detect"], s["n"]), "loc": safe_div(s["loc"], s["n"]), "n_records": s["n"]}


@metric
def cross_component_detect_localize() -> MetricSpec:
    """Table 6 (detect vs. 4-way localization) = the Tab. 3 S2 detect / loc. columns.

    Paper (E.4): "S2 detect: cross-component defect detection on records whose gold family is in
    {XCOMP_MISMATCH, INTENT_DRIFT, REDUNDANCY}. The score is the fraction of records marked BAD.
    S2 loc.: cross-component localization on the same evaluation slice. The score requires both a
    BAD verdict and correct 4-way response-field localization."

    ``detect`` = share with verdict BAD; ``loc`` = share with verdict BAD and predicted location =
    the gold field (rqList[1] → rqList, productCategoryList[0] → productCategoryList), over the
    single-defect BADs of those families (see :mod:`.scenarios`). Failed rows are misses. Target C.
    """
    return MetricSpec("s2_detect_loc", _s2_stats, _s2_combine, {"detect": C, "loc": C})


# ---- Tab. 3 S3 grounding ---------------------------------------------------------------------------


def _s3_stats(p: pd.DataFrame) -> pd.DataFrame:
    prod, hist = s3_product_mask(p), s3_history_mask(p)
    fam = p["fam"].to_numpy(object)
    v_bad = p["v_bad"].to_numpy(bool)
    good = p["is_good"].to_numpy(bool)
    no_e = good & p["ok"].to_numpy(bool) & ~np.isin(fam, list(E_FAMILIES))
    return _frame(p, n_prod=prod, hit_prod=prod & v_bad & (fam == PRODUCT_EVIDENCE_FAMILY),
                  n_hist=hist, hit_hist=hist & v_bad & (fam == PERSONA_HISTORY_FAMILY), n_good=good, no_e=no_e)  # fmt: skip


def _s3_combine(s):
    prod, hist = safe_div(s["hit_prod"], s["n_prod"]), safe_div(s["hit_hist"], s["n_hist"])
    spec = safe_div(s["no_e"], s["n_good"])
    return {"s3_grounding": harmonic(prod, hist, spec), "product": prod, "history": hist, "specificity": spec,
            "n_product": s["n_prod"], "n_history": s["n_hist"], "n_good": s["n_good"]}  # fmt: skip


@metric
def s3_grounding() -> MetricSpec:
    """Tab. 3 S3 grounding.

    Paper (E.4): "harmonic mean of three grounding sub-scores: product-evidence mismatch detection,
    persona-history hallucination detection, and GOOD-record specificity against evidence-family
    false alarms"; Tab. 23: "(i) BAD with exact EVIDENCE_MISMATCH family on the product-evidence
    subset, (ii) BAD with exact OVER_PERSONALIZATION_HALLUCINATION family on the persona-history
    subset, (iii) no E-family alarm on GOOD records (specificity)."

    ``product`` / ``history``: share of the single-defect BADs of that family with verdict BAD and
    exactly that family; ``specificity``: share of all GOOD records with an ok row and no E-family
    label (a failed row is an alarm). Harmonic mean, 0 if any part is 0. No containment gate here
    (that is Tab. 4's J-harmonic). Target E.
    """
    return MetricSpec("s3_grounding", _s3_stats, _s3_combine,
                      dict.fromkeys(("s3_grounding", "product", "history", "specificity"), E))  # fmt: skip


# ---- Tab. 3 S4 family / loc. -------------------------------------------------------------------------


def _s4_stats(p: pd.DataFrame) -> pd.DataFrame:
    m = s4_mask(p)
    fam_hit = m & (p["fam"].to_numpy(object) == p["gold_fam1"].to_numpy(object))
    loc_hit = m & (p["loc"].to_numpy(object) == p["gold_loc1"].to_numpy(object))
    return _frame(p, n=m, family=fam_hit, loc=loc_hit)


def _s4_combine(s):
    return {"family": safe_div(s["family"], s["n"]), "loc": safe_div(s["loc"], s["n"]), "n_records": s["n"]}


@metric
def s4_family_location() -> MetricSpec:
    """Tab. 3 S4 family / loc.

    Paper (E.4): "S4 family: exact defect-family prediction on single-defect BAD records across all
    seven defect families. S4 loc.: exact 4-way response-field localization on the same
    single-defect BAD slice."

    Shares of single-defect BADs (kind bad, tier 1) whose predicted family equals the gold family /
    whose predicted location equals the gold field. No verdict conjunct (none is stated). Failed rows
    are misses. Target A.
    """
    return MetricSpec("s4_family_loc", _s4_stats, _s4_combine, {"family": A, "loc": A})


# ---- false fire --------------------------------------------------------------------------------------


def _ff_stats(p: pd.DataFrame) -> pd.DataFrame:
    good = p["is_good"].to_numpy(bool)
    return _frame(p, n_good=good, fire=good & p["alarm"].to_numpy(bool))


@metric
def false_fire_rate() -> MetricSpec:
    """False-fire ↓ on GOOD records.

    Paper (E.4): "False-fire ↓: fraction of GOOD records on which the judge predicts any non-NONE
    defect family. Lower is better." A failed row on a GOOD record counts as a fire (it is wrong).
    Reported for every protocol (Tab. 3 shows it for the single-target baselines too).
    """
    return MetricSpec("false_fire", _ff_stats,
                      lambda s: {"false_fire": safe_div(s["fire"], s["n_good"]), "n_good": s["n_good"]})  # fmt: skip


# ---- Tab. 3 PACE avg. --------------------------------------------------------------------------------

TAB3_PARTS = {"S1": persona_swap_accuracy_by_axis, "S2": cross_component_detect_localize, "S3": s3_grounding,
              "S4": s4_family_location, "FF": false_fire_rate}  # fmt: skip


@metric
def pace_closure_average() -> MetricSpec:
    """Tab. 3 PACE avg.

    Paper (E.4): "PACE avg.: arithmetic mean of S1, S2-loc., S3 grounding, S4-family, and
    (1 − False-fire), with all components aligned so higher is better"; "rows missing any
    contributing PACE component report '–' for the PACE average". Target: all four.
    """

    def derived(o):
        parts = {"s1_p_source": o["S1:s1_p_source"], "s2_loc": o["S2:loc"], "s3_grounding": o["S3:s3_grounding"],
                 "s4_family": o["S4:family"], "false_fire": o["FF:false_fire"]}  # fmt: skip
        avg = (parts["s1_p_source"] + parts["s2_loc"] + parts["s3_grounding"] + parts["s4_family"]
               + (1.0 - parts["false_fire"])) / 5  # fmt: skip
        return {**parts, "pace_avg": avg}

    targets = {"s1_p_source": P, "s2_loc": C, "s3_grounding": E, "s4_family": A, "pace_avg": ALL}
    report = ("s1_p_source", "s2_loc", "s3_grounding", "s4_family", "false_fire", "pace_avg")
    return compose("pace_avg", dict(TAB3_PARTS), derived, targets, report)


# ---- D.3 multi-defect location hit rate ---------------------------------------------------------------


def _hit_stats(p: pd.DataFrame) -> pd.DataFrame:
    bad = p["is_bad"].to_numpy(bool)
    tier = p["tier"].to_numpy(int)
    loc = p["loc"].to_numpy(object)
    hit = np.zeros(len(p), bool)
    for f in LOCATIONS:
        hit |= (loc == f) & p[f"gold_has_{f}"].to_numpy(bool)
    cols = {}
    for t in (1, 2, 3, 4):
        m = bad & (tier == t)
        cols[f"n_t{t}"], cols[f"hit_t{t}"] = m, hit & m
    return _frame(p, **cols)


def _hit_combine(s):
    n_multi = s["n_t2"] + s["n_t3"] + s["n_t4"]
    out = {"exact_t1": safe_div(s["hit_t1"], s["n_t1"])}
    out |= {f"hit_t{t}": safe_div(s[f"hit_t{t}"], s[f"n_t{t}"]) for t in (2, 3, 4)}
    out["hit_multi"] = safe_div(s["hit_t2"] + s["hit_t3"] + s["hit_t4"], n_multi)
    out["n_multi"] = n_multi
    return out


@metric
def multi_defect_location_hit_rate() -> MetricSpec:
    """D.3 fault localization: the multi-defect location hit rate.

    Paper (D.3): "For single-defect records, exact match is reported directly. For multi-defect
    records the gold label is a set of locations while the current protocol outputs one prediction,
    so we report a hit rate—whether the predicted location appears in the gold set."

    ``hit_t2`` / ``hit_t3`` / ``hit_t4`` / ``hit_multi`` (tiers 2–4 pooled): share of multi-defect BADs
    whose predicted location is one of the gold fields (gold locations mapped to the 4 field labels);
    ``exact_t1``: the single-defect exact match. The verdict is not checked; failed rows are misses.
    Target A.
    """
    return MetricSpec("location_hit", _hit_stats, _hit_combine,
                      dict.fromkeys(("exact_t1", "hit_t2", "hit_t3", "hit_t4", "hit_multi"), A))  # fmt: skip


# ---- Table 28 -------------------------------------------------------------------------------------------

_TAB28 = {  # output -> (part, the part's output)
    "s1_swap_tpr": ("S1", "swap_tpr"), "s1_paired_good_spec": ("S1", "paired_good_spec"), "s2_tpr": ("S2", "tpr"),
    "s2_fpr": ("S2", "fpr"), "s3_ja": ("S3", "ja"), "s3_jb": ("S3", "jb"), "s3_spec": ("S3", "spec"),
    "s4_tpr": ("S4", "tpr"), "s4_fpr": ("S4", "fpr"),
}  # fmt: skip


@metric
def tpr_specificity_breakdown() -> MetricSpec:
    """Table 28: TPR / specificity / FPR breakdown of the paired-counterfactual metrics.

    Paper (E.8.2): "TPR / specificity / FPR breakdown of paired-counterfactual metrics; see Table 4
    for the J columns", with columns S1_P swap-TPR and paired-good-spec., S2_C TPR and FPR, S3_E Ja,
    Jb and spec., S4_A TPR and FPR; it documents "the swap-TPR / paired-good specificity that
    supports the strict paired-counterfactual gates of Tab. 4."

    Exactly the parts of :mod:`.paired`: s1_swap_tpr (swap BAD ∧ PREF_CONFLICT ∧ persona_alignment
    < 3), s1_paired_good_spec (GOOD base judged GOOD, per pair), s2_tpr / s2_fpr and s4_tpr / s4_fpr
    (the strict TPR and the GOOD-record FPR of J-strict), s3_ja / s3_jb (clipped Youden's J with
    containment) and s3_spec (paired no-E-alarm specificity).
    """
    parts = {
        "S1": s1_pjc,
        "S2": s2_j_strict,
        "S3": s3_j_harmonic,
        "S4": s4_j_strict,
    }
    targets = {k: parts[part].targets[out] for k, (part, out) in _TAB28.items()}
    return compose("tab28", parts, lambda o: {k: o[f"{part}:{out}"] for k, (part, out) in _TAB28.items()},
                   targets, tuple(_TAB28))  # fmt: skip


# ---- D.2 hallucinated-evidence rate --------------------------------------------------------------------


def _hall_stats(p: pd.DataFrame) -> pd.DataFrame:
    ok = p["ok"].to_numpy(bool)
    cited = p["n_cited"].to_numpy(float)
    outside = p["n_cited_outside"].to_numpy(float)
    return _frame(p, cited=cited, outside=outside, rows=ok & (cited > 0), rows_out=ok & (outside > 0))


@metric
def hallucinated_id_rate() -> MetricSpec:
    """D.2 D5 "hallucinated-evidence rate (fraction of cited IDs absent from the evidence pool)".

    ``hallucinated_id_rate``: cited supporting ids not in the row's candidate_evidence_ids / all
    cited ids (distinct per row), over ok rows; ``rows_with_hallucinated_id``: share of rows citing
    any id that cite at least one outside the pool. Failed rows cite nothing and are left out (the
    definition is over cited ids). Reported for every protocol.
    """
    return MetricSpec("hallucinated_ids", _hall_stats,
                      lambda s: {"hallucinated_id_rate": safe_div(s["outside"], s["cited"]),
                                 "rows_with_hallucinated_id": safe_div(s["rows_out"], s["rows"]),
                                 "n_cited": s["cited"]})  # fmt: skip


__all__ = [
    "persona_swap_accuracy_by_axis", "cross_component_detect_localize", "s3_grounding", "s4_family_location",
    "false_fire_rate", "pace_closure_average", "multi_defect_location_hit_rate", "tpr_specificity_breakdown",
    "hallucinated_id_rate",
]  # fmt: skip
