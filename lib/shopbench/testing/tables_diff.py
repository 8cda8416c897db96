"""Behaviour check for refactors: snapshot a run's tables, then diff a later run against it.

``python -m shopbench.testing.tables_diff snapshot outputs/smoke/paper/tables /tmp/base-smoke``
copies every ``*.csv``; ``... compare /tmp/base-smoke outputs/smoke/paper/tables`` prints each table
that differs (cell by cell, floats to 1e-9 relative), each missing or new table, and exits 1 if
any differ. Columns that hold wall-clock times, dates, latencies or cache hits are ignored (``IGNORED``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

IGNORED = re.compile(
    r"(^|_)(date|time|wall|latency|elapsed|seconds|secs|s_per|per_s|commit|cache|cache_hits|hit_rate|attempts|path)(_|$)|_s$",
    re.I,
)


def snapshot(src: Path, dest: Path) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    n = 0
    for p in sorted(src.glob("*.csv")):
        shutil.copy2(p, dest / p.name)
        n += 1
    print(f"{n} tables copied to {dest}")
    return 0


def _frame_diff(a_path: Path, b_path: Path, rtol: float) -> list[str]:
    import numpy as np
    import pandas as pd

    a = pd.read_csv(a_path, keep_default_na=True)
    b = pd.read_csv(b_path, keep_default_na=True)
    drop = [c for c in set(a.columns) | set(b.columns) if IGNORED.search(str(c))]
    a = a.drop(columns=[c for c in drop if c in a.columns])
    b = b.drop(columns=[c for c in drop if c in b.columns])
    out: list[str] = []
    if list(a.columns) != list(b.columns):
        return [f"columns differ: {list(a.columns)} vs {list(b.columns)}"]
    if len(a) != len(b):
        return [f"rows differ: {len(a)} vs {len(b)}"]
    for c in a.columns:
        x, y = a[c], b[c]
        if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y):
            xv, yv = x.to_numpy(float), y.to_numpy(float)
            bad = ~(np.isclose(xv, yv, rtol=rtol, atol=1e-12, equal_nan=True))
        else:
            both_na = (x.isna() & y.isna()).to_numpy()
            bad = (x.astype(object).astype(str) != y.astype(object).astype(str)).to_numpy() & ~both_na
        for i in np.flatnonzero(bad)[:5]:
            out.append(f"row {i} column {c!r}: {x.iloc[i]!r} -> {y.iloc[i]!r}")
        if bad.sum() > 5:
            out.append(f"column {c!r}: {int(bad.sum())} cells differ in all")
    return out


def compare(base: Path, new: Path, rtol: float = 1e-9) -> int:
    base_names = {p.name for p in base.glob("*.csv")}
    new_names = {p.name for p in new.glob("*.csv")}
    differ = 0
    for name in sorted(base_names - new_names):
        print(f"MISSING {name}")
        differ += 1
    for name in sorted(new_names - base_names):
        print(f"NEW     {name}")
    for name in sorted(base_names & new_names):
        d = _frame_diff(base / name, new / name, rtol)
        if d:
            differ += 1
            print(f"DIFFERS {name}")
            for line in d:
                print(f"    {line}")
    print(f"{len(base_names)} baseline tables; {differ} missing or different")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shopbench.testing.tables_diff", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("src", type=Path)
    s.add_argument("dest", type=Path)
    c = sub.add_parser("compare")
    c.add_argument("base", type=Path)
    c.add_argument("new", type=Path)
    c.add_argument("--rtol", type=float, default=1e-9)
    a = ap.parse_args(argv)
    if a.cmd == "snapshot":
        return snapshot(a.src, a.dest)
    return compare(a.base, a.new, a.rtol)


if __name__ == "__main__":
    sys.exit(main())
