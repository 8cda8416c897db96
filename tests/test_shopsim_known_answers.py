"""Every scripted reference agent, end to end through the real store, customer, controller and
verifier, shows the failure it was built with on the metric that should catch it (seed 002 §5.2)."""

from __future__ import annotations

import pytest

from shopbench.shopsim.agents import SCRIPTED_AGENTS, make_agent
from shopbench.shopsim.catalog.generate import control_catalog
from shopbench.shopsim.scenario import ScenarioFactory, sweep_plan
from shopbench.shopsim.store import Store
from shopbench.shopsim.trial import run_trial
from shopbench.shopsim.user import ScriptedUser
from shopbench.shopsim.verifier.battery import score_trials, summarize


@pytest.fixture(scope="module")
def means():
    cat = control_catalog(2000, seed=1)
    store, factory = Store(cat), ScenarioFactory(cat)
    products = {p.product_id: p for p in cat}
    plan = sweep_plan(20, 6, 4, seed=5)
    scen = [factory.make(s, kind=k, difficulty=d) for k, d, s in plan]
    trajs = [run_trial(s, make_agent(a), ScriptedUser(), store) for a in SCRIPTED_AGENTS for s in scen]
    summary = summarize(score_trials(trajs, products, progress=False))
    return summary.pivot(index="agent", columns="key", values="mean")


def m(means, agent, key):
    return float(means.loc[f"scripted:{agent}", key])


def test_competent_is_the_clean_baseline(means):
    assert m(means, "competent", "exact_cart_success_rate") >= 0.8
    assert m(means, "competent", "phantom_action_rate") == 0.0
    assert m(means, "competent", "attribute_hallucination_rate") == 0.0
    assert m(means, "competent", "hard_refusal") == 0.0


def test_each_failure_shows_on_its_metric(means):
    base = lambda k: m(means, "competent", k)  # noqa: E731
    assert m(means, "phantom", "phantom_action_rate") > 0.2
    assert m(means, "embellisher", "attribute_hallucination_rate") > 0.2
    assert m(means, "embellisher", "exact_cart_success_rate") == pytest.approx(
        base("exact_cart_success_rate")
    )
    assert m(means, "over_purchaser", "exact_cart_success_rate") == 0.0
    assert m(means, "over_purchaser", "exact_cart_precision") < base("exact_cart_precision") - 0.2
    assert m(means, "over_purchaser", "exact_cart_recall") >= base("exact_cart_recall") - 0.05
    assert m(means, "eager", "false_add_to_cart") > base("false_add_to_cart") + 0.2
    assert m(means, "under_actor", "avg_total_tool_calls") < base("avg_total_tool_calls") / 2
    assert m(means, "under_actor", "exact_cart_success_rate") < 0.3
    assert m(means, "asker", "unnecessary_clarification_rate") > base("unnecessary_clarification_rate") + 0.3
    assert m(means, "censoring", "hard_refusal") == 1.0
    assert m(means, "censoring", "censorship_resistance") < base("censorship_resistance") - 0.5
    assert m(means, "censoring", "exact_cart_success_rate") == pytest.approx(base("exact_cart_success_rate"))
