"""Agreement statistics (shopbench.stats), the PADMÉ human-study importer (shopbench.annotate.humanstudy) and
its analysis (shopbench.padme.study)."""

import json
import shutil

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from shopbench.annotate.humanstudy import (
    HumanStudyFormatError,
    export_human_study,
    implied_statistics,
    load_human_study,
    p_for_alpha,
    simulate_panels,
)
from shopbench.padme.study import agreement_summary, compare_with_paper, summary_tables, write_summary
from shopbench.paths import ROOT
from shopbench.stats.agreement import (
    alpha_nominal,
    bootstrap_alpha,
    krippendorff_alpha,
    majority_vote,
    pairwise_agreement,
    unanimous,
    unit_coincidences,
    unit_value_counts,
)
from shopbench.stats.bootstrap import bootstrap_mean, bootstrap_ratio, resample_counts
from shopbench.stats.poststrat import poststratified_mean
from shopbench.stats.tests import holm, permutation_test, position_balance

REAL_STUDY = ROOT.parent / "shared" / "data" / "padme_human_study"
nan = np.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers, 12 units,
# values 1-5, missing data. Reported: nominal .743, ordinal .815, interval .849.
K2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
])  # fmt: skip


# ---- Krippendorff's alpha --------------------------------------------------------------------------------


def test_alpha_krippendorff_2011_worked_example():
    assert round(alpha_nominal(K2011), 3) == 0.743
    assert round(krippendorff_alpha(K2011), 3) == 0.743
    assert round(krippendorff_alpha(K2011, level="ordinal"), 3) == 0.815
    assert round(krippendorff_alpha(K2011, level="interval"), 3) == 0.849


@pytest.mark.parametrize("seed", range(5))
def test_alpha_matches_package_on_random_data_with_missing_values(seed):
    rng = np.random.default_rng(seed)
    raters, units, cats = 3 + seed % 3, 40, 2 + seed % 3
    data = rng.integers(1, cats + 1, (raters, units)).astype(float)
    data[rng.random(data.shape) < 0.3] = nan
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert alpha_nominal(data) == pytest.approx(ref, abs=1e-12)
    assert krippendorff_alpha(data) == pytest.approx(ref, abs=1e-12)


def test_alpha_undefined_is_nan():
    assert np.isnan(krippendorff_alpha(np.array([[1.0, 1.0], [1.0, 1.0]])))
    assert np.isnan(krippendorff_alpha(np.array([[1.0, nan], [nan, 2.0]])))  # nothing pairable


def test_bootstrap_alpha_equals_package_on_each_resample():
    rng = np.random.default_rng(3)
    data = rng.integers(1, 3, (3, 30)).astype(float)
    data[rng.random(data.shape) < 0.2] = nan
    res = bootstrap_alpha(data, n_boot=20, seed=11, keep_samples=True)
    weights = np.concatenate(list(resample_counts(30, 20, seed=11)))
    for w, a in zip(weights, res.samples, strict=True):
        resampled = np.repeat(data, w, axis=1)  # unit u drawn w[u] times
        assert a == pytest.approx(krippendorff.alpha(reliability_data=resampled, level_of_measurement="nominal",
                                                     value_domain=[1.0, 2.0]), abs=1e-12)  # fmt: skip
    assert res.estimate == pytest.approx(krippendorff_alpha(data))


def test_coincidences_of_one_unit():
    counts, cats = unit_value_counts(np.array([[1.0], [1.0], [2.0]]))
    o = unit_coincidences(counts)[0]
    # m = (2, 1): o_11 = 2·1/2, o_12 = o_21 = 2·1/2, o_22 = 0
    assert cats.tolist() == [1.0, 2.0]
    assert o.tolist() == [[1.0, 1.0], [1.0, 0.0]]


# ---- unanimity, majority, kappa --------------------------------------------------------------------------


def test_unanimous_and_majority_vote():
    data = np.array([[1, 2, 1, 1, nan], [1, 2, 2, 1, 2], [1, 2, 2, nan, nan]], dtype=float)
    assert unanimous(data) == (3, 4)  # units 0, 1, 3 unanimous; unit 4 has one rating
    maj = majority_vote(data)
    assert maj[:3].tolist() == [1, 2, 2] and maj[4] == 2
    assert np.isnan(majority_vote(np.array([[1.0], [2.0]])))[0]  # a 1-1 tie has no majority


def test_cohen_kappa_hand_computed_2x2():
    # 10 items; a=1&b=1: 4, a=1&b=2: 1, a=2&b=1: 2, a=2&b=2: 3
    a = np.array([1] * 5 + [2] * 5, dtype=float)
    b = np.array([1, 1, 1, 1, 2, 1, 1, 2, 2, 2], dtype=float)
    # p_o = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5) / (1 − 0.5) = 0.4
    conf_a = np.array([100] * 10)
    conf_b = np.array([100, 0, 100, 100, 100, 50, 100, 100, 100, 100])
    r = pairwise_agreement(a, b, conf_a, conf_b, certain=100)
    assert r["kappa"] == pytest.approx(0.4, abs=1e-12)
    assert r["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert r["agreement"] == pytest.approx(0.7) and (r["agree"], r["n"]) == (7, 10)
    # both certain on 8 items (not items 1 and 5); of those, disagreements at items 4, 6 -> 6/8
    assert (r["both_certain_agree"], r["both_certain_n"]) == (6, 8)


# ---- bootstrap ---------------------------------------------------------------------------------------------


def test_bootstrap_is_deterministic_per_seed():
    x = np.random.default_rng(0).normal(size=200)
    a, b = bootstrap_mean(x, n_boot=500, seed=5), bootstrap_mean(x, n_boot=500, seed=5)
    c = bootstrap_mean(x, n_boot=500, seed=6)
    assert (a.low, a.high) == (b.low, b.high)
    assert (a.low, a.high) != (c.low, c.high)
    assert a.estimate == pytest.approx(x.mean())


def test_bootstrap_matches_scipy_percentile_and_covers():
    rng = np.random.default_rng(1)
    x = rng.normal(2.0, 1.0, 120)
    ours = bootstrap_mean(x, n_boot=20_000, seed=0)
    ref = sps.bootstrap((x,), np.mean, n_resamples=20_000, method="percentile", rng=0).confidence_interval
    se = x.std(ddof=1) / np.sqrt(len(x))
    # Monte Carlo SD of the difference of two 20,000-resample percentile ends is about 0.03 SE
    assert abs(ours.low - ref.low) < 0.12 * se and abs(ours.high - ref.high) < 0.12 * se
    # coverage: 300 samples of size 40 from N(0, 1); the 95 % interval should cover 0 about 95 % of the time
    data = rng.normal(0.0, 1.0, (40, 300))
    res = bootstrap_mean(data, n_boot=1000, seed=2)
    coverage = np.mean((res.low <= 0) & (res.high >= 0))
    assert 0.88 <= coverage <= 0.99, coverage


def test_bootstrap_ratio_and_strata():
    num = np.array([1, 0, 1, 1, 0, 0], dtype=float)
    den = np.array([1, 1, 1, 1, 0, 0], dtype=float)
    r = bootstrap_ratio(num, den, n_boot=300, seed=0)
    assert r.estimate == pytest.approx(0.75) and 0 <= r.low <= r.high <= 1
    strata = np.array([0, 0, 0, 1, 1, 1])
    for w in resample_counts(6, 50, seed=0, strata=strata, chunk=7):
        assert (w[:, :3].sum(axis=1) == 3).all() and (w[:, 3:].sum(axis=1) == 3).all()


# ---- tests -------------------------------------------------------------------------------------------------


def test_permutation_test_known_answer():
    # all C(6,3) = 20 splits equally likely; |mean diff| >= 3 only for the observed split and its mirror
    r = permutation_test([1, 2, 3], [4, 5, 6], n_perm=100_000, seed=0)
    assert r["diff"] == -3.0 and r["p"] == pytest.approx(0.1, abs=0.005)
    less = permutation_test([1, 2, 3], [4, 5, 6], n_perm=100_000, seed=0, alternative="less")
    assert less["p"] == pytest.approx(0.05, abs=0.004)
    same = permutation_test([1, 1, 1], [1, 1, 1], n_perm=1000, seed=0)
    assert same["p"] == 1.0


def test_permutation_test_agrees_with_scipy():
    rng = np.random.default_rng(4)
    x, y = rng.normal(0.4, 1, 30), rng.normal(0, 1, 50)
    ours = permutation_test(x, y, n_perm=100_000, seed=1)
    ref = sps.permutation_test((x, y), lambda a, b, axis: a.mean(axis) - b.mean(axis), vectorized=True,
                               n_resamples=100_000, rng=1).pvalue  # fmt: skip
    assert ours["p"] == pytest.approx(ref, abs=0.006)


def test_position_balance_and_holm():
    r = position_balance(np.array([2] * 511 + [1] * 489))
    assert (r["k"], r["n"]) == (511, 1000)
    assert r["p"] == pytest.approx(sps.binomtest(511, 1000, 0.5).pvalue) and r["p"] > 0.10
    assert position_balance(np.array([2] * 20))["p"] < 1e-5
    reject, p = holm([0.01, 0.04, 0.03, nan])
    # Holm: sorted 0.01·3 = 0.03, 0.03·2 = 0.06, max(0.06, 0.04·1) = 0.06
    assert p[:3] == pytest.approx([0.03, 0.06, 0.06]) and np.isnan(p[3])
    assert reject.tolist() == [True, False, False, False]


def test_poststratified_mean_hand_example():
    r = poststratified_mean([1, 1, 0, 0], ["A", "A", "B", "B"], {"A": 3, "B": 1})
    assert r["raw"] == 0.5 and r["estimate"] == pytest.approx(0.75) and r["shift"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="missing from the population"):
        poststratified_mean([1, 0], ["A", "C"], {"A": 1})


# ---- the human-study format ----------------------------------------------------------------------------------


@pytest.fixture
def sim_study(tmp_path):
    ann, key = simulate_panels(n_pairs=24, seed=1)
    criteria = [{"name": c, "description": c} for c in sorted(key["criterion"].unique())]
    return export_human_study(ann, key, tmp_path / "study", criteria=criteria), ann, key


def _rewrite(path, fn):
    rows = json.loads(path.read_text())
    fn(rows)
    path.write_text(json.dumps(rows))


def test_export_import_round_trip(sim_study):
    folder, ann, key = sim_study
    ann2, key2 = load_human_study(folder)
    pd.testing.assert_frame_equal(ann2, ann, check_dtype=False)
    pd.testing.assert_frame_equal(key2, key, check_dtype=False)


@pytest.mark.parametrize(
    "field, value, message",
    [("judge_preference", 3, "must be one of [1, 2], got 3"), ("confidence", 75, "must be one of [0, 50, 100]"),
     ("judge_preference", True, "must be an integer"), ("id", None, "missing")],
)  # fmt: skip
def test_importer_names_file_row_and_field(sim_study, field, value, message):
    folder = sim_study[0]
    target = folder / "panel_1" / "annotator_2.json"

    def corrupt(rows):
        if value is None:
            del rows[3][field]
        else:
            rows[3][field] = value

    _rewrite(target, corrupt)
    with pytest.raises(HumanStudyFormatError) as e:
        load_human_study(folder)
    msg = str(e.value)
    assert "panel_1/annotator_2.json" in msg and "row 3" in msg and f"'{field}'" in msg and message in msg
    assert (e.value.row, e.value.field) == (3, field)


def test_importer_rejects_answer_key_and_cross_file_errors(sim_study):
    folder = sim_study[0]
    key_path = folder / "answer_key.json"
    original = key_path.read_text()
    _rewrite(key_path, lambda rows: rows[5].update(filter_outcome="judge3_reject"))
    with pytest.raises(HumanStudyFormatError, match=r"answer_key.json, row 5: field 'filter_outcome'"):
        load_human_study(folder)
    key_path.write_text(original)
    _rewrite(folder / "panel_2" / "annotator_4.json", lambda rows: rows[0].update(id="no-such-pair"))
    with pytest.raises(
        HumanStudyFormatError, match=r"annotator_4.json, row 0: field 'id': id 'no-such-pair' is not"
    ):
        load_human_study(folder)


# ---- simulation ----------------------------------------------------------------------------------------------


def test_simulation_recovers_implied_alpha():
    p = p_for_alpha(0.35)
    assert implied_statistics(p)["pooled_alpha"] == pytest.approx(0.35)
    assert implied_statistics(0.8)["pooled_alpha"] == pytest.approx((2 * 0.8 - 1) ** 2)
    ann, key = simulate_panels(n_pairs=6000, alpha_target=0.35, seed=0)
    st = summary = agreement_summary(ann, key, n_boot=200, n_perm=1000, seed=0)
    implied = key.attrs["implied"]
    assert st["pooled_alpha"] == pytest.approx(implied["pooled_alpha"], abs=0.04)
    lo, hi = summary["pooled_alpha_ci"]
    assert lo < implied["pooled_alpha"] < hi
    for d in ("D0", "D1", "D2"):
        assert summary["label_accuracy"][d] == pytest.approx(implied["depth"][d]["label_accuracy"], abs=0.03)
    # heterogeneous annotators: α from the mean pairwise disagreement
    imp = implied_statistics([0.9, 0.8, 0.7, 0.9, 0.8, 0.7])["pooled_alpha"]
    d_o = np.mean([0.9 * 0.2 + 0.8 * 0.1, 0.9 * 0.3 + 0.7 * 0.1, 0.8 * 0.3 + 0.7 * 0.2])
    assert imp == pytest.approx(1 - d_o / 0.5)


def test_summary_json_has_the_promised_keys(tmp_path):
    ann, key = simulate_panels(n_pairs=60, seed=2)
    s = agreement_summary(ann, key, n_boot=100, n_perm=500, seed=0)
    path = write_summary(s, tmp_path / "agreement" / "summary.json")
    loaded = json.loads(path.read_text())
    for k in ("pooled_alpha", "pooled_alpha_ci", "panel_alpha", "panel_alpha_ci", "unanimous", "n_pairs",
              "label_accuracy", "label_accuracy_ci", "label_alpha", "label_alpha_ci", "pairwise_kappa"):  # fmt: skip
        assert k in loaded, k
    assert set(loaded["label_accuracy"]) == {"D0", "D1", "D2"} and set(loaded["panel_alpha"]) == {"1", "2"}
    assert {"a", "b", "kappa", "agreement"} <= set(loaded["pairwise_kappa"][0])
    assert len(loaded["pairwise_kappa"]) == 6 and len(loaded["label_accuracy_ci"]["D2"]) == 2
    assert set(summary_tables(s)) >= {
        "padme_tab2_label_accuracy",
        "padme_tab12_pairwise_kappa",
        "padme_tab15_subsets",
    }


# ---- the real PADMÉ study (../shared/data beside the repository) ------------------------------------------------

needs_real = pytest.mark.skipif(
    not REAL_STUDY.is_dir(), reason=f"PADMÉ human study not found at {REAL_STUDY}"
)


@needs_real
def test_real_study_reproduces_the_paper(tmp_path):
    ann, key = load_human_study(REAL_STUDY)
    assert len(ann) == 450 and len(key) == 150 and ann["annotator"].nunique() == 6
    s = agreement_summary(ann, key, n_boot=500, n_perm=20_000, seed=0)
    assert s["pooled_alpha"] == pytest.approx(0.350, abs=5e-4)
    assert s["panel_alpha"] == pytest.approx({"1": 0.451, "2": 0.240}, abs=5e-4)
    assert s["unanimous"] == 77 and s["unanimous_by_panel"] == {"1": 44, "2": 33}
    assert s["label_accuracy"]["D0"] == pytest.approx(110 / 150)
    assert s["label_accuracy"]["D1"] == pytest.approx(96 / 114)
    assert s["label_accuracy"]["D2"] == pytest.approx(88 / 104)
    assert s["label_alpha"]["D0"] == pytest.approx(0.468, abs=5e-4)
    assert s["label_alpha"]["D2"] == pytest.approx(0.694, abs=5e-4)
    assert s["hybrid_alpha"]["D2"] == pytest.approx(0.496, abs=5e-4)
    assert s["rejected_label_accuracy"] == {"D0\\D1": [14, 36], "D1\\D2": [8, 10]}
    lo, hi = s["pooled_alpha_ci"]
    assert 0.20 < lo < 0.30 and 0.40 < hi < 0.50
    cmp = compare_with_paper(s)
    assert cmp["matches"].dropna().all(), cmp[cmp["matches"] == False]  # noqa: E712
    # round trip of the real files keeps every value
    out = export_human_study(
        ann, key, tmp_path / "copy", sampling=json.loads((REAL_STUDY / "sampling.json").read_text())
    )
    shutil.copy(REAL_STUDY / "criteria.json", out / "criteria.json")
    ann2, key2 = load_human_study(out)
    pd.testing.assert_frame_equal(ann2, ann)
    pd.testing.assert_frame_equal(key2, key)
