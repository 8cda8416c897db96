"""The verification ablation (seed 002 §5.1, Table 2): what each retained-evidence condition can settle.

"We test four retained-evidence conditions on each completed trajectory. Final cart contains terminal
product quantities and the target comparison. Transcript contains the customer and assistant messages,
executed tool calls, and results, but excludes the hidden target and other environment state. State adds
the target cart, control catalog, and termination record, enabling state replay. Full simulator adds the
reveal schedule, per-turn expected tool calls, and the user simulator's frustration record. For ten
evaluation questions, Table 2 labels each answer as Rule, Model, Hybrid, or Infer. Rule uses fixed
verification, Model uses grounded output from the user simulator or judge, and Hybrid combines a
model-derived signal with a fixed comparison or reduction. Infer lacks the retained evidence required for
verification." (§5.1)

:func:`evidence_view` keeps only what a condition retains; each of the ten questions is a function over
a view that raises :class:`MissingEvidence` when a field it needs is absent, so :func:`ablation_table`
derives the labels by attempting every question on every view of real trajectories. Our reading of the
conditions: the *transcript* is what the agent saw (messages and the tool calls/results inside them); the
environment's structured tool log (turn, round, call, result), which state replay reads, belongs to the
*state* condition together with the target, catalog, termination record and final cart. Claim checks need
the catalog (titles in prose map to catalog rows), so they start at *state*. Questions needing a model
(claims, tool-call pairs/extras) rebuild a TrialRecord from the view's fields only and call
``judged_metrics`` / the judge on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from ..replay import replay_events
from ..types import (
    Directive,
    GoalItem,
    Scenario,
    ShopProduct,
    ToolCall,
    ToolEvent,
    TrialRecord,
    Turn,
    UserReply,
)
from . import battery
from .outcomes import exact_cart, exactly_satisfied, precision, recall
from .toolcalls import score_records, turn_records
from .tooluse import tag_calls

CONDITIONS = ("final_cart", "transcript", "state", "full")


class MissingEvidence(LookupError):
    """The view lacks a field the question needs: the answer can only be inferred."""


def _transcript(traj: TrialRecord) -> list[dict]:
    return [
        {
            "turn": t.index,
            "customer": t.user.message,
            "assistant": t.agent_message,
            "tool_calls": [
                {"name": e.call.name, "arguments": e.call.arguments, "result": e.result} for e in t.events
            ],
        }
        for t in traj.turns
    ]


def evidence_view(
    traj: TrialRecord, condition: str, products: Mapping[str, ShopProduct] | None = None
) -> dict:
    """The evidence one condition retains (plus trial metadata: trial_id, agent, kind, seed).

    - ``final_cart``: ``final_cart`` (terminal quantities) and ``target`` (for the comparison);
    - ``transcript``: ``system_prompt`` and ``transcript`` (per turn: customer, assistant, tool calls with
      results) — no target, no environment state;
    - ``state``: transcript + ``tool_log``, ``target``, ``catalog``, ``termination``, ``final_cart``;
    - ``full``: state + ``revealed_at``, ``reveal_schedule``, ``expected_calls``, ``frustration``.
    """
    if condition not in CONDITIONS:
        raise ValueError(f"unknown evidence condition {condition!r}; choose one of {CONDITIONS}")
    sc = traj.scenario
    view: dict[str, Any] = {
        "condition": condition,
        "meta": {"trial_id": traj.trial_id, "agent": traj.agent, "kind": sc.kind, "seed": sc.seed},
    }
    if condition == "final_cart":
        view.update(final_cart=dict(traj.final_cart), target=dict(sc.target))
        return view
    view.update(system_prompt=traj.system_prompt, transcript=_transcript(traj))
    if condition in ("state", "full"):
        if products is None:
            raise ValueError(f"evidence_view(..., {condition!r}) needs the control catalog: pass products=")
        view.update(
            tool_log=[e.to_dict() for e in traj.events],
            target=dict(sc.target),
            catalog=products,
            termination=traj.termination,
            final_cart=dict(traj.final_cart),
        )
    if condition == "full":
        view.update(
            revealed_at=dict(traj.revealed_at),
            reveal_schedule={
                "style": sc.style,
                "waves": [list(w) for w in sc.waves],
                "order": list(sc.order),
                "beats": [asdict(b) for b in sc.beats],
                "directives": [asdict(t.directive) for t in traj.turns],
            },
            expected_calls={t.index: [c.to_dict() for c in t.user.expected_calls] for t in traj.turns},
            frustration={t.index: t.user.frustration for t in traj.turns},
        )
    return view


def _need(view: Mapping, *fields: str) -> None:
    missing = [f for f in fields if f not in view]
    if missing:
        raise MissingEvidence(f"condition {view.get('condition')!r} lacks {', '.join(missing)}")


def _events(view: Mapping) -> list[ToolEvent]:
    return [ToolEvent.from_dict(e) for e in view["tool_log"]]


def _items(view: Mapping) -> tuple[GoalItem, ...]:
    cat = view.get("catalog", {})
    return tuple(
        GoalItem(p, int(q), cat[p].category if p in cat else "") for p, q in view.get("target", {}).items()
    )


def rebuild_trajectory(view: Mapping) -> TrialRecord:
    """A TrialRecord holding only the view's evidence (absent fields left empty), for the model-based
    checks whose API takes a trajectory."""
    meta = view["meta"]
    sched = view.get("reveal_schedule", {})
    events = _events(view) if "tool_log" in view else None
    turns = []
    rows = view.get("transcript", [])
    for k, row in enumerate(rows):
        i = row["turn"]
        evs = (
            [e for e in events if e.turn == i]
            if events is not None
            else [ToolEvent(i, 0, _call(c), c["result"]) for c in row["tool_calls"]]
        )
        closing = k == len(rows) - 1 and not row["assistant"] and not evs
        directives = {d["message_index"]: d for d in sched.get("directives", [])}
        d = dict(directives.get(i, {"message_index": i, "reveal": [], "ask_add": []}))
        d.pop("beats", None)
        user = UserReply(
            rationale="",
            frustration=int(view.get("frustration", {}).get(i, 1)),
            message=row["customer"],
            terminate=closing,
            termination_reason=None,
            expected_calls=[_call(c) for c in view.get("expected_calls", {}).get(i, [])],
        )
        turns.append(
            Turn(index=i, directive=Directive(**d), user=user, agent_message=row["assistant"], events=evs)
        )
    sc = Scenario(
        seed=int(meta["seed"]), kind=meta["kind"], difficulty=0, tier="direct", breadth=0, items=_items(view),
        persona={}, max_turns=len(turns), style=sched.get("style", "batch"),
    )  # fmt: skip
    return TrialRecord(
        scenario=sc,
        agent=meta["agent"],
        user="",
        system_prompt=view.get("system_prompt", ""),
        turns=turns,
        termination=view.get("termination", ""),
        final_cart=dict(view.get("final_cart", {})),
        revealed_at=dict(view.get("revealed_at", {})),
    )


def _call(d: Mapping) -> ToolCall:
    return ToolCall(d["name"], dict(d.get("arguments", {})), d.get("call_id", ""))


# --- the ten questions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    key: str
    label: str
    method: str  # Rule | Model | Hybrid, when the evidence is there
    fn: Callable[[Mapping, Any], Any]


class _Ctx:
    """Per-view cache of the judged metrics (one judged pass per view) and the judge."""

    def __init__(self, judge: Any):
        self.judge = judge
        self._judged: dict[int, dict] = {}

    def judged(self, view: Mapping) -> dict:
        key = id(view)
        if key not in self._judged:
            judged_metrics, _, _ = battery._judged_functions()
            # a judge's ParseFailure leaves its metric None (errors recorded, not raised): no answer stops a sweep
            self._judged[key] = judged_metrics(
                rebuild_trajectory(view), view["catalog"], self.judge, errors={}
            )
        return self._judged[key]


def q_exact(view, ctx):
    _need(view, "final_cart", "target")
    return exact_cart(view["final_cart"], view["target"])


def q_precision_recall(view, ctx):
    _need(view, "final_cart", "target")
    return {
        "precision": precision(view["final_cart"], view["target"]),
        "recall": recall(view["final_cart"], view["target"]),
    }


def q_progress(view, ctx):
    _need(view, "tool_log", "target")
    samples = [exactly_satisfied(m.cart, view["target"]) for m in replay_events(_events(view))]
    return max(samples, default=0.0) if view["target"] else None


def q_actions(view, ctx):
    _need(view, "tool_log", "transcript", "catalog")
    executed = [
        (m.turn, m.tool, m.product_id, m.cart.get(m.product_id, 0)) for m in replay_events(_events(view))
    ]
    return {"executed": executed, "phantom_action_rate": ctx.judged(view)["phantom_action_rate"]}


def q_numeric(view, ctx):
    _need(view, "tool_log", "transcript", "catalog")
    return ctx.judged(view)["numeric_hallucination_rate"]


def q_attribute(view, ctx):
    _need(view, "transcript", "catalog")
    return ctx.judged(view)["attribute_hallucination_rate"]


def q_termination(view, ctx):
    _need(view, "termination")
    return view["termination"]


def q_tool_calls(view, ctx):
    _need(view, "expected_calls", "tool_log", "transcript", "catalog")
    traj = rebuild_trajectory(view)
    return score_records(turn_records(traj), traj, view["catalog"], ctx.judge).score


def q_search(view, ctx):
    _need(view, "tool_log", "target", "catalog", "revealed_at")
    return tag_calls(_events(view), _items(view), view["revealed_at"]).rates["bad_search_rate"]


def q_frustration(view, ctx):
    _need(view, "frustration")
    r = list(view["frustration"].values())
    return (max(r) - 1) / 4 if r else None


QUESTIONS: tuple[Question, ...] = (
    Question("exact_cart_success", "Exact-cart success", "Rule", q_exact),
    Question("cart_precision_recall", "Cart precision / recall", "Rule", q_precision_recall),
    Question("goal_progress", "Goal progress", "Rule", q_progress),
    Question("executed_actions", "Executed cart actions / phantom actions", "Rule", q_actions),
    Question("numeric_claims", "Numeric claims", "Rule", q_numeric),
    Question("attribute_claims", "Attribute claims", "Model", q_attribute),
    Question("termination_reason", "Termination reason", "Rule", q_termination),
    Question("tool_call_appropriateness", "Tool-call appropriateness", "Hybrid", q_tool_calls),
    Question("search_success", "Search success", "Rule", q_search),
    Question("user_frustration", "User frustration", "Model", q_frustration),
)


def attempt(view: Mapping, question: Question, ctx: Any) -> tuple[str, Any]:
    """(label, answer): the question's method and its answer, or ("Infer", None) on missing evidence."""
    try:
        return question.method, question.fn(view, ctx)
    except MissingEvidence:
        return "Infer", None


def ablation_answers(
    traj: TrialRecord, products: Mapping[str, ShopProduct], judge: Any = None
) -> dict[str, dict[str, tuple[str, Any]]]:
    """question key -> condition -> (label, answer) for one trajectory."""
    ctx = _Ctx(judge if judge is not None else battery._resolve_judge(True))
    views = {c: evidence_view(traj, c, products) for c in CONDITIONS}
    return {q.key: {c: attempt(views[c], q, ctx) for c in CONDITIONS} for q in QUESTIONS}


def ablation_table(
    trajs: Sequence[TrialRecord], products: Mapping[str, ShopProduct], judge: Any = None
) -> pd.DataFrame:
    """Table 2: one row per question, a label column per condition ("Rule"/"Model"/"Hybrid" when the
    question was answered on at least one trajectory, else "Infer") and ``n_<condition>``, the number of
    trajectories where the answer was computed. Shopping trials only (refusal probes have no target)."""
    trajs = [t for t in trajs if t.scenario.kind in battery.SHOPPING]
    if not trajs:
        raise ValueError("ablation_table needs at least one general or grocery trajectory")
    ctx_judge = judge if judge is not None else battery._resolve_judge(True)
    labels: dict[tuple[str, str], list[str]] = {}
    for t in trajs:
        for qk, per in ablation_answers(t, products, ctx_judge).items():
            for c, (lab, _) in per.items():
                labels.setdefault((qk, c), []).append(lab)
    rows = []
    for q in QUESTIONS:
        row: dict[str, Any] = {"question": q.label}
        for c in CONDITIONS:
            labs = labels[(q.key, c)]
            n = sum(lab != "Infer" for lab in labs)
            row[c] = q.method if n else "Infer"
            row[f"n_{c}"] = n
        rows.append(row)
    cols = [*CONDITIONS, *(f"n_{c}" for c in CONDITIONS)]
    return pd.DataFrame(rows).set_index("question")[cols]
