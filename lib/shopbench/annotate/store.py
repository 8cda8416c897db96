"""The answer store: one append-only JSON-lines file per annotator, ``<dir>/<annotator>.jsonl``.

Each answer is one row (:class:`Answer`), written with a single ``O_APPEND`` write followed by
``fsync``: a killed process loses at most the pair that was on screen, and two annotators never
share a file. A revision (Backspace, then a new answer) appends a new row with ``revision + 1``;
the last row of a pair wins (:meth:`AnnotationStore.answers`).

A last line without its newline (a write cut short) is ignored when reading and moved aside to
``<annotator>.jsonl.partial`` before the next append. Any other unreadable line is an error naming
file and line.

Which underlying side is shown on the left is drawn per annotator and pair from a seed
(:func:`slot_order`) and recorded with every answer (``slot_order``: ``[left, right]``).

One writer per annotator file at a time (one browser tab per annotator); separate annotators may
write at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from ..errors import InputError
from ..paceshop.io import parse_json
from .pairs import SIDES, Side

Slot = Literal["A", "B"]
CONFIDENCE_LEVELS = (0, 50, 100)  # on screen; Appendix H.6 maps them to 0 / 1 / 2
_ANNOTATOR = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


class StoreError(InputError):
    """An answer file holds a line that is not a valid answer (file, line and field are named)."""


_FIX = ("move the bad line out of the file (the annotator answers that pair again); "
        "lines are written by AnnotationStore.append only")  # fmt: skip


def check_annotator(annotator: str) -> str:
    """Annotator ids become file names: letters, digits, ``_ . @ -``, at most 64 characters."""
    if (
        not isinstance(annotator, str)
        or not _ANNOTATOR.match(annotator)
        or annotator.endswith((".jsonl", ".partial"))
    ):
        raise ValueError(
            f"annotator id {annotator!r} is not allowed: use 1-64 letters, digits, '_', '.', '@' or '-', "
            "starting with a letter or digit"
        )
    return annotator


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def slot_order(seed: int | str, annotator: str, pair_id: str) -> tuple[Side, Side]:
    """``(left, right)``: which underlying side is shown in slot A (left) and slot B (right)."""
    h = hashlib.sha256(f"{seed}|{annotator}|{pair_id}".encode()).digest()
    return ("side_a", "side_b") if h[0] % 2 == 0 else ("side_b", "side_a")


def slot_to_side(slot: Slot, order: Sequence[str]) -> Side:
    return order[0] if slot == "A" else order[1]  # type: ignore[return-value]


class Answer(BaseModel):
    """One row of an annotator's file."""

    model_config = ConfigDict(extra="forbid")

    annotator: str
    pair_id: str
    choice: Slot  # the slot picked on screen: A = left, B = right
    chosen_item: Side  # the underlying item that slot showed
    confidence: Literal[0, 50, 100]
    slot_order: tuple[Side, Side]  # (left, right)
    shown_at: str
    answered_at: str
    time_spent_s: float
    revision: int = 0

    @model_validator(mode="after")
    def _consistent(self) -> Answer:
        if set(self.slot_order) != set(SIDES):
            raise ValueError(f"slot_order must hold side_a and side_b once each, got {self.slot_order}")
        if slot_to_side(self.choice, self.slot_order) != self.chosen_item:
            raise ValueError(f"choice {self.choice} with slot_order {self.slot_order} shows "
                             f"{slot_to_side(self.choice, self.slot_order)}, not {self.chosen_item}")  # fmt: skip
        return self


def _answer(path: Path, lineno: int, raw: bytes) -> Answer:
    """One line of an answer file: UTF-8, strict JSON (no NaN, no repeated key), a valid :class:`Answer`."""
    where = f"line {lineno}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise StoreError(f"not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1})", file=path,
                         where=where, fix=_FIX) from None  # fmt: skip
    obj = parse_json(text, path, where=where, what="answer file", fix=_FIX, error=StoreError)
    try:
        return Answer.model_validate(obj)
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or None
        raise StoreError(
            f"not a valid answer: {err['msg']}", file=path, where=where, field=field, fix=_FIX
        ) from None


class AnnotationStore:
    """Answers of all annotators under one folder."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._repaired: set[str] = set()

    def path(self, annotator: str) -> Path:
        return self.root / f"{check_annotator(annotator)}.jsonl"

    def annotators(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*.jsonl"))

    # ---- reading ---------------------------------------------------------------------------------
    def rows(self, annotator: str) -> list[Answer]:
        """Every row in file order (revisions included); a cut-off last line is ignored."""
        path = self.path(annotator)
        if not path.exists():
            return []
        data = path.read_bytes()
        # the last element is b"" when the file ends with a newline, else a line cut short: ignored
        # here and moved aside on the next append
        complete = data.split(b"\n")[:-1]
        out = []
        for lineno, raw in enumerate(complete, 1):
            if raw.strip():
                out.append(_answer(path, lineno, raw))
        return out

    def answers(self, annotator: str) -> dict[str, Answer]:
        """The latest answer per pair (the last row wins)."""
        latest: dict[str, Answer] = {}
        for a in self.rows(annotator):
            latest[a.pair_id] = a
        return latest

    def first_unanswered(self, annotator: str, pair_order: Sequence[str]) -> int:
        """Index in ``pair_order`` of the first pair without an answer (``len(pair_order)`` when all are)."""
        done = self.answers(annotator)
        for i, pid in enumerate(pair_order):
            if pid not in done:
                return i
        return len(pair_order)

    # ---- writing ---------------------------------------------------------------------------------
    def _repair(self, annotator: str) -> None:
        """Move a cut-off last line to ``<annotator>.jsonl.partial`` and truncate it away."""
        path = self.path(annotator)
        if annotator in self._repaired or not path.exists():
            self._repaired.add(annotator)
            return
        with open(path, "r+b") as f:
            data = f.read()
            if data and not data.endswith(b"\n"):
                keep = data.rfind(b"\n") + 1
                with open(path.with_suffix(".jsonl.partial"), "ab") as side:
                    side.write(data[keep:] + b"\n")
                f.truncate(keep)
                f.flush()
                os.fsync(f.fileno())
        self._repaired.add(annotator)

    def append(self, answer: Answer) -> Answer:
        """Write one answer: one ``O_APPEND`` write, then ``fsync``."""
        answer = Answer.model_validate(answer.model_dump())
        self._repair(answer.annotator)
        line = (answer.model_dump_json() + "\n").encode()
        fd = os.open(self.path(answer.annotator), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, line)
            if written != len(line):  # a short write on a full disk: the next append repairs it first
                self._repaired.discard(answer.annotator)
                raise OSError(
                    f"short write to {self.path(answer.annotator)} ({written} of {len(line)} bytes)"
                )
            os.fsync(fd)
        finally:
            os.close(fd)
        return answer

    def record(self, annotator: str, pair_id: str, choice: Slot, confidence: int, order: Sequence[str],
               shown_at: str, answered_at: str | None = None, time_spent_s: float | None = None) -> Answer:  # fmt: skip
        """Build and append an answer; ``revision`` counts earlier rows of the same pair."""
        answered_at = answered_at or now_iso()
        if time_spent_s is None:
            t0 = datetime.fromisoformat(shown_at.replace("Z", "+00:00"))
            t1 = datetime.fromisoformat(answered_at.replace("Z", "+00:00"))
            time_spent_s = max(0.0, (t1 - t0).total_seconds())
        revision = sum(1 for a in self.rows(annotator) if a.pair_id == pair_id)
        order_t = (order[0], order[1])
        return self.append(Answer(
            annotator=annotator, pair_id=pair_id, choice=choice, chosen_item=slot_to_side(choice, order_t),
            confidence=confidence, slot_order=order_t, shown_at=shown_at, answered_at=answered_at,
            time_spent_s=round(float(time_spent_s), 3), revision=revision,
        ))  # fmt: skip

    # ---- per-annotator interface state -----------------------------------------------------------
    def _state_path(self, annotator: str) -> Path:
        return self.root / f"{check_annotator(annotator)}.state.json"

    def state(self, annotator: str) -> dict:
        p = self._state_path(annotator)
        if not p.exists():
            return {}
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return {}  # a damaged state file only costs the instructions screen once more

    def instructions_seen(self, annotator: str) -> bool:
        return bool(self.state(annotator).get("instructions_seen_at"))

    def mark_instructions_seen(self, annotator: str) -> None:
        from shopbench.paceshop.io import atomic_write_bytes

        st = self.state(annotator)
        st.setdefault("instructions_seen_at", now_iso())
        atomic_write_bytes(self._state_path(annotator), (json.dumps(st, sort_keys=True) + "\n").encode())


def human_study_frames(
    store: AnnotationStore, pairs: Sequence, panels: dict[str, Sequence[str]] | None = None
):
    """The store's latest answers as the ``(annotations, answer_key)`` frames of
    :mod:`shopbench.annotate.humanstudy` (``export_human_study`` writes them in the PADMÉ release layout).

    Choices are given by underlying side, not screen slot (slots differ per annotator): 1 = ``side_a``,
    2 = ``side_b``; ``correct_response`` is the synthetic label the same way. A pair without a filter
    outcome counts as ``kept``. ``panels`` (panel -> annotator ids) names each annotator's panel
    (default: one panel ``1`` holding every annotator of the store).
    """
    import pandas as pd

    by_id = {p.id: p for p in pairs}
    panel_of = {a: name for name, members in (panels or {}).items() for a in members}
    annotators = [a for name in (panels or {}) for a in panels[name]] if panels else store.annotators()
    rows = []
    for a in annotators:
        for ans in store.answers(a).values():
            p = by_id.get(ans.pair_id)
            if p is None:
                continue
            rows.append({"pair_id": p.id, "annotator": a, "panel": panel_of.get(a, 1), "criterion": p.criterion.name,
                         "choice": 1 if ans.chosen_item == "side_a" else 2, "confidence": ans.confidence})  # fmt: skip
    annotations = pd.DataFrame(
        rows, columns=["pair_id", "annotator", "panel", "criterion", "choice", "confidence"]
    )
    answered = set(annotations["pair_id"])
    key = pd.DataFrame(
        [{"pair_id": p.id, "correct_response": 1 if p.hidden.label == "side_a" else 2,
          "filter_outcome": p.hidden.filter_outcome or "kept", "criterion": p.criterion.name, "group_id": None}
         for p in pairs if p.id in answered and p.hidden.label is not None],
        columns=["pair_id", "correct_response", "filter_outcome", "criterion", "group_id"],
    )  # fmt: skip
    return annotations, key
