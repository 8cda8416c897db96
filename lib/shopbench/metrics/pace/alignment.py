"""Appendix D.2's persona-alignment and per-axis discrimination metrics (seed 000, D.2 D1, D4–D6).

D.2 D1 (Persona Alignment): "PACEJudge evaluates persona alignment through counterfactual persona
swaps (S1 in §5.2): if swapping the persona changes which response dimensions should differ, the
judge must detect that change; dimensions that should remain invariant under the swap must stay
stable. Formally, let A_rel(q,p) denote dimensions that should change under a persona swap and
A_inv(q,p) denote dimensions that should remain invariant. The persona-swap score is
S_swap = Σ_{a∈A_rel} w_a Δ_a − λ Σ_{a∈A_inv} w_a Δ_a, where Δ_a measures the distance between axis
signatures of paired responses. We also define the alignment gap G(q,p) = H_gen(f(q,∅)) −
H_pers(f(q,p)), which quantifies the extent to which persona conditioning changes the evaluation
outcome. Metrics. Persona-alignment score (1–5, LLM-scored); GOOD–BAD score gap on D1 (larger gap =
stronger persona discrimination). A negative gap indicates the judge cannot distinguish
persona-conditioned quality—the signature of a persona-blind evaluation." D4, D5 and D6 list a
"GOOD–BAD score gap" on their axis too (component consistency, evidence grounding, format safety).

What the paper leaves open, and what the code does (listed in ``paceshop.choices``):

* Pairs. A persona swap holds the response fixed, so the "paired responses" are the judge's two
  readings of one response: the GOOD base record (original persona) and its swap, judged by the same
  (protocol, backbone, repeat).
* A_rel = {persona_alignment}: the only axis a persona change should move. A_inv = {component_consistency,
  evidence_grounding, format_safety}: the response did not change.
* Δ_a = |s_a(GOOD) − s_a(swap)| / 4 (the 1–5 scale mapped to [0, 1]); w_a = 1 / |A| within each set
  and λ = 1, so S_swap lies in [−1, 1]: 1 = the persona axis moved fully and nothing else moved. An
  axis a judge does not score (NaN, e.g. a single-target baseline) is left out of its set; a pair
  with no scored A_rel axis contributes nothing.
* H is the judge's ``overall_quality`` (1–5); G(q,p) pairs the persona-withheld protocol
  (``persona_blind``, f(q,∅)) with each persona-conditioned protocol on the same backbone, record and
  repeat, reported per record kind (GOOD, BAD, swap). On a swap a persona-using judge should score
  lower than the blind one (G > 0); G ≈ 0 everywhere is a persona-blind evaluation.
* GOOD–BAD gaps: mean axis score on GOOD records minus the mean on BAD records (kind ``bad`` and
  ``swap``), over ok rows that score the axis. ``*_target`` restricts the BAD side to records whose
  gold defect belongs to that axis's PACE target (persona swaps and P families for persona_alignment,
  C families for component_consistency, E families for evidence_grounding).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .spec import MetricSpec, _frame, metric, safe_div

P, C, E = (frozenset(t) for t in "PCE")
REL_AXES = ("persona_alignment",)
INV_AXES = ("component_consistency", "evidence_grounding", "format_safety")
GAP_AXES = {
    "persona_alignment": "P",
    "component_consistency": "C",
    "evidence_grounding": "E",
    "format_safety": "",
}
SCALE = 4.0  # the 1–5 Likert range


def _score(p: pd.DataFrame, col: str) -> np.ndarray:
    if col not in p:
        return np.full(len(p), np.nan)
    v = pd.to_numeric(p[col], errors="coerce").to_numpy(float)
    return np.where(p["ok"].to_numpy(bool), v, np.nan)


# ---- S_swap --------------------------------------------------------------------------------------
def _pair_frame(p: pd.DataFrame, cols: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Swap rows and, aligned to them, the scores of their GOOD base row in the same judge run."""
    keys = [k for k in ("protocol", "backbone") if k in p]
    rep = ["repeat"] if "repeat" in p else []
    swap = p.loc[p["is_swap"].to_numpy(bool)]
    good = p.loc[p["is_good"].to_numpy(bool)]
    g = pd.DataFrame({c: _score(good, c) for c in cols}, index=good.index)
    g[keys + rep] = good[keys + rep]
    g["base_id"] = good["record_id"].astype(str).to_numpy(object)
    on = [*keys, "base_id", *rep]
    g = g.drop_duplicates(on)
    m = swap[on].merge(g, how="left", on=on)
    m.index = swap.index
    return swap, m


def _sswap_stats(p: pd.DataFrame) -> pd.DataFrame:
    cols = (*REL_AXES, *INV_AXES)
    swap, base = _pair_frame(p, cols)
    if swap.empty:
        return _frame(swap, n_pairs=[], s_swap=[], rel=[], inv=[], n_inv=[], signed_p=[])

    def deltas(axes):
        d = np.stack([np.abs(base[a].to_numpy(float) - _score(swap, a)) / SCALE for a in axes])
        n = (~np.isnan(d)).sum(axis=0)
        return np.where(n > 0, np.nansum(d, axis=0) / np.maximum(n, 1), np.nan)

    rel, inv = deltas(REL_AXES), deltas(INV_AXES)
    scored = ~np.isnan(rel)
    s = np.where(scored, rel - np.nan_to_num(inv, nan=0.0), 0.0)
    signed = (base["persona_alignment"].to_numpy(float) - _score(swap, "persona_alignment")) / SCALE
    return _frame(swap, n_pairs=scored, s_swap=s, rel=np.where(scored, rel, 0.0),
                  inv=np.where(scored & ~np.isnan(inv), inv, 0.0), n_inv=scored & ~np.isnan(inv),
                  signed_p=np.where(scored, signed, 0.0))  # fmt: skip


def _sswap_combine(s):
    return {"s_swap": safe_div(s["s_swap"], s["n_pairs"]), "delta_rel": safe_div(s["rel"], s["n_pairs"]),
            "delta_inv": safe_div(s["inv"], s["n_inv"]), "p_drop": safe_div(s["signed_p"], s["n_pairs"]),
            "n_pairs": s["n_pairs"]}  # fmt: skip


@metric
def s_swap() -> MetricSpec:
    """D.2 D1 persona-swap score S_swap = Σ_{a∈A_rel} w_a Δ_a − λ Σ_{a∈A_inv} w_a Δ_a (module docstring
    for the quote and our choices: pairs = (GOOD base, swap) in one judge run; A_rel =
    persona_alignment; A_inv = the other three axes; Δ_a = |score difference| / 4; w_a = 1/|A|; λ = 1).

    Outputs: ``s_swap`` (mean over pairs, in [−1, 1]), ``delta_rel`` / ``delta_inv`` (mean Δ of each
    set), ``p_drop`` (mean signed drop of persona_alignment from GOOD to swap, / 4) and ``n_pairs``
    (pairs whose judge scored persona_alignment on both sides). A failed row has no scores, so its
    pair does not count. Target P."""
    return MetricSpec("s_swap", _sswap_stats, _sswap_combine,
                      dict.fromkeys(("s_swap", "delta_rel", "delta_inv", "p_drop"), P))  # fmt: skip


# ---- per-axis GOOD–BAD gaps ----------------------------------------------------------------------
def _gap_stats(p: pd.DataFrame) -> pd.DataFrame:
    good = p["is_good"].to_numpy(bool)
    bad = p["is_bad"].to_numpy(bool) | p["is_swap"].to_numpy(bool)
    cols = {}
    for axis, t in GAP_AXES.items():
        v = _score(p, axis)
        has = ~np.isnan(v)
        vz = np.nan_to_num(v, nan=0.0)
        cols[f"{axis}:ng"], cols[f"{axis}:sg"] = good & has, np.where(good & has, vz, 0.0)
        cols[f"{axis}:nb"], cols[f"{axis}:sb"] = bad & has, np.where(bad & has, vz, 0.0)
        if t:
            tgt = bad & has & (p[f"gold_is_{t}"].to_numpy(bool) | (t == "P") & p["is_swap"].to_numpy(bool))
            cols[f"{axis}:nt"], cols[f"{axis}:st"] = tgt, np.where(tgt, vz, 0.0)
    return _frame(p, **cols)


def _gap_combine(s):
    out = {}
    for axis, t in GAP_AXES.items():
        g = safe_div(s[f"{axis}:sg"], s[f"{axis}:ng"])
        out[f"gap_{axis}"] = g - safe_div(s[f"{axis}:sb"], s[f"{axis}:nb"])
        if t:
            out[f"gap_{axis}_target"] = g - safe_div(s[f"{axis}:st"], s[f"{axis}:nt"])
    out["n_good"] = s["persona_alignment:ng"] if "persona_alignment:ng" in s else np.nan
    return out


_GAP_TARGETS = {f"gap_{a}{sfx}": frozenset(t) for a, t in GAP_AXES.items() if t for sfx in ("", "_target")}


@metric
def axis_score_gaps() -> MetricSpec:
    """D.2's "GOOD–BAD score gap" per axis: D1 persona_alignment ("larger gap = stronger persona
    discrimination. A negative gap indicates the judge cannot distinguish persona-conditioned
    quality"), D4 component_consistency, D5 evidence_grounding, D6 format_safety.

    ``gap_<axis>`` = mean score on GOOD − mean score on BAD and swap records (ok rows scoring the
    axis); ``gap_<axis>_target`` = the same against BADs of that axis's PACE target only (swaps and P
    families; C families; E families). A protocol that does not natively score an axis's target
    gets "–" (format_safety is reported for every protocol that scores it). ``n_good``: GOOD rows
    with a persona_alignment score."""
    return MetricSpec("axis_score_gaps", _gap_stats, _gap_combine, _GAP_TARGETS)


# ---- G(q, p) -------------------------------------------------------------------------------------
def _gap_g_factory(blind_protocol: str):
    def stats(p: pd.DataFrame) -> pd.DataFrame:
        if "protocol" not in p or "backbone" not in p:
            return _frame(p.iloc[:0], **{f"{k}:{c}": [] for k in ("good", "bad", "swap") for c in ("n", "g")})
        rep = ["repeat"] if "repeat" in p else []
        on = ["backbone", "record_id", *rep]
        blind = p.loc[p["protocol"].astype(str).to_numpy(object) == blind_protocol]
        h_gen = pd.DataFrame({"h_gen": _score(blind, "overall_quality")}, index=blind.index)
        h_gen[on] = blind[on]
        h_gen = h_gen.drop_duplicates(on)
        pers = p.loc[p["protocol"].astype(str).to_numpy(object) != blind_protocol]
        m = pers[on].merge(h_gen, how="left", on=on)
        g = m["h_gen"].to_numpy(float) - _score(pers, "overall_quality")
        has = ~np.isnan(g)
        cols = {}
        for kind, mask in (("good", "is_good"), ("bad", "is_bad"), ("swap", "is_swap")):
            k = pers[mask].to_numpy(bool) & has
            cols[f"{kind}:n"], cols[f"{kind}:g"] = k, np.where(k, np.nan_to_num(g), 0.0)
        return _frame(pers, **cols)

    def combine(s):
        out = {f"G_{k}": safe_div(s[f"{k}:g"], s[f"{k}:n"]) for k in ("good", "bad", "swap")}
        out["G_swap_minus_good"] = out["G_swap"] - out["G_good"]
        out.update({f"n_{k}": s[f"{k}:n"] for k in ("good", "bad", "swap")})
        return out

    return stats, combine


@metric
def alignment_gap(blind_protocol: str = "persona_blind") -> MetricSpec:
    """D.2 D1 alignment gap G(q,p) = H_gen(f(q,∅)) − H_pers(f(q,p)) (module docstring for the quote).

    H = ``overall_quality`` (1–5). H_gen is the persona-withheld judge ``blind_protocol`` on the same
    backbone, record and repeat; each other protocol's rows are H_pers. Outputs per protocol ×
    backbone: mean G on GOOD, BAD and swap records, ``G_swap_minus_good`` (how much more persona
    conditioning lowers a swapped record than its GOOD base: the persona signal) and the pair counts.
    The blind protocol's own rows have no partner and produce no row. A failed row on either side
    leaves its pair out. Target P."""
    stats, combine = _gap_g_factory(blind_protocol)
    return MetricSpec("alignment_gap", stats, combine,
                      dict.fromkeys(("G_good", "G_bad", "G_swap", "G_swap_minus_good"), P))  # fmt: skip


__all__ = ["s_swap", "axis_score_gaps", "alignment_gap", "REL_AXES", "INV_AXES"]
