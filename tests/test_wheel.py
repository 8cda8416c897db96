"""The built wheel, installed in a fresh venv, imports every module from outside the checkout (issue 11).

The wheel is built from a copy of the sources (so the checkout gets no ``build/`` or egg-info), with
``pip wheel --no-deps --no-build-isolation``: this environment's setuptools builds it (the dev pin,
setuptools >= 70.1, has ``bdist_wheel`` built in; an older one without the ``wheel`` package skips
these tests and says so). The fresh venv gets the dependencies from this environment through one
``.pth`` line naming this interpreter's site-packages: ``--system-site-packages`` would not do it
from inside a venv, since it exposes the *base* interpreter's packages, not the venv's. ``shopbench``
itself comes only from the wheel (the shared venv's editable ``shopbench`` is a ``.pth`` file, which
a plain path line does not process). The import run has ``cwd`` = a temporary folder and no
``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

# every module of the installed package is imported; a package's __main__ would run its command line
IMPORT_ALL = r"""
import importlib, json, os, pkgutil, sys, traceback
import shopbench
found, failed = ["shopbench"], {}
for m in pkgutil.walk_packages(shopbench.__path__, "shopbench."):
    if m.name.rsplit(".", 1)[-1] == "__main__":
        continue
    found.append(m.name)
    try:
        importlib.import_module(m.name)
    except BaseException:
        failed[m.name] = traceback.format_exc(limit=-3)
print(json.dumps({"file": shopbench.__file__, "modules": found, "failed": failed}))
"""

# prompts load on first use: without a prompts folder a clear error, with $SHOPBENCH_PROMPTS_DIR the text
LAZY_PROMPT = r"""
import json, os
from shopbench.prompts import PromptNotFound
from shopbench.shopsim import default_system_prompt
try:
    text = default_system_prompt()
except PromptNotFound as e:
    text, err = None, str(e)
else:
    err = None
print(json.dumps({"text": text, "error": err}))
"""


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "SHOPBENCH_", "VIRTUAL_ENV"))}
    return {**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **extra}


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=_clean_env(**env), capture_output=True, text=True, timeout=600)


def _can_build_wheels() -> bool:
    code = "import setuptools.command.bdist_wheel"  # setuptools >= 70.1
    if subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0:
        return True
    return (
        subprocess.run([sys.executable, "-c", "import wheel.bdist_wheel"], capture_output=True).returncode
        == 0
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "lib", src / "lib", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    if not _can_build_wheels():
        pytest.skip(
            "this environment's setuptools has no bdist_wheel: install the dev pins (setuptools >= 70.1)"
        )
    dist = tmp_path_factory.mktemp("dist")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(dist),
        str(src),
    ]
    res = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    (whl,) = dist.glob("shopbench-*.whl")
    return whl


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The fresh venv's python, with the wheel installed and the shared dependencies visible."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    (Path(purelib) / "_shared_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    cmd = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)]
    res = _run(cmd, cwd=env_dir)
    assert res.returncode == 0, res.stderr[-3000:]
    return python


def test_wheel_holds_every_package_and_its_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = {p.parent.relative_to(ROOT / "lib").as_posix() for p in (ROOT / "lib").rglob("*.py")}
    for pkg in packages:
        assert f"{pkg}/__init__.py" in names, f"{pkg} has no __init__.py in the wheel"
    assert {"shopbench/py.typed", "shopbench/annotate/voila.json",
            "shopbench/domains/tau2_retail/reference/tau2_retail_replay.jsonl"} <= names  # fmt: skip
    from shopbench.schemas import SCHEMAS  # issue 26 §3: `shopbench schema NAME` reads them from the package

    assert {f"shopbench/schemas/{n}.schema.json" for n in SCHEMAS} <= names


def test_installed_wheel_imports_every_module(installed, tmp_path):
    res = _run([str(installed), "-c", IMPORT_ALL], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.splitlines()[-1])
    assert not Path(out["file"]).is_relative_to(ROOT), f"imported the checkout, not the wheel: {out['file']}"
    in_tree = {".".join(p.relative_to(ROOT / "lib").with_suffix("").parts).removesuffix(".__init__")
               for p in (ROOT / "lib").rglob("*.py") if p.stem != "__main__"}  # fmt: skip
    assert set(out["modules"]) == in_tree
    assert not out["failed"], "\n".join(f"{m}:\n{tb}" for m, tb in out["failed"].items())


def test_installed_wheel_reads_prompts_lazily_from_the_configured_folder(installed, tmp_path):
    res = _run([str(installed), "-c", LAZY_PROMPT], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.splitlines()[-1])
    assert (
        out["text"] is None
        and "shopsim_agent_system.txt" in out["error"]
        and "SHOPBENCH_PROMPTS_DIR" in out["error"]
    )
    res = _run([str(installed), "-c", LAZY_PROMPT], cwd=tmp_path, SHOPBENCH_PROMPTS_DIR=str(ROOT / "prompts"))
    out = json.loads(res.stdout.splitlines()[-1])
    assert out["error"] is None and out["text"].startswith("You are the shopping assistant")
