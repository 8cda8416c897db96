"""The L1 validator: twelve deterministic record-level checks (seed 000, B.4 and D.2 D6).

B.4: "Five independent layers make the construction auditable: (i) a 12-check deterministic
record-level validator that every record passes through, […] Of the 4,525 released GOOD records,
99.3% pass all 12 deterministic checks; the remaining 0.7% fail only a case-sensitive
category-duplicate check and are flagged but retained."

D.2 D6 (Format & Safety): "Structural compliance (correct counts, lengths, valid XML) and
trust/safety requirements (neutral tone, appropriate disclaimers, no banned content) […] Twelve
deterministic validation checks (overview length, bold–category match, category and related-query
counts and uniqueness, evidence-ID validity, XML round-trip, banned-string screening) form a
cost-free baseline."

The budgets come from the B.9 contract: "Overview <= 350 chars. Include exactly 4 or 5 bold
categories using **...** in overview_text. productCategoryList must be an array of plain strings
aligned with bold categories. Each category label <= 15 chars. rqList must contain exactly 5 short
related shopping refinements. attribution_list must be an array of plain evidence ID strings only.
category_search_queries must be an array of plain strings aligned 1:1 with productCategoryList."

The paper names the checks but not their exact rules; the rules below are ours and are each
documented on the function. Every check is a pure function returning ``bool``.

Which BAD edits (``defects.py``) the checks can see: REDUNDANCY (``rq_count_unique``) and
EVIDENCE_MISMATCH (``evidence_exact_match``, and ``evidence_id_validity`` when the donor comes from
another pool) always; OVER_PERSONALIZATION_HALLUCINATION and UNSUPPORTED_CLAIM only when the added
text pushes the overview past 350 characters; PREF_CONFLICT and INTENT_DRIFT only in the strict
(unmirrored) variant (``bold_category_match``, ``query_alignment``); XCOMP_MISMATCH never. The
others are "stealth" defects (B.1: "Stealth-defect fraction 35.1%").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..core import Response, taxonomy
from .response_xml import BOLD, bold_spans, from_xml, to_xml

MAX_OVERVIEW_CHARS = 350
BOLD_COUNTS = (4, 5)
CATEGORY_COUNTS = (4, 5)
MAX_LABEL_CHARS = 15
RQ_COUNT = 5
EVIDENCE_ID = re.compile(r"^M:([^:\s]+):(\d+)$")  # B.8: "evidence_id": "M:B079YYGMR3:0"

# Banned-string screen (D6 "no banned content"). Ours: assistant/meta leakage, placeholders,
# template residue, raw links and markup, profanity placeholders. Case-insensitive; entries that
# begin and end with a word character match whole words only ("TODO" is not found in "mastodon").
BANNED_STRINGS: tuple[str, ...] = (
    "as an AI", "as a language model", "I'm sorry, but", "I cannot help",
    "lorem ipsum", "TODO", "TBD", "FIXME", "N/A", "[citation needed]", "[insert", "[placeholder]",
    "{", "}", "```", "http://", "https://", "www.", "<script", "javascript:",
    "[expletive]", "[profanity]", "[censored]", "$#@!", "@#$%", "f***", "s***",
)  # fmt: skip


def _banned_pattern(strings: Iterable[str]) -> re.Pattern:
    parts = []
    for s in strings:
        p = re.escape(s)
        if re.match(r"\w", s):
            p = r"\b" + p
        if re.search(r"\w$", s):
            p = p + r"\b"
        parts.append(p)
    return re.compile("|".join(parts), re.I)


BANNED = _banned_pattern(BANNED_STRINGS)

_STOP = frozenset("a an and or the of for with to in on by from at your my our".split())


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _stem(w: str) -> str:
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def content_tokens(s: str) -> set[str]:
    """Lower-cased, crudely singularised word tokens without stop words (used by query alignment)."""
    return {_stem(w) for w in re.findall(r"[a-z0-9]+", s.lower()) if w not in _STOP}


# ---- the twelve checks (in taxonomy.CHECKS order) ----------------------------------------------
def overview_length(r: Response) -> bool:
    """B.9 "Overview <= 350 chars": the overview (markup included) is non-empty and at most 350
    characters long."""
    return 0 < len(r.overview_text) <= MAX_OVERVIEW_CHARS


def bold_count(r: Response) -> bool:
    """B.9 "Include exactly 4 or 5 bold categories using **...** in overview_text": 4 or 5
    ``**…**`` spans, and no stray ``**`` marker left once they are removed."""
    spans = bold_spans(r.overview_text)
    return len(spans) in BOLD_COUNTS and "**" not in BOLD.sub("", r.overview_text)


def bold_category_match(r: Response) -> bool:
    """D6 "bold–category match" / D4 "overview–category alignment (bolded terms match category
    names)": the overview's bold spans equal ``productCategoryList`` exactly and in order, and
    equal the ``bold_categories`` field."""
    spans = bold_spans(r.overview_text)
    return spans == r.productCategoryList == r.bold_categories


def category_count(r: Response) -> bool:
    """Main text §3.2 / B.6 "Category (4–5)": ``productCategoryList`` holds 4 or 5 labels."""
    return len(r.productCategoryList) in CATEGORY_COUNTS


def category_label_length(r: Response) -> bool:
    """B.9 "Each category label <= 15 chars": every label is non-blank, single-line and at most
    15 characters long."""
    return all(
        lab.strip() and len(lab) <= MAX_LABEL_CHARS and "\n" not in lab for lab in r.productCategoryList
    )


def category_case_duplicates(r: Response) -> bool:
    """B.4 "the remaining 0.7% fail only a case-sensitive category-duplicate check and are flagged
    but retained": no two labels are equal once case and surrounding/inner whitespace are ignored
    (so "Range Bags" and "range bags" fail)."""
    keys = [_norm(lab) for lab in r.productCategoryList]
    return len(keys) == len(set(keys))


def query_alignment(r: Response) -> bool:
    """B.9 "category_search_queries must be an array of plain strings aligned 1:1 with
    productCategoryList": as many search queries as labels, none blank, and each relates to its
    label: the label is contained in the query (ignoring case) or they share a content token
    (lower-cased, singularised, stop words dropped)."""
    cats, qs = r.productCategoryList, r.category_search_queries
    if len(cats) != len(qs):
        return False
    for lab, q in zip(cats, qs, strict=True):
        if not q.strip():
            return False
        if _norm(lab) in _norm(q):
            continue
        if not content_tokens(lab) & content_tokens(q):
            return False
    return True


def rq_count_unique(r: Response) -> bool:
    """B.9 "rqList must contain exactly 5 short related shopping refinements" and D6 "related-query
    counts and uniqueness": exactly 5 non-blank entries, pairwise distinct ignoring case and
    whitespace."""
    keys = [_norm(q) for q in r.rqList]
    return len(keys) == RQ_COUNT and all(keys) and len(set(keys)) == RQ_COUNT


def evidence_id_validity(r: Response, candidate_ids: Iterable[str]) -> bool:
    """D.2 D5/D6 "attribute IDs resolve to valid entries in the evidence pool": the attribution
    list is non-empty (an ungrounded response has no y^attr), every id has the B.8 form
    ``M:<product_id>:<k>`` and every id is in the candidate pool."""
    cand = candidate_ids if isinstance(candidate_ids, set | frozenset) else set(candidate_ids)
    ids = r.attribution_list
    return bool(ids) and all(EVIDENCE_ID.match(i) and i in cand for i in ids)


def evidence_exact_match(r: Response, used_ids: Iterable[str]) -> bool:
    """Attribution provenance: the set of attributed ids equals the set of evidence ids the GOOD
    generator grounded on (``Record.used_evidence_ids``)."""
    return set(r.attribution_list) == set(used_ids)


def xml_round_trip(r: Response, xml: str | None = None) -> bool:
    """D6 "XML round-trip" (B.9: "candidates that fail hard schema, evidence-ID, or XML round-trip
    checks are rejected"): ``from_xml(to_xml(r)) == r``, or, when the stored XML view is given,
    ``from_xml(xml) == r``."""
    try:
        return from_xml(to_xml(r) if xml is None else xml) == r
    except (ValueError, TypeError):
        return False


def banned_strings(r: Response) -> bool:
    """D6 "banned-string screening": no entry of :data:`BANNED_STRINGS` (case-insensitive) in any
    field: overview, bold categories, labels, search queries, related queries, attribution ids."""
    fields = [r.overview_text, *r.bold_categories, *r.productCategoryList, *r.category_search_queries,
              *r.rqList, *r.attribution_list]  # fmt: skip
    return not any(BANNED.search(s) for s in fields)


def run_checks(
    response: Response, candidate_ids: Iterable[str], used_ids: Iterable[str], xml: str | None = None
) -> dict[str, bool]:
    """All twelve checks, keyed and ordered as ``taxonomy.CHECKS``."""
    r = response
    out = {
        "overview_length": overview_length(r),
        "bold_count": bold_count(r),
        "bold_category_match": bold_category_match(r),
        "category_count": category_count(r),
        "category_label_length": category_label_length(r),
        "category_case_duplicates": category_case_duplicates(r),
        "query_alignment": query_alignment(r),
        "rq_count_unique": rq_count_unique(r),
        "evidence_id_validity": evidence_id_validity(r, candidate_ids),
        "evidence_exact_match": evidence_exact_match(r, used_ids),
        "xml_round_trip": xml_round_trip(r, xml),
        "banned_strings": banned_strings(r),
    }
    return {k: out[k] for k in taxonomy.CHECKS}


def failed_checks(
    response: Response, candidate_ids: Iterable[str], used_ids: Iterable[str], xml: str | None = None
) -> list[str]:
    """Names of the failed checks, in ``taxonomy.CHECKS`` order (empty when all twelve pass)."""
    return [k for k, ok in run_checks(response, candidate_ids, used_ids, xml).items() if not ok]
