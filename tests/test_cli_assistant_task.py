"""Task ``pace_assistant`` (issue 26 §1, §2, §4, "Bad input"): generation with an embedded backend, import
of recorded outputs (strict and relaxed), one-message errors with exit 2, resumption without a repeated
call, the Python API equal to the CLI, one path with notebook 10's generator, and the guide's example run
as written in docs/guides/assistant.md."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

from shopbench.testing.cli import call_rows, log_dir_of
from shopbench.testing.cli import run_cli as _run_cli

ROOT = Path(__file__).resolve().parents[1]

GUIDE = ROOT / "docs" / "guides" / "assistant.md"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """One outputs tree for the module (the smoke PACEShop build is made once, ~10 s)."""
    return tmp_path_factory.mktemp("outputs")


def run_cli(args, outputs, cwd=ROOT, timeout=300):
    return _run_cli(args, outputs, cwd=cwd, timeout=timeout)


def guide_blocks() -> dict[str, list[str]]:
    """The fenced blocks of the guide by language tag (``jsonl``, ``bash``, ``""``), in order."""
    out: dict[str, list[str]] = {}
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S):
        out.setdefault(lang, []).append(body)
    return out


GEN = [
    "eval",
    "pace_assistant",
    "--model",
    "local/schema-sampler",
    "--limit",
    "3",
    "--no-progress",
    "-T",
    "n_boot=100",
]


# ---- generation with an embedded backend ----------------------------------------------------------
@pytest.fixture(scope="module")
def gen_run(outputs):
    r = run_cli(GEN, outputs)
    assert r.returncode == 0, r.stderr
    return r, log_dir_of(r.stdout)


def test_generation_writes_scored_samples_and_counts_both_subjects(gen_run):
    r, d = gen_run
    s = pd.read_parquet(d / "samples.parquet")
    assert len(s) == 3 and s["sample_id"].str.match(r"^a-\d{5}$").all() and s["source"].eq("generated").all()
    assert s["unit_status"].eq("ok").all()  # the sampler's answers meet the JSON contract
    # the random floor is rejected by the hard checks, and the checks say which ones
    assert not s["accepted"].any() and s["reject_reason"].str.startswith("failed hard checks").all()
    assert s["judge_status"].eq("ok").all() and s["judge_verdict"].isin(["GOOD", "BAD"]).all()
    m = json.loads((d / "metrics.json").read_text())
    assert m["headline"]["accepted"]["estimate"] == 0.0 and m["assistant"]["ok"] == 3
    assert m["judge"] == {"model": "local/checks", "protocol": "pacejudge", "units": 3, "ok": 3, "parse_error": 0,
                          "error": 0, "not_judged": 0}  # fmt: skip
    passed = {c: s[f"check_{c}"].mean() for c in ("overview_length", "bold_count", "rq_count_unique")}
    assert all(m["headline"][f"check_{c}"]["estimate"] == pytest.approx(v) for c, v in passed.items())
    calls = call_rows(d)  # 3 assistant calls and 3 judge calls, all in this run's log
    assert sorted(c["model"] for c in calls) == ["local/checks"] * 3 + ["local/schema-sampler"] * 3
    run = json.loads((d / "run.json").read_text())
    assert {"paceshop_good_generation", "judge_pacejudge"} <= set(run["prompts"])
    assert "accepted" in r.stdout and "judge local/checks (pacejudge): 3 units" in r.stdout


def test_rerun_makes_no_new_call(gen_run, outputs):
    _, d = gen_run
    before, m1 = call_rows(d), json.loads((d / "metrics.json").read_text())
    r2 = run_cli(GEN, outputs)
    assert r2.returncode == 0, r2.stderr
    assert log_dir_of(r2.stdout) == d
    assert len(call_rows(d)) == len(before)
    assert json.loads((d / "run.json").read_text())["gateway"]["calls"] == 0
    assert json.loads((d / "metrics.json").read_text()) == m1


def test_python_api_equals_the_cli(gen_run, outputs, monkeypatch):
    import shopbench

    _, d = gen_run
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(outputs))
    res = shopbench.eval("pace_assistant", model="local/schema-sampler", limit=3, progress=False, n_boot=100)
    assert res.log_dir == d and isinstance(res.samples, pd.DataFrame) and len(res.samples) == 3
    assert json.loads(json.dumps(res.metrics)) == json.loads((d / "metrics.json").read_text())


def test_generation_sends_what_notebook_10_sends(outputs, monkeypatch):
    """One path: the task's assistant calls are the L4 slice's calls (same inputs, same messages, same
    contract) for the same build and seed."""
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(outputs))
    from shopbench.config import load_profile
    from shopbench.llm import Backbone, Gateway
    from shopbench.paceshop.build import BuildConfig, build
    from shopbench.paceshop.generate import LLMGenerator
    from shopbench.paceshop.slices import shared_inputs
    from shopbench.tasks.registry import get_task

    t, _ = get_task("pace_assistant").build({})
    t.prepare(limit=4, seed=0)
    res = build(BuildConfig.from_profile(load_profile("smoke")), progress=False)
    nb_items = [it for it, _ in shared_inputs(res, 4, 0)]
    gw = Gateway(
        cache_dir=outputs / "c", log_dir=outputs / "l", backbones=[Backbone(name="m", model="local/echo")]
    )
    gen = t._generator(gw, gw.backbones["m"])
    ours, theirs = gen.calls(t.items), LLMGenerator(gw, "m", gen.prompt).calls(nb_items)
    assert [c.item_id for c in ours] == [c.item_id for c in theirs]
    assert [c.messages for c in ours] == [c.messages for c in theirs]
    assert [c.schema for c in ours] == [c.schema for c in theirs]


# ---- import -----------------------------------------------------------------------------------------
STRICT = {"id": "s-1", "query": "recycled soy candle", "assignment_id": "a-00003", "response": {
    "overview_text": "Compare **Soy Candles**, **Travel Tins**, **Unscented**, and **Gift Sets**.",
    "bold_categories": ["Soy Candles", "Travel Tins", "Unscented", "Gift Sets"],
    "productCategoryList": ["Soy Candles", "Travel Tins", "Unscented", "Gift Sets"],
    "category_search_queries": ["soy candles", "travel tin candle", "unscented candle", "candle gift sets"],
    "rqList": ["soy candle tin", "unscented soy", "recycled glass candle", "candle gift", "long burn candle"],
    "attribution_list": ["M:NOT-IN-POOL:0"]}}  # fmt: skip


def test_strict_import_scores_against_the_build_input(outputs, tmp_path):
    f = tmp_path / "strict.jsonl"
    ok2 = json.loads(json.dumps(STRICT)) | {"id": "s-2"}
    ok2["response"]["attribution_list"] = ["M:B0XXJS5HPI:0"]  # an id of a-00003's pool (smoke build)
    f.write_text(json.dumps(STRICT) + "\n" + json.dumps(ok2) + "\n")
    r = run_cli(["eval", "pace_assistant", "--model", "my-assistant", "-T", f"responses={f}", "-T", "schema=strict",
                 "--no-progress", "-T", "n_boot=50"], outputs)  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = log_dir_of(r.stdout)
    s = pd.read_parquet(d / "samples.parquet").set_index("sample_id")
    assert s.loc["s-1", "check_evidence_id_validity"] == False  # noqa: E712 - not in the build's pool
    assert s.loc["s-2", "check_evidence_id_validity"] == True  # noqa: E712
    assert s.loc["s-2", "accepted"] and not s.loc["s-1", "accepted"]
    assert s["context"].eq("PACEShop input a-00003").all() and s["judge_status"].eq("ok").all()
    assert s["repairs"].isna().all()  # strict: nothing repaired
    assert all(c["model"] == "local/checks" for c in call_rows(d))  # nothing asked of "my-assistant"
    run = json.loads((d / "run.json").read_text())
    assert run["prompts"]["responses:strict.jsonl"] and run["params"]["schema"] == "strict"


def test_strict_bad_line_is_one_message_naming_file_line_and_field(outputs, tmp_path):
    f = tmp_path / "bad_strict.jsonl"
    bad = json.loads(json.dumps(STRICT)) | {"id": "s-2"}
    del bad["response"]["rqList"]
    f.write_text(json.dumps(STRICT) + "\n" + json.dumps(bad) + "\n")
    r = run_cli(["eval", "pace_assistant", "--model", "my-assistant", "-T", f"responses={f}", "-T", "schema=strict"],
                outputs)  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert str(f) in lines[0] and "line 2" in lines[0] and "field 'response.rqList'" in lines[0]
    assert "Fix:" in lines[0] and not (outputs / "tasks" / "pace_assistant" / "my-assistant").exists()


def test_relaxed_bad_line_is_one_message_naming_file_and_line(outputs, tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text('{"id": "a", "query": "q", "summary": "s", "categories": ["x"]}\n{"id": "b", oops\n')
    r = run_cli(["eval", "pace_assistant", "--model", "my-assistant", "-T", f"responses={f}"], outputs)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(f) in lines[0] and "line 2" in lines[0] and "not valid JSON" in lines[0]


def test_unknown_judge_and_schema_are_one_message(outputs, tmp_path):
    r = run_cli(["eval", "pace_assistant", "--model", "local/schema-sampler", "-T", "schema=loose"], outputs)
    assert r.returncode == 2 and "relaxed, strict" in r.stderr and "Traceback" not in r.stderr
    r = run_cli(
        ["eval", "pace_assistant", "--model", "local/schema-sampler", "-T", "judge=local/nope"], outputs
    )
    assert r.returncode == 2 and "local/nope" in r.stderr and "Traceback" not in r.stderr


# ---- the guide ---------------------------------------------------------------------------------------
def test_the_guides_example_prints_what_the_guide_says(outputs, tmp_path):
    """docs/guides/assistant.md §1 as a user runs it: its JSON-lines block saved as the file the command
    names, its command run from that folder, the output compared with the guide's (the log line aside)."""
    blocks = guide_blocks()
    (tmp_path / "my_outputs.jsonl").write_text(blocks["jsonl"][0], encoding="utf-8")
    cmd = next(b for b in blocks["bash"] if "responses=my_outputs.jsonl" in b).strip()
    argv = shlex.split(cmd)
    assert argv[0] == "shopbench"
    r = run_cli(argv[1:], outputs, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    printed = next(b for b in blocks[""] if b.startswith("pace_assistant · my-assistant"))
    want = [x for x in printed.strip().splitlines() if not x.startswith("log: ")]
    got = [x for x in r.stdout.strip().splitlines() if not x.startswith("log: ")]
    assert got == want
    s = pd.read_parquet(log_dir_of(r.stdout) / "samples.parquet").set_index("sample_id")
    assert s.loc["my-003", "unit_status"] == "parse_error" and s.loc["my-002", "judge_status"] == "not judged"
