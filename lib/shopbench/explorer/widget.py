"""The explorer's widgets (ipywidgets): thin controls over :mod:`.pace`, :mod:`.shop` and :mod:`.padme`.

``explore(profile)`` returns an :class:`Explorer`; displayed in a notebook it shows three tabs —
PACEShop (table → cell → records → one record; filters; two-judge disagreements; export as pairs),
Shop trials (one trial turn by turn) and PADMÉ pairs (both sides, votes, evaluator scores). Every
control carries a CSS class ``sb-x-<name>`` (the browser test finds them by it). All selection
logic is in the pure modules; this file only wires controls to them.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..report.artifacts import MISSING
from . import pace as PC
from . import padme as PX
from . import shop as SX
from .results import MissingResults, Results, open_results

ALL = "(all)"
STYLE = """<style>
.sb-x table {border-collapse: collapse; font-size: 12px}
.sb-x th, .sb-x td {border: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top}
.sb-x td.sb-sel {background: #ffe08a; font-weight: bold}
.sb-x .sb-cited {background: #eef6ff}
.sb-x .sb-note {color: #555; font-style: italic}
.sb-x pre {white-space: pre-wrap; max-height: 24em; overflow: auto; background: #f7f7f7; padding: 4px}
.sb-x .sb-flags {color: #a40000}
</style>"""


def _w():
    import ipywidgets as w

    return w


def _cls(widget, name: str):
    widget.add_class(f"sb-x-{name}")
    return widget


def is_missing(v) -> bool:
    """None, NaN, ``pd.NA`` or ``NaT`` (a string, list or array is a value, even when empty)."""
    if v is None:
        return True
    if isinstance(v, (str, bytes, list, tuple, dict, set)) or hasattr(v, "__len__"):
        return False
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def for_display(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as the explorer shows it: every missing value (None, NaN, ``<NA>``, NaT), in the
    body and the index, as the project's one missing-value mark "–" (:data:`MISSING`); other values
    unchanged. Use it to ``display`` an explorer table in a notebook."""
    out = df.astype(object).map(lambda v: MISSING if is_missing(v) else v)
    if isinstance(out.index, pd.MultiIndex):
        out.index = pd.MultiIndex.from_tuples(
            [tuple(MISSING if is_missing(x) else x for x in t) for t in out.index], names=out.index.names
        )
    else:
        out.index = pd.Index([MISSING if is_missing(x) else x for x in out.index], name=out.index.name)
    return out


def _table(df: pd.DataFrame, max_rows: int = 200, index: bool = True) -> str:
    if df is None or len(df) == 0:
        return "<p class='sb-note'>(nothing)</p>"
    more = f"<p class='sb-note'>first {max_rows} of {len(df)} rows</p>" if len(df) > max_rows else ""
    shown = for_display(df.head(max_rows))  # one number format: floats with 3 decimals (as the paper index)
    return shown.to_html(index=index, escape=True, border=0, float_format=lambda v: f"{v:.3f}") + more


def _fmt(v: float) -> str:
    return MISSING if is_missing(v) else f"{v:.2f}"


def _s(v, empty: str = MISSING) -> str:
    """A value for a one-line label: ``empty`` for None, NaN, ``<NA>``, NaT or ""."""
    return empty if is_missing(v) or v == "" else str(v)


def _missing(e: MissingResults) -> str:
    return f"<p class='sb-note'>{html.escape(str(e))}</p>"


class PacePanel:
    """Table → cell → rows → record, with filters, disagreements and export."""

    def __init__(self, results: Results, mean_backbones: Sequence[str] | None = None, max_rows: int = 300):
        w = _w()
        self.r, self.max_rows = results, max_rows
        self.rt = results.run_table
        self.s0 = results.subsets.get("s0_reference") if results.available()["subsets"] else None
        self.mean_backbones = mean_backbones
        self.rows = self.rt.iloc[0:0]
        self.view = self.rows
        protos = sorted(self.rt["protocol"].unique())
        self.table = _cls(
            w.Dropdown(options=[(PC.TABLE_TITLES[t], t) for t in PC.TABLES], description="table"), "table"
        )
        self.protocol = _cls(w.Dropdown(options=protos, description="protocol"), "protocol")
        self.backbone = _cls(w.Dropdown(description="backbone"), "backbone")
        self.column = _cls(w.Dropdown(description="metric"), "column")
        self.grid = _cls(w.HTML(), "grid")
        self.status = _cls(w.HTML(), "status")
        self.filters = {c: _cls(w.Dropdown(description=c.replace("gold_location_group", "location")
                                           .replace("gold_family", "family").replace("swap_axis", "axis")
                                           .replace("verdict_correct", "correct"), options=[ALL]), f"filter-{c}")
                        for c in ("split", "label", "tier", "gold_family", "gold_location_group", "swap_axis", "backbone",
                                  "verdict_correct")}  # fmt: skip
        for d in (self.protocol, self.backbone, self.column, *self.filters.values()):
            d.layout = w.Layout(width="auto")
            d.style = {"description_width": "initial"}
        self.records = _cls(w.Select(rows=12, layout=w.Layout(width="100%")), "records")
        self.detail = _cls(w.HTML(), "detail")
        # two judges
        runs = sorted(
            {
                f"{p} / {b}"
                for p, b in self.rt[["protocol", "backbone"]].drop_duplicates().itertuples(index=False)
            }
        )
        self.judge_a = _cls(w.Dropdown(options=runs, description="judge A"), "judge-a")
        self.judge_b = _cls(
            w.Dropdown(options=runs, value=runs[1] if len(runs) > 1 else None, description="judge B"),
            "judge-b",
        )
        self.on = _cls(w.Dropdown(options=list(PC.COMPARE), description="on"), "on")
        self.disagree_btn = _cls(w.Button(description="Where do A and B disagree?"), "disagree")
        self.disagree_out = _cls(w.HTML(), "disagreements")
        self.export_path = _cls(w.Text(value=str(results.root / "annotations" / "pairsets" / "selection.jsonl"),
                                       description="pairs file", layout=w.Layout(width="70%")), "export-path")  # fmt: skip
        self.export_btn = _cls(w.Button(description="Export selection as pairs"), "export")
        self.export_msg = _cls(w.HTML(), "export-msg")

        self._busy = False
        self.table.observe(self._unless_busy(self._cell_changed), "value")
        self.protocol.observe(self._unless_busy(self._protocol_changed), "value")
        self.backbone.observe(self._unless_busy(self._cell_changed), "value")
        self.column.observe(self._unless_busy(self._cell_changed), "value")
        for d in self.filters.values():
            d.observe(self._unless_busy(self._apply_filters), "value")
        self.records.observe(lambda _: self._show_record(), "value")
        self.disagree_btn.on_click(lambda _: self._disagree())
        self.export_btn.on_click(lambda _: self._export())

        fbox = w.HBox(list(self.filters.values()), layout=w.Layout(flex_flow="row wrap"))
        self.ui = w.VBox([
            w.HTML("<b>Pick a cell</b> (the grid shows point estimates; the paper table adds bootstrap CIs)"),
            w.HBox([self.table, self.protocol, self.backbone, self.column]), self.grid,
            w.HTML("<b>The records behind the cell</b>"), self.status, fbox, self.records, self.detail,
            w.HTML("<b>Where do two judges disagree?</b>"), w.HBox([self.judge_a, self.judge_b, self.on, self.disagree_btn]),
            self.disagree_out, w.HBox([self.export_path, self.export_btn]), self.export_msg,
        ])  # fmt: skip
        self._protocol_changed()

    # ---- cell ----------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _quiet(self):
        """Set options and values from code without each change recomputing the view."""
        was, self._busy = self._busy, True
        try:
            yield
        finally:
            self._busy = was

    def _unless_busy(self, fn):
        return lambda _change: None if self._busy else fn()

    def _protocol_changed(self) -> None:
        backs = [
            b for b in sorted(self.rt.loc[self.rt["protocol"] == self.protocol.value, "backbone"].unique())
        ]
        with self._quiet():
            self.backbone.options = [PC.MEAN, *backs]
            self.backbone.value = backs[0] if backs else PC.MEAN
        self._cell_changed()

    def select(self, table: str = "tab3", protocol: str | None = None, backbone: str | None = None,
               column: str | None = None) -> pd.DataFrame:  # fmt: skip
        """Pick a cell from code (what the dropdowns do); returns the rows behind it."""
        self.table.value = table
        if protocol is not None:
            self.protocol.value = protocol
        if backbone is not None:
            self.backbone.value = backbone
        if column is not None:
            self.column.value = column
        return self.view

    def _cell_changed(self) -> None:
        cols = list(PC.TABLES[self.table.value])
        if list(self.column.options) != cols:
            keep = self.column.value if self.column.value in cols else cols[0]
            with self._quiet():
                self.column.options = cols
                self.column.value = keep
        if self.backbone.value is None:
            return
        self.rows = PC.cell_rows(self.rt, self.column.value, self.protocol.value, self.backbone.value,
                                 table=self.table.value, s0_ids=self.s0, mean_backbones=self.mean_backbones)  # fmt: skip
        opts = PC.filter_options(self.rows, list(self.filters))
        for c, d in self.filters.items():
            with self._quiet():
                d.options = [ALL, *[str(v) for v in opts.get(c, [])]]
                d.value = ALL
        self._grid()
        self._apply_filters()

    def _grid(self) -> None:
        vals = PC.headline_values(self.rt[self.rt["protocol"] == self.protocol.value], self.table.value, s0_ids=self.s0,
                                  mean_backbones=self.mean_backbones)  # fmt: skip
        head = "".join(f"<th>{html.escape(c)}</th>" for c in vals.columns)
        body = []
        for (proto, back), row in vals.iterrows():
            cells = "".join(
                f"<td class='{'sb-sel' if (back == self.backbone.value and c == self.column.value) else ''}'>{_fmt(v)}</td>"
                for c, v in row.items()
            )
            body.append(
                f"<tr><th>{html.escape(str(proto))}</th><th>{html.escape(str(back))}</th>{cells}</tr>"
            )
        self.grid.value = f"<div class='sb-x'><table><tr><th>protocol</th><th>backbone</th>{head}</tr>{''.join(body)}</table></div>"

    # ---- rows ----------------------------------------------------------------------------------------
    def _apply_filters(self) -> None:
        want = {}
        for c, d in self.filters.items():
            if d.value != ALL:
                match = [v for v in PC.filter_options(self.rows, [c]).get(c, []) if str(v) == d.value]
                want[c] = match
        self.view = PC.filter_rows(self.rows, **want)
        a = self.rows.attrs
        note = (
            ""
            if a.get("supported", True)
            else " · this protocol does not cover the column's PACE target: the cell prints “–”"
        )
        hits = int(self.view["hit"].sum()) if len(self.view) else 0
        self.status.value = (f"<span class='sb-x-count'>{len(self.view)} of {len(self.rows)} rows</span> behind "
                             f"<b>{html.escape(str(a.get('column')))}</b> · {html.escape(str(a.get('protocol')))} / "
                             f"{html.escape(str(a.get('backbone')))} · {hits} earn the column's credit{note}")  # fmt: skip
        opts = []
        for i, r in enumerate(self.view.head(self.max_rows).itertuples(index=False)):
            mark = "✓" if r.verdict_correct else "✗"
            opts.append((f"{mark} {r.record_id} · {r.backbone} · {_s(r.label)}/{_s(r.kind)} t{_s(r.tier)} · gold {_s(r.gold_family)} @ "
                         f"{_s(r.gold_location)} · judged {_s(r.verdict, 'FAILED')} {_s(r.defect_family, '')} @ "
                         f"{_s(r.defect_location, '')} · counts as {r.counts_as}", i))  # fmt: skip
        self.records.options = opts
        self.records.value = 0 if opts else None
        if opts:
            self._show_record()  # the value may have been 0 before: no change event
        else:
            self.detail.value = "<p class='sb-note'>no rows</p>"

    def _show_record(self) -> None:
        i = self.records.value
        if i is None or i >= len(self.view):
            return
        self.detail.value = self.record_html(self.view.iloc[i])

    def record_html(self, row: pd.Series) -> str:
        """One row's record: the response as shown, persona and evidence, beside the judge's parsed
        output, rationale and raw output, and the gold."""
        rec = self.r.records.get(row["record_id"]) if self.r.available()["records"] else None
        gold = (f"label <b>{html.escape(_s(row['label']))}</b> · kind {html.escape(_s(row['kind']))} · tier {_s(row['tier'])} · "
                f"gold family <b>{html.escape(_s(row['gold_family']))}</b> · location "
                f"<b>{html.escape(_s(row['gold_location']))}</b> · swap axis {html.escape(_s(row['swap_axis']))}"
                f" · split {html.escape(_s(row['split']))}")  # fmt: skip
        judge = PC.judge_vs_gold(row.to_dict()).to_html(escape=True, border=0)
        err = row.get("parse_error") or row.get("error")
        left = PC.record_html(rec) if rec is not None else "<p class='sb-note'>record not in the build</p>"
        right = (f"<h4>Judge {html.escape(str(row['protocol']))} / {html.escape(str(row['backbone']))}"
                 f" (repeat {_s(row.get('repeat', 0))})</h4>{judge}"
                 + (f"<p class='sb-flags'>parse failure: {html.escape(str(err))}</p>" if not row.get("parse_ok", True) else "")
                 + f"<h4>Rationale</h4><pre>{html.escape(_s(row.get('rationale')))}</pre>"
                 f"<h4>Raw output</h4><pre>{html.escape(_s(row.get('raw_output')))}</pre>")  # fmt: skip
        return (f"<div class='sb-x sb-x-record'><h3>{html.escape(str(row['record_id']))}</h3><p>{gold}</p>"
                f"<div style='display:flex;gap:1.5em'><div style='flex:1;min-width:0'>{left}</div>"
                f"<div style='flex:1;min-width:0'>{right}</div></div></div>")  # fmt: skip

    # ---- two judges, export --------------------------------------------------------------------------
    def _disagree(self) -> None:
        a = tuple(self.judge_a.value.split(" / ", 1))
        b = tuple(self.judge_b.value.split(" / ", 1))
        d = PC.disagreements(self.rt, a, b, on=self.on.value)  # type: ignore[arg-type]
        self.disagree_out.value = (f"<div class='sb-x'><p>{len(d)} of {d.attrs['n_both']} records both judged differ on "
                                   f"{self.on.value}</p>{_table(d, self.max_rows, index=False)}</div>")  # fmt: skip

    def _export(self) -> None:
        try:
            path, n = PC.export_pairs(self.r.records, self.view["record_id"].unique(), self.export_path.value)
            cmd = f'make annotate ANNOTATE_ARGS="--pairs {path}"'
            self.export_msg.value = (f"wrote {n} pairs to <code>{html.escape(str(path))}</code> — serve them to annotators "
                                     f"with <code>{html.escape(cmd)}</code>, or in a notebook: <code>shopbench.annotate."
                                     f"annotate(shopbench.annotate.read_pairs(path), 'alice', store_dir)</code>")  # fmt: skip
        except Exception as e:  # shown, not raised: a click has no traceback to read
            self.export_msg.value = f"<span class='sb-flags'>not exported: {html.escape(str(e))}</span>"


class ShopPanel:
    def __init__(self, results: Results):
        w = _w()
        self.trials = results.trials
        self.scores = results.shop_scores if results.available()["shop_scores"] else None
        self.index = SX.trial_index(self.trials, self.scores)
        agents = sorted(self.index["agent"].unique()) if len(self.index) else []
        self.agent = _cls(w.Dropdown(options=[ALL, *agents], description="agent"), "agent")
        self.trial = _cls(w.Dropdown(description="trial", layout=w.Layout(width="60%")), "trial")
        self.out = _cls(w.HTML(), "trial-view")
        self.agent.observe(lambda _: self._agent(), "value")
        self.trial.observe(lambda _: self._show(), "value")
        self.ui = w.VBox([w.HBox([self.agent, self.trial]), self.out])
        self._agent()

    def _agent(self) -> None:
        idx = self.index if self.agent.value == ALL else self.index[self.index["agent"] == self.agent.value]
        self.trial.options = [(f"{r.agent} · {r.trial_id} · {_s(r.style)} · {r.turns} turns · {_s(r.termination)}", i)
                              for i, r in idx.iterrows()]  # fmt: skip
        self.trial.value = self.trial.options[0][1] if self.trial.options else None
        self._show()

    def _show(self) -> None:
        if self.trial.value is None:
            self.out.value = "<p class='sb-note'>no trials</p>"
            return
        t = self.trials[self.trial.value]
        steps = SX.trial_steps(t)
        sched = SX.reveal_schedule(t)
        metrics = SX.trial_metrics(self.scores, t) if self.scores is not None else pd.Series(dtype=object)
        rules = "".join(f"<li><b>{k}</b>: {html.escape(v)}</li>" for k, v in SX.FLAG_RULES.items())
        self.out.value = (
            f"<div class='sb-x'><h3>{html.escape(t.trial_id)} · {html.escape(t.agent)}</h3>"
            f"<p>{_s(t.scenario.kind)}, tier {_s(t.scenario.tier)}, difficulty {_s(t.scenario.difficulty)}, reveal "
            f"<b>{_s(t.scenario.style)}</b>, max turns {_s(t.scenario.max_turns)}; ended <b>{html.escape(t.termination)}</b>; final cart "
            f"{html.escape(SX._cart_text(t.final_cart))}</p><h4>Reveal schedule</h4>{_table(sched, index=False)}"
            f"<h4>Turn by turn</h4>{_table(steps, 500, index=False)}"
            f"<details><summary>what the flags mean</summary><ul>{rules}</ul></details>"
            f"<details><summary>the battery's metrics for this trial ({len(metrics)})</summary>"
            f"{_table(metrics.rename('value').to_frame(), 100)}</details></div>"
        )  # fmt: skip


class PadmePanel:
    def __init__(self, results: Results):
        w = _w()
        self.pairs = results.padme_pairs
        self.scores = results.evaluator_scores if results.available()["evaluator_scores"] else None
        self.index = PX.pairs_index(self.pairs)
        self.kept = _cls(w.Dropdown(options=[ALL, "kept", "rejected"], description="filter"), "kept")
        self.pair = _cls(w.Dropdown(description="pair", layout=w.Layout(width="70%")), "pair")
        self.out = _cls(w.HTML(), "pair-view")
        self.kept.observe(lambda _: self._filter(), "value")
        self.pair.observe(lambda _: self._show(), "value")
        self.ui = w.VBox([w.HBox([self.kept, self.pair]), self.out])
        self._filter()

    def _filter(self) -> None:
        idx = self.index
        if self.kept.value != ALL:
            idx = idx[idx["kept"] == (self.kept.value == "kept")]
        self.pair.options = [(f"{r.pair_id} · {_s(r.criterion)} · {_s(r.contrast)} · {_s(r.domain)} · {_s(r.filter_outcome)}", i)
                             for i, r in idx.iterrows()]  # fmt: skip
        self.pair.value = self.pair.options[0][1] if self.pair.options else None
        self._show()

    def _show(self) -> None:
        if self.pair.value is None:
            self.out.value = "<p class='sb-note'>no pairs</p>"
            return
        p = self.pairs[self.pair.value]
        summ = PX.pair_summary(p)
        a = summ.attrs
        self.out.value = (
            f"<div class='sb-x'><h3>{html.escape(p.pair_id)}</h3><p>criterion <b>{html.escape(p.criterion)}</b> · contrast "
            f"{html.escape(_s(p.contrast))} · {html.escape(_s(p.domain))} · attempt {_s(a['attempt'])} · depth {_s(a['depth'])} · "
            f"<b>{html.escape(_s(a['filter_outcome']))}</b></p>{_table(summ.drop(columns=['steering']))}"
            f"<h4>Filter votes (slot order per judge)</h4>{_table(PX.votes_table(p), index=False)}"
            f"<h4>Evaluator scores</h4>{_table(PX.evaluator_table(p, self.scores), index=False)}"
            f"<h4>The two trajectories</h4>{PX.pair_html(p)}</div>"
        )  # fmt: skip


class Explorer:
    """The three panels in tabs; display it in a notebook (``explore(profile)`` as a cell's last line)."""

    def __init__(self, results: Results, mean_backbones: Sequence[str] | None = None):
        w = _w()
        self.results = results
        self.pace: Any = None
        self.shop: Any = None
        self.padme: Any = None
        kids, titles = [], []
        for name, make in (("pace", lambda: PacePanel(results, mean_backbones)), ("shop", lambda: ShopPanel(results)),
                           ("padme", lambda: PadmePanel(results))):  # fmt: skip
            try:
                panel = make()
                setattr(self, name, panel)
                kids.append(panel.ui)
            except MissingResults as e:
                kids.append(w.HTML(_missing(e)))
            titles.append({"pace": "PACEShop judges", "shop": "Shop trials", "padme": "PADMÉ pairs"}[name])
        self.tabs = _cls(w.Tab(children=kids, titles=titles), "tabs")
        self.ui = _cls(w.VBox([w.HTML(STYLE + f"<b>Results explorer</b> · profile <code>{html.escape(results.profile)}</code> · "
                                      f"<code>{html.escape(str(results.root))}</code>"), self.tabs]), "root")  # fmt: skip

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.ui)


def explore(profile: str | Path | Results = "smoke", mean_backbones: Sequence[str] | None = None) -> Explorer:
    """The results explorer of a profile (a name, an ``outputs/<profile>`` folder, or :class:`Results`).

    One line in any notebook: ``shopbench.explore("smoke")``. It reads what the pipeline wrote and
    never calls a model; a part the profile has not produced yet shows which notebook makes it."""
    results = profile if isinstance(profile, Results) else open_results(profile)
    return Explorer(results, mean_backbones)


__all__ = ["Explorer", "PacePanel", "ShopPanel", "PadmePanel", "explore", "for_display", "is_missing"]
