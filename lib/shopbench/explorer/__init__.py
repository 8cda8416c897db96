"""The results explorer (issue 16): from a headline cell to the records and judge outputs behind it.

``shopbench.explore(profile)`` (one line in any notebook, or ``notebooks/90_explore.ipynb``) shows
PACEShop cells → judge rows → one record, shop trials turn by turn, and PADMÉ pairs side by side.
It reads what the pipeline wrote under ``outputs/<profile>/data`` and never calls a model.

The selection logic is pure and tested: :mod:`.results` (finding and reading the files),
:mod:`.pace` (cell → rows, filters, two-judge disagreements, export as annotation pairs),
:mod:`.shop` (trial steps, reveal schedule, turn flags), :mod:`.padme` (pair views, votes,
evaluator scores); :mod:`.widget` is the ipywidgets layer on top.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    ".results": ["Results", "open_results", "MissingResults"],
    ".pace": [
        "cell_rows",
        "headline_values",
        "filter_rows",
        "filter_options",
        "disagreements",
        "export_pairs",
    ],
    ".shop": ["trial_steps", "reveal_schedule", "turn_flags", "trial_index"],
    ".padme": ["pairs_index", "votes_table", "evaluator_table", "pair_summary"],
    ".widget": ["explore", "Explorer", "for_display"],
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
