"""Metrics, one package per paper; pure functions (tables in, tables out, no I/O, no model calls).

- :mod:`.pace` — PACE metrics over a judge-sweep run table (seed 000): the S0–S4 scenarios, Tables 3
  and 4 with base-record bootstrap CIs, the diagnostics; each metric a registered
  :class:`~.pace.spec.MetricSpec` (sufficient statistics: every headline bootstrap is vectorised);
- :mod:`.meta_eval` — PADMÉ meta-evaluation of evaluators (seed 003, Eq. 3–5, Tables 3, 4, 18, 19);
- :mod:`.shop` — shop-agent outcome metrics and Table 14 intervals (seed 002 §4.1, §5).

The names a notebook uses are re-exported here (``from shopbench import metrics as M;
M.headline_table(...)``) and imported on first use.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_PACE = [
    "BY", "LOCATIONS", "NATIVE_TARGETS", "SWAP_AXES", "METRICS", "MetricSpec", "metric", "compose", "evaluate",
    "prepare", "usable", "outcome_table", "with_outcomes", "native_targets_of", "location_field", "scenario_rows",
    "select_s0_subset",
    "s0_balanced_accuracy", "s1_pjc", "s2_j_strict", "s3_j_harmonic", "s4_j_strict", "pace_score", "lift",
    "persona_swap_accuracy_by_axis", "cross_component_detect_localize", "s3_grounding", "s4_family_location",
    "false_fire_rate", "pace_closure_average", "multi_defect_location_hit_rate", "tpr_specificity_breakdown",
    "hallucinated_id_rate", "leakage_audit", "judge_repeats", "accuracy_by_tier", "tier_accuracy",
    "s_swap", "axis_score_gaps", "alignment_gap", "table21_judge_examples", "table26_failure_cases",
    "per_backbone_table", "category_reading_localisation", "PAPER_MEAN",
    "bootstrap_ci", "headline_table", "headline_spec", "format_headline", "TABLE3_COLUMNS", "TABLE4_COLUMNS",
    "with_plan_counts",
]  # fmt: skip
_META_EVAL = [
    "pair_outcomes", "pairs_frame", "evaluator_summary", "score_statistics", "accuracy_by", "sweep_table",
    "property_correlations", "agreement", "contamination", "reward_pairs", "reward_label_accuracy",
    "evaluator_repeats",
]  # fmt: skip
_SHOP = ["exact_cart", "goal_achieved", "bootstrap_success", "bootstrap_contrast"]

_SUBMODULES = ["pace", "meta_eval", "shop"]  # ``from shopbench.metrics import meta_eval as ME``
__getattr__, __dir__, _names = lazy_exports(
    __name__, {".pace": _PACE, ".meta_eval": _META_EVAL, ".shop": _SHOP}, _SUBMODULES
)
__all__ = [*_names, *_SUBMODULES]
