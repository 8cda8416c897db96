"""The τ²-retail environment: one rollout's database and tools as
:func:`shopbench.env.run_conversation` plays them, and the reward (seed 003 §4, App. C.3).

App. C.3 checks pairs against the benchmark's "programmatic task success rewards [0,1], which track
database transitions, disclosure verification, and action matching independently of model
annotation. Omitting the LLM judge component renders this audit entirely deterministic."

:func:`task_reward` is τ²-bench's ``evaluate_simulation`` (``EvaluationType.ALL``) for the retail
tasks: the reward is the **product over the task's ``reward_basis``** as the data names it — 112
tasks name ``[DB, NL_ASSERTION]``, tasks 33 and 34 ``[DB]``; none names COMMUNICATE — and 0.0 when
the conversation ended prematurely (τ²-bench: anything but a user or agent stop; a transfer to a
human is the user's stop there). The components:

- **DB**: 1.0 iff the database after the rollout equals the database after replaying the task's
  expected actions on a fresh copy (a failing expected action is skipped, as τ²-bench's gold replay
  does), compared through a SHA-256 of the canonical JSON of every record that differs from
  ``db.json`` (both start from the same data, so this equals τ²-bench's full-table hash).
- **NL_ASSERTION**: the task's ``nl_assertions`` judged on the conversation
  (:mod:`.nl_assertions`: an LLM under a contract, or the offline ``known-answer`` stand-in); 1.0
  when the task has none (40 of the 114 tasks have some). Not judged (``None``) when no judge is
  given: the reward is then the product over the rest of the basis — App. C.3's "omitting the LLM
  judge component" — and the breakdown says so.
- **COMMUNICATE**: when ``communicate_info`` is non-empty, every item must appear in some assistant
  message (case-insensitive, commas removed from the message, as τ²-bench does). It is in no
  published retail task's basis; :data:`REWARD_BASES` ``"db_communicate"`` is the basis of the
  older release (DB × COMMUNICATE for every task) the project used before.

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
from .tools import check_fidelity, make_tools, replay_actions, tool_content

__all__ = [
    "AGENT_INSTRUCTION", "COMPLETED", "GREETING", "MAX_STEPS", "REWARD_BASES", "TRANSFER_MESSAGE", "RetailEnvironment",
    "RetailUserView", "action_reward", "agent_system_prompt", "communicated", "gold_state", "reward_basis",
    "task_reward",
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


def gold_state(data: Tau2Data, task: Mapping, fidelity: str = "tau2") -> tuple[str, list[str]]:
    """(state hash after replaying the task's expected actions on a fresh copy, replay errors),
    cached on ``data`` per fidelity."""
    key = f"{task['id']}" if fidelity == "tau2" else f"{task['id']}:{check_fidelity(fidelity)}"
    if key not in data.gold:
        db, errors = replay_actions(data.db, task["evaluation_criteria"]["actions"], fidelity)
        data.gold[key] = (db.state_hash(), errors)
    return data.gold[key]


REWARD_BASES = ("task", "db_communicate")
COMPLETED = frozenset({"user_stop", "agent_stop", "transfer"})  # τ²-bench: USER_STOP / AGENT_STOP


def reward_basis(criteria: Mapping, basis: str = "task") -> tuple[str, ...]:
    """The components the reward multiplies: the task's ``reward_basis`` (``basis="task"``) or
    DB × COMMUNICATE (``"db_communicate"``, the older release)."""
    if basis == "db_communicate":
        return ("DB", "COMMUNICATE")
    if basis != "task":
        raise ValueError(f"reward basis {basis!r}: use one of {list(REWARD_BASES)}")
    names = tuple(criteria.get("reward_basis") or ("DB",))
    unknown = [b for b in names if b not in ("DB", "NL_ASSERTION", "COMMUNICATE")]
    if unknown:  # τ²-bench raises too: "Task reward_basis includes ... but these were not evaluated"
        raise ValueError(f"reward_basis {list(names)}: {unknown} cannot be evaluated in the retail domain "
                         "(it has no env assertions and the action check is not part of any retail basis)")  # fmt: skip
    return names


def task_reward(db: RetailDB, gold_hash: str, criteria: Mapping, messages: Sequence[Mapping],
                termination: str | None = None, nl_checks: Sequence[Mapping] | None = None,
                basis: str = "task", nl_judge: str | None = None) -> tuple[float, dict]:  # fmt: skip
    """The reward over the task's basis (module docstring) and its breakdown. ``criteria`` is the
    task's ``evaluation_criteria``; ``nl_checks`` the judged assertions (``None``: not judged);
    ``nl_judge`` names the judge for the breakdown (``"known-answer"`` for the stand-in)."""
    names = reward_basis(criteria, basis)
    db_ok = float(db.state_hash() == gold_hash)
    info = list(criteria.get("communicate_info") or [])
    missing = communicated(info, messages) if info else []
    assertions = list(criteria.get("nl_assertions") or [])
    if not assertions:
        nl: float | None = 1.0
    elif nl_checks is None:
        nl = None
    else:
        nl = float(all(c["met"] for c in nl_checks))
    parts: dict[str, float | None] = {"DB": db_ok, "COMMUNICATE": float(not missing), "NL_ASSERTION": nl}
    premature = termination is not None and termination not in COMPLETED
    reward = 1.0
    for b in names:
        part = parts[b]
        if part is not None:
            reward *= part
    if premature:
        reward = 0.0
    unjudged = [b for b in names if parts[b] is None]
    return reward, {"basis": list(names), "db": db_ok, "communicate": None if not info else parts["COMMUNICATE"],
                    "missing_info": missing, "nl_assertion": nl, "nl_checks": list(nl_checks or []),
                    "nl_judge": nl_judge if assertions and nl_checks is not None else None,
                    "unjudged": unjudged, "premature": premature, "termination": termination,
                    "db_hash": db.state_hash(), "gold_hash": gold_hash}  # fmt: skip


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
    """The older release's reward, DB × COMMUNICATE (:data:`REWARD_BASES` ``"db_communicate"``),
    and its breakdown."""
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


class Tau2Environment:
    """The τ²-family environment mechanics every domain shares (retail, airline, banking_knowledge,
    telecom): the fixed greeting or a scripted opening, the step limit, tool outcomes as tool
    messages, a transfer message that ends the conversation, ``user_error`` for a conversation with no
    opening. A domain sets ``domain``, ``tools`` (``execute(name, arguments) -> (ok, result)``) and
    may override :meth:`content` (the tool message text) and :attr:`failure_prefix`."""

    domain = ""
    empty_reply_stops = True
    failure_prefix = "Error: tool failed: "
    tools: Any

    def _start(self, agent_opens: bool, max_steps: int) -> None:
        self.agent_opens = agent_opens
        self.greeting = None if agent_opens else GREETING
        self.limits = Limits(max_agent_steps=int(max_steps))

    def user_view(self, index: int, agent_text: str | None, final: bool) -> Any:
        return RetailUserView(agent_text, final)

    def on_user_turn(self, index: int, turn: UserTurn) -> bool:
        return turn.stop

    def execute(self, call: ToolCall) -> ToolOutcome:
        ok, res = self.tools.execute(call.name, call.arguments)
        return self._outcome(call, ok, res)

    def tool_failure(self, call: ToolCall, error: str) -> ToolOutcome:
        return self._outcome(call, False, f"{self.failure_prefix}{error}")

    def content(self, ok: bool, res: Any) -> str:
        """The tool message's text for a result (the result itself where the tools return text)."""
        return res

    def _outcome(self, call: ToolCall, ok: bool, res: Any) -> ToolOutcome:
        return ToolOutcome((ok, res), {"role": "tool", "tool_call_id": call.call_id, "name": call.name,
                                       "content": self.content(ok, res)})  # fmt: skip

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


class RetailEnvironment(Tau2Environment):
    """One rollout: a fresh :class:`RetailDB` over the loaded data and its tools (``fidelity``
    ``"tau2"``, τ²-bench's behaviour, or ``"corrected"``: :data:`~.tools.CORRECTIONS`).
    ``agent_opens``: a scripted agent speaks first; otherwise the fixed :data:`GREETING` stands in
    for it."""

    domain = "retail"
    empty_reply_stops = True

    failure_prefix = "tool failed: "

    def __init__(self, data: Tau2Data, agent_opens: bool, max_steps: int = MAX_STEPS, fidelity: str = "tau2"):
        self.db = RetailDB(data.db)
        self.tools = make_tools(self.db, fidelity)
        self._start(agent_opens, max_steps)

    def content(self, ok: bool, res: Any) -> str:
        return tool_content(ok, res)
