"""PADMÉ: steered trajectory-pair synthesis, a filter cascade and pointwise-to-pairwise meta-evaluation
(seed 003, "Preference Alignment Data Synthesis for Meta-Evaluation of LM Agent Evaluators").

Modules, in pipeline order:

* :mod:`~shopbench.padme.types` — the data model (Criterion, Task, Context, Rollout, Vote, Pair).
* :mod:`~shopbench.padme.criteria` — the H.1 criteria and loading criteria from files.
* :mod:`~shopbench.padme.cells` — the task x criterion cells with a stratified level contrast (§3.1).
* :mod:`~shopbench.padme.steering` — WriteSteer (H.2) and the offline scripted steering.
* :mod:`~shopbench.padme.sources` — trajectory sources (the Roll function).
* :mod:`~shopbench.padme.heuristics` — a lexical reference scorer (offline stand-in, not a judge of record).
* :mod:`~shopbench.judges.padme.filters` — the filter judges J_k (H.4).
* :mod:`~shopbench.padme.cascade` — Algorithm 1: generation, filtering and retries, resumable.
* :mod:`~shopbench.padme.dataset` — the pairs dataset on disk and exports for annotation / the human study.
* :mod:`~shopbench.padme.tables` — Tables 1, 6, 8, 9, 10, 20, 21 from the pairs table and call logs.
* :mod:`~shopbench.padme.study` — the human-study analysis (Section 5.2, App. C–E) on the general
  estimators of :mod:`shopbench.stats`.

The names a notebook uses are re-exported here and imported on first use (issue 27:
``from shopbench.padme import run_cascade``), so importing the package stays cheap; ``experiment``,
``tables`` and ``choices`` are public submodules. The human-study analysis (:mod:`shopbench.padme.study`,
PADMÉ's Section 5.2) is re-exported here too.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    ".cascade": ["PairStore", "run_cascade"],
    ".cells": ["contrast_counts", "make_cells"],
    ".choices": ["choices_table"],
    ".dataset": ["export_human_study_key", "pairs_table", "read_pairs_dataset", "to_annotation_pairs",
                 "write_pairs_dataset"],
    "..judges.padme.roster": ["evaluators_from_profile", "paper_table18", "properties_frame"],
    "..judges.padme.sweep": ["PairUnit", "pair_units", "reward_pair_units", "score_pairs_anytime", "score_rollouts"],
    ".experiment": ["run_synthesis", "llm_filter_stage"],
    "..judges.padme.filters": ["filter_pairs_anytime"],
    ".sources.recorded": ["load_recorded"],
    ".study": ["PADME_REPORTED", "agreement_summary", "compare_with_paper", "simulation_recovery",
                      "summary_tables", "table15_comparison", "write_summary"],
}  # fmt: skip
_SUBMODULES = ["experiment", "tables", "choices"]
__getattr__, __dir__, _names = lazy_exports(__name__, _EXPORTS, _SUBMODULES)
__all__ = [*_names, *_SUBMODULES]
