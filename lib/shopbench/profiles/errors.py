"""Pydantic's validation errors as one :class:`~shopbench.errors.ParamError` a user can act on.

The message names the file, the key path (``gateway.concurrency.openai``, ``padme.sources[1].path``),
what is wrong and the fix; an unknown key gets the closest allowed key ("did you mean", difflib).
"""

from __future__ import annotations

import difflib
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import ParamError

RENAMED = {"n_resamples": "n_boot"}
"""Keys that were renamed: the old name always suggests the new one."""


def param_error(file: str | Path | None, keypath: str, problem: str, fix: str | None = None,
                where: str | None = None) -> ParamError:  # fmt: skip
    """``<file>[, line N]: key '<keypath>': <problem>. Fix: <fix>``."""
    err = ParamError(f"key '{keypath}': {problem}" if keypath else problem, file=file, where=where, fix=fix)
    err.field = keypath or None
    return err


def from_validation(err: ValidationError, root: Any, file: str | Path | None,
                    lines: dict[str, int] | None = None, prefix: str = "") -> ParamError:  # fmt: skip
    """The first error of ``err`` (validating ``root``, found at key path ``prefix``) as a ParamError;
    the count of further errors is appended."""
    errors = err.errors(include_url=False)
    e = errors[0]
    keypath, parent = _walk(root, tuple(e["loc"]))
    keypath = ".".join(p for p in (prefix, keypath) if p).replace(".[", "[")
    problem, fix = _explain(e, keypath, parent)
    if len(errors) > 1:
        fix = f"{fix} ({len(errors) - 1} more problem{'s' if len(errors) > 2 else ''} after this one)"
    line = (lines or {}).get(keypath) or (lines or {}).get(keypath.rsplit(".", 1)[0])
    return param_error(file, keypath, problem, fix, where=f"line {line}" if line else None)


def _explain(e: Any, keypath: str, parent: Any) -> tuple[str, str]:
    kind, value, ctx = e["type"], e.get("input"), e.get("ctx") or {}
    if kind == "extra_forbidden":
        return "unknown key", _suggest(keypath.rsplit(".", 1)[-1], _allowed_keys(parent))
    if kind == "missing":
        return "missing (this entry needs it)", "add the key"
    got = f"got {_show(value)}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return (
            f"must be a whole number, {got}",
            "write a number such as 3 without quotes (true/false are not numbers)",
        )
    if kind in ("float_type", "float_parsing"):
        return f"must be a number, {got}", "write a number such as 0.5 without quotes"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false, {got}", "write true or false"
    if kind in ("string_type",):
        return f"must be text, {got}", "write a name or a path (quote it if YAML reads it as a number)"
    if kind in ("list_type", "tuple_type"):
        return f"must be a list, {got}", "write a list such as [a, b]"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"must be a mapping of keys, {got}", "indent the keys under this one, or write {key: value}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        op = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}[
            kind
        ]
        bound = next(iter(ctx.values()), "")
        return f"must be {op} {bound}, {got}", f"use a value {op} {bound}"
    if kind == "too_short":
        return f"must not be empty, {got}", "give a non-empty value"
    if kind == "literal_error":
        options = ctx.get("expected", "")
        allowed = [o.strip().strip("'") for o in str(options).replace(" or ", ",").split(",") if o.strip()]
        return f"must be one of {options}, {got}", _suggest(str(value), allowed)
    if kind == "union_tag_invalid" or kind == "union_tag_not_found":
        return f"has an unexpected form, {got}", "see the section's documentation in docs/DESIGN.md"
    if kind == "value_error":  # the model's own checks word their message "problem; fix"
        problem, _, fix = str(ctx.get("error") or e["msg"]).partition("; ")
        return problem, fix or "fix the value"
    return f"{e['msg']}, {got}", "fix the value"


def _suggest(key: str, allowed: list[str]) -> str:
    if key in RENAMED and RENAMED[key] in allowed:
        return f"did you mean '{RENAMED[key]}'? ('{key}' was renamed)"
    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    return f"allowed keys here: {', '.join(allowed)}" if allowed else "remove the key"


def _show(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _allowed_keys(model: Any) -> list[str]:
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [info.alias or name for name, info in model.model_fields.items()]
    return []


def _walk(root: Any, loc: tuple) -> tuple[str, Any]:
    """The YAML key path of a pydantic ``loc`` and the model that holds its last key.

    Union member tags in ``loc`` (``"entry"``, ``"str"``, a model's name) are consumed, not printed."""
    t: Any = root
    parent: Any = root
    path = ""
    for part in loc:
        t = _unwrap(t)
        members = _union_members(t)
        if members is not None and isinstance(part, str) and part in members:
            t = members[part]
            continue
        if isinstance(part, int):
            path += f"[{part}]"
            t = _item_type(t)
            continue
        path = f"{path}.{part}" if path else str(part)
        parent = t
        t = _field_type(t, str(part))
    return path, parent


def _unwrap(t: Any) -> Any:
    while typing.get_origin(t) is typing.Annotated:
        t = typing.get_args(t)[0]
    args = [a for a in typing.get_args(t) if a is not type(None)] if _is_union(t) else None
    if args is not None and len(args) == 1:
        return _unwrap(args[0])
    return t


def _is_union(t: Any) -> bool:
    return typing.get_origin(t) in (typing.Union, types.UnionType)


def _union_members(t: Any) -> dict[str, Any] | None:
    if not _is_union(t):
        return None
    out: dict[str, Any] = {}
    for member in typing.get_args(t):
        inner = member
        if typing.get_origin(member) is typing.Annotated:
            inner, *meta = typing.get_args(member)
            for m in meta:
                tag = getattr(m, "tag", None)
                if isinstance(tag, str):
                    out[tag] = inner
        label = getattr(_unwrap(inner), "__name__", None)  # untagged unions: pydantic labels members by type
        if label:
            out.setdefault(label, inner)
    return out


def _item_type(t: Any) -> Any:
    args = typing.get_args(t)
    return args[0] if typing.get_origin(t) in (list, tuple) and args else Any


def _field_type(t: Any, key: str) -> Any:
    if isinstance(t, type) and issubclass(t, BaseModel):
        for name, info in t.model_fields.items():
            if key in (name, info.alias):
                return info.annotation
        return Any
    if typing.get_origin(t) is dict:
        return typing.get_args(t)[1]
    return Any
