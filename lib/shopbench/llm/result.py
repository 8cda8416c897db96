"""The typed result of one gateway call: :class:`CallResult`, the row :meth:`Gateway.run` returns.

A row is what the call log (``outputs/<profile>/calls/<run_id>.jsonl``) stores for a call, and what
a consumer reads back: a :class:`~typing.TypedDict`, so every row stays the plain ``dict`` it always
was at run time (JSON lines, DataFrames, notebooks keep working) while the type checker knows the
field names and their types. A row read back from a call log has the same fields (a log written by
an older version may lack the newest ones: read those with ``row.get``).

``status`` is ``"ok"`` (the output met its contract; ``parsed`` holds it), ``"parse_error"`` (the
call answered but the output broke its contract; ``parse_error`` says how) or ``"error"`` (the call
itself failed after its retries; ``error`` says why, ``raw_output`` is ``None``).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = ["CallResult", "CallStatus", "STATUSES", "call_usage"]

CallStatus = Literal["ok", "parse_error", "error"]
STATUSES: tuple[CallStatus, ...] = ("ok", "parse_error", "error")


class CallResult(TypedDict):
    """One gateway call's row (the call log's schema)."""

    run_id: str
    item_id: str
    key: str  # the cache key of the request
    model: str
    repeat: int
    prompt_hash: str
    status: CallStatus
    raw_output: str | None
    tool_calls: list[dict[str, Any]] | None
    parsed: Any  # the contract-valid output (None unless status is "ok")
    parse_error: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None  # prompt tokens the provider served from its prompt cache (issue 14 §4)
    cache_write_tokens: int | None  # prompt tokens written to the provider cache (Anthropic)
    cost_usd: float
    latency_s: float
    model_latency_s: float | None  # of the call that produced the answer (a cache hit: the original's)
    cache_hit: bool
    attempts: int
    error: str | None
    ts: float


def call_usage(row: CallResult) -> dict[str, float]:
    """The tokens and cost of one call as floats (a missing count, as on a failed call: 0.0)."""
    return {
        "prompt_tokens": float(row.get("prompt_tokens") or 0.0),
        "completion_tokens": float(row.get("completion_tokens") or 0.0),
        "cost_usd": float(row.get("cost_usd") or 0.0),
    }
