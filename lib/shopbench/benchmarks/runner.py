"""``make bench``: benchmarks written to ``outputs/bench/<file>.json``; ``python -m shopbench.benchmarks``.

Each benchmark runs in its own subprocess so that its peak RSS is its own. The fake OpenAI server
runs in a separate process too, so it does not compete with the gateway for the GIL. Results are
rows (name, value, unit, goal, meets_goal, detail); the modules of this package say what each measures.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from ..paths import outputs_root

BENCHES = {
    "throughput_c1": ("gateway", "bench_throughput", {"conc": 1}),
    "throughput_c8": ("gateway", "bench_throughput", {"conc": 8}),
    "throughput_c64": ("gateway", "bench_throughput", {"conc": 64}),
    "local_calls": ("gateway", "bench_local", {}),
    "cached": ("gateway", "bench_cached", {}),
    "llamacpp": ("gateway", "bench_llamacpp", {}),
    "paceshop_build": ("paceshop", "bench_paceshop_build", {}),
    "pace_metrics": ("pace_metrics", "bench_pace_metrics", {}),
    "agreement": ("agreement", "bench_agreement", {}),
    "shop": ("shop", "bench_shop", {}),
    "padme_synthesis": ("padme", "bench_synthesis", {}),
    "padme_meta_eval": ("padme", "bench_meta_eval", {}),
    "reliability": ("reliability", "bench_reliability", {}),
    "local_llm": ("local_llm", "bench_local_llm", {}),
    "speed": ("speed", "bench_speed", {}),  # issue 26 "Speed": shopbench vs inspect_ai's inspect eval
}  # name -> (module of this package, function, keyword arguments); each imported only when it runs
FILES = {  # benchmark file -> the benchmarks it holds
    "gateway": ["throughput_c1", "throughput_c8", "throughput_c64", "local_calls", "cached", "llamacpp"],
    "paceshop_build": ["paceshop_build"],
    "pace_metrics": ["pace_metrics"],
    "agreement": ["agreement"],
    "shop": ["shop"],
    "padme": ["padme_synthesis", "padme_meta_eval"],
    "reliability": ["reliability"],
    "local_llm": ["local_llm"],
    "speed": ["speed"],
}


def run_one(name: str) -> list[dict]:
    """Run one benchmark in this process: its results (name, value, unit, goal, meets_goal, detail)."""
    module, fn, kw = BENCHES[name]
    return getattr(importlib.import_module(f".{module}", __package__), fn)(**kw)


def machine() -> dict:
    from importlib.metadata import version

    return {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(), "litellm": version("litellm")}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shopbench.benchmarks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--one", choices=sorted(BENCHES), help=argparse.SUPPRESS)
    ap.add_argument("--only", nargs="*", choices=sorted(BENCHES), help="run only these benchmarks")
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(run_one(a.one)))
        return 0
    wanted = a.only or list(BENCHES)
    for file, names in FILES.items():
        names = [n for n in names if n in wanted]
        if not names:
            continue
        out = Path(a.out) if (a.out and len(FILES) == 1) else outputs_root() / "bench" / f"{file}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        results: list[dict] = []
        for name in names:
            print(f"bench {name} ...", flush=True)
            started = time.time()
            p = subprocess.run([sys.executable, "-m", "shopbench.benchmarks", "--one", name], capture_output=True,
                               text=True)  # fmt: skip
            if p.returncode != 0:
                kept = salvage(out, started)  # the stages the bench wrote before it failed (issue 26 §6)
                results += kept
                results.append(failure_row(name, p.stderr, len(kept)))
                print(f"  {results[-1]['detail']}", file=sys.stderr)
            else:
                for r in json.loads(p.stdout.strip().splitlines()[-1]):
                    results.append(r)
                    detail = r.get("detail", "")
                    detail = detail if isinstance(detail, str) else "(raw results in the file)"
                    print(f"  {r['name']}: {r['value']} {r['unit'] or ''} (goal {r['goal']}) {detail}")
            write_doc(out, file, results)  # after each benchmark: a later failure or a kill loses nothing
        print(f"wrote {out}")
    return 0


def write_doc(out: Path, file: str, results: list[dict]) -> None:
    doc = {"benchmark": file, "machine": machine(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "results": results}  # fmt: skip
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(out)


def salvage(out: Path, since: float) -> list[dict]:
    """The result rows a benchmark wrote itself into ``out`` (stage by stage, as ``local_llm`` does)
    after ``since``, when it then failed: kept instead of overwritten by the failure alone."""
    try:
        if out.stat().st_mtime < since:
            return []
        doc = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    rows = doc.get("results") if isinstance(doc, dict) else None
    return [r for r in rows if isinstance(r, dict) and "name" in r] if isinstance(rows, list) else []


def failure_row(name: str, stderr: str, kept: int) -> dict:
    """One row for a benchmark process that failed: the last line of its error (not the traceback)."""
    tail = [x for x in stderr.strip().splitlines() if x.strip()]
    last = tail[-1][:500] if tail else "no error output"
    note = f"; the {kept} result(s) it wrote before are kept" if kept else ""
    return {"name": name, "value": None, "unit": None, "goal": None, "meets_goal": False,
            "detail": f"failed: {last}{note}"}  # fmt: skip
