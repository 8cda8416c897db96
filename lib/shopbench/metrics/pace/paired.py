"""Strict paired-counterfactual PACE-closure metrics of Table 4 (seed 000, Section 5.2, Appendix E.4).

"The paired-counterfactual columns close the 'always cry BAD' loophole left open by single
positive-class metrics" (E.4). Each S1–S4 score is "a joint metric that requires more than detecting
BAD examples: the judge must also satisfy target-specific conditions. These gates prevent an
always-BAD judge from receiving high credit through over-flagging" (Tab. 4 caption).

Every function returns one row per group (default ``by=("protocol", "backbone")``) with the metric,
its parts (TPR / FPR / raw J) and counts, and a ``supported`` flag; a protocol that does not natively
cover the metric's PACE target gets NaN ("–"). Failed rows (status ≠ ok or parse_ok false) are
scored wrong: no credit on a BAD/swap record, an alarm on a GOOD record.

What our copy of the paper does not state, and what we chose:

* Clipping. No J cell of Tab. 4 or of the Ja/Jb columns of Tab. 28 is negative, although an
  over-firing judge's TPR − FPR must be (e.g. Tab. 23 EtaPP-style Sonnet 4.6 fires on 35 % of GOOD
  records and scores S4 J-strict 0.00). We report ``max(0, TPR − FPR)`` and keep the unclipped value
  in ``j_raw``. A harmonic mean is undefined for negative parts, which supports the same reading.
* Youden's J of S3. Tab. 28 lists Ja = 0.29 with GOOD specificity 0.17 (G-Eval, Sonnet 4.6); with
  the any-E-family false-alarm rate (0.83) as FPR, Ja would need TPR 1.12. So each J's FPR is the
  rate of the SAME family (EVIDENCE_MISMATCH for Ja, OVER_PERSONALIZATION_HALLUCINATION for Jb) on
  GOOD records, while the third part is the any-E-family specificity.
* "Paired" GOOD records of S3 are the GOOD base records of that J's BAD slice (for the specificity
  part: of both slices), within the same judge run. S2 and S4 say "on GOOD records": all GOOD
  records of the run.
* Target triage (S4): "the lowest relevant PACEJudge axis matches the defect's target". The relevant
  axes are persona_alignment (P), component_consistency (C), evidence_grounding (E); the gold family's
  target axis must be STRICTLY lowest (a tie fails: the paper notes EtaPP-style's scores pinned at 3.0
  fail the conjunct). A missing target axis fails; a missing other axis is ignored.
* S4 lists no BAD-verdict conjunct ("exact family + exact 4-way location + target-triage +
  confidence ≥ 0.5"), S2 does ("BAD verdict, family ∈ D_C, ..."); we follow each literally. A
  "confident false alarm" on GOOD is a non-NONE family with confidence ≥ 0.5 (the False-fire
  notion of an alarm) — or a failed row.
* Repeats are separate observations; a PJC pair joins a swap row with its GOOD base's row of the
  same (protocol, backbone, repeat). A swap whose base row is missing earns no credit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .run_table import (
    AXIS_THRESHOLD,
    C_FAMILIES,
    CONFIDENCE_GATE,
    E_FAMILIES,
    NONE,
    PERSONA_HISTORY_FAMILY,
    PRODUCT_EVIDENCE_FAMILY,
    native_targets_of,
)
from .scenarios import RUN_KEYS, paired_good_mask, s2_mask, s3_history_mask, s3_product_mask, s4_mask
from .spec import MetricSpec, _frame, compose, harmonic, metric, safe_div

P, C, E, A = (frozenset(t) for t in "PCEA")
ALL = frozenset("PCEA")


def _youden(tp, n_pos, fa, n_neg):
    tpr, fpr = safe_div(tp, n_pos), safe_div(fa, n_neg)
    raw = tpr - fpr
    return np.where(np.isnan(raw), np.nan, np.maximum(raw, 0.0)), raw, tpr, fpr


# ---- S1 PJC ------------------------------------------------------------------------------------------


def _pjc_stats(p: pd.DataFrame) -> pd.DataFrame:
    keys = [k for k in RUN_KEYS if k in p]
    rep = "repeat" if "repeat" in p else None
    swap = p.loc[p["is_swap"].to_numpy(bool)]
    if swap.empty:
        return _frame(swap, n_pairs=[], pjc=[], swap_hit=[], good_ok=[])
    good = p.loc[p["is_good"].to_numpy(bool), [*keys, "record_id", *([rep] if rep else []), "v_good"]]
    good = good.assign(base_id=good["record_id"].astype(str)).drop(columns="record_id")
    on = [*keys, "base_id", *([rep] if rep else [])]
    good = good.drop_duplicates(on)
    m = swap[on].merge(good, how="left", on=on)
    good_ok = m["v_good"].fillna(False).to_numpy(bool)
    swap_hit = (
        swap["v_bad"].to_numpy(bool)
        & (swap["fam"].to_numpy(object) == "PREF_CONFLICT")
        & (swap["s_P"].to_numpy(float) < AXIS_THRESHOLD)  # NaN < 3.0 is False
    )
    return _frame(
        swap, n_pairs=np.ones(len(swap)), pjc=good_ok & swap_hit, swap_hit=swap_hit, good_ok=good_ok
    )


def _pjc_combine(s):
    return {"s1_pjc": safe_div(s["pjc"], s["n_pairs"]), "swap_tpr": safe_div(s["swap_hit"], s["n_pairs"]),
            "paired_good_spec": safe_div(s["good_ok"], s["n_pairs"]), "n_pairs": s["n_pairs"]}  # fmt: skip


@metric
def s1_pjc() -> MetricSpec:
    """S1_P PJC — Joint Pair Credit (the brief's "paired judge consistency").

    Paper (E.4): "Joint Pair Credit on (good, swap) pairs sharing a base record id. The judge must
    classify the original-persona record as GOOD and the swapped-persona record as BAD with family =
    PREF_CONFLICT and persona_alignment axis < 3.0 on the same paired record. A persona-blind judge
    cannot pass this gate."

    Implemented per swap record: credit iff its GOOD base (same run and repeat) has verdict GOOD AND
    the swap has verdict BAD, family PREF_CONFLICT and persona_alignment < 3.0; PJC = credits /
    swaps. Also ``swap_tpr`` (the swap conjuncts alone) and ``paired_good_spec`` (base judged GOOD),
    the Tab. 28 S1 columns. Failed rows, and swaps whose base row is missing, earn no credit.
    Target P.
    """
    return MetricSpec(
        "s1_pjc", _pjc_stats, _pjc_combine, dict.fromkeys(("s1_pjc", "swap_tpr", "paired_good_spec"), P)
    )


# ---- S2 J-strict ---------------------------------------------------------------------------------------


def _s2_stats(p: pd.DataFrame) -> pd.DataFrame:
    m = s2_mask(p)
    ok = p["ok"].to_numpy(bool)
    fam = p["fam"].to_numpy(object)
    in_c = np.isin(fam, list(C_FAMILIES))
    tp = (m & p["v_bad"].to_numpy(bool) & in_c & (p["loc"].to_numpy(object) == p["gold_loc1"].to_numpy(object))
          & (p["s_C"].to_numpy(float) < AXIS_THRESHOLD))  # fmt: skip
    good = p["is_good"].to_numpy(bool)
    return _frame(p, n_bad=m, tp=tp, n_good=good, fa=good & (~ok | in_c))


def _j_strict_combine(name: str):
    """The combine step shared by the J-strict metrics: Youden's J of the TP and false-alarm counts."""

    def combine(s):
        j, raw, tpr, fpr = _youden(s["tp"], s["n_bad"], s["fa"], s["n_good"])
        return {name: j, "j_raw": raw, "tpr": tpr, "fpr": fpr, "n_bad": s["n_bad"], "n_good": s["n_good"]}

    return combine


_s2_combine = _j_strict_combine("s2_j_strict")


@metric
def s2_j_strict() -> MetricSpec:
    """S2_C J-strict.

    Paper (E.4): "BAD verdict, family ∈ D_C, correct 4-way location, and component-consistency axis
    < 3.0, minus the false-C-family alarm rate on GOOD records." D_C = {XCOMP_MISMATCH, INTENT_DRIFT,
    REDUNDANCY} (E.3).

    Implemented as max(0, TPR − FPR): TPR over single-defect BADs with gold family in D_C of
    [verdict BAD ∧ predicted family ∈ D_C ∧ predicted location = gold field ∧ component_consistency
    < 3.0]; FPR over all GOOD records of [predicted family ∈ D_C, or failed row]. ``j_raw`` is
    TPR − FPR unclipped. Target C.
    """
    return MetricSpec(
        "s2_j_strict", _s2_stats, _s2_combine, dict.fromkeys(("s2_j_strict", "j_raw", "tpr", "fpr"), C)
    )


# ---- S3 J-harmonic --------------------------------------------------------------------------------------


def _s3_stats(p: pd.DataFrame) -> pd.DataFrame:
    ok = p["ok"].to_numpy(bool)
    fam = p["fam"].to_numpy(object)
    v_bad = p["v_bad"].to_numpy(bool)
    contained = p["contained"].to_numpy(bool)
    prod, hist = s3_product_mask(p), s3_history_mask(p)
    pg_a, pg_b, pg = paired_good_mask(p, prod), paired_good_mask(p, hist), paired_good_mask(p, prod | hist)
    in_e = np.isin(fam, list(E_FAMILIES))
    return _frame(
        p,
        n_a=prod, tp_a=prod & v_bad & (fam == PRODUCT_EVIDENCE_FAMILY) & contained,
        n_good_a=pg_a, fa_a=pg_a & (~ok | (fam == PRODUCT_EVIDENCE_FAMILY)),
        n_b=hist, tp_b=hist & v_bad & (fam == PERSONA_HISTORY_FAMILY) & contained,
        n_good_b=pg_b, fa_b=pg_b & (~ok | (fam == PERSONA_HISTORY_FAMILY)),
        n_good=pg, spec_ok=pg & ok & ~in_e,
    )  # fmt: skip


def _s3_combine(s):
    ja, ja_raw, tpr_a, fpr_a = _youden(s["tp_a"], s["n_a"], s["fa_a"], s["n_good_a"])
    jb, jb_raw, tpr_b, fpr_b = _youden(s["tp_b"], s["n_b"], s["fa_b"], s["n_good_b"])
    spec = safe_div(s["spec_ok"], s["n_good"])
    return {"s3_j_harmonic": harmonic(ja, jb, spec), "ja": ja, "jb": jb, "spec": spec,
            "ja_raw": ja_raw, "jb_raw": jb_raw, "tpr_a": tpr_a, "fpr_a": fpr_a, "tpr_b": tpr_b, "fpr_b": fpr_b,
            "n_product": s["n_a"], "n_history": s["n_b"], "n_paired_good": s["n_good"]}  # fmt: skip


@metric
def s3_j_harmonic() -> MetricSpec:
    """S3_E J-harmonic, with Youden's J and the evidence-id containment gate.

    Paper (E.4): "harmonic of three E sub-scores: Youden's J on product-evidence BADs with
    supporting_evidence_ids ⊆ candidate pool; Youden's J on persona-history BADs with the same
    containment check; and paired specificity (no E-family alarm on GOOD records). The containment
    check makes 'hallucinate evidence IDs' a scored failure mode." (Our copy rendered the subset sign
    and the family sets; Youden's J = TPR − FPR is not spelled out.)

    Implemented: Ja = max(0, TPR_a − FPR_a), TPR_a over single-defect EVIDENCE_MISMATCH BADs of
    [verdict BAD ∧ family = EVIDENCE_MISMATCH ∧ supporting ids ⊆ candidate_evidence_ids] (the E.3
    "correct grounding-related defect family"; an empty id list is contained), FPR_a over their
    paired GOOD bases of [family = EVIDENCE_MISMATCH, or failed]; Jb the same for
    OVER_PERSONALIZATION_HALLUCINATION; spec = share of the paired GOOD bases of both slices with an
    ok row and no E-family label. J-harmonic = 3 / (1/Ja + 1/Jb + 1/spec), 0 if any part is 0.
    Target E.
    """
    outs = ("s3_j_harmonic", "ja", "jb", "spec", "ja_raw", "jb_raw", "tpr_a", "fpr_a", "tpr_b", "fpr_b")
    return MetricSpec("s3_j_harmonic", _s3_stats, _s3_combine, dict.fromkeys(outs, E))


# ---- S4 J-strict ---------------------------------------------------------------------------------------


def target_triage(p: pd.DataFrame) -> np.ndarray:
    """Per row: the gold single-defect family's target axis is strictly the lowest of s_P, s_C, s_E."""
    vals = np.stack([p["s_P"].to_numpy(float), p["s_C"].to_numpy(float), p["s_E"].to_numpy(float)], axis=1)
    idx = pd.Series(p["gold_target1"].to_numpy(object)).map({"P": 0, "C": 1, "E": 2}).fillna(-1).to_numpy(int)
    rows = np.arange(len(p))
    tv = vals[rows, np.clip(idx, 0, 2)]
    others = np.where(np.isnan(vals), np.inf, vals)
    others[rows, np.clip(idx, 0, 2)] = np.inf
    return (idx >= 0) & ~np.isnan(tv) & (tv < others.min(axis=1))


def _s4_stats(p: pd.DataFrame) -> pd.DataFrame:
    m = s4_mask(p)
    ok = p["ok"].to_numpy(bool)
    fam = p["fam"].to_numpy(object)
    conf_ok = p["conf"].to_numpy(float) >= CONFIDENCE_GATE
    tp = (m & ok & (fam == p["gold_fam1"].to_numpy(object)) & (p["loc"].to_numpy(object) == p["gold_loc1"].to_numpy(object))
          & target_triage(p) & conf_ok)  # fmt: skip
    good = p["is_good"].to_numpy(bool)
    return _frame(p, n_bad=m, tp=tp, n_good=good, fa=good & (~ok | ((fam != NONE) & conf_ok)))


_s4_combine = _j_strict_combine("s4_j_strict")


@metric
def s4_j_strict() -> MetricSpec:
    """S4_A J-strict with target triage and the confidence ≥ 0.5 gate.

    Paper (E.4): "exact family + exact 4-way location + target-triage (the lowest relevant PACEJudge
    axis matches the defect's target) + confidence ≥ 0.5, minus the confident-false-alarm rate on
    GOOD records."

    Implemented as max(0, TPR − FPR): TPR over single-defect BADs (all seven families) of [family =
    gold family ∧ location = gold field ∧ gold target's axis strictly lowest of persona_alignment /
    component_consistency / evidence_grounding ∧ confidence ≥ 0.5]; FPR over all GOOD records of
    [non-NONE family with confidence ≥ 0.5, or failed]. A missing confidence fails the gate. Target A.
    """
    return MetricSpec(
        "s4_j_strict", _s4_stats, _s4_combine, dict.fromkeys(("s4_j_strict", "j_raw", "tpr", "fpr"), A)
    )


# ---- the PACE aggregate ---------------------------------------------------------------------------------

PACE_PARTS = {"S1": ("s1_pjc", s1_pjc), "S2": ("s2_j_strict", s2_j_strict),
              "S3": ("s3_j_harmonic", s3_j_harmonic), "S4": ("s4_j_strict", s4_j_strict)}  # fmt: skip


@metric
def pace_score() -> MetricSpec:
    """Table 4 PACE: "arithmetic mean of S1_P, S2_C, S3_E, and S4_A" (E.4).

    Columns s1_pjc, s2_j_strict, s3_j_harmonic, s4_j_strict, pace. A protocol missing any of the
    four targets gets "–" for the PACE cell (Tab. 19: "the joint S1–S4 PACE average is undefined for
    them"); a part that is NaN (no records) makes the average NaN.
    """

    def derived(o):
        vals = {out: o[f"{k}:{out}"] for k, (out, _) in PACE_PARTS.items()}
        return {**vals, "pace": sum(vals.values()) / len(vals)}  # NaN in any part → NaN

    targets = {out: spec.targets[out] for out, spec in PACE_PARTS.values()} | {"pace": ALL}
    report = (*(out for out, _ in PACE_PARTS.values()), "pace")
    return compose("pace", {k: spec for k, (_, spec) in PACE_PARTS.items()}, derived, targets, report)


# ---- lift rows --------------------------------------------------------------------------------------------


def default_baselines(protocols: Iterable[str], protocol: str, native_targets=None) -> list[str]:
    """The "PACE-compatible" baselines of Tab. 4: every other protocol covering more than one target
    (the single-target adapted baselines are not compared)."""
    return [q for q in protocols if q != protocol and len(native_targets_of(q, native_targets)) > 1]


def lift(table: pd.DataFrame, protocol: str, baselines: str | Sequence[str] | None = None, *,
         backbone: str | None = None, columns: Sequence[str] | None = None,
         native_targets=None) -> pd.Series:  # fmt: skip
    """A lift row of Tab. 4: ``protocol`` minus the best baseline, per column.

    Paper (Tab. 4): "Lift: PACEJudge mean vs. best PACE-compatible baseline mean" and "Lift:
    PACEJudge on Sonnet 4.6 vs. best Sonnet 4.6 baseline" — "per-target lift". ``table`` is a point
    estimate table indexed by (protocol, backbone) (e.g. :func:`pace_score`). With ``backbone=None``
    each protocol is first averaged over backbones; otherwise only that backbone is compared. The best
    baseline is chosen per column among non-NaN ("supported") cells — the paper's printed lifts
    (e.g. S2 +0.13 = 0.46 − 0.34 of Persona-blind/Scalar) match a per-column maximum.
    ``baselines`` defaults to :func:`default_baselines`.
    """
    cols = [c for c in (columns or table.columns) if c != "supported" and not str(c).startswith("n_")]
    t = table[cols]
    if backbone is None:
        rows = t.groupby(level="protocol").mean()
    else:
        rows = t.xs(backbone, level="backbone")
    protos = list(rows.index)
    if baselines is None:
        baselines = default_baselines(protos, protocol, native_targets)
    elif isinstance(baselines, str):
        baselines = [baselines]
    best = rows.loc[list(baselines)].max(axis=0, skipna=True)
    return (rows.loc[protocol] - best).rename(f"lift {protocol} vs best of {list(baselines)}")


__all__ = [
    "s1_pjc", "s2_j_strict", "s3_j_harmonic", "s4_j_strict", "pace_score", "lift", "target_triage",
    "default_baselines", "PACE_PARTS",
]  # fmt: skip
