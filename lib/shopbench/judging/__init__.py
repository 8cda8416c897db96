"""Judging: the one judge role shared by all three papers (seed 000 §4, seed 002 §4.2-4.3, seed 003 H.4-H.5).

Public API:

- :class:`JudgeSpec` (prompt file + output contract + ``slots`` / ``interpret``), its outcomes
  :class:`Judgment` and :class:`ParseFailure`, :class:`Invalid` (a rule the schema cannot state);
- :class:`Judge` (anything with ``name`` and ``judge(items)``) and :class:`ModelJudge` (a spec asked
  through the gateway);
- :func:`judge` (registry decorator), :func:`get_judge`, :func:`judge_names`;
- :func:`load_template` (the one prompt loader) and :func:`render` (the one trajectory renderer).
"""

from .prompts import load_template
from .registry import get_judge, judge, judge_names
from .render import STYLES, Step, ToolCallView, clip_value, cut, render, steps, text_of
from .spec import (
    ERROR_KINDS,
    Invalid,
    Judge,
    JudgeSpec,
    Judgment,
    ModelJudge,
    Outcome,
    ParseFailure,
    error_kind,
    resolve_backbone,
)

__all__ = [
    "ERROR_KINDS", "Invalid", "Judge", "JudgeSpec", "Judgment", "ModelJudge", "Outcome", "ParseFailure", "STYLES",
    "Step", "ToolCallView", "clip_value", "cut", "error_kind", "get_judge", "judge", "judge_names", "load_template",
    "render", "resolve_backbone", "steps", "text_of",
]  # fmt: skip
