"""The API profiles run the papers' own experiments (issue 14 §1): each is compared with the rosters
of :mod:`shopbench.profiles.rosters`, which cite the seeds."""

from __future__ import annotations

import pytest

from shopbench.config import load_profile
from shopbench.llm import parse_backbones
from shopbench.profiles import as_plain
from shopbench.profiles import rosters as R

API_PROFILES = ("pace-api", "shop-agents-api", "padme-api", "full")


def _models(prof) -> dict[str, str]:
    """backbone name -> litellm model, for the profile's backbones."""
    return {b.name: b.model for b in parse_backbones([as_plain(e) for e in prof.params.backbones])}


def _model(prof, name: str) -> str:
    return _models(prof).get(name, name)  # an unlisted name is a litellm model name


def _lit(models) -> list[str]:
    return [m.litellm for m in models]


@pytest.fixture(scope="module")
def profiles():
    return {name: load_profile(name) for name in API_PROFILES}


@pytest.mark.parametrize("name", ["pace-api", "full"])
def test_pace_profile_is_seed_000s_experiment(profiles, name):
    prof = profiles[name]
    J = prof.params.judging
    runs = J.runs()
    assert sorted(_model(prof, r.backbone) for r in runs) == sorted(_lit(R.PACE_JUDGES))
    for r in runs:
        assert set(R.PACE_RUBRIC_PROTOCOLS) <= set(r.protocols or ()), r.backbone
        adapted = set(R.PACE_ADAPTED_PROTOCOLS) & set(r.protocols or ())
        assert adapted == (set(R.PACE_ADAPTED_PROTOCOLS) if r.backbone == R.PACE_ADAPTED_BACKBONE else set())
        assert r.subset == R.PACE_TEST_RECORDS
    # the LLM generator with the B.9 prompt, never the offline templates
    assert _model(prof, prof.params.paceshop.generator) == R.PACE_GENERATOR.litellm
    P = prof.params.paceshop
    assert (P.n_queries, P.personas_per_query, P.test_goods, P.swap_slice) == (1132, 4, 680, 680)


@pytest.mark.parametrize("name", ["shop-agents-api", "full"])
def test_shop_profile_is_seed_002s_experiment(profiles, name):
    prof = profiles[name]
    S = prof.params.shopsim
    assert sorted(_model(prof, a.backbone) for a in S.llm_agents) == sorted(_lit(R.SHOP_AGENTS))
    for a in S.llm_agents:
        assert a.trial_counts() == {"general": 100, "grocery": 50, "refusal": 10}
        assert a.tool_mode == "native"
    entries = {b.name: b for b in parse_backbones([as_plain(e) for e in prof.params.backbones])}
    for a in S.llm_agents:  # self-hosted open-weight agents: a vLLM/SGLang URL (a list is allowed)
        assert entries[a.backbone].model.startswith("hosted_vllm/") and entries[a.backbone].api_bases
    assert _model(prof, S.user) == R.SHOP_USER.litellm
    assert _model(prof, S.judge) == R.SHOP_JUDGE.litellm
    assert _model(prof, S.second_judge) == R.SHOP_SECOND_JUDGE.litellm
    assert S.second_judge_trials == R.SHOP_SECOND_JUDGE_TRIALS and S.n_boot == 6000


@pytest.mark.parametrize("name", ["padme-api", "full"])
def test_padme_profile_is_seed_003s_experiment(profiles, name):
    from shopbench.judges.padme.roster import PAPER_ROSTER

    prof = profiles[name]
    P = prof.params.padme
    # the three agent models of §5.1, one per cell (padme.agents); not one of them standing in for all
    assert isinstance(P.agent, list) and [_model(prof, a) for a in P.agents] == _lit(R.PADME_AGENTS)
    assert _model(prof, P.user) == R.PADME_USER.litellm
    assert _model(prof, P.steering) == R.PADME_STEERING.litellm
    judges = [j.given() for j in P.filter_judges or []]
    assert [_model(prof, j["backbone"]) for j in judges] == _lit(R.PADME_FILTER_JUDGES)
    assert [j["name"] for j in judges] == ["J1", "J2"]
    assert P.retries == R.PADME_RETRIES and P.evaluator_runs == R.PADME_EVALUATOR_RUNS
    assert P.llm_evaluator_pairs == R.PADME_EVALUATOR_PAIRS
    evs = [e.given() for e in P.evaluators or []]
    assert [e["name"] for e in evs] == [m.paper_name for m in R.PADME_EVALUATORS]
    assert [e["name"] for e in evs] == [r["name"] for r in PAPER_ROSTER]  # Table 18's rows, in order
    assert [_model(prof, e["backbone"]) for e in evs] == _lit(R.PADME_EVALUATORS)
    assert {e["name"] for e in evs if e.get("in_pipeline")} == {
        m.paper_name for m in R.PADME_EVALUATORS if m.in_pipeline
    }
    assert {e["name"] for e in evs if e.get("in_pipeline")} == {
        r["name"] for r in PAPER_ROSTER if r["in_pipeline"]
    }


@pytest.mark.parametrize("name", API_PROFILES)
def test_every_model_is_a_litellm_name_and_no_local_llm_stands_in(profiles, name):
    from shopbench.llm._litellm import litellm

    prof = profiles[name]
    entries = parse_backbones([as_plain(e) for e in prof.params.backbones])
    for b in entries:
        assert not b.model.startswith("llamacpp/"), f"{name}: {b.model} is not a paper's model"
        if not b.model.startswith("local/"):
            litellm.get_llm_provider(model=b.model)  # raises for a name litellm does not know
    paper = {m.litellm for m in R.all_models()}
    for b in entries:  # every API backbone plays a role in a paper, or says what it stands in for
        if not b.model.startswith("local/"):
            assert b.model in paper or b.substitute_for, f"{name}: {b.model} plays no role in the papers"
    subs = {m.litellm: m.substitute_for for m in R.all_models() if m.substitute_for}
    for b in entries:
        assert b.substitute_for == subs.get(b.model), b.model


def test_full_is_the_three_experiments(profiles):
    full = profiles["full"].params
    assert full.judging == profiles["pace-api"].params.judging
    assert full.paceshop == profiles["pace-api"].params.paceshop
    assert full.shopsim == profiles["shop-agents-api"].params.shopsim
    assert full.padme == profiles["padme-api"].params.padme
    fm = set(_models(profiles["full"]).values())
    for name in ("pace-api", "shop-agents-api", "padme-api"):
        assert set(_models(profiles[name]).values()) <= fm, name
    assert profiles["full"].params.gateway.max_local_hours is not None


def test_api_base_list_and_substitute_are_typed_fields(tmp_path):
    from shopbench.errors import ParamError

    p = tmp_path / "fleet.yaml"
    p.write_text(
        "backbones:\n"
        "  - {name: a, model: hosted_vllm/Qwen/Qwen3-30B-A3B, api_base: [http://127.0.0.1:8001/v1, http://127.0.0.1:8002/v1]}\n"
        "  - {name: b, model: openai/gpt-5.4-mini, substitute_for: some-retired-model}\n"
        "gateway: {max_local_hours: 1.5}\n",
        encoding="utf-8",
    )
    prof = load_profile(p)
    a, b = parse_backbones([as_plain(e) for e in prof.params.backbones])
    assert a.api_bases == ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"]
    assert a.api_base == "http://127.0.0.1:8001/v1"
    assert b.substitute_for == "some-retired-model" and b.to_dict()["substitute_for"] == "some-retired-model"
    p.write_text("backbones:\n  - {model: hosted_vllm/x, api_base: []}\n", encoding="utf-8")
    with pytest.raises(ParamError):
        load_profile(p)
    p.write_text("gateway: {max_local_hours: 0}\n", encoding="utf-8")
    with pytest.raises(ParamError, match="max_local_hours"):
        load_profile(p)
