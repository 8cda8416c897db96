"""PADMÉ meta-evaluation: evaluators under test (H.5) and the Eq. 3–5 statistics (Tables 3, 4, 18, 19)."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from shopbench.judges.padme.evaluators import (
    HEURISTIC_VARIANTS,
    evaluator_messages,
    reference_documents,
    render_trajectory,
    score_from_row,
)
from shopbench.judges.padme.roster import (
    PAPER_ROSTER,
    EvaluatorSpec,
    evaluator_specs,
    paper_table18,
    properties_frame,
)
from shopbench.judges.padme.sweep import SCORE_COLUMNS, score_rollouts
from shopbench.metrics.meta_eval import (
    accuracy_by,
    agreement,
    contamination,
    evaluator_summary,
    pair_outcomes,
    pairs_frame,
    property_correlations,
    reward_label_accuracy,
    reward_pairs,
    score_statistics,
    sweep_table,
)
from shopbench.padme.types import Criterion, Pair, Rollout, Vote

FRIENDLY = Criterion("friendliness", "Warmth and consideration toward the customer.")
TASK = Criterion("task_resolution", "Whether the customer's actual problem was settled.")
CRITERIA = {c.name: c for c in (FRIENDLY, TASK)}


# ---- hand example -------------------------------------------------------------------------------
def hand_tables():
    """3 pairs, 2 evaluators, 2 runs. E1 run 0: correct, tie, wrong; run 1: correct, correct, parse failure.
    E2 scores everything 0.5 (all ties)."""
    pairs = pd.DataFrame({
        "pair_id": ["p1", "p2", "p3"], "worse_id": ["a-", "b-", "c-"], "better_id": ["a+", "b+", "c+"],
        "domain": ["airline", "airline", "retail"], "criterion": "friendliness", "contrast": "bad-good",
        "agent_model": "m", "task_id": ["t1", "t2", "t3"],
    })  # fmt: skip
    e1 = {0: {"a-": 0.2, "a+": 0.8, "b-": 0.5, "b+": 0.5, "c-": 0.9, "c+": 0.1},
          1: {"a-": 0.2, "a+": 0.7, "b-": 0.4, "b+": 0.6, "c-": np.nan, "c+": 0.3}}  # fmt: skip
    rows = [
        {"evaluator": "E1", "rollout_id": k, "run": run, "score": v}
        for run, d in e1.items()
        for k, v in d.items()
    ]
    rows += [{"evaluator": "E2", "rollout_id": k, "run": run, "score": 0.5} for run in (0, 1) for k in e1[0]]
    scores = pd.DataFrame(rows).assign(criterion="friendliness")
    return pairs, scores


def test_outcomes_follow_eq3_and_ties_are_wrong():
    pairs, scores = hand_tables()
    out = pair_outcomes(pairs, scores)
    assert len(out) == 2 * 2 * 3
    e1 = out[out.evaluator == "E1"].set_index(["run", "pair_id"])
    assert e1.loc[(0, "p1"), "delta"] == pytest.approx(0.6)
    assert list(e1.loc[0, "outcome"]) == [1.0, 0.0, -1.0]
    assert list(e1.loc[0, "correct"]) == [True, False, False]  # Δ = 0 is wrong
    assert e1.loc[(0, "p2"), "tie"] and not e1.loc[(0, "p3"), "tie"]
    r1 = e1.loc[1]
    assert list(r1["correct"]) == [True, True, False] and list(r1["parse_failed"]) == [False, False, True]
    assert math.isnan(r1.loc["p3", "outcome"]) and not r1.loc["p3", "tie"]
    assert set(out.columns) >= {
        "domain",
        "criterion",
        "contrast",
        "agent_model",
        "score_worse",
        "score_better",
    }
    e2 = out[out.evaluator == "E2"]
    assert e2.tie.all() and not e2.correct.any()


def test_summary_by_hand():
    pairs, scores = hand_tables()
    s = evaluator_summary(pair_outcomes(pairs, scores), scores, n_boot=200, seed=1)
    assert list(s.index) == ["E1", "E2"]  # sorted by accuracy
    e1 = s.loc["E1"]
    assert e1.n_pairs == 3 and e1.n_runs == 2
    assert e1.accuracy == pytest.approx(0.5)  # runs: 1/3 and 2/3
    assert e1.accuracy_sd == pytest.approx(np.std([1 / 3, 2 / 3], ddof=1))
    assert e1.accuracy_parsed == pytest.approx((1 / 3 + 2 / 2) / 2)  # parse failure excluded
    assert e1.accuracy_parsed_sd == pytest.approx(np.std([1 / 3, 1.0], ddof=1))
    assert e1.tie_rate == pytest.approx(1 / 5)  # one tie among 5 parsed pair-runs
    assert e1.leniency == pytest.approx(5.2 / 11)
    assert e1.distinct_scores == 9
    assert e1.score_sd == pytest.approx(
        0.1 / math.sqrt(2)
    )  # (0 + .1 + .1 + .1 + .2)/√2 / 5; c- has one score
    assert e1.n_scores == 12 and e1.n_parse_failures == 1 and e1.parse_failure_rate == pytest.approx(1 / 12)
    assert e1.pair_parse_failure_rate == pytest.approx(1 / 6)
    e2 = s.loc["E2"]
    assert e2.accuracy == 0 and e2.accuracy_sd == 0 and e2.tie_rate == 1 and e2.distinct_scores == 1
    assert e2.leniency == 0.5 and e2.score_sd == 0
    assert e1.accuracy_ci_low <= e1.accuracy <= e1.accuracy_ci_high


def test_breakdowns_by_hand():
    pairs, scores = hand_tables()
    out = pair_outcomes(pairs, scores)
    by = accuracy_by(out, by=["domain"], n_boot=100).set_index(["evaluator", "value"])
    assert by.loc[("E1", "airline"), "accuracy"] == pytest.approx(0.75)  # runs 1/2 and 2/2
    assert by.loc[("E1", "airline"), "accuracy_sd"] == pytest.approx(np.std([0.5, 1.0], ddof=1))
    assert by.loc[("E1", "retail"), "accuracy"] == 0 and by.loc[("E1", "airline"), "n_pairs"] == 2
    ex = accuracy_by(out, by=["domain"], parse_failures="excluded", n_boot=0).set_index(
        ["evaluator", "value"]
    )
    assert ex.loc[("E1", "retail"), "accuracy"] == 0  # run 1 has no parsed retail pair: mean over run 0 only
    assert math.isnan(ex.loc[("E1", "retail"), "accuracy_sd"]) and math.isnan(
        ex.loc[("E1", "retail"), "ci_low"]
    )
    with pytest.raises(ValueError, match="no column"):
        accuracy_by(out, by=["nope"])
    with pytest.raises(ValueError, match="incorrect"):
        accuracy_by(out, parse_failures="ignore")


def test_input_errors_are_named():
    pairs, scores = hand_tables()
    with pytest.raises(ValueError, match="no scores for rollouts"):
        pair_outcomes(pairs.assign(worse_id=["zz", "b-", "c-"]), scores)
    with pytest.raises(ValueError, match="more than one score"):
        pair_outcomes(pairs, pd.concat([scores, scores.iloc[[0]]]))
    with pytest.raises(ValueError, match="has no score for a rollout"):
        pair_outcomes(pairs, scores.drop(index=3))
    with pytest.raises(ValueError, match="scored on criterion"):
        pair_outcomes(pairs, scores.assign(criterion="task_resolution"))
    with pytest.raises(ValueError, match="duplicate pair_id"):
        pair_outcomes(pd.concat([pairs, pairs.iloc[[0]]]), scores)
    with pytest.raises(ValueError, match="missing columns"):
        pair_outcomes(pairs.drop(columns="worse_id"), scores)


# ---- at scale: bootstrap, breakdown consistency, correlations -----------------------------------
@pytest.fixture(scope="module")
def synthetic():
    from shopbench.benchmarks.padme import synthetic_meta_eval

    pairs, scores, specs = synthetic_meta_eval(n_pairs=300, runs=3, seed=2, n_evaluators=8)
    return pairs, scores, specs, pair_outcomes(pairs, scores)


def test_bootstrap_is_seeded_and_matches_stats_bootstrap(synthetic):
    from shopbench.stats.bootstrap import bootstrap_mean

    pairs, scores, specs, out = synthetic
    a = evaluator_summary(out, scores, n_boot=300, seed=5, sort=False)
    b = evaluator_summary(out, scores, n_boot=300, seed=5, sort=False)
    c = evaluator_summary(out, scores, n_boot=300, seed=6, sort=False)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a.accuracy_ci_low, c.accuracy_ci_low)
    assert ((a.accuracy_ci_low <= a.accuracy) & (a.accuracy <= a.accuracy_ci_high)).all()
    assert ((a.accuracy_ci_high - a.accuracy_ci_low) > 0.01).all()
    # the same interval from the generic bootstrap of per-pair run-averaged correctness
    e = a.index[0]
    per_pair = out[out.evaluator == e].groupby("pair_id", sort=False)["correct"].mean()
    ref = bootstrap_mean(per_pair.to_numpy(float), n_boot=300, seed=5)
    assert a.loc[e, "accuracy_ci_low"] == pytest.approx(ref.low) and a.loc[
        e, "accuracy_ci_high"
    ] == pytest.approx(ref.high)
    assert a.loc[e, "accuracy"] == pytest.approx(ref.estimate)
    # cluster bootstrap (tasks as units) gives a different, still valid interval
    cl = evaluator_summary(out, scores, n_boot=300, seed=5, cluster="task_id", sort=False)
    assert ((cl.accuracy_ci_low <= cl.accuracy) & (cl.accuracy <= cl.accuracy_ci_high)).all()


def test_breakdown_blocks_partition_the_accuracy(synthetic):
    pairs, scores, specs, out = synthetic
    s = evaluator_summary(out, scores, n_boot=50)
    by = accuracy_by(out, n_boot=50)
    assert set(by.axis) == {"domain", "criterion", "contrast", "agent_model"}
    w = by.assign(x=by.accuracy * by.n_pairs).groupby(["evaluator", "axis"])[["x", "n_pairs"]].sum()
    weighted = (w.x / w.n_pairs).unstack()
    for axis in weighted.columns:  # "each of these blocks partitions the 1,000 pairs" (App. F.1)
        np.testing.assert_allclose(weighted[axis].reindex(s.index), s.accuracy, atol=1e-12)
    assert ((by.ci_low <= by.accuracy + 1e-12) & (by.accuracy <= by.ci_high + 1e-12)).all()
    t = sweep_table(s, by)
    assert (
        t.index[-1] == "mean" and "contrast:ok-good" in t.columns and "agent_model:gpt-oss-20b" in t.columns
    )
    assert t.loc["mean", "accuracy"] == pytest.approx(s.accuracy.mean())


def test_spearman_against_scipy_and_holm_against_statsmodels(synthetic):
    from scipy.stats import spearmanr
    from statsmodels.stats.multitest import multipletests

    pairs, scores, specs, out = synthetic
    s = evaluator_summary(out, scores, n_boot=0)
    corr = property_correlations(s, specs).set_index("property")
    assert len(corr) == 7
    props = properties_frame(specs)
    for col in ("tie_rate", "leniency", "distinct_scores", "score_sd"):
        ref = spearmanr(s[col], s["accuracy"])
        assert corr.loc[col, "rho"] == pytest.approx(ref.statistic) and corr.loc[col, "p"] == pytest.approx(
            ref.pvalue
        )
    tot = props["total_params_b"].reindex(s.index)
    ok = tot.notna()
    ref = spearmanr(tot[ok], s.accuracy[ok])
    assert corr.loc["total_params_b", "n"] == ok.sum() and corr.loc["total_params_b", "rho"] == pytest.approx(
        ref.statistic
    )
    valid = corr.p.notna()
    _, adj, _, _ = multipletests(corr.p[valid], method="holm")
    np.testing.assert_allclose(corr.p_holm[valid], adj)
    assert list(corr.rho.dropna()) == sorted(corr.rho.dropna(), reverse=True)
    with pytest.raises(ValueError, match="no column"):
        property_correlations(s, specs, columns=["nope"])


def test_table4_reproduces_the_paper_from_table18():
    """Spearman ρ of the paper's Table 18 rows against accuracy: the values §5.3 reports."""
    t = paper_table18()
    assert len(t) == 25 and t.in_pipeline.sum() == 3
    corr = property_correlations(t, None).set_index("property")
    reported = {"tie_rate": -0.946, "distinct_scores": 0.797, "leniency": -0.725, "total_params_b": 0.725,
                "active_params_b": 0.518}  # fmt: skip
    for k, v in reported.items():
        assert corr.loc[k, "rho"] == pytest.approx(v, abs=0.005), k  # table values are rounded
    assert corr.loc["total_params_b", "n"] == 15 and corr.loc["tie_rate", "n"] == 25  # "n=15 on some rows"
    assert (
        corr.loc["tie_rate", "significant"] and not corr.loc["active_params_b", "significant"]
    )  # "not significant"
    # §5.3 names six properties; the seventh (average score SD) is a guess and the table says so
    assert corr.loc["score_sd", "source"].startswith("guessed") and len(corr) == 7
    assert (corr.drop(index="score_sd")["source"].str.startswith("named")).all()


def test_agreement_eq5():
    assert agreement([1, 0, -1, np.nan], [1, 1, -1, 1]) == 0.5  # tie ≠ +1; NaN counts against
    assert agreement([1, 0, -1, np.nan], [1, 1, -1, 1], missing="exclude") == pytest.approx(2 / 3)
    assert agreement(pd.Series([1, -1], index=["a", "b"]), pd.Series([-1, 1], index=["b", "a"])) == 1.0
    with pytest.raises(ValueError, match="outside"):
        agreement([2, 1], [1, 1])
    pairs, scores = hand_tables()
    out = pair_outcomes(pairs, scores)
    e1 = out[out.evaluator == "E1"]
    # evaluator accuracy (Eq. 4) is agreement with the synthetic label ⋆ ≡ +1 (Eq. 5), ties and failures wrong
    assert agreement(e1.outcome, np.ones(len(e1))) == pytest.approx(e1.correct.mean())


def test_contamination_by_hand():
    pairs = pd.DataFrame({"pair_id": ["p1", "p2", "p3", "p4"], "worse_id": ["w1", "w2", "w3", "w4"],
                          "better_id": ["b1", "b2", "b3", "b4"], "agent_model": ["A", "A", "X", "X"],
                          "judges": [("B",), ("B",), ("B",), ()], "steering_model": None})  # fmt: skip
    correct = {"A": [1, 0, 1, 1], "B": [1, 1, 0, 1], "C": [0, 0, 0, 1]}
    rows = []
    for e, cs in correct.items():
        for k, ok in enumerate(cs, 1):
            rows += [{"evaluator": e, "rollout_id": f"w{k}", "run": 0, "score": 0.2 if ok else 0.8},
                     {"evaluator": e, "rollout_id": f"b{k}", "run": 0, "score": 0.8 if ok else 0.2}]  # fmt: skip
    out = pair_outcomes(pairs, pd.DataFrame(rows))
    res = contamination(out, pairs, n_boot=100, seed=0)
    t = res.by_evaluator
    assert t.loc["A", "roles"] == "agent" and t.loc["B", "roles"] == "judge" and t.loc["C", "roles"] == ""
    assert t.loc["A", "acc_self"] == 0.5 and t.loc["A", "acc_external"] == 1.0 and t.loc["A", "gap_pt"] == -50
    # B on A's own pairs: 1.0 vs 0.5 (+50); C: 0 vs 0.5 (−50); their mean is the difficulty shift
    assert t.loc["A", "others_gap_pt"] == pytest.approx(0) and t.loc["A", "excess_gap_pt"] == pytest.approx(
        -50
    )
    assert t.loc["A", "n_self"] == 2 and math.isnan(t.loc["B", "gap_pt"])
    assert t.loc["B", "acc_judged"] == pytest.approx(2 / 3) and t.loc["B", "acc_not_judged"] == 1.0
    assert t.loc["B", "n_judged"] == 3
    g = res.groups.set_index("group")
    assert g.loc["in_pipeline", "accuracy"] == 0.75 and g.loc["rest", "accuracy"] == 0.25
    assert g.loc["difference", "accuracy"] == 0.5
    assert t.loc["A", "accuracy_ci_low"] <= 0.75 <= t.loc["A", "accuracy_ci_high"]
    # identities from specs: C's model is the steering generator under another name
    specs = [EvaluatorSpec("C", "prov/c-model", aliases=("c-gen",))]
    res2 = contamination(out, pairs.assign(steering_model="c-gen"), specs, n_boot=0)
    assert res2.by_evaluator.loc["C", "roles"] == "steering" and res2.by_evaluator.loc["C", "in_pipeline"]


def test_contamination_on_synthetic_roster(synthetic):
    pairs, scores, specs, out = synthetic
    t = contamination(out, pairs, specs, n_boot=50).by_evaluator
    assert set(t.index[t.in_pipeline]) == {"gpt-oss-120b"}  # the only pipeline model among the first 8
    assert "agent" in t.loc["gpt-oss-120b", "roles"] and "judge" in t.loc["gpt-oss-120b", "roles"]
    assert t.loc["gpt-oss-120b", "n_self"] == (pairs.agent_model == "gpt-oss-120b").sum()


def rollout(rid, task="t1", reward=None, criterion="task_resolution", messages=None, **kw):
    return Rollout(rid, task, "airline", "test", criterion, kw.pop("level", "good"), "", "agent-m", "scripted", 0, 0,
                   messages or [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
                   reward=reward, **kw)  # fmt: skip


def test_reward_labelled_pairs():
    rs = [rollout("a0", "t1", 0.0), rollout("a1", "t1", 1.0), rollout("a2", "t1", 1.0), rollout("b0", "t2", 0.0),
          rollout("b1", "t2", 0.0)]  # fmt: skip
    pairs = reward_pairs(rs)
    assert (
        list(pairs.pair_id) == ["t1:a0<a1", "t1:a0<a2"] and (pairs.reward_better > pairs.reward_worse).all()
    )
    scores = pd.DataFrame([{"evaluator": "E", "rollout_id": r, "run": 0, "score": s}
                           for r, s in {"a0": 0.1, "a1": 0.9, "a2": 0.1, "b0": 0.5, "b1": 0.5}.items()])  # fmt: skip
    s = reward_label_accuracy(pairs, scores, n_boot=20)
    assert s.loc["E", "accuracy"] == 0.5 and s.loc["E", "tie_rate"] == 0.5
    with pytest.raises(ValueError, match="not below"):
        reward_label_accuracy(pairs.assign(reward_worse=1.0), scores)
    with pytest.raises(ValueError, match="no environment reward"):
        reward_pairs([rollout("x", reward=None)])


# ---- evaluators -------------------------------------------------------------------------------------
WRAPPED = ("You are an airline agent. Follow the policy.\n<behaviour>\nFor this conversation you have one "
           "additional objective.\nBe curt and cold.\n</behaviour>")  # fmt: skip


def tool_rollout(rid="r1", criterion="friendliness", warm=True):
    reply = ("I'm so sorry about the delay, I completely understand how stressful this is. Thank you for your "
             "patience — your booking is now changed." if warm else "Done. Booking changed.")  # fmt: skip
    msgs = [
        {"role": "system", "content": WRAPPED},
        {"role": "user", "content": "Please change my flight, it was delayed and I'm upset."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "update_reservation", "arguments": json.dumps({"reservation_id": "ABC", "flight": "HAT1"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"status": "ok", "blob": "x" * 2000})},
        {"role": "assistant", "content": reply},
    ]  # fmt: skip
    return rollout(rid, criterion=criterion, messages=msgs)


def test_rendering_hides_the_steering_and_compacts_tools():
    r = tool_rollout()
    text = render_trajectory(r, max_result_chars=100)
    assert text.splitlines()[0].startswith("[1] Customer: Please change my flight")
    assert '[2] Agent calls update_reservation(reservation_id="ABC", flight="HAT1")' in text
    assert "    Tool result -> {" in text and "more chars]" in text and "x" * 200 not in text
    assert "[3] Agent: I'm so sorry" in text
    ref = reference_documents(r)
    assert "Follow the policy" in ref and "curt" not in ref and "behaviour" not in ref
    assert "update_reservation" in ref
    tools = [
        {
            "type": "function",
            "function": {
                "name": "update_reservation",
                "description": "Change a booking.",
                "parameters": {
                    "properties": {"reservation_id": {}, "flight": {}},
                    "required": ["reservation_id"],
                },
            },
        }
    ]
    assert "- update_reservation(reservation_id, flight?): Change a booking." in reference_documents(r, tools)
    (msg,) = evaluator_messages(r, FRIENDLY)
    body = msg["content"]
    assert "CRITERION: friendliness\nWarmth and consideration" in body and "curt" not in body
    assert (
        "Score the agent on friendliness from 0.0 (worst) to 1.0 (best)." in body
        and "{" not in body.split("CONVERSATION")[0].split("REFERENCE")[0]
    )
    bad = rollout("u", messages=[{"role": "system", "content": "x <behaviour> steer"}])
    with pytest.raises(ValueError, match="unbalanced <behaviour>"):
        reference_documents(bad)


def test_heuristic_reference_evaluators():
    try:
        from shopbench.padme.heuristics import criterion_score
    except ImportError:
        pytest.skip("shopbench.padme.heuristics is not there yet")
    rs = [tool_rollout("w", warm=True), tool_rollout("c", warm=False), tool_rollout("t", "task_resolution")]
    df = score_rollouts(rs + rs[:1], CRITERIA, list(HEURISTIC_VARIANTS), runs=3, seed=4)
    assert list(df.columns) == list(SCORE_COLUMNS)
    assert len(df) == 4 * 3 * 3  # a repeated rollout is scored once per (evaluator, run)
    assert (df.status == "ok").all() and df.score.between(0, 1).all() and (df.cost_usd == 0).all()
    base = {r.rollout_id: criterion_score(r, CRITERIA[r.criterion]) for r in rs}
    h = df[df.evaluator == "heuristic"]
    assert all(h.score == h.rollout_id.map(base))
    assert h.groupby("rollout_id").score.nunique().eq(1).all()  # deterministic: identical runs
    assert set(df[df.evaluator == "heuristic-coarse"].score) <= {0.0, 0.5, 1.0}
    le = df[df.evaluator == "heuristic-lenient"].score
    assert (le >= 0.6).all() and np.allclose(le * 10, np.round(le * 10))
    noisy = df[df.evaluator == "heuristic-noisy"]
    assert noisy.groupby("rollout_id").score.nunique().gt(1).any()  # per-item SD > 0
    again = score_rollouts(rs, CRITERIA, ["heuristic-noisy"], runs=3, seed=4)
    np.testing.assert_array_equal(again.score.to_numpy(), noisy.score.to_numpy())  # seeded
    st = score_statistics(df).loc["heuristic-noisy"]
    assert st.score_sd > 0 and score_statistics(df).loc["heuristic", "score_sd"] == 0
    with pytest.raises(ValueError, match="criterion 'nope'"):
        score_rollouts([rollout("z", criterion="nope")], CRITERIA, ["heuristic"])
    with pytest.raises(ValueError, match="need a gateway"):
        score_rollouts(rs, CRITERIA, ["local/schema-sampler"])


def make_gateway(tmp_path):
    from shopbench.llm import Gateway, parse_backbones, register_local

    register_local("padme-test-out-of-range", lambda m, p: json.dumps({"reasoning": "too good", "score": 1.7}),
                   "test backend: a score outside [0, 1]")  # fmt: skip
    names = ["local/schema-sampler", "local/echo", "local/padme-test-out-of-range"]
    return Gateway(cache_dir=tmp_path / "c", log_dir=tmp_path / "l", progress=False, backoff_s=0.01,
                   backbones=parse_backbones(names))  # fmt: skip


def test_llm_evaluators_through_the_gateway(tmp_path):
    gw = make_gateway(tmp_path)
    rs = [tool_rollout("w"), tool_rollout("c", warm=False)]
    evs = ["local/schema-sampler", "local/echo", {"name": "oor", "backbone": "local/padme-test-out-of-range"}]
    df = score_rollouts(rs, CRITERIA, evs, runs=2, gateway=gw, run_id="me")
    assert len(df) == 3 * 2 * 2 and list(df.columns) == list(SCORE_COLUMNS)
    ss = df[df.evaluator == "local/schema-sampler"]
    assert (ss.status == "ok").all() and ss.score.between(0, 1).all() and ss.reasoning.map(type).eq(str).all()
    echo = df[df.evaluator == "local/echo"]  # the prompt back: not JSON, a parse failure
    assert (
        (echo.status == "parse_error").all()
        and echo.score.isna().all()
        and echo.parse_error.str.contains("JSON").all()
    )
    oor = df[df.evaluator == "oor"]
    assert (oor.status == "parse_error").all() and oor.parse_error.str.contains(r"outside \[0, 1\]").all()
    log = gw.log("me-local_schema-sampler")  # one logged gateway run per evaluator, all runs in it
    assert len(log) == 4 and sorted(log.repeat) == [0, 0, 1, 1] and (log.status == "ok").all()
    again = score_rollouts(rs, CRITERIA, evs[:1], runs=2, gateway=gw, run_id="me2")
    assert again.cache_hit.all() and np.allclose(again.score, ss.score)
    # parse failures flow into the statistics as incorrect, or excluded
    pairs = pd.DataFrame(
        {"pair_id": ["p"], "worse_id": ["c"], "better_id": ["w"], "criterion": ["friendliness"]}
    )
    s = evaluator_summary(pair_outcomes(pairs, df), df, n_boot=10)
    # issue 25: an evaluator with no parseable answer has no numbers, only its counts
    assert math.isnan(s.loc["oor", "accuracy"]) and math.isnan(s.loc["oor", "accuracy_parsed"])
    assert s.loc["oor", "outcome"] == "no-answer" and s.loc["oor", "n_parse_failure"] == 2
    assert s.loc["local/echo", "parse_failure_rate"] == 1.0


class FakeGateway:
    """Returns canned gateway rows (the shape of ``Gateway.run`` rows) for every call."""

    def __init__(self, parsed):
        self.parsed, self.calls = parsed, []

    def call(self, backbone, item_id, messages, **kw):
        return {"backbone": backbone, "item_id": item_id, "messages": messages, **kw}

    def run(self, calls, run_id, desc=None):
        self.calls += calls
        return [{"status": "ok", "parsed": self.parsed, "raw_output": json.dumps(self.parsed), "prompt_tokens": 10,
                 "completion_tokens": 5, "cost_usd": 0.001, "cache_hit": False, "parse_error": None, "error": None}
                for _ in calls]  # fmt: skip


def test_fake_gateway_score_out_of_range_is_a_parse_error():
    gw = FakeGateway({"reasoning": "great", "score": 1.7})
    df = score_rollouts([tool_rollout()], CRITERIA, ["some/model"], runs=2, gateway=gw, max_tokens=77)
    assert (df.status == "parse_error").all() and df.score.isna().all() and df.reasoning.eq("great").all()
    c = gw.calls[0]
    assert c["params"] == {"max_tokens": 77, "temperature": 0} and [x["repeat"] for x in gw.calls] == [0, 1]
    assert c["schema"]["properties"]["reasoning"]["maxLength"] == 1500

    def row(parsed):  # the judge parses the raw output again, against the contract
        return {"status": "ok", "raw_output": json.dumps(parsed)}

    assert score_from_row(row({"reasoning": "", "score": 0.25}))["score"] == 0.25
    for bad in (-0.1, True, "0.5", float("nan"), None):
        r = score_from_row(row({"reasoning": "", "score": bad}))
        assert r["status"] == "parse_error" and math.isnan(r["score"]), bad
    assert score_from_row(row({"reasoning": "x"}))["status"] == "parse_error"
    err = score_from_row({"status": "error", "error": "Timeout"})
    assert err["status"] == "error" and math.isnan(err["score"]) and err["error"] == "Timeout"
    nt = score_rollouts([tool_rollout()], CRITERIA, [{"backbone": "m", "params": {"temperature": None}}], runs=1,
                        gateway=FakeGateway({"reasoning": "", "score": 0.5}))  # fmt: skip
    assert nt.score.tolist() == [0.5]


def test_specs_and_properties():
    specs = evaluator_specs(["heuristic", "llamacpp/smollm2-135m-instruct",
                             {"name": "mine", "backbone": "my-vllm", "in_pipeline": True, "aliases": ["qwen-agent"],
                              "properties": {"total_params_b": 7.6, "reasoning": False, "release": "2024-09"}}])  # fmt: skip
    assert specs[0].is_heuristic and specs[1].properties["total_params_b"] == 0.135
    assert specs[2].identities == {"mine", "my-vllm", "qwen-agent"} and specs[2].in_pipeline
    pf = properties_frame(specs)
    assert pf.loc["mine", "release_year"] == pytest.approx(2024 + 8 / 12) and pf.loc["mine", "reasoning"] == 0
    assert math.isnan(pf.loc["heuristic", "total_params_b"])
    for entry, msg in [({"backbone": "x", "colour": 1}, "unknown keys"), ({"name": "y"}, "'backbone'"),
                       ({"backbone": "x", "properties": {"release": "2024"}}, "YYYY-MM"),
                       ({"backbone": "x", "properties": {"reasoning": "yes"}}, "true or false"),
                       ({"backbone": "heuristic", "name": "heuristic-wild"}, "heuristic evaluators are")]:  # fmt: skip
        with pytest.raises(ValueError, match=msg):
            evaluator_specs([entry])
    with pytest.raises(ValueError, match=r"padme.evaluators\[1\]"):
        evaluator_specs(["heuristic", {"backbone": "x", "oops": 1}])
    with pytest.raises(ValueError, match="duplicate"):
        evaluator_specs(["heuristic", "heuristic"])
    assert len(PAPER_ROSTER) == 25


def test_pairs_frame_from_pair_objects():
    w, b = rollout("x-", level="bad"), rollout("x+", level="good")
    b.meta["steering_model"] = "gen"
    p = Pair("p1", "c1", "t1", "airline", "test", "task_resolution", "bad-good", "agent-m", 0, w, b,
             {"bad": "s1", "good": "s2"}, [Vote("j1", 1, 2, 2, True), Vote("j2", 2, 1, 1, True)], 2, True)  # fmt: skip
    f = pairs_frame([p])
    row = f.iloc[0]
    assert row.worse_id == "x-" and row.better_id == "x+" and row.judges == ("j1", "j2")
    assert row.steering_model == "gen" and row.contrast == "bad-good" and row.kept


def test_bench_result_shape():
    from shopbench.benchmarks.padme import bench_meta_eval

    res = bench_meta_eval(n_evaluators=5, n_pairs=100, runs=2, n_boot=50)
    names = [r["name"] for r in res]
    assert names == ["meta_eval_stats_wall_s", "peak_rss_mb"]
    assert all(set(r) == {"name", "value", "unit", "goal", "meets_goal", "detail"} for r in res)
    assert res[0]["value"] < 5 and res[0]["meets_goal"]


def test_evaluators_from_profile(tmp_path):
    from shopbench.config import ParamError, Profile
    from shopbench.judges.padme.roster import OFFLINE_EVALUATORS, evaluators_from_profile

    prof = Profile(
        "t", tmp_path / "t.yaml", {"padme": {"evaluators": ["heuristic-coarse", {"backbone": "m"}]}}, "x"
    )
    assert [s.name for s in evaluators_from_profile(prof)] == ["heuristic-coarse", "m"]
    assert [s.name for s in evaluators_from_profile(Profile("t", tmp_path / "t.yaml", {}, "x"))] == list(
        OFFLINE_EVALUATORS
    )
    bad = Profile("t", tmp_path / "t.yaml", {"padme": {"evaluators": [{"backbone": "m", "x": 1}]}}, "x")
    with pytest.raises(ParamError, match=r"t.yaml: key 'padme.evaluators\[0\]\.x': unknown key"):
        evaluators_from_profile(bad)


def test_domain_breakdown_names_the_four_paper_domains():
    """§5.3: "domain (retail, telecom, banking, airline)". Steered rows keep the synthetic label, the recorded
    airline pairs join as a meta-evaluation-only domain, and each missing domain gets a row saying why."""
    from shopbench.metrics.meta_eval import PAPER_DOMAINS, domain_breakdown

    by = pd.DataFrame({"evaluator": ["h", "h", "h"], "axis": ["domain", "domain", "criterion"],
                       "value": ["retail", "shop", "friendliness"], "n_pairs": [4, 6, 10], "accuracy": [0.5, 0.7, 0.6],
                       "accuracy_sd": [0.0] * 3, "ci_low": [0.2] * 3, "ci_high": [0.9] * 3})  # fmt: skip
    rec = pd.DataFrame({"n_pairs": [30], "accuracy": [0.6], "accuracy_sd": [0.01], "accuracy_ci_low": [0.5],
                        "accuracy_ci_high": [0.7]}, index=pd.Index(["h"], name="evaluator"))  # fmt: skip
    t = domain_breakdown(by, rec, extra_domains=["shop"])
    assert list(t.domain) == ["retail", "shop", "airline", "telecom", "banking_knowledge"]
    assert t.set_index("domain").loc["airline", "label"] == "environment reward (recorded pairs)"
    assert t.set_index("domain").loc["airline", "n_pairs"] == 30
    missing = t[t.evaluator == "(none)"]
    assert set(missing.domain) == {"telecom", "banking_knowledge"} and missing.accuracy.isna().all()
    assert all(c.startswith("missing:") for c in missing.coverage) and set(PAPER_DOMAINS) == {
        "retail", "telecom", "banking_knowledge", "airline"}  # fmt: skip
    assert "domain: telecom" in missing.set_index("domain").loc["telecom", "coverage"]
    # without recorded pairs, airline is listed as absent too
    assert "airline" in set(domain_breakdown(by, None).domain)
