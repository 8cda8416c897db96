"""A τ²-bench domain read from its published folder as a PADMÉ trajectory source (seed 003 §4 "Agent
System & Criteria", App. C.3 "Environment Reward Verification").

"We build an agent trajectory collection system upon a variant of the τ³-bench repository. We rely
on its task definitions, agent framework, user simulator, tool sets, and domain-specific
environments [...] retail (114)" (§4).

The domain itself — data model, the 16 tools, the environment and its reward, the users and the LLM
agent — is :mod:`shopbench.domains.tau2_retail`; the conversation is
:func:`shopbench.env.run_conversation`, the one loop of every domain. This module adds what PADMÉ
needs on top: tasks with descriptions that leak no solution, the H.3-wrapped system prompt, and

- :class:`ScriptedRetailAgent`: the *simulated* steering source. It reads the task's expected
  actions from ``task.meta`` (the answer key: this is not an agent that solves the task, it is a
  controllable stand-in for a steered agent), asks for identification, runs the
  :func:`~shopbench.padme.sources.steered.action_plan` of the expected actions for its level (one
  tool call per message, listing each write and asking for a yes first, as the policy requires)
  and runs every customer-facing message through
  :func:`~shopbench.padme.sources.steered.style_message`.

The rollout's ``reward`` is τ²-bench's reward over the task's ``reward_basis``
(:func:`~shopbench.domains.tau2_retail.environment.task_reward`) with the tools of ``fidelity``
(``"tau2"``, the default: τ²-bench's behaviour; ``"corrected"``: the project's fixes). The
NL_ASSERTION part is judged only when ``nl_judge`` is set: by default it is left out, as App. C.3
audits the reward "Omitting the LLM judge component" (the reward is then the rest of the basis, DB
for every published task, and ``meta["reward_breakdown"]["unjudged"]`` says so); ``nl_judge=
"known-answer"`` runs the offline stand-in (its rewards are known-answer), any other value is a
backbone asked through the gateway under the contract of
:class:`~shopbench.judges.tau2.nl_assertions.NLAssertionSpec`. ``reward_basis=
"db_communicate"`` gives the older release's DB × COMMUNICATE. An LLM agent is given τ²-bench's own
tool descriptions (``tool_texts="tau2"``, the default) or the project's one-line ones (``"short"``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...domains.tau2_retail.agent import LLMRetailAgent
from ...domains.tau2_retail.data_model import RetailDB, Tau2DataError, load_tau2
from ...domains.tau2_retail.environment import (
    GREETING,
    REWARD_BASES,
    TRANSFER_MESSAGE,
    RetailEnvironment,
    agent_system_prompt,
    gold_state,
    task_reward,
)
from ...domains.tau2_retail.specs import TOOL_NAMES, WRITE_TOOLS, tool_specs
from ...domains.tau2_retail.text import task_description
from ...domains.tau2_retail.tools import check_fidelity
from ...domains.tau2_retail.user import LLMRetailUser, ScriptedRetailUser
from ...env.orchestrator import run_conversation
from ...env.protocols import AgentStep
from ...judges.tau2.nl_assertions import KNOWN_ANSWER, KnownAnswerNLJudge, NLAssertionSpec, NLItem
from ..types import Context, Criterion, Rollout, Task
from .base import (
    check_level,
    is_scripted,
    make_rollout_id,
    repeat_index,
    rollout_gateway,
    rollout_record,
    wrap_steering,
)
from .steered import YES, ScriptedTau2Agent, action_plan

__all__ = ["ScriptedRetailAgent", "Tau2Source"]


def _options(opts: Mapping) -> str:
    return ", ".join(str(v) for v in opts.values())


def _money(x: Any) -> str:
    return f"${float(x):,.2f}".replace(",", "")


class ScriptedRetailAgent(ScriptedTau2Agent):
    """The simulated steered agent of one rollout (see the module docstring). ``step(messages,
    observation)`` takes the last observation (the user's message or the tool result) and returns the
    next :class:`~shopbench.env.AgentStep`."""

    def __init__(self, meta: Mapping[str, Any], db: RetailDB, criterion: str, level: str, rng: random.Random):
        super().__init__(meta, criterion, level, rng)
        self.db = db

    # -- describing things ---------------------------------------------------------------------------
    def _item(self, order: Mapping, iid: str) -> str:
        it = next((x for x in order.get("items", []) if x["item_id"] == iid), None)
        return f"the {it['name']} ({_options(it['options'])})" if it else f"item {iid}"

    def _variant(self, order: Mapping, old: str, new: str) -> str:
        it = next((x for x in order.get("items", []) if x["item_id"] == old), None)
        p = self.db.get("products", it["product_id"]) if it else None
        v = (p or {}).get("variants", {}).get(new)
        return f"{_options(v['options'])} at {_money(v['price'])}" if v else f"item {new}"

    def _pm(self, order_or_user: Mapping, pm_id: str) -> str:
        uid = order_or_user.get("user_id")
        u = self.db.get("users", uid) if uid else None
        pm = (u or {}).get("payment_methods", {}).get(pm_id, {})
        src = str(pm.get("source", "")).replace("_", " ")
        if pm.get("last_four"):
            return f"your {pm.get('brand', '')} credit card ending in {pm['last_four']} ({pm_id})".replace(
                "  ", " "
            )
        return f"your {src or 'payment method'} ({pm_id})"

    def describe(self, a: Mapping) -> str:
        n, args = a["name"], a.get("arguments") or {}
        oid = args.get("order_id", "")
        order = self.db.get("orders", oid) or {}
        items = args.get("item_ids") or []
        what = ", ".join(self._item(order, i) for i in items)
        partial = " (only these items for now)" if a.get("partial") else ""
        addr = ", ".join(
            str(args[k]) for k in ("address1", "address2", "city", "state", "zip", "country") if args.get(k)
        )
        if n == "cancel_pending_order":
            total = sum(
                float(p["amount"])
                for p in order.get("payment_history", [])
                if p["transaction_type"] == "payment"
            )
            return (f"I can cancel order {oid} for the reason '{args.get('reason')}'. The {_money(total)} you paid "
                    "goes back to the original payment method. Shall I go ahead? (yes/no)")  # fmt: skip
        if n == "return_delivered_order_items":
            return (f"I can return {what} from order {oid}{partial}. The refund goes to "
                    f"{self._pm(order, args.get('payment_method_id', ''))}. Shall I go ahead? (yes/no)")  # fmt: skip
        if n in ("exchange_delivered_order_items", "modify_pending_order_items"):
            swaps = "; ".join(f"{self._item(order, o)} for {self._variant(order, o, nw)}"
                              for o, nw in zip(items, args.get("new_item_ids") or [], strict=False))  # fmt: skip
            verb = "exchange" if n.startswith("exchange") else "change"
            once = " Items of a pending order can only be changed once." if verb == "change" else ""
            return (f"I can {verb} {swaps} in order {oid}{partial}. Any price difference is settled with "
                    f"{self._pm(order, args.get('payment_method_id', ''))}.{once} Please make sure these are all the "
                    "items you want changed. Shall I go ahead? (yes/no)")  # fmt: skip
        if n == "modify_pending_order_address":
            return f"I can change the shipping address of order {oid} to {addr}. Shall I go ahead? (yes/no)"
        if n == "modify_pending_order_payment":
            return (f"I can switch the payment of order {oid} to {self._pm(order, args.get('payment_method_id', ''))}. "
                    "Shall I go ahead? (yes/no)")  # fmt: skip
        if n == "modify_user_address":
            return f"I can update your default address to {addr}. Shall I go ahead? (yes/no)"
        return f"I can run {n} for you. Shall I go ahead? (yes/no)"

    @staticmethod
    def report(a: Mapping, ok: bool, result: Any) -> str:
        if not ok:
            return f"I couldn't complete that: {result}."
        if isinstance(result, dict) and "status" in result:
            extra = ""
            if result["status"] in ("return requested", "exchange requested"):
                extra = " You'll receive an email explaining how to send the items back."
            diff = result.get("exchange_price_difference")
            if diff is not None and float(diff) > 0:
                extra += f" The new items cost {_money(diff)} more, charged to the payment method you chose."
            elif diff is not None and float(diff) < 0:
                extra += (
                    f" The new items cost {_money(-float(diff))} less; that difference is refunded to you."
                )
            return f"Done: order {result.get('order_id')} is now '{result['status']}'.{extra}"
        if isinstance(result, dict) and "address" in result:
            return "Done: your default address is updated."
        return "Done."

    def note(self, a: Mapping, ok: bool, result: Any) -> str | None:
        """What a look-up told the agent, for its next message."""
        n = a["name"]
        if not ok:
            return f"I couldn't look that up: {result}."
        if n.startswith("find_user_id"):
            return "Thank you, I've found your account."
        if n == "get_order_details" and isinstance(result, dict):
            items = "; ".join(f"{it['name']} ({_options(it['options'])})" for it in result.get("items", []))
            return f"Order {result.get('order_id')} is {result.get('status')} and contains: {items}."
        if n == "get_product_details" and isinstance(result, dict):
            avail = sum(1 for v in result.get("variants", {}).values() if v.get("available"))
            return f"I've checked the {result.get('name')} options: {avail} versions are available."
        if n == "calculate":
            return f"That comes to {result}."
        return None

    # -- the script --------------------------------------------------------------------------------------
    def _script(self):
        expected = [a for a in self.meta.get("expected_actions", []) if a.get("name") in TOOL_NAMES]
        plan = action_plan(expected, self.criterion, self.level, self.rng,
                           is_write=lambda a: a.get("name") in WRITE_TOOLS)  # fmt: skip
        info = action_plan(
            list(self.meta.get("communicate_info") or []), self.criterion, self.level, self.rng
        )
        yield self.say(GREETING)
        by_email = any(a["name"] == "find_user_id_by_email" for a in expected)
        ask = ("Could you tell me the email address on your account? If you don't remember it, your first and "
               "last name and zip code will do.") if by_email else (
               "To find your account, could you give me your first and last name and your zip code?")  # fmt: skip
        if expected:
            yield self.say(ask)
        notes: list[str] = []
        for a in plan:
            args = a.get("arguments") or {}
            if a["name"] == "transfer_to_human_agents":
                yield self.tool(a["name"], args)
                yield AgentStep(message=TRANSFER_MESSAGE, final=True)
                return
            if a["name"] in WRITE_TOOLS:
                reply = yield self.say(" ".join([*notes, self.describe(a)]))
                notes = []
                if not YES.search(str(reply)):
                    notes.append("Understood, I won't make that change.")
                    continue
                ok, result = yield self.tool(a["name"], args)
                notes.append(self.report(a, ok, result))
                continue
            ok, result = yield self.tool(a["name"], args)
            line = self.note(a, ok, result)
            if line:
                notes.append(line)
        if self.effort == "abandon" and self.rng.random() < 0.5:
            yield self.tool(
                "transfer_to_human_agents", {"summary": "The customer needs help with a request."}
            )
            yield AgentStep(message=TRANSFER_MESSAGE, final=True)
            return
        yield from self._close(notes, info)


class Tau2Source:
    """The retail domain of τ²-bench as a :class:`~shopbench.padme.sources.base.TrajectorySource`."""

    domain = "retail"
    has_reward = True

    def __init__(self, path: str | Path, split: str | None = None, tool_mode: str = "native", max_turns: int = 20,
                 fidelity: str = "tau2", reward_basis: str = "task", nl_judge: str | None = None,
                 tool_texts: str = "tau2"):  # fmt: skip
        self.fidelity = check_fidelity(fidelity)
        tool_specs(tool_texts)  # a clear error for an unknown name, before any rollout
        self.tool_texts = tool_texts
        if reward_basis not in REWARD_BASES:
            raise ValueError(f"tau2 source: reward_basis {reward_basis!r}: use one of {list(REWARD_BASES)}")
        self.reward_basis, self.nl_judge = reward_basis, nl_judge
        self.data = load_tau2(path, TOOL_NAMES)
        self.name = f"tau2_{self.domain}"
        self.tool_mode = tool_mode
        self.max_turns = int(max_turns)
        if split is not None:
            if not self.data.split or split not in self.data.split:
                raise Tau2DataError(f"no split {split!r}", file=self.data.path / "split_tasks.json",
                                    fix=f"use one of {sorted(self.data.split or {})}")  # fmt: skip
            ids = {str(x) for x in self.data.split[split]}
            self._raw = [t for t in self.data.tasks if str(t["id"]) in ids]
        else:
            self._raw = list(self.data.tasks)
        self._by_id = {self.task_id(t): t for t in self._raw}

    def task_id(self, raw: Mapping) -> str:
        return f"{self.domain}-{raw['id']}"

    def tool_names(self) -> tuple[str, ...]:
        return TOOL_NAMES

    def system_prompt(self) -> str:
        """τ²-bench's agent system prompt: the instruction and the domain policy."""
        return agent_system_prompt(self.data.policy)

    def make_task(self, raw: Mapping) -> Task:
        ev = raw["evaluation_criteria"]
        actions = [{"name": a["name"], "arguments": a.get("arguments") or {}, "action_id": a.get("action_id")}
                   for a in ev.get("actions") or []]  # fmt: skip
        return Task(
            task_id=self.task_id(raw), domain=self.domain, source=self.name,
            description=task_description(raw, self.data.db), tool_names=TOOL_NAMES,
            meta={"tau2_id": str(raw["id"]), "instructions": dict(raw["user_scenario"]["instructions"]),
                  "expected_actions": actions, "communicate_info": list(ev.get("communicate_info") or []),
                  "nl_assertions": list(ev.get("nl_assertions") or []), "reward_basis": list(ev.get("reward_basis") or []),
                  "n_writes": sum(a["name"] in WRITE_TOOLS for a in actions)},
        )  # fmt: skip

    def tasks(self, n: int | None = None, seed: int = 0) -> list[Task]:
        """The tasks in file order (``seed`` 0) or a seeded permutation; the first ``n``."""
        raws = list(self._raw)
        if seed:
            random.Random(f"tau2-tasks:{seed}").shuffle(raws)
        return [self.make_task(t) for t in (raws if n is None else raws[: int(n)])]

    def raw(self, task: Task) -> Mapping:
        """The published task record of ``task``; a task of other data is a KeyError."""
        raw = self._by_id.get(task.task_id)
        if raw is None:
            raise KeyError(f"task {task.task_id!r} is not a task of {self.data.path / 'tasks.json'}")
        return raw

    def gold(self, task: Task) -> tuple[str, list[str]]:
        return gold_state(self.data, self.raw(task), self.fidelity)

    def judge_nl(self, item: NLItem, gateway=None) -> tuple[list | None, str | None]:
        """The task's assertions judged by ``nl_judge`` (module docstring): (checks or None, why not)."""
        if self.nl_judge == KNOWN_ANSWER:
            return KnownAnswerNLJudge.check(item), None
        if gateway is None:
            return None, f"NL judge {self.nl_judge!r} needs a gateway"
        from ...judges.spec import ModelJudge

        out = ModelJudge(NLAssertionSpec(), gateway, self.nl_judge, run_id="padme-tau2-nl").judge([item])[0]
        return (out.value, None) if out.ok else (None, f"{out.kind}: {out.reason}")

    def rollout(self, task: Task, criterion: Criterion, level: str, steering: str, context: Context,
                attempt: int, gateway=None) -> Rollout:  # fmt: skip
        check_level(level)
        t0 = time.perf_counter()
        raw = self.raw(task)
        rid = make_rollout_id(self.name, task.task_id, criterion.name, level, attempt, context.seed)
        scripted = is_scripted(context)
        env = RetailEnvironment(self.data, agent_opens=scripted, fidelity=self.fidelity)
        system = wrap_steering(self.system_prompt(), steering)
        user, agent = self._parties(raw, task, criterion, level, context, attempt, rid, system, env, gateway)
        conv, reward, breakdown, gold_errors = self.episode(raw, env, agent, user, system, rid,
                                                            repeat_index(attempt, context.seed), gateway)  # fmt: skip
        if self.tool_texts != "tau2" and not scripted:
            breakdown["tool_texts"] = self.tool_texts  # the agent saw the project's short descriptions
        usage = dict(conv.usage)
        if isinstance(user, LLMRetailUser):
            usage = {**usage, **{f"user_{k}": v for k, v in user.usage.items()}}
        meta = {"termination": conv.termination, "reward_breakdown": breakdown,
                "actions_taken": [r.call.name for r in conv.tools], "gold_replay_errors": gold_errors,
                "user": getattr(user, "name", "scripted"), "wall_s": round(time.perf_counter() - t0, 4)}  # fmt: skip
        if conv.errors:
            meta["errors"] = dict(conv.errors)  # a crashed agent or user, contained
        return rollout_record(
            source=self.name, task=task, criterion=criterion, level=level, steering=steering, context=context,
            attempt=attempt, messages=conv.messages, reward=reward, usage=usage, meta=meta,
        )  # fmt: skip

    def episode(self, raw: Mapping, env: RetailEnvironment, agent, user, system: str, rid: str, repeat: int,
                gateway=None) -> tuple[Any, float, dict, list[str]]:  # fmt: skip
        """One conversation of ``agent`` and ``user`` in ``env`` and its reward over the task's basis
        (:func:`~shopbench.domains.tau2_retail.environment.task_reward`; NL assertions judged by
        ``nl_judge`` when set): (conversation, reward, breakdown, gold replay errors). PADMÉ's rollouts
        and the ``tau2_retail_agent`` task (issue 26 §1) both play their episodes here."""
        conv = run_conversation(env, agent, user, system)
        gold_hash, gold_errors = gold_state(self.data, raw, self.fidelity)
        criteria = raw["evaluation_criteria"]
        nl_checks, nl_error = None, None
        if self.nl_judge and criteria.get("nl_assertions"):
            item = NLItem(f"{rid}:nl", tuple(criteria["nl_assertions"]), conv.messages,
                          tuple(criteria.get("communicate_info") or ()), env.db.state_hash() == gold_hash,
                          repeat=repeat)  # fmt: skip
            nl_checks, nl_error = self.judge_nl(item, gateway)
        reward, breakdown = task_reward(env.db, gold_hash, criteria, conv.messages, conv.termination, nl_checks,
                                        self.reward_basis, self.nl_judge)  # fmt: skip
        if nl_error:
            breakdown["nl_error"] = nl_error
        breakdown["fidelity"] = self.fidelity
        return conv, reward, breakdown, gold_errors

    def _parties(self, raw: Mapping, task: Task, criterion: Criterion, level: str, context: Context,
                 attempt: int, rid: str, system: str, env: RetailEnvironment, gateway) -> tuple[Any, Any]:  # fmt: skip
        """The user and the agent of one rollout (scripted or through the gateway)."""
        instructions = raw["user_scenario"]["instructions"]
        scripted = is_scripted(context)
        gw = rollout_gateway(context, attempt, gateway)
        if context.user_model == "scripted":
            user: Any = ScriptedRetailUser(
                instructions, random.Random(f"{rid}:user"), max_turns=self.max_turns
            )
        else:
            user = LLMRetailUser(gw, context.user_model, instructions, run_id="padme-tau2-user", item_prefix=rid,
                                 max_turns=self.max_turns)  # fmt: skip
        if scripted:
            agent: Any = ScriptedRetailAgent(
                task.meta, env.db, criterion.name, level, random.Random(f"{rid}:agent")
            )
        else:
            agent = LLMRetailAgent(gw, context.agent_model, system, run_id="padme-tau2-agent", item_prefix=rid,
                                   tool_mode=self.tool_mode, tool_texts=self.tool_texts)  # fmt: skip
        return user, agent
