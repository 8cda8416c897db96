"""``shopbench score`` on agent-task logs (issue 30 item 2): a ``shop_agent`` log's recorded trajectories
scored by another judge with no call to the agent or the customer simulator, and a ``padme_evaluator``
log's very pairs scored by another evaluator without calling the logged one; each new log names its source.
Offline backends only (``local/schema-sampler``, ``local/echo``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shopbench.testing.cli import call_rows, friendliness_pairs_file, log_dir_of, run_cli


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    return tmp_path_factory.mktemp("outputs")


@pytest.fixture(scope="module")
def shop_run(outputs):
    """shop_agent: a tool-calling model (local/schema-sampler, compact tools), the deterministic judge."""
    r = run_cli(["eval", "shop_agent", "--model", "local/schema-sampler", "-T", "tool_mode=compact",
                 "-T", "max_tokens=200", "--limit", "2", "--no-progress", "-T", "n_boot=50"], outputs)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return log_dir_of(r.stdout)


def _origin(d: Path) -> dict:
    head = json.loads((d / "inspect.jsonl").read_text().splitlines()[0])["header"]
    return head["eval"]["metadata"]["rescored_from"]


def test_shop_agent_trajectories_judged_by_another_judge_without_the_agent(shop_run, tmp_path):
    before = call_rows(shop_run)
    assert before and {c["model"] for c in before} == {"local/schema-sampler"}  # the agent was asked
    out = tmp_path / "rejudged"
    r = run_cli(["score", str(shop_run), "--judge", "local/echo", "--out", str(out)], tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert "the agent and the customer simulator are not called" in r.stdout.splitlines()[0]
    rows = call_rows(out)
    # only the judge was asked: its model, its run; not one agent (or customer) call
    assert rows and {c["model"] for c in rows} == {"local/echo"}
    assert all(c["run_id"].endswith("/judge") for c in rows)
    assert call_rows(shop_run) == before  # the source run's call log is untouched
    m = json.loads((out / "metrics.json").read_text())
    assert m["judge"] == "llm:local/echo" and m["units"]["total"] == 2
    run = json.loads((out / "run.json").read_text())
    assert run["rescored_from"]["model"] == "local/schema-sampler" and run["rescore"]["judge"] == "local/echo"
    assert _origin(out)["log"] == str((shop_run / "inspect.jsonl").resolve())


def test_shop_agent_rescored_by_its_own_judge_gives_its_metrics(shop_run, tmp_path):
    """The same (deterministic) judge on the stored trajectories: the task's metrics to the last digit, and
    no model call at all: the trajectories are read, not played."""
    out = tmp_path / "same"
    r = run_cli(["score", str(shop_run), "--judge", "deterministic", "--out", str(out)], tmp_path / "o")
    assert r.returncode == 0, r.stderr
    a = json.loads((shop_run / "metrics.json").read_text())
    b = json.loads((out / "metrics.json").read_text())
    assert a["headline"] == b["headline"] and a["battery"] == b["battery"]
    assert not call_rows(out)


def test_shop_agent_log_without_its_trajectories_is_one_message(shop_run, tmp_path):
    src = tmp_path / "moved"
    src.mkdir()
    (src / "inspect.jsonl").write_bytes((shop_run / "inspect.jsonl").read_bytes())
    dest = tmp_path / "out"
    r = run_cli(["score", str(src), "--judge", "local/echo", "--out", str(dest)], tmp_path / "o")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "no recorded trajectory" in lines[0] and "Fix:" in lines[0]
    assert not dest.exists()


def test_padme_evaluator_pairs_judged_by_another_evaluator(outputs, tmp_path):
    f = friendliness_pairs_file(tmp_path / "pairs")
    r = run_cli(["eval", "padme_evaluator", "--model", "local/schema-sampler", "-T", f"pairs={f}", "--epochs", "2",
                 "--limit", "3", "--no-progress", "-T", "n_boot=50"], outputs)  # fmt: skip
    assert r.returncode == 0, r.stderr
    src = log_dir_of(r.stdout)
    before = call_rows(src)
    out = tmp_path / "rejudged"
    r = run_cli(["score", str(src), "--judge", "local/echo", "--out", str(out)], outputs)
    assert r.returncode == 0, r.stderr
    assert "the logged evaluator local/schema-sampler is not called" in r.stdout.splitlines()[0]
    rows = call_rows(out)
    assert rows and {c["model"] for c in rows} == {"local/echo"}
    assert call_rows(src) == before
    old = [json.loads(x)["sample"] for x in (src / "inspect.jsonl").read_text().splitlines()[1:]]
    new = [json.loads(x)["sample"] for x in (out / "inspect.jsonl").read_text().splitlines()[1:]]
    assert sorted((x["id"], x["epoch"]) for x in new) == sorted((x["id"], x["epoch"]) for x in old)
    assert len(new) == 6  # the log's 3 pairs x 2 epochs
    run = json.loads((out / "run.json").read_text())
    assert run["model"] == "local/echo" and run["rescored_from"]["model"] == "local/schema-sampler"
    assert _origin(out)["sha256"] == run["rescored_from"]["sha256"]


def test_a_log_of_an_unsupported_task_is_one_message(shop_run, tmp_path):
    text = (shop_run / "inspect.jsonl").read_text()
    first, rest = text.split("\n", 1)
    h = json.loads(first)
    h["header"]["eval"]["task"] = h["header"]["eval"]["task_registry_name"] = "shopbench/tau2_retail_agent"
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(h) + "\n" + rest)
    dest = tmp_path / "out"
    r = run_cli(["score", str(other), "--judge", "local/echo", "--out", str(dest)], tmp_path / "o")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "task shopbench/tau2_retail_agent" in lines[0] and "Fix:" in lines[0]
    assert "Traceback" not in r.stderr and not dest.exists() and not (tmp_path / "o").exists()
