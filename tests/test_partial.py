"""A cost-capped sweep leaves partial tables that say so; a rerun with a higher cap finishes it
without repeating a call (issue 14 §2). Embedded backend, priced at $0.01 a call for the test."""

from __future__ import annotations

import functools
import json

import pandas as pd
import pytest

from shopbench.llm import Call, Gateway, parse_backbones
from shopbench.report import build_index
from shopbench.report.artifacts import Provenance, read_artifacts, save_table
from shopbench.report.partial import for_notebooks, record

PER_CALL = 0.01


@pytest.fixture
def priced(monkeypatch):
    """Every call of the embedded backend costs $0.01 (estimate and bill); counts the calls made."""
    from shopbench.llm import gateway as G

    made: list[str] = []
    real = G.Gateway._send

    async def counting(self, c, how, base, kwargs):  # one attempt sent to the backend
        answer = await real(self, c, how, base, kwargs)
        made.append(c.item_id)
        return {**answer, "cost": PER_CALL}

    monkeypatch.setattr(G, "estimate_call_cost", lambda *a, **k: PER_CALL)
    monkeypatch.setattr(G.Gateway, "_send", counting)
    return made


def _gw(tmp_path, cap):
    """A notebook-like gateway: partial mode, its runs' counts recorded by report.partial (issue 27 hook)."""
    return Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", max_cost_usd=cap, progress=False,
                   concurrency={"local": 1}, backbones=parse_backbones(["local/echo"]), budget_mode="partial",
                   on_run_end=functools.partial(record, tmp_path / "calls"))  # fmt: skip


def test_capped_sweep_is_partial_in_tables_and_index_then_finishes_without_repeats(tmp_path, priced):
    calls = [Call(f"i{k}", "local/echo", [{"role": "user", "content": f"item {k}"}]) for k in range(10)]
    rows = _gw(tmp_path, 0.035).run(calls, "20_pace_judge_sweep/demo")
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(rows) == 10 and len(ok) == 3 and len(priced) == 3
    assert all(r["error"].startswith("not called") for r in rows if r["status"] != "ok")
    logged = [
        json.loads(x)
        for x in (tmp_path / "calls" / "20_pace_judge_sweep_demo.jsonl").read_text().splitlines()
    ]
    assert len(logged) == 3  # what was not called is not in the log (a rerun makes it)

    part = for_notebooks(tmp_path / "calls", ["20_pace_judge_sweep"])
    assert part["calls_done"] == 3 and part["calls_total"] == 10
    paper = tmp_path / "paper"
    prov = Provenance("30_pace_metrics", "t", "t.yaml", "0")
    save_table(
        pd.DataFrame({"x": [1]}), "demo_tab", "A table.", paper, prov, evidence="reference", partial=part
    )
    rec = read_artifacts(paper)[0]
    assert "partial: 3 of 10 calls" in rec["caption"]
    assert "partial: 3 of 10 calls" in (paper / "tables" / "demo_tab.md").read_text(encoding="utf-8")
    build_index(paper, {"profile": "t", "notebooks": []})
    entry = json.loads((paper / "index.json").read_text(encoding="utf-8"))
    entry = next(
        a for a in (entry.get("artifacts") or entry.get("artefacts") or []) if a["name"] == "demo_tab"
    )
    assert entry["partial"]["calls_done"] == 3 and entry["partial"]["calls_total"] == 10

    rows2 = _gw(tmp_path, 1.0).run(calls, "20_pace_judge_sweep/demo")  # a higher cap: finish the rest
    assert [r["status"] for r in rows2] == ["ok"] * 10
    assert sorted(priced) == sorted(c.item_id for c in calls)  # each call made exactly once
    assert for_notebooks(tmp_path / "calls", ["20_pace_judge_sweep"]) is None


def test_a_notebooks_gateway_records_a_capped_run(outputs, priced):
    """The notebook context installs the gateway's run hook (issue 27): a capped sweep in a notebook is
    in partial.json and in the notebook's own partial note; a gateway without the hook writes nothing."""
    from shopbench.context import start

    ctx = start("smoke", notebook="20_pace_judge_sweep")
    gw = ctx.gateway
    gw.max_cost_usd, gw.concurrency = 0.035, {**gw.concurrency, "local": 1}
    calls = [Call(f"i{k}", "local/echo", [{"role": "user", "content": f"item {k}"}]) for k in range(10)]
    gw.run(calls, "20_pace_judge_sweep/hook")
    assert ctx.partial() == {"calls_done": 3, "calls_total": 10,
                             "runs": {"20_pace_judge_sweep/hook": {"calls_done": 3, "calls_total": 10}}}  # fmt: skip

    bare = Gateway(cache_dir=outputs / "c2", log_dir=outputs / "calls2", max_cost_usd=0.035, progress=False,
                   concurrency={"local": 1}, budget_mode="partial")  # fmt: skip
    bare.run(calls, "20_pace_judge_sweep/bare")
    assert not (outputs / "calls2" / "partial.json").exists()


def test_context_marks_downstream_notebooks_partial(tmp_path, monkeypatch):
    from shopbench.pipeline_steps import upstream
    from shopbench.report.partial import record

    assert set(upstream("30_pace_metrics")) == {"30_pace_metrics", "20_pace_judge_sweep", "10_paceshop_build"}
    record(tmp_path, "20_pace_judge_sweep/x", 4, 9)
    assert for_notebooks(tmp_path, upstream("30_pace_metrics"))["calls_total"] == 9
    assert for_notebooks(tmp_path, upstream("50_padme_meta_eval")) is None
    record(tmp_path, "20_pace_judge_sweep/x", 9, 9)
    assert for_notebooks(tmp_path, upstream("30_pace_metrics")) is None


def test_index_lists_substitutes(tmp_path):
    from shopbench.config import load_profile
    from shopbench.pipeline import substitutes

    p = tmp_path / "sub.yaml"
    p.write_text(
        "backbones:\n  - {name: b, model: openai/gpt-5.4-mini, substitute_for: retired-model}\n",
        encoding="utf-8",
    )
    subs = substitutes(load_profile(p))
    assert subs == {"b": "retired-model"}
    (tmp_path / "paper").mkdir()
    md, _ = build_index(tmp_path / "paper", {"profile": "sub", "notebooks": [], "substitutes": subs})
    assert "`b` stands in for the paper's `retired-model`" in md.read_text(encoding="utf-8")
    assert json.loads((tmp_path / "paper" / "index.json").read_text(encoding="utf-8"))["substitutes"] == subs
