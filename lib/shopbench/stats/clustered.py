"""Cluster-robust intervals for a mean (issue 29, item 2, second bullet; Miller, "Adding Error Bars to
Evals", arXiv 2411.00640, §3 "clustered standard errors").

``N`` observations ``x_i`` fall into ``G`` clusters (a task's repeats, a base record and its
variants, the two sides of a pair). Observations in one cluster are correlated, so the naive
standard error understates the uncertainty of their mean ``x̄``:

- naive (Miller eq. for the CLT standard error): ``SE_naive = sd(x) / sqrt(N)`` with ``sd`` the sample
  SD (``ddof = 1``);
- clustered (Miller's clustered SE, written with cluster sums): ``SE_clu² = G/(G-1) · Σ_g (Σ_{i∈g} (x_i - x̄))² / N²``.
  Miller's formula is the same without the usual small-sample factor ``G/(G-1)`` (Stata's CR1 for an
  intercept-only model); with the factor, ``G = N`` singleton clusters give exactly ``SE_naive``;
- the **design effect** ``deff = SE_clu² / SE_naive²`` (1 = no clustering; Miller reports clustered
  SEs up to ~3× the naive ones, i.e. deff ≈ 9);
- both intervals are normal: ``x̄ ± z_{1-(1-ci)/2} · SE``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..errors import InputError


@dataclass(frozen=True)
class ClusteredMean:
    """A mean with its naive and cluster-robust normal intervals and the design effect."""

    mean: float
    n: int
    n_clusters: int
    se_naive: float
    naive_low: float
    naive_high: float
    se_clustered: float
    ci_low: float
    ci_high: float
    design_effect: float
    ci: float = 0.95

    def as_dict(self) -> dict:
        return asdict(self)


def _numeric(frame: pd.DataFrame, col: str) -> np.ndarray:
    if col not in frame.columns:
        raise InputError(f"column missing (columns: {', '.join(map(str, frame.columns))})", field=col)
    v = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(v) & frame[col].notna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"not a number: {frame[col].iloc[i]}", where=f"row {frame.index[i]}", field=col,
                         fix="give a numeric (or true/false) outcome")  # fmt: skip
    return v


def clustered_mean_arrays(values, clusters, ci: float = 0.95) -> ClusteredMean:
    """:func:`clustered_mean` on arrays: ``values`` (NaN rows dropped) and their cluster labels."""
    x = np.asarray(values, dtype=float)
    g = np.asarray(clusters)
    keep = ~np.isnan(x)
    x, g = x[keep], g[keep]
    n = len(x)
    if n == 0:
        raise InputError("no observations to average (all missing)")
    codes, _ = pd.factorize(g)
    n_cl = int(codes.max()) + 1
    m = float(x.mean())
    z = float(norm.ppf(0.5 + ci / 2))
    se_naive = float(x.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    sums = np.bincount(codes, weights=x - m, minlength=n_cl)
    se_clu = float(np.sqrt(n_cl / (n_cl - 1) * np.sum(sums**2)) / n) if n_cl > 1 else float("nan")
    deff = se_clu**2 / se_naive**2 if se_naive > 0 else float("nan")
    return ClusteredMean(mean=m, n=n, n_clusters=n_cl, se_naive=se_naive, naive_low=m - z * se_naive,
                         naive_high=m + z * se_naive, se_clustered=se_clu, ci_low=m - z * se_clu,
                         ci_high=m + z * se_clu, design_effect=float(deff), ci=ci)  # fmt: skip


def clustered_mean(
    frame: pd.DataFrame, value: str = "success", cluster: str = "task_id", ci: float = 0.95
) -> ClusteredMean:
    """Mean of ``frame[value]`` with the naive and the cluster-robust interval (clusters = the values
    of ``frame[cluster]``: task, record or pair) and the design effect (issue 29, item 2; formulas in
    the module docstring). Missing values are dropped."""
    x = _numeric(frame, value)
    if cluster not in frame.columns:
        raise InputError(f"column missing (columns: {', '.join(map(str, frame.columns))})", field=cluster)
    return clustered_mean_arrays(x, frame[cluster].to_numpy(), ci)


def clustered_means(
    frame: pd.DataFrame, value: str, cluster: str, by: str | list[str], ci: float = 0.95
) -> pd.DataFrame:
    """:func:`clustered_mean` per group of ``by`` (e.g. per agent or per task kind): one row per group
    with the :class:`ClusteredMean` fields as columns."""
    by_cols = [by] if isinstance(by, str) else list(by)
    for c in by_cols:
        if c not in frame.columns:
            raise InputError("column missing", field=c)
    rows = []
    for key, part in frame.groupby(by_cols, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        rows.append(
            {**dict(zip(by_cols, key, strict=True)), **clustered_mean(part, value, cluster, ci).as_dict()}
        )
    return pd.DataFrame(rows)
