"""The one judge role (shopbench.judges): spec steps, outcomes, registry, prompt loader, renderer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import SimpleNamespace as NS

import pytest

from shopbench import judges as J
from shopbench.judges import Invalid, JudgeSpec, Judgment, ModelJudge, ParseFailure, render

MESSAGES = [
    {"role": "system", "content": "S <behaviour>x</behaviour>"},
    {"role": "user", "content": " Hi  there "},
    {
        "role": "assistant",
        "content": "Sure",
        "tool_calls": [{"function": {"name": "find", "arguments": '{"q": "x"}'}}],
    },
    {"role": "tool", "name": "find", "content": "r1\n r2"},
    {"role": "assistant", "content": None, "tool_calls": [{"name": "buy", "arguments": {"id": 1}}]},
    {"role": "tool", "content": [{"type": "text", "text": "ok"}]},
    {"role": "assistant", "content": "Done"},
]
SHOP = NS(turns=[
    NS(index=0, user=NS(message="Need socks"), agent_message="Found S1", agent_error=None,
       events=[NS(call=NS(name="search_products", arguments={"query": "socks"}), result={"hits": ["S1"]})]),
    NS(index=1, user=NS(message="Buy"), events=[], agent_message="", agent_error="boom"),
])  # fmt: skip


# ---- the renderer ------------------------------------------------------------------------------
def test_pair_style_is_the_h4_text():
    assert render(MESSAGES, "pair") == "\n\n".join([
        "User: Hi  there", "Assistant: Sure", 'Assistant calls tool find({"q": "x"})', "Tool result (find): r1\n r2",
        'Assistant calls tool buy({"id": 1})', "Tool result (tool): ok", "Assistant: Done",
    ])  # fmt: skip
    assert render([], "pair") == "(empty trajectory)"
    long = [{"role": "tool", "name": "t", "content": "x" * 12}]
    assert render(long, "pair", max_chars=5) == "Tool result (t): xxxxx […7 more characters]"


def test_numbered_style_is_the_h5_text():
    assert render(NS(messages=MESSAGES), "numbered") == "\n".join([
        "[1] Customer: Hi  there", "[2] Agent: Sure", '    Agent calls find(q="x")', "    Tool result -> r1 r2",
        "[3] Agent calls buy(id=1)", "    Tool result -> ok", "[4] Agent: Done",
    ])  # fmt: skip
    assert (
        render([{"role": "tool", "content": "a  b c"}], "numbered", max_chars=3)
        == "    Tool result -> a b… [2 more chars]"
    )
    with pytest.raises(ValueError, match="rollout r9: message with unknown role 'developer'"):
        render([{"role": "developer", "content": "x"}], "numbered", where="rollout r9")


def test_turns_style_reads_the_shop_record_and_pair_style_reads_it_too():
    assert render(SHOP, "turns") == "\n".join([
        "[turn 0] CUSTOMER: Need socks", '[turn 0] TOOL search_products({"query": "socks"}) -> {"hits": ["S1"]}',
        "[turn 0] ASSISTANT: Found S1", "[turn 1] CUSTOMER: Buy", "[turn 1] ASSISTANT ERROR: boom",
    ])  # fmt: skip
    assert "TOOL" not in render(SHOP, "turns", tools=False)
    assert render(SHOP, "turns", max_chars=10).count('{"hits"...') == 1
    # one walk over both records: the shop's paired tool log renders in the H.4 style as well
    assert render(SHOP, "pair").split("\n\n")[:3] == [
        "User: Need socks", 'Assistant calls tool search_products({"query": "socks"})',
        'Tool result (search_products): {"hits": ["S1"]}']  # fmt: skip
    only = render(SHOP, "turns", only=lambda s: s.role == "assistant" and bool(s.text.strip()))
    assert only == "[turn 0] ASSISTANT: Found S1"
    with pytest.raises(ValueError, match="unknown render style"):
        render(SHOP, "prose")
    with pytest.raises(TypeError, match="neither messages nor turns"):
        J.steps(42)


# ---- a spec's steps ------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class EvenSpec(JudgeSpec[int, int]):
    """A test judge: asked about a number, answers {"n": int}; an odd answer breaks its rule."""

    def item_id(self, item: int) -> str:
        return f"n{item}"

    def slots(self, item: int) -> dict:
        return {"transcript": str(item)}

    def interpret(self, value, item):
        if value["n"] % 2:
            raise Invalid(f"{value['n']} is odd")
        return value["n"]


SPEC = EvenSpec(name="test_even", prompt="shopsim_judge_intent_understanding",
                contract={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})  # fmt: skip


def test_parse_outcomes_are_typed_and_carry_the_stage():
    ok = SPEC.parse({"item_id": "n1", "raw_output": '{"n": 4}', "status": "ok", "cost_usd": 0.5}, 1)
    assert ok == Judgment("test_even", "n1", 4, '{"n": 4}', usage={"cost_usd": 0.5}) and ok.ok
    odd = SPEC.parse({"raw_output": '{"n": 3}'}, 1)
    assert isinstance(odd, ParseFailure) and (odd.stage, odd.reason, odd.parsed) == (
        "rule",
        "3 is odd",
        {"n": 3},
    )
    bad = SPEC.parse({"raw_output": "{n"}, 1)
    assert (bad.stage, bad.kind) == ("contract", "invalid_json") and not bad.ok
    typed = SPEC.parse({"raw_output": '{"n": "4"}'}, 1)
    assert typed.kind == "wrong_type"
    cut = SPEC.parse({"raw_output": '{"n": 4', "finish_reason": "length"}, 1)
    assert cut.kind == "truncated"
    err = SPEC.parse({"status": "error", "error": "Timeout"}, 1)
    assert err.call_error and err.kind == "call_error" and err.reason == "call error: Timeout"


def test_render_fills_the_prompt_file_once():
    (msg,) = SPEC.render(7)
    assert msg["role"] == "user" and "\n7\n" in msg["content"] and "{transcript}" not in msg["content"]
    assert not msg["content"].startswith("#")  # header comments stripped
    assert SPEC.render(7, "say {transcript} {{x}}") == [{"role": "user", "content": "say 7 {x}"}]
    assert SPEC.params() == {"max_tokens": 1024, "temperature": 0}
    assert SPEC.params(50, temperature=None, seed=3) == {"max_tokens": 50, "seed": 3}


def test_model_judge_asks_all_items_in_one_gateway_run(tmp_path):
    from shopbench.llm import Gateway, parse_backbones

    gw = Gateway(cache_dir=tmp_path / "c", log_dir=tmp_path / "l", progress=False, backoff_s=0.01,
                 backbones=parse_backbones(["local/schema-sampler"]))  # fmt: skip
    mj = ModelJudge(SPEC, gw, "local/schema-sampler", run_id="even")
    assert isinstance(mj, J.Judge) and mj.name == "local/schema-sampler"
    out = mj.judge([1, 2, 3])
    log = gw.log("even")
    assert len(out) == 3 and sorted(log.item_id) == ["n1", "n2", "n3"]
    for o in out:  # random integers: even ones are judgments, odd ones rule failures; nothing else
        assert (o.ok and o.value % 2 == 0) or (o.stage == "rule" and o.reason.endswith("is odd"))
    # an unconfigured name is a litellm model name, as for every judge
    call = SPEC.call(gw, "local/echo", 5)
    assert call.model == "local/echo" and call.schema_name == "output" and call.item_id == "n5"


# ---- registry and prompt loader ---------------------------------------------------------------
def test_every_judge_family_is_registered_and_its_prompt_loads():
    names = J.judge_names()
    for name in ("pacejudge", "ares", "etapp", "padme_filter", "padme_evaluator", "shopsim_refusal",
                 "shopsim_toolcalls", "shopsim_claims", "shopsim_attributes", "shopsim_clarification",
                 "tau2_nl_assertions"):  # fmt: skip
        assert name in names
    for name in names:
        spec = J.get_judge(name)
        assert isinstance(spec, JudgeSpec) and spec.template().text.strip() and spec.schema_name
    with pytest.raises(KeyError, match="unknown judge 'nope'; known: .*pacejudge"):
        J.get_judge("nope")
    with pytest.raises(ValueError, match="already registered"):
        J.registry.register(EvenSpec(name="pacejudge", prompt="x", contract=None))


def test_prompt_loader_strips_headers_rereads_changes_and_records_provenance(tmp_path, monkeypatch):
    from shopbench.prompts import PROMPTS_ENV, load_template

    monkeypatch.setenv(PROMPTS_ENV, str(tmp_path))
    f = tmp_path / "mine.txt"
    f.write_text("# provenance\n\nHello {x}\n", encoding="utf-8")
    p = load_template("mine")
    assert p.text == "Hello {x}\n" and len(p.sha256) == 64
    f.write_text("# provenance\n\nBye {x}!\n", encoding="utf-8")
    assert load_template("mine").text == "Bye {x}!\n"
    with pytest.raises(FileNotFoundError, match="prompts/absent.txt"):
        load_template("absent")

    class Ctx:
        used: dict = {}

        def prompt(self, name):
            from shopbench.prompts import Prompt

            self.used[name] = "sha"
            return Prompt(name, f.read_text(encoding="utf-8"), "sha")

    ctx = Ctx()
    assert load_template("mine", ctx).text == "Bye {x}!\n" and ctx.used == {"mine": "sha"}
    assert json.loads(json.dumps(J.ERROR_KINDS))[0] == "call_error"
