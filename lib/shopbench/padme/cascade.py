"""Algorithm 1: PADMÉ data curation — generation, the filter cascade and retries (seed 003 §3.1, App. A).

The paper's Algorithm 1 ("PADMÉ data curation algorithm. Each cell yields at most one kept pair."):

     1: cells {(t, c)}, fixed context θ, judges J_1, …, J_K, retry budget R
     2: D_k ← ∅ for k = 0, …, K
     3: for all cells (t, c) do
     4:   take the level contrast ℓ ≺ ℓ′ for this cell from the stratified schedule
     5:   for attempt = 1 to 1 + R do
     6:     s_{c,t,ℓ} ← WriteSteer(c, t, ℓ),  s_{c,t,ℓ′} ← WriteSteer(c, t, ℓ′)
     7:     x⁻ ∼ Roll(t, s_{c,t,ℓ}; θ),  x⁺ ∼ Roll(t, s_{c,t,ℓ′}; θ)
     8:     p ← (x⁻, x⁺),  D_0 ← D_0 ∪ {p}
     9:     k ← 0
    10:     while k < K and J_{k+1}(p, c) = 1 do
    11:       k ← k + 1,  D_k ← D_k ∪ {p}          ▷ a veto stops the cascade
    12:     end while
    13:     if k = K then
    14:       break                                 ▷ cell filled; only a rejected cell is ever redrawn
    15:     end if
    16:   end for
    17: end for
    18: return D_K                                  ▷ D_0, …, D_{K−1} are kept for the filter-depth ablation

with "D_k = {p ∈ D_{k−1} | J_k(p, c) = 1}" (Eq. 2) and "a cell rejected by the filtering cascade is
resampled with the same steering prompts and fresh rollouts, up to R retries. Resampled trajectories
reuse the steering instructions to ensure level contrast stratification" (§3.1, Retry). Line 6 sits
inside the attempt loop in the listing, but the text fixes the steering per cell, so here steering
is written once per cell (all three levels in one WriteSteer call, H.2) and reused by every attempt.

Implementation notes:

* Batching. All cells' attempt r is rolled out, then judged stage by stage: one ``judge`` call
  per stage per attempt round (an LLM judge sends the whole stage in one concurrent
  ``gateway.run``). Each pair still meets J_1, …, J_K in order and a veto stops it; only cells
  without a kept pair enter round r + 1 — the semantics of Algorithm 1.
* Slot order. Before each judge, x⁺ is put in slot 1 or 2 by a coin drawn from
  ``(seed, judge, pair_id)`` (so batching and resuming do not change it) and recorded as
  ``Vote.better_slot``; ``Vote.agrees`` = (choice == better_slot) is J_k(p, c). A parse failure
  (``choice is None``) is a veto. ``order_swap=True`` also asks each judge about the pair with the
  slots swapped (``Vote.swapped_choice``); a judge whose choice follows the slot rather than the
  content picks the same slot twice, and :attr:`CascadeResult.flip_rate` is the share of such pairs.
* Resume. With ``store`` (a :class:`PairStore`), every finished pair (all its judges done) is
  appended and fsynced at the end of its round; a rerun reads them back and continues where it
  stopped: no pair is lost or repeated, and the result equals an uninterrupted run (the gateway
  cache makes the unfinished round's model calls free to redo).
* Failures. A cell whose steering fails (:class:`~shopbench.padme.steering.SteeringError`) or whose
  rollout raises is skipped with the reason in :attr:`CascadeResult.skipped_cells` (a rerun tries it
  again). A filter judge's transport error stops the run (finished pairs are stored).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from shopbench.padme.cells import Cell
from shopbench.padme.filters import vote_fields
from shopbench.padme.steering import SteeringError
from shopbench.padme.types import LEVELS, Context, Pair, Rollout, Vote, contrast_name

__all__ = ["CascadeResult", "PairStore", "StoreError", "run_cascade", "slot_of_better"]


class StoreError(ValueError):
    """The pair store is damaged or belongs to another run; the message names the file and line."""


# ---- the store ---------------------------------------------------------------------------------
class PairStore:
    """Append-only JSON lines of finished pairs (``Pair.to_dict``), fsynced on every append.

    A line cut short by a kill (no trailing newline) is dropped on read and cut off before the next
    append; any other unreadable line is an error naming the line."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def _lines(self) -> tuple[list[tuple[int, str]], int]:
        """Complete lines with their line numbers, and the byte length of the complete part."""
        if not self.path.exists():
            return [], 0
        data = self.path.read_bytes()
        cut = data.rfind(b"\n") + 1  # everything after the last newline is a torn line
        text = data[:cut].decode("utf-8")
        return [(i, ln) for i, ln in enumerate(text.split("\n")[:-1], 1) if ln.strip()], cut

    def read(self) -> list[Pair]:
        out, seen = [], {}
        for lineno, line in self._lines()[0]:
            try:
                p = Pair.from_dict(json.loads(line))
            except (json.JSONDecodeError, TypeError, KeyError) as e:
                raise StoreError(
                    f"{self.path}:{lineno}: not a pair record ({type(e).__name__}: {e}); remove that line "
                    "(the pair is generated again on the next run)"
                ) from None
            key = (p.cell_id, p.attempt)
            if key in seen:
                raise StoreError(
                    f"{self.path}:{lineno}: cell {p.cell_id!r} attempt {p.attempt} repeats line {seen[key]}"
                )
            seen[key] = lineno
            out.append(p)
        return out

    def append(self, pairs: Sequence[Pair]) -> None:
        if not pairs:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            _, cut = self._lines()
            if cut != self.path.stat().st_size:
                with open(self.path, "rb+") as f:
                    f.truncate(cut)
        data = "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in pairs).encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)


# ---- the result --------------------------------------------------------------------------------
@dataclass
class CascadeResult:
    """Every attempt's pair (D_0, in cell order then attempt), with depth, votes and kept flag."""

    pairs: list[Pair]
    judges: list[str]
    retries: int
    cells: list[str]  # the cell ids asked for, in order
    skipped_cells: dict[str, str] = field(default_factory=dict)  # cell id -> reason
    flip_rate: dict[str, float | None] = field(
        default_factory=dict
    )  # judge -> share of slot-following answers
    steering: dict[str, dict[str, str]] = field(default_factory=dict)  # cell id -> level -> instruction
    steering_source: str = ""
    resumed_pairs: int = 0  # pairs read back from the store

    @property
    def K(self) -> int:
        return len(self.judges)

    def D(self, k: int) -> list[Pair]:
        """D_k: the pairs that survived the first k judges (D_0 = all generated pairs)."""
        if not 0 <= k <= self.K:
            raise ValueError(f"D(k) needs 0 <= k <= K = {self.K}, got {k}")
        return [p for p in self.pairs if p.depth >= k]

    @property
    def kept(self) -> list[Pair]:
        return self.D(self.K)

    def summary(self) -> dict:
        return {
            "cells": len(self.cells), "skipped": len(self.skipped_cells), "draws": len(self.pairs),
            **{f"D{k}": len(self.D(k)) for k in range(self.K + 1)}, "kept": len(self.kept),
            "flip_rate": dict(self.flip_rate), "resumed_pairs": self.resumed_pairs,
        }  # fmt: skip


def slot_of_better(seed: int, judge: str, pair_id: str) -> int:
    """The slot (1 or 2) x⁺ is shown in to ``judge``: a seeded coin per (seed, judge, pair)."""
    return 1 if random.Random(f"padme-slots|{seed}|{judge}|{pair_id}").random() < 0.5 else 2


def _flip_rates(pairs: Sequence[Pair], judges: Sequence[str]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for j in judges:
        both = [
            v
            for p in pairs
            for v in p.votes
            if v.judge == j and v.choice is not None and v.swapped_choice is not None
        ]
        out[j] = sum(v.swapped_choice == v.choice for v in both) / len(both) if both else None
    return out


def _check_stored(stored: list[Pair], cells: dict[str, Cell], judges: list[str], context: Context, retries: int,
                  path) -> dict[str, dict[int, Pair]]:  # fmt: skip
    by_cell: dict[str, dict[int, Pair]] = {}
    for p in stored:
        if p.cell_id not in cells:
            continue  # another selection of cells shares the store; those pairs stay in the file
        cell = cells[p.cell_id]
        where = f"{path}: pair {p.pair_id!r}"
        if p.agent_model != context.agent_model:
            raise StoreError(f"{where} was made with agent model {p.agent_model!r}, this run uses "
                             f"{context.agent_model!r}; use another store path")  # fmt: skip
        if p.contrast != contrast_name(cell.contrast):
            raise StoreError(f"{where} has contrast {p.contrast!r} but the cell's schedule says "
                             f"{contrast_name(cell.contrast)!r} (another cell seed?); use another store path")  # fmt: skip
        names = [v.judge for v in p.votes]
        if p.kept and len(names) != len(judges):
            raise StoreError(f"{where} was kept after {len(names)} judges, this run has K = {len(judges)}; "
                             "use another store path")  # fmt: skip
        if names != judges[: len(names)]:
            raise StoreError(
                f"{where} was judged by {names}, this run's judges are {judges}; use another store path"
            )
        by_cell.setdefault(p.cell_id, {})[p.attempt] = p
    for cid, atts in by_cell.items():
        order = sorted(atts)
        if order != list(range(len(order))):
            raise StoreError(
                f"{path}: cell {cid!r} has attempts {order}; attempts must run 0, 1, … without gaps"
            )
        if len(order) > retries + 1:
            raise StoreError(f"{path}: cell {cid!r} has {len(order)} attempts but retries={retries} allows "
                             f"{retries + 1}; rerun with the retries the store was made with")  # fmt: skip
        if any(atts[a].kept for a in order[:-1]):
            raise StoreError(f"{path}: cell {cid!r} has an attempt after a kept pair")
    return by_cell


def _steering_for(cells: list[Cell], steering) -> dict[str, dict[str, str] | SteeringError]:
    if hasattr(steering, "steer_many"):
        return steering.steer_many(cells)
    out: dict[str, dict[str, str] | SteeringError] = {}
    for c in cells:
        try:
            out[c.cell_id] = steering(c.task, c.criterion)
        except SteeringError as e:
            out[c.cell_id] = e
    return out


def run_cascade(cells: Sequence[Cell], source, steering, judges: Sequence, context: Context, retries: int = 2,
                gateway=None, store: PairStore | str | Path | None = None, order_swap: bool = False, seed: int = 0,
                progress: bool = True, workers: int = 1) -> CascadeResult:  # fmt: skip
    """Run Algorithm 1 over ``cells`` (see the module docstring).

    ``source``: a trajectory source (``rollout(task, criterion, level, steering, context, attempt,
    gateway=None) -> Rollout``); ``steering``: :class:`~shopbench.padme.steering.WriteSteer` or
    :class:`~shopbench.padme.steering.ScriptedSteering`; ``judges``: J_1, …, J_K (``name`` and
    ``judge(items)``, a :class:`shopbench.judging.Judge`); ``context``: θ, shared by all rollouts; ``retries``: R; ``store``: a
    :class:`PairStore` (or its path) to resume from and append to; ``workers``: rollouts run in
    this many threads (results are collected in cell order, so the result does not depend on it).
    """
    cells = list(cells)
    judges = list(judges)
    if not judges:
        raise ValueError("run_cascade: at least one filter judge is needed (K >= 1)")
    names = [j.name for j in judges]
    if len(set(names)) != len(names):
        raise ValueError(f"run_cascade: judge names must be unique (they key the votes), got {names}")
    if int(retries) < 0:
        raise ValueError(f"run_cascade: retries must be >= 0, got {retries}")
    retries = int(retries)
    by_id: dict[str, Cell] = {}
    for i, c in enumerate(cells):
        if c[0] in by_id:
            raise ValueError(f"run_cascade: cells[{i}] repeats cell id {c[0]!r}")
        by_id[c[0]] = c if isinstance(c, Cell) else Cell(*c)
    cells = [by_id[c[0]] for c in cells]
    if isinstance(store, (str, Path)):
        store = PairStore(store)
    stored = store.read() if store is not None else []
    by_cell = _check_stored(stored, by_id, names, context, retries, store.path if store else None)
    resumed = sum(len(v) for v in by_cell.values())
    K = len(judges)
    src_name = getattr(source, "name", None)
    steer_source = getattr(steering, "source", type(steering).__name__)

    def finished(cid: str) -> bool:
        atts = by_cell.get(cid, {})
        return bool(atts) and (atts[max(atts)].kept or len(atts) == retries + 1)

    # steering: once per cell; a cell with stored pairs reuses the stored instructions
    steer: dict[str, dict[str, str]] = {}
    skipped: dict[str, str] = {}
    for cid, atts in by_cell.items():
        steer[cid] = dict(atts[0].steering)
    need = [c for c in cells if c.cell_id not in steer]
    if need:
        for cid, res in _steering_for(need, steering).items():
            if isinstance(res, SteeringError):
                skipped[cid] = f"steering failed: {res.reason}"
            elif not isinstance(res, dict) or any(not isinstance(res.get(lvl), str) for lvl in LEVELS):
                skipped[cid] = f"steering returned {res!r}, not a {{bad, ok, good}} dict"
            else:
                steer[cid] = {lvl: res[lvl] for lvl in LEVELS}
        for c in need:
            if c.cell_id not in steer and c.cell_id not in skipped:
                skipped[c.cell_id] = "steering returned nothing for this cell"

    bar = None
    if progress:
        from ..progress import tqdm

        bar = tqdm(total=len(cells), desc="padme cascade (cells settled)", unit="cell")
        bar.update(sum(finished(c.cell_id) for c in cells) + len(skipped))

    def roll(cell: Cell, attempt: int) -> tuple[Rollout, Rollout] | str:
        lo, hi = cell.contrast
        try:
            xs = []
            for lvl in (lo, hi):
                x = source.rollout(cell.task, cell.criterion, lvl, steer[cell.cell_id][lvl], context, attempt,
                                   gateway=gateway)  # fmt: skip
                if not isinstance(x, Rollout):
                    raise TypeError(f"source.rollout returned {type(x).__name__}, not a Rollout")
                x.meta = {**(x.meta or {}), "steering_generator": steer_source}
                xs.append(x)
            return xs[0], xs[1]
        except Exception as e:  # noqa: BLE001 - recorded as the cell's skip reason; a rerun tries again
            return f"rollout failed at attempt {attempt}: {type(e).__name__}: {e}"

    for attempt in range(retries + 1):
        todo = [c for c in cells if c.cell_id in steer and c.cell_id not in skipped and not finished(c.cell_id)
                and attempt not in by_cell.get(c.cell_id, {})]  # fmt: skip
        if not todo:
            continue
        if workers > 1:
            with ThreadPoolExecutor(max_workers=workers) as ex:
                rolled = list(ex.map(roll, todo, [attempt] * len(todo)))
        else:
            rolled = [roll(c, attempt) for c in todo]
        round_pairs: list[Pair] = []
        crit_of: dict[str, object] = {}
        for cell, res in zip(todo, rolled, strict=True):
            if isinstance(res, str):
                skipped[cell.cell_id] = res
                if bar is not None:
                    bar.update(1)
                continue
            worse, better = res
            pid = f"{cell.cell_id}#a{attempt}"
            round_pairs.append(Pair(
                pair_id=pid, cell_id=cell.cell_id, task_id=cell.task.task_id, domain=cell.task.domain,
                source=src_name or cell.task.source, criterion=cell.criterion.name,
                contrast=contrast_name(cell.contrast), agent_model=context.agent_model, attempt=attempt,
                worse=worse, better=better, steering=dict(steer[cell.cell_id]),
            ))  # fmt: skip
            crit_of[pid] = cell.criterion
        for k, judge in enumerate(judges, start=1):
            alive = [p for p in round_pairs if p.depth == k - 1]
            if not alive:
                break
            items, slots = [], []
            for p in alive:
                b = slot_of_better(seed, judge.name, p.pair_id)
                x1, x2 = (p.better, p.worse) if b == 1 else (p.worse, p.better)
                items.append((p.pair_id, x1, x2, crit_of[p.pair_id]))
                slots.append(b)
            asked = items + ([(pid, x2, x1, c) for pid, x1, x2, c in items] if order_swap else [])
            answers = [vote_fields(o) for o in judge.judge(asked)]
            if len(answers) != len(asked):
                raise RuntimeError(
                    f"filter judge {judge.name!r} answered {len(answers)} of {len(asked)} items"
                )
            for i, (p, b) in enumerate(zip(alive, slots, strict=True)):
                choice, perr, raw = answers[i]
                if choice not in (1, 2, None):
                    raise RuntimeError(
                        f"filter judge {judge.name!r} returned choice {choice!r} for {p.pair_id!r}"
                    )
                swapped = answers[len(items) + i][0] if order_swap else None
                if choice is None and perr is None:
                    perr = "no choice"
                vote = Vote(judge=judge.name, stage=k, better_slot=b, choice=choice, agrees=choice == b,
                            parse_error=perr, swapped_choice=swapped, raw=raw)  # fmt: skip
                p.votes.append(vote)
                if vote.agrees:
                    p.depth = k
        for p in round_pairs:
            p.kept = p.depth == K
            by_cell.setdefault(p.cell_id, {})[attempt] = p
        if store is not None:
            store.append(round_pairs)
        if bar is not None:
            bar.update(sum(finished(p.cell_id) for p in round_pairs))
    if bar is not None:
        bar.close()

    pairs = [by_cell[c.cell_id][a] for c in cells if c.cell_id in by_cell for a in sorted(by_cell[c.cell_id])]
    for cid in list(skipped):  # a cell that has pairs from a previous run keeps them
        if cid in by_cell and finished(cid):
            skipped.pop(cid)
    return CascadeResult(
        pairs=pairs, judges=names, retries=retries, cells=[c.cell_id for c in cells], skipped_cells=skipped,
        flip_rate=_flip_rates(pairs, names) if order_swap else {},
        steering={cid: steer[cid] for cid in (c.cell_id for c in cells) if cid in steer}, steering_source=steer_source,
        resumed_pairs=resumed,
    )  # fmt: skip
