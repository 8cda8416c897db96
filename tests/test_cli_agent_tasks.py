"""The agent tasks (issue 26 §1-4): ``shop_agent`` and ``tau2_retail_agent`` with ``--agent module:Class``
and with a tool-calling model (an embedded ``local/`` backend, the fake OpenAI server), through the CLI
in a subprocess and through ``shopbench.eval``; resumption without a new trial or call; agent crashes
counted as errors, never scores; bad ``--agent`` input exits 2; the agent guide's class and command run
as written (extracted from docs/guides/agent.md, so the guide cannot drift)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from shopbench.testing.cli import call_rows, log_dir_of
from shopbench.testing.cli import run_cli as _run_cli

ROOT = Path(__file__).resolve().parents[1]

GUIDE = ROOT / "docs" / "guides" / "agent.md"
TAU2 = ROOT.parent / "shared" / "data" / "tau2_retail"
needs_tau2 = pytest.mark.skipif(not TAU2.is_dir(), reason=f"tau2-bench retail data absent ({TAU2})")

CRASHY = '''
from shopbench.env import AgentStep

class Crashy:
    """Raises in the second trial it plays (a bug in the user's agent)."""
    name = "crashy"
    trials = 0

    def reset(self, episode_id):
        type(self).trials += 1

    def step(self, messages, observation):
        if type(self).trials == 2:
            raise RuntimeError("boom in my agent")
        return AgentStep(message="Sorry, I cannot help with that.")

class AlwaysCrashes:
    name = "always"
    def reset(self, episode_id):
        pass
    def step(self, messages, observation):
        return {"not": "an AgentStep"}

class NoStep:
    def reset(self, episode_id):
        pass

class Transfers:
    """A retail agent that hands every customer to a human (tau2-bench's transfer)."""
    name = "transfers"

    def reset(self, episode_id):
        self.episode = episode_id

    def step(self, messages, observation):
        from shopbench.core.conversation import ToolCall
        from shopbench.domains.tau2_retail import TRANSFER_MESSAGE

        if messages[-1]["role"] == "tool":
            return AgentStep(message=TRANSFER_MESSAGE)
        return AgentStep(tool_calls=[ToolCall("transfer_to_human_agents", {"summary": "needs a human"}, "t1")])
'''


def guide_blocks() -> tuple[str, str, list[str]]:
    """(the agent class, the eval command, the printed lines) of docs/guides/agent.md."""
    text = GUIDE.read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)  # the first python block: the class
    cmd = next(line.strip() for block in re.findall(r"```bash\n(.*?)```", text, re.S)
               for line in block.splitlines() if line.strip().startswith("shopbench eval shop_agent --agent"))  # fmt: skip
    printed = re.search(r"prints \(after a progress bar\)\n\n```\n(.*?)```", text, re.S).group(1).splitlines()
    return code, cmd, printed


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A user's folder: the guide's my_agent.py and a module of broken agents; one outputs tree."""
    d = tmp_path_factory.mktemp("user")
    code, _, _ = guide_blocks()
    (d / "my_agent.py").write_text(code, encoding="utf-8")
    (d / "crashy.py").write_text(CRASHY, encoding="utf-8")
    (d / "outputs").mkdir()
    return d


def run_cli(args, work, timeout=300, **env):
    return _run_cli(args, work / "outputs", cwd=work, timeout=timeout, **env)


def trajectory_bytes(d: Path) -> dict[str, int]:
    return {str(p.relative_to(d)): p.stat().st_size for p in d.rglob("*.jsonl") if "calls" not in p.parts}


# ---- the guide's agent class through the CLI --------------------------------------------------------
@pytest.fixture(scope="module")
def guide_run(work):
    _, cmd, _ = guide_blocks()
    args = cmd.split()[1:]
    assert args[:4] == ["eval", "shop_agent", "--agent", "my_agent:MyAgent"]
    r = run_cli([*args, "--no-progress"], work)
    assert r.returncode == 0, r.stderr
    return r, log_dir_of(r.stdout)


def test_the_guide_class_and_command_print_what_the_guide_shows(guide_run):
    r, d = guide_run
    _, _, printed = guide_blocks()
    got = [x for x in r.stdout.splitlines() if not x.startswith("log: ")]
    assert got == [x for x in printed if not x.startswith("log: ")]
    assert re.fullmatch(r"log: .*/tasks/shop_agent/agent-MyAgent-[0-9a-f]{12}", r.stdout.splitlines()[-1])


def test_an_agent_class_run_writes_a_log_of_scored_samples(guide_run):
    from shopbench.shopsim.verifier.battery import METRICS

    _, d = guide_run
    s = pd.read_parquet(d / "samples.parquet")
    assert len(s) == 4 and s["sample_id"].nunique() == 4 and set(s["epoch"]) == {0}
    assert s["unit_status"].eq("ok").all() and s["agent"].eq("my-rule-based-shopper").all()
    assert {m.key for m in METRICS} <= set(s.columns)
    m = json.loads((d / "metrics.json").read_text())
    assert m["units"] == {"total": 4, "ok": 4, "parse_error": 0, "error": 0}
    assert len(m["battery"]) == 44
    goal = m["battery"]["goal_rate"]
    shopping = s[s["kind"] != "refusal"]
    assert goal["n"] == len(shopping) and goal["estimate"] == pytest.approx(shopping["goal_rate"].mean())
    assert goal["ci_low"] <= goal["estimate"] <= goal["ci_high"]
    assert set(goal["by_tier"]) == {"direct", "light", "multi_item", "complex"}
    ex = m["headline"]["exact_cart_success"]
    assert ex["n"] == int((s["kind"] == "general").sum())
    run = json.loads((d / "run.json").read_text())
    assert run["status"] == "complete" and run["model"] is None
    assert run["agent"]["spec"] == "my_agent:MyAgent" and len(run["agent"]["sha256"]) == 64
    assert run["agent"]["sha256"][:12] in json.dumps(run) and run["params"]["user"] == "scripted"
    assert len(list((d / "trajectories" / "epoch0").glob("*.jsonl"))) == 1


def test_rerun_plays_no_trial_again(guide_run, work):
    r, d = guide_run
    before, m1 = trajectory_bytes(d), json.loads((d / "metrics.json").read_text())
    _, cmd, _ = guide_blocks()
    r2 = run_cli([*cmd.split()[1:], "--no-progress"], work)
    assert r2.returncode == 0, r2.stderr
    assert log_dir_of(r2.stdout) == d and trajectory_bytes(d) == before
    assert json.loads((d / "metrics.json").read_text()) == m1


def test_python_api_equals_the_cli(guide_run, work, monkeypatch):
    import shopbench

    _, d = guide_run
    monkeypatch.chdir(work)
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(work / "outputs"))
    res = shopbench.eval("shop_agent", agent="my_agent:MyAgent", limit=4, progress=False)
    assert res.log_dir == d and isinstance(res.samples, pd.DataFrame) and len(res.samples) == 4
    assert json.loads(json.dumps(res.metrics)) == json.loads((d / "metrics.json").read_text())


def test_an_edited_agent_gets_its_own_log(guide_run, work, monkeypatch, tmp_path):
    import shopbench

    _, d = guide_run
    code, _, _ = guide_blocks()
    (tmp_path / "my_agent.py").write_text(code.replace("limit=5", "limit=3"), encoding="utf-8")
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(work / "outputs"))
    res = shopbench.eval("shop_agent", agent=f"{tmp_path / 'my_agent.py'}:MyAgent", limit=1, progress=False)
    assert res.log_dir != d and res.provenance["agent"]["file"] == str(tmp_path / "my_agent.py")


# ---- crashes: counted, never scored ------------------------------------------------------------------
def test_an_agent_that_raises_is_an_error_unit_not_a_score(work, monkeypatch):
    import shopbench

    monkeypatch.chdir(work)
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(work / "outputs"))
    res = shopbench.eval("shop_agent", agent="crashy:Crashy", limit=3, progress=False, n_boot=50)
    s = res.samples
    assert res.counts == {"total": 3, "ok": 2, "parse_error": 0, "error": 1}
    bad = s[s["unit_status"] == "error"].iloc[0]
    assert "boom in my agent" in bad["unit_error"] and bad["termination"] == "assistant_error"
    assert s.loc[s["unit_status"] == "error", ["goal_rate", "assistant_error"]].isna().all().all()
    assert res.metrics["battery"]["assistant_error"]["n"] == 2  # the crash is not among the scored trials


def test_an_agent_failing_every_trial_reports_no_number_and_exits_3(work):
    r = run_cli(
        ["eval", "shop_agent", "--agent", "crashy:AlwaysCrashes", "--limit", "2", "--no-progress"], work
    )
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert "no usable answer" in r.stderr and "not a shopbench.env.AgentStep" in r.stderr
    assert "Traceback" not in r.stderr


# ---- bad --agent input: one message, exit 2 ---------------------------------------------------------------
@pytest.mark.parametrize(("args", "needle"), [
    (["eval", "shop_agent", "--agent", "no_such_module:X"], "no module named 'no_such_module'"),
    (["eval", "shop_agent", "--agent", "my_agent:MyAgnet"], "did you mean 'MyAgent'"),
    (["eval", "shop_agent", "--agent", "crashy:NoStep"], "lacks the agent protocol's method(s) step()"),
    (["eval", "shop_agent", "--agent", "my_agent"], "is not module:Class"),
    (["eval", "shop_agent", "--agent", "./missing.py:A"], "no such file"),
    (["eval", "shop_agent", "--agent", "my_agent:MyAgent", "--model", "local/schema-sampler"], "not both"),
    (["eval", "pace_judge", "--agent", "my_agent:MyAgent"], "takes no --agent"),
    (["eval", "shop_agent", "--agent", "my_agent:MyAgent", "-T", "trials=general=x"], "is not kind=N"),
    (["eval", "shop_agent"], "--agent"),
])  # fmt: skip
def test_bad_agent_input_is_one_message_and_exit_2(args, needle, work):
    r = run_cli(args, work)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert needle in r.stderr and "Traceback" not in r.stderr


# ---- a tool-calling model as the agent ----------------------------------------------------------------
def test_a_local_model_agent_resumes_without_a_call(work):
    args = ["eval", "shop_agent", "--model", "local/schema-sampler", "-T", "tool_mode=compact", "-T", "max_tokens=200",
            "--limit", "2", "--no-progress", "-T", "n_boot=50"]  # fmt: skip
    r = run_cli(args, work)
    assert r.returncode == 0, r.stderr
    d = log_dir_of(r.stdout)
    rows = call_rows(d)
    assert rows and all(x["model"] == "local/schema-sampler" for x in rows)
    s = pd.read_parquet(d / "samples.parquet")
    assert len(s) == 2 and s["agent"].eq("llm:local/schema-sampler").all()
    assert s["unit_status"].isin(["ok", "parse_error"]).all()  # random tool calls: scored, whatever they are
    before = trajectory_bytes(d)
    r2 = run_cli(args, work)
    assert r2.returncode == 0, r2.stderr
    assert len(call_rows(d)) == len(rows) and trajectory_bytes(d) == before
    assert json.loads((d / "run.json").read_text())["gateway"]["calls"] == 0


def _tool_calling_script(body):
    """A server model that searches for what the customer said, then answers: native tool calls."""
    msgs = body["messages"]
    last = msgs[-1]
    if last["role"] == "user":
        call = {"id": f"call_{len(msgs)}", "type": "function",
                "function": {"name": "search_products", "arguments": json.dumps({"query": last["content"][:60]})}}  # fmt: skip
        msg = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        msg, finish = {"role": "assistant", "content": "Here is what I found in the catalog."}, "stop"
    return {"response": {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                         "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                         "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}}  # fmt: skip


def test_a_user_started_server_as_the_tool_calling_agent(work):
    from shopbench.testing.fake_openai import FakeOpenAIServer, answering_preflight, is_preflight

    with FakeOpenAIServer(script=answering_preflight(_tool_calling_script)) as srv:
        r = run_cli(["eval", "shop_agent", "--model", "openai/shopper", "--model-base-url", srv.api_base,
                     "--limit", "2", "--no-progress", "-T", "n_boot=50"], work)  # fmt: skip
        assert r.returncode == 0, r.stderr
        asked = [b for b in srv.bodies if not is_preflight(b)]  # the preflight's own calls left out
        n_requests = len(asked)
        assert all(b.get("tools") for b in asked)  # native function calling: the 8 store tools
        n_bodies = len(srv.bodies)
        again = run_cli(["eval", "shop_agent", "--model", "openai/shopper", "--model-base-url", srv.api_base,
                         "--limit", "2", "--no-progress", "-T", "n_boot=50"], work)  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert len(srv.bodies) == n_bodies  # every trial finished: no trial played, no preflight either
    d = log_dir_of(r.stdout)
    rows = call_rows(d)
    assert n_requests == len(rows) > 0 and all(x["model"] == "openai/shopper" for x in rows)
    s = pd.read_parquet(d / "samples.parquet")
    assert s["unit_status"].eq("ok").all() and (s["tool_calls"] > 0).all()
    events = [
        json.loads(x) for f in (d / "trajectories").rglob("*.jsonl") for x in f.read_text().splitlines()
    ]
    assert any(
        e["call"]["name"] == "search_products" for t in events for turn in t["turns"] for e in turn["events"]
    )


def test_a_server_that_fails_every_call_is_no_score(work):
    """The preflight passes (its tiny call is answered), then every call of the sweep fails: exit 3, no
    score. (A server that refuses the preflight itself stops the run with exit 2 before any trial.)"""
    from shopbench.testing.fake_openai import FakeOpenAIServer, answering_preflight

    with FakeOpenAIServer(script=answering_preflight(lambda body: {"status": 400})) as srv:
        r = run_cli(["eval", "shop_agent", "--model", "openai/broken", "--model-base-url", srv.api_base,
                     "--limit", "2", "--no-progress"], work)  # fmt: skip
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert "no usable answer" in r.stderr and "model call failed" in r.stderr and "Traceback" not in r.stderr


# ---- tau2_retail_agent ------------------------------------------------------------------------------------
@needs_tau2
def test_tau2_with_a_model_agent_rewards_on_the_task_basis(work, monkeypatch):
    import shopbench

    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(work / "outputs"))
    kw = dict(model="local/schema-sampler", limit=2, progress=False, n_boot=50, tool_mode="json")
    res = shopbench.eval("tau2_retail_agent", **kw)
    s = res.samples
    assert len(s) == 2 and s["unit_status"].isin(["ok", "parse_error"]).all()
    tasks = {str(t["id"]): t for t in json.loads((TAU2 / "tasks.json").read_text())}
    split = json.loads((TAU2 / "split_tasks.json").read_text())["test"]
    assert list(s["tau2_id"]) == [str(x) for x in split[:2]]
    for row in s.itertuples():
        assert row.basis == ",".join(tasks[row.tau2_id]["evaluation_criteria"]["reward_basis"])
        assert row.reward == (0.0 if row.premature else row.db)  # NL_ASSERTION not judged: left out, counted
    m = res.metrics
    assert m["headline"]["reward"]["n"] == 2 and "pass^1" in m["headline"]
    n_calls = len(call_rows(res.log_dir))
    again = shopbench.eval("tau2_retail_agent", **kw)
    assert len(call_rows(res.log_dir)) == n_calls and again.metrics == json.loads(json.dumps(m))


@needs_tau2
def test_tau2_with_an_agent_class_and_two_epochs(work):
    r = run_cli(["eval", "tau2_retail_agent", "--agent", "crashy:Transfers", "--limit", "2", "--epochs", "2",
                 "--no-progress", "-T", "n_boot=50"], work)  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = log_dir_of(r.stdout)
    s = pd.read_parquet(d / "samples.parquet")
    assert len(s) == 4 and set(s["epoch"]) == {0, 1} and s["unit_status"].eq("ok").all()
    assert s["termination"].eq("transfer").all() and (s["reward"] == s["db"]).all()
    assert all(json.loads(a) == ["transfer_to_human_agents"] for a in s["actions_taken"])
    head = json.loads((d / "metrics.json").read_text())["headline"]
    assert {"pass^1", "pass^2"} <= set(head) and head["reward"]["n"] == 4


def test_tau2_missing_data_is_one_message_and_exit_2(work, tmp_path):
    r = run_cli(
        ["eval", "tau2_retail_agent", "--agent", "my_agent:MyAgent", "-T", f"data={tmp_path / 'nope'}"], work
    )
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert str(tmp_path / "nope") in r.stderr and "Traceback" not in r.stderr
