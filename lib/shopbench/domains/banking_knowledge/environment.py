"""The banking_knowledge environment (issue 28 item 1): one rollout's database (the task's
``initial_state`` applied), the agent's tools (the 14 base tools and the retrieval variant's
``KB_search``/``grep``), the user's tools (the task's ``user_tools``) and the policy of the
retrieval variant, played by :func:`shopbench.env.run_conversation` as the airline and retail
environments are (fixed greeting, ``###STOP###``/transfer/agent stop, 80 agent steps).

A tool call never raises (:meth:`BankingTools.execute`): an unknown tool, arguments that are not
an object, a missing, unexpected or mistyped argument, or any exception inside a tool is the text
``Error: …`` the agent (or user) sees, as τ²-bench's ``Environment.get_response`` returns it.

The user's tools (``call_discoverable_user_tool``, ``apply_for_credit_card``, …) run through
:meth:`BankingEnvironment.execute_user` on the same database; in a conversation the simulated user
calls them in its turn and the loop runs them with :meth:`BankingEnvironment.execute_user_call`
(dual control, issue 28 item 4; :mod:`shopbench.domains.base`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...core.conversation import ToolCall
from ...env.protocols import ToolOutcome
from ..tau2_retail.environment import (
    AGENT_INSTRUCTION,
    Tau2Environment,
)
from .data_model import BankingData
from .db import BankDB
from .retrieval import DEFAULT_VARIANT, KnowledgeSearch, build_policy, retrieval_tool_specs
from .toolkit import tool_spec
from .tools import KnowledgeTools, KnowledgeUserTools

__all__ = ["AGENT_TOOL_NAMES", "MAX_STEPS", "USER_TOOL_NAMES", "BankingEnvironment", "BankingTools",
           "agent_system_prompt", "agent_tool_specs", "read_log_allowlist", "user_tool_specs"]  # fmt: skip

MAX_STEPS = 80
AGENT_TOOL_NAMES: tuple[str, ...] = tuple(KnowledgeTools.tool_names())
USER_TOOL_NAMES: tuple[str, ...] = tuple(KnowledgeUserTools.tool_names())


def agent_system_prompt(policy: str) -> str:
    """τ²-bench's agent system prompt (the same for every domain): the instruction and the policy."""
    return f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>"


def read_log_allowlist(task: Mapping | None) -> set[str]:
    """τ²-bench's ``_derive_read_log_allowlist``: the discoverable tools the task's expected
    actions call; a *read* discoverable tool's call is written to ``agent_discoverable_tools``
    (and so counts in the database compared) only when it is one of these."""
    out: set[str] = set()
    for a in ((task or {}).get("evaluation_criteria") or {}).get("actions") or []:
        if a.get("name") == "call_discoverable_agent_tool":
            name = (a.get("arguments") or {}).get("agent_tool_name")
            if name:
                out.add(name)
    return out


def agent_tool_specs(retrieval: str = DEFAULT_VARIANT) -> list[dict]:
    from .retrieval import variant

    v = variant(retrieval)
    names = (["KB_search"] if v.kb_search else []) + (["grep"] if v.grep else [])
    return [tool_spec(getattr(KnowledgeTools, n)) for n in AGENT_TOOL_NAMES] + retrieval_tool_specs(names)


def user_tool_specs(include: list[str] | None = None) -> list[dict]:
    names = [n for n in USER_TOOL_NAMES if include is None or n in include]
    return [tool_spec(getattr(KnowledgeUserTools, n)) for n in names]


class BankingTools:
    """The agent's and the user's tools over one :class:`BankDB` (they share it, as in τ²-bench)."""

    def __init__(self, db: BankDB, search: KnowledgeSearch | None = None, allowlist: set[str] | None = None,
                 user_tools: list[str] | None = None):  # fmt: skip
        self.db = db
        self.agent = KnowledgeTools(db)
        self.agent.set_read_log_allowlist(allowlist)
        self.user = KnowledgeUserTools(db)
        self.search = search
        self.agent_names = list(AGENT_TOOL_NAMES) + (search.tool_names if search is not None else [])
        self.user_names = [n for n in USER_TOOL_NAMES if not user_tools or n in user_tools]

    def _method(self, name: str, requestor: str) -> Any:
        if requestor == "user":
            if name not in self.user_names:
                raise ValueError(f"Tool '{name}' not found.")
            return getattr(self.user, name)
        if name not in self.agent_names:
            raise ValueError(f"Tool '{name}' not found.")
        if name in ("KB_search", "grep"):
            return getattr(self.search, name)
        return getattr(self.agent, name)

    def execute(self, name: str, arguments: Any, requestor: str = "assistant") -> tuple[bool, str]:
        """(ok, text): the tool's text, or ``Error: …`` (module docstring); never raises."""
        try:
            method = self._method(str(name), requestor)
            if arguments is None:
                arguments = {}
            if isinstance(arguments, str):
                arguments = json.loads(arguments) if arguments.strip() else {}
            if not isinstance(arguments, Mapping):
                raise TypeError(
                    f"{name}() argument after ** must be a mapping, not {type(arguments).__name__}"
                )
            res = method(**arguments)
        except Exception as e:  # noqa: BLE001 - τ²-bench turns every exception into the tool's error text
            return False, f"Error: {e}"
        text = res if isinstance(res, str) else json.dumps(res, default=str)
        return not text.startswith("Error"), text

    def mutates(self, name: str, requestor: str = "assistant") -> bool:
        kit = self.user if requestor == "user" else self.agent
        return kit.has_tool(name) and kit.mutates(name)


class BankingEnvironment(Tau2Environment):
    """One rollout of a task (module docstring). ``tools_spec`` is what the agent is given,
    ``user_tools_spec`` what the user is given, ``policy`` the variant's policy."""

    domain = "banking_knowledge"

    def __init__(self, data: BankingData, task: Mapping, agent_opens: bool, retrieval: str = DEFAULT_VARIANT,
                 max_steps: int = MAX_STEPS, encoder: Any = None):  # fmt: skip
        self.task = task
        self.db = data.initial_db(task)
        self.search = KnowledgeSearch(data, retrieval, encoder)
        self.tools = BankingTools(self.db, self.search, read_log_allowlist(task), task.get("user_tools"))
        self.tools_spec = agent_tool_specs(retrieval)
        self.user_tools_spec = user_tool_specs(task.get("user_tools"))
        self.policy = build_policy(data, retrieval)
        self.system_prompt = agent_system_prompt(self.policy)
        self._start(agent_opens, max_steps)

    def execute_user(self, call: ToolCall) -> ToolOutcome:
        ok, content = self.tools.execute(call.name, call.arguments, requestor="user")
        return self._outcome(call, ok, content)

    def execute_user_call(self, call: ToolCall) -> ToolOutcome:
        """A user's tool call from the conversation loop (dual control, issue 28 item 4)."""
        return self.execute_user(call)
