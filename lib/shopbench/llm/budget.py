"""Run-level budget guard: a dry-run estimate before spending, and a cost cap that stops cleanly.

Prices come from litellm's bundled cost map (read locally). Embedded backends cost nothing. The
estimate counts prompt tokens as characters / 4 and assumes the call's ``max_tokens`` (or 512) for
the completion: an upper bound for planning, not a bill.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

EMBEDDED_PROVIDERS = ("local", "llamacpp")
DEFAULT_COMPLETION_TOKENS = 512


class BudgetExceeded(RuntimeError):
    """The run's cost cap was reached; finished calls are cached and logged, the rest were not made."""


def price_per_token(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token, 0 for embedded backends, None when litellm has no price."""
    if model.split("/", 1)[0] in EMBEDDED_PROVIDERS:
        return (0.0, 0.0)
    from ._litellm import litellm  # not for embedded backends (issue 26, Speed)

    for name in (model, model.split("/", 1)[-1]):
        info = litellm.model_cost.get(name)
        if info and "input_cost_per_token" in info:
            return float(info.get("input_cost_per_token") or 0.0), float(
                info.get("output_cost_per_token") or 0.0
            )
    return None


def estimate_tokens(messages: list[dict]) -> int:
    return sum(len(str(m.get("content", ""))) for m in messages) // 4 + 4 * len(messages)


TOKENIZER = "gpt-4o"  # the project's token count: litellm's tiktoken encoding for this model


def count_tokens(messages: Sequence[dict]) -> int:
    """Tokens of a prompt by litellm's token counter (a tiktoken encoding; providers' own tokenizers
    differ by some percent). Falls back to :func:`estimate_tokens` (characters / 4) when the encoding
    cannot load. The preview's prompt sizes and the negotiation's context probe both count with it
    (issue 27: here in ``llm``, below both)."""
    from ._litellm import litellm

    try:
        return int(litellm.token_counter(model=TOKENIZER, messages=list(messages)))
    except Exception:  # noqa: BLE001 - an estimate; the characters rule is the budget guard's own
        return estimate_tokens(list(messages))


def text_tokens(text: str) -> int:
    """Tokens of ``text`` as one assistant message (:func:`count_tokens`)."""
    return count_tokens([{"role": "assistant", "content": text}])


def estimate_call_cost(model: str, messages: list[dict], params: dict) -> float | None:
    price = price_per_token(model)
    if price is None:
        return None
    completion = int(params.get("max_tokens") or DEFAULT_COMPLETION_TOKENS)
    return estimate_tokens(messages) * price[0] + completion * price[1]


@dataclass
class Estimate:
    """What a sweep would do: calls to make, calls served from cache, estimated cost by model."""

    calls: int = 0
    cached: int = 0
    to_call: int = 0
    cost_usd: float = 0.0
    unpriced_models: set[str] = field(default_factory=set)
    by_model: dict[str, dict] = field(default_factory=dict)

    def add(self, model: str, cached: bool, cost: float | None) -> None:
        self.calls += 1
        m = self.by_model.setdefault(model, {"calls": 0, "cached": 0, "to_call": 0, "est_cost_usd": 0.0})
        m["calls"] += 1
        if cached:
            self.cached += 1
            m["cached"] += 1
            return
        self.to_call += 1
        m["to_call"] += 1
        if cost is None:
            self.unpriced_models.add(model)
        else:
            self.cost_usd += cost
            m["est_cost_usd"] += cost

    def __str__(self) -> str:
        s = f"{self.calls} calls: {self.cached} cached, {self.to_call} to make, est. ≤ ${self.cost_usd:.4f}"
        if self.unpriced_models:
            s += f" (no price known for {', '.join(sorted(self.unpriced_models))})"
        return s


def actual_cost(response) -> float:
    """The cost litellm already stamped on the response; computed only when it did not."""
    stamped = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    if stamped is not None:
        return float(stamped)
    from ._litellm import litellm

    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:
        return 0.0
