"""The τ²-retail domain against tau2-bench's own outputs (issue 15, seed 003 §4: "We rely on its task
definitions, agent framework, user simulator, tool sets, and domain-specific environments").

``shopbench/domains/tau2_retail/reference/tau2_retail_replay.jsonl`` (package data: notebook 40 shows
the comparison as ``padme_tau2_fidelity``) was computed by running tau2-bench's own code (commit and
script in ``tests/fixtures/tau2_retail_README.md``) on the same data files: per task the final
database hash and per call the tool output. Here the same calls run through
``shopbench.domains.tau2_retail`` with ``fidelity="tau2"`` (the default) and must match byte for byte;
:func:`~shopbench.domains.tau2_retail.fidelity.fidelity_table` must count what this file's own replay
counts.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from shopbench.domains.tau2_retail import REFERENCE_REPLAY as FIXTURE

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tau2_retail"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def data():
    if not (DATA / "db.json").exists():
        pytest.skip(
            f"no tau2 retail data at {DATA} (tau2-bench's published retail folder, kept beside the project)"
        )
    head = json.loads(FIXTURE.read_text().splitlines()[0])
    for f, want in head["data_sha256"].items():
        if _sha((DATA / f).read_text()) != want:
            pytest.skip(f"{DATA / f} is not the file the fixtures were computed on (sha256 {want[:12]}…)")
    from shopbench.domains.tau2_retail import load_tau2

    return load_tau2(DATA)


@pytest.fixture(scope="module")
def fixture_rows():
    lines = [json.loads(x) for x in FIXTURE.read_text().splitlines() if x.strip()]
    return lines[0], [r for r in lines[1:] if "task" in r], [r for r in lines[1:] if "probe" in r]


def _replay(data, calls, fidelity="tau2"):
    from shopbench.domains.tau2_retail import RetailDB, make_tools, tool_content

    db = RetailDB(data.db)
    tools = fidelity(db) if callable(fidelity) else make_tools(db, fidelity)
    outs = []
    for c in calls:
        ok, res = tools.execute(c["name"], c["arguments"])
        outs.append((ok, tool_content(ok, res)))
    return db, outs


def _task_calls(data, tid):
    task = next(t for t in data.tasks if str(t["id"]) == tid)
    return [
        {"name": a["name"], "arguments": a.get("arguments") or {}}
        for a in task["evaluation_criteria"]["actions"]
    ]


def _compare(data, rows, calls_of, fidelity="tau2"):
    same_out = n_out = same_db = 0
    diffs = []
    for r in rows:
        db, outs = _replay(data, calls_of(r), fidelity)
        for (ok, content), f in zip(outs, r["calls"], strict=True):
            n_out += 1
            if _sha(content)[:24] == f["sha256"] and ok == (not f["error"]):
                same_out += 1
            else:
                diffs.append(
                    (r.get("task", r.get("probe")), f["name"], content[:200], f.get("content", "")[:200])
                )
        if db.tau2_hash() == r["db_hash"]:
            same_db += 1
        else:
            diffs.append((r.get("task", r.get("probe")), "final database"))
    return same_out, n_out, same_db, diffs


def test_all_114_tasks_replay_as_tau2_bench(data, fixture_rows):
    """tau2-bench: the same tool outputs (nulls written as null, float sums unrounded, the last variant's
    price for every modified item) and the same final database for every task."""
    from shopbench.domains.tau2_retail import RetailDB

    head, tasks, _ = fixture_rows
    assert len(tasks) == 114 and head["n_calls"] == 550
    assert RetailDB(data.db).tau2_hash() == head["initial_db_hash"]  # db.json read into tau2-bench's models
    same_out, n_out, same_db, diffs = _compare(data, tasks, lambda r: _task_calls(data, r["task"]))
    print(f"\ntau2 fidelity: byte-identical tool outputs {same_out}/{n_out}, final database {same_db}/114")
    assert (same_out, n_out, same_db) == (550, 550, 114), diffs[:10]


def test_edge_case_calls_match_tau2_bench(data, fixture_rows):
    """Error texts as tau2-bench gives them: "Invalid reason", "<id> not found", "Some item not found",
    Python's TypeError for a missing or unexpected argument, calculate("2**3") == "8.0", the email
    look-up without trimming ("User not found")."""
    _, _, probes = fixture_rows
    same_out, n_out, same_db, diffs = _compare(data, probes, lambda r: r["calls"])
    print(f"\nedge cases: {same_out}/{n_out} outputs, {same_db}/{len(probes)} databases")
    assert (same_out, same_db) == (n_out, len(probes)), diffs[:10]
    by = {(r["probe"], i): c for r in probes for i, c in enumerate(r["calls"])}
    assert by[("calculate", 1)]["content"] == "8.0"
    assert by[("cancel", 1)]["content"] == "Error: Invalid reason"
    assert by[("lookups", 2)]["content"] == "Error: User not found"


def test_corrected_fidelity_changes_what_it_lists(data, fixture_rows):
    """fidelity="corrected" differs from tau2-bench exactly where CORRECTIONS says: per-item variant
    prices (tasks 20, 21, 36, 37, 100), the rounded difference (task 101: tau2-bench stores
    121.20000000000005), and the error texts it lists."""
    from shopbench.domains.tau2_retail import CORRECTIONS

    assert {"per_item_variant", "rounded_difference", "checked_arguments", "atomic_writes", "trimmed_lookups",
            "arithmetic_only", "explained_errors", "distinct_lines"} == set(CORRECTIONS)  # fmt: skip
    _, tasks, _ = fixture_rows
    same_out, _, same_db, diffs = _compare(data, tasks, lambda r: _task_calls(data, r["task"]), "corrected")
    differ = sorted({d[0] for d in diffs if d[1] == "final database"}, key=int)
    print(
        f"\ncorrected: tool outputs {same_out}/550 as tau2-bench, final database {same_db}/114; differ: {differ}"
    )
    assert {"20", "21", "36", "37", "100", "101"} <= set(differ) and same_db < 114
    db, outs = _replay(data, _task_calls(data, "101"))
    order = db.get("orders", "#W4219264")
    assert order["payment_history"][1]["amount"] == 121.20000000000005  # tau2-bench: the raw float
    db, _ = _replay(data, _task_calls(data, "101"), "corrected")
    assert db.get("orders", "#W4219264")["payment_history"][1]["amount"] == 121.2


def test_order_output_writes_nulls_and_calculate_follows_eval(data):
    """tau2-bench writes an order's unset optional fields as null; calculate is Python's arithmetic."""
    from shopbench.domains.tau2_retail import RetailDB, RetailTools, tool_content

    tools = RetailTools(RetailDB(data.db))
    out = json.loads(tool_content(*tools.execute("get_order_details", {"order_id": "#W2378156"})))
    assert list(out)[-7:] == ["cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                              "exchange_price_difference", "return_items", "return_payment_method_id"]  # fmt: skip
    assert all(out[k] is None for k in list(out)[-7:])
    for expr in ("2**3", "7//2", "(2.5)**2", "2 ** -1", "1/3", "10**400", "1/0", "2 * (3"):
        try:
            want = str(round(float(eval(expr, {"__builtins__": None}, {})), 2))  # what tau2-bench computes
        except Exception as e:  # noqa: BLE001
            want = f"Error: {e}"
        assert tool_content(*tools.execute("calculate", {"expression": expr})) == want, expr
    # the one guard: an integer power too large to ever be a float is refused at once (tau2-bench's eval
    # would compute it first); the error is the one float() would give
    assert tools.execute("calculate", {"expression": "9**9**9"}) == (
        False,
        "int too large to convert to float",
    )


# ---- the table notebook 40 shows (padme_tau2_fidelity) -------------------------------------------------


@pytest.fixture(scope="module")
def table(data):
    from shopbench.domains.tau2_retail import fidelity_table

    return fidelity_table(data)


def _row(table, calls, reading):
    rows = table[(table["calls"] == calls) & (table["reading"] == reading)]
    assert len(rows) == 1, (calls, reading)
    return rows.iloc[0]


def test_fidelity_table_counts_what_the_replay_counts(data, fixture_rows, table):
    """The default reading: 550/550 byte-identical outputs and 114/114 final databases (tau2-bench's
    own hash); the corrected reading: the counts this file's own replay (no hash cache) gives."""
    from shopbench.domains.tau2_retail import CORRECTIONS

    tasks = "tasks' expected actions"
    t = _row(table, tasks, "tau2 (default)")
    assert (t.tool_calls, t.identical_outputs, t.same_success_error, t.sequences, t.same_final_db) == (
        550, 550, 550, 114, 114)  # fmt: skip
    assert (t.calls_changed, t.sequences_changed, t.changed) == (0, 0, "")
    _, task_rows, probe_rows = fixture_rows
    same_out, n_out, same_db, diffs = _compare(
        data, task_rows, lambda r: _task_calls(data, r["task"]), "corrected"
    )
    c = _row(table, tasks, "corrected")
    assert (
        (c.tool_calls, c.identical_outputs, c.same_final_db) == (n_out, same_out, same_db) == (550, 511, 79)
    )
    assert c.changed.split(", ") == sorted({d[0] for d in diffs}, key=int)
    e = _row(table, "edge cases", "corrected")
    same_out, n_out, same_db, _ = _compare(data, probe_rows, lambda r: r["calls"], "corrected")
    assert (e.tool_calls, e.identical_outputs, e.same_final_db) == (n_out, same_out, same_db) == (88, 46, 6)
    assert _row(table, "edge cases", "tau2 (default)").identical_outputs == 88
    # one row per correction alone; each names what it changes among the tasks
    only = {r.corrections: r for r in table[table.reading.str.startswith("corrected, only")].itertuples()
            if r.calls == tasks}  # fmt: skip
    assert set(only) == set(CORRECTIONS)
    assert only["per_item_variant"].changed == "20, 21, 36, 37, 100"  # tau2-bench: the last variant's price
    assert "101" in only["rounded_difference"].changed.split(", ")  # 121.20000000000005
    assert only["rounded_difference"].changed == c.changed  # every task the corrected reading changes
    assert only["arithmetic_only"].sequences_changed == 0  # no task's expected actions use ** or //


def test_no_correction_switched_on_is_tau2_bench(data, fixture_rows):
    """CorrectedRetailTools with no correction behaves as tau2-bench on every reference call, so a
    "corrected, only <name>" row measures that correction and nothing else."""
    from shopbench.domains.tau2_retail import CorrectedRetailTools

    _, tasks, probes = fixture_rows
    none = lambda db: CorrectedRetailTools(db, corrections=())  # noqa: E731
    assert _compare(data, tasks, lambda r: _task_calls(data, r["task"]), none)[:3] == (550, 550, 114)
    assert _compare(data, probes, lambda r: r["calls"], none)[:3] == (88, 88, 9)
    with pytest.raises(ValueError, match="rounding"):
        CorrectedRetailTools(None, corrections=("rounding",))


def test_the_hash_cache_is_tau2_benchs_hash(data):
    """The table's cached hash equals RetailDB.tau2_hash (tau2-bench's get_db_hash) after writes."""
    from shopbench.domains.tau2_retail.fidelity import _HashCache

    cache = _HashCache(data.db)
    for tid in ("0", "20", "101"):
        for fidelity in ("tau2", "corrected"):
            db, _ = _replay(data, _task_calls(data, tid), fidelity)
            assert any(db.changed.values()) and cache(db) == db.tau2_hash()


def test_the_table_sees_a_changed_tool(data, monkeypatch):
    """A tool that answers differently, or writes differently, shows in the default reading's counts."""
    from shopbench.domains.tau2_retail import RetailTools, fidelity_table

    monkeypatch.setattr(
        RetailTools, "get_order_details", lambda self, order_id: dict(sorted(self._order(order_id).items()))
    )
    t = fidelity_table(data, edge_cases=False, per_correction=False).iloc[0]
    assert t.reading == "tau2 (default)" and t.identical_outputs < 550 and t.same_final_db == 114
    monkeypatch.undo()
    add = RetailTools._gift_card_add
    monkeypatch.setattr(
        RetailTools, "_gift_card_add", lambda self, u, pm, amount: add(self, u, pm, amount + 0.01)
    )
    t = fidelity_table(data, edge_cases=False, per_correction=False).iloc[0]
    assert t.same_final_db < 114


def test_other_data_or_a_broken_reference_is_a_clear_error(data, tmp_path):
    import dataclasses

    from shopbench.domains.tau2_retail import Tau2DataError, fidelity_table, load_reference

    (tmp_path / "db.json").symlink_to(data.path / "db.json")
    (tmp_path / "tasks.json").write_text((data.path / "tasks.json").read_text() + "\n")
    with pytest.raises(Tau2DataError, match=r"tasks\.json: not the file tau2-bench's reference outputs"):
        fidelity_table(dataclasses.replace(data, path=tmp_path))
    bad = tmp_path / "ref.jsonl"
    bad.write_text(
        FIXTURE.read_text().splitlines()[0]
        + "\n"
        + '{"task": "0", "db_hash": "x", "calls": [{"name": "a"}]}\n'
    )
    with pytest.raises(Tau2DataError, match=r"ref\.jsonl, line 2: field 'calls\[0\]\.error': missing"):
        load_reference(bad)


def test_notebook_40_names_where_it_looked_for_the_tau2_data(tmp_path):
    """The skip note of padme_tau2_fidelity names the configured folder (relative to the repository)."""
    from shopbench.padme.experiment import tau2_data_paths

    cfg = {"sources": ["shop", {"kind": "tau2", "path": "../data/t2"}, "tau2:/abs/t2", "tau2"]}
    assert tau2_data_paths(cfg, tmp_path / "repo") == [
        tmp_path / "data" / "t2", Path("/abs/t2"), (tmp_path / "shared" / "data" / "tau2_retail")]  # fmt: skip
    assert tau2_data_paths({"sources": ["shop"]}, tmp_path) == []
