"""The gateway's lean paths (issue 14): OpenAI-compatible endpoints without litellm, local backends
called directly, call-log rows written in groups and rebuilt after a kill, fleets of servers."""

import json
import threading
import time

import pytest

from shopbench.llm import Backbone, Call, parse_backbones, register_local
from shopbench.testing.fake_openai import FakeOpenAIServer


def fake_call(base, item, text, **kw):
    return Call(item, "openai/fake", [{"role": "user", "content": text}], api_base=base, **kw)


def _no_litellm(monkeypatch):
    import litellm

    async def boom(*a, **k):
        raise AssertionError("litellm.acompletion called")

    monkeypatch.setattr(litellm, "acompletion", boom)


def test_openai_compatible_endpoints_skip_litellm(server, gateway, monkeypatch):
    _no_litellm(monkeypatch)
    gw = gateway()
    c = fake_call(server.api_base, "a", "hello")
    assert gw.transport_for(c) == "openai-compat"
    assert gw.transport_for(Call("v", "hosted_vllm/m", [], api_base=server.api_base)) == "openai-compat"
    assert gw.transport_for(Call("p", "anthropic/claude-sonnet-4-5", [])) == "litellm"
    assert gw.transport_for(Call("o", "openai/gpt-4o-mini", [])) == "litellm"  # OpenAI's own API
    assert gw.transport_for(Call("l", "local/echo", [])) == "local"
    (row,) = gw.run([c], "lean")
    assert row["status"] == "ok" and row["raw_output"] == "echo: hello" and row["prompt_tokens"] == 1
    body = server.bodies[-1]
    assert body["model"] == "fake" and body["messages"] == [{"role": "user", "content": "hello"}]
    assert server.requests[-1].headers.get("authorization") == "Bearer sk-no-key-required"


def test_request_fields_and_extra_params_reach_the_server(server, gateway):
    gw = gateway()
    schema = {"type": "object", "properties": {"v": {"enum": ["GOOD", "BAD"]}}, "required": ["v"]}
    tools = [
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    ]
    (row,) = gw.run([fake_call(server.api_base, "a", "x", schema=schema, tools=tools,
                               params={"temperature": 0, "max_tokens": 9, "seed": 3, "top_k": 5})], "fields")  # fmt: skip
    body = server.bodies[-1]
    assert body["temperature"] == 0 and body["max_tokens"] == 9 and body["seed"] == 3
    assert body["top_k"] == 5  # a non-OpenAI setting goes in the body, as litellm's extra_body does
    assert body["response_format"]["type"] == "json_schema" and body["tools"] == tools
    assert row["status"] == "ok" and row["parsed"] == {"v": "GOOD"}


def test_forced_litellm_transport_gives_the_same_rows(server, gateway, monkeypatch):
    calls = [fake_call(server.api_base, f"i{i}", f"same {i}") for i in range(3)]
    lean = gateway().run(calls, "lean")
    monkeypatch.setenv("SHOPBENCH_GATEWAY_TRANSPORT", "litellm")
    gw = gateway()
    gw.cache.clear()
    via_litellm = gw.run(calls, "litellm")
    keys = ["item_id", "key", "status", "raw_output", "parsed", "finish_reason", "prompt_tokens",
            "completion_tokens", "cost_usd", "attempts"]  # fmt: skip
    assert [{k: r[k] for k in keys} for r in lean] == [{k: r[k] for k in keys} for r in via_litellm]


def test_retry_after_is_obeyed(server, gateway):
    gw = gateway(max_retries=2, backoff_s=0.001)
    t = time.perf_counter()
    (row,) = gw.run([fake_call(server.api_base, "r", "x [[fake:status=503,retry_after=0.3,times=1]]")], "ra")
    assert row["status"] == "ok" and row["attempts"] == 2 and time.perf_counter() - t >= 0.3


def test_local_backends_skip_litellm_and_keep_the_contract(gateway, monkeypatch):
    _no_litellm(monkeypatch)
    register_local(
        "test-json", lambda m, p: json.dumps({"v": p["response_format"]["type"], "s": p["seed"]}), "t"
    )
    register_local("test-fail", lambda m, p: 1 / 0, "raises")
    gw = gateway(max_retries=3)
    schema = {"type": "object", "properties": {"v": {"type": "string"}, "s": {"type": "integer"}}}
    calls = [Call(f"l{i}", "local/test-json", [{"role": "user", "content": f"q {i}"}], schema=schema,
                  params={"seed": i}) for i in range(20)]  # fmt: skip
    calls.append(Call("bad", "local/test-fail", [{"role": "user", "content": "x"}]))
    rows = gw.run(calls, "local")
    assert [r["parsed"] for r in rows[:20]] == [{"v": "json_schema", "s": i} for i in range(20)]
    assert rows[0]["prompt_tokens"] == 2 and rows[0]["model_latency_s"] is not None
    bad = rows[-1]
    assert bad["status"] == "error" and bad["attempts"] == 1 and "ZeroDivisionError" in bad["error"]
    assert all(r["cache_hit"] for r in gw.run(calls[:20], "again"))


def test_redaction_set_is_computed_once_per_run(server, gateway, monkeypatch):
    from shopbench import secrets

    n = {"calls": 0}
    real = secrets.secret_values

    def counting(*a, **k):
        n["calls"] += 1
        return real(*a, **k)

    monkeypatch.setattr(secrets, "secret_values", counting)
    gateway().run([fake_call(server.api_base, f"i{i}", f"q{i}") for i in range(30)], "once")
    assert n["calls"] == 1


def test_log_rows_lost_to_a_kill_are_rebuilt_from_the_cache(server, gateway):
    """kill -9 between a group of log writes: the answers are in the cache; the resumed run writes the
    rows they would have had (fresh calls, not cache hits) and calls nothing again."""
    gw = gateway()
    calls = [fake_call(server.api_base, f"i{i}", f"q{i}") for i in range(10)]
    first = gw.run(calls, "kill")
    path = gw.log_path("kill")
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:4]))  # the last group never reached the disk
    requests = server.total_requests
    rows = gateway().run(calls, "kill")
    assert server.total_requests == requests
    log = gw.log("kill")
    assert sorted(log.item_id) == sorted(c.item_id for c in calls)  # none lost, none twice
    assert not log.cache_hit.any() and (log.attempts == 1).all()
    strip = ("ts", "latency_s")
    assert [{k: v for k, v in r.items() if k not in strip} for r in rows] == [
        {k: v for k, v in r.items() if k not in strip} for r in first
    ]
    # another run reading the same answers gets cache hits, as before
    assert all(r["cache_hit"] for r in gateway().run(calls, "other"))


def test_a_new_log_under_the_same_run_id_reads_earlier_answers_as_cache_hits(server, gateway):
    """The pipeline deletes a notebook's call logs before executing it again: that execution's answers
    from the cache are hits (cost 0, nothing spent against the cap), not the rebuilt rows of a killed run."""
    gw = gateway()
    calls = [fake_call(server.api_base, f"i{i}", f"q{i}") for i in range(6)]
    first = gw.run(calls, "nb")
    assert not any(r["cache_hit"] for r in first)
    gw.log_path("nb").unlink()
    again = gateway()
    requests = server.total_requests
    rows = again.run(calls, "nb")
    assert server.total_requests == requests
    assert all(r["cache_hit"] and r["cost_usd"] == 0 for r in rows)
    assert [r["model_latency_s"] for r in rows] == [r["model_latency_s"] for r in first]
    assert again.spent_usd == 0


def test_log_is_written_in_groups(server, gateway, monkeypatch):
    from shopbench.llm import calllog

    writes = []
    real = calllog.CallLog.append

    def counting(self, rows):
        rows = list(rows)
        writes.append(len(rows))
        return real(self, rows)

    monkeypatch.setattr(calllog.CallLog, "append", counting)
    gateway(concurrency={"openai": 16}).run(
        [fake_call(server.api_base, f"i{i}", f"q{i}") for i in range(100)], "g"
    )
    assert sum(writes) == 100 and len([w for w in writes if w]) < 20


# ---- fleets ----------------------------------------------------------------------------------------------


def test_api_base_list_is_a_fleet():
    (b,) = parse_backbones(
        [{"name": "f", "model": "hosted_vllm/m", "api_base": ["http://a/v1", "http://b/v1"]}]
    )
    assert b.api_base == "http://a/v1" and b.fleet == ["http://a/v1", "http://b/v1"]
    assert b.to_dict()["api_base"] == ["http://a/v1", "http://b/v1"]
    with pytest.raises(ValueError, match="replicas"):
        parse_backbones([{"model": "hosted_vllm/m", "api_base": "http://a/v1", "replicas": 2}])


def test_profile_accepts_a_fleet():
    from shopbench.profiles.backbones import BackboneEntry

    e = BackboneEntry(model="hosted_vllm/m", api_base=["http://a/v1", "http://b/v1"], concurrency=4)
    assert e.api_base == ["http://a/v1", "http://b/v1"]
    assert BackboneEntry(model="openai/s", server="llamacpp", replicas=2).replicas == 2


def test_fleet_balances_and_fails_over_when_a_server_dies(gateway):
    """Two servers for one model, one stopped mid-sweep: every row once, all answered, none lost."""
    a, b = FakeOpenAIServer(latency_s=0.02).start(), FakeOpenAIServer(latency_s=0.02).start()
    try:
        bb = Backbone(name="fleet", model="openai/fake", api_base=a.api_base, fleet=[a.api_base, b.api_base],
                      concurrency=4)  # fmt: skip
        gw = gateway(backbones=[bb], backoff_s=0.01, max_retries=4)
        calls = [gw.call("fleet", f"i{i:03d}", [{"role": "user", "content": f"q{i}"}]) for i in range(120)]
        assert calls[0].cache_base == "fleet:openai/fake" and calls[0].fleet == (a.api_base, b.api_base)

        def kill_b():
            while b.total_requests < 15:
                time.sleep(0.005)
            b.stop()

        killer = threading.Thread(target=kill_b)
        killer.start()
        rows = gw.run(calls, "fleet")
        killer.join()
        assert [r["item_id"] for r in rows] == [c.item_id for c in calls]
        assert all(r["status"] == "ok" for r in rows)
        log = gw.log("fleet")
        assert sorted(log.item_id) == [c.item_id for c in calls]  # none lost, none twice
        fleet = gw.fleets[(a.api_base, b.api_base)]
        assert fleet.served[b.api_base] >= 10 and fleet.served[a.api_base] > fleet.served[b.api_base]
        assert a.peak_connections <= 4 + 1
        assert sum(fleet.inflight.values()) == 0
    finally:
        a.stop()
        b.stop()


def test_fleet_with_a_dead_member_from_the_start(gateway):
    a = FakeOpenAIServer().start()
    dead = FakeOpenAIServer().start()
    dead_base = dead.api_base
    dead.stop()
    try:
        bb = Backbone(name="f", model="hosted_vllm/fake", api_base=dead_base, fleet=[dead_base, a.api_base])
        gw = gateway(backbones=[bb])
        rows = gw.run([gw.call("f", f"i{i}", [{"role": "user", "content": f"q{i}"}]) for i in range(20)], "f")
        assert all(r["status"] == "ok" for r in rows) and max(r["attempts"] for r in rows) <= 2
    finally:
        a.stop()
