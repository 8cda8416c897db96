"""Issue 29 items 1 and 3: a seed per noise source across epochs (``-T vary``), recorded per sample row,
with the calls of a fixed source answered from the cache; pass^k and the variance split printed by
``shopbench eval … --epochs K`` and written to metrics.json; ``shopbench compare`` / ``shopbench.compare``
on two small logs; bad input is one message and exit 2. The guide's ``--epochs 4`` command is run as
written (docs/guides/agent.md)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from shopbench.errors import ParamError, UserError
from shopbench.tasks.repeats import parse_vary
from shopbench.testing.cli import call_rows, log_dir_of
from shopbench.testing.cli import run_cli as _run_cli

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guides" / "agent.md"
TAU2 = ROOT.parent / "shared" / "data" / "tau2_retail"
SAMPLER = ["--model", "local/schema-sampler", "-T", "tool_mode=compact", "-T", "n_boot=50", "--no-progress"]


def guide_epochs_blocks() -> tuple[str, str, list[str]]:
    """(the agent class, the --epochs command, the lines the guide shows it printing)."""
    text = GUIDE.read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    cmd = next(
        line.strip() for line in text.splitlines() if line.startswith("shopbench eval") and "--epochs" in line
    )
    shown = (
        re.search(r"prints, after the metrics above[^\n]*\n\n```\n(.*?)```", text, re.S).group(1).splitlines()
    )
    return code, cmd, shown


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("user")
    (d / "my_agent.py").write_text(guide_epochs_blocks()[0], encoding="utf-8")
    (d / "outputs").mkdir()
    return d


def run_cli(args, work, **env):
    return _run_cli(args, work / "outputs", cwd=work, **env)


# ---- the design -------------------------------------------------------------------------------------------
def test_vary_parses_joint_crossed_and_none():
    d = parse_vary("user", ("agent",))
    assert d.varied == ("user",) and [d.seeds(k) for k in (0, 2)] == [
        {"agent": 0, "user": 0, "judge": 0},
        {"agent": 0, "user": 2, "judge": 0},
    ]
    d = parse_vary("agent:2,user:3", ())
    d.check_epochs(6)
    assert [(s["agent"], s["user"]) for s in map(d.seeds, range(6))] == [
        (a, u) for a in range(2) for u in range(3)
    ]
    assert parse_vary(None, ("agent", "user")).seeds(3) == {"agent": 3, "user": 3, "judge": 0}
    assert parse_vary("none", ("agent",)).seeds(5) == {"agent": 0, "user": 0, "judge": 0}
    with pytest.raises(ParamError, match="--epochs 6"):
        d.check_epochs(4)
    for bad in ("agnet", "agent:2,user", "agent:0", "user,user", ","):
        with pytest.raises(ParamError):
            parse_vary(bad, ())


def _calls(d: Path, part: str) -> list[dict]:
    return [r for r in call_rows(d) if part in r["run_id"]]


def test_a_fixed_source_hits_the_cache_and_a_varied_one_draws_afresh(work):
    """vary=judge: the model agent is fixed, so epoch 1 asks it nothing new (same conversations, answered
    from epoch 0); the LLM judge asks again with repeat 1. vary=agent (sampling at T 0.7, seeded): the
    agent draws afresh; the judge, fixed, asks no call with repeat 1."""
    common = [*SAMPLER, "-T", "judge=local/schema-sampler", "--limit", "2", "--epochs", "2"]
    r = run_cli(["eval", "shop_agent", *common, "-T", "vary=judge"], work)
    assert r.returncode == 0, r.stderr
    d = log_dir_of(r.stdout)
    s = pd.read_parquet(d / "samples.parquet")
    assert (
        list(s["judge_seed"]) == [0, 0, 1, 1] and set(s["agent_seed"]) == {0} and set(s["user_seed"]) == {0}
    )
    agent, judge = _calls(d, "/agent/"), _calls(d, "/judge")
    assert agent and {c["repeat"] for c in agent} == {0}  # epoch 1's agent calls: answered from epoch 0
    e0 = s[s.epoch == 0].set_index("sample_id")
    e1 = s[s.epoch == 1].set_index("sample_id")
    assert (e0["tool_calls"] == e1["tool_calls"]).all()  # the same conversations
    assert {c["repeat"] for c in judge} == {0, 1}
    assert sum(c["repeat"] == 1 for c in judge) == sum(c["repeat"] == 0 for c in judge)

    r = run_cli(["eval", "shop_agent", *common, "-T", "vary=agent", "-T", "temperature=0.7"], work)
    assert r.returncode == 0, r.stderr
    d = log_dir_of(r.stdout)
    s = pd.read_parquet(d / "samples.parquet")
    assert list(s["agent_seed"]) == [0, 0, 1, 1] and set(s["judge_seed"]) == {0}
    agent = _calls(d, "/agent/")
    assert {c["repeat"] for c in agent} == {0, 1} and not any(
        c["cache_hit"] for c in agent if c["repeat"] == 1
    )
    assert {c["repeat"] for c in _calls(d, "/judge")} == {0}
    assert "repeats: -T vary=agent" in r.stdout


def test_bad_vary_is_one_message_and_exit_2(work):
    for args, needle in ((["-T", "vary=agent:2,user:2", "--epochs", "3"], "--epochs 4"),
                         (["-T", "vary=customer"], "not a source")):  # fmt: skip
        r = run_cli(["eval", "shop_agent", *SAMPLER, "--limit", "1", *args], work)
        assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


# ---- eval prints pass^k and the split; metrics.json holds them --------------------------------------------
@pytest.fixture(scope="module")
def guide_epochs(work):
    _, cmd, _ = guide_epochs_blocks()
    r = run_cli([*cmd.split()[1:], "--no-progress"], work)
    assert r.returncode == 0, r.stderr
    return r, log_dir_of(r.stdout)


def test_the_guide_epochs_command_prints_what_the_guide_shows(guide_epochs):
    r, d = guide_epochs
    _, _, shown = guide_epochs_blocks()
    lines = r.stdout.splitlines()
    i = lines.index(shown[0])
    assert lines[i : i + len(shown)] == shown
    noise = json.loads((d / "metrics.json").read_text())["noise"]
    s = pd.read_parquet(d / "samples.parquet")
    assert len(s) == 48 and set(s["user_seed"]) == {0, 1, 2, 3} and set(s["agent_seed"]) == {0}
    # pass^k from the rows, independently: mean over tasks of C(c, k) / C(4, k)
    from math import comb

    c = s.groupby("sample_id")["success"].sum().astype(int)
    for row in noise["pass_hat_k"]:
        k = row["k"]
        assert row["pass_hat_k"] == pytest.approx(sum(comb(x, k) / comb(4, k) for x in c) / len(c))
    comps = {x["component"]: x for x in noise["variance"]["success"]["components"]}
    assert comps["agent"]["varied"] is False and comps["judge"]["note"].startswith("rules judge")
    assert comps["task"]["share"] + comps["user"]["share"] == pytest.approx(1.0)


# ---- compare ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sampler_epochs(work):
    _, cmd, _ = guide_epochs_blocks()
    args = cmd.split()[1:]
    i = args.index("--agent")
    args[i : i + 2] = ["--model", "local/schema-sampler", "-T", "tool_mode=compact"]
    r = run_cli([*args, "--no-progress"], work)
    assert r.returncode == 0, r.stderr
    return log_dir_of(r.stdout)


def test_compare_two_logs_cli_and_python(guide_epochs, sampler_epochs, work):
    import shopbench

    _, a = guide_epochs
    r = run_cli(["compare", str(a), str(sampler_epochs)], work)
    assert r.returncode == 0, r.stderr
    assert "48 shared trials (matched on sample_id, epoch, agent_seed, user_seed, judge_seed)" in r.stdout
    c = shopbench.compare(a, sampler_epochs)
    t = c.table.set_index("metric")
    sa = pd.read_parquet(a / "samples.parquet").set_index(["sample_id", "epoch"])
    sb = pd.read_parquet(sampler_epochs / "samples.parquet").set_index(["sample_id", "epoch"])
    assert t.loc["success", "diff"] == pytest.approx((sa["success"] - sb["success"]).mean())
    assert t.loc["success", "n_pairs"] == 48 and t.loc["success", "n_tasks"] == 12
    assert t.loc["success", "ci_low"] < t.loc["success", "diff"] < t.loc["success", "ci_high"]
    line = next(x for x in r.stdout.splitlines() if x.strip().startswith("success "))
    assert (
        f"{t.loc['success', 'diff']:+.3f} [{t.loc['success', 'ci_low']:+.3f}, {t.loc['success', 'ci_high']:+.3f}]"
        in line
    )
    assert (
        f"a 5-point difference needs {int(t.loc['success', 'tasks_needed'])} samples × 4 repeats" in r.stdout
    )


def test_compare_bad_input_is_one_message_and_exit_2(guide_epochs, sampler_epochs, work, tmp_path):
    _, a = guide_epochs
    other = tmp_path / "other_task"
    shutil.copytree(sampler_epochs, other)
    run = json.loads((other / "run.json").read_text())
    (other / "run.json").write_text(json.dumps(run | {"task": "tau2_retail_agent"}))
    moved = tmp_path / "no_shared"
    shutil.copytree(sampler_epochs, moved)
    s = pd.read_parquet(moved / "samples.parquet")
    s.assign(sample_id="x-" + s["sample_id"]).to_parquet(moved / "samples.parquet", index=False)
    cases = (
        (other, "different tasks"),
        (moved, "share no scored sample"),
        (tmp_path / "nope", "no results log"),
    )
    for b, needle in cases:
        r = run_cli(["compare", str(a), str(b)], work)
        assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr
    import shopbench

    with pytest.raises(UserError, match="different tasks"):
        shopbench.compare(a, other)


@pytest.mark.skipif(not TAU2.is_dir(), reason=f"tau2-bench retail data absent ({TAU2})")
def test_tau2_records_seeds_and_prints_pass_k(work):
    (work / "transfers.py").write_text(
        "from shopbench.core.conversation import ToolCall\nfrom shopbench.env import AgentStep\n"
        "from shopbench.domains.tau2_retail import TRANSFER_MESSAGE\n\n"
        "class Transfers:\n    name = 'transfers'\n    def reset(self, episode_id):\n        pass\n"
        "    def step(self, messages, observation):\n        if messages[-1]['role'] == 'tool':\n"
        "            return AgentStep(message=TRANSFER_MESSAGE)\n"
        "        return AgentStep(tool_calls=[ToolCall('transfer_to_human_agents', {'summary': 'h'}, 't1')])\n"
    )
    r = run_cli(["eval", "tau2_retail_agent", "--agent", "transfers:Transfers", "--limit", "2", "--epochs", "3",
                 "-T", "vary=user", "-T", "n_boot=50", "--no-progress"], work)  # fmt: skip
    assert r.returncode == 0, r.stderr
    s = pd.read_parquet(log_dir_of(r.stdout) / "samples.parquet")
    assert list(s["user_seed"]) == [0, 0, 1, 1, 2, 2] and set(s["agent_seed"]) == {0} == set(s["judge_seed"])
    assert "pass^k (2 tasks): pass^1" in r.stdout and "variance split of success" in r.stdout
