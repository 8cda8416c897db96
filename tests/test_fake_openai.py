"""shopbench.testing.fake_openai against real clients (openai SDK, litellm, httpx, a subprocess CLI)."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import httpx
import jsonschema
import openai
import pytest

from shopbench.testing.fake_openai import (
    MALFORMED_CONTENT,
    FakeOpenAIServer,
    example_from_schema,
    parse_directives,
)

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["GOOD", "BAD"]},
        "score": {"type": "number", "minimum": 1, "maximum": 5},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "rank": {"type": "integer", "minimum": 1, "maximum": 10},
        "ok": {"type": "boolean"},
        "reasons": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        "note": {"type": "string"},
    },
    "required": ["verdict", "score", "confidence", "rank", "ok", "reasons", "note"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def fake_srv():
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def fake(fake_srv):
    fake_srv.reset()
    fake_srv.latency_s = 0.0
    fake_srv.script = None
    return fake_srv


def chat(srv, content, *, system=None, max_retries=0, timeout=10.0, **kw):
    """One chat completion through AsyncOpenAI; returns the response (or raises the SDK's error)."""

    async def go():
        client = openai.AsyncOpenAI(
            base_url=srv.api_base, api_key="sk-test", max_retries=max_retries, timeout=timeout
        )
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": content}
        ]
        async with client:
            return await client.chat.completions.create(
                model=kw.pop("model", "gpt-fake"), messages=messages, **kw
            )

    return asyncio.run(go())


# ---- openai client ----------------------------------------------------------------------------------------


def test_normal_call_echoes_and_counts_words(fake):
    r1 = chat(fake, "hello  there world", system="You are a judge.", model="my-model")
    r2 = chat(fake, "hello  there world", system="You are a judge.", model="my-model")
    assert r1.choices[0].message.content == "echo: hello  there world"
    assert r1.choices[0].finish_reason == "stop"
    assert r1.model == "my-model"
    assert r1.id != r2.id
    assert (r1.usage.prompt_tokens, r1.usage.completion_tokens, r1.usage.total_tokens) == (7, 4, 11)
    assert fake.total_requests == 2 and fake.count("ok") == 2
    body = fake.bodies[-1]
    assert body["model"] == "my-model" and body["messages"][-1]["content"] == "hello  there world"
    assert fake.requests[-1].headers["authorization"] == "Bearer sk-test"
    assert fake.chunked_requests == 0  # the SDK sends Content-Length bodies


def test_json_schema_reply_satisfies_schema(fake):
    rf = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": VERDICT_SCHEMA, "strict": True}}
    r = chat(fake, "grade this answer", response_format=rf)
    doc = json.loads(r.choices[0].message.content)
    jsonschema.validate(doc, VERDICT_SCHEMA)
    assert doc == {
        "verdict": "GOOD",
        "score": 1,
        "confidence": 0.5,
        "rank": 1,
        "ok": True,
        "reasons": ["ok", "ok"],
        "note": "ok",
    }


def test_429_then_success(fake):
    text = "busy [[fake:status=429,times=2]]"
    for _ in range(2):
        with pytest.raises(openai.RateLimitError) as info:
            chat(fake, text)
        assert info.value.status_code == 429
        assert info.value.response.headers["retry-after"] == "0"
        assert info.value.body["code"] == "rate_limit_exceeded"
    assert chat(fake, text).choices[0].message.content == "echo: " + text
    assert fake.counts == {"status_429": 2, "ok": 1} and fake.total_requests == 3


def test_times_counts_per_distinct_message(fake):
    with pytest.raises(openai.RateLimitError):
        chat(fake, "a [[fake:status=429,times=1]]")
    with pytest.raises(openai.RateLimitError):
        chat(fake, "b [[fake:status=429,times=1]]")
    chat(fake, "a [[fake:status=429,times=1]]")
    chat(fake, "b [[fake:status=429,times=1]]")
    assert fake.counts == {"status_429": 2, "ok": 2}


def test_openai_sdk_retries_429(fake):
    # default SDK retries: the 429s are retried transparently (retry_after>0 keeps the backoff short)
    r = chat(fake, "retry me [[fake:status=429,times=2,retry_after=0.01]]", max_retries=2)
    assert r.choices[0].message.content.startswith("echo: retry me")
    assert fake.counts == {"status_429": 2, "ok": 1}


def test_500_and_503(fake):
    with pytest.raises(openai.InternalServerError) as info:
        chat(fake, "down [[fake:status=500]]")
    assert info.value.status_code == 500 and info.value.body["type"] == "server_error"
    with pytest.raises(openai.InternalServerError) as info:
        chat(fake, "down [[fake:status=503]]")
    assert info.value.status_code == 503
    assert fake.counts == {"status_500": 1, "status_503": 1}


def test_truncated_malformed_and_content(fake):
    r = chat(fake, "one two three four five six [[fake:truncated]]")
    assert r.choices[0].finish_reason == "length"
    full = "echo: one two three four five six [[fake:truncated]]"
    assert full.startswith(r.choices[0].message.content) and len(r.choices[0].message.content) < len(full)

    r = chat(fake, "judge [[fake:malformed]]")
    assert r.choices[0].message.content == MALFORMED_CONTENT
    with pytest.raises(json.JSONDecodeError):
        json.loads(r.choices[0].message.content)

    r = chat(fake, 'x [[fake:content={"answer": "yes", "n": 1}]]')
    assert json.loads(r.choices[0].message.content) == {"answer": "yes", "n": 1}
    r = chat(fake, "x [[fake:content=a%2Cb%5D%5D c]]")
    assert r.choices[0].message.content == "a,b]] c"
    assert fake.counts == {"truncated": 1, "malformed": 1, "content": 2}


def test_malformed_once_then_content(fake):
    text = "j [[fake:malformed,times=1]] [[fake:content=%7B%22ok%22%3A%20true%7D]]"
    assert chat(fake, text).choices[0].message.content == MALFORMED_CONTENT
    assert json.loads(chat(fake, text).choices[0].message.content) == {"ok": True}


def test_timeout_disconnect_latency(fake):
    t0 = time.perf_counter()
    with pytest.raises(openai.APITimeoutError):
        chat(fake, "slow [[fake:timeout]]", timeout=0.3)
    with pytest.raises(openai.APIConnectionError):
        chat(fake, "drop [[fake:disconnect]]")
    r = chat(fake, "late [[fake:latency=0.2]]")
    assert r.choices[0].message.content.startswith("echo: late")
    assert time.perf_counter() - t0 >= 0.5  # the timeout and the latency were served (a lower bound only)
    assert fake.counts == {"timeout": 1, "disconnect": 1, "ok": 1}


def test_unknown_directive_is_400(fake):
    with pytest.raises(openai.BadRequestError, match="unknown fake directive key 'statsu'"):
        chat(fake, "oops [[fake:statsu=500]]")


def test_script_and_models_and_stream(fake):
    fake.script = lambda body: {"content": "scripted"} if body["model"] == "scripted" else None
    assert chat(fake, "hi", model="scripted").choices[0].message.content == "scripted"
    assert (
        chat(fake, "hi [[fake:content=directive]]", model="scripted").choices[0].message.content
        == "directive"
    )
    fake.script = None

    async def go():
        async with openai.AsyncOpenAI(base_url=fake.api_base, api_key="sk-test", max_retries=0) as client:
            models = await client.models.list()
            stream = await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "a b c"}],
                stream=True,
                stream_options={"include_usage": True},
            )
            text, usage, finish = "", None, None
            async for chunk in stream:
                if chunk.choices:
                    text += chunk.choices[0].delta.content or ""
                    finish = chunk.choices[0].finish_reason or finish
                usage = chunk.usage or usage
            return [m.id for m in models.data], text, usage, finish

    ids, text, usage, finish = asyncio.run(go())
    assert ids == ["fake"] and text == "echo: a b c" and finish == "stop" and usage.completion_tokens == 4


def test_chunked_request_body(fake):
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "chunky body"}]}).encode()

    def parts():
        for i in range(0, len(body), 7):
            yield body[i : i + 7]

    with httpx.Client() as client:
        r = client.post(fake.api_base + "/chat/completions", content=parts())
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "echo: chunky body"
    assert fake.chunked_requests == 1 and fake.requests[-1].chunked


def test_64_concurrent_requests_with_latency():
    with FakeOpenAIServer(latency_s=0.1) as srv:

        async def go():
            async with openai.AsyncOpenAI(base_url=srv.api_base, api_key="sk-test", max_retries=0) as client:
                t0 = time.perf_counter()
                results = await asyncio.gather(
                    *[
                        client.chat.completions.create(
                            model="m", messages=[{"role": "user", "content": f"q{i}"}]
                        )
                        for i in range(64)
                    ]
                )
                return time.perf_counter() - t0, results

        elapsed, results = asyncio.run(go())
        assert [r.choices[0].message.content for r in results] == [f"echo: q{i}" for i in range(64)]
        assert elapsed >= 0.1  # the latency was served; concurrency is read from the server, not the clock
        assert srv.total_requests == 64 and srv.peak_connections >= 32


# ---- litellm ----------------------------------------------------------------------------------------------


def test_litellm_acompletion(fake):
    import litellm

    async def go():
        return await litellm.acompletion(
            model="openai/fake",
            api_base=fake.api_base,
            api_key="sk-test",
            messages=[{"role": "user", "content": "hi from litellm"}],
        )

    r = asyncio.run(go())
    assert r.choices[0].message.content == "echo: hi from litellm"
    assert r.choices[0].finish_reason == "stop"
    assert r.usage.prompt_tokens == 3 and r.usage.completion_tokens == 4
    assert fake.total_requests == 1 and fake.bodies[0]["model"] == "fake"


# ---- pieces -----------------------------------------------------------------------------------------------


def test_parse_directives():
    assert parse_directives("x [[fake:status=429,times=2]] y") == {"status": 429, "times": 2}
    assert parse_directives("[[fake:timeout]][[fake:latency=0.5,content=a,b]]") == {
        "timeout": True,
        "latency": 0.5,
        "content": "a,b",
    }
    assert parse_directives("no directive") == {}


def test_example_from_schema_refs_and_unions():
    schema = {
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "price": {"type": "number", "exclusiveMinimum": 0}},
            }
        },
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "integer", "maximum": -3}]},
            "kind": {"const": "x"},
        },
    }
    doc = example_from_schema(schema)
    jsonschema.validate(doc, schema)
    assert doc == {"items": [{"sku": "ok", "price": 0.5}], "maybe": -3, "kind": "x"}


def test_cli_subprocess():
    proc = subprocess.Popen(
        [sys.executable, "-m", "shopbench.testing.fake_openai", "--port", "0", "--latency", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        api_base = proc.stdout.readline().strip()
        assert api_base.startswith("http://127.0.0.1:") and api_base.endswith("/v1")
        req = urllib.request.Request(
            api_base + "/chat/completions",
            method="POST",
            data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "cli"}]}).encode(),
            headers={"content-type": "application/json"},
        )
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert json.load(resp)["choices"][0]["message"]["content"] == "echo: cli"
        assert time.perf_counter() - t0 >= 0.1
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "served 1 requests" in err
