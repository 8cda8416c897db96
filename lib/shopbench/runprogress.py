"""What the terminal shows while the pipeline executes a notebook, and when it is stopped (issue 25 §4).

A notebook runs in a papermill kernel: its progress bars go into the executed notebook, not to the
terminal. So the pipeline gives each notebook a progress file (``outputs/<profile>/progress/<notebook>.json``,
:data:`shopbench.progress.FILE_ENV`), which the kernel's bars replace at most once a second, and
:class:`Watcher` (a thread of the pipeline) reads it and prints one line per sweep, e.g.::

    [paper] 20_pace_judge_sweep: judge smol 12/20 units · 120 calls · 3 errors · 12 parse failures · ETA 4m10s

on a terminal as one line rewritten in place, in a log every :data:`LOG_EVERY_S` seconds (and when a
sweep finishes). Ctrl-C stops the run with one line (:func:`stopped_line`): how many units of the
running sweep were done, and that the same command resumes (finished calls are in the gateway's
cache and the anytime ledger; finished notebooks are up to date).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from .environ import scoped_environ
from .kernels import KERNEL_LOG_ENV
from .progress import FILE_ENV

POLL_S = 0.5
LOG_EVERY_S = 10.0
TTY_EVERY_S = 1.0
QUIET_START_S = 3.0


def read_progress(path: Path) -> list[dict]:
    """The sweeps in a progress file (empty when absent or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    sweeps = data.get("sweeps") if isinstance(data, dict) else None
    return [s for s in sweeps or [] if isinstance(s, dict)]


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def eta_s(s: dict, now: float | None = None) -> float | None:
    """The sweep's own estimate (an anytime sweep's, budget-capped), else elapsed ÷ done × left."""
    if s.get("eta_s") is not None:
        return float(s["eta_s"])
    done, total = int(s.get("done") or 0), s.get("total")
    if not s.get("open") or not done or not total:
        return None
    elapsed = (now or time.time()) - float(s.get("started") or time.time())
    return elapsed / done * max(0, int(total) - done)


def _plural(unit: str) -> str:
    return "steps" if unit == "it" else unit if unit.endswith("s") else f"{unit}s"


def sweep_text(s: dict, now: float | None = None) -> str:
    """``judge smol 12/20 units · 120 calls · 3 errors · 12 parse failures · ETA 4m10s``."""
    unit = str(s.get("unit") or "it")
    total = s.get("total")
    parts = [
        f"{s.get('name') or 'sweep'} {s.get('done', 0)}/{total if total is not None else '?'} {_plural(unit)}"
    ]
    if unit != "call" and s.get("calls"):
        parts.append(f"{s['calls']} calls")
    for key, label in (("errors", "errors"), ("parse_failures", "parse failures")):
        if s.get(key):
            parts.append(f"{s[key]} {label}")
    if s.get("open"):
        eta = eta_s(s, now)
        parts.append(f"ETA {_duration(eta)}" if eta is not None else "ETA ?")
    else:
        parts.append("done" if total is None or int(s.get("done") or 0) >= int(total) else "stopped")
    return " · ".join(parts)


class Watcher(threading.Thread):
    """Prints the running notebook's progress (a daemon thread; :meth:`stop` ends it)."""

    def __init__(self, profile: str, notebook: str, path: Path, out: TextIO | None = None,
                 tty: bool | None = None, every_s: float | None = None) -> None:  # fmt: skip
        super().__init__(daemon=True, name=f"progress {notebook}")
        self.prefix = f"[{profile}] {notebook}: "
        self.path = path
        self.out = out or sys.stdout
        self.tty = self.out.isatty() if tty is None else tty
        self.every_s = every_s if every_s is not None else (TTY_EVERY_S if self.tty else LOG_EVERY_S)
        self._halt = threading.Event()
        self._last: dict[int, tuple[float, str]] = {}  # sweep start -> (printed at, text)
        self._drawn = False  # a TTY line is on screen without its newline

    def run(self) -> None:
        while not self._halt.wait(POLL_S):
            self.poll()

    def poll(self, final: bool = False) -> None:
        now = time.time()
        for s in read_progress(self.path):
            key = hash((s.get("name"), s.get("started")))
            text = sweep_text(s, now)
            last_t, last_text = self._last.get(key, (0.0, ""))
            finished = not s.get("open")
            if finished and not final and int(s.get("done") or 0) < int(s.get("total") or 0):
                continue  # stopped short (a budget, or Ctrl-C): said after the notebook, if it ends normally
            if text == last_text or (not finished and key in self._last and now - last_t < self.every_s):
                continue
            if not finished and now - float(s.get("started") or now) < min(self.every_s, QUIET_START_S):
                continue  # a sweep that ends within seconds gets its "done" line only
            self._emit(self.prefix + text, keep=finished or not self.tty)
            self._last[key] = (now, text)

    def _emit(self, line: str, keep: bool) -> None:
        if self.tty:
            self.out.write("\r\x1b[2K" + line + ("\n" if keep else ""))
            self._drawn = not keep
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join(timeout=2)
        if self._drawn:  # end the in-place line before the pipeline prints its own
            self.out.write("\n")
            self.out.flush()
            self._drawn = False


@contextmanager
def watching(profile: str, notebook: str, root: Path) -> Iterator[Path]:
    """Give the notebook about to run its progress file and print its progress while it runs."""
    path = root / "progress" / f"{notebook}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    kernel_log(root, notebook).parent.mkdir(parents=True, exist_ok=True)
    kernel_log(root, notebook).unlink(missing_ok=True)
    with scoped_environ({FILE_ENV: str(path), KERNEL_LOG_ENV: str(kernel_log(root, notebook))}):
        w = Watcher(profile, notebook, path)
        w.start()
        try:
            yield path
        except BaseException:  # Ctrl-C: the pipeline prints one line, nothing more
            w.stop()
            raise
        else:
            w.stop()
            w.poll(final=True)  # the sweeps that finished since the last look


def kernel_log(root: Path, notebook: str) -> Path:
    """Where the kernel process of ``notebook`` writes its own stdout and stderr (:mod:`shopbench.kernels`)."""
    return root / "notebooks" / f"{notebook}.kernel.log"


def calls_logged(calls_dir: Path, notebook: str) -> int:
    """Answered calls (ok or parse failure) in the notebook's call logs of this run."""
    n = 0
    for p in calls_dir.glob(f"{notebook}_*.jsonl"):
        try:
            for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    if json.loads(line).get("status") in ("ok", "parse_error"):
                        n += 1
                except ValueError:
                    continue
        except OSError:
            continue
    return n


def stopped_line(profile: str, notebook: str | None, root: Path, done_notebooks: int, planned: int) -> str:
    """The one line Ctrl-C prints: what was done of the interrupted sweep, and how to resume."""
    where = ""
    units = f"{done_notebooks} of {planned} notebooks done"
    if notebook is not None:
        where = f" in {notebook}"
        # the sweep Ctrl-C stopped: still open, or the last one and short of its total (the kernel's
        # shutdown may have closed its bar before this line is written)
        sweeps = read_progress(root / "progress" / f"{notebook}.json")
        running = [x for x in sweeps if x.get("open")]
        last = sweeps[-1] if sweeps else None
        s = (
            running[-1]
            if running
            else (last if last and int(last.get("done") or 0) < int(last.get("total") or 0) else None)
        )
        if s is not None and s.get("total") is not None:
            unit = str(s.get("unit") or "unit")
            units = (f"{s.get('done', 0)} of {s['total']} {_plural(unit)} done (sweep '{s.get('name')}'"
                     f"{', ' + str(s['calls']) + ' calls' if unit != 'call' and s.get('calls') else ''}); "
                     f"{done_notebooks} of {planned} notebooks done")  # fmt: skip
        else:
            calls = calls_logged(root / "calls", notebook)
            if calls:
                units = f"{calls} calls done; {done_notebooks} of {planned} notebooks done"
    return f"[{profile}] stopped{where}; {units}; rerun the same command to resume"
