"""The airline reward (issue 28 item 1) on the basis each task's ``evaluation_criteria`` names, as
τ²-bench's ``evaluate_simulation`` (``EvaluationType.ALL``) computes it, and tau-bench's older
reward for its recorded conversations.

τ²-bench (:func:`task_reward`): the product over the task's ``reward_basis`` (all 50 published
airline tasks name ``["DB", "COMMUNICATE"]``), 0.0 when the conversation ended prematurely:

- **DB**: 1.0 iff the database after the rollout equals the database after the task's expected
  actions replayed on a fresh copy (a failing expected action is skipped, as τ²-bench logs and
  skips it); compared through :meth:`~.data_model.AirlineDB.state_hash`.
- **COMMUNICATE**: every ``communicate_info`` item appears in some assistant message
  (case-insensitive, commas removed from the message); 1.0 when there is none (6 tasks have some).
- **ACTION** (in no published airline basis, computed when named): every expected action matches
  some tool call of the conversation by name and by its ``compare_args`` (all the call's arguments
  when absent), as τ²-bench's ``Action.compare_with_tool_call``.
- **NL_ASSERTION** (every task has ``nl_assertions``, none names it in its basis): judged only by a
  judge the caller gives; not judged (``None``) otherwise, and then left out of the product (the
  breakdown says so). ``ENV_ASSERTION``: the airline tasks have none; 1.0.

tau-bench (:func:`tau_bench_reward`, the reward of the recorded conversations): 1.0 iff the data
hash after the conversation equals the hash after the task's gold actions (``respond`` and
``transfer_to_human_agents`` skipped) and, when the task has ``outputs``, every output appears in a
``respond`` message (lower-cased, commas removed from the message); 0.0 when the conversation did
not end (no ``###STOP###`` and no transfer: tau-bench computes the reward only at ``done``).
``formula="2024-11"`` is the reward of tau-bench's commit 718ffa1 (merged 2024-12-10): DB **and**
outputs; ``formula="2024-09"`` the one before it: outputs only when the task has outputs, DB
otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..tau2_retail.environment import COMPLETED, communicated
from .data_model import AirlineData, AirlineDB
from .tools import replay_actions

if TYPE_CHECKING:
    from ..banking_knowledge.db import BankDB

__all__ = [
    "COMPLETED", "action_checks", "communicated", "gold_state", "task_reward", "tau_bench_reward", "tool_calls",
]  # fmt: skip


def gold_state(data: AirlineData, task: Mapping, fidelity: str = "tau2") -> tuple[str, list[str]]:
    """(state hash after the task's expected actions on a fresh copy, their errors), cached on ``data``."""
    key = f"{task['id']}:{fidelity}"
    if key not in data.gold:
        db, errors = replay_actions(data.db, task["evaluation_criteria"].get("actions") or [], fidelity)
        data.gold[key] = (db.state_hash(), errors)
    return data.gold[key]


def tool_calls(
    messages: Sequence[Mapping], roles: Sequence[str] | None = None
) -> list[tuple[str, str, dict]]:
    """``(requestor, name, arguments)`` of every tool call in the messages (of ``roles``, all when None), in
    order; the requestor is the call's own, else its message's role; arguments not an object count as ``{}``."""
    out = []
    for m in messages:
        role = m.get("role")
        if roles is not None and role not in roles:
            continue
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or c
            args = fn.get("arguments") or {}
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    args = {}
            out.append(
                (str(c.get("requestor") or role), str(fn.get("name")), args if isinstance(args, dict) else {})
            )
    return out


def action_checks(
    actions: Sequence[Mapping], messages: Sequence[Mapping], roles: Sequence[str] | None = None
) -> list[bool]:
    """Per expected action: whether some tool call (of ``roles``, all when None) matches it (τ²-bench's
    ``compare_with_tool_call``)."""
    calls = tool_calls(messages, roles)
    out = []
    for a in actions:
        found = False
        for _requestor, name, args in calls:
            if name != a["name"]:
                continue
            keys = list(args) if a.get("compare_args") is None else list(a["compare_args"])
            if not keys or {k: v for k, v in args.items() if k in keys} == {
                k: v for k, v in (a.get("arguments") or {}).items() if k in keys
            }:
                found = True
                break
        out.append(found)
    return out


def task_reward(db: AirlineDB | BankDB, gold_hash: str, criteria: Mapping, messages: Sequence[Mapping],
                termination: str | None = None, nl_checks: Sequence[Mapping] | None = None) -> tuple[float, dict]:  # fmt: skip
    """τ²-bench's reward over the task's basis and its breakdown (module docstring); banking_knowledge's
    reward too (the same computation over its :class:`~..banking_knowledge.db.BankDB`)."""
    basis = list(criteria.get("reward_basis") or ["DB"])
    db_ok = float(db.state_hash() == gold_hash)
    info = list(criteria.get("communicate_info") or [])
    missing = communicated(info, messages) if info else []
    acts = list(criteria.get("actions") or [])
    checks = action_checks(acts, messages) if acts else []
    assertions = list(criteria.get("nl_assertions") or [])
    nl: float | None = (
        1.0 if not assertions else (None if nl_checks is None else float(all(c["met"] for c in nl_checks)))
    )
    parts: dict[str, float | None] = {"DB": db_ok, "ENV_ASSERTION": 1.0, "COMMUNICATE": float(not missing),
                                      "ACTION": float(all(checks)), "NL_ASSERTION": nl}  # fmt: skip
    reward = 1.0
    for b in basis:
        p = parts[b]
        if p is not None:
            reward *= p
    premature = termination is not None and termination not in COMPLETED
    if premature:
        reward = 0.0
    return reward, {"basis": basis, "db": db_ok, "communicate": None if not info else parts["COMMUNICATE"],
                    "missing_info": missing, "action": None if not acts else parts["ACTION"],
                    "action_checks": checks, "nl_assertion": nl, "unjudged": [b for b in basis if parts[b] is None],
                    "premature": premature, "termination": termination}  # fmt: skip


def tau_bench_reward(final_hash: str, gold_hash: str, outputs: Sequence[str], responses: Sequence[str],
                     done: bool = True, formula: str = "2024-11") -> tuple[float, dict]:  # fmt: skip
    """tau-bench's reward (module docstring): ``responses`` are the agent's ``respond`` texts."""
    if formula not in ("2024-11", "2024-09"):
        raise ValueError(f"tau-bench reward formula {formula!r}: use '2024-11' or '2024-09'")
    r_db = final_hash == gold_hash
    found = {o: any(o.lower() in r.lower().replace(",", "") for r in responses) for o in outputs}
    r_out = all(found.values())
    if not done:
        reward = 0.0
    elif formula == "2024-09" and outputs:
        reward = float(r_out)
    else:
        reward = float(r_db and r_out)
    return reward, {"r_actions": float(r_db), "outputs": found, "done": done}
