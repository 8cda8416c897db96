"""τ²-bench's retail domain read from its published folder (MIT; github.com/sierra-research/tau2-bench,
``data/tau2/domains/retail``): :mod:`.data_model` (the folder and one rollout's database),
:mod:`.specs` (the 16 tool specs an agent sees), :mod:`.tools` (the tools, τ²-bench's behaviour by
default, the project's corrections as ``fidelity="corrected"``), :mod:`.environment` (the rules of a conversation and the reward over the
task's basis), :mod:`.nl_assertions` (the NL_ASSERTION judge and its known-answer stand-in),
:mod:`.user` (scripted and LLM users), :mod:`.agent` (the LLM agent), :mod:`.text`, and
:mod:`.fidelity` (the tools against tau2-bench's recorded outputs, as a table)."""

from __future__ import annotations

from ...judges.tau2.nl_assertions import (
    KNOWN_ANSWER,
    KnownAnswerNLJudge,
    NLAssertionSpec,
    NLItem,
    render_conversation,
)
from .agent import LLMRetailAgent
from .data_model import RetailDB, Tau2Data, Tau2DataError, load_tau2
from .environment import (
    AGENT_INSTRUCTION,
    COMPLETED,
    GREETING,
    REWARD_BASES,
    TRANSFER_MESSAGE,
    RetailEnvironment,
    action_reward,
    agent_system_prompt,
    communicated,
    gold_state,
    reward_basis,
    task_reward,
)
from .fidelity import REFERENCE_REPLAY, fidelity_table, load_reference
from .specs import READ_TOOLS, TOOL_NAMES, TOOL_SPECS, WRITE_TOOLS
from .text import first_person, task_description
from .tools import (
    CORRECTIONS,
    FIDELITIES,
    CorrectedRetailTools,
    RetailTools,
    ToolError,
    make_tools,
    replay_actions,
    tool_content,
)
from .user import LLMRetailUser, ScriptedRetailUser

__all__ = [
    "AGENT_INSTRUCTION", "COMPLETED", "CORRECTIONS", "FIDELITIES", "GREETING", "KNOWN_ANSWER", "READ_TOOLS",
    "REFERENCE_REPLAY", "REWARD_BASES", "TOOL_NAMES", "TOOL_SPECS", "TRANSFER_MESSAGE", "WRITE_TOOLS", "CorrectedRetailTools",
    "KnownAnswerNLJudge", "LLMRetailAgent", "LLMRetailUser", "NLAssertionSpec", "NLItem", "RetailDB",
    "RetailEnvironment", "RetailTools", "ScriptedRetailUser", "Tau2Data", "Tau2DataError", "ToolError",
    "action_reward", "agent_system_prompt", "communicated", "fidelity_table", "first_person", "gold_state", "load_reference", "load_tau2",
    "make_tools", "render_conversation", "replay_actions", "reward_basis", "task_description", "task_reward",
    "tool_content",
]  # fmt: skip
