"""Small numeric helpers the tasks share for their headline cells (issue 26 §1: metrics with CIs)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from typing import Any

# an LLM agent's step errors that are failed calls, not answers (shopsim.agents.LLMAgent.step, LLMRetailAgent)
CALL_FAILED = ("model call failed", "the gateway failed")


def finite(x: Any) -> float | None:
    """``x`` as a float, or None when it is NaN or infinite (a JSON-safe metric cell)."""
    x = float(x)
    return x if math.isfinite(x) else None


def mean_ci(values: Iterable[Any], tag: str, *, seed: int, n_boot: int) -> dict:
    """``{estimate, ci_low, ci_high, n}``: the mean of ``values`` (NaN left out) with the one bootstrap's
    95 % percentile interval (:func:`shopbench.stats.bootstrap.bootstrap_mean`, at least one resample),
    seeded by ``seed`` and ``tag`` so each metric has its own stream; all None with ``n`` 0 when no value."""
    import numpy as np

    from ..stats.bootstrap import bootstrap_mean

    x = np.asarray([v for v in values if v == v], dtype=float)
    if not x.size:
        return {"estimate": None, "ci_low": None, "ci_high": None, "n": 0}
    rng = np.random.default_rng([seed, int(hashlib.sha256(tag.encode()).hexdigest()[:8], 16)])
    b = bootstrap_mean(x, n_boot=max(n_boot, 1), seed=rng)
    return {"estimate": float(x.mean()), "ci_low": finite(b.low), "ci_high": finite(b.high), "n": int(x.size)}


def pass_hat_k_cells(scored: Any, epochs: int, *, task: str = "sample_id", value: str = "reward") -> dict:
    """``{"pass^k": {estimate, n}}`` for k = 1..``epochs``: τ-bench's per-task C(c, k) / C(n, k) averaged
    over the tasks with all ``epochs`` trials scored (c = the sum of ``value``, a 0/1 reward), the point
    cells of an agent task's headline (the CI is :func:`shopbench.stats.pass_hat_k`'s, in ``noise``)."""
    import numpy as np

    full = scored.groupby(task)[value].agg(["count", "sum"])
    full = full[full["count"] == epochs]
    out = {}
    for k in range(1, epochs + 1):
        vals = [math.comb(int(c), k) / math.comb(epochs, k) for c in full["sum"]]
        out[f"pass^{k}"] = {"estimate": float(np.mean(vals)) if vals else None, "n": len(vals)}
    return out


def conversation_unit(conv: Any, *, own_agent: bool, call_failed: Iterable[str]) -> tuple[str, str | None]:
    """One τ² episode's unit outcome (:mod:`shopbench.llm.outcomes`): a failed customer simulator is a
    call error; an agent error is a call error for a user's agent class or a failed model call, else a
    parse failure of the model's answer; anything else is ok."""
    from ..llm.outcomes import CALL_ERROR, OK, PARSE_FAILURE

    if conv.termination == "user_error":
        return CALL_ERROR, f"the customer simulator failed: {conv.errors.get('user', 'no turn')}"
    if conv.termination != "agent_error":
        return OK, None
    err = str(conv.errors.get("agent") or "agent error")
    if own_agent or any(c in err for c in call_failed):
        return CALL_ERROR, f"agent error: {err}"
    return PARSE_FAILURE, err
