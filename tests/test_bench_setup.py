"""Issue 26 §6: every make target sets itself up; a benchmark stage that fails keeps the stages before it.

``make bench`` after ``make test`` on a fresh clone used to end its local-LLM benchmark with a traceback
(``ModelNotInstalled: qwen2.5-coder-1.5b-instruct``), and ``outputs/bench/local_llm.json`` then held only
that failure. Here the stages are fakes (no model is loaded: the real benchmark takes tens of minutes on
two cores): a stage that raises becomes one failed row saying what to run, the earlier stages' rows stay in
the file, and the runner keeps what a benchmark process wrote before it died.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from shopbench.benchmarks import local_llm, runner

ROOT = Path(__file__).resolve().parents[1]


def _row(name, value):
    return local_llm._result(name, value, "s")


@pytest.fixture
def fake_stages(monkeypatch):
    """SmolLM2 stages that succeed, a Qwen stage that fails as on a fresh clone."""
    monkeypatch.setattr(local_llm, "build_records", lambda n, seed=0: ["r"] * n)

    def measure(key, records, n_prompts, warmup, calibrate_each):
        if key == "qwen":
            local_llm.registry.model_path("qwen2.5-coder-1.5b-instruct")  # the real check: not installed
        return [_row(f"{key}_pacejudge_s_per_call", 87.0)]

    monkeypatch.setattr(local_llm, "measure_model", measure)
    monkeypatch.setattr(
        local_llm, "measure_verbatim", lambda key, records, n: [_row(f"{key}_verbatim", 90.0)]
    )


def test_a_failing_stage_keeps_the_stages_before_it(fake_stages, tmp_path, monkeypatch):
    monkeypatch.setenv("SHOPBENCH_MODEL_DIR", str(tmp_path / "no-models"))  # nothing installed here
    out = tmp_path / "local_llm.json"
    doc = local_llm.run(("smollm2", "qwen"), 5, out, sweep=False)
    names = [r["name"] for r in doc["results"]]
    assert names == ["smollm2_pacejudge_s_per_call", "smollm2_verbatim", "stage qwen"]
    fail = doc["results"][-1]
    assert fail["failed"] and fail["meets_goal"] is False and fail["value"] is None
    assert "ModelNotInstalled" in fail["detail"] and "qwen2.5-coder-1.5b-instruct" in fail["detail"]
    assert "run: make local-llm" in fail["detail"] and "\n" not in fail["detail"]
    assert json.loads(out.read_text())["results"] == doc["results"]  # the file holds all three
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_stage_after_a_failure_still_runs(fake_stages, tmp_path, monkeypatch):
    calls = []

    def broken(key, records, n):
        calls.append("verbatim")
        raise RuntimeError("llama.cpp crashed\nsecond line")

    monkeypatch.setattr(local_llm, "measure_verbatim", broken)
    monkeypatch.setattr(local_llm, "measure_prefix_only", lambda key, records: [_row("qwen_prefix", 0.2)])
    doc = local_llm.run(("smollm2", "qwen"), 5, tmp_path / "l.json", sweep=False, qwen_tokens_only=True)
    assert [r["name"] for r in doc["results"]] == ["smollm2_pacejudge_s_per_call", "stage smollm2 D.4 order",
                                                   "qwen_prefix"]  # fmt: skip
    assert doc["results"][1]["detail"] == "failed: RuntimeError: llama.cpp crashed" and calls


def test_the_runner_keeps_what_a_dying_benchmark_wrote(tmp_path):
    out = tmp_path / "local_llm.json"
    out.write_text(json.dumps({"results": [{"name": "old", "value": 1}]}))
    old = time.time() - 60
    os.utime(out, (old, old))
    assert runner.salvage(out, time.time()) == []  # a file from an earlier run is not this run's
    start = time.time() - 1
    out.write_text(json.dumps({"results": [_row("smollm2_pacejudge_s_per_call", 87.0)]}))
    kept = runner.salvage(out, start)
    assert [r["name"] for r in kept] == ["smollm2_pacejudge_s_per_call"]
    row = runner.failure_row(
        "local_llm", "Traceback (most recent call last):\n  File x\nKilled: 9\n", len(kept)
    )
    assert row["detail"] == "failed: Killed: 9; the 1 result(s) it wrote before are kept"
    runner.write_doc(out, "local_llm", kept + [row])
    assert [r["name"] for r in json.loads(out.read_text())["results"]] == ["smollm2_pacejudge_s_per_call",
                                                                           "local_llm"]  # fmt: skip
    out.write_text("{not json")
    assert runner.salvage(out, start) == []


def test_make_bench_installs_the_models_it_times():
    mk = (ROOT / "Makefile").read_text()
    recipe = mk.split("\nbench:", 1)[1].split("\n\n", 1)[0]
    install = next(line for line in recipe.splitlines() if "shopbench.llm install" in line)
    models = mk.split("BENCH_MODELS = ", 1)[1].split("\n", 1)[0].split(",")
    assert set(models) == set(local_llm.MODELS.values())
    assert recipe.index("shopbench.llm install") < recipe.index("shopbench.benchmarks")
    assert "|| echo" in install  # a failed install says what to run and the other benchmarks still run
    assert "speed" in runner.BENCHES and runner.FILES["speed"] == ["speed"]
