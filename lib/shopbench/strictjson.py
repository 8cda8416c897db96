"""Strict JSON for anything a model or a user file hands us.

Python's ``json`` accepts what JSON does not (``NaN``, ``Infinity``; a repeated key, last one
winning) and crashes on what it should reject politely (a 5,000-digit integer raises
``ValueError``, 100,000 nested brackets ``RecursionError``). :func:`loads` turns every one of those
into a :class:`StrictJSONError` with a reason, and never raises anything else. :func:`storable`
makes any ``str`` safe to write as UTF-8 (a lone surrogate becomes its ``\\udXXX`` escape).
:func:`parse_json` reads a user's file with it: a failure is an
:class:`~shopbench.errors.InputError` naming the file, the line and column or record, and the field
(:func:`locate` finds the place of a NaN/Infinity or a repeated key).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .errors import InputError

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
    floats: list[str] | None = None,
) -> Any:
    """Parse strict JSON or raise :class:`StrictJSONError` (and nothing else).

    Rejected: ``NaN``/``Infinity``/``-Infinity``, duplicate keys, more than ``max_bytes`` of text,
    nesting deeper than ``max_depth``, a number with more than ``max_digits`` digits, a lone
    surrogate in a string (``"\\ud800"``: it cannot be written as UTF-8) unless ``allow_surrogates``.
    ``floats``: a list that receives every non-integer number literal as written (a caller that must
    re-read them exactly, :mod:`shopbench.llm.contract`, can skip that when there is none).
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
        if floats is not None:
            floats.append(s)
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


# ---- user files: every failure is an InputError naming file, place and field ---------------------

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_CHAR = re.compile(r"at char (\d+)")
# text decoded from UTF-8 holds no lone surrogate; only a \uD800-\uDFFF escape can make one, so
# without such an escape the (slow) walk over every parsed string is skipped
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _Bad:
    """A NaN/Infinity constant found by :func:`locate`."""

    def __init__(self, name: str):
        self.name = name


class _Dup(dict):
    """An object whose key ``dup`` appeared twice (found by :func:`locate`)."""

    dup: str | None = None


def _pairs_noting_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out = _Dup()
    for k, v in pairs:
        if k in out and out.dup is None:
            out.dup = k
        out[k] = v
    return out


def _walk(node: Any, path: list) -> list | None:
    """The path to the first NaN/Infinity or duplicated key under ``node`` (None if there is none)."""
    if isinstance(node, _Bad):
        return path
    if isinstance(node, _Dup) and node.dup is not None:
        return [*path, node.dup]
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        found = _walk(v, [*path, k])
        if found is not None:
            return found
    return None


def _field_name(path: list) -> str | None:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or None


def locate(text: str) -> tuple[list, str | None]:
    """Where strict JSON fails in otherwise parseable text: the key path of the first NaN/Infinity
    or duplicated key, and the line of a NaN/Infinity token (strings skipped)."""
    try:
        tree = json.loads(text, parse_constant=_Bad, object_pairs_hook=_pairs_noting_duplicates)
    except (ValueError, RecursionError):
        return [], None
    path = _walk(tree, []) or []
    m = re.search(r"(?<![\w.])-?(NaN|Infinity)\b", _STRING.sub(lambda s: "_" * len(s.group()), text))
    line = f"line {text.count(chr(10), 0, m.start()) + 1}" if m else None
    return path, line


def parse_json(text: str, path: str | Path, *, where: str | None = None, what: str = "file",
               fix: str | None = None, error: type[InputError] = InputError) -> Any:  # fmt: skip
    """:func:`loads` of ``text`` read from ``path``; a failure is an
    :class:`InputError` naming the file, the line (``where`` for one line of a JSONL file) or record,
    and the field of a NaN/Infinity or duplicated key."""
    try:  # a user's file may be large and deep (the bounds are for model answers; too deep still fails cleanly)
        brackets = text.count("[") + text.count("{")
        return loads(text, max_bytes=max(MAX_BYTES, len(text)),
                                max_depth=max(MAX_DEPTH, brackets),
                                allow_surrogates=not _SURROGATE_ESCAPE.search(text))  # fmt: skip
    except StrictJSONError as e:
        problem = str(e).replace("invalid JSON:", "not valid JSON:", 1)
        field = None
        m = _CHAR.search(problem)
        if m:
            pos = int(m.group(1))
            column = f"column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"
            where = f"{where}, {column}" if where else f"line {text.count(chr(10), 0, pos) + 1}, {column}"
            problem = _CHAR.sub("", problem).rstrip()
        elif "duplicate key" in problem or "JSON number" in problem or "out of range" in problem:
            keys, line = locate(text)
            line = None if "duplicate key" in problem else line  # the token line is a NaN/Infinity's
            field = _field_name(keys[1:] if keys and isinstance(keys[0], int) and where is None else keys)
            if where is None and keys and isinstance(keys[0], int):
                where = f"record {keys[0]}" + (f" ({line})" if line else "")
            elif where is None:
                where = line
        raise error(problem, file=path, where=where, field=field, fix=_strict_fix(problem) or fix
                    or f"correct the {what}") from None  # fmt: skip


def _strict_fix(problem: str) -> str | None:
    """The fix for what strict JSON rejects and plain JSON would have let through."""
    if "duplicate key" in problem:
        return "keep the key once in that object (JSON readers disagree on which copy wins)"
    if "JSON number" in problem or "out of range" in problem:
        return "write a finite number (NaN and Infinity are not JSON), or null if the value is unknown"
    if "surrogate" in problem:
        return "write the character itself, or a valid \\uD8xx\\uDCxx surrogate pair"
    if "digits" in problem:
        return "write the number with at most 100 digits"
    return None
