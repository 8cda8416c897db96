"""inspect_ai interop and re-scoring (issue 30 items 1-2): the inspect log every task run writes, the
``inspect`` extra's ``.eval`` (read_eval_log, samples_df), ``inspect eval shopbench/pace_judge``, ``shopbench
score`` with no call to the subject, ``shopbench logs convert``, bad logs (exit 2, nothing written), and no
secret in any written log. Tests that need inspect-ai skip with the reason when the extra is absent
(``make env`` installs it)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from shopbench.interop.inspect_log import has_inspect
from shopbench.testing.cli import call_rows, log_dir_of, run_cli

needs_inspect = pytest.mark.skipif(
    not has_inspect(),
    reason="inspect-ai is not installed: pip install -e '.[inspect]' (make env installs it)",
)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    return tmp_path_factory.mktemp("outputs")


def portable(d: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(x) for x in (d / "inspect.jsonl").read_text().splitlines()]
    return lines[0]["header"], [x["sample"] for x in lines[1:]]


@pytest.fixture(scope="module")
def judge_run(outputs):
    """pace_judge with the L1 checks judge: 6 records x 2 epochs."""
    r = run_cli(["eval", "pace_judge", "--model", "local/checks", "--limit", "6", "--epochs", "2", "--no-progress",
                 "-T", "n_boot=200"], outputs)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return log_dir_of(r.stdout)


# ---- item 1: the log of every run -----------------------------------------------------------------
def test_a_run_writes_its_inspect_log_one_sample_per_item_and_epoch(judge_run):
    head, samples = portable(judge_run)
    rows = pd.read_parquet(judge_run / "samples.parquet")
    metrics = json.loads((judge_run / "metrics.json").read_text())
    run = json.loads((judge_run / "run.json").read_text())
    assert head["eval"]["task"] == "shopbench/pace_judge" and head["eval"]["model"] == "local/checks"
    assert len(samples) == len(rows) == 12 and {s["epoch"] for s in samples} == {1, 2}
    assert head["results"]["metadata"]["metrics"]["headline"] == metrics["headline"]
    assert head["eval"]["metadata"]["shopbench"]["gateway_run_id"] == run["gateway_run_id"]
    assert head["eval"]["revision"]["commit"] == run["git_commit"]
    ff = next(s for s in head["results"]["scores"] if s["name"] == "false_fire")
    assert ff["metrics"]["estimate"]["value"] == metrics["headline"]["false_fire"]["estimate"]
    hashes = {(c["item_id"], c["repeat"]): c["prompt_hash"] for c in call_rows(judge_run)}
    for s, (_, r) in zip(samples, rows.iterrows(), strict=True):
        assert (s["id"], s["epoch"]) == (r.sample_id, r.epoch + 1)
        assert s["scores"]["correct"]["value"] == (1.0 if r.correct else 0.0)
        assert (
            s["scores"]["correct"]["answer"] == r.verdict
            and f"gold {r.label}" in s["scores"]["correct"]["explanation"]
        )
        assert s["target"] == r.label and s["output"]["completion"] == r.raw_output
        md = s["metadata"]
        for k in ("record_id", "tier", "base_record_id", "swap_axis", "gold_family", "kind", "split"):
            assert md[k] == (None if pd.isna(r[k]) else r[k]), k
        assert md["seed"] == 0 and md["prompt_hash"] == hashes[(r.item_id, r.epoch)]
        # the input is the prompt the judge was sent: its hash is the call log's
        msgs = [{"role": m["role"], "content": m["content"]} for m in s["input"]]
        canon = json.dumps(msgs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert hashlib.sha256(canon.encode()).hexdigest()[:16] == md["prompt_hash"]
        assert s["messages"][-1] == {"role": "assistant", "content": r.raw_output, "model": "local/checks",
                                     "source": "generate"}  # fmt: skip


@needs_inspect
def test_the_eval_log_opens_with_read_eval_log_and_samples_df(judge_run):
    from inspect_ai.analysis import samples_df
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(judge_run / "inspect.eval"))
    rows = pd.read_parquet(judge_run / "samples.parquet")
    assert log.status == "success" and log.eval.task == "shopbench/pace_judge" and len(log.samples) == 12
    assert [s.scores["correct"].value for s in log.samples] == [1.0 if c else 0.0 for c in rows["correct"]]
    df = samples_df(str(judge_run / "inspect.eval"))
    assert len(df) == 12 and list(df["metadata_record_id"]) == list(rows["record_id"])
    assert list(df["score_correct"].astype(float)) == [1.0 if c else 0.0 for c in rows["correct"]]


@needs_inspect
def test_logs_convert_makes_the_eval_file_from_the_jsonl(judge_run, tmp_path):
    from inspect_ai.log import read_eval_log

    d = tmp_path / "run"
    d.mkdir()
    shutil.copy(judge_run / "inspect.jsonl", d / "inspect.jsonl")
    r = run_cli(["logs", "convert", str(d)], tmp_path / "o")
    assert r.returncode == 0, r.stderr
    a, b = read_eval_log(str(d / "inspect.eval")), read_eval_log(str(judge_run / "inspect.eval"))
    assert [(s.id, s.epoch, s.scores) for s in a.samples] == [(s.id, s.epoch, s.scores) for s in b.samples]


def test_without_the_extra_only_the_jsonl_is_written(judge_run, tmp_path, monkeypatch):
    from shopbench.interop import inspect_log

    monkeypatch.setattr(inspect_log, "has_inspect", lambda: False)
    log, _ = inspect_log.load(judge_run / "inspect.jsonl")
    assert [p.name for p in inspect_log.write(log, tmp_path)] == ["inspect.jsonl"]
    assert not (tmp_path / "inspect.eval").exists()
    r = subprocess.run([sys.executable, "-c", "import sys; sys.modules['inspect_ai'] = None\n"
                        "from shopbench.cli import main; raise SystemExit(main(['logs', 'convert', sys.argv[1]]))",
                        str(tmp_path)], capture_output=True, text=True)  # fmt: skip
    # inspect_ai blocked (as when the extra is absent): one message naming the fix, exit 2, nothing written
    assert r.returncode == 2 and "pip install -e '.[inspect]'" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "inspect.eval").exists()


# ---- item 1: the task inside inspect's harness -------------------------------------------------------
@needs_inspect
def test_inspect_eval_runs_shopbench_pace_judge(outputs, tmp_path):
    from inspect_ai.log import read_eval_log

    env = {**os.environ, "SHOPBENCH_OUTPUTS": str(outputs), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    inspect = Path(sys.executable).with_name("inspect")
    r = subprocess.run([str(inspect), "eval", "shopbench/pace_judge", "--model", "mockllm/model", "--limit", "2",
                        "--log-dir", str(tmp_path), "--display", "none"], capture_output=True, text=True, env=env,
                       timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    (f,) = tmp_path.glob("*.eval")
    log = read_eval_log(str(f))
    assert log.status == "success" and log.eval.task_registry_name == "shopbench/pace_judge"
    assert len(log.samples) == 2 and all("pace_judgment" in s.scores for s in log.samples)
    # mockllm's fixed text is not the judge's JSON contract: the workbench's parser says so, per sample
    assert all("parse failure (invalid_json)" in s.scores["pace_judgment"].explanation for s in log.samples)
    m = log.results.scores[0].metrics
    assert m["parse_failure_rate"].value == 1.0 and m["accuracy"].value == 0.0


@needs_inspect
def test_inspect_harness_gives_the_workbench_metrics(outputs, monkeypatch):
    """The same outputs scored in inspect's harness and by shopbench eval: same verdicts, same numbers."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    import shopbench
    from shopbench._inspect_registry import pace_judge

    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(outputs))
    res = shopbench.eval(
        "pace_judge", "local/checks", limit=16, log_dir=outputs / "ref16", progress=False, n_boot=0
    )
    task = pace_judge()
    ids = [s.id for s in task.dataset][:16]
    assert ids == list(res.samples["sample_id"])  # inspect's --limit keeps the same records
    by = dict(zip(res.samples["sample_id"], res.samples["raw_output"], strict=True))
    model = get_model(
        "mockllm/model", custom_outputs=[ModelOutput.from_content("mockllm/model", by[i]) for i in ids]
    )
    (log,) = inspect_eval(
        task, model=model, limit=16, max_samples=1, log_dir=str(outputs / "ilog"), display="none"
    )
    verdicts = dict(zip(res.samples["sample_id"], res.samples["verdict"], strict=True))
    assert {s.id: s.scores["pace_judgment"].answer for s in log.samples} == verdicts
    m = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert m["accuracy"] == pytest.approx(res.metrics["verdict_accuracy"])
    for k in ("S2_detect", "S4_family", "false_fire", "PACE"):
        want = res.metrics["headline"][k]["estimate"]
        assert (m[k] != m[k]) if want is None else m[k] == pytest.approx(want), k


# ---- item 2: shopbench score -----------------------------------------------------------------------
def test_score_reparses_a_judge_log_with_no_call(judge_run, tmp_path):
    out = tmp_path / "same"
    r = run_cli(["score", str(judge_run), "--out", str(out)], tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert r.stdout.index("0 model calls") < r.stdout.index("log: ")  # the cost preview comes first
    a = json.loads((judge_run / "metrics.json").read_text())
    b = json.loads((out / "metrics.json").read_text())
    assert b["headline"] == a["headline"] and b["units"] == a["units"]  # same contract: the same numbers
    assert not (out / "calls").exists() or not call_rows(out)  # no model was asked anything
    head, samples = portable(out)
    origin = head["eval"]["metadata"]["rescored_from"]
    assert origin["log"] == str((judge_run / "inspect.jsonl").resolve())
    assert origin["sha256"] == hashlib.sha256((judge_run / "inspect.jsonl").read_bytes()).hexdigest()
    assert json.loads((out / "run.json").read_text())["rescored_from"] == origin and len(samples) == 12


def test_score_under_a_changed_contract(judge_run, tmp_path):
    out = tmp_path / "etapp"
    before = call_rows(judge_run)
    r = run_cli(["score", str(judge_run), "-T", "protocol=etapp", "--out", str(out)], tmp_path / "o")
    assert r.returncode == 0, r.stderr
    m = json.loads((out / "metrics.json").read_text())
    # etapp's contract differs from pacejudge's: every recorded output fails it, by kind
    assert m["protocol"] == "etapp" and m["units"]["parse_error"] == 12 and m["units"]["ok"] == 0
    assert sum(m["parse_failures"]["by_kind"].values()) == 12
    _, samples = portable(out)
    assert all(s["scores"]["correct"]["explanation"].startswith("parse failure") for s in samples)
    assert call_rows(judge_run) == before and not (out / "calls").exists()


def test_score_rejudges_assistant_outputs_without_calling_the_assistant(outputs, tmp_path):
    r = run_cli(["eval", "pace_assistant", "--model", "local/schema-sampler", "--limit", "3", "--no-progress",
                 "-T", "n_boot=50"], outputs)  # fmt: skip
    assert r.returncode == 0, r.stderr
    src = log_dir_of(r.stdout)
    before = call_rows(src)
    out = tmp_path / "rejudged"
    r = run_cli(["score", str(src), "--judge", "local/oracle-rules", "--out", str(out)], outputs)
    assert r.returncode == 0, r.stderr
    assert "the assistant is not called" in r.stdout.splitlines()[0] and "calls" in r.stdout.splitlines()[0]
    rows = call_rows(out)
    assert rows and {c["model"] for c in rows} == {"local/oracle-rules"}  # only the other judge was asked
    assert call_rows(src) == before  # and the original run's log is untouched
    run = json.loads((out / "run.json").read_text())
    assert (
        run["rescored_from"]["model"] == "local/schema-sampler"
        and run["rescore"]["judge"] == "local/oracle-rules"
    )
    m = json.loads((out / "metrics.json").read_text())
    assert m["judge"]["model"] == "local/oracle-rules"
    head, _ = portable(out)
    assert head["eval"]["metadata"]["rescored_from"]["sha256"] == run["rescored_from"]["sha256"]


@needs_inspect
def test_score_accepts_a_log_inspect_wrote(outputs, tmp_path):
    env = {**os.environ, "SHOPBENCH_OUTPUTS": str(outputs), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    inspect = Path(sys.executable).with_name("inspect")
    r = subprocess.run([str(inspect), "eval", "shopbench/pace_judge", "--model", "mockllm/model", "--limit", "3",
                        "--log-dir", str(tmp_path / "il"), "--display", "none"], capture_output=True, text=True,
                       env=env, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    (f,) = (tmp_path / "il").glob("*.eval")
    r = run_cli(["score", str(f), "--out", str(tmp_path / "rs")], outputs)
    assert r.returncode == 0, r.stderr
    m = json.loads((tmp_path / "rs" / "metrics.json").read_text())
    assert m["units"] == {"total": 3, "ok": 0, "parse_error": 3, "error": 0}
    head, _ = portable(tmp_path / "rs")
    assert head["eval"]["metadata"]["rescored_from"]["log"] == str(f.resolve())


# ---- bad logs: one message, exit 2, nothing written ---------------------------------------------------
def _bad_logs(judge_run: Path, tmp: Path) -> list[tuple[Path, str]]:
    text = (judge_run / "inspect.jsonl").read_text()
    cut = tmp / "cut.jsonl"
    cut.write_text(text[: len(text) - 200])
    other = tmp / "other.jsonl"
    first, rest = text.split("\n", 1)
    h = json.loads(first)
    h["header"]["eval"]["task"] = h["header"]["eval"]["task_registry_name"] = "shopbench/tau2_retail_agent"
    other.write_text(json.dumps(h) + "\n" + rest)
    garbage = tmp / "garbage.jsonl"
    garbage.write_text("not json\n")
    out = [(cut, "cut"), (other, "task shopbench/tau2_retail_agent"), (garbage, "not JSON"),
           (tmp / "missing.jsonl", "no such file")]  # fmt: skip
    if has_inspect():
        ev = tmp / "torn.eval"
        ev.write_bytes((judge_run / "inspect.eval").read_bytes()[:4000])
        out.append((ev, "truncated or corrupt"))
    return out


def test_bad_logs_are_one_message_exit_2_and_nothing_written(judge_run, tmp_path):
    for path, what in _bad_logs(judge_run, tmp_path):
        dest = tmp_path / f"out-{path.stem}"
        r = run_cli(["score", str(path), "--out", str(dest)], tmp_path / "o")
        assert r.returncode == 2, (path, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {path}") and what in lines[0], r.stderr
        assert "Fix:" in lines[0] and "Traceback" not in r.stderr
        assert not dest.exists() and not (tmp_path / "o").exists()
    r = run_cli(["logs", "convert", str(tmp_path / "cut.jsonl")], tmp_path / "o")
    assert r.returncode == 2 and not (tmp_path / "inspect.eval").exists()
    r = run_cli(["score", str(judge_run), "--judge", "local/nosuch"], tmp_path / "o")
    assert r.returncode == 2 and "--judge" in r.stderr and not (tmp_path / "o").exists()


def test_score_with_another_judge_judges_the_same_samples_and_never_calls_the_logged_judge(
    judge_run, tmp_path
):
    """Done-when of issue 30: ``shopbench score`` on a pace_judge log with another judge makes zero calls to
    the original model (the new call log proves it) and writes a new log naming the one it came from."""
    out = tmp_path / "rejudged"
    r = run_cli(["score", str(judge_run), "--judge", "local/random", "--out", str(out)], tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert r.stdout.index("the logged judge local/checks is not called") < r.stdout.index("log: ")
    models = {row["model"] for row in call_rows(out)}
    assert models == {"local/random"}  # zero calls to local/checks
    _, old = portable(judge_run)
    _, new = portable(out)
    assert sorted(x["id"] for x in new) == sorted(x["id"] for x in old) and len(new) == 12  # the same samples
    assert sorted(x["epoch"] for x in new) == sorted(x["epoch"] for x in old)
    run = json.loads((out / "run.json").read_text())
    assert run["model"] == "local/random" and run["rescored_from"]["model"] == "local/checks"
    assert run["rescore"] == {"kind": "re-judge", "judge": "local/random", "protocol": "pacejudge"}


# ---- secrets ---------------------------------------------------------------------------------------
def _written(d: Path):
    for p in d.rglob("*"):
        if p.is_file():
            yield p, p.read_bytes()
            if (
                p.suffix == ".eval"
            ):  # a zip (zstd members, read once zipfile_zstd patches zipfile): uncompressed
                import zipfile_zstd  # noqa: F401 - installed with inspect-ai, which wrote this file

                with zipfile.ZipFile(p) as z:
                    for n in z.namelist():
                        yield p / n, z.read(n)


def test_no_secret_in_any_written_log(outputs, tmp_path):
    secret = "sk-" + "proj-FAKEKEYFORINSPECTLOGS0123456789abcdef"
    src = next((outputs).rglob("records_packaged.jsonl"), None)
    if src is None:  # the smoke build of this module's outputs tree
        assert run_cli(["eval", "pace_judge", "--model", "local/checks", "--limit", "1", "--no-progress"],
                       outputs).returncode == 0  # fmt: skip
        src = next(outputs.rglob("records_packaged.jsonl"))
    recs = [json.loads(x) for x in src.read_text().splitlines()]
    recs = [r for r in recs if r["split"] == "test"][:3]
    for r in recs:
        r["query"] = f"{r['query']} (my key is {secret})"  # in the prompt; local/echo echoes it as the output
    f = tmp_path / "records.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    env = {"OPENAI_API_KEY": secret}
    r = run_cli(["eval", "pace_judge", "--model", "local/echo", "-T", f"records={f}", "--no-progress",
                 "--log-dir", str(tmp_path / "run")], outputs, **env)  # fmt: skip
    assert r.returncode == 3, r.stderr  # the echo is no judgment: no usable answer, but the log is written
    assert (tmp_path / "run" / "inspect.jsonl").exists()
    head, samples = portable(tmp_path / "run")
    assert len(samples) == 3 and "[REDACTED]" in json.dumps(samples[0]["input"])
    r = run_cli(["score", str(tmp_path / "run"), "--out", str(tmp_path / "rescored")], outputs, **env)
    assert r.returncode == 0, r.stderr
    for d in (tmp_path / "run", tmp_path / "rescored"):
        seen = 0
        for p, data in _written(d):
            seen += 1
            assert secret.encode() not in data and secret[3:].encode() not in data, f"key written to {p}"
        assert seen >= 4
