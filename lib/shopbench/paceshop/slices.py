"""The L4 cross-generator slice (seed 000, B.1 Table 8, B.4, Table 16).

B.4: "(iv) a cross-generator slice on 50 shared inputs to confirm that GOOD generation does not
overfit a single backbone"; Table 8: "L4 cross-generator slice (3 models) — 50 shared"; Table 16:
"50 shared held-out inputs across 3 generator families (completed)".

:func:`cross_generator_slice` takes ``n`` shared held-out inputs (test-split assignments of the
build, drawn with the seed), the build's own generator's GOOD response for each (the offline
template unless the build used an LLM) and, for each further generator named, one generation per
input through the gateway with the B.9 prompt and contract (``generate.LLMGenerator``). Every
output passes the same acceptance rule as the build (hard checks, B.9: "candidates that fail hard
schema, evidence-ID, or XML round-trip checks are rejected"). The paper names neither its three
generator families nor its comparison statistic; we report acceptance, the 12-check pass rate, the
attribution count and the category overlap with the build's generator on the same input.

The shared inputs are drawn from the accepted test GOODs, so the build generator's acceptance on
them is 1 by construction (said in the table).

A generator is a backbone name (the B.9 contract, ``variant="b9"``) or an :class:`L4Generator`
naming the contract variant (``"b9_grammar"``: B.9's budgets as a decoding grammar for small local
models, ``generate`` module docstring) and how many of the shared inputs it gets. The shared inputs
are one seeded permutation of the test GOODs, so every generator's inputs are a prefix of it: a
generator on 2 inputs (the paper profile) gets the first 2 of the 12 a longer profile gives it, and
the gateway cache serves those calls again (a killed run resumes the same way). Every row says its
variant, seconds (the model's latency of the call that produced the answer, also for a cache hit) and
output tokens.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from .build import BuildResult
from .checks import run_checks
from .generate import HARD_CHECKS, VARIANTS, LLMGenerator


@dataclass(frozen=True)
class L4Generator:
    """One generator of the slice: a backbone, its contract variant (``generate.VARIANTS``) and the
    number of shared inputs it gets (None: the slice's ``n``)."""

    backbone: str
    variant: str = "b9"
    inputs: int | None = None


def l4_generators(generators: Sequence[str | Mapping | L4Generator]) -> list[L4Generator]:
    """Profile entries (a name, or ``{backbone, variant, inputs}``) as :class:`L4Generator`."""
    out = []
    for g in generators:
        spec = g if isinstance(g, L4Generator) else L4Generator(g) if isinstance(g, str) else L4Generator(**g)
        if spec.variant not in VARIANTS:
            raise ValueError(f"paceshop.l4_generators: {spec.backbone}: unknown variant {spec.variant!r} "
                             f"(known: {', '.join(VARIANTS)})")  # fmt: skip
        out.append(spec)
    return out


def test_goods_in_order(records: Sequence, n: int | None, seed: int) -> list:
    """The first ``n`` (all: None) test-split GOOD records in the slices' seeded order: a
    ``random.Random(f"{seed}:l4")`` permutation of the test GOODs in file order. The L4 and L5 slices
    and the ``pace_assistant`` task (issue 26 §1) draw their inputs from it, so they share queries."""
    goods = [r for r in records if r.kind == "good" and r.split == "test"]
    order = list(range(len(goods)))
    random.Random(f"{seed}:l4").shuffle(order)
    return [goods[i] for i in (order if n is None else order[:n])]


def shared_inputs(res: BuildResult, n: int, seed: int) -> list[tuple]:
    """``n`` test-split assignments (aid, Query, Persona, EvidencePool) with their build GOOD record:
    the first ``n`` of a seeded permutation of the test GOODs (so a smaller ``n`` gives a prefix)."""
    qby = {q.query_id: q for q in res.queries}
    return [((g.assignment_id, qby[g.query_id], g.persona, res.pools[g.query_id]), g)
            for g in test_goods_in_order(res.by_kind("good"), n, seed)]  # fmt: skip


def record_inputs(records: Sequence, n: int | None, seed: int, queries: Mapping | None = None,
                  pools: Mapping | None = None) -> list[tuple]:  # fmt: skip
    """:func:`shared_inputs` from a build's records instead of its in-memory result (a build folder read
    back, or a records file): the same inputs in the same order. ``queries`` and ``pools`` (by query id,
    from the build's ``queries.jsonl`` and ``evidence_pools.jsonl``) are used when given; otherwise each
    input's Query and EvidencePool are rebuilt from its record (the record's evidence is its pool's
    snippets; the pool's products are the snippets' products in order)."""
    from ..core import EvidencePool, Query

    out = []
    for g in test_goods_in_order(records, n, seed):
        q = (queries or {}).get(g.query_id) or Query(query_id=g.query_id, query=g.query, vertical=g.vertical,
                                                      mission=g.mission)  # fmt: skip
        pool = (pools or {}).get(g.query_id) or EvidencePool(
            query_id=g.query_id,
            snippets=list(g.evidence),
            product_ids=list(dict.fromkeys(s.canonical_product_id for s in g.evidence)),
        )
        out.append(((g.assignment_id, q, g.persona, pool), g))
    return out


def _jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    x, y = {s.lower() for s in a}, {s.lower() for s in b}
    return len(x & y) / len(x | y) if x | y else float("nan")


def cross_generator_slice(res: BuildResult, generators: Sequence[str | Mapping | L4Generator], gateway, prompt,
                          n: int, seed: int, run_id: str = "10_paceshop_build/l4_cross_generator") -> pd.DataFrame:  # fmt: skip
    """One row per (shared input, generator): variant, accepted, reason, checks passed, attributions,
    category overlap (Jaccard) with the build generator's response on that input, seconds and output
    tokens of the call (module docstring). The build generator's rows cover the largest input count."""
    specs = l4_generators(generators)
    inputs = shared_inputs(res, max([n, *(s.inputs for s in specs if s.inputs is not None)]), seed)
    rows = []
    for item, g in inputs:
        rows.append({"input": item[0], "generator": g.generator, "variant": "build", "accepted": True, "reason": "",
                     "checks_passed": sum(g.checks.values()), "all_12": all(g.checks.values()),
                     "attributions": len(g.response.attribution_list), "category_overlap_with_build": 1.0,
                     "seconds": None, "output_tokens": None})  # fmt: skip
    for spec in specs:
        mine = inputs[: n if spec.inputs is None else spec.inputs]
        items = [it for it, _ in mine]
        gen = LLMGenerator(gateway, spec.backbone, prompt, variant=spec.variant)
        suffix = "" if spec.variant == "b9" else f"/{spec.variant}"
        calls = gateway.run(gen.calls(items), run_id=f"{run_id}/{spec.backbone}{suffix}")
        out = gen.parse(calls, items)
        for (item, g), call, (resp, used, reason) in zip(mine, calls, out, strict=True):
            row = {"input": item[0], "generator": spec.backbone, "variant": spec.variant,
                   "seconds": call.get("model_latency_s") or call.get("latency_s"),
                   "output_tokens": call.get("completion_tokens")}  # fmt: skip
            if resp is None:
                rows.append({**row, "accepted": False, "reason": reason, "checks_passed": None, "all_12": False,
                             "attributions": None, "category_overlap_with_build": None})  # fmt: skip
                continue
            chk = run_checks(resp, [s.evidence_id for s in item[3].snippets], used)
            rows.append({**row, "accepted": True, "reason": "", "checks_passed": sum(chk.values()),
                         "all_12": all(chk.values()), "attributions": len(resp.attribution_list),
                         "category_overlap_with_build": _jaccard(resp.productCategoryList, g.response.productCategoryList)})  # fmt: skip
    cols = ["input", "generator", "variant", "accepted", "reason", "checks_passed", "all_12", "attributions",
            "category_overlap_with_build", "seconds", "output_tokens"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def cross_generator_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (generator, variant): shared inputs, acceptance rate, all-12 pass rate, mean checks passed
    and attributions over accepted outputs, mean category overlap with the build generator, median
    seconds and mean output tokens per generation (all of them, accepted or not), and the most common
    rejection reason. Indexed by generator (a backbone run in two variants has two rows)."""
    out = []
    for (name, variant), g in rows.groupby(["generator", "variant"], sort=False):
        acc = g[g["accepted"]]
        reasons = g.loc[~g["accepted"], "reason"].astype(str).str.slice(0, 80)
        secs = pd.to_numeric(g["seconds"], errors="coerce").dropna()
        toks = pd.to_numeric(g["output_tokens"], errors="coerce").dropna()
        out.append({"generator": name, "variant": variant, "inputs": len(g),
                    "accepted": round(g["accepted"].mean(), 3),
                    "all_12_pass": round(g["all_12"].mean(), 3),
                    "mean_checks_passed": round(pd.to_numeric(acc["checks_passed"]).mean(), 2) if len(acc) else None,
                    "mean_attributions": round(pd.to_numeric(acc["attributions"]).mean(), 2) if len(acc) else None,
                    "category_overlap_with_build": round(pd.to_numeric(acc["category_overlap_with_build"]).mean(), 3)
                    if len(acc) else None,
                    "median_s_per_generation": round(float(secs.median()), 1) if len(secs) else None,
                    "mean_output_tokens": round(float(toks.mean()), 1) if len(toks) else None,
                    "top_rejection": reasons.value_counts().index[0] if len(reasons) else ""})  # fmt: skip
    return pd.DataFrame(out).set_index("generator")


__all__ = [
    "L4Generator",
    "l4_generators",
    "shared_inputs",
    "record_inputs",
    "test_goods_in_order",
    "cross_generator_slice",
    "cross_generator_summary",
    "HARD_CHECKS",
]
