"""Worked judge outputs and per-backbone companion tables of seed 000 (Tables 21, 23–26) and the
category-edit readings comparison (issue 15).

* Table 21 (D.4.1): "Qualitative examples of PACEJudge (Opus 4.6) output on the development set" —
  Example 1 "GOOD record correctly classified", Example 2 "Single-defect BAD record" whose defect
  "matches gold", Example 3 "Triple-defect BAD record". :func:`table21_judge_examples` picks the
  first record of each kind from a run table for each backbone of one protocol.
* Table 26 (E.7.1): "Ten concrete failure cases. Each row contrasts a scalar baseline's verdict and
  reasoning against PACEJudge's structured output on the same record. Axis scores abbreviated
  P/C/G/F." Cases are labelled PS (persona swap), CC (cross-component), GR (grounding), MD (multi-
  defect) as in the paper. :func:`table26_failure_cases` draws them from the run table.
* Tables 23, 24, 25 (E.5.1–E.5.3): the per-backbone companions of Tables 3, 5 and 6, each with a
  "Mean" row per method over the seven backbones. :func:`per_backbone_table` adds the Mean rows to
  our per-(protocol, backbone) tables and, when given, the paper's reported Mean rows
  (``paceshop.reported``); our copy holds the per-backbone numbers of all three tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .run_table import C_FAMILIES, E_FAMILIES, prepare, usable

AXIS_ABBREV = {"persona_alignment": "P", "component_consistency": "C", "evidence_grounding": "G",
               "format_safety": "F"}  # fmt: skip


def _axes(row) -> str:
    vals = []
    for col, ab in AXIS_ABBREV.items():
        v = row.get(col)
        vals.append(f"{ab} {float(v):.1f}" if v is not None and not pd.isna(v) else f"{ab} –")
    return "[" + ", ".join(vals) + "]"


def _diag(row) -> str:
    if row.get("status") != "ok" or not bool(row.get("parse_ok")):
        return f"parse failure ({row.get('parse_error_kind') or row.get('status')})"
    fam = row.get("defect_family") or "NONE"
    loc = row.get("defect_location") or "NONE"
    conf = row.get("confidence")
    c = f", confidence {float(conf):.2f}" if conf is not None and not pd.isna(conf) else ""
    return f"{row.get('verdict')}{c}; defect: {fam} @ {loc}"


def _gold(row) -> str:
    if row.get("label") == "GOOD":
        return "GOOD"
    return f"{row.get('gold_family')} @ {row.get('gold_location')}"


def _text(v, n: int) -> str:
    s = "" if v is None or (isinstance(v, float) and np.isnan(v)) else " ".join(str(v).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _query(queries: Mapping[str, str] | None, row) -> str:
    """The record's query: ``queries[record_id]``, else ``queries[base_record_id]`` (a swap or BAD
    shares its GOOD's query), else the run table's own ``query`` column when it has one; "" otherwise
    (the run table carries no query text)."""
    for key in (row.get("record_id"), row.get("base_record_id")):
        if queries and key is not None and not pd.isna(key) and str(key) in queries:
            return str(queries[str(key)])
    return _text(row.get("query"), 200)


def table21_judge_examples(runs: pd.DataFrame, protocol: str = "pacejudge",
                           backbones: Sequence[str] | None = None, rationale_chars: int = 300,
                           queries: Mapping[str, str] | None = None) -> pd.DataFrame:  # fmt: skip
    """Table 21: per backbone, (1) the first GOOD record the judge called GOOD, (2) the first
    single-defect BAD whose predicted family equals the gold family, (3) the first triple-defect BAD,
    in record-id order, with verdict, confidence, defect, gold, axis scores and rationale. A missing
    case (e.g. no single-defect hit) is a row saying so, never a substitute. ``queries`` (record id →
    query text) fills the query column (:func:`_query`)."""
    rt = runs[runs["protocol"] == protocol]
    if backbones is not None:
        rt = rt[rt["backbone"].isin(list(backbones))]
    rows = []
    for bb, g in rt.sort_values("record_id").groupby("backbone", sort=True):
        ok = (g["status"] == "ok") & g["parse_ok"].fillna(False).astype(bool)
        cases = {
            "1: GOOD correctly classified": g[(g["kind"] == "good") & ok & (g["verdict"] == "GOOD")],
            "2: single-defect BAD, family matches gold": g[(g["kind"] == "bad") & (g["tier"] == 1) & ok
                                                          & (g["defect_family"] == g["gold_family"])],
            "3: triple-defect BAD": g[(g["kind"] == "bad") & (g["tier"] == 3)],
        }  # fmt: skip
        for name, sel in cases.items():
            if sel.empty:
                rows.append({"backbone": bb, "example": name, "record": "–", "query": "",
                             "judge output": "no such record in this run", "gold": "", "axis scores": "",
                             "rationale": ""})  # fmt: skip
                continue
            r = sel.iloc[0].to_dict()
            rows.append({"backbone": bb, "example": name, "record": r["record_id"], "query": _query(queries, r),
                         "judge output": _diag(r), "gold": _gold(r), "axis scores": _axes(r),
                         "rationale": _text(r.get("rationale"), rationale_chars)})  # fmt: skip
    return pd.DataFrame(rows)


def _case(row) -> str:
    if row["kind"] == "swap":
        return "PS"
    fams = str(row.get("gold_family") or "").split("+")
    if len(fams) > 1:
        return "MD"
    if fams[0] in C_FAMILIES:
        return "CC"
    if fams[0] in E_FAMILIES:
        return "GR"
    return "AC"  # an actionable-only single defect (not a case type of Table 26)


def table26_failure_cases(runs: pd.DataFrame, baseline: str = "mtbench_scalar_first", protocol: str = "pacejudge",
                          n: int = 10, reasoning_chars: int = 200,
                          queries: Mapping[str, str] | None = None) -> pd.DataFrame:  # fmt: skip
    """Table 26: up to ``n`` BAD or swap records judged by both ``baseline`` and ``protocol`` on the
    same backbone, spread over the case types PS, CC, GR, MD (round robin, record-id order, one
    backbone: the first that ran both). Each row: case, record, query (:func:`_query`), gold, the
    baseline's verdict and reasoning, the protocol's verdict, axes P/C/G/F and defect. Empty when no
    backbone ran both."""
    both = runs[runs["protocol"].isin([baseline, protocol]) & runs["kind"].isin(["bad", "swap"])]
    common = [b for b, g in both.groupby("backbone") if set(g["protocol"]) >= {baseline, protocol}]
    if not common:
        return pd.DataFrame()
    bb = sorted(common)[0]
    g = both[both["backbone"] == bb].sort_values("record_id")
    base = g[g["protocol"] == baseline].drop_duplicates("record_id").set_index("record_id")
    ours = g[g["protocol"] == protocol].drop_duplicates("record_id").set_index("record_id")
    ids = [i for i in ours.index if i in base.index]
    by_case: dict[str, list[str]] = {}
    for rid in ids:
        by_case.setdefault(_case(ours.loc[rid].to_dict()), []).append(rid)
    order = [c for c in ("PS", "CC", "GR", "MD", "AC") if c in by_case]
    picked: list[str] = []
    k = 0
    while len(picked) < n and any(k < len(by_case[c]) for c in order):
        for c in order:
            if k < len(by_case[c]) and len(picked) < n:
                picked.append(by_case[c][k])
        k += 1
    rows = []
    for rid in picked:
        b, o = base.loc[rid].to_dict(), {**ours.loc[rid].to_dict(), "record_id": rid}
        q = _query(queries, o)
        oq = b.get("overall_quality")
        bverdict = f"{b.get('verdict')}" + (
            f", overall {float(oq):.1f}" if oq is not None and not pd.isna(oq) else ""
        )
        rows.append({"case": _case(o), "record": rid, "query": q, "gold": _gold(o), "backbone": bb,
                     f"{baseline} verdict": bverdict if b.get("status") == "ok" and b.get("parse_ok") else _diag(b),
                     f"{baseline} reasoning": _text(b.get("rationale"), reasoning_chars),
                     f"{protocol} verdict": _diag(o), f"{protocol} axes": _axes(o)})  # fmt: skip
    return pd.DataFrame(rows)


def per_backbone_table(df: pd.DataFrame, mean_backbones: Iterable[str], paper: Mapping | None = None,
                       label: str = "Mean") -> pd.DataFrame:  # fmt: skip
    """A per-(protocol, backbone) table (index levels ``protocol``, ``backbone``) with a ``label`` row per
    protocol averaging ``mean_backbones`` (Tables 23–25's "Mean" rows; the unweighted mean over
    backbones, as the paper's 7-backbone mean), then the paper's rows ``paper`` ({protocol: {column:
    value}}) under backbone "paper: 7-backbone mean". Numeric columns only in the added rows."""
    d = df.copy()
    if not isinstance(d.index, pd.MultiIndex):
        d = d.set_index(["protocol", "backbone"])
    members = set(mean_backbones)
    num = d.select_dtypes("number")
    extra = []
    for proto in pd.unique(d.index.get_level_values("protocol")):
        sub = num.xs(proto, level="protocol")
        sub = sub[sub.index.isin(members)]
        if len(sub):
            extra.append(sub.mean(numeric_only=True).rename((proto, label)))
    for proto, vals in (paper or {}).items():
        extra.append(pd.Series(vals, dtype=float).rename((proto, PAPER_MEAN)))
    if extra:
        add = pd.DataFrame(extra)
        add.index = pd.MultiIndex.from_tuples(add.index, names=["protocol", "backbone"])
        d = pd.concat([d, add])
    return d


PAPER_MEAN = "paper: 7-backbone mean"


def category_reading_localisation(runs_by_reading: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per category-edit reading × protocol × backbone, on single-defect BADs holding a category
    defect: S2 detect / 4-way localisation on INTENT_DRIFT (the only S2 family among them; E.4 "S2
    detect ... the fraction of records marked BAD"; "S2 loc. ... requires both a BAD verdict and correct
    4-way response-field localization") and S4 family / location on PREF_CONFLICT and INTENT_DRIFT
    ("S4 family: exact defect-family prediction on single-defect BAD records"; "S4 loc.: exact 4-way
    response-field localization on the same single-defect BAD slice"). Failed rows are misses."""
    rows = []
    for reading, rt in runs_by_reading.items():
        if rt.empty:
            continue
        p = usable(prepare(rt)).reset_index(drop=True)  # call errors are no answers (issue 25)
        single = p["single"].to_numpy(bool)
        fam1 = p["gold_fam1"].to_numpy(object)
        loc_ok = p["loc"].to_numpy(object) == p["gold_loc1"].to_numpy(object)
        fam_ok = p["fam"].to_numpy(object) == fam1
        bad = p["v_bad"].to_numpy(bool)
        for (proto, bb), idx in p.groupby(["protocol", "backbone"]).indices.items():
            m = np.zeros(len(p), bool)
            m[idx] = True
            s2 = m & single & (fam1 == "INTENT_DRIFT")
            s4 = m & single & np.isin(fam1, ["INTENT_DRIFT", "PREF_CONFLICT"])
            rows.append({"reading": reading, "protocol": proto, "backbone": bb,
                         "S2_detect": (s2 & bad).sum() / s2.sum() if s2.sum() else np.nan,
                         "S2_loc": (s2 & bad & loc_ok).sum() / s2.sum() if s2.sum() else np.nan,
                         "S4_family": (s4 & fam_ok).sum() / s4.sum() if s4.sum() else np.nan,
                         "S4_loc": (s4 & loc_ok).sum() / s4.sum() if s4.sum() else np.nan,
                         "n_S2": int(s2.sum()), "n_S4": int(s4.sum())})  # fmt: skip
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).set_index(["reading", "protocol", "backbone"]).sort_index()


__all__ = ["table21_judge_examples", "table26_failure_cases", "per_backbone_table", "category_reading_localisation",
           "PAPER_MEAN"]  # fmt: skip
