"""Gateway rows are typed (issue 11 §5): every row ``Gateway.run`` returns, and every call-log row,
has exactly the fields of :class:`shopbench.llm.CallResult` (so mypy's view of a row is the truth)."""

from __future__ import annotations

import json
import typing

from shopbench.llm import Call, CallResult
from shopbench.llm.result import STATUSES, call_usage

FIELDS = set(typing.get_type_hints(CallResult))
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


def test_ok_parse_error_and_error_rows_have_exactly_the_typed_fields(server, gateway):
    gw = gateway(max_retries=0)
    calls = [
        Call("ok", "openai/fake", [{"role": "user", "content": "[[fake:content=%7B%22a%22%3A%22x%22%7D]]"}], api_base=server.api_base,
             schema=SCHEMA),
        Call("bad", "openai/fake", [{"role": "user", "content": "[[fake:malformed]]"}], api_base=server.api_base,
             schema=SCHEMA),
        Call("err", "openai/fake", [{"role": "user", "content": "x [[fake:status=400]]"}],
             api_base=server.api_base),
    ]  # fmt: skip
    rows = gw.run(calls, "typed")
    assert [r["status"] for r in rows] == ["ok", "parse_error", "error"]
    for r in rows:
        assert set(r) == FIELDS, (r["item_id"], set(r) ^ FIELDS)
        assert r["status"] in STATUSES
    logged = [json.loads(line) for line in gw.log_path("typed").read_text().splitlines()]
    assert all(set(r) == FIELDS for r in logged)
    assert call_usage(rows[2]) == {"prompt_tokens": 0.0, "completion_tokens": 0.0, "cost_usd": 0.0}
    assert set(call_usage(rows[0])) == {"prompt_tokens", "completion_tokens", "cost_usd"}
