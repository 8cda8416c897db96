"""The compiled contract check (``shopbench.llm.contract._fast_check``) agrees with jsonschema on every
judge contract and on random documents near them: valid samples and single mutations of them (a key
dropped or added, a type changed, a bound crossed, a string or list too long, a value off its enum).
The gateway trusts it only when it says "valid", so a disagreement there would be a weakened contract."""

from __future__ import annotations

import copy
import random

import pytest
from jsonschema import Draft202012Validator

from shopbench.llm.contract import _fast_check, parse_output
from shopbench.rehearsal.server import sample_from_schema

ODD_VALUES = [None, True, False, 0, 1, -1, 0.5, 1.0, 5.000001, -0.0, 1e300, "", "x" * 900, "GOOD", "NONE", [], ["a"],
              ["a"] * 30, {}, {"k": 1}, 10**20]  # fmt: skip


def _contracts() -> list[dict]:
    from shopbench.judges.pace.protocols import PROTOCOLS

    extra = [
        {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3},
                                          "t": {"type": ["string", "null"], "minLength": 2},
                                          "xs": {"type": "array", "items": {"type": "number"}, "minItems": 1}},
         "required": ["n"], "additionalProperties": {"type": "boolean"}},
        {"type": "object", "properties": {"c": {"const": "yes"}}, "additionalProperties": True},
    ]  # fmt: skip
    return [p.contract for p in PROTOCOLS.values()] + extra


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _mutate(doc, rng: random.Random):
    doc = copy.deepcopy(doc)
    path = rng.choice(list(_paths(doc)))
    if not path:
        return rng.choice(ODD_VALUES)
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    move = rng.random()
    if isinstance(parent, dict) and move < 0.2:
        del parent[last]
    elif isinstance(parent, dict) and move < 0.35:
        parent[f"extra_{rng.randint(0, 9)}"] = rng.choice(ODD_VALUES)
    elif isinstance(parent, list) and move < 0.35:
        parent.extend(parent[:1] * rng.randint(1, 30))
    else:
        parent[last] = rng.choice(ODD_VALUES)
    return doc


@pytest.mark.parametrize("i", range(len(_contracts())))
def test_fast_check_agrees_with_jsonschema(i):
    schema = _contracts()[i]
    fast = _fast_check(schema)
    assert fast is not None  # every judge contract takes the compiled path
    v = Draft202012Validator(schema)
    rng = random.Random(i)
    seen = {True: 0, False: 0}
    for n in range(600):
        doc = sample_from_schema(schema, rng)
        if n % 3:
            doc = _mutate(doc, rng)
        want = v.is_valid(doc)
        assert fast(doc) is want, (doc, want)
        seen[want] += 1
    assert seen[True] > 40 and seen[False] > 40  # both sides exercised


def test_unplain_schemas_are_left_to_jsonschema():
    for schema in ({"type": "string", "pattern": "^a"}, {"anyOf": [{"type": "string"}]},
                   {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {}}},
                   {"enum": [1, "a"]}, {"type": "array", "items": [{"type": "string"}]}):  # fmt: skip
        assert _fast_check(schema) is None
    assert not parse_output('"b"', {"type": "string", "pattern": "^a"}).ok  # still enforced, by jsonschema
    bad = parse_output('{"n": 3}', _contracts()[-2])
    assert not bad.ok and "contract violation at n" in (bad.error or "")  # the message is jsonschema's


@pytest.mark.parametrize(("text", "ok"), [
    ('{"p": 1.0000000000000001}', False), ('{"p": 1e-400}', False), ('{"p": -1e-400}', False),
    ('{"p": 0.5, "q": 0.10000000000000001}', False), ('{"p": 0.5, "r": 5.0000000000000001}', False),
    ('{"p": 0.5}', True), ('{"p": 1}', True), ('{"p": 0.0}', True), ('{"p": -0.0}', True), ('{"p": 1.0}', True),
    ('{"p": 1.00}', True), ('{"p": 1E0}', True), ('{"p": 0.1, "q": 0.1}', True), ('{"p": 0.5, "r": 5.0}', True),
])  # fmt: skip
def test_numbers_are_reread_when_they_could_cross_a_bound(text, ok):
    """The exact re-read is skipped only where it cannot change the answer (a float equal to no bound
    and not zero, or written exactly as the bound): a literal that rounds onto a bound still fails."""
    schema = {"type": "object", "required": ["p"], "properties": {
        "p": {"type": "number", "minimum": 0, "maximum": 1}, "q": {"type": "number", "maximum": 0.1},
        "r": {"type": "number", "minimum": 1, "maximum": 5}}}  # fmt: skip
    assert parse_output(text, schema).ok is ok


def _schema_mutations(schema, rng: random.Random):
    """``schema`` with one keyword value replaced by an odd value (or a keyword added or dropped)."""
    odd = [
        None,
        True,
        False,
        -1,
        0,
        2.5,
        "x",
        "integer",
        "nope",
        [],
        ["a", "a"],
        ["string", "string"],
        {},
        {"type": 1},
    ]
    return _mutate_with(schema, rng, odd)


def _mutate_with(doc, rng, odd):
    doc = copy.deepcopy(doc)
    path = rng.choice(list(_paths(doc))[1:] or [()])
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    if isinstance(parent, dict) and rng.random() < 0.2:
        parent[rng.choice(["minLength", "maxItems", "required", "title", "enum", "type", "items"])] = (
            rng.choice(odd)
        )
    elif path:
        parent[path[-1]] = rng.choice(odd)
    return doc


@pytest.mark.parametrize("i", range(len(_contracts())))
def test_plain_schema_check_never_passes_an_invalid_schema(i):
    """``check_schema`` skips jsonschema only for a plain schema the metaschema accepts (issue 26, Speed):
    on every contract and on mutations of it, a schema :func:`_plain_schema_ok` passes is valid to
    jsonschema, and ``check_schema`` answers exactly as jsonschema's metaschema check does."""
    from shopbench.llm.contract import _plain_schema_ok, check_schema

    schema = _contracts()[i]
    assert _plain_schema_ok(schema)  # every judge contract takes the fast path
    for bad in ({"type": "string", "minLength": -1}, {"type": ["string", "string"]}, {"required": ["a", "a"]},
                {"type": []}, {"title": 3}, {"enum": "a"}, {"maximum": "5"}):  # fmt: skip
        assert not _plain_schema_ok(bad)
        with pytest.raises(ValueError, match="invalid output contract"):
            check_schema(bad)
    rng = random.Random(100 + i)
    seen = {True: 0, False: 0}
    for _ in range(400):
        s = _schema_mutations(schema, rng)
        valid = Draft202012Validator(Draft202012Validator.META_SCHEMA).is_valid(s)
        if _plain_schema_ok(s):
            assert valid, s
        try:
            check_schema(s)
            ours = True
        except ValueError:
            ours = False
        assert ours is valid, s
        seen[valid] += 1
    assert seen[True] > 20 and seen[False] > 20  # both sides exercised
