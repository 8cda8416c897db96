"""nbval regression of notebook 70 on the released PADMÉ human study (issue 16 §6).

The study's values are fixed, so the outputs of notebook 70's checked cells (the study design, the
pairwise κ table and the label-accuracy table) are kept in ``tests/nbval/70_agreement.expected.json``.
The test builds the checked copy from notebook 70 itself (markers ``# NBVAL_CHECK_OUTPUT`` on those
cells, the kept outputs filled in), so no executed notebook is stored, and nbval re-executes it and
compares the marked cells (``--nbval-lax``).

Regenerate the outputs after changing notebook 70: ``python tests/test_nbval_agreement.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "notebooks" / "70_agreement.ipynb"
EXPECTED = ROOT / "tests" / "nbval" / "70_agreement.expected.json"
STUDY = ROOT.parent / "shared" / "data" / "padme_human_study"
MARKER = "# NBVAL_CHECK_OUTPUT"
CHECKED = ("padme_study_design", "padme_tab12_pairwise_kappa", "padme_tab2_label_accuracy")

needs_study = pytest.mark.skipif(not STUDY.is_dir(), reason=f"the released human study is absent ({STUDY})")


def marked_notebook() -> dict:
    """Notebook 70 with the marker on each checked cell (the cells that register a CHECKED table)."""
    nb = json.loads(SOURCE.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and any(f'"{n}"' in src for n in CHECKED):
            cell["source"] = MARKER + "\n" + src
    return nb


def _marked(nb: dict) -> list[str]:
    return [
        str(i)
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code" and MARKER in "".join(c["source"])
    ]


def test_expected_outputs_fit_notebook_70():
    nb = marked_notebook()
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))["cells"]
    assert len(_marked(nb)) == len(CHECKED)
    assert sorted(expected) == sorted(_marked(nb)), (
        "notebook 70 changed: run `python tests/test_nbval_agreement.py`"
    )
    assert all(expected[i] for i in expected)  # every checked cell has an output to compare


@needs_study
def test_notebook_70_reproduces_its_reference_outputs(tmp_path):
    nb = marked_notebook()
    for i, outputs in json.loads(EXPECTED.read_text(encoding="utf-8"))["cells"].items():
        nb["cells"][int(i)]["outputs"] = outputs
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for n, cell in enumerate(code, start=1):  # nbval compares only cells that were run
        cell["execution_count"] = n
    copy = tmp_path / "70_agreement.ipynb"
    copy.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "SHOPBENCH_OUTPUTS": str(tmp_path / "outputs"), "SHOPBENCH_PROGRESS": "off"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", str(copy)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def build_expected() -> Path:
    """Execute the marked notebook 70 (released study) and keep the outputs of its checked cells."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.reads(json.dumps(marked_notebook()), as_version=4)
    out = ROOT / "outputs" / "nbval-build"
    os.environ.setdefault("SHOPBENCH_OUTPUTS", str(out))
    os.environ["SHOPBENCH_PROGRESS"] = "off"
    NotebookClient(
        nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
    ).execute()
    cells = {
        str(i): c.outputs for i, c in enumerate(nb.cells) if c.cell_type == "code" and MARKER in c.source
    }
    about = json.loads(EXPECTED.read_text(encoding="utf-8"))["about"] if EXPECTED.exists() else ""
    EXPECTED.write_text(
        json.dumps({"about": about, "cells": cells}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return EXPECTED


if __name__ == "__main__":
    print(build_expected())
