"""The NL_ASSERTION part of the τ²-retail reward: natural-language assertions judged on the
conversation (τ²-bench ``src/tau2/evaluator/evaluator_nl_assertions.py``; seed 003 §4 builds on its
evaluators; App. C.3 audits the environment reward "Omitting the LLM judge component").

τ²-bench's ``NLAssertionsEvaluator``: a task without assertions scores 1.0; otherwise one LLM call
with the conversation rendered as ``role: content`` lines and the assertions as a Python list,
answering ``{"results": [{"expectedOutcome", "reasoning", "metExpectation"}]}``; the component is
1.0 iff every returned result is met. 40 of the 114 published retail tasks have assertions (task 2:
"Agent should tell the user that there are 10 t-shirt options available.").

Two judges, one outcome type (:class:`~shopbench.judges.Judgment` of a list of checks
``{"nl_assertion", "met", "justification"}``, or a :class:`~shopbench.judges.ParseFailure`):

- :class:`NLAssertionSpec` (through :class:`~shopbench.judges.ModelJudge`, i.e. the gateway): the
  prompt ``prompts/tau2_nl_assertions.txt`` (τ²-bench's system and user texts) under
  :data:`NL_CONTRACT`. Where it differs: τ²-bench takes ``all(met)`` over whatever results come
  back (an empty list counts as met); here the contract wants one result per assertion, in order,
  and anything else is a parse failure (the component is then unjudged, not 1.0).
- :class:`KnownAnswerNLJudge` (offline, ``known-answer``): not a model. It reads the assertion text
  and checks the transcript: every amount, number and term the assertion names (and the task's
  ``communicate_info`` items that occur in it) must appear in some assistant message (commas
  removed, case-insensitive, amounts compared as numbers); an assertion that names no fact ("Agent
  should cancel all pending orders") is met iff the database check passed — the answer key. Its
  numbers are known-answer wherever they are shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..registry import judge
from ..spec import Invalid, JudgeSpec, Judgment, Outcome

__all__ = [
    "KNOWN_ANSWER",
    "NL_CONTRACT",
    "KnownAnswerNLJudge",
    "NLAssertionSpec",
    "NLItem",
    "render_conversation",
]

KNOWN_ANSWER = "known-answer"
NL_CONTRACT = {
    "type": "object",
    "properties": {"results": {"type": "array", "items": {
        "type": "object",
        "properties": {"expectedOutcome": {"type": "string"}, "reasoning": {"type": "string", "maxLength": 2000},
                       "metExpectation": {"type": "boolean"}},
        "required": ["expectedOutcome", "reasoning", "metExpectation"], "additionalProperties": False}}},
    "required": ["results"],
    "additionalProperties": False,
}  # fmt: skip
_SPLIT = "\n<<<USER>>>\n"


@dataclass(frozen=True)
class NLItem:
    """One conversation to judge: its id, the task's assertions, the messages (OpenAI format) and,
    for the known-answer stand-in only, the task's ``communicate_info`` and the database check."""

    item_id: str
    assertions: tuple[str, ...]
    messages: Sequence[Mapping[str, Any]]
    communicate_info: tuple[str, ...] = ()
    db_ok: bool | None = None
    repeat: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)


def render_conversation(messages: Sequence[Mapping[str, Any]]) -> str:
    """τ²-bench's rendering: ``f"{role}: {content}"`` per message, joined by newlines (an
    assistant's tool-call message has content ``None``). The agent's system prompt is not part of
    τ²-bench's trajectory, so ``system`` messages are left out."""
    return "\n".join(f"{m.get('role')}: {m.get('content')}" for m in messages if m.get("role") != "system")


@dataclass(frozen=True, kw_only=True)
class NLAssertionSpec(JudgeSpec[NLItem, list]):
    """τ²-bench's NL-assertion judge as a :class:`~shopbench.judges.JudgeSpec` (module docstring)."""

    name: str = "tau2_nl_assertions"
    prompt: str = "tau2_nl_assertions"
    contract: dict | None = field(default_factory=lambda: NL_CONTRACT)
    schema_name: str = "tau2_nl_assertions"
    max_tokens: int = 2048
    source: str = "tau2-bench src/tau2/evaluator/evaluator_nl_assertions.py (seed 003 §4)"

    def slots(self, item: NLItem) -> Mapping[str, Any]:
        return {
            "conversation": render_conversation(item.messages),
            "expected_outcomes": str(list(item.assertions)),
        }

    def render(self, item: NLItem, template=None) -> list[dict]:
        t = template if template is not None else self.template()
        text = t.render(**self.slots(item)) if hasattr(t, "render") else str(t).format(**self.slots(item))
        system, _, user = text.partition(_SPLIT)
        return [
            {"role": "system", "content": "\n" + system},
            {"role": "user", "content": "\n" + user.rstrip("\n")},
        ]

    def item_id(self, item: NLItem) -> str:
        return item.item_id

    def repeat(self, item: NLItem) -> int:
        return item.repeat

    def interpret(self, value: Any, item: NLItem) -> list:
        results = value["results"]
        if len(results) != len(item.assertions):
            raise Invalid(f"{len(results)} result(s) for {len(item.assertions)} assertion(s): the contract wants one "
                          "per assertion, in order")  # fmt: skip
        return [{"nl_assertion": a, "met": bool(r["metExpectation"]), "justification": r["reasoning"],
                 "judge_repeated": r["expectedOutcome"]} for a, r in zip(item.assertions, results, strict=True)]  # fmt: skip


@judge
def tau2_nl_assertions() -> NLAssertionSpec:
    return NLAssertionSpec()


_AMOUNT = re.compile(r"\$?\d[\d,]*(?:\.\d+)?")


def _numbers(text: str) -> set[float]:
    out = set()
    for tok in _AMOUNT.findall(text):
        try:
            out.add(round(float(tok.replace("$", "").replace(",", "").rstrip(".")), 2))
        except ValueError:
            continue
    return out


class KnownAnswerNLJudge:
    """The offline ``known-answer`` stand-in (module docstring): no model, reads the answer key."""

    name = KNOWN_ANSWER
    evidence = KNOWN_ANSWER

    @staticmethod
    def check(item: NLItem) -> list[dict]:
        said = [str(m.get("content") or "") for m in item.messages if m.get("role") == "assistant"]
        said_text = " ".join(said).replace(",", "").lower()
        said_nums = _numbers(" ".join(said))
        out = []
        for a in item.assertions:
            body = a.split(" that ", 1)[-1] if " that " in a else a
            nums = _numbers(re.sub(r"#W\d+", "", body))
            terms = [x for x in item.communicate_info if x.lower() in a.lower() and not _numbers(x)]
            if nums or terms:
                miss = [f"{n:g}" for n in nums if n not in said_nums] + [
                    t for t in terms if t.lower() not in said_text
                ]
                out.append({"nl_assertion": a, "met": not miss,
                            "justification": (f"known-answer: not said: {miss}" if miss else
                                              "known-answer: every fact it names was said")})  # fmt: skip
            else:
                met = bool(item.db_ok)
                out.append({"nl_assertion": a, "met": met, "justification": "known-answer: names no fact; met iff the "
                            f"database check passed ({item.db_ok})"})  # fmt: skip
        return out

    def judge(self, items: Sequence[NLItem]) -> list[Outcome]:
        return [Judgment(self.name, it.item_id, self.check(it)) for it in items]
