"""Strict JSON for anything a model or a user file hands us.

Python's ``json`` accepts what JSON does not (``NaN``, ``Infinity``; a repeated key, last one
winning) and crashes on what it should reject politely (a 5,000-digit integer raises
``ValueError``, 100,000 nested brackets ``RecursionError``). :func:`loads` turns every one of those
into a :class:`StrictJSONError` with a reason, and never raises anything else. :func:`storable`
makes any ``str`` safe to write as UTF-8 (a lone surrogate becomes its ``\\udXXX`` escape).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_BYTES = 2_000_000
MAX_DEPTH = 64
MAX_DIGITS = 100

_SURROGATE = re.compile("[\ud800-\udfff]")


class StrictJSONError(ValueError):
    """The text is not strict JSON within the bounds; ``str()`` says why and where."""


def _no_constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not a JSON number")


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise StrictJSONError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _depth(text: str, limit: int) -> int:
    """Deepest bracket nesting outside strings (stops counting past ``limit``)."""
    if text.count("[") + text.count("{") <= limit:
        return 0
    depth = best = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > best:
                best = depth
                if best > limit:
                    return best
        elif ch in "]}":
            depth -= 1
    return best


def loads(
    text: str | bytes,
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    max_digits: int = MAX_DIGITS,
    allow_surrogates: bool = False,
) -> Any:
    """Parse strict JSON or raise :class:`StrictJSONError` (and nothing else).

    Rejected: ``NaN``/``Infinity``/``-Infinity``, duplicate keys, more than ``max_bytes`` of text,
    nesting deeper than ``max_depth``, a number with more than ``max_digits`` digits, a lone
    surrogate in a string (``"\\ud800"``: it cannot be written as UTF-8) unless ``allow_surrogates``.
    """
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise StrictJSONError(f"not UTF-8 (byte {e.start})") from None
    if not isinstance(text, str):
        raise StrictJSONError(f"expected text, got {type(text).__name__}")
    if len(text) > max_bytes:
        raise StrictJSONError(f"too large: {len(text):,} characters (limit {max_bytes:,})")
    d = _depth(text, max_depth)
    if d > max_depth:
        raise StrictJSONError(f"nested deeper than {max_depth} levels")

    def _int(s: str) -> int:
        if len(s.lstrip("-")) > max_digits:
            raise StrictJSONError(f"a number with {len(s.lstrip('-'))} digits (limit {max_digits})")
        return int(s)

    def _float(s: str) -> float:
        digits = sum(c.isdigit() for c in s)
        if digits > max_digits:
            raise StrictJSONError(f"a number with {digits} digits (limit {max_digits})")
        v = float(s)
        if v != v or v in (float("inf"), float("-inf")):
            raise StrictJSONError(f"number {s[:20]} is out of range")
        return v

    try:
        value = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_pairs, parse_int=_int,
                           parse_float=_float)  # fmt: skip
    except StrictJSONError:
        raise
    except json.JSONDecodeError as e:
        raise StrictJSONError(f"invalid JSON: {e.msg} at char {e.pos}") from None
    except (ValueError, RecursionError, OverflowError, TypeError) as e:  # belt and braces
        raise StrictJSONError(f"invalid JSON: {type(e).__name__}: {str(e)[:200]}") from None
    if not allow_surrogates and _has_surrogate(value):
        raise StrictJSONError("a string holds a lone surrogate (\\ud800-\\udfff), which is not text")
    return value


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return bool(_SURROGATE.search(value))
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def storable(text: str) -> str:
    """``text`` with every lone surrogate replaced by its ``\\udXXX`` escape: always UTF-8 encodable."""
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dumps_line(obj: Any) -> str:
    """One JSON line that any UTF-8 writer accepts, whatever strings ``obj`` holds."""
    return storable(json.dumps(obj, ensure_ascii=False))
