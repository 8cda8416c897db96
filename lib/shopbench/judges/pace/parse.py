"""A gateway row → the common judgment fields (seed 000, D.4 and DESIGN.md "Parse failures are data").

D.4: "Free-form labels outside these enumerations are rejected at parse time rather than coerced"
and "Outputs that violate any closed-vocabulary or range constraint are rejected at parse time
rather than silently coerced, which is what allows the strict paired-counterfactual gates of
Tab. 4 – joint pair credit, target-triage, and evidence-ID containment – to be evaluated
faithfully"; decision rule (iii): "supporting_evidence_ids must be a subset of
candidate_evidence_ids_json (no invented IDs)".

:func:`parse_judgment` is the protocol's :meth:`~shopbench.judges.JudgeSpec.parse` (the one
parse step of every judge): it re-parses the row's ``raw_output`` against the protocol's contract
(scoring never trusts or repeats the model call; a row from a run without a schema parses the same
way), maps the native output to the common contract (:meth:`Protocol.to_contract`) and checks
Ŝ ⊆ E against the record (:meth:`Protocol.interpret`). Any failure leaves every judgment field
``None`` and sets ``parse_ok=False``, ``parse_error`` (the reason) and ``parse_error_kind`` (one
of :data:`ERROR_KINDS`, shared by every judge: :data:`shopbench.judges.ERROR_KINDS`). Nothing is
coerced: a confidence of 100 against [0, 1] fails, "0.5" where a number is required fails, a
truncated answer fails. A row whose call failed (``status == "error"``) has no output to parse:
``parse_ok=False`` with kind ``call_error``; :func:`shopbench.judges.pace.sweep.parse_failures` counts
those separately from parse failures.

What is *not* a parse failure: a GOOD verdict with a non-NONE family, or a BAD verdict with
NONE / NONE. D.4's "For GOOD verdicts, the defect family and location should be None" is a
judging rule, measured by the metrics (False-fire counts non-NONE families on GOOD records), not
a contract violation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...core import Record
from ..spec import ERROR_KINDS, Judgment, error_kind
from .protocols import JUDGMENT_FIELDS, Protocol, get_protocol

STATUS_FIELDS: tuple[str, ...] = ("parse_ok", "parse_error", "parse_error_kind")
__all__ = ["ERROR_KINDS", "JUDGMENT_FIELDS", "STATUS_FIELDS", "error_kind", "parse_judgment"]


def parse_judgment(
    protocol: str | Protocol, row: Mapping[str, Any], record: Record | Iterable[str] | None
) -> dict:
    """The common judgment fields of one gateway row (see the module docstring).

    ``row`` needs ``raw_output`` (and, when present, ``status``, ``error``, ``finish_reason``);
    ``record`` is the judged record (or its candidate evidence ids) for the Ŝ ⊆ E check; ``None``
    skips that check. Returns :data:`JUDGMENT_FIELDS` + ``parse_ok``, ``parse_error``,
    ``parse_error_kind``: the protocol's :meth:`~shopbench.judges.JudgeSpec.parse` outcome as
    run-table columns."""
    out = get_protocol(protocol).parse(row, record)
    if isinstance(out, Judgment):
        return {**out.value, "parse_ok": True, "parse_error": None, "parse_error_kind": None}
    return {**dict.fromkeys(JUDGMENT_FIELDS), "parse_ok": False, "parse_error": out.reason,
            "parse_error_kind": out.kind}  # fmt: skip
