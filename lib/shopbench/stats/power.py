"""Minimum detectable effect and the tasks × repeats a comparison needs (issue 29, item 2, fourth
bullet; Miller, "Adding Error Bars to Evals", arXiv 2411.00640, §5 "power analysis").

Miller's sample size for comparing two models on ``n`` questions with ``K_A``, ``K_B`` resamples each
is ``n = (z_{α/2} + z_β)² (ω² + σ²_A/K_A + σ²_B/K_B) / δ²``, where ``ω²`` is the variance over
questions of the difference of the two models' question means and ``σ²_A``, ``σ²_B`` the
within-question (resampling) variances. For a **paired** design — both subjects on the same tasks
*and the same seeds* — the per-trial difference ``d`` has its own within-task variance ``σ²_d``
(smaller than ``σ²_A + σ²_B`` when the shared seeds correlate the two runs), and with ``R`` paired
repeats per task:

- ``Var(mean d) = (ω² + σ²_d / R) / T`` over ``T`` tasks;
- minimum detectable effect at power ``1-β``, two-sided level ``α``:
  ``MDE = (z_{1-α/2} + z_{1-β}) · sqrt((ω² + σ²_d / R) / T)``;
- tasks needed for a difference ``δ``: ``T = ceil((z_{1-α/2} + z_{1-β})² (ω² + σ²_d / R) / δ²)``.

With independent seeds pass ``within_var = σ²_A + σ²_B``. The normal approximation is Miller's; with
few tasks (under ~30) it is optimistic. ``ω²`` and ``σ²_d`` come from
:func:`shopbench.stats.variance.one_way_components` on the paired differences (see
:func:`shopbench.stats.paired.paired_difference`).
"""

from __future__ import annotations

from collections.abc import Iterable
from math import ceil, sqrt

import pandas as pd
from scipy.stats import norm

from ..errors import InputError


def _z(alpha: float, power: float) -> float:
    if not (0 < alpha < 1 and 0 < power < 1):
        raise InputError(
            f"alpha {alpha} and power {power} must lie strictly between 0 and 1", field="alpha/power"
        )
    return float(norm.ppf(1 - alpha / 2) + norm.ppf(power))


def _check(task_var: float, within_var: float, **pos: float) -> None:
    if task_var < 0 or within_var < 0:
        raise InputError(f"variances must be >= 0, got task_var={task_var}, within_var={within_var}")
    for k, v in pos.items():
        if not v > 0:
            raise InputError(f"{k} must be > 0, got {v}", field=k)


def minimum_detectable_effect(
    task_var: float,
    within_var: float,
    n_tasks: int,
    n_repeats: int = 1,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float:
    """``MDE = (z_{1-α/2} + z_{1-β}) · sqrt((task_var + within_var / n_repeats) / n_tasks)`` (Miller §5;
    issue 29, item 2): the smallest true mean difference a two-sided level-``alpha`` test detects with
    probability ``power`` on ``n_tasks`` tasks × ``n_repeats`` paired repeats."""
    _check(task_var, within_var, n_tasks=n_tasks, n_repeats=n_repeats)
    return _z(alpha, power) * sqrt((task_var + within_var / n_repeats) / n_tasks)


def tasks_needed(
    delta: float,
    task_var: float,
    within_var: float,
    n_repeats: int = 1,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    """``T = ceil((z_{1-α/2} + z_{1-β})² (task_var + within_var / n_repeats) / delta²)`` (Miller §5;
    issue 29, item 2): tasks needed to detect a true difference ``delta`` (same scale as the outcome:
    0.05 = 5 points of a rate) with ``n_repeats`` paired repeats per task. At least 2."""
    _check(task_var, within_var, delta=abs(delta), n_repeats=n_repeats)
    return max(2, ceil(_z(alpha, power) ** 2 * (task_var + within_var / n_repeats) / delta**2))


def repeats_needed(
    delta: float,
    task_var: float,
    within_var: float,
    n_tasks: int,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int | None:
    """Repeats per task that detect ``delta`` on ``n_tasks`` tasks (issue 29, item 5; Miller §5), or
    ``None`` when no number of repeats does: ``R = ceil(within_var / (n_tasks·delta²/(z+z)² − task_var))``
    (at least 1), reachable only when ``n_tasks·delta²/(z+z)² > task_var`` — repeats shrink the
    within-task term alone, never the between-task one."""
    _check(task_var, within_var, delta=abs(delta), n_tasks=n_tasks)
    room = n_tasks * delta**2 / _z(alpha, power) ** 2 - task_var
    if room <= 0:
        return None
    return max(1, ceil(within_var / room - 1e-12))


def design_table(
    delta: float,
    task_var: float,
    within_var: float,
    repeats: Iterable[int] = (1, 2, 3, 4, 5, 8),
    alpha: float = 0.05,
    power: float = 0.8,
) -> pd.DataFrame:
    """Tasks × repeats that detect ``delta``: one row per repeat count with ``n_repeats``,
    ``n_tasks_needed`` and ``n_trials`` (= tasks × repeats per subject). Repeats beyond
    ``within_var / task_var`` buy little: the task term does not shrink with repeats."""
    rows = []
    for r in repeats:
        t = tasks_needed(delta, task_var, within_var, int(r), alpha, power)
        rows.append({"n_repeats": int(r), "n_tasks_needed": t, "n_trials": t * int(r)})
    return pd.DataFrame(rows)
