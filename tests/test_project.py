"""Project-level contracts: environment.yml matches pyproject.toml; notebooks are committed clean."""

import json
import tomllib
from pathlib import Path

import yaml

from shopbench.pipeline_steps import load_pipeline

ROOT = Path(__file__).resolve().parents[1]


def test_environment_yml_matches_pyproject():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = set(py["dependencies"]) | set(py["optional-dependencies"]["dev"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert set(p for p in pip if not p.startswith("-e")) == wanted


def test_pipeline_notebooks_are_parameterised_and_clean():
    steps = load_pipeline()
    assert steps and steps[0].name == "00_backends"
    for s in steps:
        nb = json.loads(s.path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert "parameters" in code[0]["metadata"].get("tags", []), (
            f"{s.name}: first code cell must be tagged"
        )
        assert "profile" in "".join(code[0]["source"])
        assert not any(c.get("outputs") or c.get("execution_count") for c in code), f"{s.name} has outputs"


def test_notebooks_are_stored_as_jupyterlab_writes_them():
    """Opening a pipeline notebook in JupyterLab must not mark it modified (issue 16 §5): the stored
    kernelspec/language_info are what the kernel reports, and no outputs are stored."""
    from shopbench.notebook_files import not_normal

    bad = not_normal(same_python=False)
    assert not bad, f"run `python -m shopbench.notebook_files normalize`: {[p.name for p in bad]}"
