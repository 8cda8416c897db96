"""One rollout's banking database and the query helpers the tools use (issue 28 item 1).

:class:`BankDB` holds τ²-bench's ``TransactionalDB`` tables (``src/tau2/domains/banking_knowledge/
data_model.py``, MIT): each table is ``{"data": {id: record}, "notes": str}``, the 23 named tables
present (empty when ``db.json`` lacks them). A rollout works on a deep copy of the loaded tables; a
task's ``initial_state.initialization_data`` (``agent_data`` then ``user_data``) is merged into it
as τ²-bench's ``update_pydantic_model_with_dict`` merges (``addict``: dicts merged key by key,
anything else replaced). :meth:`BankDB.state_hash` is the hash of the whole database, as
τ²-bench's ``get_db_hash`` compares the agent's and the gold database (one database here: the
agent's and the user's tools share it, as they do in τ²-bench after ``set_state``).

The query helpers are ported from τ²-bench's ``db_query.py``: ``query_db`` with Django-style
``field__op`` constraints, ``add_to_db``, ``update_record_in_db`` and ``query_database_tool`` (the
text a read tool returns).
"""

from __future__ import annotations

import copy
import hashlib
import json
import operator
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["TABLES", "BankDB", "Table", "add_to_db", "deep_merge", "query_database_tool", "query_db",
           "update_record_in_db"]  # fmt: skip

TABLES = (
    "users", "accounts", "debit_cards", "referrals", "credit_card_applications", "user_discoverable_tools",
    "user_discoverable_tool_calls", "verification_history", "credit_card_transaction_history",
    "cash_back_disputes", "bank_account_transaction_history", "credit_card_accounts", "agent_discoverable_tools",
    "task_config", "human_transfer_requests", "transaction_disputes", "credit_card_orders", "debit_card_orders",
    "credit_card_closure_reasons", "credit_card_account_flags", "credit_limit_increase_requests",
    "payment_history", "debit_card_disputes",
)  # fmt: skip
# the tables τ²-bench's query_database_tool can read (its _load_databases), in its order
QUERYABLE = (
    "users", "accounts", "referrals", "credit_card_applications", "user_discoverable_tools",
    "user_discoverable_tool_calls", "agent_discoverable_tools", "task_config", "verification_history",
    "credit_card_transaction_history", "cash_back_disputes", "bank_account_transaction_history",
    "credit_card_accounts", "human_transfer_requests", "transaction_disputes", "credit_card_orders",
    "credit_card_closure_reasons", "credit_card_account_flags", "debit_cards", "debit_card_orders",
    "debit_card_disputes", "credit_limit_increase_requests", "payment_history",
)  # fmt: skip


class Table:
    """A table: ``data`` (id -> record) and ``notes``."""

    def __init__(self, data: dict[str, dict[str, Any]] | None = None, notes: str = ""):
        self.data: dict[str, dict[str, Any]] = data if data is not None else {}
        self.notes = notes

    def dump(self) -> dict[str, Any]:
        return {"data": self.data, "notes": self.notes}


def deep_merge(base: dict, update: Mapping) -> dict:
    """``addict.Dict.update``: a dict value merged into a dict value key by key, else replaced."""
    for k, v in update.items():
        if isinstance(v, Mapping) and isinstance(base.get(k), dict):
            deep_merge(base[k], v)
        else:
            base[k] = copy.deepcopy(dict(v) if isinstance(v, Mapping) else v)
    return base


class BankDB:
    """One rollout's database (module docstring); ``db.<table>.data`` as in τ²-bench."""

    def __init__(self, tables: Mapping[str, Mapping[str, Any]]):
        raw = copy.deepcopy({t: dict(tables.get(t) or {}) for t in TABLES})
        self._set(raw)

    def _set(self, raw: Mapping[str, Mapping[str, Any]]) -> None:
        for t in TABLES:
            tab = raw.get(t) or {}
            setattr(self, t, Table(dict(tab.get("data") or {}), str(tab.get("notes") or "")))

    def table(self, name: str) -> Table:
        tab = getattr(self, name, None)
        if not isinstance(tab, Table):
            raise KeyError(name)
        return tab

    def dump(self) -> dict[str, dict[str, Any]]:
        return {t: self.table(t).dump() for t in TABLES}

    def update(self, data: Mapping[str, Any]) -> None:
        """Merge ``initialization_data`` (agent_data or user_data) into the database."""
        raw = self.dump()
        deep_merge(raw, data)
        self._set(raw)

    def state_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.dump(), sort_keys=True, default=str).encode()).hexdigest()


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq, "ne": operator.ne, "gt": operator.gt, "gte": operator.ge, "lt": operator.lt,
    "lte": operator.le, "contains": lambda a, b: b in a if a is not None else False,
    "startswith": lambda a, b: str(a).startswith(str(b)) if a is not None else False,
    "endswith": lambda a, b: str(a).endswith(str(b)) if a is not None else False,
    "in": lambda a, b: a in b, "nin": lambda a, b: a not in b,
}  # fmt: skip


def _matches(record: Mapping[str, Any], constraints: Mapping[str, Any]) -> bool:
    for key, expected in constraints.items():
        field, op = key.rsplit("__", 1) if "__" in key else (key, "eq")
        try:
            if not _OPS.get(op, operator.eq)(record.get(field), expected):
                return False
        except (TypeError, ValueError):
            return False
    return True


def query_db(db_name: str, db: BankDB, return_ids: bool = False, limit: int | None = None,
             **constraints: Any) -> list[Any]:  # fmt: skip
    if db_name not in QUERYABLE:
        return []
    out: list[Any] = []
    for rid, rec in db.table(db_name).data.items():
        if _matches(rec, constraints):
            out.append((rid, rec) if return_ids else rec)
            if limit is not None and len(out) >= limit:
                break
    return out


def add_to_db(db_name: str, record_id: str, record: dict[str, Any], db: BankDB) -> bool:
    tab = getattr(db, db_name, None)
    if not isinstance(tab, Table) or record_id in tab.data:
        return False
    tab.data[record_id] = record
    return True


def update_record_in_db(db_name: str, db: BankDB, record_id: str,
                        updates: Mapping[str, Any]) -> tuple[bool, dict[str, Any] | None]:  # fmt: skip
    tab = getattr(db, db_name, None)
    if not isinstance(tab, Table) or record_id not in tab.data:
        return False, None
    tab.data[record_id].update(updates)
    return True, tab.data[record_id]


def query_database_tool(database_name: str, constraints: str = "{}", db: BankDB | None = None) -> str:
    """τ²-bench's text of a query: "Found N record(s) in 'T':" and one block per record."""
    if db is None:
        return "Error: TransactionalDB instance required"
    try:
        if database_name not in QUERYABLE:
            return f"Error: Database '{database_name}' not found. Available: {list(QUERYABLE)}"
        try:
            cons = json.loads(constraints) if constraints else {}
        except json.JSONDecodeError as e:
            return f"Error: Invalid JSON: {e}"
        results = query_db(database_name, db=db, return_ids=True, **cons)
        if not results:
            return f"No records found in '{database_name}'."
        lines = [f"Found {len(results)} record(s) in '{database_name}':\n"]
        for i, (rid, rec) in enumerate(results, 1):
            lines.append(f"{i}. Record ID: {rid}")
            for field, value in rec.items():
                lines.append(f"   {field}: {value}")
            lines.append("")
        return "\n".join(lines)
    except Exception as e:  # noqa: BLE001 - τ²-bench returns the error as the tool's text
        return f"Error querying database: {e!s}"
