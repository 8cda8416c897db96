"""Diff the tables of two runs: which tables and cells changed, times aside.

Issue 11 ("Behaviour first"): "before you move code, record the smoke profile's tables (CSV) [...];
after the change they are identical (a test or script that diffs them, timestamps aside)". A run's
tables are the CSVs of ``outputs/<profile>/paper/tables/`` (:func:`shopbench.report.save_table`);
this module compares two such folders table by table and cell by cell:

    python -m shopbench.report.diff outputs-before/smoke outputs/smoke

``A`` and ``B`` may each be a profile folder (``outputs/<profile>``), its ``paper`` folder or the
``tables`` folder itself. Cells are compared as the text the CSV holds (so ``0.1`` and ``0.10`` differ);
with ``--rtol``/``--atol`` two numbers within the tolerance count as equal. Columns whose values are
times of this run (wall and model latencies, seconds per call, time spent, answer timestamps:
:data:`VOLATILE_COLUMNS`, ``fnmatch`` patterns on the column name) are left out of the verdict; the
report still lists which of them differ, so nothing is hidden. ``--ignore PATTERN`` adds patterns,
``--no-default-ignore`` drops the default ones.

Rows are matched by the table's key columns (issue 25 item 7), so re-sorted rows are not changed
cells and a row present on one side only is reported as added or removed: the key the notebook
declared when it saved the table (``ctx.table(..., key=[...])``, stored in the run's
``artifacts.jsonl``), else one inferred from the two CSVs — the fewest leading text columns (every
value non-numeric: names of backbones, protocols, evaluators, domains, the row label) whose values
identify each row on both sides. A table with no such columns is compared by position, and the report
says so.

A run writes some absolute paths into its tables (where it exported a file); a path under the run's
own outputs folder is compared as ``<outputs>/...``, so two checkouts in different places compare
equal (``--keep-paths`` compares them as written).

Exit status: 0 when every table is identical (times aside), 1 when a table or cell changed or a
table is in one folder only, 2 for a folder that holds no tables.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError, exit_on_user_error

# times of this run, not results: wall and model latencies, seconds per call/turn/trial, the model time
# an anytime sweep spent, an annotator's time and answer timestamps
VOLATILE_COLUMNS: tuple[str, ...] = (
    "*latency*", "wall_s", "time_spent_s", "*_at", "s_per_*", "spent_min", "new_min", "mean_unit_s",
    "*_seconds", "elapsed*", "timestamp", "date",
)  # fmt: skip


@dataclass(frozen=True)
class CellChange:
    row: int  # 0-based data row of A (the header is not a row)
    column: str
    a: str
    b: str
    key: str | None = None  # the row's key values (``backbone=smol, protocol=S0``) when matched by key


@dataclass
class TableDiff:
    """How one table differs between ``A`` and ``B`` (``identical`` when it does not, times aside)."""

    name: str
    columns_only_a: list[str] = field(default_factory=list)
    columns_only_b: list[str] = field(default_factory=list)
    rows_a: int = 0
    rows_b: int = 0
    cells: list[CellChange] = field(default_factory=list)  # in compared columns
    ignored: dict[str, int] = field(default_factory=dict)  # ignored column -> cells that differ
    key: list[str] = field(default_factory=list)  # the columns rows were matched by (empty: by position)
    key_declared: bool = False  # the key the notebook declared (else inferred)
    rows_only_a: list[str] = field(default_factory=list)  # keys of removed rows
    rows_only_b: list[str] = field(default_factory=list)  # keys of added rows
    reordered: bool = False  # the common rows are in another order (not a change)

    @property
    def identical(self) -> bool:
        return not (self.columns_only_a or self.columns_only_b or self.rows_a != self.rows_b or self.cells
                    or self.rows_only_a or self.rows_only_b)  # fmt: skip


@dataclass
class RunDiff:
    a: Path
    b: Path
    only_a: list[str]
    only_b: list[str]
    tables: list[TableDiff]
    ignore: list[str] = field(default_factory=list)  # the column patterns left out of the verdict

    @property
    def changed(self) -> list[TableDiff]:
        return [t for t in self.tables if not t.identical]

    @property
    def identical(self) -> bool:
        return not (self.only_a or self.only_b or self.changed)


def tables_dir(path: str | Path) -> Path:
    """The folder of table CSVs under ``path`` (a profile folder, its ``paper`` folder or ``tables``)."""
    p = Path(path)
    for cand in (p / "paper" / "tables", p / "tables", p):
        if cand.is_dir() and any(cand.glob("*.csv")):
            return cand
    if not p.exists():
        raise UserError("no such folder", file=p, fix="give an outputs/<profile> folder of a finished run")
    raise UserError("no table CSVs here (looked in paper/tables/, tables/ and the folder itself)", file=p,
                    fix="give an outputs/<profile> folder of a run that wrote its tables")  # fmt: skip


def outputs_root(tables: Path) -> Path | None:
    """The outputs folder of a run's ``<outputs>/<profile>/paper/tables`` folder (None elsewhere)."""
    return tables.parents[2] if tables.parent.name == "paper" and len(tables.parents) > 2 else None


def _read(path: Path, root: Path | None = None) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        return [], []
    if root is not None:
        prefix = f"{root.resolve()}/"
        rows = [[c.replace(prefix, "<outputs>/") for c in r] for r in rows]
    return rows[0], rows[1:]


def _number(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _equal(x: str, y: str, rtol: float, atol: float) -> bool:
    if x == y:
        return True
    if rtol == 0 and atol == 0:
        return False
    fx, fy = _number(x), _number(y)
    if fx is None or fy is None:
        return False
    if math.isnan(fx) and math.isnan(fy):
        return True
    return math.isclose(fx, fy, rel_tol=rtol, abs_tol=atol)


def _unique(header: Sequence[str]) -> list[str]:
    """Header names made unique (``name``, ``name.1``, ...) so a repeated column is still compared."""
    seen: dict[str, int] = {}
    out = []
    for h in header:
        k = seen.get(h, 0)
        out.append(h if k == 0 else f"{h}.{k}")
        seen[h] = k + 1
    return out


def _cell_of(row: Sequence[str], i: int) -> str:
    return row[i] if i < len(row) else ""


def _keys(rows: Sequence[Sequence[str]], idx: Sequence[int]) -> list[tuple[str, ...]]:
    """Each row's key values, with the occurrence number appended (a declared key that repeats still
    matches the n-th row of a key with the n-th)."""
    seen: dict[tuple[str, ...], int] = {}
    out = []
    for r in rows:
        k = tuple(_cell_of(r, i) for i in idx)
        seen[k] = seen.get(k, 0) + 1
        out.append((*k, str(seen[k])))
    return out


def _is_text_column(values: Iterable[str]) -> bool:
    vals = [v for v in values if v.strip()]
    return bool(vals) and all(_number(v) is None for v in vals)


def infer_key(ha: Sequence[str], ra: Sequence[Sequence[str]], hb: Sequence[str], rb: Sequence[Sequence[str]],
              ignore: Iterable[str] = ()) -> list[str]:  # fmt: skip
    """The fewest leading text columns (in A's order; every non-empty value non-numeric on both sides,
    times aside) whose values identify each row of A and of B; empty when there are none."""
    patterns = list(ignore)
    ia, ib = {c: i for i, c in enumerate(ha)}, {c: i for i, c in enumerate(hb)}
    cands = [c for c in ha if c in ib and not any(fnmatch.fnmatchcase(c, p) for p in patterns)
             and _is_text_column([_cell_of(r, ia[c]) for r in ra] + [_cell_of(r, ib[c]) for r in rb])]  # fmt: skip
    key: list[str] = []
    for c in cands:
        key.append(c)
        ka = {tuple(_cell_of(r, ia[k]) for k in key) for r in ra}
        kb = {tuple(_cell_of(r, ib[k]) for k in key) for r in rb}
        if len(ka) == len(ra) and len(kb) == len(rb):
            return key
    return []


def _label(cols: Sequence[str], k: tuple[str, ...]) -> str:
    text = ", ".join(f"{c or '(index)'}={v}" for c, v in zip(cols, k, strict=False))
    return text if k[-1] == "1" else f"{text} (#{k[-1]})"


def diff_table(name: str, a: Path, b: Path, ignore: Iterable[str] = VOLATILE_COLUMNS, *, rtol: float = 0.0,
               atol: float = 0.0, roots: tuple[Path | None, Path | None] = (None, None),
               key: Sequence[str] | None = None) -> TableDiff:  # fmt: skip
    """Cell-by-cell difference of two CSVs of the same table (``roots``: each run's outputs folder,
    written ``<outputs>`` in its cells). Rows are matched by ``key`` (the declared key columns) when
    both sides have them, else by :func:`infer_key`'s columns, else by position."""
    ha, ra = _read(a, roots[0])
    hb, rb = _read(b, roots[1])
    ha, hb = _unique(ha), _unique(hb)
    patterns = list(ignore)
    out = TableDiff(name, [c for c in ha if c not in hb], [c for c in hb if c not in ha], len(ra), len(rb))
    ia, ib = {c: i for i, c in enumerate(ha)}, {c: i for i, c in enumerate(hb)}
    common: list[tuple[int, int]] = []
    ka: list[tuple[str, ...]] = []
    if key and all(c in ia and c in ib for c in key):
        out.key, out.key_declared = list(key), True
    else:
        out.key = infer_key(ha, ra, hb, rb, patterns)
    if out.key:
        ka, kb = _keys(ra, [ia[c] for c in out.key]), _keys(rb, [ib[c] for c in out.key])
        pos_b = {k: j for j, k in enumerate(kb)}
        common = [(i, pos_b[k]) for i, k in enumerate(ka) if k in pos_b]
        if not common and ra and rb and not out.key_declared:  # an inferred key that matches nothing
            out.key = []
        else:
            in_a = set(ka)
            out.rows_only_a = [_label(out.key, k) for k in ka if k not in pos_b]
            out.rows_only_b = [_label(out.key, k) for k in kb if k not in in_a]
            out.reordered = [j for _, j in common] != sorted(j for _, j in common)
    pairs = common if out.key else [(r, r) for r in range(min(len(ra), len(rb)))]
    for col in (c for c in ha if c in ib and c not in out.key):
        skip = any(fnmatch.fnmatchcase(col, p) for p in patterns)
        for i, j in pairs:
            x, y = _cell_of(ra[i], ia[col]), _cell_of(rb[j], ib[col])
            if _equal(x, y, rtol, atol):
                continue
            if skip:
                out.ignored[col] = out.ignored.get(col, 0) + 1
            else:
                out.cells.append(CellChange(i, col, x, y, _label(out.key, ka[i]) if out.key else None))
    out.cells.sort(key=lambda c: (c.row, ha.index(c.column)))
    return out


def declared_keys(tables: Path) -> dict[str, list[str]]:
    """The key columns each table's notebook declared (``save_table(..., key=...)``), from the run's
    artefact registry beside the ``tables`` folder (empty when there is none)."""
    from .artifacts import read_artifacts

    if tables.name != "tables":
        return {}
    return {a["name"]: list(a["key"]) for a in read_artifacts(tables.parent)
            if a.get("kind") == "table" and a.get("key")}  # fmt: skip


def diff_runs(a: str | Path, b: str | Path, ignore: Iterable[str] = VOLATILE_COLUMNS, *, rtol: float = 0.0,
              atol: float = 0.0, keep_paths: bool = False) -> RunDiff:  # fmt: skip
    """Every table of run ``a`` against the same-named table of run ``b``."""
    da, db = tables_dir(a), tables_dir(b)
    na, nb = {p.stem for p in da.glob("*.csv")}, {p.stem for p in db.glob("*.csv")}
    ignore = list(ignore)
    roots = (None, None) if keep_paths else (outputs_root(da), outputs_root(db))
    keys = {**declared_keys(db), **declared_keys(da)}  # A's declaration wins where both declare one
    tables = [diff_table(n, da / f"{n}.csv", db / f"{n}.csv", ignore, rtol=rtol, atol=atol, roots=roots,
                         key=keys.get(n)) for n in sorted(na & nb)]  # fmt: skip
    return RunDiff(da, db, sorted(na - nb), sorted(nb - na), tables, ignore)


def _clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def report(d: RunDiff, max_cells: int = 20) -> str:
    """The diff as text: a verdict line, then each changed table with its changed cells."""
    lines = [f"A: {d.a}", f"B: {d.b}"]
    same = len(d.tables) - len(d.changed)
    verdict = "identical" if d.identical else "DIFFERENT"
    aside = " (times aside)" if d.ignore else ""
    lines.append(f"{verdict}: {len(d.tables)} tables in both, {same} identical{aside}, "
                 f"{len(d.changed)} changed, {len(d.only_a)} only in A, {len(d.only_b)} only in B")  # fmt: skip
    lines += [f"only in A: {n}" for n in d.only_a] + [f"only in B: {n}" for n in d.only_b]
    for t in d.changed:
        how = (f"rows matched by {'declared' if t.key_declared else 'inferred'} key "
               f"{', '.join(c or '(index)' for c in t.key)}" if t.key else "rows compared by position")  # fmt: skip
        lines.append(f"changed: {t.name} ({len(t.cells)} cells; {how})")
        if t.rows_a != t.rows_b:
            lines.append(f"  rows: {t.rows_a} in A, {t.rows_b} in B")
        lines += [f"  row removed (only in A): {k}" for k in t.rows_only_a[:max_cells]]
        lines += [f"  row added (only in B): {k}" for k in t.rows_only_b[:max_cells]]
        if len(t.rows_only_a) + len(t.rows_only_b) > 2 * max_cells:
            lines.append(f"  ({len(t.rows_only_a)} removed and {len(t.rows_only_b)} added rows in all)")
        if t.columns_only_a:
            lines.append(f"  columns only in A: {', '.join(t.columns_only_a)}")
        if t.columns_only_b:
            lines.append(f"  columns only in B: {', '.join(t.columns_only_b)}")
        for c in t.cells[:max_cells]:
            where = f"row {c.key}" if c.key is not None else f"row {c.row}"
            lines.append(f"  {where}, {c.column or '(index)'}: {_clip(c.a)!r} -> {_clip(c.b)!r}")
        if len(t.cells) > max_cells:
            lines.append(f"  (+{len(t.cells) - max_cells} more cells)")
    moved = [t.name for t in d.tables if t.reordered]
    if moved:
        lines.append("rows in another order, matched by key (not a change): " + ", ".join(moved))
    ignored = [f"{t.name}.{col} ({n})" for t in d.tables for col, n in sorted(t.ignored.items())]
    if ignored:
        lines.append("times that differ (not compared): " + ", ".join(ignored))
    return "\n".join(lines)


@exit_on_user_error
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shopbench.report.diff", description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="the first run: outputs/<profile>, its paper/ folder or paper/tables/")
    ap.add_argument("b", help="the second run, likewise")
    ap.add_argument("--ignore", action="append", default=[], metavar="PATTERN",
                    help="also leave out columns matching this fnmatch pattern (repeatable)")  # fmt: skip
    ap.add_argument("--no-default-ignore", action="store_true",
                    help="compare the time columns too (VOLATILE_COLUMNS)")  # fmt: skip
    ap.add_argument("--rtol", type=float, default=0.0, help="relative tolerance for numbers (default exact)")
    ap.add_argument("--atol", type=float, default=0.0, help="absolute tolerance for numbers (default exact)")
    ap.add_argument("--keep-paths", action="store_true",
                    help="compare paths under each run's outputs folder as written (default: as <outputs>/...)")  # fmt: skip
    ap.add_argument("--max-cells", type=int, default=20, help="changed cells shown per table")
    args = ap.parse_args(argv)
    ignore = ([] if args.no_default_ignore else list(VOLATILE_COLUMNS)) + args.ignore
    d = diff_runs(args.a, args.b, ignore, rtol=args.rtol, atol=args.atol, keep_paths=args.keep_paths)
    print(report(d, args.max_cells))
    return 0 if d.identical else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the report piped into `head`: the reader has what it wanted
        sys.stderr.close()
        sys.exit(0)
