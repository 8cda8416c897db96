"""The files a user brings, as versioned JSON Schemas shipped with the package (issue 26 §3).

``shopbench schema`` lists them; ``shopbench schema NAME`` prints one; docs/guides/files.md shows a
minimal example of each. Each schema is generated from the type its reader validates with
(:mod:`shopbench.schemas.build`; tests/test_schemas.py checks the shipped files are what the code
generates, that the project's own files validate, and that a file breaking a schema is rejected by its
reader with one message naming file, line, field and the fix).

:func:`check` validates one decoded JSON value and raises an :class:`~shopbench.errors.InputError` with
that message; :func:`read_jsonl` reads a whole JSON-lines file that way (the PADME pairs reader uses it).

This module imports nothing heavy (``jsonschema`` only when something is validated), so
``shopbench schema`` answers at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["SCHEMAS", "check", "load", "names", "read_jsonl", "schema_id", "validator"]

# name -> title (the files are <name>.schema.json beside this module)
SCHEMAS: dict[str, str] = {
    "pace-record": "PACEShop record",
    "assistant-output": "Assistant output (strict)",
    "assistant-output-relaxed": "Assistant output (relaxed)",
    "padme-pair": "PADME trajectory pair",
    "trajectory": "Trajectory (shop or tau2-style conversation)",
    "annotation": "Human annotation (one answer)",
}


def schema_id(name: str, version: int) -> str:
    return f"https://shopbench.invalid/schemas/{name}/v{version}.schema.json"


def names() -> list[str]:
    return list(SCHEMAS)


def _unknown(name: str) -> InputError:
    from ..core.registry import did_you_mean

    return InputError(f"no schema named {name!r}" + did_you_mean(name, names()),
                      fix=f"known schemas: {', '.join(names())} (shopbench schema)")  # fmt: skip


def text(name: str) -> str:
    """The schema file's text, as shipped."""
    if name not in SCHEMAS:
        raise _unknown(name)
    return resources.files(__package__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")


@cache
def load(name: str) -> dict:
    """The schema ``name`` as a dict (see :data:`SCHEMAS`)."""
    return json.loads(text(name))


@cache
def validator(name: str):
    """A ``jsonschema`` Draft 2020-12 validator of schema ``name``."""
    from jsonschema import Draft202012Validator

    schema = load(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _short(value: Any, n: int = 60) -> str:
    s = json.dumps(value, ensure_ascii=False, default=str)
    return s if len(s) <= n else s[: n - 1] + "…"


_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
               float: "a number", type(None): "null"}  # fmt: skip


def _explain(err) -> tuple[str, str]:
    """(field path, problem) of one jsonschema error, short enough for one line."""
    path = [str(p) for p in err.absolute_path]
    v = err.validator
    if v == "required":
        missing = [k for k in err.validator_value if isinstance(err.instance, dict) and k not in err.instance]
        return ".".join(path + missing[:1]), "is missing (required)"
    if v == "additionalProperties" and isinstance(err.instance, dict):
        known = set(err.schema.get("properties", {}))
        extra = [k for k in err.instance if k not in known]
        return ".".join(path + extra[:1]), "is not a field of this schema"
    if v == "type":
        want = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        got = _JSON_TYPES.get(type(err.instance), type(err.instance).__name__)
        return ".".join(path), f"is {got} ({_short(err.instance)}), expected {' or '.join(want)}"
    if v in ("enum", "const"):
        values = err.validator_value if v == "enum" else [err.validator_value]
        return ".".join(path), f"is {_short(err.instance)}, expected one of {', '.join(map(str, values))}"
    if v in ("anyOf", "oneOf", "allOf", "not", "if") and err.context:
        from jsonschema.exceptions import best_match

        return _explain(best_match(err.context))
    return ".".join(path), err.message if len(err.message) < 160 else err.message[:159] + "…"


def check(obj: Any, name: str, *, file: str | Path | None = None, where: str | None = None,
          fix: str | None = None) -> None:  # fmt: skip
    """Raise an :class:`InputError` (file, where, field, what, the fix) when ``obj`` breaks schema
    ``name``; the fix names ``shopbench schema NAME``."""
    from jsonschema.exceptions import best_match

    err = best_match(validator(name).iter_errors(obj))
    if err is None:
        return
    field, problem = _explain(err)
    hint = f"see `shopbench schema {name}` (docs/guides/files.md)"
    raise InputError(problem, file=file, where=where, field=field or None,
                     fix=f"{fix}; {hint}" if fix else f"correct that line; {hint}")  # fmt: skip


def read_jsonl(path: str | Path, name: str, fix: str | None = None) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of every non-blank line of a JSON-lines file, each strictly parsed and
    checked against schema ``name``; the first bad line is one :class:`InputError`. The whole file is
    checked before the first object is yielded, so a reader that stops on the error has used nothing."""
    from ..paceshop.io import iter_jsonl

    items = list(iter_jsonl(path, what=f"{SCHEMAS[name]} file", fix=fix))
    for lineno, obj in items:
        check(obj, name, file=path, where=f"line {lineno}", fix=fix)
    yield from items
