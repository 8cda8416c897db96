"""The prefix-first PACEJudge variant and what the reorder costs (issue 13 §3; seed 000 App. D.4)."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from shopbench.benchmarks import local_llm as B
from shopbench.judges.pace import protocols as P
from shopbench.judges.pace.sweep import RUN_COLUMNS, sweep
from shopbench.judges.pace.variants import AGREEMENT_COLUMNS, variant_agreement
from shopbench.llm import Gateway
from shopbench.paceshop.build import build

V = "pacejudge_prefix_first"


@pytest.fixture(scope="module")
def records(paceshop_config):
    cfg = paceshop_config(seed=5, n_products=300, n_candidate_queries=120, n_queries=10, n_personas=30,
                          n_holdout=10, test_goods=8, dev_goods=4, swap_slice=4, s0_per_label=2, calibration_good=2,
                          calibration_bad_per_family=1)  # fmt: skip
    res = build(cfg, progress=False)
    return [r for r in res.records if r.split == "test"][:12]


# ---- the prompt --------------------------------------------------------------------------------
def test_variant_has_the_same_slots_and_lines_as_pacejudge(records):
    assert P.get_protocol(V).contract == P.PACE_CONTRACT and P.get_protocol(V).targets == P.ALL_TARGETS
    assert set(P.slot_names(V)) == set(P.slot_names("pacejudge"))
    for r in records[:3]:
        a, b = P.messages("pacejudge", r)[0]["content"], P.messages(V, r)[0]["content"]
        assert a != b and sorted(a.splitlines()) == sorted(b.splitlines())  # same content, reordered
        proto, slots = P.extract_bundle(P.messages(V, r))
        assert proto.name == V and slots == {k: P.slots(V, r)[k] for k in P.slot_names(V)}


def test_variant_puts_every_fixed_part_before_the_record():
    names = P.slot_names(V)
    first_record_slot = min(names.index(s) for s in P.BUNDLE_SLOTS)
    assert set(names[:first_record_slot]) == {"allowed_defect_labels", "allowed_location_labels",
                                              "prompt_contract_json"}  # fmt: skip
    text = P.template(V).text
    head = text[: text.index("{record_id}")]
    for fixed in (
        "Decision rules",
        "Mark GOOD only when",
        "Return JSON only with this schema:",
        "You are LLMaJ",
    ):
        assert fixed in head
    d4 = P.template("pacejudge").text
    assert "Decision rules" not in d4[: d4.index("{record_id}")]  # the paper's order is untouched


def test_variant_shares_a_longer_prefix_between_records(records):
    def shared(protocol):
        texts = [P.messages(protocol, r)[0]["content"] for r in records]
        return B.prefix_shared_fraction([list(t) for t in texts])  # characters stand in for tokens

    assert shared(V) > 2 * shared("pacejudge")
    contract = P.messages(V, records[0])[0]["content"].split("Return JSON only with this schema:\n", 1)[1]
    assert contract.startswith(P._dumps(P.PACE_CONTRACT) + "\n\nInput bundle\n")


def test_prompt_header_documents_the_reorder():
    from shopbench.prompts import PROMPTS_DIR

    header = [ln for ln in (PROMPTS_DIR / f"judge_{V}.txt").read_text().splitlines() if ln.startswith("#")]
    text = " ".join(header)
    assert "Appendix D.4" in text and "seed 000" in text and "judge_pacejudge.txt" in text
    assert "same on every record" in text


# ---- agreement ---------------------------------------------------------------------------------
def _row(protocol, backbone, rid, verdict, fam, loc, label, ok=True, repeat=0):
    d = dict.fromkeys(RUN_COLUMNS)
    d.update(protocol=protocol, backbone=backbone, record_id=rid, repeat=repeat, verdict=verdict, defect_family=fam,
             defect_location=loc, label=label, parse_ok=ok)  # fmt: skip
    return d


def test_variant_agreement_on_a_synthetic_run_table():
    base, var = "pacejudge", V
    rows = [
        # r1: agree fully (GOOD / NONE / NONE)
        _row(base, "m", "r1", "GOOD", "NONE", "NONE", "GOOD"), _row(var, "m", "r1", "GOOD", "NONE", "NONE", "GOOD"),
        # r2: same verdict and family, different location
        _row(base, "m", "r2", "BAD", "REDUNDANCY", "rqList", "BAD"),
        _row(var, "m", "r2", "BAD", "REDUNDANCY", "overview_text", "BAD"),
        # r3: verdict flips (the variant is right)
        _row(base, "m", "r3", "GOOD", "NONE", "NONE", "BAD"),
        _row(var, "m", "r3", "BAD", "PREF_CONFLICT", "overview_text", "BAD"),
        # r4: the variant failed to parse -> unpaired
        _row(base, "m", "r4", "BAD", "REDUNDANCY", "rqList", "BAD"), _row(var, "m", "r4", None, None, None, "BAD", ok=False),
        # another backbone, another protocol: ignored by the pairing
        _row(base, "n", "r1", "BAD", "REDUNDANCY", "rqList", "GOOD"), _row("geval", "n", "r1", "BAD", "NONE", "NONE", "GOOD"),
    ]  # fmt: skip
    out = variant_agreement(pd.DataFrame(rows, columns=list(RUN_COLUMNS)))
    assert list(out.columns) == list(AGREEMENT_COLUMNS)
    m = out.set_index("backbone").loc["m"]
    assert (m.n_base, m.n_variant, m.n_pairs, m.n_unpaired) == (4, 3, 3, 1)
    assert m.verdict_agreement == pytest.approx(2 / 3)
    assert m.family_agreement == pytest.approx(2 / 3)
    assert m.location_agreement == pytest.approx(1 / 3)
    assert m.full_agreement == pytest.approx(1 / 3)
    assert m.base_verdict_accuracy == pytest.approx(2 / 3) and m.variant_verdict_accuracy == 1.0
    n = out.set_index("backbone").loc["n"]
    assert n.n_pairs == 0 and pd.isna(n.verdict_agreement)


def test_variant_agreement_rejects_a_table_without_its_columns():
    with pytest.raises(ValueError, match="lacks column"):
        variant_agreement(pd.DataFrame({"protocol": ["pacejudge"]}))


def test_deterministic_judges_answer_both_variants_alike(records, tmp_path):
    """A judge that reads only the slots (local/checks, local/oracle-rules) must not care about their order."""
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    runs = sweep(gw, ["pacejudge", V], ["local/checks", "local/oracle-rules"], records, run_id="variants")
    assert runs["parse_ok"].all()
    out = variant_agreement(runs).set_index("backbone")
    assert (out["n_pairs"] == len(records)).all()
    assert (
        (out[["verdict_agreement", "family_agreement", "location_agreement", "full_agreement"]] == 1.0)
        .all()
        .all()
    )


# ---- the benchmark's arithmetic (no wall-clock) ------------------------------------------------
def test_shared_prefix_and_fraction():
    assert B.shared_prefix([1, 2, 3], [1, 2, 4, 5]) == 2 and B.shared_prefix([], [1]) == 0
    assert B.prefix_shared_fraction([[1, 2, 3, 4], [1, 2, 9, 9], [1, 9]]) == pytest.approx(
        (2 / 4 + 1 / 2) / 2
    )
    with pytest.raises(ValueError):
        B.prefix_shared_fraction([[1]])
    assert B._reused([1, 2, 3, 7, 8], [1, 2, 3]) == 2  # a fully cached prompt replays one token
    assert B._reused([1, 2, 9], [1, 2, 3]) == 2


def test_summary_fields_and_floor_ratio():
    t = [B.CallTiming(f"r{i}", seconds=12.0, prompt_tokens=1000, reused_tokens=200, output_tokens=100,
                      finish_reason="stop", prompt_rate=100.0, generation_rate=50.0) for i in range(5)]  # fmt: skip
    out = {r["name"]: r for r in B._summarise("smollm2", t, {V: 0.2, "pacejudge": 0.05}, 3.0, 4.0)}
    for name in ("smollm2_pacejudge_s_per_call", "prompt_tokens_per_s", "prefix_shared_fraction",
                 "prefix_shared_fraction_pacejudge", "floor_ratio", "floor_ratio_full_prompt"):  # fmt: skip
        assert name in out
    # floor: 800 / 100 + 100 / 50 = 10 s -> 1.2; with all 1,000 prompt tokens: 12 s -> 1.0
    assert out["floor_ratio"]["value"] == pytest.approx(1.2) and out["floor_ratio"]["meets_goal"]
    assert out["floor_ratio_full_prompt"]["value"] == pytest.approx(1.0)
    assert out["smollm2_prefix_reused_fraction"]["value"] == pytest.approx(0.2)
    assert "under load" in out["smollm2_pacejudge_s_per_call"]["detail"]
    q = {r["name"] for r in B._summarise("qwen", t, {V: 0.2, "pacejudge": 0.05}, 0.1, 0.1)}
    assert {"qwen_pacejudge_s_per_call", "qwen_floor_ratio", "qwen_prompt_tokens_per_s"} <= q


def test_run_refuses_fewer_than_five_prompts():
    with pytest.raises(ValueError, match="≥ 5"):
        B.run(["smollm2"], n_prompts=3, out=os.devnull)
