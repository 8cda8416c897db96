"""The airline domain (issue 28 item 1): tau-bench's airline database and tau2-bench's 50 airline
tasks (MIT; github.com/sierra-research/tau-bench, github.com/sierra-research/tau2-bench), read from
a folder given as a parameter. :mod:`.data_model` (the folder, validated, and one rollout's
database), :mod:`.tool_names` (their names and τ²-bench's texts), :mod:`.tools` (the 14 tools in τ²-bench's reading, the default, and tau-bench's),
:mod:`.environment` (the rules of a conversation), :mod:`.reward` (the reward on each task's basis;
tau-bench's reward of its recorded conversations) and :mod:`.fidelity` (the recorded conversations
replayed, the gold paths)."""

from __future__ import annotations

from .data_model import AirlineData, AirlineDataError, AirlineDB, load_airline, tau_bench_hash
from .environment import AirlineEnvironment, agent_system_prompt
from .fidelity import gold_paths, load_trajectories, normalised_equal, replay_trajectories
from .reward import action_checks, communicated, gold_state, task_reward, tau_bench_reward
from .tool_names import ALL_TOOL_NAMES, TAU2_TOOL_NAMES, TAU_BENCH_TOOL_NAMES
from .tools import (
    FIDELITIES,
    TAU2_TOOL_SPECS,
    TAU_BENCH_TOOL_SPECS,
    AirlineTools,
    TauBenchAirlineTools,
    make_tools,
    replay_actions,
    tool_specs,
)

__all__ = [
    "ALL_TOOL_NAMES", "FIDELITIES", "TAU2_TOOL_NAMES", "TAU2_TOOL_SPECS", "TAU_BENCH_TOOL_NAMES", "TAU_BENCH_TOOL_SPECS",
    "AirlineDB", "AirlineData", "AirlineDataError", "AirlineEnvironment", "AirlineTools", "TauBenchAirlineTools",
    "action_checks", "agent_system_prompt", "communicated", "gold_paths", "gold_state", "load_airline",
    "load_trajectories", "make_tools", "normalised_equal", "replay_actions", "replay_trajectories", "task_reward",
    "tau_bench_hash", "tau_bench_reward", "tool_specs",
]  # fmt: skip
