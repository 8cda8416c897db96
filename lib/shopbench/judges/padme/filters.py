"""Filter judges J_k of the PADMÉ cascade (seed 003 §3.1 "Filtering", App. C.2, H.4).

"Each generated trajectory pair p = (x⁻, x⁺) is sequentially evaluated by a cascade of K SLM
preference judges, J_1, …, J_K (Appendix H.4). Given a pair p in randomized order (Appendix C.2)
and its associated criterion c, each judge returns its own preference over the pair. Its verdict
J_k(p, c) ∈ {0, 1} records whether that preference agrees with the constructed synthetic label"
(§3.1). "The filter judge prompt J_k(p, c) is identical for J_1 and J_2, differing only in the
underlying model deployment. The {prompt} slot contains shared context (tool definitions, knowledge
bases, and domain policies), while {response_a} and {response_b} contain the rendered trajectory
pair in randomized slot order. Filter judges output a forced choice" (H.4). Judges "remain strictly
blinded to steering metadata" (App. B).

Every filter judge is a :class:`shopbench.judges.Judge`: ``judge(items)`` for a whole stage at
once, ``items`` being ``(pair_id, x_slot1, x_slot2, criterion)`` and the outcome per item a
:class:`~shopbench.judges.Judgment` whose value is the slot it prefers (1 or 2), or a
:class:`~shopbench.judges.ParseFailure` with its reason — a parse failure is a veto
(:func:`vote_fields` gives the cascade its ``(choice, parse_error, raw)``). Which slot holds x⁺ is
the cascade's business (``Vote.better_slot``).

* :data:`FILTER_JUDGE` (registered as ``padme_filter``) is the H.4 judge definition: the prompt
  ``prompts/padme_filter_judge.txt``, a JSON schema with ``answer`` ∈ {"A", "B"} so
  grammar-constrained local models can answer. :class:`LLMFilterJudge` asks it of a backbone,
  all items of a stage in ONE ``gateway.run`` (concurrent). A transport error (not a model answer)
  raises :class:`FilterCallError`: the run stops, finished pairs are stored, rerun to resume.
* :class:`HeuristicFilterJudge` — offline, plain Python: prefers the trajectory with the higher
  :func:`~shopbench.padme.heuristics.criterion_score`; equal scores go to slot 1 (a realistic
  position bias the Table 9 audit can see); ``noise`` flips the choice with a seeded probability.

The judges see the trajectories only as rendered by :func:`render_trajectory` (the one renderer,
:func:`shopbench.judges.render`, style ``"pair"``: user, assistant, tool calls and results) and
the shared context of :func:`shared_context` (the system prompt with the H.3 ``<behaviour>``
block removed): never level, steering or reward.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from shopbench.judges.registry import judge
from shopbench.judges.render import render, text_of
from shopbench.judges.spec import Invalid, JudgeSpec, Judgment, ModelJudge, Outcome, ParseFailure
from shopbench.padme.choices import MAX_TOOL_CHARS
from shopbench.padme.heuristics import criterion_score
from shopbench.padme.types import Criterion, Rollout

__all__ = [
    "FILTER_JUDGE", "FILTER_SCHEMA", "FilterCallError", "FilterSpec", "HeuristicFilterJudge", "JudgeItem",
    "LLMFilterJudge", "PROMPT_STEM", "FILTER_AUDIT_COLUMNS", "filter_pairs_anytime", "render_trajectory",
    "shared_context", "vote_fields",
]  # fmt: skip

PROMPT_STEM = "padme_filter_judge"
JudgeItem = tuple[str, Rollout, Rollout, Criterion]

FILTER_SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 1200},
        "answer": {"type": "string", "enum": ["A", "B"]},
    },
    "required": ["reasoning", "answer"],
    "additionalProperties": False,
}
_BEHAVIOUR = re.compile(r"<behaviou?r>.*?</behaviou?r>", re.S | re.I)


class FilterCallError(RuntimeError):
    """A filter judge's model call failed (transport, not a model answer)."""


def render_trajectory(rollout: Rollout, max_tool_chars: int = MAX_TOOL_CHARS) -> str:
    """The customer-visible trajectory as plain text (style ``"pair"``): user and assistant turns,
    the agent's tool calls with their arguments, and tool results (clipped to ``max_tool_chars``).
    System messages (agent prompt and steering) are left out."""
    return render(rollout, "pair", max_chars=max_tool_chars)


def shared_context(*rollouts: Rollout) -> str:
    """The {prompt} slot: the first rollout's system prompt with the steering wrapper (H.3
    ``<behaviour>…</behaviour>``, and any verbatim copy of a rollout's steering text) removed."""
    for r in rollouts:
        system = "\n\n".join(text_of(m.get("content")) for m in r.messages if m.get("role") == "system")
        if not system.strip():
            continue
        system = _BEHAVIOUR.sub("", system)
        for x in rollouts:
            if x.steering and x.steering.strip():
                system = system.replace(x.steering.strip(), "")
        return system.strip() or "(no shared context)"
    return "(no shared context)"


# ---- the H.4 judge -----------------------------------------------------------------------------
def pair_item_id(item: JudgeItem) -> str:
    pid, x1, x2, _ = item
    return f"{pid}|{x1.rollout_id}|{x2.rollout_id}"


@dataclass(frozen=True, kw_only=True)
class FilterSpec(JudgeSpec[JudgeItem, int]):
    """H.4: the pair in its slot order and the criterion → the preferred slot (1 = A, 2 = B)."""

    max_tool_chars: int = MAX_TOOL_CHARS

    def item_id(self, item: JudgeItem) -> str:
        return pair_item_id(item)

    def slots(self, item: JudgeItem) -> dict:
        _, x1, x2, criterion = item
        return {"criterion_name": criterion.name, "criterion_description": criterion.description,
                "prompt": shared_context(x1, x2), "response_a": render_trajectory(x1, self.max_tool_chars),
                "response_b": render_trajectory(x2, self.max_tool_chars)}  # fmt: skip

    def interpret(self, value: Any, item: JudgeItem) -> int:
        ans = value.get("answer") if isinstance(value, dict) else None
        if ans not in ("A", "B"):
            raise Invalid(f"answer {ans!r} is not 'A' or 'B'")
        return 1 if ans == "A" else 2


@judge
def padme_filter() -> FilterSpec:
    return FilterSpec(name="padme_filter", prompt=PROMPT_STEM, contract=FILTER_SCHEMA, schema_name="preference",
                      max_tokens=2048, source="seed 003 H.4")  # fmt: skip


FILTER_JUDGE = padme_filter()


class LLMFilterJudge(ModelJudge):
    """J_k as an LM: :data:`FILTER_JUDGE` asked of ``backbone``; ``name`` defaults to the backbone's
    name. A failed call raises :class:`FilterCallError` (finished pairs are stored; rerun to resume)."""

    def __init__(self, gateway, backbone, name: str | None = None, *, run_id: str | None = None,
                 max_tokens: int = 2048, temperature: float = 0.0, prompt: str | None = None,
                 max_tool_chars: int = MAX_TOOL_CHARS):  # fmt: skip
        name = name or getattr(backbone, "name", None) or str(backbone)
        spec = FILTER_JUDGE if max_tool_chars == FILTER_JUDGE.max_tool_chars else replace(
            FILTER_JUDGE, max_tool_chars=max_tool_chars)  # fmt: skip
        super().__init__(spec, gateway, backbone, run_id or f"padme-filter-{re.sub(r'[^A-Za-z0-9_.=-]+', '_', name)}",
                         name=name, params={"max_tokens": int(max_tokens), "temperature": float(temperature)},
                         template=prompt, desc=f"padme filter {name}")  # fmt: skip

    def judge(self, items: Sequence[JudgeItem]) -> list[Outcome]:
        out = super().judge(items)
        failed = [o for o in out if isinstance(o, ParseFailure) and o.call_error]
        if failed:
            raise FilterCallError(
                f"filter judge {self.name!r}: {len(failed)} of {len(out)} calls failed (first: item "
                f"{failed[0].item_id!r}: {failed[0].reason.removeprefix('call error: ')}). Finished pairs are "
                "stored; fix the backend and rerun the cascade to resume."
            )
        return out


def vote_fields(outcome: Outcome) -> tuple[int | None, str | None, str | None]:
    """``(choice, parse_error, raw)`` of a filter judge's outcome, as a :class:`~shopbench.padme.types.Vote`
    records it."""
    if isinstance(outcome, Judgment):
        return outcome.value, None, outcome.raw
    return None, outcome.reason, outcome.raw


# ---- the offline judge -------------------------------------------------------------------------
class HeuristicFilterJudge:
    """Prefers the slot with the higher heuristic score; ties go to slot 1; ``noise`` flips the
    choice with that probability, drawn from ``(seed, name, pair_id, slot order)`` so the decision
    does not depend on batching or on resuming."""

    def __init__(self, name: str, noise: float = 0.0, seed: int = 0):
        if not 0.0 <= float(noise) <= 1.0:
            raise ValueError(f"HeuristicFilterJudge {name!r}: noise must be in [0, 1], got {noise!r}")
        self.name, self.noise, self.seed = name, float(noise), int(seed)

    def judge(self, items: Sequence[JudgeItem]) -> list[Outcome]:
        out: list[Outcome] = []
        for pid, x1, x2, crit in items:
            s1, s2 = criterion_score(x1, crit), criterion_score(x2, crit)
            choice = 2 if s2 > s1 else 1
            flipped = False
            if self.noise > 0:
                rng = random.Random(
                    f"padme-hfilter|{self.seed}|{self.name}|{pid}|{x1.rollout_id}|{x2.rollout_id}"
                )
                if rng.random() < self.noise:
                    choice, flipped = 3 - choice, True
            raw = json.dumps({"score_1": round(s1, 6), "score_2": round(s2, 6), "flipped": flipped})
            out.append(Judgment(self.name, pair_item_id((pid, x1, x2, crit)), choice, raw))
        return out


# ---- an LLM filter judge on a budget (issue 13 §4) --------------------------------------------------
FILTER_AUDIT_COLUMNS = (
    "judge",
    "pair_id",
    "criterion",
    "better_slot",
    "choice",
    "passed",
    "parse_error",
    "cache_hit",
)


def filter_pairs_anytime(units, criterion_of, gateway, backbone, *, budget_s: float | None, name: str | None = None,
                         seed: int | str = 0, run_id: str = "padme-filter-anytime", max_tokens: int = 1024,
                         cap: int | None = None, clock=None):  # fmt: skip
    """An LLM filter judge (H.4) as one more cascade stage over pairs, as an anytime sweep
    (:mod:`shopbench.llm.anytime`): ``units`` are :class:`shopbench.judges.padme.sweep.PairUnit` (in a
    seeded order stratified by their ``stratum``, capped at ``cap``), each shown to the judge once in a
    slot order drawn from ``(seed, pair_id)`` (App. C.2: randomized order), until ``budget_s`` seconds
    of model time are spent. Returns ``(frame, result)``: one row per pair judged
    (:data:`FILTER_AUDIT_COLUMNS`; ``passed`` = the judge preferred x⁺, the cascade's J_k(p, c) = 1; a
    parse failure is a veto, ``passed`` False) and the :class:`~shopbench.llm.anytime.AnytimeResult`.
    A transport error is recorded as a veto with its reason here (the sweep goes on; errors are not
    cached, so a rerun asks again)."""
    import pandas as pd

    from ...llm.anytime import run_anytime, stratified_order

    order = stratified_order(list(units), lambda u: u.stratum, seed, key=lambda u: u.pair_id)
    order = order[:cap] if cap is not None else order
    judge_ = ModelJudge(FILTER_JUDGE, gateway, backbone, run_id, name=name or str(backbone),
                        params={"max_tokens": int(max_tokens), "temperature": 0.0}, desc=f"padme filter {name}")  # fmt: skip
    resolve = criterion_of if callable(criterion_of) else (lambda r: criterion_of[r.criterion])

    def item(u) -> tuple[JudgeItem, int]:
        better_first = random.Random(f"padme-filter-slot|{seed}|{u.pair_id}").random() < 0.5
        x1, x2 = (u.better, u.worse) if better_first else (u.worse, u.better)
        return (u.pair_id, x1, x2, resolve(u.better)), (1 if better_first else 2)

    def run(batch):
        asked = [item(u) for u in batch]
        outs = judge_.judge([it for it, _ in asked])
        rows = []
        for (it, slot), o in zip(asked, outs, strict=True):
            choice, err, _ = vote_fields(o)
            rows.append({"judge": judge_.name, "pair_id": it[0], "criterion": it[3].name, "better_slot": slot,
                         "choice": choice, "passed": choice == slot, "parse_error": err,
                         "cache_hit": bool(getattr(o, "usage", {}).get("cache_hit"))})  # fmt: skip
        return pd.DataFrame(rows, columns=list(FILTER_AUDIT_COLUMNS))

    kw = {"clock": clock} if clock is not None else {}
    res = run_anytime(gateway, order, lambda u: judge_.calls([item(u)[0]]), run, budget_s=budget_s,
                      name=f"filter judge {judge_.name} · {run_id}", **kw)  # fmt: skip
    frames = [f for f in res.results if len(f)]
    frame = (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(FILTER_AUDIT_COLUMNS))
    )
    return frame, res
