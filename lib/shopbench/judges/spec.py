"""The judge role: item → prompt file → gateway call with an output contract → typed judgment.

One shape for every model-graded decision in the project: the PACE judge protocols (seed 000 §4.1,
C.3, D.4), the PADMÉ filter judges (seed 003 H.4) and evaluators (H.5), and the shop verifier's
LLM judges (seed 002 §4.2-4.3, App. J). A :class:`JudgeSpec` names a prompt file and a JSON-schema
contract and supplies three steps:

- ``slots(item)`` → the prompt's ``{slot}`` values; :meth:`JudgeSpec.render` fills the template
  (``str.format``: one pass, literal braces written ``{{ }}``) into one user message;
- :meth:`JudgeSpec.call` → the gateway :class:`~shopbench.llm.Call` (temperature, ``max_tokens``,
  the contract and its name, the repeat index); an unconfigured backbone name is taken as a litellm
  model name (``local/rules``, ``llamacpp/…``);
- :meth:`JudgeSpec.parse` → a :class:`Judgment` holding the typed value of ``interpret(value,
  item)`` or a :class:`ParseFailure` with its reason and kind. The contract is parsed once, by
  :func:`shopbench.llm.parse_output`: a row :class:`ModelJudge` just got from the project's gateway
  (``Gateway.checks_contract``) for the spec's own call carries the gateway's check of that contract (:func:`shopbench.llm.contract.row_outcome`);
  any other row (read back from a call log, or from a run without a schema) has its ``raw_output``
  parsed against the contract here (scoring never trusts or repeats the call). A rule the schema
  cannot state is checked by ``interpret``, which raises :class:`Invalid`. Nothing is coerced:
  DESIGN.md "Parse failures are data".

A *judge* (:class:`Judge`) is anything with a ``name`` and ``judge(items) → outcomes``:
:class:`ModelJudge` binds a spec to a gateway and a backbone; offline reference judges (heuristic
or rule-based) implement the same method in plain Python and return the same outcome types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from ..llm import Backbone, Call, CallResult
from ..llm.contract import parse_output, row_outcome
from ..prompts import Prompt, load_template

I = TypeVar("I")  # noqa: E741 - the item type
V = TypeVar("V")
I_contra = TypeVar("I_contra", contravariant=True)

# the kinds of parse failure (ERROR_KINDS order is the order of the parse-failure tables)
ERROR_KINDS: tuple[str, ...] = (
    "call_error", "empty", "truncated", "invalid_json", "missing_field", "label_outside_set", "out_of_range",
    "wrong_type", "extra_field", "evidence_outside_pool", "contract_violation",
)  # fmt: skip


def error_kind(message: str | None) -> str | None:
    """Classify a parse-failure reason (from :func:`shopbench.llm.parse_output` or a judge's own)."""
    if not message:
        return None
    m = message
    for prefix, kind in (
        ("call error", "call_error"),
        ("empty output", "empty"),
        ("truncated", "truncated"),
        ("invalid JSON", "invalid_json"),
        ("evidence ids outside", "evidence_outside_pool"),
    ):
        if m.startswith(prefix):
            return kind
    for needle, kind in (
        ("is a required property", "missing_field"),
        ("is not one of", "label_outside_set"),
        ("maximum of", "out_of_range"),
        ("minimum of", "out_of_range"),
        ("is not of type", "wrong_type"),
        ("Additional properties are not allowed", "extra_field"),
    ):
        if needle in m:
            return kind
    return "contract_violation"  # fmt: skip


USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "cost_usd", "cache_hit", "latency_s")


class Invalid(ValueError):
    """An answer that satisfies the JSON schema but breaks a rule the schema cannot state."""

    def __init__(self, reason: str, kind: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.kind = kind or error_kind(reason) or "contract_violation"


@dataclass(frozen=True)
class Judgment(Generic[V]):
    """A parsed answer: the judge's name, the call's item id, the typed value and the raw output."""

    judge: str
    item_id: str | None
    value: V
    raw: str | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)  # tokens, cost, cache hit of the call
    ok: ClassVar[bool] = True


@dataclass(frozen=True)
class ParseFailure:
    """An answer that could not be used: the reason and its kind (:data:`ERROR_KINDS`); kind
    ``call_error`` means the call itself failed (no output)."""

    judge: str
    item_id: str | None
    reason: str
    kind: str
    raw: str | None = None
    stage: str = "contract"  # "call": the call failed; "contract": the schema; "rule": interpret
    parsed: Any = None  # the schema-valid answer a rule rejected (stage "rule")
    usage: Mapping[str, Any] = field(default_factory=dict)
    ok: ClassVar[bool] = False

    @property
    def call_error(self) -> bool:
        return self.stage == "call"


Outcome = Judgment | ParseFailure


@runtime_checkable
class Judge(Protocol[I_contra]):
    """Anything that judges items: a name and ``judge(items)`` → one outcome per item, in order."""

    name: str

    def judge(self, items: Sequence[I_contra]) -> list[Outcome]: ...


def resolve_backbone(gateway, backbone: str | Backbone) -> str | Backbone:
    """A configured backbone by name; an unconfigured name is taken as a litellm model name."""
    if isinstance(backbone, Backbone) or backbone in (getattr(gateway, "backbones", None) or {}):
        return backbone
    return Backbone(name=backbone, model=backbone)


@dataclass(frozen=True, kw_only=True)
class JudgeSpec(Generic[I, V]):
    """A judge definition: prompt file, contract and the three steps (module docstring).

    Subclasses provide :meth:`slots` and, where the contract needs more than the schema,
    :meth:`interpret`; :meth:`item_id` / :meth:`repeat` key the gateway call of an item."""

    name: str
    prompt: str  # prompts/<prompt>.txt
    contract: dict | None
    schema_name: str = "output"
    max_tokens: int = 1024
    temperature: float | None = 0  # an int 0, as every judge has always sent (it is part of the cache key)
    source: str = ""  # the seed section it implements

    # ---- the steps a judge supplies ---------------------------------------------------------
    def slots(self, item: I) -> Mapping[str, Any]:
        raise NotImplementedError(f"judge {self.name!r} does not say how to fill its prompt's slots")

    def contract_for(self, item: I) -> dict | None:
        """The item's output contract (the spec's, unless it depends on the item)."""
        return self.contract

    def interpret(self, value: Any, item: I) -> V:
        """The typed judgment of a schema-valid answer; raises :class:`Invalid` on a broken rule."""
        return value

    def item_id(self, item: I) -> str:
        raise NotImplementedError(f"judge {self.name!r} needs explicit item ids")

    def repeat(self, item: I) -> int:
        return 0

    # ---- the shared steps -------------------------------------------------------------------
    def template(self, ctx=None) -> Prompt:
        """The prompt (header stripped); with a run context its hash goes into the provenance."""
        return load_template(self.prompt, ctx, needed_by=f"judge {self.name!r}")

    def render(self, item: I, template: Prompt | str | None = None) -> list[dict]:
        """The chat messages of one call: a single user message holding the filled template."""
        t = template if template is not None else self.template()
        t = t if isinstance(t, Prompt) else Prompt(self.prompt, t, "")
        return [{"role": "user", "content": t.render(**self.slots(item))}]

    def params(self, max_tokens: int | None = None, **extra: Any) -> dict:
        """Generation settings: ``max_tokens`` and ``temperature``, then ``extra``; ``None`` drops a key."""
        p = {"max_tokens": max_tokens or self.max_tokens, "temperature": self.temperature, **extra}
        return {k: v for k, v in p.items() if v is not None}

    def call(self, gateway, backbone: str | Backbone, item: I, *, item_id: str | None = None,
             repeat: int | None = None, params: dict | None = None, messages: list[dict] | None = None,
             template: Prompt | str | None = None) -> Call:  # fmt: skip
        """The gateway call of one item (``messages`` when already rendered)."""
        return gateway.call(
            resolve_backbone(gateway, backbone), item_id if item_id is not None else self.item_id(item),
            messages if messages is not None else self.render(item, template),
            params=params if params is not None else self.params(), schema=self.contract_for(item),
            schema_name=self.schema_name, repeat=self.repeat(item) if repeat is None else repeat,
        )  # fmt: skip

    def parse(self, row: CallResult | Mapping[str, Any], item: I, *, checked: bool = False) -> Outcome:
        """A gateway row (or a call-log row) → :class:`Judgment` or :class:`ParseFailure`.
        ``checked``: the row is the gateway's answer to this spec's own call for ``item`` (same
        contract), so its contract check is read off the row instead of parsing the output again."""
        iid, raw = row.get("item_id"), row.get("raw_output")
        fields: Mapping[str, Any] = row
        usage = {k: fields[k] for k in USAGE_FIELDS if k in fields}
        if row.get("status") == "error":
            reason = f"call error: {row.get('error') or 'no output'}"
            return ParseFailure(self.name, iid, reason, "call_error", raw, stage="call", usage=usage)
        contract = self.contract_for(item)
        parsed = (row_outcome(row) if checked and contract is not None else None) or parse_output(
            raw, contract, row.get("finish_reason")
        )
        if not parsed.ok:
            reason = parsed.error or "contract violation"
            return ParseFailure(
                self.name, iid, reason, error_kind(reason) or "contract_violation", raw, usage=usage
            )
        try:
            return Judgment(self.name, iid, self.interpret(parsed.value, item), raw, usage=usage)
        except Invalid as e:
            return ParseFailure(
                self.name, iid, e.reason, e.kind, raw, stage="rule", parsed=parsed.value, usage=usage
            )


@dataclass
class ModelJudge(Generic[I]):
    """A :class:`JudgeSpec` asked through the gateway: every item of one ``judge`` call goes into
    ONE ``gateway.run`` (concurrent, cached, logged under ``run_id``)."""

    spec: JudgeSpec
    gateway: Any
    backbone: str | Backbone
    run_id: str
    name: str = ""
    params: dict = field(default_factory=dict)  # generation settings for every call
    template: Prompt | str | None = None
    desc: str | None = None

    def __post_init__(self) -> None:
        self.name = self.name or getattr(self.backbone, "name", None) or str(self.backbone)

    def calls(self, items: Sequence[I]) -> list[Call]:
        t = self.template if self.template is not None else self.spec.template()
        return [
            self.spec.call(self.gateway, self.backbone, it, params=dict(self.params), template=t)
            for it in items
        ]

    def judge(self, items: Sequence[I]) -> list[Outcome]:
        items = list(items)
        if not items:
            return []
        kw = {"desc": self.desc} if self.desc else {}
        rows: list[CallResult] = self.gateway.run(self.calls(items), run_id=self.run_id, **kw)
        checked = getattr(self.gateway, "checks_contract", False) is True  # the project's gateway
        return [self.spec.parse(r, it, checked=checked) for r, it in zip(rows, items, strict=True)]
