"""The τ²-retail user simulators: :class:`ScriptedRetailUser`, a rule-based user following
``user_scenario.instructions``: it opens with the reason for the call (in the first person, without
the lines addressed to the simulator about the agent), answers identification questions from
``known_info``, says it does not know what ``unknown_info`` says it does not know (it never
produces an email, order id or user id that is not written in its instructions), confirms when
asked to confirm, and ends with a thanks. :class:`LLMRetailUser` plays the user with a gateway
model instead (τ²-bench's user-simulator role). Both answer ``reply(agent_text, final) -> (message,
stop)`` and, for the orchestrator, ``respond(view) -> UserTurn``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from ...env.protocols import UserTurn
from ...llm.result import CallResult, call_usage
from .environment import TRANSFER_MESSAGE, RetailUserView
from .text import _EMAIL, _ORDER_ID, _SENTENCE, _user_sentences, first_person

__all__ = ["USER_SCHEMA", "USER_SYSTEM", "LLMRetailUser", "ScriptedRetailUser"]

_ASK_EMAIL = re.compile(r"\be-?mail\b", re.I)
_ASK_NAME_ZIP = re.compile(r"\b(name|zip|postal)\b", re.I)
_ASK_IDENTITY = re.compile(r"\bzip\b|\bpostal\b|\b(first|last|full|your) name\b", re.I)
_ASK_ORDER = re.compile(r"\border (id|number|#)|\bwhich order\b", re.I)
_ASK_PAYMENT = re.compile(r"\b(payment method|which card|pay with|refund (it |the money )?to|gift card or|"
                          r"credit card or|paypal or)\b", re.I)  # fmt: skip
_ASK_CONFIRM = re.compile(r"\(yes/no\)|\b(confirm|proceed|go ahead)\b", re.I)
_ASK_PERMISSION = re.compile(r"\b(shall i|should i|would you like me to|do you want me to)\b", re.I)
_ANYTHING_ELSE = re.compile(r"\banything else\b|\bany other\b|\bsomething else\b", re.I)
_PAY_WORDS = re.compile(r"\b(gift card|credit card|paypal|payment|refund)\b", re.I)


class _RetailUser:
    """The one user protocol over ``reply(agent_text, final) -> (message, stop)``."""

    def reply(self, agent_text: str | None, final: bool = False) -> tuple[str, bool]:
        raise NotImplementedError

    def respond(self, view: RetailUserView) -> UserTurn:
        text, stop = self.reply(view.agent_text, final=view.final)
        return UserTurn(message=text, stop=stop, observation=text)


class ScriptedRetailUser(_RetailUser):
    """The rule-based user of one task (see the module docstring). ``reply(agent_text, final)``
    returns ``(message, stop)``; the first call (to the agent's greeting) returns the opening.
    ``rng`` varies wording only."""

    name = "scripted"

    def __init__(self, instructions: Mapping[str, Any], rng: random.Random, max_turns: int = 20):
        self.ins = {k: str(instructions.get(k) or "").strip() for k in
                    ("reason_for_call", "known_info", "unknown_info", "task_instructions")}  # fmt: skip
        if self.ins["unknown_info"] in ("None", "."):
            self.ins["unknown_info"] = ""
        self.rng = rng
        self.max_turns = max_turns
        self.turns = 0
        self.confirmed = 0
        own = " ".join(self.ins[k] for k in ("reason_for_call", "known_info", "task_instructions"))
        self.emails = _EMAIL.findall(self.ins["known_info"])
        self.orders = _ORDER_ID.findall(own)

    def _pick(self, *options: str) -> str:
        return self.rng.choice(options)

    def opening(self) -> str:
        body = first_person(" ".join(_user_sentences(self.ins["reason_for_call"])))
        return f"{self._pick('Hi!', 'Hello,', 'Hi there.')} {body}"

    def _unknown_sentence(self, topic: str) -> str:
        """The ``unknown_info`` sentence about ``topic`` (a regex), in the first person."""
        for s in _SENTENCE.split(self.ins["unknown_info"]):
            if re.search(topic, s, re.I) and "agent" not in s.lower():
                return first_person(s).rstrip(".") + "."
        return ""

    def _identity(self, text: str) -> str:
        known = first_person(self.ins["known_info"]).rstrip(".") + "."
        if _ASK_EMAIL.search(text) and self.emails:
            return f"Sure, my email is {self.emails[0]}."
        if _ASK_EMAIL.search(text) and not _ASK_NAME_ZIP.search(text):
            dunno = self._unknown_sentence(r"\bemail") or "I don't remember my email address."
            return f"{dunno} {known}"
        if _ASK_EMAIL.search(text):
            dunno = self._unknown_sentence(r"\bemail") or "I'd rather use my name and zip code."
            return f"{dunno} {known}"
        return known

    def _order(self) -> str:
        if self.orders:
            return f"It's {' and '.join(dict.fromkeys(self.orders))}."
        return self._unknown_sentence(r"\border (number|id)") or "I don't know the order number, sorry."

    def _payment(self) -> str:
        """What the instructions say about paying: a line addressed to the simulator ("If the agent
        asks for payment method [...], say ...") gives its answer; else the first sentence of the user's
        own request that mentions a payment method."""
        for k in ("reason_for_call", "task_instructions", "unknown_info", "known_info"):
            for s in _SENTENCE.split(self.ins[k]):
                said = re.search(r"\bagent asks[^,]*\bpayment[^,]*,\s*say\s+(.+)", s, re.I)
                if said:
                    return first_person(said.group(1)).rstrip(".") + "."
        for k in ("reason_for_call", "task_instructions"):
            for s in _SENTENCE.split(self.ins[k]):
                if _PAY_WORDS.search(s) and "agent" not in s.lower():
                    return first_person(s)
        return "Please use the original payment method."

    def _yes(self) -> str:
        self.confirmed += 1
        return self._pick("Yes, please go ahead.", "Yes, that's right. Please proceed.", "Yes.")

    def reply(self, agent_text: str | None, final: bool = False) -> tuple[str, bool]:
        self.turns += 1
        if self.turns == 1:
            return self.opening(), False
        text = str(agent_text or "")
        if TRANSFER_MESSAGE.lower() in text.lower():
            return "Okay, I'll hold.", True
        if final or self.turns > self.max_turns:
            return self._pick("Okay. Thanks, bye.", "Alright, thank you.", "Thanks, that's all."), True
        q = " ".join(
            u for u in re.split(r"(?<=[.!?])\s+|\n", text) if u.rstrip().endswith("?") or "(yes/no)" in u
        )
        if q and (_ASK_EMAIL.search(q) or _ASK_IDENTITY.search(q)):
            return self._identity(q), False
        if q and _ASK_ORDER.search(q):
            return self._order(), False
        if q and _ASK_CONFIRM.search(q):
            return self._yes(), False
        if q and _ASK_PAYMENT.search(q):
            return self._payment(), False
        if q and _ASK_PERMISSION.search(q):
            return self._yes(), False
        if q and _ANYTHING_ELSE.search(q):
            return self._pick(
                "No, that's all. Thank you!", "No, that's everything. Thanks for your help!"
            ), True
        if q:
            return "As I said: " + first_person(_user_sentences(self.ins["reason_for_call"])[0]), False
        return self._pick("Okay.", "Alright.", "I see."), False


USER_SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string", "maxLength": 1500}, "stop": {"type": "boolean"}},
    "required": ["message", "stop"],
    "additionalProperties": False,
}
USER_SYSTEM = (
    "You are playing a customer contacting an online retail store's customer service agent. Follow the "
    "instructions below; they describe who you are and what you want. Reveal information only when it is "
    "needed, one piece at a time; never make up names, emails, ids or addresses you were not given; if asked "
    "for something your instructions say you do not know, say you do not know it. When your goal is done or "
    'cannot be done, thank the agent and set stop to true. Answer with JSON {{"message": ..., "stop": ...}}.'
    "\n\n# Instructions\nReason for the call: {reason_for_call}\nWhat you know: {known_info}\n"
    "What you do not know: {unknown_info}\nHow to behave: {task_instructions}"
)


class LLMRetailUser(_RetailUser):
    """The user played by a gateway model (τ²-bench's user-simulator role), one structured call per
    turn: ``{"message", "stop"}``; the transcript is shown with the roles flipped."""

    def __init__(self, gateway, backbone: str, instructions: Mapping[str, Any], run_id: str, item_prefix: str,
                 max_tokens: int = 400, max_turns: int = 20):  # fmt: skip
        self.gateway, self.backbone, self.run_id = gateway, backbone, run_id
        self.system = USER_SYSTEM.format(
            **{
                k: str(instructions.get(k) or "")
                for k in ("reason_for_call", "known_info", "unknown_info", "task_instructions")
            }
        )
        self.item_prefix, self.max_tokens, self.max_turns = item_prefix, int(max_tokens), int(max_turns)
        self.name = f"llm:{backbone}"
        self.history: list[dict] = []
        self.usage: dict[str, float] = {}

    def reply(self, agent_text: str | None, final: bool = False) -> tuple[str, bool]:
        self.history.append({"role": "user", "content": str(agent_text or "")})
        msgs = [{"role": "system", "content": self.system}, *self.history]
        call = self.gateway.call(self.backbone, f"{self.item_prefix}:user{len(self.history)}", msgs, schema=USER_SCHEMA,
                                 schema_name="tau2_user_turn", params={"max_tokens": self.max_tokens, "temperature": 0})  # fmt: skip
        row: CallResult = self.gateway.run([call], run_id=self.run_id, desc=None)[0]
        for k, v in call_usage(row).items():
            self.usage[k] = self.usage.get(k, 0.0) + v
        parsed = row.get("parsed") if row.get("status") == "ok" else None
        if not isinstance(parsed, dict) or not str(parsed.get("message") or "").strip():
            raise RuntimeError(f"{self.item_prefix}: the user model gave no usable turn: "
                               f"{row.get('error') or row.get('parse_error') or row.get('status')}")  # fmt: skip
        text = str(parsed["message"]).strip()
        self.history.append({"role": "assistant", "content": text})
        return text, bool(parsed.get("stop")) or len(self.history) // 2 >= self.max_turns
