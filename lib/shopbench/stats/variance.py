"""How much of a per-trial outcome is task, agent, user-simulator and judge noise (issue 29, item 2,
third bullet: the variance decomposition).

Design. Every task ``t`` is run on a crossed factorial of seeds, one seed per *source* (agent
sampling, user simulator, judge): ``n_a`` agent seeds × ``n_u`` user seeds × ``n_j`` judge seeds, one
trial per cell. A source held fixed has one seed per task (``n = 1``). Seeds are nested in tasks (seed
3 of task 1 and seed 3 of task 2 are unrelated draws), so only the *number* of seeds matters, and it
must be the same for every task (a balanced design).

Model (crossed random effects nested in task; F = the varied sources)::

    y_{t,s} = μ + τ_t + Σ_{∅≠S⊆F} γ^S_{t, s_S}

with ``τ_t ~ (0, σ²_task)`` and, for each non-empty set ``S`` of varied sources, an effect of the
levels of those sources inside task ``t`` with variance ``σ²_S`` (main effects ``σ²_agent``,
``σ²_user``, ``σ²_judge``; interactions ``σ²_agent:user`` …). The highest-order term (``S = F``) has
one trial per level, so it also holds the pure trial noise (the residual). With a single varied
source its "main effect" is that residual: all the variation between re-runs with the other seeds held.

Estimator: method of moments (ANOVA expected mean squares, e.g. Searle, Casella & McCulloch 1992,
*Variance Components*, ch. 4), with ``N_F = Π_{f∈F} n_f`` trials per task and ``T`` tasks:

- effects from marginal means by inclusion–exclusion, ``e_S = Σ_{C⊆S} (-1)^{|S|-|C|} ȳ_{t,C}``;
  ``MS_S = (Π_{f∉S} n_f) Σ e_S² / (T Π_{f∈S} (n_f - 1))``; ``MS_task = N_F Σ_t (ȳ_t - ȳ)² / (T - 1)``;
- ``E[MS_S] = Σ_{C⊇S} (Π_{f∉C} n_f) σ²_C`` (``S = ∅`` is the task term), solved from the largest
  sets down: ``σ²_S = (MS_S - Σ_{C⊋S} (Π_{f∉C} n_f) σ²_C) / Π_{f∉S} n_f``.

A negative estimate is set to 0 (the usual truncation); each **share** is ``σ²_X / Σ σ²`` over the
truncated components, so the shares sum to 1. A source held fixed gets share 0 and says why (one seed
per task, or the caller's reason, e.g. "rules judge: deterministic"). A binary outcome is decomposed
on the linear (probability) scale.

Intervals (``ci_method``), for each variance and share:

- ``"gpq"`` (default): generalized pivotal quantities (Weerahandi 1993, JASA 88:899; the gauge R&R
  intervals of Burdick, Borror & Montgomery 2005, ch. 3–4, which split a measurement's variance by
  part, operator and repeat exactly as here by task, agent, user and judge). Under the normal model of
  a balanced design the mean squares are independent with ``MS_S ~ E[MS_S] χ²_{df_S} / df_S``; a draw
  replaces each ``E[MS_S]`` by ``ms_S · df_S / W_S`` with ``W_S ~ χ²_{df_S}`` and solves the same
  system (truncate, share); the interval is the percentiles of ``n_boot`` draws. It treats a binary
  outcome's mean squares as scaled χ², an approximation.
- ``"bootstrap"``: percentile **cluster bootstrap over tasks** (the project's one bootstrap,
  :func:`shopbench.stats.bootstrap.resample_counts`): a resample draws ``T`` tasks with replacement,
  keeps each drawn task's whole factorial and re-estimates. Distribution-free, but a percentile
  interval of a variance from 20–40 clusters is too narrow: in 200 simulations of the test's design
  (40 tasks, 3 × 3 × 2 seeds) it covered the planted shares 87–93 % of the time against 93–98 % for
  ``"gpq"`` (Miller, arXiv 2411.00640, §3: the cluster is the unit of independence).

``tests/test_noise_stats.py`` checks that the planted shares fall in their 95 % ``"gpq"`` intervals in
at least 90 % of 50 seeded simulations (40 tasks). Measured over 300–400 simulations, ``"gpq"``
covers 93–98 % with 40–50 tasks but the task share only ~91–94 % with 30 tasks: with 20–30 tasks read
the task share's interval as a little optimistic.

Also here: :func:`one_way_components`, the between/within split of one outcome grouped by task, which
the power calculation (:mod:`shopbench.stats.power`) uses.
"""

from __future__ import annotations

from itertools import combinations
from math import prod

import numpy as np
import pandas as pd

from ..errors import InputError
from .bootstrap import percentile_ci, resample_counts

CI_METHODS = ("gpq", "bootstrap")
DEFAULT_SOURCES: dict[str, str | None] = {"agent": "agent_seed", "user": "user_seed", "judge": "judge_seed"}


def _subsets(m: int) -> list[tuple[int, ...]]:
    return [s for r in range(1, m + 1) for s in combinations(range(m), r)]


def _mean_squares(Y: np.ndarray) -> tuple[dict, dict]:
    """Mean squares and their degrees of freedom of ``Y`` shaped ``(B, T, n_1, …, n_m)``: dicts keyed
    by the subset of varied sources (``()`` = task), each value of shape ``(B,)``."""
    T = Y.shape[1]
    ns = Y.shape[2:]
    m = len(ns)
    cell_axes = tuple(range(2, 2 + m))
    marg: dict[tuple[int, ...], np.ndarray] = {}
    for r in range(m + 1):
        for S in combinations(range(m), r):
            other = tuple(2 + f for f in range(m) if f not in S)
            marg[S] = Y.mean(axis=other, keepdims=True) if other else Y
    grand = marg[()].mean(axis=1, keepdims=True)
    ms: dict[tuple[int, ...], np.ndarray] = {
        (): prod(ns) * ((marg[()] - grand) ** 2).sum(axis=(1, *cell_axes)) / (T - 1)
    }
    df: dict[tuple[int, ...], int] = {(): T - 1}
    for S in _subsets(m):
        e = sum((-1) ** (len(S) - len(C)) * marg[C] for r in range(len(S) + 1) for C in combinations(S, r))
        rep = prod(ns[f] for f in range(m) if f not in S)
        df[S] = T * prod(ns[f] - 1 for f in S)
        ms[S] = rep * (np.asarray(e) ** 2).sum(axis=(1, *cell_axes)) / df[S]
    return ms, df


def _solve(ms: dict, ns: tuple[int, ...]) -> np.ndarray:
    """Components from mean squares by ``E[MS_S] = Σ_{C⊇S} (Π_{f∉C} n_f) σ²_C``, largest sets first:
    ``(B, 1 + 2^m - 1)``, the task variance first, then :func:`_subsets` order (raw, not truncated)."""
    m = len(ns)
    subs = _subsets(m)

    def coef(C: tuple[int, ...]) -> int:
        return prod(ns[f] for f in range(m) if f not in C)

    sig: dict[tuple[int, ...], np.ndarray] = {}
    for S in sorted([(), *subs], key=len, reverse=True):
        acc = ms[S]
        for C in subs:
            if set(S) < set(C):
                acc = acc - coef(C) * sig[C]
        sig[S] = acc / coef(S)
    return np.stack([sig[()]] + [sig[S] for S in subs], axis=1)


def _mom(Y: np.ndarray) -> np.ndarray:
    """Method-of-moments components of ``Y`` shaped ``(B, T, n_1, …, n_m)`` (see :func:`_solve`)."""
    return _solve(_mean_squares(Y)[0], Y.shape[2:])


def _shares(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = np.maximum(raw, 0.0)
    tot = v.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return v, np.where(tot > 0, v / np.where(tot > 0, tot, 1.0), np.nan)


def _design(frame, outcome, task, sources, drop_incomplete):
    for c in [outcome, task, *[c for c in sources.values() if c is not None]]:
        if c not in frame.columns:
            raise InputError(f"column missing (columns: {', '.join(map(str, frame.columns))})", field=c,
                             fix="name the column of each source's seed in sources={...}, or None when not recorded")  # fmt: skip
    y = pd.to_numeric(frame[outcome], errors="coerce")
    if y.isna().any():
        i = int(np.flatnonzero(y.isna().to_numpy())[0])
        raise InputError(f"outcome is missing or not a number: {frame[outcome].iloc[i]}",
                         where=f"row {frame.index[i]}", field=outcome,
                         fix="drop failed trials explicitly (then pass drop_incomplete=True) or score them")  # fmt: skip
    cols = {name: c for name, c in sources.items() if c is not None}
    levels = {name: frame.groupby(task)[c].nunique() for name, c in cols.items()}
    varied = [name for name in cols if levels[name].max() > 1]
    if not varied:
        raise InputError("no source varies within a task (one trial per task): nothing to decompose",
                         field=", ".join(cols.values()) or None,
                         fix="run repeats with at least one source's seed varied (issue 29 item 1: -T vary=…)")  # fmt: skip
    ns = {name: int(levels[name].max()) for name in varied}
    need = prod(ns.values())
    size = frame.groupby(task).size()
    dup = frame.duplicated([task, *[cols[v] for v in varied]], keep=False)
    bad: dict = {}
    for t in size.index:
        why = [f"{levels[v][t]} {cols[v]} values, not {ns[v]}" for v in varied if levels[v][t] != ns[v]]
        if size[t] != need and not why:
            why.append(f"{size[t]} trials, not {need}")
        if why:
            bad[t] = "; ".join(why)
    if dup.any():
        for t in frame.loc[dup, task].unique():
            bad.setdefault(t, "two trials with the same seeds")
    if bad and not drop_incomplete:
        t0 = next(iter(bad))
        raise InputError(f"the repeat design is not a complete factorial: {bad[t0]} ({len(bad)} tasks so)",
                         where=f"task {t0}", field=task,
                         fix="complete the missing cells, or pass drop_incomplete=True to leave such tasks out")  # fmt: skip
    keep = ~frame[task].isin(list(bad))
    f = frame.loc[keep, [task, *[cols[v] for v in varied]]].copy()
    f["_y"] = y[keep].to_numpy(dtype=float)
    T = f[task].nunique()
    if T < 2:
        raise InputError(f"{T} complete task(s): need at least 2 to separate the task variance", field=task)
    codes = [f.groupby(task)[cols[v]].transform(lambda s: pd.factorize(s, sort=True)[0]) for v in varied]
    f = f.assign(**{f"_c{i}": c.to_numpy() for i, c in enumerate(codes)})
    f = f.sort_values([task, *[f"_c{i}" for i in range(len(varied))]], kind="stable")
    Y = f["_y"].to_numpy().reshape(T, *[ns[v] for v in varied])
    return Y, varied, ns, cols, len(bad)


def variance_components(
    frame: pd.DataFrame,
    outcome: str = "success",
    task: str = "task_id",
    sources: dict[str, str | None] | None = None,
    *,
    fixed_reasons: dict[str, str] | None = None,
    ci: float = 0.95,
    ci_method: str = "gpq",
    n_boot: int = 2000,
    seed: int = 0,
    drop_incomplete: bool = False,
) -> pd.DataFrame:
    """Split the variance of a per-trial ``outcome`` into task, per-source and interaction components on
    a crossed factorial repeat design (issue 29, item 2; model and estimator in the module docstring).

    ``sources`` maps a source name to the column holding its seed (default ``agent_seed``,
    ``user_seed``, ``judge_seed``, each ``None`` when absent; ``None`` = not recorded, i.e. held fixed). A source with one seed
    per task is held fixed: its row has variance and share 0 and ``note`` says why (``fixed_reasons``
    may give the reason, e.g. ``{"judge": "rules judge: deterministic"}``).

    One row per component — ``task``, each source in ``sources`` order, then the interactions of
    varied sources (``agent:user`` …) — with columns ``component``, ``varied``, ``levels`` (seeds per
    task), ``variance``, ``var_ci_low``, ``var_ci_high``, ``share``, ``ci_low``, ``ci_high`` (share CI by
    ``ci_method``: ``"gpq"`` generalized pivotal quantities or ``"bootstrap"`` over tasks; ``n_boot``
    draws) and ``note``. ``attrs``: ``n_tasks``, ``n_trials``,
    ``n_tasks_dropped``, ``total_variance``.
    """
    if ci_method not in CI_METHODS:
        raise InputError(
            f"ci_method {ci_method!r} is unknown", field="ci_method", fix=f"use one of {CI_METHODS}"
        )
    if sources is None:  # a default seed column that is absent was not recorded: held fixed
        sources = {k: (c if c in frame.columns else None) for k, c in DEFAULT_SOURCES.items()}
    fixed_reasons = fixed_reasons or {}
    Y, varied, ns, cols, n_dropped = _design(frame, outcome, task, sources, drop_incomplete)
    T, m = Y.shape[0], len(varied)
    subs = _subsets(m)
    ms, df = _mean_squares(Y[None])
    est_v, est_s = _shares(_solve(ms, Y.shape[1:]))
    if ci_method == "gpq":
        rng = np.random.default_rng(seed)
        draws = {S: ms[S] * df[S] / rng.chisquare(df[S], n_boot) for S in ms}
        bv, bs = _shares(_solve(draws, Y.shape[1:]))
    else:
        parts = []
        for w in resample_counts(T, n_boot, seed=seed):
            idx = np.repeat(np.tile(np.arange(T), w.shape[0]), w.ravel()).reshape(w.shape[0], T)
            parts.append(_shares(_mom(Y[idx])))
        bv, bs = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    vlo, vhi = percentile_ci(bv, ci)
    slo, shi = percentile_ci(bs, ci)

    def row(name, j, levels, note):
        return {"component": name, "varied": True, "levels": levels, "variance": float(est_v[0, j]),
                "var_ci_low": float(vlo[j]), "var_ci_high": float(vhi[j]), "share": float(est_s[0, j]),
                "ci_low": float(slo[j]), "ci_high": float(shi[j]), "note": note}  # fmt: skip

    top = tuple(range(m))
    resid = "highest-order term: also holds the trial-to-trial noise"
    rows = [row("task", 0, T, "between-task variance of the true task means")]
    for name, col in sources.items():
        if name in varied:
            f = varied.index(name)
            rows.append(row(name, 1 + subs.index((f,)), ns[name], resid if (f,) == top else ""))
        else:
            why = fixed_reasons.get(name) or (
                f"held fixed: one {col} per task" if col else "held fixed: seed not recorded"
            )
            rows.append({"component": name, "varied": False, "levels": 1, "variance": 0.0, "var_ci_low": 0.0,
                         "var_ci_high": 0.0, "share": 0.0, "ci_low": 0.0, "ci_high": 0.0, "note": why})  # fmt: skip
    for j, S in enumerate(subs, start=1):
        if len(S) > 1:
            rows.append(row(":".join(varied[f] for f in S), j, prod(ns[varied[f]] for f in S),
                            resid if S == top else "interaction"))  # fmt: skip
    out = pd.DataFrame(rows)
    out.attrs.update(n_tasks=T, n_trials=int(Y.size), n_tasks_dropped=n_dropped,
                     total_variance=float(est_v[0].sum()), ci_method=ci_method)  # fmt: skip
    return out


def one_way_components(values, groups) -> dict:
    """Between- and within-group variance of ``values`` grouped by ``groups`` (one-way random-effects
    ANOVA, method of moments; unbalanced groups use ``n0 = (N - Σ n_g² / N) / (G - 1)``):
    ``within = MSW``, ``between = max(0, (MSB - MSW) / n0)``. Returns ``between``, ``within``,
    ``n_groups``, ``n``, ``n0`` and ``mean_per_group``."""
    x = np.asarray(values, dtype=float)
    codes, _ = pd.factorize(np.asarray(groups))
    G, N = int(codes.max()) + 1, len(x)
    n_g = np.bincount(codes, minlength=G).astype(float)
    means = np.bincount(codes, weights=x, minlength=G) / n_g
    msw = float(((x - means[codes]) ** 2).sum() / (N - G)) if N > G else float("nan")
    msb = float((n_g * (means - x.mean()) ** 2).sum() / (G - 1)) if G > 1 else float("nan")
    n0 = float((N - (n_g**2).sum() / N) / (G - 1)) if G > 1 else float("nan")
    between = max(0.0, (msb - msw) / n0) if G > 1 and N > G else float("nan")
    return {"between": between, "within": msw, "n_groups": G, "n": N, "n0": n0, "mean_per_group": N / G}
