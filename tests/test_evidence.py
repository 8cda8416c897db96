"""Every artefact says what kind of evidence it is, and no stand-in row is labelled measured
(issue 13 §1); the index prints one missing-value mark, integral counts and no empty columns
(issue 16 §3)."""

from __future__ import annotations

import json

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from shopbench.context import start  # noqa: E402
from shopbench.report import build_index  # noqa: E402
from shopbench.report import evidence as E  # noqa: E402
from shopbench.report.artifacts import read_artifacts  # noqa: E402


@pytest.fixture
def ctx(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path))
    return start("smoke", notebook="99_evidence")


def _judges() -> pd.DataFrame:
    idx = pd.MultiIndex.from_tuples(
        [("backbone", "pacejudge", "local/oracle-rules"), ("backbone", "pacejudge", "local/checks"),
         ("backbone", "pacejudge", "llamacpp/qwen"), ("mean", "pacejudge", "mean")],
        names=["level", "protocol", "backbone"])  # fmt: skip
    return pd.DataFrame({"PACE": ["0.99 [0.98, 1.00]", "0.40 [0.3, 0.5]", "0.20 [0.1, 0.3]", "–"],
                         "n_records": [24.0, 24.0, 6.0, np.nan]}, index=idx)  # fmt: skip


def test_a_missing_or_unknown_kind_is_an_error(ctx):
    df = pd.DataFrame({"a": [1]})
    with pytest.raises(TypeError):
        ctx.table(df, "t_none", "No kind.")
    with pytest.raises(E.EvidenceError, match="required"):
        ctx.table(df, "t_none", "No kind.", evidence=None)
    with pytest.raises(E.EvidenceError, match="not one of"):
        ctx.table(df, "t_bad", "Bad kind.", evidence="finding")
    with pytest.raises(E.EvidenceError, match="per-row column"):
        ctx.table(df, "t_mixed", "Mixed without rows.", evidence="mixed")
    with pytest.raises(E.EvidenceError, match="not columns"):
        ctx.table(df, "t_parts", "Unknown part.", evidence={"b": "measured"})
    fig, _ = plt.subplots()
    with pytest.raises(TypeError):
        ctx.figure(fig, "f_none", "No kind.")
    plt.close(fig)
    assert read_artifacts(ctx.paper_dir) == []  # nothing half-registered


def test_per_row_kinds_reach_the_csv_caption_and_index_json(ctx):
    ctx.table(
        _judges(), "t_judges", "Judges.", evidence=ctx.evidence.per_row("backbone", members=["llamacpp/qwen"])
    )
    csv = pd.read_csv(ctx.paper_dir / "tables" / "t_judges.csv")
    assert list(csv["evidence"]) == ["known-answer", "measured", "measured", "measured"]
    md = (ctx.paper_dir / "tables" / "t_judges.md").read_text()
    assert "Evidence: mixed, per row in column `evidence` (1 known-answer, 3 measured)" in md
    assert "local/oracle-rules: rule judge built on the PACEShop generator" in md
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    ctx.figure(
        fig, "f_parts", "Ours beside the paper.", evidence={"ours": "measured", "paper": "reference"}, n=150
    )
    plt.close(fig)
    build_index(ctx.paper_dir, {"profile": "smoke", "notebooks": []})
    index = json.loads((ctx.paper_dir / "index.json").read_text())
    by_name = {a["name"]: a for a in index["artifacts"]}
    t, f = by_name["t_judges"], by_name["f_parts"]
    assert (
        t["evidence"] == "mixed" and t["evidence_rows"] == {"known-answer": 1, "measured": 3} and t["n"] == 4
    )
    assert f["evidence"] == "mixed" and f["evidence_parts"] == {"ours": "measured", "paper": "reference"}
    assert f["n"] == 150 and "Evidence: mixed by column/series" in f["caption"]
    for key in ("name", "notebook", "kind", "evidence", "n", "backbones", "files", "caption"):
        assert key in t
    assert index["evidence_problems"] == []
    text = (ctx.paper_dir / "index.md").read_text()
    assert "2 artefacts: **1 mixed**" not in text and "**2 mixed**" in text


def test_a_stand_in_row_labelled_measured_is_found(ctx):
    df = _judges().reset_index()
    ctx.table(df, "t_wrong", "All rows called measured.", evidence="measured")
    agents = pd.DataFrame({"group": ["outcome"], "metric": ["exact cart"], "scripted:competent": ["1.0"],
                           "llm:llamacpp/qwen": ["0.1"]})  # fmt: skip
    ctx.table(
        agents,
        "t_agents_wrong",
        "Scripted agent called measured.",
        evidence={"scripted:competent": "measured", "llm:llamacpp/qwen": "measured"},
    )
    ctx.table(agents, "t_agents_right", "Per column.", evidence=ctx.evidence.per_column(agents.columns[2:]))
    build_index(ctx.paper_dir, {"profile": "smoke", "notebooks": []})
    problems = json.loads((ctx.paper_dir / "index.json").read_text())["evidence_problems"]
    assert any("t_wrong" in p and "local/oracle-rules" in p for p in problems)
    assert any("t_agents_wrong" in p and "scripted:competent" in p for p in problems)
    assert not any("t_agents_right" in p for p in problems)
    assert "Evidence audit: 2 problem(s)" in (ctx.paper_dir / "index.md").read_text()
    assert E.audit([{"kind": "table", "name": "x", "notebook": "n"}]) == [
        "table 'x' (n): no valid evidence kind (got None)"
    ]


def test_a_majority_row_over_measured_members_passes_the_audit(ctx):
    """majority@k rows take the members' kind when the table is registered; the audit re-derives it from
    the same members (a paper run reported 35 false problems when it did not)."""
    runs = pd.DataFrame({"backbone": ["llamacpp/a", "llamacpp/b", "majority@2"], "s0": [0.5, 0.6, 0.55]})
    ctx.table(
        runs,
        "t_vote",
        "Votes.",
        evidence=ctx.evidence.per_row("backbone", members=["llamacpp/a", "llamacpp/b"]),
    )
    known = pd.DataFrame({"backbone": ["local/oracle-rules", "majority@1"], "s0": [0.9, 0.9]})
    ctx.table(
        known,
        "t_vote_known",
        "Votes.",
        evidence=ctx.evidence.per_row("backbone", members=["local/oracle-rules"]),
    )
    build_index(ctx.paper_dir, {"profile": "smoke", "notebooks": []})
    index = json.loads((ctx.paper_dir / "index.json").read_text())
    assert not [p for p in index["evidence_problems"] if "t_vote" in p]
    rows = pd.read_csv(ctx.paper_dir / "tables" / "t_vote.csv")
    assert list(rows[E.EVIDENCE_COLUMN]) == [E.MEASURED] * 3
    known_rows = pd.read_csv(ctx.paper_dir / "tables" / "t_vote_known.csv")
    assert list(known_rows[E.EVIDENCE_COLUMN]) == [E.KNOWN] * 2
    # the same row labelled measured by hand, with no members recorded, is still caught
    assert E.audit([{"kind": "table", "name": "x", "notebook": "n", "evidence": E.MEASURED}],
                   read_table=lambda a: pd.DataFrame({"backbone": ["majority@2"]}))  # fmt: skip


def test_producers_of_the_real_pipeline_are_classified():
    """The names the shop sweep, the PADMÉ roster and the PACE judges really use."""
    from shopbench.config import load_profile
    from shopbench.judges.padme.roster import evaluators_from_profile
    from shopbench.shopsim.agents import SCRIPTED_AGENTS, make_agent

    for kind in SCRIPTED_AGENTS:
        assert E.producer_kind(make_agent(kind).name)[0] == E.KNOWN
    assert E.producer_kind("llm:llamacpp/qwen2.5-coder-1.5b-instruct")[0] == E.MEASURED
    assert E.producer_kind("llm:local/schema-sampler") == E.LOCAL_BACKENDS["local/schema-sampler"]
    prof = load_profile("smoke")
    specs = evaluators_from_profile(prof)
    synth, rec = E.evaluator_kinds(specs), E.evaluator_kinds(specs, data="recorded")
    for s in specs:
        assert synth[s.name] == (E.KNOWN if s.is_heuristic else E.MEASURED)
        assert rec[s.name] == E.MEASURED
    padme = prof.params.padme
    assert E.padme_synthesis_kind(padme)[0] == E.KNOWN
    assert E.padme_filter_kinds({"filter_judges": [{"heuristic": "J1"}, {"backbone": "llamacpp/x", "name": "J2"}]}) == {
        "J1": E.KNOWN, "J2": E.MEASURED}  # fmt: skip
    assert E.producer_kind("majority@2", ["llamacpp/a", "local/oracle-rules"])[0] == E.KNOWN
    assert E.producer_kind("local/some-new-plugin")[0] == E.KNOWN  # unclassified: not a measurement
    assert E.combine(["measured", "reference"]) == E.MIXED


def test_index_shows_one_missing_mark_integral_counts_and_no_empty_columns(ctx):
    df = pd.DataFrame({"n_swaps": [24.0, 12.0], "calls": [36.0, np.nan], "rate": [1.0, 0.5], "r": [np.nan, np.nan],
                       "note": ["-", "x"]}, index=pd.Index(["a", "b"], name="judge"))  # fmt: skip
    empty_row = pd.DataFrame(
        {"x": [0.5, np.nan], "y": ["–", "-"]}, index=pd.Index(["full", "empty"], name="row")
    )
    ctx.table(df, "t_present", "Counts.", evidence="known-answer")
    ctx.table(empty_row, "t_rows", "Rows.", evidence="measured")
    md, html = build_index(ctx.paper_dir, {"profile": "smoke", "notebooks": []})
    text = md.read_text()
    assert "nan" not in text.lower().replace("nano", "")
    assert "| a | 24 | 36 | 1.000 | – |" in text and "24.000" not in text
    assert "Columns with no value in this run, not shown: r." in text
    assert "Rows with no value in this run, not shown: empty." in text and "| empty |" not in text
    assert "overflow-x:auto" in html.read_text()
    csv = pd.read_csv(ctx.paper_dir / "tables" / "t_present.csv")
    assert "r" in csv.columns and csv["n_swaps"].tolist() == [24.0, 12.0]  # the data file keeps everything


def test_a_default_index_is_not_written_to_the_csv(tmp_path):
    """A table with the default 0..n-1 index reads back without an "Unnamed: 0" column; a named index is kept."""
    from shopbench.report.artifacts import Provenance, save_table

    prov = Provenance(notebook="t", profile="smoke", params_file="p.yaml", params_sha256="0")
    save_table(pd.DataFrame({"a": [1, 2]}), "t_plain", "Plain.", tmp_path, prov, evidence="known-answer")
    assert list(pd.read_csv(tmp_path / "tables" / "t_plain.csv").columns) == ["a"]
    named = pd.DataFrame({"a": [1, 2]}, index=pd.Index(["x", "y"], name="judge"))
    save_table(named, "t_named", "Named.", tmp_path, prov, evidence="known-answer")
    assert list(pd.read_csv(tmp_path / "tables" / "t_named.csv").columns) == ["judge", "a"]


def test_a_mixed_figure_marks_the_kind_beside_each_stand_in_series(tmp_path):
    """Issue 13 §1: a known-answer series is "labelled so everywhere it is shown", in the figure too."""
    from shopbench.report.artifacts import Provenance, save_figure

    prov = Provenance(notebook="t", profile="smoke", params_file="p.yaml", params_sha256="0")
    fig, (a, b) = plt.subplots(1, 2)
    a.bar([0, 1], [0.9, 0.4], label="x")
    a.plot([0, 1], [0.9, 0.9], label="pacejudge / local/oracle-rules")
    a.plot([0, 1], [0.3, 0.4], label="pacejudge / llamacpp/qwen")
    a.legend()
    b.set_yticks([0, 1], ["heuristic (n=664)", "llamacpp/qwen (n=1)"])
    kinds = {"local/oracle-rules": "known-answer", "llamacpp/qwen": "measured", "heuristic": "known-answer"}
    save_figure(fig, "t_mixed", "Mixed.", tmp_path, prov, evidence=kinds)
    legend = [t.get_text() for t in a.get_legend().get_texts()]
    assert "pacejudge / local/oracle-rules [known-answer]" in legend and "pacejudge / llamacpp/qwen" in legend
    assert [t.get_text() for t in b.get_yticklabels()] == [
        "heuristic (n=664) [known-answer]",
        "llamacpp/qwen (n=1)",
    ]
    plt.close(fig)
