"""OMP_WAIT_POLICY for llama.cpp (issue 13 §3): set before llama_cpp is imported, in-process and for
every project-started llama_cpp.server; a user's own value wins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shopbench.llm.llamacpp import runtime as RT
from shopbench.llm.llamacpp import server as S

LIB = Path(__file__).resolve().parents[1] / "lib"

# A stand-in llama_cpp package: records the policy it saw when imported, and the Llama kwargs.
FAKE_LLAMA_CPP = """
import json, os
RECORD = os.environ["FAKE_RECORD"]
with open(RECORD, "a") as f:
    f.write(json.dumps({"import": os.environ.get("OMP_WAIT_POLICY")}) + "\\n")

class Llama:
    def __init__(self, **kw):
        with open(RECORD, "a") as f:
            f.write(json.dumps({"llama": kw}) + "\\n")
"""


def _run(tmp_path: Path, code: str, policy: str | None) -> tuple[subprocess.CompletedProcess, list[dict]]:
    import json

    pkg = tmp_path / "fake" / "llama_cpp"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(FAKE_LLAMA_CPP)
    record = tmp_path / "record.jsonl"
    record.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(PYTHONPATH=os.pathsep.join([str(tmp_path / "fake"), str(LIB)]), FAKE_RECORD=str(record))
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    r = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True, text=True, env=env)
    lines = [json.loads(x) for x in record.read_text().splitlines()] if record.exists() else []
    return r, lines


IN_PROCESS = """
from shopbench.llm.llamacpp import runtime
import sys
assert sys.modules.get("llama_cpp") is None, "importing the module must not import llama_cpp"
runtime.model_path = lambda name: "fake.gguf"
core = runtime._LlamaCppCore()
core._get("smollm2-135m-instruct")
"""


def test_in_process_backend_sets_passive_before_importing_llama_cpp(tmp_path):
    r, lines = _run(tmp_path, IN_PROCESS, policy=None)
    assert r.returncode == 0, r.stderr
    assert lines[0] == {"import": "PASSIVE"}
    kw = lines[1]["llama"]
    assert kw["n_threads"] == RT.N_THREADS and kw["n_batch"] == RT.N_BATCH
    assert "RuntimeWarning" not in r.stderr


def test_a_users_wait_policy_wins(tmp_path):
    r, lines = _run(tmp_path, IN_PROCESS, policy="ACTIVE")
    assert r.returncode == 0, r.stderr
    assert lines[0] == {"import": "ACTIVE"}


def test_availability_probe_also_sets_the_policy_first(tmp_path):
    r, lines = _run(
        tmp_path, "from shopbench.llm.llamacpp import runtime\nassert runtime.llama_cpp_available()", None
    )
    assert r.returncode == 0, r.stderr
    assert lines == [{"import": "PASSIVE"}]


def test_setting_the_policy_after_llama_cpp_was_imported_warns(tmp_path):
    r, lines = _run(tmp_path, "import llama_cpp\nfrom shopbench.llm import llamacpp", None)
    assert r.returncode == 0, r.stderr
    assert lines == [{"import": None}]  # too late: the runtime already read its environment
    assert "RuntimeWarning" in r.stderr and "OMP_WAIT_POLICY" in r.stderr


def test_wait_policy_env():
    assert RT.wait_policy_env({"PATH": "/bin"}) == {"PATH": "/bin", "OMP_WAIT_POLICY": "PASSIVE"}
    assert RT.wait_policy_env({"OMP_WAIT_POLICY": "ACTIVE"})["OMP_WAIT_POLICY"] == "ACTIVE"
    assert RT.wait_policy_env({"OMP_WAIT_POLICY": ""})["OMP_WAIT_POLICY"] == "PASSIVE"


class _DeadProcess:
    returncode = 1

    def poll(self):
        return 1


@pytest.mark.parametrize("user_policy", [None, "ACTIVE"])
def test_serve_starts_the_server_with_the_wait_policy(tmp_path, monkeypatch, user_policy):
    seen: dict = {}

    def fake_popen(cmd, **kw):
        seen.update(cmd=cmd, env=kw.get("env"))
        return _DeadProcess()

    monkeypatch.setattr(S, "model_path", lambda name: tmp_path / "m.gguf")
    monkeypatch.setattr(S, "python_has_llama_cpp", lambda python: True)
    monkeypatch.setattr(S.subprocess, "Popen", fake_popen)
    if user_policy is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", user_policy)
    with pytest.raises(RuntimeError, match="exited with code 1"):
        with S.serve("smollm2-135m-instruct", timeout=5):
            pass
    assert seen["env"]["OMP_WAIT_POLICY"] == (user_policy or "PASSIVE")
    cmd = seen["cmd"]
    assert cmd[cmd.index("--n_batch") + 1] == str(RT.N_BATCH)
    assert cmd[cmd.index("--n_threads") + 1] == str(RT.N_THREADS)
