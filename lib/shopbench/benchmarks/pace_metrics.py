"""Benchmark of the PACE metrics: Tables 3 and 4 with 2,000-resample bootstrap CIs for 10 judge runs
over a paper-sized synthetic run table (680 GOOD bases × (GOOD + 4 BAD tiers + 1 persona swap) =
4,080 records per run, 40,800 rows). Goal: ≤ 10 s wall and ≤ 1 GB peak RSS on 2 cores.

Run on its own (so that the peak RSS is its own): ``python -m shopbench.benchmarks.pace_metrics`` prints the
results as JSON. :func:`synthetic_run_table` is also a realistic fixture for tests and notebooks.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd

from shopbench.core.taxonomy import DEFECTS, FAMILIES, tier_combinations

from ..metrics.pace.headline import headline_table
from ..metrics.pace.run_table import FAMILY_TARGET, LOCATIONS, SWAP_AXES, TARGET_AXIS, location_field
from ..metrics.pace.scenarios import select_s0_subset
from .common import rss_mb

PROTOCOLS = ("geval", "scalar", "persona_blind", "persona_aware", "pacejudge")
BACKBONES = ("sonnet-4.6", "qwen3-32b")


def _records(n_bases: int, rng: np.random.Generator) -> pd.DataFrame:
    combos = {t: tier_combinations(t) for t in (1, 2, 3, 4)}
    rows = []
    for i in range(n_bases):
        gid = f"full-good-{i:05d}"
        cand = [f"M:P{i:05d}{j:02d}:0" for j in range(24)]
        used = cand[:10]
        common = {"split": "test", "candidate_evidence_ids": cand, "used_evidence_ids": used}
        rows.append({"record_id": gid, "label": "GOOD", "kind": "good", "tier": 0, "gold_family": None,
                     "gold_location": None, "base_record_id": None, "swap_axis": None, **common})  # fmt: skip
        for t in (1, 2, 3, 4):
            fams = combos[t][rng.integers(len(combos[t]))]
            rows.append({"record_id": f"full-bad-t{t}-{i:05d}", "label": "BAD", "kind": "bad", "tier": t,
                         "gold_family": "+".join(fams), "gold_location": "+".join(DEFECTS[f][1] for f in fams),
                         "base_record_id": gid, "swap_axis": None, **common})  # fmt: skip
        axis = SWAP_AXES[i % len(SWAP_AXES)]
        rows.append({"record_id": f"{gid}::swap-{axis}", "label": "BAD", "kind": "swap", "tier": 1,
                     "gold_family": "PREF_CONFLICT", "gold_location": "persona_swap", "base_record_id": gid,
                     "swap_axis": axis, **common})  # fmt: skip
    return pd.DataFrame(rows)


def _judge(rec: pd.DataFrame, skill: float, rng: np.random.Generator) -> dict:
    n = len(rec)
    kind = rec["kind"].to_numpy(object)
    tier = rec["tier"].to_numpy(int)
    first = [(g.split("+")[0] if isinstance(g, str) else None) for g in rec["gold_family"]]
    fail = rng.random(n) < 0.02
    p_bad = np.where(
        kind == "good", (1 - skill) * 0.6, np.where(kind == "swap", skill * 0.7, skill + 0.05 * tier)
    )
    bad = rng.random(n) < p_bad
    right_fam = rng.random(n) < np.where(kind == "swap", skill * 0.6, skill)
    rand_fam = rng.choice(FAMILIES, size=n)
    fam = np.where(bad, np.where(right_fam & (kind != "good"), np.array(first, object), rand_fam), "NONE")
    gold_loc = [location_field(g.split("+")[0]) if isinstance(g, str) else None for g in rec["gold_location"]]
    right_loc = rng.random(n) < skill
    rand_loc = rng.choice(LOCATIONS, size=n)
    loc = np.where(bad, np.where(right_loc & np.array([g is not None for g in gold_loc]),
                                 np.array(gold_loc, object), rand_loc), "NONE")  # fmt: skip
    axes = {ax: np.clip(rng.normal(4.2, 0.5, n), 1, 5).round(1) for ax in
            ("overall_quality", *TARGET_AXIS.values(), "format_safety")}  # fmt: skip
    for t, ax in TARGET_AXIS.items():
        low = bad & np.array([FAMILY_TARGET.get(f) == t for f in fam])
        axes[ax] = np.where(low, np.clip(rng.normal(2.0, 0.5, n), 1, 5).round(1), axes[ax])
    cand = rec["candidate_evidence_ids"].to_numpy(object)
    halluc = rng.random(n) < 0.1
    sup = [
        [c[0], c[3]] + (["M:B0FAKE:0"] if h else []) if b else []
        for c, h, b in zip(cand, halluc, bad, strict=True)
    ]
    out = {
        "status": np.where(fail, "parse_error", "ok"), "parse_ok": ~fail,
        "verdict": np.where(fail, np.array(None), np.where(bad, "BAD", "GOOD")),
        "bad_prob": np.where(fail, np.nan, np.where(bad, 0.8, 0.2)),
        "defect_family": np.where(fail, np.array(None), fam), "defect_location": np.where(fail, np.array(None), loc),
        "supporting_evidence_ids": [[] if f else s for f, s in zip(fail, sup, strict=True)],
        "confidence": np.where(fail, np.nan, rng.uniform(0.3, 1.0, n).round(2)),
    }  # fmt: skip
    for ax, v in axes.items():
        out[ax] = np.where(fail, np.nan, v)
    return out


def synthetic_run_table(
    n_bases: int = 680, protocols=PROTOCOLS, backbones=BACKBONES, seed: int = 0
) -> pd.DataFrame:
    """A realistic run table: ``n_bases`` GOOD records, each with BAD tiers 1–4 (admissible defect
    combinations of :func:`~shopbench.core.taxonomy.tier_combinations`) and one persona swap,
    judged once by every protocol × backbone with a skill that varies by run; 2 % parse failures and
    10 % of BAD verdicts citing a hallucinated evidence id."""
    rng = np.random.default_rng(seed)
    rec = _records(n_bases, rng)
    frames = []
    for k, (p, b) in enumerate((p, b) for p in protocols for b in backbones):
        skill = 0.35 + 0.5 * k / max(1, len(protocols) * len(backbones) - 1)
        judged = _judge(rec, skill, rng)
        frames.append(rec.assign(protocol=p, backbone=b, repeat=0, **judged))
    return pd.concat(frames, ignore_index=True)


def bench_pace_metrics(n_boot: int = 2000) -> list[dict]:
    """Time Tables 3 and 4 with CIs (2,000 resamples) for 10 runs × 4,080 records; report peak RSS."""
    t = time.perf_counter()
    rt = synthetic_run_table()
    gen = time.perf_counter() - t
    ids = select_s0_subset(rt)
    t = time.perf_counter()
    tab = headline_table(rt, s0_ids=ids, n_boot=n_boot, seed=0, lift_protocol="pacejudge",
                         lift_backbone="sonnet-4.6")  # fmt: skip
    wall = time.perf_counter() - t
    rss = rss_mb()
    groups = rt.groupby(["protocol", "backbone"]).ngroups
    detail = (f"{groups} runs x {rt['record_id'].nunique()} records = {len(rt)} rows, {n_boot} resamples; "
              f"{len(tab)} cells with CIs; table generation {gen:.1f} s not included")  # fmt: skip
    return [
        {"name": "metrics_wall_s", "value": round(wall, 2), "unit": "s", "goal": "<= 10", "meets_goal": wall <= 10,
         "detail": detail},
        {"name": "peak_rss_mb", "value": round(rss, 1), "unit": "MB", "goal": "<= 1024", "meets_goal": rss <= 1024,
         "detail": "peak RSS of the whole process (imports, synthetic table, metrics)"},
    ]  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(bench_pace_metrics()))
