"""Typed profiles (issue 11 §5, issue 12 §3-4): every bad key and value is one clear error naming the
file, the key path and the fix; the pipeline reports user errors without a traceback and skips the
notebooks that depend on a failed one."""

import copy
import dataclasses
import json

import pytest
import yaml

from shopbench import pipeline, pipeline_steps
from shopbench.config import OWNER_FILE, ParamError, claim_outputs, load_profile
from shopbench.context import start
from shopbench.paths import PARAMS_DIR
from shopbench.profiles import NotebooksParams, PaceshopParams, ProfileParams, validate_profile

SMOKE = yaml.safe_load((PARAMS_DIR / "smoke.yaml").read_text(encoding="utf-8"))


def profile_file(tmp_path, edit=None, name="bad.yaml"):
    """smoke.yaml with ``edit(data)`` applied, written to ``tmp_path/name``."""
    data = copy.deepcopy(SMOKE)
    data.pop("profile", None)
    if edit:
        edit(data)
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return p


def setter(path, value):
    def edit(data):
        *parents, last = path.split(".")
        node = data
        for k in parents:
            node = node.setdefault(k, {})
        node[last] = value

    return edit


def renamer(path, new):
    def edit(data):
        *parents, last = path.split(".")
        node = data
        for k in parents:
            node = node[k]
        node[new] = node.pop(last)

    return edit


# (edit, key path in the message, problem, fix): the drills of issue 12 and a few more
BAD = [
    (
        renamer("gateway.timeout_s", "timeout_secs"),
        "gateway.timeout_secs",
        "unknown key",
        "did you mean 'timeout_s'?",
    ),
    (renamer("gateway", "gatway"), "gatway", "unknown key", "did you mean 'gateway'?"),
    (
        renamer("notebooks.30_pace_metrics.n_boot", "n_resamples"),
        "notebooks.30_pace_metrics.n_resamples",
        "unknown key",
        "did you mean 'n_boot'?",
    ),
    (
        setter("gateway.max_retries", -3),
        "gateway.max_retries",
        "must be >= 0, got int -3",
        "use a value >= 0",
    ),
    (
        setter("gateway.concurrency.openai", 0),
        "gateway.concurrency.openai",
        "must be >= 1, got int 0",
        "use a value >= 1",
    ),
    (
        setter("gateway.concurrency.openai", "many"),
        "gateway.concurrency.openai",
        "must be a whole number, got str 'many'",
        "write a number",
    ),
    (
        setter("paceshop.n_queries", True),
        "paceshop.n_queries",
        "must be a whole number, got bool True",
        "true/false are not numbers",
    ),
    (
        setter("paceshop.n_queries", -40),
        "paceshop.n_queries",
        "must be >= 1, got int -40",
        "use a value >= 1",
    ),
    (
        setter("judging.repeats", "one"),
        "judging.repeats",
        "must be a whole number, got str 'one'",
        "write a number",
    ),
    (setter("gateway.timeout_s", 0), "gateway.timeout_s", "must be > 0", "use a value > 0"),
    (setter("judging.split", "tset"), "judging.split", "must be one of", "did you mean 'test'?"),
    (
        setter("shopsim.scripted_agents", ["competent", "phantm"]),
        "shopsim.scripted_agents[1]",
        "must be one of",
        "did you mean 'phantom'?",
    ),
    (
        setter("shopsim.trials", {"genral": 3}),
        "shopsim.trials.genral",
        "unknown key",
        "did you mean 'general'?",
    ),
    (
        setter("padme.filter_judges", [{"heuristic": "J1", "noise": "high"}]),
        "padme.filter_judges[0].noise",
        "must be a number",
        "write a number",
    ),
    (
        setter("padme.sources", [{"kind": "shop", "n_prodcts": 5}]),
        "padme.sources[0].n_prodcts",
        "unknown key",
        "did you mean 'n_products'?",
    ),
    (setter("padme.evaluator_runs", 2.5), "padme.evaluator_runs", "must be a whole number", "write a number"),
    (
        setter("notebooks.70_agreement", {"sim_alpha": 2}),
        "notebooks.70_agreement.sim_alpha",
        "must be <= 1",
        "use a value <= 1",
    ),
    (
        setter("notebooks.30_pace_metric", {}),
        "notebooks.30_pace_metric",
        "unknown key",
        "did you mean '30_pace_metrics'?",
    ),
    (
        setter("backbones", ["local/echo", "local/echo"]),
        "backbones",
        "duplicate backbone names",
        "give each a distinct 'name'",
    ),
    (setter("seed", True), "seed", "must be a whole number, got bool True", "write a number"),
    (
        setter("judging.llm_protocols", ["pacejudge", "aers"]),
        "judging.llm_protocols[1]",
        "must be one of",
        "did you mean 'ares'?",
    ),
    (
        setter("judging.llm_backbones", ["local/echo"]),  # smoke also has llm_runs: one would be ignored
        "judging",
        "both llm_runs and llm_backbones are given",
        "or set llm_runs: [] and keep llm_backbones",
    ),
    (
        setter("paceshop.catalog", "synthtic"),
        "paceshop.catalog",
        "must be one of",
        "did you mean 'synthetic'?",
    ),
]


@pytest.mark.parametrize("edit, key, problem, fix", BAD, ids=[b[1] + ":" + b[2][:20] for b in BAD])
def test_bad_key_or_value_names_file_key_and_fix(tmp_path, edit, key, problem, fix):
    p = profile_file(tmp_path, edit)
    with pytest.raises(ParamError) as e:
        load_profile(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}, line ") or msg.startswith(f"{p}: "), msg
    assert f"key '{key}': " in msg and problem in msg, msg
    assert "Fix: " in msg and fix in msg.split("Fix: ", 1)[1], msg
    assert e.value.file == str(p) and e.value.field == key and e.value.fix


def test_unknown_key_message_is_exactly_the_documented_one(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("seed: 1\ngateway:\n  timeout_secs: 30\n", encoding="utf-8")
    with pytest.raises(ParamError) as e:
        load_profile(p)
    assert (
        str(e.value)
        == f"{p}, line 3: key 'gateway.timeout_secs': unknown key. Fix: did you mean 'timeout_s'?"
    )


def test_invalid_yaml_has_line_and_fix(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("seed: 1\ngateway:\n  concurrency: {openai: 8\n", encoding="utf-8")
    with pytest.raises(ParamError) as e:
        load_profile(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}, line ") and "not valid YAML" in msg and "Fix: check the indentation" in msg


def test_top_level_must_be_a_mapping(tmp_path):
    p = tmp_path / "list.yaml"
    p.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(ParamError, match=r"list\.yaml: the top level must be a mapping.*Fix: "):
        load_profile(p)


def test_unknown_profile_names_the_known_ones_and_the_fix():
    with pytest.raises(ParamError) as e:
        load_profile("nosuch")
    msg = str(e.value)
    known = ", ".join(sorted(p.stem for p in PARAMS_DIR.glob("*.yaml")))
    assert "nosuch.yaml" in msg and f"Known profiles: {known}" in msg and "Fix: use one of" in msg


def test_repo_profiles_validate_and_keep_their_values():
    for name in ("smoke", "paper", "full"):
        prof = load_profile(name)
        assert isinstance(prof.params, ProfileParams) and prof.name == name
    smoke = load_profile("smoke").params
    assert smoke.notebooks.pace_metrics.n_boot == 200 and smoke.padme.evaluator_runs == 3
    assert smoke.gateway.concurrency == {"llamacpp": 1, "local": 4, "openai": 8, "anthropic": 8}
    assert smoke.gateway.timeout_s == 120.0 and isinstance(smoke.gateway.timeout_s, float)
    assert smoke.notebooks.agreement.n_perm == 100_000  # the default: smoke does not set it
    assert smoke.padme.llm_runs == 3  # llm_evaluator_runs unset: evaluator_runs
    # the cascade's store key is built from the settings as the file gave them (unchanged by typing)
    raw = SMOKE["padme"]
    assert smoke.padme.run_key_fields() == {
        k: raw.get(k)
        for k in (
            "steering",
            "filter_judges",
            "agent",
            "user",
            "retries",
            "criteria",
            "sources",
            "order_swap",
        )
    }
    # a τ² source setting (tau2-bench's tools vs the corrected ones) changes the key: no stale resume
    data = copy.deepcopy(SMOKE)
    data["padme"]["sources"] = [dict(s, fidelity="corrected") if s.get("kind") == "tau2" else s
                                for s in data["padme"]["sources"]]  # fmt: skip
    assert validate_profile(data, "x.yaml").padme.run_key_fields() != smoke.padme.run_key_fields()


def test_defaults_agree_with_the_library():
    from shopbench.judges.pace.protocols import PROTOCOLS
    from shopbench.paceshop.build import BuildConfig
    from shopbench.pipeline_steps import load_pipeline
    from shopbench.profiles.judging import PROTOCOL_NAMES
    from shopbench.profiles.shopsim import SCRIPTED_AGENT_NAMES
    from shopbench.shopsim.agents import SCRIPTED_AGENTS

    defaults = {f.name: f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
                for f in dataclasses.fields(BuildConfig) if f.name != "seed"}  # fmt: skip
    assert PaceshopParams().model_dump() == defaults
    assert set(SCRIPTED_AGENT_NAMES) == set(SCRIPTED_AGENTS)
    assert PROTOCOL_NAMES == tuple(PROTOCOLS)
    aliases = [info.alias for info in NotebooksParams.model_fields.values()]
    assert aliases == [s.name for s in load_pipeline()]


def test_typed_sections_reach_the_library(tmp_path):
    prof = load_profile(profile_file(tmp_path, setter("paceshop.n_queries", 12), name="typed.yaml"))
    from shopbench.paceshop.build import BuildConfig

    cfg = BuildConfig.from_profile(prof)
    assert (
        cfg.n_queries == 12
        and cfg.seed == SMOKE["seed"]
        and cfg.n_products == SMOKE["paceshop"]["n_products"]
    )


def test_missing_catalog_file_names_the_key(tmp_path):
    from shopbench.paceshop.build import BuildConfig
    from shopbench.shopsim.experiment import build_environment

    prof = load_profile(
        profile_file(tmp_path, setter("paceshop.catalog", {"json": "no/such.json"}), "cat.yaml")
    )
    with pytest.raises(
        ParamError, match=r"key 'paceshop\.catalog\.json': no file at .*no/such\.json\. Fix: "
    ):
        BuildConfig.from_profile(prof)
    with pytest.raises(ParamError, match=r"key 'shopsim\.catalog': no product file at .*Fix: "):
        build_environment({"catalog": "no/such.jsonl"}, root=tmp_path)


def test_plain_sections_are_validated_like_profiles():
    from shopbench.padme.experiment import build_judges
    from shopbench.shopsim.experiment import agent_plans

    with pytest.raises(ParamError, match=r"key 'padme\.filter_judges\[0\]\.noise': must be a number"):
        build_judges([{"heuristic": "J1", "noise": "x"}])
    with pytest.raises(ParamError, match=r"key 'shopsim\.llm_agents\[0\]\.tool_mode'.*did you mean 'json'"):
        agent_plans({"llm_agents": [{"backbone": "b", "tool_mode": "jsno"}]}, [])
    (j1, j2) = build_judges(None)
    assert (j1.name, j2.name) == ("J1", "J2")


def test_profile_label_must_match_the_file_name(tmp_path):
    p = tmp_path / "mycopy.yaml"
    p.write_text((PARAMS_DIR / "smoke.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ParamError) as e:
        load_profile(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}, line 2: key 'profile': says 'smoke' but the file is mycopy.yaml")
    assert "Fix: set 'profile: mycopy' or remove the key" in msg


def test_copied_profile_writes_its_own_outputs(tmp_path, outputs):
    copy_path = profile_file(tmp_path, name="mycopy.yaml")  # smoke without its `profile:` label
    ctx = start(copy_path, notebook="99_test")
    assert ctx.out == outputs / "mycopy" and ctx.profile.name == "mycopy"
    assert ctx.provenance().profile == "mycopy"
    assert not (outputs / "smoke").exists()


def test_two_profile_files_never_share_an_output_folder(tmp_path, outputs):
    first = load_profile("smoke")
    assert claim_outputs(first) == outputs / "smoke"
    assert (outputs / "smoke" / OWNER_FILE).read_text().strip() == "params/smoke.yaml"
    claim_outputs(first)  # the owner may claim again
    other = tmp_path / "elsewhere"
    other.mkdir()
    twin = profile_file(other, name="smoke.yaml")
    with pytest.raises(ParamError) as e:
        start(twin)
    msg = str(e.value)
    assert f"{twin}: the output folder {outputs / 'smoke'} belongs to the profile params/smoke.yaml" in msg
    assert "Fix: rename your file" in msg


def test_gateway_is_built_from_the_typed_section(tmp_path, outputs):
    p = profile_file(tmp_path, setter("gateway.concurrency", {"openai": 3, "local": 2}), name="gw.yaml")
    gw = start(p).gateway
    assert gw.concurrency["openai"] == 3 and gw.concurrency["local"] == 2
    assert gw.timeout_s == 120.0 and gw.max_retries == 4 and gw.max_cost_usd == 0.0


def test_validate_profile_reports_how_many_more_problems():
    data = {"seed": -1, "gatway": {}, "padme": {"retries": -2}}
    with pytest.raises(
        ParamError, match=r"x\.yaml: key 'seed': must be >= 0.*\(2 more problems after this one\)"
    ):
        validate_profile(data, "x.yaml")


# ---- the pipeline's user errors -----------------------------------------------------------------


def test_pipeline_unknown_profile_is_one_line_without_traceback(capsys):
    with pytest.raises(SystemExit) as e:
        pipeline.main(["run", "--profile", "nosuch"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no parameter file") and "Traceback" not in err and err.count("\n") == 1


def test_pipeline_bad_value_stops_before_any_notebook(tmp_path, outputs, capsys, monkeypatch):
    monkeypatch.setattr(pipeline, "run_notebook", lambda *a, **k: pytest.fail("no notebook may run"))
    p = profile_file(tmp_path, setter("judging.repeats", "one"), name="rep.yaml")
    with pytest.raises(SystemExit) as e:
        pipeline.main(["run", "--profile", str(p)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"{p}, line " in err and "key 'judging.repeats'" in err and "Fix: " in err
    assert pipeline.main(["check", "--profile", "smoke"]) == 0


def test_models_for_profile_step_reports_unknown_profile(capsys):
    from shopbench.llm.llamacpp.cli import main

    with pytest.raises(SystemExit) as e:
        main(["install", "--profile", "params/nosuch.yaml"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "no parameter file params/nosuch.yaml" in err and "Traceback" not in err


def test_failed_notebook_skips_its_dependents(outputs, monkeypatch, capsys):
    ran = []

    def fake_run(step, profile, out_dir):
        ran.append(step.name)
        if step.name == "20_pace_judge_sweep":
            raise RuntimeError("judging.repeats broke the sweep\nmore lines")

    monkeypatch.setattr(pipeline, "run_notebook", fake_run)
    assert pipeline.run("smoke") == 1
    summary = json.loads((outputs / "smoke" / "paper" / "run.json").read_text())
    by_name = {nb["name"]: nb for nb in summary["notebooks"]}
    assert by_name["20_pace_judge_sweep"]["status"] == "failed"
    assert by_name["20_pace_judge_sweep"]["reason"] == "RuntimeError: judging.repeats broke the sweep"
    assert by_name["30_pace_metrics"]["status"] == "skipped"
    assert (
        by_name["30_pace_metrics"]["reason"]
        == "20_pace_judge_sweep failed: RuntimeError: judging.repeats broke the sweep"
    )
    assert "30_pace_metrics" not in ran and "40_padme_synthesis" in ran  # independent notebooks still run
    assert not any(m.startswith(("20_", "30_")) for m in summary["missing_artifacts"])
    assert "30_pace_metrics skipped: 20_pace_judge_sweep failed" in capsys.readouterr().err


def test_skips_propagate_and_pipeline_needs_are_checked(tmp_path):
    a, b, c = (
        pipeline_steps.Step("a"),
        pipeline_steps.Step("b", needs=["a"]),
        pipeline_steps.Step("c", needs=["b"]),
    )
    outcome = {"a": "ParamError text"}
    outcome["b"] = "skipped: " + pipeline.skip_reason(b, outcome)
    assert pipeline.skip_reason(c, outcome) == "b was skipped: a failed: ParamError text"
    assert pipeline.skip_reason(a, outcome) is None
    bad = tmp_path / "pipeline.yaml"
    bad.write_text(
        "notebooks:\n  - {name: 30_pace_metrics, needs: [20_pace_judge_sweep]}\n", encoding="utf-8"
    )
    with pytest.raises(ValueError, match="needs .*20_pace_judge_sweep.*not earlier steps"):
        pipeline_steps.load_pipeline(bad)
