"""The banking_knowledge port checked against the published data (issue 28 item 2).

**Gold paths** (:func:`gold_paths`): each task's expected actions, executed with their requestor
from a fresh database with the task's ``initial_state`` applied, rewarded on the task's basis
(:func:`.reward.task_reward`) against the gold database, the conversation being those tool calls
alone. Since the gold database comes from the same actions, DB reward 1 checks that the tools are
deterministic and that nothing outside the actions changes the state; the substantive check is
``expected_action_errors``: the expected actions whose output is an error in this port (each
listed with its text; τ²-bench's own code gives the same text, because the tool bodies are its).

**Retrieval sanity** (:func:`retrieval_sanity`): the published data records no agent's search
query, and no expected action retrieves a document (KB_search is not in any task's actions), so
there is no recorded query whose answer BM25 could be checked against. Two honest figures instead:
(1) each of the 698 documents found by BM25 when its own title is the query (hit@1, hit@10):
whether the index and the tokenisation work on the real documents; (2) for each task, the share of
its ``required_documents`` in BM25's top 10 for the user scenario's instructions as the query
(the customer's whole situation, not what an agent would type): a rough ceiling-free proxy of how
findable the needed documents are, not a measurement of any agent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from statistics import mean
from typing import Any

from .data_model import BankingData
from .retrieval import Bm25Index
from .reward import execute_actions, gold_state, task_reward

__all__ = ["gold_paths", "retrieval_sanity"]


def _messages(actions: list[Mapping]) -> list[dict]:
    return [{"role": "user" if a.get("requestor") == "user" else "assistant", "content": None,
             "tool_calls": [{"function": {"name": a["name"], "arguments": a.get("arguments") or {}}}]}
            for a in actions]  # fmt: skip


def gold_paths(data: BankingData) -> dict[str, Any]:
    """Every task's expected actions from its initial state, rewarded on its basis (module docstring)."""
    fails, errs = [], {}
    for t in data.tasks:
        crit = t["evaluation_criteria"]
        actions = list(crit.get("actions") or [])
        gold_hash, gold_rows = gold_state(data, t)
        db, rows = execute_actions(data, t)
        bad = [f"{r['action_id']}: {r['name']}: {r['output'][:200]}" for r in rows if not r["ok"]]
        if bad:
            errs[str(t["id"])] = bad
        reward, br = task_reward(db, gold_hash, crit, _messages(actions), "agent_stop")
        if reward != 1.0:
            reasons = []
            if br["db"] != 1.0:
                reasons.append("database differs from the gold database")
            if br["action"] == 0.0:
                reasons.append("ACTION: an expected action matches no call")
            if br["missing_info"]:
                reasons.append(f"COMMUNICATE: {br['missing_info']} not said")
            fails.append({"task": str(t["id"]), "reward": reward, "reasons": reasons})
    basis = Counter("+".join(t["evaluation_criteria"].get("reward_basis") or ["DB"]) for t in data.tasks)
    return {"tasks": len(data.tasks), "reward_1": len(data.tasks) - len(fails), "failures": fails,
            "reward_basis": dict(basis),
            "expected_actions": sum(len(t["evaluation_criteria"].get("actions") or []) for t in data.tasks),
            "expected_actions_by_requestor": dict(Counter(a.get("requestor", "assistant") for t in data.tasks
                                                          for a in t["evaluation_criteria"].get("actions") or [])),
            "expected_action_errors": errs,
            "nl_assertion_unjudged": sum(bool(t["evaluation_criteria"].get("nl_assertions")) for t in data.tasks)}  # fmt: skip


def retrieval_sanity(data: BankingData, k: int = 10) -> dict[str, Any]:
    """BM25 on the real documents (module docstring)."""
    docs = list(data.documents.values())
    cache = data.gold.setdefault("_retrieval", {})
    index = cache.setdefault("_index_bm25", None) or Bm25Index(docs)
    cache["_index_bm25"] = index
    hit1 = hit_k = 0
    for d in docs:
        ids = [i for i, _ in index.search(d.title, k)]
        hit1 += bool(ids) and ids[0] == d.id
        hit_k += d.id in ids
    recalls = []
    full = 0
    for t in data.tasks:
        req = list(t.get("required_documents") or [])
        if not req:
            continue
        ins = t["user_scenario"]["instructions"]
        query = ins if isinstance(ins, str) else " ".join(str(v) for v in ins.values() if v)
        top = {i for i, _ in index.search(query, k)}
        r = sum(x in top for x in req) / len(req)
        recalls.append(r)
        full += r == 1.0
    return {"documents": len(docs), "k": k, "title_query_hit_at_1": hit1, "title_query_hit_at_k": hit_k,
            "tasks_with_required_documents": len(recalls),
            "required_documents_recall_at_k_user_instructions_mean": round(mean(recalls), 4) if recalls else None,
            "tasks_all_required_documents_in_top_k": full}  # fmt: skip
