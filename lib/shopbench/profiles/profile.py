"""The whole profile: every top-level key of a ``params/*.yaml`` file (issue 11 §5, issue 12 §3)."""

from __future__ import annotations

import difflib

from pydantic import field_validator, model_validator

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

    @model_validator(mode="after")
    def _padme_agents_are_backbones(self) -> ProfileParams:
        """Every ``padme.agent`` name is ``scripted``, a backbone of this profile, or a litellm model
        name (``provider/model``, checked when the run starts, as every backbone is)."""
        names = [backbone_label(e) for e in self.backbones]
        for i, m in enumerate(self.padme.agents):
            if m == "scripted" or m in names or "/" in m:
                continue
            where = "padme.agent" if isinstance(self.padme.agent, str) else f"padme.agent[{i}]"
            close = difflib.get_close_matches(m, names, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ValueError(
                f"{where}: unknown agent model '{m}'{hint}; name a backbone of this profile "
                f"({', '.join(names) or 'none listed'}), a litellm model name such as "
                "fireworks_ai/accounts/fireworks/models/gpt-oss-20b, or 'scripted'"
            )
        return self
