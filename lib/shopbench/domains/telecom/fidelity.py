"""The telecom port checked against material nobody here produced (issue 28 item 2).

**Gold paths** (:func:`gold_paths`): each task's expected actions — the agent's on the company's
records and the customer's on their phone, each with its ``requestor`` — played in order as a
conversation would play them (each call through ``get_response``, so the two sides are synced after
it) from the task's initial state, then scored by :func:`.reward.task_reward` on the task's basis.
A failure lists its reasons (the failing assertions, actions, the replay's errors).

**Built vs published** (:func:`compare_built`): the builder (:mod:`.tasks`) applied to each
published task's id, compared with the published task as parsed JSON (every key and value); each
difference is listed by its key path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .data_model import TelecomData
from .reward import task_reward

__all__ = ["compare_built", "gold_path", "gold_paths"]


def gold_path(data: TelecomData, task: Mapping[str, Any]) -> tuple[float, dict]:
    """The reward of the task's expected actions played as a conversation, and its breakdown."""
    msgs = [{"role": a.get("requestor", "assistant"),
             "tool_calls": [{"name": a["name"], "arguments": a.get("arguments") or {}}]}
            for a in (task.get("evaluation_criteria") or {}).get("actions") or []]  # fmt: skip
    return task_reward(data, task, msgs, "agent_stop")


def gold_paths(data: TelecomData, tasks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``tasks``, ``reward_1``, ``failures`` (task, reward, reasons), ``reward_basis`` (tasks per
    basis), ``env_assertions`` (assertions run / met), ``nl_assertion_unjudged``."""
    fails, unjudged, n_as, n_met = [], 0, 0, 0
    for t in tasks:
        reward, br = gold_path(data, t)
        unjudged += bool(br["unjudged"])
        n_as += len(br["env_assertions"])
        n_met += sum(c["met"] for c in br["env_assertions"])
        if reward != 1.0:
            why = [f"assertion {c['env_type']}.{c['func_name']}({c['arguments']}) not met"
                   for c in br["env_assertions"] if not c["met"]]  # fmt: skip
            why += [
                f"expected action [{k}] not matched" for k, ok in enumerate(br["action_checks"]) if not ok
            ]
            why += [f"replay error: {e}" for e in br["replay_errors"]]
            if br["db"] == 0.0:
                why.append("databases differ from the gold rollout")
            fails.append({"task": str(t["id"]), "reward": reward, "reasons": why})
    basis = Counter(
        "+".join((t.get("evaluation_criteria") or {}).get("reward_basis") or ["DB"]) for t in tasks
    )
    return {"tasks": len(tasks), "reward_1": len(tasks) - len(fails), "failures": fails,
            "reward_basis": dict(basis), "env_assertions": n_as, "env_assertions_met": n_met,
            "nl_assertion_unjudged": unjudged}  # fmt: skip


def _diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'built' if k in a else 'published'}")
            else:
                _diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", out)
    elif a != b or type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float)):
        out.append(f"{path}: built {str(a)[:80]!r} != published {str(b)[:80]!r}")


def compare_built(
    built: Sequence[Mapping[str, Any]], published: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Built vs published tasks sharing an id: ``shared_ids``, ``equal``, ``differing`` (id, paths)."""
    pub = {str(t["id"]): t for t in published}
    shared = [t for t in built if str(t["id"]) in pub]
    differing = []
    for t in shared:
        out: list[str] = []
        _diff(t, pub[str(t["id"])], "", out)
        if out:
            differing.append({"task": str(t["id"]), "differences": out[:10]})
    return {"shared_ids": len(shared), "equal": len(shared) - len(differing), "differing": differing}
