"""The PACEShop tables of seed 000 (Tables 8, 10, 11, 12, 13, 17; B.4 check pass rate; stealth
defects; Figure 5's worked record), computed from a build, next to the paper's reported numbers."""

from __future__ import annotations

import statistics
from collections import Counter

import pandas as pd

from ..core import taxonomy as T
from . import reported
from .build import BuildResult


def _goods(res: BuildResult):
    return res.by_kind("good")


def stealth_fraction(res: BuildResult) -> float:
    """Share of BAD records (tiers 1–4) that pass all 12 deterministic checks: defects only a judge
    that reads persona, evidence and fields together can find (Table 8 "Stealth-defect fraction")."""
    bads = res.by_kind("bad")
    return sum(all(b.checks.values()) for b in bads) / len(bads) if bads else float("nan")


def table8_summary(res: BuildResult) -> pd.DataFrame:
    goods, bads = _goods(res), res.by_kind("bad")
    split = Counter(r.split for r in goods + bads)
    ours = {
        "Backbone queries (public)": len(res.candidate_queries),
        "Evidence-backed queries (>= 3 products)": len(res.queries),
        "Persona pool": len(res.personas),
        "Query-persona pairs": len(goods) + len(res.rejected),
        "Evidence records (11 domains)": len(res.products),
        "Review-augmented records": sum(p.provenance == "review" for p in res.products),
        "Median evidence IDs / response": statistics.median(len(g.response.attribution_list) for g in goods),
        "GOOD": len(goods),
        "BAD": len(bads),
        "Total records": len(goods) + len(bads),
        "Train": split["train"],
        "Dev": split["dev"],
        "Test": split["test"],
        "Stealth-defect fraction": round(stealth_fraction(res), 3),
        "L1 checks pass rate (GOOD)": round(sum(all(g.checks.values()) for g in goods) / len(goods), 3),
        "Human-calibration package": len(res.subsets.get("human_calibration", [])),
    }
    df = pd.DataFrame(
        {"ours": pd.Series(ours, dtype=object), "paper": pd.Series(reported.TABLE8, dtype=object)}
    )
    df.index.name = "statistic"
    return df


def _coverage(res: BuildResult, attr: str, names: list[str], paper: dict) -> pd.DataFrame:
    backbone = Counter(getattr(q, attr) for q in res.candidate_queries)
    retained = Counter(getattr(q, attr) for q in res.queries)
    rows = [{attr: n, "backbone": backbone[n], "retained": retained[n], "paper_backbone": paper[n][0],
             "paper_retained": paper[n][1]} for n in names]  # fmt: skip
    df = pd.DataFrame(rows).set_index(attr)
    df.loc["Total"] = df.sum()
    return df


def table10_verticals(res: BuildResult) -> pd.DataFrame:
    return _coverage(res, "vertical", T.VERTICALS, reported.TABLE10_VERTICALS)


def table11_missions(res: BuildResult) -> pd.DataFrame:
    return _coverage(res, "mission", T.MISSIONS, reported.TABLE11_MISSIONS)


def table12_personas(res: BuildResult) -> pd.DataFrame:
    rows = []
    axes = [("household", T.HOUSEHOLDS), ("budget", T.BUDGETS), ("quality", T.QUALITY), ("urgency", T.URGENCY),
            ("constraints", T.CONSTRAINT_FAMILIES), ("preferences", T.PREFERENCE_FAMILIES),
            ("history", T.HISTORY_DENSITY), ("holdout_flags", T.HOLDOUT_FLAGS)]  # fmt: skip
    for axis, paper in axes:
        c: Counter = Counter()
        for p in res.personas:
            v = getattr(p.taxonomy, axis)
            c.update(v if isinstance(v, list) else [v])
        for value, n_paper in paper.items():
            rows.append({"axis": axis, "value": value, "ours": c[value], "paper": n_paper})
    return pd.DataFrame(rows).set_index(["axis", "value"])


def table13_evidence(res: BuildResult) -> pd.DataFrame:
    c = Counter(p.domain for p in res.products)
    rev = Counter(p.domain for p in res.products if p.provenance == "review")
    n = len(res.products)
    rows = [{"domain": d, "records": c[d], "pct": round(100 * c[d] / n, 1), "review_augmented": rev[d],
             "paper_records": k, "paper_pct": round(100 * k / 4460, 1)} for d, k in T.EVIDENCE_DOMAIN_COUNTS.items()]  # fmt: skip
    return pd.DataFrame(rows).set_index("domain")


def table17_defects(res: BuildResult) -> pd.DataFrame:
    bads = res.by_kind("bad")
    rows = []
    for fam, (group, loc) in T.DEFECTS.items():
        per_tier = {f"tier{t}": sum(1 for b in bads if b.tier == t and any(d.family == fam for d in b.defects))
                    for t in (1, 2, 3, 4)}  # fmt: skip
        rows.append({"family": fam, "group": group, "gold_location": loc, **per_tier,
                     "stealth_tier1": _stealth_share([b for b in bads if b.tier == 1 and b.gold_family == fam])})  # fmt: skip
    df = pd.DataFrame(rows).set_index("family")
    tiers = pd.DataFrame([{"tier": t, "combinations": len(T.tier_combinations(t)),
                           "records": sum(1 for b in bads if b.tier == t),
                           "combinations_from": "ours: curated quads of the project (the paper's four are in its "
                                                "released code, not in our copy)" if t == 4
                           else "all cross-group combinations (Table 17)"} for t in (1, 2, 3, 4)]).set_index("tier")  # fmt: skip
    df.attrs["tiers"] = tiers
    return df


def _stealth_share(rs) -> float:
    return round(sum(all(r.checks.values()) for r in rs) / len(rs), 3) if rs else float("nan")


def checks_table(res: BuildResult) -> pd.DataFrame:
    """Pass rate of each of the 12 checks on GOOD records and on BAD records by tier."""
    goods, bads = _goods(res), res.by_kind("bad")
    cols = {"GOOD": goods, **{f"BAD tier {t}": [b for b in bads if b.tier == t] for t in (1, 2, 3, 4)}}
    rows = {chk: {k: round(sum(r.checks[chk] for r in rs) / len(rs), 3) if rs else float("nan")
                  for k, rs in cols.items()} for chk in T.CHECKS}  # fmt: skip
    df = pd.DataFrame(rows).T
    df.loc["all 12"] = {k: round(sum(all(r.checks.values()) for r in rs) / len(rs), 3) if rs else float("nan")
                        for k, rs in cols.items()}  # fmt: skip
    df.index.name = "check"
    return df


def worked_record(res: BuildResult, record_id: str | None = None) -> pd.DataFrame:
    """Figure 5 style: one GOOD record end to end (query, persona, four fields, evidence)."""
    g = next(r for r in _goods(res) if record_id in (None, r.record_id))
    p = g.persona
    ev = {s.evidence_id: s for s in g.evidence}
    cited = [f"{ev[e].brand}: {ev[e].snippet[:60]}" for e in g.response.attribution_list if e in ev]
    rows = [
        ("record", g.record_id), ("query", g.query), ("vertical / mission", f"{g.vertical} / {g.mission}"),
        ("persona", p.persona_id), ("household", p.profile.household),
        ("hard constraints", "; ".join(p.preferences.hard_constraints)),
        ("preferences", "; ".join(p.preferences.soft_preferences + p.preferences.attribute_preferences)),
        ("brand likes / avoids", f"{p.preferences.brand_likes} / {p.preferences.brand_avoids}"),
        ("shopping", f"{p.shopping_context.budget}; {p.shopping_context.quality_sensitivity}; "
                     f"{p.shopping_context.shipping_urgency}"),
        ("history", "; ".join(h.product_name[:40] for h in p.history.purchase_history) or "(none)"),
        ("overview", g.response.overview_text),
        ("categories", "; ".join(g.response.productCategoryList)),
        ("related queries", "; ".join(g.response.rqList)),
        ("attributions", f"{len(cited)} cited: " + " | ".join(cited[:8])),
        ("checks", f"{sum(g.checks.values())}/12 pass"),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["field", "value"]).set_index("field")


# ---- issue 15: the two readings of the category edits, the swap balance, Table 27 ----------------
def category_readings_table(res: BuildResult) -> pd.DataFrame:
    """Stealth fraction under each reading of the PREF_CONFLICT / INTENT_DRIFT edit (defects.py):
    the built default and the other reading built alongside (``compare_category_readings``). Rows:
    reading; columns: the Table 8 stealth fraction over all BAD records, the stealth share of the BADs
    holding a category defect, of the tier-1 PREF_CONFLICT and INTENT_DRIFT records, and the checks
    that see those tier-1 edits. Empty when the other reading was not built."""
    if not res.other_reading:
        return pd.DataFrame()
    bads = res.by_kind("bad")
    other = {r.record_id: r for r in res.other_reading["records"]}
    default = next(r for r in ("mirrored", "literal") if r != res.other_reading["reading"])
    rows = []
    for name, rs in (
        (default, bads),
        (res.other_reading["reading"], [other.get(b.record_id, b) for b in bads]),
    ):
        cat = [r for r in rs if r.record_id in other]
        row = {"reading": name, "default": name == default, "stealth_fraction": _stealth_share(rs),
               "stealth_category_bads": _stealth_share(cat), "category_bads": len(cat)}  # fmt: skip
        for fam in ("PREF_CONFLICT", "INTENT_DRIFT"):
            t1 = [r for r in cat if r.tier == 1 and r.gold_family == fam]
            row[f"stealth_tier1_{fam}"] = _stealth_share(t1)
            fired = Counter(k for r in t1 for k, ok in r.checks.items() if not ok)
            row[f"checks_firing_{fam}"] = ", ".join(f"{k} ({v})" for k, v in sorted(fired.items())) or "none"
        rows.append(row)
    out = pd.DataFrame(rows).set_index("reading")
    out.loc["paper (Table 8)", "stealth_fraction"] = reported.TABLE8["Stealth-defect fraction"]
    return out


def curated_quads_table() -> pd.DataFrame:
    """The four tier-4 quads, marked as the project's own (Table 17: "4 curated quads covering all 4
    component groups"; the paper's four are "enumerated in pmsb.faults of the released benchmark code")."""
    return pd.DataFrame([{"quad": i + 1, **{g: next(f for f in q if T.DEFECTS[f][0] == g) for g in T.GROUP_ORDER},
                          "source": "ours (not in our copy of the paper)"}
                         for i, q in enumerate(T.CURATED_QUADS)]).set_index("quad")  # fmt: skip


def persona_strata_table(res: BuildResult) -> pd.DataFrame:
    """Persona pool by origin label, ours vs the paper (Table 16: "200 raw-v1 plus 1000 behavior-seeded
    synthetic personas"). Ours are all generated the same way: "raw-v1" is an id/origin label only."""
    c = Counter(p.origin for p in res.personas)
    return pd.DataFrame([
        {"stratum": "raw-v1", "ours": c.get("raw-v1", 0), "paper": 200,
         "how ours were made": "synthetic, same generator as the rest; labelled raw-v1 only (public v1 personas not in our copy)"},
        {"stratum": "synthetic", "ours": c.get("synthetic", 0), "paper": 1000,
         "how ours were made": "synthetic from catalog purchase histories (behavior-seeded)"},
    ]).set_index("stratum")  # fmt: skip


def swap_balance_table(res: BuildResult) -> pd.DataFrame:
    """The persona-swap slice per axis (``swaps.select_swaps``): swaps chosen, test GOOD records that
    could take one, and why the others could not (nothing attested; no pool value contradicts it)."""
    rep = res.swap_report
    if not rep:
        return pd.DataFrame()
    rows = []
    for axis in ("budget", "hard_constraint", "brand", "attribute"):
        why = rep["reasons"].get(axis, {})
        rows.append({"axis": axis, "swaps": rep["counts"].get(axis, 0), "feasible_goods": rep["feasible"].get(axis, 0),
                     "not_attested": why.get("not attested", 0),
                     "no_pool_value": why.get("no pool value contradicts it", 0)})  # fmt: skip
    df = pd.DataFrame(rows).set_index("axis")
    df.loc["total"] = df.sum()
    df.attrs["no_swap"] = rep.get("no_swap", 0)
    return df


def table27_swap_examples(res: BuildResult, per_axis: int = 3) -> pd.DataFrame:
    """Table 27 style: persona-swap records with the original and swapped value, the donor persona it
    was drawn from and the attestation in the unchanged response (``per_axis`` per axis, in order)."""
    rep = res.swap_report
    rows = []
    for axis in ("hard_constraint", "brand", "attribute", "budget"):
        for m in [m for m in rep.get("swaps", []) if m["axis"] == axis][:per_axis]:
            rows.append({"swap_id": m["record_id"], "record": m["base_record_id"], "axis": axis,
                         "original": m["old_value"], "swapped": m["new_value"], "drawn_from": m["donor_persona_id"],
                         "conflict_in_unchanged_response": f"{m['field']}: {m['attestation'][:140]}"})  # fmt: skip
    return pd.DataFrame(rows)
