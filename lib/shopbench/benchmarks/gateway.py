"""Gateway benchmarks (``outputs/bench/gateway.json``).

- ``throughput_ratio_c{1,8,64}``: achieved calls/s ÷ ideal (concurrency / latency) through the gateway
  against the fake OpenAI server (its own process) with 100 ms latency; goal ≥ 0.9 at c1 and c8, and at
  c64 ≥ the plain openai SDK's ratio measured in the same run (aim ≥ 0.7).
- ``openai_sdk_ratio_c{1,8,64}``: the same sweep through ``openai.AsyncOpenAI`` (its default httpx
  transport, retries off) with an ``asyncio.Semaphore`` as the only machinery: no cache, log or contract.
  Gateway and SDK sweeps alternate round by round (order swapped each round) so load on the shared
  machine hits both alike; each value is the median over the rounds.
- ``litellm_transport_ratio_c{1,8,64}``: the gateway forced through litellm
  (``SHOPBENCH_GATEWAY_TRANSPORT=litellm``, the transport before issue 14), same rounds.
- ``local_calls_per_s``: uncached calls per second of a deterministic judge (``local/checks`` on the
  real PACEJudge prompts of a small PACEShop build) through the gateway: cache, log and contract
  parsing included; goal ≥ 1,000.
- ``cached_calls_per_s``: a rerun of 10,000 calls served from the cache; goal ≥ 2,000.
- ``llamacpp_overhead_pct``: gateway vs a raw HTTP call to ``python -m llama_cpp.server`` (SmolLM2),
  same prompts, alternating order; goal ≤ 5 %.
- ``peak_rss_mb_*``: peak resident memory of each benchmark process.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time

import httpx

from ..llm import Call, Gateway
from ..llm.llamacpp.registry import model_path
from ..llm.llamacpp.runtime import llama_cpp_available
from ..llm.llamacpp.server import serve
from .common import fake_server_process, rss_mb

LATENCY = 0.1


def _gateway(tmp: str, concurrency: dict, **kw):

    return Gateway(
        cache_dir=f"{tmp}/cache", log_dir=f"{tmp}/calls", concurrency=concurrency, progress=False, **kw
    )


def _sdk_sweep(api_base: str, conc: int, texts: list[str]) -> float:
    """Wall time of ``texts`` sent through the plain openai SDK, at most ``conc`` at once."""
    import openai

    async def go() -> float:
        sdk = openai.AsyncOpenAI(base_url=api_base, api_key="sk-no-key-required", max_retries=0, timeout=120)
        sem = asyncio.Semaphore(conc)

        async def one(text: str) -> None:
            async with sem:
                r = await sdk.chat.completions.create(
                    model="fake", messages=[{"role": "user", "content": text}]
                )
                assert r.choices[0].message.content

        await asyncio.gather(*(one(t) for t in texts[: min(conc, 16)]))  # warm: connections, imports
        t = time.perf_counter()
        await asyncio.gather(*(one(t) for t in texts))
        wall = time.perf_counter() - t
        await sdk.close()
        return wall

    return asyncio.run(go())


def bench_throughput(conc: int, rounds: int = 3, litellm: bool = True) -> list[dict]:
    """``litellm=False`` leaves out the litellm-transport sweeps (the slowest: for a quick check)."""
    n = max(20, conc * 10)
    ideal = conc / LATENCY
    walls: dict[str, list[float]] = {"gateway": [], "sdk": [], "litellm": []}
    with fake_server_process(LATENCY) as api_base, tempfile.TemporaryDirectory() as tmp:
        gws = {"gateway": _gateway(tmp + "/a", {"openai": conc}),
               "litellm": _gateway(tmp + "/b", {"openai": conc}, transport="litellm")}  # fmt: skip
        for name, gw in gws.items():  # warm: connection pool and imports
            gw.run([Call(f"w{i}", "openai/fake", [{"role": "user", "content": f"warm {name} {i}"}],
                         api_base=api_base) for i in range(min(conc, 16))], "warm")  # fmt: skip
        for r in range(rounds):
            order = ["gateway", "sdk", "litellm"] if r % 2 == 0 else ["litellm", "sdk", "gateway"]
            order = [k for k in order if litellm or k != "litellm"]
            for name in order:
                texts = [f"{name} round {r} call {i}" for i in range(n)]  # distinct: no cache hits
                if name == "sdk":
                    walls[name].append(_sdk_sweep(api_base, conc, texts))
                    continue
                calls = [Call(f"c{i}", "openai/fake", [{"role": "user", "content": t}], api_base=api_base)
                         for i, t in enumerate(texts)]  # fmt: skip
                t0 = time.perf_counter()
                rows = gws[name].run(calls, f"bench{r}")
                walls[name].append(time.perf_counter() - t0)
                assert all(row["status"] == "ok" for row in rows)
    ratio = {k: (n / statistics.median(v)) / ideal for k, v in walls.items() if v}

    def detail(k: str) -> str:
        return (f"{n} calls x {rounds} rounds, median {statistics.median(walls[k]):.2f} s = "
                f"{n / statistics.median(walls[k]):.1f}/s, ideal {ideal:.0f}/s; rounds "
                + ", ".join(f"{n / w / ideal:.2f}" for w in walls[k]))  # fmt: skip

    if conc >= 64:
        goal, meets = f">= openai SDK ({ratio['sdk']:.2f}); aim >= 0.7", ratio["gateway"] >= ratio["sdk"]
    else:
        goal, meets = ">= 0.9", ratio["gateway"] >= 0.9
    return [
        {"name": f"throughput_ratio_c{conc}", "value": round(ratio["gateway"], 3), "unit": "achieved/ideal",
         "goal": goal, "meets_goal": meets, "detail": detail("gateway")},
        {"name": f"openai_sdk_ratio_c{conc}", "value": round(ratio["sdk"], 3), "unit": "achieved/ideal",
         "goal": None, "meets_goal": None, "detail": "plain openai.AsyncOpenAI (httpx): " + detail("sdk")},
        {"name": f"litellm_transport_ratio_c{conc}", "value": round(ratio["litellm"], 3) if litellm else None,
         "unit": "achieved/ideal", "goal": None, "meets_goal": None,
         "detail": "gateway with transport='litellm': " + detail("litellm") if litellm else "not run"},
        {"name": f"peak_rss_mb_throughput_c{conc}", "value": round(rss_mb(), 1), "unit": "MB", "goal": None,
         "meets_goal": None},
    ]  # fmt: skip


def bench_local(repeats: int = 6) -> list[dict]:
    """``local/checks`` (a deterministic PACEJudge baseline) over the real judge prompts of a small
    PACEShop build, uncached, through the gateway (its default concurrency)."""
    from ..judges.pace.sweep import build_calls
    from ..paceshop.build import BuildConfig, build

    cfg = BuildConfig(seed=3, n_products=400, n_candidate_queries=240, n_queries=30, n_personas=50, n_holdout=14,
                      test_goods=20, dev_goods=20, swap_slice=20, s0_per_label=8, calibration_good=8,
                      calibration_bad_per_family=2)  # fmt: skip
    records = build(cfg, progress=False).records
    with tempfile.TemporaryDirectory() as tmp:
        gw = _gateway(tmp, {})
        warm = build_calls(gw, ["pacejudge"], ["local/checks"], records[:20], repeats=1)
        gw.run(warm, "warm")
        calls = build_calls(gw, ["pacejudge"], ["local/checks"], records, repeats=repeats)
        calls = [c for c in calls if c.key not in {w.key for w in warm}]
        t = time.perf_counter()
        rows = gw.run(calls, "local")
        wall = time.perf_counter() - t
    n = len(rows)
    ok = sum(r["status"] == "ok" for r in rows)
    rate = n / wall
    return [
        {"name": "local_calls_per_s", "value": round(rate, 1), "unit": "calls/s", "goal": ">= 1000",
         "meets_goal": rate >= 1000, "detail": f"{n} uncached local/checks calls ({ok} parsed ok) on "
         f"{len(records)} PACEShop records x {repeats} repeats in {wall:.2f} s = {wall / n * 1000:.2f} ms/call"},
        {"name": "peak_rss_mb_local", "value": round(rss_mb(), 1), "unit": "MB", "goal": None, "meets_goal": None},
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
