"""The roles of a conversation — agent, user simulator, environment — and the one orchestrator that
runs a conversation for every domain (the seeded shop, τ²-retail)."""

from __future__ import annotations

from .orchestrator import Conversation, Stop, run_conversation
from .protocols import (
    Agent,
    AgentStep,
    DualControlUser,
    Environment,
    Limits,
    ToolOutcome,
    ToolRecord,
    UserSimulator,
    UserTurn,
)

__all__ = [
    "Agent", "AgentStep", "Conversation", "DualControlUser", "Environment", "Limits", "Stop", "ToolOutcome", "ToolRecord",
    "UserSimulator", "UserTurn", "run_conversation",
]  # fmt: skip
