"""A sweep killed with SIGKILL resumes with no lost or duplicated row and no repeated successful call;
keys never reach any file the workbench writes."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from shopbench.llm import Call, Gateway
from shopbench.llm.cache import ResponseCache

HERE = Path(__file__).parent


def test_resume_after_kill_9(server, tmp_path):
    n = 60
    cmd = [sys.executable, str(HERE / "sweep_script.py"), server.api_base, str(tmp_path), str(n)]
    env = {**os.environ, "OPENAI_API_KEY": "sk-" + "test-not-a-real-key-000000"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    log = tmp_path / "calls" / "sweep.jsonl"
    deadline = time.time() + 240  # the subprocess imports litellm first: slow on a loaded machine
    while time.time() < deadline:
        if log.exists() and log.read_text().count("\n") >= 15:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    done_before = {json.loads(line)["item_id"] for line in log.read_text().splitlines() if line.endswith("}")}
    cached_before = set(ResponseCache(tmp_path / "cache").get_many(
        Call(f"item{i:03d}", "openai/fake", [{"role": "user", "content": f"q{i} [[fake:latency=0.05]]"}],
             api_base=server.api_base).key for i in range(n)))  # fmt: skip
    assert 15 <= len(done_before) < n
    requested_before = server.total_requests

    server.reset()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"DONE {n} {n}" in out.stdout
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    ids = [r["item_id"] for r in rows]
    assert sorted(ids) == [f"item{i:03d}" for i in range(n)], "a row was lost or duplicated"
    # no successful call is repeated: nothing answered before the kill is requested again
    asked_again = {b["messages"][-1]["content"].split()[0] for b in server.bodies}
    answered_before = {f"q{int(k[4:])}" for k in done_before}
    assert not (asked_again & answered_before)
    assert server.total_requests == n - len(cached_before)
    assert requested_before + server.total_requests <= n + 4  # at most the calls in flight at the kill


def test_secrets_never_reach_disk(server, tmp_path, monkeypatch):
    secret = "sk-" + "proj-THISISAFAKEKEYFORTESTS0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-" + "ant-ANOTHERFAKEKEY0123456789abcdefgh")
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False, backoff_s=0.01,
                 max_retries=1)  # fmt: skip
    calls = [
        Call("ok", "openai/fake", [{"role": "user", "content": "hello"}], api_base=server.api_base),
        Call(
            "auth",
            "openai/fake",
            [{"role": "user", "content": "[[fake:status=401]]"}],
            api_base=server.api_base,
        ),
        Call(
            "echo",
            "openai/fake",
            [{"role": "user", "content": f"repeat my key {secret}"}],
            api_base=server.api_base,
        ),
    ]
    gw.run(calls, "secrets")
    gw.run(calls, "secrets-again")
    assert server.bodies  # the key did go to the server (as a header), and nowhere else
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert secret.encode() not in data, f"key written to {path}"
            assert b"sk-" + b"ant-ANOTHERFAKEKEY" not in data, f"key written to {path}"
