"""The airline environment (issue 28 item 1): one rollout's database and tools as
:func:`shopbench.env.run_conversation` plays them, following τ²-bench's orchestrator as the retail
environment does (:class:`shopbench.domains.tau2_retail.RetailEnvironment`): an LLM agent's first
message is the fixed greeting; the conversation ends when the user stops (``user_stop``), the agent
transfers to a human (``transfer``) or has nothing more to say (``agent_stop``), on an agent or user
failure, or after 80 agent steps. A tool call never raises: a wrong argument is the error text the
agent sees (:mod:`.tools`). The reward is :func:`.reward.task_reward`.
"""

from __future__ import annotations

from typing import Any

from ...core.conversation import ToolCall
from ...env.orchestrator import Stop
from ...env.protocols import Limits, ToolOutcome, ToolRecord, UserTurn
from ..tau2_retail.environment import AGENT_INSTRUCTION, GREETING, TRANSFER_MESSAGE, RetailUserView
from .data_model import AirlineData, AirlineDB
from .tools import make_tools, tool_specs

__all__ = ["MAX_STEPS", "AirlineEnvironment", "agent_system_prompt"]

MAX_STEPS = 80


def agent_system_prompt(policy: str) -> str:
    """τ²-bench's agent system prompt (the same for every domain): the instruction and the policy."""
    return f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>"


class AirlineEnvironment:
    """One rollout over the loaded data: a fresh :class:`AirlineDB` and its tools (``fidelity``
    ``"tau2"`` or ``"tau_bench"``, :mod:`.tools`). ``tools_spec`` is what the agent is given."""

    domain = "airline"
    empty_reply_stops = True

    def __init__(
        self, data: AirlineData, agent_opens: bool, max_steps: int = MAX_STEPS, fidelity: str = "tau2"
    ):
        self.db = AirlineDB(data.db)
        self.tools = make_tools(self.db, fidelity)
        self.tools_spec = tool_specs(fidelity)
        self.agent_opens = agent_opens
        self.greeting = None if agent_opens else GREETING
        self.limits = Limits(max_agent_steps=int(max_steps))

    def user_view(self, index: int, agent_text: str | None, final: bool) -> RetailUserView:
        return RetailUserView(agent_text, final)

    def on_user_turn(self, index: int, turn: UserTurn) -> bool:
        return turn.stop

    def execute(self, call: ToolCall) -> ToolOutcome:
        ok, content = self.tools.execute(call.name, call.arguments)
        return self._outcome(call, ok, content)

    def tool_failure(self, call: ToolCall, error: str) -> ToolOutcome:
        return self._outcome(call, False, f"Error: tool failed: {error}")

    @staticmethod
    def _outcome(call: ToolCall, ok: bool, content: str) -> ToolOutcome:
        return ToolOutcome((ok, content), {"role": "tool", "tool_call_id": call.call_id, "name": call.name,
                                           "content": content})  # fmt: skip

    def on_tool(self, record: ToolRecord) -> None:
        return None

    def observe_tools(self, observation: Any, outcomes: list[ToolOutcome]) -> Any:
        results = [o.result for o in outcomes]
        return results[0] if len(results) == 1 else results

    def on_agent_message(self, text: str) -> str | None:
        return "transfer" if text == TRANSFER_MESSAGE else None

    def end_agent_turn(self, index: int, text: str, rounds: int, error: str | None) -> None:
        return None

    def termination(self, reason: str) -> str:
        return "user_error" if reason == Stop.NO_OPENING else reason
