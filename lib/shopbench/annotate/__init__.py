"""Human annotation of pairs (PADMÉ Section 4 "Human Validation Protocol", Appendix D.1 and H.6).

``pairs`` (the pair model, importers, panels), ``store`` (append-only answers per annotator),
``render`` (HTML of items and documents), ``widget`` (the anywidget interface), ``serve`` (Voila
launcher), ``notebook`` (writes notebooks/60_annotate_pairs.ipynb), ``humanstudy`` (the human-study
files in and out). The names below are imported on first use.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    ".pairs": ["Pair", "PairImportError", "read_pairs", "read_pair_set", "write_pairs", "pairs_from_tau_bench", "pairs_from_paceshop",
               "synthetic_pairs", "assign_panels"],
    ".store": ["AnnotationStore", "Answer", "StoreError", "human_study_frames"],
    ".widget": ["annotate", "AnnotationSession"],
    ".notebook": ["study_pairs", "pairs_table", "answers_table", "resolve"],
    ".serve": ["in_voila", "settings"],
    ".humanstudy": ["load_human_study", "load_store_study", "export_human_study", "simulate_panels",
                    "HumanStudyFormatError"],
}  # fmt: skip
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
