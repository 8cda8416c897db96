"""One interface over the four τ²-family domains (issue 28 items 3-4): retail, airline,
banking_knowledge and telecom, each a :class:`Domain` loaded from its published folder.

A loaded domain gives, for each task (the published task JSON, a ``dict``):

- :meth:`Domain.environment`: a fresh episode with the task's initial state applied (retail and
  airline have none; banking applies ``initial_state.initialization_data``; telecom runs τ²-bench's
  ``set_state``), played by :func:`shopbench.env.run_conversation`;
- :meth:`Domain.system_prompt` and :meth:`Domain.tool_specs`: what the agent is given (τ²-bench's
  instruction and the domain's policy; the agent's tools as OpenAI function specs);
- :meth:`Domain.user_instructions` and :meth:`Domain.user_tool_specs`: what the simulated user is
  given (banking's and telecom's user-side tools, which the user calls in its own turn: dual
  control, :class:`shopbench.env.DualControlUser`);
- :meth:`Domain.gold_actions`: the task's expected actions, each with its ``requestor``;
- :meth:`Domain.reward`: the domain's reward on the basis the task names, over the conversation's
  messages and every tool call of both roles, in order; the breakdown carries ``evidence``.

:func:`load_domain` loads one by name (``DOMAINS``, a view of the one registry; an unknown name is one
:class:`~shopbench.errors.ParamError` with "did you mean"); each domain's loader keeps its own
checks (a missing or malformed file is that domain's one-line error, exit 2).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from ..core import registry
from ..env.orchestrator import Conversation
from ..env.protocols import Environment
from ..errors import InputError

__all__ = [
    "DOMAINS", "AirlineDomain", "BankingDomain", "Domain", "RetailDomain", "TelecomDomain", "default_data",
    "domain_class", "load_domain", "tool_trace",
]  # fmt: skip


def default_data(name: str) -> Path:
    """``../shared/data/tau2_<name>`` beside the repository (where the profiles point)."""
    from ..paths import ROOT

    return (ROOT / f"../shared/data/tau2_{name}").resolve()


def tool_trace(conv: Conversation) -> list[dict[str, Any]]:
    """Every tool call of the conversation, both roles, in order, as τ²-bench's messages carry them:
    ``{"role", "tool_calls": [{"name", "arguments", "requestor"}]}`` then the tool's result."""
    out: list[dict[str, Any]] = []
    for r in conv.tools:
        out.append({"role": r.role, "tool_calls": [{"name": r.call.name, "arguments": r.call.arguments,
                                                    "requestor": r.role}]})  # fmt: skip
        out.append({"role": "tool", "requestor": r.role, "name": r.call.name,
                    "content": r.outcome.message.get("content")})  # fmt: skip
    return out


def _texts(conv: Conversation) -> list[dict[str, Any]]:
    """The conversation's messages without tool calls or results (what COMMUNICATE reads)."""
    return [m for m in conv.messages if m.get("role") in ("user", "assistant") and not m.get("tool_calls")]


class Domain(ABC):
    """A loaded domain (module docstring). Subclasses set ``name`` and implement the loader and the
    per-task parts; tasks are the published JSON objects."""

    name: ClassVar[str]
    splits: ClassVar[tuple[str, ...]] = ("all",)
    has_user_tools: ClassVar[bool] = False

    def __init__(self, data: Any, path: Path):
        self.data, self.path = data, path

    @classmethod
    def load(cls, data_dir: str | Path | None = None) -> Domain:
        """Read and check the folder (the domain's own one-line error for a missing or bad file)."""
        path = Path(data_dir).expanduser() if data_dir is not None else default_data(cls.name)
        return cls(cls._load(path), path)

    @classmethod
    @abstractmethod
    def _load(cls, path: Path) -> Any: ...

    # ---- tasks ---------------------------------------------------------------------------------------
    def tasks(self, split: str = "all") -> list[dict]:
        if split not in self.splits:
            from ..errors import ParamError
            from ..tasks.registry import did_you_mean

            raise ParamError(f"the {self.name} domain has no split {split!r}" + did_you_mean(split, self.splits),
                             field="split", fix=f"use one of {list(self.splits)}")  # fmt: skip
        return self._tasks(split)

    def _tasks(self, split: str) -> list[dict]:
        return list(self.data.tasks)

    def _split_tasks(self, split: str, error: type[InputError]) -> list[dict]:
        """The tasks of ``split_tasks.json``'s ``split`` (``all``: every task); a split the file lacks is
        the domain's ``error``."""
        if split == "all":
            return list(self.data.tasks)
        if not self.data.split or split not in self.data.split:
            raise error(f"no split {split!r}", file=self.data.path / "split_tasks.json",
                        fix=f"use one of {sorted(self.data.split or {})}")  # fmt: skip
        ids = {str(x) for x in self.data.split[split]}
        return [t for t in self.data.tasks if str(t["id"]) in ids]

    def task_id(self, task: Mapping) -> str:
        return f"{self.name}-{task['id']}"

    # ---- one episode ---------------------------------------------------------------------------------
    @abstractmethod
    def environment(self, task: Mapping, agent_opens: bool = False) -> Environment: ...

    @abstractmethod
    def system_prompt(self, task: Mapping) -> str: ...

    @abstractmethod
    def tool_specs(self, task: Mapping) -> list[dict]: ...

    def user_instructions(self, task: Mapping) -> dict[str, str]:
        """The user's instructions as ``reason_for_call``, ``known_info``, ``unknown_info``,
        ``task_instructions`` (banking's single text is the reason for the call)."""
        ins = (task.get("user_scenario") or {}).get("instructions") or {}
        if isinstance(ins, str):
            return {"reason_for_call": ins, "known_info": "", "unknown_info": "", "task_instructions": ""}
        return {
            k: str(ins.get(k) or "")
            for k in ("reason_for_call", "known_info", "unknown_info", "task_instructions")
        }

    def user_tool_specs(self, task: Mapping) -> list[dict]:
        return []

    def gold_actions(self, task: Mapping) -> list[dict]:
        """The expected actions, each with its ``requestor`` (``assistant`` when the data names none)."""
        acts = (task.get("evaluation_criteria") or {}).get("actions") or []
        return [{**a, "requestor": a.get("requestor") or "assistant", "arguments": a.get("arguments") or {}}
                for a in acts]  # fmt: skip

    @abstractmethod
    def _reward(self, task: Mapping, env: Any, conv: Conversation) -> tuple[float, dict]: ...

    def reward(self, task: Mapping, env: Any, conv: Conversation) -> tuple[float, dict]:
        """The reward on the task's basis and its breakdown (the domain's own reward function)."""
        return self._reward(task, env, conv)


class RetailDomain(Domain):
    """τ²-bench retail (:mod:`.tau2_retail`); NL_ASSERTION is not judged here (left out, ``unjudged``)."""

    name = "retail"
    splits = ("test", "train", "base", "all")

    def __init__(self, data: Any, path: Path, fidelity: str = "tau2", tool_texts: str = "tau2"):
        super().__init__(data, path)
        self.fidelity, self.tool_texts = fidelity, tool_texts

    @classmethod
    def _load(cls, path: Path) -> Any:
        from .tau2_retail import TOOL_NAMES, load_tau2

        return load_tau2(path, TOOL_NAMES)

    def _tasks(self, split: str) -> list[dict]:
        from .tau2_retail import Tau2DataError

        return self._split_tasks(split, Tau2DataError)

    def environment(self, task: Mapping, agent_opens: bool = False) -> Environment:
        from .tau2_retail import RetailEnvironment

        return RetailEnvironment(self.data, agent_opens=agent_opens, fidelity=self.fidelity)

    def system_prompt(self, task: Mapping) -> str:
        from .tau2_retail import agent_system_prompt

        return agent_system_prompt(self.data.policy)

    def tool_specs(self, task: Mapping) -> list[dict]:
        from .tau2_retail.specs import tool_specs

        return tool_specs(self.tool_texts)

    def _reward(self, task: Mapping, env: Any, conv: Conversation) -> tuple[float, dict]:
        from .tau2_retail import gold_state, task_reward

        gold_hash, _ = gold_state(self.data, task, self.fidelity)
        return task_reward(env.db, gold_hash, task["evaluation_criteria"], conv.messages, conv.termination)


class AirlineDomain(Domain):
    """tau-bench's airline database, τ²-bench's 50 tasks (:mod:`.airline`)."""

    name = "airline"
    splits = ("test", "train", "base", "all")

    @classmethod
    def _load(cls, path: Path) -> Any:
        from .airline import load_airline

        return load_airline(path)

    def _tasks(self, split: str) -> list[dict]:
        from .airline import AirlineDataError

        return self._split_tasks(split, AirlineDataError)

    def environment(self, task: Mapping, agent_opens: bool = False) -> Environment:
        from .airline import AirlineEnvironment

        return AirlineEnvironment(self.data, agent_opens=agent_opens)

    def system_prompt(self, task: Mapping) -> str:
        from .airline import agent_system_prompt

        return agent_system_prompt(self.data.policy)

    def tool_specs(self, task: Mapping) -> list[dict]:
        from .airline import tool_specs

        return tool_specs("tau2")

    def _reward(self, task: Mapping, env: Any, conv: Conversation) -> tuple[float, dict]:
        from .airline import gold_state, task_reward

        gold_hash, _ = gold_state(self.data, task)
        return task_reward(env.db, gold_hash, task["evaluation_criteria"], conv.messages, conv.termination)


class BankingDomain(Domain):
    """τ²-bench banking with retrieval (:mod:`.banking_knowledge`); ``retrieval`` names the variant."""

    name = "banking_knowledge"
    has_user_tools = True

    def __init__(self, data: Any, path: Path, retrieval: str | None = None):
        from .banking_knowledge import DEFAULT_VARIANT, VARIANTS

        super().__init__(data, path)
        self.retrieval = retrieval or DEFAULT_VARIANT
        if self.retrieval not in VARIANTS:
            from ..errors import ParamError

            raise ParamError(
                f"retrieval variant {self.retrieval!r}", field="retrieval", fix=f"use one of {list(VARIANTS)}"
            )

    @classmethod
    def _load(cls, path: Path) -> Any:
        from .banking_knowledge import load_banking

        return load_banking(path)

    def environment(self, task: Mapping, agent_opens: bool = False) -> Environment:
        from .banking_knowledge import BankingEnvironment

        return BankingEnvironment(self.data, task, agent_opens=agent_opens, retrieval=self.retrieval)

    def system_prompt(self, task: Mapping) -> str:
        from .banking_knowledge import agent_system_prompt, build_policy

        return agent_system_prompt(build_policy(self.data, self.retrieval))

    def tool_specs(self, task: Mapping) -> list[dict]:
        from .banking_knowledge import agent_tool_specs

        return agent_tool_specs(self.retrieval)

    def user_tool_specs(self, task: Mapping) -> list[dict]:
        from .banking_knowledge import user_tool_specs

        return user_tool_specs(task.get("user_tools"))

    def _reward(self, task: Mapping, env: Any, conv: Conversation) -> tuple[float, dict]:
        from .banking_knowledge import gold_state, task_reward

        gold_hash, _ = gold_state(self.data, task)
        msgs = conv.messages + [m for m in tool_trace(conv) if m["role"] == "user"]
        return task_reward(env.db, gold_hash, task["evaluation_criteria"], msgs, conv.termination)


class TelecomDomain(Domain):
    """τ²-bench telecom, dual control (:mod:`.telecom`): split ``small`` is the 20 published tasks;
    the other splits of ``split_tasks.json`` are built from their ids (:func:`.telecom.build_tasks`)."""

    name = "telecom"
    splits = ("small", "base", "train", "test", "full", "all")
    has_user_tools = True

    @classmethod
    def _load(cls, path: Path) -> Any:
        from .telecom import load_telecom

        return load_telecom(path)

    def _tasks(self, split: str) -> list[dict]:
        from .telecom import build_tasks

        if split == "small":
            return list(self.data.tasks)
        return build_tasks(self.data, "base" if split == "all" else split)

    def environment(self, task: Mapping, agent_opens: bool = False) -> Environment:
        from .telecom import TelecomEnvironment

        return TelecomEnvironment(self.data, task, agent_opens=agent_opens)

    def system_prompt(self, task: Mapping) -> str:
        from .telecom import agent_system_prompt

        return agent_system_prompt(self.data.policy)

    def tool_specs(self, task: Mapping) -> list[dict]:
        from .telecom import AGENT_TOOL_SPECS

        return [dict(s) for s in AGENT_TOOL_SPECS]

    def user_tool_specs(self, task: Mapping) -> list[dict]:
        from .telecom import USER_TOOL_SPECS

        return [dict(s) for s in USER_TOOL_SPECS]

    def _reward(self, task: Mapping, env: Any, conv: Conversation) -> tuple[float, dict]:
        from .telecom import task_reward

        return task_reward(self.data, task, _texts(conv) + list(env.trajectory), conv.termination)


for _name, _cls in (
    ("airline", AirlineDomain),
    ("banking_knowledge", BankingDomain),
    ("retail", RetailDomain),
    ("telecom", TelecomDomain),
):
    registry.register("domain", _name, _cls, group="tau2", summary=registry.summary_of(_cls.__doc__))
DOMAINS: Mapping[str, type[Domain]] = registry.View("domain")
"""The τ²-family domains by name, on the one registry (``shopbench list --kind domains``)."""


def domain_class(name: str) -> type[Domain]:
    """The domain named ``name``; an unknown name is one ParamError with "did you mean"."""
    from ..errors import ParamError

    if name not in DOMAINS:
        raise ParamError(f"unknown domain {name!r}" + registry.did_you_mean(str(name), list(DOMAINS)), field="domain",
                         fix=f"use one of {list(DOMAINS)}")  # fmt: skip
    return DOMAINS[name]


def load_domain(name: str, data_dir: str | Path | None = None, **options: Any) -> Domain:
    """Load domain ``name`` from ``data_dir`` (default ``../shared/data/tau2_<name>``); ``options``
    go to the domain (retail: ``fidelity``, ``tool_texts``; banking: ``retrieval``)."""
    cls = domain_class(name)
    path = Path(data_dir).expanduser() if data_dir is not None else default_data(name)
    data = cls._load(path)
    return cls(data, path, **options)  # type: ignore[call-arg]
