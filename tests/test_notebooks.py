"""Every notebook of the pipeline runs top to bottom with papermill under params/smoke.yaml.

The run also checks the paper index and run.json, and that a key set in the environment appears in
no file the run produced (executed notebooks, logs, caches, tables).
"""

import json

import pytest

from shopbench.pipeline import load_pipeline, run

FAKE_KEY = (
    "sk-" + "proj-NOTEBOOKSMOKEFAKEKEY0123456789abcdefXYZ"
)  # built so no key-like literal sits in the file


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("outputs")
    mp = pytest.MonkeyPatch()
    mp.setenv("SHOPBENCH_OUTPUTS", str(out))
    mp.setenv("OPENAI_API_KEY", FAKE_KEY)
    try:
        rc = run("smoke")
    finally:
        mp.undo()
    return rc, out


def test_pipeline_smoke_run(smoke_run):
    rc, out = smoke_run
    paper = out / "smoke" / "paper"
    summary = json.loads((paper / "run.json").read_text())
    failed = [nb["name"] for nb in summary["notebooks"] if nb["status"] != "ok"]
    assert not failed, f"notebooks failed: {failed} (see {out}/smoke/notebooks)"
    assert rc == 0 and not summary["missing_artifacts"]
    for key in ("wall_s", "notebooks", "cache_hit_rate", "calls", "cost_usd"):
        assert key in summary
    assert summary["calls"] > 0
    index = (paper / "index.md").read_text()
    for step in load_pipeline():
        assert (out / "smoke" / "notebooks" / f"{step.name}.ipynb").exists()
        for name in step.produces:
            assert f"`{name}`" in index
    assert (paper / "index.html").exists()


def test_no_key_in_any_output(smoke_run):
    _, out = smoke_run
    for path in out.rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), f"key leaked into {path}"
