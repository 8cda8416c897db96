"""The banking_knowledge reward (issue 28 item 1) on the basis each task's ``evaluation_criteria``
names, as τ²-bench's ``evaluate_simulation`` computes it; 0.0 when the conversation ended
prematurely. The 97 published tasks name ``["DB"]`` (88) or ``["ACTION"]`` (9).

- **DB**: 1.0 iff the database after the rollout equals the gold database: a fresh database with
  the task's ``initial_state`` applied, then the task's expected actions executed with their
  requestor (a failing action is kept as τ²-bench keeps it: its error text is its output, nothing
  changes), under the task's read-log allowlist (:func:`.environment.read_log_allowlist`).
  Compared by :meth:`~.db.BankDB.state_hash` over every table (τ²-bench hashes the agent's and the
  user's database, which are one object in this domain).
- **ACTION**: every expected action matches some tool call of the conversation (any role) by
  name and by its ``compare_args`` (all the call's arguments when absent), τ²-bench's
  ``Action.compare_with_tool_call`` (:func:`shopbench.domains.airline.reward.action_checks`).
- **COMMUNICATE**: every ``communicate_info`` item in some assistant message (case-insensitive,
  commas removed); no published banking task has any. **ENV_ASSERTION**: none; 1.0.
- **NL_ASSERTION**: no published banking task has NL assertions; were one named, it would be
  left unscored without a judge and counted as unjudged (as the airline and retail rewards do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..airline.reward import task_reward  # the same reward over the same basis (module docstring)
from .data_model import BankingData
from .db import BankDB
from .environment import BankingTools, read_log_allowlist

__all__ = ["execute_actions", "gold_state", "task_reward"]


def execute_actions(data: BankingData, task: Mapping, actions: Sequence[Mapping] | None = None
                    ) -> tuple[BankDB, list[dict[str, Any]]]:  # fmt: skip
    """A fresh database with the task's initial state, the actions executed in order (the task's
    expected actions by default); the database and one ``{action_id, name, requestor, ok, output}``
    per action."""
    db = data.initial_db(task)
    tools = BankingTools(db, None, read_log_allowlist(task))
    rows = []
    acts = actions if actions is not None else (task["evaluation_criteria"].get("actions") or [])
    for a in acts:
        req = a.get("requestor", "assistant")
        ok, out = tools.execute(a["name"], a.get("arguments") or {}, requestor=req)
        rows.append(
            {"action_id": a.get("action_id"), "name": a["name"], "requestor": req, "ok": ok, "output": out}
        )
    return db, rows


def gold_state(data: BankingData, task: Mapping) -> tuple[str, list[dict[str, Any]]]:
    """(hash of the gold database, the expected actions' outputs), cached on ``data``."""
    key = f"gold:{task['id']}"
    if key not in data.gold:
        db, rows = execute_actions(data, task)
        data.gold[key] = (db.state_hash(), rows)
    return data.gold[key]
