"""``make paper`` re-executes only the notebooks whose inputs changed (shopbench.uptodate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shopbench import pipeline, pipeline_steps
from shopbench.report.artifacts import read_artifacts
from shopbench.uptodate import RunInputs, environment_digest, failed_calls, notebook_paths, tree_digest


def _notebook(path: Path, source: str = "x = 1", params: str = 'profile = "smoke"') -> Path:
    cells = [
        {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": params, "outputs": []},
        {"cell_type": "code", "metadata": {}, "source": source, "outputs": []},
    ]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


@pytest.fixture
def tiny_pipeline(tmp_path, outputs, monkeypatch):
    """Two notebooks (b needs a) in a private notebooks folder; a fake papermill that writes the
    executed copy, registers the step's artefacts and logs one model call per step."""
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _notebook(nbdir / "a.ipynb")
    _notebook(nbdir / "b.ipynb")
    steps = [
        pipeline_steps.Step("a", produces=["ta"]),
        pipeline_steps.Step("b", produces=["tb"], needs=["a"]),
    ]
    monkeypatch.setattr(pipeline_steps, "NOTEBOOKS_DIR", nbdir)
    monkeypatch.setattr(pipeline_steps, "load_pipeline", lambda: steps)
    monkeypatch.setattr(
        pipeline, "build_index", lambda paper, summary: (paper / "index.md", paper / "index.html")
    )
    monkeypatch.setattr(pipeline, "audit_index", lambda paper: [])
    ran: list[str] = []
    call_status = {"a": "ok", "b": "ok"}

    def fake_run(step, profile, out_dir):
        ran.append(step.name)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{step.name}.ipynb").write_text("{}")
        root = out_dir.parent
        (root / "paper").mkdir(parents=True, exist_ok=True)
        with open(root / "paper" / "artifacts.jsonl", "a") as f:
            for name in step.produces:
                f.write(json.dumps({"kind": "table", "name": name, "notebook": step.name}) + "\n")
        (root / "calls").mkdir(exist_ok=True)
        row = {
            "status": call_status[step.name],
            "error": "Timeout" if call_status[step.name] == "error" else None,
        }
        (root / "calls" / f"{step.name}_calls.jsonl").write_text(json.dumps(row) + "\n")

    monkeypatch.setattr(pipeline, "run_notebook", fake_run)
    return nbdir, ran, call_status


def _statuses(outputs: Path) -> dict[str, str]:
    run = json.loads((outputs / "smoke" / "paper" / "run.json").read_text())
    return {nb["name"]: nb["status"] for nb in run["notebooks"]}


def test_a_rerun_with_nothing_changed_executes_nothing_and_keeps_the_artefacts(tiny_pipeline, outputs):
    nbdir, ran, _ = tiny_pipeline
    assert pipeline.run("smoke", preview=False) == 0
    assert ran == ["a", "b"]
    assert pipeline.run("smoke", preview=False) == 0
    assert ran == ["a", "b"], "an unchanged notebook was re-executed"
    assert _statuses(outputs) == {"a": "up to date", "b": "up to date"}
    paper = outputs / "smoke" / "paper"
    assert {a["name"] for a in read_artifacts(paper)} == {"ta", "tb"}  # registrations kept
    assert (outputs / "smoke" / "calls" / "a_calls.jsonl").exists()  # call logs kept


def test_a_changed_notebook_reruns_it_and_everything_after(tiny_pipeline, outputs):
    nbdir, ran, _ = tiny_pipeline
    pipeline.run("smoke", preview=False)
    _notebook(nbdir / "b.ipynb", source="x = 2")
    pipeline.run("smoke", preview=False)
    assert ran == ["a", "b", "b"]
    _notebook(nbdir / "a.ipynb", source="y = 2")
    pipeline.run("smoke", preview=False)
    assert ran == ["a", "b", "b", "a", "b"]  # upstream change: the dependent reruns too
    assert _statuses(outputs) == {"a": "ok", "b": "ok"}


def test_rerun_flag_missing_output_and_failed_calls_force_execution(tiny_pipeline, outputs):
    nbdir, ran, call_status = tiny_pipeline
    pipeline.run("smoke", preview=False)
    pipeline.run("smoke", preview=False, rerun=True)
    assert ran == ["a", "b", "a", "b"]
    (outputs / "smoke" / "notebooks" / "a.ipynb").unlink()
    pipeline.run("smoke", preview=False)
    assert ran[-2:] == ["b", "a"]  # a alone: its inputs, so b's, did not change
    call_status["b"] = "error"  # a timed-out call: the next run retries it
    pipeline.run("smoke", preview=False, rerun=True)
    n = len(ran)
    pipeline.run("smoke", preview=False)
    assert ran[n:] == ["b"]


def test_a_failed_notebook_is_never_up_to_date(tiny_pipeline, outputs, monkeypatch):
    nbdir, ran, _ = tiny_pipeline
    real = pipeline.run_notebook

    def failing(step, profile, out_dir):
        real(step, profile, out_dir)
        if step.name == "a":
            raise RuntimeError("boom")

    monkeypatch.setattr(pipeline, "run_notebook", failing)
    assert pipeline.run("smoke", preview=False) == 1
    monkeypatch.setattr(pipeline, "run_notebook", real)
    assert pipeline.run("smoke", preview=False) == 0
    assert ran == ["a", "a", "b"]


def test_fingerprint_follows_inputs_and_never_holds_a_key(tmp_path, monkeypatch):
    nb = _notebook(tmp_path / "n.ipynb")
    prof = tmp_path / "p.yaml"
    prof.write_text("seed: 1\n")
    pipe = tmp_path / "pipeline.yaml"
    pipe.write_text("notebooks: []\n")
    base = RunInputs.of(prof, {}, pipe, tmp_path)
    fp = base.fingerprint(nb, [])
    assert fp == RunInputs.of(prof, {}, pipe, tmp_path).fingerprint(nb, [])
    assert fp != base.fingerprint(nb, ["upstream"])
    prof.write_text("seed: 2\n")
    assert RunInputs.of(prof, {}, pipe, tmp_path).fingerprint(nb, []) != fp
    # external data the profile names (a value with a path separator): a changed file changes it
    data = tmp_path / "data"
    data.mkdir()
    (data / "f.json").write_text("[1]")
    with_data = RunInputs.of(prof, {"x": {"path": "data/f.json"}}, pipe, tmp_path)
    (data / "f.json").write_text("[1, 2]")
    assert RunInputs.of(prof, {"x": {"path": "data/f.json"}}, pipe, tmp_path).external != with_data.external
    # provider settings count by name only
    secret = "value-of-a-credential-variable"
    a = environment_digest({"OPENAI_API_KEY": secret})
    assert a == environment_digest({"OPENAI_API_KEY": "another-value"})
    assert a != environment_digest({})
    assert secret not in a


def test_an_empty_annotations_folder_counts_as_missing(tmp_path):
    """The first run creates an empty annotations folder; the second run must not see changed inputs
    (found on a fresh clone: the first two smoke runs differed on notebook 00)."""
    nb = _notebook(tmp_path / "n.ipynb")
    prof = tmp_path / "p.yaml"
    prof.write_text("seed: 1\n")
    pipe = tmp_path / "pipeline.yaml"
    pipe.write_text("notebooks: []\n")
    store = tmp_path / "annotations"
    before = RunInputs.of(prof, {}, pipe, tmp_path, store).fingerprint(nb, [])
    store.mkdir()
    assert RunInputs.of(prof, {}, pipe, tmp_path, store).fingerprint(nb, []) == before
    (store / "ann1.jsonl").write_text('{"choice": "A"}\n')
    assert RunInputs.of(prof, {}, pipe, tmp_path, store).fingerprint(nb, []) != before


def test_library_and_notebook_parameters_are_inputs(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text("A = 1\n")
    d = tree_digest(pkg)
    (pkg / "m.py").write_text("A = 2\n")
    assert tree_digest(pkg) != d
    (tmp_path / "study").mkdir()
    nb = _notebook(tmp_path / "n.ipynb", params='profile = "smoke"\nstudy_dir = "./study"  # data')
    assert notebook_paths(nb) == [(tmp_path / "study").resolve()]


def test_a_context_window_error_does_not_force_a_rerun(tmp_path):
    calls = tmp_path / "calls"
    calls.mkdir()
    rows = [
        {
            "status": "error",
            "error": "ContextWindowExceededError: Requested tokens (8973) exceed context window",
        },
        {"status": "ok", "error": None},
    ]
    (calls / "n_x.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert failed_calls(calls, "n") == 0
    (calls / "n_y.jsonl").write_text(json.dumps({"status": "error", "error": "Timeout: no answer"}) + "\n")
    assert failed_calls(calls, "n") == 1


def test_the_registry_names_the_notebook_as_the_check_reads_it(tmp_path):
    """The up-to-date check finds a notebook's artefacts by the registry's flat ``notebook`` field."""
    import pandas as pd

    from shopbench.report.artifacts import Provenance, save_table

    prov = Provenance(notebook="a", profile="smoke", params_file="smoke.yaml", params_sha256="x")
    save_table(pd.DataFrame({"x": [1]}), "ta", "A table.", tmp_path, prov, evidence="measured", why="test")
    (rec,) = read_artifacts(tmp_path)
    assert pipeline._notebook_of(rec) == "a"
