"""The task registry (issue 26 §1): task name → factory and its parameters' metadata, as entries of
kind ``task`` in the one registry (:mod:`shopbench.core.registry`, issue 27).

A task is declared where it is defined, with :func:`task` on a factory whose keyword arguments are
the task's ``-T key=value`` parameters::

    @task("pace_judge", "a model as a PACE judge on PACEShop records", params=[
        Param("protocol", "choice", "pacejudge", "judge protocol", choices=PROTOCOL_NAMES),
        Param("records", "path", None, "a records JSONL file or a PACEShop build folder"),
    ])
    def pace_judge(protocol: str, records: str | None) -> Task: ...

This module imports nothing heavy (no pandas, no litellm): ``shopbench list`` and ``shopbench --help``
read it and answer at once; a factory imports what it needs when a task runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import registry
from ..core.registry import did_you_mean
from ..errors import ParamError

__all__ = ["Param", "TaskInfo", "did_you_mean", "get_task", "parse_params", "task", "tasks"]

# modules that define the project's tasks (imported on the first lookup; each imports nothing heavy)
registry.declare_modules("task", "shopbench.tasks.pace_judge", "shopbench.tasks.padme_evaluator",
                         "shopbench.tasks.pace_assistant", "shopbench.tasks.shop_agent",
                         "shopbench.tasks.tau2_retail_agent", "shopbench.tasks.tau2_agent")  # fmt: skip
TYPES = ("str", "int", "float", "bool", "path", "choice")
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


@dataclass(frozen=True)
class Param:
    """One task parameter: its name, type (:data:`TYPES`), default (None: not set), help text and,
    for ``choice``, the allowed values."""

    name: str
    type: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"parameter {self.name!r}: type must be one of {TYPES}, got {self.type!r}")
        if self.type == "choice" and not self.choices:
            raise ValueError(f"parameter {self.name!r}: a choice needs its choices")

    def convert(self, value: Any, task: str) -> Any:
        """``value`` (a ``-T`` string, or a Python value from :func:`shopbench.eval`) as this
        parameter's type; a wrong value is a :class:`~shopbench.errors.ParamError`."""
        if value is None:
            return None

        def bad(want: str) -> ParamError:
            return ParamError(f"task {task}: -T {self.name}={value!r} is not {want}",
                              fix=f"give {self.name} as {want} ({self.help})")  # fmt: skip

        if self.type in ("str", "path", "choice"):
            if isinstance(value, Path):
                value = str(value)
            if not isinstance(value, str):
                raise bad("a string")
            if self.type == "choice" and value not in self.choices:
                raise ParamError(f"task {task}: -T {self.name}={value!r} is not one of {', '.join(self.choices)}"
                                 + did_you_mean(value, self.choices),
                                 fix=f"pick one of {', '.join(self.choices)}")  # fmt: skip
            return value
        if self.type == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in _TRUE + _FALSE:
                return value.lower() in _TRUE
            raise bad("true or false")
        if self.type == "int":
            if isinstance(value, bool):
                raise bad("an integer")
            if isinstance(value, int):
                return value
            try:
                return int(str(value), 10)
            except ValueError:
                raise bad("an integer") from None
        try:  # float
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        except (TypeError, ValueError):
            raise bad("a number") from None

    def describe(self) -> str:
        kind = "|".join(self.choices) if self.type == "choice" else self.type
        default = "(none)" if self.default is None else repr(self.default)
        return f"{self.name}: {kind} = {default}  {self.help}"


@dataclass(frozen=True)
class TaskInfo:
    """A registered task: its name, one-line summary, parameters and factory."""

    name: str
    summary: str
    params: tuple[Param, ...]
    factory: Callable[..., Any] = field(repr=False)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = [p.name for p in self.params]
        raise ParamError(f"task {self.name} has no parameter {name!r}" + did_you_mean(name, known),
                         fix=f"its parameters: {', '.join(known)} (shopbench list)")  # fmt: skip

    def build(self, values: Mapping[str, Any]):
        """The task object for these parameter values (unknown names and wrong types are
        :class:`~shopbench.errors.ParamError`); unset parameters take their defaults."""
        given = {k: self.param(k).convert(v, self.name) for k, v in values.items()}
        full = {p.name: given.get(p.name, p.default) for p in self.params}
        return self.factory(**full), full


def task(name: str, summary: str, params: Sequence[Param] = ()) -> Callable:
    """Decorator: register ``factory`` as task ``name`` (issue 26 §1)."""

    def deco(factory: Callable) -> Callable:
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise ValueError(f"task {name}: parameter names repeat: {names}")
        prev = registry.find("task", name)
        if prev is not None and prev.obj.factory.__qualname__ != factory.__qualname__:
            raise ValueError(f"task name {name!r} is already registered")
        registry.register("task", name, TaskInfo(name, summary, tuple(params), factory), factory=factory,
                          replace=True, summary=summary)  # fmt: skip
        return factory

    return deco


def tasks() -> list[TaskInfo]:
    """Every registered task, by name."""
    registry.load("task")
    return sorted((e.obj for e in registry.entries("task")), key=lambda t: t.name)


def get_task(name: str) -> TaskInfo:
    """The task ``name``; an unknown name is a :class:`~shopbench.errors.ParamError` with the
    closest known name."""
    registry.load("task")
    info = registry.get("task", name)
    if info is None:
        known = sorted(registry.names("task"))
        raise ParamError(f"unknown task {name!r}" + did_you_mean(name, known),
                         fix=f"known tasks: {', '.join(known)} (shopbench list)")  # fmt: skip
    return info


def parse_params(pairs: Sequence[str]) -> dict[str, str]:
    """``["k=v", …]`` (the ``-T`` options) → ``{k: v}``; a pair without ``=`` is a ParamError."""
    out: dict[str, str] = {}
    for s in pairs:
        k, sep, v = s.partition("=")
        if not sep or not k.strip():
            raise ParamError(f"-T {s!r} is not key=value", fix="write each task parameter as -T key=value")
        out[k.strip()] = v
    return out
