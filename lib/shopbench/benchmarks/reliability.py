"""The reliability benchmark of ``make bench`` (issue 12 §6) → ``outputs/bench/reliability.json``.

Drills, each bounded in time:

- ``kill9_runs``: a sweep of ``n_calls`` gateway calls run as a child process against the fake OpenAI
  server (:mod:`shopbench.testing.fake_openai`, in this process), killed with SIGKILL after a random
  number of logged rows ``n_kills`` times, then run to the end. Counted: rows missing from the call
  log (``lost_rows``), rows logged twice (``duplicate_rows``), and requests for a call whose answer
  was already logged or cached before the kill (``repeated_successful_calls``).
- ``storm_429``: ``n_calls`` calls while every one of a call's first three attempts fails with
  probability 30 % (HTTP 429), 5 % (500/503) or 5 % (no answer: a hang, cut by the gateway's
  timeout); later attempts succeed. ``completed_fraction`` = ok rows / calls. ``errors_cached``:
  the same calls rerun against a server that fails every request; a row that is not ok then came
  from the cache, i.e. an error was cached.
- ``bad_inputs``: the cases of :mod:`shopbench.benchmarks.bad_inputs`.
- ``concurrent_annotators``: ``n_writers`` processes appending answers to one
  :class:`~shopbench.annotate.store.AnnotationStore` at once (each its own annotator file, as the
  store requires); ``lost_answers`` = answers written minus answers read back.
- ``fuzz_cases``: :func:`shopbench.benchmarks.fuzz.fuzz_contracts` when that module exists.

Goals (as in the issue): 0, 0, 0; 1.0 and 0; 1.0, 0, 0; 0; fuzz 0, 0, 0.
"""

from __future__ import annotations

import hashlib
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .bad_inputs import run_all, summary

SWEEP_LATENCY = "[[fake:latency=0.002]]"


def _sweep_calls(api_base: str, n: int) -> list:
    from ..llm import Call

    return [Call(f"item{i:05d}", "openai/fake", [{"role": "user", "content": f"q{i} {SWEEP_LATENCY}"}],
                 api_base=api_base) for i in range(n)]  # fmt: skip


def sweep_main(api_base: str, out: str, n: int) -> None:
    """The child process of the kill -9 drill: one gateway sweep (``python -m ... --sweep``)."""
    from ..llm import Gateway

    gw = Gateway(cache_dir=f"{out}/cache", log_dir=f"{out}/calls", concurrency={"openai": 8}, progress=False)
    rows = gw.run(_sweep_calls(api_base, n), "sweep")
    print("DONE", len(rows), sum(r["status"] == "ok" for r in rows), flush=True)


def _logged(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.endswith("}")]


def _answered(out: Path, calls: list) -> set[str]:
    """Item ids whose answer is in the call log (ok) or in the cache: a success the rerun must not repeat."""
    from ..llm.cache import ResponseCache

    ok = {r["item_id"] for r in _logged(out / "calls" / "sweep.jsonl") if r.get("status") == "ok"}
    if (out / "cache").exists():
        hits = ResponseCache(out / "cache").get_many([c.key for c in calls])
        ok |= {c.item_id for c in calls if c.key in hits}
    return ok


def _communicate(proc: subprocess.Popen, timeout_s: float) -> tuple[str, str, bool]:
    """``proc``'s stdout and stderr once it ends, killed when it runs past ``timeout_s``; the flag
    says it was killed."""
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return out, err, False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return out, err, True


def _asked(server) -> Counter:
    return Counter(f"item{int(b['messages'][-1]['content'].split()[0][1:]):05d}" for b in server.bodies)


def kill9_drill(n_calls: int = 2000, n_kills: int = 10, seed: int = 0, run_budget_s: float = 120.0) -> dict:
    """SIGKILL a sweep ``n_kills`` times at random points, then let it finish; count the damage.
    Each child run is bounded by ``run_budget_s`` (its start-up, importing litellm, included)."""
    from ..testing.fake_openai import FakeOpenAIServer

    rng = random.Random(seed)
    targets = sorted(rng.sample(range(n_calls // 40, n_calls - n_calls // 20), n_kills))
    kills, repeated, notes = 0, 0, []
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory(prefix="kill9_") as tmp:
        out, calls = Path(tmp), _sweep_calls(server.api_base, n_calls)
        log = out / "calls" / "sweep.jsonl"
        cmd = [
            sys.executable,
            "-m",
            "shopbench.benchmarks.reliability",
            "--sweep",
            server.api_base,
            tmp,
            str(n_calls),
        ]
        for target in [*targets, None]:
            before = _answered(out, calls)
            server.reset()
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + run_budget_s
            if target is None:
                stdout, stderr, cut = _communicate(proc, run_budget_s)
                if cut:
                    notes.append("final run cut at the time budget")
                if f"DONE {n_calls} {n_calls}" not in stdout:
                    notes.append(f"final run: {stdout.strip()[-200:]} {stderr.strip()[-300:]}")
            elif _wait_rows(log, target, proc, deadline):
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
            else:
                proc.kill()
                _, stderr = proc.communicate()
                notes.append(f"run ended before {target} rows: {stderr.strip()[-300:]}")
            repeated += sum(1 for item in _asked(server) if item in before)
        rows = _logged(log)
    ids = Counter(r["item_id"] for r in rows)
    return {"n_calls": n_calls, "kills": kills, "lost_rows": n_calls - len(ids),
            "duplicate_rows": sum(v - 1 for v in ids.values()), "repeated_successful_calls": repeated,
            "kill_points_rows": targets, "notes": notes}  # fmt: skip


def _wait_rows(log: Path, target: int, proc: subprocess.Popen, deadline: float) -> bool:
    """Wait until the call log holds ``target`` rows (True) or the child ends or time runs out (False)."""
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and log.read_bytes().count(b"\n") >= target:
            return True
        time.sleep(0.005)
    return False


def _storm_script(p429: float = 0.30, p5xx: float = 0.05, p_hang: float = 0.05, faulty_attempts: int = 3):
    """A fake-server script: attempt k < ``faulty_attempts`` of a prompt fails with the given odds
    (drawn from a hash of prompt and attempt, so reruns are reproducible)."""
    attempts: Counter = Counter()

    def script(body: dict) -> dict | None:
        text = str(body["messages"][-1]["content"])
        k = attempts[text]
        attempts[text] += 1
        if k >= faulty_attempts:
            return None
        u = int.from_bytes(hashlib.sha256(f"{text}|{k}".encode()).digest()[:8], "big") / 2**64
        if u < p429:
            return {"status": 429}
        if u < p429 + p5xx:
            return {"status": 500 if u < p429 + p5xx / 2 else 503, "retry_after": 0.01}
        if u < p429 + p5xx + p_hang:
            return {"timeout": True}
        return None

    return script


def storm_drill(n_calls: int = 1000, concurrency: int = 32, timeout_s: float = 1.0) -> dict:
    """``n_calls`` calls through a 429/5xx/hang storm, then a rerun against a server that only fails."""
    from ..llm import Call, Gateway
    from ..testing.fake_openai import FakeOpenAIServer

    with (
        FakeOpenAIServer(script=_storm_script()) as server,
        tempfile.TemporaryDirectory(prefix="storm_") as tmp,
    ):
        gw = Gateway(cache_dir=f"{tmp}/cache", log_dir=f"{tmp}/calls", concurrency={"openai": concurrency},
                     timeout_s=timeout_s, max_retries=4, backoff_s=0.05, backoff_max_s=0.5, progress=False)  # fmt: skip
        calls = [Call(f"s{i:05d}", "openai/fake", [{"role": "user", "content": f"storm {i}"}],
                      api_base=server.api_base) for i in range(n_calls)]  # fmt: skip
        t = time.perf_counter()
        rows = gw.run(calls, "storm")
        wall = time.perf_counter() - t
        faults = dict(server.counts)
        server.script = lambda body: {"status": 500}
        rerun = gw.run(calls, "storm_rerun")
    ok = sum(r["status"] == "ok" for r in rows)
    return {"n_calls": n_calls, "completed_fraction": round(ok / n_calls, 4),
            "errors_cached": sum(1 for r in rerun if r["cache_hit"] and r["status"] != "ok"),
            "rerun_not_from_cache": sum(1 for r in rerun if not r["cache_hit"]),
            "requests_by_behaviour": faults, "wall_s": round(wall, 2),
            "statuses": dict(Counter(r["status"] for r in rows))}  # fmt: skip


_WRITER = """
import os, sys, time
from shopbench.annotate.store import AnnotationStore, now_iso
root, who, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
st = AnnotationStore(root)
print("READY", flush=True)
while not os.path.exists(go):  # every writer starts at once
    time.sleep(0.002)
for i in range(n):
    st.record(who, f"pair-{i:04d}", "AB"[i % 2], (0, 50, 100)[i % 3], ("side_a", "side_b"), now_iso())
print("WROTE", n)
"""


def annotators_drill(n_writers: int = 4, n_answers: int = 150, budget_s: float = 60.0) -> dict:
    """``n_writers`` processes write ``n_answers`` answers each into one store at the same time."""
    from ..annotate.store import AnnotationStore

    with tempfile.TemporaryDirectory(prefix="annotators_") as tmp:
        script = Path(tmp) / "writer.py"
        script.write_text(_WRITER)
        store, go = Path(tmp) / "store", Path(tmp) / "go"
        procs = [subprocess.Popen([sys.executable, str(script), str(store), f"ann{k}", str(n_answers), str(go)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(n_writers)]  # fmt: skip
        for p in procs:  # wait until every writer has imported and opened the store
            assert p.stdout is not None  # stdout=PIPE
            p.stdout.readline()
        go.touch()
        failed = []
        for p in procs:
            _, err, _ = _communicate(p, budget_s)
            if p.returncode != 0:
                failed.append(err.strip()[-300:])
        st = AnnotationStore(store)
        read_back = {a: len(st.answers(a)) for a in st.annotators()}
    written = n_writers * n_answers
    return {"writers": n_writers, "answers_written": written, "answers_read_back": sum(read_back.values()),
            "lost_answers": written - sum(read_back.values()), "writer_errors": failed}  # fmt: skip


def bad_inputs_drill() -> dict:
    rows = list(run_all())
    s = summary(rows)
    by_owner = {o: summary([r for r in rows if r["owner"] == o]) for o in sorted({r["owner"] for r in rows})}
    return {**s, "tracebacks": s["traceback"], "by_owner": by_owner, "cases_list": rows}


def fuzz_drill() -> dict:
    try:
        from .fuzz import fuzz_contracts  # type: ignore[import-not-found]  # helper h1's module
    except ImportError:
        return {
            "fuzz_cases": None,
            "note": "shopbench.benchmarks.fuzz is not on this branch (helper h1 writes it)",
        }
    return fuzz_contracts(n_per_contract=1000, seed=0)


def _result(name: str, value: Any, unit: str, goal: str | None, ok: bool | None, detail: str = "") -> dict:
    return {"name": name, "value": value, "unit": unit, "goal": goal, "meets_goal": ok, "detail": detail}


def run(quick: bool = False) -> dict:
    """Every drill; ``quick`` shrinks them (for the tests). Returns the drills' raw results and the
    ``results`` rows (name, value, unit, goal, meets_goal) of the bench files."""
    k9 = kill9_drill(n_calls=300, n_kills=3) if quick else kill9_drill()
    storm = storm_drill(n_calls=120, concurrency=16) if quick else storm_drill()
    ann = annotators_drill(n_writers=3, n_answers=30) if quick else annotators_drill()
    bad = bad_inputs_drill()
    fuzz = fuzz_drill()
    return {"kill9_runs": k9, "storm_429": storm, "bad_inputs": bad, "concurrent_annotators": ann,
            "fuzz_cases": fuzz.get("fuzz_cases"), "fuzz_note": fuzz.get("note"),
            "results": results(k9, storm, bad, ann, fuzz.get("fuzz_cases"))}  # fmt: skip


def results(k9: dict, storm: dict, bad: dict, ann: dict, fuzz: dict | None) -> list[dict]:
    """The bench-file rows of the drills, each with its goal."""
    k9_detail = f"{k9['kills']} SIGKILLs during a {k9['n_calls']}-call sweep"
    out = [_result(f"kill9_{k}", k9[k], "rows" if "rows" in k else "calls", "0", k9[k] == 0, k9_detail)
           for k in ("lost_rows", "duplicate_rows", "repeated_successful_calls")]  # fmt: skip
    out += [
        _result("kill9_kills", k9["kills"], "SIGKILLs", ">= 10", k9["kills"] >= 10 and k9["n_calls"] >= 2000),
        _result("storm_429_completed_fraction", storm["completed_fraction"], "ok rows/calls", "1.0",
                storm["completed_fraction"] == 1.0, f"{storm['n_calls']} calls, {storm['wall_s']} s; "
                f"requests {storm['requests_by_behaviour']}"),
        _result("storm_429_errors_cached", storm["errors_cached"], "calls", "0", storm["errors_cached"] == 0,
                "rerun against a server failing every request"),
        _result("bad_inputs_clear_error_fraction", bad["clear_error_fraction"], "cases", "1.0",
                bad["clear_error_fraction"] == 1.0, f"{bad['cases']} malformed inputs; by loader family "
                + ", ".join(f"{o}: {s['clear']}/{s['cases']}" for o, s in bad["by_owner"].items())),
        _result("bad_inputs_tracebacks", bad["tracebacks"], "cases", "0", bad["tracebacks"] == 0),
        _result("bad_inputs_silently_accepted", bad["silently_accepted"], "cases", "0", bad["silently_accepted"] == 0),
        _result("concurrent_annotators_lost_answers", ann["lost_answers"], "answers", "0", ann["lost_answers"] == 0,
                f"{ann['writers']} writers x {ann['answers_written'] // ann['writers']} answers"),
    ]  # fmt: skip
    for k in _FUZZ_KEYS:
        v = None if fuzz is None else sum(int(c.get(k, 0)) for c in _contracts(fuzz))
        out.append(_result(f"fuzz_{k}", v, "cases", "0", None if v is None else v == 0,
                           "shopbench.benchmarks.fuzz absent" if fuzz is None else
                           f"{fuzz.get('n', '?')} outputs over {len(fuzz.get('per_contract') or {}) or len(_contracts(fuzz))} contracts"))  # fmt: skip
    return out


_FUZZ_KEYS = ("crashes", "accepted_invalid", "silent_coercions")


def _contracts(fuzz: dict) -> list[dict]:
    """The per-contract counts of a ``fuzz_cases`` dict: its values that carry the counts (contract
    name -> counts), or the dict itself when it holds the totals."""
    if any(isinstance(fuzz.get(k), int) for k in _FUZZ_KEYS):
        return [fuzz]
    return [v for v in fuzz.values() if isinstance(v, dict) and any(k in v for k in _FUZZ_KEYS)]


def bench_reliability() -> list[dict]:
    """``make bench``'s entry: the results rows, plus the drills' raw results as a ``detail`` row."""
    doc = run()
    raw = {k: v for k, v in doc.items() if k != "results"}
    raw["bad_inputs"] = {k: v for k, v in raw["bad_inputs"].items()}
    return [*doc["results"], {"name": "drills", "value": None, "unit": None, "goal": None, "meets_goal": None,
                              "detail": raw}]  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--sweep":
        sweep_main(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        quick = "--quick" in sys.argv
        doc = run(quick=quick)
        print(json.dumps({k: v for k, v in doc.items() if k != "bad_inputs"}, indent=1, default=str))
        sys.stdout.flush()
