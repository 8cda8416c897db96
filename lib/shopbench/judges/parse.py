"""A gateway row → the common judgment fields (seed 000, D.4 and DESIGN.md "Parse failures are data").

D.4: "Free-form labels outside these enumerations are rejected at parse time rather than coerced"
and "Outputs that violate any closed-vocabulary or range constraint are rejected at parse time
rather than silently coerced, which is what allows the strict paired-counterfactual gates of
Tab. 4 – joint pair credit, target-triage, and evidence-ID containment – to be evaluated
faithfully"; decision rule (iii): "supporting_evidence_ids must be a subset of
candidate_evidence_ids_json (no invented IDs)".

:func:`parse_judgment` re-parses the row's ``raw_output`` against the protocol's contract (scoring
never trusts or repeats the model call; a row from a run without a schema parses the same way),
maps the native output to the common contract (:meth:`Protocol.to_contract`) and checks Ŝ ⊆ E
against the record. Any failure leaves every judgment field ``None`` and sets ``parse_ok=False``,
``parse_error`` (the reason) and ``parse_error_kind`` (one of :data:`ERROR_KINDS`). Nothing is
coerced: a confidence of 100 against [0, 1] fails, "0.5" where a number is required fails, a
truncated answer fails. A row whose call failed (``status == "error"``) has no output to parse:
``parse_ok=False`` with kind ``call_error``; :func:`shopbench.judges.sweep.parse_failures` counts
those separately from parse failures.

What is *not* a parse failure: a GOOD verdict with a non-NONE family, or a BAD verdict with
NONE / NONE. D.4's "For GOOD verdicts, the defect family and location should be None" is a
judging rule, measured by the metrics (False-fire counts non-NONE families on GOOD records), not
a contract violation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core import Record
from ..llm.contract import parse_output
from .protocols import Protocol, get_protocol

JUDGMENT_FIELDS: tuple[str, ...] = (
    "verdict", "bad_prob", "overall_quality", "persona_alignment", "component_consistency",
    "evidence_grounding", "format_safety", "defect_family", "defect_location", "supporting_evidence_ids",
    "confidence", "rationale",
)  # fmt: skip
STATUS_FIELDS: tuple[str, ...] = ("parse_ok", "parse_error", "parse_error_kind")
ERROR_KINDS: tuple[str, ...] = (
    "call_error", "empty", "truncated", "invalid_json", "missing_field", "label_outside_set", "out_of_range",
    "wrong_type", "extra_field", "evidence_outside_pool", "contract_violation",
)  # fmt: skip
_RENAME = {"overall_bad_probability": "bad_prob"}


def error_kind(message: str | None) -> str | None:
    """Classify a parse-failure reason (from :func:`shopbench.llm.parse_output` or ours)."""
    if not message:
        return None
    m = message
    if m.startswith("call error"):
        return "call_error"
    if m.startswith("empty output"):
        return "empty"
    if m.startswith("truncated"):
        return "truncated"
    if m.startswith("invalid JSON"):
        return "invalid_json"
    if m.startswith("evidence ids outside"):
        return "evidence_outside_pool"
    if "is a required property" in m:
        return "missing_field"
    if "is not one of" in m:
        return "label_outside_set"
    if "maximum of" in m or "minimum of" in m:
        return "out_of_range"
    if "is not of type" in m:
        return "wrong_type"
    if "Additional properties are not allowed" in m:
        return "extra_field"
    return "contract_violation"


def _failed(reason: str) -> dict:
    out: dict[str, Any] = dict.fromkeys(JUDGMENT_FIELDS)
    out.update(parse_ok=False, parse_error=reason, parse_error_kind=error_kind(reason))
    return out


def _candidate_ids(record: Record | Iterable[str] | None) -> set[str] | None:
    if record is None:
        return None
    if isinstance(record, Record):
        return set(record.candidate_evidence_ids)
    return set(record)


def parse_judgment(
    protocol: str | Protocol, row: Mapping[str, Any], record: Record | Iterable[str] | None
) -> dict:
    """The common judgment fields of one gateway row (see the module docstring).

    ``row`` needs ``raw_output`` (and, when present, ``status``, ``error``, ``finish_reason``);
    ``record`` is the judged record (or its candidate evidence ids) for the Ŝ ⊆ E check; ``None``
    skips that check. Returns :data:`JUDGMENT_FIELDS` + ``parse_ok``, ``parse_error``,
    ``parse_error_kind``."""
    p = get_protocol(protocol)
    if row.get("status") == "error":
        return _failed(f"call error: {row.get('error') or 'no output'}")
    parsed = parse_output(row.get("raw_output"), p.contract, row.get("finish_reason"))
    if not parsed.ok:
        return _failed(parsed.error or "contract violation")
    common = p.to_contract(parsed.value)
    pool = _candidate_ids(record)
    ids = common.get("supporting_evidence_ids")
    if pool is not None and ids:
        outside = [i for i in ids if i not in pool]
        if outside:
            shown = ", ".join(repr(i) for i in outside[:3]) + (" …" if len(outside) > 3 else "")
            return _failed(f"evidence ids outside the candidate pool ({len(outside)} of {len(ids)}): {shown}")
    out = {_RENAME.get(k, k): v for k, v in common.items()}
    out = {k: out.get(k) for k in JUDGMENT_FIELDS}
    out.update(parse_ok=True, parse_error=None, parse_error_kind=None)
    return out
