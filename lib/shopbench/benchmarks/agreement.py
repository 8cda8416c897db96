"""Benchmark of the agreement statistics: bootstrap CIs for a 25-evaluator × 1,000-pair sweep.

The workload mirrors the paper's meta-evaluation sweep (Section 5.3: "We evaluate 25 LMs as evaluators
... on all 1,000 kept pairs"): a 1,000 × 25 matrix of per-pair correctness (evaluator vs synthetic
label), and a percentile bootstrap with 6,000 resamples of the pairs giving each evaluator's accuracy
CI (all 25 evaluators share the resamples, so differences between them are paired).

It runs in a subprocess so that the peak RSS is the workload's own process (interpreter, numpy and
the bootstrap; not the caller's memory). Results::

    [{"name": "bootstrap_wall_s", "value", "unit": "s", "goal": "<= 5", "meets_goal", "detail"},
     {"name": "peak_rss_mb", "value", "unit": "MB", "goal": "<= 1024", "meets_goal", "detail"}]

``python -m shopbench.benchmarks.agreement`` prints them as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from ..stats.bootstrap import bootstrap_mean
from .common import rss_mb

N_EVALUATORS = 25
N_PAIRS = 1000
N_BOOT = 6000
WALL_GOAL_S = 5.0
RSS_GOAL_MB = 1024.0


def _worker(seed: int = 0) -> dict:
    import numpy as np

    base = rss_mb()
    rng = np.random.default_rng(seed)
    acc = np.linspace(0.37, 0.85, N_EVALUATORS)  # the paper's spread of evaluator accuracies
    correct = (rng.random((N_PAIRS, N_EVALUATORS)) < acc).astype(float)
    bootstrap_mean(correct[:50], n_boot=50, seed=seed)  # warm-up (imports, allocator)
    t = time.perf_counter()
    res = bootstrap_mean(correct, n_boot=N_BOOT, seed=seed)
    wall = time.perf_counter() - t
    width = float(np.mean(res.high - res.low))
    return {"wall_s": wall, "peak_rss_mb": rss_mb(), "baseline_rss_mb": base, "mean_ci_width": width,
            "n_valid_min": int(np.min(res.n_valid))}  # fmt: skip


def bench_agreement(seed: int = 0, isolated: bool = True) -> list[dict]:
    """Time the 25 × 1,000 × 6,000 bootstrap and record the peak RSS (in a subprocess by default)."""
    if isolated:
        code = f"import json; from shopbench.benchmarks.agreement import _worker; print(json.dumps(_worker({int(seed)})))"
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
    else:
        r = _worker(seed)
    what = (
        f"{N_EVALUATORS} evaluators × {N_PAIRS} pairs, {N_BOOT} percentile-bootstrap resamples of the pairs"
    )
    return [
        {"name": "bootstrap_wall_s", "value": round(r["wall_s"], 3), "unit": "s", "goal": f"<= {WALL_GOAL_S:g}",
         "meets_goal": r["wall_s"] <= WALL_GOAL_S,
         "detail": f"{what}; mean 95% CI width {r['mean_ci_width']:.3f}; min valid resamples {r['n_valid_min']}"},
        {"name": "peak_rss_mb", "value": round(r["peak_rss_mb"], 1), "unit": "MB", "goal": f"<= {RSS_GOAL_MB:g}",
         "meets_goal": r["peak_rss_mb"] <= RSS_GOAL_MB,
         "detail": f"peak RSS of the {'benchmark subprocess' if isolated else 'calling process'} (interpreter and "
                   f"numpy included; {r['baseline_rss_mb']:.0f} MB before the workload)"},
    ]  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(bench_agreement(), indent=2))
