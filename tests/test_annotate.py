"""The human-study annotation tool: pairs, importers, panels, the answer store, the widget's controller.

The real-browser test is tests/test_annotate_browser.py.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shopbench.annotate.pairs import (
    CRITERIA,
    Criterion,
    Pair,
    PairImportError,
    assign_panels,
    pairs_from_paceshop,
    pairs_from_tau_bench,
    panel_of,
    read_pairs,
    synthetic_pairs,
    write_pairs,
)
from shopbench.annotate.store import AnnotationStore, Answer, StoreError, check_annotator, slot_order
from shopbench.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT.parent / "shared" / "data" / "tau_bench_airline_trajectories" / "gpt-4o-airline.json"
needs_tau = pytest.mark.skipif(
    not TAU.exists(), reason=f"tau-bench data not found at {TAU} (../shared/data is absent)"
)


@pytest.fixture(scope="module")
def paceshop_records(paceshop_small):
    return paceshop_small[1].records


@pytest.fixture(scope="module")
def tau_pairs():
    if not TAU.exists():
        pytest.skip(f"tau-bench data not found at {TAU} (../shared/data is absent)")
    return pairs_from_tau_bench(TAU)


# ---- the store ---------------------------------------------------------------------------------------
def _answer(store, annotator, pair_id, choice="A", confidence=50, order=("side_a", "side_b")):
    return store.record(annotator, pair_id, choice, confidence, order, shown_at="2026-01-01T00:00:00.000Z",
                        answered_at="2026-01-01T00:00:07.500Z")  # fmt: skip


def test_store_append_answers_and_resume(tmp_path):
    store = AnnotationStore(tmp_path)
    order = ["p1", "p2", "p3"]
    assert store.answers("ann") == {} and store.first_unanswered("ann", order) == 0
    a = _answer(store, "ann", "p1", "B", 100, ("side_b", "side_a"))
    assert (a.chosen_item, a.revision, a.time_spent_s) == ("side_a", 0, 7.5)
    _answer(store, "ann", "p2", "A", 0)
    assert store.first_unanswered("ann", order) == 2
    _answer(store, "ann", "p3", "A", 50)
    assert store.first_unanswered("ann", order) == 3
    assert store.first_unanswered("ann", ["p1", "p9", "p2"]) == 1
    lines = (tmp_path / "ann.jsonl").read_text().splitlines()
    assert len(lines) == 3
    row = json.loads(lines[0])
    assert set(row) == {"annotator", "pair_id", "choice", "chosen_item", "confidence", "slot_order", "shown_at",
                        "answered_at", "time_spent_s", "revision"}  # fmt: skip
    assert row["slot_order"] == ["side_b", "side_a"]
    assert store.annotators() == ["ann"]


def test_store_revisions_last_wins(tmp_path):
    store = AnnotationStore(tmp_path)
    _answer(store, "ann", "p1", "A", 0)
    _answer(store, "ann", "p2", "A", 0)
    rev = _answer(store, "ann", "p1", "B", 100)
    assert rev.revision == 1
    assert len(store.rows("ann")) == 3
    latest = store.answers("ann")
    assert (latest["p1"].choice, latest["p1"].confidence, latest["p1"].revision) == ("B", 100, 1)
    assert latest["p2"].choice == "A"


def test_store_partial_last_line_ignored_then_repaired(tmp_path):
    store = AnnotationStore(tmp_path)
    _answer(store, "ann", "p1")
    path = tmp_path / "ann.jsonl"
    with open(path, "ab") as f:
        f.write(b'{"annotator":"ann","pair_id":"p2","cho')  # a write cut short
    fresh = AnnotationStore(tmp_path)
    assert list(fresh.answers("ann")) == ["p1"]
    _answer(fresh, "ann", "p3")
    assert [a.pair_id for a in AnnotationStore(tmp_path).rows("ann")] == ["p1", "p3"]
    assert path.read_bytes().endswith(b"\n")
    assert b'"pair_id":"p2"' in (tmp_path / "ann.jsonl.partial").read_bytes()


def test_store_corrupt_middle_line_names_file_and_line(tmp_path):
    store = AnnotationStore(tmp_path)
    _answer(store, "ann", "p1")
    path = tmp_path / "ann.jsonl"
    first = path.read_bytes()
    with open(path, "ab") as f:
        f.write(b'{"not": "an answer"}\n' + first)
    with pytest.raises(StoreError, match=r"ann\.jsonl, line 2: .*not a valid answer"):
        store.answers("ann")
    with pytest.raises(StoreError):  # nothing is appended to a file that cannot be read back
        _answer(store, "ann", "p2")


def test_store_rejects_unsafe_annotator_ids(tmp_path):
    store = AnnotationStore(tmp_path)
    for bad in ["", "../x", "a/b", ".hidden", "x" * 65, "a b"]:
        with pytest.raises(ValueError, match="annotator id"):
            store.path(bad)
    assert check_annotator("alice.smith@lab-1") == "alice.smith@lab-1"


def test_answer_rejects_inconsistent_rows():
    base = dict(annotator="a", pair_id="p", choice="A", chosen_item="side_b", confidence=50,
                slot_order=("side_a", "side_b"), shown_at="t", answered_at="t", time_spent_s=1.0)  # fmt: skip
    with pytest.raises(ValueError, match="choice A"):
        Answer(**base)
    with pytest.raises(ValueError):
        Answer(**{**base, "chosen_item": "side_a", "confidence": 70})


WRITER = textwrap.dedent("""
    import sys
    from shopbench.annotate.store import AnnotationStore
    root, annotator, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = AnnotationStore(root)
    for i in range(n):
        store.record(annotator, f"pair-{i:05d}", "AB"[i % 2], (0, 50, 100)[i % 3], ("side_a", "side_b"),
                     shown_at="2026-01-01T00:00:00.000Z")
        print(i, flush=True)  # acknowledged: on disk (fsync) before this line
""")


def _writer(tmp_path, annotator, n):
    script = tmp_path / "writer_script.py"
    if not script.exists():  # rewriting it while an earlier writer starts could hand that one an empty file
        script.write_text(WRITER)
    return subprocess.Popen([sys.executable, str(script), str(tmp_path / "store"), annotator, str(n)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_kill_9_loses_at_most_the_pair_in_progress(tmp_path):
    proc = _writer(tmp_path, "killed", 100000)
    acked = -1
    for line in proc.stdout:
        acked = int(line)
        if acked >= 40:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    store = AnnotationStore(tmp_path / "store")
    rows = store.rows("killed")  # parses: nothing but possibly a cut-off last line, which is ignored
    ids = [r.pair_id for r in rows]
    assert ids == [f"pair-{i:05d}" for i in range(len(ids))], "rows out of order or torn"
    assert len(ids) >= acked + 1  # every acknowledged answer is there
    assert store.first_unanswered("killed", [f"pair-{i:05d}" for i in range(100000)]) == len(ids)
    _answer(store, "killed", "after-restart")  # appending after a crash works, on a clean line
    assert AnnotationStore(tmp_path / "store").rows("killed")[-1].pair_id == "after-restart"


def test_two_writer_processes_at_once(tmp_path):
    n = 300
    procs = [_writer(tmp_path, name, n) for name in ("alice", "bob")]
    same = [
        _writer(tmp_path, "carol", n),
        _writer(tmp_path, "carol", n),
    ]  # same file: O_APPEND keeps lines whole
    for p in procs + same:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    store = AnnotationStore(tmp_path / "store")
    for name in ("alice", "bob"):
        rows = store.rows(name)
        assert len(rows) == n and {r.annotator for r in rows} == {name}
        assert [r.pair_id for r in rows] == [f"pair-{i:05d}" for i in range(n)]
    carol = store.rows("carol")
    assert len(carol) == 2 * n and len(store.answers("carol")) == n


def test_slot_order_is_deterministic_and_balanced():
    assert slot_order(7, "alice", "p1") == slot_order(7, "alice", "p1")
    orders = [slot_order(7, "alice", f"p{i}") for i in range(400)]
    assert all(set(o) == {"side_a", "side_b"} for o in orders)
    left_a = sum(o[0] == "side_a" for o in orders)
    assert 160 < left_a < 240
    assert [slot_order(7, "bob", f"p{i}") for i in range(400)] != orders  # per annotator
    assert [slot_order(8, "alice", f"p{i}") for i in range(400)] != orders  # per seed


# ---- importers ---------------------------------------------------------------------------------------
@needs_tau
def test_tau_bench_pairs(tau_pairs):
    raw = json.loads(TAU.read_text())
    assert len(tau_pairs) > 50
    assert len({p.id for p in tau_pairs}) == len(tau_pairs)
    by_key = {(c["task_id"], c["trial"]): c for c in raw}
    for p in tau_pairs:
        src = p.hidden.source
        assert p.criterion == CRITERIA["task_resolution"]
        ra, rb = src["rewards"]["side_a"], src["rewards"]["side_b"]
        assert ra != rb and p.hidden.label == ("side_a" if ra > rb else "side_b")
        for side in ("side_a", "side_b"):
            conv = by_key[(src["task_id"], src["trials"][side])]
            assert conv["reward"] == src["rewards"][side]
            msgs = p.side(side).content["messages"]
            assert msgs and all(m["role"] != "system" for m in msgs)
            assert len(msgs) == len(conv["traj"]) - 1  # everything but the system prompt
        titles = [r.title for r in p.references]
        assert titles == ["Agent policy", "Agent tools"]
        assert p.references[0].text.startswith("# Airline Agent Policy")
    labels = [p.hidden.label for p in tau_pairs]
    assert abs(labels.count("side_a") - labels.count("side_b")) <= 1  # position balance
    some = pairs_from_tau_bench(TAU, max_pairs=10, seed=0)
    assert len(some) == 10 and len({p.hidden.source["task_id"] for p in some}) == 10  # round-robin over tasks
    assert [p.id for p in pairs_from_tau_bench(TAU, max_pairs=10, seed=0)] == [p.id for p in some]
    assert [p.id for p in pairs_from_tau_bench(TAU, max_pairs=10, seed=1)] != [p.id for p in some]


def test_tau_bench_malformed_input_names_file_and_record(tmp_path):
    f = tmp_path / "runs.json"
    with pytest.raises(PairImportError, match="runs.json: no such tau-bench results file"):
        pairs_from_tau_bench(f)
    f.write_text("{not json")
    with pytest.raises(PairImportError, match=r"runs\.json, line 1, column 2: not valid JSON"):
        pairs_from_tau_bench(f)
    f.write_text(json.dumps({"task_id": 1}))
    with pytest.raises(PairImportError, match="expected a JSON list"):
        pairs_from_tau_bench(f)
    ok = {"task_id": 3, "trial": 0, "reward": 1.0, "traj": [{"role": "user", "content": "hi"}]}
    f.write_text(json.dumps([ok, {"task_id": 3, "trial": 1, "traj": []}]))
    with pytest.raises(
        PairImportError, match=r"runs\.json, conversation \[1\] \(task_id=3\): field 'reward': is missing"
    ):
        pairs_from_tau_bench(f)
    bad_msg = {
        **ok,
        "trial": 1,
        "reward": 0.0,
        "traj": [{"role": "assistant", "tool_calls": [{"function": {}}]}],
    }
    f.write_text(json.dumps([ok, bad_msg]))
    with pytest.raises(
        PairImportError, match=r"conversation \[1\] \(task_id=3, trial=1\): field 'traj\[0\]'"
    ):
        pairs_from_tau_bench(f)
    good = {**ok, "traj": [{"role": "system", "content": "POLICY TEXT"}, {"role": "user", "content": "hi"}]}
    f.write_text(json.dumps([good, {**good, "trial": 1, "reward": 0.0}, {**good, "trial": 2}]))
    pairs = pairs_from_tau_bench(f)
    assert len(pairs) == 2  # (0,1) and (1,2); (0,2) have the same reward
    assert pairs[0].references[0].text == "POLICY TEXT"  # no policy.md beside: the system prompt
    with pytest.raises(InputError, match="no such policy file"):
        pairs_from_tau_bench(f, policy_path=tmp_path / "nope.md")


def test_paceshop_pairs(paceshop_records):
    by_id = {r.record_id: r for r in paceshop_records}
    pairs = pairs_from_paceshop(paceshop_records, n=20, seed=3)
    assert len(pairs) == 20 and len({p.id for p in pairs}) == 20
    goods = set()
    for p in pairs:
        src = p.hidden.source
        good, bad = by_id[src["good_record_id"]], by_id[src["bad_record_id"]]
        assert good.kind == "good" and bad.kind == "bad" and bad.base_record_id == good.record_id
        win, lose = p.side(p.hidden.label), p.side("side_b" if p.hidden.label == "side_a" else "side_a")
        assert win.content["overview_text"] == good.response.overview_text
        assert lose.content["attribution_list"] == bad.response.attribution_list
        assert win.content["query"] == lose.content["query"] == good.query
        assert win.content["persona"] == lose.content["persona"]
        assert p.hidden.steering_levels[p.hidden.label] == 0
        assert p.criterion.name == "Overall response quality"
        assert [r.title for r in p.references] == ["Shopper profile", "Evidence pool"]
        goods.add(good.record_id)
    assert len(goods) == 20  # one BAD sibling per GOOD record first
    labels = [p.hidden.label for p in pairs]
    assert labels.count("side_a") == labels.count("side_b") == 10
    assert [p.id for p in pairs_from_paceshop(paceshop_records, n=20, seed=3)] == [p.id for p in pairs]


def test_paceshop_pairs_from_a_build_folder_and_errors(tmp_path, paceshop_records):
    from shopbench.paceshop.io import write_jsonl

    out = tmp_path / "ps"
    write_jsonl(out / "records_packaged.jsonl", paceshop_records)
    (out / "manifest.json").write_text("{}")
    assert len(pairs_from_paceshop(out, n=5)) == 5
    broken = [r.model_dump() for r in paceshop_records[:3]]
    broken[1]["response"] = {"overview_text": 3}
    with pytest.raises(PairImportError, match=rf"record \[1\] '{broken[1]['record_id']}': field 'response"):
        pairs_from_paceshop(broken)
    only_goods = [r for r in paceshop_records if r.kind == "good"]
    with pytest.raises(PairImportError, match="no BAD record"):
        pairs_from_paceshop(only_goods)


def test_pairs_round_trip_and_validation(tmp_path):
    pairs = synthetic_pairs(4, seed=1)
    write_pairs(tmp_path / "pairs.jsonl", pairs)
    assert read_pairs(tmp_path / "pairs.jsonl") == pairs
    with pytest.raises(ValueError):
        Pair(id="x", criterion=Criterion(name="c", description="d"), side_a={"kind": "conversation", "content": {}},
             side_b=pairs[0].side_b)  # fmt: skip


def test_assign_panels_disjoint_and_balanced(paceshop_records):
    panels = {"panel-1": ["a1", "a2", "a3"], "panel-2": ["b1", "b2", "b3"]}
    mixed = pairs_from_paceshop(paceshop_records, n=30) + synthetic_pairs(10, seed=2)
    out = assign_panels(mixed, panels, seed=5)
    ids1, ids2 = [p.id for p in out["panel-1"].pairs], [p.id for p in out["panel-2"].pairs]
    assert not set(ids1) & set(ids2) and sorted(ids1 + ids2) == sorted(p.id for p in mixed)
    assert abs(len(ids1) - len(ids2)) <= 1
    for panel in out.values():
        crits = [p.criterion.name for p in panel.pairs]
        blocks = [c for i, c in enumerate(crits) if i == 0 or crits[i - 1] != c]
        assert len(blocks) == len(set(crits))  # one block per criterion
    assert panel_of(out, "b2").name == "panel-2"
    assert [p.id for p in assign_panels(mixed, panels, seed=5)["panel-1"].pairs] == ids1
    with pytest.raises(KeyError, match="in no panel"):
        panel_of(out, "zed")
    with pytest.raises(ValueError, match="disjoint"):
        assign_panels(mixed, {"p1": ["a"], "p2": ["a"]})
    with pytest.raises(ValueError, match="at least one annotator"):
        assign_panels(mixed, {"p1": []})
    with pytest.raises(ValueError, match="cannot be split"):
        assign_panels(mixed[:1], panels)


# ---- the widget and its controller -------------------------------------------------------------------
def _send(w, **msg):
    """What the browser sends: the message plus the view it was meant for."""
    msg.setdefault("view_id", w.ui["view_id"])
    w._handle_custom_msg(msg, [])


def _key(w, key):
    _send(w, type="key", key=key)


def _hidden_strings(pairs):
    out = set()

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, str) and len(x) >= 6:
            out.add(x)

    for p in pairs:
        walk(p.hidden.model_dump())
    return out | {"side_a", "side_b"}


def test_widget_state_holds_no_hidden_metadata(tmp_path, paceshop_records):
    from shopbench.annotate.widget import annotate

    pairs = pairs_from_paceshop(paceshop_records, n=3, seed=1) + synthetic_pairs(2, seed=1)
    if TAU.exists():
        pairs += pairs_from_tau_bench(TAU, max_pairs=2)
    w = annotate(pairs, "ann", tmp_path, seed=4)
    states = []

    def snap():
        states.append((w.get_state(), w.ui["screen"]))

    snap()
    _key(w, "Enter")
    snap()
    _send(w, type="instructions")
    snap()
    _send(w, type="start")
    for i in range(len(pairs)):
        if w.ui["screen"] == "intro":
            snap()
            _key(w, "n")
        assert w.ui["screen"] == "pair"
        _key(w, "ArrowLeft" if i % 2 else "ArrowRight")
        _key(w, "2")
        snap()
        _key(w, "Enter")
    snap()
    assert {s for _, s in states} == {"instructions", "intro", "pair", "done"}
    secrets = _hidden_strings(pairs)
    assert any("full-bad" in s for s in secrets) and any(s.startswith("full-good") for s in secrets)
    for state, screen in states:
        dumped = json.dumps(state, default=str)
        leaked = [s for s in secrets if s in dumped]
        assert not leaked, f"hidden metadata on the {screen} screen: {leaked[:3]}"
        data = json.dumps({k: state[k] for k in ("content", "ui", "instructions")})
        for key in (
            '"label"',
            '"hidden"',
            '"steering_levels"',
            '"filter_outcome"',
            '"source"',
            '"slot_order"',
        ):
            assert key not in data, f"{key} sent to the browser on the {screen} screen"
    assert len(AnnotationStore(tmp_path).answers("ann")) == len(pairs)


def _two_criteria_pairs():
    first = synthetic_pairs(3, seed=0)
    other = [p.model_copy(update={"id": f"fr-{i}", "criterion": CRITERIA["friendliness"]})
             for i, p in enumerate(synthetic_pairs(2, seed=1))]  # fmt: skip
    return first + other


def test_controller_keys_like_the_browser(tmp_path):
    from shopbench.annotate.widget import annotate

    pairs = _two_criteria_pairs()
    w = annotate(pairs, "kim", tmp_path, seed=9)
    store = AnnotationStore(tmp_path)
    ui = lambda: w.ui  # noqa: E731
    assert ui()["screen"] == "instructions" and not store.instructions_seen("kim")
    _key(w, "ArrowLeft")  # ignored on the instructions
    assert ui()["screen"] == "instructions"
    _key(w, "Enter")
    assert ui()["screen"] == "intro" and store.instructions_seen("kim")
    assert ui()["criterion"]["name"] == "Task resolution"
    _key(w, "q")  # any key begins the section
    assert ui()["screen"] == "pair" and ui()["progress"] == {"index": 1, "total": 5, "answered": 0}
    left_html = w.content["left"]

    _key(w, "Enter")  # nothing picked yet
    assert "Pick a side" in ui()["message"] and not store.rows("kim")
    _key(w, "ArrowLeft")
    _key(w, "Enter")
    assert "confidence" in ui()["message"] and not store.rows("kim")
    _key(w, "ArrowRight")
    _key(w, "3")
    assert (ui()["choice"], ui()["confidence"]) == ("B", 100)
    stale = ui()["view_id"]
    _key(w, "Enter")
    rows = store.rows("kim")
    assert len(rows) == 1
    order = slot_order(9, "kim", pairs[0].id)
    assert (rows[0].pair_id, rows[0].choice, rows[0].chosen_item, rows[0].confidence, rows[0].slot_order) == (
        pairs[0].id,
        "B",
        order[1],
        100,
        order,
    )
    assert ui()["progress"]["index"] == 2 and ui()["choice"] is None and w.content["left"] != left_html

    w._handle_custom_msg(
        {"type": "key", "key": "ArrowLeft", "view_id": stale}, []
    )  # pressed before pair 2 arrived
    assert ui()["choice"] is None
    _send(w, type="pick", slot="A")  # a click
    _send(w, type="confidence", value=0)
    _send(w, type="next")
    _key(w, "ArrowRight")
    _key(w, "2")
    _key(w, "Enter")
    assert ui()["screen"] == "intro" and ui()["criterion"]["name"] == "Friendliness"  # the criterion changed
    assert ui()["progress"]["index"] == 4

    _key(w, "Backspace")  # from the intro back to pair 3, prefilled
    assert (ui()["screen"], ui()["progress"]["index"], ui()["choice"], ui()["confidence"]) == (
        "pair",
        3,
        "B",
        50,
    )
    _key(w, "Backspace")
    assert (ui()["progress"]["index"], ui()["choice"], ui()["confidence"]) == (2, "A", 0)
    _key(w, "ArrowRight")
    _key(w, "1")
    _key(w, "Enter")  # revision of pair 2
    assert ui()["progress"]["index"] == 3 and ui()["answered"]
    _key(w, "Enter")  # pair 3 unchanged: no new row
    rows = store.rows("kim")
    assert [(r.pair_id, r.revision) for r in rows] == [(pairs[0].id, 0), (pairs[1].id, 0), (pairs[2].id, 0),
                                                       (pairs[1].id, 1)]  # fmt: skip
    latest = store.answers("kim")[pairs[1].id]
    assert (latest.choice, latest.confidence) == ("B", 0)

    _send(w, type="instructions")  # reopened from the header, then back where we were
    assert ui()["screen"] == "instructions" and ui()["reviewing_instructions"]
    _key(w, "Enter")
    assert ui()["screen"] == "intro" and ui()["progress"]["index"] == 4
    _send(w, type="begin")  # a click on the intro
    _key(w, "ArrowLeft")
    _key(w, "1")
    _key(w, "Enter")
    _key(w, "ArrowLeft")
    _key(w, "1")
    _key(w, "Enter")
    assert ui()["screen"] == "done" and ui()["progress"]["answered"] == 5
    _key(w, "ArrowLeft")  # ignored when done
    _key(w, "Backspace")
    assert ui()["screen"] == "pair" and ui()["progress"]["index"] == 5

    # a new page: no instructions again, resumes at the first unanswered pair (after the criterion intro)
    partial = AnnotationStore(tmp_path / "other")
    for p in pairs[:2]:
        partial.record("kim", p.id, "A", 50, slot_order(9, "kim", p.id), shown_at="2026-01-01T00:00:00Z")
    partial.mark_instructions_seen("kim")
    w2 = annotate(pairs, "kim", tmp_path / "other", seed=9)
    assert w2.ui["screen"] == "intro" and w2.ui["progress"]["index"] == 3
    _key(w2, "Enter")
    assert w2.ui["screen"] == "pair" and w2.ui["progress"]["index"] == 3 and w2.ui["choice"] is None


def test_controller_first_pair_and_save_errors(tmp_path, monkeypatch):
    from shopbench.annotate.widget import AnnotationSession

    s = AnnotationSession(synthetic_pairs(2), "lee", tmp_path)
    s.handle({"type": "start"})
    s.handle({"type": "begin"})
    s.handle({"type": "key", "key": "Backspace"})
    assert s.screen == "pair" and s.index == 0 and "first pair" in s.message

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(s.store, "append", boom)
    s.handle({"type": "pick", "slot": "A"})
    s.handle({"type": "confidence", "value": 50})
    s.handle({"type": "next"})
    assert s.index == 0 and "not recorded" in s.message
    with pytest.raises(ValueError, match="unique"):
        AnnotationSession(synthetic_pairs(2) * 2, "lee", tmp_path)
    with pytest.raises(ValueError, match="annotator id"):
        AnnotationSession(synthetic_pairs(2), "../etc", tmp_path)


def test_rendering_of_conversations_and_paceshop(paceshop_records):
    from shopbench.annotate.render import render_item, render_reference

    conv = synthetic_pairs(1)[0].side_a
    html = render_item(conv)
    assert html.count('class="sb-turn ') == 3  # customer, agent (call + result + answer), customer
    assert (
        '<details class="sb-call"><summary>Agent calls <code>get_user_details(user_id=&quot;user_000&quot;)'
        in html
    )
    assert '<details class="sb-result"><summary>Tool result -&gt; get_user_details</summary>' in html
    assert "<details open" not in html
    p = pairs_from_paceshop(paceshop_records, n=1)[0]
    ps = render_item(p.side_a)
    assert (
        "<strong>" in ps and "Product categories" in ps and "Related queries" in ps and "Attributions" in ps
    )
    assert "Shopper query:" in ps and "Shopper:" in ps and "M:" in ps
    from shopbench.annotate.pairs import Reference

    doc = render_reference(
        Reference(title="t", text="# Policy\n\n<script>x</script> **ok**", format="markdown")
    )
    assert "<h1>Policy</h1>" in doc and "<script>" not in doc and "<strong>ok</strong>" in doc


# ---- notebook and launcher ---------------------------------------------------------------------------
def test_notebook_is_the_builders_and_parameterised():
    import nbformat

    from shopbench.annotate.notebook import notebook

    path = ROOT / "notebooks" / "60_annotate_pairs.ipynb"
    on_disk = nbformat.read(str(path), 4)
    built = notebook()
    # the Python version the kernel reports is this machine's; another patch (or minor) release is the
    # same notebook (notebook_files.not_normal(same_python=False) accepts it the same way)
    for nb in (on_disk, built):
        nb.metadata.language_info.pop("version")
    assert on_disk == built, "notebook out of date: python -m shopbench.annotate.notebook"
    code = [c for c in on_disk.cells if c.cell_type == "code"]
    assert code[0].metadata["tags"] == ["parameters"]
    for name in ("profile", "annotator", "source", "tau_bench_path", "store_dir", "n_pairs"):
        assert f"{name} = " in code[0].source
    assert not any(c.get("outputs") or c.get("execution_count") for c in code)


def test_notebook_runs_under_papermill(tmp_path, monkeypatch):
    import papermill as pm

    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path / "out"))
    from shopbench.annotate.serve import ENV

    for var in ENV.values():
        monkeypatch.delenv(var, raising=False)
    store = tmp_path / "answers"
    out = tmp_path / "run.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / "60_annotate_pairs.ipynb"), str(out), cwd=str(ROOT / "notebooks"),
                        parameters={"profile": "smoke", "source": "tau_bench", "n_pairs": 4, "store_dir": str(store)},
                        kernel_name="python3", progress_bar=False)  # fmt: skip
    text = out.read_text()
    assert (
        "application/vnd.jupyter.widget-view+json" in text
        and "AnnotationWidget(annotator='demo', pairs=4" in text
    )
    tables = tmp_path / "out" / "smoke" / "paper" / "tables"
    assert (tables / "annotate_pairs.csv").exists() and (tables / "annotate_answers.csv").exists()


def test_serve_settings_and_loopback_only(monkeypatch):
    from shopbench.annotate import serve

    for var in list(serve.ENV.values()) + ["VOILA_REQUEST_URL", "VOILA_APP_PORT", "QUERY_STRING"]:
        monkeypatch.delenv(var, raising=False)
    base = dict(annotator="demo", store_dir=None, n_pairs=12)
    assert serve.settings(**base) == base
    monkeypatch.setenv("SHOPBENCH_ANNOTATOR", "bob")
    monkeypatch.setenv("SHOPBENCH_ANNOTATION_PAIRS", "5")
    monkeypatch.setenv("QUERY_STRING", "annotator=alice&store_dir=/etc")
    assert serve.settings(**base) == {
        "annotator": "bob",
        "store_dir": None,
        "n_pairs": 5,
    }  # not in Voila: no query
    monkeypatch.setenv("VOILA_REQUEST_URL", "http://127.0.0.1:1/?annotator=alice")
    assert serve.settings(**base) == {
        "annotator": "alice",
        "store_dir": None,
        "n_pairs": 5,
    }  # a URL never picks a folder
    argv = serve.voila_argv("nb.ipynb", 1234)
    assert "--Voila.port_retries=0" in argv and "--Voila.ip=127.0.0.1" in argv and "--Voila.port=1234" in argv
    with pytest.raises(SystemExit, match="loopback"):
        serve.voila_argv("nb.ipynb", 1234, ip="0.0.0.0")
    cfg = json.loads((serve.HERE / "voila.json").read_text())
    assert (
        cfg["Voila"]["tornado_settings"]["disable_check_xsrf"] is True and cfg["Voila"]["ip"] == "127.0.0.1"
    )
    assert cfg["MappingKernelManager"]["cull_idle_timeout"] > 0


def test_store_exports_to_the_human_study_format(tmp_path):
    from shopbench.annotate.humanstudy import export_human_study, load_human_study
    from shopbench.annotate.store import human_study_frames

    pairs = synthetic_pairs(4, seed=2)
    store = AnnotationStore(tmp_path / "answers")
    panels = {"1": ["a1", "a2"], "2": ["b1"]}
    for a in ("a1", "a2", "b1"):
        for p in pairs:
            order = slot_order(0, a, p.id)
            winner_slot = "A" if order[0] == p.hidden.label else "B"
            store.record(a, p.id, winner_slot, 100, order, shown_at="2026-01-01T00:00:00Z")
    _answer(
        store,
        "a2",
        pairs[0].id,
        "A" if slot_order(0, "a2", pairs[0].id)[0] != pairs[0].hidden.label else "B",
        0,
        slot_order(0, "a2", pairs[0].id),
    )  # a revision that disagrees with the label
    annotations, key = human_study_frames(store, pairs, panels)
    assert len(annotations) == 12 and len(key) == 4
    export_human_study(annotations, key, tmp_path / "study")
    ann, k = load_human_study(tmp_path / "study")
    merged = ann.merge(k, on="pair_id")
    agree = merged["choice"] == merged["correct_response"]
    assert agree.sum() == 11 and not agree[(merged.annotator == "a2") & (merged.pair_id == pairs[0].id)].any()
    assert set(ann.annotator) == {"a1", "a2", "b1"} and sorted(set(map(str, ann.panel))) == ["1", "2"]


@needs_tau
def test_study_pairs_panels_from_the_profile(capsys):
    from shopbench.annotate.notebook import study_pairs
    from shopbench.profiles import validate_profile

    class Ctx:  # the two things study_pairs reads of a RunContext
        seed = 0
        params = validate_profile({"notebooks": {"60_annotate_pairs": {"panels": {"p1": ["a1", "a2"], "p2": ["b1"]}}}},
                                  "t.yaml")  # fmt: skip

    mine = study_pairs(Ctx(), "tau_bench", str(TAU), 10, "a2", strict=True)
    theirs = study_pairs(Ctx(), "tau_bench", str(TAU), 10, "b1", strict=True)
    assert len(mine) == len(theirs) == 5 and not {p.id for p in mine} & {p.id for p in theirs}
    with pytest.raises(KeyError, match="in no panel"):
        study_pairs(Ctx(), "tau_bench", str(TAU), 10, "demo", strict=True)
    assert len(study_pairs(Ctx(), "tau_bench", str(TAU), 10, "demo")) == 10
    assert "in no panel" in capsys.readouterr().out
    with pytest.raises(ValueError, match="source must be"):
        study_pairs(Ctx(), "csv", None, 10)


def test_shared_context_shown_once_above_the_sides(tmp_path, paceshop_records):
    """Issue 16 §4: the shopper block and query of a PACEShop pair appear once, above both sides."""
    from shopbench.annotate.widget import annotate

    pair = pairs_from_paceshop(paceshop_records, n=1, seed=2)[0]
    w = annotate([pair], "ann", tmp_path, seed=1)
    content = w.session.content()
    assert content["shared"].count("Shopper query:") == 1 and "Shopper:" in content["shared"]
    assert "Shopper query:" not in content["left"] and "Shopper query:" not in content["right"]
    conv = annotate(synthetic_pairs(1, seed=0), "ann2", tmp_path, seed=1)
    c2 = conv.session.content()
    assert c2["shared"] == ""  # conversations carry their own context


def test_developer_notes_go_to_the_server_log_under_voila(monkeypatch, capsys):
    from shopbench.annotate import notebook as nb

    monkeypatch.setenv("VOILA_REQUEST_URL", "http://127.0.0.1:1/")
    err = []
    monkeypatch.setattr(
        nb.sys, "__stderr__", type("E", (), {"write": lambda s, t: err.append(t), "flush": lambda s: None})()
    )
    nb.note("no PACEShop build in /some/local/path")
    assert capsys.readouterr().out == "" and "/some/local/path" in "".join(err)
    monkeypatch.delenv("VOILA_REQUEST_URL")
    nb.note("shown in a notebook")
    assert "note: shown in a notebook" in capsys.readouterr().out


def test_offline_voila_template_has_no_remote_assets(tmp_path):
    from shopbench.annotate.serve import OFFLINE_TEMPLATE, offline_template, voila_argv

    root = offline_template(tmp_path)
    text = (root / "voila" / "templates" / OFFLINE_TEMPLATE / "index.html.j2").read_text()
    assert "cdn.jsdelivr" not in text and 'href="https://' not in text and "{{ super() }}" in text
    assert f"--VoilaConfiguration.template={OFFLINE_TEMPLATE}" in voila_argv("nb.ipynb", 1234)


def test_annotate_uses_the_profile_built_last(tmp_path, monkeypatch):
    import os

    from shopbench.annotate.serve import last_built_profile

    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path))
    assert last_built_profile() is None
    for i, name in enumerate(["paper", "smoke"]):
        run = tmp_path / name / "paper" / "run.json"
        run.parent.mkdir(parents=True)
        run.write_text("{}")
        os.utime(run, (1_000_000 + i, 1_000_000 + i))
    assert last_built_profile() == "smoke"


def test_a_pair_set_is_served_exactly(tmp_path, paceshop_records, monkeypatch, capsys):
    """Issue 16 §1/§4: the explorer's export is what ``make annotate ANNOTATE_ARGS="--pairs FILE"``
    serves — the same pairs in the same order, whatever source, n_pairs or panels say."""
    from shopbench.annotate import serve
    from shopbench.annotate.notebook import study_pairs
    from shopbench.explorer.pace import export_pairs
    from shopbench.profiles import validate_profile

    by_id = {r.record_id: r for r in paceshop_records}
    bad = [r.record_id for r in paceshop_records if r.kind == "bad" and r.base_record_id in by_id][:3]
    path, n = export_pairs(by_id, bad, tmp_path / "pairsets" / "selection.jsonl", seed=1)
    exported = [json.loads(line)["id"] for line in path.read_text().splitlines()]
    assert n == len(exported) == 3

    class Ctx:  # the two things study_pairs reads of a RunContext; panels that would split the pairs
        seed = 0
        params = validate_profile({"notebooks": {"60_annotate_pairs": {"panels": {"p1": ["a1"], "p2": ["b1"]}}}},
                                  "t.yaml")  # fmt: skip

    got = study_pairs(Ctx(), "tau_bench", "/no/such/file.json", 1, "a1", strict=True, pairs_file=str(path))
    assert [p.id for p in got] == exported
    assert got == read_pairs(path)
    # the launcher's option reaches the notebook through the environment (as every other option)
    for var in list(serve.ENV.values()) + ["VOILA_REQUEST_URL", "VOILA_APP_PORT", "QUERY_STRING"]:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(serve.ENV["pairs_file"], str(path))
    assert serve.settings(pairs_file=None)["pairs_file"] == str(path)
    # a missing, empty or malformed file: one message naming the file and the fix, exit 2, no traceback
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "bad.jsonl").write_text(path.read_text().splitlines()[0] + '\n{"id": "x"}\n')
    for name, says in (("missing.jsonl", "no such pairs file"), ("empty.jsonl", "empty"),
                       ("bad.jsonl", "line 2 (record 'x'): field 'criterion'")):  # fmt: skip
        capsys.readouterr()
        with pytest.raises(SystemExit) as e:
            serve.main(["--pairs", str(tmp_path / name)])
        err = capsys.readouterr().err
        assert e.value.code == 2 and str(tmp_path / name) in err and says in err and "Fix:" in err, err
        assert "Traceback" not in err
        with pytest.raises(PairImportError, match=name):
            study_pairs(Ctx(), "paceshop", None, 3, pairs_file=str(tmp_path / name))
    with pytest.raises(SystemExit) as e:
        serve.main(["--pairs", str(path), "--n-pairs", "2"])
    assert e.value.code == 2 and "drop --source and --n-pairs" in capsys.readouterr().err
