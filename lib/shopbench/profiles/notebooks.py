"""The ``notebooks`` section: settings of one notebook, under the notebook's name.

Each pipeline notebook has its own model; a notebook without settings has an empty one, so a key
under it (or a misspelt notebook name) is an error, not a silently ignored value.
"""

from __future__ import annotations

from pydantic import Field

from ._base import Fraction, Name, PositiveInt, Section


class NoSettings(Section):
    """A notebook that reads no settings of its own."""


class BackendsParams(Section):
    """``notebooks.00_backends``: the round-trip calls' token limit."""

    max_tokens: PositiveInt = 48


class PaceMetricsParams(Section):
    """``notebooks.30_pace_metrics``: base-record bootstrap resamples per CI (was ``n_resamples``)."""

    n_boot: PositiveInt = 2000


class AnnotateParams(Section):
    """``notebooks.60_annotate_pairs``: annotator panels, ``{panel name: [annotator ids]}``."""

    panels: dict[Name, list[Name]] | None = None


class AgreementParams(Section):
    """``notebooks.70_agreement`` (seed 003 §4, App. D): bootstrap and permutation sizes."""

    n_boot: PositiveInt = 2000
    n_perm: PositiveInt = 100_000  # the paper: 100,000 shuffles
    sim_alpha: Fraction = 0.35  # α of the simulated panels when the human study is absent


class NotebooksParams(Section):
    """Per-notebook settings, keyed by the notebook's name in ``notebooks/pipeline.yaml``."""

    backends: BackendsParams = Field(BackendsParams(), alias="00_backends")
    paceshop_build: NoSettings = Field(NoSettings(), alias="10_paceshop_build")
    pace_judge_sweep: NoSettings = Field(NoSettings(), alias="20_pace_judge_sweep")
    pace_metrics: PaceMetricsParams = Field(PaceMetricsParams(), alias="30_pace_metrics")
    padme_synthesis: NoSettings = Field(NoSettings(), alias="40_padme_synthesis")
    padme_meta_eval: NoSettings = Field(NoSettings(), alias="50_padme_meta_eval")
    annotate_pairs: AnnotateParams = Field(AnnotateParams(), alias="60_annotate_pairs")
    agreement: AgreementParams = Field(AgreementParams(), alias="70_agreement")
    shop_agents: NoSettings = Field(NoSettings(), alias="80_shop_agents")
    explore: NoSettings = Field(NoSettings(), alias="90_explore")
