"""PACE metrics as sufficient statistics, and their registry (seed 000, Section 5.2, Appendix E.4).

A metric is a :class:`MetricSpec`: per-row statistics (counts) plus a vectorised ``combine`` from
summed statistics to values. The point estimate sums the statistics over a group; the bootstrap
(:mod:`.headline`) sums them per base record once and forms each resample as a weighted sum, so every
headline interval is one matrix product.

A metric is declared once, with :func:`metric`::

    @metric
    def s1_pjc() -> MetricSpec:  # its docstring: the paper's definition, then what the code does
        return MetricSpec("s1_pjc", stats, combine, targets)

The decorator returns the :class:`MetricSpec` itself (registered in the one registry,
:mod:`shopbench.core.registry`, as a ``metric`` of group ``pace`` under the function's name;
:data:`METRICS` is that view, in declaration order); a spec is callable on a run table (``s1_pjc(run_table, by=..., native_targets=...)``
gives one row per group), and a factory with parameters (``s0_balanced_accuracy(subset_ids=...)``)
is rebound per call with :meth:`MetricSpec.bind`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ...core import registry
from .run_table import BY, native_targets_of, no_answer_groups, prepare, usable


def safe_div(num, den):
    """num / den elementwise, NaN where den == 0."""
    num = np.asarray(num, float)
    den = np.asarray(den, float)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def harmonic(*xs):
    """Harmonic mean of components in [0, 1]: 0 when any component is 0, NaN when any is NaN."""
    xs = [np.asarray(x, float) for x in xs]
    zero = np.zeros(np.broadcast(*xs).shape, bool)
    inv = np.zeros(zero.shape)
    for x in xs:
        zero |= x <= 0
        with np.errstate(divide="ignore"):
            inv = inv + np.where(x > 0, 1.0 / np.where(x > 0, x, 1.0), 0.0)
    out = np.where(zero, 0.0, len(xs) / np.where(inv > 0, inv, 1.0))
    nan = np.zeros(zero.shape, bool)
    for x in xs:
        nan |= np.isnan(x)
    return np.where(nan, np.nan, out)


Stats = Callable[[pd.DataFrame], pd.DataFrame]
Combine = Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class MetricSpec:
    """A metric as sufficient statistics.

    ``stats(prepared)`` returns per-row float statistics (a DataFrame on a subset of the prepared
    index; absent rows count 0). ``combine(sums)`` maps the summed statistics — arrays of any shape —
    to named outputs of the same shape. Outputs named ``n_*`` are counts (reported, never bootstrapped).
    ``targets[output]`` is the set of PACE targets a protocol must support natively for that output
    to be reported (absent: always reported). ``report`` (optional) names the outputs a caller sees;
    the others are internal."""

    name: str
    stats: Stats
    combine: Combine
    targets: Mapping[str, frozenset] = field(default_factory=dict)
    report: tuple[str, ...] | None = None
    factory: Callable[..., MetricSpec] | None = field(default=None, compare=False, repr=False)

    def outputs_supported(self, protocol: str, native_targets=None) -> dict[str, bool]:
        nat = native_targets_of(protocol, native_targets)
        return {o: t <= nat for o, t in self.targets.items()}

    def bind(self, *args: Any, **params: Any) -> MetricSpec:
        """The spec with its factory's parameters set (``s0_balanced_accuracy.bind(subset_ids=ids)``);
        itself when none are given."""
        if not args and not params:
            return self
        if self.factory is None:
            raise TypeError(f"metric {self.name!r} takes no parameters; got {sorted(params) or list(args)}")
        try:
            inspect.signature(self.factory).bind(*args, **params)
        except TypeError as e:
            raise TypeError(f"metric {self.factory.__name__!r}: {e}") from None
        return replace(self.factory(*args, **params), factory=self.factory)

    def __call__(self, run_table: pd.DataFrame, *args: Any, by: Iterable[str] = BY, native_targets=None,
                 **params: Any) -> pd.DataFrame:  # fmt: skip
        """Point estimates per group: one row per group, one column per output, ``supported``."""
        return evaluate(self.bind(*args, **params), run_table, by, native_targets)


METRICS: Mapping[str, MetricSpec] = registry.View("metric", group="pace")


def metric(factory: Callable[..., MetricSpec]) -> MetricSpec:
    """Register a metric: ``factory(**params) -> MetricSpec`` (every parameter has a default). Returns
    the default spec, which carries the factory (for :meth:`MetricSpec.bind`) and its docstring."""
    spec = replace(factory(), factory=factory)
    object.__setattr__(spec, "__doc__", factory.__doc__)
    if factory.__name__ in METRICS:
        raise ValueError(f"metric {factory.__name__!r} is registered twice")
    registry.register("metric", factory.__name__, spec, factory=factory, replace=False, group="pace",
                      summary=registry.summary_of(factory.__doc__))  # fmt: skip
    return spec


def compose(name: str, parts: Mapping[str, MetricSpec], derived: Combine | None = None,
            derived_targets: Mapping[str, frozenset] | None = None,
            report: tuple[str, ...] | None = None) -> MetricSpec:  # fmt: skip
    """One spec from several: statistics and outputs are prefixed ``<part>:``; ``derived`` adds
    outputs computed from the parts' outputs (e.g. the PACE average)."""

    def stats(p: pd.DataFrame) -> pd.DataFrame:
        frames = [s.stats(p).add_prefix(f"{k}:") for k, s in parts.items()]
        return pd.concat(frames, axis=1).fillna(0.0)

    def combine(sums: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for k, s in parts.items():
            pre = f"{k}:"
            sub = {n[len(pre) :]: v for n, v in sums.items() if n.startswith(pre)}
            out.update({f"{pre}{o}": v for o, v in s.combine(sub).items()})
        if derived is not None:
            out.update(derived(out))
        return out

    targets = {f"{k}:{o}": t for k, s in parts.items() for o, t in s.targets.items()}
    targets.update(derived_targets or {})
    return MetricSpec(name, stats, combine, targets, report)


def group_sums(stats: pd.DataFrame, prepared: pd.DataFrame, by: Iterable[str]) -> pd.DataFrame:
    """Statistics summed per group (groups with no contributing rows are kept, with zeros)."""
    by = list(by)
    keys = prepared[by].drop_duplicates().set_index(by).index.sort_values()
    if stats.shape[1] == 0 or len(stats) == 0:
        return pd.DataFrame(0.0, index=keys, columns=stats.columns)
    sums = stats.groupby([prepared.loc[stats.index, b] for b in by]).sum()
    return sums.reindex(keys, fill_value=0.0)


def apply_support(
    values: pd.DataFrame, spec: MetricSpec, by: Iterable[str], native_targets=None
) -> pd.DataFrame:
    """NaN (never a number) in outputs the group's protocol does not support; adds ``supported``."""
    by = list(by)
    values = values.copy()
    supported = pd.Series(True, index=values.index)
    if "protocol" in by and spec.targets:
        protos = values.index.get_level_values("protocol")
        for proto in pd.unique(protos):
            flags = spec.outputs_supported(proto, native_targets)
            rows = protos == proto
            for out, ok in flags.items():
                if not ok and out in values:
                    values.loc[rows, out] = np.nan
            if not all(flags.values()):
                supported[rows] = False
    values["supported"] = supported
    return values


def evaluate(spec: MetricSpec, run_table: pd.DataFrame, by: Iterable[str] = BY, native_targets=None,
             prepared: pd.DataFrame | None = None) -> pd.DataFrame:  # fmt: skip
    """Point estimates of a spec per group: one row per group, one column per output, ``supported``.
    Only usable rows are scored (call errors are not answers, :func:`~.run_table.usable`); a group
    with no ``ok`` answer keeps its row with NaN in every output but the ``n_*`` counts (issue 25)."""
    p = prepare(run_table) if prepared is None else prepared
    sums = group_sums(spec.stats(usable(p)), p, by)
    out = spec.combine({c: sums[c].to_numpy(float) for c in sums.columns})
    names = spec.report or tuple(out)
    values = pd.DataFrame({k: np.asarray(out[k], float) for k in names}, index=sums.index)
    if len(p):
        empty = no_answer_groups(p, by).reindex(values.index, fill_value=False).to_numpy(bool)
        for k in names:
            if not k.startswith("n_"):
                values.loc[empty, k] = np.nan
    return apply_support(values, spec, by, native_targets)


def _frame(p: pd.DataFrame, **cols) -> pd.DataFrame:
    return pd.DataFrame({k: np.asarray(v, float) for k, v in cols.items()}, index=p.index)


__all__ = ["MetricSpec", "METRICS", "metric", "compose", "evaluate", "group_sums", "apply_support", "safe_div",
           "harmonic"]  # fmt: skip
