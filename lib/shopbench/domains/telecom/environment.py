"""The telecom environment (issue 28 item 1), dual control: one rollout holds the company's records
with the agent's 13 tools and the customer's phone with the customer's 30 tools, kept in step as
τ²-bench's ``TelecomEnvironment.sync_tools`` keeps them after every call (the line's status and
roaming and the data allowance reach the phone; a paid payment request marks the bill paid; a bill
awaiting payment becomes the phone's payment request).

:class:`TelecomState` is that pair with τ²-bench's ``Environment`` operations: a tool call by the
agent or by the customer (``get_response``; never raising, a wrong argument is the ``"Error: ..."``
text), a task's initial state (``set_state``: ``initialization_data``, ``initialization_actions``,
``message_history``), an environment function call or assertion.

:class:`TelecomEnvironment` plays a conversation under :func:`shopbench.env.run_conversation` as the
airline and retail environments do; the customer's tool calls come from the user simulator, which
gets :meth:`TelecomEnvironment.execute_user` and the 30 specs in its view
(:class:`TelecomUserView`), or returns the calls in its turn for the loop to run
(:meth:`TelecomEnvironment.execute_user_call`), and every call of either role is kept, in order, in
:attr:`TelecomEnvironment.trajectory` (the messages :func:`.reward.task_reward` replays).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...core.conversation import ToolCall
from ...env.protocols import ToolOutcome
from ..airline.reward import tool_calls
from ..tau2_retail.environment import AGENT_INSTRUCTION, Tau2Environment
from .data_model import LineStatus, PaymentRequest, TelecomData, TelecomDB, TelecomUserDB
from .toolkit import call_tool
from .tools import AGENT_TOOL_NAMES, AGENT_TOOL_SPECS, TelecomTools
from .user_tools import USER_TOOL_NAMES, USER_TOOL_SPECS, TelecomUserTools

__all__ = ["MAX_STEPS", "TelecomEnvironment", "TelecomState", "TelecomUserView", "agent_system_prompt"]

MAX_STEPS = 200  # τ²-bench's default max_steps for telecom runs (its CLI default)


def agent_system_prompt(policy: str) -> str:
    """τ²-bench's agent system prompt (the same for every domain): the instruction and the policy."""
    return f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>"


def _deep_update(base: dict, upd: Mapping) -> dict:
    for k, v in upd.items():
        if isinstance(v, Mapping) and isinstance(base.get(k), dict):
            _deep_update(base[k], v)
        else:
            base[k] = copy.deepcopy(v)
    return base


class TelecomState:
    """The company's records and the customer's phone of one rollout, and τ²-bench's operations on them."""

    def __init__(self, data: TelecomData):
        self.tools = TelecomTools(data.new_db())
        self.user_tools = TelecomUserTools(data.new_user_db())
        self.sync_tools()

    # τ²-bench TelecomEnvironment.sync_tools
    def sync_tools(self) -> None:
        s = self.user_tools.db.surroundings
        if s.phone_number is None:
            return
        line = self.tools._get_line_by_phone(s.phone_number)
        s.line_active = line.status == LineStatus.ACTIVE
        s.roaming_allowed = bool(line.roaming_enabled)
        plan = self.tools._get_plan_by_id(line.plan_id)
        s.mobile_data_usage_exceeded = line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb
        if s.payment_request is not None and s.payment_request.paid:
            self.tools._set_bill_to_paid(s.payment_request.bill_id)
            s.payment_request = None
        if s.payment_request is None:
            customer = self.tools.get_customer_by_phone(s.phone_number)
            bills = self.tools._get_bills_awaiting_payment(customer)
            if bills:
                s.payment_request = PaymentRequest(bill_id=bills[0].bill_id, amount_due=bills[0].total_due)

    def kit(self, requestor: str) -> TelecomTools | TelecomUserTools:
        if requestor == "user":
            return self.user_tools
        if requestor == "assistant":
            return self.tools
        raise ValueError(f"Invalid requestor: {requestor}")

    def get_response(self, requestor: str, name: str, arguments: Any) -> tuple[bool, str]:
        """A tool call of ``requestor`` (``"assistant"`` or ``"user"``) and sync, as τ²-bench's ``get_response``."""
        names = USER_TOOL_NAMES if requestor == "user" else AGENT_TOOL_NAMES
        ok, content = call_tool(self.kit(requestor), names, name, arguments)
        if ok:
            try:
                self.sync_tools()
            except Exception as e:  # noqa: BLE001 - τ²-bench's get_response catches the sync too
                return False, f"Error: {e}"
        return ok, content

    def make_tool_call(self, requestor: str, name: str, arguments: Mapping[str, Any]) -> Any:
        """τ²-bench's ``make_tool_call``: the call alone, no sync, raising (the gold replay's form)."""
        names = USER_TOOL_NAMES if requestor == "user" else AGENT_TOOL_NAMES
        if name not in names:
            raise ValueError(f"Tool '{name}' not found.")
        return getattr(self.kit(requestor), name)(**arguments)

    def run_env_function_call(self, call: Mapping[str, Any]) -> Any:
        kit = self.kit("assistant" if call["env_type"] == "assistant" else "user")
        fn = getattr(kit, call["func_name"], None)
        if fn is None or not callable(fn):
            raise ValueError(f"Function {call['func_name']} not found in {call['env_type']} tools")
        res = fn(**(call.get("arguments") or {}))
        self.sync_tools()
        return res

    def run_env_assertion(self, assertion: Mapping[str, Any]) -> bool:
        """Whether the assertion holds (its ``assert_value``, default true). An assertion that raises
        or answers a non-bool is not met here (τ²-bench's evaluator would stop with the exception)."""
        try:
            res = self.run_env_function_call(assertion)
        except Exception:  # noqa: BLE001 - counted as not met (FIDELITY.md)
            return False
        if not isinstance(res, bool):
            return False
        return res == assertion.get("assert_value", True)

    def set_state(self, initial_state: Mapping[str, Any] | None) -> None:
        """A task's ``initial_state`` (τ²-bench's ``set_state``): data updates, then the set-up
        calls, then the write tool calls of the message history; then a sync."""
        st = initial_state or {}
        init = st.get("initialization_data") or {}
        if init.get("agent_data") is not None:
            self.tools.db = TelecomDB.model_validate(
                _deep_update(self.tools.db.model_dump(), init["agent_data"])
            )
        if init.get("user_data") is not None:
            self.user_tools.db = TelecomUserDB.model_validate(
                _deep_update(self.user_tools.db.model_dump(), init["user_data"])
            )
        for call in st.get("initialization_actions") or []:
            self.run_env_function_call(call)
        replay_messages(self, st.get("message_history") or [])
        self.sync_tools()

    def hashes(self) -> tuple[str, str]:
        return self.tools.db.get_hash(), self.user_tools.db.get_hash()


WRITE_TOOLS = frozenset(
    n for cls, names in ((TelecomTools, AGENT_TOOL_NAMES), (TelecomUserTools, USER_TOOL_NAMES)) for n in names
    if getattr(getattr(cls, n), "__tool_kind__", "") == "write"
)  # fmt: skip
"""The tools that change state (τ²-bench's ``mutates_state``): the only ones a replay runs."""


def replay_messages(state: TelecomState, messages: list[Mapping[str, Any]]) -> list[str]:
    """Replay the write tool calls of ``messages`` (τ²-bench's ``set_state``: unknown and read-only
    tools skipped); the errors, one per failing call."""
    errors = []
    for requestor, name, args in tool_calls(messages, ("assistant", "user")):
        if name not in WRITE_TOOLS:
            continue
        ok, content = state.get_response(requestor, name, args)
        if not ok:
            errors.append(f"{requestor}:{name}: {content}")
    return errors


@dataclass
class TelecomUserView:
    """What the telecom customer sees: the agent's last message, whether the agent closed, the
    customer's 30 tools and the function that runs one of them on their phone."""

    agent_text: str | None
    final: bool = False
    tools: list[dict] = field(default_factory=list)
    execute: Callable[[str, Any], tuple[bool, str]] | None = None


class TelecomEnvironment(Tau2Environment):
    """One rollout of a task: a :class:`TelecomState` with the task's initial state applied."""

    domain = "telecom"

    def __init__(self, data: TelecomData, task: Mapping[str, Any] | None = None, agent_opens: bool = False,
                 max_steps: int = MAX_STEPS):  # fmt: skip
        self.state = TelecomState(data)
        self.state.set_state((task or {}).get("initial_state"))
        self.tools_spec = copy.deepcopy(AGENT_TOOL_SPECS)
        self.user_tools_spec = copy.deepcopy(USER_TOOL_SPECS)
        self._start(agent_opens, max_steps)
        self.trajectory: list[dict[str, Any]] = []

    def _record(self, role: str, name: str, arguments: Any, ok: bool, content: str) -> None:
        self.trajectory.append({"role": role, "tool_calls": [{"name": name, "arguments": arguments,
                                                              "requestor": role}]})  # fmt: skip
        self.trajectory.append(
            {"role": "tool", "requestor": role, "name": name, "content": content, "error": not ok}
        )

    def execute_user(self, name: str, arguments: Any) -> tuple[bool, str]:
        """A customer's tool call on their phone (never raising)."""
        ok, content = self.state.get_response("user", name, arguments)
        self._record("user", name, arguments, ok, content)
        return ok, content

    def execute_user_call(self, call: ToolCall) -> ToolOutcome:
        """A customer's tool call from the conversation loop (dual control, issue 28 item 4)."""
        ok, content = self.execute_user(call.name, call.arguments)
        return self._outcome(call, ok, content)

    def user_view(self, index: int, agent_text: str | None, final: bool) -> TelecomUserView:
        return TelecomUserView(agent_text, final, self.user_tools_spec, self.execute_user)

    def execute(self, call: ToolCall) -> ToolOutcome:
        ok, content = self.state.get_response("assistant", call.name, call.arguments)
        self._record("assistant", call.name, call.arguments, ok, content)
        return self._outcome(call, ok, content)
