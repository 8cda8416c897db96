"""BAD construction: the seven deterministic defect edits of B.9 and their composition.

B.9: "We deliberately do not use an LLM prompt to generate BAD records. Each BAD record is produced
by a deterministic Python edit on a validated GOOD record drawn from the seven-family defect
taxonomy in Tab. 17 (Sec. B.5). For every defect family d the edit is fixed in advance, so the gold
defect family d and gold defect location r are known by construction":

- PREF_CONFLICT: "replace the first product category with a label that contradicts the persona's
  first hard constraint (e.g., leather handbags for a persona with avoid_leather). Location:
  productCategoryList[0]."
- OVER_PERSONALIZATION_HALLUCINATION: "prepend a fabricated persona-history reference (e.g., "Given
  their Dyson Airwrap, …") to the overview. Location: overview_text."
- XCOMP_MISMATCH: "replace the related-query list with the related-query list of an unrelated GOOD
  record. Location: rqList."
- INTENT_DRIFT: "replace the first product category with an unrelated category drawn from a fixed
  off-intent pool. Location: productCategoryList[0]."
- REDUNDANCY: "duplicate the first related query into the second slot. Location: rqList[1]."
- EVIDENCE_MISMATCH: "replace the attribution list with the attribution list of an unrelated GOOD
  record. Location: attribution_list."
- UNSUPPORTED_CLAIM: "append a fabricated product-feature claim (e.g., "It also highlights solar
  charging support.") to the overview. Location: overview_text."

"Multi-defect variants (tiers 2–4) are produced by composing edits from distinct response-field
groups (categories, related queries, attributions, overview) under the canonical group order
categories → related queries → attributions → overview, which avoids interactions between
overview-modifying edits and category-modifying edits (e.g., bolded-category alignment).
Combinations spanning two defects from the same field group are disallowed."

Our decision on the category edits (PREF_CONFLICT, INTENT_DRIFT). The sentence above implies that
a category edit keeps the bolded-category alignment, i.e. it also touches the overview. So by
default (``mirror=True``) the new label replaces category slot 0 everywhere that slot is mirrored:
``productCategoryList[0]``, ``bold_categories[0]``, the first ``**…**`` span of the overview and
the label inside ``category_search_queries[0]``. The gold location stays
``productCategoryList[0]``: the fault is the category, the overview only previews it. Nothing else
changes. With ``mirror=False`` only ``productCategoryList[0]`` changes (the literal reading); the
record then fails ``bold_category_match`` and ``query_alignment`` and is no longer stealth.

Evidence for the default: Table 26's released multi-defect records carrying PREF_CONFLICT are read by
the scalar judge as "Overview hallucinates a Dyson Airwrap ..., and includes a meaningless 'Conflict
Pick' category" — the category label is in the overview; and the stealth fraction (below) matches
Table 8 only under the mirrored reading. Both readings are built (``paceshop.category_edit``,
``compare_category_readings``); notebook 10 shows each reading's stealth fraction and notebook 30
the S2/S4 localisation each yields (issue 15).

Which edits the twelve checks see (``checks.py``), on a GOOD that passes all twelve:

=================================== =============================================================
PREF_CONFLICT, INTENT_DRIFT         stealth (mirrored); seen by bold_category_match and
                                    query_alignment when ``mirror=False``
XCOMP_MISMATCH                      stealth (the donor's five queries are distinct)
REDUNDANCY                          seen: rq_count_unique
EVIDENCE_MISMATCH                   seen: evidence_exact_match (and evidence_id_validity when the
                                    donor's ids are outside this pool, as for an unrelated record)
OVER_PERSONALIZATION_HALLUCINATION  stealth unless the overview then exceeds 350 chars
UNSUPPORTED_CLAIM                   stealth unless the overview then exceeds 350 chars
=================================== =============================================================

A BAD record is stealth when all its defects are. With the four tiers equally sized and combos
used evenly, that is (5/7 + 8/18 + 4/20 + 0/4) / 4 = 34.0 % (every quad holds EVIDENCE_MISMATCH),
close to the paper's "Stealth-defect fraction 35.1%" (Table 8); the literal ``mirror=False``
reading would give (3/7 + 2/18) / 4 = 13.5 %.
"""

from __future__ import annotations

import random
import re

from ..core import Defect, Persona, Response, taxonomy
from .checks import MAX_LABEL_CHARS, _norm, content_tokens
from .response_xml import BOLD

# INTENT_DRIFT: "an unrelated category drawn from a fixed off-intent pool" (ours; each ≤ 15 chars)
OFF_INTENT_POOL: tuple[str, ...] = (
    "Garden Hoses", "Motor Oil", "Cat Litter", "Sheet Music", "Fishing Lures", "Printer Ink", "Bike Pumps",
    "Tile Grout", "Wall Clocks", "Car Wax", "Seed Starters", "Bird Feeders", "Guitar Strings",
    "Lawn Fertilizer", "Ceiling Fans", "Shoe Polish", "Aquarium Gravel", "Spark Plugs", "Drywall Screws",
    "Pool Chlorine",
)  # fmt: skip

# OVER_PERSONALIZATION_HALLUCINATION: fabricated history items (never in the persona's history)
FABRICATED_HISTORY: tuple[str, ...] = (
    "Dyson Airwrap", "Peloton Bike", "Vitamix 5200 blender", "Roomba j7", "KitchenAid stand mixer",
    "Nespresso Vertuo", "Theragun Pro", "Instant Pot Duo", "Oura Ring", "Traeger grill",
)  # fmt: skip

# UNSUPPORTED_CLAIM: fabricated product-feature claims
FABRICATED_CLAIMS: tuple[str, ...] = (
    "It also highlights solar charging support.", "It also highlights a lifetime replacement guarantee.",
    "It also highlights NASA-grade thermal insulation.", "It also highlights built-in GPS tracking.",
    "It also highlights self-cleaning nano coating.", "It also highlights voice-assistant control.",
    "It also highlights FDA-cleared medical-grade materials.", "It also highlights a 10-year battery life.",
)  # fmt: skip

# PREF_CONFLICT fallbacks when the persona has no known hard constraint (ours): an avoided brand,
# else a label that contradicts the budget ("directly violates persona constraints or preferences",
# Table 17).
BUDGET_CONFLICT = {"budget": "Luxury Splurges", "mid-range": "Luxury Splurges", "premium": "Bargain Bin"}

CATEGORY_FAMILIES = ("PREF_CONFLICT", "INTENT_DRIFT")


def _replace_slot0(r: Response, label: str, mirror: bool) -> Response:
    old = r.productCategoryList[0]
    upd: dict = {"productCategoryList": [label, *r.productCategoryList[1:]]}
    if mirror:
        if r.bold_categories and r.bold_categories[0] == old:
            upd["bold_categories"] = [label, *r.bold_categories[1:]]
        m = BOLD.search(r.overview_text)
        if m and m.group(1) == old:
            upd["overview_text"] = r.overview_text[: m.start()] + f"**{label}**" + r.overview_text[m.end() :]
        if r.category_search_queries:
            q0 = r.category_search_queries[0]
            pat = re.compile(re.escape(old), re.I)
            new_q = pat.sub(label.lower(), q0, count=1) if pat.search(q0) else label.lower()
            upd["category_search_queries"] = [new_q, *r.category_search_queries[1:]]
    return r.model_copy(update=upd, deep=True)


def pref_conflict_label(persona: Persona, r: Response) -> str:
    """The contradicting label: the ``conflict_label`` of the persona's first hard constraint known
    to taxonomy.CONSTRAINTS_BY_TEXT; without one, an avoided brand; else the budget contradiction.
    A candidate equal (ignoring case) to a label already in the response is skipped."""
    taken = {_norm(x) for x in r.productCategoryList}
    cands = [taxonomy.CONSTRAINTS_BY_TEXT[t].conflict_label for t in persona.preferences.hard_constraints
             if t in taxonomy.CONSTRAINTS_BY_TEXT]  # fmt: skip
    cands += [b.strip()[:MAX_LABEL_CHARS].strip() for b in persona.preferences.brand_avoids if b.strip()]
    b = persona.shopping_context.budget.lower()
    cands.append(BUDGET_CONFLICT["budget" if "budget" in b else "premium" if "premium" in b else "mid-range"])
    for c in cands:
        if _norm(c) not in taken:
            return c
    return "Luxury Splurges" if _norm("Luxury Splurges") not in taken else "Bargain Bin"


def off_intent_label(r: Response, rng: random.Random) -> str:
    """A label from :data:`OFF_INTENT_POOL` that differs from every label of the response and shares
    no content token with its labels, search queries or related queries; drawn with ``rng``."""
    taken = {_norm(x) for x in r.productCategoryList}
    toks: set[str] = set()
    for s in [*r.productCategoryList, *r.category_search_queries, *r.rqList]:
        toks |= content_tokens(s)
    cands = [c for c in OFF_INTENT_POOL if _norm(c) not in taken and not content_tokens(c) & toks]
    cands = cands or [c for c in OFF_INTENT_POOL if _norm(c) not in taken]
    return cands[rng.randrange(len(cands))]


def fabricated_history(persona: Persona, r: Response, rng: random.Random) -> str:
    """An item from :data:`FABRICATED_HISTORY` that is not in the persona's purchase history (by
    name or brand) and not already mentioned in the overview."""
    hist = " ".join(f"{h.product_name} {h.brand}" for h in persona.history.purchase_history).lower()
    ov = r.overview_text.lower()
    cands = [
        x
        for x in FABRICATED_HISTORY
        if x.split()[0].lower() not in hist and x.lower() not in hist and x.lower() not in ov
    ]
    if not cands:
        raise ValueError("every fabricated history item occurs in the persona's history")
    return cands[rng.randrange(len(cands))]


# ---- the seven edits --------------------------------------------------------------------------
def pref_conflict(r: Response, persona: Persona, mirror: bool = True) -> Response:
    """PREF_CONFLICT → productCategoryList[0] := :func:`pref_conflict_label` (mirrored, see module)."""
    return _replace_slot0(r, pref_conflict_label(persona, r), mirror)


def intent_drift(r: Response, rng: random.Random, mirror: bool = True) -> Response:
    """INTENT_DRIFT → productCategoryList[0] := :func:`off_intent_label` (mirrored, see module)."""
    return _replace_slot0(r, off_intent_label(r, rng), mirror)


def xcomp_mismatch(r: Response, donor: Response) -> Response:
    """XCOMP_MISMATCH → rqList := donor.rqList (an unrelated GOOD record)."""
    if [_norm(x) for x in donor.rqList] == [_norm(x) for x in r.rqList]:
        raise ValueError("XCOMP_MISMATCH needs a donor with a different rqList")
    return r.model_copy(update={"rqList": list(donor.rqList)}, deep=True)


def redundancy(r: Response) -> Response:
    """REDUNDANCY → rqList[1] := rqList[0]."""
    if len(r.rqList) < 2:
        raise ValueError("REDUNDANCY needs at least two related queries")
    return r.model_copy(update={"rqList": [r.rqList[0], r.rqList[0], *r.rqList[2:]]}, deep=True)


def evidence_mismatch(r: Response, donor: Response) -> Response:
    """EVIDENCE_MISMATCH → attribution_list := donor.attribution_list (an unrelated GOOD record)."""
    if set(donor.attribution_list) == set(r.attribution_list):
        raise ValueError("EVIDENCE_MISMATCH needs a donor with a different attribution_list")
    return r.model_copy(update={"attribution_list": list(donor.attribution_list)}, deep=True)


def over_personalization(r: Response, persona: Persona, rng: random.Random) -> Response:
    """OVER_PERSONALIZATION_HALLUCINATION → overview_text := "Given their <item>, " + overview, the item
    not in the persona's purchase history. A plain capitalised first word ("For", "Shopping") is
    lower-cased so the sentence reads on; bold spans and everything else are kept."""
    item = fabricated_history(persona, r, rng)
    ov = r.overview_text
    if re.match(r"^[A-Z][a-z]+\b", ov):
        ov = ov[0].lower() + ov[1:]
    return r.model_copy(update={"overview_text": f"Given their {item}, {ov}"}, deep=True)


def unsupported_claim(r: Response, rng: random.Random) -> Response:
    """UNSUPPORTED_CLAIM → overview_text := overview + " " + a claim from :data:`FABRICATED_CLAIMS`
    not already in it."""
    ov = r.overview_text
    cands = [c for c in FABRICATED_CLAIMS if c.lower() not in ov.lower()]
    claim = cands[rng.randrange(len(cands))]
    return r.model_copy(update={"overview_text": f"{ov.rstrip()} {claim}"}, deep=True)


def _order(fam: str) -> int:
    return taxonomy.GROUP_ORDER.index(taxonomy.DEFECTS[fam][0])


def inject(
    good: Response,
    persona: Persona,
    families: tuple[str, ...],
    donor: Response,
    rng: random.Random,
    mirror: bool = True,
) -> tuple[Response, list[Defect]]:
    """Apply one to four edits to a GOOD response in the canonical group order (categories →
    related queries → attributions → overview). Families of one field group are refused
    (``ValueError``), as are unknown families. Returns the BAD response and its gold defects in
    canonical order. ``donor`` is the unrelated GOOD record XCOMP_MISMATCH and EVIDENCE_MISMATCH
    draw from; ``rng`` makes the pool choices (same rng state → same edit)."""
    fams = tuple(families)
    if not fams:
        raise ValueError("no defect family given")
    unknown = [f for f in fams if f not in taxonomy.DEFECTS]
    if unknown:
        raise ValueError(f"unknown defect families {unknown}; known: {taxonomy.FAMILIES}")
    groups = [taxonomy.DEFECTS[f][0] for f in fams]
    if len(set(groups)) != len(groups):
        raise ValueError(f"defects of one field group are never combined (Table 17): {fams}")
    r = good
    defects: list[Defect] = []
    for fam in sorted(fams, key=_order):
        if fam == "PREF_CONFLICT":
            r = pref_conflict(r, persona, mirror)
        elif fam == "INTENT_DRIFT":
            r = intent_drift(r, rng, mirror)
        elif fam == "XCOMP_MISMATCH":
            r = xcomp_mismatch(r, donor)
        elif fam == "REDUNDANCY":
            r = redundancy(r)
        elif fam == "EVIDENCE_MISMATCH":
            r = evidence_mismatch(r, donor)
        elif fam == "OVER_PERSONALIZATION_HALLUCINATION":
            r = over_personalization(r, persona, rng)
        else:
            r = unsupported_claim(r, rng)
        group, loc = taxonomy.DEFECTS[fam]
        defects.append(Defect(family=fam, location=loc, group=group))
    return r, defects


def gold_strings(defects: list[Defect]) -> tuple[str, str]:
    """(family, location), each "+"-joined in canonical group order, e.g.
    ("EVIDENCE_MISMATCH+OVER_PERSONALIZATION_HALLUCINATION", "attribution_list+overview_text")."""
    ds = sorted(defects, key=lambda d: taxonomy.GROUP_ORDER.index(d.group) if d.group in taxonomy.GROUP_ORDER
                else len(taxonomy.GROUP_ORDER))  # fmt: skip
    return "+".join(d.family for d in ds), "+".join(d.location for d in ds)


def changed_fields(before: Response, after: Response) -> set[str]:
    """Where two responses differ: ``field[i]`` for a list entry, ``field`` for a length change or
    a scalar field (for audits and tests of the edits' footprint)."""
    out: set[str] = set()
    for name in Response.model_fields:
        a, b = getattr(before, name), getattr(after, name)
        if a == b:
            continue
        if isinstance(a, list) and len(a) == len(b):
            out.update(f"{name}[{i}]" for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
        else:
            out.add(name)
    return out
