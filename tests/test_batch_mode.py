"""``gateway.mode: batch`` through litellm's batch functions against the local provider server
(issue 14 §4): submit, poll, download, merge into cache and log; per-line errors logged, never cached;
a killed run resumes its submitted batches instead of resubmitting them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from shopbench.llm.batch import batch_price_factor, open_batches, state_path
from shopbench.llm.calllog import CallLog
from shopbench.rehearsal import provider_env
from shopbench.rehearsal.server import ProviderServer

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["GOOD", "BAD"]},
                                           "score": {"type": "integer", "minimum": 1, "maximum": 5}},
          "required": ["verdict", "score"]}  # fmt: skip
MODELS = ["openai/gpt-4o-mini", "anthropic/claude-haiku-4-5"]


@pytest.fixture
def srv(monkeypatch):
    with ProviderServer(seed=5, batch_delay_s=0.2) as s:
        for k, v in provider_env(s.url).items():
            monkeypatch.setenv(k, v)
        yield s


def _calls(n=5, bad=()):
    from shopbench.llm import Call

    out = []
    for m in MODELS:
        for i in range(n):
            text = f"Judge record {i}." + (" [[fake:status=400]]" if i in bad else "")
            out.append(Call(f"{m}:{i}", m, [{"role": "system", "content": "You judge."}, {"role": "user", "content": text}],
                            params={"max_tokens": 64}, schema=SCHEMA))  # fmt: skip
    return out


def _gw(tmp_path, **kw):
    from shopbench.llm import Gateway

    kw.setdefault("batch_min_calls", 1)
    return Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False, mode="batch",
                   batch_poll_s=0.05, **kw)  # fmt: skip


def test_batch_price_factor_from_cost_map():
    assert batch_price_factor("openai/gpt-4o") == pytest.approx(0.5)
    assert batch_price_factor("anthropic/claude-sonnet-4-5") == pytest.approx(0.5)
    assert batch_price_factor("no-such/model") == pytest.approx(0.5)


def test_batch_mode_merges_into_cache_and_log(srv, tmp_path):
    gw = _gw(tmp_path)
    calls = _calls(bad={3})
    rows = gw.run(calls, "b1")
    assert [r["item_id"] for r in rows] == [c.item_id for c in calls]
    assert srv.served.get("batches") == 1 and srv.served.get("messages.batches") == 1
    assert not srv.served.get("chat.completions") and not srv.served.get("messages")  # nothing real-time
    ok = [r for r in rows if r["status"] == "ok"]
    bad = [r for r in rows if r["status"] == "error"]
    assert len(bad) == 2 and all("batch line" in r["error"] for r in bad)  # per-line errors, one per provider
    assert len(ok) == 8 and all(r["parsed"]["verdict"] in ("GOOD", "BAD") for r in ok)
    assert all(r["cost_usd"] > 0 and r["prompt_tokens"] for r in ok)
    # cost at batch rates: half of what litellm bills the same usage in real time
    from shopbench.llm.providers import get_litellm

    litellm = get_litellm()
    r0 = next(r for r in ok if r["model"] == "openai/gpt-4o-mini")
    full = litellm.cost_per_token(model="gpt-4o-mini", prompt_tokens=r0["prompt_tokens"],
                                  completion_tokens=r0["completion_tokens"])  # fmt: skip
    assert r0["cost_usd"] == pytest.approx(sum(full) / 2, rel=1e-6)
    # successes cached, errors not: a second run reuses the cache and resubmits only the failed lines
    assert all(gw.cache.get(r["key"]) for r in ok) and not any(gw.cache.get(r["key"]) for r in bad)
    assert not open_batches(CallLog(state_path(gw.log_path("b1"))))
    rows2 = _gw(tmp_path).run(calls, "b2")
    assert sum(r["cache_hit"] for r in rows2) == 8 and srv.served["batches"] == 2


def test_non_batch_providers_stay_realtime(srv, tmp_path):
    from shopbench.llm import Call

    c = Call("f", "fireworks_ai/accounts/fireworks/models/gpt-oss-20b", [{"role": "user", "content": "hi"}],
             params={"max_tokens": 16}, schema=SCHEMA)  # fmt: skip
    rows = _gw(tmp_path).run([c], "rt")
    assert (
        rows[0]["status"] == "ok"
        and srv.served.get("chat.completions") == 1
        and not srv.served.get("batches")
    )


SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from test_batch_mode import _calls, _gw
    from pathlib import Path
    rows = _gw(Path({tmp!r})).run(_calls(), "resume")
    print("DONE", len(rows), flush=True)
""")


def test_killed_run_resumes_its_batches(tmp_path):
    """A run killed while its batches are in flight polls them on restart instead of resubmitting."""
    with ProviderServer(seed=5, batch_delay_s=4.0) as s:
        env = {**os.environ, **provider_env(s.url)}
        script = SCRIPT.format(tests=os.path.dirname(__file__), tmp=str(tmp_path))
        p = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)  # fmt: skip
        state = state_path(tmp_path / "calls" / "resume.jsonl")
        deadline = time.time() + 400  # the child imports litellm: slow on a loaded machine
        while time.time() < deadline:
            if state.exists() and len(open_batches(CallLog(state))) == 2:
                break
            time.sleep(0.1)
        else:
            p.kill()
            raise AssertionError(f"batches never submitted: {p.communicate()[1].decode()[-2000:]}")
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        assert (
            not (tmp_path / "calls" / "resume.jsonl").exists()
            or not CallLog(tmp_path / "calls" / "resume.jsonl").rows()
        )
        submitted = (s.served.get("batches", 0), s.served.get("messages.batches", 0))
        assert submitted == (1, 1)
        old = set(open_batches(CallLog(state)))
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=600)
        assert b"DONE 10" in r.stdout, r.stderr.decode()[-2000:]
        assert (
            s.served.get("batches", 0),
            s.served.get("messages.batches", 0),
        ) == submitted  # nothing resubmitted
    rows = CallLog(tmp_path / "calls" / "resume.jsonl").rows()
    assert len(rows) == 10 and len({(r["item_id"], r["key"]) for r in rows}) == 10
    assert all(r["status"] == "ok" for r in rows)
    events = [json.loads(x) for x in state.read_text().splitlines()]
    assert {e["batch_id"] for e in events if e["event"] == "merged"} == old


def test_small_sweeps_stay_realtime(srv, tmp_path):
    """An agent's next turn (fewer than batch_min_calls requests) is not put in a 24-hour batch."""
    rows = _gw(tmp_path, batch_min_calls=20).run(_calls(n=2), "small")
    assert all(r["status"] == "ok" for r in rows)
    assert not srv.served.get("batches") and not srv.served.get("messages.batches")
    assert srv.served.get("chat.completions") == 2 and srv.served.get("messages") == 2
