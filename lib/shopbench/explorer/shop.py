"""Shop trials (seed 002): a trial turn by turn, from its :class:`~shopbench.shopsim.types.TrialRecord`.

Everything here reads the trial record the sweep stored; nothing is re-run or re-judged.

- :func:`trial_steps`: one row per thing that happened, in order — the customer's message, each
  tool call with its result (ok or error), the agent's reply — with the cart after each action
  (state replay from the tool log, :mod:`shopbench.shopsim.replay`; the controller's own cart read
  closes each turn) and the flags raised at that turn.
- :func:`reveal_schedule`: per goal item, the message where the customer first asked for it
  (``revealed_at``), the planned wave/order/beat, the turn it first reached its quantity, and the
  final quantity.
- :func:`turn_flags`: what a reader should look at in a turn, each flag read off the record by a
  rule stated in :data:`FLAG_RULES` (these are explorer flags, not the 44-metric battery, whose
  per-trial values :func:`trial_metrics` shows beside them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..shopsim.replay import is_mutation
from ..shopsim.types import CONTRACT_VERSION, TrialRecord

FLAG_RULES = {
    "tool_error": "a tool call returned an error",
    "agent_error": "the agent turn ended in an error (exception, error step or tool-round ceiling)",
    "off_target_add": "a cart write put a product in the cart that is not in the hidden target cart",
    "over_quantity": "a goal product's cart quantity went above its target quantity",
    "removed_goal_item": "a goal product that had reached its quantity was removed or reduced",
    "pending": "after the agent turn, items the customer has asked for are not yet in the cart at their quantity",
    "frustrated": "the customer's inline frustration rating is 4 or 5",
    "no_tool_use": "the agent answered a request to add items without any tool call",
    "ended": "the trial ended after this turn (the termination reason)",
}


def read_trials(folder: str | Path) -> list[TrialRecord]:
    """Every trial under ``folder`` (``<agent>.jsonl``), read only: a line cut short by a kill is
    skipped (the sweep repairs its own files), a line of another scoring contract is an error."""
    out = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                continue
            if d.get("contract_version") != CONTRACT_VERSION:
                from ..errors import InputError

                raise InputError(f"trial {d.get('trial_id')!r} has scoring contract {d.get('contract_version')!r}, "
                                 f"this code reads {CONTRACT_VERSION!r}", file=path, where=f"line {lineno}",
                                 fix="re-run notebook 80 (delete the stale trajectory file first)")  # fmt: skip
            out.append(TrialRecord.from_dict(d))
    return out


def trial_index(trials: list[TrialRecord], scores: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per trial: agent, scenario (kind, tier, difficulty, reveal style), turns, tool calls,
    termination, and — when the battery's scores are given — exact-cart success and goal progress."""
    rows = []
    for t in trials:
        s = t.scenario
        rows.append({"trial_id": t.trial_id, "agent": t.agent, "kind": s.kind, "tier": s.tier,
                     "difficulty": s.difficulty, "style": s.style, "goal_items": len(s.items), "turns": len(t.turns),
                     "tool_calls": len(t.events), "tool_errors": sum(not e.ok for e in t.events),
                     "termination": t.termination})  # fmt: skip
    df = pd.DataFrame(rows)
    if scores is not None and len(df) and {"trial_id", "agent"} <= set(scores.columns):
        keep = [c for c in ("exact_cart", "goal_progress", "precision", "recall") if c in scores]
        if keep:
            df = df.merge(scores[["trial_id", "agent", *keep]], on=["trial_id", "agent"], how="left")
    return df


def _cart_text(cart: dict[str, int]) -> str:
    return ", ".join(f"{pid}×{q}" for pid, q in sorted(cart.items())) or "(empty)"


def _short(obj: Any, limit: int = 160) -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def turn_flags(trial: TrialRecord) -> dict[int, list[str]]:
    """Turn index -> the flags raised at that turn (see :data:`FLAG_RULES`), e.g. ``"tool_error: add_to_cart"``."""
    target = trial.scenario.target
    flags: dict[int, list[str]] = {t.index: [] for t in trial.turns}
    cart: dict[str, int] = {}
    reached: set[str] = set()
    for t in trial.turns:
        f = flags[t.index]
        silent = t.user.terminate and not (t.agent_message or t.events or t.agent_error)  # no agent turn
        for e in t.events:
            if not e.ok:
                f.append(f"tool_error: {e.call.name} ({_short(e.result.get('error'), 80)})")
            if not is_mutation(e):
                continue
            pid, q = str(e.result["product_id"]), int(e.result["quantity"])
            if pid not in target and q > cart.get(pid, 0):
                f.append(f"off_target_add: {pid}")
            if pid in target and q > target[pid]:
                f.append(f"over_quantity: {pid} {q} > {target[pid]}")
            if pid in reached and q < target.get(pid, 0):
                f.append(f"removed_goal_item: {pid} now {q}")
            cart = {**cart, pid: q} if q > 0 else {k: v for k, v in cart.items() if k != pid}
            if pid in target and q >= target[pid]:
                reached.add(pid)
        if t.agent_error:
            f.append(f"agent_error: {_short(t.agent_error, 80)}")
        if t.directive.ask_add and not t.events and not silent:
            f.append("no_tool_use")
        now = cart if silent else t.cart_after  # no agent turn after a stop: no controller read either
        pending = [p for p in t.directive.pending if now.get(p, 0) < target.get(p, 0)]
        if pending:
            f.append(f"pending: {len(pending)} item(s)")
        if t.user.frustration >= 4:
            f.append(f"frustrated: {t.user.frustration}/5")
    if trial.turns:
        flags[trial.turns[-1].index].append(f"ended: {trial.termination}")
    return flags


def trial_steps(trial: TrialRecord) -> pd.DataFrame:
    """One row per step of the trial in order: ``turn, step, actor, action, detail, ok, cart, flags``.

    ``actor`` is customer, tool or agent; ``cart`` is the replayed cart after a cart write, and the
    controller's cart read after the agent's reply; ``flags`` (on the agent's reply, or on the
    customer's message when the customer ended the trial and the agent did not answer) are the
    turn's :func:`turn_flags`."""
    flags = turn_flags(trial)
    rows = []
    cart: dict[str, int] = {}
    for t in trial.turns:
        d = t.directive
        ask = []
        if d.reveal:
            ask.append(f"reveals {', '.join(d.reveal)}")
        if d.ask_add:
            ask.append(f"asks to add {', '.join(d.ask_add)}")
        silent = t.user.terminate and not (
            t.agent_message or t.events or t.agent_error
        )  # the customer ended it
        rows.append({"turn": t.index, "actor": "customer", "action": "message" + (" (stop)" if t.user.terminate else ""),
                     "detail": t.user.message, "ok": True, "cart": "", "schedule": "; ".join(ask),
                     "flags": "; ".join(flags[t.index]) if silent else ""})  # fmt: skip
        if silent:
            continue
        for e in t.events:
            if is_mutation(e):
                pid, q = str(e.result["product_id"]), int(e.result["quantity"])
                cart = {**cart, pid: q} if q > 0 else {k: v for k, v in cart.items() if k != pid}
            rows.append({"turn": t.index, "actor": "tool", "action": f"{e.call.name}",
                         "detail": f"{_short(e.call.arguments, 120)} → {_short(e.result)}", "ok": e.ok,
                         "cart": _cart_text(cart) if is_mutation(e) else "", "schedule": "", "flags": ""})  # fmt: skip
        rows.append({"turn": t.index, "actor": "agent", "action": "reply" if not t.agent_error else "error",
                     "detail": t.agent_message or (t.agent_error or ""), "ok": not t.agent_error,
                     "cart": _cart_text(t.cart_after), "schedule": "", "flags": "; ".join(flags[t.index])})  # fmt: skip
    df = pd.DataFrame(rows, columns=["turn", "actor", "action", "detail", "ok", "cart", "schedule", "flags"])
    df.insert(1, "step", range(len(df)))
    return df


def reveal_schedule(trial: TrialRecord) -> pd.DataFrame:
    """Per goal item: category, target quantity, planned release (batch wave / linear position /
    nonlinear beats), the message it was first asked for, the turn it first reached its quantity
    in the controller's cart reads, and its final quantity."""
    s = trial.scenario
    wave = {pid: i for i, w in enumerate(s.waves) for pid in w}
    pos = {pid: i for i, pid in enumerate(s.order)}
    beats: dict[str, list[str]] = {}
    for i, b in enumerate(s.beats):
        beats.setdefault(b.product_id, []).append(f"{i}:{b.kind}")
    rows = []
    for g in s.items:
        done = next((t.index for t in trial.turns if t.cart_after.get(g.product_id, 0) >= g.quantity), None)
        plan = (f"wave {wave[g.product_id]}" if g.product_id in wave else f"position {pos[g.product_id]}"
                if g.product_id in pos else ", ".join(beats.get(g.product_id, [])) or "–")  # fmt: skip
        rows.append({"product_id": g.product_id, "category": g.category, "quantity": g.quantity, "plan": plan,
                     "revealed_at": trial.revealed_at.get(g.product_id), "in_cart_at": done,
                     "final_quantity": trial.final_cart.get(g.product_id, 0),
                     "withheld": ", ".join(g.withheld) or "–"})  # fmt: skip
    df = pd.DataFrame(rows, columns=["product_id", "category", "quantity", "plan", "revealed_at", "in_cart_at",
                                     "final_quantity", "withheld"])  # fmt: skip
    for c in ("revealed_at", "in_cart_at"):
        df[c] = df[c].astype("Int64")
    df.attrs["style"] = s.style
    return df


def trial_metrics(scores: pd.DataFrame, trial: TrialRecord) -> pd.Series:
    """The battery's values for one trial (from ``shopsim/scores.parquet``), metric -> value, NaN
    (not applicable) left out."""
    row = scores[(scores["trial_id"] == trial.trial_id) & (scores["agent"] == trial.agent)]
    if row.empty:
        return pd.Series(dtype=object)
    r = row.iloc[0].drop(labels=[c for c in ("trial_id", "agent") if c in row.columns])
    return r[r.notna()]


__all__ = [
    "FLAG_RULES",
    "read_trials",
    "trial_index",
    "turn_flags",
    "trial_steps",
    "reveal_schedule",
    "trial_metrics",
]
