"""Paired comparison of two subjects on the same tasks and seeds (issue 29, item 2, fourth bullet;
Miller, "Adding Error Bars to Evals", arXiv 2411.00640, §4 "paired differences" and §5 "power").

Subjects ``a`` and ``b`` (two agents, two judge prompts …) ran the same trials: the same task and the
same seed of every source. Per trial key the difference is ``d = y_a - y_b``; the estimate is the mean
``d̄`` with the cluster-robust interval of :mod:`shopbench.stats.clustered` (cluster = task, since a
task's repeats share the task), beside the naive one and the design effect. Pairing removes the
task-difficulty variance both subjects share; Miller's paired SE is the clustered SE of ``d``.

Power: ``ω²`` (between-task variance of ``d``) and ``σ²_d`` (within-task variance of ``d``) from
:func:`shopbench.stats.variance.one_way_components`; with ``R`` = mean pairs per task and ``T`` tasks,
``MDE = (z_{1-α/2} + z_{1-β}) sqrt((ω² + σ²_d/R)/T)`` and the tasks needed for ``delta`` at ``R``
repeats (:mod:`shopbench.stats.power`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..errors import InputError
from .clustered import clustered_mean_arrays
from .power import design_table, minimum_detectable_effect, tasks_needed
from .variance import one_way_components


@dataclass(frozen=True)
class PairedComparison:
    """``a - b`` on shared trials: the mean difference, its clustered and naive intervals, the design
    effect, the variance split of the difference and the power statement."""

    a: str
    b: str
    diff: float
    ci_low: float
    ci_high: float
    se_clustered: float
    naive_low: float
    naive_high: float
    design_effect: float
    n_pairs: int
    n_tasks: int
    n_unpaired: int
    task_var: float
    within_var: float
    n_repeats: float
    mde: float
    delta: float
    n_tasks_needed: int
    alpha: float
    power: float
    ci: float

    def as_dict(self) -> dict:
        return asdict(self)

    def statement(self) -> str:
        """One paragraph a reader can quote."""
        pts = 100.0
        sig = "excludes" if self.ci_low > 0 or self.ci_high < 0 else "includes"
        return (
            f"{self.a} − {self.b} = {pts * self.diff:+.1f} points "
            f"({100 * self.ci:.0f}% clustered CI [{pts * self.ci_low:+.1f}, {pts * self.ci_high:+.1f}], {sig} 0; "
            f"naive [{pts * self.naive_low:+.1f}, {pts * self.naive_high:+.1f}], design effect {self.design_effect:.2f}) "
            f"on {self.n_pairs} paired trials over {self.n_tasks} tasks. Minimum detectable effect at "
            f"{100 * self.power:.0f}% power, α = {self.alpha}: {pts * self.mde:.1f} points; detecting "
            f"{pts * self.delta:.1f} points needs {self.n_tasks_needed} tasks × {self.n_repeats:.0f} repeats."
        )


def paired_difference(
    frame: pd.DataFrame,
    subject: str,
    a: str,
    b: str,
    value: str = "success",
    pair_on: Sequence[str] = ("task_id", "agent_seed", "user_seed", "judge_seed"),
    task: str = "task_id",
    *,
    delta: float = 0.05,
    ci: float = 0.95,
    alpha: float = 0.05,
    power: float = 0.8,
) -> PairedComparison:
    """Mean of ``value[subject == a] - value[subject == b]`` over trials matched on ``pair_on`` (task and
    the seed columns present), with the clustered CI (cluster = ``task``), the minimum detectable effect
    of this design and the tasks needed for ``delta`` at the same repeats (issue 29, item 2; formulas in
    the module docstring). Trials without a partner are left out and counted (``n_unpaired``); two
    trials of one subject with the same key are an :class:`~shopbench.errors.InputError`."""
    keys = [c for c in pair_on if c in frame.columns]
    for c in (subject, value, task):
        if c not in frame.columns:
            raise InputError(f"column missing (columns: {', '.join(map(str, frame.columns))})", field=c)
    if task not in keys:
        raise InputError(f"pair_on must include the task column {task!r}", field="pair_on")
    f = frame[frame[subject].isin([a, b])]
    for s in (a, b):
        if not (f[subject] == s).any():
            raise InputError(
                f"no trials of {s!r}",
                field=subject,
                fix=f"subjects present: {sorted(frame[subject].unique())}",
            )
    dup = f.duplicated([subject, *keys], keep=False)
    if dup.any():
        pos = int(np.flatnonzero(dup.to_numpy())[0])
        who, i = f[subject].iloc[pos], f.index[pos]
        raise InputError(f"two trials of {who!r} with the same {', '.join(keys)}", where=f"row {i}",
                         field=", ".join(keys), fix="add the column that tells the repeats apart (a seed or repeat index) to pair_on")  # fmt: skip
    y = pd.to_numeric(f[value], errors="coerce").astype(float)
    wide = f.assign(_y=y.to_numpy()).pivot_table(
        index=keys, columns=subject, values="_y", aggfunc="first", dropna=False
    )
    both = wide[[a, b]].dropna()
    n_unpaired = int(len(f) - 2 * len(both))
    if both.empty:
        raise InputError(f"{a!r} and {b!r} share no trial key ({', '.join(keys)})", field="pair_on")
    d = (both[a] - both[b]).to_numpy()
    tasks = both.index.get_level_values(task).to_numpy() if len(keys) > 1 else both.index.to_numpy()
    cm = clustered_mean_arrays(d, tasks, ci)
    ow = one_way_components(d, tasks)
    R = ow["mean_per_group"]
    T = ow["n_groups"]
    tv = ow["between"] if not np.isnan(ow["between"]) else 0.0
    wv = ow["within"] if not np.isnan(ow["within"]) else 0.0
    if np.isnan(ow["between"]) and T > 1:  # one pair per task: the task term is the whole variance
        tv, wv = float(np.var(d, ddof=1)), 0.0
    mde = minimum_detectable_effect(tv, wv, T, R, alpha, power) if T > 0 and R > 0 else float("nan")
    need = tasks_needed(delta, tv, wv, max(1, round(R)), alpha, power)
    return PairedComparison(a=str(a), b=str(b), diff=cm.mean, ci_low=cm.ci_low, ci_high=cm.ci_high,
                            se_clustered=cm.se_clustered, naive_low=cm.naive_low, naive_high=cm.naive_high,
                            design_effect=cm.design_effect, n_pairs=cm.n, n_tasks=T, n_unpaired=n_unpaired,
                            task_var=tv, within_var=wv, n_repeats=R, mde=mde, delta=delta, n_tasks_needed=need,
                            alpha=alpha, power=power, ci=ci)  # fmt: skip


def paired_design_table(
    result: PairedComparison, repeats: Sequence[int] = (1, 2, 3, 4, 5, 8)
) -> pd.DataFrame:
    """Tasks needed for ``result.delta`` at each repeat count, from the measured ``ω²`` and ``σ²_d``."""
    return design_table(result.delta, result.task_var, result.within_var, repeats, result.alpha, result.power)
