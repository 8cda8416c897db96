"""Benchmarks of PADMÉ (seed 003): ``make bench`` writes them to ``outputs/bench/padme.json``.

- :func:`bench_meta_eval` — the meta-evaluation statistics at the paper's scale (§4 "Meta-Evaluation
  Sweep": "25 LMs as evaluators [...] on all 1,000 kept pairs across 3 runs"): Eq. 3–4 outcomes, the
  Table 3 summary with 1,000-resample bootstrap CIs (both parse-failure conventions), the Table 18
  breakdowns by domain, criterion, level contrast and agent model with CIs, the Table 4 Spearman
  correlations with Holm correction and the Table 19 contamination diagnostic with CIs. Result
  ``meta_eval_stats_wall_s`` (goal ≤ 5 s on 2 cores) and ``peak_rss_mb``.
- ``bench_synthesis`` — the synthesis speed benchmark, to be added below (see the marked place).

:func:`synthetic_meta_eval` builds the input: the paper's 25-evaluator roster (its properties, three
of them in the pipeline) scoring 2,000 trajectories (1,000 pairs) three times, with evaluator-specific
skill, leniency, score resolution (grid), run-to-run noise and, for two of them, parse failures.
Run on its own so that the peak RSS is its own: ``python -m shopbench.benchmarks.padme`` prints JSON.
"""

from __future__ import annotations

import json
import tempfile
import time

import numpy as np
import pandas as pd

from ..judges.padme.filters import HeuristicFilterJudge
from ..judges.padme.roster import paper_roster_specs
from ..metrics.meta_eval import (
    accuracy_by,
    contamination,
    evaluator_summary,
    pair_outcomes,
    property_correlations,
)
from ..padme.cascade import PairStore, run_cascade
from ..padme.cells import make_cells
from ..padme.criteria import DEFAULT_CRITERIA
from ..padme.sources.shop import ShopSource
from ..padme.steering import ScriptedSteering
from ..padme.types import Context
from .common import rss_mb

DOMAINS = ("airline", "banking", "retail", "telecom")
CRITERIA = ("friendliness", "communication_clarity", "task_resolution")
CONTRASTS = ("bad-ok", "ok-good", "bad-good")
AGENTS = ("gpt-oss-20b", "gpt-oss-120b", "nemotron-lightning-3.5")
JUDGES = ("nemotron-lightning-3.5", "gpt-oss-120b")
STEERING_MODEL = "gpt-oss-120b"


def synthetic_meta_eval(n_pairs: int = 1000, runs: int = 3, seed: int = 0, n_evaluators: int = 25):
    """``(pairs, scores, specs)``: a pairs table, a scores table (``n_evaluators × 2·n_pairs × runs``
    rows) and the evaluator specs (the first ``n_evaluators`` of the paper's roster)."""

    rng = np.random.default_rng(seed)
    specs = paper_roster_specs()[:n_evaluators]
    i = np.arange(n_pairs)
    contrast = rng.choice(CONTRASTS, n_pairs)
    pairs = pd.DataFrame({
        "pair_id": [f"p{k:05d}" for k in i], "worse_id": [f"p{k:05d}-w" for k in i],
        "better_id": [f"p{k:05d}-b" for k in i], "task_id": [f"t{k % 375:03d}" for k in i],
        "domain": rng.choice(DOMAINS, n_pairs), "source": "synthetic", "criterion": rng.choice(CRITERIA, n_pairs),
        "contrast": contrast, "agent_model": rng.choice(AGENTS, n_pairs),
        "judges": [JUDGES] * n_pairs, "steering_model": STEERING_MODEL, "depth": 2, "kept": True,
    })  # fmt: skip
    gap = np.select([contrast == "bad-good", contrast == "bad-ok"], [0.35, 0.25], 0.15)
    q_w = rng.uniform(0.1, 0.7, n_pairs)
    q_b = q_w + gap + rng.normal(0, 0.12, n_pairs)  # some pairs' labels disagree with the latent quality
    ids = np.concatenate([pairs["worse_id"].to_numpy(), pairs["better_id"].to_numpy()])
    q = np.concatenate([q_w, q_b])
    n = len(ids)
    frames = []
    grids = (0.01, 0.02, 0.05, 0.1, 0.25)
    for k, s in enumerate(specs):
        skill = 1.0 - k / max(1, len(specs) - 1)  # roster order = reported accuracy order
        grid = grids[min(len(grids) - 1, int((1 - skill) * len(grids)))]
        bias = 0.3 + 0.4 * (1 - skill) * rng.uniform(0.6, 1.0)
        item_noise = rng.normal(0, 0.05 + 0.25 * (1 - skill), n)  # the evaluator's fixed misjudgements
        pf_rate = 0.05 if k in (len(specs) - 3, len(specs) - 2) else 0.002
        for run in range(runs):
            raw = bias + (0.3 + 0.5 * skill) * (q - 0.45) + item_noise + rng.normal(0, 0.03, n)
            score = np.clip(np.round(raw / grid) * grid, 0.0, 1.0)
            failed = rng.random(n) < pf_rate
            score[failed] = np.nan
            frames.append(pd.DataFrame({
                "evaluator": s.name, "backbone": s.backbone, "rollout_id": ids,
                "criterion": np.concatenate([pairs["criterion"].to_numpy()] * 2), "run": run, "score": score,
                "status": np.where(failed, "parse_error", "ok"),
            }))  # fmt: skip
    return pairs, pd.concat(frames, ignore_index=True), specs


def meta_eval_statistics(pairs, scores, specs, n_boot: int = 1000, seed: int = 0) -> dict:
    """Everything the meta-evaluation notebook reports, from the two tables (the benchmarked work)."""

    out = pair_outcomes(pairs, scores)
    summary = evaluator_summary(out, scores, n_boot=n_boot, seed=seed)
    by = accuracy_by(out, n_boot=n_boot, seed=seed)
    corr = property_correlations(summary, specs)
    cont = contamination(out, pairs, specs, n_boot=n_boot, seed=seed)
    return {"outcomes": out, "summary": summary, "by": by, "correlations": corr, "contamination": cont}


def bench_meta_eval(
    n_evaluators: int = 25, n_pairs: int = 1000, runs: int = 3, n_boot: int = 1000
) -> list[dict]:
    """Time the full meta-evaluation statistics for 25 evaluators × 1,000 pairs × 3 runs; goal ≤ 5 s."""
    t = time.perf_counter()
    pairs, scores, specs = synthetic_meta_eval(n_pairs, runs, seed=0, n_evaluators=n_evaluators)
    gen = time.perf_counter() - t
    t = time.perf_counter()
    res = meta_eval_statistics(pairs, scores, specs, n_boot=n_boot, seed=0)
    wall = time.perf_counter() - t
    rss = rss_mb()
    s = res["summary"]
    detail = (f"{n_evaluators} evaluators x {n_pairs} pairs x {runs} runs ({len(scores)} scores, "
              f"{len(res['outcomes'])} pair outcomes); summary + {len(res['by']) // n_evaluators} breakdown cells + "
              f"{len(res['correlations'])} correlations + contamination, {n_boot} bootstrap resamples each; accuracy "
              f"{s['accuracy'].min():.3f}-{s['accuracy'].max():.3f}; synthetic tables {gen:.1f} s not included")  # fmt: skip
    return [
        {"name": "meta_eval_stats_wall_s", "value": round(wall, 2), "unit": "s", "goal": "<= 5",
         "meets_goal": wall <= 5, "detail": detail},
        {"name": "peak_rss_mb", "value": round(rss, 1), "unit": "MB", "goal": "<= 1024", "meets_goal": rss <= 1024,
         "detail": "peak RSS of the whole process (imports, synthetic tables, statistics)"},
    ]  # fmt: skip


# ---- synthesis speed ---------------------------------------------------------------------------
def bench_synthesis(n_tasks: int = 40, n_products: int = 4000) -> list[dict]:
    """Algorithm 1 with the shop environment as the source: scripted steered agents, simulated
    steering, K = 2 heuristic filter judges, R = 2, order-swap re-judging; goal ≥ 60 kept pairs/min."""

    t = time.perf_counter()
    src = ShopSource(n_products=n_products)
    setup = time.perf_counter() - t
    cells = make_cells(src.tasks(n=n_tasks, seed=0), DEFAULT_CRITERIA, seed=0)
    judges = [HeuristicFilterJudge("J1", noise=0.1, seed=1), HeuristicFilterJudge("J2", noise=0.05, seed=2)]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        res = run_cascade(cells, src, ScriptedSteering(), judges, Context("scripted:shop", "scripted", 0), retries=2,
                          store=PairStore(f"{tmp}/pairs.jsonl"), order_swap=True, progress=False)  # fmt: skip
        wall = time.perf_counter() - t
    per_min = len(res.kept) / wall * 60
    return [
        {"name": "kept_pairs_per_min", "value": round(per_min, 1), "unit": "pairs/min", "goal": ">= 60",
         "meets_goal": per_min >= 60,
         "detail": f"{len(cells)} cells, {len(res.pairs)} pairs over all attempts, {len(res.kept)} kept in "
                   f"{wall:.1f} s (store writes included); shop source setup {setup:.1f} s not included"},
        {"name": "peak_rss_mb_synthesis", "value": round(rss_mb(), 1), "unit": "MB", "goal": None, "meets_goal": None},
    ]  # fmt: skip


BENCHES = {"meta_eval": bench_meta_eval, "synthesis": bench_synthesis}


if __name__ == "__main__":
    print(json.dumps(bench_synthesis() + bench_meta_eval()))
