"""User simulators and reference agents for every τ²-family domain (issue 28 items 3-4), over the
interface of :mod:`.base`.

Users (the :class:`shopbench.env.DualControlUser` protocol: a turn may be calls on the user's own
device or records, then the user speaks):

- :class:`ScriptedDomainUser`: retail's rule-based :class:`~.tau2_retail.ScriptedRetailUser`
  (opening from ``reason_for_call``, identity from ``known_info``, confirmations, a thanks at the
  end) with airline/banking/telecom identity questions (user id, reservation, account, phone
  number; off for retail, whose user is then retail's exactly), and, for a task whose expected actions
  include **user actions**, it performs them: each pending user action, in the task's order, when
  the agent's last message asks for it (names the tool, the discoverable tool it calls, or every
  content word of the tool's name), with the task's own arguments. That reads the gold actions:
  **known-answer** evidence (``known_answer`` is True), as retail's scripted user is an offline
  stand-in, never a measurement of a user.
- :class:`LLMDomainUser`: retail's :class:`~.tau2_retail.LLMRetailUser` generalised: a gateway
  model plays the user from the domain's instructions, one JSON turn ``{message, stop}`` (plus
  ``tool_call`` when the domain gives the user tools); a tool result goes back to it as the next
  message, and a wrong argument is the tool's error text it sees.

Reference agents (known-answer checks of the loop and the reward, never findings):
:class:`GoldAgent` executes the task's expected assistant actions in order and asks the user for
the user actions between them (reward 1 expected); :class:`IdleAgent` does nothing (reward 0 on a
task whose gold path changes the state).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.conversation import ToolCall, tool_call_schema
from ..env.protocols import AgentStep, ToolOutcome, UserTurn
from ..llm.result import CallResult, call_usage
from .tau2_retail.environment import TRANSFER_MESSAGE
from .tau2_retail.user import USER_SCHEMA, ScriptedRetailUser

__all__ = ["GoldAgent", "IdleAgent", "LLMDomainUser", "ScriptedDomainUser", "requested"]

_GENERIC = frozenset(
    "get set check toggle turn the a an for to of on off and call user tool make run my your".split()
)
_ASK_ACCOUNT = re.compile(r"\b(user ?id|customer ?id|account|reservation|booking|phone number|date of birth|"
                          r"full name|your name|who am i speaking)\b", re.I)  # fmt: skip


def requested(action: Mapping[str, Any], text: str) -> bool:
    """Whether the agent's ``text`` asks for ``action`` (module docstring)."""
    low = text.lower()
    name = str(action["name"])
    if name.lower() in low:
        return True
    inner = (action.get("arguments") or {}).get("discoverable_tool_name")
    if inner and str(inner).lower() in low:
        return True
    words = [w for w in name.lower().split("_") if w and w not in _GENERIC]
    return bool(words) and all(re.search(rf"\b{re.escape(w)}", low) for w in words)


class ScriptedDomainUser(ScriptedRetailUser):
    """The rule-based user of one task of any domain (module docstring). ``user_actions``: the
    task's expected actions whose requestor is the user (their reading makes it known-answer)."""

    def __init__(self, instructions: Mapping[str, Any], rng: random.Random, user_actions: Sequence[Mapping] = (),
                 max_turns: int = 20, account_questions: bool = True):  # fmt: skip
        super().__init__(instructions, rng, max_turns=max_turns)
        self.account_questions = account_questions  # False: retail's user exactly (no extra identity rule)
        self.pending = [dict(a) for a in user_actions]
        self.known_answer = bool(self.pending)
        self.name = (
            "scripted (known-answer: performs the task's user actions)" if self.known_answer else "scripted"
        )
        self.done: list[str] = []

    def respond(self, view: Any) -> UserTurn:
        text = str(getattr(view, "agent_text", None) or "")
        due = []
        if self.turns and not getattr(view, "final", False):
            for a in self.pending:
                if not requested(a, text):
                    break
                due.append(a)
        if due:
            self.pending = self.pending[len(due) :]
            return UserTurn(
                message="", tool_calls=[ToolCall(a["name"], dict(a.get("arguments") or {})) for a in due]
            )
        if (
            self.account_questions
            and self.turns
            and _ASK_ACCOUNT.search(text)
            and "?" in text
            and self.ins["known_info"]
        ):
            self.turns += 1
            msg = self._identity(text)
            return UserTurn(message=msg, stop=False, observation=msg)
        return super().respond(view)

    def tool_results(self, outcomes: list[ToolOutcome]) -> UserTurn:
        self.turns += 1
        said = []
        for o in outcomes:
            content = str(o.message.get("content") or "")
            said.append(f"I did {o.message.get('name')}: {content[:300]}")
            self.done.append(str(o.message.get("name")))
        msg = "Done. " + " ".join(said)
        return UserTurn(message=msg, stop=False, observation=msg)


_USER_SYSTEM = (
    "You are playing a customer contacting the customer service agent of {what}. Follow the instructions "
    "below; they describe who you are and what you want. Reveal information only when it is needed, one piece "
    "at a time; never make up names, emails, ids or addresses you were not given; if asked for something your "
    "instructions say you do not know, say you do not know it. When your goal is done or cannot be done, thank "
    "the agent and set stop to true.{tools}\n\n# Instructions\nReason for the call: {reason_for_call}\n"
    "What you know: {known_info}\nWhat you do not know: {unknown_info}\nHow to behave: {task_instructions}"
)
_TOOLS_NOTE = (
    " You have tools on your own side (your phone, your account); call one, as tool_call with message null "
    "and stop false, when the agent asks you to do something only you can do, then tell the agent what you "
    "saw. Otherwise set tool_call to null. Answer with JSON "
    '{{"message": ..., "stop": ..., "tool_call": {{"name": ..., "arguments": {{...}}}} or null}}. Your tools:\n'
)
_WHAT = {"retail": "an online retail store", "airline": "an airline", "banking_knowledge": "a bank",
         "telecom": "a mobile phone company"}  # fmt: skip


class LLMDomainUser:
    """The user played by a gateway model (module docstring); ``tools`` are the user's tool specs
    (none: retail's ``{message, stop}`` contract). The transcript is shown with the roles flipped."""

    def __init__(self, gateway: Any, backbone: str, instructions: Mapping[str, Any], run_id: str, item_prefix: str,
                 domain: str = "retail", tools: Sequence[Mapping] = (), max_tokens: int = 400, max_turns: int = 20):  # fmt: skip
        self.gateway, self.backbone, self.run_id = gateway, backbone, run_id
        self.tools = [dict(t) for t in tools]
        names = [t["function"]["name"] for t in self.tools]
        listing = "\n".join(f"- {t['function']['name']}({', '.join(t['function']['parameters'].get('properties') or {})}): "
                            f"{t['function']['description'].splitlines()[0] if t['function']['description'] else ''}"
                            for t in self.tools)  # fmt: skip
        note = (_TOOLS_NOTE + listing) if self.tools else ' Answer with JSON {{"message": ..., "stop": ...}}.'
        ins = {
            k: str(instructions.get(k) or "")
            for k in ("reason_for_call", "known_info", "unknown_info", "task_instructions")
        }
        self.system = _USER_SYSTEM.format(
            what=_WHAT.get(domain, domain), tools=note.replace("{{", "{").replace("}}", "}"), **ins
        )
        if self.tools:
            self.schema: dict = {"type": "object", "properties": {
                "message": {"type": ["string", "null"], "maxLength": 1500}, "stop": {"type": "boolean"},
                "tool_call": tool_call_schema(names, nullable=True)},
                "required": ["message", "stop", "tool_call"], "additionalProperties": False}  # fmt: skip
        else:
            self.schema = USER_SCHEMA
        self.item_prefix, self.max_tokens, self.max_turns = item_prefix, int(max_tokens), int(max_turns)
        self.name = f"llm:{backbone}"
        self.history: list[dict] = []
        self.usage: dict[str, float] = {}
        self.turns = 0

    def _call(self) -> dict:
        msgs = [{"role": "system", "content": self.system}, *self.history]
        call = self.gateway.call(self.backbone, f"{self.item_prefix}:user{len(self.history)}", msgs, schema=self.schema,
                                 schema_name="tau2_user_turn", params={"max_tokens": self.max_tokens, "temperature": 0})  # fmt: skip
        row: CallResult = self.gateway.run([call], run_id=self.run_id, desc=None)[0]
        for k, v in call_usage(row).items():
            self.usage[k] = self.usage.get(k, 0.0) + v
        parsed = row.get("parsed") if row.get("status") == "ok" else None
        if not isinstance(parsed, dict):
            raise RuntimeError(f"{self.item_prefix}: the user model gave no usable turn: "
                               f"{row.get('error') or row.get('parse_error') or row.get('status')}")  # fmt: skip
        self.history.append({"role": "assistant", "content": json.dumps(parsed)})
        return parsed

    def _turn(self, parsed: dict) -> UserTurn:
        tc = parsed.get("tool_call")
        if self.tools and isinstance(tc, dict) and tc.get("name"):
            args = tc.get("arguments")
            return UserTurn(
                message="",
                tool_calls=[ToolCall(str(tc["name"]), dict(args) if isinstance(args, dict) else {})],
            )
        text = str(parsed.get("message") or "").strip()
        if not text:
            raise RuntimeError(f"{self.item_prefix}: the user model gave neither a message nor a tool call")
        self.turns += 1
        stop = bool(parsed.get("stop")) or self.turns >= self.max_turns
        return UserTurn(message=text, stop=stop, observation=text)

    def respond(self, view: Any) -> UserTurn:
        self.history.append({"role": "user", "content": str(getattr(view, "agent_text", None) or "")})
        return self._turn(self._call())

    def tool_results(self, outcomes: list[ToolOutcome]) -> UserTurn:
        text = "\n".join(
            f"Tool result ({o.message.get('name')}): {o.message.get('content')}" for o in outcomes
        )
        self.history.append({"role": "user", "content": text})
        return self._turn(self._call())


def _segments(actions: Sequence[Mapping]) -> list[tuple[str, list[dict]]]:
    out: list[tuple[str, list[dict]]] = []
    for a in actions:
        role = str(a.get("requestor") or "assistant")
        if out and out[-1][0] == role:
            out[-1][1].append(dict(a))
        else:
            out.append((role, [dict(a)]))
    return out


class GoldAgent:
    """Known-answer oracle: the task's expected assistant actions, one tool call per step, in order;
    between them, a message asking the user for the user actions (naming each tool and its
    arguments); then the task's ``communicate_info`` and "anything else?" (or τ²-bench's transfer
    message after a ``transfer_to_human_agents`` call that is the last expected action)."""

    name = "gold (known-answer)"

    def __init__(self, actions: Sequence[Mapping], communicate_info: Sequence[str] = ()):
        self.actions = [dict(a) for a in actions]
        self.info = [str(x) for x in communicate_info]
        self.reset("")

    def reset(self, episode_id: str) -> None:
        self.segments = _segments(self.actions)
        self.queue: list[dict] = []
        self.last = ""
        self.k = 0

    def step(self, messages: list[dict], observation: Any) -> AgentStep:
        if self.last == "transfer_to_human_agents" and not self.queue and not self.segments:
            self.last = ""
            return AgentStep(message=TRANSFER_MESSAGE)
        if not self.queue and self.segments and self.segments[0][0] == "assistant":
            self.queue = self.segments.pop(0)[1]
        if self.queue:
            a = self.queue.pop(0)
            self.k += 1
            self.last = str(a["name"])
            return AgentStep(
                tool_calls=[ToolCall(self.last, dict(a.get("arguments") or {}), f"gold{self.k}")]
            )
        if self.segments:
            _, acts = self.segments.pop(0)
            asks = "; ".join(f"{a['name']}({json.dumps(a.get('arguments') or {})})" for a in acts)
            return AgentStep(message=f"Please do this on your side, in this order: {asks}.")
        close = (" ".join(self.info) + ". ") if self.info else ""
        return AgentStep(message=f"{close}Is there anything else I can help you with?")


class IdleAgent:
    """Known-answer floor: acts on nothing, declines politely."""

    name = "idle (does nothing)"

    def reset(self, episode_id: str) -> None:
        return None

    def step(self, messages: list[dict], observation: Any) -> AgentStep:
        return AgentStep(
            message="I'm sorry, I cannot help with that. Is there anything else I can help you with?"
        )
