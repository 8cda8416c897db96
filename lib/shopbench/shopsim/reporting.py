"""Seed 002's run-level tables that come from the call log and the trial records: the LLM agents'
completed trials (issue 13 §4), tokens (Table 8), judge cost (Table 9), latency (Table 10) and the
full metric tables (Tables 15-16).

Seed 002, App. G: "We separate total token volume from the metered cost of post-hoc judging in
Tables 8 and 9. The agent under test accounts for more tokens per trial than the user simulator and
judge combined". Table 8: "Mean tokens per trial (thousands) [...] Median per-trial totals [...]".
Table 9: "Per-rubric judge cost [...] Tokens/call is median input plus output per judge call; Out.
share is the generated fraction [...]; USD/run is the median cost across a 160-trial run."
App. H, Table 10: "Agent latency, ordered by per-round-trip time. Active is the rounded number of
parameters activated per token [...]". App. M, Table 15: "Outcome and tool-use metrics over 100
shopping trials per model. Turns to goal averages only over trials that reached the goal." Table 16:
"Model-graded rubrics and failure rates. Rubrics are normalized to [0,1], higher better. Failure
rates are per-trial macro-means over the trials to which each applies, lower better."

Our copy has the captions only: the paper's numbers (and Table 15's exact column list) are not in
it. What the code does: Table 8 per agent and trial kind (the paper averages over its sweep); agent
tokens from each trial record, simulator and judge tokens from their call logs (a scripted customer or
the deterministic judge makes no model call: 0 tokens, said in the caption); Table 9 per judge
question over the judge's call log (empty when the judge is deterministic); Table 10 per agent, the
round trip being one model call of the agent (``model_latency_s`` of the call log, the original time
also on a cache hit) and the trial the trial record's wall time; Table 15 the deterministic group
and Table 16 the rubric and failure groups of Table 11 on the general shopping trials.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..llm.outcomes import NO_ANSWER, tally
from ..metrics.shop.cart import exact_cart
from ..stats.bootstrap import bootstrap_mean
from .sweep import trial_cost_s
from .types import TrialRecord

__all__ = ["ACTIVE_PARAMS", "ended_on", "llm_agent_table", "tab8_tokens", "tab9_judge_cost", "tab10_latency",
           "tab15_outcomes", "tab16_rubrics"]  # fmt: skip

ACTIVE_PARAMS: dict[str, str] = {
    "llamacpp/qwen2.5-coder-1.5b-instruct": "1.5B (dense)",
    "llamacpp/smollm2-135m-instruct": "0.135B (dense)",
}
"""Parameters active per token of the packaged local models (model cards); others: "–" (unknown here)."""


def ended_on(t: TrialRecord) -> str:
    """How a trial ended, with the tool-round ceiling told apart from other agent errors: the
    termination name, except that an ``assistant_error`` whose turn hit the App. D ceiling ("a turn
    that hits it is recorded as an agent error") is ``round_ceiling`` here."""
    if t.termination == "assistant_error":
        err = next((x.agent_error for x in reversed(t.turns) if x.agent_error), "") or ""
        if "tool-round ceiling" in err:
            return "round_ceiling"
    return t.termination


def _log(gateway, run_id: str) -> pd.DataFrame:
    if gateway is None:
        return pd.DataFrame()
    try:
        return gateway.log(run_id)
    except FileNotFoundError:
        return pd.DataFrame()


def llm_agent_table(
    trajs: Sequence[TrialRecord],
    statuses: Sequence[Mapping],
    gateway=None,
    run_ids: Mapping[str, str] | None = None,
    n_boot: int = 6000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per budgeted LLM agent: trials done of planned ("n of N planned"), trials cut at the
    budget's deadline (``cut_by_budget``: not stored, not scored), how they ended (``round_ceiling`` apart), exact-cart success on its shopping trials (general + grocery) with a
    percentile bootstrap CI over those trials (the plan itself is difficulty-stratified; with one or
    two trials per kind x tier stratum a stratified resample would hide all variance), and times:
    median seconds per model call (round trip), per agent turn and per trial (model time, the
    original time also for trials replayed from the cache: :func:`~shopbench.shopsim.sweep.trial_cost_s`)."""
    rows = []
    for st in statuses:
        name = st["agent"]
        ts = [t for t in trajs if t.agent == name]
        ends = pd.Series([ended_on(t) for t in ts], dtype=object).value_counts()
        shop = [t for t in ts if t.scenario.kind != "refusal"]
        x = np.array([float(exact_cart(t.final_cart, t.scenario.target)) for t in shop])
        row: dict = {"agent": name, "trials": f"{st['done']} of {st['planned']} planned", "n": len(ts),
                     "planned": st["planned"], "budget_min": None if st.get("budget_s") is None else st["budget_s"] / 60,
                     "spent_min": round(st["spent_s"] / 60, 1), "stopped_by_budget": st["stopped_by_budget"],
                     "cut_by_budget": len(st.get("cut_by_budget") or [])}  # fmt: skip
        for e in ("goal_met", "max_turns", "abandoned", "round_ceiling", "assistant_error", "judge_error"):
            row[e] = int(ends.get(e, 0))
        row["shopping_n"] = len(shop)
        if len(shop):  # plain percentile bootstrap over trials (kind x tier strata hold 1-2 trials each)
            res = bootstrap_mean(x, n_boot=n_boot, seed=seed)
            row |= {"exact_cart": float(x.mean()), "low": float(res.low), "high": float(res.high)}
        else:
            row |= {"exact_cart": np.nan, "low": np.nan, "high": np.nan}
        log = _log(gateway, (run_ids or {}).get(name, ""))
        ok = log[log["status"].isin(["ok", "parse_error"])] if not log.empty else log
        lat = ok["model_latency_s"].astype(float) if not ok.empty else pd.Series(dtype=float)
        turns = [sum(1 for x in t.turns if x.agent_message or x.events or x.agent_error) for t in ts]
        model_s = [trial_cost_s(t) for t in ts]
        row["s_per_call"] = float(lat.median()) if len(lat) else np.nan
        row["calls_per_trial"] = (
            float(np.mean([t.usage.get("agent", {}).get("calls", 0.0) for t in ts])) if ts else np.nan
        )
        row["s_per_turn"] = (
            float(np.median([m / max(k, 1) for m, k in zip(model_s, turns, strict=True)])) if ts else np.nan
        )
        row["s_per_trial"] = float(np.median(model_s)) if ts else np.nan
        # issue 25 item 3: the agent's model calls by kind; an agent with no usable answer has no numbers
        if not log.empty and "status" in log:
            t = tally(log.to_dict("records"))
            row |= t.columns()
            if t.outcome == NO_ANSWER:
                row |= dict.fromkeys(
                    ("exact_cart", "low", "high", "s_per_call", "s_per_turn", "s_per_trial"), np.nan
                )
        rows.append(row)
    return pd.DataFrame(rows)


def _judge_trial_keys(item_ids: pd.Series) -> pd.Series:
    """``<agent>/<trial>`` of each judge call (:func:`~shopbench.judges.shop.judge.split_item_id`);
    an attribute-label call, shared by trials, gets its own id and so joins no trial."""
    from ..judges.shop.judge import split_item_id

    def key(iid: str) -> str:
        agent, trial, _ = split_item_id(iid)
        return iid if agent is None else f"{agent}/{trial}"

    return item_ids.map(key)


def _per_trial_tokens(log: pd.DataFrame, key) -> pd.DataFrame:
    if log.empty:
        return pd.DataFrame(columns=["prompt_tokens", "completion_tokens", "cost_usd"])
    tok = log.assign(_k=key(log.item_id.astype(str)))
    return tok.groupby("_k")[["prompt_tokens", "completion_tokens", "cost_usd"]].sum()


def tab8_tokens(trajs: Sequence[TrialRecord], gateway=None, user_runs: Mapping[str, str] | None = None,
                judge_run: str | None = None) -> pd.DataFrame:  # fmt: skip
    """Table 8: mean tokens per trial (thousands) by agent and trial kind, for the agent under test,
    the user simulator and the judge, plus the median per-trial total. A judge call joins its trial
    by its item id (:func:`_judge_trial_keys`); the attribute-label calls, one per distinct claim set
    and shared by trials, join none (their tokens are in Table 9, not here)."""
    judge = _per_trial_tokens(_log(gateway, judge_run) if judge_run else pd.DataFrame(), _judge_trial_keys)
    rows = []
    for t in trajs:
        u = t.usage.get("agent", {})
        ulog = _log(gateway, (user_runs or {}).get(t.agent, "")) if user_runs else pd.DataFrame()
        sim = _per_trial_tokens(ulog, lambda s: s.str.split(":user:").str[0])
        k = f"{t.agent}/{t.trial_id}"
        s_tok = (
            float(sim.loc[t.trial_id, ["prompt_tokens", "completion_tokens"]].sum())
            if t.trial_id in sim.index
            else 0.0
        )
        j_tok = float(judge.loc[k, ["prompt_tokens", "completion_tokens"]].sum()) if k in judge.index else 0.0
        a_tok = float(u.get("prompt_tokens", 0.0)) + float(u.get("completion_tokens", 0.0))
        rows.append({"agent": t.agent, "kind": t.scenario.kind, "agent_k": a_tok / 1e3, "simulator_k": s_tok / 1e3,
                     "judge_k": j_tok / 1e3, "total_k": (a_tok + s_tok + j_tok) / 1e3})  # fmt: skip
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    out = df.groupby(["agent", "kind"]).agg(trials=("total_k", "size"), agent_k=("agent_k", "mean"),
                                            simulator_k=("simulator_k", "mean"), judge_k=("judge_k", "mean"),
                                            total_k=("total_k", "mean"), median_total_k=("total_k", "median"))  # fmt: skip
    return out.round(3).reset_index()


def tab9_judge_cost(gateway, judge_run: str) -> pd.DataFrame:
    """Table 9: per judge question (rubric), calls, median tokens per call (input + output), the
    output share of those tokens, and the summed cost per agent's run (median over agents). Failed
    calls are left out. Item ids are read with :func:`~shopbench.judges.shop.judge.split_item_id`;
    the attribute-label calls name no agent (one call serves every trial with the same claims), so
    their USD per run is their summed cost spread evenly over the agents the log names."""
    from ..judges.shop.judge import split_item_id

    log = _log(gateway, judge_run)
    if log.empty:
        return pd.DataFrame(columns=["question", "calls", "tokens_per_call", "out_share", "usd_per_run"])
    log = log[log["status"].isin(["ok", "parse_error"])].copy()
    parts = [split_item_id(str(i)) for i in log.item_id]
    log["question"] = [p[2] for p in parts]
    log["agent"] = [p[0] for p in parts]
    log["tokens"] = log.prompt_tokens.fillna(0) + log.completion_tokens.fillna(0)
    n_agents = max(log["agent"].nunique(), 1)  # nunique skips None
    rows = []
    for q, sub in log.groupby("question", sort=True):
        tot = float(sub.tokens.sum())
        named = sub[sub["agent"].notna()]
        usd = (float(named.groupby("agent").cost_usd.sum().median()) if len(named)
               else float(sub.cost_usd.fillna(0).sum()) / n_agents)  # fmt: skip
        rows.append({"question": q, "calls": len(sub), "tokens_per_call": float(sub.tokens.median()),
                     "out_share": float(sub.completion_tokens.fillna(0).sum() / tot) if tot else np.nan,
                     "usd_per_run": usd})  # fmt: skip
    return pd.DataFrame(rows)


def tab10_latency(trajs: Sequence[TrialRecord], gateway=None, agent_runs: Mapping[str, str] | None = None,
                  backbones: Mapping[str, str] | None = None) -> pd.DataFrame:  # fmt: skip
    """Table 10: per agent, parameters active per token (packaged local models; "–" where unknown
    here), median seconds per round trip (one model call of the agent), median model calls per trial
    and median seconds per trial; ordered by per-round-trip time (scripted agents, with no model
    call, last)."""
    rows = []
    for name in dict.fromkeys(t.agent for t in trajs):
        ts = [t for t in trajs if t.agent == name]
        log = _log(gateway, (agent_runs or {}).get(name, "")) if agent_runs else pd.DataFrame()
        ok = log[log["status"].isin(["ok", "parse_error"])] if not log.empty else log
        lat = ok["model_latency_s"].astype(float) if not ok.empty else pd.Series(dtype=float)
        b = (backbones or {}).get(name)
        rows.append({"agent": name, "active": ACTIVE_PARAMS.get(b or "", "–") if b else "scripted (no model)",
                     "trials": len(ts), "s_per_round_trip": float(lat.median()) if len(lat) else np.nan,
                     "calls_per_trial": float(np.median([t.usage.get("agent", {}).get("calls", 0.0) for t in ts])),
                     "s_per_trial": float(np.median([trial_cost_s(t) for t in ts]))})  # fmt: skip
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    return df.sort_values("s_per_round_trip", na_position="last").reset_index(drop=True)


def _groups(scores: pd.DataFrame, groups: Sequence[str], kinds: Sequence[str]) -> pd.DataFrame:
    from .verifier import battery as B

    tab = B.format_table11(B.summarize(scores, kinds=kinds))
    return tab[tab["group"].isin(list(groups))].reset_index(names="key")


def tab15_outcomes(scores: pd.DataFrame, kinds: Sequence[str] = ("general",)) -> pd.DataFrame:
    """Table 15: the deterministic outcome and tool-use metrics of Table 11 per agent over its
    general shopping trials, mean ± SD (valid n); turns to goal over trials that reached it."""
    return _groups(scores, ["deterministic"], kinds)


def tab16_rubrics(scores: pd.DataFrame, kinds: Sequence[str] = ("general",)) -> pd.DataFrame:
    """Table 16: the model-graded rubrics (normalised to [0,1]) and the typed failure rates
    (per-trial macro-means over the trials each applies to) per agent, general shopping trials."""
    return _groups(scores, ["rubrics", "failures"], kinds)
