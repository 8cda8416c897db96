"""The noise floor of a PADMÉ evaluator: how much its accuracy, scores and pair preferences move between
runs (issue 29, item 3: "in notebook 50 (evaluator repeats, the paper's runs SD)"; notebook 50's table
``padme_evaluator_repeats``).

The paper reports accuracy "as the mean ± SD across three independent runs" (seed 003, App. F) and an
"average score SD [...] the average of the standard deviation of each data point score across 3 runs"
(§5.3, footnote 5), with evaluators "at temperature 0, unless temperature cannot be set" (§4). Per
evaluator with at least two runs (inputs as :func:`.pairwise.pair_outcomes` and the scores table):

- ``accuracy`` and ``accuracy_sd``: Eq. 4 per run (parse failures incorrect, call errors left out),
  mean and sample SD (ddof = 1) over runs — the paper's runs SD;
- ``score_sd``: per trajectory, the sample SD of its parsed scores over runs, averaged over
  trajectories (the paper's average score SD; :func:`.pairwise.score_statistics`);
- ``pair_flip_rate`` (CI) over ``n_pairs``: per pair with ≥ 2 parsed runs, the share of its pairs of
  runs whose preferences ŷ = sign Δ ∈ {+1, 0, −1} (Eq. 3; a tie is its own preference) differ,
  averaged over pairs; percentile bootstrap CI over pairs;
- ``alpha`` (CI): Krippendorff's nominal α of ŷ with the runs as raters and the pairs as units
  (:func:`shopbench.stats.agreement.alpha_nominal`), bootstrap CI resampling pairs;
- ``note``: one run ("no run-to-run spread measured"), identical scores in every run, or a reason
  given by the caller (``fixed``: e.g. a reference heuristic whose spread is set by construction).

PADMÉ evaluators score one trajectory at a time, so there is no presentation order to swap: the
preference flip here is between runs only.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ...errors import InputError
from ...stats.agreement import alpha_nominal, bootstrap_alpha
from ...stats.bootstrap import bootstrap_mean
from .pairwise import score_statistics

COLUMNS = ("evaluator", "n_runs", "n_pairs", "accuracy", "accuracy_sd", "score_sd", "pair_flip_rate",
           "pair_flip_ci_low", "pair_flip_ci_high", "alpha", "alpha_ci_low", "alpha_ci_high", "note")  # fmt: skip
PREFERENCES = [-1.0, 0.0, 1.0]


def pair_flips(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Per (evaluator, pair) with ≥ 2 parsed runs: ``n`` runs and ``flip``, the share of its pairs of
    runs with different preferences: 1 − Σ_c n_c(n_c − 1) / (n(n − 1)) over the preferences c."""
    ok = outcomes[~outcomes["parse_failed"].to_numpy(bool) & outcomes["outcome"].notna()]
    if "call_error" in ok:
        ok = ok[~ok["call_error"].to_numpy(bool)]
    counts = ok.groupby(["evaluator", "pair_id"])["outcome"].value_counts().unstack(fill_value=0)
    n = counts.sum(axis=1)
    counts, n = counts[n >= 2], n[n >= 2]
    same = (counts * (counts - 1)).sum(axis=1)
    return pd.DataFrame({"n": n, "flip": 1.0 - same / (n * (n - 1))})


def evaluator_repeats(
    outcomes: pd.DataFrame,
    scores: pd.DataFrame,
    *,
    fixed: Mapping[str, str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> pd.DataFrame:
    """One row per evaluator in ``outcomes`` with the columns :data:`COLUMNS` (module docstring).
    ``fixed``: evaluators whose run-to-run spread is set by construction, with the reason (shown in
    ``note``; the numbers are still computed, as they check that construction)."""
    need = [
        c for c in ("evaluator", "run", "pair_id", "outcome", "correct", "parse_failed") if c not in outcomes
    ]
    if need:
        raise InputError(
            f"the outcomes table lacks columns {need}", fix="use metrics.meta_eval.pair_outcomes"
        )
    fixed = dict(fixed or {})
    present = (
        ~outcomes["call_error"].to_numpy(bool) if "call_error" in outcomes else np.ones(len(outcomes), bool)
    )
    used = outcomes[present]
    stats = score_statistics(scores, outcomes)
    flips = pair_flips(outcomes)
    rows = []
    for ev in pd.unique(outcomes["evaluator"]):
        g = used[used["evaluator"] == ev]
        acc = g.groupby("run")["correct"].mean()
        d: dict = {"evaluator": ev, "n_runs": int(outcomes.loc[outcomes["evaluator"] == ev, "run"].nunique()),
                   "accuracy": float(acc.mean()) if len(acc) else np.nan,
                   "accuracy_sd": float(acc.std(ddof=1)) if len(acc) >= 2 else np.nan,
                   "score_sd": float(stats["score_sd"].get(ev, np.nan))}  # fmt: skip
        notes = [fixed[ev]] if ev in fixed else []
        f = flips.loc[ev] if ev in flips.index.get_level_values(0) else pd.DataFrame(columns=["n", "flip"])
        d["n_pairs"] = len(f)
        if d["n_runs"] < 2:
            notes.append("one run: no run-to-run spread measured (the profile's evaluator runs)")
        elif len(f) == 0:
            notes.append("no pair has two parsed runs")
        else:
            v = f["flip"].to_numpy(float)
            b = bootstrap_mean(v, n_boot=n_boot, seed=seed, ci=ci)
            d.update(
                pair_flip_rate=float(v.mean()), pair_flip_ci_low=float(b.low), pair_flip_ci_high=float(b.high)
            )
            ok = g[~g["parse_failed"].to_numpy(bool) & g["pair_id"].isin(f.index)]
            wide = ok.pivot_table(index="run", columns="pair_id", values="outcome", aggfunc="first")
            data = wide.to_numpy(dtype=float)  # runs × pairs, NaN = not parsed
            d["alpha"] = alpha_nominal(data, categories=PREFERENCES)
            ba = bootstrap_alpha(data, n_boot=n_boot, seed=seed, ci=ci, categories=PREFERENCES)
            d["alpha_ci_low"], d["alpha_ci_high"] = float(ba.low), float(ba.high)
            if np.isnan(d["alpha"]):
                notes.append("α undefined: one preference throughout")
            mine = scores[scores["evaluator"] == ev]
            per_item = pd.to_numeric(mine["score"], errors="coerce").groupby(mine["rollout_id"]).nunique()
            if len(per_item) and (per_item <= 1).all():
                notes.append("every run gave every trajectory the same score")
        d["note"] = "; ".join(notes)
        rows.append(d)
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    for c in ("n_runs", "n_pairs"):
        out[c] = pd.array(out[c], dtype="Int64")
    return out
