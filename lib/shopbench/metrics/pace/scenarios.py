"""PACE evaluation scenarios S0–S4 (seed 000, Section 5.2, Appendix E.2–E.4): the record sets each
scenario scores and the S0 reference metric.

Scenario record sets (E.3; :func:`scenario_rows` returns them with a ``role`` column):

* S0 — "balanced GOOD/BAD accuracy on a fixed balanced subset" / "on a 50+50 reference subset".
  The subset is passed in as record ids (:func:`select_s0_subset` draws one).
* S1 — "persona-swap records that hold the query and response fixed while replacing the persona";
  the strict PJC pairs each swap with "the original-persona record" sharing its base record id.
* S2 — "cross-component defects such as XCOMP_MISMATCH, INTENT_DRIFT, and REDUNDANCY": BAD records
  "whose gold family is in {XCOMP_MISMATCH, INTENT_DRIFT, REDUNDANCY}". Read literally, a "+"-joined
  multi-defect gold family is not *in* that set, so the slice is the single-defect (tier-1) BADs of
  those families (the paper's Tab. 25 calls it a "100-record cross-field defect subset"; how those
  100 were drawn is not in our copy). GOOD records supply the false-alarm term of J-strict.
* S3 — "product-evidence" BADs (gold family EVIDENCE_MISMATCH) and "persona-history" BADs (gold
  family OVER_PERSONALIZATION_HALLUCINATION), single-defect for the same reason, plus GOOD records.
* S4 — "single-defect BAD records across all seven defect families" (kind ``bad``, tier 1; persona
  swaps are S1 records and have no field location), plus GOOD records for the false-alarm term.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from shopbench.core.taxonomy import FAMILIES

from .run_table import C_FAMILIES, PERSONA_HISTORY_FAMILY, PRODUCT_EVIDENCE_FAMILY, prepare
from .spec import MetricSpec, _frame, metric, safe_div

# ---- scenario record sets ------------------------------------------------------------------------


def _col(p, c):
    return p[c].to_numpy()


def s2_mask(p: pd.DataFrame) -> np.ndarray:
    """S2 slice: single-defect BAD records whose gold family is in D_C."""
    return _col(p, "single") & np.isin(_col(p, "gold_fam1"), list(C_FAMILIES))


def s3_product_mask(p: pd.DataFrame) -> np.ndarray:
    """S3 product-evidence BADs: single-defect, gold family EVIDENCE_MISMATCH."""
    return _col(p, "single") & (_col(p, "gold_fam1") == PRODUCT_EVIDENCE_FAMILY)


def s3_history_mask(p: pd.DataFrame) -> np.ndarray:
    """S3 persona-history BADs: single-defect, gold family OVER_PERSONALIZATION_HALLUCINATION."""
    return _col(p, "single") & (_col(p, "gold_fam1") == PERSONA_HISTORY_FAMILY)


def s4_mask(p: pd.DataFrame) -> np.ndarray:
    """S4 slice: single-defect BAD records of all seven families."""
    return _col(p, "single") & np.isin(_col(p, "gold_fam1"), FAMILIES)


RUN_KEYS = ("protocol", "backbone")  # one judge run: pairs never cross runs


def paired_good_mask(p: pd.DataFrame, bad_mask: np.ndarray) -> np.ndarray:
    """GOOD rows whose record is the base of some row in ``bad_mask`` within the same judge run."""
    by = [b for b in RUN_KEYS if b in p]
    bases = pd.MultiIndex.from_frame(p.loc[bad_mask, [*by, "base_id"]]) if by else None
    if by:
        keys = pd.MultiIndex.from_arrays([p[b] for b in by] + [p["record_id"].astype(str)])
        return _col(p, "is_good") & keys.isin(bases)
    return _col(p, "is_good") & p["record_id"].astype(str).isin(set(p.loc[bad_mask, "base_id"])).to_numpy()


def scenario_rows(
    run_table: pd.DataFrame, scenario: str, *, s0_ids: Iterable[str] | None = None
) -> pd.DataFrame:
    """The run-table rows a scenario scores, with a ``role`` column.

    * ``"S0"``: the S0 subset (``s0_ids``; all GOOD and BAD records when None) — roles ``good`` / ``bad``.
    * ``"S1"``: persona swaps (``swap``) and their GOOD bases (``good``).
    * ``"S2"``: single-defect BADs with gold family in D_C (``bad``) and all GOOD records (``good``).
    * ``"S3"``: product-evidence BADs (``product``), persona-history BADs (``history``) and all GOOD
      records (``good``; :func:`~shopbench.metrics.pace.paired.s3_j_harmonic` uses the paired subset).
    * ``"S4"``: single-defect BADs of all seven families (``bad``) and all GOOD records (``good``).
    """
    p = prepare(run_table)
    role = pd.Series(pd.NA, index=p.index, dtype="string")
    good = _col(p, "is_good")
    if scenario == "S0":
        sel = _s0_mask(p, s0_ids)
        role[sel & good] = "good"
        role[sel & (p["label"].astype("string").str.upper() == "BAD").to_numpy(bool)] = "bad"
    elif scenario == "S1":
        swap = _col(p, "is_swap")
        role[paired_good_mask(p, swap)] = "good"
        role[swap] = "swap"
    elif scenario == "S2":
        role[good] = "good"
        role[s2_mask(p)] = "bad"
    elif scenario == "S3":
        role[good] = "good"
        role[s3_product_mask(p)] = "product"
        role[s3_history_mask(p)] = "history"
    elif scenario == "S4":
        role[good] = "good"
        role[s4_mask(p)] = "bad"
    else:
        raise ValueError(f"unknown scenario {scenario!r}: expected one of S0, S1, S2, S3, S4")
    keep = role.notna().to_numpy(bool)
    return run_table.loc[keep].assign(role=role[keep].to_numpy())


def select_s0_subset(run_table: pd.DataFrame, n_per_class: int = 50, seed: int = 0) -> list[str]:
    """A balanced S0 reference subset: ``n_per_class`` GOOD and ``n_per_class`` BAD record ids (kind
    good / bad, persona swaps excluded), drawn uniformly with ``seed`` from the sorted unique ids."""
    rng = np.random.default_rng(seed)
    out: list[str] = []
    for kind in ("good", "bad"):
        ids = np.sort(run_table.loc[run_table["kind"] == kind, "record_id"].astype(str).unique())
        out += list(rng.choice(ids, size=min(n_per_class, len(ids)), replace=False))
    return sorted(out)


# ---- S0 ------------------------------------------------------------------------------------------------


def _s0_mask(p: pd.DataFrame, ids: Iterable[str] | None) -> np.ndarray:
    if ids is None:
        return _col(p, "is_good") | _col(p, "is_bad")
    return p["record_id"].astype(str).isin({str(i) for i in ids}).to_numpy()


@metric
def s0_balanced_accuracy(subset_ids: Iterable[str] | None = None) -> MetricSpec:
    """S0 reference GOOD/BAD balanced accuracy on the 50+50 subset.

    Paper (E.4): "S0 (Gen.): balanced GOOD/BAD accuracy on a 50+50 reference subset. This is a
    sanity check, not part of the PACE average." Implemented as ½·(TPR + TNR) with BAD positive:
    TPR = share of gold-BAD subset rows with verdict BAD, TNR = share of gold-GOOD subset rows with
    verdict GOOD. ``subset_ids`` are the subset's record ids (None: every GOOD and BAD record, swaps
    excluded). A failed row is wrong on either side. S0 is defined for every protocol.
    """
    ids = None if subset_ids is None else frozenset(str(i) for i in subset_ids)

    def stats(p):
        m = _s0_mask(p, ids)
        bad = m & (p["label"].astype("string").str.upper() == "BAD").to_numpy(bool)
        good = m & _col(p, "is_good")
        return _frame(p, n_bad=bad, tp=bad & _col(p, "v_bad"), n_good=good, tn=good & _col(p, "v_good"))

    def combine(s):
        tpr, tnr = safe_div(s["tp"], s["n_bad"]), safe_div(s["tn"], s["n_good"])
        return {"s0_balanced_accuracy": (tpr + tnr) / 2, "tpr": tpr, "tnr": tnr,
                "n_bad": s["n_bad"], "n_good": s["n_good"]}  # fmt: skip

    return MetricSpec("s0_balanced_accuracy", stats, combine, {})


__all__ = ["scenario_rows", "select_s0_subset", "s0_balanced_accuracy", "s2_mask", "s3_product_mask",
           "s3_history_mask", "s4_mask", "paired_good_mask", "RUN_KEYS"]  # fmt: skip
