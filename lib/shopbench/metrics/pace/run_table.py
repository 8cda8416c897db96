"""The PACE run table (seed 000, Section 5.2, Appendix E.2–E.4): the vocabulary every PACE metric
shares — targets, families, the 4-way locations, the paper's native-target map — and :func:`prepare`,
which adds the per-row columns every metric reads.

The input of every metric is the RUN TABLE of the judge sweep: one row per (protocol, backbone,
record_id, repeat) with the judge output (status, parse_ok, verdict, bad_prob, the five 1–5 axis
scores, defect_family, defect_location, supporting_evidence_ids, confidence) and the gold columns
(label, kind, tier, gold_family, gold_location, base_record_id, swap_axis, split,
candidate_evidence_ids, used_evidence_ids).

Call errors (issue 25 item 3). A row whose ``status`` is ``"error"`` (the call itself failed: HTTP
error, timeout, a cost-cap stop) is no answer: it is not scored. :func:`prepare` marks it
``call_error`` and, with every row whose paired GOOD base (same protocol, backbone and repeat) failed
so, not ``used``; every metric scores only ``used`` rows (:func:`usable`), and a group with no ``ok``
answer among them has no numbers (NaN), never a score of 0. :func:`outcome_table` counts them.

Parse failures. A used row whose ``status`` is not ``"ok"`` or whose ``parse_ok`` is false is a
FAILED row. Unless a metric's docstring says otherwise a failed row is scored WRONG: it never earns
credit on a BAD or swap record and it counts as an alarm (a false fire) on a GOOD record. Failed rows
are never dropped.

Unsupported cells. A protocol whose native judging protocol does not cover a PACE target (Tab. 18,
19) gets NaN — printed "–" — in every cell of that target, and a ``supported`` flag set to False;
the value is never computed from the outputs it happens to emit. :data:`NATIVE_TARGETS` holds the
paper's map; pass ``native_targets`` to override it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ...core import taxonomy

BY: tuple[str, ...] = ("protocol", "backbone")
TARGETS = ("P", "C", "E", "A")
ALL_TARGETS = frozenset(TARGETS)

# E.4: "each defect family belongs to exactly one target" (the one map: shopbench.core.taxonomy)
FAMILY_TARGET: dict[str, str] = taxonomy.FAMILY_TARGET
C_FAMILIES = frozenset(f for f, t in FAMILY_TARGET.items() if t == "C")
E_FAMILIES = frozenset(f for f, t in FAMILY_TARGET.items() if t == "E")
PRODUCT_EVIDENCE_FAMILY = "EVIDENCE_MISMATCH"
PERSONA_HISTORY_FAMILY = "OVER_PERSONALIZATION_HALLUCINATION"
NONE = "NONE"
FAILED = "<FAILED>"  # family/location placeholder of a failed row: matches no label

# the 4-way response-field labels (§4.1 R: overview, categories, related queries, attributions)
LOCATIONS = taxonomy.LOCATIONS
# the PACEJudge axis of each family target (E.4 "target-triage": the lowest relevant axis)
TARGET_AXIS = taxonomy.TARGET_AXIS
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
    "mtbenchscalarfirst": "PCEA", "personaawaregeneric": "PCEA",  # shopbench.judges.pace protocol names
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


def _run_keys(rt: pd.DataFrame, ids: pd.Series) -> np.ndarray:
    """``protocol|backbone|repeat|<id>`` per row (the keys present), for pairing rows within a run."""
    parts = [rt[c].astype(str) for c in ("protocol", "backbone", "repeat") if c in rt]
    key = ids.astype(str)
    for p in reversed(parts):
        key = p + "\x1f" + key
    return key.to_numpy(object)


def _pair_answered(rt: pd.DataFrame, err: np.ndarray) -> np.ndarray:
    """True where a row can be used as far as its pair goes: False when its base record's row (same
    protocol, backbone, repeat) is a call error; a unit is one record with its GOOD base."""
    if not err.any() or "base_record_id" not in rt:
        return np.ones(len(rt), bool)
    failed = set(_run_keys(rt, rt["record_id"])[err])
    base = rt["base_record_id"]
    has = base.notna().to_numpy(bool)
    keys = _run_keys(rt, base.where(base.notna(), ""))
    return ~(has & np.fromiter((k in failed for k in keys), bool, len(keys)))


def usable(prepared: pd.DataFrame) -> pd.DataFrame:
    """The rows of a prepared frame a metric scores: not a call error, nor paired with one."""
    if "used" not in prepared or prepared["used"].all():
        return prepared
    return prepared.loc[prepared["used"].to_numpy(bool)]


def no_answer_groups(prepared: pd.DataFrame, by) -> pd.Series:
    """Per group of ``by``: True when no used row holds an ``ok`` answer (the group has no numbers)."""
    by = list(by)
    good = (prepared["ok"] & prepared["used"]) if "used" in prepared else prepared["ok"]
    return ~good.groupby([prepared[b] for b in by], dropna=False).any()


def outcome_table(run_table: pd.DataFrame, by=BY, mean_backbones=None) -> pd.DataFrame:
    """Per group of ``by``: the counts of :data:`shopbench.llm.outcomes.OUTCOME_COLUMNS` (``n_used`` of
    ``n_planned`` rows, ``n_call_error``, ``n_parse_failure``, ``outcome``, ``outcome_note``). With
    ``mean_backbones`` (``by`` = protocol, backbone) a ``(protocol, "mean")`` row sums its backbones."""
    from ...llm.outcomes import Tally

    by = list(by)
    p = prepare(run_table)
    err_col = (
        run_table["error"].reset_index(drop=True) if "error" in run_table else pd.Series([None] * len(p))
    )
    perr = run_table["parse_error"].reset_index(drop=True) if "parse_error" in run_table else err_col * None
    tallies: dict[tuple, Tally] = {}
    for key, idx in p.groupby(by, sort=False).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        t = Tally()
        for i in idx:
            if p["call_error"].iat[i]:
                t.add("error", err_col.iat[i])
            elif not p["used"].iat[i]:
                t.planned += 1
                t.unpaired += 1
            else:
                t.add("ok" if p["ok"].iat[i] else "parse_error", parse_error=perr.iat[i])
        tallies[key] = t
    if mean_backbones is not None and by == ["protocol", "backbone"]:
        members = set(mean_backbones)
        for proto in dict.fromkeys(k[0] for k in tallies):
            m = Tally()
            for k, t in tallies.items():
                if k[0] == proto and k[1] in members:
                    m += t
            if m.planned:
                tallies[(proto, "mean")] = m
    rows = [{**dict(zip(by, k, strict=True)), **t.columns()} for k, t in tallies.items()]
    from ...llm.outcomes import OUTCOME_COLUMNS

    out = pd.DataFrame(rows, columns=[*by, *OUTCOME_COLUMNS])
    return out.set_index(by)


def with_outcomes(table: pd.DataFrame, run_table: pd.DataFrame, *, by=BY, mean_backbones=None,
                  blank=None) -> pd.DataFrame:  # fmt: skip
    """``table`` with the outcome columns of :func:`outcome_table` at its end, joined on the ``by``
    columns or index levels; a group of the run table the table lacks (every call failed) gets a row.
    Rows whose outcome is ``no-answer`` have the ``blank`` columns (default: every column the table
    had) set to NaN: no numbers from a subject that gave no usable answer."""
    by = list(by)
    counts = outcome_table(run_table, by, mean_backbones)
    idx_names = [n for n in (table.index.names or []) if n is not None]
    df = table.reset_index() if idx_names else table.copy()
    cols = list(table.columns)
    blank = cols if blank is None else [c for c in blank if c in df.columns]
    keys = pd.MultiIndex.from_frame(df[by]) if len(by) > 1 else pd.Index(df[by[0]])
    have = set(keys)
    missing = [k for k in counts.index if (k if isinstance(k, tuple) else (k,)) not in
               {(h if isinstance(h, tuple) else (h,)) for h in have}]  # fmt: skip
    if missing:
        add = pd.DataFrame([dict(zip(by, k if isinstance(k, tuple) else (k,), strict=True)) for k in missing])
        df = pd.concat([df, add], ignore_index=True)
    joined = df.join(counts, on=by)
    no = (joined["outcome"] == "no-answer").to_numpy(bool)
    if no.any():
        for c in blank:
            joined[c] = joined[c].mask(no)
    for c in ("n_used", "n_planned", "n_call_error", "n_parse_failure"):
        joined[c] = joined[c].astype("Int64")
    return joined.set_index(idx_names) if idx_names else joined


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
    err = (status == "error").to_numpy(bool)
    df["call_error"] = err
    df["used"] = ~err & _pair_answered(rt, err)
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


__all__ = [
    "usable", "no_answer_groups", "outcome_table", "with_outcomes",
    "BY", "TARGETS", "FAMILY_TARGET", "C_FAMILIES", "E_FAMILIES", "LOCATIONS", "SWAP_AXES", "AXES", "NATIVE_TARGETS",
    "native_targets_of", "location_field", "prepare",
]  # fmt: skip
