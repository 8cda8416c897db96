"""``shopbench domains check NAME`` (issue 28 item 2): a domain checked against data nobody on the
project produced, as one JSON summary. Evidence kind: ``known-answer`` (the benchmark's own recorded
outputs and rewards, and the tasks' own expected actions), never a finding about a model.

Keys of the summary (``NAME`` = ``airline``; ``retail`` gives ``domain``, ``data``, ``gold_paths``
and ``table16``; ``telecom``: see the end of this list):

- ``domain``, ``data`` (the folder read), ``trajectories`` (the file read, or null);
- ``replay`` (with trajectories): ``conversations``; ``tool_outputs`` (tool calls replayed, one per
  recorded tool message); ``tool_outputs_equal`` (JSON-normalised equal to the recorded message);
  ``tool_outputs_equal_modulo_province`` (equal once the recorded users' address key ``province``
  is read as ``state``, the one change tau-bench made to the data after recording);
  ``tool_outputs_differing_only_in_province``; ``differing_outputs`` (each remaining difference:
  conversation, message, tool, both texts cut to 160 characters); ``rewards_equal`` (recomputed
  reward = recorded reward, tau-bench's reward of commit 718ffa1: DB and outputs);
  ``rewards_equal_formula_2024_09`` (the reward before it: outputs only when the task has any);
  ``reward_mismatches``; ``recorded_reward_1``; ``gt_data_hash_equal`` / ``gt_data_hash_recorded``
  (tau-bench's hash of the gold database recomputed = the recorded ``gt_data_hash``);
  ``conversations_not_done`` (ended without ``###STOP###`` or a transfer: reward 0, as recorded);
- ``task_sets`` (with trajectories): τ²-bench's 50 tasks beside tau-bench's 50 (same user, same
  expected actions, same write actions only, other actions);
- ``gold_paths``: ``tasks``, ``reward_1`` (expected actions alone), ``failures`` (task, reward,
  reasons), ``with_communication`` (the same with the ``communicate_info`` items said by the agent),
  ``reward_basis`` (tasks per basis), ``expected_action_errors`` (failing expected actions, by
  reading); retail: also ``nl_assertion_unjudged`` (tasks whose basis names NL_ASSERTION, which no
  judge scored here);
- ``table16``: ``policy_words`` (whitespace-separated words of ``policy.md``), ``agent_tools``,
  ``user_tools``, ``paper`` (the same three in seed 003's Table 16), and for ``airline``
  ``tool_name_jaccard_with_retail`` (paper: 0.03 to 0.11 across domain pairs).

``banking_knowledge`` (:mod:`.banking_knowledge.fidelity`) gives ``domain``, ``data``, ``gold_paths``
(``tasks``, ``reward_1``, ``failures``, ``reward_basis``, ``expected_actions`` and
``expected_actions_by_requestor``, ``expected_action_errors`` (expected actions whose output is an
error, by task), ``nl_assertion_unjudged``), ``initial_state_ignored_keys`` (keys of a task's
``initialization_data`` that τ²-bench ignores), ``retrieval`` (BM25 on the 698 documents: a
document's own title as the query, hit@1 and hit@10; the share of each task's
``required_documents`` in the top 10 for its user instructions) and ``table16``:
``policy_words`` (of the default variant ``bm25_grep``'s policy, components substituted),
``policy_words_by_variant``, ``agent_tools`` (the 14 base tools and KB_search and grep),
``agent_tools_base``, ``agent_discoverable_tools``, ``user_tools`` (the user's own tools),
``user_discoverable_tools``, ``tool_name_jaccard_with_airline`` and ``_with_retail``, ``paper``.

``telecom`` (:mod:`.telecom`): ``gold_paths`` has ``published`` (the 20 tasks of ``tasks_small.json``) and ``built``
(the 114 ``base`` ids of ``split_tasks.json`` built by :mod:`.telecom.tasks`), each with ``tasks``,
``reward_1``, ``failures`` (task, reward, reasons), ``reward_basis``, ``env_assertions`` /
``env_assertions_met``, ``nl_assertion_unjudged``; ``builder``: ``base_ids``, ``built``,
``base_shared_ids_with_published`` (the base ids among the published tasks' ids) and
``published_rebuilt`` (the builder applied to the published ids: ``shared_ids``, ``equal``,
``differing`` with the differing key paths); ``table16``: ``policy_words`` (of the policy the
agent gets: main policy and tech-support manual in τ²-bench's tags), ``main_policy_words``,
``tech_support_words``, ``agent_tools``, ``user_tools``, ``tool_name_jaccard`` (agent tool names
against ``airline`` and ``retail``), ``paper``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["DOMAINS", "PAPER_TABLE16", "check_domain"]

DOMAINS = ("airline", "retail", "banking_knowledge", "telecom")
PAPER_TABLE16 = {  # seed 003, Table 16 (and §4): policy words, agent tools, user tools (None: not given)
    "airline": {"policy_words": 1313, "agent_tools": 14, "user_tools": 0},
    "retail": {"policy_words": 1158, "agent_tools": 16, "user_tools": 0},
    "banking_knowledge": {"policy_words": 926, "agent_tools": 16, "user_tools": None},
    "telecom": {"policy_words": 3715, "agent_tools": 13, "user_tools": 30},
}
DEFAULT_DATA = {name: f"../shared/data/tau2_{name}" for name in DOMAINS}


def _words(text: str) -> int:
    return len(text.split())


def _jaccard(a: set[str], b: set[str]) -> float:
    return round(len(a & b) / len(a | b), 4) if a | b else 0.0


def _airline(data_dir: Path, trajectories: Path | None, details: bool) -> dict[str, Any]:
    from .airline import gold_paths, load_airline, load_trajectories, replay_trajectories
    from .airline.fidelity import compare_task_sets
    from .airline.tools import replay_actions

    data = load_airline(data_dir)
    rows = (
        load_trajectories(trajectories) if trajectories is not None else None
    )  # all input read before any work
    out: dict[str, Any] = {"domain": "airline", "data": str(data_dir),
                           "trajectories": None if trajectories is None else str(trajectories)}  # fmt: skip
    if rows is not None:
        rep = replay_trajectories(data, rows, trajectories or "trajectories")
        if not details:
            rep.pop("per_conversation")
        out["replay"] = rep
        ts = compare_task_sets(data, rows)
        if not details:
            ts.pop("pairs")
        out["task_sets"] = ts
    gold = gold_paths(data)
    gold["expected_action_errors"] = {
        fid: {str(t["id"]): errs for t in data.tasks
              if (errs := replay_actions(data.db, t["evaluation_criteria"].get("actions") or [], fid)[1])}
        for fid in ("tau2", "tau_bench")
    }  # fmt: skip
    out["gold_paths"] = gold
    out["table16"] = _table16_airline(data)
    return out


def _table16_airline(data) -> dict[str, Any]:
    from .airline import TAU2_TOOL_NAMES
    from .tau2_retail.specs import TOOL_NAMES as RETAIL_TOOLS

    return {"policy_words": _words(data.policy), "agent_tools": len(TAU2_TOOL_NAMES), "user_tools": 0,
            "tau_bench_wiki_words": None if data.wiki is None else _words(data.wiki),
            "tool_name_jaccard_with_retail": _jaccard(set(TAU2_TOOL_NAMES), set(RETAIL_TOOLS)),
            "paper": PAPER_TABLE16["airline"]}  # fmt: skip


def _retail(data_dir: Path) -> dict[str, Any]:
    from .tau2_retail import gold_state, load_tau2, replay_actions, task_reward

    data = load_tau2(data_dir)
    fails, unjudged, errs = [], 0, {}
    for t in data.tasks:
        crit = t["evaluation_criteria"]
        gold_hash, _ = gold_state(data, t)
        db, errors = replay_actions(data.db, crit.get("actions") or [])
        if errors:
            errs[str(t["id"])] = errors
        msgs = [{"role": "assistant", "content": " ".join(crit.get("communicate_info") or [])}]
        reward, br = task_reward(db, gold_hash, crit, msgs, "agent_stop")
        unjudged += bool(br["unjudged"])
        if reward != 1.0:
            fails.append(
                {"task": str(t["id"]), "reward": reward, "reasons": [f"database differs: {br['db']}"]}
            )
    from collections import Counter

    gold = {"tasks": len(data.tasks), "reward_1": len(data.tasks) - len(fails), "failures": fails,
            "nl_assertion_unjudged": unjudged, "expected_action_errors": {"tau2": errs},
            "reward_basis": dict(Counter("+".join(t["evaluation_criteria"].get("reward_basis") or ["DB"])
                                         for t in data.tasks))}  # fmt: skip
    return {
        "domain": "retail",
        "data": str(data_dir),
        "trajectories": None,
        "gold_paths": gold,
        "table16": _table16_retail(data),
    }


def _table16_retail(data) -> dict[str, Any]:
    from .tau2_retail.specs import TOOL_NAMES

    return {
        "policy_words": _words(data.policy),
        "agent_tools": len(TOOL_NAMES),
        "user_tools": 0,
        "paper": PAPER_TABLE16["retail"],
    }


def _banking(data_dir: Path) -> dict[str, Any]:
    from .banking_knowledge import gold_paths, ignored_initial_keys, load_banking, retrieval_sanity

    data = load_banking(data_dir)  # all input read and checked before any work
    return {
        "domain": "banking_knowledge",
        "data": str(data_dir),
        "trajectories": None,
        "gold_paths": gold_paths(data),
        "initial_state_ignored_keys": ignored_initial_keys(data.tasks),
        "retrieval": retrieval_sanity(data),
        "table16": _table16_banking(data),
    }


def _table16_banking(data) -> dict[str, Any]:
    from .airline import TAU2_TOOL_NAMES as AIRLINE_TOOLS
    from .banking_knowledge import AGENT_TOOL_NAMES, DEFAULT_VARIANT, USER_TOOL_NAMES, VARIANTS, build_policy
    from .banking_knowledge.environment import agent_tool_specs
    from .banking_knowledge.tools import KnowledgeTools, KnowledgeUserTools
    from .tau2_retail.specs import TOOL_NAMES as RETAIL_TOOLS

    agent = [s["function"]["name"] for s in agent_tool_specs(DEFAULT_VARIANT)]
    words = {v: _words(build_policy(data, v)) for v in VARIANTS if v != "minilm_grep"}
    words["minilm_grep"] = _words(build_policy(data, "minilm_grep"))
    return {"policy_words": words[DEFAULT_VARIANT], "policy_words_by_variant": words,
                        "retrieval_variant": DEFAULT_VARIANT, "agent_tools": len(agent),
                        "agent_tools_base": len(AGENT_TOOL_NAMES),
                        "agent_discoverable_tools": len(KnowledgeTools.discoverable_names()),
                        "user_tools": len(USER_TOOL_NAMES),
                        "user_discoverable_tools": len(KnowledgeUserTools.discoverable_names()),
                        "tool_name_jaccard_with_airline": _jaccard(set(agent), set(AIRLINE_TOOLS)),
                        "tool_name_jaccard_with_retail": _jaccard(set(agent), set(RETAIL_TOOLS)),
                        "paper": PAPER_TABLE16["banking_knowledge"]}  # fmt: skip


def _telecom(data_dir: Path, details: bool) -> dict[str, Any]:
    from .telecom import (
        build_task,
        build_tasks,
        compare_built,
        gold_paths,
        load_telecom,
    )

    data = load_telecom(data_dir)  # every file checked, every base id parsed, before any call
    built = build_tasks(data, "base")
    published_ids = {str(t["id"]) for t in data.tasks}
    rebuilt = compare_built([build_task(data, str(t["id"])) for t in data.tasks], data.tasks)
    builder = {"base_ids": len(data.split["base"]), "built": len(built),
               "base_shared_ids_with_published": len(published_ids & set(data.split["base"])),
               "published_rebuilt": rebuilt}  # fmt: skip
    return {
        "domain": "telecom",
        "data": str(data_dir),
        "trajectories": None,
        "gold_paths": {"published": gold_paths(data, data.tasks), "built": gold_paths(data, built)},
        "builder": builder,
        "table16": _table16_telecom(data),
    }


def _table16_telecom(data) -> dict[str, Any]:
    from .airline import TAU2_TOOL_NAMES as AIRLINE_TOOLS
    from .tau2_retail.specs import TOOL_NAMES as RETAIL_TOOLS
    from .telecom import AGENT_TOOL_NAMES, USER_TOOL_NAMES

    agent = set(AGENT_TOOL_NAMES)
    return {"policy_words": _words(data.policy), "main_policy_words": _words(data.main_policy),
                        "tech_support_words": _words(data.tech_support), "agent_tools": len(AGENT_TOOL_NAMES),
                        "user_tools": len(USER_TOOL_NAMES),
                        "tool_name_jaccard": {"airline": _jaccard(agent, set(AIRLINE_TOOLS)),
                                              "retail": _jaccard(agent, set(RETAIL_TOOLS))},
                        "paper": PAPER_TABLE16["telecom"]}  # fmt: skip


def check_domain(name: str, data_dir: str | Path | None = None, trajectories: str | Path | None = None,
                 details: bool = False) -> dict[str, Any]:  # fmt: skip
    """The summary of ``shopbench domains check NAME`` (keys: module docstring). Bad input (a
    missing or malformed file, a task or record naming an unknown user or reservation) is a
    :class:`~shopbench.errors.UserError` raised before any replay."""
    from ..errors import ParamError

    if name not in DOMAINS:
        raise ParamError(f"unknown domain {name!r}", fix=f"use one of {list(DOMAINS)}")
    path = Path(data_dir if data_dir is not None else DEFAULT_DATA[name])
    if name == "banking_knowledge":
        if trajectories is not None:
            raise ParamError("--trajectories is for the airline domain (tau-bench's recorded conversations)",
                             fix="leave it out for banking_knowledge")  # fmt: skip
        return _banking(path)
    if name in ("retail", "telecom"):
        if trajectories is not None:
            raise ParamError("--trajectories is for the airline domain (tau-bench's recorded conversations)",
                             fix=f"leave it out for {name}")  # fmt: skip
        return _retail(path) if name == "retail" else _telecom(path, details)
    return _airline(path, None if trajectories is None else Path(trajectories), details)
