"""The task layer and the ``shopbench`` command (issue 26 §1-3, "Bad input"): pace_judge and
padme_evaluator through the CLI in a subprocess and through ``shopbench.eval``, resumption without a
repeated call, the fake OpenAI server as a user-started server, and one-message errors with exit 2."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from shopbench.testing.cli import SHOPBENCH, call_rows, friendliness_pairs_file, log_dir_of
from shopbench.testing.cli import run_cli as _run_cli

ROOT = Path(__file__).resolve().parents[1]

RECORDED = ROOT.parent / "shared" / "data" / "tau_bench_airline_trajectories"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """One outputs tree for the module (the smoke PACEShop build is made once, ~10 s)."""
    return tmp_path_factory.mktemp("outputs")


def run_cli(args, outputs, timeout=300, **env):
    return _run_cli(args, outputs, timeout=timeout, **env)


# ---- pace_judge ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pace_run(outputs):
    r = run_cli(["eval", "pace_judge", "--model", "local/checks", "--limit", "5", "--no-progress",
                 "-T", "n_boot=200"], outputs)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r, log_dir_of(r.stdout)


def test_cli_pace_judge_writes_a_log_with_five_scored_samples(pace_run):
    r, d = pace_run
    samples = pd.read_parquet(d / "samples.parquet")
    assert len(samples) == 5 and samples["sample_id"].nunique() == 5 and set(samples["epoch"]) == {0}
    assert samples["verdict"].isin(["GOOD", "BAD"]).all() and samples["unit_status"].eq("ok").all()
    assert (samples["correct"] == (samples["verdict"] == samples["label"])).all()
    jsonl = [json.loads(x) for x in (d / "samples.jsonl").read_text().splitlines()]
    assert [x["sample_id"] for x in jsonl] == list(samples["sample_id"])
    m = json.loads((d / "metrics.json").read_text())
    assert m["units"] == {"total": 5, "ok": 5, "parse_error": 0, "error": 0}
    ff = m["headline"]["false_fire"]
    assert ff["ci_low"] <= ff["estimate"] <= ff["ci_high"]
    assert set(m["headline"]) >= {
        "S0",
        "S1_P_source",
        "S4_family",
        "false_fire",
        "PACE_avg",
        "S1_PJC",
        "PACE",
    }
    assert "by_kind" in m["parse_failures"]
    run = json.loads((d / "run.json").read_text())
    assert run["task"] == "pace_judge" and run["model"] == "local/checks" and run["status"] == "complete"
    assert set(run["prompts"]) == {"judge_pacejudge"} and len(run["prompts"]["judge_pacejudge"]) == 64
    assert run["params"]["protocol"] == "pacejudge" and run["limit"] == 5 and run["git_commit"]
    assert len(call_rows(d)) == 5
    assert "false_fire" in r.stdout and "ok 5" in r.stdout


def test_rerun_makes_no_call_and_gives_the_same_metrics(pace_run, outputs):
    r, d = pace_run
    before = call_rows(d)
    m1 = json.loads((d / "metrics.json").read_text())
    r2 = run_cli(["eval", "pace_judge", "--model", "local/checks", "--limit", "5", "--no-progress",
                  "-T", "n_boot=200"], outputs)  # fmt: skip
    assert r2.returncode == 0, r2.stderr
    assert log_dir_of(r2.stdout) == d
    assert len(call_rows(d)) == len(before)  # no row appended: every item came from the log
    assert json.loads((d / "metrics.json").read_text()) == m1
    assert json.loads((d / "run.json").read_text())["gateway"]["calls"] == 0


def test_python_api_returns_the_cli_metrics(pace_run, outputs, monkeypatch):
    import shopbench

    r, d = pace_run
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(outputs))
    res = shopbench.eval("pace_judge", model="local/checks", limit=5, progress=False, n_boot=200)
    assert isinstance(res.samples, pd.DataFrame) and len(res.samples) == 5
    assert res.log_dir == d
    cli = json.loads((d / "metrics.json").read_text())
    assert json.loads(json.dumps(res.metrics)) == cli


def judged(srv) -> list[dict]:
    """The requests of the sweep itself (the preflight's own calls left out)."""
    from shopbench.testing.fake_openai import is_preflight

    return [b for b in srv.bodies if not is_preflight(b)]


def test_kill_9_then_rerun_repeats_no_call(outputs, tmp_path):
    """A run killed (SIGKILL) mid-sweep resumes: across both runs the server is asked each call once."""
    from shopbench.judges.pace.deterministic import checks_judge
    from shopbench.testing.fake_openai import FakeOpenAIServer, answering_preflight

    log = tmp_path / "log"
    script = answering_preflight(lambda body: {"content": checks_judge(body["messages"], body)})
    with FakeOpenAIServer(script=script, latency_s=0.25) as srv:
        args = ["eval", "pace_judge", "--model", "openai/slow", "--model-base-url", srv.api_base, "--limit", "40",
                "--log-dir", str(log), "-T", "n_boot=0", "--no-progress"]  # fmt: skip
        env = {**os.environ, "SHOPBENCH_OUTPUTS": str(outputs), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        p = subprocess.Popen(
            [*SHOPBENCH, *args], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.time() + 120
        while time.time() < deadline and p.poll() is None and len(judged(srv)) < 10:
            time.sleep(0.02)
        p.kill()  # SIGKILL: no cleanup
        p.communicate()
        killed_after = len(judged(srv))
        assert 0 < killed_after < 40, "the kill came too late to test resumption"
        r = run_cli(args, outputs)
        assert r.returncode == 0, r.stderr
        asked = [json.dumps(b["messages"], sort_keys=True) for b in judged(srv)]
    # the rerun asked only what the killed run had not finished: a call answered before the kill is never
    # asked again; only those in flight at the kill (at most the gateway's 8 concurrent calls) are
    again = len(asked) - len(set(asked))
    assert len(set(asked)) == 40 and again <= 8, (len(asked), again)
    rows = call_rows(log)
    assert len({row["item_id"] for row in rows}) == len(rows) == 40
    assert len(pd.read_parquet(log / "samples.parquet")) == 40


def test_fake_openai_server_as_a_user_started_server(outputs):
    """`--model openai/x --model-base-url` goes over the wire to a server; here the project's fake server,
    answering every judge prompt with local/checks' own answer, so the metrics must equal local/checks'."""
    from shopbench.judges.pace.deterministic import checks_judge
    from shopbench.testing.fake_openai import FakeOpenAIServer, answering_preflight

    def script(body):
        return {"content": checks_judge(body["messages"], body)}

    with FakeOpenAIServer(script=answering_preflight(script)) as srv:
        r = run_cli(["eval", "pace_judge", "--model", "openai/x", "--model-base-url", srv.api_base, "--limit", "5",
                     "--no-progress", "-T", "n_boot=200"], outputs)  # fmt: skip
        assert r.returncode == 0, r.stderr
        n_requests = len(judged(srv))
    d = log_dir_of(r.stdout)
    assert n_requests == 5 and len(call_rows(d)) == 5
    assert all(row["model"] == "openai/x" and not row["cache_hit"] for row in call_rows(d))
    local = run_cli(["eval", "pace_judge", "--model", "local/checks", "--limit", "5", "--no-progress",
                     "-T", "n_boot=200"], outputs)  # fmt: skip
    ours = json.loads((d / "metrics.json").read_text())["headline"]
    theirs = json.loads((log_dir_of(local.stdout) / "metrics.json").read_text())["headline"]
    assert ours == theirs
    # the kind of evidence is written beside the numbers: a model behind a server sees only its prompt
    assert json.loads((d / "metrics.json").read_text())["evidence"]["kind"] == "measured"
    oracle = run_cli(["eval", "pace_judge", "--model", "local/oracle-rules", "--limit", "3", "--no-progress",
                      "-T", "n_boot=0"], outputs)  # fmt: skip
    assert oracle.returncode == 0, oracle.stderr
    ev = json.loads((log_dir_of(oracle.stdout) / "metrics.json").read_text())["evidence"]
    assert ev["kind"] == "known-answer", ev  # reads the gold: a check of the machinery, not a finding


def test_a_server_answering_garbage_is_no_score_and_exit_3(outputs):
    from shopbench.testing.fake_openai import FakeOpenAIServer, answering_preflight

    with FakeOpenAIServer(script=answering_preflight(lambda body: {"content": "not json"})) as srv:
        r = run_cli(["eval", "pace_judge", "--model", "openai/y", "--model-base-url", srv.api_base, "--limit", "3",
                     "--no-progress", "-T", "n_boot=0"], outputs)  # fmt: skip
    assert r.returncode == 3 and "Traceback" not in r.stderr
    assert "no usable answer: all 3 units failed" in r.stderr and "3 × invalid JSON" in r.stderr


# ---- padme_evaluator -------------------------------------------------------------------------------
def test_padme_evaluator_on_a_pairs_file_cli_and_api_agree(outputs, tmp_path, monkeypatch):
    import shopbench

    f = friendliness_pairs_file(tmp_path / "pairs")
    r = run_cli(["eval", "padme_evaluator", "--model", "local/schema-sampler", "-T", f"pairs={f}", "--epochs", "2",
                 "--no-progress", "-T", "n_boot=100"], outputs)  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = log_dir_of(r.stdout)
    s = pd.read_parquet(d / "samples.parquet")
    assert len(s) == 8 and set(s["epoch"]) == {0, 1} and s["sample_id"].nunique() == 4
    assert len(call_rows(d)) == 16  # 8 trajectories x 2 epochs
    m = json.loads((d / "metrics.json").read_text())
    acc = m["headline"]["accuracy"]
    assert acc["ci_low"] <= acc["estimate"] <= acc["ci_high"] and m["n_pairs"] == 4 and m["n_epochs"] == 2
    assert acc["estimate"] == pytest.approx(s["correct"].mean())
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(outputs))
    res = shopbench.eval("padme_evaluator", model="local/schema-sampler", pairs=str(f), epochs=2, progress=False,
                         n_boot=100)  # fmt: skip
    assert json.loads(json.dumps(res.metrics)) == m


def test_a_changed_evaluator_prompt_is_checked_and_hashed(outputs, tmp_path):
    f = friendliness_pairs_file(tmp_path / "pairs")
    bad = tmp_path / "bad_prompt.txt"
    bad.write_text("# my prompt\n\nRate {response} on {criterion_name}.\n")
    r = run_cli(["eval", "padme_evaluator", "--model", "local/schema-sampler", "-T", f"pairs={f}",
                 "-T", f"prompt={bad}"], outputs)  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert str(bad) in r.stderr and "{criterion_description}" in r.stderr and "{prompt}" in r.stderr
    good = tmp_path / "my_evaluator.txt"
    good.write_text("Criterion {criterion_name}: {criterion_description}\nDocs: {prompt}\nConversation:\n{response}\n"
                    'Answer JSON {{"reasoning": "...", "score": 0.5}}.\n')  # fmt: skip
    r = run_cli(["eval", "padme_evaluator", "--model", "local/schema-sampler", "-T", f"pairs={f}",
                 "-T", f"prompt={good}", "--no-progress", "-T", "n_boot=0"], outputs)  # fmt: skip
    assert r.returncode == 0, r.stderr
    run = json.loads((log_dir_of(r.stdout) / "run.json").read_text())
    import hashlib

    assert run["prompts"] == {"my_evaluator": hashlib.sha256(good.read_bytes()).hexdigest()}
    sent = call_rows(log_dir_of(r.stdout))
    assert sent and all(row["status"] in ("ok", "parse_error") for row in sent)


@pytest.mark.skipif(not RECORDED.exists(), reason=f"recorded tau-bench conversations not at {RECORDED}")
def test_padme_evaluator_on_recorded_reward_pairs(outputs):
    r = run_cli(["eval", "padme_evaluator", "--model", "local/schema-sampler", "-T", f"recorded={RECORDED}",
                 "--limit", "6", "--no-progress", "-T", "n_boot=100"], outputs)  # fmt: skip
    assert r.returncode == 0, r.stderr
    m = json.loads((log_dir_of(r.stdout) / "metrics.json").read_text())
    assert m["n_pairs"] == 6 and m["label"] == "environment reward" and "tasks" in m["ci"]


# ---- list, help, preview ---------------------------------------------------------------------------
def test_help_and_list_answer_fast_and_show_the_tasks(outputs):
    def cpu_s() -> float:  # CPU time of the finished children: what the command costs, not how busy the
        c = resource.getrusage(resource.RUSAGE_CHILDREN)  # machine is (the other xdist worker, issue 27)
        return c.ru_utime + c.ru_stime

    for args in (["--help"], ["list"]):
        t0, c0 = time.perf_counter(), cpu_s()
        r = run_cli(args, outputs)
        took, cpu = time.perf_counter() - t0, cpu_s() - c0
        assert r.returncode == 0, r.stderr
        # the goal is 1 s; on an idle machine both take ~0.1 s of CPU (heavy imports would take seconds)
        assert cpu < 1.0, f"shopbench {args} used {cpu:.2f} s of CPU"
        assert took < 10.0, f"shopbench {args} took {took:.2f} s"  # a hang or a sleep, even when busy
    assert "pace_judge" in r.stdout and "padme_evaluator" in r.stdout and "protocol" in r.stdout
    assert "llamacpp/smollm2-135m-instruct" in r.stdout
    code = "import sys, shopbench.cli as c; c.main(['list']); print(sorted(m for m in ('pandas', 'litellm') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert out.strip().endswith("[]")


def test_a_local_eval_imports_no_provider_library(pace_run, outputs, tmp_path):
    """Issue 26, Speed: one ``local/`` sample end to end, its model check and contract check included
    (a fresh cache, so the call is made), imports neither litellm nor jsonschema nor aiohttp."""
    code = (
        "import sys, shopbench.cli as c; c.main(['eval', 'pace_judge', '--model', 'local/checks', '--limit', '1',"
        f" '--no-progress', '--log-dir', {str(tmp_path / 'log')!r}]);"
        " print(sorted(m for m in ('litellm', 'jsonschema', 'aiohttp') if m in sys.modules))"
    )
    env = {**os.environ, "SHOPBENCH_OUTPUTS": str(outputs), "SHOPBENCH_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    assert "1 scored rows (ok 1" in r.stdout and r.stdout.strip().endswith("[]"), r.stdout
    assert len(call_rows(tmp_path / "log")) == 1  # the call was made, not served from a cache


def test_protocol_choices_are_the_registered_protocols():
    from shopbench.judges.pace.protocols import PROTOCOLS
    from shopbench.tasks.pace_judge import PROTOCOL_NAMES

    assert set(PROTOCOL_NAMES) == set(PROTOCOLS)


def test_preview_counts_calls_and_makes_none(pace_run, outputs):
    r, d = pace_run
    p = run_cli(
        ["preview", "pace_judge", "--model", "local/checks", "--limit", "5", "-T", "n_boot=200"], outputs
    )
    assert p.returncode == 0, p.stderr
    assert "calls: 5 (5 in the cache or the run's log, 0 to make)" in p.stdout
    p = run_cli(["preview", "pace_judge", "--model", "openai/gpt-4o-mini", "--limit", "7"], outputs,
                OPENAI_API_KEY="")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "calls: 7 (0 in the cache or the run's log, 7 to make)" in p.stdout and "cost: ≤ $0.0" in p.stdout


# ---- bad input: one message, exit 2, no traceback ------------------------------------------------------
@pytest.mark.parametrize(("args", "needle"), [
    (["eval", "pace_jugde", "--model", "local/checks"], "did you mean 'pace_judge'"),
    (["eval", "pace_judge", "--model", "local/checks", "-T", "protocl=ares"], "did you mean 'protocol'"),
    (["eval", "pace_judge", "--model", "local/checks", "-T", "protocol=pacejudg"], "did you mean 'pacejudge'"),
    (["eval", "pace_judge", "--model", "local/checks", "-T", "n_boot=many"], "n_boot='many' is not an integer"),
    (["eval", "pace_judge", "--model", "local/checks", "-T", "n_boot"], "is not key=value"),
    (["eval", "pace_judge", "--model", "local/chekcs"], "local/chekcs"),
    (["eval", "pace_judge", "--model", "openai/x", "--model-base-url", "http://127.0.0.1:9/v1"], "cannot be reached"),
    (["eval", "padme_evaluator", "--model", "local/schema-sampler", "-T", "pairs=/nonexistent/pairs.jsonl"],
     "/nonexistent/pairs.jsonl"),
    (["eval", "pace_judge", "--model", "local/checks", "--limit", "0"], "--limit 0"),
    (["eval", "pace_judge"], "--model"),
])  # fmt: skip
def test_bad_input_is_one_message_and_exit_2(args, needle, outputs):
    r = run_cli(args, outputs)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert len([x for x in r.stderr.splitlines() if x.startswith("error:")]) == 1


def test_a_bad_jsonl_line_names_file_line_and_field(outputs, tmp_path):
    recs = tmp_path / "records.jsonl"
    recs.write_text('{"record_id": "r1", "label": "GOOD"}\n')
    r = run_cli(["eval", "pace_judge", "--model", "local/checks", "-T", f"records={recs}"], outputs)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert str(recs) in r.stderr and "line 1" in r.stderr and "field" in r.stderr
    f = friendliness_pairs_file(tmp_path / "pairs")
    lines = f.read_text().splitlines()
    f.write_text(lines[0] + "\n" + lines[1].replace('"worse"', '"wrose"') + "\n")
    r = run_cli(["eval", "padme_evaluator", "--model", "local/schema-sampler", "-T", f"pairs={f}"], outputs)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{f}, line 2: field 'worse'" in r.stderr and "shopbench schema padme-pair" in r.stderr
