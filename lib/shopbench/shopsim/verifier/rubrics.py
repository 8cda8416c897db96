"""The judged keys of a shopping trial (seed 002 §4.2, App. I Table 11, §5.1 Table 2 vocabulary):
the hallucination channels, the six rubric scores (the judge's answers) and the typed rates.

The rules (typed rates, the reference judge's rubric scores) are in
:mod:`shopbench.judges.shop.rubrics`; the claim channels in :mod:`.claims`.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...judges.shop.claims import Claim
from ...judges.shop.judge import RUBRICS, JudgeError, ask, failure_reason
from ...judges.shop.reference import default_judge
from ...judges.shop.rubrics import typed_rates
from ...judges.spec import Judge, ParseFailure
from ..types import ShopProduct, TrialRecord
from .claims import claim_rates, verify_claims

# Table 2 vocabulary: Rule = fixed verification, Model = grounded model output, Hybrid = a model-derived
# signal combined with a fixed comparison or reduction.
HALLUCINATION_KEYS = ("hallucination", "phantom_action_rate", "numeric_hallucination_rate",
                      "attribute_hallucination_rate")  # fmt: skip


TYPED_KEYS = ("false_add_to_cart", "unnecessary_clarification_rate", "missed_clarification_rate")


JUDGED_KEYS = ("hallucination", *RUBRICS, "phantom_action_rate", "numeric_hallucination_rate",
               "attribute_hallucination_rate", *TYPED_KEYS)  # fmt: skip


REFUSAL_KEYS = ("censorship_resistance", "hard_refusal", "political_or_moral_framing", "search_attempted",
                "search_terms_faithful_mean", "zero_result_handled_transparently", "unrelated_redirect_offered")  # fmt: skip


JUDGED_METHOD: dict[str, str] = {
    "hallucination": "hybrid",
    "phantom_action_rate": "rule",
    "numeric_hallucination_rate": "rule",
    "attribute_hallucination_rate": "model",
    **dict.fromkeys(RUBRICS, "model"),
    "false_add_to_cart": "rule",
    "unnecessary_clarification_rate": "rule",
    "missed_clarification_rate": "rule",
    "censorship_resistance": "model",
    "hard_refusal": "model",
    "political_or_moral_framing": "model",
    "search_attempted": "rule",
    "search_terms_faithful_mean": "rule",
    "zero_result_handled_transparently": "hybrid",  # model flag, recorded only when the log has an empty result
    "unrelated_redirect_offered": "model",
}


def judged_metrics(
    traj: TrialRecord,
    products: Mapping[str, ShopProduct],
    judge: Judge | None = None,
    errors: dict[str, str] | None = None,
) -> dict[str, float | None]:
    """The 13 judged keys of a general/grocery trial (all None on a refusal probe: the shopping
    rubrics are skipped there, not zero). A judge's :class:`~shopbench.judges.ParseFailure` makes
    the affected keys None with ``errors[key]`` holding the reason; without ``errors`` it raises
    :class:`~.judge.JudgeError`."""
    out: dict[str, float | None] = dict.fromkeys(JUDGED_KEYS)
    if traj.scenario.kind == "refusal":
        return out
    judge = judge or default_judge()

    def fail(keys, why: ParseFailure) -> None:
        if errors is None:
            raise JudgeError(failure_reason(why))
        for k in keys:
            out[k] = None
            errors[k] = failure_reason(why)

    extracted = ask(judge, "claims", traj, products)
    if isinstance(extracted, ParseFailure):
        fail(HALLUCINATION_KEYS, extracted)
    else:
        claims: list[Claim] = extracted.value
        checks = verify_claims(traj, products, claims, judge)
        if isinstance(checks, ParseFailure):  # the attribute channel failed: the rule channels still stand
            rule = verify_claims(traj, products, [c for c in claims if c.type != "attribute"], judge)
            assert not isinstance(rule, ParseFailure)  # no attribute claim: the judge is not asked
            out.update(claim_rates(rule))
            fail(("hallucination", "attribute_hallucination_rate"), checks)
        else:
            out.update(claim_rates(checks))
    out.update(typed_rates(traj, products))
    for name in RUBRICS:
        scored = ask(judge, name, traj, products)
        if isinstance(scored, ParseFailure):
            fail((name,), scored)
        else:
            out[name] = scored.value
    return out
