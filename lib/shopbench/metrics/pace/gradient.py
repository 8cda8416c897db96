"""The difficulty gradient: GOOD/BAD accuracy by defect tier (seed 000, Figure 4, Appendix E.8.1).

Paper: "GOOD/BAD accuracy by defect tier. BAD records are grouped by the number of injected defects.
The 1-defect tier isolates the hardest setting for surface-level detection, while higher tiers expose
whether methods mainly benefit from accumulating defects" (Fig. 4). "Per-tier accuracy (computed
separately per defect count) reveals two distinct regimes: 1. Deterministic baseline: accuracy rises
monotonically from single (0.880) to quad (0.975) on the development set, because more defects
trigger more rule-based checks. 2. LLM judges: tier profiles are flatter for frontier models" (E.8.1).

On a tier of BAD records every record's gold label is BAD, so "accuracy" there is the share judged
BAD. We also report the GOOD records' accuracy (``good``, share judged GOOD) for context and the
``gradient`` = tier-4 minus tier-1 accuracy (E.8.1's "steeper gradients"). Persona swaps (tier 1 in
the record schema) are not defect tiers and are left out. A failed row is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .run_table import BY
from .spec import MetricSpec, _frame, metric, safe_div

TIERS = (1, 2, 3, 4)


def _stats(p: pd.DataFrame) -> pd.DataFrame:
    bad = p["is_bad"].to_numpy(bool)
    tier = p["tier"].to_numpy(int)
    v_bad = p["v_bad"].to_numpy(bool)
    good = p["is_good"].to_numpy(bool)
    cols = {"n_good": good, "hit_good": good & p["v_good"].to_numpy(bool)}
    for t in TIERS:
        m = bad & (tier == t)
        cols[f"n_t{t}"], cols[f"hit_t{t}"] = m, m & v_bad
    return _frame(p, **cols)


def _combine(s):
    out = {f"tier_{t}": safe_div(s[f"hit_t{t}"], s[f"n_t{t}"]) for t in TIERS}
    out["good"] = safe_div(s["hit_good"], s["n_good"])
    out["gradient"] = out["tier_4"] - out["tier_1"]
    return out


@metric
def tier_accuracy() -> MetricSpec:
    """Figure 4's per-tier accuracy as a spec (for :func:`~.headline.bootstrap_ci`); see
    :func:`accuracy_by_tier`, which adds the deterministic baseline row."""
    return MetricSpec("tier_accuracy", _stats, _combine, {})


def _deterministic_row(run_table: pd.DataFrame, deterministic: Mapping, by) -> pd.DataFrame:
    recs = run_table.drop_duplicates("record_id")
    recs = recs[recs["kind"].isin(["good", "bad"])]
    rows = {}
    for t, sel in [*((f"tier_{t}", (recs["kind"] == "bad") & (recs["tier"] == t)) for t in TIERS),
                   ("good", recs["kind"] == "good")]:  # fmt: skip
        ids = recs.loc[sel, "record_id"]
        verdict_bad = []
        for rid in ids:
            if rid not in deterministic:
                raise KeyError(f"deterministic baseline: no checks for record {rid!r}")
            v = deterministic[rid]
            passed = all(v.values()) if isinstance(v, Mapping) else bool(v)
            verdict_bad.append(not passed)
        vb = np.array(verdict_bad, bool)
        rows[t] = (vb.mean() if t != "good" else (~vb).mean()) if len(vb) else np.nan
    rows["gradient"] = rows["tier_4"] - rows["tier_1"]
    key = ("deterministic",) + ("-",) * (len(by) - 1)
    idx = pd.MultiIndex.from_tuples([key], names=list(by)) if len(by) > 1 else pd.Index([key[0]], name=by[0])
    return pd.DataFrame([rows], index=idx).assign(supported=True)


def accuracy_by_tier(run_table: pd.DataFrame, *, deterministic: Mapping | None = None, by=BY,
                     native_targets=None) -> pd.DataFrame:  # fmt: skip
    """Figure 4: per-tier accuracy for each group, plus the deterministic baseline row.

    Columns ``tier_1`` … ``tier_4`` (share of kind-``bad`` rows of that tier with verdict BAD; a failed
    row is a miss), ``good`` (share of GOOD rows judged GOOD) and ``gradient`` (tier_4 − tier_1).

    ``deterministic`` maps record_id → that record's 12 deterministic checks (``{name: passed}``, as
    ``Record.checks``) or a single bool "all checks pass"; its row (protocol "deterministic", other
    ``by`` keys "-") judges a record BAD when any check fails, once per record. Every GOOD/BAD record of
    the run table must have an entry.
    """
    out = tier_accuracy(run_table, by=by, native_targets=native_targets)
    if deterministic is not None:
        out = pd.concat([out, _deterministic_row(run_table, deterministic, list(by))])
    return out


__all__ = ["accuracy_by_tier", "tier_accuracy", "TIERS"]
