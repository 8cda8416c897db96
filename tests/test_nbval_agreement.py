"""nbval regression of notebook 70 on the released PADMÉ human study (issue 16 §6).

The study's values are fixed, so an executed copy of notebook 70 is kept under ``tests/nbval/`` and
nbval re-executes it and compares the outputs of the cells marked ``# NBVAL_CHECK_OUTPUT`` (the study
design, the pairwise κ table and the label-accuracy table: ``--nbval-lax`` checks only those). A
second test keeps the copy honest: its code must be notebook 70's code, marker comments aside.

Regenerate the copy after changing notebook 70: ``python tests/test_nbval_agreement.py``.
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
REFERENCE = ROOT / "tests" / "nbval" / "70_agreement.ipynb"
STUDY = ROOT.parent / "shared" / "data" / "padme_human_study"
MARKER = "# NBVAL_CHECK_OUTPUT"
CHECKED = ("padme_study_design", "padme_tab12_pairwise_kappa", "padme_tab2_label_accuracy")

needs_study = pytest.mark.skipif(not STUDY.is_dir(), reason=f"the released human study is absent ({STUDY})")


def _code(nb: dict) -> list[str]:
    return ["".join(c["source"]).replace(MARKER + "\n", "") for c in nb["cells"] if c["cell_type"] == "code"]


def test_reference_copy_is_notebook_70():
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    src = json.loads(SOURCE.read_text(encoding="utf-8"))
    assert _code(ref) == _code(src), "notebook 70 changed: run `python tests/test_nbval_agreement.py`"
    marked = [
        "".join(c["source"])
        for c in ref["cells"]
        if c["cell_type"] == "code" and MARKER in "".join(c["source"])
    ]
    assert len(marked) == len(CHECKED) and all(any(n in m for m in marked) for n in CHECKED)


@needs_study
def test_notebook_70_reproduces_its_reference_outputs(tmp_path):
    env = {**os.environ, "SHOPBENCH_OUTPUTS": str(tmp_path), "SHOPBENCH_PROGRESS": "off"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", str(REFERENCE)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def build_reference() -> Path:
    """Execute notebook 70 (smoke profile, released study) with markers on the checked cells."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(SOURCE, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and any(f'"{n}"' in cell.source for n in CHECKED):
            cell.source = MARKER + "\n" + cell.source
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    out = ROOT / "outputs" / "nbval-build"
    os.environ.setdefault("SHOPBENCH_OUTPUTS", str(out))
    os.environ["SHOPBENCH_PROGRESS"] = "off"
    NotebookClient(
        nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(REFERENCE.parent)}}
    ).execute()
    nbformat.write(nb, REFERENCE)
    return REFERENCE


if __name__ == "__main__":
    print(build_reference())
