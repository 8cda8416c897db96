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
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import InputError, read_text
from ..strictjson import parse_json as parse_json

M = TypeVar("M", bound=BaseModel)


class DataFileError(InputError):
    """A data file holds a record that does not match its schema (file, line, record and field named)."""


# ---- strict reading: every failure is an InputError naming file, place and field -----------------
# (parse_json lives in shopbench.strictjson, where every role can reach it; re-exported here)


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


def atomic_write(path: str | Path, write: Callable[[str], Any]) -> Path:
    """``write(tmp)`` to a temporary file beside ``path``, then renamed into place (removed if
    ``write`` raises): a reader never sees a partly written ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))


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
