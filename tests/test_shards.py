"""Issue 30 item 4: ``--shard i/n`` and ``shopbench merge`` — 3 shards merged equal the unsharded run's
metrics to the last digit (pace_judge on an offline backend, and the shop_agent agent task), the call logs
and caches are merged, and bad input (overlap, a missing shard, mixed seeds or prompts, a truncated log)
is one message, exit 2, nothing written."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import shopbench
from shopbench.tasks.shards import block, parse_shard

ROOT = Path(__file__).resolve().parents[1]
N = 3


def test_blocks_partition_every_size():
    for total in range(0, 40):
        for n in range(1, 7):
            got = [x for i in range(n) for x in range(total)[block(total, i, n)]]
            assert got == list(range(total))
    assert parse_shard("2/3") == (2, 3) and parse_shard(None) is None
    for bad in ("3/3", "-1/3", "a/b", "1", "0/0"):
        with pytest.raises(shopbench.errors.UserError):
            parse_shard(bad)


def cli(args, env_dir: Path, **env):
    import os

    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e.update({"SHOPBENCH_OUTPUTS": str(env_dir / "outputs"), "SHOPBENCH_CACHE_DIR": str(env_dir / "cache"),
              "LITELLM_LOCAL_MODEL_COST_MAP": "True", "SHOPBENCH_PROGRESS": "off"} | env)  # fmt: skip
    return subprocess.run([sys.executable, "-m", "shopbench.cli", *args], capture_output=True, text=True,
                          env=e, timeout=600, cwd=env_dir)  # fmt: skip


@pytest.fixture(scope="module")
def pace(tmp_path_factory):
    """An unsharded pace_judge run and its three shards (2 epochs, 24 records), each with its own cache."""
    base = tmp_path_factory.mktemp("shards")
    args = ["eval", "pace_judge", "--model", "local/checks", "--limit", "24", "--epochs", "2", "-T", "n_boot=300",
            "--no-progress"]  # fmt: skip
    r = cli([*args, "--log-dir", str(base / "full")], base)
    assert r.returncode == 0, r.stderr
    for i in range(N):
        r = cli([*args, "--shard", f"{i}/{N}", "--log-dir", str(base / f"s{i}")], base,
                SHOPBENCH_CACHE_DIR=str(base / f"cache{i}"))  # fmt: skip
        assert r.returncode == 0, r.stderr
    return base


def test_three_pace_judge_shards_merge_to_the_unsharded_metrics(pace):
    base = pace
    ids = [json.loads((base / f"s{i}" / "run.json").read_text())["shard"]["sample_ids"] for i in range(N)]
    assert all(ids) and len({x for b in ids for x in b}) == sum(map(len, ids)) == 24
    r = cli(["merge", *(str(base / f"s{i}") for i in (2, 0, 1)), "--out", str(base / "merged"),
             *[a for i in range(N) for a in ("--cache", str(base / f"cache{i}"))]], base,
            SHOPBENCH_CACHE_DIR=str(base / "mcache"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    full = json.loads((base / "full" / "metrics.json").read_text())
    merged = json.loads((base / "merged" / "metrics.json").read_text())
    assert merged == full  # every estimate and CI to the last digit
    shard0 = json.loads((base / "s0" / "metrics.json").read_text())
    assert shard0 != full  # a shard alone is not the run (the test could fail)
    a = pd.read_parquet(base / "full" / "samples.parquet")
    b = pd.read_parquet(base / "merged" / "samples.parquet")
    pd.testing.assert_frame_equal(a.drop(columns=["latency_s"], errors="ignore"),
                                  b.drop(columns=["latency_s"], errors="ignore"))  # fmt: skip
    # the call logs: one row per unit, the same item ids as the unsharded run's
    rid = json.loads((base / "full" / "run.json").read_text())["gateway_run_id"]
    items = {
        json.loads(x)["item_id"]
        for x in (base / "merged" / "calls" / f"{rid}.jsonl").read_text().splitlines()
    }
    assert items == {
        json.loads(x)["item_id"] for x in (base / "full" / "calls" / f"{rid}.jsonl").read_text().splitlines()
    }
    run = json.loads((base / "merged" / "run.json").read_text())
    assert [m["shard"] for m in run["merged_from"]] == ["0/3", "1/3", "2/3"] and run["samples"] == 24
    # the caches: every shard's answers in the merged cache
    n = [sqlite3.connect(base / f"cache{i}" / "responses.sqlite").execute("select count(*) from responses").fetchone()[0]
         for i in range(N)]  # fmt: skip
    m = (
        sqlite3.connect(base / "mcache" / "responses.sqlite")
        .execute("select count(*) from responses")
        .fetchone()[0]
    )
    assert m == sum(n) > 0


def test_bad_merges_are_one_message_and_write_nothing(pace, tmp_path):
    base = pace
    s = [str(base / f"s{i}") for i in range(N)]

    def bad(logs, want):
        out = tmp_path / "out"
        r = cli(["merge", *logs, "--out", str(out)], base)
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and want in r.stderr, r.stderr
        assert not out.exists() and not list(tmp_path.glob(".out*"))
        return r.stderr

    bad(s[:2], "miss 2/3")
    bad([s[0], s[0], s[1], s[2]], "overlap")
    bad([*s, str(base / "full")], "not a shard")
    # mixed seeds / prompt hashes: a copied shard with another seed or prompt hash in its run.json
    for key, val, word in (("seed", 5, "seed"), ("prompts", {"x": "0" * 64}, "prompt hashes")):
        alt = tmp_path / f"alt-{key}"
        shutil.copytree(s[2], alt)
        run = json.loads((alt / "run.json").read_text())
        run[key] = val
        (alt / "run.json").write_text(json.dumps(run))
        err = bad([s[0], s[1], str(alt)], word)
        assert str(alt) in err
    # a truncated log: a cut samples.parquet, a cut call log line
    cut = tmp_path / "cut"
    shutil.copytree(s[1], cut)
    data = (cut / "samples.parquet").read_bytes()
    (cut / "samples.parquet").write_bytes(data[: len(data) // 2])
    assert "samples.parquet" in bad([s[0], str(cut), s[2]], "truncated")
    cut2 = tmp_path / "cut2"
    shutil.copytree(s[1], cut2)
    log = next((cut2 / "calls").glob("*.jsonl"))
    log.write_bytes(log.read_bytes()[:-20])
    assert log.name in bad([s[0], str(cut2), s[2]], "cut line")


def _agent_code() -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_cli_agent_tasks import guide_blocks

    return guide_blocks()[0]


def test_three_shop_agent_shards_merge_to_the_unsharded_metrics(tmp_path):
    (tmp_path / "my_agent.py").write_text(_agent_code(), encoding="utf-8")
    args = ["eval", "shop_agent", "--agent", "my_agent:MyAgent", "--limit", "6", "--epochs", "2", "--no-progress",
            "-T", "n_boot=200"]  # fmt: skip
    r = cli([*args, "--log-dir", str(tmp_path / "full")], tmp_path, PYTHONPATH=str(tmp_path))
    assert r.returncode == 0, r.stderr
    for i in range(N):
        r = cli(
            [*args, "--shard", f"{i}/{N}", "--log-dir", str(tmp_path / f"s{i}")],
            tmp_path,
            PYTHONPATH=str(tmp_path),
        )
        assert r.returncode == 0, r.stderr
    r = cli(["merge", *(str(tmp_path / f"s{i}") for i in range(N)), "--out", str(tmp_path / "m")], tmp_path,
            PYTHONPATH=str(tmp_path))  # fmt: skip
    assert r.returncode == 0, r.stderr
    full = json.loads((tmp_path / "full" / "metrics.json").read_text())
    assert json.loads((tmp_path / "m" / "metrics.json").read_text()) == full
    assert full["units"]["total"] == 12
    # the trajectories of both epochs, every trial once
    for k in range(2):
        got = sorted(p.name for p in (tmp_path / "m" / "trajectories" / f"epoch{k}").rglob("*.jsonl"))
        assert got == sorted(
            p.name for p in (tmp_path / "full" / "trajectories" / f"epoch{k}").rglob("*.jsonl")
        )


def test_a_planted_secret_reaches_no_merged_file(pace, tmp_path):
    """Issue 30 Secrets: a fake key in the environment, planted in a shard's call log (a prompt) and its
    rows (an answer), is in no file of the merged log."""
    base = pace
    key = "sk-" + "fake-0a1b2c3d4e5f60718293a4b5c6d7e8f9"  # built, not a literal key shape
    s1 = tmp_path / "s1"
    shutil.copytree(base / "s1", s1)
    log = next((s1 / "calls").glob("*.jsonl"))
    lines = log.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    row["content"] = f"{row.get('content') or ''} tool output: {key}"
    lines[0] = json.dumps(row)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = pd.read_parquet(s1 / "samples.parquet")
    rows["unit_error"] = rows["unit_error"].astype(object)
    rows.loc[0, "unit_error"] = f"an answer echoing {key}"
    rows.to_parquet(s1 / "samples.parquet", index=False)
    r = cli(["merge", str(base / "s0"), str(s1), str(base / "s2"), "--out", str(tmp_path / "m")], base,
            OPENAI_API_KEY=key)  # fmt: skip
    assert r.returncode == 0, r.stderr
    files = [p for p in (tmp_path / "m").rglob("*") if p.is_file()]
    assert len(files) >= 4 and not any(key.encode() in p.read_bytes() for p in files)
    assert any(b"tool output:" in p.read_bytes() for p in files)  # the planted line is there, redacted


def test_every_kind_of_task_shards(tmp_path, monkeypatch):
    """pace_assistant (generating, and on recorded outputs) shards too: the blocks add up to the run."""
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path / "outputs"))
    monkeypatch.setenv("SHOPBENCH_CACHE_DIR", str(tmp_path / "cache"))
    for extra in ({}, {"responses": str(ROOT / "tests" / "fixtures" / "l5_assistant_outputs.jsonl")}):
        full = shopbench.tasks.preview("pace_assistant", "local/schema-sampler", limit=5, **extra)["samples"]
        parts = [shopbench.tasks.preview("pace_assistant", "local/schema-sampler", limit=5, shard=f"{i}/{N}", **extra)
                 for i in range(N)]  # fmt: skip
        assert sum(p["samples"] for p in parts) == full == 5
        assert len({p["log_dir"] for p in parts}) == N


@pytest.mark.skipif(
    not (ROOT.parent / "shared" / "data" / "tau2_airline").is_dir(), reason="tau2 airline data absent"
)
def test_tau2_agent_shards(tmp_path, monkeypatch):
    """tau2_agent shards by its domain's task ids (it once fell through to the shop trials' ids: a traceback)."""
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path / "outputs"))
    monkeypatch.setenv("SHOPBENCH_CACHE_DIR", str(tmp_path / "cache"))
    kw = {"domain": "airline", "limit": 5}
    full = shopbench.tasks.preview("tau2_agent", "local/schema-sampler", **kw)["samples"]
    parts = [
        shopbench.tasks.preview("tau2_agent", "local/schema-sampler", shard=f"{i}/{N}", **kw)
        for i in range(N)
    ]
    assert sum(p["samples"] for p in parts) == full == 5
