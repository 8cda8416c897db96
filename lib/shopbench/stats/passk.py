"""pass^k and pass@k over repeated trials of the same tasks (issue 29, item 2, first bullet).

Each task ``t`` was tried ``n_t`` times and succeeded ``c_t`` times. For one task,

- **pass^k** (τ-bench, Yao et al. 2024, arXiv 2406.12045, §3 "pass^k"): the chance that *all* ``k``
  i.i.d. trials succeed, ``p_t^k``. Its unbiased estimate from ``c_t`` of ``n_t`` trials is the
  hypergeometric ratio ``C(c_t, k) / C(n_t, k)`` (the chance that ``k`` trials drawn without
  replacement from the ``n_t`` recorded ones are all successes);
- **pass@k** (Chen et al. 2021, arXiv 2107.03374): the chance that *at least one* of ``k`` trials
  succeeds, ``1 - (1 - p_t)^k``, estimated without bias by ``1 - C(n_t - c_t, k) / C(n_t, k)``.

The benchmark value is the mean of the per-task estimates over the tasks with ``n_t >= k``; a task
with fewer than ``k`` trials has no unbiased estimate and is left out of that ``k``'s row (and
counted in ``n_tasks_left_out``). With the same ``n`` for every task this is exactly τ-bench's
``display_metrics`` (``sum_t comb(c_t, k) / comb(n, k) / n_tasks``).

Interval: a percentile bootstrap over **tasks** (the project's one bootstrap,
:func:`shopbench.stats.bootstrap.resample_counts`, ``n_boot`` resamples, seeded): a resample draws
tasks with replacement and averages their per-task estimates. Each per-task estimate already carries
its own trial-to-trial noise, so resampling tasks covers both the task sampling and the finite trials
(the cluster = task argument of Miller, arXiv 2411.00640, §3). ``ci_method="normal"`` gives instead
``mean ± z · sd_t / sqrt(m)`` over the ``m`` included tasks (Miller's CLT interval, clipped to [0, 1]).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy.special import comb
from scipy.stats import norm

from ..errors import InputError
from .bootstrap import percentile_ci, resample_counts

CI_METHODS = ("bootstrap", "normal")


def _require(frame: pd.DataFrame, *cols: str) -> None:
    for c in cols:
        if c not in frame.columns:
            raise InputError(
                f"column missing (columns: {', '.join(map(str, frame.columns))})",
                field=c,
                fix=f"pass the name of the column that holds it, e.g. {c}='…'",
            )


def success_counts(frame: pd.DataFrame, task: str = "task_id", success: str = "success") -> pd.DataFrame:
    """Per task: ``n`` trials and ``c`` successes. ``success`` must be boolean or 0/1 (a τ-bench
    reward of 1.0 counts as a success); anything else is an :class:`~shopbench.errors.InputError`
    naming the first bad row."""
    _require(frame, task, success)
    s = frame[success]
    if s.dtype == bool:
        v = s.to_numpy(dtype=float)
    else:
        v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(v) | ~np.isin(v, (0.0, 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"success must be true/false or 0/1, found {s.iloc[i]} ({int(bad.sum())} such rows)",
            where=f"row {frame.index[i]}",
            field=success,
            fix="threshold a graded reward first (τ-bench counts reward == 1 as a success)",
        )
    if frame[task].isna().any():
        i = int(np.flatnonzero(frame[task].isna().to_numpy())[0])
        raise InputError("task id is missing", where=f"row {frame.index[i]}", field=task)
    g = pd.DataFrame({"task": frame[task].to_numpy(), "s": v}).groupby("task", sort=True)["s"]
    return pd.DataFrame({"n": g.size(), "c": g.sum().astype(int)})


def _ks(k: int | Iterable[int] | None, kmax: int) -> list[int]:
    if k is None:
        return list(range(1, kmax + 1))
    ks = [int(k)] if isinstance(k, int | np.integer) else [int(x) for x in k]
    if any(x < 1 for x in ks):
        raise InputError(f"k must be >= 1, got {ks}", field="k")
    return ks


def _table(per_task, name: str, frame, task, success, k, ci, ci_method, n_boot, seed) -> pd.DataFrame:
    if ci_method not in CI_METHODS:
        raise InputError(
            f"ci_method {ci_method!r} is unknown", field="ci_method", fix=f"use one of {CI_METHODS}"
        )
    counts = success_counts(frame, task, success)
    if counts.empty:
        raise InputError("no trials: the table is empty", field=task)
    n = counts["n"].to_numpy()
    c = counts["c"].to_numpy()
    rows = []
    for kk in _ks(k, int(n.max())):
        keep = n >= kk
        m = int(keep.sum())
        row = {"k": kk, name: np.nan, "ci_low": np.nan, "ci_high": np.nan, "n_tasks": m,
               "n_tasks_left_out": int((~keep).sum())}  # fmt: skip
        if m:
            x = per_task(n[keep], c[keep], kk)
            row[name] = float(x.mean())
            if ci_method == "normal":
                half = norm.ppf(0.5 + ci / 2) * (x.std(ddof=1) / np.sqrt(m) if m > 1 else 0.0)
                row["ci_low"], row["ci_high"] = max(0.0, x.mean() - half), min(1.0, x.mean() + half)
            else:
                samples = np.concatenate([w @ x / m for w in resample_counts(m, n_boot, seed=[seed, kk])])
                lo, hi = percentile_ci(samples, ci)
                row["ci_low"], row["ci_high"] = float(lo), float(hi)
        rows.append(row)
    return pd.DataFrame(rows, columns=["k", name, "ci_low", "ci_high", "n_tasks", "n_tasks_left_out"])


def pass_hat_k_per_task(n, c, k: int) -> np.ndarray:
    """τ-bench's unbiased per-task pass^k, ``C(c, k) / C(n, k)`` (needs ``n >= k``)."""
    return comb(np.asarray(c), k, exact=False) / comb(np.asarray(n), k, exact=False)


def pass_at_k_per_task(n, c, k: int) -> np.ndarray:
    """Unbiased per-task pass@k, ``1 - C(n - c, k) / C(n, k)`` (needs ``n >= k``)."""
    n = np.asarray(n)
    return 1.0 - comb(n - np.asarray(c), k, exact=False) / comb(n, k, exact=False)


def pass_hat_k(
    frame: pd.DataFrame,
    task: str = "task_id",
    success: str = "success",
    k: int | Iterable[int] | None = None,
    *,
    ci: float = 0.95,
    ci_method: str = "bootstrap",
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """pass^k for ``k = 1..K`` (``K`` = most trials of any task), or for the given ``k`` (an int or
    a list), from one row per trial (issue 29, item 2; τ-bench's definition and estimator).

    ``pass_hat_k = mean over tasks with n_t >= k of C(c_t, k) / C(n_t, k)``; columns ``k``,
    ``pass_hat_k``, ``ci_low``, ``ci_high`` (percentile bootstrap over tasks, or ``ci_method="normal"``),
    ``n_tasks`` (tasks used) and ``n_tasks_left_out`` (tasks with fewer than ``k`` trials).
    """
    return _table(pass_hat_k_per_task, "pass_hat_k", frame, task, success, k, ci, ci_method, n_boot, seed)


def pass_at_k(
    frame: pd.DataFrame,
    task: str = "task_id",
    success: str = "success",
    k: int | Iterable[int] | None = None,
    *,
    ci: float = 0.95,
    ci_method: str = "bootstrap",
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """pass@k like :func:`pass_hat_k`: ``mean over tasks with n_t >= k of 1 - C(n_t - c_t, k) / C(n_t, k)``
    (Chen et al. 2021's unbiased estimator; issue 29, item 2). Same columns, ``pass_at_k`` in place of
    ``pass_hat_k``."""
    return _table(pass_at_k_per_task, "pass_at_k", frame, task, success, k, ci, ci_method, n_boot, seed)
