"""Issue 12 §6 fuzz_cases: every contract's real parse path against fuzzed outputs, and the
benchmark's own ground truth (an independent strict reader) checked against known cases."""

import json
import random

import pytest
from jsonschema import Draft202012Validator

from shopbench import strictjson
from shopbench.benchmarks import fuzz
from shopbench.judges.pace.protocols import PROTOCOLS


def test_every_contract_survives_fuzzing():
    res = fuzz.fuzz_contracts(n_per_contract=60, seed=3)["fuzz_cases"]
    names = set(res["per_contract"])
    assert {f"pace:{p}" for p in PROTOCOLS} <= names
    assert {"padme:filter", "padme:evaluator", "shop:rubric", "shop:refusal", "shop:agent-json"} <= names
    assert res["n"] == 60 * len(names)
    assert (res["crashes"], res["accepted_invalid"], res["silent_coercions"]) == (0, 0, 0), res
    for name, p in res["per_contract"].items():
        assert 0 < p["valid"] < p["n"], name  # both kinds were generated
        assert p["accepted"] == p["valid"] - p["rejected_valid"], name


@pytest.mark.parametrize(
    "text, valid",
    [
        ('{"a": 1}', True), (' ```json\n{"a": [1, 2.5e-3, -0]}\n``` ', True), ('"\\ud83d\\ude00"', True),
        ('{"a": 1, "a": 1}', False), ("NaN", False), ("[Infinity]", False), ('"\\ud800"', False),
        ('"\ud800"', False), ('"a\x01"', False), ("1" * 101, False), ("1" * 100, True), ("1e999", False),
        ("[" * 64 + "]" * 64, True), ("[" * 65 + "]" * 65, False), ("01", False), ("1.", False),
        ('{"a": 1} x', False), ("", False), ("\ufeff{}", False), ("{'a': 1}", False), ('{"a": 1,}', False),
    ],
)  # fmt: skip
def test_ground_truth_reader_matches_the_strict_rules(text, valid):
    try:
        fuzz.read_strict(text)
        got = True
    except fuzz._Invalid:
        got = False
    assert got == valid
    fenced = text.strip().removeprefix("```json").removesuffix("```").strip()
    try:
        strictjson.loads(fenced)
        assert valid
    except strictjson.StrictJSONError:
        assert not valid


def test_ground_truth_schema_check_compares_numbers_as_written():
    schema = {"type": "object", "properties": {"p": {"type": "number", "minimum": 0, "maximum": 1}},
              "required": ["p"], "additionalProperties": False}  # fmt: skip
    ok = lambda t: fuzz.conforms(fuzz.read_strict(t), schema)  # noqa: E731
    assert ok('{"p": 1}') and ok('{"p": 0.0}') and ok('{"p": 1E-5}')
    assert not ok('{"p": 1.0000000000000000001}') and not ok('{"p": 1e-400}') and not ok('{"p": true}')
    assert not ok('{"p": 0.5, "q": 1}') and not ok("{}")


def test_the_benchmark_catches_a_lenient_parser():
    """The parse path before issue 12 (json.loads + jsonschema): the benchmark must count it."""
    schema = PROTOCOLS["pacejudge"].contract

    def lenient(text, finish):
        if finish == "length":
            raise fuzz.Rejected("truncated")
        try:
            value = json.loads(fuzz._unfence(text))
        except json.JSONDecodeError as e:
            raise fuzz.Rejected(str(e)) from None
        if any(Draft202012Validator(schema).iter_errors(value)):
            raise fuzz.Rejected("contract")
        return value

    c = fuzz.Contract("lenient", schema, lenient, expected=lambda d: d)
    res = fuzz.fuzz_one(c, None, 400, random.Random(0))
    assert res["crashes"] > 0 and res["accepted_invalid"] > 0 and res["silent_coercions"] > 0, res
