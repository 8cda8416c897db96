"""The τ²-retail tool specs an LLM agent sees are τ²-bench's own (issue 15).

Seed 003 §4: "We rely on its task definitions, agent framework, user simulator, tool sets, and
domain-specific environments" (its: "a variant of the τ³-bench repository"; our copy is τ²-bench's
retail). The tool set an agent is given includes the tools' descriptions.

The fixture ``tests/fixtures/tau2_retail_tool_specs.json`` is ``[t.openai_schema for t in
RetailTools(db).get_tools().values()]`` computed once with tau2-bench's code at the commit it names
(see ``tests/fixtures/tau2_retail_README.md``); no tau2-bench code is in this repository.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from shopbench.domains.tau2_retail.agent import LLMRetailAgent
from shopbench.domains.tau2_retail.specs import (
    SHORT_TOOL_SPECS,
    TAU2_TOOL_SPECS,
    TOOL_NAMES,
    TOOL_SPECS,
    tool_specs,
)
from shopbench.domains.tau2_retail.tools import make_tools

FIXTURE = Path(__file__).parent / "fixtures" / "tau2_retail_tool_specs.json"
TAU2_COMMIT = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"  # the commit of tau2_retail_replay.jsonl


@pytest.fixture(scope="module")
def tau2_schemas() -> dict:
    return json.loads(FIXTURE.read_text())


def test_default_specs_are_tau2_benchs_schemas_byte_for_byte(tau2_schemas):
    assert tau2_schemas["commit"] == TAU2_COMMIT
    assert TOOL_SPECS is TAU2_TOOL_SPECS and tool_specs() is TAU2_TOOL_SPECS
    # same names in the same order, same descriptions, titles, types and required lists, same key order
    assert [s["function"]["name"] for s in TOOL_SPECS] == [
        t["function"]["name"] for t in tau2_schemas["tools"]
    ]
    for ours, theirs in zip(TOOL_SPECS, tau2_schemas["tools"], strict=True):
        assert ours == theirs, ours["function"]["name"]
    assert json.dumps(TOOL_SPECS) == json.dumps(tau2_schemas["tools"])


def test_docstring_texts_reach_the_agent(tau2_schemas):
    """tau2-bench's Tool joins short and long description with a blank line; Args become parameter texts."""
    by_name = {s["function"]["name"]: s["function"] for s in TOOL_SPECS}
    assert by_name["list_all_product_types"]["description"].startswith(
        "List the name and product id of all product types.\n\nEach product type"
    )
    assert "required" not in by_name["list_all_product_types"]["parameters"]
    assert by_name["get_order_details"]["parameters"]["properties"]["order_id"] == {
        "description": "The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning "
        "of the order id.",
        "title": "Order Id",
        "type": "string",
    }
    assert by_name["modify_pending_order_items"]["parameters"]["properties"]["item_ids"]["items"] == {
        "type": "string"
    }


def test_short_texts_are_a_named_option_with_the_same_tools():
    assert tool_specs("short") is SHORT_TOOL_SPECS
    short = {s["function"]["name"]: s["function"]["parameters"] for s in SHORT_TOOL_SPECS}
    full = {s["function"]["name"]: s["function"]["parameters"] for s in TOOL_SPECS}
    assert set(short) == set(full) == set(TOOL_NAMES)
    for name, params in full.items():
        assert list(short[name]["properties"]) == list(params["properties"]), name
        assert short[name]["required"] == params.get("required", []), name
        assert {k: v["type"] for k, v in short[name]["properties"].items()} == {
            k: v["type"] for k, v in params["properties"].items()
        }, name
    with pytest.raises(ValueError, match="tool_texts 'long': use 'tau2'"):
        tool_specs("long")


class _Gateway:
    def __init__(self):
        self.calls = []

    def call(self, backbone, item_id, messages, **kw):
        self.calls.append(SimpleNamespace(messages=messages, **kw))
        return self.calls[-1]

    def run(self, calls, run_id, desc=None):
        return [{"status": "ok", "raw_output": "Hello.", "tool_calls": None, "parsed": {"message": "Hello.",
                 "tool_call": None}, "error": None, "prompt_tokens": 1, "completion_tokens": 1}]  # fmt: skip


def test_the_agent_is_given_tau2_specs_by_default_and_short_ones_on_request():
    msgs = [{"role": "system", "content": "policy"}, {"role": "user", "content": "hi"}]
    gw = _Gateway()
    LLMRetailAgent(gw, "m", "policy", "r", "i").step(msgs)
    assert gw.calls[-1].tools is TAU2_TOOL_SPECS
    LLMRetailAgent(gw, "m", "policy", "r", "i", tool_texts="short").step(msgs)
    assert gw.calls[-1].tools is SHORT_TOOL_SPECS
    LLMRetailAgent(gw, "m", "policy", "r", "i", tool_mode="json").step(msgs)
    assert "Get the inventory details of an item." in gw.calls[-1].messages[0]["content"]
    LLMRetailAgent(gw, "m", "policy", "r", "i", tool_mode="json", tool_texts="short").step(msgs)
    assert "One variant item: options, availability, price." in gw.calls[-1].messages[0]["content"]
    with pytest.raises(ValueError, match="tool_texts"):
        LLMRetailAgent(gw, "m", "policy", "r", "i", tool_texts="tiny")


def test_corrected_argument_check_reads_the_tau2_specs():
    tools = make_tools(_tiny_db(), "corrected")
    assert tools.execute("list_all_product_types", {})[0]
    ok, msg = tools.execute("get_order_details", {})
    assert not ok and msg == "get_order_details: missing argument(s) ['order_id']"


def _tiny_db():
    from shopbench.domains.tau2_retail.data_model import RetailDB

    return RetailDB({"products": {}, "users": {}, "orders": {}})
