"""Provider prompt caching (issue 14 §4): what a response says was read from or written to the
provider's prompt cache, and Anthropic ``cache_control`` on the fixed prefix of a sweep's prompts.

Two caches are at work and the project reports them side by side:

- the gateway's own response cache (``cache_hit``: the whole answer came from disk, no call made);
- the provider's prompt cache (``cached_tokens`` / ``cache_write_tokens`` of a call that was made):
  OpenAI caches prompt prefixes of ≥ 1024 tokens automatically and reports them in
  ``usage.prompt_tokens_details.cached_tokens``; Anthropic caches the prefix up to a
  ``cache_control`` breakpoint and reports ``cache_read_input_tokens`` and
  ``cache_creation_input_tokens`` (litellm maps the read count into
  ``prompt_tokens_details.cached_tokens`` too). litellm's cost functions bill both at the cached
  rates, so ``cost_usd`` already reflects them.

What is marked for Anthropic: an agent or simulator conversation's system message (system prompt,
rules, tool/JSON contract); for a sweep of single-message prompts rendered from one template (judges,
evaluators), the longest prefix the sweep's prompts to one model share, cut at a line break — the
template's rules and schema up to the first slot. The cache key of a call is computed from its
messages before marking, so marking never changes what is cached or resumed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

TEMPLATE_HEAD_CHARS = 80  # prompts that open alike come from one template
MIN_PREFIX_CHARS = 400  # shorter shared prefixes are not worth a breakpoint (Anthropic ignores < 1024 tokens)
CACHE_CONTROL = {"type": "ephemeral"}
PROVIDERS_WITH_CACHE_CONTROL = ("anthropic",)
DISABLE_ENV = "SHOPBENCH_NO_PROMPT_CACHE_CONTROL"


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def cache_tokens(usage: Any) -> tuple[int | None, int | None]:
    """``(cached_read, cache_write)`` input tokens from a response's ``usage`` (object or dict, OpenAI
    or Anthropic shape); None where the provider reports nothing."""
    if usage is None:
        return None, None
    read = _get(_get(usage, "prompt_tokens_details"), "cached_tokens")
    if read is None:
        read = _get(usage, "cache_read_input_tokens")
    write = _get(usage, "cache_creation_input_tokens")
    return (int(read) if read is not None else None, int(write) if write is not None else None)


def _text(content: Any) -> str | None:
    return content if isinstance(content, str) else None


def shared_prefix(texts: Iterable[str]) -> int:
    """Length of the longest common prefix of ``texts``, cut back to just after a line break."""
    texts = list(texts)
    if len(texts) < 2:
        return 0
    a, b = min(texts), max(texts)  # the LCP of a set is the LCP of its min and max
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    cut = a.rfind("\n", 0, n)
    return cut + 1 if cut >= 0 else 0


def plan(calls: Sequence[Any]) -> dict[str, int]:
    """``{call key: prefix length}`` for the first user message of single-prompt calls (no system
    message) to a cache-control provider, where the sweep's prompts to one model from one template
    (same contract name and the same first characters) share ≥
    :data:`MIN_PREFIX_CHARS` characters. Calls with a system message need no plan."""
    if os.environ.get(DISABLE_ENV):
        return {}
    groups: dict[tuple, list[Any]] = {}
    for c in calls:
        if c.provider not in PROVIDERS_WITH_CACHE_CONTROL or not c.messages:
            continue
        first = c.messages[0]
        text = _text(first.get("content"))
        if first.get("role") == "user" and text is not None:
            # one group per template: a sweep may mix protocols (each its own rules and schema)
            groups.setdefault((c.model, c.schema_name, text[:TEMPLATE_HEAD_CHARS]), []).append(c)
    out: dict[str, int] = {}
    for group in groups.values():
        n = shared_prefix(c.messages[0]["content"] for c in group)
        if n >= MIN_PREFIX_CHARS:
            out.update({c.key: n for c in group})
    return out


def with_cache_control(
    provider: str, messages: Sequence[dict], prefix_chars: int | None = None
) -> list[dict]:
    """``messages`` as sent to the provider: for Anthropic, a ``cache_control`` breakpoint after the
    system message, or after the first ``prefix_chars`` characters of the first user message (split
    into two text blocks). Other providers (automatic caching) get the messages unchanged."""
    msgs = list(messages)
    if provider not in PROVIDERS_WITH_CACHE_CONTROL or not msgs or os.environ.get(DISABLE_ENV):
        return msgs
    first = msgs[0]
    text = _text(first.get("content"))
    if first.get("role") == "system" and text:
        msgs[0] = {**first, "content": [{"type": "text", "text": text, "cache_control": dict(CACHE_CONTROL)}]}
    elif first.get("role") == "user" and text and prefix_chars and 0 < prefix_chars < len(text):
        msgs[0] = {
            **first,
            "content": [
                {"type": "text", "text": text[:prefix_chars], "cache_control": dict(CACHE_CONTROL)},
                {"type": "text", "text": text[prefix_chars:]},
            ],
        }
    return msgs


def _n(v: Any) -> int:
    """A token count from a row: 0 for None / NaN (a pandas record) / garbage."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return 0
    return int(f) if f == f else 0


def summarize(rows: Iterable[Mapping]) -> dict:
    """The provider-cache line of a run (``run.json``): over calls actually made (not gateway cache
    hits), prompt tokens, tokens read from and written to the provider's cache, and the hit rate
    (cached-read tokens / prompt tokens), beside the gateway's own cache-hit rate."""
    calls = hits = made = with_read = 0
    prompt = read = write = 0
    for r in rows:
        calls += 1
        if r.get("cache_hit") is True or _n(r.get("cache_hit")) == 1:
            hits += 1
            continue
        if r.get("status") == "error":
            continue
        made += 1
        prompt += _n(r.get("prompt_tokens"))
        rd = _n(r.get("cached_tokens"))
        read += rd
        write += _n(r.get("cache_write_tokens"))
        with_read += rd > 0
    return {
        "gateway_cache_hit_rate": hits / calls if calls else None,
        "provider_calls": made,
        "provider_prompt_tokens": prompt,
        "provider_cached_tokens": read,
        "provider_cache_write_tokens": write,
        "provider_cache_hit_rate": read / prompt if prompt else None,
        "provider_calls_with_cache_read": with_read,
    }


__all__ = ["cache_tokens", "plan", "shared_prefix", "summarize", "with_cache_control"]
