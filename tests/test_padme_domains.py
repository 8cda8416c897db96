"""Issue 28 item 3: PADMÉ over the four τ²-family domains. The τ² source on airline, banking_knowledge and
telecom yields steered rollouts whose conduct differs by level, the filter cascade keeps and rejects
pairs of them (offline, scripted agent and user, heuristic judges: known-answer), and Table 16's numbers
are those of ``shopbench domains check NAME``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from shopbench.padme.cascade import run_cascade
from shopbench.padme.cells import make_cells
from shopbench.padme.criteria import load_criteria
from shopbench.padme.experiment import DEFAULT_JUDGES, build_judges, build_sources
from shopbench.padme.sources.factory import make_source
from shopbench.padme.steering import ScriptedSteering
from shopbench.padme.types import Context

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
NEW = ("airline", "banking_knowledge", "telecom")


def _needs(*names):
    missing = [n for n in names if not (DATA / f"tau2_{n}").is_dir()]
    return pytest.mark.skipif(bool(missing), reason=f"no data for {missing}")


CRIT = {c.name: c for c in load_criteria(None)}


@pytest.fixture(scope="module", params=NEW)
def source(request):
    if not (DATA / f"tau2_{request.param}").is_dir():
        pytest.skip(f"tau2_{request.param} absent")
    return make_source({"kind": "tau2", "domain": request.param, "tasks": 4}, ROOT)


def _ctx(s):
    return Context(agent_model=f"scripted:{s.name}", user_model="scripted", seed=7)


def _agent_text(r) -> str:
    return "\n".join(str(m.get("content") or "") for m in r.messages if m.get("role") == "assistant")


def test_source_spec_and_tasks(source):
    assert source.name == f"tau2_{source.domain}" and source.has_reward
    tasks = source.tasks(n=100, seed=7)
    assert len(tasks) == 4  # the spec's own count overrides tasks_per_source
    assert all(t.domain == source.domain and t.task_id.startswith(f"{source.domain}-") for t in tasks)
    assert all(t.meta["expected_actions"] is not None for t in tasks)
    assert len(source.tool_names()) >= 10


def test_steered_rollouts_differ_by_level(source):
    """Task resolution: good takes every expected action, bad none of the writes; the environment reward
    of good is at least bad's on every task and above it on some. Friendliness: same actions, other text."""
    tasks = source.tasks(n=None, seed=0)
    gaps = []
    for t in tasks:
        r = {
            lvl: source.rollout(t, CRIT["task_resolution"], lvl, "", _ctx(source), 0)
            for lvl in ("bad", "ok", "good")
        }
        assert r["good"].reward >= r["bad"].reward
        n_good = len(r["good"].meta["actions_taken"]) + len(r["good"].meta["user_actions_taken"])
        n_bad = len(r["bad"].meta["actions_taken"]) + len(r["bad"].meta["user_actions_taken"])
        assert n_good >= n_bad
        gaps.append(r["good"].reward - r["bad"].reward)
        f = {
            lvl: source.rollout(t, CRIT["friendliness"], lvl, "", _ctx(source), 0) for lvl in ("bad", "good")
        }
        assert f["bad"].meta["actions_taken"] == f["good"].meta["actions_taken"]
        assert _agent_text(f["bad"]) != _agent_text(f["good"])
        assert all(x.level == lvl for lvl, x in f.items())
    assert max(gaps) > 0, "no task where resolving earned more reward than abandoning"


def test_cascade_keeps_and_rejects(source):
    tasks = source.tasks(n=None, seed=7)
    cells = make_cells(tasks, list(CRIT.values()), seed=7)
    judges = build_judges(None)
    assert len(judges) == len(DEFAULT_JUDGES)
    res = run_cascade(
        cells, source, ScriptedSteering(), judges, _ctx(source), retries=2, seed=7, progress=False
    )
    assert res.pairs and len(res.kept) > 0
    first = [p for p in res.pairs if p.attempt == 0]
    assert any(not p.kept for p in res.pairs) or len(res.kept) == len(first)
    assert {p.source for p in res.pairs} == {source.name}
    assert {p.better.meta.get("steering_source") for p in res.pairs} != {None}
    # the rollouts of a pair are two distinct levels of the same task
    assert all(p.better.level != p.worse.level and p.better.task_id == p.worse.task_id for p in res.pairs)


@_needs(*NEW)
def test_cascade_rejects_somewhere():
    """Over the three domains together, the noisy heuristic judges veto at least one pair (the cascade is
    not a pass-through) and keep most."""
    total, kept = 0, 0
    for d in NEW:
        s = make_source({"kind": "tau2", "domain": d, "tasks": 4}, ROOT)
        res = run_cascade(make_cells(s.tasks(seed=7), list(CRIT.values()), seed=7), s, ScriptedSteering(),
                          build_judges(None), _ctx(s), retries=0, seed=7, progress=False)  # fmt: skip
        total += len(res.pairs)
        kept += len(res.kept)
    assert 0 < kept < total


def test_unknown_domain_and_keys_are_clear():
    with pytest.raises(ValueError, match="unknown domain 'bank'"):
        make_source({"kind": "tau2", "domain": "bank"}, ROOT)
    with pytest.raises(ValueError, match="unknown keys \\['fidelity'\\]"):
        make_source({"kind": "tau2", "domain": "airline", "fidelity": "tau2"}, ROOT)


def test_missing_domain_folder_is_skipped(tmp_path, capsys):
    cfg = {"sources": [{"kind": "tau2", "domain": "telecom", "path": str(tmp_path / "nope")}, "shop"]}
    srcs = build_sources(cfg, ROOT)
    assert [s.name for s in srcs] == ["shop"]
    assert "no telecom data folder" in capsys.readouterr().out


@_needs("airline", "banking_knowledge", "retail", "telecom")
def test_table16_equals_domains_check():
    from shopbench.domains.check import check_domain
    from shopbench.padme import domain_tables as DT

    paths = {d: DATA / f"tau2_{d}" for d in DT.DOMAINS}
    t16 = DT.table16(paths).set_index("domain")
    for d in ("airline", "retail", "banking_knowledge"):  # telecom's check builds and plays 134 tasks: below
        ref = check_domain(d, paths[d])["table16"]
        for k in ("policy_words", "agent_tools", "user_tools"):
            assert t16.loc[d, k] == ref[k], (d, k)
            assert t16.loc[d, f"paper_{k}"] == ref["paper"][k] or pd.isna(t16.loc[d, f"paper_{k}"])
    from shopbench.domains import check as C
    from shopbench.domains.telecom import load_telecom

    ref = C._table16_telecom(load_telecom(paths["telecom"]))  # the very dict check_domain("telecom") returns
    assert [t16.loc["telecom", k] for k in ("policy_words", "agent_tools", "user_tools")] == [
        ref["policy_words"], ref["agent_tools"], ref["user_tools"]]  # fmt: skip
    # the overlaps check computes are the table's
    assert t16.loc["airline", "jaccard_retail"] == check_domain("airline", paths["airline"])["table16"][
        "tool_name_jaccard_with_retail"]  # fmt: skip
    assert t16.loc["telecom", "jaccard_airline"] == ref["tool_name_jaccard"]["airline"]
    assert t16.loc["banking_knowledge", "jaccard_retail"] == check_domain("banking_knowledge", paths[
        "banking_knowledge"])["table16"]["tool_name_jaccard_with_retail"]  # fmt: skip
    assert (t16["note"] == "").all() and set(t16["evidence"]) == {"known-answer"}


def test_table16_says_when_data_is_absent(tmp_path):
    from shopbench.padme import domain_tables as DT

    t16 = DT.table16({d: tmp_path / d for d in DT.DOMAINS}).set_index("domain")
    assert t16["note"].str.startswith("data absent").all()
    assert t16["policy_words"].isna().all() and (t16["paper_agent_tools"] > 0).all()


def test_domain_rows_of_tables_6_8_15():
    from shopbench.padme import domain_tables as DT

    df = pd.DataFrame({"pair_id": list("abcde"), "cell_id": ["c1", "c1", "c2", "c3", "c4"],
                       "attempt": [0, 1, 0, 0, 0], "depth": [0, 2, 2, 1, 2], "kept": [False, True, True, False, True],
                       "domain": ["airline", "airline", "airline", "telecom", "retail"]})  # fmt: skip
    t16 = DT.table16({d: Path("/nonexistent") / d for d in DT.DOMAINS})
    run = {
        "airline": "",
        "telecom": "",
        "retail": "",
        "banking_knowledge": "source skipped: data absent at x",
    }
    t6 = DT.table6_domains(df, t16, {}, {"airline": 2}, run, "known-answer").set_index("domain")
    assert t6.loc["airline", "kept_pairs"] == 2 and t6.loc["telecom", "kept_pairs"] == 0
    assert t6.loc["banking_knowledge", "note"].startswith("source skipped") and pd.isna(
        t6.loc["banking_knowledge", "kept_pairs"]
    )
    assert t6.loc["retail", "paper_pairs"] == 309
    t8 = DT.table8_domains(df, run, "known-answer", 2).set_index("domain")
    assert (
        t8.loc["airline", "draws"] == 3 and t8.loc["airline", "kept"] == 2 and t8.loc["airline", "cells"] == 2
    )
    t15 = DT.table15_domains(df, run, "known-answer", 2).set_index("domain")
    assert (t15.loc["airline", "D0"], t15.loc["airline", "D2"], t15.loc["airline", "retention"]) == (
        2,
        1,
        0.5,
    )
    assert t15.loc["telecom", "D1"] == 1 and t15.loc["telecom", "D2"] == 0
    assert set(t15["evidence"]) == {"known-answer"}
