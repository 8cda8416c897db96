"""The gateway against a real HTTP server speaking the OpenAI API (shopbench.testing.fake_openai)."""

import asyncio
import json
import threading
import time

import pytest

from shopbench.llm import BudgetExceeded, Call, MissingKeyError, UnknownModelError, register_local

SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["answer", "confidence"],
    "additionalProperties": False,
}


def fake_call(server, item, text, **kw):
    return Call(item, "openai/fake", [{"role": "user", "content": text}], api_base=server.api_base, **kw)


def test_round_trip_cache_and_log(server, gateway):
    gw = gateway()
    calls = [fake_call(server, f"i{i}", f"hello {i}") for i in range(5)]
    rows = gw.run(calls, "t")
    assert [r["item_id"] for r in rows] == [f"i{i}" for i in range(5)]
    assert all(r["status"] == "ok" and not r["cache_hit"] for r in rows)
    assert rows[0]["raw_output"] == "echo: hello 0"
    assert rows[0]["prompt_tokens"] == 2 and rows[0]["attempts"] == 1
    assert server.total_requests == 5
    again = gw.run(calls, "t2")
    assert all(r["cache_hit"] for r in again) and server.total_requests == 5
    assert [r["raw_output"] for r in again] == [r["raw_output"] for r in rows]
    log = gw.log("t2")
    assert len(log) == 5 and log.cache_hit.all()
    # same run id again: rows already logged are returned, nothing is appended or called
    gw.run(calls, "t")
    assert len(gw.log("t")) == 5 and server.total_requests == 5


def test_repeat_index_and_settings_are_part_of_the_key(server, gateway):
    gw = gateway()
    calls = [
        fake_call(server, "a", "x", repeat=0),
        fake_call(server, "a", "x", repeat=1),
        fake_call(server, "b", "x", params={"temperature": 0.7}),
    ]
    gw.run(calls, "k")
    assert server.total_requests == 3


def test_retries_on_429_then_succeeds(server, gateway):
    gw = gateway(max_retries=4)
    (row,) = gw.run([fake_call(server, "r", "busy [[fake:status=429,times=2]]")], "retry")
    assert row["status"] == "ok" and row["attempts"] == 3
    assert server.count("status_429") == 2


def test_server_errors_exhaust_retries_and_are_not_cached(server, gateway):
    gw = gateway(max_retries=2)
    call = fake_call(server, "e", "down [[fake:status=500]]")
    (row,) = gw.run([call], "err")
    assert row["status"] == "error" and row["attempts"] == 3 and "InternalServerError" in row["error"]
    assert gw.cache.get(call.key) is None
    (row2,) = gw.run([call], "err")  # errors are retried on the next run, never served from cache
    assert row2["attempts"] == 3 and server.total_requests == 6


def test_bad_request_is_not_retried(server, gateway):
    gw = gateway(max_retries=3)
    (row,) = gw.run([fake_call(server, "b", "bad [[fake:status=400]]")], "bad")
    assert row["status"] == "error" and row["attempts"] == 1


def test_timeout_is_retried_then_recorded(server, gateway):
    gw = gateway(max_retries=1, timeout_s=0.5)
    (row,) = gw.run([fake_call(server, "t", "slow [[fake:timeout]]")], "timeout")
    assert row["status"] == "error" and row["attempts"] == 2
    assert "Timeout" in row["error"] or "timed out" in row["error"].lower()


def test_connection_drop_is_retried(server, gateway):
    gw = gateway(max_retries=3)
    (row,) = gw.run([fake_call(server, "d", "flaky [[fake:disconnect,times=1]]")], "drop")
    assert row["status"] == "ok" and row["attempts"] == 2


@pytest.mark.parametrize(
    "text, reason",
    [
        ("[[fake:malformed]]", "invalid JSON"),
        ("[[fake:truncated]]", "truncated"),
        ('[[fake:content={"answer": "yes", "confidence": 100}]]', "contract violation at confidence"),
        ('[[fake:content={"answer": "yes", "confidence": "0.9"}]]', "contract violation at confidence"),
        ('[[fake:content={"answer": "yes"}]]', "'confidence' is a required property"),
    ],
)
def test_contract_failures_are_data_not_coerced(server, gateway, text, reason):
    gw = gateway()
    (row,) = gw.run([fake_call(server, "p", f"judge {text}", schema=SCHEMA)], "parse")
    assert row["status"] == "parse_error" and row["parsed"] is None
    assert reason in row["parse_error"]
    assert row["raw_output"]  # the raw output is kept next to the failure


def test_valid_structured_output_parses(server, gateway):
    gw = gateway()
    (row,) = gw.run([fake_call(server, "s", "judge", schema=SCHEMA)], "ok")
    assert row["status"] == "ok" and row["parsed"] == {"answer": "ok", "confidence": 0.5}
    body = server.bodies[-1]
    assert body["response_format"]["type"] == "json_schema"


def test_dry_run_counts_and_prices_without_calling(server, gateway):
    gw = gateway()
    calls = [
        Call(
            f"d{i}",
            "openai/gpt-4o-mini",
            [{"role": "user", "content": f"q{i} " + "word " * 400}],
            params={"max_tokens": 100},
            api_base=server.api_base,
        )
        for i in range(10)
    ]
    est = gw.run(calls, "dry", dry_run=True)
    assert est.calls == 10 and est.to_call == 10 and est.cached == 0 and est.cost_usd > 0
    assert server.total_requests == 0
    gw.run(calls[:4], "dry")
    est2 = gw.estimate(calls)
    assert est2.cached == 4 and est2.to_call == 6


def test_cost_cap_stops_cleanly_and_resumes(server, gateway, monkeypatch):
    monkeypatch.setenv(
        "OPENAI_API_KEY", "sk-" + "test-key-for-a-priced-endpoint-0000"
    )  # priced, not a keyless local server
    calls = [
        Call(
            f"c{i}",
            "openai/gpt-4o-mini",
            [{"role": "user", "content": f"question {i} " + "w " * 2000 + "[[fake:content=short]]"}],
            params={"max_tokens": 10},
            api_base=server.api_base,
        )
        for i in range(12)
    ]
    per_call = gateway().estimate(calls[:1]).cost_usd
    gw = gateway(max_cost_usd=per_call * 4.5, concurrency={"openai": 1})
    with pytest.raises(BudgetExceeded, match="raise gateway.max_cost_usd"):
        gw.run(calls, "budget")
    made = server.total_requests
    assert 1 <= made < 12
    assert len(gw.log("budget")) == made and 0 < gw.spent_usd <= per_call * 4.5
    gw2 = gateway(max_cost_usd=1.0)
    rows = gw2.run(calls, "budget")
    assert len(rows) == 12 and server.total_requests == 12  # nothing made twice
    assert len(gw2.log("budget")) == 12


def test_concurrency_bound_per_provider(gateway):
    state = {"now": 0, "max": 0}
    lock = threading.Lock()

    def slow(messages, params):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return "done"

    register_local("test-slow", slow, "test backend that records its concurrency")
    gw = gateway(concurrency={"local": 3})
    calls = [Call(f"s{i}", "local/test-slow", [{"role": "user", "content": str(i)}]) for i in range(12)]
    gw.run(calls, "conc")
    assert state["max"] == 3


def test_sync_run_inside_a_running_event_loop(server, gateway):
    gw = gateway()

    async def notebook_cell():  # a Jupyter kernel already runs a loop
        return gw.run([fake_call(server, "j", "from a kernel")], "jupyter")

    (row,) = asyncio.run(notebook_cell())
    assert row["status"] == "ok"


def test_same_request_under_two_items_is_called_once(server, gateway):
    gw = gateway()
    rows = gw.run([fake_call(server, "a", "same"), fake_call(server, "b", "same")], "dup")
    assert server.total_requests == 1 and sorted(r["cache_hit"] for r in rows) == [False, True]


def test_unknown_model_lists_backends(gateway):
    gw = gateway()
    with pytest.raises(UnknownModelError, match="local/echo"):
        gw.run([Call("u", "nosuchprovider/x", [{"role": "user", "content": "hi"}])], "u")
    with pytest.raises(UnknownModelError, match="Embedded backends"):
        gw.run([Call("u", "local/nope", [{"role": "user", "content": "hi"}])], "u")


def test_missing_key_names_the_variable(gateway, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    gw = gateway()
    with pytest.raises(MissingKeyError, match="ANTHROPIC_API_KEY"):
        gw.run([Call("k", "anthropic/claude-sonnet-4-5", [{"role": "user", "content": "hi"}])], "k")


def test_missing_key_does_not_matter_when_cached(server, gateway, monkeypatch):
    """A paper rebuild from a warm cache needs no key."""
    gw = gateway()
    call = fake_call(server, "c", "cached")
    gw.run([call], "warm")
    monkeypatch.setattr(
        "shopbench.llm.gateway.check_model", lambda *a, **k: (_ for _ in ()).throw(AssertionError)
    )
    (row,) = gw.run([call], "warm2")
    assert row["cache_hit"]


def test_duplicate_item_is_rejected(server, gateway):
    gw = gateway()
    with pytest.raises(ValueError, match="appears twice"):
        gw.run([fake_call(server, "a", "x"), fake_call(server, "a", "x")], "d")


def test_log_rows_have_the_documented_columns(server, gateway):
    from shopbench.llm.calllog import COLUMNS

    gw = gateway()
    gw.run([fake_call(server, "a", "x")], "cols")
    row = json.loads((gw.log_path("cols")).read_text().splitlines()[0])
    assert set(COLUMNS) <= set(row)


def _writer(directory, prefix, n):
    from shopbench.llm.cache import ResponseCache

    cache = ResponseCache(directory)
    for i in range(n):
        cache.put(f"{prefix}{i}", {"raw_output": f"{prefix}{i}"})


def test_cache_is_safe_under_concurrent_writer_processes(tmp_path):
    import multiprocessing as mp

    from shopbench.llm.cache import ResponseCache

    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(tmp_path, p, 300)) for p in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = ResponseCache(tmp_path)
    assert len(cache) == 600
    got = cache.get_many([f"{p}{i}" for p in "ab" for i in range(300)])
    assert all(v["raw_output"] == k for k, v in got.items()) and len(got) == 600


def test_project_started_server_is_keyed_by_model_not_port(server, gateway):
    from shopbench.llm import Backbone

    b = Backbone(name="srv", model="openai/fake", api_base=server.api_base, server="llamacpp", model_name="m")
    gw = gateway(backbones=[b])
    c1 = gw.call("srv", "a", [{"role": "user", "content": "x"}])
    b.api_base = server.api_base.replace("127.0.0.1", "localhost")  # the next run's server, another address
    c2 = gw.call("srv", "a", [{"role": "user", "content": "x"}])
    assert c1.api_base != c2.api_base and c1.key == c2.key


def test_local_backend_code_is_part_of_the_cache_key(monkeypatch):
    """Editing a deterministic judge must not serve its old cached answers."""
    from shopbench.llm import local

    call = Call("a", "local/echo", [{"role": "user", "content": "x"}])
    before = call.key
    monkeypatch.setattr(local, "code_version", lambda name: "edited")
    assert call.key != before
