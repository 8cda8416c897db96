"""Issue 25 and 26 "Done when", end to end against a REAL ``python -m llama_cpp.server`` (code nobody
here wrote) serving the packaged SmolLM2, started as a user starts it and known to the workbench only by
its base URL (``--n_ctx 8192``: the shipped 2,048 is refused by the preflight, see
tests/test_preflight_llamacpp.py).

1. ``shopbench eval pace_judge --model openai/smol --model-base-url URL --limit 5`` writes a log with 5
   scored samples, the call log and the server's own log show 5 judge calls to that server, and a rerun
   of the same command asks the server nothing (no preflight either: nothing is left to call).
2. ``shopbench eval padme_evaluator --model openai/smol --model-base-url URL -T pairs=FILE --limit 3``
   scores the three pairs (six trajectories, six calls to that server); a rerun asks it nothing. A
   pair whose curt side SmolLM2 echoes with a raw newline inside a JSON string gets no usable answer:
   exit 3, "no usable answer".
3. ``shopbench eval shop_agent --model openai/smol --model-base-url URL --limit 1``: the model agent
   (native function calling) shops with the scripted customer until the trial ends; the battery is in
   metrics.json, the calls went to that server, and a rerun asks it nothing (no preflight either).
4. ``make paper``'s runner on a profile naming that server as a judge, whose every answer breaks the
   contract (``max_tokens: 4`` truncates the JSON): Table 3's row for it has no numbers and an evidence
   kind that is not ``measured``, and the runner exits 3, printing the subject and its top errors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from shopbench.paths import ROOT
from shopbench.testing.llama_server import chat_posts, free_port, llama_server, smollm2_path

pytestmark = [pytest.mark.llamacpp]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path, why = smollm2_path()
    if path is None:
        pytest.skip(why)
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with llama_server(path, free_port(), log, "--n_ctx", "8192") as base:
        yield base, log


def _env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {**env, "SHOPBENCH_OUTPUTS": str(tmp / "out"), "SHOPBENCH_CACHE_DIR": str(tmp / "cache"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", "SHOPBENCH_PROGRESS": "off"}  # fmt: skip


def test_shopbench_eval_pace_judge_against_a_users_llama_cpp_server(server, tmp_path):
    base, log = server
    logdir = tmp_path / "run"
    cmd = [sys.executable, "-m", "shopbench.cli", "eval", "pace_judge", "--model", "openai/smol",
           "--model-base-url", base, "-T", "protocol=ares", "-T", "n_boot=200", "--limit", "5",
           "--log-dir", str(logdir), "--no-progress"]  # fmt: skip
    before = len(chat_posts(log))
    r = subprocess.run(cmd, env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    assert "[preflight] openai/smol" in r.stdout and "json_object with the schema" in r.stdout
    samples = pd.read_parquet(logdir / "samples.parquet")
    assert len(samples) == 5 and set(samples.unit_status) <= {"ok", "parse_error"}  # no call error
    assert (samples.unit_status == "ok").any()
    (calls_file,) = (logdir / "calls").glob("*.jsonl")
    rows = [json.loads(x) for x in calls_file.read_text().splitlines()]
    assert (
        len(rows) == 5
        and {r["model"] for r in rows} == {"openai/smol"}
        and not any(r["cache_hit"] for r in rows)
    )
    judged = chat_posts(log)[before:]
    # the preflight's tiny calls (json_schema refused with HTTP 500, then accepted forms) precede the
    # five judge calls, each sent once: one request at a time, no timeout, no retry
    assert judged[-5:] == ["200"] * 5 and judged.count("500") <= 1, judged
    metrics = json.loads((logdir / "metrics.json").read_text())
    assert metrics["units"]["error"] == 0 and metrics["units"]["ok"] >= 1

    after_first = len(chat_posts(log))
    again = subprocess.run(cmd, env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(chat_posts(log)) == after_first  # the rerun asked the server nothing
    assert json.loads((logdir / "metrics.json").read_text())["headline"] == metrics["headline"]


def test_every_answer_broken_is_no_answer_row_and_exit_3(server, tmp_path):
    base, _ = server
    prof = yaml.safe_load((ROOT / "params" / "smoke.yaml").read_text(encoding="utf-8"))
    prof["profile"] = "mine"
    prof["backbones"] = [*prof["backbones"], {"name": "smol", "model": "openai/smol", "api_base": base,
                                              "concurrency": 1}]  # fmt: skip
    prof["gateway"]["timeout_s"] = 600
    prof["judging"].pop("llm_runs", None)  # smoke's own LLM run (the stand-in) would take the judging slot
    prof["judging"].update(llm_backbones=["smol"], llm_protocols=["pacejudge"], llm_subset=2, max_tokens=4)
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(prof, sort_keys=False), encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "shopbench.pipeline", "run", "--profile", str(path), "--only",
         "10_paceshop_build", "20_pace_judge_sweep", "30_pace_metrics"],
        env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=2400,
    )  # fmt: skip
    assert r.returncode == 3, (r.stdout[-3000:], r.stderr[-3000:])
    assert "NO USABLE ANSWER from openai/smol" in r.stderr and "Traceback" not in r.stderr
    tab3 = pd.read_csv(tmp_path / "out" / "mine" / "paper" / "tables" / "paceshop_tab3_main.csv")
    row = tab3[(tab3.level == "backbone") & (tab3.backbone == "smol")]
    assert len(row) == 1, tab3[["level", "protocol", "backbone"]]
    row = row.iloc[0]
    assert row["evidence"] != "measured" and row["outcome"] == "no-answer"
    assert row["n_used"] == 0 or row["n_parse_failure"] == row["n_planned"]
    for col in ("S0", "S2_detect", "false_fire", "PACE_avg"):  # no 0.00, no false-fire 1.00
        assert pd.isna(row[col]) or str(row[col]).strip() in ("", "–", "nan"), (col, row[col])


def _pairs(path: Path, worse: list[str], better: list[str]) -> Path:
    """A PADME pairs file (one conversation per side, "my order is late"), as tests/test_cli_tasks.py builds."""
    from shopbench.padme.dataset import write_pairs_dataset
    from shopbench.padme.types import Pair, Rollout

    def roll(rid, text, level):
        return Rollout(rid, "t1", "retail", "test", "friendliness", level, "", "agent-m", "scripted", 0, 0,
                       [{"role": "user", "content": "my order is late"}, {"role": "assistant", "content": text}])  # fmt: skip

    write_pairs_dataset([Pair(f"p{i}", f"c{i}", "t1", "retail", "test", "friendliness", "bad-good", "agent-m", 0,
                              roll(f"w{i}", w, "bad"), roll(f"b{i}", b, "good"),
                              {"bad": "be curt", "good": "be warm"}, kept=True)
                         for i, (w, b) in enumerate(zip(worse, better, strict=True))], path)  # fmt: skip
    return path / "pairs.jsonl"


def _calls(logdir: Path) -> list[dict]:
    return [json.loads(x) for f in (logdir / "calls").glob("*.jsonl") for x in f.read_text().splitlines()]


def test_padme_evaluator_against_a_users_llama_cpp_server(server, tmp_path):
    base, log = server
    pairs = _pairs(tmp_path / "pairs",
                   ["Not my problem. Check the tracking page yourself.", "Orders are late sometimes. Nothing to do.",
                    "Wait like everyone else."],
                   ["I am sorry your order is late. Let me look up its tracking for you right away.",
                    "I understand how frustrating that is. I have checked: it ships tomorrow, and I added free "
                    "express delivery.",
                    "Thank you for telling me. I will check the carrier now and update you within the hour."])  # fmt: skip
    logdir = tmp_path / "run"
    cmd = [sys.executable, "-m", "shopbench.cli", "eval", "padme_evaluator", "--model", "openai/smol",
           "--model-base-url", base, "-T", f"pairs={pairs}", "-T", "n_boot=200", "--limit", "3",
           "--log-dir", str(logdir), "--no-progress"]  # fmt: skip
    before = len(chat_posts(log))
    r = subprocess.run(cmd, env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=900)
    # temperature 0: SmolLM2 answers every one of these six in the contract (measured: 3 pairs scored,
    # no parse failure; its scores do not tell the sides apart, which is the finding, not a failure)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    samples = pd.read_parquet(logdir / "samples.parquet")
    assert len(samples) == 3 and set(samples.pair_id) == {"p0", "p1", "p2"}
    assert set(samples.unit_status) <= {"ok", "parse_error"} and (samples.unit_status == "ok").any()
    ok = samples[samples.unit_status == "ok"]
    assert ok.score_worse.between(0, 1).all() and ok.score_better.between(0, 1).all()
    rows = _calls(logdir)
    assert (
        len(rows) == 6
        and {x["model"] for x in rows} == {"openai/smol"}
        and not any(x["cache_hit"] for x in rows)
    )
    sent = chat_posts(log)[before:]
    assert sent[-6:] == ["200"] * 6, sent  # after the preflight's probes, each trajectory sent once
    metrics = json.loads((logdir / "metrics.json").read_text())
    assert metrics["n_pairs"] == 3 and metrics["units"]["error"] == 0
    acc = metrics["headline"]["accuracy"]
    assert acc["ci_low"] <= acc["estimate"] <= acc["ci_high"]

    after_first = len(chat_posts(log))
    again = subprocess.run(cmd, env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(chat_posts(log)) == after_first  # the rerun asked the server nothing
    assert json.loads((logdir / "metrics.json").read_text())["headline"] == metrics["headline"]

    # the honest outcome when no answer is usable: SmolLM2 at temperature 0 echoes "No. (1)" into its
    # reasoning followed by a raw newline inside the JSON string (the server's grammar lets it through;
    # the contract does not: "Invalid control character"), so the pair's worse side has no score
    curt = _pairs(tmp_path / "curt", ["No. (1)"], ["I am sorry to hear that; let me check (1)."])
    curt_cmd = [*cmd[:9], "-T", f"pairs={curt}", "-T", "n_boot=200", "--limit", "1", "--log-dir",
                str(tmp_path / "curt_run"), "--no-progress"]  # fmt: skip
    r = subprocess.run(curt_cmd, env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 3, (r.stdout[-3000:], r.stderr[-3000:])
    assert (
        "no usable answer" in r.stderr
        and "Invalid control character" in r.stderr
        and "Traceback" not in r.stderr
    )
    (row,) = pd.read_parquet(tmp_path / "curt_run" / "samples.parquet").to_dict("records")
    assert row["unit_status"] == "parse_error" and pd.isna(row["score_worse"]) and not row["correct"]


def test_shop_agent_against_a_users_llama_cpp_server(server, tmp_path):
    from shopbench.shopsim.verifier.battery import METRICS

    base, log = server
    logdir = tmp_path / "run"
    # native function calling (the default): the request carries the 8 store tools, which the server
    # accepts; SmolLM2 answers in prose, the scripted customer replies until it abandons (measured: 5 calls,
    # about 40 s). -T tool_mode=compact or json end the trial sooner but on a broken contract (a raw
    # newline inside a JSON string; a tool given arguments it does not take): a parse failure, exit 3.
    cmd = [sys.executable, "-m", "shopbench.cli", "eval", "shop_agent", "--model", "openai/smol",
           "--model-base-url", base, "-T", "max_tokens=200", "-T", "n_boot=200", "--limit", "1",
           "--log-dir", str(logdir), "--no-progress"]  # fmt: skip
    before = len(chat_posts(log))
    r = subprocess.run(cmd, env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    assert "[preflight] openai/smol" in r.stdout
    (row,) = pd.read_parquet(logdir / "samples.parquet").to_dict("records")
    assert row["unit_status"] in ("ok", "parse_error") and row["termination"] and row["turns"] >= 1
    metrics = json.loads((logdir / "metrics.json").read_text())
    assert metrics["units"]["error"] == 0 and sum(metrics["terminations"].values()) == 1
    assert {m.key for m in METRICS} <= set(metrics["battery"]) and len(METRICS) == 44
    assert metrics["battery"]["goal_rate"]["n"] == 1
    rows = _calls(logdir)
    assert rows and {x["model"] for x in rows} == {"openai/smol"} and not any(x["cache_hit"] for x in rows)
    assert all(x["status"] in ("ok", "parse_error") for x in rows)
    sent = chat_posts(log)[before:]
    assert sent[-len(rows) :] == ["200"] * len(rows), sent  # each agent step sent once, after the preflight

    after_first = len(chat_posts(log))
    again = subprocess.run(cmd, env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(chat_posts(log)) == after_first  # the rerun asked the server nothing, not even a preflight
    assert "[preflight]" not in again.stdout
    assert json.loads((logdir / "metrics.json").read_text())["headline"] == metrics["headline"]
