"""Judge protocols, parsing, deterministic judges and the sweep (shopbench.judges.pace)."""

import json
import string

import pandas as pd
import pytest

from shopbench.core import taxonomy
from shopbench.judges import JudgeSpec, Judgment, ParseFailure, get_judge
from shopbench.judges.pace import deterministic as det
from shopbench.judges.pace import oracle_rules
from shopbench.judges.pace import protocols as P
from shopbench.judges.pace.parse import ERROR_KINDS, JUDGMENT_FIELDS, parse_judgment
from shopbench.judges.pace.sweep import (
    RUN_COLUMNS,
    majority_vote,
    parse_failures,
    run_table,
    stability,
    stratified_subset,
    sweep,
)
from shopbench.llm import Estimate, Gateway
from shopbench.prompts import PROMPTS_DIR

JUDGES = ["local/checks", "local/oracle-rules", "local/always-bad", "local/random"]


@pytest.fixture(scope="module")
def data(paceshop_small):
    return paceshop_small[1].records


@pytest.fixture(scope="module")
def by_id(data):
    return {r.record_id: r for r in data}


@pytest.fixture(scope="module")
def one_of_each(data):
    """A GOOD, a single-defect BAD per family, a multi-defect BAD and a swap."""
    out = [next(r for r in data if r.kind == "good")]
    for fam in taxonomy.FAMILIES:
        out.append(next(r for r in data if r.tier == 1 and r.gold_family == fam))
    out.append(next(r for r in data if r.tier == 4))
    out.append(next(r for r in data if r.kind == "swap"))
    return out


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    d = tmp_path_factory.mktemp("judges_gw")
    return Gateway(cache_dir=d / "cache", log_dir=d / "calls", progress=False)


# ---- protocols and prompts ---------------------------------------------------------------------
def test_every_protocol_renders_with_its_slots(one_of_each):
    assert set(P.PROTOCOLS) == {"pacejudge", "pacejudge_prefix_first", "geval", "mtbench_scalar_first", "persona_blind",
                                "persona_aware_generic", "ares", "personalens", "etapp"}  # fmt: skip
    for name, p in P.PROTOCOLS.items():
        names = P.slot_names(p)
        assert names, name
        assert p.prompt == f"judge_{name}" and p.schema_name == f"judge_{name}"
        assert isinstance(p, JudgeSpec) and get_judge(name) is p  # a protocol IS a registered judge
        for r in one_of_each:
            text = P.messages(p, r)[0]["content"]
            assert not text.startswith("#"), "header comments must be stripped"
            # no unfilled slot, no leaked label in ids
            assert not any(f"{{{s}}}" in text for s in names), name
            assert "full-good" not in text and "full-bad" not in text and "::swap" not in text, name
            assert P.opaque_id(r.record_id) in text
            assert r.query in text and json.dumps(P.LOCATION_LABELS[0]) in text
            # the deterministic judges can invert every prompt back to its slot values
            proto, slots = P.extract_bundle(P.messages(p, r))
            assert proto is p
            full = P.slots(p, r)
            assert slots == {k: full[k] for k in names}


def test_pacejudge_prompt_carries_the_d4_bundle_labels_and_rules(one_of_each):
    names = P.slot_names("pacejudge")
    assert set(P.BUNDLE_SLOTS) <= set(names)
    assert {"allowed_defect_labels", "allowed_location_labels", "prompt_contract_json"} <= set(names)
    r = one_of_each[1]
    text = P.messages("pacejudge", r)[0]["content"]
    assert text.startswith("You are LLMaJ for persona-conditioned multi-component shopping")
    assert "- supporting_evidence_ids must be a subset of Candidate evidence IDs." in text
    assert "- Use NONE / NONE only if no material defect is present." in text
    for fam in taxonomy.FAMILIES:
        assert fam in text
    for loc in P.LOCATIONS:
        assert loc in text
    b = P.bundle(r)
    assert set(b) == set(P.BUNDLE_SLOTS)
    assert json.loads(b["candidate_evidence_ids_json"]) == r.candidate_evidence_ids
    assert json.loads(b["deterministic_checks_json"]) == r.checks
    assert "persona_id" not in json.loads(b["persona_json"])
    assert json.loads(text.split("Return JSON only with this schema:\n", 1)[1]) == P.PACE_CONTRACT


def test_persona_blind_withholds_the_persona(one_of_each):
    r = one_of_each[0]
    blind = P.messages("persona_blind", r)[0]["content"]
    aware = P.messages("persona_aware_generic", r)[0]["content"]
    assert '{"omitted": true}' in blind and r.persona.context_summary not in blind
    assert r.persona.context_summary in aware
    assert P.PROTOCOLS["persona_blind"].off_target == ("persona_alignment",)


def test_prompt_files_have_brace_free_headers_and_known_slots():
    known = {*P.BUNDLE_SLOTS, "allowed_defect_labels", "allowed_location_labels", "prompt_contract_json"}
    for p in P.PROTOCOLS.values():
        raw = (P.template(p).text, (PROMPTS_DIR / f"{p.prompt}.txt").read_text(encoding="utf-8"))
        header = [ln for ln in raw[1].splitlines() if ln.startswith("#")]
        assert header and not any("{" in ln or "}" in ln for ln in header), p.name
        fields = {f for _, f, _, _ in string.Formatter().parse(raw[0]) if f}
        assert fields <= known, (p.name, fields - known)


def test_location_mapping():
    assert P.location_label("productCategoryList[0]") == "productCategoryList"
    assert P.location_label("rqList[1]") == "rqList"
    assert P.location_label("rqList") == "rqList"
    assert P.location_label("attribution_list") == "attribution_list"
    assert P.location_label("overview_text") == "overview_text"
    assert P.location_label("persona_swap") is None and P.location_label(None) is None
    for fam, (_, gold) in taxonomy.DEFECTS.items():
        assert P.location_label(gold) in P.LOCATIONS, fam


# ---- parsing -----------------------------------------------------------------------------------
def _good_output(r, **over):
    out = {"verdict": "BAD", "overall_bad_probability": 0.8, "overall_quality": 2.5, "persona_alignment": 4,
           "component_consistency": 2.0, "evidence_grounding": 3.5, "format_safety": 4.5,
           "defect_family": "REDUNDANCY", "defect_location": "rqList",
           "supporting_evidence_ids": r.candidate_evidence_ids[:2], "confidence": 0.9, "rationale": "dup rq"}  # fmt: skip
    out.update(over)
    return out


def _row(obj, finish="stop"):
    return {
        "status": "ok",
        "raw_output": obj if isinstance(obj, str) else json.dumps(obj),
        "finish_reason": finish,
    }


def test_parse_accepts_a_valid_answer(one_of_each):
    r = one_of_each[0]
    j = parse_judgment("pacejudge", _row(_good_output(r)), r)
    assert j["parse_ok"] and j["parse_error"] is None
    assert j["verdict"] == "BAD" and j["bad_prob"] == 0.8 and j["defect_location"] == "rqList"
    assert set(j) == {*JUDGMENT_FIELDS, "parse_ok", "parse_error", "parse_error_kind"}
    fenced = "```json\n" + json.dumps(_good_output(r)) + "\n```"
    assert parse_judgment("pacejudge", _row(fenced), r)["parse_ok"]
    # the run-table columns are the protocol's typed outcome, the one parse step of every judge
    out = P.PROTOCOLS["pacejudge"].parse(_row(_good_output(r)), r)
    assert isinstance(out, Judgment) and out.value == {k: j[k] for k in JUDGMENT_FIELDS}


@pytest.mark.parametrize(
    "mutate, kind",
    [
        (lambda o: o.update(defect_family="HALLUCINATION"), "label_outside_set"),
        (lambda o: o.update(defect_location="categories"), "label_outside_set"),
        (lambda o: o.update(verdict="good"), "label_outside_set"),
        (lambda o: o.update(confidence=100), "out_of_range"),
        (lambda o: o.update(overall_bad_probability=1.2), "out_of_range"),
        (lambda o: o.update(persona_alignment=0), "out_of_range"),
        (lambda o: o.update(supporting_evidence_ids=["M:NOTINPOOL:0"]), "evidence_outside_pool"),
        (lambda o: o.pop("rationale"), "missing_field"),
        (lambda o: o.pop("defect_location"), "missing_field"),
        (lambda o: o.update(confidence="0.9"), "wrong_type"),
        (lambda o: o.update(notes="extra"), "extra_field"),
    ],
)
def test_parse_rejects_contract_violations(one_of_each, mutate, kind):
    r = one_of_each[0]
    o = _good_output(r)
    mutate(o)
    j = parse_judgment("pacejudge", _row(o), r)
    assert j["parse_ok"] is False and j["parse_error_kind"] == kind, j["parse_error"]
    assert all(j[k] is None for k in JUDGMENT_FIELDS), "nothing is kept from a rejected answer"
    out = P.PROTOCOLS["pacejudge"].parse(_row(o), r)
    assert isinstance(out, ParseFailure) and out.stage == (
        "rule" if kind == "evidence_outside_pool" else "contract"
    )


def test_parse_rejects_invalid_json_truncation_and_call_errors(one_of_each):
    r = one_of_each[0]
    text = json.dumps(_good_output(r))
    cases = [
        (_row(text[:-10]), "invalid_json"),
        (_row("Sure! The verdict is BAD."), "invalid_json"),
        (_row(text, finish="length"), "truncated"),
        ({"status": "ok", "raw_output": None}, "empty"),
        ({"status": "error", "raw_output": None, "error": "RateLimitError: 429"}, "call_error"),
    ]
    for row, kind in cases:
        j = parse_judgment("pacejudge", row, r)
        assert not j["parse_ok"] and j["parse_error_kind"] == kind, (kind, j["parse_error"])
    assert set(ERROR_KINDS) >= {"invalid_json", "truncated", "evidence_outside_pool", "label_outside_set"}


def test_native_contracts_map_to_the_common_contract(one_of_each):
    r = one_of_each[0]
    ids = r.candidate_evidence_ids[:1]
    ares = {"context_relevance": 2, "answer_faithfulness": 3, "answer_relevance": 3.5,
            "defect_family": "UNSUPPORTED_CLAIM", "defect_location": "overview_text",
            "supporting_evidence_ids": ids, "rationale": "x"}  # fmt: skip
    j = parse_judgment("ares", _row(ares), r)
    assert j["parse_ok"] and j["verdict"] == "BAD" and j["evidence_grounding"] == pytest.approx(17 / 6)
    assert j["persona_alignment"] is None and j["bad_prob"] is None and j["confidence"] is None
    j = parse_judgment("ares", _row({**ares, "context_relevance": 3}), r)
    assert j["verdict"] == "GOOD"  # mean 3.17 >= 3.0
    bad = parse_judgment("ares", _row({**ares, "defect_family": "PREF_CONFLICT"}), r)
    assert bad["parse_error_kind"] == "label_outside_set"  # ARES-style emits evidence families only

    lens = {"slot_judgments": dict.fromkeys(P.PERSONA_SLOTS, "honored"), "personalization": 2.0,
            "response_quality": 4.0, "defect_family": "PREF_CONFLICT", "defect_location": "productCategoryList",
            "supporting_evidence_ids": [], "rationale": "x"}  # fmt: skip
    j = parse_judgment("personalens", _row(lens), r)
    assert (
        j["parse_ok"]
        and j["verdict"] == "BAD"
        and j["persona_alignment"] == 2.0
        and j["format_safety"] == 4.0
    )
    assert j["evidence_grounding"] is None and j["component_consistency"] is None
    lens["slot_judgments"]["budget"] = "violated"
    assert parse_judgment("personalens", _row(lens), r)["parse_error_kind"] == "label_outside_set"

    eta = {"verdict": "BAD", "key_points": {"defect_family": "XCOMP_MISMATCH", "defect_location": "rqList"},
           "format_safety": 5, "supporting_evidence_ids": [], "confidence": 0.7, "rationale": "x"}  # fmt: skip
    j = parse_judgment("etapp", _row(eta), r)
    assert j["parse_ok"] and (j["defect_family"], j["defect_location"]) == ("XCOMP_MISMATCH", "rqList")
    assert j["persona_alignment"] is None and P.PROTOCOLS["etapp"].pinned["persona_alignment"] == 3.0
    eta["key_points"]["defect_location"] = "rqList[1]"
    assert parse_judgment("etapp", _row(eta), r)["parse_error_kind"] == "label_outside_set"


# ---- deterministic judges through a real gateway -----------------------------------------------
@pytest.fixture(scope="module")
def det_table(data, gw):
    goods = [r for r in data if r.kind == "good"]
    tier1 = [r for r in data if r.tier == 1 and r.kind == "bad"]
    swaps = [r for r in data if r.kind == "swap"]
    bases = {g.record_id for g in goods[:20]}
    multi = [r for r in data if r.tier > 1 and r.base_record_id in bases]
    rules = sweep(gw, ["pacejudge"], ["local/oracle-rules"], goods + tier1 + swaps, run_id="det_rules")
    checks = sweep(gw, ["pacejudge"], ["local/checks"], goods + tier1 + swaps + multi, run_id="det_checks")
    return pd.concat([rules, checks], ignore_index=True)


def test_checks_judge_is_bad_exactly_when_a_check_fails(det_table, by_id):
    t = det_table[det_table.backbone == "local/checks"]
    assert t.parse_ok.all() and (t.status == "ok").all()
    for row in t.itertuples():
        checks = by_id[row.record_id].checks
        failed = [k for k in taxonomy.CHECKS if not checks[k]]
        assert (row.verdict == "BAD") == bool(failed), row.record_id
        if failed:
            assert (row.defect_family, row.defect_location) == det.CHECK_DIAGNOSIS[failed[0]]
        else:
            assert (row.defect_family, row.defect_location) == ("NONE", "NONE")
    assert (t[t.label == "GOOD"].verdict == "GOOD").all()
    assert (t[t.kind != "good"].verdict == "BAD").any()


def test_rules_judge_detects_tier1_defects_and_rarely_fires_on_good(det_table):
    t = det_table[det_table.backbone == "local/oracle-rules"]
    assert t.parse_ok.all()
    goods = t[t.kind == "good"]
    false_fire = float((goods.defect_family != "NONE").mean())
    assert false_fire <= 0.05, false_fire
    tier1 = t[(t.kind == "bad") & (t.tier == 1)]
    for fam in ["PREF_CONFLICT", "REDUNDANCY", "EVIDENCE_MISMATCH", "OVER_PERSONALIZATION_HALLUCINATION",
                "UNSUPPORTED_CLAIM"]:  # fmt: skip
        g = tier1[tier1.gold_family == fam]
        assert len(g) >= 5, fam
        detect = float((g.verdict == "BAD").mean())
        family = float((g.defect_family == fam).mean())
        loc = float((g.defect_location == g.gold_location_group).mean())
        assert detect >= 0.8 and family >= 0.7 and loc >= 0.7, (fam, detect, family, loc)
    acc = float(((t.verdict == "BAD") == (t.label == "BAD")).mean())
    assert acc >= 0.85, acc
    swaps = t[t.kind == "swap"]
    assert float((swaps.defect_family == "PREF_CONFLICT").mean()) >= 0.6
    # supporting ids always inside the record's pool (checked at parse time)
    for row in t.itertuples():
        assert set(row.supporting_evidence_ids) <= set(row.candidate_evidence_ids)


def test_degenerate_judges(data, gw, one_of_each):
    recs = one_of_each
    t = sweep(
        gw, ["pacejudge", "ares"], ["local/always-bad", "local/random"], recs, repeats=2, run_id="degenerate"
    )
    assert t.parse_ok.all()
    ab = t[t.backbone == "local/always-bad"]
    assert (ab.verdict == "BAD").all()
    assert set(ab[ab.protocol == "pacejudge"].defect_family) == {"PREF_CONFLICT"}
    assert set(ab[ab.protocol == "ares"].defect_family) == {"EVIDENCE_MISMATCH"}  # the protocol's label set
    rnd = t[(t.backbone == "local/random") & (t.protocol == "pacejudge")]
    # repeats are separate calls (distinct cache keys) yet identical: seeded by the record id
    assert (rnd.groupby("record_id").raw_output.nunique() == 1).all()
    assert rnd[rnd.repeat == 0].raw_output.nunique() > 1
    stab = stability(t)
    assert (stab.verdict_agreement == 1.0).all() and (stab.n_repeats == 2).all()


def test_deterministic_judges_answer_native_contracts(one_of_each, gw):
    t = sweep(gw, ["ares", "personalens", "etapp", "persona_blind"], ["local/oracle-rules", "local/checks"], one_of_each,
              run_id="native")  # fmt: skip
    assert t.parse_ok.all(), t[~t.parse_ok.astype(bool)].parse_error.tolist()
    for name in ("ares", "personalens"):
        fams = set(t[t.protocol == name].defect_family) - {"NONE"}
        assert fams <= set(P.PROTOCOLS[name].families), (name, fams)
    ares = t[(t.protocol == "ares") & (t.backbone == "local/oracle-rules")]
    assert ares.persona_alignment.isna().all() and ares.evidence_grounding.notna().all()
    em = ares[ares.gold_family == "EVIDENCE_MISMATCH"]
    assert (em.verdict == "BAD").all()
    lens = t[
        (t.protocol == "personalens")
        & (t.backbone == "local/oracle-rules")
        & (t.gold_family == "PREF_CONFLICT")
    ]
    walk = json.loads(lens.iloc[0].raw_output)["slot_judgments"]
    assert "contradicted" in walk.values() and lens.iloc[0].verdict == "BAD"
    blind = t[(t.protocol == "persona_blind") & (t.backbone == "local/oracle-rules")]
    assert blind.persona_alignment.isna().all()
    assert (blind[blind.gold_family == "OVER_PERSONALIZATION_HALLUCINATION"].verdict == "GOOD").all()


# ---- the sweep ---------------------------------------------------------------------------------
def test_sweep_rows_gold_cache_resume_and_dry_run(tmp_path, one_of_each):
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    recs = one_of_each[:5]
    protos, bbs = ["pacejudge", "etapp"], ["local/oracle-rules", "local/checks"]
    est = sweep(gw, protos, bbs, recs, repeats=2, run_id="s", dry_run=True)
    assert isinstance(est, Estimate) and est.calls == 40 and est.to_call == 40 and est.cost_usd == 0
    assert not gw.log_path("s").exists()

    class Ctx:  # the two RunContext methods the sweep uses
        def __init__(self):
            self.prompts_used, self.backbones_used = {}, set()

        def prompt(self, name):
            from shopbench.prompts import Prompt

            text = (PROMPTS_DIR / f"{name}.txt").read_text(encoding="utf-8")
            self.prompts_used[name] = "sha"
            return Prompt(name, text, "sha")

        def use_backbones(self, names):
            self.backbones_used.update(names)

    ctx = Ctx()
    assert sweep(gw, protos, bbs, recs, run_id="s", dry_run=True, ctx=ctx).calls == 20
    assert set(ctx.prompts_used) == {"judge_pacejudge", "judge_etapp"} and ctx.backbones_used == set(bbs)
    t = sweep(gw, protos, bbs, recs, repeats=2, run_id="s")
    assert list(t.columns) == list(RUN_COLUMNS)
    assert len(t) == 40 and not t.duplicated(["protocol", "backbone", "record_id", "repeat"]).any()
    assert set(t.item_id) == {
        f"{p}|{b}|{r.record_id}|{k}" for p in protos for b in bbs for r in recs for k in (0, 1)
    }
    assert not t.cache_hit.any()
    for row in t.itertuples():
        rec = next(r for r in recs if r.record_id == row.record_id)
        assert row.label == rec.label and row.kind == rec.kind and row.tier == rec.tier
        assert row.candidate_evidence_ids == rec.candidate_evidence_ids
        assert (row.gold_family or None) == (rec.gold_family or None) or pd.isna(row.gold_family)
    bad = t[t.record_id == recs[1].record_id].iloc[0]
    assert bad.gold_location_group == P.location_label(recs[1].gold_location)
    # same run id: resumed from the log, nothing appended
    n_log = len(gw.log("s"))
    again = sweep(gw, protos, bbs, recs, repeats=2, run_id="s")
    assert len(gw.log("s")) == n_log and again.verdict.tolist() == t.verdict.tolist()
    # new run id: every answer from the cache
    cached = sweep(gw, protos, bbs, recs, repeats=2, run_id="s2")
    assert cached.cache_hit.all() and cached.raw_output.tolist() == t.raw_output.tolist()
    assert sweep(gw, protos, bbs, recs, repeats=2, run_id="s3", dry_run=True).to_call == 0
    # re-scoring from the call log alone gives the same table
    rescored = run_table(gw.log("s"), recs).set_index("item_id")  # log order = completion order
    assert len(rescored) == 40
    assert rescored.loc[t.item_id, "verdict"].tolist() == t.verdict.tolist()


def test_schema_sampler_failures_are_counted_per_protocol_and_backbone(tmp_path, one_of_each):
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    t = sweep(
        gw, ["pacejudge", "ares"], ["local/schema-sampler", "local/oracle-rules"], one_of_each, run_id="ss"
    )
    ss = t[t.backbone == "local/schema-sampler"]
    # schema-valid random documents: the only possible failure is invented evidence ids
    assert set(ss[~ss.parse_ok.astype(bool)].parse_error_kind) <= {"evidence_outside_pool"}
    assert (~ss.parse_ok.astype(bool)).any()
    assert all(not ids for ids in ss[ss.parse_ok.astype(bool)].supporting_evidence_ids)
    pf = parse_failures(t)
    assert len(pf) == 4 and set(pf.columns) >= {
        "protocol",
        "backbone",
        "n",
        "n_parse_fail",
        "parse_fail_rate",
    }
    row = pf[(pf.protocol == "pacejudge") & (pf.backbone == "local/schema-sampler")].iloc[0]
    assert row.n == len(one_of_each) and row.n_parse_fail == row.evidence_outside_pool > 0
    assert (pf[pf.backbone == "local/oracle-rules"].n_parse_fail == 0).all()


def test_unknown_prompt_is_a_call_error(tmp_path):
    from shopbench.llm import Call

    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    (row,) = gw.run(
        [Call("x", "local/oracle-rules", [{"role": "user", "content": "judge this"}])], "bad_prompt"
    )
    assert row["status"] == "error" and "matches no judge protocol" in row["error"]


# ---- aggregation -------------------------------------------------------------------------------
def _votes(rows):
    base = {c: None for c in RUN_COLUMNS}
    out = []
    for i, (rec, bb, verdict, fam, loc, ok) in enumerate(rows):
        d = dict(base)
        d.update(protocol="pacejudge", backbone=bb, record_id=rec, repeat=0, verdict=verdict if ok else None,
                 defect_family=fam if ok else None, defect_location=loc if ok else None, parse_ok=ok,
                 bad_prob=0.9 if verdict == "BAD" else 0.1, confidence=0.8, supporting_evidence_ids=[f"M:P{i}:0"],
                 cost_usd=0.0, cache_hit=True, latency_s=0.0, label="BAD", kind="bad")  # fmt: skip
        out.append(d)
    return pd.DataFrame(out, columns=list(RUN_COLUMNS))


def test_majority_vote():
    t = _votes([
        ("r1", "a", "BAD", "REDUNDANCY", "rqList", True),
        ("r1", "b", "BAD", "XCOMP_MISMATCH", "rqList", True),
        ("r1", "c", "GOOD", "NONE", "NONE", True),
        ("r1", "d", "BAD", "XCOMP_MISMATCH", "overview_text", True),
        ("r2", "a", "GOOD", "NONE", "NONE", True),
        ("r2", "b", "BAD", "PREF_CONFLICT", "productCategoryList", True),
        ("r2", "c", "GOOD", "NONE", "NONE", True),
        ("r2", "d", "BAD", "INTENT_DRIFT", "productCategoryList", True),
        ("r3", "a", "GOOD", "NONE", "NONE", True),
        ("r3", "b", "BAD", "REDUNDANCY", "rqList", True),
        ("r3", "c", "BAD", "EVIDENCE_MISMATCH", "attribution_list", False),  # parse failure: abstains
        ("r3", "d", "GOOD", "NONE", "NONE", False),
    ])  # fmt: skip
    mv = majority_vote(t).set_index("record_id")
    assert set(mv.backbone) == {"majority@4"}
    r1 = mv.loc["r1"]
    assert (r1.verdict, r1.defect_family, r1.defect_location, r1.n_votes, r1.n_bad_votes) == (
        "BAD", "XCOMP_MISMATCH", "rqList", 4, 3)  # fmt: skip
    # 2–2 tie → BAD; family tie PREF_CONFLICT vs INTENT_DRIFT → Table 17 order (PREF_CONFLICT first)
    r2 = mv.loc["r2"]
    assert (r2.verdict, r2.defect_family, r2.defect_location) == (
        "BAD",
        "PREF_CONFLICT",
        "productCategoryList",
    )
    # 1–1 among the two parsed votes → BAD
    r3 = mv.loc["r3"]
    assert (r3.verdict, r3.defect_family, r3.n_votes) == ("BAD", "REDUNDANCY", 2)
    # k: only the first k backbones vote
    k3 = majority_vote(t, k=3).set_index("record_id")
    assert k3.loc["r2"].verdict == "GOOD" and k3.loc["r2"].defect_family == "NONE"
    assert set(k3.backbone) == {"majority@3"}
    k1 = majority_vote(t, k=1).set_index("record_id")
    assert k1.loc["r1"].defect_family == "REDUNDANCY"
    with pytest.raises(ValueError):
        majority_vote(t, k=9)
    # all votes failed → no verdict
    none = majority_vote(_votes([("r9", "a", "BAD", "REDUNDANCY", "rqList", False)])).iloc[0]
    assert none.verdict is None and not none.parse_ok and none.n_votes == 0


def test_stability_counts_disagreeing_repeats():
    t = _votes([("r1", "a", "BAD", "REDUNDANCY", "rqList", True), ("r1", "a", "BAD", "REDUNDANCY", "rqList", True),
                ("r2", "a", "BAD", "REDUNDANCY", "rqList", True), ("r2", "a", "GOOD", "NONE", "NONE", True)])  # fmt: skip
    t["repeat"] = [0, 1, 0, 1]
    s = stability(t).iloc[0]
    assert s.n_records == 2 and s.verdict_agreement == 0.5 and s.full_agreement == 0.5


def test_stratified_subset_keeps_siblings_and_covers_strata(data):
    sub = stratified_subset(data, 120, seed=7)
    assert 0 < len(sub) <= 120
    assert sub == stratified_subset(data, 120, seed=7)
    assert [r.record_id for r in sub] != [r.record_id for r in stratified_subset(data, 120, seed=8)]
    ids = {r.record_id for r in sub}
    groups = {r.base_record_id or r.record_id for r in sub}
    for r in data:  # every sibling of a chosen group is in
        if (r.base_record_id or r.record_id) in groups:
            assert r.record_id in ids
    fams = {r.gold_family for r in sub if r.tier == 1 and r.kind == "bad"}
    assert fams == set(taxonomy.FAMILIES)
    assert {r.split for r in sub} == {r.split for r in data}
    assert any(r.kind == "swap" for r in sub)


def test_rules_judge_checks_history_claims_against_the_persona(one_of_each):
    good = next(r for r in one_of_each if r.kind == "good" and r.persona.history.purchase_history)
    owned = good.persona.history.purchase_history[0].product_name

    def judged(prefix):
        resp = good.response.model_copy(update={"overview_text": prefix + good.response.overview_text})
        rec = good.model_copy(update={"response": resp})
        out = json.loads(oracle_rules.rules_judge(P.messages("pacejudge", rec), {}))
        return out["verdict"], out["defect_family"]

    assert judged("") == ("GOOD", "NONE")
    assert judged("Since you bought a Roomba j7, ") == ("BAD", "OVER_PERSONALIZATION_HALLUCINATION")
    assert judged(f"Since you bought {owned}, ")[1] != "OVER_PERSONALIZATION_HALLUCINATION"
