"""Issue 25 and 26 "Done when", end to end against a REAL ``python -m llama_cpp.server`` (code nobody
here wrote) serving the packaged SmolLM2, started as a user starts it and known to the workbench only by
its base URL (``--n_ctx 8192``: the shipped 2,048 is refused by the preflight, see
tests/test_preflight_llamacpp.py).

1. ``shopbench eval pace_judge --model openai/smol --model-base-url URL --limit 5`` writes a log with 5
   scored samples, the call log and the server's own log show 5 judge calls to that server, and a rerun
   of the same command asks the server nothing (no preflight either: nothing is left to call).
2. ``make paper``'s runner on a profile naming that server as a judge, whose every answer breaks the
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
