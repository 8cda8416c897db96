"""Running the ``shopbench`` command in tests as a user runs it: a subprocess, its own outputs folder,
and readers for what a run leaves (the results log's folder and its call log)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..paths import ROOT

SHOPBENCH = [sys.executable, "-m", "shopbench.cli"]


def run_cli(args: list[str], outputs: str | Path, *, cwd: str | Path = ROOT, timeout: float = 300,
            **env: str) -> subprocess.CompletedProcess:  # fmt: skip
    """``shopbench ARGS`` in a subprocess writing under ``outputs`` (``$SHOPBENCH_OUTPUTS``), in ``cwd``."""
    e = {**os.environ, "SHOPBENCH_OUTPUTS": str(outputs), "LITELLM_LOCAL_MODEL_COST_MAP": "True", **env}
    return subprocess.run(
        [*SHOPBENCH, *args], capture_output=True, text=True, timeout=timeout, env=e, cwd=cwd
    )


def log_dir_of(stdout: str) -> Path:
    """The results log folder a run printed (its ``log: ...`` line)."""
    return Path(next(x for x in stdout.splitlines() if x.startswith("log: ")).removeprefix("log: ").strip())


def call_rows(log_dir: Path) -> list[dict]:
    """Every row of a run's call logs (``<log_dir>/calls/*.jsonl``), in file order."""
    return [json.loads(line) for f in sorted((log_dir / "calls").glob("*.jsonl"))
            for line in f.read_text().splitlines() if line.strip()]  # fmt: skip
