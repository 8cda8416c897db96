"""Any τ²-family domain as a PADMÉ trajectory source (issue 28 item 3; seed 003 §4 "Agent System &
Criteria": "The base version of τ³-bench comprises 375 tasks across four task domains: airline (50),
banking (97), retail (114), and telecom (114), each featuring different agent prompts, environments,
and tools").

A source spec ``{kind: tau2, domain: airline|banking_knowledge|telecom, path: ...}`` builds a
:class:`DomainSource` over :func:`shopbench.domains.base.load_domain` (retail, the default domain,
stays :class:`~shopbench.padme.sources.tau2.Tau2Source`, unchanged). Everything domain-specific comes
from the domain interface: the tasks, a fresh environment with the task's initial state, the agent's
system prompt and tool specs, the user's instructions and user-side tools, the expected actions (each
with its requestor) and the reward on the task's basis (NL assertions left out and counted as
``unjudged``, as App. C.3's audit "omitting the LLM judge component").

Offline (scripted agent and user, the path retail uses offline), the rollout is *simulated
steering*, labelled ``known-answer`` like retail's:

- :class:`ScriptedDomainAgent` reads the task's expected actions (the answer key, in ``task.meta``),
  asks for identification, runs the :func:`~shopbench.padme.sources.steered.action_plan` of them for
  its level (a write is described and confirmed with a yes first, as the policies require; a user
  action is asked of the customer by naming its tool), says the task's ``communicate_info`` and
  styles every message with :func:`~shopbench.padme.sources.steered.style_message`;
- the customer is :class:`~shopbench.domains.parties.ScriptedDomainUser`, which performs the user
  actions the agent's plan asks for (banking's and telecom's dual control).

With backbones, the agent is the gateway LLM agent given the domain's tool specs and the user is
:class:`~shopbench.domains.parties.LLMDomainUser` with the domain's user tools.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...domains.tau2_retail.environment import GREETING, TRANSFER_MESSAGE
from ...env.orchestrator import run_conversation
from ...env.protocols import AgentStep
from ..types import Context, Criterion, Rollout, Task
from .base import (
    check_level,
    is_scripted,
    make_rollout_id,
    rollout_gateway,
    rollout_record,
    wrap_steering,
)
from .steered import YES, ScriptedTau2Agent, action_plan

__all__ = ["DomainSource", "ScriptedDomainAgent", "write_names"]


def write_names(domain: str) -> frozenset[str]:
    """The tool names of ``domain`` that change state (agent's and user's): the domain's own
    ``WRITE_TOOLS`` (airline, telecom) or its toolkits' ``mutates_state`` marks (banking)."""
    if domain == "airline":
        from ...domains.airline.tool_names import WRITE_TOOLS

        return frozenset(WRITE_TOOLS)
    if domain == "telecom":
        from ...domains.telecom.environment import WRITE_TOOLS as TEL

        return frozenset(TEL)
    if domain == "banking_knowledge":
        from ...domains.banking_knowledge.toolkit import MUTATES_STATE_ATTR
        from ...domains.banking_knowledge.tools import KnowledgeTools, KnowledgeUserTools

        return frozenset(n for cls in (KnowledgeTools, KnowledgeUserTools) for n in dir(cls)
                         if getattr(getattr(cls, n, None), MUTATES_STATE_ATTR, False) is True)  # fmt: skip
    from ...domains.tau2_retail.specs import WRITE_TOOLS as RET

    return frozenset(RET)


def _inner_name(a: Mapping) -> str:
    """The tool an action runs: a discoverable tool's own name, else the action's."""
    args = a.get("arguments") or {}
    return (
        str(args.get("discoverable_tool_name") or a["name"]) if isinstance(args, Mapping) else str(a["name"])
    )


class ScriptedDomainAgent(ScriptedTau2Agent):
    """The simulated steered agent of one rollout in any domain (module docstring)."""

    def __init__(self, meta: Mapping[str, Any], writes: frozenset[str], criterion: str, level: str,
                 rng: random.Random):  # fmt: skip
        super().__init__(meta, criterion, level, rng)
        self.writes = writes
        expected = [dict(a) for a in meta.get("expected_actions", [])]
        self.plan = action_plan(expected, criterion, level, rng, is_write=self.is_write)
        self.info = action_plan(list(meta.get("communicate_info") or []), criterion, level, rng)

    def is_write(self, a: Mapping) -> bool:
        """A resolving step: a state-changing tool (or a user action, which the customer must do)."""
        return a.get("requestor") == "user" or _inner_name(a) in self.writes or a["name"] in self.writes

    def user_actions(self) -> list[dict]:
        """The user actions this agent's plan will ask for, in order (the customer performs those)."""
        return [a for a in self.plan if a.get("requestor") == "user"]

    @staticmethod
    def _args(a: Mapping) -> str:
        args = a.get("arguments") or {}
        return json.dumps(args, sort_keys=True) if args else "no arguments"

    @staticmethod
    def _result(ok: bool, result: Any) -> str:
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        return ("" if ok else "an error: ") + " ".join(str(text).split())[:200]

    def _script(self):
        yield self.say(GREETING)
        if self.meta.get("expected_actions"):
            yield self.say(
                "To look into this, could you give me your user id or the details of your account?"
            )
        notes: list[str] = []
        for a in self.plan:
            args = a.get("arguments") or {}
            if a["name"] == "transfer_to_human_agents":
                yield self.tool(a["name"], args)
                yield AgentStep(message=TRANSFER_MESSAGE, final=True)
                return
            if a.get("requestor") == "user":
                yield self.say(" ".join([*notes, f"Could you please do this on your side: {_inner_name(a)} "
                                         f"({a['name']}) with {self._args(a)}?"]))  # fmt: skip
                notes = []
                continue
            if self.is_write(a):
                reply = yield self.say(" ".join([*notes, f"I can run {_inner_name(a)} with {self._args(a)} for you. "
                                                 "Shall I go ahead? (yes/no)"]))  # fmt: skip
                notes = []
                if not YES.search(str(reply)):
                    notes.append("Understood, I won't make that change.")
                    continue
                ok, result = yield self.tool(a["name"], args)
                notes.append(f"Done: {_inner_name(a)} went through." if ok else
                             f"I couldn't complete that: {self._result(ok, result)}.")  # fmt: skip
                continue
            ok, result = yield self.tool(a["name"], args)
            notes.append(f"I've checked {_inner_name(a)}." if ok else
                         f"I couldn't look that up: {self._result(ok, result)}.")  # fmt: skip
        yield from self._close(notes, self.info)


class DomainSource:
    """A τ²-family domain other than retail as a :class:`~shopbench.padme.sources.base.TrajectorySource`
    (module docstring). ``tasks``: this source's own task count (overrides ``padme.tasks_per_source``);
    ``split``: the domain's split (telecom's ``small`` = the 20 published tasks, ``base`` = the 114
    built from ids; the default ``all``)."""

    has_reward = True

    def __init__(self, path: str | Path, domain: str, split: str | None = None, tool_mode: str = "native",
                 max_turns: int = 20, retrieval: str | None = None, tasks: int | None = None):  # fmt: skip
        from ...domains.base import load_domain

        opts = {"retrieval": retrieval} if domain == "banking_knowledge" else {}
        if retrieval is not None and domain != "banking_knowledge":
            raise ValueError(f"tau2 source (domain {domain!r}): 'retrieval' is for banking_knowledge only")
        self.dom = load_domain(domain, path, **opts)
        self.domain = domain
        self.name = f"tau2_{domain}"
        self.path = Path(path)
        self.tool_mode, self.max_turns = tool_mode, int(max_turns)
        self.n_tasks = None if tasks is None else int(tasks)
        self.writes = write_names(domain)
        self._raw = self.dom.tasks(split or "all")
        self._by_id = {self.task_id(t): t for t in self._raw}
        self._names = (
            tuple(s["function"]["name"] for s in self.dom.tool_specs(self._raw[0])) if self._raw else ()
        )

    def task_id(self, raw: Mapping) -> str:
        return self.dom.task_id(raw)

    def tool_names(self) -> tuple[str, ...]:
        return self._names

    def make_task(self, raw: Mapping) -> Task:
        ev = raw.get("evaluation_criteria") or {}
        actions = self.dom.gold_actions(raw)
        ins = self.dom.user_instructions(raw)
        return Task(
            task_id=self.task_id(raw), domain=self.domain, source=self.name,
            description=ins["reason_for_call"], tool_names=self._names,
            meta={"tau2_id": str(raw["id"]), "instructions": ins, "expected_actions": actions,
                  "communicate_info": list(ev.get("communicate_info") or []),
                  "nl_assertions": list(ev.get("nl_assertions") or []),
                  "reward_basis": list(ev.get("reward_basis") or []),
                  "n_writes": sum(a.get("requestor") != "user" and (_inner_name(a) in self.writes)
                                  for a in actions),
                  "n_user_actions": sum(a.get("requestor") == "user" for a in actions)},
        )  # fmt: skip

    def tasks(self, n: int | None = None, seed: int = 0) -> list[Task]:
        """The tasks in file order (``seed`` 0) or a seeded permutation; the first ``tasks`` (this
        source's own count) or ``n``."""
        raws = list(self._raw)
        if seed:
            random.Random(f"tau2-tasks:{self.domain}:{seed}").shuffle(raws)
        n = self.n_tasks if self.n_tasks is not None else n
        return [self.make_task(t) for t in (raws if n is None else raws[: int(n)])]

    def rollout(self, task: Task, criterion: Criterion, level: str, steering: str, context: Context,
                attempt: int, gateway=None) -> Rollout:  # fmt: skip
        check_level(level)
        t0 = time.perf_counter()
        raw = self._by_id.get(task.task_id)
        if raw is None:
            raise KeyError(f"task {task.task_id!r} is not a task of the {self.domain} domain at {self.path}")
        rid = make_rollout_id(self.name, task.task_id, criterion.name, level, attempt, context.seed)
        scripted = is_scripted(context)
        env = self.dom.environment(raw, agent_opens=scripted)
        system = wrap_steering(self.dom.system_prompt(raw), steering)
        user, agent = self._parties(raw, task, criterion, level, context, attempt, rid, system, gateway)
        conv = run_conversation(env, agent, user, system)
        reward, breakdown = self.dom.reward(raw, env, conv)
        usage = dict(conv.usage)
        if hasattr(user, "usage"):
            usage = {**usage, **{f"user_{k}": v for k, v in user.usage.items()}}
        meta = {"termination": conv.termination, "reward_breakdown": json.loads(json.dumps(breakdown, default=str)),
                "actions_taken": [r.call.name for r in conv.tools if r.role == "assistant"],
                "user_actions_taken": [r.call.name for r in conv.tools if r.role == "user"],
                "user": getattr(user, "name", "scripted"), "wall_s": round(time.perf_counter() - t0, 4)}  # fmt: skip
        if conv.errors:
            meta["errors"] = dict(conv.errors)
        return rollout_record(
            source=self.name, task=task, criterion=criterion, level=level, steering=steering, context=context,
            attempt=attempt, messages=conv.messages, reward=reward, usage=usage, meta=meta,
        )  # fmt: skip

    def _parties(self, raw: Mapping, task: Task, criterion: Criterion, level: str, context: Context,
                 attempt: int, rid: str, system: str, gateway) -> tuple[Any, Any]:  # fmt: skip
        from ...domains.parties import LLMDomainUser, ScriptedDomainUser
        from ...domains.tau2_retail.agent import LLMRetailAgent

        scripted = is_scripted(context)
        gw = rollout_gateway(context, attempt, gateway)
        agent: Any
        if scripted:
            agent = ScriptedDomainAgent(
                task.meta, self.writes, criterion.name, level, random.Random(f"{rid}:agent")
            )
            user_actions = agent.user_actions()
        else:
            agent = LLMRetailAgent(gw, context.agent_model, system, run_id=f"padme-{self.name}-agent", item_prefix=rid,
                                   tool_mode=self.tool_mode, specs=self.dom.tool_specs(raw))  # fmt: skip
            user_actions = [a for a in self.dom.gold_actions(raw) if a["requestor"] == "user"]
        ins = self.dom.user_instructions(raw)
        user: Any
        if context.user_model == "scripted":
            user = ScriptedDomainUser(
                ins, random.Random(f"{rid}:user"), user_actions, max_turns=self.max_turns
            )
        else:
            user = LLMDomainUser(gw, context.user_model, ins, run_id=f"padme-{self.name}-user", item_prefix=rid,
                                 domain=self.domain, tools=self.dom.user_tool_specs(raw), max_turns=self.max_turns)  # fmt: skip
        return user, agent
