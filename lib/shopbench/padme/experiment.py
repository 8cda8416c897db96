"""Wiring PADMÉ runs from a profile's ``padme`` section (notebooks 40 and 50). Every model named
here is a gateway backbone; ``scripted`` / ``heuristic`` name the offline stand-ins, which are
labelled as such in every output.

    padme:
      sources: [shop, {kind: tau2, path: ../shared/data/tau2_retail}]
      tasks_per_source: 40            # tasks per source (cells = tasks x criteria)
      criteria: default               # or a list of {name, description} / a JSON or YAML path
      agent: scripted                 # θ's agent model: scripted (simulated steering), a backbone,
                                      # or a list of backbones, one per cell (shopbench.padme.agents)
      user: scripted
      steering: scripted              # or a backbone: WriteSteer with the H.2 prompt
      filter_judges: [{heuristic: J1, noise: 0.1}, {heuristic: J2, noise: 0.05}]   # or backbones
      retries: 2                      # R
      order_swap: true
      recorded: ../shared/data/tau_bench_airline_trajectories
      evaluators: [heuristic, heuristic-coarse, ...]   # see shopbench.judges.padme.evaluators
      evaluator_runs: 3
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..judges.padme.filters import HeuristicFilterJudge, LLMFilterJudge
from ..profiles import HeuristicJudgeSpec, LLMJudgeSpec, PadmeParams, validate_section
from ..profiles.errors import from_validation
from ..profiles.padme import FilterJudgeEntry
from .choices import FILTER_JUDGE_NOISE
from .criteria import load_criteria
from .sources.factory import make_source, parse_source_spec, tau2_path
from .steering import ScriptedSteering, WriteSteer
from .types import Context

DEFAULT_JUDGES = tuple(
    HeuristicJudgeSpec(heuristic=name, noise=noise, seed=i)
    for i, (name, noise) in enumerate(FILTER_JUDGE_NOISE.items(), 1)
)
"""K = 2 offline filter judges (flip chances: :data:`shopbench.padme.choices.FILTER_JUDGE_NOISE`), used
when ``padme.filter_judges`` is not set."""

PadmeSection = PadmeParams | Mapping[str, Any]
"""The ``padme`` section, typed (``ctx.params.padme``) or as a plain mapping (validated the same way)."""


def _padme(cfg: PadmeSection) -> PadmeParams:
    return validate_section(PadmeParams, cfg, "padme")


def _plain(entry: Any) -> Any:
    """A section entry as the YAML gave it (a name stays a name)."""
    return entry.given() if hasattr(entry, "given") else entry


def build_sources(cfg: PadmeSection, root: Path, available: set[str] | None = None) -> list:
    """The configured trajectory sources; a τ² folder that is absent is skipped with the reason."""
    out = []
    for spec in _padme(cfg).sources:
        try:
            out.append(make_source(_plain(spec), root))
        except FileNotFoundError as e:
            print(f"skipping source {_plain(spec)!r}: {e}")
    if not out:
        raise ValueError("padme.sources: no trajectory source could be built (see the messages above)")
    return out


def tau2_data_paths(cfg: PadmeSection, root: Path) -> list[Path]:
    """The τ² folders the configured sources name (relative paths against ``root``; the default is
    ``../shared/data/tau2_<domain>``), built or not, one per τ² source in order: a notebook uses them
    to say where the data was looked for when a τ² cell skips."""
    out = []
    for spec in _padme(cfg).sources:
        d = parse_source_spec(_plain(spec))
        if str(d.get("kind")) in ("tau2", "tau2_retail"):
            out.append(tau2_path(d, root).resolve())
    return out


def build_criteria(cfg: PadmeSection):
    spec = _padme(cfg).criteria
    if isinstance(spec, str):
        return load_criteria(None if spec == "default" else spec)
    return load_criteria([_plain(c) for c in spec])


def build_steering(spec: str | None, gateway=None, run_id: str = "padme/steering"):
    if not spec or spec == "scripted":
        return ScriptedSteering()
    return WriteSteer(gateway, spec, run_id=run_id)


_JUDGE_ENTRY: TypeAdapter = TypeAdapter(FilterJudgeEntry)


def _judge_entry(entry: Any, where: str) -> str | HeuristicJudgeSpec | LLMJudgeSpec:
    if isinstance(entry, str | HeuristicJudgeSpec | LLMJudgeSpec):
        return entry
    try:
        return _JUDGE_ENTRY.validate_python(entry)
    except ValidationError as e:
        raise from_validation(e, FilterJudgeEntry, None, prefix=where) from None


def build_judges(specs: Sequence | None, gateway=None, run_prefix: str = "padme/filter") -> list:
    """Filter judges J_1..J_K in order: ``{heuristic: name, noise, seed}`` (offline) or a backbone
    (a name, or ``{backbone, name, max_tokens}``); ``None`` gives :data:`DEFAULT_JUDGES`."""
    judges: list = []
    for i, entry in enumerate(specs or DEFAULT_JUDGES, 1):
        s = _judge_entry(entry, f"padme.filter_judges[{i - 1}]")
        if isinstance(s, HeuristicJudgeSpec):
            judges.append(
                HeuristicFilterJudge(s.heuristic, noise=s.noise, seed=i if s.seed is None else s.seed)
            )
        elif isinstance(s, LLMJudgeSpec):
            judges.append(LLMFilterJudge(gateway, s.backbone, name=s.name, run_id=f"{run_prefix}/J{i}",
                                         max_tokens=s.max_tokens))  # fmt: skip
        else:
            judges.append(LLMFilterJudge(gateway, s, run_id=f"{run_prefix}/J{i}"))
    return judges


def context_for(cfg: PadmeSection, source, seed: int) -> Context:
    """θ for ``source``: its scripted agent, the one backbone, or, with a list of agent models, the
    first of them (each cell's own model comes from :func:`agents_for`, passed to ``run_cascade``)."""
    P = _padme(cfg)
    agent_model = f"scripted:{source.name}" if P.scripted_agent else P.agents[0]
    return Context(agent_model=agent_model, user_model=P.user, seed=int(seed))


def agents_for(cfg: PadmeSection, cells: Sequence, seed: int) -> dict[str, str] | None:
    """``{cell_id: agent model}`` when ``padme.agent`` is a list of two or more backbones (the seeded
    balanced round-robin of :func:`shopbench.padme.agents.assign_agents`, over all ``cells`` of all
    sources at once so the shares are balanced over the dataset); None for one agent or scripted."""
    P = _padme(cfg)
    if len(P.agents) < 2:
        return None
    from .agents import assign_agents

    return assign_agents(cells, P.agents, seed=seed)


def uncallable_agents(cfg: PadmeSection, backbones: Sequence) -> dict[str, str]:
    """``{agent model: reason}`` for the ``padme.agent`` models that cannot be called here (unknown
    name, missing key; no call is made). A cell dealt such a model would roll out agent errors, so
    notebook 40 stops with this list instead. Scripted agents are always callable."""
    from ..llm.backends import Backbone

    P = _padme(cfg)
    if P.scripted_agent:
        return {}
    by_name = {b.name: b for b in backbones}
    out = {}
    for m in P.agents:
        ok, why = (by_name.get(m) or Backbone(name=m, model=m)).availability()
        if not ok:
            out[m] = why
    return out


def agent_label(cfg: PadmeSection) -> str:
    """θ's agent as a table shows it: ``scripted``, the backbone, or ``a | b | c (one per cell)``."""
    P = _padme(cfg)
    return P.agents[0] if len(P.agents) == 1 else " | ".join(P.agents) + " (one per cell)"


def backbones_used(cfg: PadmeSection) -> list[str]:
    """Backbone names the section uses (for availability checks and provenance)."""
    P = _padme(cfg)
    out = [v for v in (*P.agents, P.user, P.steering) if v != "scripted"]
    for s in P.filter_judges or []:
        if isinstance(s, str):
            out.append(s)
        elif isinstance(s, LLMJudgeSpec):
            out.append(s.backbone)
    return out


def run_synthesis(cfg: PadmeSection, sources: Sequence, cells_by_source: Mapping[str, Sequence], steering,
                  judges: Sequence, *, gateway, out_dir: Path, seed: int, agents: Mapping[str, str] | None = None,
                  log=print) -> dict:  # fmt: skip
    """Algorithm 1 over every source (notebook 40; issue 27: the loop lives here): each source's cells
    through :func:`~shopbench.padme.cascade.run_cascade` under its own fixed context θ
    (:func:`context_for`), pairs appended to ``out_dir/cascade_<source>_<run key>.jsonl`` as they are
    decided. The run key hashes the configuration (``run_key_fields``), the seed and the library's code,
    so a changed setting or library never resumes stale pairs, and a killed run with neither changed
    resumes. Returns ``{source name: CascadeResult}``; ``log`` gets each source's summary."""
    import hashlib
    import json

    from ..uptodate import library_digest
    from .cascade import PairStore, run_cascade

    params = _padme(cfg)
    key = hashlib.sha256(json.dumps(params.run_key_fields() | {"seed": seed, "library": library_digest()},
                                    sort_keys=True, default=str).encode()).hexdigest()[:10]  # fmt: skip
    results = {}
    for s in sources:
        store = PairStore(Path(out_dir) / f"cascade_{s.name}_{key}.jsonl")
        results[s.name] = run_cascade(cells_by_source[s.name], s, steering, judges, context_for(cfg, s, seed),
                                      retries=params.retries, gateway=gateway, store=store,
                                      order_swap=params.order_swap, seed=seed, agents=agents)  # fmt: skip
        log(s.name, results[s.name].summary())
    return results


def llm_filter_stage(kept: Sequence, criteria: Sequence, filter_judges: Sequence, *, gateway, n_boot: int,
                     seed: int, run_prefix: str = "40_padme_synthesis/llm-filter") -> tuple[Any, dict]:  # fmt: skip
    """The profile's LLM filter judges (H.4) as cascade stage K+1 on the kept pairs (notebook 40; issue 27):
    per judge an anytime sweep (:func:`~shopbench.judges.padme.filters.filter_pairs_anytime`, run id
    ``{run_prefix}/{name}``) and one row: pass rate with a bootstrap 95% CI over pairs, parse failures
    (vetoes), slot shares, and n of N planned pairs. Returns ``(table, plans)``; the table is a note when
    no judge is given."""
    import pandas as pd

    from ..judges.padme.filters import filter_pairs_anytime
    from ..judges.padme.sweep import PairUnit
    from ..llm.anytime import budget_seconds, plan_columns
    from ..stats.bootstrap import bootstrap

    crit_by_name = {c.name: c for c in criteria}
    units = [PairUnit(p.pair_id, p.worse, p.better, (p.criterion, p.contrast, p.source)) for p in kept]
    rows, plans = [], {}
    for f in filter_judges:
        name = f.name or f.backbone
        fr, res = filter_pairs_anytime(units, lambda r: crit_by_name[r.criterion], gateway, f.backbone, name=name,
                                       budget_s=budget_seconds(f.llm_budget_min), seed=seed, cap=f.pairs,
                                       run_id=f"{run_prefix}/{name}", max_tokens=f.max_tokens)  # fmt: skip
        plans[name] = res.summary()
        row: dict[str, Any] = {"judge": name, "backbone": f.backbone}
        if len(fr):
            x = fr.passed.to_numpy(float)
            b = bootstrap(lambda w, x=x: (w @ x) / w.sum(1), len(x), n_boot=n_boot, seed=seed)
            row |= {"pass_rate": b.estimate, "ci_low": b.low, "ci_high": b.high,
                    "parse_failures": int(fr.parse_error.notna().sum()),
                    "better_in_slot_1": float((fr.better_slot == 1).mean()), "chose_slot_1": float((fr.choice == 1).mean())}  # fmt: skip
        rows.append(row)
    if not rows:
        note = "no llm_filter_judges in this profile (or their backbones are not available)"
        return pd.DataFrame({"note": [note]}), plans
    return plan_columns(pd.DataFrame(rows), plans, column="judge"), plans
