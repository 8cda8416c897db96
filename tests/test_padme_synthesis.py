"""PADMÉ synthesis: heuristics, criteria, cells, steering, filter judges, Algorithm 1, dataset and tables.

The trajectory source here is a tiny fake (its text depends on the level; a seeded share of
rollouts is "muddled", i.e. level-blind, so filters sometimes reject and retries happen). Judges are
scripted so the tests control every decision.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import binomtest, wilcoxon

from shopbench.judges import Judge, Judgment, ParseFailure, get_judge
from shopbench.judges.padme.filters import (
    HeuristicFilterJudge,
    LLMFilterJudge,
    render_trajectory,
    shared_context,
    vote_fields,
)
from shopbench.padme.cascade import PairStore, StoreError, run_cascade, slot_of_better
from shopbench.padme.cells import Cell, contrast_counts, make_cells
from shopbench.padme.criteria import DEFAULT_CRITERIA, CriteriaError, load_criteria
from shopbench.padme.dataset import (
    export_human_study_key,
    pairs_table,
    read_pairs_dataset,
    read_pairs_table,
    to_annotation_pairs,
    write_pairs_dataset,
)
from shopbench.padme.heuristics import criterion_score
from shopbench.padme.steering import ScriptedSteering, SteeringError, WriteSteer, validate_steering
from shopbench.padme.tables import (
    composition_table,
    cost_tables,
    funnel_table,
    paired_reward_test,
    position_table,
    retention_table,
    reward_table,
)
from shopbench.padme.types import RANK, Context, Criterion, Rollout, Task

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CTX = Context(agent_model="scripted:fake", user_model="scripted", seed=0)
FRIENDLY, CLEAR, RESOLVE = DEFAULT_CRITERIA

TEXT = {
    "good": (
        "I'm so sorry about the trouble with your order, I completely understand how frustrating this is. "
        "Your return has been processed successfully.\n1. The refund goes to your card.\n2. Next, you will "
        "receive an email with the label. Thank you, and I'm happy to help with anything else!"
    ),
    "ok": "Your return has been processed. The refund goes to the original payment method.",
    "bad": "As I said, you must provide the order id. Maybe it is ERR_RET-7 or something... whatever.",
}
MUDDLED = "Okay. Return noted for the order. Refund goes to the card."


# ---- the fake source ---------------------------------------------------------------------------
class FakeSource:
    """Level-dependent rollouts; a seeded ``muddle`` share ignores the level (filters reject those)."""

    name = "fake"
    domain = "shop"
    has_reward = True

    def __init__(self, muddle: float = 0.35, fail_tasks: tuple[str, ...] = ()):
        self.muddle, self.fail_tasks = muddle, fail_tasks
        self.calls: list[tuple] = []

    def tasks(self, n=None, seed=0):
        out = [Task(f"t{i}", "shop" if i % 2 else "retail", "fake", f"Return an item from order {i}",
                    ("get_order", "return_item")) for i in range(12)]  # fmt: skip
        return out[:n] if n else out

    def tool_names(self):
        return ("get_order", "return_item")

    def rollout(self, task, criterion, level, steering, context, attempt, gateway=None):
        self.calls.append((task.task_id, criterion.name, level, steering, attempt))
        if task.task_id in self.fail_tasks:
            raise RuntimeError("environment down")
        rng = random.Random(f"{task.task_id}|{criterion.name}|{level}|{attempt}|{context.seed}")
        muddled = rng.random() < self.muddle
        text = MUDDLED if muddled else TEXT[level]
        msgs = [
            {"role": "system", "content": f"You are a shop agent. Policy: be correct.\n\n<behaviour>\n{steering}\n</behaviour>"},
            {"role": "user", "content": "Hi, I want to return the lamp from my order."},
        ]  # fmt: skip
        if level != "bad" and not muddled:
            msgs += [
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "return_item", "arguments": '{"item": 1}'}}]},
                {"role": "tool", "tool_call_id": "c1", "name": "return_item", "content": '{"status": "returned"}'},
            ]  # fmt: skip
        msgs.append({"role": "assistant", "content": text})
        return Rollout(
            rollout_id=f"fake:{task.task_id}:{criterion.name}:{level}:a{attempt}:s{context.seed}", task_id=task.task_id,
            domain=task.domain, source="fake", criterion=criterion.name, level=level, steering=steering,
            agent_model=context.agent_model, user_model=context.user_model, seed=context.seed, attempt=attempt,
            messages=msgs, reward=0.0 if (level == "bad" or muddled) else 1.0, meta={"muddled": muddled},
        )  # fmt: skip


class CountingSteering(ScriptedSteering):
    def __init__(self):
        self.asked: list[str] = []

    def steer_many(self, cells):
        self.asked += [c[0] for c in cells]
        return super().steer_many(cells)


class ScriptJudge:
    """Decides with ``decide(pair_id, x1, x2) -> 1 | 2 | None`` and records every item it is asked."""

    def __init__(self, name, decide):
        self.name, self.decide = name, decide
        self.asked: list[tuple] = []
        self.batches = 0

    def judge(self, items):
        self.batches += 1
        out = []
        for pid, x1, x2, _ in items:
            self.asked.append((pid, x1.rollout_id, x2.rollout_id))
            c = self.decide(pid, x1, x2)
            raw = json.dumps({"c": c})
            out.append(
                Judgment(self.name, pid, c, raw)
                if c
                else ParseFailure(self.name, pid, "unparseable", "contract_violation", raw)
            )
        return out


def truthful(pid, x1, x2):
    return 1 if RANK[x1.level] > RANK[x2.level] else 2


def content(pid, x1, x2):
    """Prefers the non-muddled, higher-level trajectory; a muddled pair gets slot 1 (content-blind)."""
    if x1.meta.get("muddled") or x2.meta.get("muddled"):
        return 1
    return truthful(pid, x1, x2)


def cells_of(n=9, criteria=(FRIENDLY,), seed=0):
    return make_cells(FakeSource().tasks(n), list(criteria), seed=seed)


def run(cells, judges, source=None, **kw):
    kw.setdefault("progress", False)
    return run_cascade(
        cells, source or FakeSource(), kw.pop("steering", ScriptedSteering()), judges, CTX, **kw
    )


# ---- heuristics --------------------------------------------------------------------------------
def _roll(lvl, criterion, **kw):
    task = FakeSource().tasks(1)[0]
    r = FakeSource(muddle=0.0).rollout(task, criterion, lvl, "steer", CTX, 0)
    for k, v in kw.items():
        setattr(r, k, v)
    return r


@pytest.mark.parametrize("crit", DEFAULT_CRITERIA, ids=lambda c: c.name)
def test_heuristic_scores_order_levels_and_ignore_labels(crit):
    s = {lvl: criterion_score(_roll(lvl, crit), crit) for lvl in ("bad", "ok", "good")}
    assert all(0.0 <= v <= 1.0 for v in s.values())
    assert s["bad"] < s["ok"] <= s["good"] and s["bad"] < s["good"], s
    if crit.name != "task_resolution":  # the fake's ok and good both complete the return
        assert s["ok"] < s["good"], s
    # level, steering and reward are labels, not evidence
    relabelled = _roll("good", crit, level="bad", steering="be awful", reward=0.0)
    assert criterion_score(relabelled, crit) == s["good"]
    assert criterion_score(_roll("good", crit), crit) == s["good"]  # deterministic


def test_heuristic_details():
    empty = Rollout("r", "t", "d", "s", "c", "ok", "", "m", "u", 0, 0, [{"role": "user", "content": "hi"}])
    assert criterion_score(empty, FRIENDLY) == 0.0 and criterion_score(empty, CLEAR) == 0.0
    # task resolution: one of two asked actions done and confirmed = 0.7 * 1/2 + 0.3
    msgs = [{"role": "user", "content": "Please cancel my order and also change the address."},
            {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "cancel_pending_order"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "cancelled"},
            {"role": "assistant", "content": "Your order has been cancelled."}]  # fmt: skip
    r = Rollout("r", "t", "d", "s", "c", "ok", "", "m", "u", 0, 0, msgs)
    assert criterion_score(r, RESOLVE) == pytest.approx(0.65)
    # a failed write counts against; an explained refusal without writes gets partial credit
    msgs[2] = {"role": "tool", "tool_call_id": "a", "content": "Error: order not found"}
    assert criterion_score(r, RESOLVE) < 0.65
    refuse = [
        msgs[0],
        {"role": "assistant", "content": "I'm unable to cancel it because the policy forbids it."},
    ]
    assert criterion_score(
        Rollout("r", "t", "d", "s", "c", "ok", "", "m", "u", 0, 0, refuse), RESOLVE
    ) == pytest.approx(0.7 * 0.5 + 0.3 * 0.7)
    # unknown criterion: share of the description's content words in the assistant text
    c = Criterion("politeness", "Saying thank you and please")
    polite = Rollout("r", "t", "d", "s", "c", "ok", "", "m", "u", 0, 0,
                     [{"role": "assistant", "content": "Thank you! Please wait."}])  # fmt: skip
    assert criterion_score(polite, c) == pytest.approx(
        2 / 4
    )  # {polit, sayin, thank, pleas}: thank, pleas found


# ---- criteria ----------------------------------------------------------------------------------
def test_default_criteria_are_the_released_text(tmp_path):
    path = DATA / "padme_human_study" / "criteria.json"
    if not path.exists():
        pytest.skip(f"{path} absent")
    released = json.loads(path.read_text(encoding="utf-8"))
    assert [(c.name, c.description) for c in DEFAULT_CRITERIA] == [
        (r["name"], r["description"]) for r in released
    ]
    assert load_criteria(path) == list(DEFAULT_CRITERIA)


def test_load_criteria_forms_and_errors(tmp_path):
    assert load_criteria() == list(DEFAULT_CRITERIA)
    assert load_criteria(["friendliness", {"name": "speed", "description": "Fast."}])[1] == Criterion(
        "speed", "Fast."
    )
    y = tmp_path / "c.yaml"
    y.write_text("criteria:\n  - name: speed\n    description: Fast replies.\n")
    assert load_criteria(y) == [Criterion("speed", "Fast replies.")]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"name": "a", "description": "x"}, {"name": "b"}]))
    with pytest.raises(CriteriaError, match=r"bad\.json: entry \[1\].*'description'"):
        load_criteria(bad)
    with pytest.raises(CriteriaError, match="repeats entry"):
        load_criteria([{"name": "a", "description": "x"}, {"name": "a", "description": "y"}])
    with pytest.raises(CriteriaError, match="no default criterion"):
        load_criteria(["nope"])


# ---- cells -------------------------------------------------------------------------------------
def test_contrast_stratification_counts():
    src = FakeSource()
    one = [Task(f"t{i}", "retail", "fake", "d") for i in range(9)]
    assert contrast_counts(make_cells(one, [FRIENDLY], seed=0)) == {"bad-ok": 3, "ok-good": 3, "bad-good": 3}
    ten = [Task(f"t{i}", "retail", "fake", "d") for i in range(10)]
    counts = contrast_counts(make_cells(ten, [FRIENDLY], seed=0))
    assert sorted(counts.values()) == [3, 3, 4]  # the extra cell goes to a seeded contrast
    # 12 tasks in two domains (6 + 6) x 3 criteria: balanced within every criterion and domain
    cells = make_cells(src.tasks(), list(DEFAULT_CRITERIA), seed=5)
    assert len(cells) == 36 and contrast_counts(cells) == {"bad-ok": 12, "ok-good": 12, "bad-good": 12}
    for per in contrast_counts(cells, by="criterion").values():
        assert per == {"bad-ok": 4, "ok-good": 4, "bad-good": 4}
    # 7 tasks x 2 criteria: every count within one of the others, per criterion and overall
    seven = [Task(f"t{i}", "retail", "fake", "d") for i in range(7)]
    cells7 = make_cells(seven, [FRIENDLY, CLEAR], seed=1)
    assert max(contrast_counts(cells7).values()) - min(contrast_counts(cells7).values()) <= 1
    for per in contrast_counts(cells7, by="criterion").values():
        assert sorted(per.values()) == [2, 2, 3]


def test_cells_ids_stable_and_seeded():
    a, b, c = (make_cells(FakeSource().tasks(), [FRIENDLY, CLEAR], seed=s) for s in (0, 0, 1))
    assert a == b
    assert [x.cell_id for x in a] == [x.cell_id for x in c]  # ids do not depend on the seed
    assert [x.contrast for x in a] != [x.contrast for x in c]
    assert a[0].cell_id == "retail.friendliness.t0" and isinstance(a[0], tuple) and isinstance(a[0], Cell)
    assert all(lo != hi and RANK[lo] < RANK[hi] for _, _, _, (lo, hi) in a)
    with pytest.raises(ValueError, match="same domain and task id"):
        make_cells([Task("t", "d", "s", ""), Task("t", "d", "s", "")], [FRIENDLY])


# ---- steering ----------------------------------------------------------------------------------
def test_scripted_steering_and_validation():
    s = ScriptedSteering()
    task = FakeSource().tasks(1)[0]
    for crit in (*DEFAULT_CRITERIA, Criterion("speed", "Fast replies.")):
        out = s(task, crit)
        assert set(out) == {"bad", "ok", "good"} and validate_steering(out) == out
        for text in out.values():
            assert 2 <= text.count(". ") + 1 <= 5 and "you" in text.lower() and "t0" not in text
    assert s.source == "simulated"
    with pytest.raises(SteeringError, match="same instruction"):
        validate_steering({"bad": "Be X.", "ok": "be  x.", "good": "Be Y."}, "c1")
    with pytest.raises(SteeringError, match="'ok' is missing or empty"):
        validate_steering({"bad": "a", "ok": " ", "good": "b"}, "c1")


def _same_levels(messages, params):
    return json.dumps({"reasoning": "r", "bad": "Be terse.", "ok": "be  terse.", "good": "Be warm."})


def _not_json(messages, params):
    return "I think A is better"


def _gateway(tmp_path):
    from shopbench.llm import Gateway, parse_backbones, register_local

    register_local("padme-test-same-levels", _same_levels, "test: WriteSteer answer with two equal levels")
    register_local("padme-test-not-json", _not_json, "test: a judge that ignores the contract")
    names = ["local/schema-sampler", "local/padme-test-same-levels", "local/padme-test-not-json"]
    return Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False, backoff_s=0.01,
                   backbones=parse_backbones(names))  # fmt: skip


def test_writesteer_through_gateway(tmp_path):
    gw = _gateway(tmp_path)
    ws = WriteSteer(gw, "local/schema-sampler", max_chars=200)
    cells = cells_of(4, criteria=(FRIENDLY, RESOLVE))
    msg = ws.messages(cells[0].task, cells[0].criterion)[0]["content"]
    assert FRIENDLY.description in msg and "get_order, return_item" in msg and "{criterion_name}" not in msg
    assert msg.startswith("You are designing an experiment")
    out = ws.steer_many(cells)
    assert set(out) == {c.cell_id for c in cells}
    for v in out.values():
        assert isinstance(v, SteeringError) or (set(v) == {"bad", "ok", "good"} and len(set(v.values())) == 3)
    assert len(gw.log("padme-writesteer")) == len(cells)  # one call per cell
    # through the cascade: steering errors become skipped cells with the reason
    res = run(cells, [ScriptJudge("J1", truthful)], steering=ws, gateway=gw)
    for cid, v in out.items():
        if isinstance(v, SteeringError):
            assert cid in res.skipped_cells and "steering failed" in res.skipped_cells[cid]
        else:
            assert res.steering[cid] == v
            assert all(p.steering == v for p in res.pairs if p.cell_id == cid)
    # an answer whose levels coincide is a SteeringError; the cascade skips those cells with the reason
    same = WriteSteer(gw, "local/padme-test-same-levels", run_id="same")
    assert all(
        isinstance(v, SteeringError) and "same instruction" in v.reason
        for v in same.steer_many(cells).values()
    )
    res2 = run(cells, [ScriptJudge("J1", truthful)], steering=same, gateway=gw)
    assert not res2.pairs and set(res2.skipped_cells) == {c.cell_id for c in cells}
    assert all("'bad' and 'ok' have the same instruction" in r for r in res2.skipped_cells.values())


# ---- filter judges -----------------------------------------------------------------------------
def test_heuristic_filter_judge_prefers_content_ties_slot1_noise_seeded():
    task = FakeSource().tasks(1)[0]
    good = FakeSource(0).rollout(task, FRIENDLY, "good", "s", CTX, 0)
    bad = FakeSource(0).rollout(task, FRIENDLY, "bad", "s", CTX, 0)
    j = HeuristicFilterJudge("h")
    assert isinstance(j, Judge)
    out = j.judge([("p", good, bad, FRIENDLY), ("p", bad, good, FRIENDLY), ("p", good, good, FRIENDLY)])
    assert [o.value for o in out] == [1, 2, 1] and all(isinstance(o, Judgment) for o in out)
    noisy = HeuristicFilterJudge("h", noise=0.5, seed=3)
    items = [(f"p{i}", good, bad, FRIENDLY) for i in range(40)]
    a, b = noisy.judge(items), noisy.judge(items)
    assert a == b and 5 < sum(o.value == 2 for o in a) < 35
    assert HeuristicFilterJudge("h", noise=1.0).judge(items[:1])[0].value == 2


def test_llm_filter_judge_through_gateway(tmp_path):
    gw = _gateway(tmp_path)
    j = LLMFilterJudge(gw, "local/schema-sampler", name="J-llm")
    task = FakeSource().tasks(1)[0]
    x = [
        FakeSource(0).rollout(task, CLEAR, lvl, f"SECRET-{lvl} instruction", CTX, 0)
        for lvl in ("bad", "good")
    ]
    assert isinstance(j, Judge) and j.spec is get_judge("padme_filter")
    text = j.spec.render(("p", x[0], x[1], CLEAR))[0]["content"]
    assert "SECRET" not in text and "<behaviour>" not in text and "Policy: be correct" in text
    assert CLEAR.description in text and text.index("ERR_RET-7") < text.index("I'm so sorry")
    items = [(f"p{i}", x[i % 2], x[1 - i % 2], CLEAR) for i in range(6)]
    out = [vote_fields(o) for o in j.judge(items)]
    assert len(out) == 6 and all(c in (1, 2) and e is None for c, e, _ in out)
    assert len(gw.log(j.run_id)) == 6  # one gateway.run for the stage
    # in the cascade: choices in {1, 2}, parse failures (none with the sampler) would count as vetoes
    res = run(cells_of(6), [j, HeuristicFilterJudge("J2")], gateway=gw, retries=1)
    votes = [v for p in res.pairs for v in p.votes if v.judge == "J-llm"]
    assert votes and all(v.choice in (1, 2) for v in votes)
    assert sum(v.parse_error is not None for v in votes) == 0
    assert "Tool result (return_item)" in render_trajectory(x[1]) and shared_context(x[0]).startswith(
        "You are a shop"
    )
    # a judge that ignores the contract: every answer is a parse error, i.e. a veto
    broken = LLMFilterJudge(gw, "local/padme-test-not-json")
    out = [vote_fields(o) for o in broken.judge(items[:2])]
    assert [c for c, _, _ in out] == [None, None] and all("invalid JSON" in e for _, e, _ in out)
    res = run(cells_of(3), [broken], gateway=gw, retries=0)
    assert not res.kept and all(p.votes[0].parse_error and not p.votes[0].agrees for p in res.pairs)


# ---- Algorithm 1 -------------------------------------------------------------------------------
def test_veto_order_retries_nesting_and_steering_reuse():
    cells = cells_of(9)
    src, steer = FakeSource(), CountingSteering()
    vetoed_by_j1 = {c.cell_id + "#a0" for c in cells[:4]}
    j1 = ScriptJudge(
        "J1",
        lambda pid, x1, x2: (3 - truthful(pid, x1, x2)) if pid in vetoed_by_j1 else truthful(pid, x1, x2),
    )
    j2 = ScriptJudge(
        "J2",
        lambda pid, x1, x2: (3 - truthful(pid, x1, x2)) if pid.endswith("t5#a0") else truthful(pid, x1, x2),
    )
    res = run(cells, [j1, j2], source=src, steering=steer, retries=2)
    asked_j2 = {pid for pid, _, _ in j2.asked}
    assert not (asked_j2 & vetoed_by_j1)  # J2 is never asked about a pair J1 vetoed
    by_cell = {c.cell_id: [p for p in res.pairs if p.cell_id == c.cell_id] for c in cells}
    for c in cells:
        atts = [p.attempt for p in by_cell[c.cell_id]]
        rejected0 = c.cell_id + "#a0" in vetoed_by_j1 or c.cell_id.endswith("t5")
        assert atts == ([0, 1] if rejected0 else [0])  # kept at attempt 0 -> no attempt 1
        assert sum(p.kept for p in by_cell[c.cell_id]) == 1
    p5 = by_cell["shop.friendliness.t5"][0]
    assert p5.depth == 1 and [v.judge for v in p5.votes] == ["J1", "J2"] and not p5.votes[1].agrees
    assert res.pairs[0].depth == 0 and len(res.pairs[0].votes) == 1
    # nested D_k
    d0, d1, d2 = (set(p.pair_id for p in res.D(k)) for k in range(3))
    assert d2 <= d1 <= d0 and len(d0) == 14 and len(d1) == 10 and len(d2) == 9 == len(res.kept)
    # one stage call per attempt round: J1 judged rounds 0 and 1, J2 too
    assert j1.batches == 2 and j2.batches == 2
    # steering: written once per cell, reused on every attempt
    assert sorted(steer.asked) == sorted(c.cell_id for c in cells)
    for c in cells:
        texts = {(lvl, s) for tid, _, lvl, s, _ in src.calls if tid == c.task.task_id}
        assert len(texts) == 2 and all(s == res.steering[c.cell_id][lvl] for lvl, s in texts)


def test_at_most_r_plus_one_attempts_and_failures():
    never = ScriptJudge("J1", lambda pid, x1, x2: None)  # every answer unparseable: a veto
    src = FakeSource(fail_tasks=("t2",))
    res = run(cells_of(4), [never], source=src, retries=2)
    assert not res.kept and {p.attempt for p in res.pairs} == {0, 1, 2}
    assert all(sum(p.cell_id == c for p in res.pairs) == 3 for c in {p.cell_id for p in res.pairs})
    assert all(p.votes[0].parse_error == "unparseable" and not p.votes[0].agrees for p in res.pairs)
    assert (
        "retail.friendliness.t2" in res.skipped_cells
        and "environment down" in res.skipped_cells["retail.friendliness.t2"]
    )
    zero = run(cells_of(4), [never], retries=0)
    assert {p.attempt for p in zero.pairs} == {0}


def test_slot_order_randomized_recorded_and_seeded():
    cells = cells_of(12, criteria=(FRIENDLY, CLEAR))
    j = lambda: [HeuristicFilterJudge("J1"), HeuristicFilterJudge("J2")]  # noqa: E731
    a, b, c = run(cells, j(), seed=0), run(cells, j(), seed=0), run(cells, j(), seed=7)
    slots = [v.better_slot for p in a.pairs for v in p.votes]
    assert set(slots) == {1, 2}
    assert all(v.better_slot == slot_of_better(0, v.judge, p.pair_id) for p in a.pairs for v in p.votes)
    assert [p.to_dict() for p in a.pairs] == [p.to_dict() for p in b.pairs]
    assert [v.better_slot for p in c.pairs for v in p.votes] != slots
    assert all(v.agrees == (v.choice == v.better_slot) for p in a.pairs for v in p.votes)


def test_order_swap_flip_rate():
    cells = cells_of(9)
    biased = ScriptJudge("slot1", lambda pid, x1, x2: 1)
    res = run(cells, [biased], order_swap=True, retries=0)
    assert res.flip_rate == {"slot1": 1.0}
    assert all(v.swapped_choice == 1 for p in res.pairs for v in p.votes)
    fair = run(cells, [ScriptJudge("truth", truthful)], order_swap=True, retries=0)
    assert fair.flip_rate == {"truth": 0.0}
    assert run(cells, [biased], retries=0).flip_rate == {}


def test_resume_after_kill_gives_the_same_result(tmp_path):
    cells = cells_of(12, criteria=(FRIENDLY, RESOLVE))
    judges = lambda: [ScriptJudge("J1", content), HeuristicFilterJudge("J2", noise=0.2)]  # noqa: E731
    full_store = tmp_path / "full.jsonl"
    full = run(cells, judges(), store=PairStore(full_store), retries=2)
    lines = full_store.read_text().splitlines(keepends=True)
    assert len(lines) == len(full.pairs) and 24 < len(full.pairs) <= 72
    # killed after the first round plus a few pairs of the second, mid-write of the next line
    n0 = sum(p.attempt == 0 for p in full.pairs)
    part = tmp_path / "part.jsonl"
    part.write_text("".join(lines[: n0 + 2]) + lines[n0 + 2][:40])
    src = FakeSource()
    again = run(cells, judges(), source=src, store=part, retries=2)
    assert [p.to_dict() for p in again.pairs] == [p.to_dict() for p in full.pairs]
    assert again.resumed_pairs == n0 + 2
    assert len(src.calls) == 2 * (len(full.pairs) - n0 - 2)  # only unfinished pairs are rolled again
    stored = PairStore(part).read()
    keys = [(p.cell_id, p.attempt) for p in stored]
    assert len(keys) == len(set(keys)) == len(full.pairs)
    # a third run does nothing new
    src3 = FakeSource()
    third = run(cells, judges(), source=src3, store=part, retries=2)
    assert (
        not src3.calls
        and len(PairStore(part).read()) == len(full.pairs)
        and len(third.pairs) == len(full.pairs)
    )
    # a store made with other judges is refused
    with pytest.raises(StoreError, match="judged by"):
        run(cells, [ScriptJudge("X", truthful)], store=part)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json}\n" + lines[0])
    with pytest.raises(StoreError, match=r"bad\.jsonl:1"):
        PairStore(bad).read()


# ---- dataset and exports -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def result():
    cells = make_cells(FakeSource().tasks(), list(DEFAULT_CRITERIA), seed=2)
    return run(cells, [HeuristicFilterJudge("J1"), HeuristicFilterJudge("J2", noise=0.15, seed=1)], retries=2)


def test_dataset_round_trip(tmp_path, result):
    paths = write_pairs_dataset(result.pairs, tmp_path / "ds")
    back = read_pairs_dataset(tmp_path / "ds")
    assert [p.to_dict() for p in back] == [p.to_dict() for p in result.pairs]
    t = read_pairs_table(paths["parquet"])
    assert len(t) == len(result.pairs) and t["kept"].sum() == len(result.kept)
    row = t.iloc[0]
    p = result.pairs[0]
    assert row["steering_bad"] == p.steering["bad"] and row["steering_source"] == "simulated"
    assert row["reward_better"] == p.better.reward and json.loads(row["votes"])[0]["judge"] == "J1"
    assert set(t["filter_outcome"]) <= {"kept", "judge1_reject", "judge2_reject"}
    assert not list(Path(tmp_path / "ds").glob(".*tmp"))


def test_annotation_export_validates(tmp_path, result):
    from shopbench.annotate.pairs import Pair as APair
    from shopbench.annotate.pairs import read_pairs, write_pairs

    ann = to_annotation_pairs(result.pairs, seed=4)
    assert len(ann) == len(result.pairs)
    for a, p in zip(ann, result.pairs, strict=True):
        APair.model_validate(a.model_dump())
        winner = a.side(a.hidden.label).content["messages"]
        assert winner[-1]["content"] == p.better.messages[-1]["content"]
        assert all(m["role"] != "system" for m in winner)
        assert a.hidden.steering_levels[a.hidden.label] == p.better.level
        dumped = json.dumps(a.model_dump(exclude={"hidden"}))
        assert p.steering["good"] not in dumped and "<behaviour>" not in dumped
    assert {a.hidden.label for a in ann} == {"side_a", "side_b"}
    write_pairs(tmp_path / "pairs.jsonl", ann)
    assert [x.id for x in read_pairs(tmp_path / "pairs.jsonl")] == [a.id for a in ann]


def test_human_study_key_with_simulated_panels(tmp_path, result):
    from shopbench.annotate.humanstudy import ANNOTATION_COLUMNS, export_human_study, load_human_study

    pairs = [p for p in result.pairs if p.attempt == 0]
    out = export_human_study_key(pairs, tmp_path / "study", seed=4)
    ann_pairs = to_annotation_pairs(pairs, seed=4)
    key_rows = json.loads((out / "answer_key.json").read_text())
    assert [r["correct_response"] for r in key_rows] == [
        1 if a.hidden.label == "side_a" else 2 for a in ann_pairs
    ]
    assert [r["group_id"] for r in key_rows] == [p.cell_id for p in pairs]
    crit = json.loads((out / "criteria.json").read_text())
    assert {c["name"] for c in crit} == {c.name for c in DEFAULT_CRITERIA}
    # simulated panels: two panels of two annotators on disjoint halves
    rng = random.Random(0)
    rows = []
    for i, p in enumerate(pairs):
        panel = 1 + i % 2
        for a in (f"a{panel}1", f"a{panel}2"):
            rows.append({"pair_id": p.pair_id, "annotator": a, "panel": panel, "criterion": p.criterion,
                         "choice": rng.choice([1, 2]), "confidence": rng.choice([0, 50, 100])})  # fmt: skip
    ann_in = pd.DataFrame(rows, columns=ANNOTATION_COLUMNS)
    key_df = pd.DataFrame(key_rows).rename(columns={"id": "pair_id", "criterion_name": "criterion"})
    export_human_study(ann_in, key_df, out)
    ann, key = load_human_study(out)
    assert len(ann) == 2 * len(pairs) and len(key) == len(pairs)
    assert set(key["filter_outcome"]) <= {"kept", "judge1_reject", "judge2_reject"}
    assert {"domain", "agent_model", "level_contrast"} <= set(key.columns)
    kept_ids = {p.pair_id for p in pairs if p.kept}
    assert set(key.loc[key["filter_outcome"] == "kept", "pair_id"]) == kept_ids


# ---- tables ------------------------------------------------------------------------------------
def test_funnel_and_retention_hand_counts():
    cells = cells_of(9)
    vetoed = {c.cell_id + "#a0" for c in cells[:3]} | {cells[0].cell_id + "#a1"}
    j1 = ScriptJudge(
        "J1", lambda pid, x1, x2: 3 - truthful(pid, x1, x2) if pid in vetoed else truthful(pid, x1, x2)
    )
    j2 = ScriptJudge(
        "J2",
        lambda pid, x1, x2: (
            3 - truthful(pid, x1, x2) if pid == cells[3].cell_id + "#a0" else truthful(pid, x1, x2)
        ),
    )
    res = run(cells, [j1, j2], retries=2)
    f = funnel_table(res.pairs)
    pd.testing.assert_frame_equal(f, funnel_table(pairs_table(res.pairs)))
    # attempt 0: 9 cells, J1 passes 6, J2 passes 5; attempt 1: 4 cells (3 J1-vetoed + 1 J2-vetoed), 3 kept;
    # attempt 2: 1 cell, kept
    assert f.loc[0, ["cells_attempted", "pairs_generated", "passed_J1", "passed_J2", "kept"]].tolist() == [
        9,
        9,
        6,
        5,
        5,
    ]
    assert f.loc[1, ["cells_attempted", "passed_J1", "kept"]].tolist() == [4, 3, 3]
    assert f.loc[2, ["cells_attempted", "kept"]].tolist() == [1, 1]
    assert f.loc[1, "retention"] == pytest.approx(3 / 4) and f.loc[1, "cumulative_yield"] == pytest.approx(
        8 / 9
    )
    assert f.loc["total", "pairs_generated"] == 14 and f.loc["total", "retention"] == pytest.approx(9 / 14)
    r = retention_table(res.pairs)
    allrow = r.loc[("all", "all")]
    assert (allrow["draws"], allrow["kept"], allrow["rejected_J1"], allrow["rejected_J2"]) == (14, 9, 4, 1)
    assert allrow["draws_per_kept"] == pytest.approx(14 / 9) and allrow["cumulative_retention"] == 1.0
    comp = composition_table(res.pairs)
    assert comp.loc["criterion"]["pairs"].tolist() == [9]
    assert comp.loc["contrast"]["pairs"].sum() == 9


def test_position_table_binomial_against_scipy():
    votes = [[{"judge": "J1", "stage": 1, "better_slot": 1 if i < 7 else 2, "choice": 1 if i < 9 else 2,
               "agrees": True, "parse_error": None, "swapped_choice": None}] for i in range(10)]  # fmt: skip
    df = pd.DataFrame({"pair_id": [f"p{i}" for i in range(10)], "cell_id": [f"c{i}" for i in range(10)],
                       "attempt": 0, "depth": 1, "kept": True, "criterion": ["a"] * 5 + ["b"] * 5,
                       "domain": "x", "contrast": "bad-good", "agent_model": "m", "n_votes": 1,
                       "votes": [json.dumps(v) for v in votes]})  # fmt: skip
    t = position_table(df, by=("criterion",))
    row = t.loc[("J1", "all", "all")]
    assert (row["n"], row["better_slot1"], row["chose_slot1"]) == (10, 7, 9)
    assert row["better_slot1_p"] == pytest.approx(352 / 1024)  # 2 * (C(10,7)+C(10,8)+C(10,9)+C(10,10)) / 2^10
    assert row["better_slot1_p"] == pytest.approx(binomtest(7, 10, 0.5).pvalue)
    assert row["chose_slot1_p"] == pytest.approx(22 / 1024)  # 2 * (10 + 1) / 2^10
    assert t.loc[("J1", "criterion", "a"), "better_slot1"] == 5


def test_reward_table_tests():
    # binary: 5 up, 1 down -> exact McNemar p = 2 * P(X <= 1 | n=6) = 2 * 7 / 64
    name, p = paired_reward_test([1, 1, 1, 1, 1, 0, 1], [0, 0, 0, 0, 0, 1, 1])
    assert name == "exact McNemar" and p == pytest.approx(14 / 64)
    b, w = [0.9, 0.8, 0.75, 0.6, 0.5, 0.4], [0.1, 0.3, 0.5, 0.7, 0.2, 0.1]
    name, p = paired_reward_test(b, w)
    assert name == "Wilcoxon signed-rank" and p == pytest.approx(
        wilcoxon([x - y for x, y in zip(b, w, strict=True)]).pvalue
    )
    assert paired_reward_test([1, 0], [1, 0]) == ("exact McNemar", 1.0)
    res = run(cells_of(9, criteria=(RESOLVE,)), [ScriptJudge("J1", truthful)], retries=0)
    t = reward_table(res.pairs)
    allrow = t.loc[("all", "task_resolution", "all")]
    ups = sum(p.better.reward > p.worse.reward for p in res.pairs)
    assert allrow["n"] == 9 and allrow["higher"] == ups
    assert allrow["gap"] == pytest.approx(sum(p.better.reward - p.worse.reward for p in res.pairs) / 9)
    for p in res.pairs:
        p.worse.reward = p.better.reward = None
    t2 = reward_table(res.pairs)
    assert t2.loc[("all", "all", "all"), "gap"] == "–" and t2.loc[("all", "all", "all"), "n"] == 0


def test_cost_tables_from_gateway_logs(tmp_path):
    gw = _gateway(tmp_path)
    ws = WriteSteer(gw, "local/schema-sampler", run_id="steer-1")
    cells = cells_of(3)
    ws.steer_many(cells)
    WriteSteer(gw, "local/schema-sampler", run_id="steer-2").steer_many(cells)  # all cache hits
    log = pd.concat([gw.log("steer-1"), gw.log("steer-2")], ignore_index=True)
    log.loc[:, "cost_usd"] = [0.01, 0.02, 0.03, 0.0, 0.0, 0.0]
    t20, t21 = cost_tables({"steering": log, "filter J1": pd.DataFrame()}, n_kept=4)
    assert t20.loc["steering", "calls"] == 6 and t20.loc["total", "cost_usd"] == pytest.approx(0.06)
    assert t20.loc["steering", "cost_per_kept_pair"] == pytest.approx(0.015)
    assert t20.loc["steering", "cost_share"] == pytest.approx(1.0)
    assert t21.loc[("steering", "all"), "hit_rate"] == pytest.approx(0.5)
    assert t21.loc[("filter J1", "all"), "calls"] == 0
