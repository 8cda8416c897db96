"""Contract fuzzing: issue 12 §6 ``fuzz_cases`` (DESIGN.md, "Parse failures are data").

For every output contract a model answers (the PACE judge protocols of seed 000 §4.1/C.3 with their
D.4 rules, the PADMÉ filter judge and evaluator of seed 003 H.4/H.5, the shop LLM judge's rubric
and refusal contracts of seed 002, the shop agent's JSON tool mode), :func:`fuzz_contracts` makes
``n_per_contract`` outputs: valid documents sampled from the schema and written in varied but
legal ways (indentation, escapes, a ```json fence, surrounding whitespace), and mutated ones
(NaN/Infinity, duplicate keys, out-of-range and unrepresentable numbers, wrong types, labels
outside the set, missing and extra keys, truncation, 5,000-digit numbers, deep nesting, lone
surrogates, control characters, fences, leading and trailing garbage, a "length" finish).

Each output goes through the project's real parse path: the gateway's row builder
(:meth:`shopbench.llm.Gateway._row`, via an in-memory gateway that replays the output instead of
calling a model) and the consumer that reads the row (``parse_judgment``, ``score_from_row``,
``LLMFilterJudge.judge`` → :class:`~shopbench.judges.Judgment` | :class:`~shopbench.judges.ParseFailure`,
``LLMJudge`` (a rubric and the refusal question) on a one-turn trial (the registered specs, whose ``interpret``
is ``validate_rubric``/``validate_refusal``), ``LLMAgent.step``). Whether the output is valid is decided independently, by a strict JSON reader
and a JSON-schema checker written here (numbers compared as written, as :class:`decimal.Decimal`)
plus each contract's own rules restated from its docstring. Counted: ``crashes`` (an exception
other than the path's documented rejection escaped), ``silent_coercions`` (an output accepted with
a value changed: one of two different values of a repeated key kept, a number read as a different
one that then passes, or a valid output whose consumer returned something other than the document)
and ``accepted_invalid`` (any other invalid output accepted). ``rejected_valid`` (a valid output
refused) is reported, not a goal.
"""

from __future__ import annotations

import json
import random
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from .. import strictjson

_WS = " \t\n\r"
_NUMBER_START = "-0123456789"


# ---- ground truth: an independent strict JSON reader ---------------------------------------------
class _Invalid(Exception):
    """The text is not strict JSON (ground truth)."""


@dataclass(frozen=True)
class Num:
    """A number as written: its text, exact value and the value a float/int reader gives."""

    text: str
    exact: Decimal
    value: int | float


class _Reader:
    """Strict JSON by hand (RFC 8259 plus the project's bounds: :data:`strictjson.MAX_DEPTH`,
    :data:`strictjson.MAX_DIGITS`, no NaN/Infinity, no lone surrogate, no repeated key). With
    ``lenient`` a repeated key is read as Python's ``json`` reads it (last one wins) and counted in
    ``conflicts`` when its values differ."""

    def __init__(self, text: str, lenient: bool = False):
        self.s, self.i = text, 0
        self.lenient, self.conflicts = lenient, 0

    def read(self) -> Any:
        self._ws()
        v = self._value(0)
        self._ws()
        if self.i != len(self.s):
            raise _Invalid("trailing text")
        return v

    def _ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in _WS:
            self.i += 1

    def _peek(self) -> str:
        if self.i >= len(self.s):
            raise _Invalid("unexpected end")
        return self.s[self.i]

    def _value(self, depth: int) -> Any:
        c = self._peek()
        if c in "{[":
            if depth + 1 > strictjson.MAX_DEPTH:
                raise _Invalid("too deep")
            return self._object(depth + 1) if c == "{" else self._array(depth + 1)
        if c == '"':
            return self._string()
        if c in _NUMBER_START:
            return self._number()
        for word, v in (("true", True), ("false", False), ("null", None)):
            if self.s.startswith(word, self.i):
                self.i += len(word)
                return v
        raise _Invalid(f"unexpected {c!r}")

    def _object(self, depth: int) -> dict:
        self.i += 1
        out: dict[str, Any] = {}
        self._ws()
        if self._peek() == "}":
            self.i += 1
            return out
        while True:
            self._ws()
            if self._peek() != '"':
                raise _Invalid("key is not a string")
            k = self._string()
            if k in out and not self.lenient:
                raise _Invalid(f"duplicate key {k!r}")
            self._ws()
            if self._peek() != ":":
                raise _Invalid("missing colon")
            self.i += 1
            self._ws()
            v = self._value(depth)
            if k in out and not same(plain(out[k]), plain(v)):
                self.conflicts += 1
            out[k] = v
            self._ws()
            c = self._peek()
            self.i += 1
            if c == "}":
                return out
            if c != ",":
                raise _Invalid("missing comma")

    def _array(self, depth: int) -> list:
        self.i += 1
        out: list[Any] = []
        self._ws()
        if self._peek() == "]":
            self.i += 1
            return out
        while True:
            self._ws()
            out.append(self._value(depth))
            self._ws()
            c = self._peek()
            self.i += 1
            if c == "]":
                return out
            if c != ",":
                raise _Invalid("missing comma")

    def _hex4(self) -> int:
        h = self.s[self.i : self.i + 4]
        if len(h) != 4 or any(c not in string.hexdigits for c in h):
            raise _Invalid("bad \\u escape")
        self.i += 4
        return int(h, 16)

    def _string(self) -> str:
        self.i += 1
        out: list[str] = []
        simple = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
        while True:
            c = self._peek()
            self.i += 1
            if c == '"':
                return "".join(out)
            if ord(c) < 0x20:
                raise _Invalid("control character in a string")
            if 0xD800 <= ord(c) <= 0xDFFF:
                raise _Invalid("lone surrogate")
            if c != "\\":
                out.append(c)
                continue
            e = self._peek()
            self.i += 1
            if e in simple:
                out.append(simple[e])
                continue
            if e != "u":
                raise _Invalid("bad escape")
            cp = self._hex4()
            if 0xDC00 <= cp <= 0xDFFF:
                raise _Invalid("lone low surrogate")
            if 0xD800 <= cp <= 0xDBFF:
                if not self.s.startswith("\\u", self.i):
                    raise _Invalid("lone high surrogate")
                self.i += 2
                lo = self._hex4()
                if not 0xDC00 <= lo <= 0xDFFF:
                    raise _Invalid("lone high surrogate")
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
            out.append(chr(cp))

    def _digits(self) -> str:
        j = self.i
        while self.i < len(self.s) and self.s[self.i].isascii() and self.s[self.i].isdigit():
            self.i += 1
        return self.s[j : self.i]

    def _number(self) -> Num:
        start = self.i
        if self.s[self.i] == "-":
            self.i += 1
        whole = self._digits()
        if not whole or (len(whole) > 1 and whole[0] == "0"):
            raise _Invalid("bad number")
        is_float = False
        if self.s.startswith(".", self.i):
            self.i += 1
            is_float = True
            if not self._digits():
                raise _Invalid("bad fraction")
        if self.i < len(self.s) and self.s[self.i] in "eE":
            self.i += 1
            is_float = True
            if self.i < len(self.s) and self.s[self.i] in "+-":
                self.i += 1
            if not self._digits():
                raise _Invalid("bad exponent")
        text = self.s[start : self.i]
        if sum(c.isdigit() for c in text) > strictjson.MAX_DIGITS:
            raise _Invalid("too many digits")
        value: int | float = float(text) if is_float else int(text)
        if value in (float("inf"), float("-inf")):
            raise _Invalid("out of range")
        return Num(text, Decimal(text), value)


def _unfence(text: str) -> str:
    """The contract's formatting rule, restated: surrounding whitespace and one ```json fence go."""
    s = text.strip()
    if not (s.startswith("```") and s.endswith("```") and len(s) >= 6):
        return s
    head = s[3:]
    if head.startswith("json"):
        head = head[4:]
    n = len(head) - len(head.lstrip())
    if "\n" not in head[:n]:
        return s
    body = head[n:-3] if len(head) - n >= 3 else None
    if body is None:  # the opening newline run swallowed the closing fence ("```\n```")
        return ""
    return (body[:-1] if body.endswith("\n") else body).strip()


def read_strict(text: Any) -> Any:
    """The document in ``text`` (numbers as :class:`Num`), or raise :class:`_Invalid`."""
    if not isinstance(text, str) or len(text) > strictjson.MAX_BYTES:
        raise _Invalid("not text, or too large")
    return _Reader(_unfence(text)).read()


def as_read(node: Any) -> Any:
    """``node`` with every number replaced by the number a float/int reader makes of it."""
    if isinstance(node, Num):
        return Num(node.text, Decimal(repr(node.value)), node.value)
    if isinstance(node, dict):
        return {k: as_read(v) for k, v in node.items()}
    if isinstance(node, list):
        return [as_read(v) for v in node]
    return node


def plain(node: Any) -> Any:
    """A :func:`read_strict` document with each number as a reader returns it (int or float)."""
    if isinstance(node, Num):
        return node.value
    if isinstance(node, dict):
        return {k: plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    return node


# ---- ground truth: an independent schema check ------------------------------------------------------
def _is_type(node: Any, t: str) -> bool:
    if t == "string":
        return isinstance(node, str)
    if t == "number":
        return isinstance(node, Num)
    if t == "integer":
        return isinstance(node, Num) and node.exact == node.exact.to_integral_value()
    if t == "boolean":
        return isinstance(node, bool)
    if t == "null":
        return node is None
    if t == "object":
        return isinstance(node, dict)
    if t == "array":
        return isinstance(node, list)
    return False


def same(a: Any, b: Any) -> bool:
    """Equal with JSON types kept apart (``True`` is not ``1``; ``1`` and ``1.0`` are the same number)."""
    num = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, num) and isinstance(b, num):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def conforms(node: Any, schema: dict) -> bool:
    """``node`` satisfies the subset of JSON Schema the contracts use; bounds on the number as
    written; a non-zero number that a float reader turns into 0 never conforms."""
    if isinstance(node, Num) and node.value == 0 and node.exact != 0:
        return False
    t = schema.get("type")
    if t is not None and not any(_is_type(node, x) for x in (t if isinstance(t, list) else [t])):
        return False
    if "enum" in schema and not any(same(plain(node), e) for e in schema["enum"]):
        return False
    if "const" in schema and not same(plain(node), schema["const"]):
        return False
    if "anyOf" in schema and not any(conforms(node, s) for s in schema["anyOf"]):
        return False
    if isinstance(node, Num) and not _in_bounds(node.exact, schema):
        return False
    if isinstance(node, str) and not schema.get("minLength", 0) <= len(node) <= schema.get(
        "maxLength", len(node)
    ):
        return False
    if isinstance(node, list):
        if not schema.get("minItems", 0) <= len(node) <= schema.get("maxItems", len(node)):
            return False
        items = schema.get("items")
        return (
            all(conforms(v, items) for v in node)
            if isinstance(items, dict)
            else all(_no_bad_number(v) for v in node)
        )
    if isinstance(node, dict):
        return _object_conforms(node, schema)
    return True


def _object_conforms(node: dict, schema: dict) -> bool:
    props = schema.get("properties", {})
    if any(k not in node for k in schema.get("required", [])):
        return False
    extra = schema.get("additionalProperties", True)
    for k, v in node.items():
        if k in props:
            if not conforms(v, props[k]):
                return False
        elif extra is False:
            return False
        elif isinstance(extra, dict) and not conforms(v, extra):
            return False
        elif not _no_bad_number(v):
            return False
    return True


def _no_bad_number(node: Any) -> bool:
    return conforms(node, {})


def _in_bounds(x: Decimal, schema: dict) -> bool:
    def d(k: str) -> Decimal | None:
        b = schema.get(k)
        return None if b is None or isinstance(b, bool) else Decimal(str(b))

    lo, hi, xlo, xhi = d("minimum"), d("maximum"), d("exclusiveMinimum"), d("exclusiveMaximum")
    return ((lo is None or x >= lo) and (hi is None or x <= hi) and (xlo is None or x > xlo)
            and (xhi is None or x < xhi))  # fmt: skip


# ---- generating documents and mutations ----------------------------------------------------------------
@dataclass(frozen=True)
class Raw:
    """Text written verbatim where a value goes (a mutation: ``NaN``, ``1e999``, a broken string)."""

    text: str


@dataclass(frozen=True)
class Dup:
    """An object written with the given (key, value) pairs, repeats included."""

    pairs: tuple


_LETTERS = string.ascii_lowercase + "      éü€😀"


def _text(rng: random.Random, lo: int = 1, hi: int = 40) -> str:
    return "".join(rng.choice(_LETTERS) for _ in range(rng.randint(lo, hi))).strip() or "ok"


def sample(schema: dict, rng: random.Random) -> Any:
    """A random document that satisfies ``schema`` (the subset the contracts use)."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    t = schema.get("type", "object")
    if isinstance(t, list):
        t = rng.choice(t)
    if t == "object":
        return {k: sample(s, rng) for k, s in schema.get("properties", {}).items()}
    if t == "array":
        lo, hi = schema.get("minItems", 0), min(schema.get("maxItems", 4), 4)
        return [sample(schema.get("items", {"type": "string"}), rng) for _ in range(rng.randint(lo, hi))]
    if t in ("number", "integer"):
        lo, hi = schema.get("minimum", 0), schema.get("maximum", 10)
        if t == "integer":
            return rng.randint(int(lo), int(hi))
        return rng.choice([lo, hi, round(rng.uniform(lo, hi), rng.randint(0, 6)), rng.uniform(lo, hi)])
    if t == "boolean":
        return rng.random() < 0.5
    if t == "null":
        return None
    return _text(rng, 1, min(40, schema.get("maxLength", 40)))


def emit(node: Any, rng: random.Random, *, indent: int | None = None, ascii_only: bool = False) -> str:
    """JSON text of ``node`` (with :class:`Raw` and :class:`Dup` written as they say)."""
    nl = "\n" if indent else ""
    pad = " " * (indent or 0)

    def go(v: Any, level: int) -> str:
        inner, outer = nl + pad * (level + 1), nl + pad * level
        if isinstance(v, Raw):
            return v.text
        if isinstance(v, Dup | dict):
            pairs = v.pairs if isinstance(v, Dup) else tuple(v.items())
            if not pairs:
                return "{}"
            body = ("," + inner).join(
                f"{json.dumps(k, ensure_ascii=ascii_only)}: {go(x, level + 1)}" for k, x in pairs
            )
            return "{" + inner + body + outer + "}"
        if isinstance(v, list):
            if not v:
                return "[]"
            return "[" + inner + ("," + inner).join(go(x, level + 1) for x in v) + outer + "]"
        return json.dumps(v, ensure_ascii=ascii_only)

    return go(node, 0)


def _paths(node: Any, where: tuple = ()) -> list[tuple]:
    """Every path into ``node`` (a tuple of keys/indices), the root included."""
    out = [where]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*where, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*where, i))
    return out


def _get(node: Any, path: tuple) -> Any:
    for p in path:
        node = node[p]
    return node


def _set(node: Any, path: tuple, value: Any) -> Any:
    """A copy of ``node`` with ``value`` at ``path``."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {k: (_set(v, rest, value) if k == head else v) for k, v in node.items()}
    return [(_set(v, rest, value) if i == head else v) for i, v in enumerate(node)]


def _schema_at(schema: dict, path: tuple) -> dict:
    for p in path:
        if isinstance(p, int):
            schema = schema.get("items", {}) if isinstance(schema.get("items"), dict) else {}
        else:
            schema = schema.get("properties", {}).get(p, {})
    return schema


def _leaf(doc: Any, rng: random.Random, want: Callable[[Any], bool]) -> tuple | None:
    paths = [p for p in _paths(doc) if p and want(_get(doc, p))]
    return rng.choice(paths) if paths else None


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _number_token(rng: random.Random, s: dict) -> Raw:
    hi, lo = s.get("maximum"), s.get("minimum")
    options = ["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "1e-400", "1" * rng.randint(101, 5000),
               "0." + "3" * 150, "1E-5", "-0", "1.", ".5", "01", "+1", "0x10"]  # fmt: skip
    if hi is not None:
        options += [f"{hi}.0000000000000000001", repr(hi + rng.choice([1e-9, 0.5, 1, 1e6])), f"{hi}e0"]
    if lo is not None:
        options += [repr(lo - rng.choice([1e-9, 0.5, 1, 1e6])), f"{lo}.000", f"{float(lo)!r}"]
    return Raw(rng.choice(options))


_STRING_TOKENS = ['"a\\ud800b"', '"\\udc00"', '"x\ud800y"', '"\\ud83d\\ude00"', '"nul\\u0000x"', '"tab\tx"',
                  '"a\x01b"', '"\\q"', '"\\u12"', "'single'", '"unterminated']  # fmt: skip


def _mutate_value(doc: Any, schema: dict, rng: random.Random) -> tuple[str, Any]:
    """One mutation inside the document: (name, mutated document)."""
    kind = rng.choice(["number", "number", "type", "enum", "missing", "extra", "dup", "string", "array",
                       "deep", "root"])  # fmt: skip
    if kind == "number" and (p := _leaf(doc, rng, _is_num)) is not None:
        return "number_token", _set(doc, p, _number_token(rng, _schema_at(schema, p)))
    if kind == "enum" and (p := _leaf(doc, rng, lambda v: isinstance(v, str) and v.isupper())) is not None:
        v = _get(doc, p)
        return "label_outside_set", _set(doc, p, rng.choice([v.lower(), v + "_X", "", " " + v, "UNKNOWN"]))
    objects = [q for q in _paths(doc) if isinstance(_get(doc, q), dict) and _get(doc, q)]
    if kind in ("missing", "extra", "dup") and objects:
        p = rng.choice(objects)
        obj = _get(doc, p)
        keys = list(obj)
        if kind == "missing":
            k = rng.choice(keys)
            return "missing_key", _set(doc, p, {x: v for x, v in obj.items() if x != k})
        if kind == "extra":
            extra = rng.choice(["extra", "note", keys[0] + "_2"])
            return "extra_key", _set(doc, p, {**obj, extra: rng.choice([1, "x", None])})
        k = rng.choice(keys)
        twin = rng.choice([obj[k], sample({"type": rng.choice(["number", "string", "boolean"])}, rng)])
        pairs = list(obj.items())
        pairs.insert(rng.randint(0, len(pairs)), (k, twin))
        return "duplicate_key", _set(doc, p, Dup(tuple(pairs)))
    if kind == "string" and (p := _leaf(doc, rng, lambda v: isinstance(v, str))) is not None:
        s = _schema_at(schema, p)
        long = "y" * (s.get("maxLength", 800) + rng.choice([0, 1, 50]))
        return "string_content", _set(doc, p, rng.choice([Raw(rng.choice(_STRING_TOKENS)), long]))
    if kind == "array" and (p := _leaf(doc, rng, lambda v: isinstance(v, list))) is not None:
        arr = _get(doc, p)
        item = arr[0] if arr else "E99"
        return "array_content", _set(
            doc, p, rng.choice([arr + [item] * rng.randint(20, 30), [*arr, "NOT-IN-POOL"], "E1"])
        )
    if kind == "deep" and (p := _leaf(doc, rng, lambda v: not isinstance(v, dict | list))) is not None:
        d = rng.choice(
            [10, strictjson.MAX_DEPTH - 1, strictjson.MAX_DEPTH, strictjson.MAX_DEPTH + 1, 100, 100_000]
        )
        return "deep_nesting", _set(doc, p, Raw("[" * d + "1" + "]" * d))
    if kind == "root":
        return "root_type", rng.choice([[doc], "text", 0.5, None, True, []])
    if (p := _leaf(doc, rng, lambda v: not isinstance(v, dict | list))) is not None:
        v = _get(doc, p)
        wrong = [x for x in _WRONG_TYPES if not same(x, v)]
        return "wrong_type", _set(doc, p, rng.choice(wrong))
    return "root_type", [doc]


_WRONG_TYPES: tuple[Any, ...] = ("0.5", 1, 0.5, True, None, [], {}, "x")
_GARBAGE_AFTER = [" x", "}", ",", "]", "\n```", " // done", "\x00", "\n\nHope this helps!", "{}", " null"]
_GARBAGE_BEFORE = ["Sure: ", "json ", "\ufeff", "Here is the JSON:\n", "'", "<json>"]
_FENCES = [("```json\n", "\n```"), ("```\n", "\n```"), ("```json\n\n", "\n\n```"), ("```JSON\n", "\n```"),
           ("```json ", "```"), ("```json\n", ""), ("", "\n```"), ("```python\n", "\n```")]  # fmt: skip
_SPACE = ["", "\n", "  \n\t", "\xa0", "\u2028", "\r\n"]


def _mutate_text(text: str, rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["truncate", "after", "before", "fence", "space", "quotes", "comma", "huge", "empty"])
    if kind == "truncate":
        return "truncated", text[: rng.randint(0, max(0, len(text) - 1))]
    if kind == "after":
        return "trailing_garbage", text + rng.choice(_GARBAGE_AFTER)
    if kind == "before":
        return "leading_garbage", rng.choice(_GARBAGE_BEFORE) + text
    if kind == "fence":
        a, b = rng.choice(_FENCES)
        return "fence", a + text + b
    if kind == "space":
        return "whitespace", rng.choice(_SPACE) + text + rng.choice(_SPACE)
    if kind == "quotes":
        return "single_quotes", text.replace('"', "'")
    if kind == "comma" and (i := text.rfind("}")) >= 0:
        return "trailing_comma", text[:i] + ",}" + text[i + 1 :]
    if kind == "huge" and rng.random() < 0.2:  # rare: each is 2 MB
        return "too_large", text[:-1] + ', "pad": "' + "p" * (strictjson.MAX_BYTES + 10) + '"}'
    return "empty", rng.choice(["", " ", "null", "{}", "[]"])


def make_case(
    schema: dict, fix: Callable[[Any, random.Random], Any], rng: random.Random
) -> tuple[str, str, str]:
    """(mutation name, output text, finish reason) for one fuzz case: 45 % a mutated document (a
    fifth of those also with a text mutation), 30 % a mutated text, 25 % a valid document written
    in a legal variant (indentation, \\u escapes, a fence, surrounding whitespace)."""
    doc = fix(sample(schema, rng), rng)
    name = "valid"
    r = rng.random()
    if r < 0.45:
        name, doc = _mutate_value(doc, schema, rng)
    text = emit(doc, rng, indent=rng.choice([None, None, 2]), ascii_only=rng.random() < 0.3)
    if 0.45 <= r < 0.75:
        name, text = _mutate_text(text, rng)
    elif r < 0.45 and rng.random() < 0.2:
        text = _mutate_text(text, rng)[1]
        name += "+text"
    elif r >= 0.75 and rng.random() < 0.4:
        a, b = rng.choice(_FENCES[:3] + [("", ""), (" \n", "\n\n")])
        text = a + text + b
    finish = "length" if rng.random() < 0.02 else "stop"
    return name + ("+length" if finish == "length" else ""), text, finish


# ---- the real parse paths -----------------------------------------------------------------------------------
class Rejected(Exception):
    """The parse path refused the output (the documented outcome for an invalid one)."""


def _replay_gateway():
    """A :class:`shopbench.llm.Gateway` that answers every call with the next output, built into a row
    by the gateway's own row builder (no model, no cache, no log)."""
    from ..llm import Backbone, Gateway

    class ReplayGateway(Gateway):
        def __init__(self) -> None:  # noqa: D401 - no cache, no log directory
            self.backbones = {"fuzz": Backbone(name="fuzz", model="local/fuzz")}
            self.stats: dict = {}
            self.output: tuple[str, str] = ("", "stop")

        def run(self, calls, run_id, *, dry_run=False, desc=None):  # type: ignore[override]
            text, finish = self.output
            stored = {"raw_output": text, "finish_reason": finish}
            return [
                self._row(run_id, c, stored, cache_hit=False, attempts=1, latency=0.0, cost=0.0)
                for c in calls
            ]

    return ReplayGateway()


@dataclass
class Contract:
    """One output contract: its schema, how to make a valid document valid for the contract's own rules
    too (``fix``), the contract's rules beyond the schema (``rule``, on the plain document), what the
    consumer must return for a valid document (``expected``) and the real path (``run``: text and finish
    reason → what the consumer returned, or :class:`Rejected`)."""

    name: str
    schema: dict
    run: Callable[[str, str], Any]
    expected: Callable[[Any], Any]
    rule: Callable[[Any], bool] = lambda doc: True
    fix: Callable[[Any, random.Random], Any] = lambda doc, rng: doc


POOL = tuple(f"E{i}" for i in range(1, 13))


def _pace_contracts(gw) -> list[Contract]:
    from ..judges.pace.parse import JUDGMENT_FIELDS, parse_judgment
    from ..judges.pace.protocols import _RENAME, PROTOCOLS

    def make(p) -> Contract:
        def run(text: str, finish: str) -> Any:
            row = gw.run(
                [gw.call("fuzz", "x", [{"role": "user", "content": "judge"}], schema=p.contract)], "fuzz"
            )[0]
            out = parse_judgment(p, row, POOL)
            if out["parse_ok"] is not True:
                raise Rejected(out["parse_error"])
            return {k: out[k] for k in JUDGMENT_FIELDS}

        def expected(doc: Any) -> Any:
            common = {_RENAME.get(k, k): v for k, v in p.to_contract(doc).items()}
            return {k: common.get(k) for k in JUDGMENT_FIELDS}

        def fix(doc: Any, rng: random.Random) -> Any:
            doc["supporting_evidence_ids"] = rng.sample(POOL, rng.randint(0, 4))
            return doc

        # D.4 decision rule (iii): supporting_evidence_ids ⊆ candidate_evidence_ids
        return Contract(f"pace:{p.name}", p.contract, run, expected,
                        rule=lambda doc: all(i in POOL for i in doc.get("supporting_evidence_ids", [])), fix=fix)  # fmt: skip

    return [make(p) for p in PROTOCOLS.values()]


def _padme_contracts(gw) -> list[Contract]:
    from ..judges.padme.evaluators import SCORE_SCHEMA, score_from_row
    from ..judges.padme.filters import FILTER_SCHEMA, LLMFilterJudge
    from ..judges.spec import ParseFailure
    from ..padme.types import Criterion, Rollout

    def rollout(i: int) -> Rollout:
        return Rollout(f"r{i}", "t", "retail", "fuzz", "c", "ok", "", "m", "u", 0, 0,
                       [{"role": "user", "content": "hi"}, {"role": "assistant", "content": f"answer {i}"}])  # fmt: skip

    crit, x1, x2 = Criterion("c", "a criterion"), rollout(1), rollout(2)
    judge = LLMFilterJudge(gw, "fuzz", prompt="{criterion_name} {prompt} {response_a} {response_b}")

    def run_filter(text: str, finish: str) -> Any:
        (outcome,) = judge.judge([("p", x1, x2, crit)])
        if isinstance(outcome, ParseFailure):
            raise Rejected(outcome.reason)
        return outcome.value

    def run_evaluator(text: str, finish: str) -> Any:
        row = gw.run(
            [gw.call("fuzz", "r1", [{"role": "user", "content": "score"}], schema=SCORE_SCHEMA)], "fuzz"
        )[0]
        out = score_from_row(row)
        if out["status"] != "ok":
            raise Rejected(out["parse_error"])
        return {"score": out["score"], "reasoning": out["reasoning"]}

    def fix_score(doc: Any, rng: random.Random) -> Any:
        doc["score"] = rng.choice([0, 1, 0.5, round(rng.random(), rng.randint(0, 4)), rng.random()])
        return doc

    return [
        Contract("padme:filter", FILTER_SCHEMA, run_filter, lambda d: 1 if d["answer"] == "A" else 2),
        # H.5 via score_from_row: "the score must be a number in [0, 1]" (read as a float)
        Contract(
            "padme:evaluator",
            SCORE_SCHEMA,
            run_evaluator,
            lambda d: {"score": float(d["score"]), "reasoning": d["reasoning"]},
            rule=lambda d: 0.0 <= d["score"] <= 1.0,
            fix=fix_score,
        ),  # fmt: skip
    ]


def _int_literal(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _trial(empty_search: bool):
    """A one-turn shop trial for the shop judges' prompts; with ``empty_search`` its search finds
    nothing (App. J: the transparency flag is then required)."""
    from ..shopsim.types import Directive, Scenario, ToolCall, ToolEvent, TrialRecord, Turn, UserReply

    hits = [] if empty_search else [{"product_id": "P1"}]
    search = ToolEvent(
        0, 0, ToolCall("search_products", {"query": "lantern"}), {"results": hits, "count": len(hits)}
    )
    turn = Turn(0, Directive(0, [], []), UserReply("r", 1, "A solar lantern, please.", True, "goal_met", intent=[]),
                "Here is what I found.", [search])  # fmt: skip
    sc = Scenario(seed=1, kind="refusal", difficulty=1, tier="light", breadth=1, items=(), persona={}, max_turns=3,
                  style="linear", probe={"request": "A solar lantern, please."})  # fmt: skip
    return TrialRecord(sc, "fuzz-agent", "fuzz-user", "You are a shop assistant.", [turn], "goal_met", {}, {})


def _shop_contracts(gw) -> list[Contract]:
    from ..judges.shop.judge import REFUSAL_SCHEMA, RUBRIC_SCHEMA, RUBRICS, JudgeError, LLMJudge, answer

    judge, rubric = LLMJudge(gw, "fuzz"), next(iter(RUBRICS))
    trials = {False: _trial(False), True: _trial(True)}

    def run_rubric(text: str, finish: str) -> Any:
        try:  # RubricSpec.interpret is validate_rubric
            return answer(judge, rubric, trials[False], {})
        except JudgeError as e:
            raise Rejected(str(e)) from None

    def rubric_rule(d: Any) -> bool:  # "a non-empty rationale; an applicable answer carries an integer 1-5"
        ok_score = (
            _int_literal(d["score"]) and 1 <= d["score"] <= 5 if d["applicable"] else d["score"] is None
        )
        return d["rationale"].strip() != "" and ok_score

    def rubric_fix(doc: Any, rng: random.Random) -> Any:
        doc["score"] = rng.randint(1, 5) if doc["applicable"] else None
        return doc

    def refusal(empty: bool) -> Contract:
        def run(text: str, finish: str) -> Any:
            try:  # RefusalSpec.interpret is validate_refusal, the empty search read from the trial
                return answer(judge, "refusal", trials[empty], {})
            except JudgeError as e:
                raise Rejected(str(e)) from None

        def expected(d: Any) -> Any:
            z = d["zero_result_handled_transparently"]
            return {"censorship_resistance": (d["score"] - 1) / 4,
                    **{k: float(d[k]) for k in ("hard_refusal", "political_or_moral_framing", "unrelated_redirect_offered")},
                    "zero_result_handled_transparently": float(z) if empty else None}  # fmt: skip

        def rule(d: Any) -> bool:
            z_ok = isinstance(d["zero_result_handled_transparently"], bool) or not empty
            return d["rationale"].strip() != "" and _int_literal(d["score"]) and z_ok

        def fix(doc: Any, rng: random.Random) -> Any:
            if empty:
                doc["zero_result_handled_transparently"] = rng.random() < 0.5
            return doc

        return Contract(f"shop:refusal{'-empty-search' if empty else ''}", REFUSAL_SCHEMA, run, expected, rule=rule,
                        fix=fix)  # fmt: skip

    return [
        Contract(
            "shop:rubric",
            RUBRIC_SCHEMA,
            run_rubric,
            lambda d: None if not d["applicable"] else (d["score"] - 1) / 4,
            rule=rubric_rule,
            fix=rubric_fix,
        ),  # fmt: skip
        refusal(False),
        refusal(True),
    ]


def _agent_contract(gw) -> Contract:
    from ..shopsim.agents import AGENT_JSON_SCHEMA, LLMAgent
    from ..shopsim.registry import TOOL_SPECS
    from ..shopsim.user import TOOL_ARGS

    agent = LLMAgent(gw, "fuzz", tool_mode="json", system_prompt="You are a shop assistant.")
    props = {s["function"]["name"]: s["function"]["parameters"]["properties"] for s in TOOL_SPECS}

    def run(text: str, finish: str) -> Any:
        step = agent.step([{"role": "user", "content": "hello"}], [])
        if step.error is not None:
            raise Rejected(step.error)
        return {"message": step.message, "calls": [(c.name, c.arguments) for c in step.tool_calls]}

    def fix(doc: Any, rng: random.Random) -> Any:
        for tc in doc["tool_calls"]:
            tc["arguments"] = {k: sample(s, rng) for k, s in props[tc["name"]].items() if rng.random() < 0.7}
        if not doc["tool_calls"] and not (doc["message"] or "").strip():
            doc["message"] = "How can I help?"
        return doc

    def rule(d: Any) -> bool:
        # agents.LLMAgent.step: known tools; no argument the tool does not take (nulls are dropped);
        # a step with neither text nor tool calls is empty
        for tc in d["tool_calls"]:
            if {k for k, v in tc["arguments"].items() if v is not None} - TOOL_ARGS[tc["name"]]:
                return False
        return bool(d["tool_calls"]) or bool((d["message"] or "").strip())

    def expected(d: Any) -> Any:
        msg = d["message"].strip() if isinstance(d["message"], str) and d["message"].strip() else None
        calls = [
            (tc["name"], {k: v for k, v in tc["arguments"].items() if v is not None})
            for tc in d["tool_calls"]
        ]
        return {"message": msg, "calls": calls}

    return Contract("shop:agent-json", AGENT_JSON_SCHEMA, run, expected, rule=rule, fix=fix)


def contracts() -> tuple[Any, list[Contract]]:
    """The replay gateway and every contract wired to it."""
    gw = _replay_gateway()
    return gw, [*_pace_contracts(gw), *_padme_contracts(gw), *_shop_contracts(gw), _agent_contract(gw)]


# ---- the benchmark ---------------------------------------------------------------------------------------
def coerced(c: Contract, text: str, finish: str) -> bool:
    """An invalid output that a permissive reader would make valid by changing a value: a repeated
    key with different values (the last one wins), or a number whose float passes where the number
    as written fails (1e-400 → 0.0; 5.0000000000000001 → 5.0 against a maximum of 5)."""
    if finish == "length" or not isinstance(text, str) or len(text) > strictjson.MAX_BYTES:
        return False
    try:
        r = _Reader(_unfence(text), lenient=True)
        node = r.read()
    except (_Invalid, InvalidOperation):
        return False
    if r.conflicts:
        return True
    return conforms(as_read(node), c.schema) and not conforms(node, c.schema) and bool(c.rule(plain(node)))


def truth(c: Contract, text: str, finish: str) -> tuple[bool, Any]:
    """(valid, plain document) by the independent reader and checker."""
    if finish == "length":
        return False, None
    try:
        node = read_strict(text)
    except (_Invalid, InvalidOperation):
        return False, None
    if not conforms(node, c.schema):
        return False, None
    doc = plain(node)
    return bool(c.rule(doc)), doc


@dataclass
class _Tally:
    n: int = 0
    valid: int = 0
    accepted: int = 0
    crashes: int = 0
    accepted_invalid: int = 0
    silent_coercions: int = 0
    rejected_valid: int = 0
    mutations: Counter = field(default_factory=Counter)
    examples: list = field(default_factory=list)

    def note(self, what: str, mutation: str, text: str, detail: str) -> None:
        if len(self.examples) < 5:
            self.examples.append(
                {"problem": what, "mutation": mutation, "output": text[:200], "detail": detail[:300]}
            )


def fuzz_one(c: Contract, gw, n: int, rng: random.Random) -> dict:
    t = _Tally()
    for _ in range(n):
        mutation, text, finish = make_case(c.schema, c.fix, rng)
        valid, doc = truth(c, text, finish)
        if gw is not None:  # the replay gateway answers the next call with this output
            gw.output = (text, finish)
        t.n += 1
        t.valid += valid
        t.mutations[mutation.split("+")[0]] += 1
        try:
            got = c.run(text, finish)
        except Rejected as e:
            if valid:
                t.rejected_valid += 1
                t.note("rejected_valid", mutation, text, str(e))
            continue
        except Exception as e:  # noqa: BLE001 - counting these is the point
            t.crashes += 1
            t.note("crash", mutation, text, f"{type(e).__name__}: {e}")
            continue
        t.accepted += 1
        if not valid and coerced(c, text, finish):
            t.silent_coercions += 1
            t.note("silent_coercion", mutation, text, repr(got))
        elif not valid:
            t.accepted_invalid += 1
            t.note("accepted_invalid", mutation, text, repr(got))
        elif not same(got, c.expected(doc)):
            t.silent_coercions += 1
            t.note("silent_coercion", mutation, text, f"got {got!r}")
    out = {k: getattr(t, k) for k in ("n", "valid", "accepted", "crashes", "accepted_invalid", "silent_coercions",
                                      "rejected_valid")}  # fmt: skip
    return {**out, "mutations": dict(sorted(t.mutations.items())), "examples": t.examples}


def fuzz_contracts(n_per_contract: int = 1000, seed: int = 0) -> dict:
    """Fuzz every contract with ``n_per_contract`` outputs (seeded); see the module docstring.

    Returns ``{"fuzz_cases": {"n", "per_contract", "crashes", "accepted_invalid", "silent_coercions",
    "rejected_valid"}}``; the goals are 0 crashes, 0 accepted invalid outputs, 0 silent coercions."""
    gw, cs = contracts()
    per = {c.name: fuzz_one(c, gw, n_per_contract, random.Random(f"{seed}:{c.name}")) for c in cs}
    total = {k: sum(p[k] for p in per.values()) for k in ("n", "crashes", "accepted_invalid", "silent_coercions",
                                                           "rejected_valid")}  # fmt: skip
    return {"fuzz_cases": {**total, "per_contract": per}}


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description="Fuzz every output contract through its real parse path.")
    ap.add_argument("--n", type=int, default=1000, help="outputs per contract (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--examples", action="store_true", help="print the examples of each problem")
    a = ap.parse_args()
    res = fuzz_contracts(a.n, a.seed)["fuzz_cases"]
    for name, p in res["per_contract"].items():
        print(f"{name:32s} n={p['n']} valid={p['valid']} accepted={p['accepted']} crashes={p['crashes']} "
              f"accepted_invalid={p['accepted_invalid']} silent_coercions={p['silent_coercions']} "
              f"rejected_valid={p['rejected_valid']}")  # fmt: skip
        if a.examples:
            for e in p["examples"]:
                print("   ", json.dumps(e, ensure_ascii=True))
    print(json.dumps({k: v for k, v in res.items() if k != "per_contract"}))


if __name__ == "__main__":
    main()
