"""The telecom domain (issue 28 item 1), dual control: tau2-bench's telecom domain (MIT;
github.com/sierra-research/tau2-bench), read from a folder given as a parameter. The agent works on
the company's records with 13 tools (:mod:`.tools`); the simulated customer acts on their own phone
with 30 tools (:mod:`.user_tools`); :mod:`.environment` holds both and keeps them in step;
:mod:`.reward` scores a conversation on the task's basis (environment assertions on the phone and
the records, actions, database, communicated info; NL assertions left unscored); :mod:`.tasks`
builds a task from its id (the 114 base tasks of ``split_tasks.json``) and checks the published
files; :mod:`.fidelity` runs the gold paths and compares built tasks with the published ones."""

from __future__ import annotations

from .data_model import TelecomData, TelecomDataError
from .environment import TelecomEnvironment, TelecomState, TelecomUserView, agent_system_prompt
from .fidelity import compare_built, gold_path, gold_paths
from .loader import load_telecom
from .reward import action_checks, task_reward
from .tasks import INTENTS, ISSUES, TaskIdError, build_task, build_tasks, parse_task_id
from .tools import AGENT_TOOL_NAMES, AGENT_TOOL_SPECS, TelecomTools
from .user_tools import USER_TOOL_NAMES, USER_TOOL_SPECS, TelecomUserTools

__all__ = [
    "AGENT_TOOL_NAMES", "AGENT_TOOL_SPECS", "INTENTS", "ISSUES", "USER_TOOL_NAMES", "USER_TOOL_SPECS", "TaskIdError",
    "TelecomData", "TelecomDataError", "TelecomEnvironment", "TelecomState", "TelecomTools", "TelecomUserTools",
    "TelecomUserView", "action_checks", "agent_system_prompt", "build_task", "build_tasks", "compare_built",
    "gold_path", "gold_paths", "load_telecom", "parse_task_id", "task_reward",
]  # fmt: skip
