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
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pandas as pd

from .build import BuildResult
from .checks import run_checks
from .generate import HARD_CHECKS, LLMGenerator


def shared_inputs(res: BuildResult, n: int, seed: int) -> list[tuple]:
    """``n`` test-split assignments (aid, Query, Persona, EvidencePool) with their build GOOD record,
    drawn uniformly with ``seed`` from the test GOODs in record order."""
    goods = [g for g in res.by_kind("good") if g.split == "test"]
    qby = {q.query_id: q for q in res.queries}
    pick = sorted(random.Random(f"{seed}:l4").sample(range(len(goods)), min(n, len(goods))))
    return [((goods[i].assignment_id, qby[goods[i].query_id], goods[i].persona, res.pools[goods[i].query_id]),
             goods[i]) for i in pick]  # fmt: skip


def _jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    x, y = {s.lower() for s in a}, {s.lower() for s in b}
    return len(x & y) / len(x | y) if x | y else float("nan")


def cross_generator_slice(res: BuildResult, generators: Sequence[str], gateway, prompt, n: int, seed: int,
                          run_id: str = "10_paceshop_build/l4_cross_generator") -> pd.DataFrame:  # fmt: skip
    """One row per (shared input, generator): accepted, reason, checks passed, attributions, category
    overlap (Jaccard) with the build generator's response on that input (module docstring)."""
    inputs = shared_inputs(res, n, seed)
    rows = []
    for item, g in inputs:
        rows.append({"input": item[0], "generator": g.generator, "accepted": True, "reason": "",
                     "checks_passed": sum(g.checks.values()), "all_12": all(g.checks.values()),
                     "attributions": len(g.response.attribution_list), "category_overlap_with_build": 1.0})  # fmt: skip
    items = [it for it, _ in inputs]
    for name in generators:
        gen = LLMGenerator(gateway, name, prompt)
        out = gen.parse(gateway.run(gen.calls(items), run_id=f"{run_id}/{name}"), items)
        for (item, g), (resp, used, reason) in zip(inputs, out, strict=True):
            if resp is None:
                rows.append({"input": item[0], "generator": name, "accepted": False, "reason": reason,
                             "checks_passed": None, "all_12": False, "attributions": None,
                             "category_overlap_with_build": None})  # fmt: skip
                continue
            chk = run_checks(resp, [s.evidence_id for s in item[3].snippets], used)
            rows.append({"input": item[0], "generator": name, "accepted": True, "reason": "",
                         "checks_passed": sum(chk.values()), "all_12": all(chk.values()),
                         "attributions": len(resp.attribution_list),
                         "category_overlap_with_build": _jaccard(resp.productCategoryList, g.response.productCategoryList)})  # fmt: skip
    return pd.DataFrame(rows)


def cross_generator_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per generator: shared inputs, acceptance rate, all-12 pass rate, mean checks passed and
    attributions over accepted outputs, mean category overlap with the build generator, and the most
    common rejection reason."""
    out = []
    for name, g in rows.groupby("generator", sort=False):
        acc = g[g["accepted"]]
        reasons = g.loc[~g["accepted"], "reason"].astype(str).str.slice(0, 80)
        out.append({"generator": name, "inputs": len(g), "accepted": round(g["accepted"].mean(), 3),
                    "all_12_pass": round(g["all_12"].mean(), 3),
                    "mean_checks_passed": round(pd.to_numeric(acc["checks_passed"]).mean(), 2) if len(acc) else None,
                    "mean_attributions": round(pd.to_numeric(acc["attributions"]).mean(), 2) if len(acc) else None,
                    "category_overlap_with_build": round(pd.to_numeric(acc["category_overlap_with_build"]).mean(), 3)
                    if len(acc) else None,
                    "top_rejection": reasons.value_counts().index[0] if len(reasons) else ""})  # fmt: skip
    return pd.DataFrame(out).set_index("generator")


__all__ = ["shared_inputs", "cross_generator_slice", "cross_generator_summary", "HARD_CHECKS"]
