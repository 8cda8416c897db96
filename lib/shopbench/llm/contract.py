"""Structured-output contracts: a JSON schema per call; parse or record why not.

Design rule (DESIGN.md, "Parse failures are data"): an output that breaks its contract is a parse
failure with a reason, never coerced. A confidence of 100 against a [0, 1] contract fails; a
string "0.5" where a number is required fails; a truncated answer fails.

The text is read with :func:`shopbench.strictjson.loads`: ``NaN``/``Infinity``, a repeated key
(which ``json`` would resolve silently, last value winning), a lone surrogate, too much text, too
deep nesting or a number with too many digits is a parse failure. Numeric bounds are checked a
second time on the number as written (``5.0000000000000001`` is above a maximum of 5 even though
it reads as the float 5.0), and a non-zero number that reads as 0.0 (``1e-400``) fails. Nothing
escapes :func:`parse_output`: whatever ``raw`` holds, the answer is a :class:`Parsed`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from .. import strictjson

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*?)\n?```\s*$", re.S)
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


@dataclass(frozen=True)
class Parsed:
    ok: bool
    value: Any = None
    error: str | None = None


def response_format(schema: dict, name: str = "output") -> dict:
    """The OpenAI/litellm ``response_format`` for a JSON-schema contract."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def check_schema(schema: dict) -> None:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as e:
        raise ValueError(f"invalid output contract (JSON schema): {e.message}") from None


def parse_output(raw: Any, schema: dict | None, finish_reason: Any = None) -> Parsed:
    """Parse ``raw`` against ``schema``. Without a schema the text itself is the value.

    A fenced ```json block is unwrapped (formatting, not content); nothing else is repaired. Never
    raises for any ``raw``: a failure is ``Parsed(ok=False, error=<reason>)``.
    """
    if raw is None:
        return Parsed(False, error="empty output (no content)")
    if not isinstance(raw, str):
        return Parsed(False, error=f"invalid JSON: the output is not text (got {type(raw).__name__})")
    if schema is None:  # free text has no contract to break; finish_reason still says "length"
        return Parsed(True, value=raw)
    if finish_reason == "length":
        return Parsed(False, error="truncated: finish_reason=length")
    try:
        return _parse_json(raw, schema)
    except (RecursionError, MemoryError, ValueError, TypeError, ArithmeticError) as e:  # belt and braces
        return Parsed(False, error=f"invalid JSON: the parser failed on this output ({type(e).__name__})")


def _parse_json(raw: str, schema: dict) -> Parsed:
    if len(raw) > strictjson.MAX_BYTES:  # before the fence regex, which would scan it all
        return Parsed(False, error=f"invalid JSON: too large: {len(raw):,} characters")
    text = raw.strip()
    m = _FENCE.match(text)
    if m:
        text = m.group(1).strip()
    try:
        value = strictjson.loads(text)
    except strictjson.StrictJSONError as e:
        msg = str(e)
        return Parsed(False, error=msg if msg.startswith("invalid JSON") else f"invalid JSON: {msg}")
    errors = sorted(_validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return Parsed(False, error=f"contract violation at {where}: {e.message}{more}")
    # the same text with every number as written (strict parsing above already bounded it)
    literal = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    problem = _number_problem(value, literal, schema, "")
    if problem:
        return Parsed(False, error=problem)
    return Parsed(True, value=value)


_VALIDATORS: dict[int, tuple[dict, Draft202012Validator]] = {}


def _validator(schema: dict) -> Draft202012Validator:
    """One validator per schema object (a sweep passes the same contract dict to every call)."""
    hit = _VALIDATORS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_VALIDATORS) > 256:
        _VALIDATORS.clear()
    v = Draft202012Validator(schema)
    _VALIDATORS[id(schema)] = (schema, v)  # the schema is held, so its id is not reused meanwhile
    return v


def _number_problem(value: Any, literal: Any, schema: Any, where: str) -> str | None:
    """The first number that reads differently from how it is written in a way that matters: a
    non-zero literal read as 0.0, or a literal outside the schema's bounds (jsonschema compares the
    float, so 5.0000000000000001 passes a maximum of 5; a non-finite float passes every bound)."""
    at = where or "(root)"
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return None
    if isinstance(value, int | float):
        if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
            return f"contract violation at {at}: {value!r} is not a finite number"
        if value == 0 and literal != 0:
            return f"contract violation at {at}: {literal} cannot be represented (it reads as 0)"
        return _bound_problem(literal, schema, at) if isinstance(schema, dict) else None
    if not isinstance(schema, dict):
        schema = {}
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k, extra if isinstance(extra, dict) else {})
            p = _number_problem(v, literal[k], sub, f"{where}/{k}" if where else str(k))
            if p:
                return p
    elif isinstance(value, list):
        prefix = schema.get("prefixItems") or []
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        for i, v in enumerate(value):
            sub = prefix[i] if i < len(prefix) else items
            p = _number_problem(v, literal[i], sub, f"{where}/{i}" if where else str(i))
            if p:
                return p
    return None


def _bound_problem(literal: Decimal, schema: dict, at: str) -> str | None:
    for key in _BOUNDS:
        bound = schema.get(key)
        if isinstance(bound, bool) or not isinstance(bound, int | float):
            continue
        b = Decimal(str(bound))
        bad = {"minimum": literal < b, "maximum": literal > b, "exclusiveMinimum": literal <= b,
               "exclusiveMaximum": literal >= b}[key]  # fmt: skip
        if bad:
            word = {"minimum": "less than the minimum of", "maximum": "greater than the maximum of",
                    "exclusiveMinimum": "less than or equal to the minimum of",
                    "exclusiveMaximum": "greater than or equal to the maximum of"}[key]  # fmt: skip
            return f"contract violation at {at}: {literal} is {word} {bound}"
    return None
