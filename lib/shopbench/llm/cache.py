"""The gateway's on-disk response cache, in front of litellm (whose disk cache left in 1.109).

SQLite in WAL mode: safe under concurrent writers (threads and processes), one committed row per
successful call, so a process killed with ``kill -9`` keeps every answer it had received. Only
successful responses are stored; errors are never cached. Any text a model returns is storable: a
lone surrogate (which UTF-8, and so SQLite, cannot hold) is written as its JSON ``\\udXXX`` escape
and reads back as the same string (:func:`shopbench.strictjson.storable`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..strictjson import storable


def canonical_json(obj: Any) -> str:
    """Sorted, compact JSON that always encodes as UTF-8 (lone surrogates escaped, see module doc)."""
    return storable(json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str))


def cache_key(
    *,
    model: str,
    api_base: str | None,
    messages: list[dict],
    params: dict,
    tools: list | None,
    response_format: dict | None,
    repeat: int,
    messages_json: str | None = None,
) -> str:
    """sha256 over everything that changes an answer: model, api base, messages, generation
    settings, tools, response format and the repeat index (so repeats are distinct samples).

    The hashed text is ``canonical_json`` of ``{model, api_base, messages, params, tools,
    response_format, repeat}``, assembled from parts: ``messages_json`` (``canonical_json(messages)``,
    which a :class:`~shopbench.llm.call.Call` computes once for its prompt hash too) between the
    sorted keys before and after it, so the long prompt is serialised once per call and the key is
    the same text, byte for byte, as serialising the whole mapping."""
    if messages_json is None:
        messages_json = canonical_json(messages)
    head = canonical_json({"api_base": api_base or ""})[:-1]  # sorted keys: api_base < messages < model ...
    tail = canonical_json({"model": model, "params": params, "tools": tools, "response_format": response_format,
                           "repeat": repeat})[1:]  # fmt: skip
    return hashlib.sha256(f'{head},"messages":{messages_json},{tail}'.encode()).hexdigest()


def thread_connection(local: threading.local, path: Path, *pragmas: str) -> sqlite3.Connection:
    """This thread's connection to the SQLite file ``path``, opened once per thread and kept in
    ``local``: autocommit, WAL journal, a 60-s busy timeout, then ``PRAGMA <p>`` for each of ``pragmas``
    (the response cache and the anytime ledger)."""
    con = getattr(local, "con", None)
    if con is None:
        con = sqlite3.connect(path, timeout=60, isolation_level=None)
        for pragma in ("busy_timeout=60000", "journal_mode=WAL", *pragmas):
            _pragma(con, pragma)
        local.con = con
    return con


def _pragma(con: sqlite3.Connection, pragma: str, wait_s: float = 60.0) -> None:
    """``PRAGMA <pragma>``, waiting while another process holds the file: switching a new file to WAL
    needs it alone, and SQLite answers "database is locked" at once there instead of calling its busy
    handler (two processes opening one new cache together: tests/test_gateway.py)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            con.execute(f"PRAGMA {pragma}")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class ResponseCache:
    """Key → stored response (dict). ``get_many`` reads a whole sweep's keys in one query."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "responses.sqlite"
        self._local = threading.local()
        with self._conn() as con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL)"
            )

    def _conn(self) -> sqlite3.Connection:
        return thread_connection(self._local, self.path, "synchronous=NORMAL")

    def get(self, key: str) -> dict | None:
        row = self._conn().execute("SELECT value FROM responses WHERE key=?", (key,)).fetchone()
        return _decode(row[0]) if row else None

    def get_many(self, keys: Iterable[str]) -> dict[str, dict]:
        keys = list(dict.fromkeys(keys))
        out: dict[str, dict] = {}
        con = self._conn()
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            q = f"SELECT key, value FROM responses WHERE key IN ({','.join('?' * len(chunk))})"
            for k, v in con.execute(q, chunk):
                value = _decode(v)
                if value is not None:
                    out[k] = value
        return out

    def put(self, key: str, value: dict) -> None:
        self._conn().execute(
            "INSERT OR REPLACE INTO responses (key, value, created) VALUES (?, ?, ?)",
            (key, canonical_json(value), time.time()),
        )

    def put_many(self, items: Iterable[tuple[str, dict]]) -> None:
        """Several rows in one transaction (one commit): for answers that are cheap to recompute."""
        rows = [(k, canonical_json(v), time.time()) for k, v in items]
        if not rows:
            return
        con = self._conn()
        con.execute("BEGIN IMMEDIATE")
        try:
            con.executemany("INSERT OR REPLACE INTO responses (key, value, created) VALUES (?, ?, ?)", rows)
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def clear(self) -> None:
        self._conn().execute("DELETE FROM responses")


def _decode(text: Any) -> dict | None:
    """A stored row, or ``None`` (a miss: the call is made again) if it is not a JSON object."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
