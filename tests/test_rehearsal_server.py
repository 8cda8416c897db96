"""The local provider server against litellm's real provider code paths and the gateway (issue 14 §3-4).

Each path runs unchanged: only base URLs (environment, as a rehearsal sets them) and a dummy key.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from shopbench.rehearsal import provider_env
from shopbench.rehearsal.server import ProviderServer, sample_from_schema

SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["GOOD", "BAD"]},
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "reasons": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
    },
    "required": ["verdict", "score", "reasons"],
    "additionalProperties": False,
}
TOOLS = [{"type": "function", "function": {
    "name": "search", "description": "search the catalog",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "k": {"type": "integer", "minimum": 1, "maximum": 5}},
                   "required": ["query", "k"]}}}]  # fmt: skip
RULES = (
    "You are a strict judge. Rules:\n"
    + "\n".join(f"{i}. rule text about products and budgets" for i in range(60))
    + "\n"
)
MODELS = [
    "openai/gpt-4o-mini",
    "anthropic/claude-haiku-4-5",
    "fireworks_ai/accounts/fireworks/models/gpt-oss-20b",
    "hosted_vllm/Qwen/Qwen3-32B",
]


@pytest.fixture(scope="module")
def srv():
    with ProviderServer(seed=3, min_cache_tokens=128, batch_delay_s=0.05) as s:
        yield s


@pytest.fixture
def env(srv, monkeypatch):
    for k, v in provider_env(srv.url).items():
        monkeypatch.setenv(k, v)
    return srv


def test_sample_from_schema_satisfies_schema():
    import random

    for seed in range(50):
        jsonschema.validate(sample_from_schema(SCHEMA, random.Random(seed)), SCHEMA)


@pytest.mark.parametrize("model", MODELS)
def test_litellm_provider_paths_contract_and_usage(env, model):
    from shopbench.llm.providers import get_litellm

    litellm = get_litellm()
    rf = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True}}
    msgs = [{"role": "user", "content": RULES + "Record 1: a red shirt."}]
    r = litellm.completion(model=model, messages=msgs, response_format=rf, max_tokens=200)
    jsonschema.validate(json.loads(r.choices[0].message.content), SCHEMA)
    assert r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
    again = litellm.completion(model=model, messages=msgs, response_format=rf, max_tokens=200)
    assert (
        again.choices[0].message.content == r.choices[0].message.content
    )  # seeded: same request, same answer
    if not model.startswith("anthropic/"):  # automatic prefix caching: the repeat reads the prefix
        assert again.usage.prompt_tokens_details.cached_tokens > 0


@pytest.mark.parametrize(
    "model", ["openai/gpt-4o", "anthropic/claude-sonnet-4-5", "hosted_vllm/Qwen/Qwen3-32B"]
)
def test_tool_calls_then_text(env, model):
    from shopbench.llm.providers import get_litellm

    litellm = get_litellm()
    msgs: list[dict] = [{"role": "system", "content": "You shop."}, {"role": "user", "content": "find socks"}]
    kinds = []
    for _ in range(6):
        r = litellm.completion(model=model, messages=msgs, tools=TOOLS, max_tokens=200)
        m = r.choices[0].message
        if not m.tool_calls:
            kinds.append("text")
            break
        tc = m.tool_calls[0]
        args = json.loads(tc.function.arguments)
        assert tc.function.name == "search" and set(args) == {"query", "k"} and 1 <= args["k"] <= 5
        kinds.append("tool")
        msgs.append({"role": "assistant", "content": None, "tool_calls": [tc.model_dump()]})
        msgs.append({"role": "tool", "tool_call_id": tc.id, "content": "3 results"})
    assert kinds[-1] == "text", kinds  # the agent loop ends


def test_anthropic_cache_control_read_and_write(env, tmp_path):
    """The gateway marks the shared prefix of a sweep's prompts; the first call writes the cache, the
    rest read it; litellm bills both at the cached rates; the call log records both counts."""
    from shopbench.llm import Call, Gateway

    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False, backoff_s=0.01)
    model = "anthropic/claude-sonnet-4-5"
    calls = [Call(f"r{i}", model, [{"role": "user", "content": RULES + f"Record {i}: item {i}."}], params={"max_tokens": 64},
                  schema=SCHEMA) for i in range(4)]  # fmt: skip
    rows = gw.run(calls, "cc")
    assert all(r["status"] == "ok" for r in rows)
    writes = [r for r in rows if r["cache_write_tokens"]]
    later = [r for r in rows if r["cached_tokens"]]
    assert (
        len(writes) == 1 and not writes[0]["cached_tokens"]
    )  # the first request to arrive writes the prefix
    assert len(later) == 3 and all(r["cache_write_tokens"] == 0 for r in later)  # the others read it
    log = gw.log("cc")
    assert {"cached_tokens", "cache_write_tokens"} <= set(log.columns)
    # cached reads are billed below the full input rate
    plain = Gateway(cache_dir=tmp_path / "c2", log_dir=tmp_path / "l2", progress=False)
    import os

    os.environ["SHOPBENCH_NO_PROMPT_CACHE_CONTROL"] = "1"
    try:
        uncached = plain.run(
            [Call("r1", model, calls[1].messages, params={"max_tokens": 64}, schema=SCHEMA)], "plain"
        )
    finally:
        del os.environ["SHOPBENCH_NO_PROMPT_CACHE_CONTROL"]
    assert uncached[0]["cached_tokens"] in (0, None)
    assert later[0]["cost_usd"] < uncached[0]["cost_usd"]


def test_429_with_retry_after_and_5xx_are_retried(env, tmp_path):
    from shopbench.llm import Call, Gateway

    env.rate_429, env.rate_5xx = 0.3, 0.2
    try:
        gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False, backoff_s=0.01,
                     max_retries=10)  # fmt: skip
        calls = [Call(f"i{i}", m, [{"role": "user", "content": f"q{i}"}], params={"max_tokens": 32}, schema=SCHEMA)
                 for i in range(6) for m in MODELS]  # fmt: skip
        rows = gw.run(calls, "faults")
    finally:
        env.rate_429 = env.rate_5xx = 0.0
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows if r["error"]]
    assert sum(r["attempts"] for r in rows) > len(rows)  # some calls were retried


def test_cache_plan_groups_by_template():
    from shopbench.llm import Call
    from shopbench.llm.usage import plan, with_cache_control

    a = [
        Call(f"a{i}", "anthropic/claude-haiku-4-5", [{"role": "user", "content": RULES + f"Record {i}."}])
        for i in range(3)
    ]
    b = [Call(f"b{i}", "anthropic/claude-haiku-4-5", [{"role": "user", "content": "Other protocol.\n" + RULES + f"R {i}."}])
         for i in range(3)]  # fmt: skip
    o = [Call("o", "openai/gpt-4o", [{"role": "user", "content": RULES + "x"}])]
    p = plan(a + b + o)
    assert set(p) == {c.key for c in a + b} and p[a[0].key] == len(RULES) and p[b[0].key] == len(RULES) + 16
    sent = with_cache_control("anthropic", a[0].messages, p[a[0].key])
    assert sent[0]["content"][0] == {"type": "text", "text": RULES, "cache_control": {"type": "ephemeral"}}
    assert with_cache_control("openai", o[0].messages, 10) == list(o[0].messages)
    sys_msgs = [{"role": "system", "content": "policy"}, {"role": "user", "content": "hi"}]
    assert with_cache_control("anthropic", sys_msgs)[0]["content"][0]["cache_control"] == {
        "type": "ephemeral"
    }
