"""The airline data (issue 28 item 1): tau-bench's airline database (``flights.json``,
``reservations.json``, ``users.json``, as tau-bench published them and as tau2-bench's ``db.json``
holds them) and tau2-bench's 50 airline tasks (``tasks.json``), read from a folder given as a
parameter (``../shared/data/tau2_airline``), validated, and the database of one rollout.

Records are kept as the files hold them (tau-bench's dicts, key order included), so that a
tau-bench tool output is ``json.dumps`` of the stored record exactly as tau-bench writes it.
τ²-bench's record shapes (its pydantic models in ``src/tau2/domains/airline/data_model.py``: a
user's ``user_id``, float gift-card and certificate amounts, a reservation's ``status`` null when
absent) are made when a τ²-reading tool answers (:mod:`.tools`).

:class:`AirlineDB` is a copy-on-write view: a tool that changes a record deep-copies it first, so
each rollout starts from the loaded data and never modifies it. Bad input is an
:class:`AirlineDataError` (a :class:`~shopbench.errors.UserError`) naming the file, the record and
the field, raised when the folder is loaded, before any tool call or model call.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError, read_text
from ...strictjson import parse_json
from .tool_names import ALL_TOOL_NAMES

__all__ = [
    "DATA_HINT", "REWARD_BASES_KNOWN", "TABLES", "AirlineDB", "AirlineData", "AirlineDataError", "load_airline",
    "tau_bench_hash",
]  # fmt: skip

DATA_HINT = (
    "it is tau-bench's airline database and tau2-bench's airline tasks (MIT; github.com/sierra-research/tau-bench "
    "tau_bench/envs/airline/data and github.com/sierra-research/tau2-bench data/tau2/domains/airline), kept beside "
    "the project at ../shared/data/tau2_airline"
)
TABLES = ("flights", "reservations", "users")
REWARD_BASES_KNOWN = ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")
MAX_BYTES = 64_000_000


class AirlineDataError(InputError):
    """The airline folder or one of its files is missing or malformed (issue 28, "Bad input")."""

    def __init__(self, problem: str, **kw: Any) -> None:
        kw["fix"] = kw.get("fix") or f"restore the published file: {DATA_HINT}"
        super().__init__(problem, **kw)


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class AirlineDB:
    """One rollout's database over the loaded tables: reads see the loaded records; a write
    deep-copies the record first (:meth:`mut`); a new record (a reservation) goes into ``changed``."""

    def __init__(self, base: Mapping[str, Mapping[str, dict]]):
        self.base = base
        self.changed: dict[str, dict[str, dict]] = {t: {} for t in TABLES}

    def get(self, table: str, key: Any) -> dict | None:
        if not isinstance(key, str):
            return None
        rec = self.changed[table].get(key)
        return rec if rec is not None else self.base[table].get(key)

    def mut(self, table: str, key: str) -> dict:
        if key not in self.changed[table]:
            self.changed[table][key] = copy.deepcopy(self.base[table][key])
        return self.changed[table][key]

    def values(self, table: str) -> Iterable[dict]:
        """The records of a table in the file's order (new ones last)."""
        ch = self.changed[table]
        for k, v in self.base[table].items():
            yield ch.get(k, v)
        for k, v in ch.items():
            if k not in self.base[table]:
                yield v

    def diff(self) -> dict[str, dict[str, Any]]:
        """Every record that differs from the loaded data, by table (canonical JSON compare, so
        ``100`` and ``100.0`` differ, as in both benchmarks' hashes)."""
        return {
            t: {
                k: v
                for k, v in sorted(self.changed[t].items())
                if _canonical(v) != _canonical(self.base[t].get(k))
            }
            for t in TABLES
        }

    def state_hash(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`diff`: two rollouts over the same loaded data
        have equal databases iff equal hashes."""
        return hashlib.sha256(_canonical(self.diff()).encode()).hexdigest()


def _to_hashable(item: Any) -> Any:
    """tau-bench's ``to_hashable`` (tau_bench/envs/base.py)."""
    if isinstance(item, dict):
        return tuple((k, _to_hashable(v)) for k, v in sorted(item.items()))
    if isinstance(item, list):
        return tuple(_to_hashable(x) for x in item)
    if isinstance(item, set):
        return tuple(sorted(_to_hashable(x) for x in item))
    return item


def _tuple_str(parts: list[str]) -> str:
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


_PIECES: dict[tuple[int, str], tuple[Any, dict[str, str]]] = {}


def _record_piece(key: str, rec: dict, table: str, address_key: str) -> str:
    if table == "users" and address_key != "state" and isinstance(rec.get("address"), dict):
        rec = {**rec, "address": {(address_key if k == "state" else k): v for k, v in rec["address"].items()}}
    return str((key, _to_hashable(rec)))


def tau_bench_hash(db: AirlineDB, address_key: str = "state") -> str:
    """tau-bench's ``Env.get_data_hash()``: SHA-256 of ``str(to_hashable(data))`` over the full
    tables as they stand. ``address_key="province"`` writes the users' address key as the data the
    recorded trajectories ran on had it (tau-bench renamed it to ``state`` in commit 404f33e,
    2025-01-16, after the trajectories were recorded; nothing else in the three files changed).
    Unchanged records' pieces are cached per loaded data."""
    parts_top = []
    for t in sorted(TABLES):
        ref, cache = _PIECES.get((id(db.base[t]), f"{t}:{address_key}"), (None, {}))
        if ref is not db.base[t]:  # a new loaded table (an id can be reused after the old one is freed)
            cache = {}
            _PIECES[(id(db.base[t]), f"{t}:{address_key}")] = (db.base[t], cache)
        keys = sorted(set(db.base[t]) | set(db.changed[t]))
        parts = []
        for k in keys:
            if k in db.changed[t]:
                parts.append(_record_piece(k, db.changed[t][k], t, address_key))
            else:
                p = cache.get(k)
                if p is None:
                    p = cache[k] = _record_piece(k, db.base[t][k], t, address_key)
                parts.append(p)
        parts_top.append(_tuple_str([repr(t), _tuple_str(parts)]))
    return hashlib.sha256(_tuple_str(parts_top).encode()).hexdigest()


@dataclass
class AirlineData:
    """The loaded folder: the three tables, the tasks, τ²-bench's ``policy.md``, tau-bench's own
    ``tau_bench_wiki.md`` (``None`` when absent) and ``split_tasks.json``."""

    path: Path
    db: dict[str, dict[str, dict]]
    tasks: list[dict]
    policy: str
    wiki: str | None = None
    split: dict[str, list[str]] | None = None
    gold: dict[str, tuple[str, list[str]]] = field(default_factory=dict, repr=False)

    def task(self, task_id: str) -> dict:
        for t in self.tasks:
            if str(t["id"]) == str(task_id):
                return t
        raise AirlineDataError(f"no task {task_id!r}", file=self.path / "tasks.json",
                               fix=f"use one of the ids {[t['id'] for t in self.tasks][:10]}…")  # fmt: skip


def _read_json(path: Path, what: str) -> Any:
    if not path.exists():
        raise AirlineDataError("the file is missing", file=path, fix=f"restore it: {DATA_HINT}")
    text = read_text(path, what)
    if len(text) > MAX_BYTES:
        raise AirlineDataError(f"{len(text):,} characters, more than an airline file holds", file=path)
    return parse_json(
        text, path, what=what, error=AirlineDataError, fix=f"restore the published file: {DATA_HINT}"
    )


class _Check:
    def __init__(self, path: Path, where: str):
        self.path, self.where = path, where

    def err(self, fld: str, problem: str) -> AirlineDataError:
        return AirlineDataError(problem, file=self.path, where=self.where, field=fld)

    def obj(self, v: Any, fld: str) -> dict:
        if not isinstance(v, dict):
            raise self.err(fld, "is missing or not an object")
        return v

    def lst(self, v: Any, fld: str) -> list:
        if not isinstance(v, list):
            raise self.err(fld, "is missing or not a list")
        return v

    def str_(self, o: dict, k: str, fld: str) -> str:
        v = o.get(k)
        if not isinstance(v, str):
            raise self.err(fld, f"is {v!r}, not a string" if k in o else "is missing")
        return v

    def num(self, o: dict, k: str, fld: str) -> None:
        v = o.get(k)
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.err(fld, f"is {v!r}, not a number" if k in o else "is missing")

    def one_of(self, o: dict, k: str, fld: str, allowed: Iterable[str]) -> None:
        v = o.get(k)
        allowed = list(allowed)
        if v not in allowed:
            raise self.err(fld, f"is {v!r}, not one of {allowed}")


_FLIGHT_STATUSES = ("available", "landed", "cancelled", "on time", "flying", "delayed")
_CABINS = ("business", "economy", "basic_economy")


def _check_flights(path: Path, flights: Any) -> None:
    if not isinstance(flights, dict) or not flights:
        raise AirlineDataError("expected a non-empty object of flight number -> flight", file=path)
    for fn, f in flights.items():
        c = _Check(path, f"flight {fn!r}")
        c.obj(f, "")
        if c.str_(f, "flight_number", "flight_number") != fn:
            raise c.err("flight_number", f"is {f['flight_number']!r}, not the key {fn!r}")
        for k in ("origin", "destination", "scheduled_departure_time_est", "scheduled_arrival_time_est"):
            c.str_(f, k, k)
        for d, st in c.obj(f.get("dates"), "dates").items():
            c.obj(st, f"dates[{d!r}]")
            c.one_of(st, "status", f"dates[{d!r}].status", _FLIGHT_STATUSES)
            if st["status"] == "available":
                for k in ("available_seats", "prices"):
                    m = c.obj(st.get(k), f"dates[{d!r}].{k}")
                    for cab in _CABINS:
                        c.num(m, cab, f"dates[{d!r}].{k}.{cab}")


def _check_users(path: Path, users: Any) -> None:
    if not isinstance(users, dict) or not users:
        raise AirlineDataError("expected a non-empty object of user id -> user", file=path)
    for uid, u in users.items():
        c = _Check(path, f"user {uid!r}")
        c.obj(u, "")
        name = c.obj(u.get("name"), "name")
        c.str_(name, "first_name", "name.first_name")
        c.str_(name, "last_name", "name.last_name")
        c.obj(u.get("address"), "address")
        c.one_of(u, "membership", "membership", ("gold", "silver", "regular"))
        for pid, pm in c.obj(u.get("payment_methods"), "payment_methods").items():
            f = f"payment_methods[{pid!r}]"
            c.obj(pm, f)
            c.one_of(pm, "source", f"{f}.source", ("credit_card", "gift_card", "certificate"))
            if c.str_(pm, "id", f"{f}.id") != pid:
                raise c.err(f"{f}.id", f"is {pm['id']!r}, not the key {pid!r}")
            if pm["source"] in ("gift_card", "certificate"):
                c.num(pm, "amount", f"{f}.amount")
        for i, p in enumerate(c.lst(u.get("saved_passengers"), "saved_passengers")):
            for k in ("first_name", "last_name", "dob"):
                c.str_(c.obj(p, f"saved_passengers[{i}]"), k, f"saved_passengers[{i}].{k}")
        if not all(isinstance(x, str) for x in c.lst(u.get("reservations"), "reservations")):
            raise c.err("reservations", "is not a list of reservation ids")


def _check_reservations(path: Path, res: Any, users: Mapping, flights: Mapping) -> None:
    if not isinstance(res, dict) or not res:
        raise AirlineDataError("expected a non-empty object of reservation id -> reservation", file=path)
    for rid, r in res.items():
        c = _Check(path, f"reservation {rid!r}")
        c.obj(r, "")
        if c.str_(r, "reservation_id", "reservation_id") != rid:
            raise c.err("reservation_id", f"is {r['reservation_id']!r}, not the key {rid!r}")
        if c.str_(r, "user_id", "user_id") not in users:
            raise c.err("user_id", f"names user {r['user_id']!r}, who is not in users.json")
        c.one_of(r, "cabin", "cabin", _CABINS)
        c.one_of(r, "flight_type", "flight_type", ("one_way", "round_trip"))
        c.one_of(r, "insurance", "insurance", ("yes", "no"))
        for k in ("total_baggages", "nonfree_baggages"):
            c.num(r, k, k)
        for i, fl in enumerate(c.lst(r.get("flights"), "flights")):
            c.obj(fl, f"flights[{i}]")
            if c.str_(fl, "flight_number", f"flights[{i}].flight_number") not in flights:
                raise c.err(
                    f"flights[{i}].flight_number",
                    f"names flight {fl['flight_number']!r}, not in flights.json",
                )
            c.str_(fl, "date", f"flights[{i}].date")
            c.num(fl, "price", f"flights[{i}].price")
        c.lst(r.get("passengers"), "passengers")
        for i, p in enumerate(c.lst(r.get("payment_history"), "payment_history")):
            c.str_(c.obj(p, f"payment_history[{i}]"), "payment_id", f"payment_history[{i}].payment_id")
            c.num(p, "amount", f"payment_history[{i}].amount")


_USER_ID_RE = re.compile(r"user id is\W*([A-Za-z0-9_]+)", re.IGNORECASE)
_RES_ID_RE = re.compile(r"(?:reservation id|confirmation number) is\W*([A-Z0-9]{6})\b", re.IGNORECASE)


def _check_tasks(path: Path, tasks: Any, db: Mapping[str, Mapping], tool_names: tuple[str, ...]) -> None:
    if not isinstance(tasks, list) or not tasks:
        raise AirlineDataError("expected a non-empty JSON list of tasks", file=path)
    seen: dict[str, int] = {}
    for i, t in enumerate(tasks):
        if not isinstance(t, dict):
            raise AirlineDataError(f"is a {type(t).__name__}, not an object", file=path, where=f"task [{i}]")
        tid = t.get("id")
        if not isinstance(tid, str | int) or isinstance(tid, bool):
            raise AirlineDataError("is missing or not a string", file=path, where=f"task [{i}]", field="id")
        if str(tid) in seen:
            raise AirlineDataError(f"appears twice (entries [{seen[str(tid)]}] and [{i}])", file=path,
                                   where=f"task {tid!r}", field="id")  # fmt: skip
        seen[str(tid)] = i
        c = _Check(path, f"task {tid!r} (entry [{i}])")
        us = c.obj(t.get("user_scenario"), "user_scenario")
        ins = c.obj(us.get("instructions"), "user_scenario.instructions")
        c.str_(ins, "reason_for_call", "user_scenario.instructions.reason_for_call")
        known = ins.get("known_info")
        if known is not None and not isinstance(known, str):
            raise c.err("user_scenario.instructions.known_info", "must be a string or null")
        for uid in _USER_ID_RE.findall(known or ""):
            if uid not in db["users"]:
                raise c.err(
                    "user_scenario.instructions.known_info", f"names user {uid!r}, who is not in users.json"
                )
        for rid in _RES_ID_RE.findall(known or ""):
            if rid not in db["reservations"]:
                raise c.err("user_scenario.instructions.known_info",
                            f"names reservation {rid!r}, which is not in reservations.json")  # fmt: skip
        ev = c.obj(t.get("evaluation_criteria"), "evaluation_criteria")
        basis = ev.get("reward_basis") or ["DB"]
        if not isinstance(basis, list) or any(b not in REWARD_BASES_KNOWN for b in basis):
            raise c.err(
                "evaluation_criteria.reward_basis",
                f"is {basis!r}; each must be one of {list(REWARD_BASES_KNOWN)}",
            )
        for key in ("communicate_info", "nl_assertions"):
            v = ev.get(key)
            if v is not None and (not isinstance(v, list) or not all(isinstance(x, str) for x in v)):
                raise c.err(f"evaluation_criteria.{key}", "must be a list of strings")
        acts = ev.get("actions") or []
        for j, a in enumerate(c.lst(acts, "evaluation_criteria.actions")):
            f = f"evaluation_criteria.actions[{j}]"
            c.obj(a, f)
            if a.get("name") not in tool_names:
                raise c.err(
                    f"{f}.name", f"is {a.get('name')!r}, not an airline tool ({', '.join(tool_names)})"
                )
            args = c.obj(a.get("arguments"), f"{f}.arguments")
            if "user_id" in args and args["user_id"] not in db["users"]:
                raise c.err(
                    f"{f}.arguments.user_id", f"names user {args['user_id']!r}, who is not in users.json"
                )
            rid = args.get("reservation_id")
            if rid is not None and rid not in db["reservations"]:
                raise c.err(f"{f}.arguments.reservation_id",
                            f"names reservation {rid!r}, which is not in reservations.json")  # fmt: skip


def load_airline(path: str | Path, tool_names: tuple[str, ...] | None = None) -> AirlineData:
    """Read and validate an airline folder (``flights.json``, ``reservations.json``, ``users.json``,
    ``tasks.json``, ``policy.md``; optional ``split_tasks.json``, ``tau_bench_wiki.md``). Every
    problem is an :class:`AirlineDataError` naming the file, the record and the field."""
    if tool_names is None:
        tool_names = ALL_TOOL_NAMES
    path = Path(path)
    if not path.is_dir():
        raise AirlineDataError("the airline data folder does not exist", file=path, fix=DATA_HINT)
    flights = _read_json(path / "flights.json", "airline flights file")
    _check_flights(path / "flights.json", flights)
    users = _read_json(path / "users.json", "airline users file")
    _check_users(path / "users.json", users)
    res = _read_json(path / "reservations.json", "airline reservations file")
    _check_reservations(path / "reservations.json", res, users, flights)
    for uid, u in users.items():
        for j, rid in enumerate(u["reservations"]):
            if rid not in res:
                raise AirlineDataError(f"names reservation {rid!r}, which is not in reservations.json",
                                       file=path / "users.json", where=f"user {uid!r}", field=f"reservations[{j}]")  # fmt: skip
    db = {"flights": flights, "reservations": res, "users": users}
    tasks = _read_json(path / "tasks.json", "airline tasks file")
    _check_tasks(path / "tasks.json", tasks, db, tool_names)
    pol = path / "policy.md"
    if not pol.exists():
        raise AirlineDataError("the file is missing", file=pol, fix=f"restore it: {DATA_HINT}")
    wiki = path / "tau_bench_wiki.md"
    split = None
    if (path / "split_tasks.json").exists():
        split = _read_json(path / "split_tasks.json", "airline split file")
        if not isinstance(split, dict) or not all(isinstance(v, list) for v in split.values()):
            raise AirlineDataError(
                "expected an object of split name -> list of task ids", file=path / "split_tasks.json"
            )
    return AirlineData(path=path, db=db, tasks=tasks, policy=read_text(pol, "policy file"),
                       wiki=read_text(wiki, "policy file") if wiki.exists() else None, split=split)  # fmt: skip
