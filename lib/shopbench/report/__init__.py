"""Tables, figures and the paper index.

A table is saved as CSV + Markdown + LaTeX with a caption; a figure as PNG + PDF with a caption.
Each carries an evidence kind (:mod:`.evidence`: measured, known-answer, reference, mixed).
Both are registered in ``outputs/<profile>/paper/artifacts.jsonl`` with their provenance
(notebook, parameter-file hash, prompt-file hashes, backbones, git commit, date), from which
:func:`build_index` writes ``index.md``, ``index.html`` and ``index.json``.
"""

from .._lazy import lazy_exports
from .artifacts import Provenance, git_commit, save_figure, save_table
from .evidence import EvidenceError
from .index import audit_index, build_index, write_run_json

# what the notebooks use besides (issue 27), imported on first use
__getattr__, __dir__, _lazy_names = lazy_exports(
    __name__, {".narrative": ["reading", "run_findings"], ".figures": ["merge_identical_series"]}
)
__all__ = [
    "EvidenceError",
    "Provenance",
    "audit_index",
    "build_index",
    "git_commit",
    "save_figure",
    "save_table",
    "write_run_json",
    *_lazy_names,
]
