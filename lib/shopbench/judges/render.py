"""The one trajectory renderer: a conversation → the text a judge reads.

Every judge that reads a trajectory (PADMÉ filter judges, seed 003 H.4; PADMÉ evaluators, H.5;
the shop verifier's rubric, refusal and tool-call judges, seed 002 §4.2-4.3) renders it here. The
renderer reads a conversation through :func:`steps`, a small duck-typed view that works on both
trajectory records the project has:

- an object with ``messages`` (or a plain list) of OpenAI chat messages (system / user /
  assistant with ``tool_calls`` / tool): PADMÉ's ``Rollout``;
- an object with ``turns`` whose items have ``index``, ``user.message``, ``events`` (each with
  ``call.name``, ``call.arguments``, ``result``), ``agent_message`` and ``agent_error``: the shop's
  ``Trajectory``.

A :class:`Step` is one entry: a message, or a tool result (carrying its call when the record
pairs them, as the shop's tool log does). :func:`render` walks the steps in one of three house
styles, each the exact text its judge has always been sent (the prompts, hence the cache keys, are
unchanged):

``"pair"`` (H.4 filter judges)
    ``User: …``, ``Assistant: …``, ``Assistant calls tool name({json})``, ``Tool result (name): …``,
    blank-line separated, tool text clipped to ``max_chars`` (default 2,000).
``"numbered"`` (H.5 evaluators)
    numbered customer and agent turns, ``Agent calls name(k=v)`` and ``Tool result -> …`` indented,
    whitespace collapsed, values cut (``max_chars`` 600 for results, ``max_args_chars`` 300).
``"turns"`` (seed 002 verifier)
    ``[turn i] CUSTOMER: …``, ``[turn i] TOOL name({json}) -> result`` (clipped to ``max_chars``,
    default 400), ``[turn i] ASSISTANT: …`` / ``ASSISTANT ERROR: …``.

System messages are never rendered (the policy/context slot of a prompt is the judge's business).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["STYLES", "Step", "ToolCallView", "clip_value", "cut", "render", "steps", "text_of"]


@dataclass(frozen=True)
class ToolCallView:
    """A tool call as recorded: the name and the arguments (a dict, a JSON string, or ``None``)."""

    name: Any
    arguments: Any = None


@dataclass(frozen=True)
class Step:
    """One entry of a conversation: ``role`` as recorded (``system``/``user``/``assistant``/``tool``),
    its text, an assistant's tool calls, a tool step's name, call (when paired) and raw result, the
    customer-message index it belongs to (``None`` before the first customer message) and an
    agent's crash message."""

    role: str | None
    text: str = ""
    calls: tuple[ToolCallView, ...] = ()
    name: str | None = None
    call: ToolCallView | None = None
    result: Any = None
    turn: int | None = None
    error: str | None = None


def text_of(content: Any) -> str:
    """A message's content as text (``None`` → empty; content parts joined by spaces)."""
    if content is None:
        return ""
    if isinstance(content, list):
        return " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _message_calls(m: dict) -> tuple[ToolCallView, ...]:
    out = []
    for c in m.get("tool_calls") or []:
        if isinstance(c, dict):
            fn: dict = c["function"] if isinstance(c.get("function"), dict) else c
            out.append(ToolCallView(fn.get("name"), fn.get("arguments")))
    return tuple(out)


def _from_messages(messages: Iterable[dict]) -> list[Step]:
    out: list[Step] = []
    turn = -1
    for m in messages:
        role = m.get("role")
        turn += role == "user"
        at = turn if turn >= 0 else None
        text = text_of(m.get("content"))
        if role == "assistant":
            out.append(Step("assistant", text, calls=_message_calls(m), turn=at))
        elif role == "tool":
            out.append(Step("tool", name=m.get("name"), result=text, turn=at))
        else:
            out.append(Step(role, text, turn=at))
    return out


def _from_turns(turns: Iterable[Any]) -> list[Step]:
    out: list[Step] = []
    for t in turns:
        out.append(Step("user", t.user.message, turn=t.index))
        for e in t.events:
            out.append(Step("tool", name=e.call.name, call=ToolCallView(e.call.name, e.call.arguments),
                            result=e.result, turn=t.index))  # fmt: skip
        out.append(Step("assistant", t.agent_message or "", turn=t.index, error=t.agent_error))
    return out


def steps(conversation: Any) -> list[Step]:
    """The steps of a conversation: a list of chat messages, an object with ``messages``, or an
    object with shop-style ``turns`` (see the module docstring)."""
    if isinstance(conversation, list | tuple):
        return _from_messages(conversation)
    if hasattr(conversation, "messages"):
        return _from_messages(conversation.messages)
    if hasattr(conversation, "turns"):
        return _from_turns(conversation.turns)
    raise TypeError(f"cannot render {type(conversation).__name__}: it has neither messages nor turns")


def clip_value(value: Any, n: int) -> str:
    """A value as text (non-strings as sorted-key JSON), cut to ``n`` characters with ``...``."""
    s = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return s if len(s) <= n else s[: n - 3] + "..."


# ---- "pair" (H.4) ----------------------------------------------------------------------------------
def _clip_note(s: str, n: int) -> str:
    return s if len(s) <= n else s[:n] + f" […{len(s) - n} more characters]"


def _pair_call(c: ToolCallView, n: int) -> str:
    args = "{}" if c.arguments is None else c.arguments
    args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return f"Assistant calls tool {c.name}({_clip_note(args, n)})"


def _pair(sts: Sequence[Step], max_chars: int = 2000) -> str:
    lines: list[str] = []
    for s in sts:
        if s.role == "user":
            lines.append(f"User: {s.text.strip()}")
        elif s.role == "assistant":
            if s.text.strip():
                lines.append(f"Assistant: {s.text.strip()}")
            lines += [_pair_call(c, max_chars) for c in s.calls]
        elif s.role == "tool":
            if s.call is not None:
                lines.append(_pair_call(s.call, max_chars))
            result = clip_value(s.result, 10**9).strip()
            lines.append(f"Tool result ({s.name or 'tool'}): {_clip_note(result, max_chars)}")
    return "\n\n".join(lines) if lines else "(empty trajectory)"


# ---- "numbered" (H.5) ------------------------------------------------------------------------------
def cut(text: str, limit: int) -> str:
    """``text`` with whitespace collapsed, cut to ``limit`` characters with a note of what is left out."""
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more chars]"


def _numbered_call(c: ToolCallView, limit: int) -> str:
    args = {} if c.arguments is None else c.arguments
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            pass
    if isinstance(args, dict):
        inner = ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False, separators=(',', ':'))}" for k, v in args.items()
        )
    else:
        inner = str(args)
    return f"{c.name or '?'}({cut(inner, limit)})"


def _numbered(
    sts: Sequence[Step], max_chars: int = 600, max_args_chars: int = 300, where: str = "trajectory"
) -> str:
    lines: list[str] = []
    turn = 0
    for s in sts:
        if s.role == "system":
            continue
        if s.role == "user":
            turn += 1
            lines.append(f"[{turn}] Customer: {s.text.strip()}")
        elif s.role == "assistant":
            turn += 1
            text, calls = s.text.strip(), [_numbered_call(c, max_args_chars) for c in s.calls]
            if text or not calls:
                lines.append(f"[{turn}] Agent: {text}".rstrip())
                lines += [f"    Agent calls {c}" for c in calls]
            else:
                lines.append(f"[{turn}] Agent calls {calls[0]}")
                lines += [f"    Agent calls {c}" for c in calls[1:]]
        elif s.role == "tool":
            if s.call is not None:
                lines.append(f"    Agent calls {_numbered_call(s.call, max_args_chars)}")
            lines.append(f"    Tool result -> {cut(clip_value(s.result, 10**9), max_chars)}")
        else:
            raise ValueError(f"{where}: message with unknown role {s.role!r}")
    return "\n".join(lines)


# ---- "turns" (seed 002) ----------------------------------------------------------------------------
def _turns(sts: Sequence[Step], max_chars: int = 400, tools: bool = True) -> str:
    out: list[str] = []
    for s in sts:
        if s.role == "user":
            out.append(f"[turn {s.turn}] CUSTOMER: {s.text}")
        elif s.role == "tool" and tools:
            c = s.call or ToolCallView(s.name, {})
            args = json.dumps(c.arguments, sort_keys=True, ensure_ascii=False)
            out.append(f"[turn {s.turn}] TOOL {c.name}({args}) -> {clip_value(s.result, max_chars)}")
        elif s.role == "assistant":
            if s.text:
                out.append(f"[turn {s.turn}] ASSISTANT: {s.text}")
            elif s.error:
                out.append(f"[turn {s.turn}] ASSISTANT ERROR: {s.error}")
    return "\n".join(out)


STYLES: dict[str, Callable[..., str]] = {"pair": _pair, "numbered": _numbered, "turns": _turns}


def render(
    conversation: Any, style: str, *, only: Callable[[Step], bool] | None = None, **options: Any
) -> str:
    """The conversation as text in one of :data:`STYLES` (see the module docstring); ``only`` keeps
    the steps it accepts; ``options`` are the style's limits (``max_chars``, ``max_args_chars``,
    ``tools``, ``where``)."""
    if style not in STYLES:
        raise ValueError(f"unknown render style {style!r}; known: {', '.join(STYLES)}")
    sts = steps(conversation)
    if only is not None:
        sts = [s for s in sts if only(s)]
    return STYLES[style](sts, **options)
