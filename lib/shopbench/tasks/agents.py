"""``--agent module:Class``: a Python agent class as the subject under test (issue 26 §1, "Bad input").

The class implements the documented agent protocol :class:`shopbench.env.Agent` (docs/guides/agent.md):
it is constructed with no argument and has

- ``name`` (a string; the class name when absent),
- ``reset(episode_id)``: a new trial starts,
- ``step(messages, observation) -> shopbench.env.AgentStep``: text for the user and/or tool calls.

``module`` is a module name importable from the current folder or ``sys.path`` (``my_agent`` for
``./my_agent.py``) or a path to a ``.py`` file. A missing module, a module without the class, a class
without ``reset``/``step`` or whose construction raises is one :class:`~shopbench.errors.UserError`
(exit 2). The sha256 of the class's source file is part of the run's identity, so an edited agent gets
its own results log instead of resuming the old agent's trials.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ParamError, UserError
from .registry import did_you_mean

__all__ = ["AgentClass", "GuardedAgent", "PROTOCOL_METHODS", "load_agent"]

PROTOCOL_METHODS = ("reset", "step")
_FIX = ("implement the agent protocol shopbench.env.Agent: a class constructed with no argument, with name, "
        "reset(episode_id) and step(messages, observation) -> shopbench.env.AgentStep (docs/guides/agent.md)")  # fmt: skip


@dataclass(frozen=True)
class AgentClass:
    """A loaded ``--agent``: the spec as given, the class, its source file and that file's sha256."""

    spec: str
    cls: type
    file: str | None
    sha256: str
    name: str

    def make(self) -> Any:
        """A fresh instance (one per sweep; ``reset`` starts each trial), guarded: whatever it raises
        or returns becomes a recorded agent error of that trial, never a crashed run."""
        return GuardedAgent(self.cls(), self.name)

    @property
    def identity(self) -> str:
        """The subject's name in the run identity: the spec and the source's hash."""
        return f"agent:{self.spec}@{self.sha256[:12]}"

    def provenance(self) -> dict:
        return {"spec": self.spec, "class": f"{self.cls.__module__}.{self.cls.__qualname__}", "name": self.name,
                "file": self.file, "sha256": self.sha256}  # fmt: skip


class GuardedAgent:
    """A user's agent behind the protocol, with its failures contained (issue 26 §1): an exception in
    ``reset`` (which the trial controller calls outside the conversation loop) is held and becomes the
    error of the trial's first step; a ``step`` that raises or returns anything but an
    :class:`~shopbench.env.AgentStep` becomes an error step. The orchestrator records either as an agent
    error; the task counts that trial as an error unit, never a score."""

    def __init__(self, inner: Any, name: str):
        self.inner, self.name = inner, name
        self._reset_error: str | None = None

    def __getattr__(self, attr: str) -> Any:  # system_prompt and anything else the controller reads
        return getattr(self.inner, attr)

    def reset(self, episode_id: str) -> None:
        from ..env.orchestrator import error_text

        try:
            self.inner.reset(episode_id)
            self._reset_error = None
        except Exception as e:
            self._reset_error = f"reset raised {error_text(e)}"

    def step(self, messages: list[dict], observation: Any):
        from ..env.orchestrator import error_text
        from ..env.protocols import AgentStep

        if self._reset_error:
            return AgentStep(error=self._reset_error)
        try:
            out = self.inner.step(messages, observation)
        except Exception as e:
            return AgentStep(error=f"step raised {error_text(e)}")
        if not isinstance(out, AgentStep):
            return AgentStep(error=f"step returned {type(out).__name__}, not a shopbench.env.AgentStep")
        return out


def _import(spec: str, mod_name: str):
    looks_like_file = mod_name.endswith(".py") or os.sep in mod_name or "/" in mod_name
    if looks_like_file:
        p = Path(mod_name).expanduser()
        if not p.is_file():
            raise UserError(f"--agent {spec}: no such file {p}", fix="give module:Class, e.g. --agent my_agent:MyAgent "
                            "(my_agent.py in the current folder) or --agent path/to/my_agent.py:MyAgent")  # fmt: skip
        name = f"_shopbench_agent_{hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:10]}"
        mspec = importlib.util.spec_from_file_location(name, p)
        if mspec is None or mspec.loader is None:
            raise UserError(
                f"--agent {spec}: {p} cannot be imported as a Python module", fix="give a .py file"
            )
        mod = importlib.util.module_from_spec(mspec)
        sys.modules[name] = mod
        try:
            mspec.loader.exec_module(mod)
        except Exception as e:
            sys.modules.pop(name, None)
            raise UserError(f"--agent {spec}: importing {p} raised {type(e).__name__}: {e}",
                            fix="correct the module so that it imports") from None  # fmt: skip
        return mod
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:  # the console script does not put the cwd on the path
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        if e.name and (mod_name == e.name or mod_name.startswith(e.name + ".")):
            raise UserError(f"--agent {spec}: no module named {mod_name!r} (looked in {cwd} and on sys.path)",
                            fix=f"run from the folder holding {mod_name.split('.')[0]}.py, or give its path: "
                                f"--agent path/to/{mod_name.split('.')[-1]}.py:Class") from None  # fmt: skip
        raise UserError(f"--agent {spec}: importing {mod_name} failed: {e}",
                        fix=f"install the module {e.name!r} that {mod_name} imports") from None  # fmt: skip
    except Exception as e:
        raise UserError(f"--agent {spec}: importing {mod_name} raised {type(e).__name__}: {e}",
                        fix="correct the module so that it imports") from None  # fmt: skip


def _source_hash(cls: type, spec: str) -> tuple[str | None, str]:
    try:
        f = inspect.getsourcefile(cls)
    except TypeError:
        f = None
    if f and Path(f).is_file():
        return f, hashlib.sha256(Path(f).read_bytes()).hexdigest()
    return None, hashlib.sha256(spec.encode()).hexdigest()


def load_agent(spec: Any) -> AgentClass:
    """Import and check ``--agent module:Class`` (module docstring); bad input is one UserError."""
    if not isinstance(spec, str) or ":" not in spec.strip(":") or not spec.strip():
        raise ParamError(f"--agent {spec!r} is not module:Class",
                         fix="e.g. --agent my_agent:MyAgent (my_agent.py in the current folder)")  # fmt: skip
    mod_name, _, cls_name = spec.rpartition(":")
    if not mod_name or not cls_name.isidentifier():
        raise ParamError(f"--agent {spec!r} is not module:Class", fix="e.g. --agent my_agent:MyAgent")
    mod = _import(spec, mod_name)
    cls = getattr(mod, cls_name, None)
    if cls is None:
        classes = [n for n, v in vars(mod).items() if inspect.isclass(v) and not n.startswith("_")]
        raise UserError(f"--agent {spec}: module {mod_name} has no class {cls_name!r}" + did_you_mean(cls_name, classes),
                        file=getattr(mod, "__file__", None),
                        fix=f"its classes: {', '.join(classes) or 'none'}")  # fmt: skip
    if not inspect.isclass(cls):
        raise UserError(f"--agent {spec}: {cls_name} is a {type(cls).__name__}, not a class", fix=_FIX)
    missing = [m for m in PROTOCOL_METHODS if not callable(getattr(cls, m, None))]
    if missing:
        raise UserError(f"--agent {spec}: class {cls_name} lacks the agent protocol's method(s) "
                        + ", ".join(f"{m}()" for m in missing), file=inspect.getsourcefile(cls), fix=_FIX)  # fmt: skip
    try:
        inst = cls()
    except Exception as e:
        raise UserError(f"--agent {spec}: {cls_name}() raised {type(e).__name__}: {e}", fix=_FIX) from None
    name = getattr(inst, "name", None)
    if name is None:
        name = cls.__name__
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"--agent {spec}: {cls_name}().name is {name!r}, not a non-empty string", fix=_FIX)
    file, sha = _source_hash(cls, spec)
    return AgentClass(spec, cls, file, sha, name)
