"""One progress bar for the whole workbench (issue 16 §5).

Interactive use (JupyterLab, a terminal) gets tqdm's usual bar: a widget in a notebook, text in a
terminal. A notebook executed by the pipeline (papermill, no frontend) cannot update a widget: its
saved copy would show a bar frozen at 0 %. The pipeline therefore sets ``SHOPBENCH_PROGRESS=text``
for its kernels, and bars are then plain text on stdout, updated at most every few seconds, so the
executed notebook keeps the finished bar (calls done, rate, elapsed time) as its last line.

``SHOPBENCH_PROGRESS=off`` hides every bar. A loop of fewer than ``min_total`` steps (default 2, so
the one-call runs of an agent loop) draws none: one bar per call is noise, not progress.
"""

from __future__ import annotations

import os
import sys
from typing import Any

ENV = "SHOPBENCH_PROGRESS"
TEXT_MININTERVAL_S = 5.0


def mode() -> str:
    """``"auto"`` (widget in a notebook, text in a terminal), ``"text"`` or ``"off"``."""
    value = os.environ.get(ENV, "auto").strip().lower()
    return value if value in ("auto", "text", "off") else "auto"


def tqdm(iterable: Any = None, *, total: int | float | None = None, min_total: int = 2, **kw: Any) -> Any:
    """A tqdm bar that follows :func:`mode`; same arguments as ``tqdm.tqdm``."""
    n = total
    if n is None and iterable is not None and hasattr(iterable, "__len__"):
        n = len(iterable)
    m = mode()
    if m == "off" or (n is not None and n < min_total):
        kw["disable"] = True
    if m == "text":
        from tqdm.std import tqdm as text_bar

        kw["mininterval"] = max(float(kw.get("mininterval", 0) or 0), TEXT_MININTERVAL_S)
        kw.setdefault("file", sys.stdout)
        kw.setdefault("ascii", False)
        kw.setdefault("ncols", 100)
        return text_bar(iterable, total=total, **kw)
    from tqdm.auto import tqdm as auto_bar

    return auto_bar(iterable, total=total, **kw)
