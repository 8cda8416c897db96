"""The append-only call log: one JSON line per call (cache hits included).

Columns: run id, item id, cache key, model, prompt hash, raw output, parsed value or parse error,
finish reason, prompt/completion tokens, cost, latency, cache hit, attempt count, error.
Rows are written in groups (:meth:`CallLog.writer`: up to a few hundred rows or half a second at a
time), each group with one ``write`` on an ``O_APPEND`` descriptor under a file lock, so concurrent
writers never interleave; a line cut short by ``kill -9`` is dropped on the next open. A group lost
to ``kill -9`` loses no answer: the response cache commits every success before its row is queued,
and the resumed run rebuilds those rows from the cache (``Gateway.arun``) before making any call.
Any text is writable: a lone surrogate is written as its ``\\udXXX`` escape
(:func:`shopbench.strictjson.storable`), so no model answer can stop a sweep here.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from filelock import FileLock

from ..strictjson import storable

COLUMNS = [
    "run_id", "item_id", "key", "model", "repeat", "prompt_hash", "status", "raw_output", "parsed",
    "parse_error", "finish_reason", "prompt_tokens", "completion_tokens", "cached_tokens", "cache_write_tokens", "cost_usd", "latency_s", "model_latency_s",
    "cache_hit", "attempts", "error", "ts",
]  # fmt: skip


class CallLog:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(self.path) + ".lock")
        self._repair()

    def _repair(self) -> None:
        """Drop a trailing partial line (a writer killed mid-row)."""
        if not self.path.exists():
            return
        with self._lock, open(self.path, "rb+") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            if size == 0:
                return
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            block = min(size, 1 << 20)
            while True:
                f.seek(size - block)
                data = f.read(block)
                cut = data.rfind(b"\n")
                if cut >= 0 or block == size:
                    f.truncate(size - block + cut + 1 if cut >= 0 else 0)
                    return
                block = min(size, block * 2)

    def append(self, rows: Iterable[dict]) -> None:
        payload = "".join(storable(json.dumps(r, ensure_ascii=False, default=str)) + "\n" for r in rows)
        if not payload:
            return
        data = payload.encode()
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(data)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
            finally:
                os.close(fd)

    def writer(
        self, max_rows: int = 256, max_delay_s: float = 0.5, before_flush: Callable[[], None] | None = None
    ) -> BufferedWriter:
        """A writer that appends rows in groups: one locked write per ``max_rows`` rows or per
        ``max_delay_s`` seconds, whichever comes first (call :meth:`BufferedWriter.flush` at the end).
        ``before_flush`` runs first (the gateway commits deferred cache rows there, so a row in the
        log always has its answer in the cache)."""
        return BufferedWriter(self, max_rows, max_delay_s, before_flush)

    def rows(self) -> list[dict]:
        if not self.path.exists():
            return []
        out = []
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                if line.endswith("\n"):
                    try:
                        out.append(json.loads(line))
                    except (ValueError, RecursionError):
                        continue
        return out

    def latest(self) -> dict[tuple[str, str], dict]:
        """Last row per (item id, cache key): the current state of each call."""
        return {(r["item_id"], r["key"]): r for r in self.rows()}


class BufferedWriter:
    """Rows queued for one :class:`CallLog`, written in groups (see :meth:`CallLog.writer`)."""

    def __init__(
        self, log: CallLog, max_rows: int, max_delay_s: float, before_flush: Callable[[], None] | None = None
    ):
        self.log = log
        self.before_flush = before_flush
        self.max_rows = max(1, int(max_rows))
        self.max_delay_s = float(max_delay_s)
        self._rows: list[dict] = []
        self._last = time.monotonic()

    def add(self, row: dict) -> None:
        self._rows.append(row)
        if len(self._rows) >= self.max_rows or time.monotonic() - self._last >= self.max_delay_s:
            self.flush()

    def flush(self) -> None:
        if self.before_flush is not None:
            self.before_flush()
        rows, self._rows = self._rows, []
        self._last = time.monotonic()
        self.log.append(rows)


def read_logs(directory: str | Path) -> list[dict]:
    """All rows of every call log under ``directory`` (for run summaries)."""
    rows: list[dict] = []
    for p in sorted(Path(directory).rglob("*.jsonl")):
        rows.extend(CallLog(p).rows())
    return rows
