"""The ``padme`` section: PADMÉ synthesis and meta-evaluation (seed 003; notebooks 40 and 50).

Source, filter-judge and evaluator entries are a name or a mapping, as in the YAML; the library's
builders (``shopbench.padme.experiment``, ``evaluators_from_profile``) receive them via ``given()``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Discriminator, Field, Tag, field_validator

from ._base import Count, Fraction, Name, NonNegativeFloat, PositiveInt, Section

SCRIPTED = "scripted"
EVALUATOR_PROMPT = "prompts/padme_evaluator.txt"
"""The default of ``padme.evaluator_prompt``: the H.5 prompt shipped in ``prompts/``."""
EVALUATOR_USER = "the PADMÉ evaluator (notebook 50)"
EVALUATOR_PROMPT_SLOTS = ("criterion_name", "criterion_description", "prompt", "response")
"""The placeholders an evaluator prompt must have, and the only ones it may have: what
:class:`shopbench.judges.padme.evaluators.EvaluatorJudgeSpec` fills (``slots``)."""


def check_prompt_file(value: str, required: tuple[str, ...], user: str) -> str:
    """A profile's prompt-file setting, checked when the profile loads (issue 25 item 5): the file
    exists (resolved by :func:`shopbench.prompts.prompt_file`) and, header comments aside, has exactly
    the ``required`` placeholders; else a ``ValueError`` worded "problem; fix" naming the file."""
    from ..prompts import PROMPTS_ENV, check_placeholders, prompt_file, strip_header

    path = prompt_file(value)
    env = os.environ.get(PROMPTS_ENV)
    via = f" (prompts/ is ${PROMPTS_ENV}={env})" if env and Path(value).parts[:1] == ("prompts",) else ""
    if not path.is_file():
        raise ValueError(f"no prompt file {path}{via}; give an existing file, absolute or relative to the "
                         f"repository root (the default is {EVALUATOR_PROMPT})")  # fmt: skip
    try:
        text = strip_header(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read the prompt file {path}: {e}; give a UTF-8 text file") from None
    problem = check_placeholders(text, required)
    if problem:
        raise ValueError(f"the prompt file {path}{via} {problem}; {user} fills exactly "
                         f"{', '.join('{' + s + '}' for s in required)} (see {EVALUATOR_PROMPT})")  # fmt: skip
    return value


def check_agent_list(models: list[str] | tuple[str, ...]) -> list[str]:
    """``padme.agent`` given as a list (seed 003 §5.1: three agent models, one per cell; the rule that
    deals them is :func:`shopbench.padme.agents.assign_agents`): the names, or a ``ValueError`` that
    says what is wrong and the fix. ``scripted`` is not mixed with models (the scripted agents are the
    known-answer simulated steering source; pooling them with LLM pairs would mix evidence kinds)."""
    models = [str(m).strip() for m in models]
    if not models:
        raise ValueError(
            "an empty list names no agent model; give one backbone, a list of backbones, or 'scripted'"
        )
    if any(not m for m in models):
        raise ValueError(f"an empty name in the list {models}; remove it")
    dup = sorted({m for m in models if models.count(m) > 1})
    if dup:
        raise ValueError(
            f"{dup} listed more than once; each listed model gets an equal share of the cells, so list each once"
        )
    if SCRIPTED in models and len(models) > 1:
        raise ValueError(
            "'scripted' cannot be mixed with model backbones: scripted pairs are known-answer (simulated "
            "steering) and would be pooled with the LLM pairs in one dataset; use agent: scripted, or a "
            "list of backbones only"
        )
    return models


def _by_type(*mapping_tags: str):
    """A discriminator: a string is ``name``; a mapping is the first of ``mapping_tags`` it holds as a key
    (else the last tag, whose model then names the missing or unknown key)."""

    def pick(v: Any) -> str:
        if isinstance(v, str):
            return "name"
        if isinstance(v, BaseModel):  # serialising a validated entry: its fields, as set
            v = {k: getattr(v, k) for k in type(v).model_fields}
        if isinstance(v, dict):
            for tag in mapping_tags:
                if tag in v or v.get("kind") == tag:
                    return tag
        return mapping_tags[-1]

    return Discriminator(pick)


class ShopSourceSpec(Section):
    """``{kind: shop, ...}``: the seeded shop (seed 002) as a trajectory source; unset keys take the source's defaults."""

    kind: Literal["shop"]
    n_products: PositiveInt | None = None
    catalog_seed: int | None = None
    difficulties: list[Annotated[int, Field(ge=1, le=10)]] | None = None
    min_items: PositiveInt | None = None
    max_items: PositiveInt | None = None
    tool_mode: Literal["native", "json"] | None = None
    retrieval: Literal["bm25", "tfidf", "minilm"] | None = None
    max_turns: PositiveInt | None = None


class Tau2SourceSpec(Section):
    """``{kind: tau2, domain: ..., path: ...}``: a τ²-family domain's folder (relative to the repository);
    ``domain`` defaults to retail (issue 28 item 3). ``tasks``: this source's own task count (overrides
    ``tasks_per_source``); ``retrieval``: banking_knowledge's retrieval variant. The keys after
    ``split`` are retail's only, except ``tool_mode`` and ``max_turns``."""

    kind: Literal["tau2", "tau2_retail"]
    domain: Literal["airline", "banking_knowledge", "retail", "telecom"] | None = None
    path: Name | None = None
    tasks: PositiveInt | None = None
    retrieval: Name | None = None
    split: str | None = None
    tool_mode: Literal["native", "json"] | None = None
    max_turns: PositiveInt | None = None
    fidelity: Literal["tau2", "corrected"] | None = (
        None  # tau2-bench's tools (default) or the project's fixes
    )
    reward_basis: Literal["task", "db_communicate"] | None = (
        None  # the task's basis (default) or DB x COMMUNICATE
    )
    nl_judge: Name | None = None  # None: App. C.3 omits the LLM judge; "known-answer" or a backbone
    tool_texts: Literal["tau2", "short"] | None = (
        None  # tau2-bench's tool descriptions (default) or short ones
    )


def _source_kind(v: Any) -> str:
    if isinstance(v, str):
        return "name"
    kind = (
        v.get("kind") if isinstance(v, dict) else getattr(v, "kind", None)
    )  # a mapping, or a validated spec
    return "shop" if kind == "shop" else "tau2"


SourceEntry = Annotated[
    Annotated[Name, Tag("name")]
    | Annotated[ShopSourceSpec, Tag("shop")]
    | Annotated[Tau2SourceSpec, Tag("tau2")],
    Discriminator(_source_kind),
]


class HeuristicJudgeSpec(Section):
    """``{heuristic: J1, noise: 0.1}``: an offline filter judge (its seed defaults to its position)."""

    heuristic: Name
    noise: Fraction = 0.0
    seed: int | None = None


class LLMJudgeSpec(Section):
    """``{backbone: ..., name: J2}``: a filter judge answered by a backbone through the gateway."""

    backbone: Name
    name: Name | None = None
    max_tokens: PositiveInt = 1024


class FilterAuditSpec(Section):
    """``{backbone: ..., llm_budget_min: 3}``: an LLM filter judge (H.4) asked, as one more cascade
    stage, about the kept pairs D_K in a seeded stratified order (capped at ``pairs``) until the budget."""

    backbone: Name
    name: Name | None = None
    pairs: PositiveInt | None = None
    llm_budget_min: NonNegativeFloat | None = None
    max_tokens: PositiveInt = 1024


FilterJudgeEntry = Annotated[
    Annotated[Name, Tag("name")]
    | Annotated[HeuristicJudgeSpec, Tag("heuristic")]
    | Annotated[LLMJudgeSpec, Tag("backbone")],
    _by_type("heuristic", "backbone"),
]


class EvaluatorEntry(Section):
    """A mapping entry of ``padme.evaluators`` (see :mod:`shopbench.judges.padme.evaluators`)."""

    name: Name | None = None
    backbone: Name | None = None
    properties: dict[str, Any] = {}
    in_pipeline: bool = False
    aliases: list[Name] = []
    params: dict[str, Any] = {}


EvaluatorItem = Annotated[
    Annotated[Name, Tag("name")] | Annotated[EvaluatorEntry, Tag("entry")],
    Discriminator(lambda v: "name" if isinstance(v, str) else "entry"),
]


class CriterionEntry(Section):
    name: Name
    description: Name


CriterionItem = Annotated[
    Annotated[Name, Tag("name")] | Annotated[CriterionEntry, Tag("entry")],
    Discriminator(lambda v: "name" if isinstance(v, str) else "entry"),
]

CriteriaSpec = Annotated[
    Annotated[Name, Tag("name")] | Annotated[list[CriterionItem], Tag("list")],
    Discriminator(lambda v: "name" if isinstance(v, str) else "list"),
]


class PadmeParams(Section):
    """``padme:`` sources, criteria, steering, the filter cascade and the meta-evaluation."""

    sources: list[SourceEntry] = ["shop"]
    tasks_per_source: PositiveInt = 40
    criteria: CriteriaSpec = "default"  # or a list of {name, description} / names, or a JSON/YAML path
    # θ's agent model: scripted (simulated steering), a backbone, or a list of backbones dealt one per
    # cell by a seeded balanced round-robin (seed 003 §5.1; shopbench.padme.agents)
    agent: Name | list[Name] = SCRIPTED
    user: Name = "scripted"
    steering: Name = "scripted"  # or a backbone: WriteSteer with the H.2 prompt
    filter_judges: list[FilterJudgeEntry] | None = None  # None: J1, J2 heuristic (experiment.DEFAULT_JUDGES)
    retries: Count = 2  # R
    order_swap: bool = True
    recorded: Name = "../shared/data/tau_bench_airline_trajectories"
    evaluators: list[EvaluatorItem] | None = None  # None: roster.OFFLINE_EVALUATORS
    evaluator_runs: PositiveInt = 3
    llm_evaluator_runs: PositiveInt | None = None  # None: evaluator_runs
    # LM evaluators run as anytime sweeps (shopbench.llm.anytime): pairs in a seeded stratified order,
    # capped at *_pairs (None: every pair), until *_budget_min minutes of model time per evaluator
    llm_evaluator_pairs: Count | None = 12
    llm_recorded_pairs: Count | None = 6
    llm_evaluator_budget_min: NonNegativeFloat | None = None  # per LM evaluator, synthesized pairs
    llm_recorded_budget_min: NonNegativeFloat | None = None  # per LM evaluator, recorded reward pairs
    llm_filter_judges: list[FilterAuditSpec] = []  # LLM filter judges as one more cascade stage (notebook 40)
    evaluator_max_tokens: PositiveInt = 512
    # the H.5 evaluator prompt of notebook 50 (issue 25 item 5): absolute, or relative to the repository
    # root; prompts/... is read from $SHOPBENCH_PROMPTS_DIR when that is set (the variable overrides
    # the folder); checked when the profile loads
    evaluator_prompt: Name = EVALUATOR_PROMPT
    n_boot: PositiveInt = 1000

    @field_validator("evaluator_prompt")
    @classmethod
    def _evaluator_prompt(cls, v: str) -> str:
        # a value the file sets; the default, moved by $SHOPBENCH_PROMPTS_DIR, is checked by
        # shopbench.config.load_profile (a wheel without a checkout loads profiles with no prompts/)
        return check_prompt_file(v, EVALUATOR_PROMPT_SLOTS, EVALUATOR_USER)

    @field_validator("agent")
    @classmethod
    def _agent_list(cls, v: str | list[str]) -> str | list[str]:
        return v if isinstance(v, str) else check_agent_list(v)

    @property
    def agents(self) -> list[str]:
        """``agent`` as a list (one name gives a list of one)."""
        return [self.agent] if isinstance(self.agent, str) else list(self.agent)

    @property
    def scripted_agent(self) -> bool:
        return self.agents == [SCRIPTED]

    @property
    def llm_runs(self) -> int:
        """Repeats for LLM evaluators (local models may run fewer; the SD over runs needs ≥ 2)."""
        return self.llm_evaluator_runs or self.evaluator_runs

    def run_key_fields(self) -> dict[str, Any]:
        """The settings that define a cascade run, as the file gave them (the pair store is keyed by these,
        with the seed and the library's digest: a changed source setting, e.g. a τ² ``fidelity``, or
        changed code never resumes pairs made under the old ones)."""
        given = self.given()
        keys = ("steering", "filter_judges", "agent", "user", "retries", "criteria", "sources", "order_swap")
        return {k: given.get(k) for k in keys}
