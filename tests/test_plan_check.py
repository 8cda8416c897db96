"""Issue 25 §2 and §6 (findings 6 and 7): ``pipeline check`` and the preview verify every backbone name
and each dataset a planned notebook reads, count servers the user runs as self-hosted and honour
``--only``; ``python -m shopbench.data`` reports and fetches the external datasets."""

from __future__ import annotations

import hashlib
import io
import re

import pytest

import shopbench.preview as PV
from shopbench import data as D
from shopbench import pipeline
from shopbench.paths import PARAMS_DIR, ROOT

SERVER = '{name: smol, model: openai/smol, api_base: "http://127.0.0.1:18800/v1"}'  # README's example


@pytest.fixture
def out(monkeypatch, tmp_path):
    for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path / "out"))
    return tmp_path


def _profile(tmp_path, name: str, text: str):
    p = tmp_path / f"{name}.yaml"
    p.write_text(f"profile: {name}\n" + text, encoding="utf-8")
    return p


def _check_error(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as e:
        pipeline.main(["check", *argv])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" not in err and err.count("\n") == 1, err
    return err


# ---- finding 6: backbone names ---------------------------------------------------------------------
def test_undefined_judge_backbone_is_an_error_with_did_you_mean(out, capsys):
    p = _profile(
        out, "typo", f"backbones:\n  - {SERVER}\njudging: {{llm_backbones: [smoll], llm_subset: 20}}\n"
    )
    err = _check_error(capsys, "--profile", str(p))
    assert (
        f"{p}: judging.llm_backbones[0]: 'smoll' is not a backbone of this profile (did you mean 'smol'?)"
        in err
    )
    assert "Fix: correct the name, or define it under `backbones:`" in err
    p.write_text(p.read_text().replace("[smoll]", "[smol]"))
    assert pipeline.main(["check", "--profile", str(p)]) == 0


@pytest.mark.parametrize(
    ("section", "ok"),
    [
        ("shopsim: {judge: openai/gpt-4o}", True),  # a litellm name: the judge spec takes it as a model
        ("shopsim: {judge: local/schema-sampler}", True),
        ("shopsim: {judge: smoll}", False),
        ("judging: {deterministic_judges: [local/chekcs]}", False),
        ("shopsim: {user: openai/gpt-4o}", False),  # the LLM customer looks its backbone up: must be defined
        ("padme: {steering: smol}", True),
        ("paceshop: {generator: smoll}", False),
    ],
)
def test_each_name_resolves_as_the_code_that_reads_it(out, capsys, section, ok):
    p = _profile(out, "names", f"backbones:\n  - {SERVER}\n{section}\n")
    if ok:
        assert pipeline.main(["check", "--profile", str(p)]) == 0
    else:
        err = _check_error(capsys, "--profile", str(p))
        assert "did you mean" in err or "is not a backbone of this profile" in err


def test_a_misspelt_embedded_model_in_backbones_is_named(out, capsys):
    p = _profile(out, "emb", "backbones: [local/schema-sampler, local/echoo]\n")
    err = _check_error(capsys, "--profile", str(p))
    assert "backbones[1]: 'local/echoo' is no embedded backend 'local/echoo'" in err


def test_every_shipped_profile_passes_the_name_check():
    from shopbench.config import load_profile
    from shopbench.plancheck import backbone_problems

    for p in sorted(PARAMS_DIR.glob("*.yaml")):
        assert backbone_problems(load_profile(str(p))) == [], p.name


def test_preview_counts_a_user_server_as_self_hosted_and_lists_only_the_planned_notebooks(out, capsys):
    p = _profile(
        out,
        "server",
        f"""backbones:
  - local/schema-sampler
  - {SERVER}
judging: {{llm_backbones: [smol], llm_subset: 20, llm_protocols: [pacejudge]}}
paceshop: {{n_products: 400, n_candidate_queries: 240, n_queries: 40, n_personas: 60, n_holdout: 17,
           test_goods: 24, dev_goods: 24, swap_slice: 24}}
shopsim: {{llm_agents: [{{backbone: local/schema-sampler, trials: {{general: 1}}}}]}}
""",
    )
    assert PV.main(["--profile", str(p), "--only", "20_pace_judge_sweep", "30_pace_metrics"]) == 0
    text = capsys.readouterr().out
    rows = [x for x in text.splitlines() if re.match(r"\d\d_\w+  ", x)]
    assert rows and all(x.startswith("20_pace_judge_sweep") for x in rows)  # no 80_shop_agents line
    smol = [x for x in rows if " smol " in x]
    assert len(smol) == 1 and "judge (pacejudge)" in smol[0] and " 20 " in smol[0]
    assert "self-hosted servers: 20 calls" in text and "API: 0 calls" in text and "unpriced" not in text


def test_pipeline_run_only_passes_only_to_the_preview(out, monkeypatch):
    seen = []
    monkeypatch.setattr(pipeline, "check_before_run", lambda profile, only=None: seen.append(only))
    monkeypatch.setattr(pipeline, "run_notebook", lambda *a, **k: None)
    p = _profile(out, "srv", f"backbones:\n  - {SERVER}\njudging: {{llm_backbones: [smol]}}\n")
    pipeline.run(str(p), only=["20_pace_judge_sweep"], preflight=False)  # no server runs at SERVER's address
    assert seen == [["20_pace_judge_sweep"]]


# ---- finding 7: external data ----------------------------------------------------------------------
def _smoke_without_tau2(tmp_path):
    text = (PARAMS_DIR / "smoke.yaml").read_text(encoding="utf-8")
    missing = tmp_path / "elsewhere" / "tau2_retail"
    assert "path: ../shared/data/tau2_retail" in text
    text = text.replace("path: ../shared/data/tau2_retail", f"path: {missing}").replace(
        "profile: smoke\n", ""
    )
    return _profile(tmp_path, "nodata", text), missing


def test_missing_tau2_data_fails_check_naming_dataset_path_and_fix(out, capsys):
    p, missing = _smoke_without_tau2(out)
    err = _check_error(capsys, "--profile", str(p))
    assert f"padme.sources[1] ({{kind: tau2}}): τ²-bench retail domain not found at {missing}" in err
    assert "notebook 40 reads it" in err and "`make data` fetches" in err
    assert "point padme.sources[1].path at your copy" in err and "drop that entry from padme.sources" in err
    # notebooks that do not read it may still run
    assert pipeline.main(["check", "--profile", str(p), "--only", "20_pace_judge_sweep"]) == 0


def test_missing_tau2_data_stops_pipeline_run_before_any_notebook(out, capsys, monkeypatch):
    monkeypatch.setattr(pipeline, "run_notebook", lambda *a, **k: pytest.fail("no notebook may run"))
    p, _ = _smoke_without_tau2(out)
    with pytest.raises(SystemExit) as e:
        pipeline.main(["run", "--profile", str(p), "--no-preview"])
    assert e.value.code == 2 and "τ²-bench retail domain not found" in capsys.readouterr().err


@pytest.mark.skipif(not (ROOT / "../shared/data/tau2_retail").is_dir(), reason="../shared/data is absent")
def test_smoke_passes_check_with_the_shared_data_beside_the_repository(out):
    assert pipeline.main(["check", "--profile", "smoke"]) == 0


def test_data_report_names_each_dataset_path_and_how_to_get_it(tmp_path, capsys):
    assert D.main(["--dir", str(tmp_path)]) == 1  # nothing there
    text = capsys.readouterr().out
    for name, ds in D.DATASETS.items():
        assert f"{name}: MISSING ({tmp_path / name})" in text
        assert ("make data" in text) if ds.urls else ds.how.split(":")[0] in text


@pytest.mark.skipif(not D.DEFAULT_DIR.is_dir(), reason="../shared/data is absent")
def test_data_report_checks_the_shared_copies():
    for ds in D.DATASETS.values():
        st = D.status(ds)
        assert st.present and not st.bad and len(st.ok) == len(ds.files), st.line()


def test_fetch_installs_only_files_whose_checksum_matches(tmp_path):
    good, bad = b'{"ok": true}', b"tampered"
    ds = D.Dataset(folder="demo", title="demo", source="example", licence="MIT", read_by="a test",
                   files={"a.json": hashlib.sha256(good).hexdigest(), "b.json": hashlib.sha256(good).hexdigest()},
                   required=("a.json",), urls={"a.json": "https://example.org/a.json",
                                               "b.json": "https://example.org/b.json"})  # fmt: skip
    served = {"https://example.org/a.json": good, "https://example.org/b.json": bad}
    problems = D.fetch(ds, tmp_path, opener=lambda url, timeout: io.BytesIO(served[url]))
    assert (tmp_path / "demo" / "a.json").read_bytes() == good
    assert not (tmp_path / "demo" / "b.json").exists() and len(problems) == 1 and "b.json" in problems[0]
    st = D.status(ds, tmp_path)
    assert st.present and st.ok == ["a.json"] and st.missing == ["b.json"]


def test_readme_lists_each_dataset_with_source_licence_and_place():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## External data", 1)[1].split("\n## ", 1)[0]
    for name, ds in D.DATASETS.items():
        row = next((x for x in section.splitlines() if f"`{name}/`" in x), "")
        assert row and ds.licence in row and ds.source.split(",")[0] in row, name
    assert "make data" in section and "../shared/data" in section
