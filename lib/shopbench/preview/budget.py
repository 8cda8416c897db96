"""The budget in the preview (issue 29, item 5): for each comparison a profile plans, the tasks ×
repeats it needs to detect a given difference (default 5 points), beside what it plans.

One row per comparison of two subjects on the same tasks (paired: same tasks, same seeds):

- notebook 80: the shop LLM agents (one row each) and the scripted agents, on exact-cart success and
  goal progress, over the sweep's trials (1 play each);
- notebook 20: the PACE LLM judges (runs with the same planned records share a row) and the reference
  judges, on accuracy, over the judged records × ``judging.repeats``;
- notebook 50: the PADMÉ LLM evaluators and the heuristic evaluators, on pair accuracy, over the pairs
  × runs.

Formulas (:mod:`shopbench.stats.power`, Miller arXiv 2411.00640 §5), with one subject's between-task
variance ω² and within-task variance σ², the difference of two subjects taken as ``2ω² + 2σ²/R`` (no
credit for the correlation a paired design brings; that credit only shrinks the need):
``MDE = (z_{1-α/2} + z_{1-β})·sqrt((2ω² + 2σ²/R)/T)``, tasks needed at the planned ``R``
(:func:`~shopbench.stats.power.tasks_needed`), repeats needed at the planned ``T``
(:func:`~shopbench.stats.power.repeats_needed`, "not reachable by repeats alone" when ``2ω²`` alone
exceeds ``T·δ²/(z+z)²``).

Where ω² and σ² come from, first found first (each row says which):

1. **measured** — the profile's last run, else the ``paper`` profile's: ``outputs/<profile>/paper/tables/``
   ``shop_noise_floor.csv`` (notebook 80's noise floor: ``share_task × var_total`` and the rest; when
   ``var_total`` is absent, the shares × ``m(1−m)``, the largest variance an outcome in [0, 1] with mean
   ``m`` can have) and ``padme_tab3_evaluators.csv`` (evaluators scored ≥ 2 runs with
   ``evidence = measured``: ``σ² = n_pairs · accuracy_sd²``, ``ω² = p(1−p) − σ²``). A measured outcome
   that never varied (a tiny model that never reaches the cart) says nothing about a 5-point difference
   and falls through;
2. **the paper's** values: PADMÉ (seed 003) Table 18, accuracy ± SD over 3 runs of 25 evaluators on
   1,000 pairs (the median evaluator, as above); for agent tasks' success, **real data**: τ-bench's
   gpt-4o airline trials (``../shared/data/tau_bench_airline_trajectories``, 50 tasks × 4 trials, success
   = reward 1) split by :func:`shopbench.stats.one_way_components`;
3. otherwise an **assumption**: the per-trial variance is at most ``p(1−p) = 0.25`` (``p = 0.5``), all of
   it taken as between-task (the worst case: repeats cannot shrink it).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError

DEFAULT_DETECT = 0.05
TAU_AIRLINE = Path("../shared/data/tau_bench_airline_trajectories/gpt-4o-airline.json")
# seed 003 (PADMÉ) Table 18: accuracy (%) ± SD over n = 3 runs of all 25 evaluators on 1,000 pairs
PADME_TAB18 = ((85.1, 0.93), (83.8, 0.72), (83.6, 0.12), (81.7, 0.49), (81.6, 0.64), (81.5, 0.50), (80.5, 0.40),
               (79.4, 1.16), (79.4, 0.79), (78.7, 0.40), (78.7, 0.10), (78.0, 0.36), (76.8, 0.76), (70.0, 0.55),
               (69.5, 0.45), (68.7, 1.01), (68.1, 0.15), (67.0, 0.67), (64.8, 0.40), (62.4, 0.93), (56.1, 0.68),
               (55.6, 1.56), (43.1, 0.47), (42.8, 0.35), (36.8, 0.65))  # fmt: skip
PADME_TAB18_PAIRS = 1000
BOUND_P = 0.5
OUTCOME_NAMES = {"success": "exact cart", "goal_progress": "goal progress", "accuracy": "accuracy",
                 "pair_accuracy": "pair accuracy"}  # fmt: skip


@dataclass(frozen=True)
class Variances:
    """One subject's between-task ω² and within-task σ², with where they come from: ``source`` is
    ``measured``, ``paper``, ``real data`` or ``assumption``; ``detail`` says which file, rows or table."""

    task_var: float
    within_var: float
    source: str
    detail: str


def bound() -> Variances:
    v = BOUND_P * (1 - BOUND_P)
    return Variances(v, 0.0, "assumption", f"Bernoulli bound: per-trial variance ≤ p(1−p) = {v:g} at p = {BOUND_P:g}, "
                     "all of it between tasks (the worst case; repeats cannot shrink it)")  # fmt: skip


# ---- the paper's and real data ----------------------------------------------------------------------
def padme_paper() -> Variances:
    """The median of PADMÉ Table 18's 25 evaluators: ``σ² = 1000 · SD²`` (the run-to-run variance of an
    accuracy over 1,000 pairs is σ²/1000), ``ω² = p(1−p) − σ²``."""
    within = [PADME_TAB18_PAIRS * (sd / 100) ** 2 for _, sd in PADME_TAB18]
    between = [max(0.0, a / 100 * (1 - a / 100) - w) for (a, _), w in zip(PADME_TAB18, within, strict=True)]
    return Variances(statistics.median(between), statistics.median(within), "paper",
                     "PADMÉ (seed 003) Table 18: accuracy ± SD over 3 runs of 25 evaluators on 1,000 pairs; median "
                     "evaluator, σ² = 1000·SD², ω² = p(1−p) − σ²")  # fmt: skip


@lru_cache(maxsize=4)
def tau_airline(path: str) -> Variances | None:
    """τ-bench's recorded gpt-4o airline trials (50 tasks × 4): between- and within-task variance of
    success (reward 1) by :func:`shopbench.stats.one_way_components`; ``None`` when the file is absent or
    unreadable (the next source is used)."""
    from ..stats import one_way_components

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        f = pd.DataFrame([{"task": d["task_id"], "ok": float(float(d["reward"]) == 1.0)} for d in data])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if f.empty or f["task"].nunique() < 2:
        return None
    c = one_way_components(f["ok"], f["task"])
    return Variances(c["between"], c["within"], "real data",
                     f"τ-bench gpt-4o airline trials ({c['n_groups']} tasks × {c['mean_per_group']:g}, success = "
                     f"reward 1; {TAU_AIRLINE.parent.name}), one-way ANOVA by task")  # fmt: skip


# ---- measured: the tables of a run -------------------------------------------------------------------
def read_table(path: Path, columns: set[str]) -> pd.DataFrame:
    """A saved table (CSV) with at least ``columns``; a corrupted one is one :class:`InputError`."""
    fix = "rerun the notebook that writes it, or delete the file (the preview then uses the next source)"
    try:
        df = pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError, UnicodeDecodeError) as e:
        raise InputError(f"unreadable table ({type(e).__name__}: {str(e).splitlines()[0][:120]})", file=path,
                         fix=fix) from None  # fmt: skip
    missing = sorted(columns - set(df.columns))
    if missing:
        raise InputError(f"not a variance table: column(s) {', '.join(missing)} missing", file=path,
                         field=missing[0], fix=fix)  # fmt: skip
    return df


def _numbers(df: pd.DataFrame, path: Path, cols: list[str], lo: float = 0.0, hi: float | None = None) -> None:
    for c in cols:
        v = pd.to_numeric(df[c], errors="coerce")
        bad = df.index[(v.isna() & df[c].notna()) | (v < lo) | ((v > hi) if hi is not None else False)]
        if len(bad):
            i = int(bad[0])
            raw = df[c].iloc[i]
            raw = raw.item() if hasattr(raw, "item") else raw
            rng = f"in [{lo:g}, {hi:g}]" if hi is not None else f"≥ {lo:g}"
            raise InputError(f"{c} = {raw!r} is not a number {rng}", file=path, where=f"row {i + 2}", field=c,
                             fix="rerun the notebook that writes it, or delete the file")  # fmt: skip
        df[c] = v


def shop_measured(path: Path, kind: str, outcome: str) -> tuple[Variances | None, str]:
    """ω², σ² of ``outcome`` for the agents of ``kind`` (``llm`` or ``scripted``) in a
    ``shop_noise_floor`` table: the mean over its agents (an agent whose outcome never varied counts 0);
    ``None`` and why when no agent's outcome varied."""
    df = read_table(path, {"agent", "kind", "outcome", "mean", "n_trials", "share_task"})
    _numbers(df, path, ["mean", "share_task", "n_trials"], 0.0, None)
    _numbers(df, path, ["share_task"], 0.0, 1.0)
    if "var_total" in df.columns:
        _numbers(df, path, ["var_total"], 0.0)
    rows = df[(df["kind"] == kind) & (df["outcome"] == outcome) & (df["n_trials"] > 0)]
    if rows.empty:
        return None, f"no {kind} agent's {outcome} in {path}"
    varied = rows["share_task"].notna()
    if not varied.any():
        return None, f"{path}: no {kind} agent's {outcome} varied (no information on a difference)"
    if "var_total" in rows.columns and rows.loc[varied, "var_total"].notna().all():
        total, how = rows["var_total"].where(varied, 0.0), "share × var_total"
    else:
        total, how = rows["mean"] * (1 - rows["mean"]), "share × m(1−m), the bound for an outcome in [0, 1]"
    share = rows["share_task"].fillna(0.0)
    task, within = float((share * total).mean()), float(((1 - share) * total.fillna(0.0)).mean())
    agents = ", ".join(sorted(rows["agent"].astype(str)))[:80]
    return Variances(task, within, "measured", f"{_rel(path)}: {kind} agents' {outcome}, mean of {len(rows)} ({agents}); "
                     f"{how}"), ""  # fmt: skip


def padme_measured(path: Path, evaluators: list[str]) -> tuple[Variances | None, str]:
    """ω², σ² of pair accuracy from ``padme_tab3_evaluators``: the mean over the ``evaluators`` measured on
    ≥ 2 runs (``σ² = n_pairs · accuracy_sd²``, ``ω² = p(1−p) − σ²``); ``None`` and why when none was."""
    df = read_table(path, {"evaluator", "n_pairs", "n_runs", "accuracy", "accuracy_sd"})
    _numbers(df, path, ["n_pairs", "n_runs", "accuracy_sd"], 0.0)
    _numbers(df, path, ["accuracy"], 0.0, 1.0)
    rows = df[df["evaluator"].astype(str).isin(evaluators) & (df["n_runs"] >= 2) & df["accuracy_sd"].notna()
              & (df["n_pairs"] > 0)]  # fmt: skip
    if "evidence" in rows.columns:
        rows = rows[rows["evidence"].astype(str) == "measured"]
    if rows.empty:
        return None, f"{path}: no measured evaluator of these scored ≥ 2 runs"
    within = rows["n_pairs"] * rows["accuracy_sd"] ** 2
    between = (rows["accuracy"] * (1 - rows["accuracy"]) - within).clip(lower=0.0)
    return Variances(float(between.mean()), float(within.mean()), "measured",
                     f"{_rel(path)}: mean of {len(rows)} evaluators' pair accuracy over ≥ 2 runs; σ² = n_pairs·SD², "
                     "ω² = p(1−p) − σ²"), ""  # fmt: skip


def _rel(path: Path) -> str:
    from ..paths import ROOT

    try:
        return str(Path(path).resolve().relative_to(ROOT.resolve()))
    except ValueError:
        return str(path)


def table_path(prof, name: str) -> Path | None:
    """``<name>.csv`` of the profile's last run, else of the ``paper`` profile's (the latest paper run)."""
    from ..paths import outputs_root

    for d in dict.fromkeys([Path(prof.out), outputs_root() / "paper"]):
        p = d / "paper" / "tables" / f"{name}.csv"
        if p.is_file():
            return p
    return None


# ---- the rows --------------------------------------------------------------------------------------
def _short(name: str) -> str:
    n = name.split("/", 1)[-1]
    return n.removesuffix("-instruct")


def _subjects(what: str, names: list[str], width: int = 40) -> str:
    """``judges a, b`` when it fits the table's column, else ``3 LLM judges``."""
    names = list(dict.fromkeys(_short(n) for n in names))
    label = f"{what} {', '.join(names)}"
    return label if len(label) <= width else f"{len(names)} LLM {what}"


def _row(notebook: str, comparison: str, outcome: str, n_tasks: int, n_repeats: int, v: Variances,
         delta: float, alpha: float, power: float) -> dict:  # fmt: skip
    from ..stats.power import minimum_detectable_effect, repeats_needed, tasks_needed

    tv, wv = 2 * v.task_var, 2 * v.within_var  # the difference of two subjects
    ok = n_tasks > 0 and n_repeats > 0
    return {"notebook": notebook, "comparison": comparison, "outcome": outcome, "n_tasks": int(n_tasks),
            "n_repeats": int(n_repeats), "paired": True, "task_var": v.task_var, "within_var": v.within_var,
            "source": v.source, "source_detail": v.detail,
            "mde": minimum_detectable_effect(tv, wv, n_tasks, n_repeats, alpha, power) if ok else float("nan"),
            "tasks_needed": tasks_needed(delta, tv, wv, max(1, n_repeats), alpha, power),
            "repeats_needed": repeats_needed(delta, tv, wv, n_tasks, alpha, power) if n_tasks > 0 else None,
            "delta": delta, "alpha": alpha, "power": power}  # fmt: skip


def budget_table(builder, delta: float = DEFAULT_DETECT, *, only=None, alpha: float = 0.05,
                 power: float = 0.8) -> tuple[pd.DataFrame, list[str]]:  # fmt: skip
    """The budget of the profile behind ``builder`` (:class:`~shopbench.preview.notebooks.Builder`): one
    row per comparison (module docstring) and notes on the sources passed over. A corrupted variance
    table is an :class:`InputError`."""
    from ..paths import ROOT
    from .notebooks import judged_records

    if not 0 < delta < 1:
        raise InputError(f"--detect {delta}: the difference to detect must lie between 0 and 1 (0.05 = 5 points)",
                         field="detect", fix="e.g. --detect 0.05")  # fmt: skip
    prof, p = builder.prof, builder.params
    rows, notes = [], []
    tau = tau_airline(str(TAU_AIRLINE if TAU_AIRLINE.is_absolute() else (ROOT / TAU_AIRLINE).resolve()))

    def pick(measured: tuple[Variances | None, str] | None, *fallbacks: Variances | None) -> Variances:
        if measured is not None:
            if measured[0] is not None:
                return measured[0]
            notes.append(measured[1])
        return next((f for f in fallbacks if f is not None), bound())

    args = (delta, alpha, power)

    def want(nb: str) -> bool:
        return not only or nb in only

    if want("80_shop_agents"):
        S = p.shopsim
        floor = table_path(prof, "shop_noise_floor")
        for outcome in ("success", "goal_progress"):
            paper = tau if outcome == "success" else None
            if S.llm_agents:
                v = pick(shop_measured(floor, "llm", outcome) if floor else None, paper)
                for a in S.llm_agents:
                    rows.append(_row("80", f"agent {_short(a.backbone)}", outcome, sum(a.trial_counts().values()), 1,
                                     v, *args))  # fmt: skip
            if S.scripted_agents:
                v = pick(shop_measured(floor, "scripted", outcome) if floor else None, paper)
                rows.append(_row("80", f"{len(S.scripted_agents)} scripted agents", outcome,
                                 sum(S.trials.counts().values()), 1, v, *args))  # fmt: skip
    if want("20_pace_judge_sweep"):
        J = p.judging
        n_test = judged_records(p)
        by_n: dict[int, list[str]] = {}
        for run in J.runs():
            by_n.setdefault(n_test if run.subset is None else min(run.subset, n_test), []).append(
                run.backbone
            )
        for n, names in by_n.items():
            rows.append(_row("20", _subjects("judges", names), "accuracy", n, J.repeats, bound(), *args))
        if J.deterministic_judges:
            b = bound()
            det = Variances(b.task_var, 0.0, b.source, f"deterministic judges: σ² = 0 by construction; ω² ≤ p(1−p) = "
                            f"{b.task_var:g} at p = {BOUND_P:g} (Bernoulli bound)")  # fmt: skip
            rows.append(_row("20", f"{len(J.deterministic_judges)} reference judges", "accuracy", n_test, J.repeats,
                             det, *args))  # fmt: skip
    if want("50_padme_meta_eval"):
        rows += _padme_rows(builder, pick, args)
    return pd.DataFrame(rows), notes


def _padme_rows(builder, pick, args) -> list[dict]:
    from ..judges.padme.roster import evaluator_specs, evaluators_from_profile

    P = builder.params.padme
    try:
        specs = evaluators_from_profile(builder.prof)
    except Exception:  # noqa: BLE001 - as the cost preview: count what can be counted
        specs = evaluator_specs([e if isinstance(e, str) else e.given() for e in P.evaluators or []])
    tab = table_path(builder.prof, "padme_tab3_evaluators")
    out = []
    llm = [s for s in specs if not s.is_heuristic]
    heur = [s for s in specs if s.is_heuristic]
    paper = padme_paper()
    if llm:
        pairs = P.llm_evaluator_pairs if P.llm_evaluator_pairs is not None else builder._cells()
        rec = P.llm_recorded_pairs if P.llm_recorded_pairs is not None else builder._recorded_pairs()
        v = pick(padme_measured(tab, [s.name for s in llm]) if tab else None, paper)
        out.append(_row("50", _subjects("evaluators", [s.name for s in llm]), "pair_accuracy", pairs + rec,
                        P.llm_runs, v, *args))  # fmt: skip
    if heur:
        v = pick(padme_measured(tab, [s.name for s in heur]) if tab else None, paper)
        out.append(_row("50", f"{len(heur)} heuristic evaluators", "pair_accuracy", builder._cells(),
                        P.evaluator_runs, v, *args))  # fmt: skip
    return out


def profile_budget(profile: str, delta: float = DEFAULT_DETECT, *, only=None, alpha: float = 0.05,
                   power: float = 0.8) -> pd.DataFrame:  # fmt: skip
    """The budget table of a profile by name, from Python (``notes`` in ``.attrs``): what ``make preview``
    prints as its budget section."""
    from ..config import load_profile
    from .notebooks import Builder

    df, notes = budget_table(Builder(load_profile(profile)), delta, only=only, alpha=alpha, power=power)
    df.attrs["notes"] = notes
    return df


# ---- text ------------------------------------------------------------------------------------------
def render_budget(df: pd.DataFrame, notes: list[str] | None = None) -> str:
    """The budget section for the terminal: one line per comparison, its source as a footnote."""
    if df.empty:
        return "budget: no comparison planned in the previewed notebooks"
    d0 = df.iloc[0]
    head = [f"Budget to detect a {d0['delta'] * 100:g}-point difference between two subjects (issue 29 item 5): "
            f"{d0['power'] * 100:g} % power, two-sided α = {d0['alpha']:g},",
            "paired on the same tasks and seeds. T tasks × R repeats; ω², σ²: one subject's between- and within-task",
            "variance (a difference's: 2ω² + 2σ²/R); MDE at the planned T × R; T needed at the planned R; R needed at "
            "the planned T."]  # fmt: skip
    foot: dict[str, int] = {}
    table = [("nb", "comparison", "outcome", "planned", "ω²", "σ²", "source", "MDE", "T needed", "R needed")]
    for r in df.to_dict("records"):
        k = foot.setdefault(r["source_detail"], len(foot) + 1)
        rn = r["repeats_needed"]
        reps = "not reachable by repeats alone" if rn is None or rn != rn else f"{int(rn):,}"
        mde = "–" if r["mde"] != r["mde"] else f"{r['mde']:.3f}"
        table.append((r["notebook"], r["comparison"], OUTCOME_NAMES.get(r["outcome"], r["outcome"]),
                      f"{r['n_tasks']:,} × {r['n_repeats']}", f"{r['task_var']:.4f}", f"{r['within_var']:.4f}",
                      f"{r['source']} [{k}]", mde, f"{r['tasks_needed']:,} × {r['n_repeats']}", reps))  # fmt: skip
    widths = [min(40, max(len(t[i]) for t in table)) for i in range(len(table[0]))]
    lines = head + [
        "  ".join(str(c)[:w].ljust(w) for c, w in zip(t, widths, strict=True)).rstrip() for t in table
    ]
    lines += [f"[{k}] {d}" for d, k in foot.items()]
    lines += [f"passed over: {n}" for n in dict.fromkeys(notes or [])]
    return "\n".join(lines)


def as_records(df: pd.DataFrame) -> list[dict]:
    """The rows for ``preview.json`` (NaN and numpy scalars made JSON-plain)."""
    out = []
    for r in df.to_dict("records"):
        out.append({k: (None if isinstance(v, float) and np.isnan(v) else v.item() if hasattr(v, "item") else v)
                    for k, v in r.items()})  # fmt: skip
    return out
