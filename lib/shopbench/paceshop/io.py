"""Reading and writing PACEShop files: atomic writes, pydantic validation on write and on read.

Nothing partially written is left looking complete: every file is written to a temporary path in
the same folder and renamed into place; the build's ``manifest.json`` is written last.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


class DataFileError(ValueError):
    """A data file holds a record that does not match its schema."""


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


def read_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Read and validate every line; an invalid line raises :class:`DataFileError` naming file,
    line, record id and field."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; build the dataset first (notebook 10 / make paper)")
    out: list[M] = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(model.model_validate_json(line))
            except ValidationError as e:
                try:
                    rid = json.loads(line).get("record_id") or json.loads(line).get("persona_id") or "?"
                except Exception:
                    rid = "?"
                err = e.errors()[0]
                field = ".".join(str(x) for x in err["loc"])
                raise DataFileError(
                    f"{path}:{lineno}: record {rid!r}: field '{field}': {err['msg']}. "
                    "Fix or remove that line, or rebuild the dataset."
                ) from None
    return out


def write_json(path: str | Path, obj) -> str:
    data = (json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()
