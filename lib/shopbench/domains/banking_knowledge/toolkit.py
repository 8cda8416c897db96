"""The toolkit machinery of the banking_knowledge domain (issue 28 item 1), as τ²-bench's
``src/tau2/environment/toolkit.py`` (MIT) defines it: a tool is a method marked ``@is_tool``
(``ToolType`` and whether it changes the state: WRITE does unless told otherwise); a
*discoverable* tool (``@is_discoverable_tool``) exists but is not in the tool list the model is
given: the agent unlocks it through ``unlock_discoverable_agent_tool`` once the knowledge base
names it, or gives it to the user (``give_discoverable_user_tool``).

:func:`tool_spec` builds the OpenAI function spec a model sees as τ²-bench's ``Tool.openai_schema``
does: the description is the docstring's short description, then "\\n\\n" and the long one when
there is one (``Returns:`` and ``Args:`` are not part of it); each parameter is typed from the
annotation and described by its ``Args:`` entry (pydantic's JSON schema of a model named
``parameters``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from enum import Enum
from typing import Any

from pydantic import Field, create_model

__all__ = ["DISCOVERABLE_ATTR", "MUTATES_STATE_ATTR", "TOOL_ATTR", "ToolKitBase", "ToolType", "is_discoverable_tool",
           "is_tool", "parse_docstring", "tool_spec"]  # fmt: skip

TOOL_ATTR = "__tool__"
TOOL_TYPE_ATTR = "__tool_type__"
MUTATES_STATE_ATTR = "__mutates_state__"
DISCOVERABLE_ATTR = "__discoverable__"


class ToolType(str, Enum):  # noqa: UP042 - τ²-bench's str-valued enum
    READ = "read"
    WRITE = "write"
    THINK = "think"
    GENERIC = "generic"


def _mark(func: Callable, tool_type: ToolType, mutates_state: bool | None, discoverable: bool) -> Callable:
    setattr(func, TOOL_ATTR, True)
    setattr(func, TOOL_TYPE_ATTR, tool_type)
    setattr(func, MUTATES_STATE_ATTR, tool_type == ToolType.WRITE if mutates_state is None else mutates_state)
    if discoverable:
        setattr(func, DISCOVERABLE_ATTR, True)
    return func


def is_tool(tool_type: ToolType = ToolType.READ, mutates_state: bool | None = None) -> Callable:
    return lambda func: _mark(func, tool_type, mutates_state, False)


def is_discoverable_tool(tool_type: ToolType = ToolType.READ, mutates_state: bool | None = None) -> Callable:
    return lambda func: _mark(func, tool_type, mutates_state, True)


class ToolKitBase:
    """The tools of a class (and its bases) by name; discoverable ones apart."""

    def __init__(self, db: Any = None):
        self.db = db

    @classmethod
    def _tool_names(cls) -> list[str]:
        names: dict[str, None] = {}
        for klass in reversed(cls.__mro__):
            for name, attr in vars(klass).items():
                if callable(attr) and getattr(attr, TOOL_ATTR, False):
                    names[name] = None
        return list(names)

    @property
    def tools(self) -> dict[str, Callable]:
        return {n: getattr(self, n) for n in self._tool_names()}

    @classmethod
    def tool_names(cls) -> list[str]:
        """The tools a model is given (not the discoverable ones), in definition order."""
        return [n for n in cls._tool_names() if not getattr(getattr(cls, n), DISCOVERABLE_ATTR, False)]

    @classmethod
    def discoverable_names(cls) -> list[str]:
        return [n for n in cls._tool_names() if getattr(getattr(cls, n), DISCOVERABLE_ATTR, False)]

    def get_discoverable_tools(self) -> dict[str, Callable]:
        return {n: getattr(self, n) for n in self.discoverable_names()}

    def has_discoverable_tool(self, tool_name: str) -> bool:
        return tool_name in self.discoverable_names()

    def has_tool(self, tool_name: str) -> bool:
        return tool_name in self._tool_names()

    def mutates(self, tool_name: str) -> bool:
        return bool(getattr(getattr(type(self), tool_name), MUTATES_STATE_ATTR, True))


_SECTION = re.compile(r"^\s*(Args|Arguments|Returns|Raises|Yields|Example|Examples):\s*$")


def parse_docstring(func: Callable) -> tuple[str, str, dict[str, str]]:
    """(short description, long description, {param: description}) of a Google-style docstring."""
    doc = inspect.getdoc(func) or ""
    lines = doc.splitlines()
    body: list[str] = []
    args: dict[str, str] = {}
    section = None
    current = None
    for line in lines:
        m = _SECTION.match(line)
        if m:
            section = m.group(1)
            continue
        if section in ("Args", "Arguments"):
            am = re.match(r"^\s{2,}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line)
            if am and (current is None or len(line) - len(line.lstrip()) <= 8):
                current = am.group(1)
                args[current] = am.group(2).strip()
            elif current and line.strip():
                args[current] = (args[current] + " " + line.strip()).strip()
        elif section is None:
            body.append(line)
    text = "\n".join(body).strip()
    parts = re.split(r"\n\s*\n", text, maxsplit=1)
    short = parts[0].strip()
    long = parts[1].strip() if len(parts) > 1 else ""
    return short, long, args


def tool_spec(func: Callable, name: str | None = None) -> dict:
    """The OpenAI function spec of one tool method (module docstring)."""
    short, long, arg_docs = parse_docstring(func)
    sig = inspect.signature(func, eval_str=True)
    params: dict[str, Any] = {}
    for pname, p in sig.parameters.items():
        if pname == "self":
            continue
        ann = p.annotation if p.annotation is not inspect.Parameter.empty else Any
        default = ... if p.default is inspect.Parameter.empty else p.default
        params[pname] = (ann, Field(default, description=arg_docs.get(pname)))
    model = create_model("parameters", **params)
    return {"type": "function", "function": {"name": name or func.__name__,
                                             "description": short + ("\n\n" + long if long else ""),
                                             "parameters": model.model_json_schema()}}  # fmt: skip
