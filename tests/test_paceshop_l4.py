"""The L4 cross-generator slice and the ``b9_grammar`` GOOD-generation variant (seed 000, B.4, B.9, Table 16).

B.9: "For each query–persona pair, the generator is invoked once with a constrained JSON contract. The
prompt enforces the four-field response schema [...], the cardinality and length budgets used in
main-text §3.2 [...] candidates that fail hard schema, evidence-ID, or XML round-trip checks are
rejected." A stand-in model (a local backend, no llama.cpp) answers through a real gateway; llama.cpp's
own grammar converter and parser are used when they are installed and skipped cleanly otherwise.
"""

from __future__ import annotations

import json
import re

import pytest

from shopbench.llm import Gateway, register_local
from shopbench.llm.contract import parse_output
from shopbench.paceshop import slices
from shopbench.paceshop.checks import run_checks
from shopbench.paceshop.generate import (
    GRAMMAR_MAX_TOKENS,
    LABELS_FIRST_ORDER,
    LOCAL_MAX_TOKENS,
    OVERVIEW_PATTERN,
    RESPONSE_KEYS,
    RESPONSE_SCHEMA,
    LLMGenerator,
    grammar_schema,
    load_prompt_text,
    overview_pattern,
)

SEEN_SCHEMAS: dict[str, dict] = {}  # assignment id -> the JSON schema the stand-in model was sent
BAD_AIDS: dict[str, str] = {}  # assignment id -> how the stand-in model answers it ("mismatch", "foreign-id")


@pytest.fixture(scope="module")
def built(paceshop_small):
    return paceshop_small[1]


def _goods_by_aid(res):
    return {g.assignment_id: g for g in res.by_kind("good")}


GOODS: dict = {}


def _stand_in(messages, params):
    """A model that answers the B.9 prompt with the build's own GOOD for that assignment (schema-valid
    under both variants), or, for the assignments in BAD_AIDS, a grammar-valid answer that a hard check
    rejects ("mismatch": the category list differs from the bold spans) or one with an evidence id from
    another pool ("foreign-id", which the b9_grammar contract itself refuses)."""
    aid = re.search(r"^Assignment: (.+)$", messages[-1]["content"], re.M).group(1)
    SEEN_SCHEMAS[aid] = params["response_format"]["json_schema"]["schema"]
    r = GOODS[aid].response.model_dump()
    if BAD_AIDS.get(aid) == "mismatch":
        r["productCategoryList"] = [*r["productCategoryList"][1:], r["productCategoryList"][0]]
    elif BAD_AIDS.get(aid) == "foreign-id":
        r["attribution_list"] = ["M:NOTINPOOL:0"]
    return json.dumps(r)


register_local(
    "test-l4-stand-in", _stand_in, "test: answers the B.9 prompt with the build's GOOD, or a rejected one"
)


def test_b9_grammar_sends_the_verbatim_b9_prompt_with_the_budgets_as_a_grammar(built, tmp_path):
    item, good = slices.shared_inputs(built, 1, seed=7)[0]
    pool_ids = [s.evidence_id for s in item[3].snippets]
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    plain = LLMGenerator(gw, "llamacpp/qwen2.5-coder-1.5b-instruct", load_prompt_text())
    bounded = LLMGenerator(
        gw, "llamacpp/qwen2.5-coder-1.5b-instruct", load_prompt_text(), variant="b9_grammar"
    )
    (cp,), (cb,) = plain.calls([item]), bounded.calls([item])
    # the prompt is B.9's, verbatim, in both variants; only the contract and the output cap differ
    assert cp.messages == cb.messages and cb.messages[0]["content"].startswith(
        "You are generating a PACEShop V2"
    )
    assert cp.schema is RESPONSE_SCHEMA and cp.params == {"temperature": 0, "max_tokens": LOCAL_MAX_TOKENS}
    assert cb.params == {"temperature": 0, "max_tokens": GRAMMAR_MAX_TOKENS}
    s = cb.schema
    assert s == grammar_schema(item[3]) and len(s["anyOf"]) == 2  # one alternative per category count
    for n, alt in zip((4, 5), s["anyOf"], strict=True):
        assert list(alt["properties"]) == list(RESPONSE_KEYS) and alt["required"] == list(RESPONSE_KEYS)
        p = alt["properties"]
        assert p["overview_text"]["pattern"] == overview_pattern(n)
        for key in ("bold_categories", "productCategoryList", "category_search_queries"):
            assert (p[key]["minItems"], p[key]["maxItems"]) == (n, n), key
        for key in ("bold_categories", "productCategoryList"):
            assert p[key]["items"]["maxLength"] == 15 and "*" in p[key]["items"]["pattern"]
        assert (p["rqList"]["minItems"], p["rqList"]["maxItems"]) == (5, 5)
        assert p["attribution_list"]["items"]["enum"] == pool_ids and p["attribution_list"]["minItems"] == 1
    # the build's GOOD meets the bounded contract; broken budgets, mismatched counts and foreign ids do not
    r = good.response.model_dump()
    assert parse_output(json.dumps(r), s).ok
    cases = {
        "3 bold spans": {**r, "overview_text": "For you: **A**, **B**, and **C**."},
        "a 16-char label": {**r, "productCategoryList": ["A label of 16 ch", *r["productCategoryList"][1:]]},
        "4 refinements": {**r, "rqList": r["rqList"][:4]},
        "one search query fewer than labels": {
            **r,
            "category_search_queries": r["category_search_queries"][:-1],
        },
        "an id from another pool": {**r, "attribution_list": ["M:NOTINPOOL:0"]},
    }
    for what, bad in cases.items():
        out = parse_output(json.dumps(bad), s)
        assert not out.ok and out.error.startswith("contract violation"), (what, out.error)
        # the plain contract leaves them to the checks
        assert parse_output(json.dumps(bad), RESPONSE_SCHEMA).ok
    with pytest.raises(ValueError, match="unknown GOOD-generation variant"):
        LLMGenerator(gw, "local/echo", "x", variant="b9-short")


def test_labels_first_reorders_the_grammar_and_appends_one_sentence_of_ours(built, tmp_path):
    """``b9_grammar_labels_first``: the same bounds and checks as ``b9_grammar``, the labels and search
    queries before the overview in the grammar, B.9's prompt verbatim followed by our one-sentence note;
    the answer parses to the same record (keys in any order) and faces the same acceptance rule."""
    from shopbench.prompts import load_prompt

    items = [it for it, _ in slices.shared_inputs(built, 2, seed=7)]
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    bounded = LLMGenerator(gw, "local/test-l4-stand-in", load_prompt_text(), variant="b9_grammar")
    first = LLMGenerator(gw, "local/test-l4-stand-in", load_prompt_text(), variant="b9_grammar_labels_first")
    (cb, _), (cf, _) = bounded.calls(items), first.calls(items)
    note = load_prompt("paceshop_good_generation_labels_first").strip()
    assert note.startswith("Write the category labels first") and "\n" not in note  # one sentence
    b9_text, text = cb.messages[0]["content"], cf.messages[0]["content"]
    assert text.startswith(b9_text.rstrip()) and text.rstrip().endswith(note) and b9_text.count(note) == 0
    assert cf.params == cb.params == {"temperature": 0, "max_tokens": GRAMMAR_MAX_TOKENS}
    assert list(LABELS_FIRST_ORDER[:3]) == [
        "productCategoryList",
        "bold_categories",
        "category_search_queries",
    ]
    for alt_b, alt_f in zip(cb.schema["anyOf"], cf.schema["anyOf"], strict=True):
        assert list(alt_f["properties"]) == list(LABELS_FIRST_ORDER) == alt_f["required"]
        assert alt_f["properties"] == alt_b["properties"]  # the same bounds, another order
    with pytest.raises(ValueError, match="six keys"):
        grammar_schema(items[0][3], RESPONSE_KEYS[:5])
    # the stand-in answers with the build's GOOD (keys in the model's order) or a mismatched one
    for aid, _, _, _ in items:
        GOODS[aid] = _goods_by_aid(built)[aid]
    BAD_AIDS[items[1][0]] = "mismatch"
    try:
        out = first.run(items, run_id="t/labels_first")
    finally:
        BAD_AIDS.pop(items[1][0])
    (resp, used, why), (bad, _, reason) = out
    assert why is None and resp == GOODS[items[0][0]].response and used == list(resp.attribution_list)
    assert bad is None and "bold_category_match" in reason
    assert list(SEEN_SCHEMAS[items[0][0]]["anyOf"][0]["properties"]) == list(LABELS_FIRST_ORDER)


def test_overview_pattern_is_b9_bold_budget():
    ok = "For hiking boots on your tight budget, compare **Hiking Boots**, **Trail Shoes**, **Wool Socks**, and **Gaiters**."
    assert re.search(OVERVIEW_PATTERN, ok) and re.search(overview_pattern(4), ok)
    assert not re.search(overview_pattern(5), ok)
    for bad in ("**A**, **B**, **C**.",  # 3 bold spans
                "**A**, **B**, **C**, **D**, **E**, **F**.",  # 6
                "Try **A 16-char label!**, **B**, **C**, **D**.",  # a label over 15 characters
                "Try **A**, **B**, **C**, **D** and a stray * marker.",
                'Try **A**, **B**, **C**, **D** in 26" size.'):  # fmt: skip
        assert not re.search(OVERVIEW_PATTERN, bad), bad


def test_llama_cpp_compiles_the_grammar(built):
    """llama.cpp's JSON-schema converter and grammar parser accept the contract (its parser refuses
    repetitions of ~1,000 or more); skipped when llama-cpp-python or SmolLM2 is not installed."""
    from shopbench.llm.llamacpp import registry, runtime

    if not runtime.llama_cpp_available() or not registry.is_installed("smollm2-135m-instruct"):
        pytest.skip("llama-cpp-python or the SmolLM2 model is not installed (make local-llm)")
    import llama_cpp
    from llama_cpp.llama_grammar import SchemaConverter

    item, _ = slices.shared_inputs(built, 1, seed=7)[0]
    conv = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    conv.visit(runtime.grammar_schema(grammar_schema(item[3])), "")
    gbnf = conv.format_grammar()
    assert all(f'"\\"{s.evidence_id}\\""' in gbnf for s in item[3].snippets)
    vocab_only = llama_cpp.Llama(model_path=str(registry.model_path("smollm2-135m-instruct")), vocab_only=True,
                                 verbose=False)  # fmt: skip
    sampler = llama_cpp.llama_cpp.llama_sampler_init_grammar(vocab_only._model.vocab, gbnf.encode(), b"root")
    assert sampler  # NULL when llama.cpp's parser refuses the grammar
    llama_cpp.llama_cpp.llama_sampler_free(sampler)
    vocab_only.close()


def test_cross_generator_slice_counts_accepted_and_rejected(built, tmp_path):
    inputs = slices.shared_inputs(built, 6, seed=7)
    assert [it[0] for it, _ in slices.shared_inputs(built, 3, seed=7)] == [it[0] for it, _ in inputs[:3]]
    GOODS.update(_goods_by_aid(built))
    aids = [it[0] for it, _ in inputs]
    BAD_AIDS.clear()
    BAD_AIDS.update({aids[1]: "mismatch", aids[4]: "foreign-id"})
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    gens = ["local/test-l4-stand-in",  # the paper's variant on l4_inputs (3)
            {"backbone": "local/test-l4-stand-in", "variant": "b9_grammar", "inputs": 6}]  # fmt: skip
    rows = slices.cross_generator_slice(built, gens, gw, load_prompt_text(), 3, seed=7)
    build_rows = rows[rows["variant"] == "build"]
    # the build generator's rows: the largest count, in draw order
    assert list(build_rows["input"]) == aids and build_rows["accepted"].all()
    b9 = rows[rows["variant"] == "b9"].set_index("input")
    gr = rows[rows["variant"] == "b9_grammar"].set_index("input")
    assert list(b9.index) == aids[:3] and list(gr.index) == aids
    assert list(gr["accepted"]) == [True, False, True, True, False, True]
    assert gr.loc[aids[1], "reason"].startswith("failed hard checks: bold_category_match")
    assert gr.loc[aids[4], "reason"].startswith("contract parse failure: contract violation")
    assert "M:NOTINPOOL:0" in gr.loc[aids[4], "reason"]
    assert list(b9["accepted"]) == [True, False, True]
    for aid in aids:  # each call got its own pool's ids; the plain variant's calls the plain contract
        pool_ids = [s.evidence_id for s in built.pools[GOODS[aid].query_id].snippets]
        for alt in SEEN_SCHEMAS[aid]["anyOf"]:
            assert alt["properties"]["attribution_list"]["items"]["enum"] == pool_ids
    accepted = gr[gr["accepted"]]
    assert (accepted["category_overlap_with_build"] == 1.0).all() and accepted["all_12"].all()
    assert accepted["seconds"].notna().all() and (accepted["seconds"] >= 0).all()
    summary = slices.cross_generator_summary(rows)
    row = summary[summary["variant"] == "b9_grammar"].iloc[0]
    assert (row["inputs"], row["accepted"]) == (6, round(4 / 6, 3))
    assert summary[summary["variant"] == "b9"].iloc[0]["accepted"] == round(2 / 3, 3)
    assert summary[summary["variant"] == "build"].iloc[0]["accepted"] == 1.0
    # the stand-in's accepted answers are the build's GOODs: every check passes on them
    for aid in accepted.index:
        g = GOODS[aid]
        assert all(run_checks(g.response, [s.evidence_id for s in built.pools[g.query_id].snippets],
                              g.response.attribution_list).values())  # fmt: skip
    # a rerun is served by the cache: the same rows
    again = slices.cross_generator_slice(built, gens, gw, load_prompt_text(), 3, seed=7)
    assert list(again["accepted"]) == list(rows["accepted"])
    with pytest.raises(ValueError, match="unknown variant"):
        slices.l4_generators([{"backbone": "x", "variant": "b10"}])


def test_profile_accepts_l4_generator_entries():
    from shopbench.profiles import PaceshopParams

    p = PaceshopParams.model_validate({"l4_generators": ["local/schema-sampler",
                                       {"backbone": "llamacpp/qwen2.5-coder-1.5b-instruct", "variant": "b9_grammar", "inputs": 12}]})  # fmt: skip
    specs = slices.l4_generators(p.given()["l4_generators"])
    assert specs == [slices.L4Generator("local/schema-sampler"),
                     slices.L4Generator("llamacpp/qwen2.5-coder-1.5b-instruct", "b9_grammar", 12)]  # fmt: skip
    with pytest.raises(Exception, match="variant"):
        PaceshopParams.model_validate({"l4_generators": [{"backbone": "x", "variant": "short"}]})
