"""The telecom task builder (issue 28 item 1) and the checks of the published task files.

A task id names what is wrong with the customer's phone or account: ``[intent]issue|issue|...
[PERSONA:p]`` (intent ``service_issue``, ``mobile_data_issue`` or ``mms_issue``; issues in name
order; persona ``None``, ``Easy`` or ``Hard``). :func:`build_task` builds the task from its id as
τ²-bench's ``TaskManager.create_task`` does (``src/tau2/domains/telecom/tasks/``, MIT; read, not
copied; the issue catalogue below is written from its ``service_issues.py``,
``mobile_data_issues.py`` and ``mms_issues.py``): on a fresh rollout it runs the intent's set-up
(the customer John Smith, 555-123-2002), then each issue's break functions — checking their
assertions, as τ²-bench does — and records them as the task's ``initialization_actions``; the
expected actions are the issues' fixes (computed from the broken state), or a transfer to a human
when an issue cannot be fixed by tools (a locked SIM, a contract that ended, data used up after a
refuel); the environment assertions are the intent's success (or failure) checks, plus the
refuelled amount when data was refuelled. The user scenario and ticket are the intent's templates
filled from the phone's surroundings; the persona text is the one the id names.

:func:`check_tasks` and :func:`check_split` check the published files when the folder is loaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .data_model import REWARD_BASES_KNOWN, TelecomData, TelecomDataError
from .tools import AGENT_TOOL_NAMES, TelecomTools
from .user_tools import USER_TOOL_NAMES, TelecomUserTools

__all__ = ["INTENTS", "PERSONAS", "TaskIdError", "build_task", "build_tasks", "check_split", "check_tasks",
           "parse_task_id"]  # fmt: skip

OVERDUE_BILL_ID = "B1234321"
TOOL_CALL_INFO_CHECK = ("If the tool call does not return updated status information, you might need to perform "
                        "another tool call to get the updated status.")  # fmt: skip
TOOL_CALL_GROUNDING = (
    "\nWhenever the agent asks you about your device, always ground your responses on the results of tool calls. \n"
    "For example: If the agent asks what the status bar shows, always ground your response on the results of the "
    "`get_status_bar` tool call. If the agent asks if you are able to send an MMS message, always ground your "
    "response on the results of the `can_send_mms` tool call.\nNever make up the results of tool calls, always "
    "ground your responses on the results of tool calls.\nIf you are unsure about whether an action is necessary, "
    "always ask the agent for clarification.\n"
)
PERSONAS: dict[str, str | None] = {
    "None": None,
    "Easy": (
        "\nAs a 41-year-old office administrator, you use your cellphone daily for both work and personal tasks. "
        "While you're familiar with common phone functions, you wouldn't call yourself a tech enthusiast.\n\nYour "
        "technical skills are average - you handle standard smartphone features like calls, texts, email, and basic "
        "apps with ease. You understand the fundamental settings, but prefer clear, step-by-step guidance when trying "
        "something new.\n\nIn interactions, you're naturally friendly and patient. When receiving help, you listen "
        "attentively and aren't afraid to ask questions. You make sure to confirm your understanding and provide "
        "detailed feedback on each instruction you receive.\n"
    ),
    "Hard": (
        "\nAt 64 years old, you're a retired librarian who keeps your phone use simple - mainly for calls, texts, and "
        "capturing photos of your grandchildren. Technology in general makes you feel uneasy and overwhelmed.\n\nYour "
        "technical knowledge is quite limited. Step-by-step instructions often confuse you, and technical terms like "
        '"VPN" or "APN" might as well be a foreign language. You only share information when specifically asked.'
        "\n\nWhen dealing with technology, you tend to get flustered quickly. You need constant reassurance and often "
        'interrupt with anxious questions. Simple requests like "reboot the phone" can trigger worries about losing '
        "precious photos.\n"
    ),
}


class TaskIdError(TelecomDataError):
    """A task id the builder cannot build (unknown intent, issue or persona; two issues of one kind)."""


# --- the issue catalogue -----------------------------------------------------------------------------
Call = dict[str, Any]


def _fc(env_type: str, func: str, **args: Any) -> Call:
    return {"env_type": env_type, "func_name": func, "arguments": args}


def _as(env_type: str, func: str, message: str | None = None, **args: Any) -> Call:
    return {
        "env_type": env_type,
        "func_name": func,
        "arguments": args,
        "assert_value": True,
        "message": message,
    }


def _tc(requestor: str, name: str, **args: Any) -> Call:
    return {"requestor": requestor, "name": name, "arguments": args}


def _ids(st: Any) -> tuple[str, str]:
    phone = st.user_tools.db.surroundings.phone_number
    return st.tools.get_customer_by_phone(phone).customer_id, st.tools._get_line_by_phone(phone).line_id


Fn = Callable[[Any], list[Call]]


@dataclass
class Issue:
    name: str
    init: list[Fn]
    fix: list[Fn] | None  # None: not fixable with tools (the expected action is a transfer)
    extra: list[Fn] = field(default_factory=list)


def _suspend(contract_ended: bool) -> Fn:
    def f(st: Any) -> list[Call]:
        c, ln = _ids(st)
        return [_fc("assistant", "suspend_line_for_overdue_bill", customer_id=c, line_id=ln,
                    new_bill_id=OVERDUE_BILL_ID, contract_ended=contract_ended),
                _fc("user", "simulate_network_search"),
                _as("user", "assert_service_status", "User is suspended for an overdue bill but service is not broken",
                    expected_status="no_service"),
                _as("assistant", "assert_overdue_bill_exists", "Overdue bill does not exist", customer_id=c,
                    overdue_bill_id=OVERDUE_BILL_ID),
                _as("assistant", "assert_line_status", "Line is not suspended", customer_id=c, line_id=ln,
                    expected_status="Suspended")]  # fmt: skip

    return f


def _fix_overdue(st: Any) -> list[Call]:
    c, ln = _ids(st)
    for b in st.tools.get_customer_by_id(c).bill_ids:
        if st.tools._get_bill_by_id(b).status == "Overdue":
            break
    else:
        raise ValueError("No overdue bill found")
    return [_tc("assistant", "send_payment_request", customer_id=c, bill_id=b), _tc("user", "make_payment"),
            _tc("assistant", "resume_line", customer_id=c, line_id=ln), _tc("user", "reboot_device")]  # fmt: skip


def _roaming(assistant_fn: str) -> Fn:
    def f(st: Any) -> list[Call]:
        c, ln = _ids(st)
        out = [_fc("assistant", assistant_fn, customer_id=c, line_id=ln)]
        if assistant_fn == "disable_roaming":
            out += [_fc("user", "simulate_network_search"),
                    _as("user", "assert_internet_speed", expected_speed=0, expected_desc="No Connection")]  # fmt: skip
        return out

    return f


def _fix_enable_roaming(st: Any) -> list[Call]:
    c, ln = _ids(st)
    return [_tc("assistant", "enable_roaming", customer_id=c, line_id=ln)]


def _refuel_extra(st: Any) -> list[Call]:
    c, ln = _ids(st)
    line = st.tools._get_line_by_phone(st.user_tools.db.surroundings.phone_number)
    return [_as("assistant", "assert_data_refueling_amount", customer_id=c, line_id=ln,
                expected_amount=line.data_refueling_gb + 2.0)]  # fmt: skip


def _k(calls: list[Call]) -> Fn:
    return lambda st: [dict(c, arguments=dict(c["arguments"])) for c in calls]


_SET_ABROAD = _k([_fc("user", "set_user_location", abroad=True)])
_ROAM_OFF = _k(
    [_fc("user", "turn_roaming_off"), _as("user", "assert_mobile_roaming_status", expected_status=False)]
)
_ROAM_ON = _k(
    [_fc("user", "turn_roaming_on"), _as("user", "assert_mobile_roaming_status", expected_status=True)]
)
_FIX_ROAM = _k([_tc("user", "toggle_roaming")])
_FIX_APN = _k([_tc("user", "reset_apn_settings"), _tc("user", "reboot_device")])
_REFUEL = _fc("assistant", "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0)


def _perm(action: str, *perms: str) -> Fn:
    if action == "remove":
        return _k([_fc("user", "remove_app_permission", app_name="messaging", permission=p) for p in perms])
    return _k([_tc("user", "grant_app_permission", app_name="messaging", permission=p) for p in perms])


ISSUES: dict[str, Issue] = {i.name: i for i in [
    Issue("airplane_mode_on", [_k([_fc("user", "turn_airplane_mode_on"),
                                   _as("user", "assert_airplane_mode_status", expected_status=True),
                                   _as("user", "assert_service_status", "Airplane mode is on but service is not broken",
                                       expected_status="no_service")])], [_k([_tc("user", "toggle_airplane_mode")])]),
    Issue("unseat_sim_card", [_k([_fc("user", "unseat_sim_card"),
                                  _as("user", "assert_service_status", "SIM card is unseated but service is not broken",
                                      expected_status="no_service")])], [_k([_tc("user", "reseat_sim_card")])]),
    Issue("lock_sim_card_pin", [_k([_fc("user", "lock_sim_card", mode="pin"),
                                    _as("user", "assert_service_status",
                                        "SIM card is locked with pin but service is not broken",
                                        expected_status="no_service")])], None),
    Issue("break_apn_settings", [_k([_fc("user", "break_apn_settings"),
                                     _as("user", "assert_service_status",
                                         "APN settings are broken but service is not broken",
                                         expected_status="no_service")])], [_FIX_APN]),
    Issue("overdue_bill_suspension", [_suspend(False)], [_fix_overdue]),
    Issue("contract_end_suspension", [_suspend(True)], None),
    Issue("user_abroad_roaming_enabled_off", [_SET_ABROAD, _ROAM_OFF, _roaming("enable_roaming")], [_FIX_ROAM]),
    Issue("user_abroad_roaming_disabled_on", [_SET_ABROAD, _ROAM_ON, _roaming("disable_roaming")],
          [_fix_enable_roaming]),
    Issue("user_abroad_roaming_disabled_off", [_SET_ABROAD, _ROAM_OFF, _roaming("disable_roaming")],
          [_fix_enable_roaming, _FIX_ROAM]),
    Issue("data_mode_off", [_k([_fc("user", "turn_data_off"),
                                _as("user", "assert_mobile_data_status", expected_status=False)])],
          [_k([_tc("user", "toggle_data")])]),
    Issue("data_saver_mode_on", [_k([_fc("user", "turn_data_saver_mode_on"),
                                     _as("user", "assert_mobile_data_saver_mode_status", expected_status=True)])],
          [_k([_tc("user", "toggle_data_saver_mode")])]),
    Issue("bad_network_preference", [_k([_fc("user", "set_network_mode_preference", mode="2g_only")])],
          [_k([_tc("user", "set_network_mode_preference", mode="4g_5g_preferred")])]),
    Issue("bad_vpn", [_k([_fc("user", "break_vpn"), _as("user", "assert_internet_not_excellent")])],
          [_k([_tc("user", "disconnect_vpn")])]),
    Issue("data_usage_exceeded", [_k([_fc("assistant", "set_data_usage", customer_id="C1001", line_id="L1002",
                                          data_used_gb=15.1),
                                      _as("user", "assert_mobile_data_usage_exceeded", expected_status=True)])],
          [_k([_tc("assistant", "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0)])],
          [_refuel_extra]),
    Issue("data_usage_exceeded_no_refuel", [_k([_REFUEL, _fc("assistant", "set_data_usage", customer_id="C1001",
                                                             line_id="L1002", data_used_gb=17.1),
                                                _as("user", "assert_mobile_data_usage_exceeded",
                                                    expected_status=True)])], None),
    Issue("bad_wifi_calling", [_k([_fc("user", "set_wifi_calling", enabled=True, mms_over_wifi=True)])],
          [_k([_tc("user", "toggle_wifi_calling")])]),
    Issue("break_apn_mms_setting", [_k([_fc("user", "break_apn_mms_setting")])], [_FIX_APN]),
    Issue("break_app_sms_permission", [_perm("remove", "sms")], [_perm("grant", "sms")]),
    Issue("break_app_storage_permission", [_perm("remove", "storage")], [_perm("grant", "storage")]),
    Issue("break_app_both_permissions", [_perm("remove", "sms", "storage")], [_perm("grant", "sms", "storage")]),
]}  # fmt: skip

_ROAMING = [
    "user_abroad_roaming_enabled_off",
    "user_abroad_roaming_disabled_on",
    "user_abroad_roaming_disabled_off",
]
_USAGE = ["data_usage_exceeded", "data_usage_exceeded_no_refuel"]


@dataclass
class Intent:
    name: str
    purpose: str
    task_instructions: str
    reason_for_call: str
    known_info: str
    ticket: str
    selection_sets: list[list[str]]
    required_from: int  # at least one issue from selection_sets[required_from:] (τ²-bench's task_validator)
    assertions: Callable[[bool], list[Call]]


def _service_asserts(ok: bool) -> list[Call]:
    if ok:
        return [_as("user", "assert_service_status", "Service status is not as expected", expected_status="connected"),
                _as("assistant", "assert_no_overdue_bill", "Overdue bill is not as expected",
                    overdue_bill_id=OVERDUE_BILL_ID)]  # fmt: skip
    return [_as("user", "assert_service_status", expected_status="no_service")]


def _data_asserts(ok: bool) -> list[Call]:
    return [_as("user", "assert_mobile_data_status", expected_status=ok),
            _as("user", "assert_internet_speed", expected_speed=200 if ok else 0,
                expected_desc="excellent" if ok else None)]  # fmt: skip


_FRUSTRATION = ("If the agent suggests actions that don't immediately fix the issue, follow their guidance but express "
                "mild frustration after the first unsuccessful attempt.")  # fmt: skip
_REFUEL_OK = "You are willing to refuel 2.0 GB of data if necessary, but you do not want to change your mobile data plan."
INTENTS: dict[str, Intent] = {i.name: i for i in [
    Intent("service_issue", "Test resolution path: No Service/Connection Issues.",
           f"{_FRUSTRATION} You will consider the issue resolved when the status bar shows that you have signal. Always "
           "check the status bar if the agent asks you for status information. If the agent asks you to pay a bill, you "
           f"accept. {TOOL_CALL_INFO_CHECK} {TOOL_CALL_GROUNDING}",
           "Your phone has been showing 'No Service' for the past few hours.",
           "You are {name} with phone number {phone_number}.",
           "The user is experiencing issues with their phone service. They are unable to make or receive calls, and the "
           "status bar shows 'No Service'. Customer name: {name}, phone number: {phone_number}. They gave permission to "
           "pay all their overdue bills. They will consider the issue resolved when the status bar shows that they have "
           "signal.",
           [["airplane_mode_on"], ["unseat_sim_card"], ["lock_sim_card_pin"], ["break_apn_settings"],
            ["overdue_bill_suspension", "contract_end_suspension"]], 0, _service_asserts),
    Intent("mobile_data_issue", "Test resolution path: Mobile Data/Slow Internet Issues.",
           f"{_FRUSTRATION} You will consider the issue resolved only when speed test returns excellent internet speed "
           "and nothing else. If it returns poor, fair or good, you will not consider the issue resolved. "
           f"{_REFUEL_OK} {TOOL_CALL_INFO_CHECK} {TOOL_CALL_GROUNDING}",
           "You mobile data is not working properly. It either stops working or is very slow. You want to fix it and "
           "absolutely want to get excellent internet speed on your phone. You are not willing to accept any other "
           "internet speed (poor, fair or good). You do not have access to wifi.",
           "You are {name} with phone number {phone_number}. You are currently {location}.",
           "The user is experiencing issues with their mobile data. They are unable to use their phone to browse the "
           "internet, and the status bar shows 'No Service'. Customer name: {name}, phone number: {phone_number}, "
           "current location: {location}. They will consider the issue resolved when speed test returns excellent "
           "internet speed. They will not change their mobile data plan but they will refuel 2.0 GB of data if "
           "necessary.",
           [["airplane_mode_on"], _ROAMING, ["data_mode_off"], ["data_saver_mode_on"], ["bad_network_preference"],
            ["bad_vpn"], _USAGE], 1, _data_asserts),
    Intent("mms_issue", "Test resolution path: MMS (Picture/Group Messaging) Issues.",
           f"{_FRUSTRATION} {_REFUEL_OK} {TOOL_CALL_INFO_CHECK} {TOOL_CALL_GROUNDING}",
           "You are unable to send MMS messages using your messaging app for the past few hours. You want to fix it and "
           "successfully send an MMS message.",
           "You are {name} with phone number {phone_number}. You are currently {location}.",
           "The user has been unable to send MMS messages using their messaging app for the past few hours. Customer "
           "name: {name}, phone number: {phone_number}, current location: {location}. They will consider the issue "
           "resolved when an MMS message can be successfully sent.",
           [["airplane_mode_on"], ["unseat_sim_card"], ["data_mode_off"], _USAGE, _ROAMING, ["bad_network_preference"],
            ["bad_wifi_calling"], ["break_apn_mms_setting"],
            ["break_app_sms_permission", "break_app_storage_permission", "break_app_both_permissions"]], 5,
           lambda ok: [_as("user", "assert_can_send_mms", expected_status=ok)]),
]}  # fmt: skip

_ID_RE = re.compile(r"^\[([a-zA-Z_]+)\](.*)\[PERSONA:([a-zA-Z_]+)\]$")


def parse_task_id(task_id: Any) -> tuple[Intent, list[Issue], str]:
    """The intent, issues and persona an id names; a :class:`TaskIdError` (``problem`` only) otherwise."""
    m = _ID_RE.match(task_id) if isinstance(task_id, str) else None
    if not m:
        raise TaskIdError(f"is {task_id!r}, not of the form '[intent]issue|issue...[PERSONA:p]'")
    intent_name, body, persona = m.groups()
    intent = INTENTS.get(intent_name)
    if intent is None:
        raise TaskIdError(f"names intent {intent_name!r}; known: {list(INTENTS)}")
    if persona not in PERSONAS:
        raise TaskIdError(f"names persona {persona!r}; known: {list(PERSONAS)}")
    names = body.split("|")
    slot: dict[str, int] = {n: k for k, s in enumerate(intent.selection_sets) for n in s}
    used: dict[int, str] = {}
    for n in names:
        if n not in slot:
            raise TaskIdError(f"names issue {n!r}, not an issue of {intent_name}; known: {sorted(slot)}")
        if slot[n] in used:
            raise TaskIdError(
                f"names {used[slot[n]]!r} and {n!r}, two issues of one kind (τ²-bench picks one)"
            )
        used[slot[n]] = n
    if names != sorted(names):
        raise TaskIdError(f"lists its issues out of name order ({'|'.join(sorted(names))} is the built id)")
    if not any(k >= intent.required_from for k in used):
        raise TaskIdError(
            f"names no {intent_name.replace('_issue', '')} issue proper (τ²-bench's task validator)"
        )
    return intent, [ISSUES[n] for n in names], persona


def build_task(data: TelecomData, task_id: str) -> dict[str, Any]:
    """The task ``task_id`` names, built as τ²-bench's ``TaskManager.create_task`` builds it (module docstring)."""
    from .environment import TelecomState

    intent, issues, persona = parse_task_id(task_id)
    st = TelecomState(data)
    init: list[Call] = []

    def run(calls: list[Call]) -> None:
        for c in calls:
            if "assert_value" in c:
                if not st.run_env_assertion(c):
                    raise TaskIdError(f"builds a state where {c['func_name']}({c['arguments']}) fails "
                                      f"({c.get('message') or 'set-up assertion'})")  # fmt: skip
            else:
                st.run_env_function_call(c)
                init.append(c)

    run([_fc("user", "set_user_info", name="John Smith", phone_number="555-123-2002")])
    for issue in issues:
        for fn in issue.init:
            run(fn(st))
    fixes: list[Call] = []
    failure = False
    for issue in issues:
        if issue.fix is None:
            failure = True
            break
        for fn in issue.fix:
            fixes.extend(fn(st))
    actions: list[dict[str, Any]]
    if failure:
        actions = [{"action_id": "transfer_to_human_agents", "requestor": "assistant", "name": "transfer_to_human_agents",
                    "arguments": {"summary": "I cannot fix the issue."}, "info": None, "compare_args": []}]  # fmt: skip
        basis = ["ENV_ASSERTION", "ACTION"]
    else:
        actions = [{"action_id": f"{c['name']}_{i}", "requestor": c["requestor"], "name": c["name"],
                    "arguments": c["arguments"], "info": None, "compare_args": None} for i, c in enumerate(fixes)]  # fmt: skip
        basis = ["ENV_ASSERTION"]
    asserts = intent.assertions(not failure)
    if not failure:
        for issue in issues:
            for fn in issue.extra:
                asserts.extend(fn(st))
    s = st.user_tools.db.surroundings
    info = {"name": s.name, "phone_number": s.phone_number,
            "location": "abroad in France" if s.is_abroad else "at home in the United States"}  # fmt: skip
    return {
        "id": task_id,
        "description": {"purpose": intent.purpose, "relevant_policies": None, "notes": None},
        "user_scenario": {"persona": PERSONAS[persona], "instructions": {
            "domain": "telecom", "reason_for_call": intent.reason_for_call,
            "known_info": intent.known_info.format(**info), "unknown_info": None,
            "task_instructions": intent.task_instructions}},
        "ticket": intent.ticket.format(**info),
        "initial_state": {"initialization_data": None, "initialization_actions": init, "message_history": None},
        "evaluation_criteria": {"actions": actions, "env_assertions": asserts, "communicate_info": None,
                                "nl_assertions": None, "reward_basis": basis},
    }  # fmt: skip


def build_tasks(data: TelecomData, split: str = "base") -> list[dict[str, Any]]:
    """The tasks of one split of ``split_tasks.json`` built from their ids (114 for ``base``)."""
    if split not in data.split:
        raise TelecomDataError(
            f"has no split {split!r}; it has {sorted(data.split)}", file=data.path / "split_tasks.json"
        )
    return [build_task(data, t) for t in data.split[split]]


# --- checks of the published files ---------------------------------------------------------------------
_KITS = {"assistant": TelecomTools, "user": TelecomUserTools}
_TOOLS = {"assistant": AGENT_TOOL_NAMES, "user": USER_TOOL_NAMES}


def _func_ok(env_type: Any, name: Any) -> bool:
    kit = _KITS.get(env_type)
    return (
        kit is not None
        and isinstance(name, str)
        and not name.startswith("_")
        and callable(getattr(kit, name, None))
    )


def check_tasks(path: Path, tasks: Any, data: TelecomData) -> None:
    """Each task's structure, function calls, assertions and expected actions against the two toolkits."""
    if not isinstance(tasks, list) or not tasks:
        raise TelecomDataError("expected a non-empty JSON list of tasks", file=path)
    seen: dict[str, int] = {}
    phones = {ln["phone_number"] for ln in data.db.get("lines", [])}
    for i, t in enumerate(tasks):
        where = f"task [{i}]"
        if not isinstance(t, dict):
            raise TelecomDataError(f"is a {type(t).__name__}, not an object", file=path, where=where)
        tid = t.get("id")
        if not isinstance(tid, str):
            raise TelecomDataError("is missing or not a string", file=path, where=where, field="id")
        if tid in seen:
            raise TelecomDataError(f"appears twice (entries [{seen[tid]}] and [{i}])", file=path, where=f"task {tid!r}",
                                   field="id")  # fmt: skip
        seen[tid] = i
        where = f"task {tid!r} (entry [{i}])"

        def err(fld: str, problem: str, where: str = where) -> TelecomDataError:
            return TelecomDataError(problem, file=path, where=where, field=fld)

        us = t.get("user_scenario")
        if not isinstance(us, dict) or not isinstance(us.get("instructions"), dict | str):
            raise err("user_scenario.instructions", "is missing or not an object")
        st = t.get("initial_state") or {}
        if not isinstance(st, dict):
            raise err("initial_state", "is not an object")
        for j, c in enumerate(st.get("initialization_actions") or []):
            f = f"initial_state.initialization_actions[{j}]"
            if not isinstance(c, dict) or not _func_ok(c.get("env_type"), c.get("func_name")):
                raise err(f"{f}.func_name", f"is {c.get('func_name') if isinstance(c, dict) else c!r}, not a function "
                          f"of the {c.get('env_type') if isinstance(c, dict) else '?'!r} side")  # fmt: skip
            if not isinstance(c.get("arguments", {}), dict):
                raise err(f"{f}.arguments", "is not an object")
            ph = c["arguments"].get("phone_number")
            if c["func_name"] == "set_user_info" and ph not in phones:
                raise err(
                    f"{f}.arguments.phone_number", f"names phone number {ph!r}, which no line in db.toml has"
                )
        ev = t.get("evaluation_criteria")
        if not isinstance(ev, dict):
            raise err("evaluation_criteria", "is missing or not an object")
        basis = ev.get("reward_basis") or ["DB"]
        if not isinstance(basis, list) or any(b not in REWARD_BASES_KNOWN for b in basis):
            raise err(
                "evaluation_criteria.reward_basis",
                f"is {basis!r}; each must be one of {list(REWARD_BASES_KNOWN)}",
            )
        for j, a in enumerate(ev.get("actions") or []):
            f = f"evaluation_criteria.actions[{j}]"
            req = a.get("requestor", "assistant") if isinstance(a, dict) else None
            if req not in _TOOLS:
                raise err(f"{f}.requestor", f"is {req!r}, not 'assistant' or 'user'")
            if a.get("name") not in _TOOLS[req]:
                raise err(
                    f"{f}.name", f"is {a.get('name')!r}, not a tool of the {req} ({len(_TOOLS[req])} tools)"
                )
            if not isinstance(a.get("arguments"), dict):
                raise err(f"{f}.arguments", "is missing or not an object")
        for j, a in enumerate(ev.get("env_assertions") or []):
            f = f"evaluation_criteria.env_assertions[{j}]"
            if not isinstance(a, dict) or not _func_ok(a.get("env_type"), a.get("func_name")) \
                    or not str(a.get("func_name")).startswith("assert_"):  # fmt: skip
                raise err(f"{f}.func_name", f"is {a.get('func_name') if isinstance(a, dict) else a!r}, not an assertion "
                          "of that side")  # fmt: skip
        for key in ("communicate_info", "nl_assertions"):
            v = ev.get(key)
            if v is not None and (not isinstance(v, list) or not all(isinstance(x, str) for x in v)):
                raise err(f"evaluation_criteria.{key}", "must be a list of strings")


def check_split(path: Path, split: Any) -> None:
    """``split_tasks.json``: an object of split -> ids; every ``base`` id one the builder can build."""
    if not isinstance(split, dict) or not all(isinstance(v, list) for v in split.values()):
        raise TelecomDataError("expected an object of split name -> list of task ids", file=path)
    if "base" not in split:
        raise TelecomDataError("has no 'base' split (the 114 base tasks)", file=path, field="base")
    for name in ("base", "small"):
        for j, tid in enumerate(split.get(name) or []):
            try:
                parse_task_id(tid)
            except TaskIdError as e:
                raise TelecomDataError(e.problem, file=path, where=f"{name}[{j}]", field="id",
                                       fix="use an id of the form '[intent]issue|issue...[PERSONA:p]' with issues of "
                                           "tau2-bench's telecom task builder") from None  # fmt: skip
