"""Real assistant outputs for the L5 relaxed-import slice (seed 000, B.4 and Table 16).

B.4: "(v) a normalized real-assistant slice of 100 external outputs that map cleanly into the same
response contract"; Table 16: "100 normalized real-assistant outputs stored with raw originals
preserved; persona claims withheld for this slice when persona context is unavailable." The paper
does not say which assistants or prompts produced its outputs.

What this module does (ours, issue 15): asks a model, as a plain shopping assistant, to answer test
queries of a PACEShop build (``prompts/paceshop_l5_assistant.txt``: the query text and the persona's
``context_summary`` only; no PACEShop contract, budgets, evidence pool or defect families), in a
loose JSON shape that :mod:`.relaxed` maps (``summary``, ``categories``, ``related_queries``), and
writes one JSON line per answer for :func:`.relaxed.load_relaxed`:

``{"id", "query", "persona", "response", "raw_output", "generator", "finish_reason",
"output_tokens", "seconds"}``

``response`` is the model's JSON object as parsed, or its raw text when that is not a JSON object
(the importer then rejects it: "response is text, not a JSON object", and ``parse_error`` says why
it did not parse); ``raw_output`` is the model's text
verbatim; ``persona`` is the build's B.7 persona (so persona checks can read it; the model saw only
its summary). No evidence is given to the model, so an output cites nothing and carries no
``candidate_evidence``: its evidence-id checks read the cited ids only (the importer says so).

Decoding: temperature 0, ``max_tokens`` :data:`MAX_TOKENS`; the request carries
:data:`LOOSE_SCHEMA` (types and generous length caps, none of PACEShop's budgets) as a JSON mode, so
a small local model neither writes prose around the JSON nor loops until its context is full. The
caps do cut long answers: 6 of Qwen2.5-Coder-1.5B's 8 summaries (2026-12-03) stopped at the 600-character
cap mid-sentence (our decoding, not the importer, cut them; the importer truncates nothing). llama.cpp's
string rule admits a raw newline inside a JSON string, which JSON forbids: 3 of SmolLM2-135M's 8 answers
did not parse for that reason and are kept as text (rejected by the importer).

The inputs are the first ``n`` of the L4 slice's seeded order of test GOOD records
(:func:`.slices.shared_inputs`'s order), so the two slices can share queries.

Regenerate the committed file (:data:`DEFAULT_OUT`, with ``<file>.meta.json`` saying which model,
when and with which command)::

    python -m shopbench.paceshop.l5_generate --profile paper \\
        --build outputs/paper/data/paceshop --backbone llamacpp/smollm2-135m-instruct --n 8
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core import Persona
from ..prompts import load_prompt

PROMPT_NAME = "paceshop_l5_assistant"
MAX_TOKENS = 512
DEFAULT_OUT = "lib/shopbench/paceshop/reference/l5/l5_assistant_outputs_smollm2-135m.jsonl"
LOOSE_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "maxLength": 600},
        "categories": {"type": "array", "items": {"type": "string", "maxLength": 60}, "maxItems": 8},
        "related_queries": {"type": "array", "items": {"type": "string", "maxLength": 80}, "maxItems": 8},
    },
    "required": ["summary", "categories", "related_queries"],
}
"""The loose answer shape (the prompt's), as a JSON mode: types and caps only (no PACEShop budget)."""


@dataclass(frozen=True)
class L5Input:
    """One shopping query to answer: the build's assignment id, query text and persona."""

    assignment_id: str
    query: str
    persona: Persona


def pick_inputs(records: Sequence, n: int, seed: int) -> list[L5Input]:
    """The first ``n`` test GOOD records in the L4 slice's seeded order (``random.Random(f"{seed}:l4")``
    over the test GOODs in file order, as :func:`.slices.shared_inputs`)."""
    from .slices import test_goods_in_order

    goods = test_goods_in_order(records, n, seed)
    if not goods:
        raise ValueError("the build holds no test-split GOOD record to take queries from")
    return [L5Input(g.assignment_id, g.query, g.persona) for g in goods]


def render(template: str, item: L5Input) -> str:
    """The assistant prompt for one input: the query and the persona's summary only."""
    return template.format(query=item.query, persona_summary=item.persona.context_summary)


def generate(gateway, backbone: str, items: Sequence[L5Input], run_id: str = "l5_generate",
             template: str | None = None) -> list[dict]:  # fmt: skip
    """One call per input through the gateway; one output line per input (module docstring)."""
    from ..llm import Call

    text = load_prompt(PROMPT_NAME, "the L5 assistant outputs") if template is None else template
    configured = backbone in getattr(gateway, "backbones", {})
    params = {"temperature": 0, "max_tokens": MAX_TOKENS}
    calls = []
    for it in items:
        msgs = [{"role": "user", "content": render(text, it)}]
        kw = dict(schema=LOOSE_SCHEMA, schema_name="shopping_answer")
        calls.append(gateway.call(backbone, it.assignment_id, msgs, params=dict(params), **kw) if configured
                     else Call(it.assignment_id, backbone, msgs, params=dict(params), **kw))  # fmt: skip
    rows = gateway.run(calls, run_id=run_id)
    by_id = {r["item_id"]: r for r in rows}
    out = []
    for k, it in enumerate(items, 1):
        row = by_id[it.assignment_id]
        raw = row.get("raw_output")
        parsed = row.get("parsed") if row.get("status") == "ok" else None
        error = None if parsed is not None else row.get("parse_error") or row.get("error")
        if parsed is None and raw:
            try:
                parsed = json.loads(raw)
            except ValueError as e:
                error = f"not JSON: {e}"
        out.append({
            "id": f"{backbone.split('/')[-1]}-{k:03d}", "query": it.query,
            "persona": it.persona.model_dump(mode="json"),
            "response": parsed if isinstance(parsed, dict) else (raw or row.get("error") or ""),
            "raw_output": raw, "generator": backbone, "assignment_id": it.assignment_id,
            "parse_error": None if isinstance(parsed, dict) else error, "finish_reason": row.get("finish_reason"), "output_tokens": row.get("completion_tokens"),
            "seconds": row.get("model_latency_s") or row.get("latency_s"),
        })  # fmt: skip
    return out


def write(path: str | Path, outputs: Sequence[dict], header: dict | None = None) -> Path:
    """JSON lines; ``header`` (who generated it, when, with which command) as the first line's
    ``_generated`` field is not an output: it goes to ``<path>.meta.json`` beside the file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in outputs), encoding="utf-8")
    if header is not None:
        p.with_name(p.name + ".meta.json").write_text(json.dumps(header, indent=1) + "\n", encoding="utf-8")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m shopbench.paceshop.l5_generate``: see the module docstring."""
    import datetime
    import os

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the project's llama.cpp backend sets it
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    ap = argparse.ArgumentParser(
        prog="python -m shopbench.paceshop.l5_generate", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--profile", default="paper", help="the profile whose gateway (cache, backbones) to use")
    ap.add_argument("--build", required=True, help="a PACEShop build folder (records_packaged.jsonl)")
    ap.add_argument("--backbone", default="llamacpp/smollm2-135m-instruct")
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--seed", type=int, default=None, help="default: the profile's seed")
    ap.add_argument("--out", default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    from ..context import start
    from ..errors import InputError
    from .build import load_records

    try:
        records = load_records(a.build)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ctx = start(a.profile, "10_paceshop_build")
    seed = ctx.seed if a.seed is None else a.seed
    items = pick_inputs(records, a.n, seed)
    outs = generate(ctx.gateway, a.backbone, items, run_id=f"l5_generate/{a.backbone}")
    cmd = f"python -m shopbench.paceshop.l5_generate --profile {a.profile} --build {a.build} " \
          f"--backbone {a.backbone} --n {a.n} --seed {seed} --out {a.out}"  # fmt: skip
    meta = {"generated_by": a.backbone, "date": datetime.date.today().isoformat(), "command": cmd,
            "prompt": f"prompts/{PROMPT_NAME}.txt", "inputs": f"first {a.n} test GOODs of {a.build} (L4 order, seed {seed})"}  # fmt: skip
    p = write(a.out, outs, meta)
    print(f"wrote {len(outs)} outputs to {p} (+ {p.name}.meta.json)")
    for o in outs:
        print(f"  {o['id']}: {o['finish_reason']}, {o['output_tokens']} tokens, {o['seconds']:.1f} s" if o["seconds"]
              else f"  {o['id']}: {o['finish_reason']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
