"""Trajectory sources for PADMÉ behind one interface (seed 003 §3.1 "Generation", §4, App. C.3).

- :mod:`.base`: the :class:`TrajectorySource` protocol and the H.3 steering wrapper
  (:func:`wrap_steering`).
- :mod:`.factory`: :func:`make_source`, a source from its profile spec (above the concrete sources).
- :mod:`.steered`: the offline steered conduct per criterion and level (the *simulated* steering
  source used by the scripted agents).
- :mod:`.shop`: the shop environment's scenarios and customer simulator.
- :mod:`.tau2`: a τ²-bench domain (retail) read from its published folder, with its tools, a user
  simulator and the action-based reward.
- :mod:`.recorded`: recorded tau-bench trajectories, for meta-evaluation only.
"""

from .base import (
    SIMULATED_STEERING,
    TrajectorySource,
    make_rollout_id,
    steering_source,
    wrap_steering,
)
from .factory import make_source
from .recorded import load_recorded, recorded_pairs
from .steered import action_plan, style_message

__all__ = [
    "SIMULATED_STEERING", "TrajectorySource", "action_plan", "load_recorded", "make_rollout_id", "make_source",
    "recorded_pairs", "steering_source", "style_message", "wrap_steering",
]  # fmt: skip
