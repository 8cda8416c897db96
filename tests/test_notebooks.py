"""Every notebook of the pipeline runs top to bottom with papermill under params/smoke.yaml.

The run also checks the paper index and run.json, and that a key set in the environment appears in
no file the run produced (executed notebooks, logs, caches, tables).
"""

import json
import re

import pytest

from shopbench.pipeline import run
from shopbench.pipeline_steps import load_pipeline

FAKE_KEY = (
    "sk-" + "proj-NOTEBOOKSMOKEFAKEKEY0123456789abcdefXYZ"
)  # built so no key-like literal sits in the file


RAW_MISSING = {"nan", "NaN", "None", "<NA>", "NaT"}
NO_VALUE = {"–", ""}


def index_problems(markdown: str) -> list[str]:
    """Issue 16 "Done when": cells of the index's tables that print a raw missing value, and columns
    with no value in any row (those must be left out and named in the caption, not shown empty)."""

    def cells(line: str) -> list[str]:
        return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]

    problems = []
    for block in re.split(r"\n(?=#### )", markdown):
        name = block.splitlines()[0][5:] if block.startswith("#### ") else "(top)"
        lines = [ln for ln in block.splitlines() if ln.startswith("|")]
        if len(lines) < 3:
            continue
        head, body = cells(lines[0]), [cells(ln) for ln in lines[2:]]
        problems += [f"{name}: cell {c!r} in column {h!r}" for r in body
                     for h, c in zip(head, r, strict=False) if c in RAW_MISSING]  # fmt: skip
        for k, h in enumerate(head):
            if h and all(len(r) > k and r[k] in NO_VALUE for r in body):
                problems.append(f"{name}: column {h!r} has no value in any row")
    return problems


def test_index_problems_finds_raw_missing_values_and_empty_columns():
    good = "#### Table `t`\n\n| a | b |\n|---|---|\n| x | 1 |\n| – | 2 |\n"
    bad = "#### Table `u`\n\n| a | b | c |\n|---|---|---|\n| nan | 1 | – |\n| y | <NA> | – |\n"
    assert index_problems(good) == []
    assert index_problems(bad) == ["Table `u`: cell 'nan' in column 'a'", "Table `u`: cell '<NA>' in column 'b'",
                                   "Table `u`: column 'c' has no value in any row"]  # fmt: skip


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
    assert not index_problems(index), index_problems(index)[:20]


def test_no_key_in_any_output(smoke_run):
    _, out = smoke_run
    for path in out.rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), f"key leaked into {path}"
