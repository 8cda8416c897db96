"""Honest outcomes (issue 25 item 3): a failed call is an error, never a score.

Every unit a subject under test (a judge backbone, an evaluator, an agent's model) was asked to answer
ends in one of three kinds, the gateway's :data:`~shopbench.llm.result.STATUSES`:

- ``ok``: an answer that met its contract: it is scored;
- ``parse_error`` (a *parse failure*): an answer that broke its contract. Parse failures are data
  (docs/DESIGN.md): counted per protocol × backbone and scored as the metric's docstring says;
- ``error`` (a *call error*): the call itself failed (HTTP error, timeout, refused request, a cost-cap
  stop). It is no answer at all: excluded from every metric's denominator and counted apart.

A subject whose units hold no ``ok`` answer (every call failed, or every answer broke the contract) has
no numbers: its table row keeps its counts, empties its metric cells (NaN) and says why in
``outcome_note`` ("no usable answer: 20 of 20 calls failed (HTTP 500 ...)"); its evidence kind is
``no-answer`` (:mod:`shopbench.report.evidence`), never ``measured``. A row computed from fewer units
than planned shows ``n_used`` of ``n_planned``. The count columns (:data:`COUNT_COLUMNS`) go at the
end of a table. The pipeline exits with :data:`EXIT_NO_ANSWER` when a subject of the run produced no
usable answer (:func:`no_answer_subjects` over the run's call logs).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CALL_ERROR", "COUNT_COLUMNS", "EXIT_NO_ANSWER", "NO_ANSWER", "OK", "OUTCOME_COLUMNS", "PARSE_FAILURE", "PARTIAL",
    "Tally", "count_line", "error_key", "no_answer_subjects", "tally", "tally_by",
]  # fmt: skip

OK, PARSE_FAILURE, CALL_ERROR = "ok", "parse_error", "error"
PARTIAL, NO_ANSWER = "partial", "no-answer"  # a row's ``outcome`` besides "ok"
COUNT_COLUMNS = ("n_used", "n_planned", "n_call_error", "n_parse_failure")
OUTCOME_COLUMNS = (*COUNT_COLUMNS, "outcome", "outcome_note")
EXIT_NO_ANSWER = 3
"""The runner's exit code when a subject under test produced no usable answer (1: a notebook failed or
an artefact is missing; 2: a user error)."""

_HEX = re.compile(r"\b(?:[0-9a-f]{8,}|[0-9a-f-]{32,})\b", re.I)


def error_key(message: Any, width: int = 160) -> str:
    """One line naming an error, for counting alike errors together: the first non-empty line, long
    hexadecimal ids blanked, cut to ``width`` characters."""
    text = str(message or "unknown error").strip()
    line = next((s.strip() for s in text.splitlines() if s.strip()), text)
    line = _HEX.sub("…", line)
    return line if len(line) <= width else line[: width - 1] + "…"


@dataclass
class Tally:
    """Counts of one subject's units by kind, and its errors by message."""

    planned: int = 0
    ok: int = 0
    parse_failure: int = 0
    call_error: int = 0
    unpaired: int = 0  # answered, but its pair's other call failed: not used either
    errors: Counter = field(default_factory=Counter)  # call-error message -> count
    parse_errors: Counter = field(default_factory=Counter)  # parse-failure reason -> count

    def add(self, status: Any, error: Any = None, parse_error: Any = None) -> None:
        self.planned += 1
        if status == OK:
            self.ok += 1
        elif status == CALL_ERROR:
            self.call_error += 1
            self.errors[error_key(error)] += 1
        else:  # parse_error, or an answer judged invalid after the gateway (e.g. ids outside the pool)
            self.parse_failure += 1
            self.parse_errors[error_key(parse_error or "parse failure")] += 1

    @property
    def used(self) -> int:
        """Units that returned an answer (ok or parse failure): the metrics' denominators."""
        return self.planned - self.call_error - self.unpaired

    @property
    def outcome(self) -> str:
        """``ok`` (every planned unit answered), ``partial`` (some call errors) or ``no-answer``."""
        if self.ok == 0:
            return NO_ANSWER
        return OK if self.call_error == 0 else PARTIAL

    def top(self, k: int = 3) -> list[tuple[str, int]]:
        """The ``k`` most frequent problems: call errors first, then parse failures."""
        return (self.errors.most_common() + self.parse_errors.most_common())[:k]

    def note(self) -> str:
        """What the row's numbers rest on, in one sentence ("" when every unit answered)."""
        if self.planned == 0:
            return "no usable answer: nothing was judged"
        if self.ok == 0:
            if self.call_error == self.planned:
                what = f"{self.call_error} of {self.planned} calls failed"
            elif self.call_error == 0:
                what = f"{self.parse_failure} of {self.planned} answers broke the contract"
            else:
                what = (f"{self.call_error} of {self.planned} calls failed and the other {self.parse_failure} "
                        "answers broke the contract")  # fmt: skip
            first = self.top(1)
            return f"no usable answer: {what}" + (f" ({first[0][0]})" if first else "")
        if self.call_error:
            top = self.errors.most_common(1)[0][0]
            lost = f"; {self.unpaired} more lost the other call of their pair" if self.unpaired else ""
            return f"{self.used} of {self.planned} units used: {self.call_error} calls failed ({top}){lost}"
        return ""

    def columns(self) -> dict[str, Any]:
        """The row's :data:`OUTCOME_COLUMNS`."""
        return {"n_used": self.used, "n_planned": self.planned, "n_call_error": self.call_error,
                "n_parse_failure": self.parse_failure, "outcome": self.outcome, "outcome_note": self.note()}  # fmt: skip

    def __iadd__(self, other: Tally) -> Tally:
        self.planned += other.planned
        self.ok += other.ok
        self.parse_failure += other.parse_failure
        self.call_error += other.call_error
        self.unpaired += other.unpaired
        self.errors.update(other.errors)
        self.parse_errors.update(other.parse_errors)
        return self


def tally(rows: Iterable[Mapping[str, Any]]) -> Tally:
    """The :class:`Tally` of gateway rows (:class:`~shopbench.llm.result.CallResult`) or rows shaped
    like them (``status``, ``error``, ``parse_error``)."""
    t = Tally()
    for r in rows:
        t.add(r.get("status"), r.get("error"), r.get("parse_error"))
    return t


def tally_by(rows: Iterable[Mapping[str, Any]], key: Callable[[Mapping[str, Any]], Any]) -> dict[Any, Tally]:
    """One :class:`Tally` per ``key(row)``, in order of first appearance."""
    out: dict[Any, Tally] = {}
    for r in rows:
        out.setdefault(key(r), Tally()).add(r.get("status"), r.get("error"), r.get("parse_error"))
    return out


def count_line(ok: int, parse_failure: int, call_error: int) -> str:
    """ "650 ok, 14 parse failures, 6 call errors"."""
    return f"{ok} ok, {parse_failure} parse failure{'s' * (parse_failure != 1)}, " \
           f"{call_error} call error{'s' * (call_error != 1)}"  # fmt: skip


def _subject(row: Mapping[str, Any]) -> tuple[str, str]:
    return str(row.get("run_id") or "?"), str(row.get("model") or "?")


def no_answer_subjects(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], Tally]:
    """``{(run id, model): tally}`` of every subject of a run's call logs that produced no usable answer:
    within one sweep (a run id), a model none of whose calls returned a contract-valid answer. Rows are
    the call log's: the last row of each (item, key) counts (a resumed run's retry replaces its error)."""
    last: dict[tuple[Any, ...], Mapping[str, Any]] = {}
    for r in rows:
        last[(r.get("run_id"), r.get("item_id"), r.get("key"))] = r
    by = tally_by(last.values(), _subject)
    # embedded local/ backends are the project's own stand-ins and floors (a schema sampler, a generator
    # stand-in), not a server or model under test: their tables say no-answer, the exit code ignores them
    return {k: t for k, t in by.items() if t.planned and t.ok == 0 and not k[1].startswith("local/")}
