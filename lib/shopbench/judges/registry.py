"""The judge registry: every :class:`~shopbench.judges.JudgeSpec` by name.

Judge definitions register themselves where they are defined, with the :func:`judge` decorator on
a factory that returns one spec or several (the PACE protocols, the six shop rubrics)::

    @judge
    def padme_filter() -> FilterSpec:
        return FilterSpec(name="padme_filter", prompt="padme_filter_judge", ...)

:func:`get_judge` looks a name up (importing the modules that define the project's judges first),
:func:`judge_names` lists them.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable
from typing import TypeVar

from .spec import JudgeSpec

__all__ = ["get_judge", "judge", "judge_names"]

_REGISTRY: dict[str, JudgeSpec] = {}
# the modules that define the project's judges (imported on the first lookup)
_DEFINED_IN = ("shopbench.judges.pace.protocols", "shopbench.judges.padme.filters", "shopbench.judges.padme.evaluators",
               "shopbench.judges.shop.judge", "shopbench.judges.tau2.nl_assertions")  # fmt: skip
F = TypeVar("F", bound=Callable[[], "JudgeSpec | Iterable[JudgeSpec]"])


def register(spec: JudgeSpec) -> JudgeSpec:
    """Add one spec; a spec of another kind under a taken name is an error (a module reloaded
    replaces its own)."""
    if not isinstance(spec, JudgeSpec):
        raise TypeError(f"only JudgeSpec instances can be registered, got {type(spec).__name__}")
    prev = _REGISTRY.get(spec.name)
    if prev is not None and prev is not spec and type(prev).__qualname__ != type(spec).__qualname__:
        raise ValueError(
            f"judge name {spec.name!r} is already registered ({prev.source or type(prev).__name__})"
        )
    _REGISTRY[spec.name] = spec
    return spec


def judge(factory: F) -> F:
    """Decorator: call ``factory`` once and register the spec(s) it returns; calling the decorated
    name again returns those same registered objects."""
    made = factory()
    specs = [made] if isinstance(made, JudgeSpec) else list(made)
    for spec in specs:
        register(spec)
    value = made if isinstance(made, JudgeSpec) else specs

    @functools.wraps(factory)
    def registered():
        return value

    return registered  # type: ignore[return-value]


def _load_all() -> None:
    for mod in _DEFINED_IN:
        importlib.import_module(mod)


def get_judge(name: str) -> JudgeSpec:
    """The registered spec ``name``; an unknown name lists the known ones."""
    if name not in _REGISTRY:
        _load_all()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown judge {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def judge_names() -> list[str]:
    """Every registered judge, sorted."""
    _load_all()
    return sorted(_REGISTRY)
