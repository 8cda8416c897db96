"""Repeats as an axis of the agent tasks: a seed per noise source (issue 29, item 1), and what
``shopbench eval … --epochs K`` prints and ``shopbench compare`` reports from them (item 3).

Sources. An agent task has three sources of trial-to-trial noise: the agent's sampling (``agent``),
the user simulator (``user``) and the judge (``judge``). Each gets its own seed per epoch; a source
whose seed is 0 asks the gateway with repeat index 0 (the same cache key as a one-epoch run, so its
calls hit the cache), a source with seed ``s > 0`` asks with repeat ``s`` (a fresh draw). The
scripted customer takes its seed as its wording offset. ``-T vary=SPEC`` says which sources vary:

- ``vary=user`` (or ``agent``, ``judge``, or a list ``agent,user``): the listed sources take seed
  ``k`` in epoch ``k`` (together), the others stay at seed 0;
- ``vary=agent:3,user:2``: a crossed factorial, every combination of 3 agent seeds and 2 user seeds
  (``--epochs`` must be the product, here 6; epoch ``k`` is the mixed-radix digits of ``k``, the first
  source listed changing slowest);
- ``vary=none``: every source fixed (each epoch repeats epoch 0 from the cache).

The default is each task's behaviour before sources had seeds (``shop_agent``: the agent and an LLM
customer vary, the judge is fixed; ``tau2_retail_agent``: all three vary). Every sample row records
``agent_seed``, ``user_seed`` and ``judge_seed``, which :func:`shopbench.stats.variance_components` and
:func:`shopbench.stats.paired_difference` read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

from ..errors import InputError, ParamError, UserError

SOURCES = ("agent", "user", "judge")
SEED_COLUMNS = {s: f"{s}_seed" for s in SOURCES}
DELTA = 0.05  # the difference the power statement is about: 5 points


@dataclass(frozen=True)
class RepeatDesign:
    """Which sources vary across epochs and how (module docstring). ``levels`` maps each varied source
    to its number of seeds in a crossed design; ``joint`` lists the sources that vary together (seed =
    epoch); a source in neither is fixed at seed 0."""

    spec: str
    joint: tuple[str, ...] = ()
    levels: tuple[tuple[str, int], ...] = ()

    @property
    def varied(self) -> tuple[str, ...]:
        return self.joint or tuple(s for s, _ in self.levels)

    def check_epochs(self, epochs: int) -> None:
        """A crossed design needs ``--epochs`` = the product of its levels: else one ParamError."""
        if self.levels:
            need = math.prod(n for _, n in self.levels)
            if epochs != need:
                raise ParamError(f"-T vary={self.spec} crosses {need} seed combinations but --epochs is {epochs}",
                                 fix=f"run it with --epochs {need}")  # fmt: skip

    def seeds(self, epoch: int) -> dict[str, int]:
        """``{agent, user, judge} → seed`` of ``epoch``."""
        out = dict.fromkeys(SOURCES, 0)
        if self.joint:
            out.update(dict.fromkeys(self.joint, int(epoch)))
        elif self.levels:
            grid = list(product(*[range(n) for _, n in self.levels]))
            out.update(zip([s for s, _ in self.levels], grid[int(epoch)], strict=True))
        return out


def parse_vary(spec: str | None, default: tuple[str, ...]) -> RepeatDesign:
    """``-T vary`` (module docstring) → a :class:`RepeatDesign`; ``None`` → ``default`` varied jointly.
    A bad spec is one ParamError naming the fix."""
    if spec is None:
        return RepeatDesign(",".join(default) or "none", joint=tuple(default))
    text = str(spec).strip()
    fix = "e.g. -T vary=user, -T vary=agent,user (together) or -T vary=agent:3,user:2 (crossed), or none"
    if text.lower() == "none":
        return RepeatDesign("none")
    parts = [p.strip() for p in text.split(",") if p.strip()]
    names, counts = [], []
    for p in parts:
        name, sep, n = p.partition(":")
        name = name.strip()
        if name not in SOURCES:
            raise ParamError(f"-T vary={text}: {name!r} is not a source (agent, user, judge)", fix=fix)
        if name in names:
            raise ParamError(f"-T vary={text}: {name} is named twice", fix=fix)
        if sep and (not n.strip().isdigit() or int(n) < 1):
            raise ParamError(f"-T vary={text}: {p!r}: the seed count is not a positive integer", fix=fix)
        names.append(name)
        counts.append(int(n) if sep else None)
    if not names:
        raise ParamError(f"-T vary={text!r} names no source", fix=fix)
    if all(c is None for c in counts):
        return RepeatDesign(text, joint=tuple(names))
    if any(c is None for c in counts):
        raise ParamError(f"-T vary={text}: give a seed count to every source or to none", fix=fix)
    return RepeatDesign(text, levels=tuple((n, int(c)) for n, c in zip(names, counts, strict=True) if c))


def source_gateway(gateway, seed: int):
    """The gateway a source with ``seed`` asks: the run's own (repeat 0) for seed 0, else one that adds
    ``seed`` to the repeat index of every call it builds (a fresh cache key per seed, also for a
    component that sets its own repeat index, like a :class:`~shopbench.judges.ModelJudge`)."""
    if not seed:
        return gateway
    from ..padme.sources.base import RepeatGateway

    class SeedGateway(RepeatGateway):
        def call(self, backbone, item_id, messages, **kw):
            kw["repeat"] = int(kw.get("repeat") or 0) + self.repeat
            return self.gateway.call(backbone, item_id, messages, **kw)

    return SeedGateway(gateway, seed)


# ---- what eval prints and writes after its metrics ---------------------------------------------
def _sources_for(rows, design_varied: tuple[str, ...], joint: bool, fixed_reasons: dict[str, str]):
    """The ``sources`` argument of :func:`~shopbench.stats.variance_components`: sources varied together
    (same seed column) are one component named ``agent+user``."""
    if joint and len(design_varied) > 1:
        name = "+".join(design_varied)
        src: dict[str, str | None] = {name: SEED_COLUMNS[design_varied[0]]}
        src.update({s: None for s in SOURCES if s not in design_varied})
    else:
        src = {s: SEED_COLUMNS[s] if s in design_varied else None for s in SOURCES}
    reasons = {s: r for s, r in fixed_reasons.items() if s not in design_varied}
    for s in SOURCES:
        if s not in design_varied and s not in reasons:
            reasons[s] = "held fixed (-T vary)"
    return src, reasons


def noise_summary(rows, *, task: str, success: str, continuous: list[str], design: RepeatDesign,
                  fixed_reasons: dict[str, str], seed: int = 0, n_boot: int = 2000) -> dict:  # fmt: skip
    """pass^k (k = 1..K) of ``success`` over the tasks with K scored trials, and the variance split of
    ``success`` and each ``continuous`` outcome by source (issue 29, items 1 and 3), as JSON-ready dicts.
    Rows with a missing outcome (call errors, trial kinds the metric does not apply to) are left out; a
    task whose repeats are then incomplete is left out of the split and counted."""
    import pandas as pd

    from ..stats import pass_hat_k, variance_components

    out: dict[str, Any] = {
        "design": design.spec,
        "varied": list(design.varied),
        "pass_hat_k": None,
        "variance": {},
    }
    ok = rows[rows["unit_status"] != "error"]
    s = ok[[task, success]].dropna()
    if len(s):
        try:
            ph = pass_hat_k(s, task=task, success=success, n_boot=n_boot, seed=seed)
            out["pass_hat_k"] = ph.to_dict("records")
            out["pass_hat_k_note"] = (f"{success} over the tasks with ≥ k scored trials; percentile bootstrap "
                                      "95% CI over tasks (shopbench.stats.pass_hat_k)")  # fmt: skip
        except InputError as e:
            out["pass_hat_k"] = {"note": str(e)}
    src, reasons = _sources_for(rows, design.varied, bool(design.joint), fixed_reasons)
    for outcome in [success, *continuous]:
        if outcome not in ok.columns:
            continue
        f = ok[[task, *[c for c in src.values() if c], outcome]].dropna()
        if not design.varied:
            out["variance"][outcome] = {"note": "no source varies (-T vary=none): nothing to split"}
            continue
        if f[outcome].nunique() < 2:
            v = f[outcome].iloc[0] if len(f) else None
            out["variance"][outcome] = {
                "note": f"no variance to split: every scored trial has {outcome} = {v}"
            }
            continue
        try:
            vc = variance_components(f, outcome=outcome, task=task, sources=src, fixed_reasons=reasons,
                                     n_boot=n_boot, seed=seed, drop_incomplete=True)  # fmt: skip
        except InputError as e:
            out["variance"][outcome] = {"note": str(e)}
            continue
        out["variance"][outcome] = {"components": pd.DataFrame(vc).to_dict("records"), **dict(vc.attrs)}
    return out


def _f(x, nd: int = 3) -> str:
    return "–" if x is None or x != x else f"{x:.{nd}f}"


def print_noise(noise: dict) -> None:
    """The lines ``shopbench eval … --epochs K`` prints after the metrics (issue 29, item 3)."""
    ph = noise.get("pass_hat_k")
    print(f"  repeats: -T vary={noise['design']}")
    if isinstance(ph, list) and ph:
        cells = [
            f"pass^{int(r['k'])} {_f(r['pass_hat_k'])} [{_f(r['ci_low'])}, {_f(r['ci_high'])}]" for r in ph
        ]
        print(f"  pass^k ({ph[0].get('n_tasks')} tasks): " + ", ".join(cells))
    elif isinstance(ph, dict):
        print(f"  pass^k: {ph['note']}")
    for outcome, v in (noise.get("variance") or {}).items():
        if "components" not in v:
            print(f"  variance split of {outcome}: {v['note']}")
            continue
        parts = []
        for c in v["components"]:
            if c["varied"] or c["component"] == "task":
                parts.append(
                    f"{c['component']} {_f(c['share'], 2)} [{_f(c['ci_low'], 2)}, {_f(c['ci_high'], 2)}]"
                )
            else:
                parts.append(f"{c['component']} 0 ({c['note']})")
        print(
            f"  variance split of {outcome} ({v['n_tasks']} tasks, {v['n_trials']} trials): "
            + "; ".join(parts)
        )


# ---- compare ------------------------------------------------------------------------------------
_ID_COLUMNS = ("sample_id", "epoch", "agent_seed", "user_seed", "judge_seed")


def _read_log(path) -> tuple[dict, dict, Any]:
    import json

    import pandas as pd

    p = Path(path).expanduser()
    if not p.is_dir():
        raise UserError(f"no results log directory at {p}",
                        fix="give the log directory shopbench eval printed (log: …)")  # fmt: skip
    need = [p / "run.json", p / "metrics.json", p / "samples.parquet"]
    for f in need:
        if not f.is_file():
            raise UserError(f"{p} is not a finished results log: {f.name} is missing", file=str(f),
                            fix="finish the run (rerun the same shopbench eval command), then compare")  # fmt: skip
    try:
        run = json.loads(need[0].read_text(encoding="utf-8"))
        metrics = json.loads(need[1].read_text(encoding="utf-8"))
        rows = pd.read_parquet(need[2])
    except Exception as e:
        raise UserError(f"{p}: cannot read the results log ({type(e).__name__}: {e})",
                        fix="rerun the shopbench eval command that wrote it") from None  # fmt: skip
    return run, metrics, rows


@dataclass
class Comparison:
    """What :func:`compare` returns: one row per shared metric (``table``: difference A − B, its
    clustered CI, naive CI, design effect, pairs, tasks, MDE and tasks needed for a 5-point difference
    at the logs' repeats) and the logs' identities."""

    task: str
    a: str
    b: str
    table: Any  # pandas.DataFrame
    n_shared: int
    pair_on: list[str]

    def __repr__(self) -> str:
        return f"Comparison(task={self.task!r}, a={self.a!r}, b={self.b!r}, metrics={len(self.table)}, shared={self.n_shared})"


def compare(log_a, log_b, *, delta: float = DELTA, metrics: list[str] | None = None) -> Comparison:
    """Paired difference of two results logs of one task on their shared samples (same sample, epoch and
    seeds; issue 29, item 3): per metric both logs' tasks name (``metrics.json`` ``compare_metrics``), the
    mean of A − B with its clustered CI (cluster = sample), the minimum detectable effect of this design
    and the samples × repeats needed for 80 % power at ``delta`` (:func:`shopbench.stats.paired_difference`).
    Logs of different tasks, logs that share no sample, or a missing directory: one UserError."""
    import pandas as pd

    from ..stats import paired_difference

    ra, ma, a = _read_log(log_a)
    rb, mb, b = _read_log(log_b)
    if ra.get("task") != rb.get("task"):
        raise UserError(f"the logs are of different tasks: {ra.get('task')} ({log_a}) and {rb.get('task')} ({log_b})",
                        fix="compare two runs of the same task")  # fmt: skip
    keys = [c for c in _ID_COLUMNS if c in a.columns and c in b.columns]
    names = metrics or [
        m for m in (ma.get("compare_metrics") or []) if m in (mb.get("compare_metrics") or [])
    ]
    names = [m for m in names if m in a.columns and m in b.columns]
    if not names:
        raise UserError(f"the logs share no per-sample metric ({log_a}, {log_b})",
                        fix="compare logs written by this version of shopbench eval (metrics.json compare_metrics)")  # fmt: skip
    la, lb = f"A: {Path(log_a).name}", f"B: {Path(log_b).name}"
    if la == lb:
        la, lb = f"A: {log_a}", f"B: {log_b}"

    def scored(df):
        return df[df["unit_status"] != "error"] if "unit_status" in df.columns else df

    both = pd.concat(
        [scored(a)[keys + names].assign(_subject=la), scored(b)[keys + names].assign(_subject=lb)]
    )
    shared = both.groupby(keys, dropna=False)["_subject"].nunique()
    n_shared = int((shared == 2).sum())
    if n_shared == 0:
        raise UserError(f"the logs share no scored sample (matched on {', '.join(keys)})",
                        fix="compare runs of the same samples and seeds (same --limit/--seed/-T vary)")  # fmt: skip
    rows: list[dict[str, Any]] = []
    for m in names:
        f = both[[*keys, "_subject", m]].dropna()
        na, nb = int((f["_subject"] == la).sum()), int((f["_subject"] == lb).sum())
        if not na or not nb:
            rows.append({"metric": m, "note": f"no paired value (A has {na}, B has {nb} scored values)"})
            continue
        rate = bool(f[m].between(0, 1).all())
        try:
            r = paired_difference(f, "_subject", la, lb, value=m, pair_on=keys, task="sample_id", delta=delta)
        except InputError as e:
            rows.append({"metric": m, "note": str(e)})
            continue
        rows.append({"metric": m, "diff": r.diff, "ci_low": r.ci_low, "ci_high": r.ci_high, "naive_low": r.naive_low,
                     "naive_high": r.naive_high, "design_effect": r.design_effect, "n_pairs": int(r.n_pairs),
                     "n_tasks": int(r.n_tasks), "repeats": float(r.n_repeats), "mde": r.mde, "delta": delta,
                     "tasks_needed": int(r.n_tasks_needed) if rate else None, "rate": rate, "note": ""})  # fmt: skip
    return Comparison(str(ra.get("task")), str(log_a), str(log_b), pd.DataFrame(rows), n_shared, keys)


def print_comparison(c: Comparison) -> None:
    """What ``shopbench compare`` prints."""
    print(f"{c.task}: A = {c.a}\n{' ' * len(c.task)}  B = {c.b}")
    print(
        f"  {c.n_shared} shared trials (matched on {', '.join(c.pair_on)}); A − B, 95% CI clustered by sample"
    )
    for r in c.table.to_dict("records"):
        if r.get("note"):
            print(f"  {r['metric']:<24} {r['note']}")
            continue
        print(f"  {r['metric']:<24} {r['diff']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] "
              f"(naive [{r['naive_low']:+.3f}, {r['naive_high']:+.3f}], design effect {r['design_effect']:.2f}; "
              f"{int(r['n_pairs'])} pairs, {int(r['n_tasks'])} samples × {r['repeats']:g} repeats)")  # fmt: skip
        need = (f"a {r['delta'] * 100:g}-point difference needs {int(r['tasks_needed'])} samples × "
                f"{round(r['repeats'])} repeats" if r.get("rate") else "not a rate: no points statement")  # fmt: skip
        print(f"  {'':<24} power: this design detects |A − B| ≥ {r['mde']:.3f} (80%, α 0.05); {need}")
