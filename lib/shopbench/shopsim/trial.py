"""Running one trial: the controller of seed 002 §3.4.

"A turn contains one customer message and one agent turn, which may span several tool-call rounds.
[...] The controller reads the ground-truth cart after every agent turn rather than scraping the
transcript for it. On a nonlinear trial it also owns termination, ignoring a premature 'done' from the
simulator until the cart genuinely holds every goal item at its required quantity. The six recorded
termination reasons are goal completion, turn-budget exhaustion, customer abandonment, an agent
failure, a simulator failure, and a missing opening message." (§3.4)

"The ceiling on tool-call rounds within a single agent turn is 10 for the sequential styles [...] a
turn that hits it is recorded as an agent error." (App. D)

Nothing a party does crashes a trial: an agent exception or unusable step becomes
``assistant_error``, a simulator exception ``judge_error`` (``no_opening_message`` on the first
message), and a malformed tool call an error result the agent sees (an invalid call).
We ignore a premature "done" on every style, not only nonlinear ones, so that ``goal_met`` is always
a verified fact; a customer who ends a refusal probe without the (unavailable) item is recorded as
``abandoned``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from .reveal import RevealController
from .types import AgentStep, Scenario, ShopProduct, ToolCall, ToolEvent, Trajectory, Turn


def _products(store) -> Mapping[str, ShopProduct]:
    cached = getattr(store, "_products_by_id", None)
    if cached is None:
        cached = {p.product_id: p for ps in store.by_category.values() for p in ps}
        try:
            store._products_by_id = cached
        except AttributeError:  # a store with __slots__: rebuild each time
            pass
    return cached


def _add_usage(acc: dict[str, float], usage: Mapping[str, Any] | None) -> None:
    for k, v in (usage or {}).items():
        if isinstance(v, int | float):
            acc[k] = acc.get(k, 0.0) + float(v)


def _tool_message(call: ToolCall) -> dict:
    return {"id": call.call_id, "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments, sort_keys=True)}}  # fmt: skip


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"[:500]


def run_trial(scenario: Scenario, agent, user, store) -> Trajectory:
    """Play one trial of ``agent`` with customer ``user`` in a fresh cart of ``store``."""
    t0 = time.perf_counter()
    products = _products(store)
    controller = RevealController(scenario)
    session = store.session()
    agent.reset(scenario.trial_id)
    system_prompt = getattr(agent, "system_prompt", "")
    messages: list[dict] = [{"role": "system", "content": system_prompt}]
    turns: list[Turn] = []
    usage: dict[str, dict[str, float]] = {"agent": {}}
    termination: str | None = None

    for i in range(scenario.max_turns):
        directive = controller.directive(session.cart, turns_left=scenario.max_turns - i)
        try:
            reply = user.reply(scenario, directive, turns, products, system_prompt, session.cart)
        except Exception as e:  # the simulator failed to produce a turn
            termination = "no_opening_message" if i == 0 else "judge_error"
            usage["simulator_error"] = {"message": _error_text(e)}  # type: ignore[dict-item]  # kept for the record
            break
        turn = Turn(index=i, directive=directive, user=reply)
        turns.append(turn)
        complete = controller.is_complete(session.cart)
        if reply.terminate:
            reason = reply.termination_reason
            if reason == "goal_met" and not complete:
                pass  # a premature "done": the controller owns termination; the message still goes out
            else:
                termination = "goal_met" if complete and scenario.kind != "refusal" else (
                    reason if reason in ("abandoned",) else "abandoned")  # fmt: skip
                break
        messages.append({"role": "user", "content": reply.message})

        for r in range(scenario.max_tool_rounds + 1):
            if r == scenario.max_tool_rounds:
                turn.agent_error = (
                    f"tool-round ceiling reached ({scenario.max_tool_rounds} rounds in one turn)"
                )
                break
            try:
                step = agent.step(messages, reply.intent)
            except Exception as e:  # an agent crash is a recorded termination, never a crashed sweep
                step = AgentStep(error=_error_text(e))
            _add_usage(usage["agent"], step.usage)
            if step.error:
                turn.agent_error = step.error
                break
            if step.tool_calls:
                calls = [
                    c if c.call_id else ToolCall(c.name, c.arguments, f"c{i}.{r}.{k}")
                    for k, c in enumerate(step.tool_calls)
                ]
                messages.append(
                    {
                        "role": "assistant",
                        "content": step.message,
                        "tool_calls": [_tool_message(c) for c in calls],
                    }
                )
                for c in calls:
                    try:
                        result = session.execute(c)
                    except Exception as e:  # the store never raises on bad input; this is a bug guard
                        result = {"error": f"tool failed: {_error_text(e)}"}
                    turn.events.append(ToolEvent(turn=i, round=r, call=c, result=result))
                    messages.append(
                        {"role": "tool", "tool_call_id": c.call_id, "content": json.dumps(result)}
                    )
                turn.rounds = r + 1
                continue
            turn.agent_message = step.message or ""
            messages.append({"role": "assistant", "content": turn.agent_message})
            break
        turn.cart_after = session.cart
        if turn.agent_error:
            termination = "assistant_error"
            break
    if termination is None:
        termination = (
            "goal_met" if controller.is_complete(session.cart) and scenario.kind != "refusal" else "max_turns"
        )

    return Trajectory(
        scenario=scenario,
        agent=getattr(agent, "name", type(agent).__name__),
        user=getattr(user, "name", type(user).__name__),
        system_prompt=system_prompt,
        turns=turns,
        termination=termination,
        final_cart=session.cart,
        revealed_at=dict(controller.revealed_at),
        usage=usage,
        wall_s=round(time.perf_counter() - t0, 4),
    )
