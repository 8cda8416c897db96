"""Hypothesis tests of the PADMÉ human study: permutation test, position balance, Holm correction.

- Permutation test of a difference in means: "Statistical significance (p) is computed via
  permutation tests over 100,000 shuffles" (Table 13), used for "neither J1 nor J2 retains a
  significantly more confident pair subset than the one it removes (p = 1.000 for J1, p = 0.172 for
  J2)" (Appendix D.3). The group labels are shuffled ``n_perm`` times, in blocks of ``chunk``
  shuffles generated and evaluated as one array operation. The two-sided p-value is
  ``(1 + #{|d*| ≥ |d_obs|}) / (1 + n_perm)`` (the observed split counts as one of the shuffles, so p
  is never 0), the convention ``scipy.stats.permutation_test`` uses; tests check the two agree.
- Minimum detectable difference: "Given the sample sizes of removed pairs (n = 36 for J1 and n = 10
  for J2), the minimum detectable confidence difference is approximately 0.20" (D.3). We compute it
  as the two-sample t-test effect size at the given power (statsmodels ``TTestIndPower``) times the
  pooled standard deviation.
- Position balance: "the target trajectory appears in slot two in 511 of the 1,000 final pairs
  (51.1%) ... slot distribution remains statistically indistinguishable from uniform parity
  (binomial p > 0.10)" (Appendix C.2, Table 9): a two-sided exact binomial test of the slot-2 count
  against 1/2 (``scipy.stats.binomtest``), with its Clopper–Pearson interval.
- Holm correction: "p_holm is the Holm-Bonferroni corrected p-value across the seven tests"
  (Table 4): ``statsmodels.stats.multitest.multipletests(method="holm")``.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower

N_PERM = 100_000


def permutation_test(x, y, n_perm: int = N_PERM, seed=0, alternative: str = "two-sided",
                     chunk: int = 10_000) -> dict:  # fmt: skip
    """Permutation test of ``mean(x) − mean(y)`` with ``n_perm`` random relabellings.

    ``alternative``: ``"two-sided"``, ``"greater"`` (mean(x) > mean(y)) or ``"less"``. NaNs are dropped.
    Returns ``{"diff", "p", "n_x", "n_y", "mean_x", "mean_y", "n_perm"}``. Deterministic per seed.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    nx, ny = len(x), len(y)
    if nx == 0 or ny == 0:
        raise ValueError(f"permutation test needs two non-empty samples, got {nx} and {ny}")
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', not {alternative!r}")
    pool = np.concatenate([x, y])
    total = pool.sum()
    obs = x.mean() - y.mean()
    rng = np.random.default_rng(seed)
    tol = 1e-12 * max(1.0, abs(obs))
    hits = 0
    done = 0
    while done < n_perm:
        b = min(chunk, n_perm - done)
        # a shuffle only needs which units land in x: the first nx of a random permutation
        perm = rng.permuted(np.broadcast_to(pool, (b, nx + ny)), axis=1)
        sx = perm[:, :nx].sum(axis=1)
        d = sx / nx - (total - sx) / ny
        if alternative == "two-sided":
            hits += int((np.abs(d) >= abs(obs) - tol).sum())
        elif alternative == "greater":
            hits += int((d >= obs - tol).sum())
        else:
            hits += int((d <= obs + tol).sum())
        done += b
    return {"diff": float(obs), "p": (hits + 1) / (n_perm + 1), "n_x": nx, "n_y": ny,
            "mean_x": float(x.mean()), "mean_y": float(y.mean()), "n_perm": n_perm}  # fmt: skip


def minimum_detectable_difference(x, y, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest mean difference a two-sided two-sample t-test detects with ``power`` at level ``alpha``:
    Cohen's d from statsmodels' ``TTestIndPower.solve_power`` times the pooled SD of ``x`` and ``y``."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    if len(x) < 2 or len(y) < 2:
        return float("nan")
    d = TTestIndPower().solve_power(
        effect_size=None, nobs1=len(x), ratio=len(y) / len(x), alpha=alpha, power=power
    )
    sp = np.sqrt(((len(x) - 1) * x.var(ddof=1) + (len(y) - 1) * y.var(ddof=1)) / (len(x) + len(y) - 2))
    return float(d * sp)


def position_balance(target_slot, slot: int = 2, p: float = 0.5) -> dict:
    """Exact binomial test that the target lands in ``slot`` with probability ``p`` (two-sided).

    ``target_slot``: the slot (1 or 2) holding the better (target) trajectory of each pair.
    """
    t = np.asarray(target_slot, dtype=float)
    t = t[~np.isnan(t)]
    n = int(len(t))
    if n == 0:
        return {
            "n": 0,
            "k": 0,
            "share": float("nan"),
            "p": float("nan"),
            "ci_low": float("nan"),
            "ci_high": float("nan"),
        }
    k = int((t == slot).sum())
    res = binomtest(k, n, p, alternative="two-sided")
    ci = res.proportion_ci(confidence_level=0.95, method="exact")
    return {
        "n": n,
        "k": k,
        "share": k / n,
        "p": float(res.pvalue),
        "ci_low": float(ci.low),
        "ci_high": float(ci.high),
    }


def holm(pvalues, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Holm–Bonferroni: ``(reject, corrected p-values)`` via statsmodels; NaN p-values stay NaN."""
    p = np.asarray(pvalues, dtype=float)
    ok = ~np.isnan(p)
    reject = np.zeros(p.shape, dtype=bool)
    corrected = np.full(p.shape, np.nan)
    if ok.any():
        r, c, _, _ = multipletests(p[ok], alpha=alpha, method="holm")
        reject[ok], corrected[ok] = r, c
    return reject, corrected
