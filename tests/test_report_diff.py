"""``python -m shopbench.report.diff``: the table diff of two runs (issue 11, "Behaviour first")."""

from __future__ import annotations

from pathlib import Path

import pytest

from shopbench.report.diff import diff_runs, main, report, tables_dir


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
    assert "changed: tab1 (1 cells)" in text and "row 1, rate: '0.25' -> '0.3'" in text
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
