"""Evaluators under test for PADMÉ meta-evaluation (seed 003 §3.2, §4 "Meta-Evaluation Sweep", App. H.5, F, G).

"An evaluator under test is a scoring function f(x; c) ∈ [0, 1] that rates a single trajectory x
against a criterion c. Because f evaluates each trajectory independently without viewing trajectory
pairs, its pairwise preference over p = (x⁻, x⁺) is derived directly from the score gap" (§3.2).
§4: "We evaluate 25 LMs as evaluators [...] on all 1,000 kept pairs across 3 runs [...] Model
evaluations run under vendor-default reasoning budgets and at temperature 0". H.5: "Evaluators
process a single trajectory x in isolation, assigning a score in [0, 1] without access to the paired
execution. [...] Evaluators receive the identical shared context {prompt} provided to filter judges
and human annotators". The preference and its statistics are in :mod:`shopbench.metrics.meta_eval`.

**What this module does.** It defines the evaluators as judges (the H.5 spec and the reference
evaluators). Split by concept (issue 27): :mod:`.roster` holds the evaluator specs and the paper's
roster, :mod:`.sweep` scores rollouts (:func:`~.sweep.score_rollouts`: one row per (evaluator,
rollout, run): ``score`` in [0, 1] or NaN, ``status`` ("ok" / "parse_error" / "error"),
``parse_error``, ``reasoning``, tokens, cost and ``cache_hit``) and pairs under a time budget.

* **LM evaluators** (any gateway backbone): the H.5 prompt (``prompts/padme_evaluator.txt``, or the
  profile's ``padme.evaluator_prompt``, passed as ``template``; issue 25 item 5) with
  the criterion name and description, the reference documents (:func:`reference_documents`: the
  agent's system prompt *with the H.3 ``<behaviour>`` steering block removed* — the evaluator must
  never see the steering instruction — and its tools) and the trajectory rendered as numbered turns
  (:func:`render_trajectory`: ``Agent calls f(k=v)`` / ``Tool result -> ...``, long values cut).
  All calls of one evaluator go into ONE ``gateway.run`` (concurrent, cached, logged; run ``r`` is
  ``Call.repeat = r`` so the runs are distinct calls). Contract: ``{"reasoning": string (≤ 1500
  chars), "score": number}``; the score's range is checked here (:func:`score_from_row`) because
  local grammars do not enforce numeric bounds: a score outside [0, 1], a non-number or malformed
  JSON is a *parse failure* (NaN score, counted; the paper's rule counts it as incorrect).
  Temperature 0 unless the spec's ``params`` say otherwise (``{"temperature": null}`` drops it for
  models that refuse it, the paper's ‡ rows).
* **Reference evaluators** (offline, deterministic, *not models*): the lexical heuristic
  :func:`shopbench.padme.heuristics.criterion_score` and variants with documented behaviour, so that
  the statistics have something to separate offline:

  - ``heuristic``: the heuristic score as it is (identical across runs);
  - ``heuristic-coarse``: rounded to {0, 0.5, 1} — few distinct scores, many ties;
  - ``heuristic-lenient``: ``0.6 + 0.4·s`` rounded to 0.1 — compressed toward high scores (mean
    ≥ 0.6, five levels), so more ties: the paper's lenient-evaluator pattern (§5.3);
  - ``heuristic-noisy``: ``s + N(0, 0.1)`` clipped to [0, 1] and rounded to 0.01, seeded by
    (rollout, run) — a per-item score SD above zero across runs.

  They are computed directly (no gateway call: there is no model, and the heuristic reads the
  structured trajectory rather than the rendered prompt); their rows have zero tokens and cost.

**Evaluator specs** (:mod:`.roster`). :class:`~.roster.EvaluatorSpec` names an evaluator, its backbone (or ``"heuristic"``),
the properties Table 4 correlates with accuracy (:data:`PROPERTY_KEYS`), whether it took part in
synthesis (``in_pipeline``, Table 19) and ``aliases`` (the names under which the same model appears
in the synthesis record: agent model, filter-judge name, steering generator). :data:`KNOWN_PROPERTIES`
holds them for the offline evaluators, the API backbones of ``params/full.yaml`` and the paper's
25-model roster (:data:`PAPER_ROSTER`, Table 18, with the litellm name where litellm knows the
model). A profile gives evaluators under ``padme.evaluators`` (:func:`evaluators_from_profile`)::

    padme:
      evaluators:
        - heuristic                          # a reference evaluator, by name
        - llamacpp/smollm2-135m-instruct     # a configured backbone; properties from KNOWN_PROPERTIES
        - name: my-qwen                      # a backbone with properties given here
          backbone: my-vllm                  # a name from the profile's `backbones`
          properties: {total_params_b: 7.6, active_params_b: 7.6, open_weight: true,
                       reasoning: false, context_k: 32, release: "2024-09", family: qwen2.5}
          in_pipeline: false
          aliases: []
          params: {max_tokens: 2048}         # extra generation settings for this evaluator
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...padme.choices import NOISY_EVALUATOR_SD
from ...padme.types import Criterion, Rollout
from ..registry import judge
from ..render import cut, render, steps, text_of
from ..spec import Invalid, JudgeSpec, Judgment, Outcome

PROMPT_NAME = "padme_evaluator"
SCORE_SCHEMA: dict = {
    "type": "object",
    "properties": {"reasoning": {"type": "string", "maxLength": 1500}, "score": {"type": "number"}},
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}
HEURISTIC = "heuristic"
HEURISTIC_VARIANTS: dict[str, str] = {
    "heuristic": "lexical heuristic score as it is (reference evaluator, not a model)",
    "heuristic-coarse": "heuristic rounded to {0, 0.5, 1}: few distinct scores, many ties (reference)",
    "heuristic-lenient": "0.6 + 0.4·heuristic rounded to 0.1: compressed toward high scores (reference)",
    "heuristic-noisy": "heuristic + N(0, 0.1) seeded per (rollout, run), rounded to 0.01 (reference)",
}
NOISY_SD = NOISY_EVALUATOR_SD  # the project's value (shopbench.padme.choices)
DEFAULT_MAX_TOKENS = 1024


# ---- rendering ------------------------------------------------------------------------------------
_BEHAVIOUR = re.compile(r"<behaviour>.*?</behaviour>", re.S)


def render_trajectory(rollout: Rollout, max_result_chars: int = 600, max_args_chars: int = 300) -> str:
    """The conversation as numbered turns for the H.5 ``{response}`` slot (the one renderer,
    :func:`shopbench.judges.render`, style ``"numbered"``).

    Each customer and agent message is a numbered turn; an agent's tool calls follow as
    ``Agent calls name(k=v, ...)`` and each tool message as ``Tool result -> ...`` (whitespace
    collapsed, values longer than the limits cut with a note). The system prompt is not part of the
    conversation (it goes to :func:`reference_documents`)."""
    return render(rollout, "numbered", max_chars=max_result_chars, max_args_chars=max_args_chars,
                  where=f"rollout {rollout.rollout_id}")  # fmt: skip


def _tool_line(t: Any) -> str:
    if isinstance(t, str):
        return f"- {t}"
    fn = t.get("function", t) if isinstance(t, Mapping) else {}
    params = fn.get("parameters") or {}
    req = set(params.get("required") or [])
    args = ", ".join(k if k in req else f"{k}?" for k in (params.get("properties") or {}))
    desc = cut(str(fn.get("description") or "").split("\n")[0], 200)
    return f"- {fn.get('name', '?')}({args})" + (f": {desc}" if desc else "")


def reference_documents(rollout: Rollout, tools: Sequence | None = None) -> str:
    """The H.5 ``{prompt}`` slot: the agent's tools and policy, without the steering instruction.

    The policy is the rollout's system prompt with every H.3 ``<behaviour>…</behaviour>`` block
    removed (an unbalanced tag is an error: the steering must not reach the evaluator). Tools are
    ``tools`` or ``rollout.meta["tools"]`` (OpenAI tool schemas or names); without either, the
    names of the tools the agent called are listed."""
    system = "\n\n".join(text_of(m.get("content")) for m in rollout.messages if m.get("role") == "system")
    policy = _BEHAVIOUR.sub("", system).strip()
    if "<behaviour>" in policy or "</behaviour>" in policy:
        raise ValueError(f"rollout {rollout.rollout_id}: unbalanced <behaviour> block in the system prompt; "
                         "fix the steering wrapper so the instruction can be removed before evaluation")  # fmt: skip
    tools = tools if tools is not None else rollout.meta.get("tools")
    parts = []
    if tools:
        parts.append("Tools:\n" + "\n".join(_tool_line(t) for t in tools))
    else:
        called = sorted(
            {str(c.name or "?") for st in steps(rollout) if st.role == "assistant" for c in st.calls}
        )
        if called:
            parts.append("Tools the agent called: " + ", ".join(called))
    if policy:
        parts.append("Policy:\n" + policy)
    return "\n\n".join(parts) or "(none)"


# ---- the H.5 judge ---------------------------------------------------------------------------------
EvalItem = tuple[Rollout, Criterion, int]  # (trajectory, criterion, run)


@dataclass(frozen=True)
class EvaluatorScore:
    """One parsed H.5 answer: f(x; c) ∈ [0, 1] and the evaluator's reasoning."""

    score: float
    reasoning: str | None


@dataclass(frozen=True, kw_only=True)
class EvaluatorJudgeSpec(JudgeSpec[Any, EvaluatorScore]):  # items: EvalItem (None when parsing a bare row)
    """H.5: one trajectory (run ``r`` is the call's repeat index) → a score in [0, 1]. The range is
    checked here because local grammars do not enforce numeric bounds."""

    max_result_chars: int = 600
    max_args_chars: int = 300

    def item_id(self, item: EvalItem) -> str:
        return item[0].rollout_id

    def repeat(self, item: EvalItem) -> int:
        return item[2]

    def slots(self, item: EvalItem) -> dict:
        rollout, criterion, _ = item
        return {"criterion_name": criterion.name, "criterion_description": criterion.description,
                "prompt": reference_documents(rollout),
                "response": render_trajectory(rollout, self.max_result_chars, self.max_args_chars)}  # fmt: skip

    def interpret(self, value: Any, item: EvalItem | None) -> EvaluatorScore:
        if not isinstance(value, Mapping) or "score" not in value:
            raise Invalid(f"no 'score' in the output: {value!r}"[:300])
        s, reasoning = value["score"], value.get("reasoning")
        if isinstance(s, bool) or not isinstance(s, int | float) or not math.isfinite(s):
            raise Invalid(f"score is not a finite number: {s!r}")
        if not 0.0 <= s <= 1.0:
            raise Invalid(f"score {s!r} outside [0, 1]")
        return EvaluatorScore(float(s), reasoning if isinstance(reasoning, str) else None)


@judge
def padme_evaluator() -> EvaluatorJudgeSpec:
    return EvaluatorJudgeSpec(name="padme_evaluator", prompt=PROMPT_NAME, contract=SCORE_SCHEMA,
                              schema_name="evaluation", max_tokens=DEFAULT_MAX_TOKENS, source="seed 003 H.5")  # fmt: skip


EVALUATOR_JUDGE = padme_evaluator()


def evaluator_messages(
    rollout: Rollout, criterion: Criterion, template: str | None = None, **render_limits
) -> list[dict]:
    """The H.5 prompt for one trajectory, as a single user message (``render_limits``:
    ``max_result_chars``, ``max_args_chars``)."""
    spec = replace(EVALUATOR_JUDGE, **render_limits) if render_limits else EVALUATOR_JUDGE
    return spec.render((rollout, criterion, 0), template)


# ---- scoring --------------------------------------------------------------------------------------
def _score_fields(outcome: Outcome) -> dict:
    if isinstance(outcome, Judgment):
        return {"score": outcome.value.score, "status": "ok", "parse_error": None, "error": None,
                "reasoning": outcome.value.reasoning}  # fmt: skip
    if outcome.call_error:
        return {"score": np.nan, "status": "error", "parse_error": None,
                "error": outcome.reason.removeprefix("call error: "), "reasoning": None}  # fmt: skip
    why = outcome.parsed.get("reasoning") if isinstance(outcome.parsed, Mapping) else None
    return {"score": np.nan, "status": "parse_error", "parse_error": outcome.reason, "error": None,
            "reasoning": why if isinstance(why, str) else None}  # fmt: skip


def score_from_row(row: Mapping) -> dict:
    """Score, status, parse error and reasoning from one gateway row, parsed by :data:`EVALUATOR_JUDGE`:
    the score must be a number in [0, 1] (a bool, a string, NaN or a value outside the range is a
    parse failure with a reason)."""
    status = row.get("status")
    if status not in ("ok", "parse_error", "error"):
        return {"score": np.nan, "status": "error", "parse_error": row.get("parse_error"),
                "error": f"unknown gateway status {status!r}", "reasoning": None}  # fmt: skip
    return _score_fields(EVALUATOR_JUDGE.parse(row, None))


def _seed_int(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def heuristic_scores(
    variant: str, base: np.ndarray, rollout_ids: Sequence[str], run: int, seed: int = 0
) -> np.ndarray:
    """A reference evaluator's scores for one run from the heuristic scores ``base`` (see the module docstring)."""
    if variant == "heuristic":
        return base.copy()
    if variant == "heuristic-coarse":
        return np.round(base * 2) / 2
    if variant == "heuristic-lenient":
        return np.round(0.6 + 0.4 * base, 1)
    if variant == "heuristic-noisy":
        noise = np.array([np.random.default_rng(_seed_int(seed, variant, r, run)).normal(0, NOISY_SD)
                          for r in rollout_ids])  # fmt: skip
        return np.round(np.clip(base + noise, 0.0, 1.0), 2)
    raise ValueError(f"unknown heuristic evaluator {variant!r}; known: {sorted(HEURISTIC_VARIANTS)}")


class HeuristicEvaluator:
    """A reference evaluator (not a model) as a plain-Python :class:`shopbench.judges.Judge`: the
    heuristic score of each ``(rollout, criterion, run)`` through :func:`heuristic_scores`; no call,
    zero tokens and cost."""

    def __init__(self, variant: str, seed: int = 0):
        if variant not in HEURISTIC_VARIANTS:
            raise ValueError(f"unknown heuristic evaluator {variant!r}; known: {sorted(HEURISTIC_VARIANTS)}")
        self.name, self.seed = variant, int(seed)

    def judge(self, items: Sequence[EvalItem]) -> list[Outcome]:
        from ...padme.heuristics import criterion_score

        base: dict[tuple[str, str], float] = {}
        by_run: dict[int, list[int]] = {}
        for i, (r, c, run) in enumerate(items):
            base.setdefault((r.rollout_id, c.name), criterion_score(r, c))
            by_run.setdefault(run, []).append(i)
        out: list[Outcome] = [None] * len(items)  # type: ignore[list-item]
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0, "cache_hit": False}
        for run, idx in by_run.items():
            ids = [items[i][0].rollout_id for i in idx]
            b = np.array([base[(items[i][0].rollout_id, items[i][1].name)] for i in idx], dtype=float)
            for i, rid, v in zip(idx, ids, heuristic_scores(self.name, b, ids, run, self.seed), strict=True):
                out[i] = Judgment(
                    self.name, rid, EvaluatorScore(float(v), HEURISTIC_VARIANTS[self.name]), usage=usage
                )
        return out


__all__ = ["DEFAULT_MAX_TOKENS", "EVALUATOR_JUDGE", "EvaluatorJudgeSpec", "EvaluatorScore", "HeuristicEvaluator",
           "HEURISTIC", "HEURISTIC_VARIANTS", "NOISY_SD", "PROMPT_NAME", "SCORE_SCHEMA", "evaluator_messages",
           "heuristic_scores", "reference_documents", "render_trajectory", "score_from_row"]  # fmt: skip
