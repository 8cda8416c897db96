"""The rehearsal profile (issue 14 §3): a smoke-sized rehearsal through the pipeline, the rehearsal
evidence label and its audit."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from shopbench.report.evidence import (
    KNOWN,
    MEASURED,
    REHEARSAL,
    Evidence,
    EvidenceError,
    as_rehearsal,
    audit,
    resolve,
)

FAKE_KEY = "sk-" + "proj-REHEARSALSHOULDNEVERSENDTHIS0123456789"


def test_rehearsal_profile_is_typed():
    from shopbench.config import load_profile
    from shopbench.errors import ParamError
    from shopbench.profiles import RehearsalParams, validate_section

    prof = load_profile("rehearsal")
    assert isinstance(prof.params.rehearsal, RehearsalParams)
    names = {b if isinstance(b, str) else b.model for b in prof.params.backbones}
    assert {p.split("/", 1)[0] for p in names} >= {"openai", "anthropic", "fireworks_ai", "hosted_vllm"}
    with pytest.raises(ParamError):
        validate_section(RehearsalParams, {"rate_429": 2.0}, "rehearsal")
    with pytest.raises(ParamError):
        validate_section(RehearsalParams, {"latency": 0.1}, "rehearsal")


def test_as_rehearsal_replaces_measured_everywhere():
    df = pd.DataFrame({"model": ["local/echo", "openai/gpt-4o"], "evidence": [KNOWN, MEASURED]})
    ev, out = as_rehearsal(Evidence("mixed", "x", rows={KNOWN: 1, MEASURED: 1}), df)
    assert (
        ev.rehearsal and ev.rows == {KNOWN: 1, REHEARSAL: 1} and list(out["evidence"]) == [KNOWN, REHEARSAL]
    )
    ev2, _ = as_rehearsal(Evidence(MEASURED, parts={"a": MEASURED, "b": "reference"}))
    assert ev2.kind == REHEARSAL and ev2.parts == {"a": REHEARSAL, "b": "reference"}
    assert "proves the code path" in ev2.label()


def test_resolve_in_a_rehearsal(monkeypatch):
    monkeypatch.setenv("SHOPBENCH_REHEARSAL_SERVER", "http://127.0.0.1:1")
    ev, _ = resolve(MEASURED, "t")
    assert ev.kind == REHEARSAL and ev.as_dict()["rehearsal"] is True
    with pytest.raises(EvidenceError):
        resolve(None, "t")
    monkeypatch.delenv("SHOPBENCH_REHEARSAL_SERVER")
    assert resolve(MEASURED, "t")[0].kind == MEASURED


def test_audit_refuses_measured_in_a_rehearsal():
    base = {"kind": "table", "name": "t", "notebook": "nb"}
    assert audit([{**base, "evidence": REHEARSAL, "rehearsal": True}]) == []
    assert audit([{**base, "evidence": MEASURED, "rehearsal": True}])
    assert audit([{**base, "evidence": "mixed", "evidence_rows": {MEASURED: 2}, "rehearsal": True}])
    assert audit([{**base, "evidence": "mixed", "evidence_parts": {"x": MEASURED}, "rehearsal": True}])
    assert audit([{**base, "evidence": REHEARSAL}])  # the label without the record of a rehearsal
    rows = pd.DataFrame({"model": ["m"], "evidence": [MEASURED]})
    assert audit([{**base, "evidence": REHEARSAL, "rehearsal": True}], lambda a: rows)


@pytest.fixture(scope="module")
def rehearsal_run(tmp_path_factory):
    """Notebook 00 (every backbone of the roster, every provider path) under the rehearsal profile."""
    from shopbench.pipeline import run

    out = tmp_path_factory.mktemp("outputs")
    mp = pytest.MonkeyPatch()
    mp.setenv("SHOPBENCH_OUTPUTS", str(out))
    mp.setenv("OPENAI_API_KEY", FAKE_KEY)  # a real-looking key: the rehearsal must not use or leak it
    try:
        rc = run("rehearsal", only=["00_backends"])
    finally:
        mp.undo()
    return rc, out / "rehearsal"


def test_smoke_rehearsal_through_the_pipeline(rehearsal_run):
    rc, root = rehearsal_run
    paper = root / "paper"
    summary = json.loads((paper / "run.json").read_text())
    assert [nb["status"] for nb in summary["notebooks"]] == ["ok"], summary["notebooks"]
    assert rc == 0 and not summary["missing_artifacts"]
    assert "SHOPBENCH_REHEARSAL_SERVER" not in os.environ and os.environ.get("ANTHROPIC_API_BASE") is None
    rows = [json.loads(x) for p in (root / "calls").rglob("*.jsonl") for x in p.read_text().splitlines()]
    models = {r["model"].split("/", 1)[0] for r in rows if r["status"] == "ok"}
    assert models >= {"openai", "anthropic", "fireworks_ai", "hosted_vllm"}  # every provider path answered
    assert all("cached_tokens" in r and "cache_write_tokens" in r for r in rows)
    pc = summary["provider_cache"]
    assert pc["provider_calls"] > 0 and pc["provider_prompt_tokens"] > 0
    index = json.loads((paper / "index.json").read_text())
    arts = {a["name"]: a for a in index["artifacts"]}
    assert {"run_cost", "run_provider_cache", "run_fleet"} <= set(arts)
    assert not index.get("evidence_problems")
    assert all(a["evidence"] != MEASURED and a.get("rehearsal") for a in arts.values())
    cost = pd.read_csv(paper / arts["run_cost"]["files"]["csv"])
    assert cost.loc[cost["model"] == "all", "cost_usd"].item() > 0
    # hosted_vllm/ went to the rehearsal's fleet of two server processes (issue 14 §5; the kill
    # mid-sweep itself: tests/test_rehearsal_fleet.py), with no finished call logged twice
    fleet = pd.read_csv(paper / arts["run_fleet"]["files"]["csv"])
    assert len(fleet) == 2 and fleet["fleet_rows"].iloc[0] > 0 and (fleet["fleet_repeated_rows"] == 0).all()


def test_rehearsal_leaks_no_key(rehearsal_run):
    _, root = rehearsal_run
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert FAKE_KEY.encode() not in data, path


def test_rehearsal_preview_needs_no_key(monkeypatch, tmp_path):
    """Every model of a rehearsal answers from the local server: its preview (the pipeline's gate) must
    not refuse for missing keys, and leaves the environment as it found it."""
    from shopbench.preview import run_preview

    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path))
    for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    pv, refused, _ = run_preview("rehearsal", quiet=True)
    assert refused == [] and all(x.available for x in pv.lines)
    assert "OPENAI_API_KEY" not in os.environ and "SHOPBENCH_REHEARSAL_SERVER" not in os.environ
