"""The cost and time preview (issue 14 §2): no key, no call; limits refuse a run before it starts."""

from __future__ import annotations

import json

import pytest

import shopbench.preview as PV
from shopbench.errors import UserError
from shopbench.preview import lines as LN
from shopbench.preview import notebooks as NB
from shopbench.preview import pricing as PR
from shopbench.preview import tokens as TK

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "GEMINI_API_KEY",
        "GOOGLE_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")  # fmt: skip

SMALL = """
paceshop: {n_products: 400, n_candidate_queries: 240, n_queries: 40, n_personas: 60, n_holdout: 17,
           test_goods: 24, dev_goods: 24, swap_slice: 24}
"""


@pytest.fixture
def no_calls(monkeypatch, tmp_path):
    """No key in the environment, outputs in a temporary folder, and any model call fails the test."""
    from shopbench.llm._litellm import litellm

    for k in KEYS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path / "out"))

    def boom(*a, **kw):
        raise AssertionError("the preview made a model call")

    monkeypatch.setattr(litellm, "completion", boom)
    monkeypatch.setattr(litellm, "acompletion", boom)
    return tmp_path


def _profile(tmp_path, name: str, text: str):
    p = tmp_path / f"{name}.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_full_preview_without_keys_prints_writes_and_refuses(no_calls, capsys):
    assert PV.main(["--profile", "full"]) == 0
    out = capsys.readouterr().out
    data = json.loads((no_calls / "out" / "full" / "paper" / "preview.json").read_text(encoding="utf-8"))
    nbs = {x["notebook"] for x in data["lines"]}
    assert {"10_paceshop_build", "20_pace_judge_sweep", "40_padme_synthesis", "50_padme_meta_eval",
            "80_shop_agents"} <= nbs  # fmt: skip
    api = data["totals"]["api"]
    assert api["calls"] > 100_000 and api["usd"] > 100 and api["input_tokens"] > api["output_tokens"] > 0
    assert data["totals"]["api_available"]["usd"] == 0  # nothing callable without keys
    assert any("API models can be called" in r for r in data["refusals"])
    assert "20_pace_judge_sweep" in out and "WOULD REFUSE TO START" in out
    line = next(x for x in data["lines"] if x["backbone"] == "anthropic/claude-opus-4-7")
    assert line["usd"] == pytest.approx(
        PR.price(line["model"], line["input_tokens"], line["cached_input_tokens"], line["output_tokens"]),
        rel=1e-3,
    )


def test_judge_prompt_sizes_come_from_the_real_prompts(no_calls):
    """The PACE lines' input tokens are the rendered protocol prompts (not a constant)."""
    from shopbench.config import load_profile
    from shopbench.judges.pace.protocols import get_protocol, messages

    p = _profile(no_calls, "judges", SMALL + "judging: {llm_runs: [{backbone: openai/gpt-5.4-mini, "
                 "protocols: [pacejudge, personalens], subset: 50}], deterministic_judges: [local/checks]}\n")  # fmt: skip
    pv = PV.build_preview(load_profile(p))
    lines = {x.role: x for x in pv.lines if x.backbone == "openai/gpt-5.4-mini"}
    pj, pl = lines["judge (pacejudge)"], lines["judge (personalens)"]
    assert pj.calls == pl.calls == 50
    rec = next(r for r in NB.sample_build(load_profile(p)).records if r.split == "test")
    one = TK.count_tokens(messages(get_protocol("pacejudge"), rec))
    assert 0.5 * one < pj.input_tokens / pj.calls < 2 * one
    assert pj.input_tokens != pl.input_tokens  # each protocol's own prompt
    det = next(x for x in pv.lines if x.backbone == "local/checks")
    assert det.kind == "embedded" and det.calls == 24 * 5 + 24 and det.usd == 0.0


def test_cost_cap_refuses_to_start_and_names_the_setting(no_calls, monkeypatch):
    from shopbench import pipeline

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "x" * 40)
    p = _profile(no_calls, "capped", SMALL + "backbones: [openai/gpt-5.4]\ngateway: {max_cost_usd: 0.01}\n"
                 "judging: {llm_backbones: [openai/gpt-5.4], llm_protocols: [pacejudge], llm_subset: 40}\n")  # fmt: skip
    with pytest.raises(UserError, match="raise gateway.max_cost_usd"):
        PV.check_before_run(str(p))
    ran = []
    monkeypatch.setattr(pipeline, "run_notebook", lambda *a, **k: ran.append(a))
    with pytest.raises(UserError, match="max_cost_usd"):
        pipeline.run(str(p))
    assert not ran  # nothing started
    with pytest.raises(SystemExit) as e:  # one message, exit 2, no traceback
        pipeline.main(["run", "--profile", str(p)])
    assert e.value.code == 2 and not ran


def test_local_hours_cap_refuses_and_names_the_setting(no_calls):
    p = _profile(no_calls, "slow", "gateway: {max_local_hours: 0.05}\n"
                 "judging: {deterministic_judges: [local/checks, local/random], deterministic_protocols: [pacejudge, geval]}\n")  # fmt: skip
    with pytest.raises(UserError, match="raise gateway.max_local_hours"):
        PV.check_before_run(str(p))


def test_offline_profiles_are_not_gated(no_calls):
    from shopbench.config import load_profile

    assert not PV.needs_gate(load_profile("smoke")) and not PV.needs_gate(load_profile("paper"))
    assert PV.needs_gate(load_profile("full"))


@pytest.mark.parametrize("name", ["paper", "local-llm"])
def test_offline_profiles_preview_with_every_pair_and_time_budgets(no_calls, capsys, name):
    """`make preview` on the offline profiles: ``subset``/``llm_evaluator_pairs``/``llm_recorded_pairs``
    of None mean every planned unit (it crashed on None), and an anytime sweep's hours are capped at its
    ``llm_budget_min`` (calls and tokens stay the plan)."""
    from shopbench.config import load_profile

    assert PV.main(["--profile", name]) == 0
    assert "20_pace_judge_sweep" in capsys.readouterr().out
    prof = load_profile(name)
    pv = PV.build_preview(prof)
    for run in prof.params.judging.runs():
        lines = [x for x in pv.lines if x.notebook == "20_pace_judge_sweep" and x.backbone == run.backbone]
        assert lines and sum(x.hours for x in lines) <= run.llm_budget_min / 60 + 1e-3
        assert all(x.calls > 0 for x in lines)
    ev = [x for x in pv.lines if x.notebook == "50_padme_meta_eval" and x.backbone.startswith("llamacpp/")]
    P = prof.params.padme
    assert ev and all(
        x.hours <= (P.llm_evaluator_budget_min + P.llm_recorded_budget_min) / 60 + 1e-3 for x in ev
    )
    assert all("every kept pair" in x.method for x in ev)


def test_measured_local_rates_are_read(tmp_path):
    (tmp_path / "local_llm.json").write_text(json.dumps({"results": [
        {"name": "prompt_tokens_per_s", "value": 200.0}, {"name": "smollm2_generation_tokens_per_s", "value": 20.0},
    ]}), encoding="utf-8")  # fmt: skip
    rates = PR.local_rates(tmp_path)
    assert rates["smollm2-135m-instruct"] == (200.0, 20.0)
    assert rates["qwen2.5-coder-1.5b-instruct"] == PR.LOCAL_RATES["qwen2.5-coder-1.5b-instruct"]
    assert PR.local_rates(tmp_path / "absent") == PR.LOCAL_RATES


def test_batch_mode_is_priced_at_batch_rates_except_conversation_turns(no_calls):
    """``gateway.mode: batch``: judge sweeps at the provider's batch rate (litellm's, else half), agent
    and user-simulator turns (real-time in batch mode) at the real-time rate."""
    from shopbench.config import load_profile
    from shopbench.llm.batch import batch_price_factor

    roster = ("backbones: [openai/gpt-4o, anthropic/claude-sonnet-4-5]\n"
              "judging: {llm_backbones: [openai/gpt-4o], llm_protocols: [pacejudge], llm_subset: 8}\n"
              "shopsim: {llm_agents: [{backbone: openai/gpt-4o, trials: {general: 1}}], user: anthropic/claude-sonnet-4-5}\n")  # fmt: skip
    real = PV.build_preview(load_profile(str(_profile(no_calls, "rt", SMALL + roster))))
    batch = PV.build_preview(
        load_profile(str(_profile(no_calls, "bt", SMALL + roster + "gateway: {mode: batch}\n")))
    )
    pairs = list(zip(real.lines, batch.lines, strict=True))
    judged = [(r, b) for r, b in pairs if r.role.startswith("judge") and r.usd]
    turns = [(r, b) for r, b in pairs if r.role.startswith(LN.TURN_ROLES) and r.usd]
    assert judged and turns
    for r, b in judged:
        assert (
            b.batch
            and b.usd == pytest.approx(r.usd * batch_price_factor(r.model), abs=1e-4)
            and b.usd < r.usd
        )
    assert all(not b.batch and b.usd == r.usd for r, b in turns)
    assert "batch price" in PV.render(batch) and "batch price" not in PV.render(real)


def test_provider_prompt_cache_is_priced_from_the_shared_prefix():
    """Issue 14 §4: cached input at the cache-read rate, from the prefix a sweep's prompts share. The verbatim
    D.4 prompt puts the record first, so its shared prefix is short; the prefix-first variant shares more."""
    line = PV.Line("20", "b", "anthropic/claude-sonnet-4-6", "judge", calls=10, input_tokens=30_000,
                   output_tokens=100, prefix_tokens=2_000)  # fmt: skip
    assert PR.cached_input_tokens(line) == 9 * 2_000  # the first call writes, the other nine read
    openai = PV.Line("20", "b", "openai/gpt-5.4", "judge", calls=3, input_tokens=9_000, output_tokens=1,
                     prefix_tokens=1_100)  # fmt: skip
    assert PR.cached_input_tokens(openai) == 2 * 1_024  # 128-token steps past the 1,024 minimum
    short = PV.Line("20", "b", "anthropic/claude-sonnet-4-6", "judge", calls=10, input_tokens=30_000,
                    output_tokens=1, prefix_tokens=900)  # fmt: skip
    other = PV.Line("20", "b", "fireworks_ai/x", "judge", calls=10, input_tokens=30_000, output_tokens=1,
                    prefix_tokens=2_000)  # fmt: skip
    assert PR.cached_input_tokens(short) == 0 and PR.cached_input_tokens(other) == 0
    price_full = PR.price(line.model, line.input_tokens, 0, line.output_tokens)
    price_cached = PR.price(line.model, line.input_tokens, PR.cached_input_tokens(line), line.output_tokens)
    assert price_full is not None and price_cached is not None and price_cached < price_full

    from shopbench.config import load_profile
    from shopbench.judges.pace.protocols import get_protocol, messages

    recs = [r for r in NB.sample_build(load_profile("smoke")).records if r.split == "test"][:4]
    verbatim = TK.prefix_tokens([messages(get_protocol("pacejudge"), r) for r in recs])
    first = TK.prefix_tokens([messages(get_protocol("pacejudge_prefix_first"), r) for r in recs])
    # measured here: ~150 vs ~680 tokens; both under the providers' 1,024-token minimum, so the judge sweeps
    # of the API profiles get no cached-input discount (the preview says 0, as a real run would report)
    assert verbatim < 300 < first
    system = [
        [{"role": "system", "content": "rules " * 400}, {"role": "user", "content": str(i)}] for i in range(3)
    ]
    assert TK.prefix_tokens(system) >= 400


def test_agent_lines_carry_their_system_prefix():
    """An agent's system message (τ²-bench's instruction and policy) is the prefix cached on every turn."""
    from shopbench.config import load_profile
    from shopbench.paths import ROOT

    if not (ROOT / "../shared/data/tau2_retail/policy.md").exists():
        pytest.skip("the τ²-retail data is not at ../shared/data/tau2_retail")
    pv = PV.build_preview(load_profile("padme-api"))
    agents = [x for x in pv.lines if x.notebook.startswith("40") and x.role.startswith("agent")]
    assert agents and all(x.prefix_tokens > PR.CACHE_MIN_TOKENS for x in agents)
    as_openai = PV.Line("40", "a", "openai/gpt-5.4", "agent", calls=100, input_tokens=400_000, output_tokens=1,
                        prefix_tokens=agents[0].prefix_tokens)  # fmt: skip
    assert PR.cached_input_tokens(as_openai) > 0  # a provider that caches would get the discount
