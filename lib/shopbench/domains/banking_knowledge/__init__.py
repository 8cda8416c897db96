"""The banking_knowledge domain (issue 28 item 1): tau2-bench's banking domain with retrieval (MIT;
github.com/sierra-research/tau2-bench, commit a2c0247), read from a folder given as a parameter.
:mod:`.data_model` (the folder, validated), :mod:`.db` (one rollout's database), :mod:`.tools`
(the agent's 14 base and 44 discoverable tools, the user's tools), :mod:`.retrieval` (full
knowledge base in the prompt, BM25 ``KB_search``, ``grep``, MiniLM embeddings),
:mod:`.environment`, :mod:`.reward` and :mod:`.fidelity` (gold paths, retrieval sanity)."""

from __future__ import annotations

from .data_model import BankingData, BankingDataError, Document, ignored_initial_keys, load_banking
from .db import BankDB
from .environment import (
    AGENT_TOOL_NAMES,
    USER_TOOL_NAMES,
    BankingEnvironment,
    BankingTools,
    agent_system_prompt,
    agent_tool_specs,
    read_log_allowlist,
    user_tool_specs,
)
from .fidelity import gold_paths, retrieval_sanity
from .retrieval import DEFAULT_VARIANT, VARIANTS, Bm25Index, KnowledgeSearch, build_policy
from .reward import execute_actions, gold_state, task_reward

__all__ = [
    "AGENT_TOOL_NAMES", "DEFAULT_VARIANT", "USER_TOOL_NAMES", "VARIANTS", "BankDB", "BankingData",
    "BankingDataError", "BankingEnvironment", "BankingTools", "Bm25Index", "Document", "KnowledgeSearch",
    "agent_system_prompt", "agent_tool_specs", "build_policy", "execute_actions", "gold_paths", "gold_state",
    "ignored_initial_keys", "load_banking", "read_log_allowlist", "retrieval_sanity", "task_reward",
    "user_tool_specs",
]  # fmt: skip
