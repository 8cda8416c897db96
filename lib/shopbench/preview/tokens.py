"""Prompt and answer sizes in tokens, for the preview (issue 14 §2): no key, no call."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..llm.budget import count_tokens, text_tokens

__all__ = ["count_tokens", "prefix_tokens", "schema_answer_tokens", "text_tokens"]


def prefix_tokens(prompts: Sequence[Sequence[dict]]) -> int:
    """Tokens of the fixed prefix a sweep's prompts share, as the gateway would mark it: the system
    message when every prompt opens with the same one, else the longest common prefix of the first
    user messages cut at a line break (``llm.usage.shared_prefix``)."""
    from ..llm.usage import shared_prefix

    firsts = [p[0] for p in prompts if p]
    if len(firsts) < 2:
        return 0
    texts = [str(m.get("content") or "") for m in firsts]
    if all(m.get("role") == "system" for m in firsts) and len(set(texts)) == 1:
        return text_tokens(texts[0])
    n = shared_prefix(texts)
    return text_tokens(texts[0][:n]) if n else 0


def schema_answer_tokens(schema: dict | None, max_tokens: int | None, seed: int = 0) -> int:
    """Tokens of a seeded random answer that satisfies ``schema`` (what ``local/schema-sampler`` sends:
    a contract-shaped answer), capped at ``max_tokens``; the cap itself for free text."""
    import random

    from ..llm.local import sample_schema

    cap = int(max_tokens or 512)
    if not schema:
        return cap
    try:
        text = json.dumps(sample_schema(schema, random.Random(seed)))
    except Exception:  # noqa: BLE001 - an estimate: fall back to the cap
        return cap
    return min(text_tokens(text), cap)
