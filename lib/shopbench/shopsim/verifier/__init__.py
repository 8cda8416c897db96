"""The shop environment's verifier (seed 002 §4-§5): "Verification uses the strongest evidence the
harness has for each question" (§4).

Deterministic signals (this package's rule-based half):

- :mod:`.outcomes` — exact-cart success, precision, recall, goal achievement/progress, turns to goal,
  call counts, and the replay-vs-controller consistency check (§4.1);
- :mod:`.tooluse` — errored/redundant calls and empty/bad/recovered searches (§4.1);
- :mod:`.toolcalls` — tool-call correctness ``tool_call_custom`` (§4.3, App. E);
- :mod:`.battery` — the 44 metrics of Table 11, applicability, aggregation, bootstrap intervals,
  cross-judge agreement, pace and profile tables (App. I, K, L; §4.4, §5);
- :mod:`.ablation` — the retained-evidence ablation of Table 2 (§5.1).

Model-based checks: :mod:`.claims`, :mod:`.rubrics` and :mod:`.refusal`, asking the shop judge
(:mod:`shopbench.judges.shop`).
Names are imported lazily, so ``import shopbench.shopsim.verifier.outcomes`` stays light.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "outcomes": ["Outcome", "trial_outcomes", "consistency", "exact_cart", "precision", "recall", "goal_achieved",
                 "goal_progress", "turns_to_goal"],
    "tooluse": ["ToolUse", "tool_use", "tag_calls", "result_ids"],
    "toolcalls": ["ToolCallScore", "tool_call_correctness", "plan_turn", "score_turn", "NO_ARGUMENT_TOOLS"],
    "battery": ["METRICS", "Metric", "APPLICABILITY", "BY_KEY", "GROUPS", "score_trial", "score_trials", "summarize",
                "format_table11", "bootstrap_success", "bootstrap_contrast", "cross_judge", "pace_table",
                "diagnostic_channels", "profile_axes", "report_tier"],
    "ablation": ["CONDITIONS", "QUESTIONS", "MissingEvidence", "evidence_view", "ablation_answers", "ablation_table",
                 "rebuild_trajectory"],
    "rubrics": ["judged_metrics", "JUDGED_METHOD"],
    "refusal": ["refusal_metrics"],
}  # fmt: skip
_WHERE = {name: mod for mod, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
