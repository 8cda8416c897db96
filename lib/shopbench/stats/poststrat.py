"""Post-stratified accuracy: a sample mean re-weighted to a population's stratum shares (Table 14).

The PADMÉ paper (Appendix D.4): "In the human evaluation study, pairs are sampled uniformly across
domain and criterion combinations. However, the full dataset features non-uniform domain allocations
(e.g., airline comprises 13.5% of the 1,000 pairs but 23.1% of the annotated sample). To evaluate
potential sampling bias, we post-stratify synthetic label accuracy using actual population weights
across four axes: domain, criterion, agent model, and level contrast. Re-weighting shifts reported
synthetic label accuracy by less than 1.0pt across all configurations, well within the sampling
standard error of ±3.7pt."

For one axis with strata ``h``: ``acc_ps = Σ_h W_h · acc_h`` where ``W_h = N_h / Σ N`` are population
shares and ``acc_h`` the sample accuracy in stratum ``h``. Strata of the population absent from the
sample cannot be estimated; their weight is spread over the covered strata (``W`` renormalised over
them) and reported as ``uncovered_weight``. The standard error is the usual stratified one without
finite-population correction, ``SE² = Σ_h W_h² · acc_h (1 − acc_h) / (n_h − 1)`` (``n_h`` in the
denominator when ``n_h = 1``); the raw SE is ``√(acc (1 − acc) / n)``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd


def poststratified_mean(values, strata, population: Mapping) -> dict:
    """Post-stratified mean of ``values`` (0/1 for an accuracy) over ``strata`` labels.

    ``population`` maps stratum -> population count (or share). Returns ``estimate``, ``se``, ``raw``,
    ``raw_se``, ``shift`` (estimate − raw), ``n``, ``uncovered_weight`` and per-stratum rows.
    """
    v = np.asarray(values, dtype=float)
    s = np.asarray(strata, dtype=object)
    if v.shape != s.shape:
        raise ValueError(f"values {v.shape} and strata {s.shape} differ in shape")
    keep = ~np.isnan(v)
    v, s = v[keep], s[keep]
    n = len(v)
    raw = float(v.mean()) if n else float("nan")
    raw_se = float(np.sqrt(raw * (1 - raw) / n)) if n else float("nan")
    total = float(sum(population.values()))
    if total <= 0:
        raise ValueError("population weights sum to zero")
    rows = []
    for h, N in population.items():
        in_h = s == h
        nh = int(in_h.sum())
        rows.append({"stratum": h, "population_share": N / total, "n": nh,
                     "sample_share": nh / n if n else np.nan, "mean": float(v[in_h].mean()) if nh else np.nan})  # fmt: skip
    extra = sorted({str(x) for x in s} - {str(h) for h in population})
    if extra:
        raise ValueError(f"sample strata missing from the population weights: {extra}")
    covered = [r for r in rows if r["n"] > 0]
    cw = sum(r["population_share"] for r in covered)
    est, var = 0.0, 0.0
    for r in covered:
        w = r["population_share"] / cw
        r["weight"] = w
        p, nh = r["mean"], r["n"]
        est += w * p
        var += w**2 * p * (1 - p) / (nh - 1 if nh > 1 else nh)
    if not covered:
        est, var = float("nan"), float("nan")
    return {"estimate": float(est), "se": float(np.sqrt(var)), "raw": raw, "raw_se": raw_se,
            "shift": float(est - raw), "n": n, "uncovered_weight": float(1 - cw), "strata": rows}  # fmt: skip


def poststratified_table(
    values, strata: pd.DataFrame | Mapping, populations: Mapping[str, Mapping]
) -> pd.DataFrame:
    """One row per axis (plus the raw estimate): ``strata[axis]`` labels each unit, ``populations[axis]``
    gives that axis' population counts. Axes missing from ``strata`` are skipped."""
    v = np.asarray(values, dtype=float)
    n = int((~np.isnan(v)).sum())
    acc = float(np.nanmean(v)) if n else float("nan")
    rows = [{"weighting": "raw sample", "accuracy": acc, "se": float(np.sqrt(acc * (1 - acc) / n)) if n else np.nan,
             "shift_pt": 0.0, "n": n, "uncovered_weight": 0.0}]  # fmt: skip
    for axis, pop in populations.items():
        if axis not in strata:
            continue
        r = poststratified_mean(v, np.asarray(strata[axis], dtype=object), pop)
        rows.append({"weighting": f"by {axis}", "accuracy": r["estimate"], "se": r["se"], "shift_pt": 100 * r["shift"],
                     "n": r["n"], "uncovered_weight": r["uncovered_weight"]})  # fmt: skip
    return pd.DataFrame(rows)
