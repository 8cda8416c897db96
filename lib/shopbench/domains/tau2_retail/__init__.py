"""τ²-bench's retail domain read from its published folder (MIT; github.com/sierra-research/tau2-bench,
``data/tau2/domains/retail``): :mod:`.data_model` (the folder and one rollout's database),
:mod:`.tools` (the 16 tools), :mod:`.environment` (the rules of a conversation and the action
reward), :mod:`.user` (scripted and LLM users), :mod:`.agent` (the LLM agent), :mod:`.text`."""

from __future__ import annotations

from .agent import LLMRetailAgent
from .data_model import RetailDB, Tau2Data, Tau2DataError, load_tau2
from .environment import (
    AGENT_INSTRUCTION,
    GREETING,
    TRANSFER_MESSAGE,
    RetailEnvironment,
    action_reward,
    agent_system_prompt,
    communicated,
    gold_state,
)
from .text import first_person, task_description
from .tools import (
    READ_TOOLS,
    TOOL_NAMES,
    TOOL_SPECS,
    WRITE_TOOLS,
    RetailTools,
    ToolError,
    replay_actions,
    tool_content,
)
from .user import LLMRetailUser, ScriptedRetailUser

__all__ = [
    "AGENT_INSTRUCTION", "GREETING", "READ_TOOLS", "TOOL_NAMES", "TOOL_SPECS", "TRANSFER_MESSAGE", "WRITE_TOOLS",
    "LLMRetailAgent", "LLMRetailUser", "RetailDB", "RetailEnvironment", "RetailTools", "ScriptedRetailUser",
    "Tau2Data", "Tau2DataError", "ToolError", "action_reward", "agent_system_prompt", "communicated",
    "first_person", "gold_state", "load_tau2", "replay_actions", "task_description", "tool_content",
]  # fmt: skip
