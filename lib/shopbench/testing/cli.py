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


def friendliness_pairs_file(path: Path) -> Path:
    """A PADMÉ pairs dataset at ``path`` of four kept friendliness pairs (a curt reply vs a warm one), for
    the padme_evaluator task's tests; returns its ``pairs.jsonl``."""
    from ..padme.dataset import write_pairs_dataset
    from ..padme.types import Pair, Rollout

    def roll(rid, text, level):
        return Rollout(rid, "t1", "retail", "test", "friendliness", level, "", "agent-m", "scripted", 0, 0,
                       [{"role": "user", "content": "my order is late"}, {"role": "assistant", "content": text}])  # fmt: skip

    pairs = [Pair(f"p{i}", f"c{i}", "t1", "retail", "test", "friendliness", "bad-good", "agent-m", 0,
                  roll(f"w{i}", f"No. ({i})", "bad"), roll(f"b{i}", f"I am sorry to hear that; let me check ({i}).", "good"),
                  {"bad": "be curt", "good": "be warm"}, kept=True) for i in range(4)]  # fmt: skip
    write_pairs_dataset(pairs, path)
    return path / "pairs.jsonl"
