"""The ``shopsim`` section: the shop environment sweep (seed 002 §3-5; notebook 80)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ._base import Count, Name, PositiveInt, Section

SCRIPTED_AGENT_NAMES = ("competent", "over_purchaser", "under_actor", "phantom", "embellisher", "eager",
                        "censoring", "asker")  # fmt: skip
"""The scripted reference agents (``shopbench.shopsim.agents.SCRIPTED_AGENTS``; a test keeps them in step)."""


class TrialCounts(Section):
    """Trials per kind. The sweep's defaults are seed 002's 160 trials per agent (100/50/10)."""

    general: Count = 100
    grocery: Count = 50
    refusal: Count = 10

    def counts(self) -> dict[str, int]:
        return {"general": self.general, "grocery": self.grocery, "refusal": self.refusal}


class LLMAgentSpec(Section):
    """An LLM shopping agent on a difficulty-stratified subset of the sweep's scenarios.

    ``llm_budget_min`` sizes the agent's trials by time (issue 13 §4): the planned trials (``trials``)
    run in a fixed seeded difficulty-stratified order and no new trial starts once the agent's
    finished trials have spent the budget (model time, so a cached rerun stops at the same place); a
    rerun resumes, a larger budget extends the same order. ``None``: every planned trial."""

    backbone: Name
    tool_mode: Literal["native", "json", "compact"] = "native"
    name: Name | None = None
    max_tokens: PositiveInt = 512
    trials: TrialCounts | None = None  # None: the sweep's default counts; else only the kinds given
    llm_budget_min: Annotated[float, Field(gt=0)] | None = None

    def trial_counts(self) -> dict[str, int]:
        """Trials per kind for this agent: the kinds the file names (all three when it names none)."""
        if self.trials is None:
            return TrialCounts().counts()
        return {k: int(v) for k, v in self.trials.given().items()}


class NoiseAgentSpec(Section):
    """The LLM agent of the noise-floor plan: it samples (``temperature`` > 0) with the agent seed."""

    backbone: Name
    tool_mode: Literal["native", "json", "compact"] = "compact"
    max_tokens: PositiveInt = 200
    temperature: Annotated[float, Field(gt=0, le=2)] = 0.7
    name: Name | None = None


class NoisePlan(Section):
    """Notebook 80's noise floor (issue 29 item 4): ``tasks`` general scenarios (difficulty-stratified),
    each played on the crossed seeds ``agent_seeds`` × ``user_seeds`` by ``llm_agent`` and on the user
    seeds alone by the scripted agents (deterministic: their agent seed is fixed by construction)."""

    tasks: PositiveInt = 20
    agent_seeds: PositiveInt = 2
    user_seeds: PositiveInt = 2
    llm_agent: NoiseAgentSpec | None = None
    scripted_agents: list[Literal[SCRIPTED_AGENT_NAMES]] = list(SCRIPTED_AGENT_NAMES)  # type: ignore[valid-type]
    n_boot: PositiveInt = 2000


class ShopsimParams(Section):
    """``shopsim:`` catalog, scenarios, agents, customer and judges."""

    n_products: PositiveInt = 10_000
    catalog: Name = "synthetic"  # or a product file (JSONL of ShopProduct, or DummyJSON products.json)
    catalog_seed: int = 0
    seed: int | None = None  # the scenarios' seed; None: the profile's seed
    retrieval: Literal["bm25", "tfidf", "minilm"] = "bm25"
    # used, and said so in notebook 80, when `retrieval: minilm` cannot load (the [minilm] extra is absent)
    retrieval_fallback: Literal["bm25", "tfidf"] | None = None
    trials: TrialCounts = TrialCounts()
    scripted_agents: list[Literal[SCRIPTED_AGENT_NAMES]] = list(SCRIPTED_AGENT_NAMES)  # type: ignore[valid-type]
    llm_agents: list[LLMAgentSpec] = []
    user: Name = "scripted"  # or a backbone: the LLM customer
    judge: Name = "deterministic"  # or a backbone: the LLM judge
    second_judge: Name | None = None  # a backbone: App. K cross-judge agreement
    second_judge_trials: Count = 20
    ablation_trials: Count = 40
    n_boot: PositiveInt = 6000
    noise: NoisePlan | None = None  # issue 29 item 4: the noise-floor plan (None: no such section)
