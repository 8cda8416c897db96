"""Typed profiles: one pydantic model per section of a ``params/*.yaml`` file (issue 11 §5).

:func:`validate_profile` turns the YAML mapping into a :class:`ProfileParams`; any unknown key,
wrong type or out-of-range value is a :class:`~shopbench.errors.ParamError` naming the file, the
key path and the fix. Notebooks read the typed fields (``ctx.params.padme.evaluator_runs``); the
defaults live here and nowhere else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from ._base import Section
from .backbones import BackboneEntry, as_plain, backbone_label
from .errors import RENAMED, from_validation, param_error
from .gateway import GatewayParams
from .judging import JudgingParams, LLMRun
from .notebooks import AgreementParams, AnnotateParams, BackendsParams, NotebooksParams, PaceMetricsParams
from .paceshop import PaceshopParams
from .padme import HeuristicJudgeSpec, LLMJudgeSpec, PadmeParams
from .profile import ProfileParams
from .rehearsal import RehearsalParams
from .shopsim import LLMAgentSpec, ShopsimParams, TrialCounts

__all__ = [
    "RENAMED", "AgreementParams", "AnnotateParams", "BackboneEntry", "BackendsParams", "GatewayParams",
    "HeuristicJudgeSpec", "JudgingParams", "LLMAgentSpec", "LLMJudgeSpec", "LLMRun", "NotebooksParams",
    "PaceMetricsParams", "PaceshopParams", "PadmeParams", "ProfileParams", "RehearsalParams", "Section", "ShopsimParams",
    "TrialCounts", "as_plain", "backbone_label", "param_error", "validate_profile", "validate_section",
]  # fmt: skip


def validate_profile(data: Any, file: str | Path, lines: dict[str, int] | None = None) -> ProfileParams:
    """``data`` (a loaded YAML mapping) as a :class:`ProfileParams`; ``lines`` maps key paths to lines."""
    try:
        return ProfileParams.model_validate(data)
    except ValidationError as e:
        raise from_validation(e, ProfileParams, file, lines) from None


S = TypeVar("S", bound=Section)


def validate_section(model: type[S], data: Any, where: str, file: str | Path | None = None) -> S:
    """A section given as a plain mapping (library callers and tests) validated like a profile's."""
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(data or {})
    except ValidationError as e:
        raise from_validation(e, model, file, prefix=where) from None
