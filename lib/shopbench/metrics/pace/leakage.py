"""Evaluation-target leakage audit of the single-target adapted baselines (seed 000, Appendix C.2,
Table 20).

Paper (C.2): "The target-leakage audit (Tab. 20) then measures, on the same 3,400-record held-out
test set, the rate at which each adapted baseline emits a defect-family label outside its native
target (e.g., ARES-style firing PREF_CONFLICT on a record whose gold defect is compositional)."
Tab. 20: "Off-target firing rate: P/C/E columns are computed on records whose gold target is not the
baseline's native target. Lower is better; 0 means perfect abstention." "A genuine single-target
baseline should score near 0% on every non-native target" and "ARES-style and PersonaLens-style stay
under 1–2% on the Any off-target aggregate ... even though they show non-trivial target leakage on
individual P/C cells". The reference row: "PACEJudge supports all PACE targets natively (so the
relevant rate is family misclassification, not leakage)"; its Any cell is "n/a".

The two kinds of cell can only both hold (ARES: P 23 %, C 22 % but Any 2 %) if they measure
different things, so we read them as:

* ``<X>_off_target`` for a non-native target X: over defect records (kind bad or swap) whose gold
  families include a target-X family and none of the native target — the share on which the
  baseline emits ANY defect family (it reacted to a defect it does not natively judge).
* ``any_off_target``: over defect records whose gold families include none of the native target —
  the share on which the baseline emits a family OUTSIDE its native target's families ("ARES-style
  fires a non-evidence defect family on under 2% of off-target records", C.3.2).
* reference row (a protocol covering several targets): ``<X>_off_target`` = over defect records
  whose gold families are all of target X, the share labelled with a family of another target
  (family misclassification; a NONE label is a miss, not a misclassification); ``any_off_target``
  is "n/a".

Family → target follows E.4 ("each defect family belongs to exactly one target"): PREF_CONFLICT is
P; XCOMP_MISMATCH, INTENT_DRIFT, REDUNDANCY are C; EVIDENCE_MISMATCH,
OVER_PERSONALIZATION_HALLUCINATION, UNSUPPORTED_CLAIM are E. No family belongs to A, so for an
A-native baseline (EtaPP-style) every emitted family is off-target — which reproduces its 99 % Any
cell; its printed P/C/E cells of 0 % cannot be reproduced by the same definition (C.3.2 only says it
"emits some defect family on 99% of off-target records"), and ours will be high. C.3.2 also lets
PersonaLens-style emit OVER_PERSONALIZATION_HALLUCINATION as a "persona-target label", which the E.4
partition counts as E; we follow E.4.

``axis_off_target`` is OUR addition (not in the paper), for "outputs that still encode the other
targets": the share of ok rows on which an axis score of a non-native target is reported and differs
from the neutral 3.0 the adapted prompts pin it to (C.3.2). It is "n/a" for multi-target protocols.

A failed row counts as leakage (it is wrong: the judge did not demonstrably abstain). Native cells
are NaN with status ``"native"``, undefined ones NaN with ``"n/a"``; they are never filled.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .run_table import (
    AXIS_THRESHOLD,
    BY,
    FAMILY_TARGET,
    NONE,
    TARGET_AXIS,
    native_targets_of,
    prepare,
    usable,
)

NEUTRAL_SCORE = AXIS_THRESHOLD  # the 3.0 pin of the adapted baselines' non-native axes (C.3.2)
COLUMNS = ("P_off_target", "C_off_target", "E_off_target", "any_off_target", "axis_off_target")


def _put(row: dict, col: str, num, den, status: str = "measured") -> None:
    n = int(den.sum()) if den is not None else 0
    row[col] = (num.sum() / n if n else np.nan) if status == "measured" else np.nan
    row[f"{col}_status"] = status
    row[f"n_{col}"] = n


def _fam_target(fam: np.ndarray) -> np.ndarray:
    return pd.Series(fam).map(FAMILY_TARGET).fillna("").to_numpy(object)


def leakage_audit(run_table: pd.DataFrame, *, by=BY, native_targets=None) -> pd.DataFrame:
    """Table 20 per group: off-target firing rates (single-target protocols) or family
    misclassification (multi-target reference rows).

    Columns: ``row_kind`` ("leakage" | "reference"), ``native`` (e.g. "E"), the rates
    ``P_off_target``, ``C_off_target``, ``E_off_target``, ``any_off_target``, ``axis_off_target``
    (NaN where not defined), one ``<column>_status`` per rate ("measured" | "native" | "n/a") and
    ``n_<column>`` denominators. ``by`` must include "protocol". Definitions: module docstring.
    """
    by = list(by)
    if "protocol" not in by:
        raise ValueError("leakage_audit needs 'protocol' in by: the native target is a protocol property")
    p = usable(prepare(run_table)).reset_index(drop=True)  # call errors are no answers (issue 25)
    defect = (p["is_bad"] | p["is_swap"]).to_numpy(bool)
    ok = p["ok"].to_numpy(bool)
    fam = p["fam"].to_numpy(object)
    fired = ~ok | (fam != NONE)
    ftarget = _fam_target(fam)
    gold = {t: p[f"gold_is_{t}"].to_numpy(bool) for t in "PCE"}
    n_gold_targets = sum(g.astype(int) for g in gold.values())
    rows = []
    for key, idx in p.groupby(by, sort=True).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        native = native_targets_of(dict(zip(by, key, strict=True))["protocol"], native_targets)
        d, f, ok_, ft = defect[idx], fired[idx], ok[idx], ftarget[idx]
        g = {t: v[idx] for t, v in gold.items()}
        row: dict = dict(zip(by, key, strict=True))
        row["native"] = "".join(t for t in "PCEA" if t in native)

        put = functools.partial(_put, row)
        if len(native) == 1:
            row["row_kind"] = "leakage"
            (nt,) = native
            native_gold = g[nt] if nt in g else np.zeros(len(idx), bool)
            for t in "PCE":
                col = f"{t}_off_target"
                if t in native:
                    put(col, None, None, "native")
                else:
                    den = d & g[t] & ~native_gold
                    put(col, den & f, den)
            den = d & ~native_gold
            outside = ~ok_ | ((ft != "") & ~np.isin(ft, list(native)))
            put("any_off_target", den & outside, den)
            off_axes = [f"s_{t}" for t in TARGET_AXIS if t not in native]
            vals = p.iloc[idx][off_axes].to_numpy(float) if off_axes else np.full((len(idx), 0), np.nan)
            enc = (~np.isnan(vals) & (vals != NEUTRAL_SCORE)).any(axis=1)
            put("axis_off_target", ok_ & enc, ok_)
        else:
            row["row_kind"] = "reference"
            for t in "PCE":
                den = d & g[t] & (n_gold_targets[idx] == 1)
                mis = ~ok_ | ((ft != "") & (ft != t))
                put(f"{t}_off_target", den & mis, den)
            put("any_off_target", None, None, "n/a")
            put("axis_off_target", None, None, "n/a")
        rows.append(row)
    out = pd.DataFrame(rows).set_index(by)
    lead = ["row_kind", "native", *COLUMNS]
    return out[lead + [c for c in out.columns if c not in lead]]


__all__ = ["leakage_audit", "COLUMNS", "NEUTRAL_SCORE"]
