"""The whole profile: every top-level key of a ``params/*.yaml`` file (issue 11 §5, issue 12 §3)."""

from __future__ import annotations

from pydantic import field_validator

from ._base import Count, Name, Section
from .backbones import Backbone, backbone_label
from .gateway import GatewayParams
from .judging import JudgingParams
from .notebooks import NotebooksParams
from .paceshop import PaceshopParams
from .padme import PadmeParams
from .rehearsal import RehearsalParams
from .shopsim import ShopsimParams


class ProfileParams(Section):
    """A validated profile. ``profile`` is a label only: outputs go to ``outputs/<file stem>/``."""

    profile: Name | None = None
    seed: Count = 0
    backbones: list[Backbone] = []
    gateway: GatewayParams = GatewayParams()
    notebooks: NotebooksParams = NotebooksParams.model_validate({})
    paceshop: PaceshopParams = PaceshopParams()
    judging: JudgingParams = JudgingParams()
    shopsim: ShopsimParams = ShopsimParams()
    padme: PadmeParams = PadmeParams()
    rehearsal: RehearsalParams | None = None  # run against the local provider server (issue 14 §3)

    @field_validator("backbones")
    @classmethod
    def _distinct_names(cls, entries: list) -> list:
        names = [backbone_label(e) for e in entries]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate backbone names {dup}; give each a distinct 'name'")
        return entries
