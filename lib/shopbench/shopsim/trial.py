"""Running one trial: the controller of seed 002 §3.4.

"A turn contains one customer message and one agent turn, which may span several tool-call rounds.
[...] The controller reads the ground-truth cart after every agent turn rather than scraping the
transcript for it. On a nonlinear trial it also owns termination, ignoring a premature 'done' from the
simulator until the cart genuinely holds every goal item at its required quantity. The six recorded
termination reasons are goal completion, turn-budget exhaustion, customer abandonment, an agent
failure, a simulator failure, and a missing opening message." (§3.4)

"The ceiling on tool-call rounds within a single agent turn is 10 for the sequential styles [...] a
turn that hits it is recorded as an agent error." (App. D)

The loop is :func:`shopbench.env.run_conversation`, the one conversation loop of every domain;
the shop's rules (reveal directives, cart reads, termination names) are
:class:`shopbench.shopsim.environment.ShopEnvironment`. Nothing a party does crashes a trial: an
agent exception or unusable step becomes ``assistant_error``, a simulator exception
``judge_error`` (``no_opening_message`` on the first message), and a malformed tool call an error
result the agent sees (an invalid call).
"""

from __future__ import annotations

import time

from ..env.orchestrator import run_conversation
from .environment import ShopCustomer, ShopEnvironment
from .types import Scenario, TrialRecord


def run_trial(scenario: Scenario, agent, user, store, deadline: float | None = None) -> TrialRecord:
    """Play one trial of ``agent`` with customer ``user`` in a fresh cart of ``store``. ``deadline``
    (a :func:`time.monotonic` instant): no agent step or customer turn starts after it, and the trial
    ends as ``time_budget`` (a cut trial, not a finished one)."""
    t0 = time.perf_counter()
    agent.reset(scenario.trial_id)
    system_prompt = getattr(agent, "system_prompt", "")
    env = ShopEnvironment(scenario, store, system_prompt, deadline=deadline)
    conv = run_conversation(env, agent, ShopCustomer(user), system_prompt)
    usage: dict[str, dict[str, float]] = {"agent": conv.usage}
    if "user" in conv.errors:
        usage["simulator_error"] = {"message": conv.errors["user"]}  # type: ignore[dict-item]  # kept for the record
    return TrialRecord(
        scenario=scenario,
        agent=getattr(agent, "name", type(agent).__name__),
        user=getattr(user, "name", type(user).__name__),
        system_prompt=system_prompt,
        turns=env.turns,
        termination=conv.termination,
        final_cart=env.session.cart,
        revealed_at=dict(env.controller.revealed_at),
        usage=usage,
        wall_s=round(time.perf_counter() - t0, 4),
    )
