"""A fleet of two provider-server processes for one ``hosted_vllm/`` model, one killed (SIGKILL) mid-sweep
(issue 14 §5): the sweep finishes on the other with no lost or repeated row, and a rerun is served
from the cache. Runs without llama.cpp (tests/test_gateway_fleet_llamacpp.py does the same with two
``llama_cpp.server`` processes)."""

from __future__ import annotations

import signal

import pytest

from shopbench.llm import Gateway, parse_backbones
from shopbench.rehearsal.fleet import FLEET_ENV, apply_fleet, fleet

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["GOOD", "BAD"]}},
          "required": ["verdict"], "additionalProperties": False}  # fmt: skip


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_fleet_server_killed_mid_sweep(tmp_path, monkeypatch, transport):
    monkeypatch.delenv("HOSTED_VLLM_API_KEY", raising=False)
    with fleet(2, kill_after=5, seed=3, latency_s=0.05) as run:
        assert run is not None and len(run.bases) == 2
        (b,) = parse_backbones(["hosted_vllm/Qwen/Qwen3-32B"])
        assert apply_fleet([b]) == [b.name] and b.fleet == run.bases  # as an api_base list would
        gw = Gateway(cache_dir=tmp_path / "c", log_dir=tmp_path / "l", backbones=[b], progress=False,
                     backoff_s=0.01, concurrency={"hosted_vllm": 4}, transport=transport)  # fmt: skip
        n = 40
        calls = [gw.call(b.name, f"q{i:02d}", [{"role": "user", "content": f"Is item {i} a good match?"}],
                         schema=SCHEMA, params={"max_tokens": 32}) for i in range(n)]  # fmt: skip
        rows = gw.run(calls, "fleet")
        victim = run.processes[1]
        assert victim.poll() == -signal.SIGKILL  # killed during the sweep (after 5 of its calls)
        assert run.states()[1]["state"] == "killed (SIGKILL)" and run.states()[0]["state"] == "up"
        assert [r["item_id"] for r in rows] == [c.item_id for c in calls]
        assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows if r["error"]]
        log = gw.log("fleet")
        assert sorted(log.item_id) == [c.item_id for c in calls]  # none lost, none twice
        if transport == "auto":  # the gateway's own fleet: both servers answered, the survivor the rest
            f = gw.fleets[tuple(b.fleet)]
            assert f.served[run.bases[1]] >= 1 and f.served[run.bases[0]] >= n // 2
        again = gw.run(calls, "fleet-again")  # a rerun asks nothing of the fleet
        assert all(r["cache_hit"] for r in again)
    import os

    assert FLEET_ENV not in os.environ and all(p.poll() is not None for p in run.processes)


def test_no_fleet_below_two_servers():
    with fleet(1, kill_after=3) as run:
        assert run is None
    (b,) = parse_backbones(["hosted_vllm/Qwen/Qwen3-32B"])
    assert apply_fleet([b]) == [] and b.api_base is None
