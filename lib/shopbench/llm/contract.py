"""Structured-output contracts: a JSON schema per call; parse or record why not.

Design rule (DESIGN.md, "Parse failures are data"): an output that breaks its contract is a parse
failure with a reason, never coerced. A confidence of 100 against a [0, 1] contract fails; a
string "0.5" where a number is required fails; a truncated answer fails.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*?)\n?```\s*$", re.S)


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


def parse_output(raw: str | None, schema: dict | None, finish_reason: str | None = None) -> Parsed:
    """Parse ``raw`` against ``schema``. Without a schema the text itself is the value.

    A fenced ```json block is unwrapped (formatting, not content); nothing else is repaired.
    """
    if raw is None:
        return Parsed(False, error="empty output (no content)")
    if schema is None:  # free text has no contract to break; finish_reason still says "length"
        return Parsed(True, value=raw)
    if finish_reason == "length":
        return Parsed(False, error="truncated: finish_reason=length")
    text = raw.strip()
    m = _FENCE.match(text)
    if m:
        text = m.group(1).strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        return Parsed(False, error=f"invalid JSON: {e.msg} at char {e.pos}")
    errors = sorted(Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return Parsed(False, error=f"contract violation at {where}: {e.message}{more}")
    return Parsed(True, value=value)
