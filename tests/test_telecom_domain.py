"""The telecom domain (issue 28 items 1-2 and "Bad input"): gold paths of the 20 published and the
114 built tasks, the builder against the published tasks, a customer's tool changing the phone that
an environment assertion then sees, bad input, tool errors as text. Uses ../shared/data (skipped
with the reason when absent); never copies it into the repository."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from shopbench.cli import main
from shopbench.core.conversation import ToolCall
from shopbench.domains.check import check_domain
from shopbench.domains.telecom import (
    AGENT_TOOL_NAMES,
    USER_TOOL_NAMES,
    TelecomDataError,
    TelecomEnvironment,
    TelecomState,
    build_task,
    build_tasks,
    compare_built,
    gold_paths,
    load_telecom,
    task_reward,
)
from shopbench.errors import UserError

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TELECOM = SHARED / "tau2_telecom"
pytestmark = pytest.mark.skipif(
    not (TELECOM / "tasks_small.json").exists(), reason=f"telecom data absent at {TELECOM}"
)


@pytest.fixture(scope="module")
def data():
    return load_telecom(TELECOM)


def _task(data, tid):
    return next(t for t in data.tasks if t["id"] == tid)


def test_gold_paths_reach_reward_1_and_an_empty_conversation_does_not(data):
    """Issue 28 item 2: every published and every built task's expected actions (agent and customer)
    give reward 1; the same tasks with no action give 0 (the check can fail)."""
    built = build_tasks(data, "base")
    assert len(built) == 114
    for tasks in (data.tasks, built):
        g = gold_paths(data, tasks)
        assert (g["reward_1"], g["failures"]) == (len(tasks), [])
        assert g["env_assertions"] == g["env_assertions_met"] > 0
    assert all(task_reward(data, t, [], "agent_stop")[0] == 0.0 for t in data.tasks + built)
    t = data.tasks[0]  # a premature end scores 0 even with the gold actions
    msgs = [{"role": a["requestor"], "tool_calls": [a]} for a in t["evaluation_criteria"]["actions"]]
    assert task_reward(data, t, msgs, "agent_stop")[0] == 1.0
    assert task_reward(data, t, msgs, "max_steps")[0] == 0.0


def test_builder_rebuilds_the_published_tasks_and_sees_a_difference(data):
    """Issue 28 item 1: the builder applied to the 20 published ids gives the published tasks; a
    changed published task is reported with its key path; no base id is a published id."""
    rebuilt = [build_task(data, t["id"]) for t in data.tasks]
    assert compare_built(rebuilt, data.tasks) == {"shared_ids": 20, "equal": 20, "differing": []}
    pub = copy.deepcopy(data.tasks)
    pub[3]["evaluation_criteria"]["env_assertions"][1]["arguments"]["expected_speed"] = 100
    c = compare_built(rebuilt, pub)
    assert c["equal"] == 19
    assert c["differing"][0]["differences"] == [
        ".evaluation_criteria.env_assertions[1].arguments.expected_speed: built '200' != published '100'"
    ]
    assert not {t["id"] for t in data.tasks} & set(data.split["base"])


def test_a_customer_tool_changes_the_phone_an_assertion_then_sees(data):
    """Dual control: airplane mode on; the customer's toggle (a user-side tool) brings the service
    back, which the task's environment assertion sees, and the conversation scores 1."""
    task = _task(data, "[service_issue]airplane_mode_on[PERSONA:None]")
    env = TelecomEnvironment(data, task)
    check = task["evaluation_criteria"]["env_assertions"][0]
    assert check["func_name"] == "assert_service_status"
    assert env.state.run_env_assertion(check) is False
    assert "Airplane Mode" in env.user_view(0, "hi", False).execute("check_status_bar", {})[1]
    ok, text = env.execute_user("toggle_airplane_mode", {})
    assert ok and text.startswith("Airplane Mode is now OFF.")
    assert env.state.run_env_assertion(check) is True
    assert task_reward(data, task, env.trajectory, "user_stop")[0] == 1.0


def test_agent_and_customer_are_kept_in_step(data):
    """The agent's payment request reaches the phone; the customer's payment marks the bill paid;
    the agent's resume gives the line back to the phone after a reboot."""
    task = _task(data, "[service_issue]overdue_bill_suspension[PERSONA:Easy]")
    env = TelecomEnvironment(data, task)
    assert env.execute_user("check_payment_request", {})[1] == "No payment request has been made."
    env.execute(ToolCall("send_payment_request", {"customer_id": "C1001", "bill_id": "B1234321"}, "c1"))
    assert env.execute_user("check_payment_request", {})[1].startswith(
        "You have a payment request for bill B1234321"
    )
    env.execute_user("make_payment", {})
    assert (
        json.loads(env.execute(ToolCall("get_details_by_id", {"id": "B1234321"}, "c2")).result[1])["status"]
        == "Paid"
    )
    env.execute(ToolCall("resume_line", {"customer_id": "C1001", "line_id": "L1002"}, "c3"))
    assert "No Signal" in env.execute_user("check_status_bar", {})[1]
    assert "📶⁴ Excellent | 5G" in env.execute_user("reboot_device", {})[1]
    assert task_reward(data, task, env.trajectory, "agent_stop")[0] == 1.0


def test_tool_errors_are_text_never_a_crash(data):
    """A wrong argument, an unknown tool or id is the τ²-bench error text the caller sees."""
    st = TelecomState(data)
    assert st.get_response("assistant", "get_customer_by_id", {}) == (
        False, "Error: TelecomTools.get_customer_by_id() missing 1 required positional argument: 'customer_id'")  # fmt: skip
    assert st.get_response("assistant", "get_customer_by_id", {"customer_id": "C9"}) == (
        False, "Error: Customer with ID C9 not found")  # fmt: skip
    assert st.get_response("assistant", "get_details_by_id", {"id": 7})[1].startswith("Error: 'int' object")
    assert st.get_response("assistant", "toggle_data", {}) == (False, "Error: Tool 'toggle_data' not found.")
    assert st.get_response("user", "toggle_data", {"x": 1})[1].startswith(
        "Error: TelecomUserTools.toggle_data() got an unexpected keyword argument 'x'")  # fmt: skip
    assert st.get_response("user", "set_network_mode_preference", {"mode": "6g"})[1].startswith(
        "Failed to set network mode: '6g' is not a valid option")  # fmt: skip
    assert st.get_response("user", "set_apn_settings", {"apn_settings": {"apn_name": "x"}})[1].startswith(
        "Error: 1 validation error"
    )
    assert st.get_response("assistant", "refuel_data", {"customer_id": "C1001", "line_id": "L1002",
                                                        "gb_amount": "2"})[0] is False  # fmt: skip
    ok, text = st.get_response(
        "assistant", "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}
    )
    assert ok and json.loads(text)["charge"] == "4.0"  # τ²-bench's to_json_str writes numbers as strings


def test_table16_and_the_check_command(data, capsys):
    """Issue 28 item 2: Table 16 recomputed (policy words, 13 agent and 30 user tools, Jaccard)."""
    assert len(AGENT_TOOL_NAMES) == 13 and len(USER_TOOL_NAMES) == 30
    s = check_domain("telecom", TELECOM)
    assert s["table16"]["policy_words"] == s["table16"]["paper"]["policy_words"] == 3715
    assert (s["table16"]["agent_tools"], s["table16"]["user_tools"]) == (13, 30)
    assert s["table16"]["tool_name_jaccard"] == {"airline": round(1 / 26, 4), "retail": round(1 / 28, 4)}
    assert s["builder"]["published_rebuilt"]["equal"] == 20
    assert main(["domains", "check", "telecom", "--data", str(TELECOM)]) == 0
    assert json.loads(capsys.readouterr().out)["gold_paths"]["built"]["reward_1"] == 114


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "tel"
    shutil.copytree(TELECOM, d)
    for p in d.rglob("*"):
        p.chmod(0o644 if p.is_file() else 0o755)
    d.chmod(0o755)
    return d


@pytest.mark.parametrize(
    ("edit", "expect"),
    [
        (lambda d: (d / "db.toml").unlink(), ["db.toml", "the file is missing"]),
        (lambda d: (d / "db.toml").write_text((d / "db.toml").read_text().replace('plan_id = "P1002"\n', 'plan_id = "P9"\n', 1)),
         ["db.toml", "lines[1] (L1002)", "field 'plan_id'", "P1002"]),
        (lambda d: (d / "user_db.toml").write_text("[device]\nairplane_mode = 3\n"), ["user_db.toml", "airplane_mode"]),
        (lambda d: (d / "tasks_small.json").write_text("[{"), ["tasks_small.json"]),
        (lambda d: (d / "split_tasks.json").write_text(json.dumps({"base": ["[mms_issue]flat_battery[PERSONA:None]"]})),
         ["split_tasks.json", "base[0]", "field 'id'", "flat_battery"]),
        (lambda d: (d / "tasks_small.json").write_text(
            (d / "tasks_small.json").read_text().replace('"func_name": "turn_roaming_off"', '"func_name": "fly"', 1)),
         ["tasks_small.json", "user_abroad_roaming_enabled_off", "initialization_actions[2].func_name"]),
    ],
)  # fmt: skip
def test_bad_input_is_one_message_naming_file_record_field(tmp_path, capsys, edit, expect):
    """Issue 28 "Bad input": one message naming the file, the record and the field, exit 2, before any call."""
    d = _copy(tmp_path)
    edit(d)
    with pytest.raises(TelecomDataError) as e:
        load_telecom(d)
    assert isinstance(e.value, UserError)
    for part in expect:
        assert part in str(e.value)
    assert main(["domains", "check", "telecom", "--data", str(d)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and expect[0] in err
