"""The airline environment (issue 28 item 1): one rollout's database and tools as
:func:`shopbench.env.run_conversation` plays them, following τ²-bench's orchestrator as the retail
environment does (:class:`shopbench.domains.tau2_retail.RetailEnvironment`): an LLM agent's first
message is the fixed greeting; the conversation ends when the user stops (``user_stop``), the agent
transfers to a human (``transfer``) or has nothing more to say (``agent_stop``), on an agent or user
failure, or after 80 agent steps. A tool call never raises: a wrong argument is the error text the
agent sees (:mod:`.tools`). The reward is :func:`.reward.task_reward`.
"""

from __future__ import annotations

from ..tau2_retail.environment import (
    AGENT_INSTRUCTION,
    Tau2Environment,
)
from .data_model import AirlineData, AirlineDB
from .tools import make_tools, tool_specs

__all__ = ["MAX_STEPS", "AirlineEnvironment", "agent_system_prompt"]

MAX_STEPS = 80


def agent_system_prompt(policy: str) -> str:
    """τ²-bench's agent system prompt (the same for every domain): the instruction and the policy."""
    return f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>"


class AirlineEnvironment(Tau2Environment):
    """One rollout over the loaded data: a fresh :class:`AirlineDB` and its tools (``fidelity``
    ``"tau2"`` or ``"tau_bench"``, :mod:`.tools`). ``tools_spec`` is what the agent is given."""

    domain = "airline"

    def __init__(
        self, data: AirlineData, agent_opens: bool, max_steps: int = MAX_STEPS, fidelity: str = "tau2"
    ):
        self.db = AirlineDB(data.db)
        self.tools = make_tools(self.db, fidelity)
        self.tools_spec = tool_specs(fidelity)
        self._start(agent_opens, max_steps)
