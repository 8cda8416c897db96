"""Conversation types shared by every environment and every consumer of trajectories: a tool call,
a message (one turn of the transcript) and the trajectory (seed 002 §3.4, seed 003 §3.1).

One :class:`Trajectory` holds a conversation from any source: a shop trial, a τ²-retail rollout, a
recorded tau-bench conversation. Its ``messages`` are OpenAI-format chat messages (system / user /
assistant with optional ``tool_calls`` / tool), the wire format every model call and every stored
file already uses, kept byte for byte; :attr:`Trajectory.turns` reads them as typed
:class:`Message` turns (role, text, tool calls, tool result) for renderers and judges.

All core types are pydantic: the documents (products, personas, records) are ``BaseModel``s, these
conversation values are pydantic dataclasses (positional construction, ``dataclasses.replace`` and
``asdict`` keep working, fields are validated on construction).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, field, fields
from typing import Any, Literal

from pydantic.dataclasses import dataclass

Role = Literal["system", "user", "assistant", "tool"]

__all__ = [
    "Message",
    "Role",
    "ToolCall",
    "Trajectory",
    "from_fields",
    "merge_same_role",
    "message_turns",
    "tool_call_schema",
]


def from_fields(cls, d: Mapping[str, Any]):
    """``cls(**d)`` with the keys ``cls`` does not have dropped (old files carry extra keys)."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in d.items() if k in names})


@dataclass(frozen=True)
class ToolCall:
    """One tool call as issued (or as expected by a user simulator): name plus JSON arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str = ""

    def signature(self) -> str:
        return f"{self.name}:{json.dumps(self.arguments, sort_keys=True)}"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolCall:
        return from_fields(cls, d)

    def to_openai(self) -> dict:
        """The OpenAI ``tool_calls`` entry (arguments as sorted-key JSON text)."""
        return {"id": self.call_id, "type": "function",
                "function": {"name": self.name, "arguments": json.dumps(self.arguments, sort_keys=True)}}  # fmt: skip


def tool_call_schema(names: Sequence[str], *, nullable: bool = False) -> dict[str, Any]:
    """The JSON schema of one tool call in a JSON-mode agent's answer: ``{"name": <one of names>,
    "arguments": {...}}``, nothing else (``nullable``: the value may also be ``null``, no call)."""
    return {
        "type": ["object", "null"] if nullable else "object",
        "properties": {"name": {"type": "string", "enum": list(names)}, "arguments": {"type": "object"}},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class Message:
    """One turn of a transcript: ``role``, ``text`` (None when an assistant turn only calls tools),
    ``tool_calls`` (assistant turns) and, for a tool turn, ``tool_call_id``, ``name`` and the result
    text in ``text``."""

    role: str
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    @property
    def tool_result(self) -> str | None:
        """The tool's result text on a ``tool`` turn, else None."""
        return self.text if self.role == "tool" else None

    @classmethod
    def from_openai(cls, m: Mapping[str, Any]) -> Message:
        calls = []
        for i, tc in enumerate(m.get("tool_calls") or []):
            fn = tc.get("function") or {}
            raw = fn.get("arguments")
            try:
                args = json.loads(raw) if isinstance(raw, str) else dict(raw or {})
            except (json.JSONDecodeError, TypeError, ValueError):
                args = {"_unparsable_arguments": str(raw)[:200]}
            calls.append(ToolCall(str(fn.get("name")), args if isinstance(args, dict) else {},
                                  str(tc.get("id") or f"c{i}")))  # fmt: skip
        content = m.get("content")
        return cls(role=str(m.get("role")), text=None if content is None else str(content),
                   tool_calls=tuple(calls), tool_call_id=m.get("tool_call_id"), name=m.get("name"))  # fmt: skip


def merge_same_role(messages: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Text messages with each run of one role joined into one message (contents joined by a blank
    line), for models whose chat template wants the roles to alternate (the JSON-mode agents)."""
    merged: list[dict] = []
    for m in messages:
        if merged and merged[-1]["role"] == m["role"]:
            merged[-1] = {"role": m["role"], "content": f"{merged[-1]['content']}\n\n{m['content']}"}
        else:
            merged.append(dict(m))
    return merged


def message_turns(messages: Sequence[Mapping[str, Any]]) -> tuple[Message, ...]:
    """OpenAI-format messages as typed turns."""
    return tuple(Message.from_openai(m) for m in messages)


@dataclass
class Trajectory:
    """One conversation x: the complete record of a user-agent session (seed 003 §3.1: "x^ℓ ~
    Roll(t, s_{c,t,ℓ}; θ)"), whatever produced it.

    ``messages`` are OpenAI-format chat messages; the system message holds the agent's prompt (with
    the PADMÉ H.3 wrapper when steered). ``reward`` is the environment's reward when it has one (the
    shop's exact-cart success, τ²-bench's action reward, a recorded file's reward). The PADMÉ labels
    (``criterion``, ``level``, ``steering``, ``attempt``) are empty for trajectories no steering
    produced; ``meta`` holds the domain's record (termination reason, reward breakdown, ...)."""

    rollout_id: str
    task_id: str
    domain: str
    source: str
    criterion: str
    level: str  # bad | ok | good (a recorded trajectory: its outcome)
    steering: str  # the instruction s_{c,t,ℓ} (empty when nothing steered the agent)
    agent_model: str
    user_model: str
    seed: int
    attempt: int
    messages: list[dict]
    reward: float | None = None
    usage: dict[str, float] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def trajectory_id(self) -> str:
        return self.rollout_id

    @property
    def termination(self) -> str | None:
        """Why the conversation ended (the domain's vocabulary), when the source recorded it."""
        return self.meta.get("termination")

    @property
    def turns(self) -> tuple[Message, ...]:
        """The transcript as typed turns (role, text, tool calls, tool result)."""
        return message_turns(self.messages)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trajectory:
        return from_fields(cls, d)
