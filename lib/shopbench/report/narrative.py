"""A short reading of a results table (issue 16 §5): what the paper found, what this run found, why
the two differ.

The paper's finding is a quotation the notebook passes in. "This run" is read from the table itself:
only rows whose evidence kind is ``measured`` count as findings (``report.evidence``); a measured row
with fewer than ``min_n`` items is named with its n and called too small to read; known-answer rows are
named as checks of the machinery. Nothing is hard-coded: rerun the notebook and the sentences follow
the new numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pandas as pd

from .evidence import EVIDENCE_COLUMN, KNOWN, MEASURED, producer_kind

MIN_N = 30  # below this a rate's 95 % interval is wider than ±0.15 at p = 0.5: too small to read
_CELL = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:\[\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\])?")


def _number(cell: Any) -> tuple[float, float | None, float | None] | None:
    """``(value, low, high)`` from a number or a formatted cell such as ``"0.61 [0.56, 0.67]"``."""
    if cell is None:
        return None
    if isinstance(cell, int | float):
        return None if math.isnan(float(cell)) else (float(cell), None, None)
    m = _CELL.match(str(cell))
    if not m:
        return None
    lo, hi = m.group(2), m.group(3)
    return float(m.group(1)), (float(lo) if lo else None), (float(hi) if hi else None)


def _kind(row: pd.Series, producer: str, kind_of: Callable[[str], str] | None) -> str:
    if EVIDENCE_COLUMN in row and isinstance(row[EVIDENCE_COLUMN], str):
        return row[EVIDENCE_COLUMN]
    return kind_of(str(row[producer])) if kind_of else producer_kind(row[producer])[0]


def run_findings(
    df: pd.DataFrame,
    producer: str,
    value: str,
    *,
    n: str = "n",
    low: str | None = None,
    high: str | None = None,
    min_n: int = MIN_N,
    kind_of: Callable[[str], str] | None = None,
) -> str:
    """What this run found in ``df``: its measured rows by ``value`` (best first), each with its CI and n."""
    readable: list[tuple[float, str]] = []
    small: list[tuple[float, str]] = []
    checks: list[str] = []
    if producer not in df.columns and producer in (df.index.names or []):
        df = df.reset_index()
    for _, row in df.iterrows():
        parsed = _number(row.get(value))
        kind = _kind(row, producer, kind_of)
        name = str(row[producer])
        size = row.get(n)
        size = (
            None
            if size is None or size is pd.NA or (isinstance(size, float) and math.isnan(size))
            else int(size)
        )
        if kind == KNOWN:
            checks.append(name)
            continue
        if kind != MEASURED:
            continue
        if parsed is None:  # a measured row with no value (its n too small for the metric, or empty)
            small.append((-1.0, f"`{name}` – (n={size})" if size is not None else f"`{name}` –"))
            continue
        v, lo, hi = parsed
        lo = float(row[low]) if low and pd.notna(row.get(low)) else lo
        hi = float(row[high]) if high and pd.notna(row.get(high)) else hi
        ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None else ""
        text = f"`{name}` {v:.2f}{ci}" + (f" (n={size})" if size is not None else "")
        (small if size is not None and size < min_n else readable).append((v, text))
    parts = []
    if readable:
        parts.append(
            "measured, best first: " + "; ".join(t for _, t in sorted(readable, key=lambda x: -x[0])) + "."
        )
    if small:
        parts.append(
            f"Too few items to read (n < {min_n}; a demonstration of the path, not a finding): "
            + "; ".join(t for _, t in small)
            + "."
        )
    if not readable and not small:
        parts.append("no measured row (every row is a check of the machinery or empty).")
    if checks:
        parts.append(
            "Known-answer rows (they check the metric code; not findings): "
            + ", ".join(f"`{c}`" for c in dict.fromkeys(checks))
            + "."
        )
    return " ".join(parts)


def reading(paper: str, this_run: str, why: str, title: str | None = None) -> str:
    """The three-part Markdown a results notebook ends with (under the notebook's own heading, or ``title``)."""
    return (
        (f"### {title}\n\n" if title else "") + f"**What the paper found.** {paper.strip()}\n\n"
        f"**What this run found** (read from the tables above when this notebook ran). {this_run.strip()}\n\n"
        f"**Why they differ.** {why.strip()}"
    )


__all__ = ["MIN_N", "reading", "run_findings"]
