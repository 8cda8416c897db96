"""PACE metrics over a judge-sweep run table (seed 000, Section 5, Appendices C.2, D.3, E.2–E.8).

Pure functions: a run table (one row per protocol × backbone × record × repeat, judge output plus
gold columns) in, a DataFrame per (protocol, backbone) group out. No I/O and no model calls.

- :mod:`.run_table` — the shared vocabulary and :func:`prepare` (the per-row columns metrics read);
- :mod:`.spec` — :class:`MetricSpec` (sufficient statistics), the :func:`metric` registry
  (:data:`METRICS`), :func:`evaluate`;
- :mod:`.scenarios` — the PACE scenarios S0–S4: record sets and the S0 balanced accuracy;
- :mod:`.paired` — Table 4: S1 PJC, S2 J-strict, S3 J-harmonic, S4 J-strict, PACE, lift rows;
- :mod:`.diagnosis` — Table 3 closure columns, Tables 5, 6 and 28, D.3 location hit rate, false fire;
- :mod:`.leakage` — Table 20 evaluation-target leakage audit;
- :mod:`.alignment` — D.2: S_swap, the alignment gap G(q, p), per-axis GOOD–BAD score gaps;
- :mod:`.examples` — Tables 21, 26 (worked judge outputs) and 23–25 (per-backbone companions);
- :mod:`.gradient` — Figure 4 accuracy by defect tier, with the deterministic baseline;
- :mod:`.headline` — base-record bootstrap CIs and the headline Tables 3 and 4;
- :mod:`.repeats` — the judge's noise floor: agreement, α and flips between repeats beside the
  persona-swap flip rate, record/repeat variance split (issue 29 item 3).

Every metric is scored per row: a failed row (status ≠ "ok" or parse_ok false) is wrong unless its
docstring says otherwise, and cells of a PACE target a protocol does not natively cover are NaN ("–")
with ``supported`` False.
"""

from .alignment import alignment_gap, axis_score_gaps, s_swap
from .diagnosis import (
    cross_component_detect_localize,
    false_fire_rate,
    hallucinated_id_rate,
    multi_defect_location_hit_rate,
    pace_closure_average,
    persona_swap_accuracy_by_axis,
    s3_grounding,
    s4_family_location,
    tpr_specificity_breakdown,
)
from .examples import (
    PAPER_MEAN,
    category_reading_localisation,
    per_backbone_table,
    table21_judge_examples,
    table26_failure_cases,
)
from .gradient import accuracy_by_tier, tier_accuracy
from .headline import (
    TABLE3_COLUMNS,
    TABLE4_COLUMNS,
    bootstrap_ci,
    format_headline,
    headline_spec,
    headline_table,
    with_plan_counts,
)
from .leakage import leakage_audit
from .paired import lift, pace_score, s1_pjc, s2_j_strict, s3_j_harmonic, s4_j_strict
from .repeats import judge_repeats
from .run_table import (
    BY,
    LOCATIONS,
    NATIVE_TARGETS,
    SWAP_AXES,
    location_field,
    native_targets_of,
    outcome_table,
    prepare,
    usable,
    with_outcomes,
)
from .scenarios import s0_balanced_accuracy, scenario_rows, select_s0_subset
from .spec import METRICS, MetricSpec, compose, evaluate, metric

__all__ = [
    "BY", "LOCATIONS", "NATIVE_TARGETS", "SWAP_AXES", "METRICS", "MetricSpec", "metric", "compose", "evaluate",
    "prepare", "usable", "outcome_table", "with_outcomes", "native_targets_of", "location_field", "scenario_rows",
    "select_s0_subset",
    "s0_balanced_accuracy",
    "s1_pjc", "s2_j_strict", "s3_j_harmonic", "s4_j_strict", "pace_score", "lift",
    "persona_swap_accuracy_by_axis", "cross_component_detect_localize", "s3_grounding", "s4_family_location",
    "false_fire_rate", "pace_closure_average", "multi_defect_location_hit_rate", "tpr_specificity_breakdown",
    "hallucinated_id_rate",
    "leakage_audit", "judge_repeats", "accuracy_by_tier", "tier_accuracy", "s_swap", "axis_score_gaps", "alignment_gap",
    "table21_judge_examples", "table26_failure_cases", "per_backbone_table", "category_reading_localisation",
    "PAPER_MEAN",
    "bootstrap_ci", "headline_table", "headline_spec", "format_headline", "TABLE3_COLUMNS", "TABLE4_COLUMNS",
    "with_plan_counts",
]  # fmt: skip
