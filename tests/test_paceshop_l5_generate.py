"""Real assistant outputs for the L5 relaxed-import slice (seed 000, B.4 "(v) a normalized
real-assistant slice of 100 external outputs"; Table 16 "stored with raw originals preserved").

A stand-in model (a local backend) answers through a real gateway: one answer in the loose JSON shape,
one in prose. The outputs go through the project's relaxed importer, which must repair the first and
reject the second with its reason; the model must see the query and persona summary only."""

from __future__ import annotations

import json
import re

import pytest

from shopbench.errors import InputError
from shopbench.llm import Gateway, register_local
from shopbench.paceshop import l5_generate, slices
from shopbench.paceshop.relaxed import load_relaxed, provenance

SEEN: list[str] = []


def _stand_in(messages, params):
    text = messages[-1]["content"]
    SEEN.append(text)
    query = re.search(r"searched for: (.+)$", text, re.M).group(1)
    if len(SEEN) % 2 == 0:
        return f"Sure! For {query} I would look at a few options."  # prose: not the JSON asked for
    cats = ["Top Picks", "Budget Options", "Accessories", "Bundles"]
    return json.dumps(
        {
            "summary": f"For {query}, browse Top Picks and Budget Options.",
            "categories": cats,
            "related_queries": [f"{query} {c.lower()}" for c in cats] + [f"best {query}"],
        }
    )


register_local("test-l5-assistant", _stand_in, "test: a shopping assistant answering in JSON, then in prose")


def test_l5_outputs_from_a_model_go_through_the_relaxed_importer(paceshop_small, tmp_path):
    res = paceshop_small[1]
    items = l5_generate.pick_inputs(res.records, 4, seed=7)
    # the same queries, in the same order, as the L4 slice's shared inputs
    assert [it.assignment_id for it in items] == [it[0] for it, _ in slices.shared_inputs(res, 4, seed=7)]
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    SEEN.clear()
    outs = l5_generate.generate(gw, "local/test-l5-assistant", items, run_id="t/l5")
    assert len(SEEN) == 4
    for it, prompt in zip(items, SEEN, strict=True):
        # the query and the persona summary only: no contract, no evidence, no persona JSON
        assert it.query in prompt and it.persona.context_summary in prompt
        assert "PACEShop" not in prompt and "M:" not in prompt and it.persona.persona_id not in prompt
    assert [o["generator"] for o in outs] == ["local/test-l5-assistant"] * 4
    assert isinstance(outs[0]["response"], dict) and isinstance(outs[1]["response"], str)
    assert outs[1]["raw_output"].startswith("Sure!")  # the raw text is kept verbatim
    path = l5_generate.write(tmp_path / "l5.jsonl", outs, {"generated_by": "local/test-l5-assistant"})
    assert (
        json.loads((tmp_path / "l5.jsonl.meta.json").read_text())["generated_by"] == "local/test-l5-assistant"
    )
    assert provenance(path) == {"generated_by": "local/test-l5-assistant"}
    assert provenance(tmp_path / "no-such.jsonl") is None  # e.g. the project's own fixture
    (tmp_path / "bad.jsonl.meta.json").write_text('{"date": "2026-12-03"}')
    with pytest.raises(InputError, match="generated_by"):
        provenance(tmp_path / "bad.jsonl")
    rep = load_relaxed(path)
    assert [o.output_id for o in rep.imported] == [outs[0]["id"], outs[2]["id"]]
    assert [r["reason"][:37] for r in rep.rejected] == ["response is text, not a JSON object: "] * 2
    assert outs[1]["parse_error"] and outs[0]["parse_error"] is None
    first = rep.imported[0]
    assert (
        "overview read from 'summary'" in first.repairs
        and "bolded 2 categories found in the overview" in first.repairs
    )
    assert first.persona is not None and first.persona.persona_id == items[0].persona.persona_id
    # 2 bold spans for 4 categories: the contract's checks say so, nothing is invented
    assert not first.checks["bold_count"] and not first.checks["bold_category_match"]
