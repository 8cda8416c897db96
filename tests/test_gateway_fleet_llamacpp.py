"""A fleet of two ``python -m llama_cpp.server`` processes (SmolLM2) started by the project's
``server: llamacpp`` machinery (``replicas: 2``); one is killed with SIGKILL mid-sweep and the sweep
finishes on the other with no lost or repeated row (issue 14, section 5)."""

import signal
import threading
import time

import pytest

from shopbench.llm import Gateway, parse_backbones
from shopbench.llm.backends import started_servers
from shopbench.llm.llamacpp.registry import is_installed
from shopbench.llm.llamacpp.runtime import llama_cpp_available

pytestmark = [
    pytest.mark.llamacpp,
    pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python not installed (make local-llm)"),
    pytest.mark.skipif(
        not is_installed("smollm2-135m-instruct"), reason="SmolLM2 not installed (make local-llm)"
    ),
]


def test_two_servers_one_killed_mid_sweep(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOPBENCH_LLAMACPP_THREADS", "1")  # two servers on two shared cores
    (b,) = parse_backbones([{"name": "smol-fleet", "model": "openai/smol-fleet", "server": "llamacpp",
                             "replicas": 2, "model_name": "smollm2-135m-instruct"}])  # fmt: skip
    gw = Gateway(
        cache_dir=tmp_path / "c", log_dir=tmp_path / "l", backbones=[b], progress=False, backoff_s=0.05
    )
    n = 16
    calls = [gw.call("smol-fleet", f"q{i:02d}", [{"role": "user", "content": f"Name a product for hiking, variant {i}."}],
                     params={"temperature": 0, "max_tokens": 6, "seed": 1}) for i in range(n)]  # fmt: skip
    assert len(b.fleet) == 2 and calls[0].fleet == tuple(b.fleet)
    servers = [s for s in started_servers().values() if s.api_base in b.fleet]
    assert len(servers) == 2
    victim = servers[1]

    def kill_one():
        deadline = time.monotonic() + 300
        while len(gw.cache) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        victim.process.send_signal(signal.SIGKILL)

    killer = threading.Thread(target=kill_one)
    killer.start()
    rows = gw.run(calls, "fleet")
    killer.join()
    assert victim.process.poll() is not None  # it was killed during the sweep
    assert [r["item_id"] for r in rows] == [c.item_id for c in calls]
    assert all(r["error"] is None and r["completion_tokens"] > 0 for r in rows), [r["error"] for r in rows]
    log = gw.log("fleet")
    assert sorted(log.item_id) == [c.item_id for c in calls]  # none lost, none twice
    fleet = gw.fleets[tuple(b.fleet)]
    assert fleet.served[victim.api_base] >= 1 and fleet.served[servers[0].api_base] >= n // 2
    # a rerun is served from the cache: nothing is asked of the (dead) fleet again
    again = gw.run(calls, "fleet-again")
    assert all(r["cache_hit"] for r in again)
    servers[0].process.terminate()  # free the cores for the other tests (the process would end at exit)
