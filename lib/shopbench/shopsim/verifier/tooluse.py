"""Tool-use tags and rates (seed 002 §4.1 "Deterministic signals", second paragraph).

"For tool use we tag each call as *errored* when its result reports an error or *redundant* when its
signature repeats with no intervening state change. We further tag searches as *goal-relevant* when at
least one target product is both missing and already revealed according to Section 3.3, *empty* when a
clean execution returns no results, and *bad* when a goal-relevant search errors, returns nothing, or
returns none of the still-needed targets. A bad search is *recovered* when a later same-category retry
succeeds, and *autonomous* when that retry happens in the same turn without a customer re-prompt. The
rates are n_err/n_call, n_redun/n_call, n_empty/n_search, n_bad/n_rel, and n_rec/n_bad." (§4.1)

Our reading, made precise:

- *redundant*: an earlier call of the same turn has the same signature (name + sorted JSON arguments)
  and no successful cart mutation happened from that earlier call (inclusive) up to this one; so a
  repeated successful ``add_to_cart`` is a second state change, not a redundant call.
- *missing* uses the replayed cart just before the call (C[p] < q); *revealed* means
  ``revealed_at[p] <= the call's turn``; the *still-needed* targets are the missing and revealed ones.
- *recovered*: a later search (same or later turn) returns a target that is still needed at that later
  call and whose goal category is one of the categories of the bad search's still-needed targets;
  *autonomous*: such a retry in the bad search's own turn.
- A rate with a zero denominator is ``None`` (not measurable), never 0.

Search results are read from the result's ``results`` list (also ``products``/``items``), whose
entries carry ``product_id`` (or are ids).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..registry import category_of
from ..replay import is_mutation
from ..types import GoalItem, ToolEvent, TrialRecord

RESULT_LIST_KEYS = ("results", "products", "items")


def result_ids(result: Mapping) -> list[str]:
    """Product ids a search result returned, in rank order (empty for an error or no results)."""
    for key in RESULT_LIST_KEYS:
        rows = result.get(key)
        if isinstance(rows, list):
            out = []
            for r in rows:
                if isinstance(r, Mapping) and r.get("product_id") is not None:
                    out.append(str(r["product_id"]))
                elif isinstance(r, str):
                    out.append(r)
            return out
    return []


def _ratio(num: int, den: int) -> float | None:
    return num / den if den > 0 else None


@dataclass
class ToolUse:
    """Per-call tag table (one dict per call, in log order) and the trial's counts and rates."""

    calls: list[dict] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    rates: dict[str, float | None] = field(default_factory=dict)


def tag_calls(
    events: Sequence[ToolEvent], items: Sequence[GoalItem], revealed_at: Mapping[str, int]
) -> ToolUse:
    """Tag every call of a tool log against the target ``items`` and the reveal stamps."""
    target = {g.product_id: g.quantity for g in items}
    cat_of_target = {g.product_id: g.category for g in items}
    order = [g.product_id for g in items]

    rows: list[dict] = []
    cart: dict[str, int] = {}
    seen: dict[int, set[str]] = {}  # turn -> signatures since the last state change in that turn
    for i, e in enumerate(events):
        sig = e.call.signature()
        turn_seen = seen.setdefault(e.turn, set())
        row = {
            "index": i,
            "turn": e.turn,
            "round": e.round,
            "tool": e.call.name,
            "category": category_of(e.call.name),
            "signature": sig,
            "errored": not e.ok,
            "redundant": sig in turn_seen,
            "search": category_of(e.call.name) == "search",
            "relevant": False,
            "empty": False,
            "bad": False,
            "recovered": False,
            "autonomous": False,
            "needed": [],
            "returned_needed": [],
            "recovered_by": None,
        }
        if row["search"]:
            ids = result_ids(e.result) if e.ok else []
            needed = [
                p
                for p in order
                if int(cart.get(p, 0)) < target[p]
                and revealed_at.get(p) is not None
                and revealed_at[p] <= e.turn
            ]
            hit = [p for p in needed if p in set(ids)]
            row.update(
                relevant=bool(needed),
                empty=e.ok and not ids,
                needed=needed,
                returned_needed=hit,
                bad=bool(needed) and (not e.ok or not ids or not hit),
            )
        rows.append(row)
        if is_mutation(e):
            pid, q = str(e.result["product_id"]), int(e.result["quantity"])
            if q > 0:
                cart[pid] = q
            else:
                cart.pop(pid, None)
            turn_seen.clear()
        else:
            turn_seen.add(sig)

    for b in rows:
        if not b["bad"]:
            continue
        cats = {cat_of_target[p] for p in b["needed"]}
        for s in rows[b["index"] + 1 :]:
            if s["search"] and any(cat_of_target[p] in cats for p in s["returned_needed"]):
                # the log is in time order, so the first retry is the same-turn one if there is one
                b["recovered"], b["recovered_by"], b["autonomous"] = True, s["index"], s["turn"] == b["turn"]
                break

    n = {
        "n_call": len(rows),
        "n_err": sum(r["errored"] for r in rows),
        "n_redun": sum(r["redundant"] for r in rows),
        "n_search": sum(r["search"] for r in rows),
        "n_empty": sum(r["empty"] for r in rows),
        "n_rel": sum(r["relevant"] for r in rows),
        "n_bad": sum(r["bad"] for r in rows),
        "n_rec": sum(r["recovered"] for r in rows),
        "n_auto": sum(r["autonomous"] for r in rows),
    }
    rates = {
        "invalid_tool_call_rate": _ratio(n["n_err"], n["n_call"]),
        "redundant_tool_call_rate": _ratio(n["n_redun"], n["n_call"]),
        "empty_search_rate": _ratio(n["n_empty"], n["n_search"]),
        "bad_search_rate": _ratio(n["n_bad"], n["n_rel"]),
        "search_recovery_rate_overall": _ratio(n["n_rec"], n["n_bad"]),
        "search_recovery_rate_autonomous": _ratio(n["n_auto"], n["n_bad"]),
    }
    return ToolUse(calls=rows, counts=n, rates=rates)


def tool_use(traj: TrialRecord) -> ToolUse:
    """Tags and rates of one trajectory (its tool log, target and reveal stamps)."""
    return tag_calls(traj.events, traj.scenario.items, traj.revealed_at)
