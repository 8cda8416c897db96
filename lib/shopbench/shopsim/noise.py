"""Notebook 80's noise floor (issue 29 item 4): how much of a shop agent's per-trial outcome is the task,
the agent's sampling, the user simulator and the judge, and τ-bench's pass^k per agent.

The plan (profile ``shopsim.noise``, :class:`~shopbench.profiles.shopsim.NoisePlan`): ``tasks`` general
scenarios of the sweep, difficulty-stratified (:func:`noise_scenarios`). The LLM agent samples
(temperature > 0, its per-call seed the agent seed) and plays every task on the crossed seeds
``agent_seeds`` × ``user_seeds``: the customer's seed is varied and held fixed within one factorial. The
scripted agents play every task on the user seeds only: they are deterministic, so their agent seed is
fixed by construction (zero-agent-variance controls). The rules judge is deterministic: its share is 0
by construction. Each source asks the gateway with its own seed as the repeat index
(:func:`shopbench.tasks.repeats.source_gateway`): the LLM agent at agent seed 0 and user seed 0 replays
from the cache, and a rerun plays no finished trial (one trajectory store per seed cell).

Outcomes decomposed (:func:`shopbench.stats.variance_components`, method of moments with generalized
pivotal CIs): exact-cart success (what pass^k counts), goal progress (the continuous outcome of the
battery) and the tool calls per trial (a tiny model rarely moves a cart, but its behaviour varies).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .types import Scenario

OUTCOMES = {"success": "exact-cart success", "goal_progress": "goal progress",
            "avg_total_tool_calls": "tool calls per trial"}  # fmt: skip
SOURCES = ("task", "agent", "user", "agent:user", "judge")
RULES_JUDGE = "rules judge (deterministic): fixed by construction"
SCRIPTED = "scripted agent: deterministic, fixed by construction"


@dataclass
class NoiseRun:
    """What :func:`run_noise` played: one scored row per trial with its seeds, each agent's kind (``llm``
    or ``scripted``), the wall seconds of the trials played per agent (a cached trial counts its first
    play) and the wall seconds this call took."""

    scores: pd.DataFrame
    kinds: dict[str, str]
    judge_reason: str
    trial_wall_s: dict[str, float] = field(default_factory=dict)
    wall_s: float = 0.0
    skipped: list[str] = field(default_factory=list)


def noise_scenarios(scenarios: Sequence[Scenario], n_tasks: int, seed: int = 0) -> list[Scenario]:
    """``n_tasks`` general scenarios spread over the difficulties, in the seeded stratified order."""
    from .experiment import stratified, stratified_order

    general = [s for s in scenarios if s.kind == "general"]
    return stratified_order(stratified(general, {"general": n_tasks}), seed=seed)


def run_noise(cfg, scenarios: Sequence[Scenario], env, gateway, out_dir: Path, judge, *,
              available: set[str] | None = None, run_prefix: str = "80_shop_agents/noise", seed: int = 0,
              progress: bool = True) -> NoiseRun:  # fmt: skip
    """Play the profile's noise plan (module docstring) and score every trial with ``judge``."""
    from ..tasks.repeats import source_gateway
    from .agents import make_agent
    from .experiment import AgentPlan, _shopsim, llm_agent_factory, make_user, run_plan
    from .sweep import TrajectoryStore
    from .verifier import battery as B

    S = _shopsim(cfg)
    N = S.noise
    if N is None:
        raise ValueError("the profile has no shopsim.noise section")
    t0 = time.perf_counter()
    tasks = noise_scenarios(scenarios, N.tasks, seed=seed)
    cells: list[tuple[AgentPlan, int, int]] = []
    kinds: dict[str, str] = {}
    for name in N.scripted_agents:
        plan = AgentPlan(make_agent(name).name, (lambda n=name: make_agent(n)), list(tasks))
        kinds[plan.name] = "scripted"
        cells += [(plan, 0, u) for u in range(N.user_seeds)]
    skipped = []
    spec = N.llm_agent
    if spec is not None and available is not None and spec.backbone not in available:
        skipped.append(f"{spec.backbone}: backbone not available (see notebook 00)")
        spec = None
    if spec is not None:
        name = spec.name or f"llm:{spec.backbone}"
        kinds[name] = "llm"
        for a in range(N.agent_seeds):
            make = llm_agent_factory(source_gateway(gateway, a), spec.backbone, tool_mode=spec.tool_mode,
                                     max_tokens=spec.max_tokens, name=name, run_prefix=run_prefix,
                                     temperature=spec.temperature, seed=a)  # fmt: skip
            plan = AgentPlan(name, make, list(tasks), backbone=spec.backbone)
            cells += [(plan, a, u) for u in range(N.user_seeds)]
    frames, wall = [], dict.fromkeys(kinds, 0.0)
    for plan, a, u in cells:

        def user_factory(u=u, name=plan.name):
            return make_user(S.user, source_gateway(gateway, u), run_id=f"{run_prefix}/user/{name}", seed=u)

        store = TrajectoryStore(out_dir / f"agent{a}-user{u}")
        trajs, _ = run_plan(plan, user_factory, env.store, store, progress=progress)
        wall[plan.name] += float(sum(t.wall_s for t in trajs))
        sc = B.score_trials(trajs, env.products, judge=judge, progress=False)
        frames.append(sc.assign(agent_seed=a, user_seed=u, judge_seed=0, agent_kind=kinds[plan.name]))
    scores = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if len(scores):
        scores["success"] = scores["exact_cart_success_rate"]
    judged = getattr(judge, "name", "")
    reason = RULES_JUDGE if not str(judged).startswith("llm:") else "held fixed: one judge seed in this plan"
    return NoiseRun(scores, kinds, reason, wall, time.perf_counter() - t0, skipped)


def _key(component: str) -> str:
    return "share_" + component.replace(":", "_x_")


def noise_floor_table(run: NoiseRun, outcomes: Sequence[str] = tuple(OUTCOMES), *, n_boot: int = 2000,
                      seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """``shop_noise_floor``: one row per agent and outcome — ``agent``, ``kind``, ``outcome``, ``n_tasks``,
    ``n_trials``, ``mean``, ``var_total`` (the sum of the variance components: share × var_total is a
    component's variance), ``share_<source>`` with ``_ci_low``/``_ci_high`` for task, agent, user,
    agent × user (the LLM agent's highest-order term: it also holds the trial noise) and judge, and
    ``why`` (the sources fixed by construction, or why no share is given)."""
    from ..stats import variance_components

    rows = []
    for agent, kind in run.kinds.items():
        sub = run.scores[run.scores["agent"] == agent]
        for outcome in outcomes:
            f = sub[["trial_id", "agent_seed", "user_seed", "judge_seed", outcome]].dropna()
            row: dict[str, Any] = {"agent": agent, "kind": kind, "outcome": outcome,
                                   "n_tasks": int(f["trial_id"].nunique()), "n_trials": len(f),
                                   "mean": float(f[outcome].mean()) if len(f) else np.nan,
                                   "var_total": 0.0 if len(f) else np.nan}  # fmt: skip
            for c in SOURCES:
                row[_key(c)] = row[_key(c) + "_ci_low"] = row[_key(c) + "_ci_high"] = np.nan
            fixed = (
                {"agent": SCRIPTED, "judge": run.judge_reason}
                if kind == "scripted"
                else {"judge": run.judge_reason}
            )
            why = [f"{s}: {r}" for s, r in fixed.items()]
            if f[outcome].nunique() < 2:
                row["why"] = "; ".join([f"no variance: every trial has {outcome} = {f[outcome].iloc[0]:g}" if len(f)
                                        else "no scored trial", *why])  # fmt: skip
                rows.append(row)
                continue
            src = {"agent": "agent_seed" if kind == "llm" else None, "user": "user_seed", "judge": None}
            vc = variance_components(f, outcome=outcome, task="trial_id", sources=src, fixed_reasons=fixed,
                                     n_boot=n_boot, seed=seed, drop_incomplete=True)  # fmt: skip
            for r in vc.to_dict("records"):
                k = _key(r["component"])
                row[k], row[k + "_ci_low"], row[k + "_ci_high"] = r["share"], r["ci_low"], r["ci_high"]
            row["n_tasks"], row["n_trials"] = vc.attrs["n_tasks"], vc.attrs["n_trials"]
            row["var_total"] = vc.attrs["total_variance"]  # the preview's budget reads it (issue 29 item 5)
            row["why"] = "; ".join(why)
            rows.append(row)
    return pd.DataFrame(rows)


def pass_hat_k_table(run: NoiseRun, *, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """``shop_pass_hat_k``: τ-bench's pass^k of exact-cart success per agent, k = 1..its trials per task,
    with the percentile bootstrap CI over tasks (:func:`shopbench.stats.pass_hat_k`)."""
    from ..stats import pass_hat_k

    out = []
    for agent, kind in run.kinds.items():
        f = run.scores[run.scores["agent"] == agent][["trial_id", "success"]].dropna()
        if f.empty:
            continue
        t = pass_hat_k(f, task="trial_id", success="success", n_boot=n_boot, seed=seed)
        out.append(t.assign(agent=agent, kind=kind))
    cols = ["agent", "kind", "k", "pass_hat_k", "ci_low", "ci_high", "n_tasks", "n_tasks_left_out"]
    return pd.concat(out, ignore_index=True)[cols] if out else pd.DataFrame(columns=cols)


def noise_figure(floor: pd.DataFrame, passk: pd.DataFrame):
    """Stacked variance shares per agent (left: the first of goal progress, exact-cart success, tool calls
    with any variance) and pass^k curves per agent with their CIs (right; agents with identical curves
    share one line and one legend entry)."""
    import matplotlib.pyplot as plt

    from ..report.figures import merge_identical_series

    f = floor.dropna(subset=["share_task"]).copy()
    f["_order"] = f["outcome"].map({"goal_progress": 0, "success": 1, "avg_total_tool_calls": 2}).fillna(3)
    f = f.sort_values("_order", kind="stable").groupby("agent", sort=False).head(1)
    f = (
        f.set_index("agent")
        .reindex([a for a in dict.fromkeys(floor["agent"]) if a in set(f["agent"])])
        .reset_index()
    )
    fig, (ax1, ax2) = plt.subplots(
        1, 2, figsize=(13, 0.4 * max(len(f), 6) + 2.2), gridspec_kw={"width_ratios": [1.3, 1]}
    )
    labels = f["agent"] + " · " + f["outcome"].map(OUTCOMES).fillna(f["outcome"])
    left = np.zeros(len(f))
    colors = {
        "task": "#bbbbbb",
        "agent": "#d62728",
        "user": "#1f77b4",
        "agent:user": "#9467bd",
        "judge": "#2ca02c",
    }
    names = {"agent:user": "agent × user (+ trial noise)"}
    handles = []
    for c in SOURCES:
        v = f[_key(c)].fillna(0.0).to_numpy()
        handles.append(ax1.barh(labels, v, left=left, color=colors[c], label=names.get(c, c)))
        left += v
    ax1.set_xlim(0, 1)
    ax1.set_xlabel("share of the per-trial variance")
    ax1.invert_yaxis()
    ax1.tick_params(axis="y", labelsize=7)
    # a figure legend (the report's tidy pass moves axes legends, and inside the bars it would hide them)
    fig.legend(handles, [h.get_label() for h in handles], loc="lower center", bbox_to_anchor=(0.32, 0.0),
               ncol=5, fontsize=7, frameon=False)  # fmt: skip
    long = merge_identical_series(passk, "agent", "k", "pass_hat_k")
    groups = list(long.groupby("agent", sort=False))
    for i, (agent, g) in enumerate(groups):
        x = g["k"].to_numpy(dtype=float) + 0.03 * (i - (len(groups) - 1) / 2)  # side by side around k
        err = [g["pass_hat_k"] - g["ci_low"], g["ci_high"] - g["pass_hat_k"]]
        ax2.errorbar(x, g["pass_hat_k"], yerr=err, marker="o", capsize=2, label=agent,
                     lw=2.2 if (g["kind"] == "llm").any() else 1)  # fmt: skip
    ax2.set_xlabel("k (trials of the same task)")
    ax2.set_ylabel("pass^k of exact-cart success (95% CI over tasks)")
    ax2.set_ylim(-0.03, 1.03)
    if len(passk):
        ax2.set_xticks(range(1, int(passk["k"].max()) + 1))
    ax2.legend(fontsize=7)
    fig.suptitle("Noise floor: variance shares by source and pass^k per agent")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig
