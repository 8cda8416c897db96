"""Readable transcripts of recorded journeys (seed 002 App. D.1 shows three: batch, linear,
nonlinear): the precommitted scenario, then each customer message, the agent's tool calls with a
one-line result, the agent's reply and the ground-truth cart the controller read after the turn."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from .types import ShopProduct, ToolEvent, TrialRecord


def _result_line(e: ToolEvent) -> str:
    r = e.result
    if "error" in r:
        return f"error: {r['error']}"
    if "results" in r:
        ids = [x.get("product_id") for x in r["results"][:4]]
        more = "" if r.get("count", len(r["results"])) <= 4 else ", ..."
        return f"{r.get('count', len(r['results']))} results ({', '.join(map(str, ids))}{more})"
    if "quantity" in r and "product_id" in r:
        return f"{r['product_id']} now x{r['quantity']}"
    if "product" in r:
        return f"details of {r['product'].get('product_id')}"
    if "items" in r:
        return f"cart: {len(r['items'])} lines, total ${r.get('total', 0):.2f}"
    return json.dumps(r)[:80]


def _args(a: Mapping) -> str:
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in a.items())


def target_table(traj: TrialRecord, products: Mapping[str, ShopProduct]) -> str:
    rows = ["| product | title | qty | variant | first requested at message |", "|---|---|---|---|---|"]
    for g in traj.scenario.items:
        p = products.get(g.product_id)
        rows.append(
            f"| {g.product_id} | {p.title if p else '?'} | {g.quantity} | {g.variant_id or '-'} | "
            f"{traj.revealed_at.get(g.product_id, '-')} |"
        )
    return "\n".join(rows)


def render_journey(
    traj: TrialRecord,
    products: Mapping[str, ShopProduct],
    turns: Sequence[int] | None = None,
    width: int = 400,
) -> str:
    """Markdown of one trial; ``turns`` limits which turns are shown (the rest are marked omitted)."""
    s = traj.scenario
    head = (
        f"### {traj.trial_id} · agent `{traj.agent}` · {s.kind}, difficulty {s.difficulty} ({s.tier}), "
        f"reveal **{s.style}**, budget {s.max_turns} turns → **{traj.termination}**\n\n"
        f"Persona: {', '.join(f'{k}={v}' for k, v in s.persona.items())}\n\n"
    )
    if s.style == "batch" and len(s.waves) > 1:
        head += f"Waves: {[len(w) for w in s.waves]}\n\n"
    if s.items:
        head += target_table(traj, products) + "\n\n"
    elif s.probe:
        head += f"Refusal probe: *{s.probe.get('topic')}* (placeholder `{s.probe.get('placeholder')}`)\n\n"
    out, skipped = [head], 0
    for t in traj.turns:
        if turns is not None and t.index not in turns:
            skipped += 1
            continue
        if skipped:
            out.append(f"*[{skipped} turn(s) omitted]*\n")
            skipped = 0
        beats = f" · beats {[b.kind for b in t.directive.beats]}" if t.directive.beats else ""
        out.append(
            f"**Customer** (msg {t.index}, frustration {t.user.frustration}/5{beats}): {t.user.message[:width]}\n"
        )
        for e in t.events:
            out.append(f"- `{e.call.name}({_args(e.call.arguments)})` → {_result_line(e)}")
        if t.events:
            out.append("")
        if t.agent_error:
            out.append(f"**Agent error**: {t.agent_error}\n")
        elif t.agent_message:
            out.append(f"**Assistant**: {t.agent_message[:width]}\n")
        if t.cart_after:
            out.append(f"<small>cart: {dict(sorted(t.cart_after.items()))}</small>\n")
    if skipped:
        out.append(f"*[{skipped} turn(s) omitted]*\n")
    out.append(
        f"Final cart {dict(sorted(traj.final_cart.items()))} vs target {dict(sorted(s.target.items()))}"
    )
    return "\n".join(out)
