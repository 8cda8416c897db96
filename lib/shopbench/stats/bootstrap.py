"""A generic, vectorised, seeded bootstrap over units, with percentile confidence intervals.

A resample of ``n`` units is represented by its vector of multinomial counts ``w`` (how often each unit
was drawn; ``w.sum() == n``). Any statistic that is a function of per-unit sums — a mean, a ratio of
sums (accuracy on a subset), a Krippendorff coincidence matrix — is then a matrix product ``W @ X``
for a whole block of resamples at once, with no Python loop over resamples. Blocks of ``chunk``
resamples bound the memory (``chunk × n`` counts).

The paper (PADMÉ, Table 2) reports "bootstrap 95% confidence intervals in brackets"; it does not say
which bootstrap. We use the percentile bootstrap over the study's units (trajectory pairs): the
interval is the 2.5th and 97.5th percentiles of the resampled statistic, and the point estimate is
the full-sample value. Resamples in which the statistic is undefined (NaN, e.g. an empty subset)
are ignored, and the number of defined resamples is reported.

``strata`` resamples within each stratum separately (each stratum keeps its size), e.g. the two
annotator panels of 75 pairs, which keeps the study's design in every resample.

Results depend only on ``seed`` (a :class:`numpy.random.Generator` is built from it): the same seed
gives the same resamples, hence the same interval.

This is the project's one bootstrap: the PACE headline intervals (:mod:`shopbench.metrics.pace.headline`,
resampling base records), the PADMÉ meta-evaluation and human-study intervals and the shop agents'
Table 14 (:mod:`shopbench.metrics.shop.intervals`) all draw their resamples here, and the resample
count is ``n_boot`` everywhere. ``draw`` picks how a resample's counts are drawn: ``"multinomial"``
(the default) or ``"indices"`` (``n`` unit indices drawn uniformly, then counted) — the same law, two
random streams; the shop tables use ``"indices"``, the stream they were first published with.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DEFAULT_CHUNK = 1000


@dataclass
class BootstrapResult:
    """A point estimate with its percentile interval; arrays when the statistic is a vector."""

    estimate: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    n_boot: int
    n_valid: int | np.ndarray
    ci: float = 0.95
    samples: np.ndarray | None = field(default=None, repr=False)


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


DRAWS = ("multinomial", "indices")


def _counts(rng: np.random.Generator, n: int, b: int, draw: str) -> np.ndarray:
    """``b`` count vectors over ``n`` units, each summing to ``n``."""
    if draw == "multinomial":
        return rng.multinomial(n, np.full(n, 1.0 / n), size=b)
    idx = rng.integers(0, n, size=(b, n))
    return np.bincount((idx + n * np.arange(b)[:, None]).ravel(), minlength=b * n).reshape(b, n)


def resample_counts(
    n: int, n_boot: int, seed=0, strata=None, chunk: int = DEFAULT_CHUNK, draw: str = "multinomial"
) -> Iterator[np.ndarray]:
    """Blocks of bootstrap count vectors, shape ``(b, n)`` with ``b <= chunk``, ``n_boot`` rows in all.

    Row ``r`` says how many times each unit is drawn in resample ``r`` (multinomial with equal
    probabilities; within each stratum when ``strata`` is given). Deterministic per ``seed`` (and
    ``draw``; with ``draw="indices"`` also per ``chunk``, which sets how the index draws are blocked).
    """
    if n <= 0:
        raise ValueError("bootstrap needs at least one unit")
    if draw not in DRAWS:
        raise ValueError(f"draw {draw!r}: use one of {', '.join(DRAWS)}")
    rng = _rng(seed)
    groups = None
    if strata is not None:
        strata = np.asarray(strata)
        if strata.shape != (n,):
            raise ValueError(f"strata has shape {strata.shape}, expected ({n},)")
        groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        if groups is None:
            w = _counts(rng, n, b, draw)
        else:
            w = np.zeros((b, n), dtype=np.int64)
            for g in groups:
                w[:, g] = _counts(rng, len(g), b, draw)
        yield w
        done += b


def percentile_ci(samples: np.ndarray, ci: float = 0.95) -> tuple[Any, Any]:
    """Percentile interval of ``samples`` along axis 0, ignoring NaN resamples."""
    q = 100 * (1 - ci) / 2
    samples = np.asarray(samples, dtype=float)
    if samples.size == 0 or np.all(np.isnan(samples), axis=0).all():
        shape = samples.shape[1:]
        nan = np.full(shape, np.nan)
        return (nan, nan) if shape else (np.nan, np.nan)
    with warnings.catch_warnings():  # an all-NaN column of a vector statistic gives NaN, silently
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(samples, [q, 100 - q], axis=0)
    return lo, hi


def bootstrap(stat: Callable[[np.ndarray], np.ndarray], n: int, n_boot: int = 2000, seed=0, ci: float = 0.95,
              strata=None, chunk: int = DEFAULT_CHUNK, keep_samples: bool = False,
              draw: str = "multinomial") -> BootstrapResult:  # fmt: skip
    """Percentile bootstrap of a *weighted* statistic over ``n`` units.

    ``stat(w)`` receives a float array of unit weights, shape ``(b, n)``, and returns the statistic
    of each weighting, shape ``(b,)`` or ``(b, k)``. With ``w`` all ones it must return the
    full-sample value (that is the point estimate). Write statistics as weighted sums, e.g. a mean
    ``(w @ x) / w.sum(1)``, so that a block of resamples is one matrix product.
    """
    est = np.asarray(stat(np.ones((1, n))), dtype=float)[0]
    parts = [
        np.asarray(stat(w.astype(float)), dtype=float)
        for w in resample_counts(n, n_boot, seed, strata, chunk, draw)
    ]
    samples = np.concatenate(parts, axis=0) if parts else np.empty((0, *est.shape))
    lo, hi = percentile_ci(samples, ci)
    n_valid = np.sum(~np.isnan(samples), axis=0)
    scalar = est.ndim == 0
    return BootstrapResult(
        estimate=float(est) if scalar else est, low=float(lo) if scalar else lo, high=float(hi) if scalar else hi,
        n_boot=n_boot, n_valid=int(n_valid) if scalar else n_valid, ci=ci, samples=samples if keep_samples else None,
    )  # fmt: skip


def _safe_div(a, b):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)


def bootstrap_mean(values, n_boot: int = 2000, seed=0, ci: float = 0.95, strata=None,
                   chunk: int = DEFAULT_CHUNK, keep_samples: bool = False,
                   draw: str = "multinomial") -> BootstrapResult:  # fmt: skip
    """Mean of ``values`` (shape ``(n,)``, or ``(n, k)`` for ``k`` statistics resampled jointly).

    Missing values (NaN) are left out of each resample's mean, so a column may cover fewer units.
    """
    x = np.asarray(values, dtype=float)
    vec = x.ndim == 2
    x2 = x if vec else x[:, None]
    present = ~np.isnan(x2)
    xz = np.where(present, x2, 0.0)
    pf = present.astype(float)

    def stat(w):
        out = _safe_div(w @ xz, w @ pf)
        return out if vec else out[:, 0]

    return bootstrap(stat, x.shape[0], n_boot, seed, ci, strata, chunk, keep_samples, draw)


def bootstrap_ratio(numerator, denominator, n_boot: int = 2000, seed=0, ci: float = 0.95, strata=None,
                    chunk: int = DEFAULT_CHUNK, keep_samples: bool = False,
                    draw: str = "multinomial") -> BootstrapResult:  # fmt: skip
    """Ratio of sums ``Σ num / Σ den`` over units, e.g. accuracy on a subset: ``num = correct & in``,
    ``den = in``. Arrays of shape ``(n,)`` or ``(n, k)``; a resample with ``Σ den = 0`` is undefined."""
    num = np.asarray(numerator, dtype=float)
    den = np.asarray(denominator, dtype=float)
    if num.shape != den.shape:
        raise ValueError(f"numerator {num.shape} and denominator {den.shape} differ in shape")

    def stat(w):
        return _safe_div(w @ num, w @ den)

    return bootstrap(stat, num.shape[0], n_boot, seed, ci, strata, chunk, keep_samples, draw)
