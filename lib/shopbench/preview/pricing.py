"""Dollars and hours of the preview's lines (issue 14 §2).

Hours: an anytime sweep (``llm_budget_min``, ``llm_evaluator_budget_min`` + ``llm_recorded_budget_min``)
is capped at its budget; its calls and tokens stay the plan's (the budget stops it earlier). API
models at ``1 s + output tokens / 60 tokens/s`` per call, divided by the provider's
concurrency; self-hosted servers (``hosted_vllm/``, ``ollama/`` …, and any backbone with ``api_base``: a
server the user runs) at ``1 s + output / 50`` per call
× concurrency per server; llama.cpp models from ``outputs/bench/local_llm.json`` when present (prompt
and generation tokens/s), else :data:`LOCAL_RATES` (measured 2026-12-01, docs/DESIGN.md); embedded
``local/`` backends at :data:`EMBEDDED_S_PER_CALL` each, one at a time (pure Python under the GIL).

Dollars: litellm's input and output price per token; cached input tokens (provider prompt caching,
:func:`cached_input_tokens`) at the cache-read price. Unpriced models are listed, never counted as
free.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .lines import Line

EMBEDDED_S_PER_CALL = 0.075
"""Issue 14: 16,320 deterministic judge calls at 0.065–0.084 s mean latency each in notebook 20."""
LOCAL_RATES: dict[str, tuple[float, float]] = {
    "smollm2-135m-instruct": (94.0, 12.0),
    "qwen2.5-coder-1.5b-instruct": (24.7, 3.2),
}
"""llama.cpp prompt and generation tokens/s on the 2 shared cores when ``local_llm.json`` is absent:
SmolLM2 as measured 2026-12-01 (docs/DESIGN.md, "Local LLM speed"); Qwen2.5-1.5B was not timed, so
SmolLM2's rates ÷ 3.8, the ratio of their idle per-call times (~65 s vs ~17 s)."""
LOCAL_FLOOR_RATIO = 1.22
"""Measured call time ÷ (prompt ÷ prompt rate + output ÷ generation rate) for SmolLM2 (DESIGN)."""
API_S_BASE, API_TOKENS_PER_S = 1.0, 60.0
SELF_HOSTED_S_BASE, SELF_HOSTED_TOKENS_PER_S = 1.0, 50.0
SELF_HOSTED = ("hosted_vllm", "ollama", "ollama_chat", "vllm", "openai_like")


# ---- pricing and timing ---------------------------------------------------------------------------
def model_kind(model: str) -> str:
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    if provider == "local":
        return "embedded"
    if provider == "llamacpp":
        return "llamacpp"
    if provider in SELF_HOSTED:
        return "self-hosted"
    return "api"


def backbone_kind(b, model: str) -> str:
    """A profile backbone's kind: a project-started server is ``llamacpp``; one with ``api_base`` (a
    server the user runs, whatever its provider prefix, e.g. ``openai/smol`` on a llama.cpp server) is
    ``self-hosted``: time, not a bill (issue 25 §2); else by the model's provider (:func:`model_kind`)."""
    if b is not None and b.server:
        return "llamacpp"
    if b is not None and (b.api_base or b.api_bases) and model_kind(model) != "embedded":
        return "self-hosted"
    return model_kind(model)


CACHE_MIN_TOKENS = 1024  # OpenAI caches prefixes of >= 1,024 tokens; Anthropic's minimum for Sonnet/Opus
OPENAI_CACHE_STEP = 128  # OpenAI caches in 128-token increments past the minimum
AUTOMATIC_CACHE_PROVIDERS = ("openai", "azure")  # prefix caching with no marking
MARKED_CACHE_PROVIDERS = ("anthropic",)  # the gateway marks the prefix with cache_control (llm/usage.py)


def cached_input_tokens(line: Line) -> int:
    """Input tokens the provider would serve from its prompt cache (issue 14 §4).

    The gateway marks the fixed prefix of Anthropic prompts with ``cache_control`` (llm/usage.py) and
    OpenAI caches prefixes of >= 1,024 tokens on its own (in 128-token steps). A sweep's first call
    writes the prefix; every later call reads it: ``(calls - 1) × prefix_tokens`` when the prefix
    reaches the providers' 1,024-token minimum, else 0. Other providers: 0 (no caching assumed).
    An estimate: the 5-minute cache lifetime is assumed kept alive by the sweep itself, and Anthropic's
    cache-write surcharge (1.25× input on the first call) is left out."""
    provider = line.model.split("/", 1)[0] if "/" in line.model else "openai"
    prefix = int(line.prefix_tokens)
    if line.calls < 2 or prefix < CACHE_MIN_TOKENS:
        return 0
    if provider in AUTOMATIC_CACHE_PROVIDERS:
        prefix = prefix // OPENAI_CACHE_STEP * OPENAI_CACHE_STEP
    elif provider not in MARKED_CACHE_PROVIDERS:
        return 0
    return min((line.calls - 1) * prefix, line.input_tokens)


def price(model: str, inp: int, cached: int, out: int) -> float | None:
    """Dollars from litellm's price map (cached input at the cache-read price); None when unpriced."""
    from ..llm._litellm import litellm

    if model_kind(model) in ("embedded", "llamacpp", "self-hosted"):
        return 0.0  # this machine, or your own servers: time, not a bill (see the hours)
    for name in (model, model.split("/", 1)[-1]):
        info = litellm.model_cost.get(name)
        if info and info.get("input_cost_per_token") is not None:
            i = float(info.get("input_cost_per_token") or 0.0)
            o = float(info.get("output_cost_per_token") or 0.0)
            c = info.get("cache_read_input_token_cost")
            c = i if c is None else float(c)
            return (inp - cached) * i + cached * c + out * o
    return None


def local_rates(bench_dir: Path) -> dict[str, tuple[float, float]]:
    """Prompt and generation tokens/s per llama.cpp model: measured (``local_llm.json``) or defaults."""
    rates = dict(LOCAL_RATES)
    f = bench_dir / "local_llm.json"
    if f.is_file():
        try:
            res = {
                r["name"]: r.get("value")
                for r in json.loads(f.read_text(encoding="utf-8")).get("results", [])
            }
        except (OSError, ValueError, AttributeError, KeyError, TypeError):
            return rates
        for key, model, prefix in (
            ("smollm2", "smollm2-135m-instruct", ""),
            ("qwen", "qwen2.5-coder-1.5b-instruct", "qwen_"),
        ):
            p, g = res.get(f"{prefix}prompt_tokens_per_s"), res.get(f"{key}_generation_tokens_per_s")
            if isinstance(p, int | float) and isinstance(g, int | float) and p > 0 and g > 0:
                rates[model] = (float(p), float(g))
    return rates


def call_hours(
    line: Line, concurrency: int, rates: dict[str, tuple[float, float]], model_name: str | None = None
) -> float:
    if line.calls == 0:
        return 0.0
    mean_in, mean_out = line.input_tokens / line.calls, line.output_tokens / line.calls
    if line.kind == "embedded":
        return line.calls * EMBEDDED_S_PER_CALL / 3600
    if line.kind == "llamacpp":
        p, g = rates.get(model_name or line.model.split("/", 1)[-1], LOCAL_RATES["smollm2-135m-instruct"])
        return line.calls * LOCAL_FLOOR_RATIO * (mean_in / p + mean_out / g) / 3600
    if line.kind == "self-hosted":
        per = SELF_HOSTED_S_BASE + mean_out / SELF_HOSTED_TOKENS_PER_S
    else:
        per = API_S_BASE + mean_out / API_TOKENS_PER_S
    return line.calls * per / max(1, concurrency) / 3600


def cap_at_budgets(lines: Sequence[Line]) -> None:
    """Cap the hours of each anytime sweep (the lines sharing a ``budget`` key) at its time budget,
    shared in proportion; round every line's hours."""
    groups: dict[str, tuple[float, list[Line]]] = {}
    for line in lines:
        if line.budget is not None:
            groups.setdefault(line.budget[0], (line.budget[1], []))[1].append(line)
    for minutes, group in groups.values():
        total = sum(x.hours for x in group)
        if total > minutes / 60:
            for x in group:
                x.hours *= minutes / 60 / total
                x.method += f"; hours capped by the sweep's {minutes:g}-min budget (plan: {total:.1f} h)"
    for line in lines:
        line.hours = round(line.hours, 3)
