"""Tool-call correctness, ``tool_call_custom`` (seed 002 §4.3 and App. E).

"Let E be that prediction and A the calls actually issued. We group both by tool name and first apply the
cheapest checks. A pair matches with no model call when its arguments are an exact JSON match or the tool
takes no arguments. Only same-name pairs with differing arguments are queued for the judge, along with
unmatched actual calls, so the judge decides whether a call was justified rather than spurious. All
queued questions across the dialog are answered in one batched call, and assignment is greedy and
order-stable so a rerun reproduces it. The tool category determines the penalty for surviving extras.
[...] Writing w_extra for the summed penalty, the per-turn score is s_turn = matched / (|E| + w_extra), so
a miss shrinks the numerator and an unjustified extra inflates the denominator. Turns with neither
expected nor actual calls are skipped." (§4.3)

"The k-th unjustified extra past a category's free allowance costs initial + (k-1) * increase, so per-extra
cost grows linearly and the cumulative penalty grows quadratically." (App. E; the schedule is
``registry.PENALTIES``, counted per category per turn.)

The procedure per turn (E = ``turn.user.expected_calls``, A = the turn's executed calls):

1. per tool name, each expected call in order takes the first unmatched actual call with the same
   arguments (canonical JSON), or any same-name actual call when the tool takes no arguments: matched;
2. remaining same-name expected/actual calls are paired in order and queued as ``"pair"`` questions
   (True: the actual call fulfils the expected one, matched; False: the expected call is missed and the
   actual call becomes an unjustified extra);
3. remaining actual calls are queued as ``"extra"`` questions (True: justified, no penalty);
4. remaining expected calls are misses.

All questions of a trial go to the judge as one ``toolcalls`` question (none when nothing is queued).

Our choices where the paper is silent: a turn with actual calls but no expected calls scores
0 / w_extra, which is 0 unless every extra was justified (w_extra = 0), where we define s_turn = 1.0;
the customer's closing message that the agent never answered is skipped; the trial score is the mean of
the scored turns' s_turn (``None`` when no turn is scored).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...judges.spec import ParseFailure
from ..registry import PENALTIES, TOOL_SPECS, category_of
from ..types import ShopProduct, ToolCall, ToolEvent, TrialRecord

NO_ARGUMENT_TOOLS = frozenset(
    s["function"]["name"] for s in TOOL_SPECS if not s["function"]["parameters"].get("properties")
)


def _args(c: ToolCall) -> str:
    return json.dumps(c.arguments, sort_keys=True)


@dataclass
class TurnRecord:
    """What one turn contributes: the expected chain, the executed calls and the customer message."""

    turn: int
    expected: list[ToolCall]
    events: list[ToolEvent]
    customer_message: str = ""


@dataclass
class TurnPlan:
    """The judge-free part of one turn's matching; indices point into ``expected``/``events``."""

    record: TurnRecord
    exact: list[tuple[int, int]] = field(default_factory=list)  # (expected, actual)
    pairs: list[tuple[int, int, int]] = field(default_factory=list)  # (qid, expected, actual)
    extras: list[tuple[int, int]] = field(default_factory=list)  # (qid, actual)
    missed: list[int] = field(default_factory=list)  # expected calls with no same-name actual left


def plan_turn(rec: TurnRecord, next_qid: int = 0) -> tuple[TurnPlan, list[dict]]:
    """Steps 1-4 for one turn; returns the plan and its queued questions (qids from ``next_qid``)."""
    E, A = rec.expected, [e.call for e in rec.events]
    plan = TurnPlan(rec)
    names = list(dict.fromkeys([c.name for c in E] + [c.name for c in A]))
    pairs: list[tuple[int, int]] = []
    left_actual: list[int] = []
    for name in names:
        e_idx = [i for i, c in enumerate(E) if c.name == name]
        a_idx = [j for j, c in enumerate(A) if c.name == name]
        free = list(a_idx)
        unmatched_e = []
        for i in e_idx:
            hit = next((j for j in free if name in NO_ARGUMENT_TOOLS or _args(A[j]) == _args(E[i])), None)
            if hit is None:
                unmatched_e.append(i)
            else:
                free.remove(hit)
                plan.exact.append((i, hit))
        pairs += list(zip(unmatched_e, free, strict=False))
        plan.missed += unmatched_e[len(free) :]
        left_actual += free[len(unmatched_e) :]
    plan.exact.sort(key=lambda x: x[1])
    plan.missed.sort()
    questions: list[dict] = []
    qid = next_qid
    for i, j in sorted(pairs, key=lambda x: x[1]):
        plan.pairs.append((qid, i, j))
        questions.append(_question(qid, rec, "pair", E[i], rec.events[j]))
        qid += 1
    for j in sorted(left_actual):
        plan.extras.append((qid, j))
        questions.append(_question(qid, rec, "extra", None, rec.events[j]))
        qid += 1
    return plan, questions


def _question(qid: int, rec: TurnRecord, kind: str, expected: ToolCall | None, ev: ToolEvent) -> dict:
    return {
        "qid": qid,
        "turn": rec.turn,
        "kind": kind,
        "expected": expected.to_dict() if expected is not None else None,
        "actual": ev.call.to_dict(),
        "result": ev.result,
        "customer_message": rec.customer_message,
    }


def score_turn(plan: TurnPlan, answers: Mapping[int, bool]) -> dict:
    """s_turn and its parts, given the judge's answers by qid."""
    rec = plan.record
    n_e = len(rec.expected)
    pair_ok = [(q, i, j) for q, i, j in plan.pairs if answers[q]]
    pair_no = [(q, i, j) for q, i, j in plan.pairs if not answers[q]]
    extra_ok = [j for q, j in plan.extras if answers[q]]
    unjustified = sorted([j for q, j in plan.extras if not answers[q]] + [j for _, _, j in pair_no])
    by_cat: dict[str, int] = {}
    for j in unjustified:
        c = category_of(rec.events[j].call.name)
        by_cat[c] = by_cat.get(c, 0) + 1
    penalty = {c: PENALTIES[c].cost(n) for c, n in by_cat.items()}
    w_extra = sum(penalty.values())
    matched = len(plan.exact) + len(pair_ok)
    den = n_e + w_extra
    return {
        "turn": rec.turn,
        "n_expected": n_e,
        "n_actual": len(rec.events),
        "exact": len(plan.exact),
        "pairs_matched": len(pair_ok),
        "pairs_rejected": len(pair_no),
        "extras_justified": len(extra_ok),
        "unjustified": len(unjustified),
        "unjustified_by_category": by_cat,
        "penalty_by_category": penalty,
        "missed": len(plan.missed) + len(pair_no),
        "matched": matched,
        "w_extra": w_extra,
        "s_turn": matched / den if den > 0 else 1.0,
    }


@dataclass
class ToolCallScore:
    """``score`` (tool_call_custom) with the per-turn details, the queued questions and the answers."""

    score: float | None
    turns: list[dict]
    questions: list[dict]
    answers: list[bool]
    failure: str | None = None  # the judge could not answer (its ParseFailure's reason): score is None


def turn_records(traj: TrialRecord) -> list[TurnRecord]:
    """The scorable turns: those with expected or actual calls, minus an unanswered closing message."""
    out = []
    for k, t in enumerate(traj.turns):
        unanswered = (
            k == len(traj.turns) - 1
            and t.user.terminate
            and not t.events
            and not t.agent_message
            and t.agent_error is None
        )
        if unanswered or not (t.user.expected_calls or t.events):
            continue
        out.append(TurnRecord(t.index, list(t.user.expected_calls), list(t.events), t.user.message))
    return out


def score_records(
    records: Sequence[TurnRecord],
    traj: TrialRecord,
    products: Mapping[str, ShopProduct],
    judge: Any,
) -> ToolCallScore:
    """Plan every turn, ask the judge once for all queued questions, and score."""
    plans, questions = [], []
    for rec in records:
        plan, qs = plan_turn(rec, next_qid=len(questions))
        plans.append(plan)
        questions += qs
    answers: list[bool] = []
    if questions:
        if judge is None:
            raise ValueError(
                f"trial {traj.trial_id}: {len(questions)} tool-call question(s) need a judge; pass judge="
                "(e.g. shopbench.judges.shop.reference.default_judge())"
            )
        from ...judges.shop.judge import ask, failure_reason

        asked = ask(judge, "toolcalls", traj, products, questions=questions)
        if isinstance(asked, ParseFailure):  # a malformed answer: the metric is missing, never coerced
            return ToolCallScore(score=None, turns=[], questions=questions, answers=[],
                                 failure=failure_reason(asked))  # fmt: skip
        raw = asked.value
        if len(raw) != len(questions):
            raise ValueError(
                f"judge {getattr(judge, 'name', judge)!r} answered {len(raw)} of {len(questions)} tool-call "
                f"questions for trial {traj.trial_id}; it must return one bool per question, in order"
            )
        answers = [bool(a) for a in raw]
    by_qid = {q["qid"]: a for q, a in zip(questions, answers, strict=True)}
    turns = [score_turn(p, by_qid) for p in plans]
    score = sum(t["s_turn"] for t in turns) / len(turns) if turns else None
    return ToolCallScore(score=score, turns=turns, questions=questions, answers=answers)


def tool_call_correctness(
    traj: TrialRecord, products: Mapping[str, ShopProduct], judge: Any
) -> ToolCallScore:
    """``tool_call_custom`` of one trial (one judge call at most)."""
    return score_records(turn_records(traj), traj, products, judge)
