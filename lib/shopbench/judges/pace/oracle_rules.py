"""``local/oracle-rules``: the rule-based PACE judge, a known-answer stand-in (seed 000; issue 13 §2).

The twelve checks plus text rules over the bundle (persona hard constraints, avoided brands, budget
and attribute contradictions, invented history claims, overview sentences unsupported by the cited
evidence, cited vs. used vs. candidate ids, duplicated related queries, related queries unrelated to
the query and categories, categories unrelated to the query and the evidence pool). It emits the full
contract: axes from the rules that fired, a noisy-OR BAD probability, the family/location of the
strongest finding and the finding's supporting evidence ids.

**Why it is an oracle.** It imports the PACEShop generator's own vocabulary: the persona-swap cue lists
(``swaps.HONOUR_CUES``, ``VIOLATION_CUES``, ``ATTRIBUTE_CUES``, ``OPPOSITE_*``) and the taxonomy's
constraint specs with their PREF_CONFLICT labels, and its word lists were tuned on our generator's
templates. On PACEShop records its score follows from how the records were made (PACE avg ≈ 0.99), so
its rows are ``known-answer`` everywhere (``shopbench.report.evidence``): a check that the metric code
can reach a near-perfect score, not a judge to compare with. It was ``local/rules`` before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...core import Response, taxonomy
from ...llm.local import register_local
from ...paceshop.checks import EVIDENCE_ID, content_tokens
from ...paceshop.swaps import (
    ATTRIBUTE_CUES,
    HONOUR_CUES,
    OPPOSITE_ATTRIBUTE,
    OPPOSITE_CONSTRAINT,
    VIOLATION_CUES,
)
from .deterministic import Finding, View, _answer, check_findings, view

# ---- text helpers ------------------------------------------------------------------------------
# discourse and merchandising words that carry no product claim
GENERIC = frozenset(content_tokens(
    """it also this these those that which who what when where how why is are be been being was were
    will can could should would may might must do does did have has had not no yes more most less very
    so just only even all any each every some other another such as into than then there here about
    over under up down out off you your yours they their them we us i me he she his her its
    for find finding explore exploring compare comparing start starting shop shopping look looking
    browse pick picks include includes including option options choice choices focus focused right
    good great best better top rated rating review reviews comparison vs versus idea ideas gift gifts
    new popular favorite favorites like liked love brand brands such well plus also highlight
    highlights feature features featuring offer offers offering get help helps need needs want wants
    budget tight mid range mid-range value premium affordable everyday staff bestseller bestsellers
    essential essentials deal deals sale price prices priced"""
))  # fmt: skip
_SENT = re.compile(r"(?<=[.!?])\s+")
_HISTORY_CLAIMS = (
    re.compile(r"\bgiven (?:their|your) (?P<item>[^,.;:!?]+)", re.I),
    re.compile(r"\b(?:since|because|as) you (?:recently )?(?:bought|purchased|own|ordered|searched for|"
               r"looked at) (?:a |an |the |your )?(?P<item>[^,.;:!?]+)", re.I),
    re.compile(r"\byour (?:recent |past |previous )?(?:purchase|order|search) (?:of|for) (?:a |an |the )?"
               r"(?P<item>[^,.;:!?]+)", re.I),
    re.compile(r"\b(?:to pair with|to go with|to match|to complement) (?:their|your) (?P<item>[^,.;:!?]+)", re.I),
)  # fmt: skip
_NEG_BEFORE = re.compile(
    r"(?:\bno|\bnon|\bwithout|\bfree of|\bfaux|\bvegan|\banti|\bnot|\bavoid\w*)[\s-]*$", re.I
)
# "-free"/"-duty" negate ("wool-free", "heavy-duty"); "heavy (daily) use" is intensity, not weight
_NEG_AFTER = re.compile(r"^[\s-]*(?:free|duty|(?:daily )?use)\b", re.I)
BUDGET_WORDS = re.compile(
    r"\b(?:budget[- ]friendly|affordable|cheap|cheaper|inexpensive|low[- ]cost|bargains?|economical|"
    r"best value|great value|tight budget|budget picks|under \$\d+)\b", re.I)  # fmt: skip
PREMIUM_WORDS = re.compile(
    r"\b(?:premium|luxury|luxurious|high[- ]end|top[- ]tier|splurges?|upscale)\b", re.I
)
SPLURGE_WORDS = re.compile(r"\b(?:luxury|luxurious|splurges?|upscale)\b", re.I)


def _plain(s: str) -> str:
    return s.replace("**", "")


def _rx(patterns: Iterable[str]) -> re.Pattern:
    return re.compile(r"(?<![\w-])(?:" + "|".join(patterns) + r")(?![\w])", re.I)


_VIOLATION_RX = {k: _rx(v) for k, v in VIOLATION_CUES.items()}
_HONOUR_RX = {k: _rx(v) for k, v in HONOUR_CUES.items()}
_ATTRIBUTE_RX = {k: _rx(v) for k, v in ATTRIBUTE_CUES.items()}
_OPPOSITE_TO_CONSTRAINT = {v: k for k, v in OPPOSITE_CONSTRAINT.items()}
_OPPOSITE_TO_ATTRIBUTE = {v: k for k, v in OPPOSITE_ATTRIBUTE.items()}


def _affirmed(rx: re.Pattern, text: str) -> str | None:
    """The first match of ``rx`` not negated ("wool-free", "no leather", "faux leather")."""
    for m in rx.finditer(text):
        if _NEG_BEFORE.search(text[: m.start()]) or _NEG_AFTER.match(text[m.end() :]):
            continue
        return m.group(0)
    return None


def _first_conflict(units, cue, weight: float, what: str, slot: str) -> list[Finding]:
    """A PREF_CONFLICT finding at the first response unit where ``cue(text)`` finds a hit, else none."""
    for loc, text in units:
        hit = cue(text)
        if hit:
            return [Finding("PREF_CONFLICT", loc, weight, f"{hit!r} in {loc} {what}", slot=slot)]
    return []


def _violation(constraint: str, text: str) -> str | None:
    """A non-negated violation cue of the hard constraint in ``text``, unless the same text also
    honours the constraint ("Latex-free …, safe for latex allergies"; "Works with iPhone and
    Android")."""
    hit = _affirmed(_VIOLATION_RX[constraint], text)
    if hit and constraint in _HONOUR_RX and _affirmed(_HONOUR_RX[constraint], text):
        return None
    return hit


def _units(r: Response) -> list[tuple[str, str]]:
    """(location, text) units: categories, category searches (location: categories), related
    queries, overview sentences."""
    out = [("productCategoryList", s) for s in r.productCategoryList]
    out += [("productCategoryList", s) for s in r.category_search_queries]
    out += [("rqList", s) for s in r.rqList]
    out += [("overview_text", _plain(s)) for s in _SENT.split(r.overview_text.strip()) if s]
    return out


def _snippets_by_id(v: View) -> dict[str, dict]:
    return {e.get("evidence_id"): e for e in (v.evidence or []) if isinstance(e, dict)}


def _product_of(eid: str) -> str:
    m = EVIDENCE_ID.match(eid)
    return m.group(1) if m else eid


def _tokens(texts: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for t in texts:
        out |= content_tokens(_plain(t))
    return out


def _persona_texts(p: dict) -> list[str]:
    pr, sc, hist = p.get("preferences", {}), p.get("shopping_context", {}), p.get("history", {})
    out = [*pr.get("hard_constraints", []), *pr.get("soft_preferences", []), *pr.get("brand_likes", []),
           *pr.get("attribute_preferences", []), *sc.values(), p.get("context_summary", ""),
           *(p.get("profile", {}) or {}).values(), *hist.get("recent_searches", [])]  # fmt: skip
    out += [f"{h.get('product_name', '')} {h.get('brand', '')}" for h in hist.get("purchase_history", [])]
    return [str(x) for x in out]


# ---- the rules ---------------------------------------------------------------------------------
def persona_findings(v: View) -> list[Finding]:
    """PREF_CONFLICT: conflict labels and violation cues of the persona's hard constraints, honour
    cues of a constraint whose opposite the persona now holds, avoided brands (named, or behind a
    cited product), budget words against the budget, cues of an attribute whose opposite the persona
    prefers; violation cues in the snippets of cited products."""
    p, r = v.persona, v.response
    if p is None or r is None:
        return []
    pr = p.get("preferences", {})
    out: list[Finding] = []
    units = _units(r)
    hard = list(pr.get("hard_constraints", []))
    labels = {" ".join(x.lower().split()) for x in r.productCategoryList}
    for c in hard:
        spec = taxonomy.CONSTRAINTS_BY_TEXT.get(c)
        if spec is not None and " ".join(spec.conflict_label.lower().split()) in labels:
            out.append(
                Finding(
                    "PREF_CONFLICT",
                    "productCategoryList",
                    0.95,
                    f"category {spec.conflict_label!r} contradicts hard constraint {c!r}",
                    slot="hard_constraints",
                )
            )
        if c in _VIOLATION_RX:
            out += _first_conflict(
                units, lambda t, c=c: _violation(c, t), 0.85, f"violates {c!r}", "hard_constraints"
            )
        orig = _OPPOSITE_TO_CONSTRAINT.get(c)
        if orig and orig in _HONOUR_RX:
            rx = _HONOUR_RX[orig]
            out += _first_conflict(units, lambda t, rx=rx: _affirmed(rx, t), 0.85, f"contradicts {c!r}",
                                   "hard_constraints")  # fmt: skip
    # cited products whose snippets violate a hard constraint
    by_id = _snippets_by_id(v)
    cited_products = {_product_of(i) for i in v.cited_in_pool()}
    for c in hard:
        if c not in _VIOLATION_RX:
            continue
        for eid, e in by_id.items():
            if _product_of(eid) in cited_products and _violation(c, str(e.get("snippet", ""))):
                out.append(Finding("PREF_CONFLICT", "attribution_list", 0.7,
                                   f"a snippet of cited product {eid} reads as violating {c!r}", (eid,), slot="hard_constraints"))  # fmt: skip
                break
    # avoided brands
    for b in pr.get("brand_avoids", []):
        if not b.strip():
            continue
        brx = re.compile(r"(?<!\w)" + re.escape(b.strip()) + r"(?!\w)", re.I)
        hit_loc = next((loc for loc, text in units if brx.search(text)), None)
        if hit_loc:
            out.append(
                Finding(
                    "PREF_CONFLICT", hit_loc, 0.9, f"avoided brand {b!r} in {hit_loc}", slot="brand_avoids"
                )
            )
            continue
        for eid in v.cited_in_pool():
            if str(by_id.get(eid, {}).get("brand", "")).strip().lower() == b.strip().lower():
                out.append(Finding("PREF_CONFLICT", "attribution_list", 0.85,
                                   f"cited evidence {eid} is from avoided brand {b!r}", (eid,), slot="brand_avoids"))  # fmt: skip
                break
    # budget
    budget = str(p.get("shopping_context", {}).get("budget", "")).lower()
    rx_b = BUDGET_WORDS if "premium" in budget else PREMIUM_WORDS if "budget" in budget else (
        SPLURGE_WORDS if budget else None)  # fmt: skip
    if rx_b is not None:
        # not a conflict: the word inside a phrase of the persona's own preferences ("premium feel")
        # or a word of the query itself ("cheap chocolate bar")
        prefs = [x.lower() for x in [*pr.get("soft_preferences", []), *pr.get("attribute_preferences", [])]]
        asked = v.keyword.lower()
        for loc, text in units:
            m = next(
                (
                    m
                    for m in rx_b.finditer(text)
                    if not re.search(r"\b" + re.escape(m.group(0).lower()) + r"\b", asked)
                    and not any(m.group(0).lower() in x and x in text.lower() for x in prefs)
                ),
                None,
            )
            if m:
                out.append(
                    Finding(
                        "PREF_CONFLICT",
                        loc,
                        0.8,
                        f"{m.group(0)!r} in {loc} contradicts budget {budget!r}",
                        slot="budget",
                    )
                )
                break
    # attribute preferences whose opposite the response markets
    for a in pr.get("attribute_preferences", []):
        orig = _OPPOSITE_TO_ATTRIBUTE.get(a)
        if orig and orig in _ATTRIBUTE_RX:
            rx = _ATTRIBUTE_RX[orig]
            out += _first_conflict(units, lambda t, rx=rx: _affirmed(rx, t), 0.8, f"contradicts preference {a!r}",
                                   "attribute_preferences")  # fmt: skip
    return out


def history_findings(v: View) -> list[Finding]:
    """OVER_PERSONALIZATION_HALLUCINATION: a history claim in the overview ("Given their X", "since
    you bought X", "your purchase of X") whose item is not in the purchase history or recent
    searches. Needs the persona: without it no history claim can be checked."""
    if v.persona is None or v.response is None:
        return []
    hist = v.persona.get("history", {})
    known = _tokens([f"{h.get('product_name', '')} {h.get('brand', '')}" for h in hist.get("purchase_history", [])]
                    + list(hist.get("recent_searches", [])))  # fmt: skip
    for rx in _HISTORY_CLAIMS:
        for m in rx.finditer(_plain(v.response.overview_text)):
            item = m.group("item").strip()
            toks = content_tokens(item) - GENERIC
            if toks and len(toks & known) / len(toks) < 0.5:
                return [Finding("OVER_PERSONALIZATION_HALLUCINATION", "overview_text", 0.9,
                                f"history claim {m.group(0)!r} is not in the persona's history",
                                slot="history")]  # fmt: skip
    return []


UNSUPPORTED_MIN_TOKENS = 2
UNSUPPORTED_MIN_SHARE = 0.6


def claim_findings(v: View) -> list[Finding]:
    """UNSUPPORTED_CLAIM: an overview sentence most of whose content words (at least
    :data:`UNSUPPORTED_MIN_TOKENS`, at least :data:`UNSUPPORTED_MIN_SHARE`) occur neither in the
    cited evidence snippets nor in the query, the response's own categories/searches/refinements or
    the persona; bold category names, history-claim clauses and :data:`GENERIC` words are set aside.
    Cited = cited ids in the pool; when none is, the used ids; else the whole pool. Skipped when
    the protocol shows no evidence preview."""
    r = v.response
    if r is None or v.evidence is None:  # no evidence shown: no claim can be checked
        return []
    by_id = _snippets_by_id(v)
    cited = [i for i in v.cited if i in by_id] or [i for i in (v.used_ids or []) if i in by_id] or list(by_id)
    support = _tokens(str(by_id[i].get("snippet", "")) + " " + str(by_id[i].get("brand", "")) for i in cited)
    support |= _tokens([v.keyword, *r.productCategoryList, *r.category_search_queries, *r.rqList])
    if v.persona is not None:
        support |= _tokens(_persona_texts(v.persona))
    for sent in _SENT.split(r.overview_text.strip()):
        text = re.sub(r"\*\*[^*]+\*\*", " ", sent)
        for rx in _HISTORY_CLAIMS:
            text = rx.sub(" ", text)
        toks = content_tokens(text) - GENERIC
        bad = toks - support
        if len(bad) >= UNSUPPORTED_MIN_TOKENS and len(bad) / len(toks) >= UNSUPPORTED_MIN_SHARE:
            return [Finding("UNSUPPORTED_CLAIM", "overview_text", 0.8,
                            f"overview sentence {sent.strip()!r} is not supported by the cited evidence "
                            f"(unsupported: {', '.join(sorted(bad)[:5])})", tuple(i for i in cited if i in set(v.candidate_ids or []))[:5])]  # fmt: skip
    return []


def evidence_findings(v: View) -> list[Finding]:
    """EVIDENCE_MISMATCH: cited ids outside the candidate pool (or malformed), cited set ≠ the used
    ids (D.4's "soft anchor"), an empty attribution list."""
    r = v.response
    if r is None:
        return []
    pool = set(v.candidate_ids or [])
    anchor = tuple(i for i in (v.used_ids or []) if i in pool)
    out = []
    if not r.attribution_list:
        out.append(Finding("EVIDENCE_MISMATCH", "attribution_list", 0.9, "no attribution", anchor))
    if v.candidate_ids is not None:
        bad = [i for i in r.attribution_list if i not in pool or not EVIDENCE_ID.match(i)]
        if bad:
            out.append(Finding("EVIDENCE_MISMATCH", "attribution_list", 0.95,
                               f"{len(bad)} of {len(r.attribution_list)} cited ids are not candidate evidence", anchor))  # fmt: skip
    if v.used_ids is not None and r.attribution_list and set(r.attribution_list) != set(v.used_ids):
        out.append(Finding("EVIDENCE_MISMATCH", "attribution_list", 0.75,
                           "cited ids differ from the used evidence ids", anchor))  # fmt: skip
    return out


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def redundancy_findings(v: View) -> list[Finding]:
    """REDUNDANCY: a related query repeated (ignoring case/spacing) or near-duplicated (content-token
    Jaccard ≥ 0.85); duplicated category labels."""
    r = v.response
    if r is None:
        return []
    out = []
    keys = [_norm(q) for q in r.rqList]
    if len(set(keys)) < len(keys):
        out.append(Finding("REDUNDANCY", "rqList", 0.95, "a related query is repeated"))
    else:
        toks = [content_tokens(q) for q in r.rqList]
        for i in range(len(toks)):
            for j in range(i + 1, len(toks)):
                a, b = toks[i], toks[j]
                if len(a | b) >= 2 and len(a & b) / len(a | b) >= 0.85:
                    out.append(
                        Finding(
                            "REDUNDANCY", "rqList", 0.35, f"related queries {i} and {j} are near-duplicates"
                        )
                    )
                    break
            else:
                continue
            break
    cats = [_norm(c) for c in r.productCategoryList]
    if len(set(cats)) < len(cats):
        out.append(Finding("REDUNDANCY", "productCategoryList", 0.6, "a category label is repeated"))
    return out


XCOMP_MIN_UNRELATED = 3  # of the (five) related queries
XCOMP_MIN_SHARE = 0.5  # a related query is related when this share of its content words is anchored


def consistency_findings(v: View) -> list[Finding]:
    """XCOMP_MISMATCH: at least :data:`XCOMP_MIN_UNRELATED` related queries have less than
    :data:`XCOMP_MIN_SHARE` of their content words (beyond :data:`GENERIC` and the persona's own
    words) in the query, the categories, their searches or the cited snippets.
    INTENT_DRIFT: a category label (beyond generic merchandising words) that shares no content word
    with the query, the candidate evidence or the related queries (only when the evidence is shown)."""
    r = v.response
    if r is None:
        return []
    out = []
    by_id = _snippets_by_id(v)
    cited_text = [str(by_id[i].get("snippet", "")) for i in v.cited if i in by_id]
    anchor = _tokens([v.keyword, *r.productCategoryList, *r.category_search_queries, *cited_text])
    own = _tokens(_persona_texts(v.persona)) if v.persona is not None else set()
    unrelated = []
    for q in r.rqList:
        toks = content_tokens(q) - GENERIC - (own - anchor)
        if toks and len(toks & anchor) / len(toks) < XCOMP_MIN_SHARE:
            unrelated.append(q)
    if len(unrelated) >= XCOMP_MIN_UNRELATED:
        out.append(Finding("XCOMP_MISMATCH", "rqList", 0.85,
                           f"{len(unrelated)} of {len(r.rqList)} related queries are unrelated to the query and categories"))  # fmt: skip
    elif len(unrelated) == XCOMP_MIN_UNRELATED - 1:
        out.append(
            Finding("XCOMP_MISMATCH", "rqList", 0.35, f"{len(unrelated)} related queries look unrelated")
        )
    if v.evidence is None:  # no evidence shown: category intent is not checked against the pool
        return out
    pool_text = [str(e.get("snippet", "")) for e in by_id.values()] + [
        str(e.get("brand", "")) for e in by_id.values()
    ]
    intent = _tokens([v.keyword, *pool_text, *r.rqList])
    for lab in r.productCategoryList:
        toks = content_tokens(lab) - GENERIC
        if toks and not toks & intent:
            out.append(Finding("INTENT_DRIFT", "productCategoryList", 0.8,
                               f"category {lab!r} is unrelated to the query and the evidence pool"))  # fmt: skip
            break
    return out


RULES = (persona_findings, history_findings, claim_findings, evidence_findings, redundancy_findings,
         consistency_findings)  # fmt: skip
# the rules re-derive what the checks see; check findings join at a lower weight
RULES_CHECK_STRENGTH = 0.6


def rule_findings(v: View) -> list[Finding]:
    out = check_findings(v, RULES_CHECK_STRENGTH)
    for rule in RULES:
        out += rule(v)
    return out


def rules_judge(messages: list[dict], params: dict) -> str:
    """``local/oracle-rules``: the rule-based PACE judge (known-answer, see the module docstring)."""
    v = view(messages)
    return _answer(rule_findings(v), v)


NAME = "oracle-rules"


def register() -> None:
    """Register ``local/oracle-rules``."""
    register_local(
        NAME, rules_judge, "KNOWN-ANSWER oracle: rule judge built on the PACEShop generator's cue lists"
    )


register()

__all__ = ["NAME", "RULES", "register", "rule_findings", "rules_judge"]
