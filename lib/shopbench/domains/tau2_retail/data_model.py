"""The τ²-retail data: the published folder (``tasks.json``, ``db.json``, ``policy.md``, optional
``split_tasks.json``) read and validated, and the database of one rollout.

:class:`RetailDB` is a copy-on-write view of the loaded ``db.json``: every record a tool changes is
deep-copied first, so each rollout starts from a fresh copy and the loaded data is never modified.
Bad input is a :class:`Tau2DataError` (an :class:`~shopbench.errors.InputError`) naming the file,
the task and the field.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError, read_text
from ...strictjson import parse_json

__all__ = ["DATA_HINT", "TABLES", "RetailDB", "Tau2Data", "Tau2DataError", "load_tau2"]

DATA_HINT = (
    "it is tau2-bench's published retail domain (MIT; github.com/sierra-research/tau2-bench, "
    "data/tau2/domains/retail: tasks.json, db.json, policy.md, split_tasks.json), kept beside the project "
    "at ../shared/data/tau2_retail"
)


class Tau2DataError(InputError):
    """The tau2 folder or one of its files is missing or malformed. Without a more specific fix, the fix
    is to restore the published file (the folder is read as released, never edited)."""

    def __init__(self, problem: str, **kw: Any) -> None:
        kw["fix"] = kw.get("fix") or f"restore the published tau2-bench retail files: {DATA_HINT}"
        super().__init__(problem, **kw)


TABLES = ("products", "users", "orders")


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class RetailDB:
    """One rollout's database: reads see the loaded ``db.json``; a write deep-copies the record
    first (copy-on-write), so the loaded data is shared and never modified."""

    def __init__(self, base: Mapping[str, dict]):
        self.base = base
        self.changed: dict[str, dict[str, dict]] = {t: {} for t in TABLES}

    def get(self, table: str, key: str) -> dict | None:
        rec = self.changed[table].get(key)
        return rec if rec is not None else self.base[table].get(key)

    def record(self, table: str, key: str) -> dict:
        """The record of a key :meth:`keys` listed (a ``KeyError`` if there is none)."""
        rec = self.get(table, key)
        if rec is None:
            raise KeyError(f"{table}: no record {key!r}")
        return rec

    def mut(self, table: str, key: str) -> dict:
        if key not in self.changed[table]:
            self.changed[table][key] = copy.deepcopy(self.base[table][key])
        return self.changed[table][key]

    def keys(self, table: str):
        return self.base[table].keys()

    def diff(self) -> dict[str, dict[str, dict]]:
        """Every record that differs from the loaded data, by table."""
        return {
            t: {k: v for k, v in sorted(self.changed[t].items()) if v != self.base[t].get(k)} for t in TABLES
        }

    def state_hash(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`diff` (equal databases <=> equal hashes)."""
        return hashlib.sha256(_canonical(self.diff()).encode()).hexdigest()

    def snapshot(self) -> dict[str, dict[str, dict]]:
        """The full tables (a deep copy) as they stand now."""
        out = copy.deepcopy({t: dict(self.base[t]) for t in TABLES})
        for t in TABLES:
            out[t].update(copy.deepcopy(self.changed[t]))
        return out


@dataclass
class Tau2Data:
    """The loaded folder. ``gold`` caches each task's gold state (see
    :func:`shopbench.domains.tau2_retail.environment.gold_state`)."""

    path: Path
    tasks: list[dict]
    db: dict[str, dict]
    policy: str
    split: dict[str, list[str]] | None = None
    gold: dict[str, tuple[str, list[str]]] = field(default_factory=dict, repr=False)


MAX_BYTES = 64_000_000  # db.json is 2.8 MB; strictjson's default limit is 2 MB


def _read_json(path: Path) -> Any:
    if not path.exists():
        raise Tau2DataError("the file is missing", file=path, fix=f"restore it: {DATA_HINT}")
    text = read_text(path, "JSON file")  # non-UTF-8 -> InputError with the line and byte
    if len(text) > MAX_BYTES:
        raise Tau2DataError(
            f"{len(text):,} characters, more than a tau2 file holds ({MAX_BYTES:,})", file=path
        )
    # strict JSON (NaN, duplicate keys) with the line and column of a syntax error
    return parse_json(text, path, what="tau2 file", error=Tau2DataError,
                      fix=f"restore the published file: {DATA_HINT}")  # fmt: skip


def _check_str(path: Path, where: str, obj: dict, key: str, prefix: str) -> None:
    if obj.get(key) is not None and not isinstance(obj[key], str):
        raise Tau2DataError("must be a string or null", file=path, where=where, field=f"{prefix}{key}")


def _check_actions(path: Path, where: str, ev: dict, tool_names: tuple[str, ...]) -> None:
    acts = ev.get("actions")
    if acts is None:
        ev["actions"] = acts = []
    if not isinstance(acts, list):
        raise Tau2DataError("must be a list", file=path, where=where, field="evaluation_criteria.actions")
    for j, a in enumerate(acts):
        f = f"evaluation_criteria.actions[{j}]"
        if not isinstance(a, dict):
            raise Tau2DataError("is not an object", file=path, where=where, field=f)
        if a.get("name") not in tool_names:
            raise Tau2DataError(f"is {a.get('name')!r}, not a retail tool ({', '.join(tool_names)})", file=path,
                                where=where, field=f"{f}.name")  # fmt: skip
        if not isinstance(a.get("arguments"), dict):
            raise Tau2DataError("is missing or not an object", file=path, where=where, field=f"{f}.arguments")


def _validate_task(path: Path, i: int, t: Any, tool_names: tuple[str, ...]) -> None:
    if not isinstance(t, dict):
        raise Tau2DataError(f"is a {type(t).__name__}, not an object", file=path, where=f"task [{i}]")
    tid = t.get("id")
    if not isinstance(tid, str | int) or isinstance(tid, bool):
        raise Tau2DataError("is missing or not a string", file=path, where=f"task [{i}]", field="id")
    where = f"task {tid!r} (entry [{i}])"
    us = t.get("user_scenario")
    ins = us.get("instructions") if isinstance(us, dict) else None
    if not isinstance(ins, dict):
        raise Tau2DataError("is missing or not an object", file=path, where=where,
                            field="user_scenario.instructions")  # fmt: skip
    for k in ("reason_for_call", "known_info", "unknown_info", "task_instructions"):
        _check_str(path, where, ins, k, "user_scenario.instructions.")
    if not isinstance(ins.get("reason_for_call"), str) or not ins["reason_for_call"].strip():
        raise Tau2DataError("is missing or empty", file=path, where=where,
                            field="user_scenario.instructions.reason_for_call")  # fmt: skip
    ev = t.get("evaluation_criteria")
    if not isinstance(ev, dict):
        raise Tau2DataError(
            "is missing or not an object", file=path, where=where, field="evaluation_criteria"
        )
    _check_actions(path, where, ev, tool_names)
    info = ev.get("communicate_info")
    if info is not None and (not isinstance(info, list) or not all(isinstance(x, str) for x in info)):
        raise Tau2DataError("must be a list of strings", file=path, where=where,
                            field="evaluation_criteria.communicate_info")  # fmt: skip


def _read_tasks(path: Path, tool_names: tuple[str, ...]) -> list[dict]:
    tasks = _read_json(path)
    if not isinstance(tasks, list) or not tasks:
        raise Tau2DataError("expected a non-empty JSON list of tasks", file=path)
    seen: dict[str, int] = {}
    for i, t in enumerate(tasks):
        _validate_task(path, i, t, tool_names)
        tid = str(t["id"])
        if tid in seen:
            raise Tau2DataError(f"task id {t['id']!r} appears twice (entries [{seen[tid]}] and [{i}])", file=path,
                                where=f"task {t['id']!r} (entry [{i}])", field="id",
                                fix="give every task its own id, or restore the published tasks.json")  # fmt: skip
        seen[tid] = i
    return tasks


def _read_split(path: Path) -> dict[str, list[str]] | None:
    if not path.exists():
        return None
    split = _read_json(path)
    if not isinstance(split, dict) or not all(isinstance(v, list) for v in split.values()):
        raise Tau2DataError("expected an object of split name -> list of ids", file=path)
    return split


def load_tau2(path: str | Path, tool_names: tuple[str, ...] | None = None) -> Tau2Data:
    """Read and validate a τ²-bench retail folder (``tool_names``: the tools an expected action may
    name; default the 16 retail tools)."""
    if tool_names is None:
        from .tools import TOOL_NAMES  # a late import: the tools import this module

        tool_names = TOOL_NAMES
    path = Path(path)
    if not path.is_dir():
        raise Tau2DataError("the tau2 data folder does not exist", file=path, fix=DATA_HINT)
    tasks = _read_tasks(path / "tasks.json", tool_names)
    db = _read_json(path / "db.json")
    if not isinstance(db, dict) or any(not isinstance(db.get(k), dict) for k in TABLES):
        raise Tau2DataError(
            "expected an object with 'products', 'users' and 'orders' maps", file=path / "db.json"
        )
    pol = path / "policy.md"
    if not pol.exists():
        raise Tau2DataError("the file is missing", file=pol, fix=f"restore it: {DATA_HINT}")
    return Tau2Data(path=path, tasks=tasks, db=db, policy=read_text(pol, "policy file"),
                    split=_read_split(path / "split_tasks.json"))  # fmt: skip
