"""Evaluators under test for PADMÉ meta-evaluation (seed 003 §3.2, §4 "Meta-Evaluation Sweep", App. H.5, F, G).

"An evaluator under test is a scoring function f(x; c) ∈ [0, 1] that rates a single trajectory x
against a criterion c. Because f evaluates each trajectory independently without viewing trajectory
pairs, its pairwise preference over p = (x⁻, x⁺) is derived directly from the score gap" (§3.2).
§4: "We evaluate 25 LMs as evaluators [...] on all 1,000 kept pairs across 3 runs [...] Model
evaluations run under vendor-default reasoning budgets and at temperature 0". H.5: "Evaluators
process a single trajectory x in isolation, assigning a score in [0, 1] without access to the paired
execution. [...] Evaluators receive the identical shared context {prompt} provided to filter judges
and human annotators". The preference and its statistics are in :mod:`shopbench.metrics.meta_eval`.

**What this module does.** :func:`score_rollouts` scores every distinct rollout once per (evaluator,
run) and returns one row per (evaluator, rollout, run): ``score`` in [0, 1] or NaN, ``status``
("ok" / "parse_error" / "error"), ``parse_error``, ``reasoning``, tokens, cost and ``cache_hit``.

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

**Evaluator specs.** :class:`EvaluatorSpec` names an evaluator, its backbone (or ``"heuristic"``),
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
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ...padme.choices import NOISY_EVALUATOR_SD
from ...padme.types import Criterion, Rollout
from .. import (
    Invalid,
    Judge,
    JudgeSpec,
    Judgment,
    ModelJudge,
    Outcome,
    cut,
    judge,
    render,
    steps,
    text_of,
)

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
PROPERTY_KEYS = (
    "total_params_b",
    "active_params_b",
    "open_weight",
    "reasoning",
    "context_k",
    "release",
    "family",
)
SCORE_COLUMNS = ("evaluator", "backbone", "rollout_id", "criterion", "run", "score", "status", "parse_error", "error",
                 "reasoning", "prompt_tokens", "completion_tokens", "cost_usd", "cache_hit")  # fmt: skip
DEFAULT_MAX_TOKENS = 1024


# ---- evaluator specs -----------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class EvaluatorSpec:
    """One evaluator under test: a gateway backbone, or ``backbone="heuristic"`` with a variant name."""

    name: str
    backbone: str
    properties: Mapping[str, Any] = field(default_factory=dict)
    in_pipeline: bool = False
    aliases: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_heuristic(self) -> bool:
        return self.backbone == HEURISTIC

    @property
    def identities(self) -> frozenset[str]:
        """Names under which this evaluator's model may appear in the synthesis record."""
        names = {self.name, *self.aliases}
        if not self.is_heuristic:
            names.add(self.backbone)
        return frozenset(names)

    def judge(self, gateway=None, run_id: str = "padme-meta-eval", max_tokens: int = DEFAULT_MAX_TOKENS, *,
              seed: int = 0, template: str | None = None) -> Judge:  # fmt: skip
        """This evaluator as a judge: :class:`HeuristicEvaluator`, or :data:`EVALUATOR_JUDGE` asked of
        the backbone (run id ``f"{run_id}-{name}"``, temperature 0 unless ``params`` say otherwise)."""
        if self.is_heuristic:
            return HeuristicEvaluator(self.name, seed)
        return ModelJudge(EVALUATOR_JUDGE, gateway, self.backbone, f"{run_id}-{self.name}", name=self.name,
                          params=EVALUATOR_JUDGE.params(max_tokens, **self.params), template=template,
                          desc=f"evaluator {self.name}")  # fmt: skip


def _p(total, active, open_weight, reasoning, context_k, release, family) -> dict:
    return {"total_params_b": total, "active_params_b": active, "open_weight": open_weight, "reasoning": reasoning,
            "context_k": context_k, "release": release, "family": family}  # fmt: skip


_REFERENCE = _p(None, None, True, False, None, None, "heuristic")

# Table 18 (App. F.1): name, released, total / active parameters (B; None = closed), reasoning,
# whether it took part in synthesis (*), the litellm model name where litellm knows the model, and
# the reported statistics: accuracy mean and SD over 3 runs (%), leniency, average score SD, tie
# rate (%), number of distinct scores. Dense models have active = total.
PAPER_ROSTER: tuple[dict, ...] = tuple(
    {"name": n, "release": rel, "total_params_b": tot, "active_params_b": act, "reasoning": rea, "in_pipeline": pipe,
     "litellm": llm, "accuracy_pct": acc, "accuracy_sd_pct": sd, "leniency": len_, "score_sd": ssd, "tie_pct": tie,
     "distinct_scores": dis}
    for n, rel, tot, act, rea, pipe, llm, acc, sd, len_, ssd, tie, dis in [
        ("claude-opus-5", "2026-07", None, None, True, False, None, 85.1, 0.93, 0.324, 0.023, 4.1, 69),
        ("claude-sonnet-5", "2026-06", None, None, True, False, None, 83.8, 0.72, 0.458, 0.040, 5.8, 34),
        ("kimi-k3", "2026-07", 2800, 104, True, False, None, 83.6, 0.12, 0.508, 0.036, 6.0, 37),
        ("gpt-5.6-terra", "2026-07", None, None, True, False, None, 81.7, 0.49, 0.560, 0.043, 3.4, 88),
        ("gpt-5.6-luna", "2026-07", None, None, True, False, None, 81.6, 0.64, 0.563, 0.045, 3.8, 83),
        ("glm-5p2", "2026-06", 753, 30, True, False, None, 81.5, 0.50, 0.521, 0.051, 10.1, 31),
        ("gpt-oss-120b", "2025-08", 116.8, 5.1, True, True, "fireworks_ai/accounts/fireworks/models/gpt-oss-120b",
         80.5, 0.40, 0.624, 0.050, 9.9, 45),
        ("gpt-5.4-nano", "2026-03", None, None, False, False, None, 79.4, 1.16, 0.631, 0.052, 7.8, 61),
        ("gpt-5.4-mini", "2026-03", None, None, False, False, None, 79.4, 0.79, 0.628, 0.053, 6.1, 89),
        ("gpt-5.6-sol", "2026-07", None, None, True, False, None, 78.7, 0.40, 0.543, 0.035, 4.9, 86),
        ("claude-haiku-4-5", "2025-10", None, None, False, False, "anthropic/claude-haiku-4-5", 78.7, 0.10, 0.505,
         0.000, 11.6, 32),
        ("qwen3p8-max", "2026-08", 2400, 95, True, False, None, 78.0, 0.36, 0.521, 0.037, 11.7, 30),
        ("nemotron-3-ultra", "2026-06", 549, 55, True, False, None, 76.8, 0.76, 0.558, 0.044, 14.2, 28),
        ("llama3.1-70b", "2024-07", 70.6, 70.6, False, False,
         "fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct", 70.0, 0.55, 0.632, 0.016, 22.8, 14),
        ("gemini-3.7-flash", "2026-08", None, None, True, False, None, 69.5, 0.45, 0.615, 0.026, 23.4, 34),
        ("gpt-oss-20b", "2025-08", 20.9, 3.6, True, True, "fireworks_ai/accounts/fireworks/models/gpt-oss-20b",
         68.7, 1.01, 0.625, 0.056, 21.7, 31),
        ("gemma-4-31b", "2026-03", 32.2, 32.2, True, False, None, 68.1, 0.15, 0.657, 0.023, 27.4, 14),
        ("deepseek-v4-pro", "2026-08", 1600, 49, True, False, None, 67.0, 0.67, 0.505, 0.045, 20.4, 23),
        ("mistral-large2", "2024-07", 123, 123, False, False, None, 64.8, 0.40, 0.717, 0.014, 28.1, 12),
        ("nemotron-lightning-3.5", "2026-08", 32, 3, True, True, None, 62.4, 0.93, 0.705, 0.060, 28.6, 22),
        ("gemini-3.5-flash-lite", "2026-07", None, None, False, False, None, 56.1, 0.68, 0.723, 0.055, 36.3, 16),
        ("llama4-maverick", "2025-04", 400, 17, False, False,
         "fireworks_ai/accounts/fireworks/models/llama4-maverick-instruct-basic", 55.6, 1.56, 0.765, 0.039, 35.9, 15),
        ("llama3.1-8b", "2024-07", 8.0, 8.0, False, False,
         "fireworks_ai/accounts/fireworks/models/llama-v3p1-8b-instruct", 43.1, 0.47, 0.622, 0.005, 43.7, 12),
        ("qwen3-1p7b", "2025-04", 2.0, 2.0, True, False, "fireworks_ai/accounts/fireworks/models/qwen3-1p7b", 42.8,
         0.35, 0.760, 0.076, 31.9, 15),
        ("qwen3-4b", "2025-08", 4.4, 4.4, False, False, "fireworks_ai/accounts/fireworks/models/qwen3-4b", 36.8,
         0.65, 0.804, 0.029, 56.9, 17),
    ]
)  # fmt: skip

KNOWN_PROPERTIES: dict[str, dict] = {
    **{name: dict(_REFERENCE) for name in HEURISTIC_VARIANTS},
    "llamacpp/smollm2-135m-instruct": _p(0.135, 0.135, True, False, 8, "2024-11", "smollm2"),
    "llamacpp/qwen2.5-coder-1.5b-instruct": _p(1.54, 1.54, True, False, 32, "2024-11", "qwen2.5"),
    "anthropic/claude-sonnet-4-5": _p(None, None, False, False, 200, "2025-09", "claude"),
    "openai/gpt-4o": _p(None, None, False, False, 128, "2024-05", "gpt-4o"),
    "openai/gpt-4o-mini": _p(None, None, False, False, 128, "2024-07", "gpt-4o"),
    **{r["name"]: _p(r["total_params_b"], r["active_params_b"], r["total_params_b"] is not None, r["reasoning"],
                     None, r["release"], re.split(r"[-.]|\d", r["name"])[0] or r["name"]) for r in PAPER_ROSTER},
}  # fmt: skip
PAPER_PIPELINE = tuple(r["name"] for r in PAPER_ROSTER if r["in_pipeline"])
OFFLINE_EVALUATORS = ("heuristic", "heuristic-coarse", "heuristic-lenient", "heuristic-noisy",
                      "llamacpp/smollm2-135m-instruct", "llamacpp/qwen2.5-coder-1.5b-instruct")  # fmt: skip

_SPEC_KEYS = {"name", "backbone", "properties", "in_pipeline", "aliases", "params"}
_RELEASE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def _check_properties(props: Mapping, where: str) -> dict:
    if not isinstance(props, Mapping):
        raise ValueError(f"{where}.properties: a mapping of {list(PROPERTY_KEYS)} is needed, got {props!r}")
    extra = set(props) - set(PROPERTY_KEYS)
    if extra:
        raise ValueError(f"{where}.properties: unknown keys {sorted(extra)}; allowed: {list(PROPERTY_KEYS)}")
    for k, v in props.items():
        if v is None:
            continue
        if k in ("total_params_b", "active_params_b", "context_k") and (
            isinstance(v, bool) or not isinstance(v, int | float) or v < 0
        ):
            raise ValueError(
                f"{where}.properties.{k}: a non-negative number (or null when unpublished), got {v!r}"
            )
        if k in ("open_weight", "reasoning") and not isinstance(v, bool):
            raise ValueError(f"{where}.properties.{k}: true or false, got {v!r}")
        if k == "release" and not (isinstance(v, str) and _RELEASE.match(v)):
            raise ValueError(f'{where}.properties.release: a month "YYYY-MM", got {v!r}')
        if k == "family" and not isinstance(v, str):
            raise ValueError(f"{where}.properties.family: a string, got {v!r}")
    return dict(props)


def evaluator_spec(entry: str | Mapping | EvaluatorSpec, where: str = "evaluator") -> EvaluatorSpec:
    """One :class:`EvaluatorSpec` from a name (a heuristic variant or a backbone) or a mapping (see
    the module docstring); properties default to :data:`KNOWN_PROPERTIES` of the name or backbone."""
    if isinstance(entry, EvaluatorSpec):
        return entry
    if isinstance(entry, str):
        if not entry.strip():
            raise ValueError(f"{where}: an empty evaluator name")
        if entry in HEURISTIC_VARIANTS:
            return EvaluatorSpec(entry, HEURISTIC, dict(KNOWN_PROPERTIES[entry]))
        return EvaluatorSpec(entry, entry, dict(KNOWN_PROPERTIES.get(entry, {})))
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: an evaluator is a name or a mapping with 'backbone', got {entry!r}")
    extra = set(entry) - _SPEC_KEYS
    if extra:
        raise ValueError(f"{where}: unknown keys {sorted(extra)}; allowed: {sorted(_SPEC_KEYS)}")
    name = entry.get("name")
    backbone = entry.get("backbone")
    if backbone is None and name in HEURISTIC_VARIANTS:
        backbone = HEURISTIC
    if not isinstance(backbone, str) or not backbone:
        raise ValueError(
            f"{where}: 'backbone' (a backbone name, or 'heuristic') is required, got {backbone!r}"
        )
    name = name or backbone
    if backbone == HEURISTIC and name not in HEURISTIC_VARIANTS:
        raise ValueError(f"{where}: heuristic evaluators are {sorted(HEURISTIC_VARIANTS)}, got name {name!r}")
    props = {**KNOWN_PROPERTIES.get(backbone, {}), **KNOWN_PROPERTIES.get(name, {})}
    props.update(_check_properties(entry.get("properties") or {}, where))
    aliases = entry.get("aliases") or ()
    if isinstance(aliases, str) or not all(isinstance(a, str) for a in aliases):
        raise ValueError(f"{where}.aliases: a list of names, got {aliases!r}")
    in_pipeline = entry.get("in_pipeline", False)
    if not isinstance(in_pipeline, bool):
        raise ValueError(f"{where}.in_pipeline: true or false, got {in_pipeline!r}")
    params = entry.get("params") or {}
    if not isinstance(params, Mapping):
        raise ValueError(f"{where}.params: a mapping of generation settings, got {params!r}")
    return EvaluatorSpec(str(name), backbone, props, in_pipeline, tuple(aliases), dict(params))


def evaluator_specs(entries: Iterable, where: str = "padme.evaluators") -> list[EvaluatorSpec]:
    """Specs from a list of entries; names must be distinct."""
    if isinstance(entries, str | Mapping | EvaluatorSpec):
        entries = [entries]
    specs = [evaluator_spec(e, f"{where}[{i}]") for i, e in enumerate(entries)]
    names = [s.name for s in specs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{where}: duplicate evaluator names {dup}; give each entry a distinct 'name'")
    return specs


def evaluators_from_profile(profile, default=OFFLINE_EVALUATORS) -> list[EvaluatorSpec]:
    """Evaluator specs from a loaded :class:`shopbench.config.Profile`'s ``padme.evaluators`` (its
    structure is validated with the profile; errors here name the file and key too)."""
    entries = profile.params.padme.evaluators
    plain = list(default) if entries is None else [e if isinstance(e, str) else e.given() for e in entries]
    try:
        return evaluator_specs(plain, where="padme.evaluators")
    except ValueError as e:  # "padme.evaluators[2]: heuristic evaluators are ..."
        where, _, problem = str(e).partition(": ")
        if not where.startswith("padme.evaluators") or not problem:
            where, problem = "padme.evaluators", str(e)
        raise profile.error(where, problem) from None


def properties_frame(evaluators: Iterable) -> pd.DataFrame:
    """Table 4 properties, one row per evaluator (index = name): numbers as floats, booleans as 0/1,
    ``release`` as ``release_year`` (year + (month − 1)/12), ``family`` as text, ``in_pipeline``."""
    rows = {}
    for s in evaluator_specs(evaluators, where="evaluators"):
        p = s.properties
        rel = p.get("release")
        rows[s.name] = {
            **{k: (np.nan if p.get(k) is None else float(p[k])) for k in
               ("total_params_b", "active_params_b", "open_weight", "reasoning", "context_k")},
            "release_year": int(rel[:4]) + (int(rel[5:7]) - 1) / 12 if rel else np.nan,
            "family": p.get("family"), "in_pipeline": s.in_pipeline,
        }  # fmt: skip
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("evaluator")


def paper_roster_specs() -> list[EvaluatorSpec]:
    """The paper's 25 evaluators (Table 18) as specs; ``backbone`` is the litellm name or the paper's name."""
    return [
        EvaluatorSpec(
            r["name"],
            r["litellm"] or r["name"],
            dict(KNOWN_PROPERTIES[r["name"]]),
            r["in_pipeline"],
            (r["name"],),
        )  # fmt: skip
        for r in PAPER_ROSTER
    ]


def paper_table18() -> pd.DataFrame:
    """The reported Table 18 statistics (fractions, like :func:`~shopbench.metrics.meta_eval.evaluator_summary`)
    joined with the roster's properties; index = evaluator."""
    df = pd.DataFrame(PAPER_ROSTER).set_index("name").rename_axis("evaluator")
    out = pd.DataFrame({
        "accuracy": df["accuracy_pct"] / 100, "accuracy_sd": df["accuracy_sd_pct"] / 100, "leniency": df["leniency"],
        "score_sd": df["score_sd"], "tie_rate": df["tie_pct"] / 100, "distinct_scores": df["distinct_scores"],
    })  # fmt: skip
    props = properties_frame(paper_roster_specs())
    return out.join(props)


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


def _criterion_resolver(criterion_of) -> Callable[[Rollout], Criterion]:
    if callable(criterion_of) and not isinstance(criterion_of, Mapping):
        return criterion_of
    if isinstance(criterion_of, Mapping):

        def resolve(r: Rollout) -> Criterion:
            c = criterion_of.get(r.criterion)
            if c is None:
                raise ValueError(f"rollout {r.rollout_id}: criterion {r.criterion!r} is not in criterion_of "
                                 f"(known: {sorted(criterion_of)}); add its Criterion")  # fmt: skip
            return c

        return resolve
    raise TypeError(
        f"criterion_of: a mapping name -> Criterion or a function of the rollout, got {criterion_of!r}"
    )


def _distinct_rollouts(rollouts: Iterable[Rollout]) -> list[Rollout]:
    seen: dict[str, Rollout] = {}
    for r in rollouts:
        if not isinstance(r, Rollout):
            raise TypeError(f"score_rollouts: expected Rollout objects, got {type(r).__name__}")
        prev = seen.get(r.rollout_id)
        if prev is None:
            seen[r.rollout_id] = r
        elif prev is not r and prev.messages != r.messages:
            raise ValueError(
                f"rollout id {r.rollout_id!r} is used by two different trajectories; ids must be unique"
            )
    return list(seen.values())


def score_rollouts(
    rollouts: Iterable[Rollout],
    criterion_of: Mapping[str, Criterion] | Callable[[Rollout], Criterion],
    evaluators: Iterable,
    runs: int = 3,
    gateway=None,
    run_id: str = "padme-meta-eval",
    max_tokens: int = DEFAULT_MAX_TOKENS,
    *,
    seed: int = 0,
    template: str | None = None,
) -> pd.DataFrame:
    """Score each distinct rollout once per (evaluator, run); one row per (evaluator, rollout, run).

    ``rollouts`` may repeat (a rollout in several pairs is scored once). ``criterion_of`` maps a
    rollout's criterion name to its :class:`Criterion` (or is a function of the rollout).
    ``evaluators``: specs, names or mappings (:func:`evaluator_specs`). LM evaluators need
    ``gateway``; each is one ``gateway.run`` under run id ``f"{run_id}-{name}"`` with all its
    ``len(rollouts) × runs`` calls (``repeat = run``). Columns: :data:`SCORE_COLUMNS`."""
    if not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive integer, got {runs!r}")
    specs = evaluator_specs(evaluators, where="evaluators")
    items = _distinct_rollouts(rollouts)
    resolve = _criterion_resolver(criterion_of)
    crits = [resolve(r) for r in items]
    llm = [s for s in specs if not s.is_heuristic]
    if llm and gateway is None:
        raise ValueError(
            f"LM evaluators {[s.name for s in llm]} need a gateway (score_rollouts(..., gateway=gw))"
        )
    asked = [(r, c, run) for run in range(runs) for r, c in zip(items, crits, strict=True)]
    frames = []
    for s in specs:
        judge = s.judge(gateway, run_id, max_tokens, seed=seed, template=template)
        frames.append(_score_frame(s, asked, judge.judge(asked)))
    return _concat_scores(frames)


def _score_frame(s: EvaluatorSpec, asked: Sequence[EvalItem], outcomes: Sequence[Outcome]) -> pd.DataFrame:
    recs = [{"evaluator": s.name, "backbone": s.backbone, "rollout_id": r.rollout_id, "criterion": c.name,
             "run": run, **_score_fields(o), "prompt_tokens": o.usage.get("prompt_tokens"),
             "completion_tokens": o.usage.get("completion_tokens"), "cost_usd": o.usage.get("cost_usd"),
             "cache_hit": bool(o.usage.get("cache_hit"))}
            for (r, c, run), o in zip(asked, outcomes, strict=True)]  # fmt: skip
    return pd.DataFrame(recs, columns=list(SCORE_COLUMNS))


def _concat_scores(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=list(SCORE_COLUMNS)).astype({"score": float})
    out = pd.concat(frames, ignore_index=True)[list(SCORE_COLUMNS)]
    out["score"] = out["score"].astype(float)
    return out


# ---- anytime scoring (issue 13 §4) ----------------------------------------------------------------
@dataclass(frozen=True)
class PairUnit:
    """One pair to score in an anytime sweep: its id, its two trajectories and its stratum."""

    pair_id: str
    worse: Rollout
    better: Rollout
    stratum: tuple = ()


def pair_units(pairs: Iterable) -> list[PairUnit]:
    """One :class:`PairUnit` per synthesised :class:`~shopbench.padme.types.Pair`, stratified by
    (criterion, level contrast, source): the units notebook 50 and the ``padme_evaluator`` task
    (issue 26 §1) score."""
    return [PairUnit(p.pair_id, p.worse, p.better, (p.criterion, p.contrast, p.source)) for p in pairs]


def reward_pair_units(reward_pairs: pd.DataFrame, rollouts: Iterable[Rollout]) -> list[PairUnit]:
    """One :class:`PairUnit` per reward-labelled pair of recorded trajectories
    (:func:`shopbench.metrics.meta_eval.reward_pairs`), stratified by task."""
    by_rid = {r.rollout_id: r for r in rollouts}
    return [PairUnit(r.pair_id, by_rid[r.worse_id], by_rid[r.better_id], (r.task_id,))
            for r in reward_pairs.itertuples()]  # fmt: skip


def order_pair_units(
    units: Iterable[PairUnit], seed: int | str = 0, cap: int | None = None
) -> list[PairUnit]:
    """The fixed order in which :func:`score_pairs_anytime` scores pairs: seeded and stratified by
    ``PairUnit.stratum`` (every prefix a stratified sample), the first ``cap`` kept."""
    from ...llm.anytime import stratified_order

    order = stratified_order(list(units), lambda u: u.stratum, seed, key=lambda u: u.pair_id)
    return order[:cap] if cap is not None else order


def score_pairs_anytime(
    units: Iterable[PairUnit],
    criterion_of: Mapping[str, Criterion] | Callable[[Rollout], Criterion],
    evaluator,
    *,
    gateway,
    budget_s: float | None,
    seed: int | str = 0,
    runs: int = 1,
    run_id: str = "padme-meta-eval",
    max_tokens: int = DEFAULT_MAX_TOKENS,
    cap: int | None = None,
    template: str | None = None,
    clock=None,
):
    """One LM evaluator on pairs as an anytime sweep (:mod:`shopbench.llm.anytime`): the pairs in a
    seeded order stratified by ``PairUnit.stratum`` (capped at ``cap``), each pair's two trajectories
    × ``runs`` scored as one gateway run, until ``budget_s`` seconds of model time are spent (resumes
    from the cache; a larger budget extends the same sample). A trajectory in several pairs is scored
    once. Returns ``(scores, result)``: the :data:`SCORE_COLUMNS` rows of the pairs done and the
    :class:`~shopbench.llm.anytime.AnytimeResult` (``result.done`` are the pairs scored, ``n`` of ``N``)."""
    from ...llm.anytime import run_anytime

    if not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive integer, got {runs!r}")
    spec = evaluator_spec(evaluator)
    if spec.is_heuristic:
        raise ValueError(
            f"score_pairs_anytime: {spec.name} is a reference evaluator (no model); use score_rollouts"
        )
    resolve = _criterion_resolver(criterion_of)
    order = order_pair_units(units, seed, cap)
    judge = spec.judge(
        gateway, run_id, max_tokens, seed=int(seed) if isinstance(seed, int) else 0, template=template
    )
    assert isinstance(judge, ModelJudge)  # not a heuristic (checked above)
    scored: set[str] = set()

    def items(batch: Sequence[PairUnit], skip: Collection[str] = ()) -> list[EvalItem]:
        rolls = _distinct_rollouts(x for u in batch for x in (u.worse, u.better))
        rolls = [r for r in rolls if r.rollout_id not in skip]
        return [(r, resolve(r), k) for k in range(runs) for r in rolls]

    def calls_of(u: PairUnit):
        return judge.calls(items([u]))

    def run(batch: list[PairUnit]) -> pd.DataFrame:
        asked = items(batch, skip=scored)
        scored.update(r.rollout_id for r, _, _ in asked)
        return _score_frame(spec, asked, judge.judge(asked))

    kw = {"clock": clock} if clock is not None else {}
    res = run_anytime(
        gateway, order, calls_of, run, budget_s=budget_s, name=f"evaluator {spec.name} · {run_id}", **kw
    )
    return _concat_scores(res.results), res


__all__ = ["DEFAULT_MAX_TOKENS", "EVALUATOR_JUDGE", "EvaluatorJudgeSpec", "EvaluatorScore", "EvaluatorSpec",
           "HeuristicEvaluator", "HEURISTIC", "HEURISTIC_VARIANTS", "KNOWN_PROPERTIES", "NOISY_SD",
           "OFFLINE_EVALUATORS", "PAPER_PIPELINE", "PAPER_ROSTER", "PROMPT_NAME", "PROPERTY_KEYS", "SCORE_COLUMNS",
           "SCORE_SCHEMA", "evaluator_messages", "evaluator_spec", "evaluator_specs", "evaluators_from_profile",
           "heuristic_scores", "paper_roster_specs", "PairUnit", "order_pair_units", "pair_units",
           "reward_pair_units", "score_pairs_anytime", "paper_table18", "properties_frame",
           "reference_documents", "render_trajectory", "score_from_row", "score_rollouts"]  # fmt: skip
