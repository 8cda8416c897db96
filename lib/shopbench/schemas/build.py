"""Generate the packaged JSON Schemas from the code's own readers (issue 26 §3).

Every schema but the relaxed assistant outputs is derived from the type the reader validates with
(pydantic's JSON Schema of :class:`shopbench.core.Record`, :class:`shopbench.core.Trajectory`,
:class:`shopbench.padme.types.Pair`, :class:`shopbench.annotate.store.Answer`, and the strict assistant
output of :mod:`shopbench.paceshop.relaxed`), then given its ``$id``, ``version``, a description and a
description for every field (:data:`FIELD_DOCS`). The relaxed schema is written here by hand from
:func:`shopbench.paceshop.relaxed.normalise`, the code that reads it (tests/test_schemas.py checks that
it accepts exactly the outputs that function imports).

    python -m shopbench.schemas.build            # rewrite lib/shopbench/schemas/*.schema.json
    python -m shopbench.schemas.build --check    # exit 1 when a shipped file differs from the code

Bump a schema's version in :data:`VERSIONS` when a change makes an old file invalid.
"""

from __future__ import annotations

import argparse
import json
import sys
from copy import deepcopy
from pathlib import Path
from typing import Any

from . import SCHEMAS, schema_id

HERE = Path(__file__).resolve().parent
DRAFT = "https://json-schema.org/draft/2020-12/schema"
VERSIONS = {name: 1 for name in SCHEMAS}

# descriptions of every field, by the type ($defs name, or the schema's top-level title) that holds it
_PERSONA_DOCS = {
    "Persona": {
        "persona_id": "unique persona id",
        "origin": "raw-v1 (the paper's persona release) or synthetic (made by the builder)",
        "profile": "household and demographics (App. B.7)",
        "preferences": "hard constraints, soft preferences, brand likes/avoids, attribute preferences",
        "shopping_context": "budget tier, quality sensitivity, shipping urgency",
        "history": "purchase history and recent searches",
        "context_summary": "one-paragraph summary of the persona, shown to judges",
        "taxonomy": "the Table 12 coverage axes (used for coverage-balanced assignment)",
        "holdout_bundle": "one of 8 holdout bundles; holdout personas appear only in dev/test (null: none)",
    },
    "PersonaProfile": {"household": "household description", "demographics": "demographics description"},
    "PersonaPreferences": {
        "hard_constraints": "constraints a response must never violate (e.g. 'no wool')",
        "soft_preferences": "preferences a response should honour when it can",
        "brand_likes": "brands the shopper likes",
        "brand_avoids": "brands the shopper avoids",
        "attribute_preferences": "preferred product attributes",
    },
    "ShoppingContext": {
        "budget": "budget | mid-range | premium",
        "quality_sensitivity": "how much quality matters",
        "shipping_urgency": "how fast the order is needed",
    },
    "PersonaHistory": {"purchase_history": "earlier purchases", "recent_searches": "recent search queries"},
    "PurchaseItem": {"asin": "product id", "product_name": "product name", "brand": "brand"},
    "PersonaTaxonomy": {
        "household": "household axis",
        "budget": "budget conscious | value balanced | premium",
        "quality": "balanced | functional | high",
        "urgency": "fast | standard | urgent",
        "constraints": "constraint families, e.g. 'material avoidance'",
        "preferences": "preference families, e.g. 'portability'",
        "history": "sparse | moderate | rich",
        "holdout_flags": "holdout tags of the persona",
    },
}
_RESPONSE_DOCS = {
    "Response": {
        "overview_text": "y^ov: the overview, naming the categories in **bold**",
        "bold_categories": "the **bold** spans of the overview, in order",
        "productCategoryList": "y^cat: the product-category list (B.9: 4 labels)",
        "category_search_queries": "one search query per category, same order",
        "rqList": "y^rq: the related-query list (B.9: 5 queries)",
        "attribution_list": "y^attr: evidence ids (M:<product_id>:<k>) the response cites",
    },
}
FIELD_DOCS: dict[str, dict[str, dict[str, str]]] = {
    "pace-record": {
        "Record": {
            "record_id": "unique id, e.g. full-good-00042, full-bad-t2-00042, full-good-00042::swap-brand",
            "split": "train | dev | test (null: unsplit)",
            "label": "gold verdict: GOOD (no defect) or BAD",
            "kind": "good, bad (injected defects) or swap (the persona swapped under a GOOD response)",
            "tier": "number of injected defects (0 for GOOD, 1 for a swap)",
            "assignment_id": "the query-persona assignment the record answers",
            "query_id": "id of the shopping query",
            "query": "the shopping query text",
            "vertical": "retail vertical (Table 10)",
            "mission": "shopping mission (Table 11)",
            "persona": "the shopper persona (App. B.7)",
            "evidence": "the candidate evidence pool shown to the judge (at most 24 snippets)",
            "used_evidence_ids": "evidence ids the GOOD generator grounded on",
            "response": "the four-field response under judgement (B.9)",
            "response_xml": "the response rendered as the XML the judge prompt shows",
            "checks": "the 12 deterministic checks: check name -> passed",
            "defects": "the injected defects (empty for GOOD)",
            "gold_family": "'+'-joined defect families in canonical order (null for GOOD)",
            "gold_location": "'+'-joined defect locations in canonical order (null for GOOD)",
            "base_record_id": "the GOOD record a BAD record or a swap derives from (paired metrics use it)",
            "swap_axis": "for a swap: budget | hard_constraint | brand | attribute",
            "generator": "what wrote the GOOD response: offline-template-v1, llm:<model>, ...",
        },
        "Defect": {
            "family": "defect family (App. B.6)",
            "location": "where it was injected: productCategoryList[0], rqList, rqList[1], attribution_list, "
            "overview_text or persona_swap",
            "group": "field group of the location",
        },
        "EvidenceSnippet": {
            "canonical_product_id": "the product the snippet comes from",
            "title": "product title",
            "brand": "product brand",
            "evidence_id": "M:<product_id>:<k>",
            "snippet": "the snippet text",
            "source_field": "which product field the text comes from",
        },
        **_RESPONSE_DOCS,
        **_PERSONA_DOCS,
    },
    "assistant-output": {
        "StrictOutput": {
            "id": "unique output id (e.g. the PACEShop record_id or query_id it answers)",
            "query": "the shopping query the assistant answered",
            "response": "the four-field response exactly as B.9 defines it",
            "assignment_id": "the PACEShop input (assignment) it answers; pace_assistant then judges it with "
            "that input's persona and evidence pool",
            "persona": "the persona the assistant saw (App. B.7); null or absent: persona claims are withheld",
            "candidate_evidence": "evidence ids the assistant could cite; absent: the evidence-id checks read "
            "the cited ids only",
        },
        **_RESPONSE_DOCS,
        **_PERSONA_DOCS,
    },
    "trajectory": {
        "Trajectory": {
            "rollout_id": "unique id of the conversation",
            "task_id": "the task (scenario) the conversation is a rollout of",
            "domain": "environment domain, e.g. shop, retail, airline",
            "source": "what produced it, e.g. shop, tau2, tau_bench, test",
            "criterion": "PADME criterion the agent was steered on (empty when none)",
            "level": "steering level bad | ok | good (a recorded conversation: its outcome)",
            "steering": "the steering instruction given to the agent (empty when none)",
            "agent_model": "the agent's model or class",
            "user_model": "the user simulator's model, or scripted",
            "seed": "decoding / scenario seed",
            "attempt": "0-based generation attempt",
            "messages": "OpenAI-format chat messages (role system|user|assistant|tool; content; "
            "tool_calls on assistant turns; tool_call_id and name on tool turns)",
            "reward": "the environment's reward when it has one (null otherwise)",
            "usage": "token and cost counters",
            "meta": "the domain's record (termination reason, reward breakdown, ...)",
        },
    },
    "padme-pair": {
        "Pair": {
            "pair_id": "unique pair id",
            "cell_id": "the cell (task, criterion) the pair was generated for",
            "task_id": "the task of both rollouts",
            "domain": "environment domain",
            "source": "which environment produced the rollouts",
            "criterion": "the criterion the pair contrasts (its description comes from -T criteria=FILE or "
            "the built-in PADME criteria)",
            "contrast": "level contrast worse-better, e.g. bad-good",
            "agent_model": "the agent model of both rollouts",
            "attempt": "0-based attempt (0 = the initial generation)",
            "worse": "x-: the rollout steered to the lower level",
            "better": "x+: the rollout steered to the higher level (the synthetic label)",
            "steering": "level -> the steering instruction used",
            "votes": "the filter judges' decisions",
            "depth": "the largest k with the pair in D_k (filter stages passed)",
            "kept": "whether every filter judge agreed (the pair is in D_K)",
        },
        "Trajectory": {},  # filled from the trajectory schema's docs (below)
        "Vote": {
            "judge": "the filter judge",
            "stage": "filter stage 1..K",
            "better_slot": "1 or 2: where x+ was shown",
            "choice": "1 or 2; null on a parse failure",
            "agrees": "whether the choice agrees with the synthetic label",
            "parse_error": "why the answer did not parse (null when it did)",
            "swapped_choice": "the choice when re-judged in swapped order (optional)",
            "raw": "the judge's raw answer",
        },
    },
    "annotation": {
        "Answer": {
            "annotator": "annotator id (the file name: <annotator>.jsonl)",
            "pair_id": "the pair answered",
            "choice": "the slot picked on screen: A = left, B = right",
            "chosen_item": "the underlying item that slot showed (side_a | side_b); must match choice and "
            "slot_order",
            "confidence": "0, 50 or 100 (App. H.6 maps them to 0 / 1 / 2)",
            "slot_order": "[left, right]: which side was shown in slot A and slot B (side_a and side_b once each)",
            "shown_at": "ISO 8601 time the pair was shown",
            "answered_at": "ISO 8601 time of the answer",
            "time_spent_s": "seconds between shown_at and answered_at",
            "revision": "0 for the first answer to the pair, +1 per revision (the last row wins)",
        },
    },
}
FIELD_DOCS["padme-pair"]["Trajectory"] = FIELD_DOCS["trajectory"]["Trajectory"]

DESCRIPTIONS = {
    "pace-record": "One PACEShop record per line (JSON lines): a shopping query, a persona, an evidence pool and "
    "a four-field response, with its gold label. Read by `shopbench eval pace_judge -T records=FILE` "
    "(shopbench.paceshop.io.read_jsonl with shopbench.core.Record); a PACEShop build folder holds "
    "records.jsonl in this schema.",
    "assistant-output": "Strict assistant outputs, one JSON object per line: the B.9 four-field response "
    "exactly (no repair is made; a line that breaks this schema stops the import). Read by "
    "shopbench.paceshop.relaxed.read_strict.",
    "assistant-output-relaxed": "Relaxed assistant outputs (seed 000 Table 16: the relaxed-schema import "
    "path): a JSON array or JSON lines, one object per output, field names from several assistants' "
    "conventions (aliases below, first match wins), the response in 'response' or at the top level. Read by "
    "shopbench.paceshop.relaxed.load_relaxed, which normalises and records each repair; an output this "
    "schema rejects is rejected with its reason (the file is still read).",
    "padme-pair": "One PADME trajectory pair per line (JSON lines; what write_pairs_dataset writes as "
    "pairs.jsonl). Read by `shopbench eval padme_evaluator -T pairs=FILE` "
    "(shopbench.padme.dataset.read_pairs_dataset); keys not listed are ignored.",
    "trajectory": "One conversation per line (JSON lines): a shop or tau2-style rollout, as "
    "shopbench.core.Trajectory.to_dict writes it (the 'worse' and 'better' sides of a PADME pair have "
    "this shape). Keys not listed are ignored (Trajectory.from_dict).",
    "annotation": "One human answer per line, one file per annotator (<annotator>.jsonl), as the annotation "
    "UI writes it (shopbench.annotate.store.AnnotationStore); read by AnnotationStore.rows.",
}


def _models() -> dict[str, Any]:
    from pydantic import TypeAdapter

    from ..annotate.store import Answer
    from ..core import Record, Trajectory
    from ..paceshop.relaxed import StrictOutput
    from ..padme.types import Pair

    return {
        "pace-record": Record.model_json_schema(),
        "assistant-output": StrictOutput.model_json_schema(),
        "trajectory": TypeAdapter(Trajectory).json_schema(),
        "padme-pair": TypeAdapter(Pair).json_schema(),
        "annotation": Answer.model_json_schema(),
    }


def _document(schema: dict, docs: dict[str, dict[str, str]], name: str) -> dict:
    """Every property of every object gets its description from ``docs``; a field without one is an
    error (a new field must be documented here)."""
    schema = deepcopy(schema)
    top = schema.get("title", "")
    objects = [(top, schema)] + [(k, v) for k, v in schema.get("$defs", {}).items()]
    for tname, obj in objects:
        props = obj.get("properties")
        if not props:
            continue
        table = docs.get(tname)
        if table is None:
            raise KeyError(
                f"schema {name}: no field descriptions for type {tname!r} (add them to FIELD_DOCS)"
            )
        for field, sub in props.items():
            if field not in table:
                raise KeyError(
                    f"schema {name}: field {tname}.{field} has no description (add it to FIELD_DOCS)"
                )
            sub.pop("title", None)
            sub["description"] = table[field]
    return schema


def _wrap(name: str, body: dict) -> dict:
    head = {"$schema": DRAFT, "$id": schema_id(name, VERSIONS[name]), "title": SCHEMAS[name],
            "version": VERSIONS[name], "description": DESCRIPTIONS[name]}  # fmt: skip
    body = {k: v for k, v in body.items() if k not in ("title", "description")}
    return head | body


def _case_insensitive(pattern: str) -> str:
    """``pattern`` with every letter outside a character class and not escaped written ``[xX]`` (JSON
    Schema patterns are ECMA-262 regular expressions, without inline flags)."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        out.append(f"[{c.lower()}{c.upper()}]" if c.isalpha() and c.isascii() and not in_class else c)
        i += 1
    return "".join(out)


def relaxed_schema() -> dict:
    """The relaxed assistant-output schema, written from :func:`shopbench.paceshop.relaxed.normalise`:
    for each field the first alias present is the one read (a later alias is ignored), a placeholder
    ("...", "<overview>", "TODO") counts as missing, and list items may be strings or citation objects."""
    from ..paceshop.relaxed import _PLACEHOLDER, ALIASES

    placeholder = _case_insensitive(_PLACEHOLDER.pattern)
    answer = {"type": "string", "pattern": r"\S", "not": {"pattern": placeholder}}
    item = {
        "anyOf": [
            {"type": ["string", "number", "boolean"]},
            {"type": "object", "anyOf": [{"required": [k]} for k in ("id", "evidence_id", "product_id")]},
        ]
    }
    a_list = {"anyOf": [{"type": "string"}, {"type": "array", "items": item}, {"type": "null"}]}
    some = {"anyOf": [{"type": "string", "pattern": r"[^\s;|]"},
                      {"type": "array", "items": item, "contains": {"anyOf": [
                          {"type": ["number", "boolean"]}, {"type": "object"},
                          {"type": "string", "pattern": r"\S", "not": {"pattern": placeholder}}]}}]}  # fmt: skip

    def first_alias(group: str, value: dict, required: bool) -> dict:
        """The first alias of ``group`` present must hold ``value`` (none present: ``required`` fails)."""
        names = ALIASES[group]
        branches = []
        for i, k in enumerate(names):
            b: dict[str, Any] = {"required": [k], "properties": {k: value}}
            if i:
                b["not"] = {"anyOf": [{"required": [j]} for j in names[:i]]}
            branches.append(b)
        if not required:
            branches.append({"not": {"anyOf": [{"required": [k]} for k in names]}})
        return {"anyOf": branches}

    def documented(group: str, what: str) -> dict:
        names = ALIASES[group]
        return {
            k: {"description": what + ("" if k == names[0] else f" (alias of {names[0]})")} for k in names
        }

    response = {
        "type": "object",
        "description": "the response fields; for each, the first alias present is read",
        "properties": {
            **documented("overview_text", "the overview, a non-empty string; its **bold** spans are the "
                         "categories (none bold: each category found in the text is bolded, a repair)"),
            **documented("productCategoryList", "product categories, at least one: a list, or one string "
                         "split on ; | or new lines"),
            **documented("rqList", "related queries: a list or one string, as the categories"),
            **documented("attribution_list", "cited evidence ids: strings, or objects with id / evidence_id "
                         "/ product_id (reduced to that id, a repair)"),
            **documented("category_search_queries", "one search per category (absent: the lower-cased "
                         "labels, a repair)"),
        },
        "allOf": [first_alias("overview_text", answer, True), first_alias("productCategoryList", some, True),
                  first_alias("rqList", a_list, False), first_alias("attribution_list", a_list, False),
                  first_alias("category_search_queries", a_list, False)],
    }  # fmt: skip
    return {
        "type": "object",
        "properties": {
            **documented("id", "output id, any string or number (absent: l5-<n>; a repeated id rejects the "
                         "later output)"),
            **documented("query", "the shopping query, a non-empty string; required"),
            "response": {"description": "an object holding the response fields (absent: they are read from "
                         "the top level, a repair)"},
            "persona": {"description": "the persona the assistant saw (the B.7 shape of `shopbench schema "
                        "pace-record`); another shape or null: persona claims are withheld"},
            **documented("candidate_evidence", "evidence ids the assistant could cite (absent: the "
                         "evidence-id checks read the cited ids only)"),
        },
        "allOf": [
            first_alias("query", answer, True),
            first_alias("candidate_evidence", a_list, False),
            {"if": {"required": ["response"]},
             "then": {"properties": {"response": {"$ref": "#/$defs/ResponseFields"}}},
             "else": {"$ref": "#/$defs/ResponseFields"}},
        ],
        "$defs": {"ResponseFields": response},
    }  # fmt: skip


def generate() -> dict[str, dict]:
    """Every schema, as it is shipped."""
    models = _models()
    out = {}
    for name in SCHEMAS:
        if name == "assistant-output-relaxed":
            body = relaxed_schema()
        else:
            body = _document(models[name], FIELD_DOCS[name], name)
        out[name] = _wrap(name, body)
    return out


def text(schema: dict) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shopbench.schemas.build", description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a shipped schema differs from the code")
    a = ap.parse_args(argv)
    stale = []
    for name, schema in generate().items():
        path = HERE / f"{name}.schema.json"
        new = text(schema)
        if path.exists() and path.read_text(encoding="utf-8") == new:
            continue
        stale.append(name)
        if not a.check:
            path.write_text(new, encoding="utf-8")
            print(f"wrote {path}")
    if a.check and stale:
        print(f"stale schemas (run python -m shopbench.schemas.build): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
