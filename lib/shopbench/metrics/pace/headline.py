"""Bootstrap 95 % confidence intervals over BASE records, and the headline Tables 3 and 4 with CIs.

A base record is a GOOD record together with every BAD variant and persona swap derived from it (its
``base_record_id``); a GOOD record is its own base. Resampling bases — never single rows — keeps a
GOOD record with its BAD and swap siblings, so paired metrics (PJC, the J statistics whose TPR and
FPR share bases) keep their pairing and their within-base correlation inside every resample.

Vectorised: each metric is a :class:`~.spec.MetricSpec` whose per-row statistics are summed ONCE
per (group, base record) into an array S[g, b, k]. A resample is a vector of multinomial base counts
w (Σ w = number of bases; drawn by :func:`shopbench.stats.bootstrap.resample_counts`, the project's
one resampler, as is the percentile interval), and its statistics are the weighted sum
w @ S[g] — one matrix product for all resamples, groups and statistics; the metric values are then
computed from those sums by the spec's vectorised ``combine``. The same resample weights are used for
every group, so differences between protocols (lift rows, means over backbones) get paired CIs.

CIs are percentile intervals (2.5 % and 97.5 % for ``ci=0.95``) of the resampled values, ignoring
resamples in which a value is undefined (e.g. no swap drawn); the estimate is the full-data value.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from shopbench.stats.bootstrap import percentile_ci, resample_counts

from .diagnosis import pace_closure_average
from .paired import default_baselines, pace_score
from .run_table import BY, native_targets_of, no_answer_groups, prepare, usable
from .scenarios import s0_balanced_accuracy
from .spec import MetricSpec, compose, group_sums

_BLOCK = 500  # resamples per matrix product (bounds memory at ~B x 500 weights)

# the headline columns: (column, output of the combined spec, required PACE targets come from the spec)
TABLE3_COLUMNS = {
    "S0": "S0:s0_balanced_accuracy", "S1_P_source": "T3:S1:s1_p_source", "S2_detect": "T3:S2:detect",
    "S2_loc": "T3:S2:loc", "S3_grounding": "T3:S3:s3_grounding", "S4_family": "T3:S4:family",
    "S4_loc": "T3:S4:loc", "false_fire": "T3:FF:false_fire", "PACE_avg": "T3:pace_avg",
}  # fmt: skip
TABLE4_COLUMNS = {
    "S0_ref_acc": "S0:s0_balanced_accuracy", "S1_PJC": "T4:s1_pjc", "S2_J_strict": "T4:s2_j_strict",
    "S3_J_harmonic": "T4:s3_j_harmonic", "S4_J_strict": "T4:s4_j_strict", "PACE": "T4:pace",
}  # fmt: skip


# ---- the engine -------------------------------------------------------------------------------------------


def _resolve(metric_fn) -> tuple[MetricSpec | None, dict]:
    """A registered metric (a :class:`MetricSpec`) or a ``functools.partial`` of one binding its
    parameters by keyword; evaluate-level keywords (by, native_targets) are returned separately.
    Anything else is an ad-hoc callable: (None, {})."""
    if isinstance(metric_fn, MetricSpec):
        return metric_fn, {}
    if not (isinstance(metric_fn, functools.partial) and isinstance(metric_fn.func, MetricSpec)):
        return None, {}
    if metric_fn.args:  # partial(s0_balanced_accuracy, ids) would bind run_table positionally
        raise TypeError("bind metric parameters by keyword in functools.partial")
    kw = dict(metric_fn.keywords)
    eval_kw = {k: kw.pop(k) for k in list(kw) if k in ("by", "native_targets")}
    return metric_fn.func.bind(**kw), eval_kw


def _no_bases(n_boot: int) -> Iterator[np.ndarray]:
    """Resample weights of an empty run table: every draw is empty."""
    for start in range(0, n_boot, _BLOCK):
        yield np.zeros((min(_BLOCK, n_boot - start), 0))


class _Draws:
    """Point values and bootstrap draws of every output of a spec, per group."""

    def __init__(self, prepared: pd.DataFrame, spec: MetricSpec, by: Sequence[str], n_boot: int, seed: int,
                 native_targets=None):  # fmt: skip
        by = list(by)
        stats = spec.stats(usable(prepared))  # call errors are no answers (issue 25 item 3)
        sums = group_sums(stats, prepared, by)  # defines the group order (sorted keys)
        self.groups = sums.index
        names = list(stats.columns)
        bases = np.sort(prepared["base_id"].astype(str).unique())
        G, B, K = len(self.groups), len(bases), len(names)
        if len(stats):
            sub = prepared.loc[stats.index]
            g = self.groups.get_indexer(pd.MultiIndex.from_frame(sub[by]) if len(by) > 1 else sub[by[0]])
            b = np.searchsorted(bases, sub["base_id"].astype(str).to_numpy())
            flat = pd.DataFrame(stats.to_numpy(float), columns=names).groupby(g * B + b).sum()
            flat_sums = np.zeros((G * B, K))
            flat_sums[flat.index.to_numpy()] = flat.to_numpy()
        else:
            flat_sums = np.zeros((G * B, K))
        S = flat_sums.reshape(G, B, K)
        self.n_bases = B
        point_in = S.sum(axis=1)  # (G, K)
        self.point = spec.combine({n: point_in[:, k] for k, n in enumerate(names)})
        SB = S.transpose(1, 0, 2).reshape(B, G * K)
        blocks = resample_counts(B, n_boot, seed, chunk=_BLOCK) if B else _no_bases(n_boot)
        chunks = [(W.astype(float) @ SB).reshape(len(W), G, K) for W in blocks]
        T = np.concatenate(chunks) if chunks else np.zeros((0, G, K))
        with np.errstate(divide="ignore", invalid="ignore"):
            self.draws = spec.combine({n: T[:, :, k] for k, n in enumerate(names)})
        # a group with no ok answer has no numbers (issue 25): NaN, never a score of 0
        if len(prepared):
            empty = no_answer_groups(prepared, by).reindex(self.groups, fill_value=False).to_numpy(bool)
            if empty.any():
                for o in list(self.point):
                    if not o.startswith("n_"):
                        self.point[o] = np.where(empty, np.nan, self.point[o])
                        self.draws[o] = np.where(empty[None, :], np.nan, self.draws[o])
        # unsupported cells: NaN in the point value and in every draw
        self.supported = {o: np.ones(G, bool) for o in self.point}
        if "protocol" in by and spec.targets:
            protos = self.groups.get_level_values("protocol") if len(by) > 1 else self.groups
            for o, req in spec.targets.items():
                if o not in self.point:
                    continue
                ok = np.array([req <= native_targets_of(q, native_targets) for q in protos], bool)
                self.supported[o] = ok
                self.point[o] = np.where(ok, self.point[o], np.nan)
                self.draws[o] = np.where(ok[None, :], self.draws[o], np.nan)


def bootstrap_ci(run_table: pd.DataFrame, metric_fn: Callable | MetricSpec, n_boot: int = 2000, seed: int = 0,
                 by: Iterable[str] = BY, *, ci: float = 0.95, native_targets=None) -> pd.DataFrame:  # fmt: skip
    """Percentile bootstrap CIs of a metric per group, resampling base records.

    ``metric_fn`` is a registered metric (a :class:`MetricSpec`, e.g. ``s1_pjc``) or a
    ``functools.partial`` of one binding its parameters by keyword (e.g. ``partial(
    s0_balanced_accuracy, subset_ids=ids)``) — all vectorised. Any other
    callable ``f(run_table_of_one_group) -> float`` is bootstrapped the slow way (rows of each drawn
    base copied, ids suffixed so pairs stay intact); use it only for ad-hoc metrics.

    Returns one row per (group, metric output) — index ``by + ("metric",)`` — with ``estimate`` (the
    full-data value), ``ci_low``, ``ci_high``, ``supported`` and ``n_valid`` (resamples in which the
    value was defined). Count outputs (``n_*``) are not bootstrapped. Deterministic for a given seed.
    """
    by = list(by)
    spec, eval_kw = _resolve(metric_fn)
    if eval_kw.get("by") is not None:
        by = list(eval_kw["by"])
    native_targets = eval_kw.get("native_targets", native_targets)
    if spec is None:
        return _bootstrap_generic(run_table, metric_fn, n_boot, seed, by, ci)
    d = _Draws(prepare(run_table), spec, by, n_boot, seed, native_targets)
    outs = [o for o in (spec.report or d.point) if not o.startswith("n_")]
    frames = []
    for o in outs:
        lo, hi = percentile_ci(d.draws[o], ci)
        frames.append(pd.DataFrame({"metric": o, "estimate": d.point[o], "ci_low": lo, "ci_high": hi,
                                    "supported": d.supported[o], "n_valid": (~np.isnan(d.draws[o])).sum(axis=0)},
                                   index=d.groups))  # fmt: skip
    out = pd.concat(frames).set_index("metric", append=True)
    return out.sort_index(level=list(range(len(by))), sort_remaining=False)


def _bootstrap_generic(run_table, fn, n_boot, seed, by, ci) -> pd.DataFrame:
    base = (
        run_table["base_record_id"]
        .where(run_table["base_record_id"].notna(), run_table["record_id"])
        .astype(str)
    )
    bases = np.sort(base.unique())
    rows_of = {b: np.flatnonzero(base.to_numpy() == b) for b in bases}
    W = (
        np.concatenate(list(resample_counts(len(bases), n_boot, seed)))
        if n_boot
        else np.zeros((0, len(bases)), int)
    )
    recs = []
    for key, grp in run_table.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        pos = set(run_table.index.get_indexer(grp.index))
        est = float(fn(grp))
        vals = []
        for w in W:
            parts = []
            for j in np.flatnonzero(w):
                rows = [i for i in rows_of[bases[j]] if i in pos]
                for c in range(w[j]):
                    part = run_table.iloc[rows].copy()
                    part["record_id"] = part["record_id"].astype(str) + f"#{c}"
                    part["base_record_id"] = part["base_record_id"].where(
                        part["base_record_id"].isna(), part["base_record_id"].astype(str) + f"#{c}"
                    )
                    parts.append(part)
            vals.append(float(fn(pd.concat(parts, ignore_index=True))) if parts else np.nan)
        lo, hi = percentile_ci(np.array(vals)[:, None], ci)
        recs.append({**dict(zip(by, key, strict=True)), "metric": getattr(fn, "__name__", "metric"), "estimate": est,
                     "ci_low": lo[0], "ci_high": hi[0], "supported": True,
                     "n_valid": int(np.isfinite(vals).sum())})  # fmt: skip
    return pd.DataFrame(recs).set_index([*by, "metric"])


# ---- headline tables ----------------------------------------------------------------------------------------


def headline_spec(s0_ids: Iterable[str] | None = None) -> MetricSpec:
    """Everything Tables 3 and 4 print, as one spec (one statistics pass, one set of resamples)."""
    return compose(
        "headline", {"S0": s0_balanced_accuracy.bind(s0_ids), "T3": pace_closure_average, "T4": pace_score}
    )


def headline_table(run_table: pd.DataFrame, *, s0_ids: Iterable[str] | None = None, n_boot: int = 2000,
                   seed: int = 0, ci: float = 0.95, native_targets=None, lift_protocol: str | None = None,
                   lift_baselines: Sequence[str] | None = None,
                   lift_backbone: str | None = None,
                   mean_backbones: Sequence[str] | None = None) -> pd.DataFrame:  # fmt: skip
    """Tables 3 and 4 with a bootstrap CI in every headline cell (long format).

    Rows: ``table`` ("tab3" | "tab4"), ``level`` ("backbone": one judge run; "mean": the protocol's
    mean over backbones, the paper's "7-backbone mean"; "lift_mean" / "lift_backbone": Tab. 4 lift
    rows), ``protocol``, ``backbone`` ("mean" on mean and lift_mean rows), ``column``, ``estimate``,
    ``ci_low``, ``ci_high``, ``supported`` (False → the cell is "–" and its numbers are NaN).

    Tab. 3 columns: S0, S1_P_source, S2_detect, S2_loc, S3_grounding, S4_family, S4_loc, false_fire,
    PACE_avg. Tab. 4 columns: S0_ref_acc, S1_PJC, S2_J_strict, S3_J_harmonic, S4_J_strict, PACE (see
    :mod:`.diagnosis` and :mod:`.paired` for the definitions). Lift rows (Tab. 4 only, when
    ``lift_protocol`` is given): the protocol minus the best of ``lift_baselines`` (default: every
    other multi-target protocol) per column, on backbone means and, with ``lift_backbone``, on that
    backbone; their CIs use the same resamples (the best baseline is re-chosen in each resample).
    Means ignore backbones where a cell is undefined; ``mean_backbones`` restricts the backbones a
    mean (and so the lift_mean row) averages — e.g. to leave out a ``majority@7`` self-consistency
    "backbone" scored in the same table. Filter the run table to the split you report
    (the paper: the held-out test split) before calling.
    """
    by = ["protocol", "backbone"]
    d = _Draws(prepare(run_table), headline_spec(s0_ids), by, n_boot, seed, native_targets)
    protos = d.groups.get_level_values("protocol")
    backs = d.groups.get_level_values("backbone")
    uniq = list(pd.unique(protos))
    in_mean = np.ones(len(backs), bool) if mean_backbones is None else np.isin(backs, list(mean_backbones))
    recs: list[dict] = []

    def add(table, level, proto, back, col, est, draws, supported):
        lo, hi = percentile_ci(np.asarray(draws, float)[:, None], ci)
        recs.append({"table": table, "level": level, "protocol": proto, "backbone": back, "column": col,
                     "estimate": float(est), "ci_low": float(lo[0]), "ci_high": float(hi[0]),
                     "supported": bool(supported)})  # fmt: skip

    def nanmean(a, axis):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(a, axis=axis)

    def nanmax(a, axis):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmax(a, axis=axis)

    for table, cols in (("tab3", TABLE3_COLUMNS), ("tab4", TABLE4_COLUMNS)):
        means: dict[str, dict[str, tuple[float, np.ndarray]]] = {}
        for col, out in cols.items():
            pt, dr, sup = d.point[out], d.draws[out], d.supported[out]
            for g in range(len(d.groups)):
                add(table, "backbone", protos[g], backs[g], col, pt[g], dr[:, g], sup[g])
            for q in uniq:
                m = np.asarray(protos == q) & in_mean
                mp, md = nanmean(pt[m], 0), nanmean(dr[:, m], 1)
                means.setdefault(q, {})[col] = (mp, md)
                add(table, "mean", q, "mean", col, mp, md, sup[m].all())
        if table != "tab4" or lift_protocol is None:
            continue
        if lift_protocol not in uniq:
            raise ValueError(f"lift_protocol {lift_protocol!r} not in the run table (protocols: {uniq})")
        base_list = (
            list(lift_baselines) if lift_baselines else default_baselines(uniq, lift_protocol, native_targets)
        )
        if not base_list:  # nothing to lift over (a run with one multi-target protocol): no lift rows
            continue
        for col, out in cols.items():
            rp, rd = means[lift_protocol][col]
            bp = nanmax(np.array([means[b][col][0] for b in base_list]), 0)
            bd = nanmax(np.stack([means[b][col][1] for b in base_list]), 0)
            add(table, "lift_mean", lift_protocol, "mean", col, rp - bp, rd - bd, np.isfinite(rp - bp))
            if lift_backbone is not None:
                sel = {
                    q: np.flatnonzero((protos == q) & (backs == lift_backbone))
                    for q in [lift_protocol, *base_list]
                }
                if len(sel[lift_protocol]) == 0:
                    raise ValueError(f"lift_backbone {lift_backbone!r}: no {lift_protocol!r} run on it")
                gi = sel[lift_protocol][0]
                bidx = [sel[b][0] for b in base_list if len(sel[b])]
                pt, dr = d.point[out], d.draws[out]
                bp1 = nanmax(pt[bidx], 0) if bidx else np.nan
                bd1 = nanmax(dr[:, bidx], 1) if bidx else np.full(dr.shape[0], np.nan)
                add(table, "lift_backbone", lift_protocol, lift_backbone, col, pt[gi] - bp1, dr[:, gi] - bd1,
                    np.isfinite(pt[gi] - bp1))  # fmt: skip
    return pd.DataFrame(recs)


def format_headline(long: pd.DataFrame, table: str = "tab4", digits: int = 2) -> pd.DataFrame:
    """A headline table as printed: rows (level, protocol, backbone), one column per metric, cells
    "0.74 [0.70, 0.78]"; unsupported or undefined cells are "–" (never a number)."""
    t = long[long["table"] == table]

    def cell(r):
        if not r.supported or not np.isfinite(r.estimate):
            return "–"
        f = f"{{:.{digits}f}}"
        lo = f.format(r.ci_low) if np.isfinite(r.ci_low) else "–"
        hi = f.format(r.ci_high) if np.isfinite(r.ci_high) else "–"
        return f"{f.format(r.estimate)} [{lo}, {hi}]"

    t = t.assign(cell=[cell(r) for r in t.itertuples()])
    order = list(dict.fromkeys(t["column"]))
    wide = t.pivot_table(index=["level", "protocol", "backbone"], columns="column", values="cell", aggfunc="first",
                         sort=False)  # fmt: skip
    return wide[order]


__all__ = [
    "bootstrap_ci",
    "headline_table",
    "headline_spec",
    "format_headline",
    "TABLE3_COLUMNS",
    "TABLE4_COLUMNS",
]


def with_plan_counts(
    table: pd.DataFrame, runs: pd.DataFrame, plans: dict, *, mean_backbones=None
) -> pd.DataFrame:
    """Table 3 or 4 (:func:`format_headline`, indexed by protocol and backbone) with how much each run
    judged (issue 27: notebook 30's table assembly, here once): ``n``/``N_planned``/``n_of_N`` of the
    anytime plan (``plans``: notebook 20's ``judging/anytime.json``; a run without a plan judged the
    records it has), ``records_judged`` per protocol × backbone and the outcome columns of
    :func:`~.run_table.with_outcomes` (issue 25: no numbers without a usable answer)."""
    from ...llm.anytime import plan_columns
    from .run_table import with_outcomes

    metric_cols = list(table.columns)
    full = {b: int(g.record_id.nunique()) for b, g in runs.groupby("backbone") if b not in plans}
    judged = runs.groupby(["protocol", "backbone"]).record_id.nunique()
    t = plan_columns(table, plans, full=full)
    t["records_judged"] = [judged.get((p, b)) for p, b in zip(t.index.get_level_values("protocol"),
                                                                 t.index.get_level_values("backbone"), strict=True)]  # fmt: skip
    return with_outcomes(t, runs, mean_backbones=mean_backbones, blank=metric_cols)
