"""The conversational rubrics, the hallucination score and the typed failure rates of one trial
(seed 002 §4.2, App. I Table 11, §5.1 Table 2 vocabulary).

Table 11's definitions:
- Hallucination: "One minus the violation rate over all extracted claims, across the three channels";
- Response helpfulness: "Whether each reply moved the purchase forward";
- Assistant coherence: "Whether the agent remembered what the customer had already said";
- Intent understanding: "Whether the agent read the request correctly";
- Clarification: "Whether questions were asked when needed and skipped when not. Policy-aware";
- Recommendation usefulness: "Whether what was surfaced fits what the customer asked for";
- Add-to-cart behavior: "Whether variant and quantity were confirmed before the add";
- Premature add-to-cart: "Adds made before the customer confirmed variant and quantity";
- Unnecessary clarification: "Questions asking for what the customer had already given";
- Failure to clarify: "Missing questions the request required".

The six rubric scores are the judge's answers to the rubric questions (``ask(judge, <rubric>, ...)``:
an LLM judge reads the transcript; the DeterministicJudge applies ``deterministic_rubric`` below). The three typed rates are rules over the
full simulator record (the reveal directives say when the customer asked to add and which hints it
withheld), so they are the same whichever judge runs. ``None`` means not measurable on this trial.

Our offline definitions (the paper's rubrics are model-graded; these are our documented stand-ins):
- response_helpful: fraction of agent turns that moved the purchase forward: a cart write moving a
  target toward (not past) its quantity, presenting a revealed still-needed target (or the target the
  customer asked to explore), a cart summary when the customer asked for one, or a needed
  clarification question; a turn announcing a cart change with no matching call (phantom) does not;
- assistant_coherence: 1 − fraction of agent turns that re-ask for something already stated or put
  a product the customer deferred (and has not returned to) into the cart;
- intent_understanding: fraction of the agent's cart additions and top presented picks (first product
  of each reply) that fall in a category the customer has requested;
- clarification: 1 − (unnecessary + missed) / (clarification questions asked + clarifications required);
- recommendation_usefulness: fraction of presented products in a requested category within the
  stated budget for that category;
- add_to_cart_behavior: 1 − false_add_to_cart.
false_add_to_cart counts successful add_to_cart calls of a product the customer had not asked to add
(not in ``directive.ask_add`` of this or an earlier message), so adding a wrong product counts too.
A clarification question is an agent question (a sentence ending in ``?``) about size, colour,
quantity or budget; other questions (confirmations, "anything else?") are not counted. A question is
unnecessary when no revealed, still-needed goal item has that detail open (not yet given, and for
size/colour the product sold in several); a required clarification is a revealed item whose size or
colour hint is withheld (the product sold in several), missed when the agent added it without asking
and without the customer having volunteered it. The offline rules do not read the system prompt: a
question about a detail still open is always counted as needed, which is what a confirm-before-add
policy mandates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ...shopsim.replay import cart_before
from ...shopsim.types import ShopProduct, ToolEvent, TrialRecord
from .claims import check_action, extract_claims_from_prose, presented_products, still_needed
from .judge import RUBRICS

TOPICS = ("size", "colour", "quantity", "budget")
_TOPIC_RX = {
    "size": re.compile(r"\bsizes?\b", re.I),
    "colour": re.compile(r"\bcolou?rs?\b", re.I),
    "quantity": re.compile(r"\bhow many\b|\bquantity\b|\bquantities\b", re.I),
    "budget": re.compile(r"\bbudget\b|\bprice range\b|\bspend\b", re.I),
}
_QUESTION = re.compile(r"[^.?!\n]*\?")
_SUMMARY = re.compile(r"\bcart total is\b|\byour cart (?:has|holds|contains|now has)\b", re.I)


# ---------------------------------------------------------------------------------------------------
# facts of the record


def questions(message: str) -> list[tuple[str, tuple[str, ...]]]:
    """The clarification questions of a message: (question text, topics asked about)."""
    out = []
    for m in _QUESTION.finditer(message or ""):
        topics = tuple(t for t in TOPICS if _TOPIC_RX[t].search(m.group(0)))
        if topics:
            out.append((m.group(0).strip(), topics))
    return out


def _item_index(ref: str | None, n: int) -> int | None:
    m = re.fullmatch(r"item(\d+)", ref or "")
    return int(m.group(1)) if m and int(m.group(1)) < n else None


def _has_dim(p: ShopProduct | None, dim: str) -> bool:
    return p is not None and any(getattr(v, dim) for v in p.variants)


def _number(s: object) -> float | None:
    m = re.search(r"\d+(?:\.\d+)?", str(s).replace(",", ""))
    return float(m.group(0)) if m else None


@dataclass
class Facts:
    """What the rules read, computed once per trial."""

    agent_turns: list[int]
    asked: dict[int, list[tuple[str, tuple[str, ...], bool]]]  # turn -> (question, topics, unnecessary)
    required: list[tuple[int, str, bool]]  # (item index, dimension, missed)
    adds: list[tuple[int, str, bool]]  # successful add_to_cart: (turn, product, premature)


def stated(traj: TrialRecord, k: int, topic: str, turn: int) -> bool:
    """Whether the customer had given ``topic`` for goal item ``k`` by message ``turn``: the item is
    revealed and its hint is not withheld, or a structured intent for the item states it. Without
    any intent for the item (free-form simulators), quantity counts as stated on reveal unless
    withheld."""
    g = traj.scenario.items[k]
    ref = f"item{k}"
    intents = [it for t in traj.turns[: turn + 1] for it in t.user.intent if it.get("ref") == ref]
    if any(it.get(topic) is not None for it in intents):
        return True
    if traj.revealed_at.get(g.product_id, 10**9) > turn or topic in g.withheld:
        return False
    if topic == "quantity":
        return not intents
    return topic in g.hints


def _open(traj: TrialRecord, products: Mapping[str, ShopProduct], k: int, topic: str, turn: int) -> bool:
    """Whether ``topic`` is still an open, relevant question for goal item ``k`` at message ``turn``
    (size and colour matter only for a product sold in several)."""
    p = products.get(traj.scenario.items[k].product_id)
    relevant = _has_dim(p, topic) if topic in ("size", "colour") else True
    return relevant and not stated(traj, k, topic, turn)


def _pid(e: ToolEvent) -> str:
    """The product a cart write touched (the result's canonical id, else the argument)."""
    return str(e.result.get("product_id", e.call.arguments.get("product_id")))


def trial_facts(traj: TrialRecord, products: Mapping[str, ShopProduct]) -> Facts:
    items = traj.scenario.items
    events = traj.events
    agent_turns = [t.index for t in traj.turns if (t.agent_message or "").strip() or t.events]
    # clarification questions and whether each asks for what the customer already gave
    asked: dict[int, list[tuple[str, tuple[str, ...], bool]]] = {}
    for t in traj.turns:
        qs = questions(t.agent_message)
        if not qs:
            continue
        cands = [k for k, g in enumerate(items) if g.product_id in still_needed(traj, t.index)]
        asked[t.index] = [
            (q, tp, not any(_open(traj, products, k, x, t.index) for x in tp for k in cands)) for q, tp in qs
        ]
    # required clarifications: a revealed item whose size/colour hint is withheld, the product having
    # that option among its variants; missed when no question about it came before the first add
    added = [(e.turn, _pid(e)) for e in events if e.call.name == "add_to_cart" and e.ok]
    first_add: dict[str, int] = {}
    for turn, pid in added:
        first_add.setdefault(pid, turn)
    last = traj.turns[-1].index if traj.turns else 0
    required = []
    for k, g in enumerate(items):
        r = traj.revealed_at.get(g.product_id)
        if r is None:
            continue
        for dim in ("size", "colour"):
            if dim not in g.withheld or not _has_dim(products.get(g.product_id), dim):
                continue
            until = first_add.get(g.product_id)
            window = range(r, until) if until is not None else range(r, last + 1)
            did_ask = any(dim in tp for i in window for _, tp, _ in asked.get(i, []))
            volunteered = stated(traj, k, dim, until if until is not None else last)
            required.append((k, dim, not did_ask and not volunteered))
    # adds, premature when the customer has not asked to add that product in this or an earlier turn
    ask: set[str] = set()
    ask_by_turn: dict[int, set[str]] = {}
    for t in traj.turns:
        ask |= set(t.directive.ask_add)
        ask_by_turn[t.index] = set(ask)
    adds = [(turn, pid, pid not in ask_by_turn.get(turn, set())) for turn, pid in added]
    return Facts(agent_turns, asked, required, adds)


def typed_rates(traj: TrialRecord, products: Mapping[str, ShopProduct], facts: Facts | None = None) -> dict:
    """false_add_to_cart, unnecessary_clarification_rate, missed_clarification_rate (None on a zero
    denominator)."""
    f = facts or trial_facts(traj, products)
    qs = [u for lst in f.asked.values() for _, _, u in lst]
    return {
        "false_add_to_cart": sum(p for *_, p in f.adds) / len(f.adds) if f.adds else None,
        "unnecessary_clarification_rate": sum(qs) / len(qs) if qs else None,
        "missed_clarification_rate": sum(m for *_, m in f.required) / len(f.required) if f.required else None,
    }


def requested(traj: TrialRecord, turn: int) -> tuple[set[str], dict[str, float]]:
    """Categories the customer has requested by message ``turn`` (find intents and revealed goal
    items) and the latest stated budget per category."""
    items = traj.scenario.items
    cats = {g.category for g in items if traj.revealed_at.get(g.product_id, 10**9) <= turn}
    budgets: dict[str, float] = {}
    for g in items:
        if (
            traj.revealed_at.get(g.product_id, 10**9) <= turn
            and "budget" in g.hints
            and "budget" not in g.withheld
        ):
            b = _number(g.hints["budget"])
            if b is not None:
                budgets[g.category] = b
    for t in traj.turns[: turn + 1]:
        for it in t.user.intent:
            if it.get("action") != "find":
                continue
            k = _item_index(it.get("ref"), len(items))
            cat = it.get("category") or (items[k].category if k is not None else None)
            if cat:
                cats.add(cat)
                if it.get("budget") is not None:
                    budgets[cat] = float(it["budget"])
    return cats, budgets


def _toward(before: int, after: int, req: int) -> bool:
    return after != before and min(before, req) <= after <= max(before, req)


def deterministic_rubric(name: str, traj: TrialRecord, products: Mapping[str, ShopProduct]) -> float | None:
    """The DeterministicJudge's score for one rubric (definitions in the module docstring)."""
    f = trial_facts(traj, products)
    items, target, events = traj.scenario.items, traj.scenario.target, traj.events
    if name == "add_to_cart_behavior":
        r = typed_rates(traj, products, f)["false_add_to_cart"]
        return None if r is None else 1.0 - r
    if name == "clarification":
        asked = [u for lst in f.asked.values() for _, _, u in lst]
        den = len(asked) + len(f.required)
        return None if den == 0 else 1.0 - (sum(asked) + sum(m for *_, m in f.required)) / den
    if name == "assistant_coherence":
        if not f.agent_turns:
            return None
        bad = 0
        for i in f.agent_turns:
            dropped = _dropped(traj, i)
            writes = {str(e.call.arguments.get("product_id")) for e in traj.turns[i].events
                      if e.call.name in ("add_to_cart", "update_cart_quantity") and e.ok}  # fmt: skip
            reask = any(u for _, _, u in f.asked.get(i, []))
            bad += reask or bool(writes & {items[k].product_id for k in dropped})
        return 1.0 - bad / len(f.agent_turns)
    if name == "intent_understanding":
        hits = total = 0
        for e in events:
            adds = e.call.name == "add_to_cart" or (
                e.call.name == "update_cart_quantity" and (e.call.arguments.get("quantity") or 0) > 0
            )
            if adds:
                p = products.get(str(e.call.arguments.get("product_id")))
                total += 1
                hits += p is not None and p.category in requested(traj, e.turn)[0]
        for i in f.agent_turns:
            shown = presented_products(traj, i, products)
            if shown:
                total += 1
                hits += products[shown[0]].category in requested(traj, i)[0]
        return hits / total if total else None
    if name == "recommendation_usefulness":
        hits = total = 0
        for i in f.agent_turns:
            cats, budgets = requested(traj, i)
            for pid in presented_products(traj, i, products):
                p = products[pid]
                total += 1
                hits += p.category in cats and p.price <= budgets.get(p.category, float("inf")) + 0.01
        return hits / total if total else None
    if name == "response_helpful":
        if not f.agent_turns:
            return None
        forward = 0
        phantom = {c.turn for c in extract_claims_from_prose(traj, products)
                   if c.type == "action" and check_action(c, traj).violation}  # fmt: skip
        for i in f.agent_turns:
            t = traj.turns[i]
            if i in phantom:  # announcing a cart change that did not happen misleads; it moves nothing
                continue
            moved = False
            base = sum(len(x.events) for x in traj.turns[:i])
            for j, e in enumerate(t.events):
                pid, after = e.result.get("product_id"), e.result.get("quantity")
                if e.call.name in ("add_to_cart", "update_cart_quantity", "remove_from_cart") and e.ok \
                        and pid in target and after is not None:  # fmt: skip
                    before = cart_before(events, base + j).get(pid, 0)
                    moved = moved or _toward(before, int(after), target[pid])
            shown = set(presented_products(traj, i, products))
            moved = moved or bool(shown & still_needed(traj, i))
            explore = {items[k].product_id for it in t.user.intent if it.get("action") == "explore"
                       for k in [_item_index(it.get("ref"), len(items))] if k is not None}  # fmt: skip
            moved = moved or bool(shown & explore)
            if any(it.get("action") == "wrap_up" for it in t.user.intent):
                moved = (
                    moved
                    or bool(_SUMMARY.search(t.agent_message or ""))
                    or any(e.call.name == "view_cart" for e in t.events)
                )
            moved = moved or any(not u for _, _, u in f.asked.get(i, []))
            forward += moved
        return forward / len(f.agent_turns)
    raise ValueError(f"unknown rubric {name!r}; known: {', '.join(RUBRICS)}")


def _dropped(traj: TrialRecord, turn: int) -> set[int]:
    """Goal items the customer deferred by message ``turn`` and has not come back to since."""
    state: dict[int, bool] = {}
    n = len(traj.scenario.items)
    for t in traj.turns[: turn + 1]:
        for it in t.user.intent:
            k = _item_index(it.get("ref"), n)
            if k is None:
                continue
            if it.get("action") == "defer":
                state[k] = True
            elif it.get("action") in ("return", "find", "add", "explore"):
                state[k] = False
    return {k for k, d in state.items() if d}
