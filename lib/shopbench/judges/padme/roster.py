"""The evaluators under test of PADMÉ meta-evaluation (seed 003 §4, App. F; Table 4, Table 18): their
specs, properties and the paper's roster (issue 27: :mod:`.evaluators` split by concept).

:class:`EvaluatorSpec` names an evaluator, its backbone (or ``"heuristic"``), the properties Table 4
correlates with accuracy (:data:`PROPERTY_KEYS`), whether it took part in synthesis
(``in_pipeline``, Table 19) and ``aliases``; :data:`KNOWN_PROPERTIES` and :data:`PAPER_ROSTER` hold
them; :func:`evaluators_from_profile` reads a profile's ``padme.evaluators`` (format in
:mod:`.evaluators`). ``EvaluatorSpec.judge()`` gives the evaluator as a judge (:mod:`.evaluators`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..spec import Judge, ModelJudge
from .evaluators import DEFAULT_MAX_TOKENS, EVALUATOR_JUDGE, HEURISTIC, HEURISTIC_VARIANTS, HeuristicEvaluator

PROPERTY_KEYS = (
    "total_params_b",
    "active_params_b",
    "open_weight",
    "reasoning",
    "context_k",
    "release",
    "family",
)


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


__all__ = ["EvaluatorSpec", "KNOWN_PROPERTIES", "OFFLINE_EVALUATORS", "PAPER_PIPELINE", "PAPER_ROSTER", "PROPERTY_KEYS",
           "evaluator_spec", "evaluator_specs", "evaluators_from_profile", "paper_roster_specs", "paper_table18",
           "properties_frame"]  # fmt: skip
