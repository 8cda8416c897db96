"""The ``judging`` section: the PACE judge sweep (seed 000 §4; notebooks 20 and 30)."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from ._base import Name, NonNegativeFloat, PositiveInt, Section

PROTOCOL_NAMES = ("pacejudge", "pacejudge_prefix_first", "geval", "mtbench_scalar_first", "persona_blind", "persona_aware_generic", "ares",
                  "personalens", "etapp")  # fmt: skip
"""The judge protocols (``shopbench.judges.pace.protocols.PROTOCOLS``; a test keeps them in step)."""
ProtocolName = Literal[PROTOCOL_NAMES]  # type: ignore[valid-type]


PlanPart = Literal["split", "s0", "swaps", "bad"]
"""What an LLM judge run plans to judge (``shopbench.judges.pace.sweep.PLAN_PARTS``; a union)."""


class LLMRun(Section):
    """One LLM backbone as an anytime sweep (``shopbench.llm.anytime``): which protocols, on which
    planned records (``plan``, in a fixed stratified order, capped at ``subset`` units), until
    ``llm_budget_min`` minutes of model time are spent (None: every planned unit).

    ``repeats`` (None: the section's ``repeats``) asks each record that many times; with ``temperature``
    > 0 (None: the protocol's 0) each repeat samples with its own seed, so the repeats measure the
    judge's noise floor (issue 29 item 3: notebook 20's ``pace_judge_repeats``). Inside the same
    budget a unit then costs ``repeats`` times as much, so fewer records are judged."""

    backbone: Name
    protocols: list[ProtocolName] | None = None  # None: every registered protocol
    subset: PositiveInt | None = (
        20  # cap on the planned units N (a prefix of the order); None: the whole plan
    )
    plan: list[PlanPart] = ["split"]
    llm_budget_min: NonNegativeFloat | None = None
    repeats: PositiveInt | None = None
    temperature: NonNegativeFloat | None = None


class JudgingParams(Section):
    """``judging:``. LLM runs come from ``llm_runs``, or ``llm_backbones`` × ``llm_protocols`` × ``llm_subset``."""

    split: Literal["train", "dev", "test"] = "test"
    deterministic_judges: list[Name] = [
        "local/checks",
        "local/oracle-rules",
        "local/always-bad",
        "local/random",
    ]
    deterministic_protocols: list[ProtocolName] = ["pacejudge"]
    llm_runs: list[LLMRun] | None = None
    llm_backbones: list[Name] = []
    llm_protocols: list[ProtocolName] | None = None  # None: every registered protocol
    llm_subset: PositiveInt | None = 20
    llm_budget_min: NonNegativeFloat | None = None  # per backbone, for runs built from llm_backbones
    repeats: PositiveInt = 1
    max_tokens: PositiveInt = 512

    @model_validator(mode="after")
    def _one_way_to_name_runs(self) -> JudgingParams:
        if self.llm_runs and self.llm_backbones:
            raise ValueError(
                "judging: both llm_runs and llm_backbones are given, and llm_backbones would be ignored; list "
                "the LLM judges under llm_runs (one entry per backbone), or set llm_runs: [] and keep llm_backbones"
            )
        return self

    def runs(self) -> list[LLMRun]:
        """The LLM runs: ``llm_runs`` if given, else one per backbone of ``llm_backbones``."""
        if self.llm_runs:
            return list(self.llm_runs)
        return [
            LLMRun(
                backbone=b,
                protocols=self.llm_protocols,
                subset=self.llm_subset,
                llm_budget_min=self.llm_budget_min,
            )
            for b in self.llm_backbones
        ]

    def llm_backbone_names(self) -> list[str]:
        """The LLM judges' backbones (the protocol means average these, not the reference judges)."""
        return [r.backbone for r in self.llm_runs or []] or list(self.llm_backbones)
