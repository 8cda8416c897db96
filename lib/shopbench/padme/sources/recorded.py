"""Recorded tau-bench trajectories, for meta-evaluation only (seed 003 §3.2, App. C.3).

"An evaluator under test is a scoring function f(x; c) ∈ [0, 1] that rates a single trajectory x
against a criterion c [...] its pairwise preference over p = (x⁻, x⁺) is derived directly from the
score gap" (§3.2). Recorded conversations cannot be steered, so they are not a rollout source; but
when the same task was recorded both solved and failed, the environment reward gives a pair whose
label does not come from steering at all: "programmatic task success rewards [...] independently of
model annotation" (App. C.3). Such pairs measure an evaluator on *task resolution* with a label
nobody synthesised.

The format is tau-bench's results file (``gpt-4o-airline.json``): a list of ``{task_id, reward,
info, traj, trial}`` where ``traj`` is an OpenAI-format message list (system, user, assistant with
``tool_calls``, tool). :func:`load_recorded` reads it into :class:`Rollout` records (message
validation reuses :mod:`shopbench.annotate.pairs`, which reads the same files for the annotation
UI); :func:`recorded_pairs` makes one pair per task that has both a success (reward 1) and a failure
(reward 0): worse = the failure with the lowest trial number, better = the success with the lowest
trial number (deterministic), contrast ``"recorded"``, kept, depth 0, no steering.

A recorded rollout's ``level`` carries its outcome, not a steering level: ``"good"`` for reward 1,
``"bad"`` otherwise; ``steering`` is empty and ``meta["steering_source"]`` says "recorded".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...annotate.pairs import PairImportError, _tau_messages
from ...errors import InputError, read_text
from ...strictjson import StrictJSONError
from ...strictjson import loads as strict_loads
from ..types import Criterion, Pair, Rollout

__all__ = ["RECORDED_SOURCE", "RecordedDataError", "load_recorded", "recorded_pairs"]

MAX_BYTES = 256_000_000  # a results file of many conversations is larger than strictjson's 2 MB default

RECORDED_SOURCE = "recorded (tau-bench results file)"
DATA_HINT = (
    "it is tau-bench's published historical trajectories (MIT; github.com/sierra-research/tau-bench, "
    "historical_trajectories/gpt-4o-airline.json), kept beside the project at "
    "../shared/data/tau_bench_airline_trajectories"
)


class RecordedDataError(InputError):
    """A recorded-trajectory file is missing or malformed. Without a more specific fix, the fix is to
    restore the published results file (read as released, never edited)."""

    def __init__(self, problem: str, **kw: Any) -> None:
        kw["fix"] = kw.get("fix") or f"restore the published tau-bench results: {DATA_HINT}"
        super().__init__(problem, **kw)


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.glob("*.json") if p.is_file())
        if not files:
            raise RecordedDataError("the folder holds no *.json results file", file=path, fix=DATA_HINT)
        return files
    if not path.exists():
        raise RecordedDataError("the recorded trajectories do not exist", file=path, fix=DATA_HINT)
    return [path]


def _names(stem: str) -> tuple[str, str]:
    """(agent model, domain) from a results file name like ``gpt-4o-airline``."""
    model, _, domain = stem.rpartition("-")
    return (model or stem), (domain or "unknown")


def _read(f: Path) -> list:
    try:
        data = strict_loads(read_text(f, "results file"), max_bytes=MAX_BYTES)  # non-UTF-8: line and byte
    except StrictJSONError as e:
        raise RecordedDataError(f"not a JSON file ({e})", file=f, fix="restore the published file") from None
    if not isinstance(data, list):
        raise RecordedDataError(f"expected a JSON list of conversations, got {type(data).__name__}", file=f)
    return data


def _checked(f: Path, i: int, conv: Any) -> tuple[float, int]:
    """(reward, trial) of conversation ``i``, every message validated."""
    if not isinstance(conv, dict):
        raise RecordedDataError(
            f"is a {type(conv).__name__}, not an object", file=f, where=f"conversation [{i}]"
        )
    where = f"conversation [{i}] (task_id={conv.get('task_id')!r})"
    for key in ("task_id", "reward", "traj"):
        if key not in conv:
            raise RecordedDataError("is missing", file=f, where=where, field=key)
    try:
        _tau_messages(f, i, conv)  # validates every message (role, tool calls)
    except PairImportError as e:
        raise RecordedDataError(str(e)) from None
    try:
        reward = float(conv["reward"])
    except (TypeError, ValueError):
        raise RecordedDataError(
            f"{conv['reward']!r} is not a number", file=f, where=where, field="reward"
        ) from None
    try:
        trial = int(conv.get("trial") or 0)
    except (TypeError, ValueError):
        raise RecordedDataError(
            f"{conv['trial']!r} is not an integer", file=f, where=where, field="trial"
        ) from None
    return reward, trial


def load_recorded(path: str | Path) -> list[Rollout]:
    """Every conversation of a tau-bench results file (or of each ``*.json`` in a folder) as a
    :class:`Rollout` (source ``"recorded"``, ``reward`` from the file)."""
    out: list[Rollout] = []
    for f in _files(Path(path)):
        model, domain = _names(f.stem)
        for i, conv in enumerate(_read(f)):
            reward, trial = _checked(f, i, conv)
            task_id = f"{domain}-{conv['task_id']}"
            info = conv.get("info") or {}
            task = info.get("task") if isinstance(info, dict) else None
            out.append(Rollout(
                rollout_id=f"recorded:{f.stem}:{task_id}:t{trial}", task_id=task_id, domain=domain, source="recorded",
                criterion="", level="good" if reward >= 1.0 else "bad", steering="", agent_model=model,
                user_model="recorded", seed=0, attempt=trial, messages=list(conv["traj"]), reward=reward,
                meta={"steering_source": RECORDED_SOURCE, "file": f.name, "trial": trial,
                      "instruction": (task or {}).get("instruction"),
                      "reward_info": info.get("reward_info") if isinstance(info, dict) else None},
            ))  # fmt: skip
    return out


def recorded_pairs(rollouts: Sequence[Rollout], criterion: Criterion | str) -> list[Pair]:
    """One pair per task with both a success (reward 1) and a failure (reward 0); see the module
    docstring. The label is the environment reward, so it speaks to task resolution; another
    criterion is accepted but the pair then says nothing certain about it."""
    name = criterion.name if isinstance(criterion, Criterion) else str(criterion)
    by_task: dict[tuple[str, str], list[Rollout]] = defaultdict(list)
    for r in rollouts:
        by_task[(str(r.meta.get("file", "")), r.task_id)].append(r)
    pairs: list[Pair] = []
    for (_, task_id), rs in sorted(by_task.items(), key=lambda kv: (kv[0][0], _task_key(kv[0][1]))):
        fails = sorted((r for r in rs if r.reward is not None and r.reward <= 0.0), key=lambda r: r.attempt)
        wins = sorted((r for r in rs if r.reward is not None and r.reward >= 1.0), key=lambda r: r.attempt)
        if not fails or not wins:
            continue
        worse, better = replace(fails[0], criterion=name), replace(wins[0], criterion=name)
        pairs.append(Pair(
            pair_id=f"recorded:{task_id}:{name}:t{worse.attempt}-t{better.attempt}", cell_id=f"recorded:{task_id}:{name}",
            task_id=task_id, domain=worse.domain, source="recorded", criterion=name, contrast="recorded",
            agent_model=worse.agent_model, attempt=0, worse=worse, better=better, steering={}, votes=[], depth=0,
            kept=True,
        ))  # fmt: skip
    return pairs


def _task_key(task_id: str) -> tuple[int, str]:
    tail = task_id.rpartition("-")[2]
    return (int(tail), task_id) if tail.isdigit() else (10**9, task_id)
