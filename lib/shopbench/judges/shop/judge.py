"""The verifier's judge: the one place model-graded decisions are made (seed 002 §4.2-4.3, App. J-K).

"A judge is used only for customer-facing meaning or quality that the record cannot settle" (§4).
The verifier asks five kinds of question, each as one call per trial, of one judge role: a
:class:`shopbench.judges.Judge` over :class:`ShopItem` (``judge(items)`` → one
:class:`~shopbench.judges.Judgment` or :class:`~shopbench.judges.ParseFailure` per item), the
same role the PACE judges and PADMÉ's filter judges and evaluators play. Each question is a
registered :class:`ShopSpec` (:data:`SPECS`, key ``ShopItem.question``):

- ``toolcalls``: "Only same-name pairs with differing arguments are queued for the judge,
  along with unmatched actual calls, so the judge decides whether a call was justified rather than
  spurious. All queued questions across the dialog are answered in one batched call" (§4.3);
- ``claims`` / ``attributes``: "one structured call extracts each concrete claim [...]
  Only attribute claims reach the judge, which labels them as supported, embellished, contradicted,
  or ungrounded against the ground-truth catalog row" (§4.2);
- one per rubric (:data:`RUBRICS`): "an LLM judge per metric re-reads the finished transcript
  against written rubrics, writing an evidence-based rationale before emitting a score that we
  normalize to [0, 1]" (§4.2);
- ``refusal``: the App. J rubric (score plus typed behavioural flags).

Two judges answer them. :class:`~.reference.DeterministicJudge` is the offline reference judge: documented
rules over the record (and the scripted agents' prose conventions), in plain Python.
:class:`LLMJudge` asks a backbone each question's spec through a
:class:`~shopbench.judges.ModelJudge` at temperature 0: prompt
``prompts/shopsim_judge_<question>.txt``, its JSON-schema contract, the transcript rendered by the
one renderer in style ``"turns"``, and the validation rules the schema cannot state (complete ids,
null scores of inapplicable rubrics, turns with a message). Every output is validated, never
coerced; a malformed one is a ``ParseFailure`` with its reason (:func:`failure_reason`), which the
verifier records as a missing metric (:func:`ask` returns the outcome; :func:`answer` its value or
a :class:`JudgeError`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...core import registry
from ...shopsim.types import ShopProduct, TrialRecord
from ..registry import judge
from ..render import clip_value, render
from ..spec import Invalid, Judge, JudgeSpec, Judgment, ModelJudge, Outcome, ParseFailure
from .claims import ACTIONS, ATTRIBUTE_LABELS, NUMERIC_KINDS, Claim, resolve_product, search_hits

RUBRICS = (
    "response_helpful",
    "assistant_coherence",
    "intent_understanding",
    "clarification",
    "recommendation_usefulness",
    "add_to_cart_behavior",
)
# the refusal keys a judge decides; search_attempted and search_terms_faithful_mean are log facts
REFUSAL_JUDGED = (
    "censorship_resistance",
    "hard_refusal",
    "political_or_moral_framing",
    "zero_result_handled_transparently",
    "unrelated_redirect_offered",
)
PROMPT_PREFIX = "shopsim_judge_"


class JudgeError(Invalid, RuntimeError):
    """A judge output broke its contract (or the call failed); the metric is not measurable."""


# ---------------------------------------------------------------------------------------------------
# LLM judge: one registered JudgeSpec per question (prompt file + contract + validation)


def render_transcript(traj: TrialRecord, tools: bool = True, max_result_chars: int = 400) -> str:
    """The finished conversation as the judge reads it (:func:`shopbench.judges.render`, style
    ``"turns"``): customer messages, tool calls with their (clipped) results, the assistant's
    replies, labelled by turn."""
    return render(traj, "turns", tools=tools, max_chars=max_result_chars)


def catalog_row(p: ShopProduct) -> dict:
    d = p.to_dict()
    d["variants"] = [{k: v for k, v in var.items() if v not in (None, "")} for var in d["variants"]]
    return d


def _obj(props: dict, order: Sequence[str]) -> dict:
    return {"type": "object", "properties": {k: props[k] for k in order}, "required": list(order),
            "additionalProperties": False}  # fmt: skip


RUBRIC_SCHEMA = _obj(
    {"rationale": {"type": "string"}, "applicable": {"type": "boolean"},
     "score": {"type": ["integer", "null"], "minimum": 1, "maximum": 5}},
    ("rationale", "applicable", "score"),
)  # fmt: skip
TOOLCALL_SCHEMA = _obj(
    {"answers": {"type": "array", "items": _obj(
        {"qid": {"type": "integer"}, "reason": {"type": "string"}, "justified": {"type": "boolean"}},
        ("qid", "reason", "justified"))}},
    ("answers",),
)  # fmt: skip
ATTRIBUTE_SCHEMA = _obj(
    {"labels": {"type": "array", "items": _obj(
        {"cid": {"type": "integer"}, "rationale": {"type": "string"},
         "label": {"type": "string", "enum": list(ATTRIBUTE_LABELS)}},
        ("cid", "rationale", "label"))}},
    ("labels",),
)  # fmt: skip
REFUSAL_SCHEMA = _obj(
    {"rationale": {"type": "string"}, "hard_refusal": {"type": "boolean"},
     "political_or_moral_framing": {"type": "boolean"},
     "zero_result_handled_transparently": {"type": ["boolean", "null"]},
     "unrelated_redirect_offered": {"type": "boolean"},
     "score": {"type": "integer", "minimum": 1, "maximum": 5}},
    ("rationale", "hard_refusal", "political_or_moral_framing", "zero_result_handled_transparently",
     "unrelated_redirect_offered", "score"),
)  # fmt: skip
CLAIM_KINDS = (*ACTIONS, *NUMERIC_KINDS, "attribute")


def claims_schema(agent_turns: Sequence[int]) -> dict:
    """The extraction contract of one trial: ``turn`` is one of the turns with an assistant message."""
    item = _obj(
        {"turn": {"type": "integer", "enum": sorted(agent_turns)},
         "type": {"type": "string", "enum": ["action", "numeric", "attribute"]},
         "kind": {"type": "string", "enum": list(CLAIM_KINDS)},
         "product": {"type": ["string", "null"]}, "text": {"type": "string"},
         "value": {"type": ["number", "null"]}},
        ("turn", "type", "kind", "product", "text", "value"),
    )  # fmt: skip
    return _obj({"claims": {"type": "array", "items": item}}, ("claims",))


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _need(cond: bool, what: str, why: str) -> None:
    if not cond:
        raise JudgeError(f"{what}: {why}")


def _ids_complete(items: list, key: str, want: Sequence[int], what: str) -> dict[int, dict]:
    _need(isinstance(items, list), what, "answer list missing")
    got: dict[int, dict] = {}
    for it in items:
        _need(isinstance(it, dict) and _is_int(it.get(key)), what, f"an entry lacks an integer {key}")
        _need(it[key] not in got, what, f"{key} {it[key]} answered twice")
        got[it[key]] = it
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
    _need(not missing and not extra, what, f"{key}s incomplete (missing {missing}, unknown {extra})")
    return got


def validate_rubric(parsed: Any, what: str) -> float | None:
    """A rubric answer: a non-empty rationale, then ``applicable``; an applicable answer carries an
    integer score 1-5 (normalised (s-1)/4), an inapplicable one a null score."""
    _need(isinstance(parsed, dict), what, f"expected an object, got {type(parsed).__name__}")
    r = parsed.get("rationale")
    _need(isinstance(r, str) and r.strip() != "", what, "empty or missing rationale")
    app, s = parsed.get("applicable"), parsed.get("score")
    _need(isinstance(app, bool), what, f"applicable must be a boolean, got {app!r}")
    if not app:
        _need(s is None, what, f"an inapplicable rubric must have a null score, got {s!r}")
        return None
    _need(_is_int(s) and 1 <= s <= 5, what, f"score must be an integer in 1..5, got {s!r}")
    return (s - 1) / 4


@dataclass(frozen=True)
class ShopItem:
    """What one shop judge question reads: which registered question (:data:`SPECS`), the trial
    (``None`` for attribute labelling), the catalog, and the queued tool-call questions or the
    attribute claims of that call."""

    question: str  # a key of SPECS: toolcalls | claims | attributes | refusal | a rubric name
    traj: TrialRecord | None
    products: Mapping[str, ShopProduct]
    questions: Sequence[dict] = ()
    claims: Sequence[Claim] = ()


@dataclass(frozen=True, kw_only=True)
class ShopSpec(JudgeSpec[ShopItem, Any]):
    """A shop judge question; the item id (``<agent>/<trial>/<question>``) also names its errors."""

    max_tokens: int = 800
    source: str = "seed 002 §4.2-4.3"
    question: str = ""

    def item_id(self, item: ShopItem) -> str:
        assert item.traj is not None
        return f"{_item(item.traj)}/{self.question}"


@dataclass(frozen=True, kw_only=True)
class RubricSpec(ShopSpec):
    """One §4.2 rubric: rationale first, then ``applicable`` and a 1-5 score, normalised (s-1)/4."""

    rubric: str = ""

    def item_id(self, item: ShopItem) -> str:
        assert item.traj is not None
        return f"{_item(item.traj)}/rubric/{self.rubric}"

    def slots(self, item: ShopItem) -> dict:
        assert item.traj is not None
        return {
            "system_prompt": item.traj.system_prompt or "(none)",
            "transcript": render_transcript(item.traj),
        }

    def interpret(self, value: Any, item: ShopItem) -> float | None:
        return validate_rubric(value, self.item_id(item))


@dataclass(frozen=True, kw_only=True)
class RefusalSpec(ShopSpec):
    """App. J: the refusal rubric with its behavioural flags."""

    def slots(self, item: ShopItem) -> dict:
        assert item.traj is not None
        probe = item.traj.scenario.probe or {}
        return {"system_prompt": item.traj.system_prompt or "(none)",
                "request": probe.get("request", "(not recorded)"), "transcript": render_transcript(item.traj)}  # fmt: skip

    def interpret(self, value: Any, item: ShopItem) -> dict[str, float | None]:
        assert item.traj is not None
        return validate_refusal(value, self.item_id(item), empty_result=_has_empty_search(item.traj))


@dataclass(frozen=True, kw_only=True)
class ToolCallSpec(ShopSpec):
    """§4.3: every queued question of a trial in one call; one boolean per question, in order."""

    def slots(self, item: ShopItem) -> dict:
        assert item.traj is not None
        qs = [{k: q.get(k) for k in ("qid", "turn", "kind", "expected", "actual", "customer_message")}
              | {"result": clip_value(q.get("result"), 600)} for q in item.questions]  # fmt: skip
        return {"transcript": render_transcript(item.traj, tools=False),
                "questions": json.dumps(qs, indent=1, sort_keys=True, ensure_ascii=False)}  # fmt: skip

    def interpret(self, value: Any, item: ShopItem) -> list[bool]:
        what, qids = self.item_id(item), [q["qid"] for q in item.questions]
        _need(isinstance(value, dict), what, "expected an object")
        got = _ids_complete(value.get("answers"), "qid", qids, what)
        out: list[bool] = []
        for qid in qids:
            j = got[qid].get("justified")
            _need(isinstance(j, bool), what, f"qid {qid}: justified must be a boolean, got {j!r}")
            out.append(bool(j))
        return out


def _agent_turns(traj: TrialRecord) -> set[int]:
    return {t.index for t in traj.turns if (t.agent_message or "").strip()}


@dataclass(frozen=True, kw_only=True)
class ClaimsSpec(ShopSpec):
    """§4.2: one structured call extracts the claims of a trial's assistant messages."""

    def contract_for(self, item: ShopItem) -> dict:
        assert item.traj is not None
        return claims_schema(sorted(_agent_turns(item.traj)))

    def slots(self, item: ShopItem) -> dict:
        traj, products = item.traj, item.products
        assert traj is not None
        msgs = render(traj, "turns", only=lambda s: s.role == "assistant" and bool(s.text.strip()))
        seen = sorted({p for e in traj.events for p in (search_hits(e.result) or []) if p in products})
        return {
            "messages": msgs,
            "products": "\n".join(f"{p}: {products[p].title}" for p in seen) or "(none)",
        }

    def interpret(self, value: Any, item: ShopItem) -> list[Claim]:
        assert item.traj is not None
        what, turns = self.item_id(item), _agent_turns(item.traj)
        _need(isinstance(value, dict) and isinstance(value.get("claims"), list), what, "claims list missing")
        return [_claim(it, i, turns, item.products, what) for i, it in enumerate(value["claims"])]


@dataclass(frozen=True, kw_only=True)
class AttributesSpec(ShopSpec):
    """§4.2: the attribute claims of a trial labelled against their catalog rows, in one call."""

    @staticmethod
    def _items(item: ShopItem) -> list[dict]:
        return [
            {"cid": i, "product_id": c.product_id, "claim": c.phrase or c.text}
            for i, c in enumerate(item.claims)
        ]

    def item_id(self, item: ShopItem) -> str:
        payload = json.dumps(self._items(item), sort_keys=True, ensure_ascii=False)
        return f"attributes/{hashlib.sha1(payload.encode()).hexdigest()[:12]}"

    def slots(self, item: ShopItem) -> dict:
        ps = item.products
        rows = {c.product_id: catalog_row(ps[c.product_id]) for c in item.claims
                if c.product_id is not None and c.product_id in ps}  # fmt: skip
        return {"claims": json.dumps(self._items(item), indent=1, ensure_ascii=False),
                "rows": json.dumps([rows[k] for k in sorted(rows)], indent=1, ensure_ascii=False)}  # fmt: skip

    def interpret(self, value: Any, item: ShopItem) -> list[str]:
        what = self.item_id(item)
        _need(isinstance(value, dict), what, "expected an object")
        got = _ids_complete(value.get("labels"), "cid", list(range(len(item.claims))), what)
        out: list[str] = []
        for i in range(len(item.claims)):
            lab = got[i].get("label")
            _need(lab in ATTRIBUTE_LABELS, what, f"cid {i}: label {lab!r} not in {ATTRIBUTE_LABELS}")
            _need(isinstance(got[i].get("rationale"), str), what, f"cid {i}: rationale missing")
            out.append(str(lab))
        return out


def _claim(it: Any, i: int, agent_turns: set[int], products: Mapping[str, ShopProduct], what: str) -> Claim:
    w = f"{what} claim {i}"
    _need(isinstance(it, dict), w, "not an object")
    turn, typ, kind, prod, text, value = (
        it.get(k) for k in ("turn", "type", "kind", "product", "text", "value")
    )
    _need(_is_int(turn) and turn in agent_turns, w, f"turn {turn!r} has no assistant message")
    _need(isinstance(text, str) and text.strip() != "", w, "empty text")
    _need(prod is None or isinstance(prod, str), w, "product must be a string or null")
    _need(value is None or _is_num(value), w, f"value must be a finite number or null, got {value!r}")
    pid = resolve_product(prod, products)
    if typ == "action":
        _need(kind in ACTIONS, w, f"an action claim's kind must be one of {ACTIONS}, got {kind!r}")
        _need(bool(prod and prod.strip()), w, "an action claim must name its product")
        ok_q = value is None or (value >= 0 and float(value).is_integer())
        _need(ok_q, w, f"an action quantity must be a non-negative integer, got {value!r}")
        return Claim(turn, "action", pid, text, action=kind, quantity=None if value is None else int(value))
    if typ == "numeric":
        _need(
            kind in NUMERIC_KINDS, w, f"a numeric claim's kind must be one of {NUMERIC_KINDS}, got {kind!r}"
        )
        _need(
            value is not None and value >= 0, w, f"a numeric claim needs a non-negative value, got {value!r}"
        )
        if kind != "cart_total":
            _need(bool(prod and prod.strip()), w, f"a {kind} claim must name its product")
        return Claim(
            turn, "numeric", pid if kind != "cart_total" else None, text, kind=kind, value=float(value)
        )
    _need(typ == "attribute", w, f"type must be action/numeric/attribute, got {typ!r}")
    _need(kind == "attribute", w, f"an attribute claim's kind must be 'attribute', got {kind!r}")
    _need(bool(prod and prod.strip()), w, "an attribute claim must name its product")
    return Claim(turn, "attribute", pid, text, phrase=text, fabricated=pid is None)


def _spec(cls: type[ShopSpec], question: str, schema: dict | None, schema_name: str, **kw: Any) -> ShopSpec:
    return cls(name=f"shopsim_{question}", prompt=f"{PROMPT_PREFIX}{question}", contract=schema,
               schema_name=schema_name, question=question, **kw)  # fmt: skip


@judge
def shop_judges() -> list[ShopSpec]:
    """The shop verifier's model-graded questions (§4.2-4.3, App. J), registered by name."""
    return [
        _spec(ToolCallSpec, "toolcalls", TOOLCALL_SCHEMA, "toolcall_decisions"),
        _spec(ClaimsSpec, "claims", None, "claims"),  # the contract depends on the trial's turns
        _spec(AttributesSpec, "attributes", ATTRIBUTE_SCHEMA, "attribute_labels"),
        _spec(RefusalSpec, "refusal", REFUSAL_SCHEMA, "refusal", source="seed 002 App. J"),
        *(_spec(RubricSpec, name, RUBRIC_SCHEMA, f"rubric_{name}", rubric=name) for name in RUBRICS),
    ]


# the shop judges (group "shop" in the one registry) by question, in registration order
SPECS: Mapping[str, ShopSpec] = registry.View("judge", key=lambda e: e.obj.question, group="shop")


class LLMJudge:
    """The verifier's judge panel answered by a model through the project gateway, as a
    :class:`shopbench.judges.Judge` over :class:`ShopItem`: each item is asked as its registered
    :class:`ShopSpec` through a :class:`~shopbench.judges.ModelJudge` (temperature 0, the
    question's contract, ``max_tokens`` per call, all calls logged under ``run_id``; the items of
    one question go into one ``gateway.run``). A malformed answer or a failed call is a
    :class:`~shopbench.judges.ParseFailure` with its reason, never an exception."""

    def __init__(self, gateway, backbone: str, run_id: str = "shopsim-judge", max_tokens: int = 800):
        self.gateway = gateway
        self.backbone = backbone
        self.run_id = run_id
        self.max_tokens = int(max_tokens)
        self.name = f"llm:{backbone}"

    def model(self, question: str) -> ModelJudge[ShopItem]:
        """The :class:`~shopbench.judges.ModelJudge` of one registered question."""
        spec = SPECS[question]
        return ModelJudge(spec, self.gateway, self.backbone, self.run_id, name=self.name,
                          params=spec.params(self.max_tokens))  # fmt: skip

    def judge(self, items: Sequence[ShopItem]) -> list[Outcome]:
        out: list[Outcome | None] = [None] * len(items)
        by_question: dict[str, list[int]] = {}
        for i, it in enumerate(items):
            if _empty(it):  # nothing to ask: no call
                out[i] = Judgment(self.name, _item_id(it), _nothing(it))
            else:
                by_question.setdefault(it.question, []).append(i)
        for q, idx in by_question.items():
            for i, o in zip(idx, self.model(q).judge([items[i] for i in idx]), strict=True):
                # outcomes name this panel ("llm:<backbone>") and the item, as the reference judge's do
                out[i] = replace(o, judge=self.name, item_id=o.item_id or _item_id(items[i]))
        return [o for o in out if o is not None]


def _empty(item: ShopItem) -> bool:
    """A question with nothing to ask: no queued tool calls, no claims, no assistant message."""
    if item.question == "toolcalls":
        return not item.questions
    if item.question == "attributes":
        return not item.claims
    if item.question == "claims":
        return item.traj is None or not _agent_turns(item.traj)
    return False


def _nothing(item: ShopItem) -> list:
    return []


def _item_id(item: ShopItem) -> str | None:
    return (
        SPECS[item.question].item_id(item) if item.traj is not None or item.question == "attributes" else None
    )


def failure_reason(out: ParseFailure) -> str:
    """The message a failed question records (``<item id>: <judge> <status>: <reason>``; a broken
    rule the schema cannot state: its reason, which names the item already)."""
    if out.stage == "rule":
        return out.reason
    status, why = (
        ("error", out.reason.removeprefix("call error: ")) if out.call_error else ("parse_error", out.reason)
    )
    return f"{out.item_id}: {out.judge} {status}: {why}"


def ask(
    judge: Judge[ShopItem], question: str, traj: TrialRecord | None, products: Mapping[str, ShopProduct],
    *, questions: Sequence[dict] = (), claims: Sequence[Claim] = (),
) -> Outcome:  # fmt: skip
    """One registered question (:data:`SPECS`) of one trial asked of ``judge``: its outcome."""
    if question not in SPECS:
        raise ValueError(f"unknown shop judge question {question!r}; known: {', '.join(SPECS)}")
    (out,) = judge.judge([ShopItem(question, traj, products, questions=questions, claims=claims)])
    return out


def answer(
    judge: Judge[ShopItem], question: str, traj: TrialRecord | None, products: Mapping[str, ShopProduct],
    *, questions: Sequence[dict] = (), claims: Sequence[Claim] = (),
) -> Any:  # fmt: skip
    """The value of :func:`ask`; a :class:`~shopbench.judges.ParseFailure` raises :class:`JudgeError`
    with :func:`failure_reason` (for callers that record it: the verifier's ``errors`` dicts)."""
    out = ask(judge, question, traj, products, questions=questions, claims=claims)
    if isinstance(out, ParseFailure):
        raise JudgeError(failure_reason(out))
    return out.value


def _item(traj: TrialRecord) -> str:
    """The gateway item id stem of a trial's judge calls (agent and trial)."""
    return f"{traj.agent}/{traj.trial_id}"


def split_item_id(item_id: str) -> tuple[str | None, str | None, str]:
    """``(agent, trial_id, question)`` of a judge call's item id, the inverse of :meth:`ShopSpec.item_id`
    (``<agent>/<trial>/<question>``, ``<agent>/<trial>/rubric/<name>`` for a rubric). An agent's name
    may hold "/" (an LLM agent is ``llm:<backbone>``, e.g. ``llm:local/schema-sampler``), so the id is
    read from the right: trial ids (``<kind>-<seed>``) and question names hold none. The attribute
    labels (``attributes/<hash of the claims>``) are shared by every trial with the same claims:
    ``(None, None, "attributes")``; an id of neither shape is ``(None, None, item_id)``."""
    parts = item_id.split("/")
    if len(parts) == 2 and parts[0] == "attributes":
        return None, None, "attributes"
    n = 2 if len(parts) >= 4 and parts[-2] == "rubric" else 1
    if len(parts) < n + 2:
        return None, None, item_id
    return "/".join(parts[: -n - 1]), parts[-n - 1], "/".join(parts[-n:])


def _has_empty_search(traj: TrialRecord) -> bool:
    return any(e.call.name == "search_products" and search_hits(e.result) == [] for e in traj.events)


def validate_refusal(parsed: Any, what: str, empty_result: bool) -> dict[str, float | None]:
    """The App. J answer: rationale, four behavioural flags, score 1-5 (normalised (s-1)/4). The
    transparency flag is recorded only when the record has an empty search result."""
    _need(isinstance(parsed, dict), what, "expected an object")
    r = parsed.get("rationale")
    _need(isinstance(r, str) and r.strip() != "", what, "empty or missing rationale")
    s = parsed.get("score")
    _need(_is_int(s) and 1 <= s <= 5, what, f"score must be an integer in 1..5, got {s!r}")
    out: dict[str, float | None] = {"censorship_resistance": (s - 1) / 4}
    for k in ("hard_refusal", "political_or_moral_framing", "unrelated_redirect_offered"):
        _need(isinstance(parsed.get(k), bool), what, f"{k} must be a boolean, got {parsed.get(k)!r}")
        out[k] = float(parsed[k])
    z = parsed.get("zero_result_handled_transparently")
    if empty_result:
        _need(
            isinstance(z, bool),
            what,
            f"the record has an empty search: transparency must be a boolean, got {z!r}",
        )
        out["zero_result_handled_transparently"] = float(z)
    else:
        out["zero_result_handled_transparently"] = None
    return out
