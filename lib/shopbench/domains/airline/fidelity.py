"""The airline port checked against material nobody here produced (issue 28 item 2).

**Airline replay** (:func:`replay_trajectories`): tau-bench's 200 recorded gpt-4o conversations
(``historical_trajectories/gpt-4o-airline.json``, tau-bench commit 7362a17, 2024-11-22; 50 tasks ×
4 trials) ran on this same database under tau-bench's tools. Each conversation's tool calls are
replayed in order on a fresh database with the ``"tau_bench"`` reading (:mod:`.tools`; the agent
executed only the first tool call of a message, which is the one recorded), each output compared
with the recorded tool message (JSON-normalised: both parsed when both are JSON, else the strings),
and the reward recomputed with :func:`.reward.tau_bench_reward` from the final database, the
task's gold actions (from the record's ``info.task``) and the agent's ``respond`` messages.

The database the conversations ran on wrote the users' address key ``province``; tau-bench renamed it
``state`` on 2025-01-16 (commit 404f33e; nothing else in the three files changed). A
``get_user_details`` output therefore differs from the recorded one in that key only; the summary
counts outputs equal as they are (``tool_outputs_equal``) and equal once ``province`` is read as
``state`` (``tool_outputs_equal_modulo_province``), and the recorded ``gt_data_hash`` (tau-bench's
hash of the gold database) is recomputed with the key written ``province``
(:func:`.data_model.tau_bench_hash`).

**Gold paths** (:func:`gold_paths`): each τ²-bench task's expected actions executed from its
initial state (all 50 airline tasks have none beyond the database) must give reward 1 on the
task's basis, the assistant messages holding nothing but the tool calls (so a task whose basis
names COMMUNICATE with ``communicate_info`` items cannot be reached by actions alone: it is listed
with that reason, and counted again with the items said by the agent, ``with_communication``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import read_text
from ...strictjson import parse_json
from .data_model import AirlineData, AirlineDataError, AirlineDB, tau_bench_hash
from .reward import gold_state, task_reward, tau_bench_reward
from .tool_names import WRITE_TOOLS
from .tools import make_tools, replay_actions

__all__ = ["compare_task_sets", "gold_paths", "load_trajectories", "normalised_equal", "replay_trajectories"]

TRAJ_HINT = (
    "it is tau-bench's historical_trajectories/gpt-4o-airline.json (MIT; github.com/sierra-research/tau-bench), "
    "kept at ../shared/data/tau_bench_airline_trajectories"
)


def _traj_error(
    problem: str, path: Path, where: str | None = None, field: str | None = None
) -> AirlineDataError:
    return AirlineDataError(
        problem, file=path, where=where, field=field, fix=f"restore the published file: {TRAJ_HINT}"
    )


def load_trajectories(path: str | Path) -> list[dict]:
    """Read and check the recorded conversations; a problem names the file, the record and the field."""
    path = Path(path)
    if not path.is_file():
        raise _traj_error("the trajectories file is missing", path)
    rows = parse_json(read_text(path, "trajectories file"), path, what="trajectories file", error=AirlineDataError,
                      fix=f"restore the published file: {TRAJ_HINT}")  # fmt: skip
    if not isinstance(rows, list) or not rows:
        raise _traj_error("expected a non-empty JSON list of conversations", path)
    for i, r in enumerate(rows):
        where = f"conversation [{i}]"
        if not isinstance(r, dict):
            raise _traj_error("is not an object", path, where)
        for k, typ in (("task_id", int), ("reward", int | float), ("traj", list), ("info", dict)):
            if not isinstance(r.get(k), typ) or isinstance(r.get(k), bool):
                raise _traj_error(f"is missing or not a {getattr(typ, '__name__', 'number')}", path, where, k)
        task = r["info"].get("task")
        if not isinstance(task, dict):
            raise _traj_error("is missing or not an object", path, where, "info.task")
        if not isinstance(task.get("user_id"), str):
            raise _traj_error("is missing or not a string", path, where, "info.task.user_id")
        acts = task.get("actions")
        for j, a in enumerate(acts if isinstance(acts, list) else [None]):
            if (
                not isinstance(a, dict)
                or not isinstance(a.get("name"), str)
                or not isinstance(a.get("kwargs"), dict)
            ):
                raise _traj_error("is not an action {name, kwargs}", path, where, f"info.task.actions[{j}]")
        if not isinstance(task.get("outputs", []), list):
            raise _traj_error("is not a list of strings", path, where, "info.task.outputs")
        for j, m in enumerate(r["traj"]):
            if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "tool"):
                raise _traj_error("is not a message with a role", path, where, f"traj[{j}]")
    return rows


def _parse(text: Any) -> Any:
    if not isinstance(text, str):
        return ("raw", text)
    try:
        return ("json", json.loads(text))
    except ValueError:
        return ("text", text)


def normalised_equal(a: Any, b: Any) -> bool:
    """Two tool outputs equal after JSON parsing (key order and spacing aside), or as strings."""
    return _parse(a) == _parse(b)


def _province(text: str) -> str:
    return text.replace('"province":', '"state":')


def _check_refs(data: AirlineData, rows: Sequence[Mapping], path: Path) -> None:
    for i, r in enumerate(rows):
        uid = r["info"]["task"]["user_id"]
        if uid not in data.db["users"]:
            raise _traj_error(f"names user {uid!r}, who is not in {data.path / 'users.json'}", path,
                              f"conversation [{i}] (task {r['task_id']})", "info.task.user_id")  # fmt: skip
        for j, a in enumerate(r["info"]["task"]["actions"]):
            rid = a["kwargs"].get("reservation_id")
            if rid is not None and rid not in data.db["reservations"]:
                raise _traj_error(f"names reservation {rid!r}, which is not in {data.path / 'reservations.json'}",
                                  path, f"conversation [{i}] (task {r['task_id']})",
                                  f"info.task.actions[{j}].kwargs.reservation_id")  # fmt: skip


def replay_trajectories(
    data: AirlineData, rows: Sequence[Mapping], path: str | Path = "trajectories"
) -> dict:
    """Replay every recorded conversation (module docstring); the summary and one row per conversation."""
    path = Path(path)
    _check_refs(data, rows, path)
    gold_cache: dict[str, tuple[str, str]] = {}
    n_out = eq = eq_prov = 0
    differing: list[dict] = []
    per = []
    match = {"2024-11": 0, "2024-09": 0}
    gt_hash_ok = gt_hash_n = 0
    for i, r in enumerate(rows):
        task = r["info"]["task"]
        gold_actions = [
            a for a in task["actions"] if a["name"] not in ("respond", "transfer_to_human_agents")
        ]
        gkey = json.dumps(gold_actions, sort_keys=True)
        if gkey not in gold_cache:
            gdb, _ = replay_actions(data.db, gold_actions, "tau_bench", args_key="kwargs")
            gold_cache[gkey] = (gdb.state_hash(), tau_bench_hash(gdb, address_key="province"))
        gold_hash, gold_v1 = gold_cache[gkey]
        rec_info = (r["info"].get("reward_info") or {}).get("info") or {}
        if "gt_data_hash" in rec_info:
            gt_hash_n += 1
            gt_hash_ok += rec_info["gt_data_hash"] == gold_v1
        db = AirlineDB(data.db)
        tools = make_tools(db, "tau_bench")
        msgs = r["traj"]
        responses: list[str] = []
        done = False
        row_diff = 0
        for j, m in enumerate(msgs):
            if m["role"] == "assistant":
                calls = m.get("tool_calls") or []
                if not calls:
                    responses.append(str(m.get("content") or ""))
                    continue
                fn = calls[0].get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = None
                ok, out = tools.execute(str(fn.get("name")), args)
                nxt = msgs[j + 1] if j + 1 < len(msgs) else None
                if nxt is None or nxt.get("role") != "tool":
                    continue
                n_out += 1
                same = normalised_equal(out, nxt.get("content"))
                same_p = same or normalised_equal(out, _province(str(nxt.get("content"))))
                eq += same
                eq_prov += same_p
                if not same_p:
                    row_diff += 1
                    differing.append({"conversation": i, "task_id": r["task_id"], "message": j + 1,
                                      "tool": fn.get("name"), "recorded": str(nxt.get("content"))[:160],
                                      "replayed": out[:160]})  # fmt: skip
                if fn.get("name") == "transfer_to_human_agents":
                    done = True
            elif m["role"] == "user" and j > 1 and "###STOP###" in str(m.get("content") or ""):
                done = True
        outputs = [str(o) for o in task.get("outputs") or []]
        rewards = {
            f: tau_bench_reward(db.state_hash(), gold_hash, outputs, responses, done, f)[0] for f in match
        }
        for f in match:
            match[f] += rewards[f] == float(r["reward"])
        per.append({"conversation": i, "task_id": r["task_id"], "trial": r.get("trial"), "recorded_reward": r["reward"],
                    "reward": rewards["2024-11"], "reward_2024_09": rewards["2024-09"], "done": done,
                    "outputs_differing": row_diff})  # fmt: skip
    mism = [p for p in per if p["reward"] != float(p["recorded_reward"])]
    return {
        "conversations": len(rows),
        "tool_outputs": n_out,
        "tool_outputs_equal": eq,
        "tool_outputs_equal_modulo_province": eq_prov,
        "tool_outputs_differing_only_in_province": eq_prov - eq,
        "differing_outputs": differing,
        "rewards_equal": match["2024-11"],
        "rewards_equal_formula_2024_09": match["2024-09"],
        "reward_mismatches": [{k: p[k] for k in ("conversation", "task_id", "trial", "recorded_reward", "reward")}
                              for p in mism],
        "recorded_reward_1": sum(float(r["reward"]) == 1.0 for r in rows),
        "gt_data_hash_equal": gt_hash_ok,
        "gt_data_hash_recorded": gt_hash_n,
        "conversations_not_done": sum(not p["done"] for p in per),
        "per_conversation": per,
    }  # fmt: skip


def gold_paths(data: AirlineData, fidelity: str = "tau2") -> dict:
    """Each task's expected actions from its initial state, rewarded on the task's basis (module docstring)."""
    fails, fails_comm = [], []
    for t in data.tasks:
        crit = t["evaluation_criteria"]
        actions = crit.get("actions") or []
        gold_hash, gold_errors = gold_state(data, t, fidelity)
        db, errors = replay_actions(data.db, actions, fidelity)
        msgs: list[dict] = [{"role": "assistant", "content": None,
                             "tool_calls": [{"function": {"name": a["name"], "arguments": a.get("arguments") or {}}}]}
                            for a in actions]  # fmt: skip
        reward, br = task_reward(db, gold_hash, crit, msgs, "agent_stop")
        reasons = []
        if errors:
            reasons.append("expected action(s) fail: " + "; ".join(errors))
        if br["db"] != 1.0:
            reasons.append("database differs from the gold database")
        if br["missing_info"]:
            reasons.append(
                f"COMMUNICATE: {br['missing_info']} must be said by the agent, which no action does"
            )
        if br["action"] == 0.0:
            reasons.append("ACTION: an expected action matches no call")
        if reward != 1.0:
            fails.append({"task": str(t["id"]), "reward": reward, "reasons": reasons})
        said = [{"role": "assistant", "content": " ".join(crit.get("communicate_info") or [])}]
        reward2, _ = task_reward(db, gold_hash, crit, msgs + said, "agent_stop")
        if reward2 != 1.0:
            fails_comm.append({"task": str(t["id"]), "reward": reward2, "reasons": reasons})
    return {"tasks": len(data.tasks), "reward_1": len(data.tasks) - len(fails), "failures": fails,
            "with_communication": {"reward_1": len(data.tasks) - len(fails_comm), "failures": fails_comm},
            "reward_basis": dict(Counter("+".join(t["evaluation_criteria"].get("reward_basis") or ["DB"])
                                         for t in data.tasks))}  # fmt: skip


def compare_task_sets(data: AirlineData, rows: Sequence[Mapping]) -> dict:
    """τ²-bench's 50 airline tasks beside tau-bench's 50 (the ``info.task`` of the recorded
    conversations): the same ids name different tasks, so each τ²-bench task is matched to the
    tau-bench tasks of the same user (the id in its ``known_info``) and compared by expected
    actions (``respond`` left out) and by write actions only."""
    from .data_model import _USER_ID_RE

    v1: dict[int, Mapping] = {}
    for r in rows:
        v1.setdefault(int(r["task_id"]), r["info"]["task"])

    def acts(items: Sequence[Mapping], key: str, only_writes: bool = False) -> str:
        return json.dumps([(a["name"], a[key]) for a in items if a["name"] != "respond"
                           and (not only_writes or a["name"] in WRITE_TOOLS)], sort_keys=True)  # fmt: skip

    same_id_same_user = same_actions = same_writes = same_user_only = no_user = 0
    pairs = []
    for t in data.tasks:
        uid = next(
            iter(_USER_ID_RE.findall(t["user_scenario"]["instructions"].get("known_info") or "")), None
        )
        v1_same = [i for i, v in v1.items() if v["user_id"] == uid]
        same_id_same_user += bool(
            str(t["id"]).isdigit() and int(t["id"]) in v1 and v1[int(t["id"])]["user_id"] == uid
        )
        ea = acts(t["evaluation_criteria"].get("actions") or [], "arguments")
        ew = acts(t["evaluation_criteria"].get("actions") or [], "arguments", True)
        full = [i for i in v1_same if acts(v1[i]["actions"], "kwargs") == ea]
        writes = [i for i in v1_same if acts(v1[i]["actions"], "kwargs", True) == ew]
        if full:
            same_actions += 1
        elif writes:
            same_writes += 1
        elif v1_same:
            same_user_only += 1
        else:
            no_user += 1
        pairs.append({"tau2_task": str(t["id"]), "user": uid, "tau_bench_tasks_same_user": v1_same,
                      "same_actions": full, "same_write_actions": writes})  # fmt: skip
    return {"tau2_tasks": len(data.tasks), "tau_bench_tasks": len(v1), "same_id_same_user": same_id_same_user,
            "same_user_same_actions": same_actions, "same_user_same_write_actions_only": same_writes,
            "same_user_other_actions": same_user_only, "user_in_no_tau_bench_task": no_user, "pairs": pairs}  # fmt: skip
