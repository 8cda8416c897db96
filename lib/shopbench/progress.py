"""One progress bar for the whole workbench (issue 16 §5).

Interactive use (JupyterLab, a terminal) gets tqdm's usual bar: a widget in a notebook, text in a
terminal. A notebook executed by the pipeline (papermill, no frontend) cannot update a widget: its
saved copy would show a bar frozen at 0 %. The pipeline therefore sets ``SHOPBENCH_PROGRESS=text``
for its kernels, and bars are then plain text on stdout, updated at most every few seconds, so the
executed notebook keeps the finished bar (calls done, rate, elapsed time) as its last line.

``SHOPBENCH_PROGRESS=off`` hides every bar. A loop of fewer than ``min_total`` steps (default 2, so
the one-call runs of an agent loop) draws none: one bar per call is noise, not progress.

Issue 25 §4: the terminal of ``make paper`` sees none of a kernel's bars, so the pipeline sets
``SHOPBENCH_PROGRESS_FILE`` for each notebook and every bar made here, drawn or not, also reports its
units, the calls, errors and parse failures counted into it (:func:`report`) and its ETA to that JSON
file; :mod:`shopbench.runprogress` prints it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

ENV = "SHOPBENCH_PROGRESS"
TEXT_MININTERVAL_S = 5.0


def mode() -> str:
    """``"auto"`` (widget in a notebook, text in a terminal), ``"text"`` or ``"off"``."""
    value = os.environ.get(ENV, "auto").strip().lower()
    return value if value in ("auto", "text", "off") else "auto"


def tqdm(iterable: Any = None, *, total: int | float | None = None, min_total: int = 2, **kw: Any) -> Any:
    """A tqdm bar that follows :func:`mode`; same arguments as ``tqdm.tqdm``."""
    n = total
    if n is None and iterable is not None and hasattr(iterable, "__len__"):
        n = len(iterable)
    m = mode()
    if m == "off" or (n is not None and n < min_total):
        kw["disable"] = True
    if m == "text":
        from tqdm.std import tqdm as text_bar

        kw["mininterval"] = max(float(kw.get("mininterval", 0) or 0), TEXT_MININTERVAL_S)
        kw.setdefault("file", sys.stdout)
        kw.setdefault("ascii", False)
        kw.setdefault("ncols", 100)
        return _cls(text_bar)(iterable, total=total, **kw)
    from tqdm.auto import tqdm as auto_bar

    return _cls(auto_bar)(iterable, total=total, **kw)


def _cls(bar_class: type) -> type:
    """``bar_class``, or its reporting subclass when the pipeline asked for a progress file."""
    if not os.environ.get(FILE_ENV):
        return bar_class
    if bar_class not in _TRACKED:
        _TRACKED[bar_class] = _tracked(bar_class)
    return _TRACKED[bar_class]


_TRACKED: dict[type, type] = {}


# ---- the pipeline's view of a running notebook (issue 25 §4) -------------------------------------
FILE_ENV = "SHOPBENCH_PROGRESS_FILE"
"""Set by the pipeline for each notebook it executes: the JSON file the kernel's bars report to."""
WRITE_INTERVAL_S = 1.0
"""The progress file is replaced at most this often (and at once when an outer sweep opens or closes)."""
KEEP_CLOSED = 20


class _Reporter:
    """The sweeps (bars) of this process, written to the progress file as JSON (atomically replaced,
    at most once per :data:`WRITE_INTERVAL_S`). A bar opened while another is open is that one's
    child: its calls, errors and parse failures count into every open bar around it (the gateway's
    calls inside an anytime sweep's units), and it leaves the file when it closes, so the file lists
    the outer sweeps only (the last :data:`KEEP_CLOSED` finished ones, and the open ones)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.sweeps: list[dict] = []  # outer sweeps, in the order they opened
        self.by_bar: dict[int, dict] = {}
        self.parent: dict[int, dict] = {}  # id(sweep) -> the sweep around it
        self.last_write = 0.0

    def _chain(self, s: dict) -> list[dict]:
        out = [s]
        while id(out[-1]) in self.parent:
            out.append(self.parent[id(out[-1])])
        return out

    def open(self, bar: Any, name: str, unit: str, total: Any, initial: int) -> None:
        now = time.time()
        n = int(total) if isinstance(total, int | float) else None
        s: dict[str, Any] = {"name": name, "unit": unit, "done": int(initial or 0), "total": n, "calls": 0, "errors": 0,
             "parse_failures": 0, "started": now, "updated": now, "eta_s": None, "open": True}  # fmt: skip
        with self.lock:
            around = [t for t in self.by_bar.values() if t["open"]]
            if not around and n is not None and n < 2:
                return  # a one-call run outside any sweep (an agent's next turn): noise, not progress
            if around:
                self.parent[id(s)] = around[-1]
            else:
                self.sweeps.append(s)
                closed = [t for t in self.sweeps if not t["open"]]
                for t in closed[: max(0, len(closed) - KEEP_CLOSED)]:
                    self.sweeps.remove(t)
            self.by_bar[id(bar)] = s
        self.write(force=not around)

    def update(self, bar: Any, n: float = 0, **counts: Any) -> None:
        s = self.by_bar.get(id(bar))
        if s is None:
            return
        with self.lock:
            s["done"] += int(n)
            chain = self._chain(s)
            if s["unit"] == "call":
                for t in chain:
                    t["calls"] += int(n)
            for key in ("errors", "parse_failures"):
                if counts.get(key) is not None:
                    delta = int(counts[key]) - s.setdefault(f"_{key}", 0)
                    s[f"_{key}"] = int(counts[key])
                    for t in chain:
                        t[key] += delta
            if "eta_s" in counts:
                s["eta_s"] = counts["eta_s"]
            s["updated"] = time.time()
        self.write()

    def close(self, bar: Any) -> None:
        with self.lock:
            s = self.by_bar.pop(id(bar), None)
            if s is None:
                return
            s["open"] = False
            s["updated"] = time.time()
            self.parent.pop(id(s), None)
        self.write(force=s in self.sweeps)

    def write(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_write < WRITE_INTERVAL_S:
            return
        with self.lock:
            self.last_write = now
            sweeps = [{k: v for k, v in s.items() if not k.startswith("_")} for s in self.sweeps]
            data = json.dumps({"pid": os.getpid(), "written": time.time(), "sweeps": sweeps})
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(data)
            os.replace(tmp, self.path)
        except OSError:  # a progress line is a convenience: never stop a sweep for it
            pass


_REPORTER: _Reporter | None = None


def _reporter() -> _Reporter | None:
    global _REPORTER
    path = os.environ.get(FILE_ENV)
    if not path:
        return None
    if _REPORTER is None or _REPORTER.path != path:
        _REPORTER = _Reporter(path)
    return _REPORTER


def report(bar: Any, **counts: Any) -> None:
    """Tell the pipeline's progress file about ``bar``'s errors, parse failures (totals so far) or
    ``eta_s``; a no-op outside a pipeline run. The gateway's ``tick()`` and the anytime sweep call it."""
    r = _reporter()
    if r is not None:
        r.update(bar, 0, **counts)


def _tracked(cls: type) -> type:
    """``cls`` (a tqdm class) whose bars also report to the progress file, disabled bars included."""

    class Tracked(cls):  # type: ignore[misc, valid-type]
        def __init__(self, iterable: Any = None, *a: Any, **kw: Any) -> None:
            super().__init__(iterable, *a, **kw)
            r = _reporter()
            total = kw.get("total")
            if total is None and iterable is not None and hasattr(iterable, "__len__"):
                total = len(iterable)
            if r is not None:
                r.open(self, str(kw.get("desc") or ""), str(kw.get("unit") or "it"), total,
                       int(kw.get("initial") or 0))  # fmt: skip

        def update(self, n: float | None = 1) -> Any:
            r = _reporter()
            if r is not None and not getattr(self, "_iterating", False):
                r.update(self, 1 if n is None else n)
            return super().update(n)

        def __iter__(self) -> Any:
            # a drawn bar's own iteration calls update() for the items since its last redraw: those are
            # counted here, item by item, so update() must not count them again
            self._iterating = True
            try:
                for obj in super().__iter__():
                    yield obj
                    r = _reporter()
                    if r is not None:
                        r.update(self, 1)
            finally:
                self._iterating = False

        def close(self) -> None:
            r = _reporter()
            if r is not None:
                r.close(self)
            super().close()

    return Tracked
