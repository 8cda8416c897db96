"""Issue 28 items 3-4: one interface over the four τ²-family domains, dual control in the conversation
loop, scripted and LLM users for every domain, and ``shopbench eval tau2_agent -T domain=...``.

Known-answer checks: the gold agent (the task's expected actions) with the scripted user reaches
reward 1, the idle agent 0 on tasks whose gold path changes the state; user-side tool calls are run in
the user's turn and kept, in order, with their role; a wrong argument is a tool error the caller sees."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from shopbench.core.conversation import ToolCall
from shopbench.domains.base import DOMAINS, load_domain
from shopbench.domains.parties import GoldAgent, IdleAgent, LLMDomainUser, ScriptedDomainUser, requested
from shopbench.env import AgentStep, UserTurn, run_conversation
from shopbench.errors import ParamError
from shopbench.testing.cli import log_dir_of, run_cli

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
needs = {n: pytest.mark.skipif(not (DATA / f"tau2_{n}").is_dir(), reason=f"tau2_{n} absent") for n in DOMAINS}
FIRST = {"retail": "all", "airline": "all", "banking_knowledge": "all", "telecom": "small"}


def _play(d, t, agent_kind: str):
    acts = d.gold_actions(t)
    user = ScriptedDomainUser(
        d.user_instructions(t), random.Random(0), [a for a in acts if a["requestor"] == "user"]
    )
    crit = t["evaluation_criteria"]
    agent = GoldAgent(acts, crit.get("communicate_info") or []) if agent_kind == "gold" else IdleAgent()
    env = d.environment(t)
    conv = run_conversation(env, agent, user, d.system_prompt(t))
    return (*d.reward(t, env, conv), conv, user)


@pytest.mark.parametrize("name", list(DOMAINS))
def test_gold_agent_reaches_1_and_idle_agent_0(name):
    if not (DATA / f"tau2_{name}").is_dir():
        pytest.skip(f"tau2_{name} absent")
    d = load_domain(name)
    tasks = d.tasks(FIRST[name])
    # the first tasks, and every task with user actions among the first 40 (dual control)
    picked = (
        tasks[:4] + [t for t in tasks[4:40] if any(a["requestor"] == "user" for a in d.gold_actions(t))][:4]
    )
    for t in picked:
        reward, bd, conv, user = _play(d, t, "gold")
        assert reward == 1.0, (t["id"], conv.termination, bd)
        assert not user.pending, (t["id"], user.pending)  # every user action performed, when asked
    idle = [_play(d, t, "idle") for t in picked]
    assert any(r == 0.0 for r, *_ in idle)
    if name in ("banking_knowledge", "telecom"):  # every gold path changes state or needs the user
        assert all(r == 0.0 for r, *_ in idle)
        # the scripted user acts only when asked: the idle agent never asks
        assert all(r.role == "assistant" for *_, conv, _u in idle for r in conv.tools)


@needs["telecom"]
def test_user_tool_calls_run_in_the_users_turn_and_are_kept_in_order_with_their_role():
    d = load_domain("telecom")
    t = next(
        t for t in d.tasks("small") if [a["requestor"] for a in d.gold_actions(t)] == ["assistant", "user"]
    )
    reward, bd, conv, user = _play(d, t, "gold")
    assert reward == 1.0 and [(r.role, r.call.name) for r in conv.tools] == [
        (a["requestor"], a["name"]) for a in d.gold_actions(t)
    ]
    # the agent's transcript shows the user's words, not the user's tool calls
    assert not any(m.get("role") == "user" and m.get("tool_calls") for m in conv.messages)
    assert any("I did toggle_roaming" in str(m.get("content")) for m in conv.messages if m["role"] == "user")


class _BadUser:
    """Calls a user tool with a wrong argument, then an unknown tool, then speaks and stops."""

    name = "bad"

    def __init__(self):
        self.seen: list[str] = []
        self.n = 0

    def respond(self, view):
        self.n += 1
        if self.n == 1:
            return UserTurn(message="", tool_calls=[ToolCall("toggle_airplane_mode", {"bogus": 1}),
                                                    ToolCall("no_such_tool", {})])  # fmt: skip
        return UserTurn(message="bye", stop=True)

    def tool_results(self, outcomes):
        self.seen = [str(o.message["content"]) for o in outcomes]
        return UserTurn(message="it did not work", stop=False)


@pytest.mark.parametrize("name", ["telecom", "banking_knowledge", "airline"])
def test_a_wrong_user_tool_argument_is_an_error_the_user_sees(name):
    if not (DATA / f"tau2_{name}").is_dir():
        pytest.skip(f"tau2_{name} absent")
    d = load_domain(name)
    t = d.tasks(FIRST[name])[0]
    env = d.environment(t)
    user = _BadUser()
    conv = run_conversation(env, IdleAgent(), user, d.system_prompt(t))
    assert conv.termination == "user_stop" and len(user.seen) == 2
    assert all(s.startswith("Error") for s in user.seen), user.seen
    assert [r.role for r in conv.tools] == ["user", "user"]


@needs["retail"]
def test_retail_through_the_interface_equals_the_retail_task_reward():
    from shopbench.domains.tau2_retail import RetailEnvironment, ScriptedRetailUser, gold_state, task_reward

    d = load_domain("retail")
    t = d.tasks("test")[0]
    env = RetailEnvironment(d.data, agent_opens=False)
    conv = run_conversation(env, GoldAgent(d.gold_actions(t)),
                            ScriptedRetailUser(t["user_scenario"]["instructions"], random.Random(0)), d.system_prompt(t))  # fmt: skip
    want = task_reward(
        env.db, gold_state(d.data, t)[0], t["evaluation_criteria"], conv.messages, conv.termination
    )
    assert d.reward(t, env, conv) == want and want[0] == 1.0


def test_unknown_domain_says_did_you_mean():
    with pytest.raises(ParamError, match=r"did you mean 'telecom'"):
        load_domain("telecon")


def test_requested_reads_the_agents_words():
    a = {"name": "toggle_airplane_mode", "arguments": {}}
    assert requested(a, "Could you turn off Airplane Mode?") and requested(
        a, "run toggle_airplane_mode please"
    )
    assert not requested(a, "Please restart your phone.")
    c = {"name": "call_discoverable_user_tool", "arguments": {"discoverable_tool_name": "submit_dispute"}}
    assert requested(c, "Please use submit_dispute now") and not requested(c, "hello")


class _FakeGateway:
    """Answers the user's calls with queued JSON turns (the LLM user's contract, offline)."""

    def __init__(self, turns):
        self.turns, self.calls = list(turns), []

    def call(self, backbone, item, messages, **kw):
        self.calls.append((item, messages, kw))
        return item

    def run(self, calls, run_id, desc=None):
        return [{"status": "ok", "parsed": self.turns.pop(0)}]


@needs["telecom"]
def test_llm_user_calls_its_tools_and_sees_the_results():
    d = load_domain("telecom")
    t = d.tasks("small")[0]
    gw = _FakeGateway([{"message": "My data does not work", "stop": False, "tool_call": None},
                       {"message": None, "stop": False, "tool_call": {"name": "check_status_bar", "arguments": {}}},
                       {"message": "The status bar shows this", "stop": True, "tool_call": None}])  # fmt: skip
    user = LLMDomainUser(
        gw, "fake", d.user_instructions(t), "r", "t0", domain="telecom", tools=d.user_tool_specs(t)
    )

    class Asks:
        name = "asks"

        def reset(self, e):
            return None

        def step(self, messages, observation):
            return AgentStep(message="Please check your status bar.")

    env = d.environment(t)
    conv = run_conversation(env, Asks(), user, d.system_prompt(t))
    assert [(r.role, r.call.name) for r in conv.tools] == [("user", "check_status_bar")]
    assert conv.termination == "user_stop"
    last_prompt = gw.calls[-1][1]
    assert "Tool result (check_status_bar)" in last_prompt[-2]["content"] or any(
        "Tool result (check_status_bar)" in str(m["content"]) for m in last_prompt
    )
    assert "check_status_bar" in gw.calls[0][1][0]["content"]  # the user's tools are in its instructions


# ---- the task, through the CLI ---------------------------------------------------------------------------
AGENT = """
from shopbench.env import AgentStep


class Idle:
    name = "idle"

    def reset(self, episode_id):
        self.tools = getattr(self, "tools", None)

    def set_tools(self, specs):
        self.tools = [s["function"]["name"] for s in specs]

    def step(self, messages, observation):
        assert self.tools, "set_tools was called"
        return AgentStep(message="Sorry, I cannot help with that. Is there anything else?")
"""


def _cli(args, cwd, env):
    return run_cli(args, env["SHOPBENCH_OUTPUTS"], cwd=cwd, timeout=600, SHOPBENCH_PROGRESS="off")


@pytest.fixture
def work(tmp_path):
    import os

    (tmp_path / "idle_agent.py").write_text(AGENT, encoding="utf-8")
    env = {**os.environ, "SHOPBENCH_OUTPUTS": str(tmp_path / "out"), "SHOPBENCH_PROGRESS": "off",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # fmt: skip
    return tmp_path, env


@pytest.mark.parametrize("name", list(DOMAINS))
def test_tau2_agent_runs_a_users_agent_class_in_every_domain(name, work):
    if not (DATA / f"tau2_{name}").is_dir():
        pytest.skip(f"tau2_{name} absent")
    cwd, env = work
    r = _cli(
        ["eval", "tau2_agent", "-T", f"domain={name}", "--agent", "idle_agent:Idle", "--limit", "2"], cwd, env
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "tau2_agent · idle_agent:Idle: 2 samples" in r.stdout
    log = log_dir_of(r.stdout)
    rows = [json.loads(x) for x in (log / "episodes" / "epoch0.jsonl").read_text().splitlines()]
    assert [x["domain"] for x in rows] == [name, name] and all(x["unit_status"] == "ok" for x in rows)
    assert all(x["evidence"] in ("scripted-user", "known-answer") for x in rows)


def test_tau2_agent_bad_input_exits_2(work):
    cwd, env = work
    r = _cli(["eval", "tau2_agent", "-T", "domain=airlne", "--agent", "idle_agent:Idle"], cwd, env)
    assert r.returncode == 2 and "did you mean 'airline'" in r.stderr and "Traceback" not in r.stderr
    if (DATA / "tau2_telecom").is_dir():
        import shutil

        bad = cwd / "tel"
        shutil.copytree(DATA / "tau2_telecom", bad)
        (bad / "user_db.toml").unlink()
        r = _cli(
            ["eval", "tau2_agent", "-T", "domain=telecom", "-T", f"data={bad}", "--agent", "idle_agent:Idle"],
            cwd,
            env,
        )
        assert (
            r.returncode == 2
            and "user_db.toml: the file is missing" in r.stderr
            and "Traceback" not in r.stderr
        )


@needs["airline"]
def test_tau2_agent_runs_a_model_offline(work):
    cwd, env = work
    r = _cli(["eval", "tau2_agent", "-T", "domain=airline", "--model", "local/schema-sampler", "-T", "tool_mode=json",
              "--limit", "2"], cwd, env)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    assert "tau2_agent · local/schema-sampler: 2 samples" in r.stdout


PROBE = '''
from shopbench.core.conversation import ToolCall
from shopbench.env import AgentStep


class Probe:
    """Calls a retail tool with a wrong argument, then apologises."""

    name = "probe"

    def reset(self, episode_id):
        self.n = 0

    def step(self, messages, observation):
        self.n += 1
        if self.n == 1:
            return AgentStep(tool_calls=[ToolCall("find_user_id_by_email", {"mail": "x"}, "p1")])
        return AgentStep(message="Sorry, that did not work. Is there anything else I can help you with?")
'''


@needs["retail"]
def test_retail_in_tau2_agent_plays_as_tau2_retail_agent(work, monkeypatch):
    """Same agent class, same tasks: the same transcripts and rewards through either task."""
    import shopbench

    cwd, env = work
    (cwd / "probe.py").write_text(PROBE, encoding="utf-8")
    monkeypatch.chdir(cwd)
    monkeypatch.syspath_prepend(str(cwd))
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", env["SHOPBENCH_OUTPUTS"])
    a = shopbench.eval("tau2_agent", agent="probe:Probe", limit=3, domain="retail", split="test", progress=False,
                       n_boot=20).samples  # fmt: skip
    b = shopbench.eval("tau2_retail_agent", agent="probe:Probe", limit=3, split="test", progress=False,
                       n_boot=20).samples  # fmt: skip
    assert list(a["messages"]) == list(b["messages"]) and list(a["reward"]) == list(b["reward"])
    # the wrong argument is the tool's error text, which the agent saw
    assert all("got an unexpected keyword argument 'mail'" in m for m in a["messages"])


class _Busy(_BadUser):
    """Never stops calling its tools."""

    def respond(self, view):
        return UserTurn(message="", tool_calls=[ToolCall("check_status_bar", {})])

    def tool_results(self, outcomes):
        return self.respond(None)


@needs["telecom"]
def test_a_user_that_never_stops_calling_tools_is_a_user_error_at_the_ceiling():
    from shopbench.env.orchestrator import USER_TOOL_ROUNDS

    d = load_domain("telecom")
    t = d.tasks("small")[0]
    conv = run_conversation(d.environment(t), IdleAgent(), _Busy(), d.system_prompt(t))
    assert conv.termination == "user_error" and "user tool-round ceiling" in conv.errors["user"]
    assert len(conv.tools) == USER_TOOL_ROUNDS and all(r.role == "user" for r in conv.tools)


def test_tau2_agent_repeats_vary_one_source_and_print_pass_hat_k(work):
    """Issue 28 item 4 / issue 29 item 1: in any domain, ``-T vary=user --epochs 2`` re-seeds only the
    customer (agent seed held at 0), each row says its seeds, and eval prints pass^k and the split."""
    if not (DATA / "tau2_airline").is_dir():
        pytest.skip("tau2_airline absent")
    cwd, env = work
    r = _cli(["eval", "tau2_agent", "-T", "domain=airline", "--agent", "idle_agent:Idle", "--limit", "3",
              "-T", "vary=user", "--epochs", "2", "-T", "n_boot=50"], cwd, env)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    assert "pass^k (3 tasks)" in r.stdout and "repeats: -T vary=user" in r.stdout
    log = log_dir_of(r.stdout)
    rows = [json.loads(x) for x in (log / "episodes" / "epoch1.jsonl").read_text().splitlines()]
    assert {(x["agent_seed"], x["user_seed"], x["judge_seed"]) for x in rows} == {(0, 1, 0)}
    noise = json.loads((log / "metrics.json").read_text())["noise"]
    assert noise["varied"] == ["user"] and [p["k"] for p in noise["pass_hat_k"]] == [1, 2]
    bad = _cli(["eval", "tau2_agent", "-T", "domain=airline", "--agent", "idle_agent:Idle", "--limit", "1",
                "-T", "vary=agent:2,user:2", "--epochs", "3"], cwd, env)  # fmt: skip
    assert bad.returncode == 2 and "--epochs 4" in bad.stderr
