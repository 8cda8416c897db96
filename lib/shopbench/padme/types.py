"""The data model of PADMÉ synthesis and meta-evaluation (seed 003 §3, Algorithm 1, App. A).

"We define the input of PADMÉ as a cell (t, c), consisting of task parameters t and evaluation
criterion c [...] We use each cell as a seed datum to generate a trajectory pair p = (x⁻, x⁺) with
two different steering levels, ℓ, ℓ′ ∈ L = {bad ≺ ok ≺ good}" (§3.1). "All rollouts within a cell
share a fixed environment context θ, which may include the agent model, user simulator, domain
configuration, and decoding seed." Plain dataclasses with ``to_dict``/``from_dict`` (JSONL).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..core.conversation import Trajectory, from_fields

LEVELS = ("bad", "ok", "good")
RANK = {lvl: i for i, lvl in enumerate(LEVELS)}
CONTRASTS: tuple[tuple[str, str], ...] = (("bad", "ok"), ("ok", "good"), ("bad", "good"))


def contrast_name(c: tuple[str, str]) -> str:
    return f"{c[0]}-{c[1]}"


@dataclass(frozen=True)
class Criterion:
    """A criterion is data: a name and a description (App. H.1 gives the paper's three)."""

    name: str
    description: str


@dataclass(frozen=True)
class Task:
    """Task parameters t. ``description`` is what the steering generator may see (no solution leak,
    §3.1 footnote 2); ``tool_names`` the agent's tools; ``meta`` anything the source needs to roll
    the task out again (ids into its database, the user's instructions, expected actions...)."""

    task_id: str
    domain: str
    source: str
    description: str
    tool_names: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Task:
        d = dict(d)
        d["tool_names"] = tuple(d.get("tool_names", ()))
        return from_fields(cls, d)


@dataclass(frozen=True)
class Context:
    """The fixed environment context θ shared by both rollouts of a pair."""

    agent_model: str  # a backbone name, or "scripted:<source>" for the offline steered agents
    user_model: str  # a backbone name, or "scripted"
    seed: int = 0


# A PADMÉ rollout is the core trajectory type: one conversation with its steering labels.
Rollout = Trajectory


@dataclass
class Vote:
    """One filter judge's decision on a pair (Eq. 2): the slot order it saw, its choice, and whether
    that agrees with the synthetic label (J_k(p, c) ∈ {0, 1}); a parse failure counts as a veto."""

    judge: str
    stage: int  # 1..K
    better_slot: int  # 1 or 2: where x⁺ was shown
    choice: int | None  # 1 or 2, None on a parse failure
    agrees: bool
    parse_error: str | None = None
    swapped_choice: int | None = None  # order-swap re-judging (optional)
    raw: str | None = None


@dataclass
class Pair:
    """A trajectory pair p = (x⁻, x⁺) of one attempt at one cell, with its filter outcome."""

    pair_id: str
    cell_id: str
    task_id: str
    domain: str
    source: str
    criterion: str
    contrast: str  # e.g. "bad-good"
    agent_model: str
    attempt: int  # 0-based: 0 = the initial generation (r = 0)
    worse: Rollout
    better: Rollout
    steering: dict[str, str]  # level -> instruction
    votes: list[Vote] = field(default_factory=list)
    depth: int = 0  # the largest k with p ∈ D_k
    kept: bool = False  # p ∈ D_K

    def to_dict(self) -> dict:
        d = asdict(self)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Pair:
        d = dict(d)
        d["worse"] = Rollout.from_dict(d["worse"])
        d["better"] = Rollout.from_dict(d["better"])
        d["votes"] = [from_fields(Vote, v) for v in d.get("votes", [])]
        return from_fields(cls, d)
