"""The τ²-retail data: the published folder (``tasks.json``, ``db.json``, ``policy.md``, optional
``split_tasks.json``) read and validated, and the database of one rollout.

``db.json`` is read into τ²-bench's record shapes (``src/tau2/domains/retail/data_model.py``: the
pydantic models ``Product``, ``Variant``, ``User``, ``CreditCard``/``GiftCard``/``Paypal``,
``Order``, ``OrderItem``, ``OrderPayment``): each record's keys in the model's field order, prices,
amounts and balances as floats, unknown keys dropped, and an order's seven optional fields
(``cancel_reason``, ``exchange_*``, ``return_*``) present as ``None`` when the file omits them (none
of the 1,000 published orders has them). A tool's JSON output is then byte-identical to τ²-bench's
``json.dumps(model.model_dump())`` (nulls written as ``null``), and :meth:`RetailDB.tau2_hash` equals
τ²-bench's ``Environment.get_db_hash()``.

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
from .specs import TOOL_NAMES

__all__ = [
    "DATA_HINT",
    "ORDER_OPTIONAL",
    "TABLES",
    "RetailDB",
    "Tau2Data",
    "Tau2DataError",
    "load_tau2",
    "tau2_records",
]

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
        """Every record that differs from the loaded data, by table (compared as canonical JSON, so
        ``0`` and ``0.0`` differ as they do in τ²-bench's JSON hash)."""
        return {
            t: {
                k: v
                for k, v in sorted(self.changed[t].items())
                if _canonical(v) != _canonical(self.base[t].get(k))
            }
            for t in TABLES
        }

    def state_hash(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`diff` (equal databases <=> equal hashes)."""
        return hashlib.sha256(_canonical(self.diff()).encode()).hexdigest()

    def tau2_hash(self) -> str:
        """τ²-bench's database hash (``Environment.get_db_hash()``: SHA-256 of ``json.dumps(db.model_dump(),
        sort_keys=True, default=str)``) of the full tables as they stand now."""
        full = {t: {**self.base[t], **self.changed[t]} for t in TABLES}
        return hashlib.sha256(json.dumps(full, sort_keys=True, default=str).encode()).hexdigest()


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


ORDER_OPTIONAL = ("cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                  "exchange_price_difference", "return_items", "return_payment_method_id")  # fmt: skip
ORDER_STATUSES = ("processed", "pending", "pending (item modified)", "delivered", "cancelled", "exchange requested",
                  "return requested")  # fmt: skip
_ADDRESS_KEYS = ("address1", "address2", "city", "country", "state", "zip")


class _Rec:
    """Reads one record of db.json into τ²-bench's field order and types; a wrong field is a
    :class:`Tau2DataError` naming the record and the field."""

    def __init__(self, path: Path, where: str):
        self.path, self.where = path, where

    def err(self, field: str, problem: str) -> Tau2DataError:
        return Tau2DataError(problem, file=self.path, where=self.where, field=field)

    def get(self, obj: Any, key: str, field: str) -> Any:
        if not isinstance(obj, dict):
            raise self.err(field.rsplit(".", 1)[0] if "." in field else field, "is not an object")
        if key not in obj:
            raise self.err(field, "is missing")
        return obj[key]

    def str_(self, obj: Any, key: str, field: str) -> str:
        v = self.get(obj, key, field)
        if not isinstance(v, str):
            raise self.err(field, f"is {v!r}, not a string")
        return v

    def float_(self, obj: Any, key: str, field: str) -> float:
        v = self.get(obj, key, field)
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.err(field, f"is {v!r}, not a number")
        return float(v)

    def strs(self, v: Any, field: str) -> list[str]:
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.err(field, "is not a list of strings")
        return list(v)

    def options(self, obj: Any, field: str) -> dict[str, str]:
        v = self.get(obj, "options", field)
        if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
            raise self.err(field, "is not an object of strings")
        return dict(v)

    def address(self, obj: Any, field: str) -> dict[str, str]:
        a = self.get(obj, "address", field)
        return {k: self.str_(a, k, f"{field}.{k}") for k in _ADDRESS_KEYS}


def _product(r: _Rec, p: Any) -> dict:
    variants = r.get(p, "variants", "variants")
    if not isinstance(variants, dict):
        raise r.err("variants", "is not an object")
    out = {}
    for vid, v in variants.items():
        f = f"variants[{vid!r}]"
        if not isinstance(v.get("available") if isinstance(v, dict) else None, bool):
            raise r.err(f"{f}.available", "is missing or not true/false")
        out[vid] = {"item_id": r.str_(v, "item_id", f"{f}.item_id"), "options": r.options(v, f"{f}.options"),
                    "available": v["available"], "price": r.float_(v, "price", f"{f}.price")}  # fmt: skip
    return {
        "name": r.str_(p, "name", "name"),
        "product_id": r.str_(p, "product_id", "product_id"),
        "variants": out,
    }


def _payment_method(r: _Rec, pm: Any, f: str) -> dict:
    src = r.str_(pm, "source", f"{f}.source")
    head = {"source": src, "id": r.str_(pm, "id", f"{f}.id")}
    if src == "credit_card":
        return {
            **head,
            "brand": r.str_(pm, "brand", f"{f}.brand"),
            "last_four": r.str_(pm, "last_four", f"{f}.last_four"),
        }
    if src == "gift_card":
        return {**head, "balance": r.float_(pm, "balance", f"{f}.balance")}
    if src == "paypal":
        return head
    raise r.err(f"{f}.source", f"is {src!r}, not 'credit_card', 'gift_card' or 'paypal'")


def _user(r: _Rec, u: Any) -> dict:
    name = r.get(u, "name", "name")
    pms = r.get(u, "payment_methods", "payment_methods")
    if not isinstance(pms, dict):
        raise r.err("payment_methods", "is not an object")
    return {"user_id": r.str_(u, "user_id", "user_id"),
            "name": {"first_name": r.str_(name, "first_name", "name.first_name"),
                     "last_name": r.str_(name, "last_name", "name.last_name")},
            "address": r.address(u, "address"), "email": r.str_(u, "email", "email"),
            "payment_methods": {k: _payment_method(r, v, f"payment_methods[{k!r}]") for k, v in pms.items()},
            "orders": r.strs(r.get(u, "orders", "orders"), "orders")}  # fmt: skip


def _order(r: _Rec, o: Any) -> dict:
    items, ful, pay = (r.get(o, k, k) for k in ("items", "fulfillments", "payment_history"))
    for k, v in (("items", items), ("fulfillments", ful), ("payment_history", pay)):
        if not isinstance(v, list):
            raise r.err(k, "is not a list")
    status = r.str_(o, "status", "status")
    if status not in ORDER_STATUSES:
        raise r.err("status", f"is {status!r}, not one of {list(ORDER_STATUSES)}")
    out: dict[str, Any] = {"order_id": r.str_(o, "order_id", "order_id"), "user_id": r.str_(o, "user_id", "user_id"),
           "address": r.address(o, "address"),
           "items": [{"name": r.str_(it, "name", f"items[{i}].name"),
                      "product_id": r.str_(it, "product_id", f"items[{i}].product_id"),
                      "item_id": r.str_(it, "item_id", f"items[{i}].item_id"),
                      "price": r.float_(it, "price", f"items[{i}].price"),
                      "options": r.options(it, f"items[{i}].options")} for i, it in enumerate(items)],
           "status": status,
           "fulfillments": [{"tracking_id": r.strs(r.get(x, "tracking_id", f"fulfillments[{i}].tracking_id"),
                                                   f"fulfillments[{i}].tracking_id"),
                             "item_ids": r.strs(r.get(x, "item_ids", f"fulfillments[{i}].item_ids"),
                                                f"fulfillments[{i}].item_ids")} for i, x in enumerate(ful)],
           "payment_history": [], **dict.fromkeys(ORDER_OPTIONAL)}  # fmt: skip
    for i, x in enumerate(pay):
        t = r.str_(x, "transaction_type", f"payment_history[{i}].transaction_type")
        if t not in ("payment", "refund"):
            raise r.err(f"payment_history[{i}].transaction_type", f"is {t!r}, not 'payment' or 'refund'")
        out["payment_history"].append({"transaction_type": t,
                                       "amount": r.float_(x, "amount", f"payment_history[{i}].amount"),
                                       "payment_method_id": r.str_(x, "payment_method_id",
                                                                   f"payment_history[{i}].payment_method_id")})  # fmt: skip
    for k in ORDER_OPTIONAL:
        v = o.get(k)
        if v is None:
            continue
        if k == "exchange_price_difference":
            out[k] = r.float_(o, k, k)
        elif k in ("exchange_items", "exchange_new_items", "return_items"):
            out[k] = r.strs(v, k)
        elif k == "cancel_reason" and v not in ("no longer needed", "ordered by mistake"):
            raise r.err(k, f"is {v!r}, not 'no longer needed' or 'ordered by mistake'")
        else:
            out[k] = r.str_(o, k, k)
    return out


def tau2_records(db: Any, path: Path) -> dict[str, dict[str, dict]]:
    """``db.json`` in τ²-bench's record shapes (see the module docstring); ``path`` names the file in errors."""
    if not isinstance(db, dict) or any(not isinstance(db.get(k), dict) for k in TABLES):
        raise Tau2DataError("expected an object with 'products', 'users' and 'orders' maps", file=path)
    extra = sorted(set(db) - set(TABLES))
    if extra:  # τ²-bench's RetailDB forbids extra keys
        raise Tau2DataError(f"unexpected top-level key(s) {extra}; τ²-bench's RetailDB has only {list(TABLES)}",
                            file=path, fix="remove them, or restore the published db.json")  # fmt: skip
    readers = {"products": _product, "users": _user, "orders": _order}
    return {t: {k: readers[t](_Rec(path, f"{t}[{k!r}]"), v) for k, v in db[t].items()} for t in TABLES}


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
        tool_names = TOOL_NAMES
    path = Path(path)
    if not path.is_dir():
        raise Tau2DataError("the tau2 data folder does not exist", file=path, fix=DATA_HINT)
    tasks = _read_tasks(path / "tasks.json", tool_names)
    db = tau2_records(_read_json(path / "db.json"), path / "db.json")
    pol = path / "policy.md"
    if not pol.exists():
        raise Tau2DataError("the file is missing", file=pol, fix=f"restore it: {DATA_HINT}")
    return Tau2Data(path=path, tasks=tasks, db=db, policy=read_text(pol, "policy file"),
                    split=_read_split(path / "split_tasks.json"))  # fmt: skip
