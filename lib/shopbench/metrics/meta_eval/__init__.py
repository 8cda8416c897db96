"""PADMÉ meta-evaluation metrics (seed 003 §3.2 Eq. 3–5, §5.3, App. F; Tables 3, 4, 18, 19): how well
evaluators under test prefer the better trajectory of each synthesised pair.

- :mod:`.pairwise` — Eq. 3–5 outcomes, per-evaluator accuracy with bootstrap CIs, score statistics,
  Table 18 breakdowns, Table 4 property correlations, Table 19 contamination, reward-label accuracy;
- :mod:`.repeats` — the evaluator's noise floor between runs: runs SD, score SD, preference flips, α
  (issue 29 item 3).
"""

from .pairwise import (
    AXES,
    MISSING,
    PAIR_ATTRIBUTES,
    PAPER_DOMAINS,
    TABLE4_PROPERTIES,
    TABLE4_SOURCES,
    Contamination,
    accuracy_by,
    agreement,
    contamination,
    domain_breakdown,
    evaluator_summary,
    pair_outcomes,
    pairs_frame,
    property_correlations,
    reward_label_accuracy,
    reward_pairs,
    score_statistics,
    sweep_table,
)
from .repeats import evaluator_repeats

__all__ = [
    "AXES", "PAPER_DOMAINS", "Contamination", "MISSING", "PAIR_ATTRIBUTES", "TABLE4_PROPERTIES", "TABLE4_SOURCES", "accuracy_by", "agreement",
    "contamination", "domain_breakdown", "evaluator_repeats", "evaluator_summary", "pair_outcomes", "pairs_frame", "property_correlations",
    "reward_label_accuracy", "reward_pairs", "score_statistics", "sweep_table",
]  # fmt: skip
