"""Deterministic baseline judges, served as ``local/<name>`` backbones (seed 000, E.8.1, D.2 D6).

They see nothing but the judge prompt, so their rows are ``measured`` baselines (issue 13 §2). Note
what ``local/checks`` sees: the D.4 bundle gives every judge ``used_evidence_ids_json`` (the ids the
GOOD response was grounded on), so its ``evidence_exact_match`` check flags an EVIDENCE_MISMATCH edit
from the prompt alone, exactly as the paper's L1 baseline does; an LLM judge is shown the same anchor.

Registered with :func:`shopbench.llm.register_local` when ``shopbench.judges.pace`` is imported, so a
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
``local/oracle-rules`` (moved to :mod:`.oracle_rules`)
    The rule-based PACE judge imports the PACEShop generator's cue lists and constraint labels, so
    it lives in its own known-answer module; nothing here imports a generator module (issue 13 §2,
    enforced by ``tests/test_import_boundaries.py``).
``local/always-bad``
    Always BAD with the first family of the protocol's label set at its Table 17 location
    (PREF_CONFLICT @ productCategoryList for the full set): the over-flagging judge the Tab. 4
    gates are built against ("These gates prevent an always-BAD judge from receiving high credit
    through over-flagging").
``local/random``
    Seeded by the bundle's record id: uniform verdict, family (of the protocol's set), location,
    scores, and up to three candidate ids. Same record → same answer, across repeats and protocols.

**How they receive the bundle.** They read the same messages an LLM judge reads:
:func:`shopbench.judges.pace.protocols.extract_bundle` matches the user message against every
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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...core import Response, taxonomy
from ...llm.local import register_local
from ...paceshop.checks import (
    EVIDENCE_ID,
    banned_strings,
    bold_category_match,
    bold_count,
    category_case_duplicates,
    category_count,
    category_label_length,
    overview_length,
    query_alignment,
    rq_count_unique,
    xml_round_trip,
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


# ---- findings → the common judgment → the protocol's contract ----------------------------------
AXIS_OF_TARGET = taxonomy.TARGET_AXIS
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
    "always-bad": (always_bad_judge, "degenerate judge: always BAD with a fixed family"),
    "random": (random_judge, "degenerate judge: random verdict/family/location seeded by record id"),
}


def register() -> None:
    """Register ``local/checks``, ``local/always-bad`` and ``local/random``."""
    for name, (fn, desc) in JUDGES.items():
        register_local(name, fn, desc)


register()

__all__ = ["CHECK_DIAGNOSIS", "Finding", "JUDGES", "View", "check_findings", "judgment", "native", "register",
           "view"]  # fmt: skip
