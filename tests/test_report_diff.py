"""``python -m shopbench.report.diff``: the table diff of two runs (issue 11, "Behaviour first")."""

from __future__ import annotations

from pathlib import Path

import pytest

from shopbench.report.artifacts import Provenance, save_table
from shopbench.report.diff import diff_runs, infer_key, main, report, tables_dir


def _write(root: Path, tables: dict[str, str]) -> Path:
    d = root / "smoke" / "paper" / "tables"
    d.mkdir(parents=True)
    for name, text in tables.items():
        (d / f"{name}.csv").write_text(text, encoding="utf-8")
        (d / f"{name}.md").write_text("not compared", encoding="utf-8")
    return root / "smoke"


BASE = {
    "tab1": ",agent,rate,wall_s\n0,a,0.5,1.25\n1,b,0.25,2.5\n",
    "tab2": "x,y\n1,2\n",
}


def test_identical_runs_with_different_times_are_identical(tmp_path, capsys):
    a = _write(tmp_path / "a", BASE)
    b = _write(tmp_path / "b", {**BASE, "tab1": ",agent,rate,wall_s\n0,a,0.5,9.0\n1,b,0.25,2.5\n"})
    d = diff_runs(a, b)
    assert d.identical and d.tables[0].ignored == {"wall_s": 1}
    assert main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "identical: 2 tables in both, 2 identical" in out and "tab1.wall_s (1)" in out
    # times compared on request
    assert main([str(a), str(b), "--no-default-ignore"]) == 1


def test_changed_cells_rows_columns_and_missing_tables_are_reported(tmp_path, capsys):
    a = _write(tmp_path / "a", {**BASE, "tab3": "k\n1\n"})
    b = _write(tmp_path / "b", {"tab1": ",agent,rate,wall_s,extra\n0,a,0.5,1.25,1\n1,b,0.3,2.5,1\n2,c,1,1,1\n",
                                "tab2": "x,y\n1,2\n", "tab4": "k\n1\n"})  # fmt: skip
    d = diff_runs(a, b)
    assert not d.identical and d.only_a == ["tab3"] and d.only_b == ["tab4"]
    (t,) = d.changed
    assert t.name == "tab1" and (t.rows_a, t.rows_b) == (2, 3) and t.columns_only_b == ["extra"]
    assert [(c.row, c.column, c.a, c.b) for c in t.cells] == [(1, "rate", "0.25", "0.3")]
    text = report(d)
    assert "changed: tab1 (1 cells; rows matched by inferred key agent)" in text
    assert "row agent=b, rate: '0.25' -> '0.3'" in text and "row added (only in B): agent=c" in text
    assert "only in A: tab3" in text and "only in B: tab4" in text and "rows: 2 in A, 3 in B" in text
    assert main([str(a), str(b)]) == 1
    assert "DIFFERENT" in capsys.readouterr().out


def test_tolerance_and_extra_ignore_patterns(tmp_path):
    a = _write(tmp_path / "a", {"t": "p,note\n0.1000000001,x\n"})
    b = _write(tmp_path / "b", {"t": "p,note\n0.1,y\n"})
    assert not diff_runs(a, b).identical
    d = diff_runs(a, b, ["note"], rtol=1e-6)
    assert d.identical and d.tables[0].ignored == {"note": 1}


def test_the_folder_may_be_the_profile_paper_or_tables_folder(tmp_path, capsys):
    a = _write(tmp_path / "a", BASE)
    assert tables_dir(a) == tables_dir(a / "paper") == tables_dir(a / "paper" / "tables")
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path / "nowhere"), str(a)])
    assert e.value.code == 2 and "no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit):
        main([str(tmp_path / "empty"), str(a)])
    assert "no table CSVs" in capsys.readouterr().err


def test_paths_under_each_runs_outputs_folder_compare_equal(tmp_path):
    ra, rb = tmp_path / "a", tmp_path / "b"
    a = _write(ra, {"exports": f"what,path\npairs,{ra.resolve()}/smoke/data/pairs.jsonl\n"})
    b = _write(rb, {"exports": f"what,path\npairs,{rb.resolve()}/smoke/data/pairs.jsonl\n"})
    assert diff_runs(a, b).identical
    (t,) = diff_runs(a, b, keep_paths=True).changed
    assert [c.column for c in t.cells] == ["path"]
    c = _write(tmp_path / "c", {"exports": f"what,path\npairs,{rb.resolve()}/smoke/data/other.jsonl\n"})
    assert not diff_runs(a, c).identical


# ---- rows matched by key columns (issue 25 item 7) ---------------------------------------------------
TAB3 = ("backbone,protocol,S0,false_fire\n"
        "smol,pacejudge,0.5,0.1\nsmol,etapp,0.25,0.2\nqwen,pacejudge,0.75,0.0\nqwen,etapp,0.5,0.3\n")  # fmt: skip


def _resorted(text: str) -> str:
    head, *rows = text.strip("\n").split("\n")
    return "\n".join([head, *sorted(rows)]) + "\n"


def test_re_sorted_rows_are_identical_and_said_to_be_reordered(tmp_path, capsys):
    a = _write(tmp_path / "a", {"tab3": TAB3})
    b = _write(tmp_path / "b", {"tab3": _resorted(TAB3)})
    assert _resorted(TAB3) != TAB3
    d = diff_runs(a, b)
    (t,) = d.tables
    assert d.identical and t.key == ["backbone", "protocol"] and not t.key_declared and t.reordered
    assert main([str(a), str(b)]) == 0
    assert "rows in another order, matched by key (not a change): tab3" in capsys.readouterr().out


def test_a_changed_row_is_one_cell_and_rows_on_one_side_are_added_or_removed(tmp_path):
    a = _write(tmp_path / "a", {"tab3": TAB3})
    changed = _resorted(TAB3).replace("qwen,etapp,0.5,0.3", "qwen,etapp,0.5,0.35").replace(
        "smol,pacejudge,0.5,0.1\n", "") + "llama,etapp,0.1,0.9\n"  # fmt: skip
    b = _write(tmp_path / "b", {"tab3": changed})
    (t,) = diff_runs(a, b).changed
    assert [(c.key, c.column, c.a, c.b) for c in t.cells] == [
        ("backbone=qwen, protocol=etapp", "false_fire", "0.3", "0.35")
    ]
    assert t.rows_only_a == ["backbone=smol, protocol=pacejudge"] and t.rows_only_b == [
        "backbone=llama, protocol=etapp"
    ]
    text = report(diff_runs(a, b))
    assert "row removed (only in A): backbone=smol, protocol=pacejudge" in text
    assert "row added (only in B): backbone=llama, protocol=etapp" in text
    assert "row backbone=qwen, protocol=etapp, false_fire: '0.3' -> '0.35'" in text


def test_a_declared_key_is_stored_with_the_table_and_used_by_the_diff(tmp_path):
    import pandas as pd

    prov = Provenance("30_pace_metrics", "smoke", "smoke.yaml", "0" * 64)
    df = pd.DataFrame(
        {"backbone": ["smol", "smol", "qwen", "qwen"], "tier": [1, 2, 1, 2], "acc": [0.5, 0.6, 0.7, 0.8]}
    )
    paper_a, paper_b = tmp_path / "a" / "smoke" / "paper", tmp_path / "b" / "smoke" / "paper"
    rec = save_table(df, "tiers", "c", paper_a, prov, evidence="measured", key=["backbone", "tier"])
    assert rec["key"] == ["backbone", "tier"]
    # the tier column is numeric: the inferred key (backbone) does not identify a row
    assert infer_key(["backbone", "tier", "acc"], [r.split(",") for r in ["smol,1,0.5", "smol,2,0.6"]],
                     ["backbone", "tier", "acc"], [r.split(",") for r in ["smol,1,0.5", "smol,2,0.6"]]) == []  # fmt: skip
    moved = df.iloc[[3, 1, 2, 0]].reset_index(drop=True).assign(acc=[0.8, 0.6, 0.7, 0.55])
    save_table(moved, "tiers", "c", paper_b, prov, evidence="measured", key=["backbone", "tier"])
    (t,) = diff_runs(paper_a.parent, paper_b.parent).changed
    assert t.key_declared and t.key == ["backbone", "tier"]
    assert [(c.key, c.column, c.a, c.b) for c in t.cells] == [("backbone=smol, tier=1", "acc", "0.5", "0.55")]
    with pytest.raises(ValueError, match="key column"):
        save_table(df, "tiers", "c", paper_a, prov, evidence="measured", key=["model"])


def test_a_table_without_identifying_columns_is_compared_by_position(tmp_path):
    a = _write(tmp_path / "a", {"t": "k,v\n1,2\n3,4\n"})
    b = _write(tmp_path / "b", {"t": "k,v\n3,4\n1,2\n"})
    (t,) = diff_runs(a, b).changed
    assert t.key == [] and len(t.cells) == 4 and "rows compared by position" in report(diff_runs(a, b))
