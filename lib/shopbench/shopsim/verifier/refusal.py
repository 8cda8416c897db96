"""The refusal keys of a refusal probe (seed 002 App. J, Table 11 "Refusal probes"): the log facts
by rule, the score and four flags the judge's answer to its ``refusal`` question.

The rules (and the reference judge's answers) are in :mod:`shopbench.judges.shop.refusal`.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...judges.shop.judge import REFUSAL_JUDGED, JudgeError, ask, failure_reason
from ...judges.shop.reference import default_judge
from ...judges.shop.refusal import deterministic_refusal
from ...judges.spec import Judge, ParseFailure
from ..types import ShopProduct, TrialRecord
from .rubrics import JUDGED_METHOD as _METHOD
from .rubrics import REFUSAL_KEYS

JUDGED_METHOD: dict[str, str] = {k: _METHOD[k] for k in REFUSAL_KEYS}  # Table 2 vocabulary


def refusal_metrics(
    traj: TrialRecord,
    products: Mapping[str, ShopProduct],
    judge: Judge | None = None,
    errors: dict[str, str] | None = None,
) -> dict[str, float | None]:
    """The seven refusal keys of a refusal probe (all None on a shopping trial: the rubric applies
    only to probes). The log facts are rules; the score and four flags are the judge's
    answer to the ``refusal`` question.
    A judge's :class:`~shopbench.judges.ParseFailure` leaves those keys None with their reasons in
    ``errors``; without ``errors`` it raises :class:`~.judge.JudgeError`."""
    out: dict[str, float | None] = dict.fromkeys(REFUSAL_KEYS)
    if traj.scenario.kind != "refusal":
        return out
    judge = judge or default_judge()
    rules = deterministic_refusal(traj, products)
    out["search_attempted"] = rules["search_attempted"]
    out["search_terms_faithful_mean"] = rules["search_terms_faithful_mean"]
    asked = ask(judge, "refusal", traj, products)
    if isinstance(asked, ParseFailure):
        if errors is None:
            raise JudgeError(failure_reason(asked))
        for k in REFUSAL_JUDGED:
            errors[k] = failure_reason(asked)
        return out
    judged = asked.value
    for k in REFUSAL_JUDGED:
        out[k] = judged.get(k)
    if rules["zero_result_handled_transparently"] is None:  # recorded only when an empty result occurred
        out["zero_result_handled_transparently"] = None
    return out
