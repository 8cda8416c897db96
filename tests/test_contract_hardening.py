"""Issue 12 §1: no model answer can fool or crash a contract, the cache or the call log; a sweep with
a poisoned answer finishes, and so does its rerun."""

import json

import pytest

from shopbench.judges.pace.parse import error_kind
from shopbench.llm import Call, parse_output, register_local
from shopbench.llm.cache import ResponseCache
from shopbench.llm.calllog import CallLog

SCORE = {
    "type": "object",
    "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}, "note": {"type": "string"}},
    "required": ["score"],
    "additionalProperties": False,
}
SURROGATE = "\ud800"


@pytest.mark.parametrize(
    "raw, kind",
    [
        ('{"score": NaN}', "invalid_json"),
        ('{"score": Infinity}', "invalid_json"),
        ('{"score": -Infinity}', "invalid_json"),
        ('{"score": 2, "score": 0.5}', "invalid_json"),  # json would keep the last value, 0.5
        ('{"score": ' + "1" * 5000 + "}", "invalid_json"),  # ValueError in json (4300-digit limit)
        ("[" * 100_000, "invalid_json"),  # RecursionError in json
        ('{"score": 0.5, "note": "\\ud800"}', "invalid_json"),  # escaped lone surrogate
        ('{"score": 0.5, "note": "' + SURROGATE + '"}', "invalid_json"),  # raw lone surrogate
        ('{"score": 0.5, "note": "' + "x" * 3_000_000 + '"}', "invalid_json"),
        ('{"score": 1e999}', "invalid_json"),
        ('{"score": 1.0000000000000000001}', "out_of_range"),  # reads as 1.0, written above 1
        ('{"score": 1e-400}', "contract_violation"),  # reads as 0.0
        ('{"score": 0.5} trailing', "invalid_json"),
        ('{"score": 0.5', "invalid_json"),
        ('{"score": true}', "wrong_type"),
        ('{"score": 1.5}', "out_of_range"),
        ('{"score": 0.5, "extra": 1}', "extra_field"),
        ("{}", "missing_field"),
    ],
)
def test_bad_outputs_are_parse_failures_with_a_reason(raw, kind):
    p = parse_output(raw, SCORE)
    assert not p.ok and p.value is None and p.error
    assert error_kind(p.error) == kind, p.error


@pytest.mark.parametrize("junk", [12, 1.5, b'{"score": 0.5}', {"score": 0.5}, ["x"], object(), True])
def test_non_text_output_never_raises(junk):
    for schema in (SCORE, None):
        p = parse_output(junk, schema)
        assert not p.ok and "not text" in p.error


def test_good_outputs_still_parse():
    assert parse_output('{"score": 0.5}', SCORE).value == {"score": 0.5}
    assert parse_output('```json\n{"score": 1}\n```', SCORE).value == {"score": 1}
    assert (
        parse_output('  {"score": 0, "note": "caf\\u00e9 \\ud83d\\ude00"}\n', SCORE).value["note"]
        == "café 😀"
    )
    assert parse_output("free text \x00 with a NUL", None).value == "free text \x00 with a NUL"


def test_cache_and_call_log_store_any_text(tmp_path):
    texts = [SURROGATE, "a\udfffb", "\\ud800", "nul\x00byte", "x" * 2_000_000, "é😀", "\udc80\ud800"]
    cache = ResponseCache(tmp_path / "cache")
    log = CallLog(tmp_path / "log.jsonl")
    for i, t in enumerate(texts):
        cache.put(f"k{i}", {"raw_output": t})
        log.append([{"item_id": str(i), "key": f"k{i}", "raw_output": t}])
    assert [cache.get(f"k{i}")["raw_output"] for i in range(len(texts))] == texts  # lossless
    assert [r["raw_output"] for r in CallLog(log.path).rows()] == texts
    log.path.read_bytes().decode("utf-8")  # the file itself is valid UTF-8


def _poisoned(kind: str):
    poison = {"escaped": '{"answer": "\\ud800"}', "raw": '{"answer": "x' + SURROGATE + 'y"}'}[kind]

    def backend(messages, params):
        i = int(messages[-1]["content"])
        return poison if i == 37 else json.dumps({"answer": f"a{i}"})

    return backend


ANSWER = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
          "additionalProperties": False}  # fmt: skip


@pytest.mark.parametrize("kind", ["escaped", "raw"])
def test_sweep_with_a_poisoned_answer_finishes_and_reruns(gateway, kind):
    """The issue's drill: 100 calls, one answer holds a lone surrogate. Before: gw.run raised 3 of 3
    times (99 rows logged, none returned), and the cached answer crashed every rerun."""
    register_local(f"poison-{kind}", _poisoned(kind), "answer 37 holds a lone surrogate")
    calls = [Call(f"i{i}", f"local/poison-{kind}", [{"role": "user", "content": str(i)}], schema=ANSWER)
             for i in range(100)]  # fmt: skip
    for _ in range(3):
        rows = gateway().run(calls, "sweep")
        assert len(rows) == 100
        assert [r["status"] for r in rows].count("ok") == 99
        bad = rows[37]
        assert bad["status"] == "parse_error" and "surrogate" in bad["parse_error"]
        assert len(gateway().log("sweep")) == 100  # nothing appended on a rerun of a finished sweep
    again = gateway().run(calls, "rerun")  # the cache-hit path
    assert len(again) == 100 and all(r["cache_hit"] for r in again)
    assert again[37]["status"] == "parse_error"
    for r in again:
        json.dumps(r, ensure_ascii=False).encode("utf-8")  # every row is writable as it is


def test_http_answer_with_surrogate_nul_and_huge_text(server, gateway):
    """A provider's JSON body can hold an escaped lone surrogate: the client then has a raw one."""
    bodies = {  # the model's text; the server sends it JSON-escaped (the surrogate as \ud800)
        "sur": '{"answer": "x' + SURROGATE + 'y"}',
        "nul": '{"answer": "nul \\u0000 here"}',
        "huge": '{"answer": "' + "z" * 300_000 + '"}',
    }

    def script(body):
        content = bodies.get(body["messages"][-1]["content"])
        if content is None:  # the gateway's structured-output negotiation (issue 25): the default reply
            return None
        return {"response": {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": content}}],
                             "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}}  # fmt: skip

    server.script = script
    try:
        calls = [Call(t, "openai/fake", [{"role": "user", "content": t}], api_base=server.api_base, schema=ANSWER)
                 for t in bodies]  # fmt: skip
        for run in ("h1", "h2"):
            rows = gateway().run(calls, run)
            by = {r["item_id"]: r for r in rows}
            assert by["sur"]["status"] == "parse_error" and "surrogate" in by["sur"]["parse_error"]
            assert by["sur"]["raw_output"] == '{"answer": "x\\ud800y"}'  # kept, as its escape
            assert by["nul"]["status"] == "ok" and by["nul"]["parsed"] == {"answer": "nul \x00 here"}
            assert by["huge"]["status"] == "ok" and len(by["huge"]["parsed"]["answer"]) == 300_000
        sent = [b for b in server.bodies if b["messages"][-1]["content"] in bodies]
        assert len(sent) == 3  # the second run was served from the cache
    finally:
        server.script = None


@pytest.mark.parametrize(
    "arguments",
    ['{"query": NaN}', '{"query": "a", "query": "b"}', "[" * 100_000, '{"limit": ' + "9" * 5000 + "}"],
)
def test_native_tool_call_arguments_are_strict(arguments):
    """A function call's ``arguments`` string is model output too: refused with a reason (the agent
    step records it), never a crash of the trial and never the last of two values."""
    from shopbench.shopsim.agents import parse_tool_call

    with pytest.raises(ValueError, match="not JSON"):
        parse_tool_call({"function": {"name": "search_products", "arguments": arguments}}, "c0")
