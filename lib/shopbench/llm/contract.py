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
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from .. import strictjson

if TYPE_CHECKING:  # jsonschema is imported on first need (its format checkers take seconds to import)
    from jsonschema import Draft202012Validator

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
    """Raise ``ValueError`` when ``schema`` is not a valid JSON schema (draft 2020-12). A plain
    contract (:func:`_plain_schema_ok`) is valid without asking jsonschema, which is imported only
    for any other schema (issue 26, Speed: importing it costs seconds)."""
    if _plain_schema_ok(schema):
        return
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

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


def row_outcome(row: Mapping[str, Any]) -> Parsed | None:
    """The gateway's own contract check of a row it just returned (``status`` ``ok`` with
    ``parsed``, or ``parse_error`` with its reason): the :func:`parse_output` result the gateway
    computed against the call's schema, so a judge that made the call reads it instead of parsing the
    same output against the same contract again (issue 27: the contract parsed once). None for a
    failed call or a row of another shape."""
    status = row.get("status")
    if status == "ok" and "parsed" in row:
        return Parsed(True, value=row["parsed"])
    if status == "parse_error" and row.get("parse_error"):
        return Parsed(False, error=row["parse_error"])
    return None


def _parse_json(raw: str, schema: dict) -> Parsed:
    if len(raw) > strictjson.MAX_BYTES:  # before the fence regex, which would scan it all
        return Parsed(False, error=f"invalid JSON: too large: {len(raw):,} characters")
    text = raw.strip()
    m = _FENCE.match(text)
    if m:
        text = m.group(1).strip()
    floats: list[str] = []
    try:
        value = strictjson.loads(text, floats=floats)
    except strictjson.StrictJSONError as e:
        msg = str(e)
        return Parsed(False, error=msg if msg.startswith("invalid JSON") else f"invalid JSON: {msg}")
    fast = _fast_check(schema)
    errors = [] if fast is not None and fast(value) else _errors(schema, value)
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return Parsed(False, error=f"contract violation at {where}: {e.message}{more}")
    if not _floats_matter(floats, schema):  # nothing a re-read as written could change
        return Parsed(True, value=value)
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
    from jsonschema import Draft202012Validator

    v = Draft202012Validator(schema)
    _VALIDATORS[id(schema)] = (schema, v)  # the schema is held, so its id is not reused meanwhile
    return v


def _floats_matter(floats: list[str], schema: dict) -> bool:
    """Whether :func:`_number_problem` could find anything: integers are read exactly (and compared
    exactly), and a number literal ``s`` can only fall outside a bound ``b`` it passed as a float when
    ``float(s) == b`` (rounding is monotonic), or read as 0 when ``float(s) == 0``; even then, a
    literal that is exactly the float's shortest decimal (``1.0`` for a maximum of 1, ``0.0``) is the
    bound itself (or zero) and cannot cross it."""
    if not floats:
        return False
    bounds = _bounds_of(schema)
    for s in floats:
        v = float(s)
        if (v == 0.0 or v in bounds) and Decimal(s) != Decimal(repr(v)):
            return True
    return False


_BOUND_SETS: dict[int, tuple[dict, frozenset]] = {}


def _bounds_of(schema: dict) -> frozenset:
    """Every numeric bound anywhere in ``schema`` (as floats), once per schema object."""
    hit = _BOUND_SETS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    found: set[float] = set()

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k in _BOUNDS and isinstance(v, int | float) and not isinstance(v, bool):
                    found.add(float(v))
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(schema)
    if len(_BOUND_SETS) > 256:
        _BOUND_SETS.clear()
    _BOUND_SETS[id(schema)] = (schema, frozenset(found))
    return frozenset(found)


def _errors(schema: dict, value: Any) -> list:
    """jsonschema's errors for ``value``, in path order (empty: valid)."""
    return sorted(_validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))


# ---- a compiled check for plain contracts (the hot path of a sweep) ------------------------------
# jsonschema's validator walks the schema with a new validator object per keyword and level; a
# judge's contract (type, properties, required, enum of strings, numeric bounds, lengths) checked in
# plain Python is several times cheaper. The compiled check answers only "valid": when it says no,
# or the schema uses a keyword outside this list, jsonschema decides and writes the message, so a
# contract is never judged by the compiled check alone unless it found nothing wrong.
_ANNOTATIONS = {"description", "title", "$comment", "default", "examples"}
_COMPILABLE = {"type", "properties", "required", "additionalProperties", "enum", "const", "minimum", "maximum",
               "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems",
               "items"} | _ANNOTATIONS  # fmt: skip
_TYPES: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    ),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}
_FAST: dict[int, tuple[dict, Any]] = {}


def _fast_check(schema: dict):
    """``check(value) -> bool`` (True: valid under ``schema``) or None when the schema is not plain."""
    hit = _FAST.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_FAST) > 256:
        _FAST.clear()
    try:
        check = _compile(schema)
    except _NotPlain:
        check = None
    _FAST[id(schema)] = (schema, check)
    return check


class _NotPlain(Exception):
    pass


_SIZES = ("minLength", "maxLength", "minItems", "maxItems")


def _plain_schema_ok(schema: Any) -> bool:  # noqa: C901 - one branch per keyword
    """True only when ``schema`` uses the plain keywords (:data:`_COMPILABLE`) with values the draft
    2020-12 metaschema accepts, so it is a valid schema; False sends it to jsonschema's own check
    (which then decides, with its message). Conservative: any doubt answers False."""
    if (
        not isinstance(schema, dict)
        or not all(isinstance(k, str) for k in schema)
        or set(schema) - _COMPILABLE
    ):
        return False
    for k, v in schema.items():
        if k == "type":
            names = [v] if isinstance(v, str) else v
            if not (isinstance(names, list) and names and all(isinstance(n, str) and n in _TYPES for n in names)
                    and len(set(names)) == len(names)):  # fmt: skip
                return False
        elif k == "properties":
            if not (
                isinstance(v, dict) and all(isinstance(n, str) and _plain_schema_ok(x) for n, x in v.items())
            ):
                return False
        elif k in ("items", "additionalProperties"):
            if not (isinstance(v, bool) or _plain_schema_ok(v)):
                return False
        elif k == "required":
            if not (isinstance(v, list) and all(isinstance(r, str) for r in v) and len(set(v)) == len(v)):
                return False
        elif k in ("enum", "examples"):
            if not isinstance(v, list):
                return False
        elif k in _BOUNDS:
            if not _is_num(v):
                return False
        elif k in _SIZES:
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
                return False
        elif k in ("description", "title", "$comment"):
            if not isinstance(v, str):
                return False
        # "const" and "default": the metaschema accepts any value
    return True


def _is_num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _compile(schema: Any):  # noqa: C901 - one branch per keyword
    if not isinstance(schema, dict) or set(schema) - _COMPILABLE:
        raise _NotPlain
    tests: list = []
    t = schema.get("type")
    if t is not None:
        names = [t] if isinstance(t, str) else t
        if not isinstance(names, list) or not names or any(n not in _TYPES for n in names):
            raise _NotPlain
        fns = [_TYPES[n] for n in names]
        tests.append(fns[0] if len(fns) == 1 else (lambda v, fns=fns: any(f(v) for f in fns)))
    if "enum" in schema:
        enum = schema["enum"]
        if not isinstance(enum, list) or not all(isinstance(e, str) for e in enum):
            raise _NotPlain
        allowed = frozenset(enum)
        tests.append(lambda v: isinstance(v, str) and v in allowed)
    if "const" in schema:
        const = schema["const"]
        if not isinstance(const, str):
            raise _NotPlain
        tests.append(lambda v: isinstance(v, str) and v == const)
    for key, bad in (("minimum", lambda v, b: v < b), ("maximum", lambda v, b: v > b),
                     ("exclusiveMinimum", lambda v, b: v <= b), ("exclusiveMaximum", lambda v, b: v >= b)):  # fmt: skip
        if key in schema:
            b = schema[key]
            if not _is_num(b):
                raise _NotPlain
            tests.append(lambda v, b=b, bad=bad: not (_is_num(v) and bad(v, b)))
    too_short, too_long = (lambda n, b: n < b), (lambda n, b: n > b)
    sized = (("minLength", str, too_short), ("maxLength", str, too_long),
             ("minItems", list, too_short), ("maxItems", list, too_long))  # fmt: skip
    for key, kind, bad in sized:
        if key in schema:
            b = schema[key]
            if not isinstance(b, int) or isinstance(b, bool):
                raise _NotPlain
            tests.append(lambda v, b=b, bad=bad, kind=kind: not (isinstance(v, kind) and bad(len(v), b)))
    if "items" in schema:
        item = _compile(schema["items"])
        tests.append(lambda v, item=item: not isinstance(v, list) or all(item(x) for x in v))
    props = schema.get("properties")
    required = schema.get("required")
    extra = schema.get("additionalProperties", True)
    if props is not None or required is not None or extra is not True:
        if props is not None and not isinstance(props, dict):
            raise _NotPlain
        if required is not None and not (
            isinstance(required, list) and all(isinstance(r, str) for r in required)
        ):
            raise _NotPlain
        subs = {k: _compile(v) for k, v in (props or {}).items()}
        req = tuple(required or ())
        if extra is False:
            extra_fn = None
        elif isinstance(extra, dict):
            extra_fn = _compile(extra)
        elif extra is True:
            extra_fn = lambda v: True  # noqa: E731
        else:
            raise _NotPlain

        def obj(v, subs=subs, req=req, extra_fn=extra_fn):
            if not isinstance(v, dict):
                return True
            for r in req:
                if r not in v:
                    return False
            for k, x in v.items():
                f = subs.get(k)
                if f is None:
                    if extra_fn is None or not extra_fn(x):
                        return False
                elif not f(x):
                    return False
            return True

        tests.append(obj)
    if not tests:
        return lambda v: True
    if len(tests) == 1:
        return tests[0]
    return lambda v, tests=tuple(tests): all(f(v) for f in tests)


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
