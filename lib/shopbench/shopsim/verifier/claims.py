"""The verifier's claim channels (seed 002 §4.2): H = 1 − |B|/|V| over the extracted claims.

Claims, their rule checks and the deterministic extractor and labeller are the shop judge's
(:mod:`shopbench.judges.shop.claims`); here the action and numeric claims are checked by rule, the
attribute claims labelled by the judge's ``attributes`` question, and the channel rates computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...judges.shop.claims import ATTRIBUTE_LABELS, Claim, ClaimCheck, check_action, check_numeric
from ...judges.shop.judge import ask
from ...judges.spec import Judge, ParseFailure
from ..types import ShopProduct, TrialRecord


def verify_claims(
    traj: TrialRecord, products: Mapping[str, ShopProduct], claims: Sequence[Claim], judge: Judge
) -> list[ClaimCheck] | ParseFailure:
    """Rule checks for action and numeric claims, the judge's ``attributes`` question for attribute
    claims of catalog products (one batched decision), fabricated-product claims ungrounded by rule.
    Output in claim order; the judge's :class:`~shopbench.judges.ParseFailure` when it could not
    label the attribute claims."""
    out: list[ClaimCheck | None] = [None] * len(claims)
    to_judge: list[int] = []
    for i, c in enumerate(claims):
        if c.type == "action":
            out[i] = check_action(c, traj)
        elif c.type == "numeric":
            out[i] = check_numeric(c, traj, products)
        elif c.type == "attribute":
            if c.fabricated or c.product_id not in products:
                out[i] = ClaimCheck(
                    c, "ungrounded", True, "fabricated product: the catalog holds no such product"
                )
            else:
                to_judge.append(i)
        else:
            raise ValueError(
                f"trial {traj.trial_id}: claim type {c.type!r} is not one of action/numeric/attribute"
            )
    if to_judge:
        asked = ask(judge, "attributes", None, products, claims=[claims[i] for i in to_judge])
        if isinstance(asked, ParseFailure):
            return asked
        labels = asked.value
        if len(labels) != len(to_judge):
            raise ValueError(
                f"judge {judge.name} returned {len(labels)} attribute labels for {len(to_judge)} claims"
            )
        for i, lab in zip(to_judge, labels, strict=True):
            if lab not in ATTRIBUTE_LABELS:
                raise ValueError(
                    f"judge {judge.name} returned attribute label {lab!r}; allowed {ATTRIBUTE_LABELS}"
                )
            out[i] = ClaimCheck(claims[i], lab, lab != "supported", f"judge {judge.name}")
    return [c for c in out if c is not None]


def claim_rates(checks: Sequence[ClaimCheck]) -> dict[str, float | None]:
    """The three channel rates and H = 1 − |B|/|V| (None where the channel has no claims)."""

    def rate(kind: str) -> float | None:
        xs = [c for c in checks if c.claim.type == kind]
        return sum(c.violation for c in xs) / len(xs) if xs else None

    return {
        "hallucination": 1.0 - sum(c.violation for c in checks) / len(checks) if checks else None,
        "phantom_action_rate": rate("action"),
        "numeric_hallucination_rate": rate("numeric"),
        "attribute_hallucination_rate": rate("attribute"),
    }
