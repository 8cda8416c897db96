"""A failed call never reads as a result (issue 25 item 3, findings 1 and 3).

A judge backbone whose every call fails (HTTP 500 from a real HTTP server), or whose every answer breaks
the contract, gets a Table 3 row with its counts and no numbers, and an evidence kind that is not
``measured``; a backbone with half its calls failed is scored on the other half; the pipeline's exit
code says when a subject produced no usable answer; the same for a PADMÉ evaluator.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from shopbench import metrics as M
from shopbench.judges.pace import protocols as P
from shopbench.judges.pace.sweep import sweep
from shopbench.llm import Gateway
from shopbench.llm.backends import Backbone
from shopbench.llm.calllog import read_logs
from shopbench.llm.outcomes import EXIT_NO_ANSWER, NO_ANSWER, no_answer_subjects
from shopbench.report import evidence as E


@pytest.fixture(scope="module")
def records(paceshop_small):
    recs = paceshop_small[1].records
    goods = [r for r in recs if r.kind == "good"][:6]
    ids = {r.record_id for r in goods}
    kids = [r for r in recs if r.base_record_id in ids][:14]
    return goods + kids


GOOD_ANSWER = json.dumps({
    "verdict": "GOOD", "overall_bad_probability": 0.1, "overall_quality": 4, "persona_alignment": 4,
    "component_consistency": 4, "evidence_grounding": 4, "format_safety": 5, "defect_family": "NONE",
    "defect_location": "NONE", "supporting_evidence_ids": [], "confidence": 0.8, "rationale": "fine",
})  # fmt: skip


def _script(fail_ids: set[str]):
    """HTTP 500 for every call of model ``dead``; for ``half``, for the prompts naming a failing record."""

    def script(body):
        text = json.dumps(body.get("messages"))
        if body.get("model") == "dead" or (body.get("model") == "half" and any(i in text for i in fail_ids)):
            return {"status": 500}
        if body.get("model") == "garbled":
            return {"content": '{"verdict": "MAYBE"}'}
        return {"content": GOOD_ANSWER}

    return script


@pytest.fixture
def swept(server, tmp_path, records):
    half_fail = {P.opaque_id(r.record_id) for r in records if r.kind != "good"}  # the BAD/swap records
    server.script = _script(half_fail)
    bbs = [
        Backbone(name=n, model=f"openai/{n}", api_base=server.api_base)
        for n in ("dead", "half", "garbled", "fine")
    ]
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False, backbones=bbs,
                 max_retries=0, backoff_s=0.01)  # fmt: skip
    t = sweep(
        gw, ["pacejudge"], ["local/oracle-rules", "dead", "half", "garbled", "fine"], records, run_id="hs"
    )
    try:
        yield t, gw
    finally:
        server.script = None


def test_call_errors_and_all_parse_failures_give_no_numbers(swept, records):
    runs, _ = swept
    head = M.headline_table(runs, n_boot=50, seed=0)
    tab3 = M.format_headline(head, "tab3")
    cols = list(tab3.columns)
    tab3 = M.with_outcomes(tab3, runs, mean_backbones=["dead", "half", "garbled", "fine"], blank=cols)
    assert list(tab3.columns[: len(cols)]) == cols  # count columns at the end
    assert list(tab3.columns[len(cols) :]) == ["n_used", "n_planned", "n_call_error", "n_parse_failure", "outcome",
                                                "outcome_note"]  # fmt: skip
    row = tab3.xs(("backbone", "pacejudge", "dead"))
    assert row[cols].isna().all(), row  # no 0.00, no false-fire 1.00
    assert row.n_used == 0 and row.n_planned == len(records) and row.n_call_error == len(records)
    assert row.outcome == NO_ANSWER and row.outcome_note.startswith(f"no usable answer: {len(records)} of "
                                                                    f"{len(records)} calls failed")  # fmt: skip
    assert "500" in row.outcome_note
    garbled = tab3.xs(("backbone", "pacejudge", "garbled"))
    assert (
        garbled[cols].isna().all() and garbled.n_call_error == 0 and garbled.n_parse_failure == len(records)
    )
    assert "broke the contract" in garbled.outcome_note
    # the headline numbers themselves are NaN, not 0 / 1, for the failed subjects
    h = head[(head.level == "backbone") & head.backbone.isin(["dead", "garbled"])]
    assert h.estimate.isna().all()
    # evidence: the failed rows are not measured; the audit rejects a measured row with n_used 0
    ev, df = E.resolve(E.per_row("backbone"), "paceshop_tab3_main", tab3)
    kinds = dict(zip(df.index.get_level_values("backbone"), df[E.EVIDENCE_COLUMN], strict=True))
    assert kinds["dead"] == kinds["garbled"] == E.NO_ANSWER and kinds["fine"] == E.MEASURED
    art = {"kind": "table", "name": "t", "notebook": "30", "evidence": E.MIXED}
    assert E.audit([art], lambda a: df.reset_index()) == []
    forged = df.reset_index().assign(evidence=E.MEASURED)
    problems = E.audit([art], lambda a: forged)
    assert any("n_used 0" in p for p in problems) and len(problems) >= 2


def test_half_failed_backbone_is_scored_on_its_answers_only(swept, records):
    runs, _ = swept
    half = runs[runs.backbone == "half"]
    assert (half.status == "error").sum() == sum(r.kind != "good" for r in records)
    counts = M.outcome_table(runs).loc[("pacejudge", "half")]
    n_good = sum(r.kind == "good" for r in records)
    assert counts.n_used == n_good and counts.n_planned == len(records) and counts.outcome == "partial"
    assert counts.outcome_note.startswith(f"{n_good} of {len(records)} units used")
    # its metrics equal those of the ok rows alone: false fire over GOOD records only
    ff = M.false_fire_rate(runs).loc[("pacejudge", "half")]
    alone = M.false_fire_rate(half[half.status == "ok"]).loc[("pacejudge", "half")]
    assert ff.false_fire == alone.false_fire and np.isfinite(ff.false_fire)
    head = M.headline_table(runs, n_boot=20, seed=0)
    ok_head = M.headline_table(half[half.status == "ok"], n_boot=20, seed=0)
    a = head[(head.backbone == "half") & (head.level == "backbone")].set_index(["table", "column"]).estimate
    b = (
        ok_head[(ok_head.backbone == "half") & (ok_head.level == "backbone")]
        .set_index(["table", "column"])
        .estimate
    )
    pd.testing.assert_series_equal(a, b.reindex(a.index))


def test_subjects_without_answer_from_the_call_logs(swept):
    _, gw = swept
    rows = read_logs(gw.log_dir)
    bad = no_answer_subjects(rows)
    assert set(bad) == {("hs", "openai/dead"), ("hs", "openai/garbled")}
    dead = bad[("hs", "openai/dead")]
    assert dead.call_error == dead.planned and "500" in dead.top(3)[0][0]
    assert EXIT_NO_ANSWER == 3


# ---- the runner's exit code -------------------------------------------------------------------------------
@pytest.fixture
def one_step_pipeline(tmp_path, outputs, monkeypatch, server):
    """A one-notebook pipeline whose "notebook" runs a real gateway sweep against the fake server: model
    ``dead`` answers HTTP 500, ``fine`` answers; ``models`` says which ones the step calls."""
    from shopbench import pipeline, pipeline_steps
    from shopbench.llm import Call

    nb = tmp_path / "nb"
    nb.mkdir()
    (nb / "a.ipynb").write_text("{}")
    monkeypatch.setattr(pipeline_steps, "NOTEBOOKS_DIR", nb)
    monkeypatch.setattr(pipeline_steps, "load_pipeline", lambda: [pipeline_steps.Step("a")])
    monkeypatch.setattr(
        pipeline, "build_index", lambda paper, summary: (paper / "index.md", paper / "index.html")
    )
    monkeypatch.setattr(pipeline, "audit_index", lambda paper: [])
    server.script = _script(set())
    models = ["fine", "dead"]

    def fake_run(step, profile, out_dir):
        out_dir.mkdir(parents=True, exist_ok=True)
        root = out_dir.parent
        (root / "paper").mkdir(parents=True, exist_ok=True)
        gw = Gateway(cache_dir=tmp_path / "cache", log_dir=root / "calls", progress=False, max_retries=0)
        calls = [Call(f"{m}|{i}", f"openai/{m}", [{"role": "user", "content": f"q{i}"}], api_base=server.api_base)
                 for m in models for i in range(5)]  # fmt: skip
        gw.run(calls, "a/sweep")

    monkeypatch.setattr(pipeline, "run_notebook", fake_run)
    yield pipeline, models
    server.script = None


def test_pipeline_exits_3_naming_a_subject_without_usable_answer(one_step_pipeline, capsys, outputs):
    pipeline, _ = one_step_pipeline
    assert pipeline.run("smoke", preview=False) == EXIT_NO_ANSWER
    out, err = capsys.readouterr()
    assert "NO USABLE ANSWER from openai/dead in a/sweep: 5 of 5 calls failed" in err
    assert "5 x " in err and "500" in err  # the most frequent error, with its count
    assert "openai/fine" not in err
    last = [ln for ln in out.splitlines() if "calls (" in ln][-1]
    assert "10 calls (5 ok, 0 parse failures, 5 call errors)" in last
    run = json.loads((outputs / "smoke" / "paper" / "run.json").read_text())
    assert [(s["model"], s["call_errors"]) for s in run["no_answer_subjects"]] == [("openai/dead", 5)]


def test_pipeline_exits_0_when_every_subject_answered(one_step_pipeline, capsys):
    pipeline, models = one_step_pipeline
    models.remove("dead")
    assert pipeline.run("smoke", preview=False) == 0
    assert "NO USABLE ANSWER" not in capsys.readouterr().err


# ---- PADMÉ evaluators ---------------------------------------------------------------------------------------
def test_padme_evaluator_call_errors_are_excluded_and_no_answer_has_no_numbers():
    from shopbench.metrics.meta_eval import accuracy_by, evaluator_summary, pair_outcomes

    pairs = pd.DataFrame({"pair_id": ["p1", "p2", "p3", "p4"], "worse_id": ["a-", "b-", "c-", "d-"],
                          "better_id": ["a+", "b+", "c+", "d+"], "criterion": "friendliness",
                          "domain": "retail"})  # fmt: skip
    ids = ["a-", "a+", "b-", "b+", "c-", "c+", "d-", "d+"]
    good = {"a-": 0.2, "a+": 0.8, "b-": 0.3, "b+": 0.9, "c-": 0.1, "c+": 0.7, "d-": 0.9, "d+": 0.1}
    rows = []
    for run in (0, 1):
        for k in ids:
            rows.append({"evaluator": "fine", "rollout_id": k, "run": run, "score": good[k], "status": "ok",
                         "error": None, "parse_error": None})  # fmt: skip
            rows.append({"evaluator": "dead", "rollout_id": k, "run": run, "score": np.nan, "status": "error",
                         "error": "HTTP 500: Input should be 'text' or 'json_object'", "parse_error": None})  # fmt: skip
            failed = k[0] in "cd"  # half: the calls of pairs p3, p4 failed
            rows.append({"evaluator": "half", "rollout_id": k, "run": run, "score": np.nan if failed else good[k],
                         "status": "error" if failed else "ok", "error": "Timeout" if failed else None,
                         "parse_error": None})  # fmt: skip
    scores = pd.DataFrame(rows).assign(criterion="friendliness")
    out = pair_outcomes(pairs, scores)
    s = evaluator_summary(out, scores, n_boot=20)
    dead = s.loc["dead"]
    assert dead.n_used == 0 and dead.n_planned == 8 and dead.n_call_error == 8 and dead.outcome == NO_ANSWER
    assert np.isnan(dead.accuracy) and np.isnan(dead.leniency) and np.isnan(dead.tie_rate)  # not 0.00
    assert dead.outcome_note.startswith("no usable answer: 8 of 8 calls failed (HTTP 500")
    half = s.loc["half"]  # scored on p1, p2 only: both correct, where counting failures would give 0.5
    assert half.n_used == 4 and half.n_call_error == 4 and half.outcome == "partial" and half.accuracy == 1.0
    assert s.loc["fine", "accuracy"] == 0.75 and s.loc["fine", "outcome"] == "ok"
    by = accuracy_by(out, by=["domain"], n_boot=10).set_index("evaluator")
    assert by.loc["half", "accuracy"] == 1.0 and np.isnan(by.loc["dead", "accuracy"])
    ev, df = E.resolve(E.per_row("evaluator"), "padme_tab3_evaluators", s.reset_index())
    assert dict(zip(df.evaluator, df[E.EVIDENCE_COLUMN], strict=True)) == {
        "fine": E.MEASURED,
        "half": E.MEASURED,
        "dead": E.NO_ANSWER,
    }


def test_shop_llm_agent_row_counts_its_calls_by_kind():
    from shopbench.shopsim.reporting import llm_agent_table

    class Logs:  # the agent's call log: every call failed
        def log(self, run_id):
            return pd.DataFrame([{"status": "error", "error": "HTTP 400: context window 2048 exceeded",
                                  "parse_error": None, "model_latency_s": None}] * 4)  # fmt: skip

    st = {
        "agent": "llm:smol",
        "done": 2,
        "planned": 2,
        "budget_s": None,
        "spent_s": 1.0,
        "stopped_by_budget": False,
    }
    tab = llm_agent_table([], [st], Logs(), {"llm:smol": "80/agent/smol"}, n_boot=10).iloc[0]
    assert tab.n_used == 0 and tab.n_call_error == 4 and tab.outcome == NO_ANSWER and np.isnan(tab.exact_cart)
    assert "4 of 4 calls failed (HTTP 400" in tab.outcome_note
    ev, df = E.resolve(E.per_row("agent"), "shop_llm_agents", pd.DataFrame([tab]))
    assert list(df[E.EVIDENCE_COLUMN]) == [E.NO_ANSWER]
