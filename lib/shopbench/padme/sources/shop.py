"""The shop environment as a PADMÉ trajectory source (seed 003 §3.1 "Generation", §4 "Agent System").

"t may include textual descriptions of the task (e.g., 'rebook a plane ticket'), tools and resources
available to the agent for the task [...], information about the simulated user's intention of the
task [...] Care must be taken here to ensure that no unwanted information leakage happens inside
the task parameters that would reveal the solution of the task directly to the trajectory-generating
agent." (§3.1 and footnote 2)

A task is one general-kind shop scenario (``shopbench.shopsim``) of modest size: difficulty 1-5 and
2-5 goal items by default, so that a partial basket differs from a full one. ``Task.description``
says what the customer wants in general terms (how many products, from which store categories, how
they reveal them), never ids, titles or prices; ``Task.meta`` keeps the scenario seed, kind and
difficulty to rebuild it. The catalog, its store and the scenario factory are built once per source.

Rollouts run :func:`shopbench.shopsim.trial.run_trial` with the scripted customer
(``ScriptedUser``; ``seed_offset`` from attempt and seed varies its wording) or the LLM customer, and

- a scripted agent (``context.agent_model`` "scripted..."): :class:`SteeredShopAgent`, the competent
  reference agent whose replies go through
  :func:`~shopbench.padme.sources.steered.style_message` and whose adds follow the task-resolution
  effort of the level (:func:`~shopbench.padme.sources.steered.action_plan` over the goal items):
  bad serves the first request (searches and presents) and then stops acting (no add), ok adds
  about half of the requested items and declines the rest, good adds everything. The *simulated*
  steering source: labelled so in ``meta["steering_source"]``.
- otherwise ``shopsim.agents.LLMAgent`` through the gateway, system prompt = the shop agent prompt
  with the H.3 wrapper appended.

reward = exact-cart success (1.0 / 0.0) from ``shopsim.verifier.outcomes.trial_outcomes``. The
trial record becomes the rollout's OpenAI messages through
:func:`shopbench.shopsim.environment.trial_messages`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

from ...shopsim.agents import LLMAgent, ScriptedAgent, default_system_prompt
from ...shopsim.catalog.generate import control_catalog
from ...shopsim.environment import trial_messages
from ...shopsim.registry import TOOL_NAMES
from ...shopsim.scenario import ScenarioFactory
from ...shopsim.store import Store
from ...shopsim.trial import run_trial
from ...shopsim.types import AgentStep, Scenario
from ...shopsim.user import LLMUser, ScriptedUser
from ...shopsim.verifier.outcomes import trial_outcomes
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
from .steered import action_plan, conduct_of, style_message

__all__ = ["STYLE_WORDS", "SteeredShopAgent", "ShopSource"]

STYLE_WORDS = {
    "batch": "all at once or in a few batches",
    "linear": "one at a time",
    "nonlinear": "in a wandering order, exploring and coming back to items",
}
ABANDON_LINES = (
    "I'm not going to take this order any further.",
    "That's as far as I'll go with this request.",
)
DECLINE_LINES = (
    "I've left the {what} out of your cart; I'm not adding more to this order.",
    "I'm not adding the {what}; this order stays as it is.",
)


class SteeredShopAgent(ScriptedAgent):
    """The competent scripted agent with steered conduct (see the module docstring). ``seed`` makes
    its phrasing deterministic per rollout."""

    kind = "steered"

    def __init__(self, criterion: str, level: str, n_items: int, seed: str,
                 system_prompt: str | None = None):  # fmt: skip
        self.criterion, self.level, self.seed = criterion, level, seed
        self.effort = conduct_of(criterion, level)[1]
        self.allowed = len(action_plan(list(range(n_items)), criterion, level, random.Random(f"{seed}:plan")))
        super().__init__(system_prompt=system_prompt, name=f"scripted:steered:{criterion}:{level}")

    def reset(self, trial_id: str) -> None:
        super().reset(trial_id)
        self.rng = random.Random(f"{self.seed}:text")
        self.served_refs: list[str] = []
        self.turns_seen = 0

    def plan(self, intent):
        self.turns_seen += 1
        if self.effort == "abandon" and self.turns_seen > 1:
            self._closing = [self.rng.choice(ABANDON_LINES)]
            return []
        return super().plan(intent)

    def _add(self, it: dict, out: list[str]):
        ref = str(it.get("ref"))
        if ref not in self.served_refs:
            if len(self.served_refs) >= self.allowed:
                row = self.chosen.get(it.get("ref")) or {}
                what = row.get("title") or it.get("description") or "item"
                out.append(self.rng.choice(DECLINE_LINES).format(what=what))
                return
            self.served_refs.append(ref)
        yield from super()._add(it, out)

    def step(self, messages: list[dict], intent: list[dict]) -> AgentStep:
        step = super().step(messages, intent)
        if step.message and not step.tool_calls:
            step.message = style_message(step.message, self.criterion, self.level, self.rng)
        return step


def _join(words: Sequence[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


class ShopSource:
    """The shop environment as a :class:`~shopbench.padme.sources.base.TrajectorySource`."""

    name = "shop"
    domain = "shop"
    has_reward = True

    def __init__(self, n_products: int = 2000, catalog_seed: int = 0, difficulties: Sequence[int] = (1, 2, 3, 4, 5),
                 min_items: int = 2, max_items: int = 5, tool_mode: str = "native", retrieval: str = "bm25",
                 max_turns: int | None = None):  # fmt: skip
        if not difficulties or any(not 1 <= int(d) <= 10 for d in difficulties):
            raise ValueError(f"shop source: difficulties must be integers in 1..10, got {list(difficulties)}")
        if not 1 <= int(min_items) <= int(max_items):
            raise ValueError(f"shop source: need 1 <= min_items <= max_items, got {min_items}, {max_items}")
        self.catalog = control_catalog(int(n_products), seed=int(catalog_seed))
        self.store = Store(self.catalog, retrieval=retrieval)
        self.factory = ScenarioFactory(self.catalog)
        self.products = {p.product_id: p for p in self.catalog}
        self.difficulties = tuple(int(d) for d in difficulties)
        self.min_items, self.max_items = int(min_items), int(max_items)
        self.tool_mode = tool_mode
        self.max_turns = max_turns
        self.catalog_seed = int(catalog_seed)

    def tool_names(self) -> tuple[str, ...]:
        return TOOL_NAMES

    def system_prompt(self) -> str:
        return default_system_prompt()

    # -- tasks ------------------------------------------------------------------------------------------
    def scenario(self, task: Task) -> Scenario:
        m = task.meta
        try:
            return self.factory.make(int(m["scenario_seed"]), kind=m.get("kind", "general"),
                                     difficulty=int(m["difficulty"]))  # fmt: skip
        except KeyError as e:
            raise ValueError(
                f"shop task {task.task_id!r}: meta lacks {e}; build tasks with ShopSource.tasks()"
            ) from None

    def describe(self, sc: Scenario) -> str:
        """What the customer wants in general terms: no ids, titles or prices."""
        cats = sorted({g.category for g in sc.items})
        n = len(sc.items)
        multi = sum(1 for g in sc.items if g.quantity > 1)
        variants = sum(1 for g in sc.items if g.variant_id)
        parts = [
            f"A customer of an online store wants the assistant to put {n} different products in their cart, from "
            f"the {_join(cats)} {'category' if len(cats) == 1 else 'categories'}.",
            f"They bring up what they want {STYLE_WORDS.get(sc.style, sc.style)}, describing each product by what "
            "it is and sometimes a brand, a feature or a budget.",
        ]
        if variants:
            parts.append("Some products come in sizes or colours, so the right variant has to be picked, and the "
                         "customer may leave out a detail the assistant has to ask about.")  # fmt: skip
        if multi:
            parts.append("Some items are wanted in more than one unit.")
        parts.append("The assistant has to search the catalog, present suitable matches, add exactly what was "
                     "asked in the asked quantities, and report the cart when the customer wraps up.")  # fmt: skip
        return " ".join(parts)

    def tasks(self, n: int | None = None, seed: int = 0) -> list[Task]:
        """``n`` (default 50) general scenarios, difficulties cycling through ``difficulties``, kept
        when they have ``min_items``..``max_items`` goal items; deterministic in ``seed``."""
        n = 50 if n is None else int(n)
        out: list[Task] = []
        i = 0
        while len(out) < n:
            if i > 200 * max(n, 1):
                raise ValueError(f"shop source: found only {len(out)} scenarios with {self.min_items}-"
                                 f"{self.max_items} items; widen min_items/max_items or difficulties")  # fmt: skip
            s = int(seed) * 1_000_003 + i
            d = self.difficulties[i % len(self.difficulties)]
            i += 1
            sc = self.factory.make(s, kind="general", difficulty=d)
            if not self.min_items <= len(sc.items) <= self.max_items:
                continue
            out.append(Task(
                task_id=f"shop-{sc.trial_id}-d{d}", domain=self.domain, source=self.name, description=self.describe(sc),
                tool_names=TOOL_NAMES,
                meta={"scenario_seed": s, "kind": "general", "difficulty": d, "n_items": len(sc.items),
                      "style": sc.style, "catalog_seed": self.catalog_seed, "n_products": len(self.catalog)},
            ))  # fmt: skip
        return out

    # -- rollouts ---------------------------------------------------------------------------------------
    def rollout(self, task: Task, criterion: Criterion, level: str, steering: str, context: Context,
                attempt: int, gateway=None) -> Rollout:  # fmt: skip
        check_level(level)
        t0 = time.perf_counter()
        sc = self.scenario(task)
        if self.max_turns is not None:
            from dataclasses import replace

            sc = replace(sc, max_turns=int(self.max_turns))
        rid = make_rollout_id(self.name, task.task_id, criterion.name, level, attempt, context.seed)
        system = wrap_steering(self.system_prompt(), steering)
        gw = rollout_gateway(context, attempt, gateway)
        if context.user_model == "scripted":
            user: Any = ScriptedUser(seed_offset=repeat_index(attempt, context.seed))
        else:
            user = LLMUser(gw, context.user_model, run_id="padme-shop-user")
        if is_scripted(context):
            agent: Any = SteeredShopAgent(
                criterion.name, level, len(sc.items), seed=rid, system_prompt=system
            )
        else:
            agent = LLMAgent(gw, context.agent_model, system_prompt=system, tool_mode=self.tool_mode,
                             run_id="padme-shop-agent", name=f"llm:{context.agent_model}")  # fmt: skip
        traj = run_trial(sc, agent, user, self.store)
        out = trial_outcomes(traj)
        usage = dict(traj.usage.get("agent") or {})
        return rollout_record(
            source=self.name, task=task, criterion=criterion, level=level, steering=steering, context=context,
            attempt=attempt, messages=trial_messages(traj), reward=float(out.exact_cart_success), usage=usage,
            meta={"termination": traj.termination, "trial_id": traj.trial_id, "precision": out.precision,
                  "recall": out.recall, "final_cart": out.final_cart, "target": sc.target,
                  "agent_errors": [t.agent_error for t in traj.turns if t.agent_error],
                  "wall_s": round(time.perf_counter() - t0, 4)},
        )  # fmt: skip
