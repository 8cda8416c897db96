"""Bootstrap intervals of the shop agents' exact-cart success (seed 002 §5, App. L Table 14).

"Exact-cart success per agent with a 95 % percentile bootstrap interval" over its trials, overall and
per generator tier, and the difference of two agents' rates for the §5 separation claims. Input: the
verifier's score table (``shopbench.shopsim.verifier.battery.score_trials``: one row per trial with
``agent``, ``kind``, ``tier`` and ``exact_cart_success_rate``).

Resampling is :func:`shopbench.stats.bootstrap.bootstrap_mean` with ``draw="indices"`` (each resample
draws the trials by index; the same multinomial law as the default draw, on the random stream these
tables were first published with). Each (agent, tier) cell has its own generator seeded from
(seed, agent, tier), so a cell does not depend on the others.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from shopbench.stats.bootstrap import bootstrap_mean

GENERATOR_TIERS = ("direct", "light", "multi_item", "complex")


def _rng(seed: int, *parts: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), *(zlib.crc32(p.encode()) for p in parts)])


def _rates(x: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``n_boot`` resampled means of ``x`` (trials drawn by index)."""
    res = bootstrap_mean(x, n_boot=n_boot, seed=rng, draw="indices", chunk=max(n_boot, 1), keep_samples=True)
    assert res.samples is not None
    return res.samples


def _success(scores: pd.DataFrame, kinds: Sequence[str]) -> pd.DataFrame:
    need = {"agent", "kind", "tier", "exact_cart_success_rate"} - set(scores.columns)
    if need:
        raise ValueError(f"bootstrap needs score_trials() output; the scores lack columns {sorted(need)}")
    df = scores[scores["kind"].isin(list(kinds))]
    df = df[df["exact_cart_success_rate"].notna()]
    return df.assign(_x=df["exact_cart_success_rate"].astype(float))


def bootstrap_success(
    scores: pd.DataFrame,
    n_boot: int = 6000,
    seed: int = 0,
    kinds: Sequence[str] = ("general",),
    ci: float = 0.95,
) -> pd.DataFrame:
    """Exact-cart success per agent with the central ``ci`` percentile interval of ``n_boot`` resamples
    of its trials, overall and per generator tier (Table 14)."""
    df = _success(scores, kinds)
    q = 100 * (1 - ci) / 2
    rows = []
    for agent, sub in df.groupby("agent", sort=True):
        for tier in ("overall", *GENERATOR_TIERS):
            x = (sub if tier == "overall" else sub[sub["tier"] == tier])["_x"].to_numpy(float)
            if x.size == 0:
                rows.append(
                    {"agent": agent, "tier": tier, "n": 0, "rate": np.nan, "low": np.nan, "high": np.nan}
                )
                continue
            b = _rates(x, n_boot, _rng(seed, str(agent), tier))
            lo, hi = np.percentile(b, [q, 100 - q])
            rows.append({"agent": agent, "tier": tier, "n": int(x.size), "rate": float(x.mean()),
                         "low": float(lo), "high": float(hi)})  # fmt: skip
    return pd.DataFrame(rows, columns=["agent", "tier", "n", "rate", "low", "high"])


def bootstrap_contrast(
    scores: pd.DataFrame,
    a: str,
    b: str,
    n_boot: int = 6000,
    seed: int = 0,
    kinds: Sequence[str] = ("general",),
    ci: float = 0.95,
) -> dict:
    """Exact-cart success difference ``rate(a) - rate(b)``: the two unpaired runs are resampled
    independently and the central ``ci`` of the difference is reported (§5). ``separated`` is True when
    the interval excludes 0.

    An agent with no scored trial of ``kinds`` (a budgeted LLM agent whose budget ran out before its first
    general trial) gives a row with its ``n`` = 0, no difference and no interval, and a ``note`` saying so:
    a sweep's table is never lost to one empty run."""
    df = _success(scores, kinds)
    xa = df.loc[df["agent"] == a, "_x"].to_numpy(float)
    xb = df.loc[df["agent"] == b, "_x"].to_numpy(float)
    empty = [name for name, x in ((a, xa), (b, xb)) if x.size == 0]
    if empty:
        nan = float("nan")
        return {"a": a, "b": b, "n_a": int(xa.size), "n_b": int(xb.size),
                "rate_a": float(xa.mean()) if xa.size else nan, "rate_b": float(xb.mean()) if xb.size else nan,
                "diff": nan, "low": nan, "high": nan, "separated": False,
                "note": f"no {'/'.join(kinds)} trials with an exact-cart score for {', '.join(map(str, empty))}"}  # fmt: skip
    d = _rates(xa, n_boot, _rng(seed, str(a), "contrast-a")) - _rates(
        xb, n_boot, _rng(seed, str(b), "contrast-b")
    )
    q = 100 * (1 - ci) / 2
    lo, hi = np.percentile(d, [q, 100 - q])
    return {"a": a, "b": b, "n_a": int(xa.size), "n_b": int(xb.size), "rate_a": float(xa.mean()),
            "rate_b": float(xb.mean()), "diff": float(xa.mean() - xb.mean()), "low": float(lo), "high": float(hi),
            "separated": bool(lo > 0 or hi < 0)}  # fmt: skip


__all__ = ["GENERATOR_TIERS", "bootstrap_success", "bootstrap_contrast"]
