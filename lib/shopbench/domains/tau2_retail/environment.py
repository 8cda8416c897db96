"""The τ²-retail environment: one rollout's database and tools as
:func:`shopbench.env.run_conversation` plays them, and the reward (seed 003 §4, App. C.3).

App. C.3 checks pairs against the benchmark's "programmatic task success rewards [0,1], which track
database transitions, disclosure verification, and action matching independently of model
annotation. Omitting the LLM judge component renders this audit entirely deterministic."

:func:`action_reward`: **DB**: 1.0 iff the database after the rollout equals the database after
replaying the task's expected actions on a fresh copy, compared through a SHA-256 of the canonical
JSON of every record (products, users, orders) that differs from ``db.json`` (both runs start from
the same data, so this equals comparing the full tables). **COMMUNICATE**: when
``communicate_info`` is non-empty, every item must appear in some assistant message
(case-insensitive, commas removed from the message, as τ²-bench does). reward = DB × COMMUNICATE.
The tasks' ``reward_basis`` also names NL_ASSERTION; its assertions are null for every retail task
and would need an LLM judge, so it is not implemented (App. C.3 omits the judge too).

The conversation follows τ²-bench's orchestrator: an LLM agent's first message is the fixed
greeting (then the user opens); a scripted agent speaks first. It ends when the user stops
(``user_stop``), the agent transfers to a human (``transfer``) or has nothing more to say
(``agent_stop``), the agent fails (``agent_error``), the user simulator fails (``user_error``, a
bug fix: it used to crash the rollout) or after 80 agent steps (``max_steps``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...core.conversation import ToolCall
from ...env.orchestrator import Stop
from ...env.protocols import Limits, ToolOutcome, ToolRecord, UserTurn
from .data_model import RetailDB, Tau2Data
from .tools import RetailTools, replay_actions, tool_content

__all__ = [
    "AGENT_INSTRUCTION", "GREETING", "MAX_STEPS", "TRANSFER_MESSAGE", "RetailEnvironment", "RetailUserView",
    "action_reward", "agent_system_prompt", "communicated", "gold_state",
]  # fmt: skip

# τ²-bench's agent instruction and system-prompt layout (src/tau2/agent/llm_agent.py), quoted.
AGENT_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> provided below.\n"
    "In each turn you can either:\n- Send a message to the user.\n- Make a tool call.\n"
    "You cannot do both at the same time.\n\nTry to be helpful and always follow the policy."
)
GREETING = "Hi! How can I help you today?"
TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
MAX_STEPS = 80  # agent steps in one conversation


def agent_system_prompt(policy: str) -> str:
    """τ²-bench's agent system prompt: the instruction and the domain policy."""
    return f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>"


def gold_state(data: Tau2Data, task: Mapping) -> tuple[str, list[str]]:
    """(state hash after replaying the task's expected actions on a fresh copy, replay errors),
    cached on ``data``."""
    tid = str(task["id"])
    if tid not in data.gold:
        db, errors = replay_actions(data.db, task["evaluation_criteria"]["actions"])
        data.gold[tid] = (db.state_hash(), errors)
    return data.gold[tid]


def communicated(info: Sequence[str], messages: Sequence[Mapping]) -> list[str]:
    """The ``communicate_info`` items that appear in no assistant message (τ²-bench's check:
    case-insensitive, commas removed from the message)."""
    texts = [
        str(m.get("content") or "").lower().replace(",", "") for m in messages if m.get("role") == "assistant"
    ]
    return [x for x in info if not any(x.lower() in t for t in texts)]


def action_reward(
    db: RetailDB, gold_hash: str, info: Sequence[str], messages: Sequence[Mapping]
) -> tuple[float, dict]:
    """reward = DB × COMMUNICATE (see the module docstring) and its breakdown."""
    db_ok = db.state_hash() == gold_hash
    missing = communicated(info, messages) if info else []
    comm = None if not info else float(not missing)
    reward = float(db_ok) * (1.0 if comm is None else comm)
    return reward, {"db": float(db_ok), "communicate": comm, "missing_info": missing, "db_hash": db.state_hash(),
                    "gold_hash": gold_hash}  # fmt: skip


@dataclass
class RetailUserView:
    """What the retail user sees: the agent's last message and whether the agent closed."""

    agent_text: str | None
    final: bool = False


class RetailEnvironment:
    """One rollout: a fresh :class:`RetailDB` over the loaded data and its tools. ``agent_opens``:
    a scripted agent speaks first; otherwise the fixed :data:`GREETING` stands in for it."""

    domain = "retail"
    empty_reply_stops = True

    def __init__(self, data: Tau2Data, agent_opens: bool, max_steps: int = MAX_STEPS):
        self.db = RetailDB(data.db)
        self.tools = RetailTools(self.db)
        self.agent_opens = agent_opens
        self.greeting = None if agent_opens else GREETING
        self.limits = Limits(max_agent_steps=int(max_steps))

    def user_view(self, index: int, agent_text: str | None, final: bool) -> RetailUserView:
        return RetailUserView(agent_text, final)

    def on_user_turn(self, index: int, turn: UserTurn) -> bool:
        return turn.stop

    def execute(self, call: ToolCall) -> ToolOutcome:
        ok, res = self.tools.execute(call.name, call.arguments)
        return self._outcome(call, ok, res)

    def tool_failure(self, call: ToolCall, error: str) -> ToolOutcome:
        return self._outcome(call, False, f"tool failed: {error}")

    @staticmethod
    def _outcome(call: ToolCall, ok: bool, res: Any) -> ToolOutcome:
        return ToolOutcome((ok, res), {"role": "tool", "tool_call_id": call.call_id, "name": call.name,
                                       "content": tool_content(ok, res)})  # fmt: skip

    def on_tool(self, record: ToolRecord) -> None:
        return None

    def observe_tools(self, observation: Any, outcomes: list[ToolOutcome]) -> Any:
        """The scripted agent's next observation: the result ``(ok, result)``, or their list."""
        results = [o.result for o in outcomes]
        return results[0] if len(results) == 1 else results

    def on_agent_message(self, text: str) -> str | None:
        return "transfer" if text == TRANSFER_MESSAGE else None

    def end_agent_turn(self, index: int, text: str, rounds: int, error: str | None) -> None:
        return None

    def termination(self, reason: str) -> str:
        return "user_error" if reason == Stop.NO_OPENING else reason
