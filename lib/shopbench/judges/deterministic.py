"""Deterministic reference judges, served as ``local/<name>`` backbones (seed 000, E.8.1, D.2 D6).

Registered with :func:`shopbench.llm.register_local` when ``shopbench.judges`` is imported, so a
sweep calls them exactly like an LLM backbone (same messages, same cache, same call log, same
contract parsing):

``local/checks``
    The L1 12-check baseline. D.2 D6: "Twelve deterministic validation checks (overview length,
    bold–category match, category and related-query counts and uniqueness, evidence-ID validity,
    XML round-trip, banned-string screening) form a cost-free baseline"; E.8.1: "Deterministic
    baseline: accuracy rises monotonically from single (0.880) to quad (0.975) on the development
    set, because more defects trigger more rule-based checks." BAD iff a check fails; the family and
    location are those of the first failing check (``taxonomy.CHECKS`` order) under
    :data:`CHECK_DIAGNOSIS`.
``local/rules``
    A deterministic PACE judge: the twelve checks plus text rules over the bundle (persona hard
    constraints, avoided brands, budget and attribute contradictions, invented history claims,
    overview sentences unsupported by the cited evidence, cited vs. used vs. candidate ids,
    duplicated related queries, related queries unrelated to the query and categories, categories
    unrelated to the query and the evidence pool). It emits the full contract: axes from the rules
    that fired, a noisy-OR BAD probability, the family/location of the strongest finding and the
    finding's supporting evidence ids. It shares the project's vocabulary (``taxonomy`` constraint
    and conflict labels, the ``swaps`` cue lists), so on our synthetic records it is a
    near-oracle for the persona rules: a reference point, not a competitor.
``local/always-bad``
    Always BAD with the first family of the protocol's label set at its Table 17 location
    (PREF_CONFLICT @ productCategoryList for the full set): the over-flagging judge the Tab. 4
    gates are built against ("These gates prevent an always-BAD judge from receiving high credit
    through over-flagging").
``local/random``
    Seeded by the bundle's record id: uniform verdict, family (of the protocol's set), location,
    scores, and up to three candidate ids. Same record → same answer, across repeats and protocols.

**How they receive the bundle.** They read the same messages an LLM judge reads:
:func:`shopbench.judges.protocols.extract_bundle` matches the user message against every
``prompts/judge_*.txt`` template and returns the protocol and its slot values. A slot the protocol
does not show (used ids and checks for ARES-/PersonaLens-style, the persona for persona-blind) is
unknown to the judge too; the checks are then recomputed from what is shown (checks that need a
missing input are skipped). A prompt that matches no template is an error of the call.

**Contracts.** Each judge answers the protocol's own contract: the PACEJudge contract for the
five shared-contract protocols, and the native ARES-/PersonaLens-/EtaPP-style objects for the
single-target baselines (findings outside the protocol's family set are dropped first, so an
ARES-style deterministic judge only fires evidence families, as C.3.2 requires).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import Response, taxonomy
from ..llm.local import register_local
from ..paceshop.checks import (
    EVIDENCE_ID,
    banned_strings,
    bold_category_match,
    bold_count,
    category_case_duplicates,
    category_count,
    category_label_length,
    content_tokens,
    overview_length,
    query_alignment,
    rq_count_unique,
    xml_round_trip,
)
from ..paceshop.swaps import (
    ATTRIBUTE_CUES,
    HONOUR_CUES,
    OPPOSITE_ATTRIBUTE,
    OPPOSITE_CONSTRAINT,
    VIOLATION_CUES,
)
from .protocols import (
    AXES,
    FAMILY_TARGET,
    LOCATIONS,
    NONE,
    PERSONA_SLOTS,
    Protocol,
    extract_bundle,
)

# ---- the bundle as the judge sees it -----------------------------------------------------------


@dataclass
class View:
    """The parsed slot values of one judge call (``None`` = not shown by the protocol)."""

    protocol: Protocol
    record_id: str
    keyword: str
    persona: dict | None
    response: Response | None
    response_error: str | None
    response_xml: str | None
    candidate_ids: list[str] | None
    evidence: list[dict] | None
    used_ids: list[str] | None
    checks: dict[str, bool] | None

    @property
    def cited(self) -> list[str]:
        return list(self.response.attribution_list) if self.response else []

    def cited_in_pool(self) -> list[str]:
        pool = set(self.candidate_ids or [])
        return [i for i in self.cited if i in pool]


def _loads(s: str | None):
    if s is None:
        return None
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        return None


def view(messages: Sequence[dict]) -> View:
    """Recover the bundle from a judge call's messages (see the module docstring)."""
    protocol, slots = extract_bundle(messages)
    persona = _loads(slots.get("persona_json"))
    if not isinstance(persona, dict) or persona.get("omitted") or "preferences" not in persona:
        persona = None
    response, err = None, None
    struct = _loads(slots.get("response_struct_json"))
    if isinstance(struct, dict):
        try:
            response = Response(**struct)
        except Exception as e:  # a malformed response view is a finding, not a crash
            err = f"{type(e).__name__}: {str(e)[:200]}"
    else:
        err = "response_struct_json is not a JSON object"
    checks = _loads(slots.get("deterministic_checks_json"))
    return View(
        protocol=protocol,
        record_id=slots.get("record_id") or "",
        keyword=slots.get("keyword") or "",
        persona=persona,
        response=response,
        response_error=err,
        response_xml=slots.get("response_xml"),
        candidate_ids=_loads(slots.get("candidate_evidence_ids_json")),
        evidence=_loads(slots.get("candidate_evidence_json")),
        used_ids=_loads(slots.get("used_evidence_ids_json")),
        checks=checks if isinstance(checks, dict) else None,
    )


# ---- findings ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    """One rule that fired: its family and 4-way location, how strongly it indicates a material
    defect (0–1), the candidate evidence ids that support it, and a one-line note."""

    family: str
    location: str
    strength: float
    note: str
    evidence_ids: tuple[str, ...] = ()
    check: str | None = None  # the failing check, for check-derived findings
    slot: str | None = None  # the persona slot it contradicts (protocols.PERSONA_SLOTS), for P findings


# The first failing check decides the checks baseline's diagnosis. The paper names the checks but
# not a check → (family, location) map; ours sends each check to the field group it inspects and to
# the family a persona-free check can name there (a category-slot edit is INTENT_DRIFT, not
# PREF_CONFLICT, without the persona; an overview that grew past 350 characters is UNSUPPORTED_CLAIM).
CHECK_DIAGNOSIS: dict[str, tuple[str, str]] = {
    "overview_length": ("UNSUPPORTED_CLAIM", "overview_text"),
    "bold_count": ("XCOMP_MISMATCH", "overview_text"),
    "bold_category_match": ("INTENT_DRIFT", "productCategoryList"),
    "category_count": ("INTENT_DRIFT", "productCategoryList"),
    "category_label_length": ("INTENT_DRIFT", "productCategoryList"),
    "category_case_duplicates": ("REDUNDANCY", "productCategoryList"),
    "query_alignment": ("INTENT_DRIFT", "productCategoryList"),
    "rq_count_unique": ("REDUNDANCY", "rqList"),
    "evidence_id_validity": ("EVIDENCE_MISMATCH", "attribution_list"),
    "evidence_exact_match": ("EVIDENCE_MISMATCH", "attribution_list"),
    "xml_round_trip": ("XCOMP_MISMATCH", "productCategoryList"),
    "banned_strings": ("UNSUPPORTED_CLAIM", "overview_text"),
}
assert list(CHECK_DIAGNOSIS) == taxonomy.CHECKS


def recompute_checks(v: View) -> dict[str, bool]:
    """The twelve checks on the shown response; a check whose input the protocol does not show
    (candidate ids, used ids) is left out."""
    r = v.response
    if r is None:
        return {"xml_round_trip": False}
    out: dict[str, bool] = {
        "overview_length": overview_length(r), "bold_count": bold_count(r),
        "bold_category_match": bold_category_match(r), "category_count": category_count(r),
        "category_label_length": category_label_length(r), "category_case_duplicates": category_case_duplicates(r),
        "query_alignment": query_alignment(r), "rq_count_unique": rq_count_unique(r),
    }  # fmt: skip
    if v.candidate_ids is not None:
        cand = set(v.candidate_ids)
        out["evidence_id_validity"] = bool(r.attribution_list) and all(
            EVIDENCE_ID.match(i) and i in cand for i in r.attribution_list
        )
    if v.used_ids is not None:
        out["evidence_exact_match"] = set(r.attribution_list) == set(v.used_ids)
    out["xml_round_trip"] = xml_round_trip(r, v.response_xml)
    out["banned_strings"] = banned_strings(r)
    return {k: out[k] for k in taxonomy.CHECKS if k in out}


def check_results(v: View) -> dict[str, bool]:
    """The deterministic_checks slot when the protocol shows it, else :func:`recompute_checks`."""
    if v.checks is not None:
        return {k: bool(v.checks[k]) for k in taxonomy.CHECKS if k in v.checks}
    return recompute_checks(v)


CHECK_STRENGTH = 0.9  # a failing check is an objective anchor (D.4)


def check_findings(v: View, strength: float = CHECK_STRENGTH) -> list[Finding]:
    out = []
    for name, ok in check_results(v).items():
        if not ok:
            fam, loc = CHECK_DIAGNOSIS[name]
            ids = (
                tuple(i for i in (v.used_ids or []) if i in set(v.candidate_ids or []))
                if fam == "EVIDENCE_MISMATCH"
                else ()
            )
            out.append(Finding(fam, loc, strength, f"check {name} fails", ids, check=name))
    if v.response is None:
        out.append(
            Finding(
                "XCOMP_MISMATCH", "productCategoryList", 0.9, f"response view unreadable: {v.response_error}"
            )
        )
    return out


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
            out += _first_conflict(units, lambda t, c=c: _violation(c, t), 0.85, f"violates {c!r}", "hard_constraints")
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


# ---- findings → the common judgment → the protocol's contract ----------------------------------
AXIS_OF_TARGET = {"P": "persona_alignment", "C": "component_consistency", "E": "evidence_grounding"}
BASE_BAD_PROB = 0.03
GROUP_RANK = {
    loc: i for i, loc in enumerate(("productCategoryList", "rqList", "attribution_list", "overview_text"))
}


def judgment(findings: Sequence[Finding], v: View) -> dict[str, Any]:
    """The PACEJudge contract from a list of findings (restricted to the protocol's families).

    Each finding lowers the axis of its family's target by 4 × strength (OVER_PERSONALIZATION_
    HALLUCINATION also half of that on persona alignment) and a failing check lowers format safety
    by 1; axes are clipped to [1, 5]. ``overall_bad_probability`` = noisy-OR of the strengths
    (0.03 when nothing fired); BAD iff ≥ 0.5. Family/location: the strongest finding (ties: Table 17
    group order categories → related queries → attributions → overview)."""
    allowed = set(v.protocol.families)
    fs = [f for f in findings if f.family in allowed]
    pen = dict.fromkeys(AXES, 0.0)
    keep = 1.0 - BASE_BAD_PROB
    for f in fs:
        pen[AXIS_OF_TARGET[FAMILY_TARGET[f.family]]] += 4 * f.strength
        if f.family == "OVER_PERSONALIZATION_HALLUCINATION":
            pen["persona_alignment"] += 2 * f.strength
        if f.check:
            pen["format_safety"] += 1.0
        keep *= 1.0 - f.strength
    axes = {a: round(min(5.0, max(1.0, 5.0 - pen[a])), 2) for a in AXES}
    bad_prob = round(1.0 - keep, 4)
    verdict = "BAD" if bad_prob >= 0.5 else "GOOD"
    pool = set(v.candidate_ids or [])
    if verdict == "BAD":
        top = sorted(fs, key=lambda f: (-f.strength, GROUP_RANK[f.location]))[0]
        family, location = top.family, top.location
        ids = [i for i in top.evidence_ids if i in pool]
        rationale = "; ".join(f.note for f in sorted(fs, key=lambda f: -f.strength)[:4])
    else:
        family = location = NONE
        ids = v.cited_in_pool()[:5]
        rationale = "no material defect found" + (
            f" (weak signals: {'; '.join(f.note for f in fs)})" if fs else ""
        )
    return {
        "verdict": verdict,
        "overall_bad_probability": bad_prob,
        "overall_quality": round(sum(axes.values()) / len(axes), 2),
        **axes,
        "defect_family": family,
        "defect_location": location,
        "supporting_evidence_ids": list(dict.fromkeys(ids)),
        "confidence": round(max(bad_prob, 1 - bad_prob), 4),
        "rationale": rationale[:600],
    }


def _slot_judgments(findings: Sequence[Finding], v: View) -> dict[str, str]:
    status = dict.fromkeys(PERSONA_SLOTS, "unconstrained")
    if v.persona is not None:
        pr = v.persona.get("preferences", {})
        for slot, key in (("hard_constraints", "hard_constraints"), ("brand_likes", "brand_likes"),
                          ("brand_avoids", "brand_avoids"), ("attribute_preferences", "attribute_preferences")):  # fmt: skip
            if pr.get(key):
                status[slot] = "honored"
        status["budget"] = "honored"
        status["history"] = "honored"
    for f in findings:
        if f.slot:
            status[f.slot] = "contradicted"
    return status


def native(common: dict[str, Any], findings: Sequence[Finding], v: View) -> dict[str, Any]:
    """The common judgment in the protocol's own contract (identity for the shared contract).

    ARES-style: the three sub-judgments all carry s_E, placed on the right side of the 3.0
    threshold for the verdict. PersonaLens-style: the slot walk from the persona findings,
    personalization = s_P (same threshold rule), response quality = s_F. EtaPP-style: verdict,
    key-points, s_F, ids, confidence."""
    p = v.protocol
    if p.common:
        return common
    bad = common["verdict"] == "BAD"
    ids, why = common["supporting_evidence_ids"], common["rationale"]
    fam, loc = common["defect_family"], common["defect_location"]
    if p.name == "ares":
        s = common["evidence_grounding"]
        s = min(s, 2.5) if bad else max(s, 3.0)
        return {"context_relevance": s, "answer_faithfulness": s, "answer_relevance": s, "defect_family": fam,
                "defect_location": loc, "supporting_evidence_ids": ids, "rationale": why}  # fmt: skip
    if p.name == "personalens":
        s = common["persona_alignment"]
        s = min(s, 2.5) if bad else max(s, 3.0)
        allowed = set(p.families)
        return {"slot_judgments": _slot_judgments([f for f in findings if f.family in allowed], v),
                "personalization": s, "response_quality": common["format_safety"], "defect_family": fam,
                "defect_location": loc, "supporting_evidence_ids": ids, "rationale": why}  # fmt: skip
    if p.name == "etapp":
        return {"verdict": common["verdict"], "key_points": {"defect_family": fam, "defect_location": loc},
                "format_safety": common["format_safety"], "supporting_evidence_ids": ids,
                "confidence": common["confidence"], "rationale": why}  # fmt: skip
    raise ValueError(f"no deterministic answer for protocol {p.name!r}")


# ---- the four judges ---------------------------------------------------------------------------
def _answer(findings: list[Finding], v: View) -> str:
    return json.dumps(native(judgment(findings, v), findings, v))


def checks_judge(messages: list[dict], params: dict) -> str:
    """``local/checks``: the L1 12-check baseline."""
    v = view(messages)
    fs = [f for f in check_findings(v) if f.family in v.protocol.families][:1]  # the first failing check
    return _answer(fs, v)


def rules_judge(messages: list[dict], params: dict) -> str:
    """``local/rules``: the deterministic PACE judge."""
    v = view(messages)
    return _answer(rule_findings(v), v)


def always_bad_judge(messages: list[dict], params: dict) -> str:
    """``local/always-bad``: BAD, the protocol's first family at its Table 17 location."""
    v = view(messages)
    fam = next(f for f in v.protocol.families if f != NONE)
    loc = taxonomy.DEFECTS[fam][1].split("[", 1)[0]
    return _answer([Finding(fam, loc, 1.0, "always BAD (degenerate baseline)")], v)


def random_judge(messages: list[dict], params: dict) -> str:
    """``local/random``: seeded by the bundle's record id."""
    v = view(messages)
    rng = random.Random(int.from_bytes(hashlib.sha256(f"random:{v.record_id}".encode()).digest()[:8], "big"))
    bad = rng.random() < 0.5
    fams = [f for f in v.protocol.families if f != NONE]
    fam, loc = (rng.choice(fams), rng.choice(LOCATIONS)) if bad else (NONE, NONE)
    axes = {a: round(rng.uniform(1, 5), 2) for a in AXES}
    if v.protocol.name == "ares":
        axes["evidence_grounding"] = round(rng.uniform(1, 2.99) if bad else rng.uniform(3, 5), 2)
    if v.protocol.name == "personalens":
        axes["persona_alignment"] = round(rng.uniform(1, 2.99) if bad else rng.uniform(3, 5), 2)
    pool = list(v.candidate_ids or [])
    p_bad = round(rng.uniform(0.5, 1.0) if bad else rng.uniform(0.0, 0.49), 4)
    common = {"verdict": "BAD" if bad else "GOOD", "overall_bad_probability": p_bad,
              "overall_quality": round(rng.uniform(1, 5), 2), **axes, "defect_family": fam, "defect_location": loc,
              "supporting_evidence_ids": rng.sample(pool, min(len(pool), rng.randint(0, 3))),
              "confidence": round(rng.uniform(0, 1), 4), "rationale": "random baseline"}  # fmt: skip
    return json.dumps(native(common, [], v))


JUDGES = {
    "checks": (checks_judge, "L1 12-check baseline judge (E.8.1): BAD iff a check fails"),
    "rules": (
        rules_judge,
        "deterministic PACE rules judge: checks + persona/history/claim/evidence/rq rules",
    ),
    "always-bad": (always_bad_judge, "degenerate judge: always BAD with a fixed family"),
    "random": (random_judge, "degenerate judge: random verdict/family/location seeded by record id"),
}


def register() -> None:
    """Register ``local/checks``, ``local/rules``, ``local/always-bad`` and ``local/random``."""
    for name, (fn, desc) in JUDGES.items():
        register_local(name, fn, desc)


register()

__all__ = ["CHECK_DIAGNOSIS", "Finding", "JUDGES", "View", "judgment", "native", "register", "rule_findings",
           "view"]  # fmt: skip
