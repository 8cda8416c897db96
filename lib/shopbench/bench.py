"""``make bench``: benchmarks written to ``outputs/bench/<file>.json`` (gateway, paceshop_build, ...,
reliability: :mod:`shopbench.benchmarks.reliability`, issue 12 §6).

Each benchmark runs in its own subprocess so that its peak RSS is its own. The fake OpenAI server
runs in a separate process too, so it does not compete with the gateway for the GIL.

Results (name, value, unit, goal, meets_goal):

- ``throughput_ratio_c{1,8,64}``: achieved calls/s ÷ ideal (concurrency / latency) against the
  local server with 100 ms latency; goal ≥ 0.9.
- ``cached_calls_per_s``: a rerun of 10,000 calls served from the cache; goal ≥ 2,000.
- ``llamacpp_overhead_pct``: gateway vs a raw HTTP call to ``python -m llama_cpp.server`` (SmolLM2),
  same prompts, alternating order; goal ≤ 5 %.
- ``peak_rss_mb_*``: peak resident memory of each benchmark process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from .paths import outputs_root

LATENCY = 0.1


@contextmanager
def fake_server_process(latency: float):
    proc = subprocess.Popen([sys.executable, "-m", "shopbench.testing.fake_openai", "--latency", str(latency)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        api_base = proc.stdout.readline().strip()
        if not api_base.startswith("http"):
            raise RuntimeError("fake OpenAI server did not start")
        yield api_base
    finally:
        proc.terminate()
        proc.wait(10)


def _gateway(tmp: str, concurrency: dict):
    from .llm import Gateway

    return Gateway(cache_dir=f"{tmp}/cache", log_dir=f"{tmp}/calls", concurrency=concurrency, progress=False)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_throughput(conc: int) -> list[dict]:
    from .llm import Call

    n = max(20, conc * 10)
    with fake_server_process(LATENCY) as api_base, tempfile.TemporaryDirectory() as tmp:
        gw = _gateway(tmp, {"openai": conc})
        warm = [Call(f"w{i}", "openai/fake", [{"role": "user", "content": f"warm {i}"}], api_base=api_base)
                for i in range(min(conc, 16))]  # fmt: skip
        gw.run(warm, "warm")  # connection pool and imports
        calls = [Call(f"c{i}", "openai/fake", [{"role": "user", "content": f"call {i}"}], api_base=api_base)
                 for i in range(n)]  # fmt: skip
        t = time.perf_counter()
        rows = gw.run(calls, "bench")
        wall = time.perf_counter() - t
    assert all(r["status"] == "ok" for r in rows)
    achieved = n / wall
    ideal = conc / LATENCY
    ratio = achieved / ideal
    return [
        {"name": f"throughput_ratio_c{conc}", "value": round(ratio, 3), "unit": "achieved/ideal", "goal": ">= 0.9",
         "meets_goal": ratio >= 0.9, "detail": f"{n} calls in {wall:.2f} s = {achieved:.1f}/s, ideal {ideal:.0f}/s"},
        {"name": f"peak_rss_mb_throughput_c{conc}", "value": round(_rss_mb(), 1), "unit": "MB", "goal": None,
         "meets_goal": None},
    ]  # fmt: skip


def bench_cached(n: int = 10_000) -> list[dict]:
    from .llm import Call

    with fake_server_process(0.0) as api_base, tempfile.TemporaryDirectory() as tmp:
        gw = _gateway(tmp, {"openai": 64})
        calls = [Call(f"c{i}", "openai/fake", [{"role": "user", "content": f"cached call {i}"}], api_base=api_base)
                 for i in range(n)]  # fmt: skip
        t = time.perf_counter()
        gw.run(calls, "fill")
        fill = time.perf_counter() - t
        t = time.perf_counter()
        rows = gw.run(calls, "rerun")
        wall = time.perf_counter() - t
    assert all(r["cache_hit"] for r in rows)
    rate = n / wall
    return [
        {"name": "cached_calls_per_s", "value": round(rate, 1), "unit": "calls/s", "goal": ">= 2000",
         "meets_goal": rate >= 2000, "detail": f"{n} cached calls in {wall:.2f} s (cache filled at {n / fill:.0f} calls/s, latency 0)"},
        {"name": "uncached_calls_per_s_latency0_c64", "value": round(n / fill, 1), "unit": "calls/s", "goal": None,
         "meets_goal": None},
        {"name": "peak_rss_mb_cached", "value": round(_rss_mb(), 1), "unit": "MB", "goal": None, "meets_goal": None},
    ]  # fmt: skip


def bench_llamacpp(n: int = 20) -> list[dict]:
    """Gateway vs raw HTTP to ``python -m llama_cpp.server`` (SmolLM2): the same prompt through both
    paths, alternating which goes first, one call per gateway run (so per-run setup is included)."""
    import httpx

    from .llm import Call
    from .llm.llamacpp import llama_cpp_available, model_path, serve

    if not llama_cpp_available():
        return [{"name": "llamacpp_overhead_pct", "value": None, "unit": "%", "goal": "<= 5", "meets_goal": None,
                 "detail": "llama-cpp-python not installed: run `make local-llm`"}]  # fmt: skip
    model_path("smollm2-135m-instruct")
    params = {"temperature": 0, "max_tokens": 32, "seed": 1}
    raw_t, gw_t = [], []
    with serve("smollm2-135m-instruct", alias="smollm2") as srv, tempfile.TemporaryDirectory() as tmp:
        gw = _gateway(tmp, {"openai": 1})
        client = httpx.Client(timeout=120)
        prompts = [f"Name one product a shopper who likes hiking might buy. Variant {i}." for i in range(n + 2)]

        def raw(p):
            t = time.perf_counter()
            r = client.post(f"{srv.api_base}/chat/completions",
                            json={"model": "smollm2", "messages": [{"role": "user", "content": p}], **params})
            r.raise_for_status()
            return time.perf_counter() - t  # fmt: skip

        def via_gateway(p, i):
            t = time.perf_counter()
            gw.run([Call(f"p{i}", "openai/smollm2", [{"role": "user", "content": p}], params=params,
                         api_base=srv.api_base)], f"llama{i}")  # fmt: skip
            return time.perf_counter() - t

        raw(prompts[0])
        via_gateway(prompts[1], -1)  # warm both paths
        for i, p in enumerate(prompts[2:]):
            if i % 2:
                raw_t.append(raw(p))
                gw_t.append(via_gateway(p, i))
            else:
                gw_t.append(via_gateway(p, i))
                raw_t.append(raw(p))
    raw_mean, gw_mean = sum(raw_t) / n, sum(gw_t) / n
    pct = (gw_mean - raw_mean) / raw_mean * 100
    return [
        {"name": "llamacpp_overhead_pct", "value": round(pct, 2), "unit": "%", "goal": "<= 5", "meets_goal": pct <= 5,
         "detail": f"mean per call: raw HTTP {raw_mean * 1000:.0f} ms, gateway {gw_mean * 1000:.0f} ms over {n} calls"},
        {"name": "peak_rss_mb_llamacpp", "value": round(_rss_mb(), 1), "unit": "MB", "goal": None, "meets_goal": None},
    ]  # fmt: skip


def bench_paceshop_build() -> list[dict]:
    """Paper-scale PACEShop build with the offline generator (params/paper.yaml): goal ≤ 60 s, ≤ 2 GB."""
    from .config import load_profile
    from .paceshop.build import BuildConfig, build, write

    cfg = BuildConfig.from_profile(load_profile("paper"))
    cfg.generator = "offline"
    t = time.perf_counter()
    res = build(cfg, progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        write(res, tmp, cfg)
    wall = time.perf_counter() - t
    rss = _rss_mb()
    stages = ", ".join(f"{k} {v:.1f}" for k, v in res.timings.items())
    return [
        {"name": "records", "value": len([r for r in res.records if r.kind in ("good", "bad")]), "unit": "records",
         "goal": "22625 at paper scale", "meets_goal": None,
         "detail": f"{len(res.records)} incl. {len(res.by_kind('swap'))} persona swaps"},
        {"name": "build_wall_s", "value": round(wall, 1), "unit": "s", "goal": "<= 60", "meets_goal": wall <= 60,
         "detail": f"stages (s): {stages}; writing included"},
        {"name": "peak_rss_mb", "value": round(rss, 1), "unit": "MB", "goal": "<= 2048", "meets_goal": rss <= 2048},
    ]  # fmt: skip


BENCHES = {
    "throughput_c1": lambda: bench_throughput(1),
    "throughput_c8": lambda: bench_throughput(8),
    "throughput_c64": lambda: bench_throughput(64),
    "cached": bench_cached,
    "llamacpp": bench_llamacpp,
    "paceshop_build": bench_paceshop_build,
    "pace_metrics": lambda: __import__("shopbench.metrics.bench", fromlist=["x"]).bench_pace_metrics(),
    "agreement": lambda: __import__("shopbench.stats.bench", fromlist=["x"]).bench_agreement(),
    "shop": lambda: __import__("shopbench.shopsim.bench", fromlist=["x"]).bench_shop(),
    "padme_synthesis": lambda: __import__("shopbench.padme.bench", fromlist=["x"]).bench_synthesis(),
    "padme_meta_eval": lambda: __import__("shopbench.padme.bench", fromlist=["x"]).bench_meta_eval(),
    "reliability": lambda: __import__("shopbench.benchmarks.reliability", fromlist=["x"]).bench_reliability(),
}
FILES = {  # benchmark file -> the benchmarks it holds
    "gateway": ["throughput_c1", "throughput_c8", "throughput_c64", "cached", "llamacpp"],
    "paceshop_build": ["paceshop_build"],
    "pace_metrics": ["pace_metrics"],
    "agreement": ["agreement"],
    "shop": ["shop"],
    "padme": ["padme_synthesis", "padme_meta_eval"],
    "reliability": ["reliability"],
}


def machine() -> dict:
    from importlib.metadata import version


    return {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(), "litellm": version("litellm")}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shopbench.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--one", choices=sorted(BENCHES), help=argparse.SUPPRESS)
    ap.add_argument("--only", nargs="*", choices=sorted(BENCHES), help="run only these benchmarks")
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(BENCHES[a.one]()))
        return 0
    wanted = a.only or list(BENCHES)
    for file, names in FILES.items():
        names = [n for n in names if n in wanted]
        if not names:
            continue
        results = []
        for name in names:
            print(f"bench {name} ...", flush=True)
            p = subprocess.run([sys.executable, "-m", "shopbench.bench", "--one", name], capture_output=True,
                               text=True)  # fmt: skip
            if p.returncode != 0:
                results.append({"name": name, "value": None, "unit": None, "goal": None, "meets_goal": False,
                                "detail": "failed: " + p.stderr.strip()[-500:]})  # fmt: skip
                print(p.stderr[-2000:], file=sys.stderr)
                continue
            for r in json.loads(p.stdout.strip().splitlines()[-1]):
                results.append(r)
                detail = r.get("detail", "")
                detail = detail if isinstance(detail, str) else "(raw results in the file)"
                print(f"  {r['name']}: {r['value']} {r['unit'] or ''} (goal {r['goal']}) {detail}")
        out = Path(a.out) if (a.out and len(FILES) == 1) else outputs_root() / "bench" / f"{file}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        doc = {"benchmark": file, "machine": machine(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
               "results": results}  # fmt: skip
        out.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
