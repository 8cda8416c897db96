"""Tables, figures and the paper index.

A table is saved as CSV + Markdown + LaTeX with a caption; a figure as PNG + PDF with a caption.
Both are registered in ``outputs/<profile>/paper/artifacts.jsonl`` with their provenance
(notebook, parameter-file hash, prompt-file hashes, backbones, git commit, date), from which
:func:`build_index` writes ``index.md`` and ``index.html``.
"""

from .artifacts import Provenance, git_commit, save_figure, save_table
from .index import build_index, write_run_json

__all__ = ["Provenance", "build_index", "git_commit", "save_figure", "save_table", "write_run_json"]
