"""Issue 29 item 3: the noise floor of PACE judges (notebook 20's ``pace_judge_repeats``) and of PADMÉ
evaluators (notebook 50's ``padme_evaluator_repeats``), on hand-computed cases; and the per-run
``repeats`` / ``temperature`` of a judge run reaching the calls."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from shopbench.metrics import meta_eval as ME
from shopbench.metrics.pace import judge_repeats
from shopbench.metrics.pace.repeats import DETERMINISTIC_NOTE
from shopbench.stats.agreement import krippendorff_alpha


def _row(backbone, record, repeat, verdict, kind="good", base=None, protocol="pacejudge", ok=True):
    return {"protocol": protocol, "backbone": backbone, "record_id": record, "repeat": repeat, "verdict": verdict,
            "parse_ok": ok, "kind": kind, "base_record_id": base}  # fmt: skip


# verdicts per repeat: g1 G G, s1 (swap of g1) B G, g2 B B, g3 G B
LLM = [
    ("g1", "good", None, "GG"),
    ("s1", "swap", "g1", "BG"),
    ("g2", "bad", "g2x", "BB"),
    ("g3", "good", None, "GB"),
]


def _table() -> pd.DataFrame:
    rows = [_row("llm/x", rec, k, {"G": "GOOD", "B": "BAD"}[v], kind, base)
            for rec, kind, base, vs in LLM for k, v in enumerate(vs)]  # fmt: skip
    rows += [_row("local/checks", "g1", 0, "GOOD"), _row("local/checks", "s1", 0, "BAD", "swap", "g1")]
    rows += [_row("llm/once", "g1", 0, "GOOD"), _row("llm/once", "s1", 0, "GOOD", "swap", "g1")]
    rows += [
        _row("llm/x", "g4", 0, None, ok=False),
        _row("llm/x", "g4", 1, "BAD"),
    ]  # a parse failure abstains
    return pd.DataFrame(rows)


def test_judge_repeats_hand_computed():
    t = judge_repeats(
        _table(), deterministic=["local/checks"], temperature={"llm/x": 0.7}, n_boot=300
    ).set_index("backbone")
    x = t.loc["llm/x"]
    assert x["repeats"] == 2 and x["temperature"] == 0.7 and x["kind"] == "llm"
    assert x["n_records"] == 4  # g4 has one parsed repeat
    assert x["label_agreement"] == pytest.approx(0.5)  # g1 and g2 agree
    assert x["repeat_flip_rate"] == pytest.approx(0.5)
    # coincidences o = [[2, 2], [2, 2]], n = 8: α = 1 - 7·4 / (64 - 32)
    assert x["alpha"] == pytest.approx(0.125)
    data = np.array([[0, 1, 1, 0], [0, 0, 1, 1]], dtype=float)
    assert x["alpha"] == pytest.approx(krippendorff_alpha(data))
    assert x["alpha_ci_low"] <= x["alpha"] <= x["alpha_ci_high"]
    # s1 vs g1: repeat 0 BAD vs GOOD (flip), repeat 1 GOOD vs GOOD: 0.5 over one pair
    assert x["n_swap_pairs"] == 1 and x["swap_flip_rate"] == pytest.approx(0.5)
    # MS_task = 2·0.5/3, MS_repeat = 1/4: σ²_record = (1/3 − 1/4)/2 = 1/24, σ²_repeat = 1/4
    assert x["share_record"] == pytest.approx(1 / 7) and x["share_repeat"] == pytest.approx(6 / 7)
    assert x["share_repeat_ci_low"] <= x["share_repeat"] <= x["share_repeat_ci_high"]
    d = t.loc["local/checks"]
    assert d["kind"] == "deterministic" and d["note"] == DETERMINISTIC_NOTE
    assert pd.isna(d["alpha"]) and pd.isna(
        d["n_records"]
    )  # no repeat numbers for a judge fixed by construction
    assert d["swap_flip_rate"] == pytest.approx(1.0)
    once = t.loc["llm/once"]
    assert once["repeats"] == 1 and once["n_records"] == 0 and pd.isna(once["alpha"])
    assert "one repeat" in once["note"] and once["swap_flip_rate"] == 0.0


def test_three_repeats_flip_is_pairwise_disagreement():
    rows = [_row("m", "r1", k, v) for k, v in enumerate(["BAD", "BAD", "GOOD"])]
    rows += [_row("m", "r2", k, v) for k, v in enumerate(["GOOD", "GOOD", "GOOD"])]
    x = judge_repeats(pd.DataFrame(rows), n_boot=100).iloc[0]
    assert x["repeat_flip_rate"] == pytest.approx((2 / 3 + 0) / 2)  # r1: 2 of its 3 pairs of repeats differ
    assert x["label_agreement"] == pytest.approx(0.5)


def _padme():
    pairs = pd.DataFrame({"pair_id": ["p1", "p2"], "worse_id": ["w1", "w2"], "better_id": ["b1", "b2"]})
    s = {  # run: (w1, b1, w2, b2) → preferences p1 +1 +1 −1, p2 0 −1 0
        0: (0.2, 0.8, 0.5, 0.5),
        1: (0.2, 0.8, 0.6, 0.4),
        2: (0.9, 0.1, 0.5, 0.5),
    }
    rows = [{"evaluator": "E", "rollout_id": rid, "run": r, "score": v}
            for r, vals in s.items() for rid, v in zip(["w1", "b1", "w2", "b2"], vals, strict=True)]  # fmt: skip
    rows += [{"evaluator": "F", "rollout_id": rid, "run": 0, "score": v}
             for rid, v in zip(["w1", "b1", "w2", "b2"], [0.1, 0.9, 0.2, 0.3], strict=True)]  # fmt: skip
    scores = pd.DataFrame(rows)
    outcomes = pd.concat(
        [ME.pair_outcomes(pairs, scores[scores.evaluator == e]) for e in "EF"], ignore_index=True
    )
    return outcomes, scores  # one outcomes table per run design, concatenated, as notebook 50 does


def test_evaluator_repeats_hand_computed():
    outcomes, scores = _padme()
    t = ME.evaluator_repeats(outcomes, scores, fixed={"E": "test reason"}, n_boot=300).set_index("evaluator")
    e = t.loc["E"]
    assert e["n_runs"] == 3 and e["n_pairs"] == 2
    assert e["accuracy"] == pytest.approx(1 / 3)  # per run 0.5, 0.5, 0
    assert e["accuracy_sd"] == pytest.approx(math.sqrt(1 / 12))
    assert e["score_sd"] == pytest.approx((math.sqrt(0.49 / 3) + math.sqrt(0.01 / 3)) / 2)
    assert e["pair_flip_rate"] == pytest.approx(2 / 3)  # each pair: 2 of its 3 pairs of runs differ
    assert e["alpha"] == pytest.approx(1 / 6)  # n_c = 2, 2, 2; off-diagonal 4: 1 − 5·4/(36 − 12)
    assert e["alpha"] == pytest.approx(krippendorff_alpha(np.array([[1, 0], [1, -1], [-1, 0]], dtype=float)))
    assert e["note"].startswith("test reason")
    f = t.loc["F"]
    assert f["n_runs"] == 1 and pd.isna(f["accuracy_sd"]) and pd.isna(f["alpha"]) and "one run" in f["note"]
    assert f["accuracy"] == pytest.approx(1.0)


def test_identical_runs_say_so():
    outcomes, scores = _padme()
    same = scores[scores.run == 0]
    scores2 = pd.concat([same, same.assign(run=1)], ignore_index=True)
    pairs = pd.DataFrame({"pair_id": ["p1", "p2"], "worse_id": ["w1", "w2"], "better_id": ["b1", "b2"]})
    t = ME.evaluator_repeats(ME.pair_outcomes(pairs, scores2[scores2.evaluator == "E"]), scores2, n_boot=50)
    e = t.iloc[0]
    assert e["pair_flip_rate"] == 0.0 and e["accuracy_sd"] == 0.0 and e["score_sd"] == 0.0
    assert "same score" in e["note"]


def test_a_sampled_run_repeats_each_record_with_its_own_seed(tmp_path, paceshop_small):
    """llm_sweeps reads a run's own ``repeats`` and ``temperature``: every record is judged twice, each
    repeat with seed = repeat + 1; the stand-in's answers then differ between repeats and the table
    measures it (the smoke profile's path)."""
    from types import SimpleNamespace

    from shopbench.judges.pace.sweep import llm_sweeps
    from shopbench.llm import Gateway

    recs = [r for r in paceshop_small[1].records if r.split == "test"]
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    run = SimpleNamespace(backbone="local/schema-sampler", protocols=["pacejudge"], plan=["swaps"], subset=None,
                          llm_budget_min=None, repeats=2, temperature=0.7)  # fmt: skip
    (t,), plans = llm_sweeps(gw, [run], recs, repeats=1, log=lambda *_: None)
    assert (
        plans["local/schema-sampler"]["repeats"] == 2 and plans["local/schema-sampler"]["temperature"] == 0.7
    )
    assert sorted(t.repeat.unique()) == [0, 1] and t.groupby("record_id").size().eq(2).all()
    wide = t.pivot_table(index="record_id", columns="repeat", values="raw_output", aggfunc="first")
    assert (wide[0] != wide[1]).any()  # the sampled repeats are different answers
    x = judge_repeats(t, n_boot=50).iloc[0]
    # the sampler's answers mostly cite ids outside the pool (a parse failure abstains): few records parse twice
    parsed = t[t.parse_ok == True].groupby("record_id").size()  # noqa: E712
    assert x["repeats"] == 2 and x["n_records"] == int((parsed == 2).sum())


def test_run_repeats_and_temperature_reach_the_calls(tmp_path, paceshop_small):
    from shopbench.judges.pace.sweep import keyed_calls
    from shopbench.llm import Gateway

    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    recs = [r for r in paceshop_small[1].records if r.split == "test"][:2]
    greedy = keyed_calls(gw, ["ares"], ["local/schema-sampler"], recs, repeats=2)
    assert all("seed" not in c.params and c.params["temperature"] == 0 for _, c in greedy)
    sampled = keyed_calls(gw, ["ares"], ["local/schema-sampler"], recs, repeats=2, temperature=0.7)
    assert [(k[3], c.repeat, c.params["seed"], c.params["temperature"]) for k, c in sampled[:2]] == [
        (0, 0, 1, 0.7),
        (1, 1, 2, 0.7),
    ]
