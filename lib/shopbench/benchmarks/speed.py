"""``outputs/bench/speed.json``: the ``shopbench`` command against inspect_ai's ``inspect eval`` (issue 26, "Speed").

Measured side by side in one run, each command a fresh process, in this order:

- inspect_ai: ``inspect eval toy.py --model mockllm/model -T n=N`` on a one-line toy task (N samples
  "Say i." → ``generate()`` → ``includes()``), inspect-ai installed in the bench's own environment
  (``outputs/bench/.inspect-venv``, created here with ``pip install inspect-ai==0.3.285``; when that pin
  does not resolve, the newest available, and the version used is recorded);
- shopbench: ``shopbench eval pace_judge --model local/checks --limit N -T split=all`` (the embedded
  deterministic judge; PACEShop records of the smoke profile, built once before timing; each timed run
  with its own empty call cache and log directory, so every call is made and every file written);
- N = 1 (one sample end to end) and N = 500, each the median of ``repeats`` runs: the marginal cost
  per sample is (t500 − t1) / 499 for each, in wall and in CPU time (``cpu_meets_goal``);
- ``shopbench --help`` and ``shopbench list`` wall time (median of ``repeats``).

Goals (recorded with pass/fail, never asserted in a unit test): one shopbench sample no slower than
inspect's; shopbench's marginal cost per sample at most 2× inspect's; ``--help`` and ``list`` < 1 s.
The cores are shared with other sessions, so every row records the CPU time (user + system of the
process and its children) beside the wall time, and the 1-minute load average before and after.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..paths import outputs_root

INSPECT_PIN = "inspect-ai==0.3.285"
N_MANY = 500
TOY_TASK = """from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def toy(n: int = 1):
    return Task(dataset=[Sample(input=f"Say {i}.", target=str(i)) for i in range(n)], solver=generate(), scorer=includes())
"""


def _result(name: str, value: Any, unit: str | None, goal: str | None = None, meets: bool | None = None,
            detail: str = "", **extra: Any) -> dict:  # fmt: skip
    return {"name": name, "value": value, "unit": unit, "goal": goal, "meets_goal": meets, "detail": detail,
            **extra}  # fmt: skip


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def timed(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 1800) -> dict:
    """Run ``cmd``; its wall time and CPU time (user + system of it and its children), in seconds."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode != 0:
        tail = [x for x in (p.stderr or p.stdout).strip().splitlines() if x.strip()]
        raise RuntimeError(f"{' '.join(cmd[:3])} … exited {p.returncode}: {tail[-1] if tail else ''}")
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}


def inspect_env(venv: Path | None = None) -> tuple[Path, str]:
    """The bench's own inspect-ai environment (created on first use): ``(inspect executable, version)``."""
    venv = venv or outputs_root() / "bench" / ".inspect-venv"
    py = venv / "bin" / "python"

    def version() -> str | None:
        if not py.exists():
            return None
        p = subprocess.run([str(py), "-c", "import importlib.metadata as m; print(m.version('inspect-ai'))"],
                           capture_output=True, text=True)  # fmt: skip
        return p.stdout.strip() if p.returncode == 0 else None

    v = version()
    if v is None:
        if not py.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        if subprocess.run([*pip, INSPECT_PIN], capture_output=True, text=True).returncode != 0:
            p = subprocess.run([*pip, "inspect-ai"], capture_output=True, text=True)
            if p.returncode != 0:
                tail = [x for x in p.stderr.splitlines() if x.strip() and not x.startswith("WARNING")]
                raise RuntimeError(
                    f"cannot install inspect-ai in {venv}: {tail[-1] if tail else p.returncode}"
                )
        v = version()
        if v is None:
            raise RuntimeError(f"inspect-ai is not importable in {venv} after installing it")
    return venv / "bin" / "inspect", v


def _shopbench() -> list[str]:
    exe = Path(sys.executable).parent / "shopbench"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "shopbench.cli"]


def bench_speed(repeats: int = 3, n_many: int = N_MANY) -> list[dict]:
    """The rows of ``speed.json`` (module docstring)."""
    inspect, inspect_version = inspect_env()
    load0 = _load()
    work = Path(tempfile.mkdtemp(prefix="shopbench-speed-"))
    try:
        rows = _measure(work, inspect, inspect_version, repeats, n_many)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = f"1-min load average {load0} → {_load()} on {os.cpu_count()} shared cores"
    for r in rows:
        r["detail"] = f"{r['detail']}; {load}" if r["detail"] else load
    return rows


def _measure(work: Path, inspect: Path, inspect_version: str, repeats: int, n_many: int) -> list[dict]:
    (work / "toy.py").write_text(TOY_TASK)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SHOPBENCH_", "INSPECT_"))}
    base |= {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "SHOPBENCH_OUTPUTS": str(work / "outputs"),
             "NO_COLOR": "1"}  # fmt: skip
    runs = iter(range(10_000))

    def insp(n: int) -> dict:
        return timed([str(inspect), "eval", "toy.py", "--model", "mockllm/model", "-T", f"n={n}", "--log-dir",
                      str(work / f"inspect-logs-{next(runs)}"), "--display", "none"], base, work)  # fmt: skip

    def shop(n: int) -> dict:
        k = next(runs)
        env = base | {"SHOPBENCH_CACHE_DIR": str(work / f"cache-{k}")}
        return timed([*_shopbench(), "eval", "pace_judge", "--model", "local/checks", "--limit", str(n),
                      "-T", "split=all", "--no-progress", "--log-dir", str(work / f"shop-log-{k}")], env, work)  # fmt: skip

    insp(1), shop(1)  # warm-up, not timed: byte-compiles both, builds the smoke PACEShop records once
    ins1 = [insp(1) for _ in range(repeats)]
    sh1 = [shop(1) for _ in range(repeats)]
    ins_ns = [insp(n_many) for _ in range(repeats)]
    sh_ns = [shop(n_many) for _ in range(repeats)]
    helps = [timed([*_shopbench(), "--help"], base, work) for _ in range(repeats)]
    lists = [timed([*_shopbench(), "list"], base, work) for _ in range(repeats)]

    def med(xs: list[dict], key: str = "wall_s") -> float:
        return round(statistics.median(x[key] for x in xs), 3)

    i1, s1, i_n, s_n = med(ins1), med(sh1), med(ins_ns), med(sh_ns)
    im = (i_n - i1) / (n_many - 1)
    sm = (s_n - s1) / (n_many - 1)
    im_cpu = (med(ins_ns, "cpu_s") - med(ins1, "cpu_s")) / (n_many - 1)
    sm_cpu = (med(sh_ns, "cpu_s") - med(sh1, "cpu_s")) / (n_many - 1)
    # a marginal wall time can vanish in the noise of a shared machine: then no verdict on wall time
    wall_verdict = sm <= 2 * im if im > 0 and sm > 0 else None
    noise = (
        ""
        if wall_verdict is not None
        else "; a marginal wall time is within the noise (≤ 0): no wall-time verdict, see cpu_meets_goal"
    )
    h, ls = med(helps), med(lists)
    inspect_cmd = f"inspect eval toy.py --model mockllm/model -T n=N (inspect-ai {inspect_version})"
    shop_cmd = "shopbench eval pace_judge --model local/checks --limit N -T split=all"
    return [
        _result("inspect_one_sample_s", i1, "s", None, None, f"{inspect_cmd}, N=1, median of {repeats}",
                cpu_s=med(ins1, "cpu_s"), runs=ins1, inspect_ai=inspect_version),
        _result("shopbench_one_sample_s", s1, "s", f"<= inspect's ({i1} s)", s1 <= i1,
                f"{shop_cmd}, N=1, median of {repeats}", cpu_s=med(sh1, "cpu_s"), runs=sh1,
                cpu_meets_goal=med(sh1, "cpu_s") <= med(ins1, "cpu_s")),
        _result("inspect_marginal_ms_per_sample", round(im * 1000, 3), "ms/sample", None, None,
                f"(median of {repeats} runs of {n_many} samples: {i_n} s − 1 sample) / {n_many - 1}",
                cpu_ms_per_sample=round(im_cpu * 1000, 3), runs_many=ins_ns),
        _result("shopbench_marginal_ms_per_sample", round(sm * 1000, 3), "ms/sample",
                f"<= 2x inspect's ({round(2 * im * 1000, 3)} ms)", wall_verdict,
                f"(median of {repeats} runs of {n_many} samples: {s_n} s − 1 sample) / {n_many - 1}; includes "
                f"the metrics' bootstrap CIs (n_boot 1000) and the parquet/JSONL results log{noise}",
                cpu_ms_per_sample=round(sm_cpu * 1000, 3), runs_many=sh_ns,
                cpu_meets_goal=sm_cpu <= 2 * im_cpu),
        _result("shopbench_help_s", h, "s", "< 1", h < 1, f"shopbench --help, median of {repeats}",
                cpu_s=med(helps, "cpu_s")),
        _result("shopbench_list_s", ls, "s", "< 1", ls < 1, f"shopbench list, median of {repeats}",
                cpu_s=med(lists, "cpu_s")),
    ]  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(bench_speed(), indent=1))
