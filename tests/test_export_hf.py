"""Issue 30 item 3: ``shopbench export NAME --out DIR`` writes a Hugging Face dataset folder that
``datasets.load_dataset(DIR, CONFIG)`` loads offline, config by config; the folder is a task input
(pace_judge on it gives the metrics of the build it came from); a planted secret reaches no file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAKE_KEY = "sk-" + "fake-9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # built, not a literal key shape


def cli(args, base: Path, **env):
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e.update({"SHOPBENCH_OUTPUTS": str(base / "outputs"), "SHOPBENCH_CACHE_DIR": str(base / "cache"),
              "LITELLM_LOCAL_MODEL_COST_MAP": "True", "SHOPBENCH_PROGRESS": "off", "HF_DATASETS_OFFLINE": "1"} | env)  # fmt: skip
    return subprocess.run([sys.executable, "-m", "shopbench.cli", *args], capture_output=True, text=True, env=e,
                          timeout=600, cwd=base)  # fmt: skip


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """The smoke PACEShop build (notebook 10's builder, offline; ~10 s) and its export."""
    base = tmp_path_factory.mktemp("export")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    r = cli(["eval", "pace_judge", "--model", "local/checks", "--limit", "20", "-T", "n_boot=200", "--no-progress",
             "--log-dir", str(base / "orig")], base)  # fmt: skip
    assert r.returncode == 0, r.stderr
    folder = base / "outputs" / "tasks" / "data" / "paceshop-smoke"
    r = cli(["export", "paceshop", "--from", str(folder), "--out", str(base / "ds")], base)
    assert r.returncode == 0, r.stderr
    return base, folder, base / "ds"


def test_every_config_loads_offline_with_datasets(build):
    datasets = pytest.importorskip(
        "datasets", reason="the [hf] extra (pip install -e '.[hf]') is not installed"
    )
    from shopbench.export.hf import read_config

    _, folder, ds = build
    card = (ds / "README.md").read_text(encoding="utf-8")
    head = __import__("yaml").safe_load(card.split("---\n")[1])
    names = [c["config_name"] for c in head["configs"]]
    assert {"records", "gold_labels", "swaps", "evidence_pools", "subsets"} <= set(names)
    assert head["license"] and isinstance(head["shopbench"]["seed"], int)
    assert (
        head["shopbench"]["seed"] == head["shopbench"]["build_config"]["seed"]
        and head["shopbench"]["profile"] is None
    )
    assert head["shopbench"]["generator"] == "offline" and head["shopbench"]["git_commit"]
    for name in names:
        d = datasets.load_dataset(str(ds), name)
        rows = read_config(ds, name)
        assert d["train"].num_rows == len(rows) > 0, name
        info = next(i for i in head["dataset_info"] if i["config_name"] == name)
        assert [f["name"] for f in info["features"]] == d["train"].column_names
    recs = datasets.load_dataset(str(ds), "records")["train"]
    first = json.loads((folder / "records_packaged.jsonl").open().readline())
    assert recs[0]["record_id"] == first["record_id"] and json.loads(recs[0]["persona"]) == first["persona"]


def test_records_read_back_exactly(build):
    from shopbench.core import Record
    from shopbench.export.hf import read_config
    from shopbench.paceshop.build import load_records

    _, folder, ds = build
    back = [Record.model_validate(r).model_dump(mode="json") for r in read_config(ds, "records")]
    assert back == [r.model_dump(mode="json") for r in load_records(folder)]


def test_pace_judge_on_the_exported_folder_equals_the_original(build):
    base, _, ds = build
    r = cli(["eval", "pace_judge", "--model", "local/checks", "--limit", "20", "-T", "n_boot=200", "--no-progress",
             "-T", f"records={ds}", "--log-dir", str(base / "fromds")], base)  # fmt: skip
    assert r.returncode == 0, r.stderr
    a = json.loads((base / "orig" / "metrics.json").read_text())
    b = json.loads((base / "fromds" / "metrics.json").read_text())
    assert a == b and a["s0_subset"] == "S0 reference subset"
    assert (
        "exported PACEShop dataset folder" in json.loads((base / "fromds" / "run.json").read_text())["data"]
    )


def test_a_folder_missing_a_config_is_one_message(build, tmp_path):
    base, _, ds = build
    bad = tmp_path / "bad"
    shutil.copytree(ds, bad)
    card = (
        (bad / "README.md").read_text(encoding="utf-8").replace("config_name: records", "config_name: recs")
    )
    (bad / "README.md").write_text(card, encoding="utf-8")
    r = cli(
        [
            "eval",
            "pace_judge",
            "--model",
            "local/checks",
            "--limit",
            "2",
            "--no-progress",
            "-T",
            f"records={bad}",
        ],
        base,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "no config 'records'" in r.stderr and "README.md" in r.stderr and "export" in r.stderr
    r = cli(["export", "paceshop", "--from", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")], base)
    assert r.returncode == 2 and "no such folder" in r.stderr and not (tmp_path / "o").exists()


def test_a_planted_secret_reaches_no_exported_file(build, tmp_path):
    """Issue 30 Secrets: a fake key in the environment, planted in a record's query and persona, is in no
    file of the exported folder."""
    base, folder, _ = build
    src = tmp_path / "build"
    shutil.copytree(folder, src)
    lines = (src / "records_packaged.jsonl").read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[0])
    rec["query"] += f" my key is {FAKE_KEY}"
    rec["persona"]["profile"]["household"] = FAKE_KEY
    lines[0] = json.dumps(rec)
    (src / "records_packaged.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = cli(
        ["export", "paceshop", "--from", str(src), "--out", str(tmp_path / "ds")],
        base,
        OPENAI_API_KEY=FAKE_KEY,
    )
    assert r.returncode == 0, r.stderr
    files = [p for p in (tmp_path / "ds").rglob("*") if p.is_file()]
    assert files and not any(FAKE_KEY.encode() in p.read_bytes() for p in files)
    from shopbench.export.hf import read_config

    row = read_config(tmp_path / "ds", "records")[0]
    assert row["query"].startswith(rec["query"].split(" my key is")[0]) and "my key is" in row["query"]
    assert FAKE_KEY not in json.dumps(row)


def test_shop_and_annotation_exports_load(tmp_path):
    """The shop simulator's trajectories (a recorded fixture) and an annotation store export and load."""
    datasets = pytest.importorskip(
        "datasets", reason="the [hf] extra (pip install -e '.[hf]') is not installed"
    )
    shop = tmp_path / "shopsim" / "trajectories"
    shop.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "fixtures" / "shopsim_trials_b4a3580.jsonl", shop / "fixture.jsonl")
    r = cli(["export", "shop", "--from", str(tmp_path / "shopsim"), "--out", str(tmp_path / "ds")], tmp_path)
    assert r.returncode == 0, r.stderr
    n = sum(1 for x in (shop / "fixture.jsonl").read_text().splitlines() if x.strip())
    assert datasets.load_dataset(str(tmp_path / "ds"), "trajectories")["train"].num_rows == n
    assert datasets.load_dataset(str(tmp_path / "ds"), "scenarios")["train"].num_rows >= 1
    ann = tmp_path / "annotations"
    ann.mkdir()
    (ann / "alice.jsonl").write_text(json.dumps({"pair_id": "p1", "choice": "A", "confidence": 50}) + "\n")
    r = cli(["export", "annotations", "--from", str(ann), "--out", str(tmp_path / "da")], tmp_path)
    assert r.returncode == 0, r.stderr
    got = datasets.load_dataset(str(tmp_path / "da"), "annotations")["train"]
    assert got[0]["annotator_file"] == "alice" and got[0]["pair_id"] == "p1"
