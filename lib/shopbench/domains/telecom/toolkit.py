"""What the two telecom toolkits share (issue 28 item 1): a tool's spec built as τ²-bench builds it
from the method (``Tool.openai_schema``: the docstring's first line is the short description, the
rest before the first section the long one, joined by a blank line; an ``Args:`` entry is the
parameter's description; pydantic's JSON schema of a model named ``parameters`` over the
signature), and a call turned into the tool message as τ²-bench's ``Environment.get_response``
does (any exception is ``"Error: <exception>"``; a result is ``to_json_str``: ``model_dump`` of a
record, ``str`` of a number, ``json.dumps(..., default=str)`` of the whole).
"""

from __future__ import annotations

import datetime
import inspect
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, Field, create_model

__all__ = ["WRITE", "call_tool", "is_tool", "tool_names", "tool_spec", "to_json_str"]

WRITE = "write"
_SECTION = re.compile(
    r"^(Args|Arguments|Returns|Return|Raises|Yields|Example|Examples|Attributes|Note):\s*$", re.M
)


def is_tool(kind: str = "read") -> Callable[[Callable], Callable]:
    """Mark a method as a tool the role is given (``kind``: read, write or generic, as τ²-bench's
    ``ToolType``; only write tools change state, so only they are replayed by the reward)."""

    def deco(fn: Callable) -> Callable:
        fn.__tool_kind__ = kind  # type: ignore[attr-defined]
        return fn

    return deco


def tool_names(cls: type) -> tuple[str, ...]:
    """The tools of a toolkit class, in definition order."""
    return tuple(n for n, f in vars(cls).items() if callable(f) and hasattr(f, "__tool_kind__"))


def _parse_doc(doc: str | None) -> tuple[str, str, dict[str, str]]:
    text = inspect.cleandoc(doc or "")
    m = _SECTION.search(text)
    desc, meta = (text[: m.start()], text[m.start() :]) if m else (text, "")
    short, _, long = desc.partition("\n")
    args: dict[str, str] = {}
    am = re.search(r"^(?:Args|Arguments):\s*\n((?:[ \t]+.*\n?|\s*\n)*)", meta, re.M)
    if am:
        cur = None
        for line in inspect.cleandoc(am.group(1)).splitlines():
            pm = re.match(r"^(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
            if pm and not line.startswith((" ", "\t")):
                cur = pm.group(1)
                args[cur] = pm.group(2)
            elif cur and line.strip():
                args[cur] += "\n" + line.strip()
    return short.strip(), long.strip(), args


def tool_spec(cls: type, name: str) -> dict:
    """The spec the role's model is given for one tool (module docstring)."""
    fn = getattr(cls, name)
    short, long, arg_docs = _parse_doc(fn.__doc__)
    sig = inspect.signature(fn, eval_str=True)
    params: dict[str, Any] = {}
    for pname, p in list(sig.parameters.items())[1:]:
        default = ... if p.default is p.empty else p.default
        if pname in arg_docs:
            default = Field(default, description=arg_docs[pname])
        params[pname] = (Any if p.annotation is p.empty else p.annotation, default)
    model = create_model("parameters", **params)  # type: ignore[call-overload]
    desc = name if not short else (short + ("\n\n" + long if long else ""))
    return {"type": "function", "function": {"name": name, "description": desc,
                                             "parameters": model.model_json_schema()}}  # fmt: skip


def to_json_str(resp: Any) -> str:
    """τ²-bench's ``Environment.to_json_str``."""

    def proc(r: Any) -> Any:
        if isinstance(r, BaseModel):
            return r.model_dump()
        if isinstance(r, str) or r is None:
            return r
        if isinstance(r, int | float | bool):
            return str(r)
        if isinstance(r, list):
            return [proc(x) for x in r]
        if isinstance(r, tuple):
            return tuple(proc(x) for x in r)
        if isinstance(r, dict):
            return {k: proc(v) for k, v in r.items()}
        if isinstance(r, datetime.datetime | datetime.date):
            return r.isoformat()
        raise ValueError(f"Unsupported type: {type(r)}")

    return resp if isinstance(resp, str) else json.dumps(proc(resp), default=str)


def call_tool(kit: Any, names: tuple[str, ...], name: str, arguments: Any) -> tuple[bool, str]:
    """One tool call as τ²-bench's ``get_response`` answers it: ``(ok, content)``, never raising."""
    try:
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise TypeError("tau2.environment.environment.Environment.make_tool_call() argument after ** must be "
                            f"a mapping, not {type(arguments).__name__}")  # fmt: skip
        if "requestor" in arguments:
            raise TypeError("tau2.environment.environment.Environment.make_tool_call() got multiple values for "
                            "keyword argument 'requestor'")  # fmt: skip
        if name not in names:
            raise ValueError(f"Tool '{name}' not found.")
        res = getattr(kit, name)(**dict(arguments))
    except Exception as e:  # noqa: BLE001 - τ²-bench turns every exception into the tool's error text
        return False, f"Error: {e}"
    return True, to_json_str(res)
