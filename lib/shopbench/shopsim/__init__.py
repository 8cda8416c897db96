"""The shop environment (seed 002, "environment-grounded e-commerce agents"): a seeded control
catalog, scenarios from one integer seed, a storefront with eight tools, scripted and model-backed
agents and customers, the trial controller, the sweep, and the verifier (:mod:`.verifier`).

A notebook typically does::

    from shopbench.shopsim import Store, ScenarioFactory, control_catalog, make_agent, ScriptedUser, run_trial
    catalog = control_catalog(1000, seed=0)
    traj = run_trial(ScenarioFactory(catalog).make(7), make_agent("competent"), ScriptedUser(), Store(catalog))

Names are imported on first use, so ``import shopbench.shopsim`` stays light and reads no prompt
file (prompts load when an agent or customer is built: :func:`shopbench.prompts.load_prompt`).
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    ".types": ["CONTRACT_VERSION", "TERMINATION_REASONS", "AgentStep", "GoalItem", "Scenario", "ShopProduct",
               "ToolCall", "ToolEvent", "TrialRecord", "Turn", "Variant"],
    ".catalog.generate": ["control_catalog"],
    ".catalog.files": ["load_products", "save_products"],
    ".catalog.table": ["catalog_table"],
    ".scenario": ["ScenarioFactory", "make_scenario", "sweep_plan"],
    ".registry": ["TOOL_NAMES", "TOOL_SPECS"],
    ".store": ["Store"],
    ".agents": ["SCRIPTED_AGENTS", "LLMAgent", "ScriptedAgent", "default_system_prompt", "make_agent"],
    ".user": ["LLMUser", "ScriptedUser"],
    ".trial": ["run_trial"],
    ".sweep": ["TrajectoryStore", "run_budgeted", "run_sweep"],
    ".experiment": ["agent_plans", "build_environment", "llm_agent_factory", "make_judge", "make_user",
                    "plan_scenarios", "run_plan",
                    "stratified_order", "usage_table"],
    ".choices": ["choices_table"],
    ".compact": ["COMPACT_SCHEMA"],
    ".reporting": ["ended_on", "llm_agent_table", "tab8_tokens", "tab9_judge_cost", "tab10_latency",
                   "tab15_outcomes", "tab16_rubrics"],
    ".transcript": ["render_journey"],
    ".replay": ["final_cart", "replay"],
}  # fmt: skip
# modules a notebook uses as a whole (issue 27: ``from shopbench.shopsim import verifier``)
_SUBMODULES = ["experiment", "reporting", "verifier"]
__getattr__, __dir__, _names = lazy_exports(__name__, _EXPORTS, _SUBMODULES)
__all__ = [*_names, *_SUBMODULES]
