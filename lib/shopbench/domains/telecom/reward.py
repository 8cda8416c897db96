"""The telecom reward (issue 28 item 1) on the basis each task's ``evaluation_criteria`` names, as
τ²-bench's ``evaluate_simulation`` (``EvaluationType.ALL``) computes it: the product over the basis,
0.0 when the conversation ended prematurely (anything but ``agent_stop``/``user_stop``; here also
``transfer``, which τ²-bench ends as an agent stop).

- **ENV_ASSERTION** (every published telecom task): a fresh rollout gets the task's initial state,
  then the write tool calls of the conversation — the agent's on the company's records and the
  customer's on their phone — replayed in order (τ²-bench's ``set_state``: read-only and unknown
  tools skipped); each ``env_assertions`` item is then run on it (the phone's service, mobile data,
  speed, MMS; the company's overdue bill, line status, refuelled data). 1.0 iff all hold.
- **DB**: the replayed rollout's two databases (company and phone) equal those of a gold rollout
  (initial state, then the expected actions called without sync, as τ²-bench's gold replay does;
  a failing expected action is skipped).
- **ACTION** (the tasks whose fix is a transfer): every expected action matches some tool call of
  either role by name and ``compare_args`` (all of the call's arguments when null; none when empty).
- **COMMUNICATE**: every ``communicate_info`` item in some assistant message (case-insensitive,
  commas removed); no published telecom task has any.
- **NL_ASSERTION**: left unscored (``None``, listed in ``unjudged`` and left out of the product); no
  published telecom task names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..airline.reward import COMPLETED, communicated
from ..airline.reward import action_checks as _action_checks
from .data_model import TelecomData
from .environment import TelecomState, replay_messages

__all__ = ["COMPLETED", "action_checks", "gold_hashes", "task_reward"]


def action_checks(actions: Sequence[Mapping], messages: Sequence[Mapping]) -> list[bool]:
    """Per expected action: whether some tool call of the agent or the user matches it (τ²-bench's
    ``compare_with_tool_call``)."""
    return _action_checks(actions, messages, ("assistant", "user"))


def gold_hashes(data: TelecomData, task: Mapping[str, Any]) -> tuple[tuple[str, str], list[str]]:
    """The two databases' hashes after the task's expected actions (τ²-bench's gold rollout), and their errors."""
    st = TelecomState(data)
    st.set_state(task.get("initial_state"))
    errors = []
    for a in (task.get("evaluation_criteria") or {}).get("actions") or []:
        try:
            st.make_tool_call(a.get("requestor", "assistant"), a["name"], a.get("arguments") or {})
        except Exception as e:  # noqa: BLE001 - τ²-bench logs a failing gold action and goes on
            errors.append(f"{a.get('action_id', a['name'])}: {e}")
    return st.hashes(), errors


def task_reward(data: TelecomData, task: Mapping[str, Any], messages: Sequence[Mapping],
                termination: str | None = None) -> tuple[float, dict]:  # fmt: skip
    """τ²-bench's reward over the task's basis, and its breakdown (module docstring). ``messages``:
    the conversation with both roles' tool calls (``{"role": "assistant"|"user", "tool_calls":
    [{"name", "arguments"}]}``), as :attr:`.environment.TelecomEnvironment.trajectory` holds them."""
    crit = task.get("evaluation_criteria") or {}
    basis = list(crit.get("reward_basis") or ["DB"])
    st = TelecomState(data)
    st.set_state(task.get("initial_state"))
    replay_errors = replay_messages(st, list(messages))
    st.sync_tools()
    parts: dict[str, float | None] = {}
    checks = [{"func_name": a["func_name"], "env_type": a["env_type"], "arguments": a.get("arguments") or {},
               "met": st.run_env_assertion(a)} for a in crit.get("env_assertions") or []]  # fmt: skip
    parts["ENV_ASSERTION"] = float(all(c["met"] for c in checks))
    db_ok = None
    if "DB" in basis:
        gold, _ = gold_hashes(data, task)
        db_ok = float(st.hashes() == gold)
    parts["DB"] = db_ok
    acts = list(crit.get("actions") or [])
    act = action_checks(acts, messages) if acts else []
    parts["ACTION"] = float(all(act))
    info = list(crit.get("communicate_info") or [])
    missing = communicated(info, messages) if info else []
    parts["COMMUNICATE"] = float(not missing)
    parts["NL_ASSERTION"] = None if crit.get("nl_assertions") else 1.0
    reward = 1.0
    for b in basis:
        p = parts.get(b)
        if p is not None:
            reward *= p
    premature = termination is not None and termination not in COMPLETED
    if premature:
        reward = 0.0
    return reward, {"basis": basis, "env_assertions": checks, "db": db_ok, "action_checks": act,
                    "missing_info": missing, "unjudged": [b for b in basis if parts.get(b) is None],
                    "replay_errors": replay_errors, "premature": premature, "termination": termination}  # fmt: skip
