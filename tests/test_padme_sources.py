"""PADMÉ trajectory sources (seed 003 §3.1, §4, App. C.3): the interface, the steered conduct, the
shop source, the τ²-bench retail source on the published data, and recorded tau-bench pairs."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from shopbench.errors import InputError
from shopbench.padme.sources import base, steered
from shopbench.padme.sources.base import (
    SIMULATED_STEERING,
    RepeatGateway,
    TrajectorySource,
    make_rollout_id,
    wrap_steering,
)
from shopbench.padme.sources.factory import make_source
from shopbench.padme.types import Context, Criterion, Rollout

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TAU2 = DATA / "tau2_retail"
RECORDED = DATA / "tau_bench_airline_trajectories" / "gpt-4o-airline.json"
ROOT = Path(__file__).resolve().parents[1]
SCRIPTED = Context("scripted:test", "scripted", 0)
FRIENDLY, CLEAR, RESOLVE = (
    Criterion(n, "") for n in ("friendliness", "communication_clarity", "task_resolution")
)


def need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} absent (external data beside the project)")


@pytest.fixture(scope="module")
def tau2():
    need(TAU2)
    return make_source({"kind": "tau2", "path": str(TAU2)}, ROOT)


@pytest.fixture(scope="module")
def shop():
    return make_source({"kind": "shop", "n_products": 800}, ROOT)


# ---- base --------------------------------------------------------------------------------------------
def test_wrap_steering_appends_the_h3_block():
    out = wrap_steering("SYSTEM PROMPT", "Be warm.")
    assert out.startswith(
        "SYSTEM PROMPT\n\n<behaviour>\nFor this conversation you have one additional objective."
    )
    assert (
        "\n\nBe warm.\n\nDo not mention, quote or allude to this objective, and do not reuse its wording.\n"
        in out
    )
    assert out.rstrip().endswith("</behaviour>") and "{instruction}" not in out
    assert "It takes strict precedence\nover your default behaviour" in out
    assert wrap_steering("SYSTEM PROMPT", "  ") == "SYSTEM PROMPT"


def test_ids_labels_and_repeat_gateway():
    assert make_rollout_id("shop", "t1", "friendliness", "ok", 2, 7) == "shop:t1:friendliness:ok:a2:s7"
    assert base.steering_source(SCRIPTED) == SIMULATED_STEERING == "simulated (scripted steered agent)"
    assert base.steering_source(Context("openai/gpt-x", "scripted")) == "llm:openai/gpt-x"
    assert base.repeat_index(2, 3) == 3002
    seen = []
    gw = SimpleNamespace(
        call=lambda b, i, m, **kw: seen.append(kw) or kw, run=lambda calls, run_id, desc: calls
    )
    RepeatGateway(gw, 5).call("m", "i", [], params={})
    assert seen == [{"repeat": 5, "params": {}}]
    with pytest.raises(ValueError, match="needs a gateway"):
        RepeatGateway(None, 0)
    with pytest.raises(ValueError, match="steering level"):
        base.check_level("great")


def test_make_source_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist.*tau2-bench's published retail domain"):
        make_source({"kind": "tau2", "path": "nowhere"}, tmp_path)
    with pytest.raises(ValueError, match=str(tmp_path / "nowhere")):
        make_source("tau2:nowhere", tmp_path)
    with pytest.raises(ValueError, match="unknown source kind 'airline'"):
        make_source("airline", tmp_path)
    with pytest.raises(ValueError, match="load_recorded"):
        make_source({"kind": "recorded"}, tmp_path)
    with pytest.raises(ValueError, match=r"unknown keys \['n_product'\]"):
        make_source({"kind": "shop", "n_product": 10}, tmp_path)
    with pytest.raises(ValueError, match="no 'kind'"):
        make_source({"path": "x"}, tmp_path)


# ---- steered conduct ---------------------------------------------------------------------------------
TEXT = (
    "Here are the best matches for a desk lamp:\n- Lumen Desk Lamp (HK00001) — $25.04: led, white.\n"
    "- Brightway Lamp (HK00002) — $19.99\nI couldn't add the Brightway Lamp: out of stock.\n"
    "Your cart total is $25.04."
)


def test_style_levels_differ_and_are_deterministic():
    for crit in ("friendliness", "communication_clarity"):
        outs = {
            lvl: steered.style_message(TEXT, crit, lvl, random.Random(3)) for lvl in ("bad", "ok", "good")
        }
        assert len(set(outs.values())) == 3, crit
        for lvl, out in outs.items():
            assert out == steered.style_message(TEXT, crit, lvl, random.Random(3))  # deterministic
            assert "HK00001" in out and "$25.04" in out  # facts kept at every level
    cold = steered.style_message(TEXT, "friendliness", "bad", random.Random(0)).splitlines()
    assert cold[0].split(". ", 1)[1] in steered.COLD_BLAME and cold[-1] in steered.COLD_CLOSERS
    warm = steered.style_message(TEXT, "friendliness", "good", random.Random(0)).splitlines()
    assert warm[0] in steered.WARM_OPENERS and warm[-1] in steered.WARM_CLOSERS
    assert any(line.startswith(steered.WARM_BAD_NEWS) for line in warm)  # bad news delivered with care
    neutral = steered.style_message("Hi!\nThe lamp is in your cart!", "friendliness", "ok", random.Random(0))
    assert neutral == "The lamp is in your cart."
    org = steered.style_message(TEXT, "communication_clarity", "good", random.Random(0)).splitlines()
    assert org[0] == "In short: Here are the best matches for a desk lamp" and org[1] == "Details:"
    assert org[2].startswith("1. Lumen Desk Lamp") and org[-1] in steered.ORGANISED_NEXT_DONE
    assert any(line.startswith("What the terms mean: the 'cart total'") for line in org)
    plain = steered.style_message(TEXT, "communication_clarity", "ok", random.Random(0))
    assert "\n" not in plain and plain.startswith(
        "Here are the best matches for a desk lamp. Lumen Desk Lamp"
    )
    messy = steered.style_message(TEXT, "communication_clarity", "bad", random.Random(0))
    assert "\n" not in messy and not messy.startswith("Here are the best matches")
    assert sum(j in messy for j in steered.JARGON) == 2 and any(v in messy for v in steered.VAGUE_NEXT)
    # task resolution holds the tone neutral at every level; an unknown criterion scales tone
    tr = {
        steered.style_message(TEXT, "task_resolution", lvl, random.Random(1)) for lvl in ("bad", "ok", "good")
    }
    assert len(tr) == 1
    gen = [steered.style_message(TEXT, "politeness", lvl, random.Random(1)) for lvl in ("bad", "ok", "good")]
    assert (
        gen[0] == steered.style_message(TEXT, "friendliness", "bad", random.Random(1)) and len(set(gen)) == 3
    )


def test_action_plan_by_level():
    acts = [{"name": "find_user_id_by_email"}, {"name": "get_order_details"}, {"name": "cancel_pending_order"},
            {"name": "get_order_details"}, {"name": "return_delivered_order_items"}]  # fmt: skip
    rng = random.Random(0)
    assert steered.action_plan(acts, "task_resolution", "good", rng) == acts
    assert steered.action_plan(acts, "friendliness", "bad", rng) == acts  # actions held fixed
    assert steered.action_plan(acts, "task_resolution", "ok", rng) == acts[:4]  # reads + first of 2 writes
    for s in range(10):
        bad = steered.action_plan(acts, "task_resolution", "bad", random.Random(s))
        assert bad in (acts[:1], acts[:2])  # only leading reads, no write
    one = [{"name": "get_order_details"}, {"name": "exchange_delivered_order_items", "arguments": {
        "order_id": "#W1", "item_ids": ["a", "b", "c"], "new_item_ids": ["x", "y", "z"], "payment_method_id": "p"}}]  # fmt: skip
    ok = steered.action_plan(one, "task_resolution", "ok", rng)
    assert ok[1]["arguments"]["item_ids"] == ["a"] and ok[1]["arguments"]["new_item_ids"] == ["x"]
    assert ok[1]["partial"] is True and one[1]["arguments"]["item_ids"] == ["a", "b", "c"]
    assert (
        steered.action_plan([{"name": "cancel_pending_order", "arguments": {}}], "task_resolution", "ok", rng)
        == []
    )
    basket = list(range(5))  # shop: every goal item is a write
    assert len(steered.action_plan(basket, "task_resolution", "ok", random.Random(0))) in (2, 3)
    assert steered.action_plan(basket, "task_resolution", "bad", rng) == []


# ---- tau2 retail -------------------------------------------------------------------------------------
def test_tau2_expected_action_replay(tau2):
    from shopbench.domains.tau2_retail import WRITE_TOOLS, replay_actions

    data = tau2.data
    assert len(data.tasks) == 114 and len(tau2.tool_names()) == 16 and isinstance(tau2, TrajectorySource)
    strict = writes_ok = changed = 0
    for t in data.tasks:
        db, errors = replay_actions(data.db, t["evaluation_criteria"]["actions"])
        strict += not errors
        writes_ok += not any(e.split(": ")[1] in WRITE_TOOLS for e in errors)
        changed += any(db.diff().values())
        # the only read failures are the look-ups the scenarios script with wrong details first
        assert all(e.endswith("not found") for e in errors if e.split(": ")[1] not in WRITE_TOOLS), errors
    print(f"\nexpected-action replay: {strict}/114 with no error ({strict / 114:.3f}), "
          f"{writes_ok}/114 with every write succeeding ({writes_ok / 114:.3f}); {changed} change the db")  # fmt: skip
    assert writes_ok / 114 >= 0.9 and strict / 114 >= 0.85 and changed >= 100
    db, errors = replay_actions(data.db, data.tasks[0]["evaluation_criteria"]["actions"])
    order = db.get("orders", "#W2378156")
    assert errors == [] and order["status"] == "exchange requested"
    assert order["exchange_items"] == ["1151293680", "4983901480"]
    assert data.db["orders"]["#W2378156"]["status"] == "delivered"  # the loaded data is never modified


def _find_order(db, status, source=None):
    for oid, o in db["orders"].items():
        pm = o["payment_history"][0]["payment_method_id"]
        if (
            o["status"] == status
            and len(o["payment_history"]) == 1
            and (source is None or pm.startswith(source))
        ):
            return oid, o
    raise AssertionError(f"no {status} order")


def test_tau2_tool_rules(tau2):
    from shopbench.domains.tau2_retail import RetailDB, RetailTools, ToolError

    base_db = tau2.data.db
    tools = RetailTools(RetailDB(base_db))
    delivered, d = _find_order(base_db, "delivered")
    ok, msg = tools.execute("cancel_pending_order", {"order_id": delivered, "reason": "no longer needed"})
    assert not ok and msg == "Non-pending order cannot be cancelled"
    pending, p = _find_order(base_db, "pending", "gift_card")
    with pytest.raises(ToolError, match="Non-delivered order cannot be returned"):
        tools.call("return_delivered_order_items", {"order_id": pending, "item_ids": [p["items"][0]["item_id"]],
                                                    "payment_method_id": p["payment_history"][0]["payment_method_id"]})  # fmt: skip
    with pytest.raises(ToolError, match="Invalid reason"):
        tools.call("cancel_pending_order", {"order_id": pending, "reason": "too expensive"})
    with pytest.raises(ToolError, match="Payment method not found"):
        tools.call("modify_pending_order_payment", {"order_id": pending, "payment_method_id": "paypal_0"})
    # tau2-bench passes the arguments to the method: Python's own TypeError text is the tool error
    assert tools.execute("get_order_details", {}) == (
        False, "RetailTools.get_order_details() missing 1 required positional argument: 'order_id'")  # fmt: skip
    from shopbench.domains.tau2_retail import make_tools

    with pytest.raises(ToolError, match="missing argument"):  # the corrected tools check the spec first
        make_tools(RetailDB(base_db), "corrected").call("get_order_details", {})
    # cancelling a pending order paid by gift card refunds the card at once (hand-computed balance)
    gc = p["payment_history"][0]["payment_method_id"]
    before = base_db["users"][p["user_id"]]["payment_methods"][gc]["balance"]
    amount = p["payment_history"][0]["amount"]
    out = tools.call("cancel_pending_order", {"order_id": pending, "reason": "ordered by mistake"})
    assert out["status"] == "cancelled" and out["payment_history"][-1] == {
        "transaction_type": "refund", "amount": amount, "payment_method_id": gc}  # fmt: skip
    assert tools.db.get("users", p["user_id"])["payment_methods"][gc]["balance"] == round(before + amount, 2)
    assert base_db["users"][p["user_id"]]["payment_methods"][gc]["balance"] == before
    assert tools.call("calculate", {"expression": "(2 + 3) * 4 / 8"}) == "2.5"
    with pytest.raises(ToolError, match="Invalid characters"):
        tools.call("calculate", {"expression": "__import__('os')"})


def test_tau2_reward_good_vs_bad(tau2):
    from shopbench.domains.tau2_retail import WRITE_TOOLS

    picked = [t for t in tau2.tasks() if t.meta["n_writes"] and not tau2.gold(t)[1]][:8]
    assert len(picked) == 8
    for t in picked:
        good = tau2.rollout(t, RESOLVE, "good", "Resolve it.", SCRIPTED, 0)
        bad = tau2.rollout(t, RESOLVE, "bad", "Abandon it.", SCRIPTED, 0)
        assert (good.reward, bad.reward) == (1.0, 0.0), t.task_id
        assert not set(bad.meta["actions_taken"]) & WRITE_TOOLS
        warm = tau2.rollout(t, FRIENDLY, "bad", "Be cold.", SCRIPTED, 0)
        assert warm.reward == 1.0 and warm.meta["actions_taken"] == good.meta["actions_taken"]
    r = tau2.rollout(picked[0], RESOLVE, "ok", "s", SCRIPTED, 0)
    assert Rollout.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    assert r.reward == 0.0 and r.meta["steering_source"] == SIMULATED_STEERING
    assert r.rollout_id == f"tau2_retail:{picked[0].task_id}:task_resolution:ok:a0:s0" and r.steering == "s"
    # OpenAI format: system prompt with the wrapper first, each tool result answers a call
    assert r.messages[0]["role"] == "system" and "<policy>" in r.messages[0]["content"]
    assert "<behaviour>" in r.messages[0]["content"] and r.messages[0]["content"].count("\ns\n") == 1
    ids = [c["id"] for m in r.messages for c in m.get("tool_calls") or []]
    assert [m["tool_call_id"] for m in r.messages if m["role"] == "tool"] == ids


def test_tau2_communicate_info_counts(tau2):
    from shopbench.domains.tau2_retail import RetailDB, action_reward

    t = next(t for t in tau2.tasks() if t.meta["communicate_info"] and not t.meta["n_writes"])
    good = tau2.rollout(t, RESOLVE, "good", "", SCRIPTED, 0)
    assert good.reward == 1.0 and good.meta["reward_breakdown"]["communicate"] == 1.0
    gold = tau2.gold(t)[0]
    silent = [m for m in good.messages if m["role"] != "assistant"]
    reward, parts = action_reward(RetailDB(tau2.data.db), gold, t.meta["communicate_info"], silent)
    assert reward == 0.0 and parts["db"] == 1.0 and parts["missing_info"] == t.meta["communicate_info"]
    assert (
        action_reward(RetailDB(tau2.data.db), gold, ["1,000"], [{"role": "assistant", "content": "1000"}])[0]
        == 0
    )
    assert (
        action_reward(RetailDB(tau2.data.db), gold, ["1000"], [{"role": "assistant", "content": "1,000"}])[0]
        == 1
    )


def test_tau2_rollouts_are_deterministic_and_retries_fresh(tau2):
    t = tau2.tasks(1)[0]
    a = tau2.rollout(t, FRIENDLY, "good", "x", SCRIPTED, 0)
    assert a.messages == tau2.rollout(t, FRIENDLY, "good", "x", SCRIPTED, 0).messages
    others = [tau2.rollout(t, FRIENDLY, "good", "x", SCRIPTED, k).messages for k in (1, 2, 3)]
    others.append(tau2.rollout(t, FRIENDLY, "good", "x", Context("scripted:test", "scripted", 9), 0).messages)
    assert any(o != a.messages for o in others)


_IDS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|#W\d+|\b[a-z]+_[a-z]+_\d{3,5}\b|\b\d{5}\b")


def test_tau2_user_never_invents_ids(tau2):
    from shopbench.domains.tau2_retail import ScriptedRetailUser

    for t in tau2.tasks():
        ins = t.meta["instructions"]
        own = " ".join(str(ins.get(k) or "") for k in ("reason_for_call", "known_info", "task_instructions"))
        r = tau2.rollout(t, RESOLVE, "good", "", SCRIPTED, 0)
        for m in r.messages:
            if m["role"] == "user":
                assert all(tok in own for tok in _IDS.findall(m["content"])), (t.task_id, m["content"])
        user = ScriptedRetailUser(ins, random.Random(0))
        user.reply("Hi! How can I help you today?")
        said = user.reply("Could you tell me the email address on your account?")[0]
        if "email" in str(ins.get("unknown_info")).lower():
            assert "@" not in said and re.search(r"\b(remember|know|have)\b", said), said
        said = user.reply("What is the order id?")[0]
        if "#W" not in own:
            assert "#W" not in said and re.search(r"\bknow\b", said), said
    user = ScriptedRetailUser(tau2.tasks(1)[0].meta["instructions"], random.Random(0))
    assert user.reply("Hi!")[0].endswith("I'd go for no backlight.")  # opening, in the first person
    assert user.reply("Could you give me your name and zip code?")[0] == "I am Yusuf Rossi in zip code 19122."
    assert user.reply("I will exchange the keyboard. Shall I go ahead? (yes/no)")[0].startswith("Yes")
    text, stop = user.reply("Done. Is there anything else I can help you with?")
    assert stop and "Thank" in text
    lei = next(
        t
        for t in tau2.tasks()
        if "say you want to use your credit card" in str(t.meta["instructions"]["unknown_info"])
    )
    user = ScriptedRetailUser(lei.meta["instructions"], random.Random(0))
    user.reply("Hi!")
    assert user.reply("Which payment method should I use for the price difference?")[0] == (
        "I want to use my credit card."
    )


def test_tau2_task_description_has_no_particulars(tau2):
    for t in tau2.tasks():
        d = t.description
        assert not _IDS.search(d) and not re.search(r"\b\d{9,}\b", d), (t.task_id, d)
        assert d.startswith("A customer contacts the online retail store's support.")
    assert tau2.tasks(1)[0].description.endswith("they'd go for no backlight.")
    assert [t.task_id for t in tau2.tasks(3, seed=1)] != ["retail-0", "retail-1", "retail-2"]


def test_tau2_malformed_folder(tmp_path):
    need(TAU2)
    from shopbench.domains.tau2_retail import Tau2DataError, load_tau2

    bad = tmp_path / "tau2"
    bad.mkdir()
    for f in ("db.json", "policy.md"):
        shutil.copy(TAU2 / f, bad / f)
    tasks = json.loads((TAU2 / "tasks.json").read_text())[:3]
    tasks[1]["evaluation_criteria"]["actions"][0]["name"] = "frobnicate"
    (bad / "tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(Tau2DataError, match=r"tasks.json, task '1' \(entry \[1\]\): field 'evaluation_criteria"
                                              r".actions\[0\].name': is 'frobnicate', not a retail tool"):  # fmt: skip
        load_tau2(bad)
    del tasks[1]["user_scenario"]["instructions"]["reason_for_call"]
    tasks[1]["evaluation_criteria"]["actions"][0]["name"] = "calculate"
    (bad / "tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(
        Tau2DataError, match=r"task '1'.*'user_scenario.instructions.reason_for_call': is missing"
    ):
        load_tau2(bad)
    tasks = json.loads((TAU2 / "tasks.json").read_text())[:3]
    tasks[2]["id"] = tasks[0]["id"]
    (bad / "tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(InputError, match=r"task id '0' appears twice \(entries \[0\] and \[2\]\)\. "
                                         r"Fix: give every task its own id"):  # fmt: skip
        load_tau2(bad)
    (bad / "tasks.json").write_text("[{not json")
    with pytest.raises(Tau2DataError, match="tasks.json, line 1, column 3: not valid JSON"):
        load_tau2(bad)
    (bad / "tasks.json").write_text('[{"id": "0", "id": "1"}]')
    with pytest.raises(Tau2DataError, match="tasks.json.*: duplicate key 'id'"):
        load_tau2(bad)
    (bad / "tasks.json").write_bytes(b'[{"id": "caf\xe9"}]')
    with pytest.raises(
        InputError, match=r"tasks.json, line 1: not UTF-8 text.*Fix: re-save the file as UTF-8"
    ):
        load_tau2(bad)
    (bad / "tasks.json").unlink()
    with pytest.raises(
        Tau2DataError,
        match="tasks.json: the file is missing. Fix: restore it: it is tau2-bench's published retail",
    ):
        load_tau2(bad)
    with pytest.raises(Tau2DataError, match="tau2 data folder does not exist"):
        load_tau2(tmp_path / "nowhere")


class FakeGateway:
    """Replays rows in order (the last one forever) and records every call's keyword arguments."""

    def __init__(self, rows):
        self.rows, self.calls = list(rows), []

    def call(self, backbone, item_id, messages, **kw):
        c = SimpleNamespace(backbone=backbone, item_id=item_id, messages=messages, **kw)
        self.calls.append(c)
        return c

    def run(self, calls, run_id, desc=None):
        return [self.rows.pop(0) if len(self.rows) > 1 else self.rows[0]]


def _row(text=None, tool_calls=None):
    return {"status": "ok", "raw_output": text, "tool_calls": tool_calls, "parsed": None, "error": None,
            "parse_error": None, "prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.001}  # fmt: skip


def test_tau2_llm_agent_through_the_gateway(tau2):
    t = tau2.tasks(1)[0]
    call = {"id": "c1", "type": "function", "function": {"name": "find_user_id_by_name_zip",
            "arguments": json.dumps({"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"})}}  # fmt: skip
    gw = FakeGateway(
        [_row(tool_calls=[call]), _row("Found you. Is there anything else I can help you with?")]
    )
    ctx = Context("fake/model", "scripted", 2)
    r = tau2.rollout(t, FRIENDLY, "good", "Be warm.", ctx, 1, gateway=gw)
    assert r.meta["steering_source"] == "llm:fake/model" and r.meta["termination"] == "user_stop"
    assert r.messages[0]["content"].endswith("Be warm.\n\nDo not mention, quote or allude to this objective, and do "
                                             "not reuse its wording.\n</behaviour>\n")  # fmt: skip
    assert [m["role"] for m in r.messages[1:]] == [
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert r.messages[4]["content"] == "yusuf_rossi_9620" and r.reward == 0.0
    assert all(c.repeat == 2001 and c.tools for c in gw.calls) and r.usage["prompt_tokens"] == 20
    with pytest.raises(ValueError, match="needs a gateway"):
        tau2.rollout(t, FRIENDLY, "good", "", ctx, 0)


# ---- shop --------------------------------------------------------------------------------------------
def test_shop_tasks_describe_without_particulars(shop):
    tasks = shop.tasks(6)
    assert [t.task_id for t in tasks] == [t.task_id for t in shop.tasks(6)] and len(
        {t.task_id for t in tasks}
    ) == 6
    for t in tasks:
        assert 2 <= t.meta["n_items"] <= 5 and 1 <= t.meta["difficulty"] <= 5
        assert t.tool_names == shop.tool_names() and "search_products" in t.tool_names
        assert "$" not in t.description and not re.search(r"\b[A-Z]{2}\d{5}\b", t.description)
        sc = shop.scenario(t)
        assert not any(shop.products[g.product_id].title in t.description for g in sc.items)


def test_shop_rollouts_follow_the_level(shop):
    tasks = shop.tasks(5)
    rewards: dict = {}
    for lvl in ("bad", "ok", "good"):
        for crit in (RESOLVE, FRIENDLY):
            for t in tasks:
                r = shop.rollout(t, crit, lvl, "steer", SCRIPTED, 0)
                rewards.setdefault((crit.name, lvl), []).append(r.reward)
    mean = {k: sum(v) / len(v) for k, v in rewards.items()}
    assert (
        mean[("task_resolution", "good")]
        > mean[("task_resolution", "ok")]
        >= mean[("task_resolution", "bad")]
    )
    assert mean[("task_resolution", "good")] == 1.0 and mean[("task_resolution", "bad")] == 0.0
    assert mean[("friendliness", "bad")] == mean[("friendliness", "good")] == 1.0  # resolution held fixed
    r = shop.rollout(tasks[0], FRIENDLY, "bad", "Be cold.", SCRIPTED, 0)
    assert Rollout.from_dict(json.loads(json.dumps(r.to_dict()))).messages == r.messages
    assert r.rollout_id == f"shop:{tasks[0].task_id}:friendliness:bad:a0:s0"
    assert r.messages[0]["role"] == "system" and "\nBe cold.\n" in r.messages[0]["content"]
    said = [m["content"] for m in r.messages if m["role"] == "assistant" and m.get("content")]
    assert said and all(any(b in s for b in steered.COLD_BLAME) for s in said)
    ids = [c["id"] for m in r.messages for c in m.get("tool_calls") or []]
    assert ids and [m["tool_call_id"] for m in r.messages if m["role"] == "tool"] == ids
    assert r.messages == shop.rollout(tasks[0], FRIENDLY, "bad", "Be cold.", SCRIPTED, 0).messages
    assert r.messages != shop.rollout(tasks[0], FRIENDLY, "bad", "Be cold.", SCRIPTED, 1).messages


def test_shop_llm_agent_through_the_gateway(shop):
    t = shop.tasks(1)[0]
    gw = FakeGateway([_row("Here is what I found.")])
    r = shop.rollout(t, CLEAR, "ok", "Be plain.", Context("fake/model", "scripted", 0), 3, gateway=gw)
    assert r.meta["steering_source"] == "llm:fake/model" and r.reward == 0.0
    assert "\nBe plain.\n" in r.messages[0]["content"] and gw.calls[0].repeat == 3
    assert all(m["content"] == "Here is what I found." for m in r.messages if m["role"] == "assistant")


# ---- recorded ----------------------------------------------------------------------------------------
def test_recorded_pairs():
    need(RECORDED)
    from shopbench.padme.sources.recorded import RecordedDataError, load_recorded, recorded_pairs

    rs = load_recorded(RECORDED)
    assert len(rs) == 200 and {r.source for r in rs} == {"recorded"} and rs[0].agent_model == "gpt-4o"
    assert rs[0].messages[0]["role"] == "system" and rs[0].domain == "airline"
    pairs = recorded_pairs(rs, RESOLVE)
    assert len(pairs) == 26 and len({p.task_id for p in pairs}) == 26
    for p in pairs:
        assert (p.worse.reward, p.better.reward) == (
            0.0,
            1.0,
        ) and p.worse.task_id == p.better.task_id == p.task_id
        assert (p.contrast, p.attempt, p.kept, p.depth, p.steering, p.votes) == (
            "recorded",
            0,
            True,
            0,
            {},
            [],
        )
        assert p.criterion == p.worse.criterion == "task_resolution"
        same = [r for r in rs if r.task_id == p.task_id]
        assert p.worse.attempt == min(r.attempt for r in same if r.reward == 0.0)
        assert p.better.attempt == min(r.attempt for r in same if r.reward == 1.0)
    assert [p.pair_id for p in pairs] == [p.pair_id for p in recorded_pairs(rs, "task_resolution")]
    with pytest.raises(RecordedDataError, match="missing.json: the recorded trajectories do not exist. Fix: it is "
                                                "tau-bench's published"):  # fmt: skip
        load_recorded(RECORDED.parent / "missing.json")


def test_recorded_bad_input(tmp_path):
    from shopbench.padme.sources.recorded import RecordedDataError, load_recorded

    f = tmp_path / "gpt-4o-airline.json"
    f.write_bytes(b'[{"task_id": 1, "reward": 1, "traj": [], "note": "caf\xe9"}]')
    with pytest.raises(InputError, match=r"gpt-4o-airline.json, line 1: not UTF-8 text"):
        load_recorded(f)
    f.write_text('[{"task_id": 1, "reward": 1, "reward": 0, "traj": []}]')
    with pytest.raises(RecordedDataError, match="not a JSON file .*duplicate key 'reward'"):
        load_recorded(f)
    f.write_text('[{"task_id": 1, "traj": []}]')
    with pytest.raises(
        RecordedDataError, match=r"conversation \[0\] \(task_id=1\): field 'reward': is missing"
    ):
        load_recorded(f)
    f.write_text('[{"task_id": 1, "reward": "high", "traj": []}]')
    with pytest.raises(RecordedDataError, match="field 'reward': 'high' is not a number"):
        load_recorded(f)
    f.write_text('[{"task_id": 1, "reward": 1, "trial": "x", "traj": []}]')
    with pytest.raises(RecordedDataError, match="field 'trial': 'x' is not an integer"):
        load_recorded(f)
    with pytest.raises(RecordedDataError, match="holds no \\*.json results file"):
        load_recorded(tmp_path / "empty") if (tmp_path / "empty").mkdir() is None else None
    f.write_text('[{"task_id": 1, "reward": 1, "trial": 0, "traj": [{"role": "user", "content": "hi"}]}]')
    assert [r.reward for r in load_recorded(f)] == [1.0]
