"""The preview of a loaded profile: the notebooks' lines (:mod:`.notebooks`), priced and timed
(:mod:`.pricing`), with notes on how (issue 14 §2)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .budget import DEFAULT_DETECT, as_records, budget_table
from .lines import TURN_ROLES, Preview
from .notebooks import Builder
from .pricing import cached_input_tokens, call_hours, cap_at_budgets, local_rates, price


def build_preview(prof, bench_dir: Path | None = None, only: Sequence[str] | None = None,
                  detect: float | None = DEFAULT_DETECT, strict_budget: bool = True) -> Preview:  # fmt: skip
    """The preview of a loaded profile (:func:`shopbench.config.load_profile`): no key, no call; with
    ``only``, of those notebooks alone (``pipeline run --only``, issue 25 §2). With ``detect`` (a
    difference, 0.05 = 5 points) it also holds the budget of its comparisons (issue 29 item 5,
    :mod:`.budget`); a corrupted variance table is then a :class:`~shopbench.errors.UserError`, or with
    ``strict_budget=False`` a note (the pipeline's gate must not stop on it)."""
    from ..errors import UserError
    from ..llm.backends import Backbone
    from ..llm.batch import batch_price_factor, batchable
    from ..paths import outputs_root

    b = Builder(prof)
    for notebook, section in (("20_pace_judge_sweep", b.judging), ("10_paceshop_build", b.paceshop),
                              ("40_padme_synthesis", b.synthesis), ("50_padme_meta_eval", b.evaluators),
                              ("80_shop_agents", b.shop)):  # fmt: skip
        if not only or notebook in only:
            section()
    pv = b.preview
    rates = local_rates(bench_dir or outputs_root() / "bench")
    conc = {**{"llamacpp": 1, "local": 4, "default": 8}, **dict(prof.params.gateway.concurrency)}
    for line in pv.lines:
        bb = b.backbones.get(line.backbone) or Backbone(name=line.backbone, model=line.model)
        provider = bb.provider
        c = bb.concurrency or conc.get(provider) or conc["default"]
        if line.kind == "self-hosted":
            c *= max(1, len(bb.api_bases))
        line.cached_input_tokens = cached_input_tokens(line)
        line.usd = 0.0 if line.kind != "api" else price(line.model, line.input_tokens, line.cached_input_tokens,
                                                          line.output_tokens)  # fmt: skip
        if (line.usd and prof.params.gateway.mode == "batch" and batchable(line.model)
                and not line.role.startswith(TURN_ROLES)):  # fmt: skip
            line.batch = True
            line.usd *= batch_price_factor(line.model)
        line.hours = call_hours(line, c, rates, bb.model_name)
        line.available, line.reason = bb.availability() if line.kind != "embedded" else (True, "ok")
        if line.usd is not None:
            line.usd = round(line.usd, 4)
    cap_at_budgets(pv.lines)
    if detect is not None:
        try:
            table, pv.budget_notes = budget_table(b, detect, only=only)
            pv.budget = as_records(table)
        except UserError as e:
            if strict_budget:
                raise
            pv.notes.append(f"budget not computed: {e}")
    pv.notes.append("tokens by litellm's token counter (one tiktoken encoding for every model)")
    pv.notes.append(f"local llama.cpp rates: {rates}")
    if any(x.usd is None for x in pv.lines):
        pv.notes.append(
            "no price in litellm's map for: "
            + ", ".join(sorted({x.model for x in pv.lines if x.usd is None}))
        )
    return pv
