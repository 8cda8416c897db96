"""The noise floor of a PACE judge: how much its verdict moves when the same record is judged again
(issue 29, item 3: "in notebooks 20/30 (PACE judge repeats: label agreement and Krippendorff's α
between repeats, flip rate under order swap beside it)"; notebook 20's table ``pace_judge_repeats``).

Per judge (protocol × backbone) whose records were judged at least twice (``repeat`` 0, 1, …; parsed
verdicts only, a parse failure abstains):

- ``n_records``: records with at least two parsed repeats;
- ``label_agreement``: share of those records whose repeats all give the same verdict;
- ``alpha`` (``alpha_ci_low``, ``alpha_ci_high``): Krippendorff's nominal α of the verdict with the
  repeats as raters and the records as units (:func:`shopbench.stats.agreement.alpha_nominal`), with a
  percentile bootstrap CI resampling records (:func:`shopbench.stats.agreement.bootstrap_alpha`);
- ``repeat_flip_rate`` (CI): per record, the share of its pairs of repeats whose verdicts differ,
  averaged over records (with two repeats: the share of records whose verdict flips);
- ``swap_flip_rate`` (CI) over ``n_swap_pairs``: PACE judges see one record at a time, so there is no
  presentation order to swap; the project's swap is the **persona swap** (a GOOD record and its
  sibling with one persona axis flipped, gold BAD). Per (GOOD base, swap) pair judged in the same
  repeat, both parsed, 1 when the two verdicts differ, averaged over the pair's repeats and then over
  pairs. A judge that sees the persona flips here far more often than between repeats; a swap flip
  rate inside the repeat flip rate's CI is a response the judge's own noise could produce;
- ``share_record``, ``share_repeat`` (CIs): the variance of the per-call BAD indicator split into
  between-record and between-repeat (= within-record) components by
  :func:`shopbench.stats.variance.variance_components` (``task`` = record, one varied source
  ``judge`` = repeat; records lacking a parsed repeat are left out, a complete design is needed);
- ``note``: why a number is missing.

Deterministic judges (``deterministic``: the rules, checks and seeded floors) give the same answer to
the same prompt by construction: their rows hold no repeat numbers, only the note "α = 1 by
construction, not a finding" and their swap flip rate (a property of the judge, with zero repeat noise).
An LLM judge run with one repeat gets a row saying so. Flip-rate CIs are percentile bootstraps of the
mean over records (pairs); all bootstraps are seeded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ...errors import InputError
from ...stats.agreement import alpha_nominal, bootstrap_alpha
from ...stats.bootstrap import bootstrap_mean
from ...stats.variance import variance_components

COLUMNS = ("protocol", "backbone", "kind", "repeats", "temperature", "n_records", "label_agreement", "alpha",
           "alpha_ci_low", "alpha_ci_high", "repeat_flip_rate", "repeat_flip_ci_low", "repeat_flip_ci_high",
           "n_swap_pairs", "swap_flip_rate", "swap_flip_ci_low", "swap_flip_ci_high", "share_record",
           "share_record_ci_low", "share_record_ci_high", "share_repeat", "share_repeat_ci_low",
           "share_repeat_ci_high", "note")  # fmt: skip
DETERMINISTIC_NOTE = "deterministic judge: the same prompt gets the same answer, so it is not repeated (α = 1 by construction, not a finding)"
CODES = {"GOOD": 0.0, "BAD": 1.0}


def _parsed(g: pd.DataFrame) -> pd.DataFrame:
    ok = (g["parse_ok"] == True) & g["verdict"].isin(list(CODES))  # noqa: E712 - pandas boolean column
    return g.loc[ok.to_numpy(bool), ["record_id", "repeat", "verdict", "kind", "base_record_id"]]


def _ci(values, n_boot: int, seed: int, ci: float) -> tuple[float, float, float]:
    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return np.nan, np.nan, np.nan
    r = bootstrap_mean(v, n_boot=n_boot, seed=seed, ci=ci)
    return float(v.mean()), float(r.low), float(r.high)


def swap_flips(parsed: pd.DataFrame) -> pd.Series:
    """Per persona-swap record (index: its record id): the share of its repeats in which its verdict
    differs from its GOOD base's verdict in the same repeat (both parsed); swaps without such a repeat
    are left out."""
    swaps = parsed[parsed["kind"] == "swap"]
    if swaps.empty:
        return pd.Series(dtype=float)
    base = parsed[["record_id", "repeat", "verdict"]].rename(
        columns={"record_id": "base_record_id", "verdict": "v_base"}
    )
    m = swaps.merge(base, on=["base_record_id", "repeat"], how="inner")
    return (m["verdict"] != m["v_base"]).astype(float).groupby(m["record_id"]).mean()


def repeat_flips(parsed: pd.DataFrame) -> pd.DataFrame:
    """Per record with ≥ 2 parsed repeats: ``n`` repeats, ``agree`` (all verdicts equal) and ``flip``
    (share of its pairs of repeats with different verdicts: 1 − Σ_c n_c(n_c − 1) / (n(n − 1)))."""
    counts = pd.crosstab(parsed["record_id"], parsed["verdict"])
    n = counts.sum(axis=1)
    counts, n = counts[n >= 2], n[n >= 2]
    same = (counts * (counts - 1)).sum(axis=1)
    return pd.DataFrame(
        {"n": n, "agree": (counts.max(axis=1) == n).astype(float), "flip": 1.0 - same / (n * (n - 1))}
    )


def _one(g: pd.DataFrame, n_boot: int, seed: int, ci: float) -> dict:
    p = _parsed(g)
    d: dict = {}
    sw = swap_flips(p)
    d["n_swap_pairs"] = len(sw)
    d["swap_flip_rate"], d["swap_flip_ci_low"], d["swap_flip_ci_high"] = _ci(sw, n_boot, seed, ci)
    per = repeat_flips(p)
    d["n_records"] = len(per)
    if per.empty:
        return d
    d["label_agreement"] = float(per["agree"].mean())
    d["repeat_flip_rate"], d["repeat_flip_ci_low"], d["repeat_flip_ci_high"] = _ci(
        per["flip"], n_boot, seed, ci
    )
    use = p[p["record_id"].isin(per.index)]
    wide = use.pivot_table(index="repeat", columns="record_id", values="verdict", aggfunc="first")
    data = wide.apply(lambda col: col.map(CODES)).to_numpy(dtype=float)  # repeats × records, NaN = missing
    d["alpha"] = alpha_nominal(data, categories=[0.0, 1.0])
    b = bootstrap_alpha(data, n_boot=n_boot, seed=seed, ci=ci, categories=[0.0, 1.0])
    d["alpha_ci_low"], d["alpha_ci_high"] = float(b.low), float(b.high)
    notes = []
    if np.isnan(d["alpha"]):
        notes.append("α undefined: every verdict is the same (no variation to agree on)")
    frame = use.assign(bad=use["verdict"].map(CODES))
    try:
        vc = variance_components(frame, outcome="bad", task="record_id", sources={"judge": "repeat"},
                                 n_boot=n_boot, seed=seed, ci=ci, drop_incomplete=True).set_index("component")  # fmt: skip
        for comp, col in (("task", "share_record"), ("judge", "share_repeat")):
            d[col], d[f"{col}_ci_low"], d[f"{col}_ci_high"] = (
                float(vc.at[comp, k]) for k in ("share", "ci_low", "ci_high")
            )
        if np.isnan(d["share_record"]):
            notes.append("variance split: no variance in the verdicts")
    except InputError as e:
        notes.append(f"variance split: {e.problem}")
    d["note"] = "; ".join(notes)
    return d


def judge_repeats(
    run_table: pd.DataFrame,
    deterministic: Iterable[str] = (),
    *,
    temperature: Mapping[str, float | None] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> pd.DataFrame:
    """The noise floor of each judge (protocol × backbone) in a RUN TABLE: one row per judge with the
    columns :data:`COLUMNS` (definitions in the module docstring). ``deterministic``: backbones fixed by
    construction (no repeat numbers, a note); ``temperature``: each backbone's sampling temperature, for
    the table (None: the protocol's 0)."""
    need = [c for c in ("protocol", "backbone", "record_id", "repeat", "verdict", "parse_ok", "kind", "base_record_id")
            if c not in run_table.columns]  # fmt: skip
    if need:
        raise InputError(
            f"the run table lacks columns {need}",
            fix="pass notebook 20's run table (judges.pace.sweep.RUN_COLUMNS)",
        )
    det = set(deterministic)
    temperature = dict(temperature or {})
    rows = []
    for (proto, backbone), g in run_table.groupby(["protocol", "backbone"], sort=False):
        n_rep = int(g["repeat"].nunique())
        d: dict = {"protocol": proto, "backbone": backbone, "kind": "deterministic" if backbone in det else "llm",
                   "repeats": n_rep, "temperature": temperature.get(backbone)}  # fmt: skip
        if backbone in det:
            p = _parsed(g)
            sw = swap_flips(p)
            d["n_swap_pairs"] = len(sw)
            d["swap_flip_rate"], d["swap_flip_ci_low"], d["swap_flip_ci_high"] = _ci(sw, n_boot, seed, ci)
            d["note"] = DETERMINISTIC_NOTE
        elif n_rep < 2:
            d.update(_one(g, n_boot, seed, ci))
            d["note"] = (
                "one repeat: no repeat noise measured (set repeats ≥ 2 and temperature > 0 in the profile's llm_runs)"
            )
        else:
            d.update(_one(g, n_boot, seed, ci))
            if not d.get("n_records"):
                d["note"] = "no record has two parsed repeats"
        rows.append(d)
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    for c in ("repeats", "n_records", "n_swap_pairs"):
        out[c] = pd.array(out[c], dtype="Int64")
    return out
