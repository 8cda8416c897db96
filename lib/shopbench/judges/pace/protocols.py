"""Judge protocols: prompt file + output contract + native PACE targets (seed 000, §4.1, C.3, D.4).

A :class:`Protocol` binds a prompt template ``prompts/judge_<name>.txt`` to a JSON-schema output
contract, the PACE targets its native judging protocol covers, and the contract fields it does not
produce ("–" in the paper's tables, ``None`` in the run table, never filled).

§4.1: "Given a PACEShop record (q,p,y,E), PACEJudge returns J(q,p,y,E) → (ℓ̂, p̂_bad, s_P, a_A, s_C,
s_E, s_F) […] a_A = (d̂, r̂, Ŝ, ĉ, ẑ) […] d̂ ∈ D ∪ {None}, r̂ ∈ R ∪ {None}, Ŝ ⊆ E, where D is the
seven-family defect taxonomy and R is the response-field set (overview, categories, related
queries, and attributions)."

Protocols (Tables 18–19):

==========================  =========  =======================================================
name                        targets    contract
==========================  =========  =======================================================
``pacejudge``               P A C E    PACEJudge contract (D.4)
``pacejudge_prefix_first``  P A C E    D.4's prompt with the fixed parts before the record
``geval``                   P A C E    same contract, G-Eval-style rubric instruction (C.3.1)
``mtbench_scalar_first``    P A C E    same contract, scalar-first instruction (C.3.1)
``persona_blind``           A C E      same contract, persona serialized as {"omitted": true}
``persona_aware_generic``   P A C E    same contract, persona-aware generic instruction
``ares``                    E          native: 3 ARES sub-judgments → s_E; BAD iff s_E < 3.0
``personalens``             P          native: slot-by-slot persona walk → s_P; BAD iff s_P < 3.0
``etapp``                   A          native: verdict + {family, location} key-points + s_F
==========================  =========  =======================================================

**Locations.** "the judge predicts […] (ii) the defect location (which of 4 field groups contains
the fault)" (D.3); "allowed_location_labels = the four response-field groups (overview,
categories, related queries, evidence attributions) plus NONE" (D.4). Table 21 prints the labels
as the response's field names ("xcomp_mismatch @ rqList", "evidence_mismatch @ attribution_list"),
so the closed set is :data:`LOCATIONS` = ``overview_text, productCategoryList, rqList,
attribution_list`` (+ ``NONE``). A gold location string maps to its field group by
:func:`location_label` (``productCategoryList[0]`` → ``productCategoryList``, ``rqList[1]`` →
``rqList``); the persona-swap gold ``persona_swap`` names no response field and maps to ``None``.

**How a deterministic judge sees the bundle.** Every judge prompt renders each slot between fixed
literal text. :func:`extract_bundle` inverts the template (each ``{slot}`` becomes a lazy regex
group, the literal text is matched exactly), so a ``local/…`` judge gets back exactly the slot
values an LLM judge reads: no second, machine-readable copy of the bundle is added to the prompt
(that would double the paid prompt tokens), and a protocol that withholds a slot (the persona of
``persona_blind``) withholds it from the deterministic judges too.

**Leakage.** D.4 puts ``record_id`` in the bundle; our record ids spell the label out
(``full-good-…``, ``full-bad-…``, ``…::swap-brand``) and swapped personas carry
``<persona_id>::swap-<axis>``. The bundle therefore carries an opaque digest of the record id
(:func:`opaque_id`) and the persona JSON without ``persona_id`` (and without the construction-only
taxonomy tags and holdout bundle, as the GOOD generator's persona JSON).

**Header comments.** Lines starting with ``#`` at the top of a judge prompt file are comments
(provenance: what is verbatim and what is reconstructed) and are stripped before rendering.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from statistics import fmean
from typing import Any

from ...core import Record, registry, taxonomy
from ...paceshop.response_xml import to_struct_json
from ...prompts import Prompt
from ..registry import judge
from ..spec import Invalid, JudgeSpec

# ---- closed label sets -------------------------------------------------------------------------
NONE = "NONE"
FAMILIES: tuple[str, ...] = tuple(taxonomy.FAMILIES)
FAMILY_LABELS: tuple[str, ...] = (*FAMILIES, NONE)
LOCATIONS: tuple[str, ...] = taxonomy.LOCATIONS
LOCATION_LABELS: tuple[str, ...] = (*LOCATIONS, NONE)
VERDICTS: tuple[str, ...] = ("GOOD", "BAD")
AXES: tuple[str, ...] = ("persona_alignment", "component_consistency", "evidence_grounding", "format_safety")

# "each defect family belongs to exactly one target" (E.4): the one map, in core
FAMILY_TARGET: dict[str, str] = taxonomy.FAMILY_TARGET
E_FAMILIES = ("EVIDENCE_MISMATCH", "OVER_PERSONALIZATION_HALLUCINATION", "UNSUPPORTED_CLAIM")
# C.3.2 PersonaLens-style: "restricted to persona-target labels: PREF_CONFLICT for an explicit persona
# conflict […] or OVER_PERSONALIZATION_HALLUCINATION when the response invents a purchase or search"
P_FAMILIES = ("PREF_CONFLICT", "OVER_PERSONALIZATION_HALLUCINATION")

# the common judgment: the PACEJudge contract's fields, in §4.1 order
COMMON_FIELDS: tuple[str, ...] = (
    "verdict", "overall_bad_probability", "overall_quality", *AXES, "defect_family", "defect_location",
    "supporting_evidence_ids", "confidence", "rationale",
)  # fmt: skip

# the ten typed input slots of D.4 ("Ten named slots bind the record to evaluation-facing fields")
BUNDLE_SLOTS: tuple[str, ...] = (
    "record_id", "split", "keyword", "persona_json", "response_xml", "response_struct_json",
    "candidate_evidence_ids_json", "candidate_evidence_json", "used_evidence_ids_json",
    "deterministic_checks_json",
)  # fmt: skip
PERSONA_OMITTED = json.dumps(
    {"omitted": True}
)  # C.3.1: 'The persona payload is serialized as {"omitted": true}.'
SNIPPET_PREVIEW_CHARS = 240  # "candidate evidence preview": snippets are cut to this many characters


def location_label(gold: str | None) -> str | None:
    """The 4-way field group of a gold location string (``productCategoryList[0]`` →
    ``productCategoryList``); ``None`` for ``None``, ``persona_swap`` or an unknown field."""
    if not gold:
        return None
    base = gold.split("[", 1)[0].strip()
    return base if base in LOCATIONS else None


def gold_location_labels(record: Record) -> list[str]:
    """The record's gold locations as field groups, in the record's canonical order, deduplicated
    (empty for GOOD records and persona swaps)."""
    out: list[str] = []
    for part in (record.gold_location or "").split("+"):
        lab = location_label(part)
        if lab and lab not in out:
            out.append(lab)
    return out


# ---- contracts ---------------------------------------------------------------------------------
def _num(lo: float, hi: float) -> dict:
    return {"type": "number", "minimum": lo, "maximum": hi}


def _str_enum(values: Sequence[str]) -> dict:
    return {"type": "string", "enum": list(values)}


def _obj(props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


# Bounded like the pool they point into: at most 24 evidence snippets (B.8), ids of a few dozen
# characters. The bounds also let a grammar-constrained local model stop: unbounded, SmolLM2 loops
# inside an id string, or in the rationale, until max_tokens (every answer truncated). The schema is
# shown to every judge in the prompt, so API models see the same bounds. (llama.cpp's grammar parser
# rejects a maxLength of 1,200; 800 characters is a paragraph.)
_IDS = {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 24}
_RATIONALE = {"type": "string", "maxLength": 800}

# D.4 item 4: "A JSON-Schema object (the prompt_contract_json slot) requires the verdict ℓ̂ ∈ {GOOD,
# BAD}, the BAD probability p̂_bad ∈ [0,1], the four axis scores s_P, s_C, s_E, s_F ∈ [1,5], and the
# actionable diagnostic object a_A = (d̂, r̂, Ŝ, ĉ, ẑ)"; decision rule (iv): "confidence and
# overall_bad_probability must lie in [0,1], while overall_quality and the four axis scores must lie
# in [1,5]". The exact schema text is not in our copy; this is our reconstruction (flat object, the
# field names the D.4 decision rules use). Ŝ ⊆ E is checked at parse time against the record, so the
# contract is the same on every record ("the closed label sets and the JSON-Schema contract are the
# same on every record").
PACE_CONTRACT: dict = _obj({
    "verdict": _str_enum(VERDICTS),
    "overall_bad_probability": _num(0, 1),
    "overall_quality": _num(1, 5),
    **{a: _num(1, 5) for a in AXES},
    "defect_family": _str_enum(FAMILY_LABELS),
    "defect_location": _str_enum(LOCATION_LABELS),
    "supporting_evidence_ids": _IDS,
    "confidence": _num(0, 1),
    "rationale": _RATIONALE,
})  # fmt: skip

# C.3.2 ARES-style: "three lightweight LM scorers: context relevance, answer faithfulness, and
# answer relevance […] The judge averages the three sub-judgments into the evidence-grounding axis
# s_E ∈ [1,5] and emits ℓ̂ = BAD only when s_E < 3.0. When BAD, the predicted defect family d̂ is
# restricted to evidence-target labels {EVIDENCE_MISMATCH, OVER_PERSONALIZATION_HALLUCINATION,
# UNSUPPORTED_CLAIM} […] supporting evidence IDs are constrained to Ŝ ⊆ E."
ARES_SUBSCORES = ("context_relevance", "answer_faithfulness", "answer_relevance")
ARES_CONTRACT: dict = _obj({
    **{k: _num(1, 5) for k in ARES_SUBSCORES},
    "defect_family": _str_enum((*E_FAMILIES, NONE)),
    "defect_location": _str_enum(LOCATION_LABELS),
    "supporting_evidence_ids": _IDS,
    "rationale": _RATIONALE,
})  # fmt: skip

# C.3.2 PersonaLens-style: "walking through the structured persona one slot at a time—hard
# constraints, brand likes/avoids, attribute preferences, and budget—and asking the judge to mark
# each slot as honored, contradicted, or unconstrained by the response fields; this drives the
# persona-alignment axis s_P ∈ [1,5]. Response quality scores the format/safety axis s_F, and task
# success is folded into the verdict via the threshold s_P < 3.0." The ``history`` slot (purchase
# history and recent searches) is ours: the family set includes OVER_PERSONALIZATION_HALLUCINATION
# ("when the response invents a purchase or search not in the persona history"), which no listed
# slot covers.
PERSONA_SLOTS = (
    "hard_constraints",
    "brand_likes",
    "brand_avoids",
    "attribute_preferences",
    "budget",
    "history",
)
SLOT_STATUS = ("honored", "contradicted", "unconstrained")
PERSONALENS_CONTRACT: dict = _obj({
    "slot_judgments": _obj({s: _str_enum(SLOT_STATUS) for s in PERSONA_SLOTS}),
    "personalization": _num(1, 5),
    "response_quality": _num(1, 5),
    "defect_family": _str_enum((*P_FAMILIES, NONE)),
    "defect_location": _str_enum(LOCATION_LABELS),
    "supporting_evidence_ids": _IDS,
    "rationale": _RATIONALE,
})  # fmt: skip

# C.3.2 EtaPP-style: "treating the gold defect family d and the gold defect location r as the two
# key-points the judge must name […] the deterministic checks plus a brief read of the four response
# fields drive the GOOD/BAD verdict, and when BAD the judge proposes both d̂ ∈ D and r̂ ∈ R from the
# full label space. Following the EtaPP convention, the target score on the predicted target is
# fixed at 3.0 rather than emitted by the judge; s_P, s_C, s_E are likewise pinned at 3.0, while s_F
# is scored honestly from schema validity and Ŝ may be empty."
ETAPP_CONTRACT: dict = _obj({
    "verdict": _str_enum(VERDICTS),
    "key_points": _obj({"defect_family": _str_enum(FAMILY_LABELS), "defect_location": _str_enum(LOCATION_LABELS)}),
    "format_safety": _num(1, 5),
    "supporting_evidence_ids": _IDS,
    "confidence": _num(0, 1),
    "rationale": _RATIONALE,
})  # fmt: skip

VERDICT_THRESHOLD = 3.0  # C.3.2: ARES "BAD only when s_E < 3.0"; PersonaLens "threshold s_P < 3.0"
PINNED_AXIS = 3.0  # C.3.2: "pinned to a neutral 3.0"


def _common(parsed: Mapping[str, Any]) -> dict:
    return {k: parsed.get(k) for k in COMMON_FIELDS}


def _blank(d: dict, off: Sequence[str]) -> dict:
    for k in off:
        d[k] = None
    return d


def _ares_to_contract(p: Mapping[str, Any]) -> dict:
    s_e = fmean(float(p[k]) for k in ARES_SUBSCORES)
    d = dict.fromkeys(COMMON_FIELDS)
    d.update(verdict="BAD" if s_e < VERDICT_THRESHOLD else "GOOD", evidence_grounding=s_e,
             defect_family=p["defect_family"], defect_location=p["defect_location"],
             supporting_evidence_ids=list(p["supporting_evidence_ids"]), rationale=p["rationale"])  # fmt: skip
    return d


def _personalens_to_contract(p: Mapping[str, Any]) -> dict:
    s_p = float(p["personalization"])
    d = dict.fromkeys(COMMON_FIELDS)
    d.update(verdict="BAD" if s_p < VERDICT_THRESHOLD else "GOOD", persona_alignment=s_p,
             format_safety=float(p["response_quality"]), defect_family=p["defect_family"],
             defect_location=p["defect_location"], supporting_evidence_ids=list(p["supporting_evidence_ids"]),
             rationale=p["rationale"])  # fmt: skip
    return d


def _etapp_to_contract(p: Mapping[str, Any]) -> dict:
    d = dict.fromkeys(COMMON_FIELDS)
    d.update(verdict=p["verdict"], format_safety=float(p["format_safety"]),
             defect_family=p["key_points"]["defect_family"], defect_location=p["key_points"]["defect_location"],
             supporting_evidence_ids=list(p["supporting_evidence_ids"]), confidence=p["confidence"],
             rationale=p["rationale"])  # fmt: skip
    return d


# ---- the protocol registry ---------------------------------------------------------------------
# the judgment fields of the run table: the common contract with ``overall_bad_probability`` named
# ``bad_prob`` (shopbench.judges.pace.parse)
JUDGMENT_FIELDS: tuple[str, ...] = (
    "verdict", "bad_prob", "overall_quality", "persona_alignment", "component_consistency",
    "evidence_grounding", "format_safety", "defect_family", "defect_location", "supporting_evidence_ids",
    "confidence", "rationale",
)  # fmt: skip
_RENAME = {"overall_bad_probability": "bad_prob"}


def _candidate_ids(record: Record | Iterable[str] | None) -> set[str] | None:
    if record is None:
        return None
    if isinstance(record, Record):
        return set(record.candidate_evidence_ids)
    return set(record)


@dataclass(frozen=True, kw_only=True)
class Protocol(JudgeSpec[Any, dict]):  # items: a Record (parse: its candidate ids or None too)
    """One judge protocol: a :class:`~shopbench.judges.JudgeSpec` over PACEShop records.

    ``prompt`` is the file stem in ``prompts/``; ``contract`` the JSON schema the call's output must
    satisfy (native for the single-target baselines); ``targets`` the native PACE targets;
    ``off_target`` the common-contract fields the protocol does not produce (reported "–", left
    ``None``); ``pinned`` the neutral values the paper pins off-target axes to (C.3.2: "pinned to a
    neutral 3.0"), exposed for metrics that need them (e.g. Tab. 4's target-triage conjunct) but
    never written into the run table; ``families`` the closed family set (``NONE`` included).

    The item of :meth:`slots` is the record; the item of :meth:`parse` is the record, its candidate
    evidence ids, or ``None`` (the Ŝ ⊆ E check is then skipped)."""

    contract: dict
    targets: frozenset[str] = frozenset()
    families: tuple[str, ...] = FAMILY_LABELS
    off_target: tuple[str, ...] = ()
    pinned: Mapping[str, float] = field(default_factory=dict)
    persona_visible: bool = True
    converter: Callable[[Mapping[str, Any]], dict] | None = None

    @property
    def common(self) -> bool:
        """True when the protocol answers the PACEJudge contract itself."""
        return self.converter is None

    def to_contract(self, parsed: Mapping[str, Any]) -> dict:
        """The native output as the common contract (keys :data:`COMMON_FIELDS`); off-target cells
        are ``None``. ``parsed`` must already satisfy :attr:`contract`."""
        d = _common(parsed) if self.converter is None else self.converter(parsed)
        return _blank(d, self.off_target)

    def slots(self, item: Record) -> dict[str, str]:
        """Every slot value the prompt may use: the bundle (persona withheld for persona-blind
        protocols) plus the closed label sets and the contract."""
        s = bundle(item)
        if not self.persona_visible:
            s["persona_json"] = PERSONA_OMITTED
        s["allowed_defect_labels"] = _dumps(list(self.families))
        s["allowed_location_labels"] = _dumps(list(LOCATION_LABELS))
        s["prompt_contract_json"] = _dumps(self.contract)
        return s

    def interpret(self, value: Any, item: Record | Iterable[str] | None) -> dict:
        """The run table's judgment fields (:data:`JUDGMENT_FIELDS`) of a contract-valid answer;
        D.4 rule (iii) "supporting_evidence_ids must be a subset of candidate_evidence_ids_json (no
        invented IDs)" is checked against the record."""
        common = self.to_contract(value)
        pool, ids = _candidate_ids(item), common.get("supporting_evidence_ids")
        if pool is not None and ids:
            outside = [i for i in ids if i not in pool]
            if outside:
                shown = ", ".join(repr(i) for i in outside[:3]) + (" …" if len(outside) > 3 else "")
                raise Invalid(f"evidence ids outside the candidate pool ({len(outside)} of {len(ids)}): {shown}",
                              "evidence_outside_pool")  # fmt: skip
        out = {_RENAME.get(k, k): v for k, v in common.items()}
        return {k: out.get(k) for k in JUDGMENT_FIELDS}


def _protocol(name: str, contract: dict, targets: frozenset[str], **kw: Any) -> Protocol:
    return Protocol(name=name, prompt=f"judge_{name}", contract=contract, schema_name=f"judge_{name}",
                    targets=targets, **kw)  # fmt: skip


_OFF_ARES = ("overall_bad_probability", "overall_quality", "persona_alignment", "component_consistency",
             "format_safety", "confidence")  # fmt: skip
_OFF_PERSONALENS = ("overall_bad_probability", "overall_quality", "component_consistency", "evidence_grounding",
                    "confidence")  # fmt: skip
_OFF_ETAPP = ("overall_bad_probability", "overall_quality", "persona_alignment", "component_consistency",
              "evidence_grounding")  # fmt: skip
ALL_TARGETS = frozenset("PACE")


@judge
def pace_protocols() -> list[Protocol]:
    """The eight protocols of Tables 18-19, registered by name."""
    return [
        _protocol("pacejudge", PACE_CONTRACT, ALL_TARGETS, source="D.4"),
        # D.4's text with the fixed parts (labels, rules, schema) before the record: KV-cache prefix reuse
        _protocol("pacejudge_prefix_first", PACE_CONTRACT, ALL_TARGETS, source="D.4, reordered: fixed parts first"),
        _protocol("geval", PACE_CONTRACT, ALL_TARGETS, source="C.3.1 G-Eval-style rubric judge [8]"),
        _protocol("mtbench_scalar_first", PACE_CONTRACT, ALL_TARGETS,
                  source="C.3.1 scalar-first judge (MT-Bench style) [19]"),
        # Table 18: persona-blind scores "–" on S1; the persona axis it still emits (shared contract)
        # was produced without the persona, so it is reported "–" as well
        _protocol("persona_blind", PACE_CONTRACT, frozenset("ACE"), off_target=("persona_alignment",),
                  persona_visible=False, source="C.3.1 persona-blind ablation"),
        _protocol("persona_aware_generic", PACE_CONTRACT, ALL_TARGETS, source="C.3.1 persona-aware generic rubric"),
        _protocol("ares", ARES_CONTRACT, frozenset("E"), families=(*E_FAMILIES, NONE), off_target=_OFF_ARES,
                  source="C.3.2 ARES-style grounding judge [12]",
                  pinned={"persona_alignment": PINNED_AXIS, "component_consistency": PINNED_AXIS,
                          "format_safety": PINNED_AXIS},
                  converter=_ares_to_contract),
        _protocol("personalens", PERSONALENS_CONTRACT, frozenset("P"), families=(*P_FAMILIES, NONE),
                  off_target=_OFF_PERSONALENS, source="C.3.2 PersonaLens-style personalization judge [18]",
                  pinned={"component_consistency": PINNED_AXIS, "evidence_grounding": PINNED_AXIS},
                  converter=_personalens_to_contract),
        _protocol("etapp", ETAPP_CONTRACT, frozenset("A"), off_target=_OFF_ETAPP,
                  source="C.3.2 EtaPP-style actionable key-point judge [5]",
                  pinned={"persona_alignment": PINNED_AXIS, "component_consistency": PINNED_AXIS,
                          "evidence_grounding": PINNED_AXIS},
                  converter=_etapp_to_contract),
    ]  # fmt: skip


# the PACE protocols: the judges of group "pace" in the one registry, in registration order (Tables 18-19)
PROTOCOLS: Mapping[str, Protocol] = registry.View("judge", group="pace")


def get_protocol(protocol: str | Protocol) -> Protocol:
    if isinstance(protocol, Protocol):
        return protocol
    try:
        return PROTOCOLS[protocol]
    except KeyError:
        raise KeyError(f"unknown judge protocol {protocol!r}; known: {', '.join(PROTOCOLS)}"
                       + registry.did_you_mean(protocol, list(PROTOCOLS))) from None  # fmt: skip


# ---- templates ---------------------------------------------------------------------------------
def template(protocol: str | Protocol, ctx=None) -> Prompt:
    """The protocol's prompt (header comments stripped), read by the one prompt loader
    (:func:`shopbench.judges.load_template`); with a run context its hash goes into the
    notebook's provenance."""
    return get_protocol(protocol).template(ctx)


def slot_names(protocol: str | Protocol) -> list[str]:
    """The ``{slots}`` of the protocol's prompt, in order of first appearance."""
    out: list[str] = []
    for _, name, _, _ in string.Formatter().parse(template(protocol).text):
        if name and name not in out:
            out.append(name)
    return out


# ---- the input bundle --------------------------------------------------------------------------
def opaque_id(record_id: str) -> str:
    """A digest of the record id that does not spell out the label (``r-`` + 12 hex digits)."""
    return "r-" + hashlib.sha256(record_id.encode()).hexdigest()[:12]


def persona_payload(record: Record) -> dict:
    """The persona as the judge sees it: the B.7 fields (profile, preferences, shopping_context,
    history, context_summary) without ``persona_id``, taxonomy tags or holdout bundle."""
    keep = {"profile", "preferences", "shopping_context", "history", "context_summary"}
    return record.persona.model_dump(include=keep)


def evidence_preview(record: Record) -> list[dict]:
    out = []
    for s in record.evidence:
        snip = (
            s.snippet
            if len(s.snippet) <= SNIPPET_PREVIEW_CHARS
            else s.snippet[: SNIPPET_PREVIEW_CHARS - 1] + "…"
        )
        out.append(
            {"evidence_id": s.evidence_id, "brand": s.brand, "source_field": s.source_field, "snippet": snip}
        )
    return out


def _dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def bundle(record: Record) -> dict[str, str]:
    """The D.4 typed input bundle of a record: the ten slots, each a string ready for the prompt.

    D.4: "record_id, split, keyword (the query q), persona_json (the structured persona p),
    response_xml and response_struct_json (the candidate response y in two views),
    candidate_evidence_ids_json and candidate_evidence_json (the evidence pool E as IDs and
    previews), used_evidence_ids_json (the evidence subset cited during PACEShop GOOD-response
    construction, used as a soft anchor rather than a label), and deterministic_checks_json (the L1
    12-check validator output, exposed to the judge as objective anchors)." ``record_id`` is
    :func:`opaque_id` (see the module note on leakage)."""
    return {
        "record_id": opaque_id(record.record_id),
        "split": record.split or "none",
        "keyword": record.query,
        "persona_json": _dumps(persona_payload(record)),
        "response_xml": record.response_xml,
        "response_struct_json": to_struct_json(record.response),
        "candidate_evidence_ids_json": _dumps(record.candidate_evidence_ids),
        "candidate_evidence_json": _dumps(evidence_preview(record)),
        "used_evidence_ids_json": _dumps(record.used_evidence_ids),
        "deterministic_checks_json": _dumps(record.checks),
    }


def slots(protocol: str | Protocol, record: Record) -> dict[str, str]:
    """Every slot value the protocol's prompt may use (:meth:`Protocol.slots`)."""
    return get_protocol(protocol).slots(record)


def messages(protocol: str | Protocol, record: Record, ctx=None) -> list[dict]:
    """The chat messages of one judge call: a single user message holding the rendered prompt."""
    p = get_protocol(protocol)
    return p.render(record, p.template(ctx))


# ---- inverting a rendered prompt (deterministic judges) ----------------------------------------
@cache
def _pattern(name: str) -> re.Pattern:
    parts: list[str] = []
    seen: set[str] = set()
    for literal, slot, _, _ in string.Formatter().parse(template(name).text):
        parts.append(re.escape(literal))
        if slot:
            parts.append(f"(?P={slot})" if slot in seen else f"(?P<{slot}>.*?)")
            seen.add(slot)
    return re.compile("".join(parts), re.S)


@cache
def _segments(name: str) -> tuple[tuple[str, str | None], ...]:
    """The template as (literal, slot after it or None) pairs, for :func:`_split`."""
    return tuple(
        (literal, slot or None) for literal, slot, _, _ in string.Formatter().parse(template(name).text)
    )


def _split(name: str, text: str) -> dict[str, str] | None:
    """The slot values :func:`_pattern` would match, found with ``str.find``: each lazy slot ends at the
    first occurrence of the literal after it, which is the regex's first try, so when this succeeds it
    is the regex's match; None when it does not (a repeated slot that differs, or a literal that only a
    later occurrence satisfies): the caller then asks the regex."""
    segs = _segments(name)
    pos, out = 0, {}
    for i, (literal, slot) in enumerate(segs):
        if not text.startswith(literal, pos):
            return None
        pos += len(literal)
        if slot is None:
            continue
        nxt = segs[i + 1][0] if i + 1 < len(segs) else ""
        if slot in out:  # a repeated slot: the same text again (the regex's backreference)
            if not text.startswith(out[slot], pos):
                return None
            pos += len(out[slot])
            continue
        if i + 1 == len(segs) or (i + 2 == len(segs) and segs[i + 1][1] is None):  # the last slot: to the end
            end = len(text) - len(nxt)
            if end < pos or not text.endswith(nxt):
                return None
        else:
            end = text.find(nxt, pos) if nxt else pos
            if end < 0:
                return None
        out[slot] = text[pos:end]
        pos = end
    return out if pos == len(text) else None


def _user_text(msgs: Sequence[dict]) -> str:
    for m in reversed(list(msgs)):
        if m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, list):  # content parts
                return "".join(x.get("text", "") for x in c if isinstance(x, dict))
            return c or ""
    raise ValueError("no user message")


def extract_bundle(msgs: Sequence[dict]) -> tuple[Protocol, dict[str, str]]:
    """(protocol, slot values) of a judge call's messages, by matching the user message against
    every protocol's template. Raises ``ValueError`` when no template matches."""
    text = _user_text(msgs)
    for name in PROTOCOLS:
        slots = _split(name, text)
        if slots is not None:
            return PROTOCOLS[name], slots
        m = _pattern(name).fullmatch(text)
        if m:
            return PROTOCOLS[name], m.groupdict()
    raise ValueError("the prompt matches no judge protocol template (prompts/judge_*.txt)")
