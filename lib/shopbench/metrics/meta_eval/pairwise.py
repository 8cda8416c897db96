"""Pointwise-to-pairwise meta-evaluation of evaluators (seed 003 §3.2 Eq. 3–5, §5.3, App. F; Tables 3, 4, 18, 19).

The paper's definitions:

* Eq. 3 — "Δ_f(p) = f(x⁺; c) − f(x⁻; c),  ŷ_f(p) = sign Δ_f(p) ∈ {+1, −1, 0}, where ŷ_f(p) = 0
  indicates a tie in score."
* "an evaluator aligns with ground truth if and only if it assigns a strictly higher score to x⁺
  (Δ_f(p) > 0). Ties (Δ_f(p) = 0) count as disagreements because a deployed evaluator that cannot
  separate x⁺ from x⁻ supplies no usable signal."
* Eq. 4 — "Agr(f, ⋆; D) = 1/|D| Σ_{p∈D} 1[Δ_f(p) > 0]."
* Eq. 5 — "Agr(r, r′; D) = 1/|D| Σ_{p∈D} 1[ŷ_r(p) = ŷ_r′(p)]" for any two preference providers.
* Table 3/18: "accuracy [...] reported as the mean ± SD across three independent runs";
  "Leniency is the mean of every score the evaluator emits"; "average score SD is not the standard
  deviation of all scores assigned by each evaluator across the dataset, but the average of the
  standard deviation of each data point score across 3 runs"; tie (%); "# distinct scores";
  breakdowns by domain, criterion, level contrast and agent model ("each of these blocks partitions
  the 1,000 pairs such that their weighted average equals the total dataset accuracy"); "†
  Parse failures [...] counted incorrect".
* Table 4: "Seven evaluator properties against accuracy, sorted by Spearman's correlation
  coefficients. p_holm is the Holm-Bonferroni corrected p-value across the seven tests".
* App. F.2 / Table 19: "comparing evaluator accuracy on self-generated versus external trajectory
  pairs [...] The observed gaps closely track benchmark-wide trajectory difficulty shifts".

Inputs are two tables. ``pairs``: one row per pair with ``pair_id``, ``worse_id`` (x⁻), ``better_id``
(x⁺) and attributes (``domain``, ``criterion``, ``contrast``, ``agent_model``, ``task_id``, ``judges``
…; :func:`pairs_frame` builds it from :class:`~shopbench.padme.types.Pair` objects). ``scores``:
one row per (``evaluator``, ``rollout_id``, ``run``) with ``score`` (NaN = parse failure or call
error), as :func:`shopbench.judges.padme.sweep.score_rollouts` returns.

Conventions chosen here (the paper does not spell them out):

* Accuracy: Eq. 4 per run, then mean and *sample* SD (ddof = 1) over runs. Parse failures (either
  side's score missing) count as incorrect (the paper's rule, ``accuracy``); ``accuracy_parsed``
  excludes them (shown separately). Tie rate = Δ = 0 among parsed pair-runs.
* Average score SD: per trajectory, the sample SD (ddof = 1) of its scores over runs (parsed runs
  only, ≥ 2 needed), averaged over trajectories. Leniency, distinct scores and the parse-failure
  rate are over the evaluator's scores of the trajectories in the pairs (each trajectory once per
  run, however many pairs it is in). Distinct scores compare values rounded to 9 decimals.
* Bootstrap CIs: percentile bootstrap (``shopbench.stats.bootstrap``) resampling pairs (or clusters
  of pairs, ``cluster=``), the statistic being the run-averaged accuracy; seeded, vectorised (one
  matrix product per block of resamples for all evaluators and subsets at once).
* Table 4's seven properties are not all named in the text; §5.3 "Correlation Analysis" names six:
  tie rate ("Tie rates range from 3.4% to 56.9% and correlate strongly with accuracy"), distinct
  scores ("distinct score count correlates with accuracy at ρ=+0.797"), leniency ("The mean score
  an evaluator assigns [...] ρ=−0.725"), total and active parameters ("Total parameter (ρ=+0.725)
  and active parameter counts (ρ=+0.518 [...])") and reasoning ("Reasoning is a binary factor",
  the caption). Table 4's rows are lost in our copy. Table 3's remaining candidates are release
  date and average score SD; :data:`TABLE4_PROPERTIES` takes average score SD as the seventh — **a
  guess**, marked as such in every Table 4 this module returns (column ``source``,
  :data:`TABLE4_SOURCES`); ``columns=`` takes any others.
* Contamination (Table 19) — for each evaluator whose model took part in synthesis (as agent,
  filter judge or steering generator, from the pairs' ``agent_model`` / ``judges`` /
  ``steering_model``, or declared ``in_pipeline``): accuracy on *self-generated* pairs (the pair's
  agent model is the evaluator's model) vs *external* pairs, the gap (pt), the same gap averaged
  over all *other* evaluators on the same two subsets (the trajectory-difficulty shift the paper
  points to) and the excess gap = gap − others' gap; and accuracy on pairs it *judged* as a filter
  judge vs pairs it did not (undefined when it judged every pair, as J1 and J2 do on D_K). Groups:
  mean accuracy of pipeline evaluators vs the rest.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from shopbench.padme.choices import BOOTSTRAP_CI, HOLM_ALPHA, TABLE4_SEVENTH_PROPERTY
from shopbench.stats.bootstrap import bootstrap, bootstrap_ratio

AXES = ("domain", "criterion", "contrast", "agent_model")  # the Table 18 breakdown blocks
# the seventh property, the Holm level and the CI coverage are the project's (shopbench.padme.choices)
TABLE4_PROPERTIES = ("tie_rate", "distinct_scores", "leniency", "total_params_b", "active_params_b", "reasoning",
                     TABLE4_SEVENTH_PROPERTY)  # fmt: skip
TABLE4_SOURCES = {
    "tie_rate": "named in §5.3", "distinct_scores": "named in §5.3", "leniency": "named in §5.3",
    "total_params_b": "named in §5.3", "active_params_b": "named in §5.3", "reasoning": "named in Table 4's caption",
    TABLE4_SEVENTH_PROPERTY: "guessed: §5.3 names six of the seven and Table 4's rows are lost in our copy",
}  # fmt: skip
PAIR_ATTRIBUTES = ("task_id", "domain", "criterion", "contrast", "agent_model", "source")
MISSING = "(missing)"


# ---- inputs ---------------------------------------------------------------------------------------
def pairs_frame(pairs: Iterable) -> pd.DataFrame:
    """The pairs table from :class:`~shopbench.padme.types.Pair` objects: ids, attributes, filter
    ``judges`` (the vote judges, a tuple), ``steering_model`` (from the rollouts' ``meta`` when
    recorded), ``depth``, ``kept`` and the environment rewards of both sides."""
    rows = []
    for p in pairs:
        steer = p.better.meta.get("steering_model") or p.worse.meta.get("steering_model")
        rows.append({
            "pair_id": p.pair_id, "worse_id": p.worse.rollout_id, "better_id": p.better.rollout_id,
            "cell_id": p.cell_id, "task_id": p.task_id, "domain": p.domain, "source": p.source,
            "criterion": p.criterion, "contrast": p.contrast, "agent_model": p.agent_model, "attempt": p.attempt,
            "judges": tuple(v.judge for v in p.votes), "steering_model": steer, "depth": p.depth, "kept": p.kept,
            "reward_worse": p.worse.reward, "reward_better": p.better.reward,
        })  # fmt: skip
    return pd.DataFrame(rows)


def _check_pairs(pairs: pd.DataFrame) -> None:
    missing = [c for c in ("pair_id", "worse_id", "better_id") if c not in pairs.columns]
    if missing:
        raise ValueError(f"pairs table: missing columns {missing} (see pairs_frame)")
    dup = pairs["pair_id"][pairs["pair_id"].duplicated()]
    if len(dup):
        raise ValueError(f"pairs table: duplicate pair_id {list(dup[:5])}; each pair once")
    same = pairs["pair_id"][pairs["worse_id"] == pairs["better_id"]]
    if len(same):
        raise ValueError(f"pairs table: pair {same.iloc[0]!r} has the same rollout on both sides")


def pair_outcomes(pairs: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """One row per (evaluator, run, pair): Eq. 3 and the Eq. 4 indicator.

    Columns: ``evaluator``, ``run``, ``pair_id``, ``worse_id``, ``better_id``, the pair attributes
    present, ``score_worse``, ``score_better``, ``delta`` = f(x⁺) − f(x⁻), ``outcome`` = sign Δ
    (+1 / 0 / −1; NaN on a parse failure), ``tie``, ``correct`` = Δ > 0 (ties and parse failures
    are not correct) and ``parse_failed`` (either side's score missing). Every pair's two rollouts
    must have a row for every (evaluator, run) in ``scores``."""
    _check_pairs(pairs)
    need = [c for c in ("evaluator", "rollout_id", "run", "score") if c not in scores.columns]
    if need:
        raise ValueError(
            f"scores table: missing columns {need} (see shopbench.judges.padme.sweep.score_rollouts)"
        )
    ev_codes, ev_names = pd.factorize(scores["evaluator"])
    run_codes, run_vals = pd.factorize(scores["run"], sort=True)
    ro_codes, ro_ids = pd.factorize(scores["rollout_id"])
    E, R, N = len(ev_names), len(run_vals), len(ro_ids)
    flat = (ev_codes.astype(np.int64) * R + run_codes) * N + ro_codes
    dup = pd.Series(flat).duplicated().to_numpy()
    if dup.any():
        r = scores.iloc[int(np.flatnonzero(dup)[0])]
        raise ValueError(f"scores table: more than one score for evaluator {r['evaluator']!r}, rollout "
                         f"{r['rollout_id']!r}, run {r['run']!r}; keep one row per (evaluator, rollout, run)")  # fmt: skip
    s_flat = np.full(E * R * N, np.nan)
    s_flat[flat] = pd.to_numeric(scores["score"], errors="coerce").to_numpy(float)
    p_flat = np.zeros(E * R * N, bool)
    p_flat[flat] = True
    S, P = s_flat.reshape(E, R, N), p_flat.reshape(E, R, N)
    index = pd.Index(ro_ids)
    w, b = index.get_indexer(pairs["worse_id"]), index.get_indexer(pairs["better_id"])
    absent = sorted(set(pairs["worse_id"][w < 0]) | set(pairs["better_id"][b < 0]))
    if absent:
        raise ValueError(f"scores table: no scores for rollouts {absent[:5]}{' …' if len(absent) > 5 else ''} "
                         f"({len(absent)} in all); score every rollout of the pairs")  # fmt: skip
    gaps = ~(P[:, :, w] & P[:, :, b])
    if gaps.any():
        e, r, m = (int(x[0]) for x in np.nonzero(gaps))
        raise ValueError(f"scores table: evaluator {ev_names[e]!r} run {run_vals[r]!r} has no score for a rollout "
                         f"of pair {pairs['pair_id'].iloc[m]!r} ({int(gaps.sum())} pair-runs incomplete); every "
                         "(evaluator, run) must score every rollout")  # fmt: skip
    if "criterion" in scores.columns and "criterion" in pairs.columns:
        crit = pd.Series(scores["criterion"].to_numpy(), index=scores["rollout_id"].to_numpy())
        crit = crit[~crit.index.duplicated()]
        for side in ("worse_id", "better_id"):
            got = pairs[side].map(crit)
            bad = got.notna() & (got != pairs["criterion"])
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise ValueError(f"pair {pairs['pair_id'].iloc[i]!r}: rollout {pairs[side].iloc[i]!r} was scored on "
                                 f"criterion {got.iloc[i]!r}, the pair is on {pairs['criterion'].iloc[i]!r}")  # fmt: skip
    sw, sb = S[:, :, w], S[:, :, b]  # (E, R, M)
    M = len(pairs)
    delta = sb - sw
    pf = np.isnan(delta)
    with np.errstate(invalid="ignore"):
        correct = delta > 0
    tie = delta == 0
    outcome = np.sign(delta)
    attrs = [c for c in pairs.columns if c not in ("pair_id", "worse_id", "better_id")]
    out = {
        "evaluator": np.repeat(np.asarray(ev_names, dtype=object), R * M),
        "run": np.tile(np.repeat(np.asarray(run_vals), M), E),
        "pair_id": np.tile(pairs["pair_id"].to_numpy(), E * R),
        "worse_id": np.tile(pairs["worse_id"].to_numpy(), E * R),
        "better_id": np.tile(pairs["better_id"].to_numpy(), E * R),
    }
    for c in attrs:
        out[c] = np.tile(pairs[c].to_numpy(), E * R)
    out.update(score_worse=sw.ravel(), score_better=sb.ravel(), delta=delta.ravel(), outcome=outcome.ravel(),
               tie=tie.ravel(), correct=correct.ravel(), parse_failed=pf.ravel())  # fmt: skip
    if "status" in scores.columns:  # issue 25: a pair-run with a failed call is no answer, not a wrong one
        e_flat = np.zeros(E * R * N, bool)
        e_flat[flat] = (scores["status"] == "error").to_numpy(bool)
        err = e_flat.reshape(E, R, N)
        out["call_error"] = (err[:, :, w] | err[:, :, b]).ravel()
    return pd.DataFrame(out)


@dataclass
class _Cube:
    """Outcomes as arrays (evaluator × run × pair) plus the pair attributes (one row per pair)."""

    evaluators: list
    runs: list
    pairs: pd.DataFrame
    present: np.ndarray
    correct: np.ndarray
    parse_failed: np.ndarray
    tie: np.ndarray


def _cube(outcomes: pd.DataFrame) -> _Cube:
    need = [
        c
        for c in ("evaluator", "run", "pair_id", "correct", "parse_failed", "tie")
        if c not in outcomes.columns
    ]
    if need:
        raise ValueError(f"outcomes table: missing columns {need} (use pair_outcomes)")
    e, ev = pd.factorize(outcomes["evaluator"])
    r, runs = pd.factorize(outcomes["run"], sort=True)
    m, pid = pd.factorize(outcomes["pair_id"])
    E, R, M = len(ev), len(runs), len(pid)
    flat = (e.astype(np.int64) * R + r) * M + m
    if pd.Series(flat).duplicated().any():
        raise ValueError("outcomes table: a (evaluator, run, pair) appears twice")

    def fill(col):
        a = np.zeros(E * R * M, bool)
        a[flat] = outcomes[col].to_numpy(bool)
        return a.reshape(E, R, M)

    present = np.zeros(E * R * M, bool)
    present[flat] = True
    if "call_error" in outcomes.columns:  # issue 25: a failed call is excluded from every denominator
        present[flat[outcomes["call_error"].to_numpy(bool)]] = False
    first = ~outcomes["pair_id"].duplicated().to_numpy()
    pairs = outcomes.loc[first].drop(columns=["evaluator", "run", "score_worse", "score_better", "delta", "outcome",
                                              "tie", "correct", "parse_failed", "call_error"], errors="ignore")  # fmt: skip
    pairs = pairs.set_index("pair_id").reindex(pd.Index(np.asarray(pid), name="pair_id")).reset_index()
    return _Cube(list(ev), list(runs), pairs, present.reshape(E, R, M), fill("correct"), fill("parse_failed"),
                 fill("tie"))  # fmt: skip


def _units(cube: _Cube, cluster: str | None) -> np.ndarray | None:
    """The (units × pairs) aggregation matrix for a cluster bootstrap (None: pairs are the units)."""
    if cluster is None:
        return None
    if cluster not in cube.pairs.columns:
        raise ValueError(
            f"cluster column {cluster!r} is not in the outcomes (have {list(cube.pairs.columns)})"
        )
    codes, uniq = pd.factorize(cube.pairs[cluster].fillna(MISSING))
    g = np.zeros((len(uniq), len(codes)))
    g[codes, np.arange(len(codes))] = 1.0
    return g


def _ratio_ci(num: np.ndarray, den: np.ndarray, n_boot: int, seed, ci: float, units: np.ndarray | None):
    """Percentile CI of Σ num / Σ den per column over resampled units (pairs, or clusters via ``units``)."""
    if units is not None:
        num, den = units @ num, units @ den
    if num.shape[1] == 0:
        return np.empty(0), np.empty(0)
    res = bootstrap_ratio(num, den, n_boot=n_boot, seed=seed, ci=ci)
    return np.atleast_1d(np.asarray(res.low, dtype=float)), np.atleast_1d(np.asarray(res.high, dtype=float))


def _per_run(num_erm, den_erm, ind=None):
    """Per-(evaluator, run[, subset]) accuracy; ``ind`` (pairs × k) splits pairs into subsets."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if ind is None:
            return num_erm.sum(2) / den_erm.sum(2)
        return (num_erm.astype(float) @ ind) / (den_erm.astype(float) @ ind)


def _mean_sd(acc_er):
    """Mean and sample SD (ddof = 1) over runs (axis 1), ignoring runs without pairs."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(acc_er, axis=1)
        n = np.sum(~np.isnan(acc_er), axis=1)
        sd = np.where(n >= 2, np.nanstd(acc_er, axis=1, ddof=1) if acc_er.shape[1] >= 2 else np.nan, np.nan)
    return mean, sd


# ---- Table 3 / 18 ---------------------------------------------------------------------------------
def evaluator_summary(outcomes: pd.DataFrame, scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0,
                      ci: float = BOOTSTRAP_CI, cluster: str | None = None, sort: bool = True) -> pd.DataFrame:  # fmt: skip
    """Per evaluator (Table 3 layout): ``accuracy`` ± ``accuracy_sd`` over runs with its bootstrap CI
    (parse failures incorrect), ``leniency``, ``score_sd`` (average per-item SD), ``tie_rate``,
    ``distinct_scores``, ``parse_failure_rate`` (of scores) and ``pair_parse_failure_rate``, and
    ``accuracy_parsed`` (± SD, CI) with parse failures excluded. Index = evaluator, sorted by
    accuracy (descending) when ``sort``."""
    c = _cube(outcomes)
    parsed = c.present & ~c.parse_failed
    acc_mean, acc_sd = _mean_sd(_per_run(c.correct, c.present))
    par_mean, par_sd = _mean_sd(_per_run(c.correct & parsed, parsed))
    # bootstrap statistic: run-averaged accuracy over resampled pairs (both conventions in one pass)
    num = np.concatenate([c.correct.sum(1).T, (c.correct & parsed).sum(1).T], axis=1).astype(float)
    den = np.concatenate([c.present.sum(1).T, parsed.sum(1).T], axis=1).astype(float)
    lo, hi = _ratio_ci(num, den, n_boot, seed, ci, _units(c, cluster))
    E = len(c.evaluators)
    with np.errstate(invalid="ignore", divide="ignore"):
        tie_rate = c.tie.sum((1, 2)) / parsed.sum((1, 2))
        pair_pf = c.parse_failed.sum((1, 2)) / c.present.sum((1, 2))
    out = pd.DataFrame({
        "n_pairs": c.present.any(1).sum(1), "n_runs": c.present.any(2).sum(1),
        "accuracy": acc_mean, "accuracy_sd": acc_sd, "accuracy_ci_low": lo[:E], "accuracy_ci_high": hi[:E],
        "tie_rate": tie_rate, "pair_parse_failure_rate": pair_pf,
        "accuracy_parsed": par_mean, "accuracy_parsed_sd": par_sd, "accuracy_parsed_ci_low": lo[E:],
        "accuracy_parsed_ci_high": hi[E:],
    }, index=pd.Index(c.evaluators, name="evaluator"))  # fmt: skip
    out = out.join(score_statistics(scores, outcomes))
    cols = ["n_pairs", "n_runs", "accuracy", "accuracy_sd", "accuracy_ci_low", "accuracy_ci_high", "leniency",
            "score_sd", "tie_rate", "distinct_scores", "n_scores", "n_parse_failures", "parse_failure_rate",
            "pair_parse_failure_rate", "accuracy_parsed", "accuracy_parsed_sd", "accuracy_parsed_ci_low",
            "accuracy_parsed_ci_high"]  # fmt: skip
    out = out[cols]
    out = _with_outcomes(out, outcomes, scores)
    return out.sort_values("accuracy", ascending=False, kind="stable") if sort else out


def _with_outcomes(out: pd.DataFrame, outcomes: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Issue 25 item 3: per evaluator, ``n_used`` of ``n_planned`` pair-runs, ``n_call_error`` (either
    side's call failed: excluded), ``n_parse_failure`` (counted incorrect, as the paper does), ``outcome``
    and ``outcome_note``; an evaluator with no parsed pair-run has no numbers (NaN), only its counts."""
    from ...llm.outcomes import OUTCOME_COLUMNS, Tally, error_key

    err = outcomes["call_error"].to_numpy(bool) if "call_error" in outcomes else np.zeros(len(outcomes), bool)
    pf = outcomes["parse_failed"].to_numpy(bool)
    rows = {}
    for ev, idx in outcomes.groupby("evaluator", sort=False).indices.items():
        t = Tally(
            planned=len(idx), call_error=int(err[idx].sum()), parse_failure=int((pf[idx] & ~err[idx]).sum())
        )
        t.ok = t.planned - t.call_error - t.parse_failure
        mine = scores[scores["evaluator"] == ev]
        if "status" in mine:
            for msg in mine.loc[mine["status"] == "error", "error"] if "error" in mine else []:
                t.errors[error_key(msg)] += 1
            for msg in (
                mine.loc[mine["status"] == "parse_error", "parse_error"] if "parse_error" in mine else []
            ):
                t.parse_errors[error_key(msg)] += 1
        rows[ev] = t.columns()
    counts = pd.DataFrame.from_dict(rows, orient="index", columns=list(OUTCOME_COLUMNS))
    out = out.join(counts)
    no = (out["outcome"] == "no-answer").to_numpy(bool)
    if no.any():
        keep = {*OUTCOME_COLUMNS, "parse_failure_rate", "pair_parse_failure_rate"}  # counts of what failed
        metric_cols = [c for c in out.columns if c not in keep and not c.startswith("n_")]
        out.loc[no, metric_cols] = np.nan
    return out


def score_statistics(scores: pd.DataFrame, outcomes: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per evaluator: ``leniency`` (mean score), ``score_sd`` (mean over trajectories of the SD of its
    scores across runs, ddof = 1), ``distinct_scores``, ``n_scores``, ``n_parse_failures`` (NaN
    scores: parse failures and call errors) and ``parse_failure_rate``. With ``outcomes``, only the
    trajectories of those pairs count."""
    s = scores
    if outcomes is not None:
        ids = pd.unique(np.concatenate([outcomes["worse_id"].to_numpy(), outcomes["better_id"].to_numpy()]))
        s = s[s["rollout_id"].isin(ids) & s["evaluator"].isin(outcomes["evaluator"].unique())]
    ev, ev_names = pd.factorize(s["evaluator"])
    ro, _ = pd.factorize(s["rollout_id"])
    x = pd.to_numeric(s["score"], errors="coerce").to_numpy(float)
    ok = ~np.isnan(x)
    E = len(ev_names)
    n = np.bincount(ev, minlength=E)
    k = np.bincount(ev[ok], minlength=E)
    with np.errstate(invalid="ignore", divide="ignore"):
        leniency = np.bincount(ev[ok], weights=x[ok], minlength=E) / k
    # per (evaluator, item) sample SD over runs, via sums (vectorised)
    key = ev[ok].astype(np.int64) * (ro.max() + 1 if len(ro) else 1) + ro[ok]
    g, inv = np.unique(key, return_inverse=True)
    cnt = np.bincount(inv)
    s1 = np.bincount(inv, weights=x[ok])
    s2 = np.bincount(inv, weights=x[ok] ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.maximum(s2 - s1**2 / cnt, 0) / (cnt - 1)
    sd = np.sqrt(var)
    g_ev = (g // (ro.max() + 1 if len(ro) else 1)).astype(int)
    use = cnt >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        score_sd = np.bincount(g_ev[use], weights=sd[use], minlength=E) / np.bincount(g_ev[use], minlength=E)
    rounded = pd.DataFrame({"e": ev[ok], "v": np.round(x[ok], 9)}).drop_duplicates()
    distinct = np.bincount(rounded["e"].to_numpy(), minlength=E)
    with np.errstate(invalid="ignore", divide="ignore"):
        pfr = (n - k) / n
    return pd.DataFrame({"leniency": leniency, "score_sd": score_sd, "distinct_scores": distinct, "n_scores": n,
                         "n_parse_failures": n - k, "parse_failure_rate": pfr},
                        index=pd.Index(list(ev_names), name="evaluator"))  # fmt: skip


def accuracy_by(outcomes: pd.DataFrame, by: Sequence[str] = AXES, n_boot: int = 1000, seed: int = 0,
                ci: float = BOOTSTRAP_CI, parse_failures: str = "incorrect", cluster: str | None = None) -> pd.DataFrame:  # fmt: skip
    """Accuracy by pair attribute (Table 18 blocks): one row per (evaluator, axis, value) with
    ``n_pairs``, ``accuracy`` (mean over runs), ``accuracy_sd``, ``ci_low``, ``ci_high``.
    ``parse_failures``: "incorrect" (the paper's rule) or "excluded"."""
    if parse_failures not in ("incorrect", "excluded"):
        raise ValueError(f"parse_failures must be 'incorrect' or 'excluded', got {parse_failures!r}")
    c = _cube(outcomes)
    missing = [a for a in by if a not in c.pairs.columns]
    if missing:
        raise ValueError(f"accuracy_by: outcomes have no column {missing}; have {list(c.pairs.columns)}")
    den_erm = c.present if parse_failures == "incorrect" else c.present & ~c.parse_failed
    num_erm = c.correct & den_erm
    blocks, labels = [], []
    for a in by:
        vals = c.pairs[a].astype(object).where(c.pairs[a].notna(), MISSING).astype(str)
        codes, uniq = pd.factorize(vals, sort=True)
        ind = np.zeros((len(codes), len(uniq)))
        ind[np.arange(len(codes)), codes] = 1.0
        blocks.append(ind)
        labels += [(a, u, int(ind[:, j].sum())) for j, u in enumerate(uniq)]
    ind = np.concatenate(blocks, axis=1) if blocks else np.zeros((len(c.pairs), 0))
    E, K = len(c.evaluators), ind.shape[1]
    acc = _per_run(num_erm, den_erm, ind)  # (E, R, K)
    mean, sd = _mean_sd(acc.transpose(0, 2, 1).reshape(E * K, -1))
    num_me = num_erm.sum(1).T.astype(float)  # (M, E)
    den_me = den_erm.sum(1).T.astype(float)
    num = (num_me[:, :, None] * ind[:, None, :]).reshape(len(ind), E * K)
    den = (den_me[:, :, None] * ind[:, None, :]).reshape(len(ind), E * K)
    lo, hi = _ratio_ci(num, den, n_boot, seed, ci, _units(c, cluster))
    rows = {
        "evaluator": np.repeat(c.evaluators, K), "axis": [lab[0] for lab in labels] * E,
        "value": [lab[1] for lab in labels] * E, "n_pairs": [lab[2] for lab in labels] * E,
        "accuracy": mean, "accuracy_sd": sd, "ci_low": lo, "ci_high": hi,
    }  # fmt: skip
    return pd.DataFrame(rows)


def sweep_table(summary: pd.DataFrame, by: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 18 layout: one row per evaluator (accuracy, SD, leniency, score SD, tie rate, the
    breakdown accuracies as ``axis:value`` columns, distinct scores) and a final ``mean`` row, the
    unweighted mean over evaluators."""
    cols = ["accuracy", "accuracy_sd", "leniency", "score_sd", "tie_rate"]
    t = summary[cols].copy()
    if by is not None and len(by):
        wide = by.assign(col=by["axis"] + ":" + by["value"].astype(str)).pivot(index="evaluator", columns="col",
                                                                              values="accuracy")  # fmt: skip
        order = list(dict.fromkeys(by["axis"] + ":" + by["value"].astype(str)))
        t = t.join(wide[order])
    t["distinct_scores"] = summary["distinct_scores"]
    t.loc["mean"] = t.mean(numeric_only=True)
    return t


# ---- Table 4 --------------------------------------------------------------------------------------
def _properties_table(properties) -> pd.DataFrame:
    if properties is None:
        return pd.DataFrame()
    if isinstance(properties, pd.DataFrame):
        return properties
    if isinstance(properties, Mapping):
        return pd.DataFrame.from_dict(dict(properties), orient="index")
    from shopbench.judges.padme.roster import properties_frame

    return properties_frame(properties)


def property_correlations(summary: pd.DataFrame, properties=None, columns: Sequence[str] = TABLE4_PROPERTIES,
                          target: str = "accuracy", method: str = "spearman", alpha: float = HOLM_ALPHA) -> pd.DataFrame:  # fmt: skip
    """Table 4: the correlation of each evaluator property with ``target`` over evaluators, its p-value
    and the Holm–Bonferroni-adjusted p-value across the tests (``shopbench.stats.holm``).

    ``properties``: a DataFrame indexed by evaluator, a mapping evaluator → {property: value} or
    evaluator specs (:func:`shopbench.judges.padme.roster.properties_frame`); columns of ``summary``
    (tie rate, leniency, …) are used as they are. Evaluators missing a property are left out of
    that test (``n``). Booleans count as 0/1. Rows sorted by ρ, descending."""
    from scipy import stats as st

    from shopbench.stats.tests import holm

    fns = {"spearman": st.spearmanr, "pearson": st.pearsonr, "kendall": st.kendalltau}
    if method not in fns:
        raise ValueError(f"method must be one of {sorted(fns)}, got {method!r}")
    if target not in summary.columns:
        raise ValueError(f"summary has no column {target!r}")
    props = _properties_table(properties)
    data = summary.copy()
    for col in props.columns:
        if col not in data.columns:
            data[col] = props[col].reindex(data.index)
    missing = [col for col in columns if col not in data.columns]
    if missing:
        raise ValueError(f"property_correlations: no column {missing} in the summary or properties; have "
                         f"{sorted(data.columns)}")  # fmt: skip
    y = pd.to_numeric(data[target], errors="coerce").to_numpy(float)
    rows = []
    for col in columns:
        x = pd.to_numeric(data[col].astype(object).map(lambda v: float(v) if isinstance(v, bool) else v),
                          errors="coerce").to_numpy(float)  # fmt: skip
        ok = ~np.isnan(x) & ~np.isnan(y)
        n = int(ok.sum())
        rho = p = np.nan
        if n >= 3 and np.ptp(x[ok]) > 0 and np.ptp(y[ok]) > 0:
            res = fns[method](x[ok], y[ok])
            rho, p = float(res.statistic), float(res.pvalue)
        rows.append({"property": col, "n": n, "rho": rho, "p": p})
    out = pd.DataFrame(rows)
    reject, adj = holm(out["p"].to_numpy(float), alpha)
    out["p_holm"], out["significant"] = adj, reject
    out["source"] = out["property"].map(lambda c: TABLE4_SOURCES.get(c, "chosen by the caller"))
    return out.sort_values("rho", ascending=False, kind="stable", na_position="last").reset_index(drop=True)


# ---- Eq. 5 ------------------------------------------------------------------------------------------
def agreement(r1, r2, missing: str = "disagree") -> float:
    """Eq. 5: the share of pairs on which two preference providers decide alike (ŷ ∈ {+1, −1, 0}).

    A tie (0) agrees only with a tie. ``missing`` (NaN, e.g. a parse failure): "disagree" keeps the
    pair in |D| as a disagreement; "exclude" drops it (``shopbench.stats.agreement_rate``). Two
    Series are aligned on their index."""
    if isinstance(r1, pd.Series) and isinstance(r2, pd.Series):
        r1, r2 = r1.align(r2, join="outer")
    a, b = np.asarray(r1, dtype=float), np.asarray(r2, dtype=float)
    if a.shape != b.shape:
        raise ValueError(
            f"agreement: providers cover {a.shape} and {b.shape} pairs; give one decision per pair"
        )
    for name, x in (("r1", a), ("r2", b)):
        bad = ~np.isnan(x) & ~np.isin(x, (-1.0, 0.0, 1.0))
        if bad.any():
            raise ValueError(
                f"agreement: {name} has decisions outside {{+1, -1, 0}}: {sorted(set(x[bad]))[:5]}"
            )
    if missing == "exclude":
        from shopbench.stats.agreement import agreement_rate

        return agreement_rate(a, b)
    if missing != "disagree":
        raise ValueError(f"missing must be 'disagree' or 'exclude', got {missing!r}")
    return float((a == b).mean()) if a.size else float("nan")


# ---- Table 19 -------------------------------------------------------------------------------------
@dataclass
class Contamination:
    """Table 19 per evaluator (``by_evaluator``) and pipeline-vs-rest group means (``groups``)."""

    by_evaluator: pd.DataFrame
    groups: pd.DataFrame


def _identities(evaluators, names: list) -> dict[str, tuple[frozenset, bool]]:
    out = {n: (frozenset([n]), False) for n in names}
    if evaluators is None:
        return out
    if isinstance(evaluators, Mapping):
        for n, ids in evaluators.items():
            ids = [ids] if isinstance(ids, str) else list(ids)
            out[n] = (frozenset([n, *ids]), False)
        return out
    for s in evaluators:
        ids = getattr(s, "identities", None) or frozenset([s.name])
        out[s.name] = (frozenset(ids), bool(getattr(s, "in_pipeline", False)))
    return out


def contamination(outcomes: pd.DataFrame, pairs: pd.DataFrame, evaluators=None, n_boot: int = 1000, seed: int = 0,
                  ci: float = BOOTSTRAP_CI, cluster: str | None = None) -> Contamination:  # fmt: skip
    """The contamination diagnostic (App. F.2, Table 19; definitions in the module docstring).

    ``pairs``: the pairs table (``pair_id``, ``agent_model``; ``judges`` and ``steering_model``
    when known). ``evaluators``: specs (``name``, ``identities``, ``in_pipeline``) or a mapping
    evaluator → the names its model has in the synthesis record; by default an evaluator's name is
    its only identity. Accuracies are run-averaged with parse failures incorrect; gaps are in points
    (``*_pt``); every statistic has a bootstrap CI (pairs resampled, or ``cluster`` units)."""
    c = _cube(outcomes)
    E, M = len(c.evaluators), len(c.pairs)
    if "agent_model" not in pairs.columns or "pair_id" not in pairs.columns:
        raise ValueError("contamination: the pairs table needs 'pair_id' and 'agent_model' columns")
    unknown = sorted(set(c.pairs["pair_id"]) - set(pairs["pair_id"]))
    if unknown:
        raise ValueError(f"contamination: pairs {unknown[:5]} of the outcomes are not in the pairs table")
    p = pairs.drop_duplicates("pair_id").set_index("pair_id").reindex(c.pairs["pair_id"])
    agent = p["agent_model"].to_numpy(object)
    judges = p["judges"].to_numpy(object) if "judges" in p.columns else np.full(M, None, dtype=object)
    steer = (
        p["steering_model"].to_numpy(object) if "steering_model" in p.columns else np.full(M, None, object)
    )
    judge_sets = [
        set(js) if isinstance(js, list | tuple | set | frozenset | np.ndarray) else set() for js in judges
    ]
    ids = _identities(evaluators, c.evaluators)
    selfm, judged, roles = np.zeros((M, E)), np.zeros((M, E)), []
    for j, e in enumerate(c.evaluators):
        idset, declared = ids[e]
        selfm[:, j] = [a in idset for a in agent]
        judged[:, j] = [bool(idset & js) for js in judge_sets]
        steering = any(isinstance(s, str) and s in idset for s in steer)
        roles.append([n for n, on in (("agent", selfm[:, j].any()), ("judge", judged[:, j].any()),
                                      ("steering", steering), ("declared", declared)) if on])  # fmt: skip
    in_pipe = np.array([bool(r) for r in roles], dtype=bool)
    agents = [j for j in range(E) if selfm[:, j].any()]
    A = len(agents)
    num = c.correct.sum(1).T.astype(float)  # (M, E): correct runs per pair
    den = c.present.sum(1).T.astype(float)
    ext, nj = 1.0 - selfm, 1.0 - judged
    blocks = [(num, den), (num * selfm, den * selfm), (num * ext, den * ext), (num * judged, den * judged),
              (num * nj, den * nj)]  # fmt: skip
    for mask in (selfm, ext):  # every evaluator k on agent-evaluator j's self / external pairs: (M, E·A)
        sub = mask[:, agents]
        blocks.append(((num[:, :, None] * sub[:, None, :]).reshape(M, E * A),
                       (den[:, :, None] * sub[:, None, :]).reshape(M, E * A)))  # fmt: skip
    NUM = np.concatenate([b[0] for b in blocks], axis=1)
    DEN = np.concatenate([b[1] for b in blocks], axis=1)
    units = _units(c, cluster)
    if units is not None:
        NUM, DEN = units @ NUM, units @ DEN
    not_self = np.ones((E, A), bool)
    for a, j in enumerate(agents):
        not_self[j, a] = False

    def stat(w):
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = (w @ NUM) / (w @ DEN)
            acc, a_self, a_ext, a_j, a_nj = (r[:, k * E : (k + 1) * E] for k in range(5))
            o_self = r[:, 5 * E : 5 * E + E * A].reshape(len(r), E, A)
            o_ext = r[:, 5 * E + E * A :].reshape(len(r), E, A)
            d = np.where(not_self[None], o_self - o_ext, np.nan)
            others_gap = np.full_like(acc, np.nan)
            if A:
                others_gap[:, agents] = np.nanmean(d, axis=1)
            gap = a_self - a_ext
            nanb = np.full(len(acc), np.nan)
            g_pipe = np.nanmean(acc[:, in_pipe], axis=1) if in_pipe.any() else nanb
            g_rest = np.nanmean(acc[:, ~in_pipe], axis=1) if (~in_pipe).any() else nanb
        return np.concatenate([acc, a_self, a_ext, gap, others_gap, gap - others_gap, a_j, a_nj,
                               np.stack([g_pipe, g_rest, g_pipe - g_rest], axis=1)], axis=1)  # fmt: skip

    res = bootstrap(stat, len(NUM), n_boot=n_boot, seed=seed, ci=ci)
    est, lo, hi = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (res.estimate, res.low, res.high))
    names = ["accuracy", "acc_self", "acc_external", "gap_pt", "others_gap_pt", "excess_gap_pt", "acc_judged",
             "acc_not_judged"]  # fmt: skip
    by_ev = pd.DataFrame({"roles": [",".join(r) for r in roles], "in_pipeline": in_pipe,
                          "n_self": selfm.sum(0).astype(int), "n_external": ext.sum(0).astype(int),
                          "n_judged": judged.sum(0).astype(int), "n_not_judged": nj.sum(0).astype(int)},
                         index=pd.Index(c.evaluators, name="evaluator"))  # fmt: skip
    for k, n in enumerate(names):
        scale = 100.0 if n.endswith("_pt") else 1.0  # gaps in points, like Table 19
        sl = slice(k * E, (k + 1) * E)
        by_ev[n], by_ev[f"{n}_ci_low"], by_ev[f"{n}_ci_high"] = (
            est[sl] * scale,
            lo[sl] * scale,
            hi[sl] * scale,
        )
    g = slice(8 * E, 8 * E + 3)
    groups = pd.DataFrame({
        "group": ["in_pipeline", "rest", "difference"],
        "n_evaluators": [int(in_pipe.sum()), int((~in_pipe).sum()), E],
        "accuracy": est[g], "ci_low": lo[g], "ci_high": hi[g],
    })  # fmt: skip
    return Contamination(by_ev, groups)


# ---- real data: pairs labelled by the environment reward ------------------------------------------
def reward_pairs(rollouts: Iterable, criterion: str = "task_resolution") -> pd.DataFrame:
    """Pairs of recorded trajectories of the same task with different environment rewards: every
    (lower, higher) combination within a task; ``better`` is the higher reward. Rollouts without a
    reward are an error (the label would be undefined)."""
    by_task: dict[str, list] = {}
    for r in rollouts:
        if r.reward is None:
            raise ValueError(f"rollout {r.rollout_id}: no environment reward; reward-labelled pairs need one")
        by_task.setdefault(r.task_id, []).append(r)
    rows = []
    for task, rs in by_task.items():
        rs = sorted(rs, key=lambda r: (r.reward, r.rollout_id))
        for i, lo in enumerate(rs):
            for hi in rs[i + 1 :]:
                if hi.reward > lo.reward:
                    rows.append({"pair_id": f"{task}:{lo.rollout_id}<{hi.rollout_id}", "worse_id": lo.rollout_id,
                                 "better_id": hi.rollout_id, "task_id": task, "domain": lo.domain,
                                 "source": lo.source, "criterion": criterion, "contrast": "reward",
                                 "agent_model": lo.agent_model, "reward_worse": lo.reward,
                                 "reward_better": hi.reward})  # fmt: skip
    return pd.DataFrame(rows, columns=["pair_id", "worse_id", "better_id", "task_id", "domain", "source", "criterion",
                                       "contrast", "agent_model", "reward_worse", "reward_better"])  # fmt: skip


# the paper's four domains (§5.3: "domain (retail, telecom, banking, airline)") and what the project has of each
PAPER_DOMAINS: dict[str, str] = {
    "retail": "steered trajectory source: τ²-bench retail (tasks, database, tools, policy in ../shared/data/tau2_retail)",
    "airline": "steered trajectory source: τ²-bench airline (tau-bench's database, τ²-bench's 50 tasks; ../shared/data/tau2_airline)",
    "telecom": ("steered trajectory source: τ²-bench telecom, dual control (company and phone databases, user-side tools; "
                "../shared/data/tau2_telecom)"),
    "banking_knowledge": ("steered trajectory source: τ²-bench banking with retrieval (database, knowledge base; "
                          "../shared/data/tau2_banking_knowledge)"),
}  # fmt: skip
"""Where a domain's steered pairs come from (issue 28 item 3: all four domains can be a PADMÉ source)."""
RECORDED_COVERAGE = ("meta-evaluation only: 200 recorded tau-bench gpt-4o conversations on 50 tasks, labelled by the "
                     "environment reward (../shared/data/tau_bench_airline_trajectories)")  # fmt: skip
MISSING_DOMAIN = ("missing: no steered pairs of this domain in this run: padme.sources names no {{kind: tau2, domain: {d}}} "
                  "source, or its data folder is absent")  # fmt: skip


def domain_breakdown(by: pd.DataFrame, recorded: pd.DataFrame | None = None, recorded_domain: str = "airline",
                     extra_domains: Sequence[str] = ()) -> pd.DataFrame:  # fmt: skip
    """Table 18's domain block with every domain the paper names: the steered pairs' domains from
    :func:`accuracy_by` (``by``, synthetic label), the recorded pairs as ``recorded_domain`` (``recorded``:
    :func:`reward_label_accuracy` per evaluator; environment-reward label, meta-evaluation only) and one
    row per paper domain with no pairs, saying why (:data:`PAPER_DOMAINS`). ``extra_domains``: the
    project's own domains (the shop), kept with their rows. Column ``label`` says where each label
    comes from; rows of different labels are not one pool (the paper's weighted-average identity holds
    within the steered rows only)."""
    cols = [
        "evaluator",
        "domain",
        "label",
        "n_pairs",
        "accuracy",
        "accuracy_sd",
        "ci_low",
        "ci_high",
        "coverage",
    ]
    dom = by[by["axis"] == "domain"] if len(by) else by
    rows = [{"evaluator": r.evaluator, "domain": r.value, "label": "synthetic (steering intent, filtered)",
             "n_pairs": int(r.n_pairs), "accuracy": r.accuracy, "accuracy_sd": r.accuracy_sd, "ci_low": r.ci_low,
             "ci_high": r.ci_high, "coverage": PAPER_DOMAINS.get(str(r.value), "the project's own domain")}
            for r in dom.itertuples()]  # fmt: skip
    if recorded is not None and len(recorded):
        rec = recorded.reset_index() if "evaluator" not in recorded.columns else recorded
        rows += [{"evaluator": r["evaluator"], "domain": recorded_domain,
                  "label": "environment reward (recorded pairs)", "n_pairs": int(r["n_pairs"]),
                  "accuracy": r["accuracy"], "accuracy_sd": r["accuracy_sd"], "ci_low": r["accuracy_ci_low"],
                  "ci_high": r["accuracy_ci_high"], "coverage": RECORDED_COVERAGE}
                 for r in rec.to_dict("records")]  # fmt: skip
    have = {str(r["domain"]) for r in rows} | set(extra_domains)
    rows += [{"evaluator": "(none)", "domain": d, "label": "none", "n_pairs": 0, "accuracy": np.nan,
              "accuracy_sd": np.nan, "ci_low": np.nan, "ci_high": np.nan, "coverage": MISSING_DOMAIN.format(d=d)}
             for d in PAPER_DOMAINS if d not in have]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def reward_label_accuracy(pairs: pd.DataFrame, scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0,
                          ci: float = BOOTSTRAP_CI, cluster: str | None = "task_id") -> pd.DataFrame:  # fmt: skip
    """The Table 3 statistics against the environment-reward label (App. C.3, §6 "Other Reliability
    Signals"): ``pairs`` must carry ``reward_worse`` < ``reward_better``. CIs resample tasks
    (``cluster="task_id"``) because one task contributes several pairs; ``cluster=None`` resamples pairs."""
    need = [c for c in ("reward_worse", "reward_better") if c not in pairs.columns]
    if need:
        raise ValueError(f"reward_label_accuracy: pairs need {need} (see reward_pairs)")
    rw = pd.to_numeric(pairs["reward_worse"], errors="coerce")
    rb = pd.to_numeric(pairs["reward_better"], errors="coerce")
    bad = ~(rw < rb)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(f"pair {pairs['pair_id'].iloc[i]!r}: reward_worse {rw.iloc[i]!r} is not below reward_better "
                         f"{rb.iloc[i]!r}; the label must come from the reward")  # fmt: skip
    if cluster is not None and cluster not in pairs.columns:
        cluster = None
    out = pair_outcomes(pairs, scores)
    return evaluator_summary(out, scores, n_boot=n_boot, seed=seed, ci=ci, cluster=cluster)


__all__ = ["AXES", "PAPER_DOMAINS", "Contamination", "MISSING", "PAIR_ATTRIBUTES", "TABLE4_PROPERTIES", "TABLE4_SOURCES",
           "accuracy_by", "agreement", "contamination", "domain_breakdown", "evaluator_summary", "pair_outcomes", "pairs_frame", "property_correlations",
           "reward_label_accuracy", "reward_pairs", "score_statistics", "sweep_table"]  # fmt: skip
