"""Reading and writing PACEShop files: atomic writes, pydantic validation on write and on read.

Reading is strict (issue 12 §2): :func:`read_json`, :func:`iter_jsonl` and :func:`read_jsonl` decode
UTF-8 and parse with :mod:`shopbench.strictjson` (no NaN/Infinity, no repeated keys); every failure is
an :class:`~shopbench.errors.InputError` that names the file, the line or record, the field, what is
wrong and what to do. The other loaders of the project read through these.

Nothing partially written is left looking complete: every file is written to a temporary path in
the same folder and renamed into place; the build's ``manifest.json`` is written last.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .. import strictjson
from ..errors import InputError, read_text

M = TypeVar("M", bound=BaseModel)


class DataFileError(InputError):
    """A data file holds a record that does not match its schema (file, line, record and field named)."""


# ---- strict reading: every failure is an InputError naming file, place and field -----------------

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


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
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
        tree = json.loads(text, parse_constant=_Bad, object_pairs_hook=_pairs)
    except (ValueError, RecursionError):
        return [], None
    path = _walk(tree, []) or []
    m = re.search(r"(?<![\w.])-?(NaN|Infinity)\b", _STRING.sub(lambda s: "_" * len(s.group()), text))
    line = f"line {text.count(chr(10), 0, m.start()) + 1}" if m else None
    return path, line


def parse_json(text: str, path: str | Path, *, where: str | None = None, what: str = "file",
               fix: str | None = None, error: type[InputError] = InputError) -> Any:  # fmt: skip
    """:func:`shopbench.strictjson.loads` of ``text`` read from ``path``; a failure is an
    :class:`InputError` naming the file, the line (``where`` for one line of a JSONL file) or record,
    and the field of a NaN/Infinity or duplicated key."""
    try:  # a user's file may be large and deep (the bounds are for model answers; too deep still fails cleanly)
        brackets = text.count("[") + text.count("{")
        return strictjson.loads(text, max_bytes=max(strictjson.MAX_BYTES, len(text)),
                                max_depth=max(strictjson.MAX_DEPTH, brackets),
                                allow_surrogates=not _SURROGATE_ESCAPE.search(text))  # fmt: skip
    except strictjson.StrictJSONError as e:
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


def read_input_text(
    path: str | Path, what: str = "file", fix: str | None = None, error: type[InputError] = InputError
) -> str:
    """:func:`shopbench.errors.read_text` raising ``error``; an empty (or blank) file is an error too."""
    try:
        text = read_text(path, what)
    except InputError as e:
        raise error(
            e.problem, file=e.file, where=e.where, field=e.field, fix=e.fix if e.fix else fix
        ) from None
    if not text.strip():
        raise error(f"the {what} is empty", file=path, fix=fix or f"restore or rebuild the {what}")
    return text


def read_json(path: str | Path, what: str = "JSON file", fix: str | None = None,
              error: type[InputError] = InputError) -> Any:  # fmt: skip
    """A whole JSON file, strictly parsed: missing, unreadable, non-UTF-8, empty or invalid files
    are ``error`` s (an :class:`InputError`) naming the file and the place."""
    text = read_input_text(path, what, fix, error)
    return parse_json(text, path, what=what, fix=fix, error=error)


def iter_jsonl(path: str | Path, what: str = "JSON-lines file", fix: str | None = None,
               error: type[InputError] = InputError) -> Iterator[tuple[int, Any]]:  # fmt: skip
    """``(line number, value)`` of every non-blank line, each strictly parsed."""
    for lineno, _, value in _iter_lines(path, what, fix, error):
        yield lineno, value


def _iter_lines(
    path: str | Path, what: str, fix: str | None, error: type[InputError]
) -> Iterator[tuple[int, str, Any]]:
    text = read_input_text(path, what, fix, error)
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield (
                lineno,
                line,
                parse_json(line, path, where=f"line {lineno}", what=what, fix=fix, error=error),
            )


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_jsonl(path: str | Path, items: Iterable[BaseModel | dict]) -> str:
    """Write models (validated by construction) or dicts as JSON lines; returns the sha256."""
    lines = []
    for it in items:
        if isinstance(it, BaseModel):
            line = it.model_dump_json()
            type(it).model_validate_json(line)  # validated on write: what we write is what a reader accepts
            lines.append(line)
        else:
            lines.append(json.dumps(it, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
    data = ("\n".join(lines) + ("\n" if lines else "")).encode()
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()


def read_jsonl(path: str | Path, model: type[M], id_field: str | None = None,
               fix: str = "fix or remove that line, or rebuild the dataset") -> list[M]:  # fmt: skip
    """Read and validate every line; a bad line (not UTF-8, not strict JSON, not the schema, or a
    repeated ``id_field``) raises :class:`DataFileError` naming file, line, record id and field."""
    path = Path(path)
    out: list[M] = []
    first: dict[Any, int] = {}
    for lineno, line, obj in _lines_or_error(path, fix):
        rid = (
            obj.get(id_field or "record_id", obj.get("persona_id", obj.get("id")))
            if isinstance(obj, dict)
            else None
        )
        where = f"line {lineno}" + (f" (record {rid!r})" if rid is not None else "")
        try:
            out.append(model.model_validate_json(line))  # JSON-mode validation, as on write
        except ValidationError as e:
            err = e.errors()[0]
            field = ".".join(str(x) for x in err["loc"]) or None
            raise DataFileError(err["msg"], file=path, where=where, field=field, fix=fix) from None
        if id_field is not None:
            key = getattr(out[-1], id_field)
            if key in first:
                raise DataFileError(f"repeats the {id_field} of line {first[key]}", file=path, where=where,
                                    field=id_field, fix="give every record its own id, or drop the copy")  # fmt: skip
            first[key] = lineno
    return out


def _lines_or_error(path: Path, fix: str) -> Iterator[tuple[int, str, Any]]:
    if not path.exists():
        raise DataFileError(
            "does not exist", file=path, fix="build the dataset first (notebook 10 / make paper)"
        )
    yield from _iter_lines(path, "JSON-lines file", fix, DataFileError)


def write_json(path: str | Path, obj) -> str:
    data = (json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()
