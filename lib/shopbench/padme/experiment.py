"""Wiring PADMÉ runs from a profile's ``padme`` section (notebooks 40 and 50). Every model named
here is a gateway backbone; ``scripted`` / ``heuristic`` name the offline stand-ins, which are
labelled as such in every output.

    padme:
      sources: [shop, {kind: tau2, path: ../shared/data/tau2_retail}]
      tasks_per_source: 40            # tasks per source (cells = tasks x criteria)
      criteria: default               # or a list of {name, description} / a JSON or YAML path
      agent: scripted                 # θ's agent model: scripted (simulated steering) or a backbone
      user: scripted
      steering: scripted              # or a backbone: WriteSteer with the H.2 prompt
      filter_judges: [{heuristic: J1, noise: 0.1}, {heuristic: J2, noise: 0.05}]   # or backbones
      retries: 2                      # R
      order_swap: true
      recorded: ../shared/data/tau_bench_airline_trajectories
      evaluators: [heuristic, heuristic-coarse, ...]   # see shopbench.padme.evaluators
      evaluator_runs: 3
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .criteria import load_criteria
from .filters import HeuristicFilterJudge, LLMFilterJudge
from .sources.base import make_source
from .steering import ScriptedSteering, WriteSteer
from .types import Context

DEFAULT_JUDGES = ({"heuristic": "J1", "noise": 0.1, "seed": 1}, {"heuristic": "J2", "noise": 0.05, "seed": 2})


def build_sources(cfg: Mapping[str, Any], root: Path, available: set[str] | None = None) -> list:
    """The configured trajectory sources; a τ² folder that is absent is skipped with the reason."""
    out = []
    for spec in cfg.get("sources", ["shop"]):
        try:
            out.append(make_source(spec, root))
        except FileNotFoundError as e:
            print(f"skipping source {spec!r}: {e}")
    if not out:
        raise ValueError("padme.sources: no trajectory source could be built (see the messages above)")
    return out


def build_criteria(cfg: Mapping[str, Any]):
    spec = cfg.get("criteria", "default")
    return load_criteria(None if spec in (None, "default") else spec)


def build_steering(spec: str | None, gateway=None, run_id: str = "padme/steering"):
    if not spec or spec == "scripted":
        return ScriptedSteering()
    return WriteSteer(gateway, spec, run_id=run_id)


def build_judges(specs, gateway=None, run_prefix: str = "padme/filter") -> list:
    """Filter judges J_1..J_K in order: ``{heuristic: name, noise, seed}`` (offline) or a backbone."""
    judges = []
    for i, s in enumerate(specs or DEFAULT_JUDGES, 1):
        if isinstance(s, Mapping) and "heuristic" in s:
            judges.append(HeuristicFilterJudge(str(s["heuristic"]), noise=float(s.get("noise", 0.0)),
                                               seed=int(s.get("seed", i))))  # fmt: skip
        elif isinstance(s, Mapping) and "backbone" in s:
            judges.append(LLMFilterJudge(gateway, s["backbone"], name=s.get("name"), run_id=f"{run_prefix}/J{i}",
                                         max_tokens=int(s.get("max_tokens", 1024))))  # fmt: skip
        elif isinstance(s, str):
            judges.append(LLMFilterJudge(gateway, s, run_id=f"{run_prefix}/J{i}"))
        else:
            raise ValueError(
                f"padme.filter_judges[{i - 1}]: {s!r} is neither {{heuristic: name}} nor a backbone"
            )
    return judges


def context_for(cfg: Mapping[str, Any], source, seed: int) -> Context:
    agent = cfg.get("agent", "scripted")
    agent_model = f"scripted:{source.name}" if agent == "scripted" else agent
    return Context(agent_model=agent_model, user_model=cfg.get("user", "scripted"), seed=int(seed))


def backbones_used(cfg: Mapping[str, Any]) -> list[str]:
    """Backbone names the section uses (for availability checks and provenance)."""
    out = []
    for key in ("agent", "user", "steering"):
        v = cfg.get(key)
        if v and v != "scripted":
            out.append(v)
    for s in cfg.get("filter_judges", []) or []:
        if isinstance(s, str):
            out.append(s)
        elif isinstance(s, Mapping) and "backbone" in s:
            out.append(s["backbone"])
    return out
