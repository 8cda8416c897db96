"""PACE evaluation scenarios S0–S4 (seed 000, Section 5.2, Appendix E.2–E.4): the record sets each
scenario scores, the S0 reference metric, and the small machinery every metric module shares.

The input of every metric is the RUN TABLE of the judge sweep: one row per (protocol, backbone,
record_id, repeat) with the judge output (status, parse_ok, verdict, bad_prob, the five 1–5 axis
scores, defect_family, defect_location, supporting_evidence_ids, confidence) and the gold columns
(label, kind, tier, gold_family, gold_location, base_record_id, swap_axis, split,
candidate_evidence_ids, used_evidence_ids).

Scenario record sets (E.3; :func:`scenario_rows` returns them with a ``role`` column):

* S0 — "balanced GOOD/BAD accuracy on a fixed balanced subset" / "on a 50+50 reference subset".
  The subset is passed in as record ids (:func:`select_s0_subset` draws one).
* S1 — "persona-swap records that hold the query and response fixed while replacing the persona";
  the strict PJC pairs each swap with "the original-persona record" sharing its base record id.
* S2 — "cross-component defects such as XCOMP_MISMATCH, INTENT_DRIFT, and REDUNDANCY": BAD records
  "whose gold family is in {XCOMP_MISMATCH, INTENT_DRIFT, REDUNDANCY}". Read literally, a "+"-joined
  multi-defect gold family is not *in* that set, so the slice is the single-defect (tier-1) BADs of
  those families (the paper's Tab. 25 calls it a "100-record cross-field defect subset"; how those
  100 were drawn is not in our copy). GOOD records supply the false-alarm term of J-strict.
* S3 — "product-evidence" BADs (gold family EVIDENCE_MISMATCH) and "persona-history" BADs (gold
  family OVER_PERSONALIZATION_HALLUCINATION), single-defect for the same reason, plus GOOD records.
* S4 — "single-defect BAD records across all seven defect families" (kind ``bad``, tier 1; persona
  swaps are S1 records and have no field location), plus GOOD records for the false-alarm term.

Parse failures. A row whose ``status`` is not ``"ok"`` or whose ``parse_ok`` is false is a FAILED
row. Unless a metric's docstring says otherwise a failed row is scored WRONG: it never earns credit
on a BAD or swap record and it counts as an alarm (a false fire) on a GOOD record. Failed rows are
never dropped.

Unsupported cells. A protocol whose native judging protocol does not cover a PACE target (Tab. 18,
19) gets NaN — printed "–" — in every cell of that target, and a ``supported`` flag set to False;
the value is never computed from the outputs it happens to emit. :data:`NATIVE_TARGETS` holds the
paper's map; pass ``native_targets`` to override it.

Metrics are built as :class:`MetricSpec` objects: per-row sufficient statistics (counts) plus a
vectorised ``combine`` from summed statistics to values. The point estimate sums the statistics
over a group; the bootstrap (:mod:`.bootstrap`) sums them per base record once and then forms each
resample as a weighted sum.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from shopbench.core.taxonomy import FAMILIES

BY: tuple[str, ...] = ("protocol", "backbone")
TARGETS = ("P", "C", "E", "A")
ALL_TARGETS = frozenset(TARGETS)

# E.4: "each defect family belongs to exactly one target" — P: persona conflict; C: the three
# cross-component families (S2's D_C); E: the three grounding families (ARES-style's label set).
FAMILY_TARGET: dict[str, str] = {
    "PREF_CONFLICT": "P",
    "XCOMP_MISMATCH": "C", "INTENT_DRIFT": "C", "REDUNDANCY": "C",
    "EVIDENCE_MISMATCH": "E", "OVER_PERSONALIZATION_HALLUCINATION": "E", "UNSUPPORTED_CLAIM": "E",
}  # fmt: skip
C_FAMILIES = frozenset(f for f, t in FAMILY_TARGET.items() if t == "C")
E_FAMILIES = frozenset(f for f, t in FAMILY_TARGET.items() if t == "E")
PRODUCT_EVIDENCE_FAMILY = "EVIDENCE_MISMATCH"
PERSONA_HISTORY_FAMILY = "OVER_PERSONALIZATION_HALLUCINATION"
NONE = "NONE"
FAILED = "<FAILED>"  # family/location placeholder of a failed row: matches no label

# the 4-way response-field labels (§4.1 R: overview, categories, related queries, attributions)
LOCATIONS = ("overview_text", "productCategoryList", "rqList", "attribution_list")
# the PACEJudge axis of each family target (E.4 "target-triage": the lowest relevant axis)
TARGET_AXIS = {"P": "persona_alignment", "C": "component_consistency", "E": "evidence_grounding"}
AXES = (
    "overall_quality",
    "persona_alignment",
    "component_consistency",
    "evidence_grounding",
    "format_safety",
)
SWAP_AXES = ("budget", "hard_constraint", "brand", "attribute")  # = paceshop.swaps.SWAP_AXES
AXIS_THRESHOLD = 3.0  # E.4: "persona_alignment axis < 3.0", "component-consistency axis < 3.0"
CONFIDENCE_GATE = 0.5  # E.4: "confidence ≥ 0.5"

# Tab. 18 / 19: the PACE targets each protocol's native judging protocol covers. Keys are
# normalised protocol names (see _norm_protocol); unknown protocols are taken to support all four.
NATIVE_TARGETS: dict[str, str] = {
    "geval": "PCEA", "scalar": "PCEA", "mtbench": "PCEA", "scalarmtbench": "PCEA",
    "personaaware": "PCEA", "pacejudge": "PCEA",
    "mtbenchscalarfirst": "PCEA", "personaawaregeneric": "PCEA",  # shopbench.judges protocol names
    "personablind": "CEA",  # persona withheld: S1 and the PACE average are "–"
    "ares": "E", "personalens": "P", "etapp": "A",
}  # fmt: skip


def _norm_protocol(name: str) -> str:
    s = re.sub(r"[^a-z0-9]", "", str(name).lower())
    return s[: -len("style")] if s.endswith("style") else s


def native_targets_of(
    protocol: str, native_targets: Mapping[str, str | Iterable[str]] | None = None
) -> frozenset:
    """The PACE targets ("P", "C", "E", "A") a protocol natively supports.

    ``native_targets`` (protocol name → targets, e.g. ``{"ares": "E"}``) replaces the paper's map
    :data:`NATIVE_TARGETS`; names match case- and punctuation-insensitively and a trailing "-style" is
    ignored. A protocol in neither map supports all four targets."""
    table = NATIVE_TARGETS if native_targets is None else native_targets
    norm = {_norm_protocol(k): v for k, v in table.items()}
    got = norm.get(_norm_protocol(protocol))
    return ALL_TARGETS if got is None else frozenset(got)


def location_field(gold_location: str | None) -> str | None:
    """Map one gold location to its 4-way field label: ``productCategoryList[0]`` → ``productCategoryList``,
    ``rqList[1]`` → ``rqList``; ``persona_swap`` (no field) and unknown values → None."""
    if gold_location is None or (isinstance(gold_location, float) and np.isnan(gold_location)):
        return None
    head = re.sub(r"\[.*?\]$", "", str(gold_location).strip())
    return head if head in LOCATIONS else None


_LIST_COLUMNS = ("supporting_evidence_ids", "candidate_evidence_ids", "used_evidence_ids")


def _split(s) -> list[str]:
    if s is None or (isinstance(s, float) and np.isnan(s)) or s == "":
        return []
    return [p for p in str(s).split("+") if p]


def _as_set(v) -> set:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return set()
    if isinstance(v, str):
        return {v}
    return set(v)


# ---- the prepared frame --------------------------------------------------------------------------


def prepare(run_table: pd.DataFrame) -> pd.DataFrame:
    """Add the derived per-row columns every metric reads (vectorised; the input is not modified).

    ``ok`` (not failed), ``v_bad`` / ``v_good`` (verdict of an ok row), ``fam`` / ``loc`` (NONE when
    absent, :data:`FAILED` on a failed row), ``alarm`` (failed, or a non-NONE family), ``conf``,
    ``s_P`` / ``s_C`` / ``s_E`` (NaN when off-target), ``contained`` (supporting ids ⊆ candidate ids),
    ``n_cited`` / ``n_cited_outside``, ``base_id`` (base_record_id, else the record's own id), the
    kind masks ``is_good`` / ``is_bad`` / ``is_swap``, ``single`` (tier-1 BAD), ``gold_fam1`` (the
    family of a single-defect record), ``gold_loc1`` (its 4-way field), ``gold_target1`` and one
    ``gold_has_<field>`` flag per field of the (multi-)location gold set."""
    rt = run_table.reset_index(drop=True)  # positional index: a caller's index may repeat labels
    keep = [c for c in rt.columns if c not in _LIST_COLUMNS]
    df = rt[keep].copy()
    status = rt["status"].astype("string").fillna("") if "status" in rt else pd.Series("ok", index=rt.index)
    parse_ok = rt["parse_ok"].fillna(False).astype(bool) if "parse_ok" in rt else True
    ok = ((status == "ok") & parse_ok).to_numpy(bool)
    df["ok"] = ok
    verdict = rt["verdict"].astype("string").str.upper().fillna("").to_numpy(object)
    df["v_bad"] = ok & (verdict == "BAD")
    df["v_good"] = ok & (verdict == "GOOD")
    fam = rt["defect_family"].astype("string").str.upper().fillna(NONE).replace("", NONE).to_numpy(object)
    df["fam"] = np.where(ok, fam, FAILED)
    loc = rt["defect_location"].astype("string").fillna(NONE).replace("", NONE).to_numpy(object)
    df["loc"] = np.where(ok, loc, FAILED)
    df["alarm"] = ~ok | (df["fam"].to_numpy(object) != NONE)
    df["conf"] = (
        pd.to_numeric(rt["confidence"], errors="coerce").to_numpy(float) if "confidence" in rt else np.nan
    )
    for t, ax in TARGET_AXIS.items():
        df[f"s_{t}"] = pd.to_numeric(rt[ax], errors="coerce").to_numpy(float) if ax in rt else np.nan
    sup = rt["supporting_evidence_ids"] if "supporting_evidence_ids" in rt else pd.Series([None] * len(rt))
    cand = rt["candidate_evidence_ids"] if "candidate_evidence_ids" in rt else pd.Series([None] * len(rt))
    n_cited = np.zeros(len(rt))
    n_out = np.zeros(len(rt))
    for i, (s, c) in enumerate(zip(sup.to_numpy(object), cand.to_numpy(object), strict=True)):
        ss = _as_set(s)
        if ss:
            n_cited[i] = len(ss)
            n_out[i] = len(ss - _as_set(c))
    df["n_cited"] = np.where(ok, n_cited, 0.0)
    df["n_cited_outside"] = np.where(ok, n_out, 0.0)
    df["contained"] = ok & (n_out == 0)
    base = rt["base_record_id"] if "base_record_id" in rt else pd.Series([None] * len(rt), index=rt.index)
    df["base_id"] = base.where(base.notna(), rt["record_id"]).astype(str).to_numpy(object)
    kind = rt["kind"].astype("string").str.lower().fillna("").to_numpy(object)
    df["is_good"] = kind == "good"
    df["is_bad"] = kind == "bad"
    df["is_swap"] = kind == "swap"
    tier = pd.to_numeric(rt["tier"], errors="coerce").fillna(-1).to_numpy(int)
    df["tier"] = tier
    df["single"] = df["is_bad"].to_numpy(bool) & (tier == 1)
    gf = rt["gold_family"].astype("string").fillna("").to_numpy(object)
    gl = rt["gold_location"].astype("string").fillna("").to_numpy(object)
    fam1 = {g: (_split(g)[0] if len(_split(g)) == 1 else NONE) for g in set(gf)}
    loc1 = {g: (location_field(_split(g)[0]) if len(_split(g)) == 1 else None) for g in set(gl)}
    df["gold_fam1"] = [fam1[g] for g in gf]
    df["gold_loc1"] = [loc1[g] or "<NO_FIELD>" for g in gl]  # never equals a prediction
    df["gold_target1"] = [FAMILY_TARGET.get(fam1[g], "") for g in gf]
    locsets = {g: {location_field(p) for p in _split(g)} for g in set(gl)}
    for f in LOCATIONS:
        df[f"gold_has_{f}"] = np.array([f in locsets[g] for g in gl], bool)
    targets = {g: {FAMILY_TARGET.get(p, "") for p in _split(g)} for g in set(gf)}
    for t in ("P", "C", "E"):
        df[f"gold_is_{t}"] = np.array([t in targets[g] for g in gf], bool)
    return df


# ---- metric specs -----------------------------------------------------------------------------------


def safe_div(num, den):
    """num / den elementwise, NaN where den == 0."""
    num = np.asarray(num, float)
    den = np.asarray(den, float)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def harmonic(*xs):
    """Harmonic mean of components in [0, 1]: 0 when any component is 0, NaN when any is NaN."""
    xs = [np.asarray(x, float) for x in xs]
    zero = np.zeros(np.broadcast(*xs).shape, bool)
    inv = np.zeros(zero.shape)
    for x in xs:
        zero |= x <= 0
        with np.errstate(divide="ignore"):
            inv = inv + np.where(x > 0, 1.0 / np.where(x > 0, x, 1.0), 0.0)
    out = np.where(zero, 0.0, len(xs) / np.where(inv > 0, inv, 1.0))
    nan = np.zeros(zero.shape, bool)
    for x in xs:
        nan |= np.isnan(x)
    return np.where(nan, np.nan, out)


Stats = Callable[[pd.DataFrame], pd.DataFrame]
Combine = Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class MetricSpec:
    """A metric as sufficient statistics.

    ``stats(prepared)`` returns per-row float statistics (a DataFrame on a subset of the prepared
    index; absent rows count 0). ``combine(sums)`` maps the summed statistics — arrays of any shape —
    to named outputs of the same shape. Outputs named ``n_*`` are counts (reported, never bootstrapped).
    ``targets[output]`` is the set of PACE targets a protocol must support natively for that output
    to be reported (absent: always reported). ``report`` (optional) names the outputs a caller sees;
    the others are internal."""

    name: str
    stats: Stats
    combine: Combine
    targets: Mapping[str, frozenset] = field(default_factory=dict)
    report: tuple[str, ...] | None = None

    def outputs_supported(self, protocol: str, native_targets=None) -> dict[str, bool]:
        nat = native_targets_of(protocol, native_targets)
        return {o: t <= nat for o, t in self.targets.items()}


def compose(name: str, parts: Mapping[str, MetricSpec], derived: Combine | None = None,
            derived_targets: Mapping[str, frozenset] | None = None,
            report: tuple[str, ...] | None = None) -> MetricSpec:  # fmt: skip
    """One spec from several: statistics and outputs are prefixed ``<part>:``; ``derived`` adds
    outputs computed from the parts' outputs (e.g. the PACE average)."""

    def stats(p: pd.DataFrame) -> pd.DataFrame:
        frames = [s.stats(p).add_prefix(f"{k}:") for k, s in parts.items()]
        return pd.concat(frames, axis=1).fillna(0.0)

    def combine(sums: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for k, s in parts.items():
            pre = f"{k}:"
            sub = {n[len(pre) :]: v for n, v in sums.items() if n.startswith(pre)}
            out.update({f"{pre}{o}": v for o, v in s.combine(sub).items()})
        if derived is not None:
            out.update(derived(out))
        return out

    targets = {f"{k}:{o}": t for k, s in parts.items() for o, t in s.targets.items()}
    targets.update(derived_targets or {})
    return MetricSpec(name, stats, combine, targets, report)


def group_sums(stats: pd.DataFrame, prepared: pd.DataFrame, by: Iterable[str]) -> pd.DataFrame:
    """Statistics summed per group (groups with no contributing rows are kept, with zeros)."""
    by = list(by)
    keys = prepared[by].drop_duplicates().set_index(by).index.sort_values()
    if stats.shape[1] == 0 or len(stats) == 0:
        return pd.DataFrame(0.0, index=keys, columns=stats.columns)
    sums = stats.groupby([prepared.loc[stats.index, b] for b in by]).sum()
    return sums.reindex(keys, fill_value=0.0)


def apply_support(
    values: pd.DataFrame, spec: MetricSpec, by: Iterable[str], native_targets=None
) -> pd.DataFrame:
    """NaN (never a number) in outputs the group's protocol does not support; adds ``supported``."""
    by = list(by)
    values = values.copy()
    supported = pd.Series(True, index=values.index)
    if "protocol" in by and spec.targets:
        protos = values.index.get_level_values("protocol")
        for proto in pd.unique(protos):
            flags = spec.outputs_supported(proto, native_targets)
            rows = protos == proto
            for out, ok in flags.items():
                if not ok and out in values:
                    values.loc[rows, out] = np.nan
            if not all(flags.values()):
                supported[rows] = False
    values["supported"] = supported
    return values


def evaluate(spec: MetricSpec, run_table: pd.DataFrame, by: Iterable[str] = BY, native_targets=None,
             prepared: pd.DataFrame | None = None) -> pd.DataFrame:  # fmt: skip
    """Point estimates of a spec per group: one row per group, one column per output, ``supported``."""
    p = prepare(run_table) if prepared is None else prepared
    sums = group_sums(spec.stats(p), p, by)
    out = spec.combine({c: sums[c].to_numpy(float) for c in sums.columns})
    names = spec.report or tuple(out)
    values = pd.DataFrame({k: np.asarray(out[k], float) for k in names}, index=sums.index)
    return apply_support(values, spec, by, native_targets)


def _frame(p: pd.DataFrame, **cols) -> pd.DataFrame:
    return pd.DataFrame({k: np.asarray(v, float) for k, v in cols.items()}, index=p.index)


# ---- scenario record sets ------------------------------------------------------------------------


def _col(p, c):
    return p[c].to_numpy()


def s2_mask(p: pd.DataFrame) -> np.ndarray:
    """S2 slice: single-defect BAD records whose gold family is in D_C."""
    return _col(p, "single") & np.isin(_col(p, "gold_fam1"), list(C_FAMILIES))


def s3_product_mask(p: pd.DataFrame) -> np.ndarray:
    """S3 product-evidence BADs: single-defect, gold family EVIDENCE_MISMATCH."""
    return _col(p, "single") & (_col(p, "gold_fam1") == PRODUCT_EVIDENCE_FAMILY)


def s3_history_mask(p: pd.DataFrame) -> np.ndarray:
    """S3 persona-history BADs: single-defect, gold family OVER_PERSONALIZATION_HALLUCINATION."""
    return _col(p, "single") & (_col(p, "gold_fam1") == PERSONA_HISTORY_FAMILY)


def s4_mask(p: pd.DataFrame) -> np.ndarray:
    """S4 slice: single-defect BAD records of all seven families."""
    return _col(p, "single") & np.isin(_col(p, "gold_fam1"), FAMILIES)


RUN_KEYS = ("protocol", "backbone")  # one judge run: pairs never cross runs


def paired_good_mask(p: pd.DataFrame, bad_mask: np.ndarray) -> np.ndarray:
    """GOOD rows whose record is the base of some row in ``bad_mask`` within the same judge run."""
    by = [b for b in RUN_KEYS if b in p]
    bases = pd.MultiIndex.from_frame(p.loc[bad_mask, [*by, "base_id"]]) if by else None
    if by:
        keys = pd.MultiIndex.from_arrays([p[b] for b in by] + [p["record_id"].astype(str)])
        return _col(p, "is_good") & keys.isin(bases)
    return _col(p, "is_good") & p["record_id"].astype(str).isin(set(p.loc[bad_mask, "base_id"])).to_numpy()


def scenario_rows(
    run_table: pd.DataFrame, scenario: str, *, s0_ids: Iterable[str] | None = None
) -> pd.DataFrame:
    """The run-table rows a scenario scores, with a ``role`` column.

    * ``"S0"``: the S0 subset (``s0_ids``; all GOOD and BAD records when None) — roles ``good`` / ``bad``.
    * ``"S1"``: persona swaps (``swap``) and their GOOD bases (``good``).
    * ``"S2"``: single-defect BADs with gold family in D_C (``bad``) and all GOOD records (``good``).
    * ``"S3"``: product-evidence BADs (``product``), persona-history BADs (``history``) and all GOOD
      records (``good``; :func:`~shopbench.metrics.paired.s3_j_harmonic` uses the paired subset).
    * ``"S4"``: single-defect BADs of all seven families (``bad``) and all GOOD records (``good``).
    """
    p = prepare(run_table)
    role = pd.Series(pd.NA, index=p.index, dtype="string")
    good = _col(p, "is_good")
    if scenario == "S0":
        sel = _s0_mask(p, s0_ids)
        role[sel & good] = "good"
        role[sel & (p["label"].astype("string").str.upper() == "BAD").to_numpy(bool)] = "bad"
    elif scenario == "S1":
        swap = _col(p, "is_swap")
        role[paired_good_mask(p, swap)] = "good"
        role[swap] = "swap"
    elif scenario == "S2":
        role[good] = "good"
        role[s2_mask(p)] = "bad"
    elif scenario == "S3":
        role[good] = "good"
        role[s3_product_mask(p)] = "product"
        role[s3_history_mask(p)] = "history"
    elif scenario == "S4":
        role[good] = "good"
        role[s4_mask(p)] = "bad"
    else:
        raise ValueError(f"unknown scenario {scenario!r}: expected one of S0, S1, S2, S3, S4")
    keep = role.notna().to_numpy(bool)
    return run_table.loc[keep].assign(role=role[keep].to_numpy())


def select_s0_subset(run_table: pd.DataFrame, n_per_class: int = 50, seed: int = 0) -> list[str]:
    """A balanced S0 reference subset: ``n_per_class`` GOOD and ``n_per_class`` BAD record ids (kind
    good / bad, persona swaps excluded), drawn uniformly with ``seed`` from the sorted unique ids."""
    rng = np.random.default_rng(seed)
    out: list[str] = []
    for kind in ("good", "bad"):
        ids = np.sort(run_table.loc[run_table["kind"] == kind, "record_id"].astype(str).unique())
        out += list(rng.choice(ids, size=min(n_per_class, len(ids)), replace=False))
    return sorted(out)


# ---- S0 ------------------------------------------------------------------------------------------------


def _s0_mask(p: pd.DataFrame, ids: Iterable[str] | None) -> np.ndarray:
    if ids is None:
        return _col(p, "is_good") | _col(p, "is_bad")
    return p["record_id"].astype(str).isin({str(i) for i in ids}).to_numpy()


def s0_spec(subset_ids: Iterable[str] | None = None) -> MetricSpec:
    ids = None if subset_ids is None else frozenset(str(i) for i in subset_ids)

    def stats(p):
        m = _s0_mask(p, ids)
        bad = m & (p["label"].astype("string").str.upper() == "BAD").to_numpy(bool)
        good = m & _col(p, "is_good")
        return _frame(p, n_bad=bad, tp=bad & _col(p, "v_bad"), n_good=good, tn=good & _col(p, "v_good"))

    def combine(s):
        tpr, tnr = safe_div(s["tp"], s["n_bad"]), safe_div(s["tn"], s["n_good"])
        return {"s0_balanced_accuracy": (tpr + tnr) / 2, "tpr": tpr, "tnr": tnr,
                "n_bad": s["n_bad"], "n_good": s["n_good"]}  # fmt: skip

    return MetricSpec("s0_balanced_accuracy", stats, combine, {})


def s0_balanced_accuracy(run_table: pd.DataFrame, subset_ids: Iterable[str] | None = None, *, by=BY,
                         native_targets=None) -> pd.DataFrame:  # fmt: skip
    """S0 reference GOOD/BAD balanced accuracy on the 50+50 subset.

    Paper (E.4): "S0 (Gen.): balanced GOOD/BAD accuracy on a 50+50 reference subset. This is a
    sanity check, not part of the PACE average." Implemented as ½·(TPR + TNR) with BAD positive:
    TPR = share of gold-BAD subset rows with verdict BAD, TNR = share of gold-GOOD subset rows with
    verdict GOOD. ``subset_ids`` are the subset's record ids (None: every GOOD and BAD record, swaps
    excluded). A failed row is wrong on either side. S0 is defined for every protocol.
    """
    return evaluate(s0_spec(subset_ids), run_table, by, native_targets)


s0_balanced_accuracy.spec = s0_spec  # type: ignore[attr-defined]

__all__ = [
    "BY", "TARGETS", "FAMILY_TARGET", "C_FAMILIES", "E_FAMILIES", "LOCATIONS", "SWAP_AXES", "NATIVE_TARGETS",
    "MetricSpec", "native_targets_of", "location_field", "prepare", "evaluate", "scenario_rows",
    "select_s0_subset", "s0_balanced_accuracy",
]  # fmt: skip
