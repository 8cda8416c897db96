"""Judges: the one judge role shared by all three papers and each paper's judges (seed 000 §4,
seed 002 §4.2-4.3, seed 003 H.4-H.5; issue 27 "One house").

The role (this package's top level):

- :class:`JudgeSpec` (prompt file + output contract + ``slots`` / ``interpret``), its outcomes
  :class:`Judgment` and :class:`ParseFailure`, :class:`Invalid` (a rule the schema cannot state);
- :class:`Judge` (anything with ``name`` and ``judge(items)``) and :class:`ModelJudge` (a spec asked
  through the gateway);
- :func:`judge` (registry decorator), :func:`get_judge`, :func:`judge_names`;
- :func:`render` (the one trajectory renderer); prompts load through :func:`shopbench.prompts.load_template`.

Each paper's judges, as subpackages: :mod:`.pace` (PACE protocols, parsing, deterministic
baselines, the sweep), :mod:`.shop` (the shop verifier's questions), :mod:`.padme` (filter judges
and evaluators), :mod:`.tau2` (τ²-bench NL assertions).
"""

from .._lazy import lazy_exports
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
    "Step", "ToolCallView", "clip_value", "cut", "error_kind", "get_judge", "judge", "judge_names",
    "render", "resolve_backbone", "steps", "text_of",
]  # fmt: skip

# the PACE judge names notebooks use (issue 27 public API), imported on first use so that loading
# the role (``shopbench.judges.spec``) does not load the PACE protocols
_PACE_EXPORTS = {
    ".pace": ["PROTOCOLS", "majority_vote", "parse_failures", "stability", "sweep"],
    ".pace.sweep": ["by_reading", "category_reading_sweeps", "llm_sweeps"],
}
__getattr__, __dir__, _pace_names = lazy_exports(__name__, _PACE_EXPORTS, ["pace", "shop", "padme", "tau2"])
__all__ += _pace_names
