"""The one registry of the workbench (issue 27, "one registry mechanism"): judges, metrics, agents,
tasks and local backends, each an :class:`Entry` of a *kind* under a *name*, with its factory and
metadata — the mechanism inspect_ai uses for ``@task``, ``@scorer`` and ``@metric``.

A definition registers itself where it is defined, with :func:`registered` on its factory (or
:func:`register` for a value made elsewhere)::

    @registered("task", "pace_judge", summary="a model as a PACE judge on PACEShop records")
    def pace_judge(protocol: str) -> Task: ...

Each kind's thin front end keeps its own names and messages (``get_judge``, ``judge_names``,
``get_protocol``, ``PROTOCOLS``, ``METRICS``, ``get_task``, ``local_backends``, ``SCRIPTED_AGENTS``);
this module holds the entries. A kind may name the modules that define its entries
(:func:`declare_modules`); they are imported on the first :func:`load` of that kind, so listing the
tasks imports no judge and no pandas. ``shopbench list --kind KIND`` prints :func:`entries`.

Entries keep their registration order (tables iterate the PACE protocols and metrics in it).
``metadata["group"]`` says which paper or package an entry belongs to (the PACE protocols are the
judges of group ``pace``); ``metadata["summary"]`` is its one line in ``shopbench list``.

This module imports nothing from ``shopbench`` (layer 0): the modules of a kind are named as strings.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = [
    "KINDS", "Entry", "View", "declare_modules", "did_you_mean", "entries", "find", "get", "load", "names", "register",
    "registered", "summary_of",
]  # fmt: skip

# the kinds of entry, with the plural ``shopbench list --kind`` spells
KINDS: dict[str, str] = {
    "task": "tasks", "judge": "judges", "metric": "metrics", "agent": "agents", "backend": "backends",
    "domain": "domains",
}  # fmt: skip

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Entry:
    """One registered name: its ``kind``, ``name``, the ``obj`` the registry hands out (a spec, a
    task's :class:`~shopbench.tasks.registry.TaskInfo`, a class, a backend), the ``factory`` that made
    or is it, and its ``metadata`` (``group``, ``summary``, anything the kind's front end needs)."""

    kind: str
    name: str
    obj: Any = field(repr=False)
    factory: Callable[..., Any] | None = field(default=None, repr=False)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def group(self) -> str:
        return str(self.metadata.get("group", ""))

    @property
    def summary(self) -> str:
        return str(self.metadata.get("summary", ""))

    def matches(self, match: Mapping[str, Any]) -> bool:
        return all(self.metadata.get(k) == v for k, v in match.items())


_ENTRIES: dict[str, dict[str, Entry]] = {k: {} for k in KINDS}
_MODULES: dict[str, list[str]] = {k: [] for k in KINDS}
_version = 0  # bumped on every registration: a View rebuilds its mapping only then


def _kind(kind: str) -> dict[str, Entry]:
    try:
        return _ENTRIES[kind]
    except KeyError:
        raise ValueError(f"unknown registry kind {kind!r}; known: {', '.join(KINDS)}") from None


def _qualname(f: Any) -> str | None:
    return None if f is None else f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', '')}"


def register(kind: str, name: str, obj: Any, *, factory: Callable[..., Any] | None = None,
             replace: bool | None = None, **metadata: Any) -> Entry:  # fmt: skip
    """Add ``obj`` as ``kind`` ``name``. A taken name is an error, except: the same object again,
    ``replace=True`` (always replace), or ``replace=None`` and the same factory by qualified name (a
    module reloaded replaces its own entries)."""
    table = _kind(kind)
    prev = table.get(name)
    if prev is not None and prev.obj is not obj and replace is not True:
        same_factory = factory is not None and _qualname(prev.factory) == _qualname(factory)
        if replace is False or not same_factory:
            where = f" (by {_qualname(prev.factory)})" if prev.factory is not None else ""
            raise ValueError(f"{kind} name {name!r} is already registered{where}")
    entry = Entry(kind, name, obj, factory, dict(metadata))
    table[name] = entry
    global _version
    _version += 1
    return entry


def registered(kind: str, name: str | None = None, **metadata: Any) -> Callable[[F], F]:
    """Decorator: register the decorated factory itself as ``kind`` ``name`` (default: its
    ``__name__``) with ``metadata``; returns the factory unchanged."""

    def deco(factory: F) -> F:
        register(kind, name or factory.__name__, factory, factory=factory, **metadata)
        return factory

    return deco


def declare_modules(kind: str, *modules: str) -> None:
    """The modules that define entries of ``kind``, imported by :func:`load`."""
    _kind(kind)
    _MODULES[kind].extend(m for m in modules if m not in _MODULES[kind])


def load(kind: str) -> None:
    """Import the modules declared for ``kind`` (each once; importing an imported module is a lookup)."""
    _kind(kind)
    for mod in _MODULES[kind]:
        importlib.import_module(mod)


def find(kind: str, name: str) -> Entry | None:
    """The entry ``name`` of ``kind`` as registered so far (no import), or None."""
    return _kind(kind).get(name)


def get(kind: str, name: str, default: Any = None) -> Any:
    """The object registered as ``name`` of ``kind`` so far (no import), or ``default``."""
    e = _kind(kind).get(name)
    return default if e is None else e.obj


def entries(kind: str, **match: Any) -> list[Entry]:
    """The entries of ``kind`` registered so far whose metadata matches ``match``, in registration
    order (call :func:`load` first for the complete list)."""
    return [e for e in _kind(kind).values() if e.matches(match)]


def names(kind: str, **match: Any) -> list[str]:
    return [e.name for e in entries(kind, **match)]


def summary_of(doc: str | None, limit: int = 110) -> str:
    """The first paragraph of a docstring on one line, cut at ``limit`` characters: an entry's
    ``summary`` when its definition has no one-line description of its own."""
    text = " ".join((doc or "").strip().split("\n\n", 1)[0].split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest known name, or ``""``."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""


class View(Mapping[str, Any]):
    """A live, read-only mapping over the registry: ``key(entry)`` → ``entry.obj`` for the entries of
    ``kind`` matching ``match``, in registration order (``PROTOCOLS``, the shop judges' ``SPECS``,
    the PACE ``METRICS``)."""

    def __init__(self, kind: str, key: Callable[[Entry], str] = lambda e: e.name, **match: Any):
        _kind(kind)
        self._kind, self._key, self._match = kind, key, match
        self._seen = -1
        self._cache: dict[str, Any] = {}

    def _items(self) -> dict[str, Any]:
        if self._seen != _version:
            self._cache = {self._key(e): e.obj for e in entries(self._kind, **self._match)}
            self._seen = _version
        return self._cache

    def __getitem__(self, k: str) -> Any:
        return self._items()[k]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return f"View({self._kind!r}, {self._match!r}: {list(self._items())})"
