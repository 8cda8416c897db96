"""The shop verifier's offline reference judge (seed 002 §4; issue 27 "One house").

:class:`DeterministicJudge` answers the same registered questions (:data:`.judge.SPECS`) as the
model judge :class:`~.judge.LLMJudge`, by documented rules over the record and the scripted agents'
prose conventions: tool-call decisions (:func:`deterministic_tool_call_decision`), claim extraction
and attribute labels (:mod:`.claims`), the six rubrics (:mod:`.rubrics`) and the refusal flags
(:mod:`.refusal`). It is the verifier's default judge (:func:`default_judge`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...shopsim.registry import category_of
from ...shopsim.replay import cart_after_turn, cart_before
from ...shopsim.types import ShopProduct, TrialRecord
from ..spec import Judgment, Outcome
from .claims import (
    content_tokens,
    deterministic_attribute_label,
    extract_claims_from_prose,
    search_hits,
    still_needed,
)
from .judge import REFUSAL_JUDGED, ShopItem, _empty, _item_id, _nothing
from .refusal import deterministic_refusal
from .rubrics import deterministic_rubric


def _as_int(x: Any) -> int | None:
    try:
        return int(x)
    except (TypeError, ValueError):
        return None


def _locate(traj: TrialRecord, q: dict, used: set[int]) -> int | None:
    """Index in the tool log of the event a question's actual call is (first unused match)."""
    actual = q.get("actual") or {}
    fallback = None
    for i, e in enumerate(traj.events):
        if i in used or e.turn != q.get("turn") or e.call.name != actual.get("name"):
            continue
        if e.call.arguments != (actual.get("arguments") or {}):
            continue
        if actual.get("call_id") and e.call.call_id and e.call.call_id != actual["call_id"]:
            continue
        if "result" not in q or e.result == q["result"]:
            used.add(i)
            return i
        fallback = i if fallback is None else fallback
    if fallback is not None:
        used.add(fallback)
    return fallback


def deterministic_tool_call_decision(
    traj: TrialRecord, q: dict, products: Mapping[str, ShopProduct], used: set[int]
) -> bool:
    """One queued question, decided by rule.

    ``pair``: justified when the key arguments agree: ``product_id`` for product tools (add_to_cart
    also needs quantity and, when the expectation names one, the variant); a search when its query
    shares at least half of the expected query's content tokens or its result holds a still-needed
    target. ``extra``: a read-only, search or other call is justified when it concerns a revealed
    target or its result holds one; a cart write only when it moves a target toward (not past) its
    required quantity.
    """
    actual = q.get("actual") or {}
    name = actual.get("name", "")
    args = actual.get("arguments") or {}
    turn = int(q.get("turn", 0))
    result = q.get("result") or {}
    idx = _locate(traj, q, used)
    cart = (
        cart_before(traj.events, idx)
        if idx is not None
        else (cart_after_turn(traj, turn - 1) if turn else {})
    )
    target = traj.scenario.target
    revealed = {p for p in target if traj.revealed_at.get(p, 10**9) <= turn}
    hits = set(search_hits(result) or [])
    if q.get("kind") == "pair":
        eargs = (q.get("expected") or {}).get("arguments") or {}
        if name == "search_products":
            want = set(content_tokens(eargs.get("query")))
            have = set(content_tokens(args.get("query")))
            if not want or 2 * len(want & have) >= len(want):
                return True
            return bool(hits & still_needed(traj, turn, cart))
        if "product_id" in eargs or "product_id" in args:
            if eargs.get("product_id") != args.get("product_id"):
                return False
            if name == "add_to_cart":
                qty_ok = _as_int(eargs.get("quantity", 1)) == _as_int(args.get("quantity", 1))
                var_ok = eargs.get("variant_id") in (None, args.get("variant_id"))
                return qty_ok and var_ok
            return True
        return all(args.get(k) == v for k, v in eargs.items())
    if q.get("kind") != "extra":
        raise ValueError(
            f"tool-call question {q.get('qid')}: kind {q.get('kind')!r} is not 'pair' or 'extra'"
        )
    if category_of(name) == "cart_write":
        pid = result.get("product_id", args.get("product_id"))
        after = _as_int(result.get("quantity"))
        if "error" in result or pid not in target or after is None:
            return False
        before, req = cart.get(pid, 0), target[pid]
        return after != before and min(before, req) <= after <= max(before, req)
    return args.get("product_id") in revealed or bool(hits & revealed)


class DeterministicJudge:
    """The offline reference judge: documented rules over the record answering the same registered
    questions (:data:`SPECS`) as :class:`LLMJudge`, as a :class:`shopbench.judges.Judge` over
    :class:`ShopItem` (``local/checks`` is PACE's). Same inputs, same answers; a rule never fails to
    answer, so every outcome is a :class:`~shopbench.judges.Judgment`. Known-answer where the
    scripted agents' prose conventions are read (module docstrings of :mod:`.claims`,
    :mod:`.rubrics`, :mod:`.refusal`)."""

    name = "deterministic"

    def judge(self, items: Sequence[ShopItem]) -> list[Outcome]:
        return [
            Judgment(self.name, _item_id(it), _nothing(it) if _empty(it) else self.answer(it)) for it in items
        ]

    @staticmethod
    def answer(item: ShopItem) -> Any:
        """The rule answer of one question (the same type ``SPECS[item.question].interpret`` returns)."""
        q, traj, products = item.question, item.traj, item.products
        if q == "attributes":
            return [deterministic_attribute_label(c, products)[0] for c in item.claims]
        assert traj is not None, f"question {q!r} reads a trial"
        if q == "toolcalls":
            used: set[int] = set()
            return [deterministic_tool_call_decision(traj, tq, products, used) for tq in item.questions]
        if q == "claims":
            return extract_claims_from_prose(traj, products)
        if q == "refusal":
            full = deterministic_refusal(traj, products)
            return {k: full[k] for k in REFUSAL_JUDGED}
        return deterministic_rubric(q, traj, products)


def default_judge() -> DeterministicJudge:
    return DeterministicJudge()
