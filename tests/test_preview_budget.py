"""The budget in the preview (issue 29, item 5): tasks × repeats each planned comparison needs to detect
a difference, from measured variances, the paper's, real data or a stated bound."""

from __future__ import annotations

import json
import re
from math import ceil, sqrt

import pandas as pd
import pytest
from scipy.stats import norm

import shopbench.preview as PV
from shopbench.errors import InputError
from shopbench.paths import ROOT
from shopbench.preview import budget as BG
from shopbench.stats import minimum_detectable_effect, repeats_needed, tasks_needed

Z = norm.ppf(0.975) + norm.ppf(0.8)  # 1.959964 + 0.841621


@pytest.fixture
def outs(monkeypatch, tmp_path):
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path / "out"))
    return tmp_path / "out"


def test_power_formulas_on_a_hand_computed_design():
    # ω² = 0.02, σ² = 0.1, T = 100, R = 2: Var = (0.02 + 0.05) / 100; z + z = 2.801585
    assert Z == pytest.approx(2.801585, abs=1e-6)
    assert minimum_detectable_effect(0.02, 0.1, 100, 2) == pytest.approx(2.801585 * sqrt(0.0007), abs=1e-6)
    assert minimum_detectable_effect(0.02, 0.1, 100, 2) == pytest.approx(0.074123, abs=1e-6)
    # T = ceil(7.848878 · 0.07 / 0.0025) = ceil(219.77) = 220
    assert tasks_needed(0.05, 0.02, 0.1, 2) == 220
    # at T = 100: room = 100 · 0.0025 / 7.848878 − 0.02 = 0.011852; R = ceil(0.1 / 0.011852) = ceil(8.44) = 9
    assert repeats_needed(0.05, 0.02, 0.1, 100) == 9
    assert minimum_detectable_effect(0.02, 0.1, 100, 9) <= 0.05 < minimum_detectable_effect(0.02, 0.1, 100, 8)
    # at T = 50 the task term alone (0.02 / 50 · z²) exceeds δ²: no number of repeats reaches 5 points
    assert repeats_needed(0.05, 0.02, 0.1, 50) is None
    assert repeats_needed(0.05, 0.02, 0.0, 100) == 1  # nothing within a task to average away


def test_a_row_is_the_difference_of_two_subjects():
    v = BG.Variances(0.01, 0.05, "assumption", "test")
    r = BG._row("80", "x", "success", 100, 2, v, 0.05, 0.05, 0.8)
    # 2ω² = 0.02, 2σ² = 0.1: the design above
    assert r["mde"] == pytest.approx(0.074123, abs=1e-6)
    assert (r["tasks_needed"], r["repeats_needed"]) == (220, 9)
    assert (r["task_var"], r["within_var"], r["source"]) == (0.01, 0.05, "assumption")
    b = BG.bound()
    assert (b.task_var, b.within_var) == (0.25, 0.0) and "p = 0.5" in b.detail
    r = BG._row("20", "x", "accuracy", 1000, 1, b, 0.05, 0.05, 0.8)
    assert r["tasks_needed"] == ceil(Z**2 * 0.5 / 0.05**2) == 1570 and r["repeats_needed"] is None
    assert BG._row("20", "x", "accuracy", 4080, 1, b, 0.05, 0.05, 0.8)["repeats_needed"] == 1  # T suffices


def test_padme_paper_values_are_table_18s():
    seed = ROOT.parent / "shared" / "seeds" / "003_0cd6293d7152da9d.txt"
    if seed.is_file():  # every quoted accuracy ± SD is in the paper's Table 18, in its order
        tab18 = next(
            line for line in seed.read_text(encoding="utf-8").splitlines() if line.startswith("Table 18:")
        )
        found = [
            (float(a.replace("\\", "")), float(s.replace("\\", "")))
            for a, s in re.findall(r"(\d+\\.\d)±\\\\pm(\d\\.\d\d)", tab18)
        ]
        assert found == list(BG.PADME_TAB18)
    v = BG.padme_paper()
    sds = sorted(s for _, s in BG.PADME_TAB18)
    assert v.within_var == pytest.approx(1000 * (sds[12] / 100) ** 2)  # median of 25 SDs: 0.55 points
    assert v.source == "paper" and 0 < v.task_var < 0.25


def test_tau_airline_split_matches_an_independent_anova():
    path = ROOT.parent / "shared" / "data" / "tau_bench_airline_trajectories" / "gpt-4o-airline.json"
    if not path.is_file():
        pytest.skip("τ-bench airline trajectories absent")
    v = BG.tau_airline(str(path))
    f = pd.DataFrame(
        [{"t": d["task_id"], "y": float(d["reward"] == 1)} for d in json.loads(path.read_text())]
    )
    g = f.groupby("t")["y"]
    within = g.var(ddof=1).mean()  # balanced 50 × 4
    between = g.mean().var(ddof=1) - within / 4
    assert v.within_var == pytest.approx(within) and v.task_var == pytest.approx(max(0.0, between))
    assert v.source == "real data"


def test_preview_prints_the_budget_section(outs, capsys):
    assert PV.main(["--profile", "smoke", "--detect", "0.05"]) == 0
    out = capsys.readouterr().out
    sec = out[out.index("Budget to detect a 5-point difference") :]
    for nb, what in (
        ("80", "exact cart"),
        ("80", "goal progress"),
        ("20", "accuracy"),
        ("50", "pair accuracy"),
    ):
        assert re.search(rf"^{nb}\s.*{what}", sec, re.M), (nb, what)
    assert "[1]" in sec and ("real data" in sec or "assumption" in sec)
    data = json.loads((outs / "smoke" / "paper" / "preview.json").read_text(encoding="utf-8"))
    assert data["budget"] and {r["notebook"] for r in data["budget"]} == {"80", "20", "50"}
    assert all(r["source"] in {"measured", "paper", "real data", "assumption"} for r in data["budget"])
    df = PV.profile_budget("smoke", 0.1)  # the same table from Python, at another difference
    assert len(df) == len(data["budget"]) and (df["delta"] == 0.1).all()


def _noise_table(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, index=False)


def test_measured_variances_are_read_from_the_noise_floor_table(outs):
    from shopbench.config import load_profile
    from shopbench.preview.notebooks import Builder

    t = outs / "smoke" / "paper" / "tables" / "shop_noise_floor.csv"
    base = {"n_tasks": 20, "n_trials": 80, "share_agent": 0.1, "why": ""}
    _noise_table(t, [
        {**base, "agent": "llm:a", "kind": "llm", "outcome": "success", "mean": 0.3, "share_task": 0.4, "var_total": 0.2},
        {**base, "agent": "llm:a", "kind": "llm", "outcome": "goal_progress", "mean": 0.0, "share_task": None,
         "var_total": 0.0},
        {**base, "agent": "s:1", "kind": "scripted", "outcome": "success", "mean": 0.5, "share_task": 1.0,
         "var_total": 0.24},
        {**base, "agent": "s:2", "kind": "scripted", "outcome": "success", "mean": 1.0, "share_task": None,
         "var_total": 0.0},
    ])  # fmt: skip
    df, notes = BG.budget_table(Builder(load_profile("smoke")), 0.05, only=["80_shop_agents"])
    llm = df[(df.comparison.str.startswith("agent")) & (df.outcome == "success")].iloc[0]
    assert llm.source == "measured" and str(t) in llm.source_detail
    assert (llm.task_var, llm.within_var) == (pytest.approx(0.08), pytest.approx(0.12))  # 0.4·0.2, 0.6·0.2
    assert llm.mde == pytest.approx(Z * sqrt((0.16 + 0.24) / llm.n_tasks))
    scr = df[(df.comparison.str.contains("scripted")) & (df.outcome == "success")].iloc[0]
    assert (scr.task_var, scr.within_var) == (pytest.approx(0.12), pytest.approx(0.0))  # mean of 0.24 and 0
    gp = df[(df.comparison.str.startswith("agent")) & (df.outcome == "goal_progress")].iloc[0]
    assert gp.source == "assumption"  # SmolLM2-like: never varied, no information; falls through
    assert any("varied" in n for n in notes)
    # without var_total: shares × m(1−m)
    _noise_table(
        t, [{**base, "agent": "llm:a", "kind": "llm", "outcome": "success", "mean": 0.3, "share_task": 0.5}]
    )
    v, _ = BG.shop_measured(t, "llm", "success")
    assert (v.task_var, v.within_var) == (pytest.approx(0.105), pytest.approx(0.105))


def test_measured_padme_evaluators(tmp_path):
    t = tmp_path / "padme_tab3_evaluators.csv"
    pd.DataFrame([{"evaluator": "e1", "n_pairs": 100, "n_runs": 3, "accuracy": 0.8, "accuracy_sd": 0.02,
                   "evidence": "measured"},
                  {"evaluator": "e2", "n_pairs": 100, "n_runs": 1, "accuracy": 0.6, "accuracy_sd": None,
                   "evidence": "measured"}]).to_csv(t, index=False)  # fmt: skip
    v, _ = BG.padme_measured(t, ["e1", "e2"])
    assert v.within_var == pytest.approx(100 * 0.02**2) and v.task_var == pytest.approx(0.16 - 0.04)
    assert BG.padme_measured(t, ["e2"])[0] is None  # one run: no within-pair estimate


@pytest.mark.parametrize(
    "text, says",
    [("agent,kind,outcome\nx,llm,success\n", "column(s) mean, n_trials, share_task missing"),
     ("agent,kind,outcome,mean,n_trials,share_task\nx,llm,success,0.3,80,lots\n", "share_task = 'lots'"),
     ("agent,kind,outcome,mean,n_trials,share_task\nx,llm,success,0.3,80,1.7\n", "share_task = 1.7"),
     ("agent,kind\nx,llm\ny,llm,a,b\n", "unreadable table (ParserError")],
)  # fmt: skip
def test_a_corrupted_variance_table_is_one_clear_message(outs, capsys, text, says):
    t = outs / "smoke" / "paper" / "tables" / "shop_noise_floor.csv"
    t.parent.mkdir(parents=True)
    t.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as e:
        PV.main(["--profile", "smoke", "--only", "80_shop_agents"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "shop_noise_floor.csv" in err and "Traceback" not in err
    with pytest.raises(InputError):
        BG.shop_measured(t, "llm", "success")


def test_the_pipeline_gate_notes_a_corrupted_table_instead_of_stopping(outs):
    from shopbench.config import load_profile

    t = outs / "smoke" / "paper" / "tables" / "shop_noise_floor.csv"
    t.parent.mkdir(parents=True)
    t.write_text("agent,kind\n", encoding="utf-8")
    pv = PV.build_preview(load_profile("smoke"), only=["80_shop_agents"], strict_budget=False)
    assert not pv.budget and any("budget not computed" in n for n in pv.notes)


def test_bad_detect_is_refused(outs, capsys):
    with pytest.raises(SystemExit) as e:
        PV.main(["--profile", "smoke", "--only", "80_shop_agents", "--detect", "5"])
    assert e.value.code == 2 and "between 0 and 1" in capsys.readouterr().err
