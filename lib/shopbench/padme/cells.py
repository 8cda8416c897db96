"""PADMÉ cells: the task x criterion matrix with a stratified level contrast (seed 003 §3.1, §4).

"We define the input of PADMÉ as a cell (t, c), consisting of task parameters t and evaluation
criterion c" (§3.1). "Each cell randomly selects two distinct steering levels, with the three
resulting contrasts ({bad, ok}, {ok, good}, and {bad, good}) stratified equally across the dataset"
(§3.1); "The task-criterion matrix contains 1,125 evaluation cells, with quality level contrasts
stratified evenly across the dataset" (§4). Algorithm 1, line 4: "take the level contrast ℓ ≺ ℓ′ for
this cell from the stratified schedule".

The schedule here: cells are grouped into strata (criterion, domain), criterion-major in the order
the criteria are given, domains in order of first appearance. In each stratum of ``n`` cells every
contrast gets ``n // 3`` cells; the ``n % 3`` extra cells take the next contrasts of one rotation
that runs through all strata (its start is drawn from the seed). Then the stratum's contrast list
is shuffled (seeded per stratum) and dealt to its tasks in order. Because the rotation is shared and
each criterion's strata are consecutive, contrast counts differ by at most one within every
stratum, within every criterion and over the whole dataset: 9 tasks x 1 criterion gives 3/3/3,
10 tasks give 4/3/3 (the 4 on a seeded contrast), 375 tasks x 3 criteria give 375/375/375.

Cell ids are ``<domain>.<criterion>.<task_id>`` (dots and spaces inside a part become ``_``), the
``cells`` format of the released ``sampling.json``; they do not depend on the seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import NamedTuple

from shopbench.padme.types import CONTRASTS, Criterion, Task, contrast_name

__all__ = ["Cell", "cell_id", "contrast_counts", "make_cells"]


class Cell(NamedTuple):
    """One cell (t, c) with its scheduled contrast (ℓ, ℓ′), ℓ ≺ ℓ′."""

    cell_id: str
    task: Task
    criterion: Criterion
    contrast: tuple[str, str]


def _part(s: str) -> str:
    return re.sub(r"[.\s]+", "_", str(s).strip())


def cell_id(task: Task, criterion: Criterion) -> str:
    """The stable id of the cell (task, criterion): ``<domain>.<criterion>.<task_id>``."""
    return f"{_part(task.domain)}.{_part(criterion.name)}.{_part(task.task_id)}"


def make_cells(tasks: Sequence[Task], criteria: Sequence[Criterion], seed: int = 0) -> list[Cell]:
    """The task x criterion cells, each with a contrast from the stratified schedule (module doc).

    Returned criterion-major, tasks in the given order. Duplicate cell ids (the same domain and
    task id twice) are an error."""
    tasks, criteria = list(tasks), list(criteria)
    if not tasks:
        raise ValueError("make_cells: no tasks given")
    if not criteria:
        raise ValueError("make_cells: no criteria given")
    for i, t in enumerate(tasks):
        if not isinstance(t, Task):
            raise TypeError(f"make_cells: tasks[{i}] is a {type(t).__name__}, not a padme Task")
    for i, c in enumerate(criteria):
        if not isinstance(c, Criterion):
            raise TypeError(f"make_cells: criteria[{i}] is a {type(c).__name__}, not a padme Criterion")
    seen: dict[str, int] = {}
    for i, t in enumerate(tasks):
        key = cell_id(t, criteria[0])
        if key in seen:
            raise ValueError(
                f"make_cells: tasks[{i}] and tasks[{seen[key]}] have the same domain and task id "
                f"({t.domain!r}, {t.task_id!r}); cell ids must be unique"
            )
        seen[key] = i
    names = [c.name for c in criteria]
    if len(set(names)) != len(names):
        raise ValueError(f"make_cells: criterion names repeat: {names}")

    domains: list[str] = []
    for t in tasks:
        if t.domain not in domains:
            domains.append(t.domain)
    rotation = random.Random(f"padme-cells|{seed}|rotation").randrange(len(CONTRASTS))
    out: list[Cell] = []
    for crit in criteria:
        by_cell: dict[str, Cell] = {}
        for dom in domains:
            stratum = [t for t in tasks if t.domain == dom]
            n = len(stratum)
            schedule = [c for c in CONTRASTS for _ in range(n // len(CONTRASTS))]
            for _ in range(n % len(CONTRASTS)):
                schedule.append(CONTRASTS[rotation % len(CONTRASTS)])
                rotation += 1
            random.Random(f"padme-cells|{seed}|{crit.name}|{dom}").shuffle(schedule)
            for t, contrast in zip(stratum, schedule, strict=True):
                by_cell[cell_id(t, crit)] = Cell(cell_id(t, crit), t, crit, contrast)
        out += [by_cell[cell_id(t, crit)] for t in tasks]
    return out


def contrast_counts(cells: Sequence[Cell], by: str | None = None) -> dict:
    """How many cells carry each contrast (``"bad-ok"`` ...), overall or ``by`` ``"criterion"`` /
    ``"domain"`` (a dict of dicts)."""

    def count(cs):
        d = {contrast_name(c): 0 for c in CONTRASTS}
        for c in cs:
            d[contrast_name(c.contrast)] += 1
        return d

    if by is None:
        return count(cells)
    key = {"criterion": lambda c: c.criterion.name, "domain": lambda c: c.task.domain}.get(by)
    if key is None:
        raise ValueError(f"contrast_counts: by must be None, 'criterion' or 'domain', got {by!r}")
    groups: dict[str, list[Cell]] = {}
    for c in cells:
        groups.setdefault(key(c), []).append(c)
    return {k: count(v) for k, v in groups.items()}
