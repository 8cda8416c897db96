"""The PADMÉ human-study analysis: every agreement statistic of Section 5.2 and Appendices C.2, D, E.

Input: the two frames of :func:`shopbench.annotate.humanstudy.load_human_study` (annotations with
``pair_id, annotator, panel, criterion, choice, confidence``; the answer key with ``pair_id,
correct_response, filter_outcome, criterion`` and optional ``domain, agent_model, level_contrast``).

Definitions quoted from the paper (arXiv 2609.36086):

- Filter depths: "With D_0 representing the initial set of generated pairs and D_k the subset
  surviving stage k, ... D_k = {p ∈ D_{k−1} | J_k(p, c) = 1}" (Eq. 2). Here D0 = all annotated pairs,
  D1 = not rejected by judge 1, D2 = kept by both.
- Human reference: "The majority vote across the three annotators serves as the human reference label
  (maj)" (Section 4).
- Synthetic label accuracy: "Agr(maj, ⋆; D_k)" with "Agr(r, r′; D) = (1/|D|) Σ_{p∈D} 1[ŷ_r(p) = ŷ_r′(p)]"
  (Eq. 5); "Synthetic label accuracy reports Agr(maj, ⋆; D_k) with bootstrap 95% confidence intervals
  in brackets. α is Krippendorff's α for the same label-versus-majority decision" (Table 2).
- Panel reliability: "Krippendorff's α over a panel of three raters. The first row is the human panel
  (a1, a2, a3). The second row substitutes one human rater with synthetic label ⋆ and reports
  mean ± SD across permutations (a1, a2, ⋆), (a1, a3, ⋆), and (a2, a3, ⋆). Δ represents the difference
  between hybrid and human-only panels" (Table 11). a1..a3 are the panel-local raters (here: each
  panel's annotators in natural file-name order); a pooled hybrid panel joins panel 1's and panel 2's
  raters of the same local position. SD is the sample SD (ddof = 1) of the three permutations.
- "Unanimous indicates a 3–0 vote. Lower blocks report pairwise agreement metrics for two-annotator
  panel subsets" (Table 12): raw agreement, Cohen's κ, and agreement where "both said 'certain'".
- Confidence: "Per-pair confidence reflects the mean of three annotator ratings (0 = guess,
  1 = leaning, 2 = certain). Statistical significance (p) is computed via permutation tests over
  100,000 shuffles" (Table 13); "Krippendorff's α reaches +0.545 on the 41 pairs where all three
  annotators indicate 'certain', compared to +0.270 on the remaining 109 pairs" (D.3); "neither J1 nor
  J2 retains a significantly more confident pair subset than the one it removes" (D.3): J1 compares
  D1 with D0∖D1, J2 compares D2 with D1∖D2.
- Subsets: "Gain reflects the accuracy change from two filters (D2) versus zero filters (D0);
  retention represents the proportion of target pairs retained after two filtering stages" (Table 15).
- Post-stratification: "we post-stratify synthetic label accuracy using actual population weights
  across four axes: domain, criterion, agent model, and level contrast" (D.4); the population weights
  are the 1,000-pair dataset's composition (Table 6), :data:`PADME_POPULATION`.
- Position balance: "the target trajectory appears in slot two in 511 of the 1,000 final pairs ...
  binomial p > 0.10" (C.2, Table 9). In the human-study files ``correct_response`` is the target's slot.

Bootstrap CIs resample pairs within each panel (percentile, :mod:`shopbench.stats.bootstrap`); all
depths share the same resamples.

The estimators are the general ones of :mod:`shopbench.stats`; this module, PADMÉ's own, lives beside
PADMÉ (moved from ``stats/`` by issue 27).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..stats.agreement import (
    alpha_from_coincidences,
    bootstrap_alpha,
    krippendorff_alpha,
    majority_vote,
    pairwise_agreement,
    unanimous,
    unit_coincidences,
    unit_value_counts,
)
from ..stats.bootstrap import bootstrap, bootstrap_ratio
from ..stats.poststrat import poststratified_table
from ..stats.tests import N_PERM, holm, minimum_detectable_difference, permutation_test, position_balance

DEPTHS = {
    "D0": "all pairs (unfiltered)",
    "D1": "not rejected by J1 (1 filter)",
    "D2": "kept by J1 and J2 (2 filters)",
}
SUBSET_AXES = ("criterion", "domain", "agent_model", "level_contrast")
CERTAIN = 2.0  # on the paper's 0–2 scale (file confidence 100)

# Table 6: the 1,000 released pairs by axis (population weights for Table 14).
PADME_POPULATION = {
    "criterion": {"friendliness": 355, "task_resolution": 329, "communication_clarity": 316},
    "domain": {"retail": 309, "telecom": 294, "banking_knowledge": 262, "airline": 135},
    "level_contrast": {"bad-good": 359, "ok-good": 328, "bad-ok": 313},
    "agent_model": {"nemotron-lightning-3.5": 341, "gpt-oss-120b": 334, "gpt-oss-20b": 325},
}

# Numbers the paper states in its text (Tables 11, 13, 14, 2 are not in our copy beyond the text).
PADME_REPORTED = {
    "source": "PADMÉ (arXiv 2609.36086), Section 5.2, Appendices C.2, D.2–D.4, E (Tables 12 and 15 in full)",
    "n_pairs": 150,
    "pooled_alpha": 0.350, "pooled_alpha_ci": [0.24, 0.45],
    "panel_alpha": {"1": 0.451, "2": 0.240}, "panel_alpha_ci": {"1": [0.29, 0.60], "2": [0.09, 0.38]},
    "unanimous": 77, "unanimous_by_panel": {"1": 44, "2": 33},
    # Section 5.2 "from 73.3% to 84.6%"; D1 = 96/114 is the sum of Table 15's criterion rows
    "label_accuracy": {"D0": 0.733, "D1": 96 / 114, "D2": 0.846},
    "label_alpha": {"D0": 0.468, "D2": 0.694},
    "yield": {"D0": 150, "D1": 114, "D2": 104},
    "rejected_label_accuracy": {"D0\\D1": [14, 36], "D1\\D2": [8, 10]},
    "human_alpha": {"D0": 0.350, "D2": 0.383},
    "hybrid_alpha": {"D2": 0.496}, "hybrid_delta": {"D2": 0.113},
    # Table 12; the paper's panel-local labels (a1, a2, a3) are not the file order: matched by counts,
    # panel 1 (a1, a2, a3) = (annotator_3, annotator_2, annotator_1), panel 2 = (annotator_4, annotator_6, annotator_5)
    "pairwise": [
        {"panel": 1, "paper_pair": "(a1,a2)", "a": "annotator_2", "b": "annotator_3", "agree": 61, "n": 75, "kappa": 0.63, "both_certain": [28, 33]},
        {"panel": 1, "paper_pair": "(a1,a3)", "a": "annotator_1", "b": "annotator_3", "agree": 49, "n": 75, "kappa": 0.32, "both_certain": [24, 32]},
        {"panel": 1, "paper_pair": "(a2,a3)", "a": "annotator_1", "b": "annotator_2", "agree": 53, "n": 75, "kappa": 0.41, "both_certain": [30, 36]},
        {"panel": 2, "paper_pair": "(a1,a2)", "a": "annotator_4", "b": "annotator_6", "agree": 50, "n": 75, "kappa": 0.34, "both_certain": [13, 16]},
        {"panel": 2, "paper_pair": "(a1,a3)", "a": "annotator_4", "b": "annotator_5", "agree": 49, "n": 75, "kappa": 0.27, "both_certain": [15, 22]},
        {"panel": 2, "paper_pair": "(a2,a3)", "a": "annotator_5", "b": "annotator_6", "agree": 42, "n": 75, "kappa": 0.12, "both_certain": [27, 37]},
    ],
    "mean_pairwise_agreement": 0.676, "mean_kappa": 0.35,
    "alpha_all_certain": 0.545, "n_all_certain": 41, "alpha_not_all_certain": 0.270, "n_not_all_certain": 109,
    "confidence_change_D0_D2": 0.02, "mean_confidence_D2": 1.51,
    "confidence_p": {"J1": 1.000, "J2": 0.172}, "minimum_detectable_difference": 0.20,
    "poststrat_max_abs_shift_pt": 1.0, "sampling_se_pt": 3.7,
    "sample_retention": {"D1": 0.760, "D2": 0.693}, "population_retention": {"D1": 859 / 1125, "D2": 770 / 1125},
    "position_full_dataset": {"k_slot2": 511, "n": 1000, "range": [0.455, 0.543]},
    # Table 15: subset -> [k0, n0, k1, n1, k2, n2, gain_pt, retention]
    "table15": {
        ("criterion", "friendliness"): [45, 50, 42, 45, 39, 42, 3, 0.84],
        ("criterion", "task_resolution"): [34, 50, 30, 39, 28, 36, 10, 0.72],
        ("criterion", "communication_clarity"): [31, 50, 24, 30, 21, 26, 19, 0.52],
        ("domain", "airline"): [27, 36, 23, 25, 22, 24, 17, 0.67],
        ("domain", "retail"): [26, 39, 24, 30, 21, 25, 17, 0.64],
        ("domain", "banking_knowledge"): [26, 36, 22, 26, 21, 25, 12, 0.69],
        ("domain", "telecom"): [31, 39, 27, 33, 24, 30, 1, 0.77],
        ("agent_model", "gpt-oss-20b"): [35, 46, 27, 30, 24, 27, 13, 0.59],
        ("agent_model", "nemotron-lightning-3.5"): [36, 51, 34, 42, 29, 35, 12, 0.69],
        ("agent_model", "gpt-oss-120b"): [39, 53, 35, 42, 35, 42, 10, 0.79],
        ("level_contrast", "bad-good"): [37, 46, 35, 39, 33, 36, 11, 0.78],
        ("level_contrast", "ok-good"): [38, 51, 31, 36, 26, 30, 12, 0.59],
        ("level_contrast", "bad-ok"): [35, 53, 30, 39, 29, 38, 10, 0.72],
    },
}  # fmt: skip


# ---- the prepared study ---------------------------------------------------------------------------------------


def _natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(s))]


@dataclass
class Study:
    """Annotations pivoted to arrays aligned with the answer key (one column per pair)."""

    key: pd.DataFrame  # answer key rows of the annotated pairs, in answer-key order
    annotators: list[str]
    annotator_panel: list
    choices: np.ndarray  # annotators × pairs, 1/2, NaN = not rated
    confidence: np.ndarray  # annotators × pairs, 0–2 scale, NaN = not rated
    panel: np.ndarray  # the panel of each pair
    local: dict = field(
        default_factory=dict
    )  # panel -> its annotators' row indices in local order (a1, a2, ...)
    notes: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.key)

    @property
    def panels(self) -> list:
        return sorted(self.local, key=_natural)

    @property
    def label(self) -> np.ndarray:
        return self.key["correct_response"].to_numpy(dtype=float)

    @property
    def majority(self) -> np.ndarray:
        return majority_vote(self.choices)

    @property
    def correct(self) -> np.ndarray:
        """1 where the human majority equals the synthetic label, 0 where not, NaN without majority."""
        maj = self.majority
        return np.where(np.isnan(maj), np.nan, (maj == self.label).astype(float))

    @property
    def pair_confidence(self) -> np.ndarray:
        """Per-pair mean confidence on the 0–2 scale."""
        with np.errstate(all="ignore"):
            return np.nanmean(self.confidence, axis=0)

    @property
    def all_certain(self) -> np.ndarray:
        rated = ~np.isnan(self.confidence)
        return (rated.sum(axis=0) > 0) & np.all(~rated | (self.confidence == CERTAIN), axis=0)

    def depth(self, name: str) -> np.ndarray:
        fo = self.key["filter_outcome"].to_numpy()
        masks = {"D0": np.ones(self.n, dtype=bool), "D1": fo != "judge1_reject", "D2": fo == "kept"}
        masks["D0\\D1"] = masks["D0"] & ~masks["D1"]
        masks["D1\\D2"] = masks["D1"] & ~masks["D2"]
        return masks[name]

    def panel_mask(self, panel) -> np.ndarray:
        return self.panel == panel

    def local_matrix(self, slots) -> np.ndarray:
        """Raters × pairs with row ``i`` = each panel's local rater ``slots[i]`` on that panel's pairs."""
        out = np.full((len(slots), self.n), np.nan)
        for p, rows in self.local.items():
            m = self.panel_mask(p)
            for i, s in enumerate(slots):
                if s < len(rows):
                    out[i, m] = self.choices[rows[s], m]
        return out


def _study_error(answer_key: pd.DataFrame, problem: str, fix: str, field: str | None = None) -> InputError:
    """A study that cannot be analysed, naming the folder it was read from (``attrs["source"]``)."""
    return InputError(
        problem, file=answer_key.attrs.get("source", "the human-study frames"), field=field, fix=fix
    )


def prepare(annotations: pd.DataFrame, answer_key: pd.DataFrame) -> Study:
    """Pivot the annotation frame onto the answer key's pairs (pairs nobody rated are dropped).
    A study that cannot be pivoted is an :class:`~shopbench.errors.InputError` (issue 12 §2)."""
    need = {"pair_id", "annotator", "panel", "choice", "confidence"}
    if missing := need - set(annotations.columns):
        raise _study_error(answer_key, f"annotations lack columns {sorted(missing)}",
                           "read the study with annotate.humanstudy.load_human_study", sorted(missing)[0])  # fmt: skip
    if missing := {"pair_id", "correct_response", "filter_outcome"} - set(answer_key.columns):
        raise _study_error(answer_key, f"answer key lacks columns {sorted(missing)}",
                           "read the study with annotate.humanstudy.load_human_study", sorted(missing)[0])  # fmt: skip
    unknown = set(annotations["pair_id"]) - set(answer_key["pair_id"])
    if unknown:
        raise _study_error(answer_key, f"{len(unknown)} annotated pairs are not in the answer key, e.g. "
                           f"{sorted(unknown)[:3]}", "add them to answer_key.json or drop their ratings", "id")  # fmt: skip
    notes = list(answer_key.attrs.get("notes", []))
    rated = set(annotations["pair_id"])
    key = answer_key[answer_key["pair_id"].isin(rated)].reset_index(drop=True)
    if len(key) < len(answer_key):
        notes.append(f"{len(answer_key) - len(key)} answer-key pairs have no annotation and are left out")
    pos = {p: i for i, p in enumerate(key["pair_id"])}
    ann_panel = annotations.groupby("annotator")["panel"].agg(lambda s: sorted(set(s), key=_natural))
    if (multi := ann_panel[ann_panel.map(len) > 1]).size:
        raise _study_error(answer_key, f"annotators in more than one panel: {multi.to_dict()}",
                           "panels are disjoint: keep each annotator in one panel")  # fmt: skip
    annotators = sorted(ann_panel.index, key=lambda a: (_natural(ann_panel[a][0]), _natural(a)))
    row = {a: i for i, a in enumerate(annotators)}
    choices = np.full((len(annotators), len(key)), np.nan)
    conf = np.full_like(choices, np.nan)
    r = annotations["annotator"].map(row).to_numpy()
    c = annotations["pair_id"].map(pos).to_numpy()
    if pd.Series(list(zip(r, c, strict=True))).duplicated().any():
        raise _study_error(answer_key, "an annotator rated the same pair twice",
                           "keep one rating per annotator and pair", "id")  # fmt: skip
    choices[r, c] = annotations["choice"].to_numpy(dtype=float)
    conf[r, c] = annotations["confidence"].to_numpy(dtype=float) / 50.0  # 0|50|100 -> 0|1|2
    pair_panels = annotations.groupby("pair_id")["panel"].agg(lambda s: sorted(set(s), key=_natural))
    if (multi := pair_panels[pair_panels.map(len) > 1]).size:
        raise _study_error(answer_key, f"{multi.size} pairs are rated by more than one panel, e.g. "
                           f"{multi.index[0]!r}: {multi.iloc[0]}", "each pair belongs to one panel's files")  # fmt: skip
    panel = np.array([pair_panels[p][0] for p in key["pair_id"]], dtype=object)
    panel_of = [ann_panel[a][0] for a in annotators]
    local = {p: [i for i, q in enumerate(panel_of) if q == p] for p in sorted(set(panel_of), key=_natural)}
    return Study(key, annotators, panel_of, choices, conf, panel, local, notes)


# ---- statistics (each returns a DataFrame) ----------------------------------------------------------------


def _pk(p) -> str:
    return str(p)


def reliability_table(st: Study, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Table 12, upper block: α with bootstrap CI and unanimity, pooled and per panel."""
    rows = []
    for scope, mask in [("pooled", np.ones(st.n, dtype=bool))] + [
        (f"panel {_pk(p)}", st.panel_mask(p)) for p in st.panels
    ]:
        data = st.choices[:, mask]
        data = data[~np.all(np.isnan(data), axis=1)]
        boot = bootstrap_alpha(data, n_boot, seed, strata=st.panel[mask] if scope == "pooled" else None)
        k, n = unanimous(data)
        rows.append({"scope": scope, "n_pairs": int(mask.sum()), "raters": int(data.shape[0]),
                     "alpha": krippendorff_alpha(data), "alpha_ci_low": boot.low, "alpha_ci_high": boot.high,
                     "unanimous": k, "unanimous_rate": k / n if n else np.nan})  # fmt: skip
    return pd.DataFrame(rows).set_index("scope")


def pairwise_kappa_table(st: Study) -> pd.DataFrame:
    """Table 12, lower block: every two annotators of a panel (agreement, Cohen's κ, both certain)."""
    rows = []
    for p in st.panels:
        idx = st.local[p]
        for (li, i), (lj, j) in itertools.combinations(list(enumerate(idx)), 2):
            r = pairwise_agreement(
                st.choices[i], st.choices[j], st.confidence[i], st.confidence[j], certain=CERTAIN
            )
            rows.append(
                {
                    "panel": p,
                    "a": st.annotators[i],
                    "b": st.annotators[j],
                    "local": f"(a{li + 1},a{lj + 1})",
                    **r,
                }
            )
    df = pd.DataFrame(rows)
    if not df.empty:
        mean = {"panel": "mean", "a": "", "b": "", "local": "", "n": int(df["n"].sum()), "agree": int(df["agree"].sum()),
                "agreement": df["agreement"].mean(), "kappa": df["kappa"].mean()}  # fmt: skip
        if "both_certain_n" in df:
            mean.update(both_certain_n=int(df["both_certain_n"].sum()), both_certain_agree=int(df["both_certain_agree"].sum()),
                        both_certain_agreement=df["both_certain_agreement"].mean())  # fmt: skip
        df = pd.concat([df, pd.DataFrame([mean])], ignore_index=True)
    return df


def _label_pair_coincidences(st: Study) -> np.ndarray:
    """Per-pair coincidences (pairs × 4) of the two 'raters' synthetic label and human majority."""
    counts, _ = unit_value_counts(np.vstack([st.label, st.majority]), categories=[1.0, 2.0])
    return unit_coincidences(counts).reshape(st.n, 4)


def label_accuracy_table(st: Study, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Table 2 (and the rejected subsets of Section 5.2 / Table 17): Agr(maj, ⋆; D_k) with bootstrap CIs,
    yield, and α of the label-versus-majority decision."""
    names = ["D0", "D1", "D2", "D0\\D1", "D1\\D2"]
    masks = np.stack([st.depth(d) for d in names], axis=1).astype(float)
    corr = st.correct
    defined = ~np.isnan(corr)
    num = masks * np.where(defined, corr, 0.0)[:, None]
    den = masks * defined[:, None]
    acc = bootstrap_ratio(num, den, n_boot, seed, strata=st.panel)
    o = _label_pair_coincidences(st) * defined[:, None]
    per = o[:, None, :] * masks[:, :, None]  # pairs × depths × 4

    def stat(w):
        return alpha_from_coincidences(np.einsum("bu,udk->bdk", w, per).reshape(w.shape[0], len(names), 2, 2))

    alpha = bootstrap(stat, st.n, n_boot, seed, strata=st.panel)
    rows = []
    for i, d in enumerate(names):
        m = st.depth(d) & defined
        rows.append({"depth": d, "subset": DEPTHS.get(d, "removed by J1" if d == "D0\\D1" else "removed by J2"),
                     "n": int(st.depth(d).sum()), "yield": st.depth(d).sum() / st.n, "correct": int(corr[m].sum()),
                     "accuracy": acc.estimate[i], "accuracy_ci_low": acc.low[i], "accuracy_ci_high": acc.high[i],
                     "label_alpha": krippendorff_alpha(np.vstack([st.label[m], st.majority[m]]), value_domain=[1, 2]),
                     "label_alpha_ci_low": alpha.low[i], "label_alpha_ci_high": alpha.high[i]})  # fmt: skip
    return pd.DataFrame(rows).set_index("depth")


def hybrid_table(st: Study) -> pd.DataFrame:
    """Table 11: human-only α and hybrid (one human replaced by ⋆) α, mean ± SD over the permutations,
    per depth, pooled and per panel."""
    size = max(len(v) for v in st.local.values())
    rows = []
    scopes = [("pooled", np.ones(st.n, dtype=bool))] + [
        (f"panel {_pk(p)}", st.panel_mask(p)) for p in st.panels
    ]
    for d in DEPTHS:
        for scope, smask in scopes:
            m = st.depth(d) & smask
            human = st.local_matrix(range(size))[:, m]
            h = krippendorff_alpha(human, value_domain=[1, 2])
            hyb = []
            for keep in itertools.combinations(range(size), size - 1):
                data = np.vstack([st.local_matrix(keep)[:, m], st.label[m]])
                hyb.append(krippendorff_alpha(data, value_domain=[1, 2]))
            hyb = np.array(hyb)
            rows.append({"depth": d, "scope": scope, "n": int(m.sum()), "human_alpha": h,
                         "hybrid_alpha_mean": float(np.nanmean(hyb)), "hybrid_alpha_sd": float(np.nanstd(hyb, ddof=1)) if len(hyb) > 1 else np.nan,
                         "delta": float(np.nanmean(hyb) - h), "permutations": len(hyb)})  # fmt: skip
    return pd.DataFrame(rows).set_index(["depth", "scope"])


def confidence_tables(
    st: Study, n_perm: int = N_PERM, seed: int = 0, n_boot: int = 2000
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 13: confidence and agreement by depth and by certainty; the J1 / J2 permutation tests."""
    pc = st.pair_confidence
    ac = st.all_certain
    rows = []
    subsets = [(d, DEPTHS[d], st.depth(d)) for d in DEPTHS] + [
        ("all certain", "all three annotators said 'certain'", ac),
        ("not all certain", "at least one annotator unsure", ~ac),
    ]
    for name, desc, m in subsets:
        data = st.choices[:, m]
        boot = bootstrap_alpha(data, n_boot, seed, strata=st.panel[m]) if m.sum() > 1 else None
        k, n = unanimous(data)
        rows.append({"subset": name, "description": desc, "n": int(m.sum()), "mean_confidence": float(np.mean(pc[m])) if m.any() else np.nan,
                     "sd_confidence": float(np.std(pc[m], ddof=1)) if m.sum() > 1 else np.nan,
                     "all_certain_share": float(ac[m].mean()) if m.any() else np.nan,
                     "alpha": krippendorff_alpha(data, value_domain=[1, 2]),
                     "alpha_ci_low": boot.low if boot else np.nan, "alpha_ci_high": boot.high if boot else np.nan,
                     "unanimous_rate": k / n if n else np.nan})  # fmt: skip
    tests = []
    for judge, kept, removed in (("J1", "D1", "D0\\D1"), ("J2", "D2", "D1\\D2")):
        x, y = pc[st.depth(kept)], pc[st.depth(removed)]
        if len(x) == 0 or len(y) == 0:
            tests.append(
                {"judge": judge, "kept": kept, "removed": removed, "n_kept": len(x), "n_removed": len(y)}
            )
            continue
        r = permutation_test(x, y, n_perm=n_perm, seed=seed)
        tests.append({"judge": judge, "kept": kept, "removed": removed, "n_kept": r["n_x"], "n_removed": r["n_y"],
                      "mean_kept": r["mean_x"], "mean_removed": r["mean_y"], "diff": r["diff"], "p": r["p"],
                      "n_perm": n_perm, "min_detectable_diff": minimum_detectable_difference(x, y)})  # fmt: skip
    tdf = pd.DataFrame(tests).set_index("judge")
    if "p" in tdf:
        tdf["p_holm"] = holm(tdf["p"].to_numpy())[1]
    return pd.DataFrame(rows).set_index("subset"), tdf


def subset_table(st: Study, axes=SUBSET_AXES) -> pd.DataFrame:
    """Table 15: Agr(maj, ⋆) per subset at D0, D1, D2, the gain (D2 − D0, points) and retention (|D2|/|D0|)."""
    corr = st.correct
    rows = []
    for axis in axes:
        if axis not in st.key.columns:
            continue
        for value in sorted(st.key[axis].dropna().unique(), key=_natural):
            s = (st.key[axis] == value).to_numpy()
            row = {"axis": axis, "subset": value}
            for d in DEPTHS:
                m = s & st.depth(d) & ~np.isnan(corr)
                row[f"{d}_correct"], row[f"{d}_n"] = int(corr[m].sum()), int(m.sum())
                row[f"{d}_accuracy"] = corr[m].mean() if m.any() else np.nan
            row["gain_pt"] = 100 * (row["D2_accuracy"] - row["D0_accuracy"])
            row["retention"] = row["D2_n"] / row["D0_n"] if row["D0_n"] else np.nan
            rows.append(row)
    return pd.DataFrame(rows).set_index(["axis", "subset"]) if rows else pd.DataFrame()


def poststrat_table(st: Study, population=None) -> pd.DataFrame:
    """Table 14: synthetic label accuracy per depth, raw and re-weighted to population strata per axis."""
    population = PADME_POPULATION if population is None else population
    corr = st.correct
    frames = []
    for d in DEPTHS:
        m = st.depth(d)
        df = poststratified_table(corr[m], st.key.loc[m], population)
        df.insert(0, "depth", d)
        frames.append(df)
    return pd.concat(frames, ignore_index=True).set_index(["depth", "weighting"])


def position_table(st: Study) -> pd.DataFrame:
    """Table 9: binomial test of the target slot (``correct_response``) against parity, overall, per
    depth and per subset axis; and of each annotator's share of slot-2 choices. Holm over all rows."""
    rows = []
    slot = st.label
    groups = [("all", "all", np.ones(st.n, dtype=bool))] + [("depth", d, st.depth(d)) for d in DEPTHS]
    for axis in SUBSET_AXES:
        if axis in st.key.columns:
            groups += [
                (axis, v, (st.key[axis] == v).to_numpy())
                for v in sorted(st.key[axis].dropna().unique(), key=_natural)
            ]
    for axis, value, m in groups:
        rows.append({"what": "target slot", "axis": axis, "subset": value, **position_balance(slot[m])})
    for i, a in enumerate(st.annotators):
        rows.append(
            {"what": "annotator choice", "axis": "annotator", "subset": a, **position_balance(st.choices[i])}
        )
    df = pd.DataFrame(rows).rename(columns={"k": "k_slot2", "share": "share_slot2"})
    df["p_holm"] = holm(df["p"].to_numpy())[1]
    return df.set_index(["what", "axis", "subset"])


# ---- the summary ----------------------------------------------------------------------------------------------


def _records(df: pd.DataFrame) -> list[dict]:
    plain = isinstance(df.index, pd.RangeIndex) and df.index.name is None
    return json.loads((df if plain else df.reset_index()).to_json(orient="records", double_precision=15))


def _num(x):
    if x is None:
        return None
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def agreement_summary(annotations: pd.DataFrame, answer_key: pd.DataFrame, n_boot: int = 2000, seed: int = 0,
                      n_perm: int = N_PERM, population=None) -> dict:  # fmt: skip
    """Every statistic of the study in one JSON-ready dict; ``summary["tables"]`` holds each table's rows
    (rebuild DataFrames with :func:`summary_tables`)."""
    st = prepare(annotations, answer_key)
    rel = reliability_table(st, n_boot, seed)
    pw = pairwise_kappa_table(st)
    lab = label_accuracy_table(st, n_boot, seed)
    hyb = hybrid_table(st)
    conf, conf_tests = confidence_tables(st, n_perm, seed, n_boot)
    sub = subset_table(st)
    ps = poststrat_table(st, population)
    pos = position_table(st)
    pooled = rel.loc["pooled"]
    panels = {s.removeprefix("panel "): r for s, r in rel.iterrows() if s != "pooled"}
    pairs = pw[pw["panel"] != "mean"]
    depths = list(DEPTHS)
    s = {
        "n_pairs": st.n,
        "n_annotations": int((~np.isnan(st.choices)).sum()),
        "n_annotators": len(st.annotators),
        "panels": {_pk(p): [st.annotators[i] for i in st.local[p]] for p in st.panels},
        "pooled_alpha": _num(pooled["alpha"]), "pooled_alpha_ci": [_num(pooled["alpha_ci_low"]), _num(pooled["alpha_ci_high"])],
        "panel_alpha": {p: _num(r["alpha"]) for p, r in panels.items()},
        "panel_alpha_ci": {p: [_num(r["alpha_ci_low"]), _num(r["alpha_ci_high"])] for p, r in panels.items()},
        "unanimous": int(pooled["unanimous"]), "unanimous_rate": _num(pooled["unanimous_rate"]),
        "unanimous_by_panel": {p: int(r["unanimous"]) for p, r in panels.items()},
        "label_accuracy": {d: _num(lab.loc[d, "accuracy"]) for d in depths},
        "label_accuracy_ci": {d: [_num(lab.loc[d, "accuracy_ci_low"]), _num(lab.loc[d, "accuracy_ci_high"])] for d in depths},
        "label_alpha": {d: _num(lab.loc[d, "label_alpha"]) for d in depths},
        "label_alpha_ci": {d: [_num(lab.loc[d, "label_alpha_ci_low"]), _num(lab.loc[d, "label_alpha_ci_high"])] for d in depths},
        "yield": {d: int(lab.loc[d, "n"]) for d in depths},
        "rejected_label_accuracy": {d: [int(lab.loc[d, "correct"]), int(lab.loc[d, "n"])] for d in ("D0\\D1", "D1\\D2")},
        "pairwise_kappa": [{"panel": _num(r["panel"]), "a": r["a"], "b": r["b"], "kappa": _num(r["kappa"]),
                            "agreement": _num(r["agreement"]), "n": int(r["n"]),
                            "both_certain_agreement": _num(r.get("both_certain_agreement")),
                            "both_certain_n": _num(r.get("both_certain_n"))} for _, r in pairs.iterrows()],  # fmt: skip
        "mean_kappa": _num(pairs["kappa"].mean()), "mean_pairwise_agreement": _num(pairs["agreement"].mean()),
        "human_alpha": {d: _num(hyb.loc[(d, "pooled"), "human_alpha"]) for d in depths},
        "hybrid_alpha": {d: _num(hyb.loc[(d, "pooled"), "hybrid_alpha_mean"]) for d in depths},
        "hybrid_alpha_sd": {d: _num(hyb.loc[(d, "pooled"), "hybrid_alpha_sd"]) for d in depths},
        "hybrid_delta": {d: _num(hyb.loc[(d, "pooled"), "delta"]) for d in depths},
        "mean_confidence": {d: _num(conf.loc[d, "mean_confidence"]) for d in depths},
        "alpha_all_certain": _num(conf.loc["all certain", "alpha"]), "n_all_certain": int(conf.loc["all certain", "n"]),
        "alpha_not_all_certain": _num(conf.loc["not all certain", "alpha"]),
        "n_not_all_certain": int(conf.loc["not all certain", "n"]),
        "confidence_p": {j: _num(conf_tests.loc[j].get("p")) for j in conf_tests.index},
        "minimum_detectable_difference": {j: _num(conf_tests.loc[j].get("min_detectable_diff")) for j in conf_tests.index},
        "poststrat_max_abs_shift_pt": _num(ps["shift_pt"].abs().max()),
        "position_target_slot2": {k: _num(v) for k, v in pos.loc[("target slot", "all", "all")].items()},
        "settings": {"n_boot": n_boot, "seed": seed, "n_perm": n_perm, "ci": 0.95,
                     "bootstrap": "percentile, pairs resampled within each panel",
                     "population": "Table 6 (1,000 pairs)" if population is None else "given"},  # fmt: skip
        "notes": st.notes,
        "tables": {
            "padme_tab2_label_accuracy": _records(lab), "padme_tab11_hybrid_alpha": _records(hyb),
            "padme_tab12_reliability": _records(rel), "padme_tab12_pairwise_kappa": _records(pw),
            "padme_tab13_confidence": _records(conf), "padme_tab13_confidence_tests": _records(conf_tests),
            "padme_tab14_poststrat": _records(ps), "padme_tab15_subsets": _records(sub) if len(sub) else [],
            "padme_tab9_position_balance": _records(pos),
        },
    }  # fmt: skip
    return s


_INDEX = {
    "padme_tab2_label_accuracy": ["depth"], "padme_tab11_hybrid_alpha": ["depth", "scope"],
    "padme_tab12_reliability": ["scope"], "padme_tab12_pairwise_kappa": None,
    "padme_tab13_confidence": ["subset"], "padme_tab13_confidence_tests": ["judge"],
    "padme_tab14_poststrat": ["depth", "weighting"], "padme_tab15_subsets": ["axis", "subset"],
    "padme_tab9_position_balance": ["what", "axis", "subset"],
}  # fmt: skip


def summary_tables(summary: dict) -> dict[str, pd.DataFrame]:
    """The summary's tables as DataFrames (indexed as the builders index them)."""
    out = {}
    for name, recs in summary["tables"].items():
        df = pd.DataFrame(recs)
        idx = _INDEX.get(name)
        if idx and not df.empty and all(c in df for c in idx):
            df = df.set_index(idx)
        out[name] = df
    return out


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_jsonable(v) for v in x.tolist()]
    return _num(x)


def write_summary(summary: dict, path) -> Path:
    """Write ``summary`` as JSON (NaN as null, numpy scalars as numbers)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(
        json.dumps(_jsonable(summary), indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
    )
    return p


# ---- comparison with the paper ----------------------------------------------------------------------------


def compare_with_paper(summary: dict, reported: dict | None = None, tol: float = 0.0051) -> pd.DataFrame:
    """Our values beside the paper's, where the paper's text states them. ``matches`` is within ``tol``
    for rates and α (the paper rounds to 3 decimals or 2 for κ) and exact for counts."""
    reported = PADME_REPORTED if reported is None else reported
    rows = []

    def add(quantity, ours, paper, note="", t=tol, ok=...):
        o, p = _num(ours), _num(paper)
        if ok is ...:
            ok = None if o is None or p is None else bool(abs(o - p) <= t)
        rows.append({"quantity": quantity, "ours": o, "paper": p, "difference": None if ok is None else o - p,
                     "matches": ok, "note": note})  # fmt: skip

    r = reported
    add("pairs annotated", summary["n_pairs"], r["n_pairs"], t=0)
    add("pooled α (D0)", summary["pooled_alpha"], r["pooled_alpha"])
    for i, side in enumerate(("low", "high")):
        add(f"pooled α 95% CI {side}", summary["pooled_alpha_ci"][i], r["pooled_alpha_ci"][i],
            "bootstrap CI: Monte Carlo error and the paper's 2-decimal rounding", t=0.02)  # fmt: skip
    for p, a in r["panel_alpha"].items():
        add(f"panel {p} α", summary["panel_alpha"].get(p), a)
        for i, side in enumerate(("low", "high")):
            ci = summary["panel_alpha_ci"].get(p)
            add(f"panel {p} α 95% CI {side}", ci[i] if ci else None, r["panel_alpha_ci"][p][i],
                "bootstrap CI: Monte Carlo error and the paper's 2-decimal rounding", t=0.02)  # fmt: skip
    add("unanimous (3–0) pairs", summary["unanimous"], r["unanimous"], t=0)
    for p, k in r["unanimous_by_panel"].items():
        add(f"unanimous pairs, panel {p}", summary["unanimous_by_panel"].get(p), k, t=0)
    for d, v in r["yield"].items():
        add(f"yield |{d}|", summary["yield"].get(d), v, t=0)
    for d, v in r["label_accuracy"].items():
        add(f"Agr(maj, ⋆; {d})", summary["label_accuracy"].get(d), v,
            "paper: 96/114, the sum of Table 15's criterion rows" if d == "D1" else "")  # fmt: skip
    for d, v in r["label_alpha"].items():
        add(f"label-vs-majority α ({d})", summary["label_alpha"].get(d), v)
    for d, (k, n) in r["rejected_label_accuracy"].items():
        ours = summary["rejected_label_accuracy"].get(d)
        add(f"Agr(maj, ⋆; {d}) correct", ours[0] if ours else None, k, f"of {n}", t=0)
    ours_pw = {(str(x["panel"]), frozenset((x["a"], x["b"]))): x for x in summary["pairwise_kappa"]}
    for x in r["pairwise"]:
        o = ours_pw.get((str(x["panel"]), frozenset((x["a"], x["b"]))), {})
        lab = f"panel {x['panel']} {x['paper_pair']} = {x['a']}–{x['b']}"
        add(f"{lab}: agreement", o.get("agreement"), x["agree"] / x["n"])
        add(f"{lab}: Cohen's κ", o.get("kappa"), x["kappa"], "paper rounds κ to 2 decimals", t=0.0051 + 0.005)
        bc = o.get("both_certain_agreement")
        add(f"{lab}: both-certain agreement", bc, x["both_certain"][0] / x["both_certain"][1],
            f"paper {x['both_certain'][0]}/{x['both_certain'][1]}")  # fmt: skip
    add(
        "mean pairwise agreement",
        summary["mean_pairwise_agreement"],
        r["mean_pairwise_agreement"],
        "paper: 67.6%",
        t=0.0006,
    )
    add(
        "mean Cohen's κ",
        summary["mean_kappa"],
        r["mean_kappa"],
        "paper rounds κ to 2 decimals",
        t=0.0051 + 0.005,
    )
    for d, v in r["human_alpha"].items():
        add(f"human-only α ({d})", summary["human_alpha"].get(d), v)
    for d, v in r["hybrid_alpha"].items():
        add(f"hybrid α (a_i, a_j, ⋆), mean ({d})", summary["hybrid_alpha"].get(d), v)
    for d, v in r["hybrid_delta"].items():
        add(f"hybrid Δ ({d})", summary["hybrid_delta"].get(d), v)
    add("α, all three certain", summary["alpha_all_certain"], r["alpha_all_certain"])
    add("pairs all three certain", summary["n_all_certain"], r["n_all_certain"], t=0)
    add("α, not all certain", summary["alpha_not_all_certain"], r["alpha_not_all_certain"])
    mc = summary["mean_confidence"]
    add("mean confidence (D2, 0–2)", mc.get("D2"), r["mean_confidence_D2"])
    d02 = None if mc.get("D2") is None or mc.get("D0") is None else mc["D2"] - mc["D0"]
    add("mean confidence change D0 → D2", d02, r["confidence_change_D0_D2"], "paper rounds to 2 decimals")
    for j, v in r["confidence_p"].items():
        add(f"permutation p, {j} kept vs removed confidence", summary["confidence_p"].get(j), v,
            "100,000 shuffles; Monte Carlo error ≈ 0.001–0.002", t=0.01)  # fmt: skip
    mdd = summary["minimum_detectable_difference"].get("J1")
    add("minimum detectable confidence difference (J1)", mdd, r["minimum_detectable_difference"],
        "not comparable: ours is a two-sample t-test power analysis (power 0.8, level 0.05); the paper says "
        "'approximately 0.20' without its method", ok=None)  # fmt: skip
    add("post-stratification max |shift| (pt)", summary["poststrat_max_abs_shift_pt"], r["poststrat_max_abs_shift_pt"],
        "paper: 'less than 1.0pt' over domain, criterion, agent model, level contrast; ours only over the axes "
        "the files carry; matches = ours below the paper's bound",
        ok=None if summary["poststrat_max_abs_shift_pt"] is None else summary["poststrat_max_abs_shift_pt"] < 1.0)  # fmt: skip
    for d, v in r["sample_retention"].items():
        add(f"sample retention {d}", summary["yield"].get(d, 0) / summary["n_pairs"], v)
    return pd.DataFrame(rows)


def table15_comparison(summary: dict, reported: dict | None = None) -> pd.DataFrame:
    """Table 15 side by side: our k/n per depth, gain and retention beside the paper's."""
    reported = PADME_REPORTED if reported is None else reported
    ours = summary_tables(summary).get("padme_tab15_subsets", pd.DataFrame())
    rows = []
    for (axis, value), (k0, n0, k1, n1, k2, n2, gain, ret) in reported["table15"].items():
        row = {"axis": axis, "subset": value, "paper_D0": f"{k0}/{n0}", "paper_D1": f"{k1}/{n1}", "paper_D2": f"{k2}/{n2}",
               "paper_gain_pt": gain, "paper_retention": ret}  # fmt: skip
        if not ours.empty and (axis, value) in ours.index:
            o = ours.loc[(axis, value)]
            for d in DEPTHS:
                row[f"ours_{d}"] = f"{int(o[f'{d}_correct'])}/{int(o[f'{d}_n'])}"
            row.update(
                ours_gain_pt=round(float(o["gain_pt"]), 1), ours_retention=round(float(o["retention"]), 2)
            )
            row["matches"] = all(row[f"paper_{d}"] == row[f"ours_{d}"] for d in DEPTHS)
            row["note"] = (
                "counts match; the paper's gain is the difference of rounded percentages"
                if row["matches"]
                else ""
            )

        else:
            row["matches"] = None
            row["note"] = f"no '{axis}' column in the study files"
        rows.append(row)
    return pd.DataFrame(rows).set_index(["axis", "subset"])


# ---- recovery on simulated panels -------------------------------------------------------------------------


def simulation_recovery(n_pairs: int = 3000, reps: int = 5, seed: int = 0, **sim) -> pd.DataFrame:
    """Run :func:`~shopbench.annotate.humanstudy.simulate_panels` ``reps`` times and compare the estimators
    with the statistics the noise model implies (mean and SD over the replicates)."""
    from ..annotate.humanstudy import simulate_panels

    est: dict[str, list[float]] = {}
    implied = None
    for r in range(reps):
        ann, key = simulate_panels(n_pairs=n_pairs, seed=seed + r, **sim)
        implied = key.attrs["implied"]
        st = prepare(ann, key)
        vals = {"pooled α": krippendorff_alpha(st.choices)}
        for p in st.panels:
            vals[f"panel {p} α"] = krippendorff_alpha(st.choices[:, st.panel_mask(p)])
        k, n = unanimous(st.choices)
        vals["unanimous rate"] = k / n
        corr = st.correct
        for d in DEPTHS:
            m = st.depth(d)
            vals[f"Agr(maj, ⋆; {d})"] = float(np.nanmean(corr[m]))
            vals[f"label α ({d})"] = krippendorff_alpha(
                np.vstack([st.label[m], st.majority[m]]), value_domain=[1, 2]
            )
            vals[f"retention {d}"] = m.mean()
        for k_, v in vals.items():
            est.setdefault(k_, []).append(v)
    imp = {"pooled α": implied["pooled_alpha"], "unanimous rate": implied["unanimous_rate"]}
    imp.update({f"panel {p} α": a for p, a in implied["panel_alpha"].items()})
    for d in DEPTHS:
        imp[f"Agr(maj, ⋆; {d})"] = implied["depth"][d]["label_accuracy"]
        imp[f"label α ({d})"] = implied["depth"][d]["label_alpha"]
        imp[f"retention {d}"] = implied["retention"][d]
    rows = []
    for k_, vs in est.items():
        a = np.array(vs, dtype=float)
        rows.append({"quantity": k_, "implied": imp.get(k_, np.nan), "estimated_mean": a.mean(),
                     "estimated_sd": a.std(ddof=1) if len(a) > 1 else np.nan, "replicates": len(a), "n_pairs": n_pairs})  # fmt: skip
    df = pd.DataFrame(rows).set_index("quantity")
    df["error"] = df["estimated_mean"] - df["implied"]
    return df
