"""Provenance a user can follow (issue 25 item 5): every artefact names the prompt files (name and
hash) and backbones it rests on, those of the notebooks it reads from included, recorded from what
the code actually loaded; the PADMÉ evaluator prompt is a profile key checked at load."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from shopbench import prompts
from shopbench.config import load_profile
from shopbench.context import start
from shopbench.errors import ParamError, UserError
from shopbench.paths import ROOT
from shopbench.profiles.padme import EVALUATOR_PROMPT_SLOTS
from shopbench.report.artifacts import read_artifacts
from shopbench.report.index import build_index
from shopbench.report.provenance import FILE, read_inputs


@pytest.fixture(autouse=True)
def _no_recorder_left_behind():
    previous = prompts.record_prompts_with(None)
    yield
    prompts.record_prompts_with(previous)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_text(encoding="utf-8").encode()).hexdigest()


def profile_with(tmp_path: Path, stem: str, **padme) -> Path:
    data = yaml.safe_load((ROOT / "params" / "smoke.yaml").read_text(encoding="utf-8"))
    data["profile"] = stem
    data.setdefault("padme", {}).update(padme)
    path = tmp_path / f"{stem}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_table_3_names_the_judge_prompts_notebook_20_loaded(outputs):
    from shopbench.judges.pace.protocols import template

    nb20 = start("smoke", notebook="20_pace_judge_sweep")
    template("pacejudge")  # the library's loader, no run context passed: still recorded
    prompts.load_prompt("judge_etapp", "a test")
    nb20.use_backbones(["local/checks"])
    nb30 = start("smoke", notebook="30_pace_metrics")
    nb30.use_backbones(["local/checks"])
    nb30.table(pd.DataFrame({"backbone": ["local/checks"], "S0": [0.5]}), "paceshop_tab3_main", "Table 3.",
               evidence="known-answer", why="a test")  # fmt: skip
    (rec,) = read_artifacts(nb30.paper_dir)
    assert rec["prompts"] == {}  # notebook 30 reads no prompt itself
    up = rec["upstream"]
    assert list(up) == ["20_pace_judge_sweep", "10_paceshop_build"]
    assert up["20_pace_judge_sweep"]["prompts"] == {
        "judge_pacejudge": sha(ROOT / "prompts" / "judge_pacejudge.txt"),
        "judge_etapp": sha(ROOT / "prompts" / "judge_etapp.txt"),
    }
    assert up["20_pace_judge_sweep"]["backbones"] == ["local/checks"]
    assert up["10_paceshop_build"] is None  # it has not run here: said, not hidden
    build_index(nb30.paper_dir)
    md = (nb30.paper_dir / "index.md").read_text(encoding="utf-8")
    h = sha(ROOT / "prompts" / "judge_pacejudge.txt")[:10]
    assert "- rests on `20_pace_judge_sweep`: prompts `judge_etapp` " in md and f"`judge_pacejudge` {h}" in md
    assert "- rests on `10_paceshop_build`: no record of its prompts and backbones" in md
    entry = json.loads((nb30.paper_dir / "index.json").read_text())["artifacts"][0]
    assert {"name": "judge_pacejudge", "sha256": sha(ROOT / "prompts" / "judge_pacejudge.txt"),
            "notebook": "20_pace_judge_sweep"} in entry["prompts"]  # fmt: skip
    # notebook 20 runs again and reads nothing: its old record does not survive
    start("smoke", notebook="20_pace_judge_sweep")
    assert read_inputs(nb30.paper_dir)["20_pace_judge_sweep"]["prompts"] == {}
    assert (nb30.paper_dir / FILE).exists()


def test_a_notebook_50_artefact_names_the_evaluator_prompt_it_was_scored_with(tmp_path, outputs):
    from shopbench.judges.padme.sweep import score_rollouts
    from shopbench.padme.types import Criterion, Rollout

    custom = tmp_path / "my_evaluator.txt"
    custom.write_text("# mine\n\nRATE-THIS {criterion_name}: {criterion_description}\n{prompt}\n{response}\n"
                      "Answer as JSON.\n", encoding="utf-8")  # fmt: skip
    prof = profile_with(tmp_path, "evalprompt", evaluator_prompt=str(custom))
    ctx = start(prof, notebook="50_padme_meta_eval")
    P = ctx.params.padme
    assert P.evaluator_prompt == str(custom)
    template = ctx.prompt_file(P.evaluator_prompt).text
    r = Rollout("r1", "t1", "airline", "test", "friendliness", "good", "", "agent-m", "scripted", 0, 0,
                [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])  # fmt: skip
    crit = Criterion("friendliness", "Warmth.")
    df = score_rollouts([r], {"friendliness": crit}, ["local/echo"], runs=1, gateway=ctx.gateway,
                        run_id="50_padme_meta_eval/evaluator", template=template)  # fmt: skip
    log = ctx.gateway.log("50_padme_meta_eval/evaluator-local_echo")
    assert len(df) == 1 and "RATE-THIS friendliness: Warmth." in log.raw_output.iloc[0]  # what the model saw
    ctx.table(pd.DataFrame({"evaluator": ["local/echo"], "accuracy": [0.0]}), "padme_tab3_evaluators", "T3.",
              evidence="known-answer", why="a test", key=["evaluator"])  # fmt: skip
    (rec,) = read_artifacts(ctx.paper_dir)
    assert rec["prompts"] == {str(custom): sha(custom)} and rec["key"] == ["evaluator"]
    assert rec["upstream"] == {"40_padme_synthesis": None}
    # the default key names the shipped prompt by its stem
    ctx2 = start("smoke", notebook="50_padme_meta_eval")
    ctx2.prompt_file(ctx2.params.padme.evaluator_prompt)
    assert ctx2.prompts_used == {"padme_evaluator": sha(ROOT / "prompts" / "padme_evaluator.txt")}


def test_the_evaluator_prompt_key_is_checked_when_the_profile_loads(tmp_path, monkeypatch):
    with pytest.raises(ParamError) as e:
        load_profile(profile_with(tmp_path, "p1", evaluator_prompt="prompts/no_such_evaluator.txt"))
    assert "padme.evaluator_prompt" in str(e.value) and "no_such_evaluator.txt" in str(e.value)
    bad = tmp_path / "bad.txt"
    bad.write_text(
        "# header {ignored}\n\nScore {criterion_name} of {response} with {rubric}\n", encoding="utf-8"
    )
    with pytest.raises(ParamError) as e:
        load_profile(profile_with(tmp_path, "p2", evaluator_prompt=str(bad)))
    msg = str(e.value)
    assert str(bad) in msg and "{criterion_description}, {prompt}" in msg and "{rubric}" in msg
    assert "{ignored}" not in msg  # header comments are not part of the template
    lone = tmp_path / "lone.txt"
    lone.write_text("{criterion_name} {criterion_description} {prompt} {response} and a { brace\n")
    with pytest.raises(ParamError, match="not a valid template"):
        load_profile(profile_with(tmp_path, "p3", evaluator_prompt=str(lone)))
    # relative to the repository root
    assert load_profile(profile_with(tmp_path, "p4", evaluator_prompt="prompts/padme_evaluator.txt"))
    # $SHOPBENCH_PROMPTS_DIR overrides the prompts folder: checked at load too
    monkeypatch.setenv(prompts.PROMPTS_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(UserError, match="SHOPBENCH_PROMPTS_DIR"):
        load_profile("smoke")
    folder = tmp_path / "myprompts"
    folder.mkdir()
    (folder / "padme_evaluator.txt").write_text("{criterion_name} only\n", encoding="utf-8")
    monkeypatch.setenv(prompts.PROMPTS_ENV, str(folder))
    with pytest.raises(UserError) as e:
        load_profile("smoke")
    assert str(folder / "padme_evaluator.txt") in str(e.value) and "{response}" in str(e.value)
    (folder / "padme_evaluator.txt").write_text(
        "{criterion_name} {criterion_description} {prompt} {response}\n"
    )
    assert (
        prompts.prompt_file(load_profile("smoke").params.padme.evaluator_prompt)
        == folder / "padme_evaluator.txt"
    )


def test_the_required_placeholders_are_what_the_evaluator_fills():
    from shopbench.judges.padme.evaluators import EVALUATOR_JUDGE
    from shopbench.padme.types import Criterion, Rollout

    r = Rollout("r1", "t1", "airline", "test", "c", "good", "", "agent-m", "scripted", 0, 0,
                [{"role": "user", "content": "hi"}])  # fmt: skip
    assert set(EVALUATOR_JUDGE.slots((r, Criterion("c", "d"), 0))) == set(EVALUATOR_PROMPT_SLOTS)
    assert prompts.placeholders(prompts.load_prompt("padme_evaluator")) == set(EVALUATOR_PROMPT_SLOTS)
