"""PACEShop: from a headline cell to the judge rows behind it (pure functions on the run table).

A cell of Table 3 or 4 is (protocol, backbone, column); its value is a :class:`MetricSpec` output
computed from per-row sufficient statistics (:mod:`shopbench.metrics.pace.spec`). The rows *behind*
a cell are exactly the run-table rows with a non-zero statistic in the part of the headline spec
that the column reads (for ``S2_detect`` the statistics ``n``, ``detect`` and ``loc`` of the S2
part; for ``PACE_avg`` every Table 3 part). So the explorer never re-implements a metric's slice:
it asks the same ``stats`` function the table was computed with. :func:`cell_rows` adds

- ``counts_as``: the statistics the row adds to (``n`` = in the slice's denominator, ``detect`` =
  counted as detected, ``n_good, no_e`` = a GOOD record without an evidence-family alarm, ...;
  ``paired GOOD base`` = a GOOD row whose verdict a persona swap's S1 PJC credit reads, Table 4);
- ``hit``: whether the row adds to a statistic that is not a count of rows in the slice (a name not
  starting with ``n``), i.e. it earned the credit the column measures (for ``false_fire`` the
  credit is a *fire*: lower is better there);
- ``verdict_correct``: the verdict equals the gold label (a failed row is not correct).

A mean row (backbone ``"mean"``) takes the rows of every backbone the mean averages.
:func:`headline_values` recomputes the point estimates (no bootstrap) with the same spec, for the
cell grid; they equal the ``estimate`` column of :func:`shopbench.metrics.headline_table`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..metrics.pace.headline import TABLE3_COLUMNS, TABLE4_COLUMNS, headline_spec
from ..metrics.pace.paired import PACE_PARTS
from ..metrics.pace.run_table import native_targets_of, prepare
from ..metrics.pace.spec import evaluate

TABLES: dict[str, dict[str, str]] = {"tab3": TABLE3_COLUMNS, "tab4": TABLE4_COLUMNS}
TABLE_TITLES = {"tab3": "Table 3 (PACE closure)", "tab4": "Table 4 (strict paired-counterfactual)"}
MEAN = "mean"
PAIRED_PREFIXES = ("T4:S1:", "T4:")  # cells whose value reads a swap's GOOD base row (S1 PJC)
# the columns a reader filters on, in the order the explorer shows them
FILTERS = (
    "split",
    "label",
    "kind",
    "tier",
    "gold_family",
    "gold_location_group",
    "swap_axis",
    "protocol",
    "backbone",
)
SHOW = ("record_id", "protocol", "backbone", "repeat", "label", "kind", "tier", "gold_family", "gold_location",
        "swap_axis", "split", "verdict", "defect_family", "defect_location", "parse_ok", "verdict_correct",
        "counts_as", "hit")  # fmt: skip


def stats_prefix(table: str, column: str) -> str:
    """The prefix of the headline spec's statistics that ``column`` of ``table`` reads.

    ``T3:S2:detect`` reads ``T3:S2:*``; ``T3:pace_avg`` reads every ``T3:*`` statistic; Table 4's
    ``T4:s1_pjc`` is the derived output of part ``S1`` (``T4:S1:*``) and ``T4:pace`` reads ``T4:*``."""
    try:
        out = TABLES[table][column]
    except KeyError:
        raise KeyError(
            f"no column {column!r} in {table!r} (columns: {list(TABLES.get(table, {}))})"
        ) from None
    parts = out.split(":")
    if len(parts) == 3:
        return f"{parts[0]}:{parts[1]}:"
    top, name = parts
    for key, (derived, _spec) in PACE_PARTS.items():
        if top == "T4" and name == derived:
            return f"T4:{key}:"
    return f"{top}:"


def _mean_backbones(
    run_table: pd.DataFrame, protocol: str, mean_backbones: Sequence[str] | None
) -> list[str]:
    have = pd.unique(run_table.loc[run_table["protocol"] == protocol, "backbone"])
    if mean_backbones is None:
        return [b for b in have if not str(b).startswith("majority@")]
    return [b for b in have if b in set(mean_backbones)]


def cell_rows(run_table: pd.DataFrame, column: str, protocol: str, backbone: str, *, table: str = "tab3",
              s0_ids: Iterable[str] | None = None, mean_backbones: Sequence[str] | None = None,
              native_targets: Mapping | None = None) -> pd.DataFrame:  # fmt: skip
    """The run-table rows behind one headline cell, with ``counts_as``, ``hit`` and ``verdict_correct``.

    ``backbone="mean"`` gives the rows of every backbone the protocol mean averages (``mean_backbones``;
    default every backbone of the protocol except ``majority@k``). ``attrs["supported"]`` is False
    when the protocol does not natively cover the column's PACE targets (the cell prints "–"; the
    rows are still returned so a reader can see what the judge said)."""
    prefix = stats_prefix(table, column)
    backs = _mean_backbones(run_table, protocol, mean_backbones) if backbone == MEAN else [backbone]
    sub = run_table[(run_table["protocol"] == protocol) & run_table["backbone"].isin(backs)].reset_index(
        drop=True
    )
    spec = headline_spec(s0_ids)
    p = prepare(sub)
    stats = spec.stats(p) if len(p) else pd.DataFrame(index=p.index)
    cols = [c for c in stats.columns if c.startswith(prefix)]
    vals = stats[cols].to_numpy(float) if cols else np.zeros((len(sub), 0))
    names = np.array([c[len(prefix) :] for c in cols], dtype=object)
    contrib = vals > 0
    keep = contrib.any(axis=1)
    counts_as = ["; ".join(names[row]) for row in contrib]
    if prefix in PAIRED_PREFIXES and len(
        sub
    ):  # S1 PJC reads each swap's GOOD base row without a statistic of its own
        swap = keep & p["is_swap"].to_numpy(bool)
        run = ["backbone", *(["repeat"] if "repeat" in sub else [])]
        bases = set(map(tuple, sub.loc[swap, run].assign(b=p.loc[swap, "base_id"]).to_numpy(object).tolist()))
        key = sub[run].assign(b=sub["record_id"].astype(str)).to_numpy(object).tolist()
        base = p["is_good"].to_numpy(bool) & np.array([tuple(k) in bases for k in key], dtype=bool)
        for i in np.flatnonzero(base):
            counts_as[i] = "; ".join(x for x in (counts_as[i], "paired GOOD base") if x)
        keep = keep | base
    credit = np.array([not str(n).split(":")[-1].startswith("n") for n in names], dtype=bool)
    hit = (contrib & credit).any(axis=1) if len(names) else np.zeros(len(sub), bool)
    out = sub.assign(counts_as=counts_as, hit=hit, verdict_correct=_verdict_correct(p))[keep].reset_index(
        drop=True
    )
    needs = spec.targets.get(TABLES[table][column], frozenset())
    out.attrs.update(table=table, column=column, protocol=protocol, backbone=backbone, statistics=prefix,
                     supported=bool(needs <= native_targets_of(protocol, native_targets)))  # fmt: skip
    return out


def _verdict_correct(p: pd.DataFrame) -> np.ndarray:
    label = p["label"].astype("string").str.upper().fillna("").to_numpy(object)
    return np.where(label == "BAD", p["v_bad"].to_numpy(bool), p["v_good"].to_numpy(bool) & (label == "GOOD"))


def headline_values(run_table: pd.DataFrame, table: str = "tab3", *, s0_ids: Iterable[str] | None = None,
                    mean_backbones: Sequence[str] | None = None,
                    native_targets: Mapping | None = None) -> pd.DataFrame:  # fmt: skip
    """Point estimates of ``table``: one row per (protocol, backbone) plus a ``mean`` row per protocol,
    one column per headline column; NaN where the cell prints "–" (unsupported or undefined)."""
    cols = TABLES[table]
    if run_table.empty:
        return pd.DataFrame(columns=list(cols))
    spec = headline_spec(s0_ids)
    spec = type(spec)(spec.name, spec.stats, spec.combine, spec.targets, tuple(cols.values()))
    v = evaluate(spec, run_table, ("protocol", "backbone"), native_targets)
    v = v.rename(columns={o: c for c, o in cols.items()})[list(cols)]
    rows = []
    for proto in pd.unique(v.index.get_level_values("protocol")):
        backs = _mean_backbones(run_table, proto, mean_backbones)
        block = v.xs(proto, level="protocol", drop_level=False)
        rows.append(block)
        m = block[block.index.get_level_values("backbone").isin(backs)]
        if len(m):
            with np.errstate(all="ignore"):
                mean = m.mean(axis=0, skipna=True)
            # a mean over backbones is "–" when any backbone's cell is "–" (as in headline_table)
            mean[m.isna().all(axis=0)] = np.nan
            rows.append(pd.DataFrame([mean.to_numpy()], columns=m.columns,
                                     index=pd.MultiIndex.from_tuples([(proto, MEAN)], names=["protocol", "backbone"])))  # fmt: skip
    return pd.concat(rows)


def filter_options(rows: pd.DataFrame, columns: Sequence[str] = FILTERS) -> dict[str, list]:
    """The distinct values of each filter column present in ``rows`` (sorted; missing values left out)."""
    out = {}
    for c in columns:
        if c in rows:
            vals = [
                v for v in pd.unique(rows[c]) if v is not None and not (isinstance(v, float) and np.isnan(v))
            ]
            out[c] = sorted(vals, key=lambda v: (str(type(v)), v))
    return out


def filter_rows(rows: pd.DataFrame, **filters: Any) -> pd.DataFrame:
    """Rows whose column equals the given value (or is one of the values, for a list/tuple/set); a
    filter of ``None`` or an empty list is ignored. ``gold_family`` and ``gold_location_group`` match
    a multi-defect record when any of its "+"-joined parts matches; ``correct`` filters on
    ``verdict_correct``."""
    mask = np.ones(len(rows), bool)
    for col, want in filters.items():
        if want is None or (isinstance(want, (list, tuple, set, frozenset)) and not want):
            continue
        wants = set(want) if isinstance(want, (list, tuple, set, frozenset)) else {want}
        if col == "correct":
            col = "verdict_correct"
        if col not in rows:
            raise KeyError(f"no column {col!r} to filter on (columns: {sorted(rows.columns)})")
        series = rows[col]
        if col in ("gold_family", "gold_location_group", "gold_location"):
            strs = {str(w) for w in wants}
            parts = series.astype("string").fillna("").str.split("+")
            mask &= np.array([bool(set(ps) & strs) for ps in parts], dtype=bool)
        else:
            mask &= series.isin(wants).to_numpy(bool)
    return rows[mask]


COMPARE = {"verdict": "verdict", "family": "defect_family", "location": "defect_location"}


def disagreements(run_table: pd.DataFrame, judge_a: tuple[str, str], judge_b: tuple[str, str],
                  on: str | Sequence[str] = "verdict", repeat: int = 0) -> pd.DataFrame:  # fmt: skip
    """Records where two judge runs ``(protocol, backbone)`` disagree.

    ``on``: ``verdict``, ``family``, ``location`` or several of them (disagreeing on any); a failed
    row (status not ok or not parsed) counts as the answer ``<FAILED>``. One row per record both runs
    judged (repeat ``repeat``), with the gold fields and each run's verdict, family, location and
    whether its verdict is correct; ``attrs["n_both"]`` is the number of records both judged."""
    keys = [on] if isinstance(on, str) else list(on)
    if bad := [k for k in keys if k not in COMPARE]:
        raise ValueError(f"on must name {list(COMPARE)}, got {bad}")
    gold = ["record_id", "label", "kind", "tier", "gold_family", "gold_location", "swap_axis", "split"]
    sides = []
    for tag, (proto, back) in (("a", judge_a), ("b", judge_b)):
        sel = run_table[(run_table["protocol"] == proto) & (run_table["backbone"] == back)]
        if "repeat" in sel:
            sel = sel[sel["repeat"] == repeat]
        p = prepare(sel.reset_index(drop=True))
        s = sel.reset_index(drop=True)[[c for c in gold if c in sel]].copy()
        failed = ~p["ok"].to_numpy(bool)
        for k, col in COMPARE.items():
            s[f"{k}_{tag}"] = np.where(
                failed, "<FAILED>", sel[col].astype("string").fillna("").to_numpy(object)
            )
        s[f"correct_{tag}"] = _verdict_correct(p)
        sides.append(s)
    a, b = sides
    both = a.merge(b[["record_id", *[c for c in b if c.endswith("_b")]]], on="record_id")
    differ = np.zeros(len(both), bool)
    for k in keys:
        differ |= both[f"{k}_a"].to_numpy(object) != both[f"{k}_b"].to_numpy(object)
    out = both[differ].reset_index(drop=True)
    out.attrs.update(n_both=len(both), judge_a=judge_a, judge_b=judge_b, on=keys)
    return out


# ---- one record -----------------------------------------------------------------------------------------

JUDGE_FIELDS = ("verdict", "bad_prob", "overall_quality", "persona_alignment", "component_consistency",
                "evidence_grounding", "format_safety", "defect_family", "defect_location", "supporting_evidence_ids",
                "confidence")  # fmt: skip


def judge_vs_gold(row: Mapping) -> pd.DataFrame:
    """The judge's parsed fields beside the gold ones (one row per field; "–" where a side has none)."""

    def show(v):
        if v is None or (not isinstance(v, (str, list, tuple, dict, np.ndarray)) and bool(pd.isna(v))):
            return "–"  # None, NaN, <NA>, NaT
        if isinstance(v, (list, tuple, np.ndarray)):
            return ", ".join(map(str, v)) or "–"
        return str(v)

    gold = {"verdict": row.get("label"), "defect_family": row.get("gold_family"),
            "defect_location": row.get("gold_location"), "supporting_evidence_ids": row.get("used_evidence_ids")}  # fmt: skip
    return pd.DataFrame(
        [{"field": f, "judge": show(row.get(f)), "gold": show(gold.get(f))} for f in JUDGE_FIELDS]
    ).set_index("field")


def record_html(record) -> str:
    """The record's response as the assistant shows it, with the shopper's query and profile, and the
    evidence pool (cited snippets marked), as HTML (escaped; the annotation UI's renderer)."""
    from ..annotate.pairs import _paceshop_view, _persona_reference
    from ..annotate.render import esc, render_paceshop, render_reference

    cited = set(record.response.attribution_list)
    pool = "".join(
        f"<li{' class=sb-cited' if s.evidence_id in cited else ''}><code>{esc(s.evidence_id)}</code> "
        f"[{esc(s.source_field)}] <b>{esc(s.title)}</b> ({esc(s.brand)}): {esc(s.snippet)}"
        f"{' <i>(cited)</i>' if s.evidence_id in cited else ''}</li>"
        for s in record.evidence
    )
    return (
        f"<div class='sb-record'>{render_paceshop(_paceshop_view(record))}"
        f"<details class='sb-ref'><summary>Shopper profile</summary>{render_reference(_persona_reference(record))}</details>"
        f"<details class='sb-ref'><summary>Evidence pool ({len(record.evidence)} snippets, "
        f"{len(cited)} cited)</summary><ul>{pool}</ul></details></div>"
    )


def export_pairs(
    records: Mapping[str, Any], record_ids: Iterable[str], path: str | Path, seed: int = 0
) -> tuple[Path, int]:
    """Write the selection as a pair set for the annotation UI (:func:`shopbench.annotate.read_pairs`).

    Each selected BAD record is paired with its GOOD base (same query and persona); a selected GOOD
    record brings all its BAD siblings; persona swaps have no same-persona sibling and are left out.
    Returns ``(path, number of pairs)``; serve exactly these pairs to annotators with
    ``make annotate ANNOTATE_ARGS="--pairs PATH"`` (:func:`shopbench.annotate.read_pair_set`), or
    annotate them in any notebook with ``shopbench.annotate.annotate(read_pairs(path), "alice", store_dir)``."""
    from ..annotate.pairs import PairImportError, pairs_from_paceshop, write_pairs

    ids = set(record_ids)
    chosen = {}
    for rid in ids:
        r = records.get(rid)
        if r is None:
            raise KeyError(f"record {rid!r} is not in the PACEShop build")
        if r.kind == "bad" and r.base_record_id in records:
            chosen[rid] = r
            chosen[r.base_record_id] = records[r.base_record_id]
        elif r.kind == "good":
            chosen[rid] = r
            for s in records.values():
                if s.kind == "bad" and s.base_record_id == rid:
                    chosen[s.record_id] = s
    if not any(r.kind == "bad" for r in chosen.values()):
        raise PairImportError(
            "the selection holds no BAD record with a GOOD base (persona swaps are not paired)"
        )
    pairs = pairs_from_paceshop(list(chosen.values()), seed=seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_pairs(path, pairs)
    return path, len(pairs)


__all__ = ["TABLES", "MEAN", "FILTERS", "SHOW", "stats_prefix", "cell_rows", "headline_values", "filter_options",
           "filter_rows", "disagreements", "judge_vs_gold", "record_html", "export_pairs"]  # fmt: skip
