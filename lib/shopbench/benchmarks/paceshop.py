"""The PACEShop build benchmark (``outputs/bench/paceshop_build.json``)."""

from __future__ import annotations

import tempfile
import time

from ..config import load_profile
from ..paceshop.build import BuildConfig, build, write
from .common import rss_mb


def bench_paceshop_build() -> list[dict]:
    """Paper-scale PACEShop build with the offline generator (params/paper.yaml): goal ≤ 60 s, ≤ 2 GB."""

    cfg = BuildConfig.from_profile(load_profile("paper"))
    cfg.generator = "offline"
    t = time.perf_counter()
    res = build(cfg, progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        write(res, tmp, cfg)
    wall = time.perf_counter() - t
    rss = rss_mb()
    stages = ", ".join(f"{k} {v:.1f}" for k, v in res.timings.items())
    return [
        {"name": "records", "value": len([r for r in res.records if r.kind in ("good", "bad")]), "unit": "records",
         "goal": "22625 at paper scale", "meets_goal": None,
         "detail": f"{len(res.records)} incl. {len(res.by_kind('swap'))} persona swaps"},
        {"name": "build_wall_s", "value": round(wall, 1), "unit": "s", "goal": "<= 60", "meets_goal": wall <= 60,
         "detail": f"stages (s): {stages}; writing included"},
        {"name": "peak_rss_mb", "value": round(rss, 1), "unit": "MB", "goal": "<= 2048", "meets_goal": rss <= 2048},
    ]  # fmt: skip
