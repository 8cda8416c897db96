"""The airline domain (issue 28 items 1-2 and "Bad input"): tau-bench's recorded conversations
replayed, the gold paths, bad input, a tool error returned as text. Uses ../shared/data (skipped
with the reason when absent); never copies it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shopbench.cli import main
from shopbench.domains.airline import (
    TAU2_TOOL_NAMES,
    TAU_BENCH_TOOL_NAMES,
    AirlineDataError,
    AirlineDB,
    gold_paths,
    load_airline,
    load_trajectories,
    make_tools,
    replay_trajectories,
    task_reward,
)
from shopbench.domains.airline.reward import gold_state
from shopbench.errors import UserError

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
AIRLINE = SHARED / "tau2_airline"
TRAJ = SHARED / "tau_bench_airline_trajectories" / "gpt-4o-airline.json"
needs_data = pytest.mark.skipif(
    not (AIRLINE / "tasks.json").exists(), reason=f"airline data absent at {AIRLINE}"
)
needs_traj = pytest.mark.skipif(not TRAJ.exists(), reason=f"tau-bench trajectories absent at {TRAJ}")


@pytest.fixture(scope="module")
def data():
    return load_airline(AIRLINE)


@needs_data
@needs_traj
def test_replay_matches_every_recorded_output_and_reward(data):
    """Issue 28 item 2, airline replay: 1,164 tool outputs, all equal once tau-bench's 2025 rename of
    the users' address key province -> state is undone; every recomputed reward equals the recorded one."""
    s = replay_trajectories(data, load_trajectories(TRAJ), TRAJ)
    assert s["conversations"] == 200
    assert s["tool_outputs"] == 1164
    assert s["tool_outputs_equal"] == 1044
    assert s["tool_outputs_differing_only_in_province"] == 120
    assert s["tool_outputs_equal_modulo_province"] == 1164 and s["differing_outputs"] == []
    assert s["rewards_equal"] == 200 and s["reward_mismatches"] == []
    assert s["recorded_reward_1"] == 84
    assert (s["gt_data_hash_equal"], s["gt_data_hash_recorded"]) == (182, 182)
    assert s["conversations_not_done"] == 5


@needs_data
@needs_traj
def test_replay_detects_a_changed_tool(data, monkeypatch):
    """The replay is not vacuous: tau-bench's get_user_details answering in τ²-bench's shape (with the
    user's id, float amounts) makes its outputs differ."""
    from shopbench.domains.airline import tools

    monkeypatch.setattr(tools.GetUserDetails, "invoke", staticmethod(
        lambda data, user_id: json.dumps(tools.tau2_user(user_id, data["users"][user_id]))))  # fmt: skip
    s = replay_trajectories(data, load_trajectories(TRAJ), TRAJ)
    assert s["tool_outputs_equal_modulo_province"] < 1164
    assert {d["tool"] for d in s["differing_outputs"]} == {"get_user_details"}


@needs_data
def test_gold_paths_reach_reward_1_except_the_communicate_tasks(data):
    """Issue 28 item 2, gold paths: the expected actions alone give reward 1 on 44 of 50 tasks; the 6
    others name COMMUNICATE items only an agent's message can carry, and reach 1 once those are said."""
    g = gold_paths(data)
    assert (g["tasks"], g["reward_1"]) == (50, 44)
    assert sorted(int(f["task"]) for f in g["failures"]) == [3, 7, 11, 14, 18, 23]
    assert all("COMMUNICATE" in f["reasons"][0] for f in g["failures"])
    assert g["with_communication"]["reward_1"] == 50
    assert g["reward_basis"] == {"DB+COMMUNICATE": 50}


@needs_data
def test_reward_is_zero_when_the_database_or_a_communicated_item_differs(data):
    task = data.task("20")  # a booking
    crit = task["evaluation_criteria"]
    gold_hash, errors = gold_state(data, task)
    assert errors == []
    db = AirlineDB(data.db)  # nothing done
    assert task_reward(db, gold_hash, crit, [])[0] == 0.0
    task3 = data.task("3")  # communicate_info ['4']
    db3 = AirlineDB(data.db)
    make_tools(db3).execute("get_user_details", {"user_id": "anya_garcia_5901"})
    g3, _ = gold_state(data, task3)
    assert (
        task_reward(db3, g3, task3["evaluation_criteria"], [{"role": "assistant", "content": "none"}])[0]
        == 0.0
    )
    said = [{"role": "assistant", "content": "You have 4 suitcases."}]
    assert task_reward(db3, g3, task3["evaluation_criteria"], said)[0] == 1.0
    assert task_reward(db3, g3, task3["evaluation_criteria"], said, termination="max_steps")[0] == 0.0


@needs_data
def test_a_wrong_argument_is_an_error_text_the_agent_sees(data):
    """Issue 28 "Bad input": a tool call with a wrong argument is the error the benchmark returns, never a crash."""
    t2 = make_tools(AirlineDB(data.db), "tau2")
    ok, text = t2.execute("get_user_details", {"userid": "mia_li_3668"})
    assert (
        not ok
        and text == "Error: AirlineTools.get_user_details() got an unexpected keyword argument 'userid'"
    )
    ok, text = t2.execute("get_reservation_details", {"reservation_id": "NOPE00"})
    assert (ok, text) == (False, "Error: Reservation NOPE00 not found")
    ok, text = t2.execute("update_reservation_flights", {"reservation_id": "4WQ150", "cabin": "economy",
                                                         "flights": "HAT170", "payment_id": "x"})  # fmt: skip
    assert not ok and text.startswith("Error: ")
    v1 = make_tools(AirlineDB(data.db), "tau_bench")
    ok, text = v1.execute("cancel_reservation", {})
    assert (
        text == "Error: CancelReservation.invoke() missing 1 required positional argument: 'reservation_id'"
    )
    assert v1.execute("get_reservation_details", {"reservation_id": "NOPE00"})[1] == "Error: user not found"
    assert v1.execute("fly", {})[1] == "Unknown action fly"


@needs_data
def test_the_readings_differ_where_the_benchmarks_do(data):
    """τ²-bench takes the seats on booking and changes the cabin on a flight change; tau-bench does neither."""
    args = {"user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way",
            "cabin": "economy", "flights": [{"flight_number": "HAT136", "date": "2024-05-20"},
                                            {"flight_number": "HAT039", "date": "2024-05-20"}],
            "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
            "payment_methods": [{"payment_id": "certificate_7504069", "amount": 250},
                                {"payment_id": "credit_card_4421486", "amount": 5}],
            "total_baggages": 3, "nonfree_baggages": 0, "insurance": "no"}  # fmt: skip
    seats = data.db["flights"]["HAT136"]["dates"]["2024-05-20"]["available_seats"]["economy"]
    for fid, taken in (("tau2", 1), ("tau_bench", 0)):
        db = AirlineDB(data.db)
        ok, text = make_tools(db, fid).execute("book_reservation", args)
        assert ok, text
        assert json.loads(text)["reservation_id"] == "HATHAT"
        assert (
            db.get("flights", "HAT136")["dates"]["2024-05-20"]["available_seats"]["economy"] == seats - taken
        )
        assert "certificate_7504069" not in db.get("users", "mia_li_3668")["payment_methods"]
    assert (
        data.db["flights"]["HAT136"]["dates"]["2024-05-20"]["available_seats"]["economy"] == seats
    )  # loaded data untouched
    assert len(TAU2_TOOL_NAMES) == len(TAU_BENCH_TOOL_NAMES) == 14
    assert set(TAU2_TOOL_NAMES) ^ set(TAU_BENCH_TOOL_NAMES) == {"get_flight_status", "think"}


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "airline"
    d.mkdir(parents=True)
    for f in ("flights.json", "reservations.json", "users.json", "tasks.json", "policy.md"):
        shutil.copy(AIRLINE / f, d / f)
    return d


@needs_data
def test_bad_input_names_file_record_and_field(tmp_path):
    d = _copy(tmp_path)
    (d / "policy.md").unlink()
    with pytest.raises(AirlineDataError, match=r"policy\.md: the file is missing"):
        load_airline(d)
    d = _copy(tmp_path / "b")
    tasks = json.loads((d / "tasks.json").read_text())
    tasks[1]["evaluation_criteria"]["actions"][0]["arguments"]["user_id"] = "nobody_0000"
    (d / "tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(AirlineDataError) as e:
        load_airline(d)
    msg = str(e.value)
    assert (
        "tasks.json" in msg
        and "task '1'" in msg
        and "evaluation_criteria.actions[0].arguments.user_id" in msg
    )
    assert "nobody_0000" in msg
    tasks[1]["evaluation_criteria"]["actions"][0]["arguments"]["user_id"] = "raj_sanchez_7340"
    tasks[1]["evaluation_criteria"]["actions"][1]["arguments"]["reservation_id"] = "ZZZZZZ"
    (d / "tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(AirlineDataError, match=r"actions\[1\]\.arguments\.reservation_id.*ZZZZZZ"):
        load_airline(d)
    (d / "users.json").write_text('{"a": ')
    with pytest.raises(AirlineDataError, match=r"users\.json"):
        load_airline(d)


@needs_data
def test_cli_bad_input_exits_2_with_one_message(tmp_path, capsys):
    d = _copy(tmp_path)
    res = json.loads((d / "reservations.json").read_text())
    res["4WQ150"]["user_id"] = "ghost_1"
    (d / "reservations.json").write_text(json.dumps(res))
    assert main(["domains", "check", "airline", "--data", str(d)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "reservations.json" in err and "4WQ150" in err and "'user_id'" in err
    bad = tmp_path / "traj.json"
    bad.write_text(
        json.dumps([{"task_id": 0, "reward": 1.0, "traj": [], "info": {"task": {"user_id": "x"}}}])
    )
    assert main(["domains", "check", "airline", "--data", str(AIRLINE), "--trajectories", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "traj.json" in err and "conversation [0]" in err and "info.task.actions" in err


@needs_data
def test_cli_prints_the_documented_summary(capsys):
    assert main(["domains", "check", "airline", "--data", str(AIRLINE)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["table16"]["policy_words"] == out["table16"]["paper"]["policy_words"] == 1313
    assert out["table16"]["agent_tools"] == 14 and out["table16"]["tool_name_jaccard_with_retail"] == 0.1111
    assert out["gold_paths"]["expected_action_errors"] == {"tau2": {}, "tau_bench": {}}
    with pytest.raises(UserError):
        from shopbench.domains.check import check_domain

        check_domain("no_such_domain")
