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

A judge answers ``judge_pairs(items)`` for a whole stage at once: ``items`` are
``(pair_id, x_slot1, x_slot2, criterion)`` and the answer per item is ``(choice, parse_error, raw)``
with ``choice`` 1 or 2 (the slot it prefers) or ``None`` when the answer could not be parsed — a
parse failure is a veto. Which slot holds x⁺ is the cascade's business (``Vote.better_slot``).

* :class:`LLMFilterJudge` — the H.4 prompt (``prompts/padme_filter_judge.txt``) through the gateway,
  all items of a stage in ONE ``gateway.run`` (concurrent); a JSON schema with ``answer`` ∈ {"A",
  "B"} so grammar-constrained local models can answer. A transport error (not a model answer)
  raises :class:`FilterCallError`: the run stops, finished pairs are stored, rerun to resume.
* :class:`HeuristicFilterJudge` — offline: prefers the trajectory with the higher
  :func:`~shopbench.padme.heuristics.criterion_score`; equal scores go to slot 1 (a realistic
  position bias the Table 9 audit can see); ``noise`` flips the choice with a seeded probability.

The judges see the trajectories only as rendered by :func:`render_trajectory` (user, assistant,
tool calls and results) and the shared context of :func:`shared_context` (the system prompt with
the H.3 ``<behaviour>`` block removed): never level, steering or reward.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from shopbench.padme.heuristics import criterion_score
from shopbench.padme.steering import load_prompt
from shopbench.padme.types import Criterion, Rollout

__all__ = [
    "FILTER_SCHEMA", "FilterCallError", "FilterJudge", "HeuristicFilterJudge", "JudgeItem", "LLMFilterJudge",
    "PROMPT_STEM", "render_trajectory", "shared_context",
]  # fmt: skip

PROMPT_STEM = "padme_filter_judge"
JudgeItem = tuple[str, Rollout, Rollout, Criterion]
JudgeAnswer = tuple[int | None, str | None, str | None]

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


@runtime_checkable
class FilterJudge(Protocol):
    name: str

    def judge_pairs(self, items: Sequence[JudgeItem]) -> list[JudgeAnswer]: ...


# ---- rendering ---------------------------------------------------------------------------------
def _text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, list):
        return " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[:n] + f" […{len(s) - n} more characters]"


def render_trajectory(rollout: Rollout, max_tool_chars: int = 2000) -> str:
    """The customer-visible trajectory as plain text: user and assistant turns, the agent's tool
    calls with their arguments, and tool results (clipped to ``max_tool_chars``). System messages
    (agent prompt and steering) are left out."""
    lines: list[str] = []
    for m in rollout.messages:
        role = m.get("role")
        if role == "user":
            lines.append(f"User: {_text(m.get('content')).strip()}")
        elif role == "assistant":
            text = _text(m.get("content")).strip()
            if text:
                lines.append(f"Assistant: {text}")
            for c in m.get("tool_calls") or []:
                fn = c.get("function") if isinstance(c.get("function"), dict) else c
                args = fn.get("arguments", "{}")
                args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
                lines.append(f"Assistant calls tool {fn.get('name')}({_clip(args, max_tool_chars)})")
        elif role == "tool":
            name = m.get("name") or "tool"
            lines.append(f"Tool result ({name}): {_clip(_text(m.get('content')).strip(), max_tool_chars)}")
    return "\n\n".join(lines) if lines else "(empty trajectory)"


def shared_context(*rollouts: Rollout) -> str:
    """The {prompt} slot: the first rollout's system prompt with the steering wrapper (H.3
    ``<behaviour>…</behaviour>``, and any verbatim copy of a rollout's steering text) removed."""
    for r in rollouts:
        system = "\n\n".join(_text(m.get("content")) for m in r.messages if m.get("role") == "system")
        if not system.strip():
            continue
        system = _BEHAVIOUR.sub("", system)
        for x in rollouts:
            if x.steering and x.steering.strip():
                system = system.replace(x.steering.strip(), "")
        return system.strip() or "(no shared context)"
    return "(no shared context)"


# ---- the LLM judge -----------------------------------------------------------------------------
class LLMFilterJudge:
    """J_k as an LM with the H.4 prompt; ``name`` defaults to the backbone's name."""

    def __init__(self, gateway, backbone, name: str | None = None, *, run_id: str | None = None,
                 max_tokens: int = 2048, temperature: float = 0.0, prompt: str | None = None,
                 max_tool_chars: int = 2000):  # fmt: skip
        self.gateway, self.backbone = gateway, backbone
        self.name = name or getattr(backbone, "name", None) or str(backbone)
        self.run_id = run_id or f"padme-filter-{re.sub(r'[^A-Za-z0-9_.=-]+', '_', self.name)}"
        self.max_tokens, self.temperature = int(max_tokens), float(temperature)
        self.template = prompt if prompt is not None else load_prompt(PROMPT_STEM)
        self.max_tool_chars = max_tool_chars

    def messages(self, x1: Rollout, x2: Rollout, criterion: Criterion) -> list[dict]:
        slots = {
            "criterion_name": criterion.name,
            "criterion_description": criterion.description,
            "prompt": shared_context(x1, x2),
            "response_a": render_trajectory(x1, self.max_tool_chars),
            "response_b": render_trajectory(x2, self.max_tool_chars),
        }
        # one pass, so text inside a slot value is never taken for another slot
        text = re.sub(r"\{(" + "|".join(slots) + r")\}", lambda m: slots[m.group(1)], self.template)
        return [{"role": "user", "content": text}]

    def judge_pairs(self, items: Sequence[JudgeItem]) -> list[JudgeAnswer]:
        items = list(items)
        if not items:
            return []
        calls = [
            self.gateway.call(self.backbone, f"{pid}|{x1.rollout_id}|{x2.rollout_id}", self.messages(x1, x2, crit),
                              schema=FILTER_SCHEMA, schema_name="preference",
                              params={"max_tokens": self.max_tokens, "temperature": self.temperature})
            for pid, x1, x2, crit in items
        ]  # fmt: skip
        rows = self.gateway.run(calls, run_id=self.run_id, desc=f"padme filter {self.name}")
        failed = [r for r in rows if r.get("status") == "error"]
        if failed:
            raise FilterCallError(
                f"filter judge {self.name!r}: {len(failed)} of {len(rows)} calls failed (first: item "
                f"{failed[0].get('item_id')!r}: {failed[0].get('error')}). Finished pairs are stored; fix the "
                "backend and rerun the cascade to resume."
            )
        out: list[JudgeAnswer] = []
        for r in rows:
            raw = r.get("raw_output")
            if r.get("status") != "ok":
                out.append((None, r.get("parse_error") or "unparseable answer", raw))
                continue
            ans = (r.get("parsed") or {}).get("answer")
            if ans in ("A", "B"):
                out.append((1 if ans == "A" else 2, None, raw))
            else:
                out.append((None, f"answer {ans!r} is not 'A' or 'B'", raw))
        return out


# ---- the offline judge -------------------------------------------------------------------------
class HeuristicFilterJudge:
    """Prefers the slot with the higher heuristic score; ties go to slot 1; ``noise`` flips the
    choice with that probability, drawn from ``(seed, name, pair_id, slot order)`` so the decision
    does not depend on batching or on resuming."""

    def __init__(self, name: str, noise: float = 0.0, seed: int = 0):
        if not 0.0 <= float(noise) <= 1.0:
            raise ValueError(f"HeuristicFilterJudge {name!r}: noise must be in [0, 1], got {noise!r}")
        self.name, self.noise, self.seed = name, float(noise), int(seed)

    def judge_pairs(self, items: Sequence[JudgeItem]) -> list[JudgeAnswer]:
        out: list[JudgeAnswer] = []
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
            out.append((choice, None, raw))
        return out
