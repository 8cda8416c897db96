"""Issue 15, seed 002: the run-level tables of ``shopsim/reporting.py`` (Tables 8, 9, 10, 15, 16) on
hand-built trial records and call logs whose expected values are worked out by hand in the comments.

The trial records are the project's :class:`TrialRecord`; the call-log rows are written with the
gateway's own :class:`CallLog` (its ``COLUMNS``) where a :class:`Gateway` reads them back."""

from __future__ import annotations

import numpy as np
import pytest

from shopbench.llm import Gateway
from shopbench.llm.calllog import COLUMNS, CallLog
from shopbench.shopsim import reporting as R
from shopbench.shopsim.replay import final_cart
from shopbench.shopsim.types import (
    Directive,
    GoalItem,
    Scenario,
    ShopProduct,
    ToolCall,
    ToolEvent,
    TrialRecord,
    Turn,
    UserReply,
)
from shopbench.shopsim.verifier import battery

LLM = "llm:local/m"  # an LLM agent's name holds a "/" (experiment.agent_plans: f"llm:{backbone}")
FAST = "llm:local/fast"
SCRIPTED = "scripted-a"


# --- builders --------------------------------------------------------------------------------------
def add(pid: str, total: int, q: int = 1) -> tuple[ToolCall, dict]:
    return ToolCall("add_to_cart", {"product_id": pid, "quantity": q}), {"product_id": pid, "quantity": total}


def search(query: str, ids: list[str]) -> tuple[ToolCall, dict]:
    return ToolCall("search_products", {"query": query}), {"results": [{"product_id": i} for i in ids]}


def trial(agent: str, kind: str, seed: int, items, turns, *, usage=None, wall_s: float = 0.0,
          termination: str = "max_turns") -> TrialRecord:  # fmt: skip
    """items: [(pid, qty, category)]; turns: one list of (call, result) events per agent turn."""
    sc = Scenario(seed=seed, kind=kind, difficulty=3, tier="direct", breadth=1,
                  items=tuple(GoalItem(p, q, c) for p, q, c in items), persona={}, max_turns=10, style="linear")  # fmt: skip
    ts = [Turn(i, Directive(i, [], []), UserReply("", 1, "hi", False, None, []), agent_message="ok",
               events=[ToolEvent(i, r, c, res) for r, (c, res) in enumerate(evs)]) for i, evs in enumerate(turns)]  # fmt: skip
    t = TrialRecord(sc, agent, "sim", "be helpful", ts, termination, {}, {}, usage=usage or {}, wall_s=wall_s)
    t.final_cart = final_cart(t)
    return t


def tokens(p: int, c: int, calls: int = 0, model_s: float = 0.0) -> dict:
    return {"agent": {"prompt_tokens": float(p), "completion_tokens": float(c), "calls": float(calls),
                      "model_s": model_s}}  # fmt: skip


def write_log(gw: Gateway, run_id: str, rows: list[dict]) -> None:
    """Call-log rows as the gateway writes them (every column; unnamed ones empty)."""
    base = dict.fromkeys(COLUMNS) | {"run_id": run_id, "status": "ok", "cost_usd": 0.0, "cache_hit": False}
    CallLog(gw.log_path(run_id)).append([base | r for r in rows])


def row(
    item_id: str, p: int, c: int, cost: float = 0.0, latency: float | None = None, status: str = "ok"
) -> dict:
    return {"item_id": item_id, "prompt_tokens": p, "completion_tokens": c, "cost_usd": cost,
            "model_latency_s": latency, "status": status}  # fmt: skip


@pytest.fixture
def gw(tmp_path):
    return Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)


@pytest.fixture
def runs(gw):
    """Five trials: the scripted agent's general-1, general-2 and grocery-4 (no model tokens), the LLM
    agent's general-5 and general-6, with the simulator's, the judge's and the agents' call logs."""
    trajs = [
        trial(SCRIPTED, "general", 1, [("A", 1, "shoes")], [[add("A", 1)]], wall_s=1.0),
        trial(SCRIPTED, "general", 2, [("B", 1, "shirts")], [[add("B", 1)]], wall_s=2.0),
        trial(SCRIPTED, "grocery", 4, [("A", 1, "shoes")], [[add("A", 1)]], wall_s=6.0),
        trial(LLM, "general", 5, [("A", 1, "shoes")], [[add("A", 1)]], usage=tokens(1000, 200, 3, 6.0), wall_s=10.0),
        trial(LLM, "general", 6, [("A", 1, "shoes")], [[add("A", 1)]], usage=tokens(3000, 400, 5, 8.0), wall_s=2.0),
        trial(FAST, "general", 7, [("A", 1, "shoes")], [[add("A", 1)]], usage=tokens(10, 10, 1, 0.5), wall_s=0.5),
    ]  # fmt: skip
    write_log(gw, "user/llm", [row("general-5:user:0", 100, 50), row("general-5:user:1", 100, 50),
                               row("general-6:user:0", 300, 100)])  # fmt: skip
    write_log(gw, "judge", [
        row(f"{LLM}/general-5/rubric/response_helpful", 500, 100, 0.01),
        row(f"{LLM}/general-5/toolcalls", 400, 100, 0.02),
        row(f"{LLM}/general-6/rubric/response_helpful", 700, 300, 0.03),
        row(f"{LLM}/general-6/toolcalls", 0, 0, 0.0, status="error"),  # a failed call: not a Table 9 call
        row(f"{SCRIPTED}/general-1/rubric/response_helpful", 200, 50, 0.005),
        row("attributes/0123456789ab", 1000, 0, 0.1),  # content-hashed: shared by trials, no agent
    ])  # fmt: skip
    write_log(gw, "agent/m", [row("general-5:r0", 1, 1, latency=1.0), row("general-5:r1", 1, 1, latency=3.0),
                              row("general-6:r0", 1, 1, latency=2.0),
                              row("general-6:r1", 0, 0, latency=100.0, status="error")])  # fmt: skip
    write_log(gw, "agent/fast", [row("general-7:r0", 1, 1, latency=0.5)])
    return trajs


# --- Table 8 ---------------------------------------------------------------------------------------
def test_tab8_mean_tokens_per_trial_by_role(gw, runs):
    """Table 8: "Mean tokens per trial (thousands), averaged over the eight-model sweep. Median per-trial
    totals run to about 146K tokens for a general shopping trial"; App. G: "The agent under test accounts
    for more tokens per trial than the user simulator and judge combined"."""
    t = R.tab8_tokens(runs, gw, {LLM: "user/llm", SCRIPTED: "user/none", FAST: "user/none"}, "judge")
    t = t.set_index(["agent", "kind"])
    llm = t.loc[(LLM, "general")]
    # agent: (1000+200, 3000+400) → 1.2k, 3.4k; simulator: (100+50)*2 = 0.3k, 300+100 = 0.4k;
    # judge: (500+100)+(400+100) = 1.1k, 700+300 = 1.0k (the failed call has no tokens)
    assert llm["trials"] == 2
    assert llm["agent_k"] == pytest.approx(2.3) and llm["simulator_k"] == pytest.approx(0.35)
    assert llm["judge_k"] == pytest.approx(1.05)
    # totals 2.6k and 4.8k: mean and median 3.7k
    assert llm["total_k"] == pytest.approx(3.7) and llm["median_total_k"] == pytest.approx(3.7)
    s = t.loc[(SCRIPTED, "general")]
    # a scripted agent makes no model call; its judge tokens: 0.25k on general-1, 0 on general-2
    assert (s["trials"], s["agent_k"], s["simulator_k"]) == (2, 0.0, 0.0)
    assert s["judge_k"] == pytest.approx(0.125) and s["median_total_k"] == pytest.approx(0.125)
    assert t.loc[(SCRIPTED, "grocery"), "trials"] == 1 and t.loc[(SCRIPTED, "grocery"), "total_k"] == 0.0
    assert t.loc[(FAST, "general"), "agent_k"] == pytest.approx(0.02)
    # App. G's usage table joins the judge's calls to trials the same way: general-5's 500 + 400 input
    from shopbench.shopsim.experiment import usage_table

    use = usage_table(runs, gw, judge_runs={"judge": "judge"}).set_index(["agent", "trial_id"])
    assert use.loc[(LLM, "general-5"), "judge_prompt_tokens"] == 900.0
    assert use.loc[(LLM, "general-6"), "judge_cost_usd"] == pytest.approx(0.03)
    # no call logs at all: the agent's own tokens only
    bare = R.tab8_tokens(runs).set_index(["agent", "kind"])
    assert bare.loc[(LLM, "general"), "total_k"] == pytest.approx(2.3)
    assert R.tab8_tokens([]).empty


# --- Table 9 ---------------------------------------------------------------------------------------
def test_tab9_judge_cost_per_question(gw, runs):
    """Table 9: "Per-rubric judge cost, median over the eight-model sweep. Tokens/call is median input
    plus output per judge call; Out. share is the generated fraction, which costs more per token;
    USD/run is the median cost across a 160-trial run"."""
    t = R.tab9_judge_cost(gw, "judge").set_index("question")
    assert list(t.index) == ["attributes", "rubric/response_helpful", "toolcalls"]
    h = t.loc["rubric/response_helpful"]
    # calls: 600, 1000, 250 tokens → median 600; generated 100+300+50 = 450 of 1850
    assert h["calls"] == 3 and h["tokens_per_call"] == 600.0
    assert h["out_share"] == pytest.approx(450 / 1850)
    # per agent's run: LLM 0.01 + 0.03 = 0.04, scripted 0.005 → median 0.0225
    assert h["usd_per_run"] == pytest.approx(0.0225)
    tc = t.loc["toolcalls"]  # the failed call is left out
    assert (tc["calls"], tc["tokens_per_call"], tc["out_share"]) == (1, 500.0, pytest.approx(0.2))
    assert tc["usd_per_run"] == pytest.approx(0.02)
    # attribute labels are shared across agents (content-hashed item ids): their cost spread evenly
    # over the agents the log names (2) → 0.1 / 2
    at = t.loc["attributes"]
    assert (at["calls"], at["tokens_per_call"], at["out_share"]) == (1, 1000.0, 0.0)
    assert at["usd_per_run"] == pytest.approx(0.05)
    write_log(gw, "judge-failed", [row(f"{LLM}/general-5/toolcalls", 0, 0, status="error")])
    assert R.tab9_judge_cost(gw, "judge-failed").empty
    assert list(R.tab9_judge_cost(gw, "no-such-run").columns) == [
        "question",
        "calls",
        "tokens_per_call",
        "out_share",
        "usd_per_run",
    ]


def test_judge_item_ids_split_with_slashes_in_the_agent_name():
    """The judge's item ids are ``<agent>/<trial>/<question>`` (``rubric/<name>`` for a rubric); an LLM
    agent's name holds a "/" (``llm:local/schema-sampler``)."""
    from shopbench.judges.shop.judge import split_item_id

    assert split_item_id("llm:local/m/general-5/rubric/response_helpful") == (
        LLM,
        "general-5",
        "rubric/response_helpful",
    )
    assert split_item_id("competent/grocery-3/toolcalls") == ("competent", "grocery-3", "toolcalls")
    assert split_item_id("attributes/0123456789ab") == (None, None, "attributes")
    assert split_item_id("odd") == (None, None, "odd")


# --- Table 10 --------------------------------------------------------------------------------------
def test_tab10_latency_is_ordered_by_round_trip(gw, runs):
    """Table 10: "Agent latency, ordered by per-round-trip time. Active is the rounded number of
    parameters activated per token reported in first-party model documentation"."""
    t = R.tab10_latency(runs, gw, {LLM: "agent/m", FAST: "agent/fast"},
                        {LLM: "llamacpp/qwen2.5-coder-1.5b-instruct", FAST: "local/fast"})  # fmt: skip
    # round trips: fast 0.5 s; m median(1, 3, 2) = 2 s (the failed call is left out); scripted: none, last
    assert list(t["agent"]) == [FAST, LLM, SCRIPTED]
    r = t.set_index("agent")
    assert r.loc[FAST, "s_per_round_trip"] == 0.5 and r.loc[LLM, "s_per_round_trip"] == 2.0
    assert np.isnan(r.loc[SCRIPTED, "s_per_round_trip"])
    assert r.loc[LLM, "active"] == "1.5B (dense)" and r.loc[FAST, "active"] == "–"
    assert r.loc[SCRIPTED, "active"] == "scripted (no model)"
    # calls per trial: median(3, 5) = 4; seconds per trial: median(max(10, 6), max(2, 8)) = 9
    assert r.loc[LLM, "calls_per_trial"] == 4.0 and r.loc[LLM, "s_per_trial"] == 9.0
    assert r.loc[SCRIPTED, "trials"] == 3 and r.loc[SCRIPTED, "s_per_trial"] == 2.0  # wall times 1, 2, 6


# --- Tables 15 and 16 ------------------------------------------------------------------------------
PRODUCTS = {p: ShopProduct(p, f"Title {p}", "Brand", cat, 10.0, 10, f"About {p}")
            for p, cat in [("A", "shoes"), ("B", "shirts"), ("C", "hats"), ("X", "shoes")]}  # fmt: skip


class YesJudge:
    """Answers the §4.3 tool-call questions with "justified" (no model)."""

    name = "yes"

    def tool_call_questions(self, questions):
        return [True for _ in questions]

    def judge(self, items):
        from shopbench.judges import Judgment

        return [Judgment(self.name, None, [True for _ in it.questions]) for it in items]


# judged values per trial (rubrics in [0,1], failure rates; None = the rate does not apply)
JUDGED = {
    "general-1": {"response_helpful": 0.25, "phantom_action_rate": 0.0},
    "general-2": {"response_helpful": 0.75, "phantom_action_rate": 1.0},
    "general-3": {"response_helpful": 0.5, "phantom_action_rate": None},
    "grocery-4": {"response_helpful": 0.0, "phantom_action_rate": 1.0},
    "general-5": {"response_helpful": 1.0, "phantom_action_rate": 0.0},
}


@pytest.fixture
def scores(monkeypatch):
    def judged_metrics(t, products, judge, errors=None):
        return dict.fromkeys(battery.SHOPPING_JUDGED, 0.5) | JUDGED[t.trial_id]

    monkeypatch.setattr(battery, "_judged_functions", lambda: (judged_metrics, None, {}))
    trajs = [
        # A×1 added in turn 1: goal met at turn 1, exact
        trial(SCRIPTED, "general", 1, [("A", 1, "shoes")], [[add("A", 1)]], termination="goal_met"),
        # B×2: a search, then both added in turn 2: goal met at turn 2, exact
        trial(SCRIPTED, "general", 2, [("B", 2, "shirts")], [[search("shirt", ["B"])], [add("B", 2, 2)]],
              termination="goal_met"),
        # C×1 wanted, X added: never met, precision 0, recall 0
        trial(SCRIPTED, "general", 3, [("C", 1, "hats")], [[add("X", 1)]]),
        # a grocery trial (met): out of Tables 15/16 unless asked for
        trial(SCRIPTED, "grocery", 4, [("A", 1, "shoes")], [[add("A", 1)]], termination="goal_met"),
        # A×1 wanted, 2 added: goal met (at least the quantity), not exact; precision 1/2, recall 1
        trial(LLM, "general", 5, [("A", 1, "shoes")], [[add("A", 2, 2)]], termination="goal_met"),
    ]  # fmt: skip
    return battery.score_trials(trajs, PRODUCTS, judge=YesJudge(), progress=False)


def test_tab15_outcomes_over_general_trials(scores):
    """Table 15: "Outcome and tool-use metrics over 100 shopping trials per model. Turns to goal
    averages only over trials that reached the goal"."""
    t = R.tab15_outcomes(scores).set_index("key")
    assert set(t["group"]) == {"deterministic"}
    assert list(t.index) == [m.key for m in battery.METRICS if m.group == "deterministic"]
    # goal met on general-1 and -2, not -3: 2/3, sample SD of (1, 1, 0) = 0.577
    assert t.loc["goal_rate", SCRIPTED] == "0.667 ± 0.577 (3)"
    assert t.loc["exact_cart_success_rate", SCRIPTED] == "0.667 ± 0.577 (3)"
    # turns to goal: 1 and 2 over the two trials that met it (general-3 does not count)
    assert t.loc["avg_turns_to_goal", SCRIPTED] == "1.500 ± 0.707 (2)"
    assert t.loc["exact_cart_precision", LLM] == "0.500 ± — (1)"
    assert (
        t.loc["goal_rate", LLM] == "1.000 ± — (1)"
        and t.loc["exact_cart_success_rate", LLM] == "0.000 ± — (1)"
    )
    with_grocery = R.tab15_outcomes(scores, kinds=("general", "grocery")).set_index("key")
    assert with_grocery.loc["goal_rate", SCRIPTED] == "0.750 ± 0.500 (4)"


def test_tab16_rubrics_and_failure_rates_are_macro_means(scores):
    """Table 16: "Model-graded rubrics and failure rates. Rubrics are normalized to [0,1], higher better.
    Failure rates are per-trial macro-means over the trials to which each applies, lower better"."""
    t = R.tab16_rubrics(scores).set_index("key")
    assert list(t.index) == [m.key for m in battery.METRICS if m.group in ("rubrics", "failures")]
    # response_helpful on general-1..3: mean(0.25, 0.75, 0.5) = 0.5, SD 0.25
    assert t.loc["response_helpful", SCRIPTED] == "0.500 ± 0.250 (3)"
    # phantom actions apply to general-1 and -2 only: mean(0, 1) = 0.5 over 2 trials, not 1/3 over 3
    assert t.loc["phantom_action_rate", SCRIPTED] == "0.500 ± 0.707 (2)"
    assert t.loc["response_helpful", LLM] == "1.000 ± — (1)"
    g = R.tab16_rubrics(scores, kinds=("grocery",)).set_index("key")
    assert g.loc["phantom_action_rate", SCRIPTED] == "1.000 ± — (1)" and LLM not in g.columns
