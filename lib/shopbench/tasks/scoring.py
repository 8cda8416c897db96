"""Small numeric helpers the tasks share for their headline cells (issue 26 §1: metrics with CIs)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from typing import Any


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
