"""The judge registry: every :class:`~shopbench.judges.JudgeSpec` by name, as entries of kind
``judge`` in the one registry (:mod:`shopbench.core.registry`, issue 27).

Judge definitions register themselves where they are defined, with the :func:`judge` decorator on
a factory that returns one spec or several (the PACE protocols, the six shop rubrics)::

    @judge
    def padme_filter() -> FilterSpec:
        return FilterSpec(name="padme_filter", prompt="padme_filter_judge", ...)

Each entry's ``group`` is the paper subpackage that defines it (``shopbench.judges.<group>.…``: the
PACE protocols are group ``pace``, the shop verifier's questions ``shop``; ``@judge(group=...)``
names another);
:func:`get_judge` looks a name up (importing the modules that define the project's judges first),
:func:`judge_names` lists them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, overload

from ..core import registry
from .spec import JudgeSpec

__all__ = ["get_judge", "judge", "judge_names"]

# the modules that define the project's judges (imported on the first lookup)
registry.declare_modules("judge", "shopbench.judges.pace.protocols", "shopbench.judges.padme.filters",
                         "shopbench.judges.padme.evaluators", "shopbench.judges.shop.judge",
                         "shopbench.judges.tau2.nl_assertions")  # fmt: skip
F = TypeVar("F", bound=Callable[[], "JudgeSpec | Iterable[JudgeSpec]"])


def register(spec: JudgeSpec, factory: Callable[..., Any] | None = None, group: str = "") -> JudgeSpec:
    """Add one spec; a spec of another kind under a taken name is an error (a module reloaded
    replaces its own)."""
    if not isinstance(spec, JudgeSpec):
        raise TypeError(f"only JudgeSpec instances can be registered, got {type(spec).__name__}")
    prev = registry.find("judge", spec.name)
    if prev is not None and prev.obj is not spec and type(prev.obj).__qualname__ != type(spec).__qualname__:
        raise ValueError(
            f"judge name {spec.name!r} is already registered ({prev.obj.source or type(prev.obj).__name__})"
        )
    registry.register("judge", spec.name, spec, factory=factory, replace=True, group=group,
                      summary=spec.source or type(spec).__name__)  # fmt: skip
    return spec


def _group_of(factory: Callable[..., Any]) -> str:
    parts = getattr(factory, "__module__", "").split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["shopbench", "judges"] else ""


def _judge(factory: F, group: str) -> F:
    group = group or _group_of(factory)
    made = factory()
    specs = [made] if isinstance(made, JudgeSpec) else list(made)
    for spec in specs:
        register(spec, factory, group)
    value = made if isinstance(made, JudgeSpec) else specs

    @functools.wraps(factory)
    def registered():
        return value

    return registered  # type: ignore[return-value]


@overload
def judge(factory: F, *, group: str = "") -> F: ...
@overload
def judge(factory: None = None, *, group: str = "") -> Callable[[F], F]: ...
def judge(factory: F | None = None, *, group: str = "") -> F | Callable[[F], F]:
    """Decorator (``@judge`` or ``@judge(group="pace")``): call ``factory`` once and register the
    spec(s) it returns; calling the decorated name again returns those same registered objects."""
    if factory is None:
        return lambda f: _judge(f, group)
    return _judge(factory, group)


def get_judge(name: str) -> JudgeSpec:
    """The registered spec ``name``; an unknown name lists the known ones."""
    if registry.find("judge", name) is None:
        registry.load("judge")
    entry = registry.find("judge", name)
    if entry is None:
        raise KeyError(f"unknown judge {name!r}; known: {', '.join(sorted(registry.names('judge')))}")
    return entry.obj


def judge_names() -> list[str]:
    """Every registered judge, sorted."""
    registry.load("judge")
    return sorted(registry.names("judge"))
