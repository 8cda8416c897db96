"""The results explorer's selection logic (shopbench.explorer): cell → rows, filters, disagreements,
export, shop trial views and PADMÉ pair views, on real (small) builds, sweeps and trials."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from shopbench.explorer import pace as PC
from shopbench.metrics.pace.headline import headline_table

PROTOCOLS = ["pacejudge", "ares", "persona_blind", "geval"]
BACKBONES = ["local/checks", "local/oracle-rules", "local/random"]


@pytest.fixture(scope="module")
def sweep_run(paceshop_small, tmp_path_factory):
    """A run table of deterministic judges on the small build's test split, with the S0 subset."""
    from shopbench.judges.pace.sweep import sweep
    from shopbench.llm import Gateway

    _cfg, res = paceshop_small
    recs = [r for r in res.records if r.split == "test"]
    tmp = tmp_path_factory.mktemp("explorer")
    gw = Gateway(cache_dir=tmp / "cache", log_dir=tmp / "calls", progress=False)
    rt = sweep(gw, PROTOCOLS, BACKBONES, recs, run_id="explorer")
    s0 = sorted({r.record_id for r in recs if r.kind in ("good", "bad")})[::2]
    return rt, s0, {r.record_id: r for r in res.records}


@pytest.mark.parametrize("table", ["tab3", "tab4"])
def test_cell_rows_alone_reproduce_the_cell(sweep_run, table):
    """The rows behind a cell are exactly what the cell's value depends on: scoring those rows alone
    gives the table's estimate, and every row left out has no statistic in the column's part."""
    rt, s0, _ = sweep_run
    full = headline_table(rt, s0_ids=s0, n_boot=10, seed=0)
    full = full[(full.table == table) & (full.level == "backbone")]
    checked = 0
    for proto in ["pacejudge", "ares"]:
        for back in BACKBONES:
            for col in PC.TABLES[table]:
                rows = PC.cell_rows(rt, col, proto, back, table=table, s0_ids=s0)
                want = full[(full.protocol == proto) & (full.backbone == back) & (full.column == col)].iloc[0]
                assert rows.attrs["supported"] == bool(want.supported)
                if not want.supported or np.isnan(want.estimate):
                    continue
                again = headline_table(
                    rows.drop(columns=["counts_as", "hit", "verdict_correct"]), s0_ids=s0, n_boot=10
                )
                got = again[
                    (again.table == table) & (again.level == "backbone") & (again.column == col)
                ].estimate.iloc[0]
                assert got == pytest.approx(want.estimate), (proto, back, col)
                assert (rows.protocol == proto).all() and (rows.backbone == back).all()
                assert rows.counts_as.str.len().gt(0).all()
                checked += 1
    assert checked >= 10


def test_cell_rows_are_the_papers_slices(sweep_run):
    rt, s0, _ = sweep_run
    sub = rt[(rt.protocol == "pacejudge") & (rt.backbone == "local/checks")]
    # false fire: every GOOD record; the credit ("hit") is a fire
    ff = PC.cell_rows(rt, "false_fire", "pacejudge", "local/checks")
    assert set(ff.record_id) == set(sub[sub.kind == "good"].record_id)
    fired = (ff.defect_family.fillna("NONE") != "NONE") | ~ff.parse_ok.fillna(False).astype(bool)
    assert (ff.hit == fired).all()
    # S2 detect: single-defect BADs of the cross-component families; hit = judged BAD
    s2 = PC.cell_rows(rt, "S2_detect", "pacejudge", "local/checks")
    want = sub[
        (sub.kind == "bad")
        & (sub.tier == 1)
        & sub.gold_family.isin(["XCOMP_MISMATCH", "INTENT_DRIFT", "REDUNDANCY"])
    ]
    assert set(s2.record_id) == set(want.record_id) and len(s2)
    assert set(s2.counts_as) <= {"n", "n; detect", "n; detect; loc"}
    assert (s2.hit == (s2.verdict == "BAD")).all()
    # S0: exactly the subset's records
    r0 = PC.cell_rows(rt, "S0", "pacejudge", "local/checks", s0_ids=s0)
    assert set(r0.record_id) == set(s0) & set(sub.record_id)
    # Table 5's S1 column: the persona swaps
    s1 = PC.cell_rows(rt, "S1_P_source", "pacejudge", "local/checks")
    assert set(s1.kind) == {"swap"} and set(s1.swap_axis) <= {
        "budget",
        "hard_constraint",
        "brand",
        "attribute",
    }


def test_mean_cell_takes_every_backbone_and_grid_matches_headline(sweep_run):
    rt, s0, _ = sweep_run
    rows = PC.cell_rows(rt, "S4_family", "pacejudge", "mean")
    assert set(rows.backbone) == set(BACKBONES)
    assert len(rows) == sum(len(PC.cell_rows(rt, "S4_family", "pacejudge", b)) for b in BACKBONES)
    vals = PC.headline_values(rt, "tab3", s0_ids=s0)
    head = headline_table(rt, s0_ids=s0, n_boot=10)
    head = head[head.table == "tab3"]
    for r in head.itertuples():
        v = vals.loc[(r.protocol, r.backbone), r.column]
        if r.supported and np.isfinite(r.estimate):
            assert v == pytest.approx(r.estimate), r
        else:
            assert np.isnan(v), r
    # an off-target cell: ARES-style covers E only, so S1 is "–" but its rows are still shown
    off = PC.cell_rows(rt, "S1_P_source", "ares", "local/checks")
    assert off.attrs["supported"] is False and len(off) > 0


def test_filters_and_options(sweep_run):
    rt, _, _ = sweep_run
    rows = PC.cell_rows(rt, "S4_family", "pacejudge", "mean")
    opts = PC.filter_options(rows)
    assert opts["tier"] == [1] and set(opts["backbone"]) == set(BACKBONES)
    fam = opts["gold_family"][0]
    only = PC.filter_rows(rows, gold_family=fam, backbone="local/checks")
    assert len(only) and (only.gold_family == fam).all() and (only.backbone == "local/checks").all()
    assert len(PC.filter_rows(rows, tier=None, split=[])) == len(rows)  # empty filters do nothing
    wrong = PC.filter_rows(rows, correct=False)
    assert not wrong.verdict_correct.any()
    # multi-defect gold families match on any part
    bad = rt[
        (rt.kind == "bad") & (rt.tier >= 2) & (rt.protocol == "pacejudge") & (rt.backbone == "local/checks")
    ]
    part = bad.gold_family.iloc[0].split("+")[1]
    hit = PC.filter_rows(bad, gold_family=part)
    assert bad.gold_family.iloc[0] in set(hit.gold_family)
    with pytest.raises(KeyError, match="no column"):
        PC.filter_rows(rows, colour="red")


def test_disagreements(sweep_run):
    rt, _, _ = sweep_run
    a, b = ("pacejudge", "local/checks"), ("pacejudge", "local/random")
    d = PC.disagreements(rt, a, b, on="verdict")
    both = set(rt[(rt.protocol == a[0]) & (rt.backbone == a[1])].record_id)
    assert d.attrs["n_both"] == len(both) and 0 < len(d) < len(both)
    ra = rt[(rt.protocol == a[0]) & (rt.backbone == a[1])].set_index("record_id")
    rb = rt[(rt.protocol == b[0]) & (rt.backbone == b[1])].set_index("record_id")
    for r in d.itertuples():
        va = ra.loc[r.record_id, "verdict"] if ra.loc[r.record_id, "parse_ok"] else "<FAILED>"
        vb = rb.loc[r.record_id, "verdict"] if rb.loc[r.record_id, "parse_ok"] else "<FAILED>"
        assert (r.verdict_a, r.verdict_b) == (va, vb) and va != vb
    assert len(PC.disagreements(rt, a, a)) == 0
    anyd = PC.disagreements(rt, a, b, on=["verdict", "family", "location"])
    assert len(anyd) >= len(d)
    with pytest.raises(ValueError, match="on must name"):
        PC.disagreements(rt, a, b, on="mood")


def test_record_view_and_export(sweep_run, tmp_path):
    from shopbench.annotate.pairs import read_pairs

    rt, _, records = sweep_run
    rows = PC.cell_rows(rt, "S2_loc", "pacejudge", "local/checks")
    row = rows.iloc[0]
    html = PC.record_html(records[row.record_id])
    rec = records[row.record_id]
    assert rec.response.overview_text[:40].replace("&", "&amp;")[:20] in html or rec.query[:20] in html
    assert "Evidence pool" in html and "Shopper profile" in html
    jg = PC.judge_vs_gold(row.to_dict())
    assert jg.loc["verdict", "gold"] == row.label and jg.loc["defect_family", "gold"] == row.gold_family
    path, n = PC.export_pairs(records, rows.record_id, tmp_path / "sel.jsonl", seed=1)
    pairs = read_pairs(path)
    assert n == len(pairs) == rows.record_id.nunique()
    assert {p.hidden.source["bad_record_id"] for p in pairs} == set(rows.record_id)
    swaps = rt[rt.kind == "swap"].record_id.unique()[:3]
    with pytest.raises(Exception, match="no BAD record"):
        PC.export_pairs(records, swaps, tmp_path / "none.jsonl")


# ---- shop trials ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trials():
    from shopbench.shopsim.agents import make_agent
    from shopbench.shopsim.catalog.generate import control_catalog
    from shopbench.shopsim.scenario import ScenarioFactory
    from shopbench.shopsim.store import Store
    from shopbench.shopsim.trial import run_trial
    from shopbench.shopsim.user import ScriptedUser

    cat = control_catalog(1500, seed=3)
    store, fac = Store(cat), ScenarioFactory(cat)
    return [run_trial(fac.make(seed, kind="general", difficulty=6), make_agent(agent), ScriptedUser(), store)
            for seed, agent in ((11, "competent"), (12, "over_purchaser"), (13, "competent"))]  # fmt: skip


def test_trial_steps_replay_the_cart_and_flags(trials):
    from shopbench.explorer import shop as SX

    for t in trials:
        steps = SX.trial_steps(t)
        assert list(steps.step) == list(range(len(steps)))
        answered = [
            u for u in t.turns if u.agent_message or u.events or u.agent_error or not u.user.terminate
        ]
        assert (steps.actor == "customer").sum() == len(t.turns) and (steps.actor == "agent").sum() == len(
            answered
        )
        assert (steps.actor == "tool").sum() == len(t.events)
        # the cart after each agent reply is the controller's read; the last equals the final cart
        last = steps[steps.actor == "agent"].cart.iloc[-1]
        assert last == SX._cart_text(t.final_cart)
        flags = SX.turn_flags(t)
        assert flags[t.turns[-1].index][-1] == f"ended: {t.termination}"
        sched = SX.reveal_schedule(t)
        assert list(sched.product_id) == [g.product_id for g in t.scenario.items]
        for r in sched.itertuples():
            assert r.revealed_at == t.revealed_at.get(r.product_id, pd.NA) or pd.isna(r.revealed_at)
            assert r.final_quantity == t.final_cart.get(r.product_id, 0)
    over = trials[1]  # the over-purchaser buys more than asked: flagged at the turn it did
    allflags = [f for fs in SX.turn_flags(over).values() for f in fs]
    target = over.scenario.target
    extra = any(q > target.get(p, 0) for p, q in over.final_cart.items())
    assert extra == any(f.startswith(("over_quantity", "off_target_add")) for f in allflags)
    assert extra  # the scripted over-purchaser does over-purchase in this scenario
    idx = SX.trial_index(trials)
    assert list(idx.trial_id) == [t.trial_id for t in trials] and (idx.tool_calls > 0).all()


def test_read_trials_is_read_only_and_skips_a_torn_line(trials, tmp_path):
    from shopbench.explorer.shop import read_trials

    p = tmp_path / "competent.jsonl"
    text = "".join(json.dumps(t.to_dict()) + "\n" for t in trials) + '{"trial_id": "cut'
    p.write_text(text)
    got = read_trials(tmp_path)
    assert [t.trial_id for t in got] == [t.trial_id for t in trials]
    assert p.read_text() == text  # nothing repaired: the explorer never writes


# ---- PADMÉ pairs ------------------------------------------------------------------------------------------


def _pair():
    from shopbench.core.conversation import Trajectory
    from shopbench.padme.types import Pair, Vote

    def roll(rid, level):
        return Trajectory(rid, "t1", "airline", "test", "task_resolution", level, f"be {level}", "agent-m", "user-m", 0, 0,
                          [{"role": "user", "content": "change my flight"}, {"role": "assistant", "content": f"{level} answer"}])  # fmt: skip

    votes = [Vote("J1", 1, 2, 2, True), Vote("J2", 2, 1, 2, False, swapped_choice=1)]
    return Pair("p1", "c1", "t1", "airline", "test", "task_resolution", "bad-good", "agent-m", 0, roll("w", "bad"),
                roll("b", "good"), {"bad": "be bad", "good": "be good"}, votes, depth=1, kept=False)  # fmt: skip


def test_pair_views():
    from shopbench.explorer import padme as PX

    p = _pair()
    v = PX.votes_table(p)
    assert list(v.better_shown_in_slot) == [2, 1] and list(v.agrees) == [True, False]
    scores = pd.DataFrame({"evaluator": ["e1", "e1", "e1", "e2", "e2"], "backbone": ["m", "m", "m", "h", "h"],
                           "rollout_id": ["w", "b", "b", "w", "b"], "criterion": ["task_resolution"] * 5,
                           "run": [0, 0, 1, 0, 0], "score": [0.2, 0.8, 0.6, 0.5, np.nan]})  # fmt: skip
    e = PX.evaluator_table(p, scores).set_index("evaluator")
    assert e.loc["e1", "better"] == pytest.approx(0.7) and e.loc["e1", "prefers"] == "better"
    assert e.loc["e2", "prefers"] == "–" and e.loc["e2", "failures"] == 1
    s = PX.pair_summary(p)
    assert s.loc["worse", "level"] == "bad" and s.attrs["filter_outcome"] == "judge2_reject"
    html = PX.pair_html(p)
    assert html.index("bad answer") < html.index("good answer")
    assert PX.evaluator_table(p, None).empty


# ---- reading a profile's results --------------------------------------------------------------------------


def test_results_say_what_is_missing(tmp_path):
    from shopbench.explorer import MissingResults, Results, explore

    (tmp_path / "p" / "data").mkdir(parents=True)
    r = Results(tmp_path / "p")
    assert not any(r.available().values())
    with pytest.raises(MissingResults, match="run table") as e:
        r.run_table  # noqa: B018
    assert "20_pace_judge_sweep" in e.value.fix
    ex = explore(r)  # every panel missing: the explorer still opens and says which notebook makes each part
    assert ex.pace is None and ex.shop is None and ex.padme is None
    text = " ".join(k.value for k in ex.tabs.children)
    assert "20_pace_judge_sweep" in text and "80_shop_agents" in text and "40_padme_synthesis" in text
    with pytest.raises(MissingResults, match="no results folder"):
        Results(tmp_path / "nothing")


def test_explorer_widgets_on_a_written_run(sweep_run, trials, tmp_path):
    """The widget layer over real files: picking a cell fills the records list, a filter narrows it,
    a record shows its judge output, and the other tabs render a trial and a pair."""
    from shopbench.explorer import explore

    rt, s0, records = sweep_run
    data = tmp_path / "smoke" / "data"
    (data / "judging").mkdir(parents=True)
    rt.to_parquet(data / "judging" / "run_table.parquet")
    (data / "shopsim" / "trajectories").mkdir(parents=True)
    with open(data / "shopsim" / "trajectories" / "competent.jsonl", "w") as f:
        for t in trials:
            f.write(json.dumps(t.to_dict()) + "\n")
    (data / "padme" / "dataset").mkdir(parents=True)
    from shopbench.padme.dataset import write_pairs_dataset

    write_pairs_dataset([_pair()], data / "padme" / "dataset")
    ex = explore(tmp_path / "smoke")
    assert ex.pace is not None and ex.shop is not None and ex.padme is not None
    rows = ex.pace.select("tab3", "pacejudge", "local/checks", "S4_family")
    assert len(ex.pace.records.options) == len(rows) > 0
    assert "S4_family" in ex.pace.status.value and "sb-sel" in ex.pace.grid.value
    assert (
        f"<h3>{rows.record_id.iloc[0]}</h3>" in ex.pace.detail.value
    )  # the first row is shown, not a stale one
    assert "Raw output" in ex.pace.detail.value and "record not in the build" in ex.pace.detail.value
    fam = ex.pace.filters["gold_family"].options[1]
    ex.pace.filters["gold_family"].value = fam
    assert 0 < len(ex.pace.view) < len(rows) and (ex.pace.view.gold_family == fam).all()
    ex.pace._disagree()
    assert "records both judged differ" in ex.pace.disagree_out.value
    ex.pace._export()
    assert "not exported" in ex.pace.export_msg.value  # no PACEShop build on disk: said, not raised
    assert "Turn by turn" in ex.shop.out.value and len(ex.shop.trial.options) == len(trials)
    assert "Filter votes" in ex.padme.out.value and "good answer" in ex.padme.out.value


RAW_MISSING = __import__("re").compile(
    r">\s*(?:nan|NaN|None|NaT|&lt;NA&gt;)\s*<|&lt;NA&gt;|<NA>|(?<![\w.\"'])(?:nan|NaN|None|NaT)(?![\w.\"'])"
)


def test_for_display_has_one_missing_mark():
    """Issue 16 §3: the explorer's one missing-value mark is "–" (None, NaN, <NA>, NaT alike); an
    empty string stays empty and values are unchanged."""
    from shopbench.explorer import for_display

    df = pd.DataFrame({"i": pd.array([1, None], dtype="Int64"), "f": [0.5, np.nan], "o": ["x", None],
                       "t": pd.to_datetime(["2026-01-01", None]), "s": ["", "y"]},
                      index=pd.Index([1.0, np.nan], name="k"))  # fmt: skip
    shown = for_display(df)
    assert shown.iloc[1].tolist() == ["–", "–", "–", "–", "y"] and shown.index.tolist() == [1.0, "–"]
    assert shown.iloc[0, 0] == 1 and shown.iloc[0, 1] == 0.5 and shown.iloc[0, 4] == ""
    assert not RAW_MISSING.search(shown.to_html()) and RAW_MISSING.search(df.to_html())  # the check can fail


def test_explorer_html_has_no_raw_missing_values(sweep_run, trials, tmp_path):
    import dataclasses

    """Every HTML view of the explorer (grid, record list, a record whose rationale, tier, gold family
    and repeat are missing, disagreements, every trial with its reveal schedule, the pair) prints "–"."""
    from shopbench.explorer import explore
    from shopbench.explorer.shop import reveal_schedule

    rt, _s0, _records = sweep_run
    # a trial cut after its first turn: goal items never asked for nor in the cart (<NA> turns)
    cut = dataclasses.replace(trials[0], turns=trials[0].turns[:1], revealed_at={}, agent="cut_short")
    data = tmp_path / "smoke" / "data"
    (data / "judging").mkdir(parents=True)
    rt.to_parquet(data / "judging" / "run_table.parquet")
    (data / "shopsim" / "trajectories").mkdir(parents=True)
    with open(data / "shopsim" / "trajectories" / "competent.jsonl", "w") as f:
        for t in [*trials, cut]:
            f.write(json.dumps(t.to_dict()) + "\n")
    from shopbench.padme.dataset import write_pairs_dataset

    write_pairs_dataset([_pair()], data / "padme" / "dataset")
    ex = explore(tmp_path / "smoke")
    ex.pace.select("tab3", "pacejudge", "mean", "S0")
    row = ex.pace.view.iloc[0].copy()
    row["rationale"], row["tier"], row["gold_family"], row["repeat"] = np.nan, pd.NA, None, np.nan
    ex.pace._disagree()
    views = {"grid": ex.pace.grid.value, "record": ex.pace.record_html(row), "disagree": ex.pace.disagree_out.value,
             "records list": "\n".join(o[0] for o in ex.pace.records.options)}  # fmt: skip
    assert "<pre>–</pre>" in views["record"]  # the missing rationale
    for v in [v for _, v in ex.shop.trial.options]:
        ex.shop.trial.value = v
        views[f"trial {v}"] = ex.shop.out.value
    views["pair"] = ex.padme.out.value
    assert len(views) == 4 + len(trials) + 2  # every trial, the cut one too
    na = [reveal_schedule(t) for t in [*trials, cut]]
    assert any(s[["revealed_at", "in_cart_at"]].isna().any().any() for s in na)  # <NA> cells exist to show
    for name, html in views.items():
        m = RAW_MISSING.search(html)
        assert not m, f"{name}: raw missing value {html[max(0, m.start() - 120) : m.end() + 40]!r}"
