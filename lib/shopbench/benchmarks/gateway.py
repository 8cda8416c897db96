"""Gateway benchmarks (``outputs/bench/gateway.json``).

- ``throughput_ratio_c{1,8,64}``: achieved calls/s ÷ ideal (concurrency / latency) against the
  local server with 100 ms latency; goal ≥ 0.9.
- ``cached_calls_per_s``: a rerun of 10,000 calls served from the cache; goal ≥ 2,000.
- ``llamacpp_overhead_pct``: gateway vs a raw HTTP call to ``python -m llama_cpp.server`` (SmolLM2),
  same prompts, alternating order; goal ≤ 5 %.
- ``peak_rss_mb_*``: peak resident memory of each benchmark process.
"""

from __future__ import annotations

import tempfile
import time

import httpx

from ..llm import Call, Gateway
from ..llm.llamacpp import llama_cpp_available, model_path, serve
from .common import fake_server_process, rss_mb

LATENCY = 0.1


def _gateway(tmp: str, concurrency: dict):

    return Gateway(cache_dir=f"{tmp}/cache", log_dir=f"{tmp}/calls", concurrency=concurrency, progress=False)


def bench_throughput(conc: int) -> list[dict]:

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
        {"name": f"peak_rss_mb_throughput_c{conc}", "value": round(rss_mb(), 1), "unit": "MB", "goal": None,
         "meets_goal": None},
    ]  # fmt: skip


def bench_cached(n: int = 10_000) -> list[dict]:

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
        {"name": "peak_rss_mb_cached", "value": round(rss_mb(), 1), "unit": "MB", "goal": None, "meets_goal": None},
    ]  # fmt: skip


def bench_llamacpp(n: int = 20) -> list[dict]:
    """Gateway vs raw HTTP to ``python -m llama_cpp.server`` (SmolLM2): the same prompt through both
    paths, alternating which goes first, one call per gateway run (so per-run setup is included)."""

    if not llama_cpp_available():
        return [{"name": "llamacpp_overhead_pct", "value": None, "unit": "%", "goal": "<= 5", "meets_goal": None,
                 "detail": "llama-cpp-python not installed: run `make local-llm`"}]  # fmt: skip
    model_path("smollm2-135m-instruct")
    params = {"temperature": 0, "max_tokens": 32, "seed": 1}
    raw_t, gw_t = [], []
    with serve("smollm2-135m-instruct", alias="smollm2") as srv, tempfile.TemporaryDirectory() as tmp:
        gw = _gateway(tmp, {"openai": 1})
        client = httpx.Client(timeout=120)
        prompts = [
            f"Name one product a shopper who likes hiking might buy. Variant {i}." for i in range(n + 2)
        ]

        def raw(p):
            t = time.perf_counter()
            r = client.post(
                f"{srv.api_base}/chat/completions",
                json={"model": "smollm2", "messages": [{"role": "user", "content": p}], **params},
            )
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
        {"name": "peak_rss_mb_llamacpp", "value": round(rss_mb(), 1), "unit": "MB", "goal": None, "meets_goal": None},
    ]  # fmt: skip
