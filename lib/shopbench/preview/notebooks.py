"""The preview's walk over a profile's plan, notebook by notebook (issue 14 §2; split from
``preview.py`` by issue 27): each planned sweep becomes lines of calls and tokens
(:class:`~shopbench.preview.lines.Line`); :mod:`.pricing` then prices and times them.

How each notebook's numbers are made (each line's ``method`` says which):

- **10_paceshop_build** with an LLM generator: one call per assignment (``n_queries`` ×
  ``personas_per_query``, an upper bound: queries without an evidence pool drop out). Input tokens:
  the B.9 prompt rendered by :class:`shopbench.paceshop.generate.LLMGenerator` for assignments of a
  small sample build (same catalog kind and sizes per record); output tokens: the offline generator's
  contract-shaped response to the same assignments.
- **20_pace_judge_sweep**: calls = judged records × protocols × repeats, records = the test split
  at the profile's sizes (``test_goods`` × 5 + the swap slice) capped by each run's ``subset``.
  Input tokens: each protocol's prompt rendered by :func:`shopbench.judges.pace.protocols.messages` on the
  sample build's test records; output tokens: the answer ``local/schema-sampler`` gives under the
  protocol's contract (a contract-shaped answer), capped at ``max_tokens``.
- **50_padme_meta_eval**: calls = (``llm_evaluator_pairs`` + ``llm_recorded_pairs``) × 2
  trajectories × runs per LLM evaluator. Input tokens: the H.5 prompt rendered by
  :func:`shopbench.judges.padme.evaluators.evaluator_messages` on the recorded τ-bench trajectories
  (``padme.recorded``; 3,000 tokens a trajectory when they are absent); output: the contract answer.
- **40_padme_synthesis** and **80_shop_agents**: conversations cannot be rendered before they happen,
  so their calls come from per-trial and per-rollout counts, documented below and marked
  ``method: per-unit model``. Seed 002 App. G: "the assistant averages 417K tokens per trial, while
  the user simulator and judge add 347K"; we split the latter as 60 % simulator, 40 % judge, and
  take 20 agent calls and 10 customer turns per trial. PADMÉ: per cell, 3 steering calls, 2 rollouts
  × (1 + ``retries`` / 2) attempts × 12 agent and 6 user calls of 4,000 input tokens, and K filter
  judge calls per attempt on a 6,000-token pair prompt; with a list of agent models each gets its
  share of the cells (``n // m``, the first ``n % m`` one more: the balanced round-robin of
  :mod:`shopbench.padme.agents`; which model gets an extra cell is seeded there, not here).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .lines import Line, Preview
from .pricing import backbone_kind
from .tokens import count_tokens, prefix_tokens, schema_answer_tokens, text_tokens

SAMPLE_RECORDS = 24
SHOP_ASSISTANT_TOKENS_PER_TRIAL, SHOP_OTHER_TOKENS_PER_TRIAL = 417_000, 347_000
SHOP_AGENT_CALLS_PER_TRIAL, SHOP_USER_CALLS_PER_TRIAL = 20, 10
PADME_AGENT_CALLS, PADME_USER_CALLS, PADME_CALL_INPUT = 12, 6, 4000
PADME_PAIR_PROMPT, PADME_STEER_INPUT = 6000, 1500
TRAJECTORY_TOKENS_DEFAULT = 3000


def sample_build(prof) -> Any:
    """A small PACEShop build (offline generator) from the profile's catalog and seed: its records have
    the shape of the full build's, so their prompts have its sizes."""
    from ..paceshop.build import BuildConfig, build

    cfg = BuildConfig.from_profile(prof)
    cfg.generator = "offline"
    small = dict(n_products=min(cfg.n_products, 400), n_candidate_queries=min(cfg.n_candidate_queries, 240),
                 n_queries=min(cfg.n_queries, 12), n_personas=min(cfg.n_personas, 60),
                 n_holdout=min(cfg.n_holdout, 14), test_goods=min(cfg.test_goods, 8), dev_goods=min(cfg.dev_goods, 8),
                 swap_slice=min(cfg.swap_slice, 8), s0_per_label=2, calibration_good=2,
                 calibration_bad_per_family=1)  # fmt: skip
    for k, v in small.items():
        setattr(cfg, k, v)
    key = json.dumps(asdict(cfg), sort_keys=True, default=str)
    if key not in _BUILDS:  # one sample build per configuration and process
        _BUILDS.clear()
        _BUILDS[key] = build(cfg, progress=False)
    return _BUILDS[key]


_BUILDS: dict[str, Any] = {}


def judged_records(params) -> int:
    """Records notebook 20 judges per run at the profile's sizes: ``test_goods`` × 5 + the swap slice
    (the test split), else ``test_goods`` × 5."""
    J, P = params.judging, params.paceshop
    goods = min(P.test_goods, P.n_queries * P.personas_per_query // 3)
    return goods * 5 + min(P.swap_slice, goods) if J.split == "test" else goods * 5


# ---- per notebook ---------------------------------------------------------------------------------
class Builder:
    """A profile's preview lines, one method per notebook (:func:`shopbench.preview.build_preview` calls
    those of the planned notebooks)."""

    def __init__(self, prof):
        from ..llm import parse_backbones
        from ..profiles import as_plain

        self.prof = prof
        self.params = prof.params
        self.backbones = {b.name: b for b in parse_backbones([as_plain(e) for e in self.params.backbones])}
        self._build = None
        self._recorded_rollouts: list | None = None
        self.preview = Preview(prof.name)
        self.trajectory_prefix = 0  # the H.5 prompt's fixed prefix (set by _trajectory_tokens)
        self.trajectory_max = 0  # the largest H.5 prompt (set by _trajectory_tokens)

    @property
    def build(self):
        if self._build is None:
            self._build = sample_build(self.prof)
        return self._build

    def model(self, name: str) -> str:
        b = self.backbones.get(name)
        return b.model if b is not None else name

    def add(self, notebook: str, backbone: str, role: str, calls: int, mean_in: float, mean_out: float,
            method: str, prefix: int = 0, budget: tuple[str, float | None] | None = None,
            max_in: float | None = None) -> None:  # fmt: skip
        model = self.model(backbone)
        b = self.backbones.get(backbone)
        kind = backbone_kind(b, model)
        self.preview.lines.append(Line(
            notebook=notebook, backbone=backbone, model=model, role=role, calls=int(calls),
            input_tokens=int(round(calls * mean_in)), output_tokens=int(round(calls * mean_out)), kind=kind,
            method=method, substitute_for=b.substitute_for if b is not None else None, prefix_tokens=int(prefix),
            budget=(budget[0], float(budget[1])) if budget is not None and budget[1] is not None else None,
            max_input_tokens=int(round(max_in if max_in is not None else mean_in)),
        ))  # fmt: skip

    # 10: GOOD generation
    def paceshop(self) -> None:
        from ..paceshop.build import _prompt
        from ..paceshop.generate import LLMGenerator

        P = self.params.paceshop
        if P.generator == "offline":
            return
        res = self.build
        qby = {q.query_id: q for q in res.queries}
        goods = res.by_kind("good")[:SAMPLE_RECORDS]
        gen = LLMGenerator(None, P.generator, _prompt("paceshop_good_generation"))
        ins, outs = [], []
        for g in goods:
            item = (g.assignment_id, qby[g.query_id], g.persona, res.pools[g.query_id])
            ins.append(count_tokens([{"role": "user", "content": gen.render(item)}]))
            outs.append(text_tokens(g.response.model_dump_json()))
        n = P.n_queries * P.personas_per_query
        self.add(
            "10_paceshop_build",
            P.generator,
            "generator",
            n,
            statistics.mean(ins),
            statistics.mean(outs),
            f"B.9 prompt built for {len(ins)} sampled assignments, × {n} (n_queries × personas_per_query)",
            max_in=max(ins),
        )

    # 20: judge sweep
    def judging(self) -> None:
        from ..judges.pace.protocols import PROTOCOLS, get_protocol, messages

        J = self.params.judging
        n_test = judged_records(self.params)
        recs = [r for r in self.build.records if r.split == "test"][:SAMPLE_RECORDS] or self.build.records[
            :SAMPLE_RECORDS
        ]
        sizes: dict[str, tuple[float, float]] = {}
        prefixes: dict[str, int] = {}
        biggest: dict[str, int] = {}  # the largest prompt per protocol (issue 25 preflight)

        def size(pname: str) -> tuple[float, float]:
            if pname not in sizes:
                p = get_protocol(pname)
                params = p.params(J.max_tokens)
                ins, outs, prompts = [], [], []
                for r in recs:
                    msgs = messages(p, r)
                    prompts.append(msgs)
                    ins.append(count_tokens(msgs))
                    outs.append(schema_answer_tokens(getattr(p, "contract", None), params.get("max_tokens"),
                                                      len(ins)))  # fmt: skip
                sizes[pname] = (statistics.mean(ins), statistics.mean(outs))
                biggest[pname] = max(ins)
                prefixes[pname] = prefix_tokens(prompts)
            return sizes[pname]

        how = f"prompts built for {len(recs)} sampled test records; × {n_test} test records"
        for judge in J.deterministic_judges:
            for pname in J.deterministic_protocols:
                i, o = size(pname)
                self.add(
                    "20_pace_judge_sweep",
                    judge,
                    f"reference judge ({pname})",
                    n_test * J.repeats,
                    i,
                    o,
                    how,
                    prefix=prefixes[pname],
                    max_in=biggest[pname],
                )
        for run in J.runs():
            for pname in run.protocols or list(PROTOCOLS):
                i, o = size(pname)
                n = (n_test if run.subset is None else min(run.subset, n_test)) * (run.repeats or J.repeats)
                self.add(
                    "20_pace_judge_sweep",
                    run.backbone,
                    f"judge ({pname})",
                    n,
                    i,
                    o,
                    f"prompts built for {len(recs)} sampled test records; × {n} "
                    f"(subset {'all' if run.subset is None else run.subset})",
                    prefix=prefixes[pname],
                    budget=(f"20 {run.backbone}", run.llm_budget_min),
                    max_in=biggest[pname],
                )

    # 50: evaluators
    def evaluators(self) -> None:
        from ..judges.padme.roster import evaluator_specs, evaluators_from_profile

        P = self.params.padme
        try:
            specs = evaluators_from_profile(self.prof)
        except Exception:  # noqa: BLE001 - the notebook reports a bad roster; the preview counts what it can
            specs = evaluator_specs([e if isinstance(e, str) else e.given() for e in P.evaluators or []])
        llm = [s for s in specs if not s.is_heuristic]
        if not llm:
            return
        mean_in, how = self._trajectory_tokens()
        pairs, recorded = P.llm_evaluator_pairs, P.llm_recorded_pairs
        said = []
        if pairs is None:  # every kept pair: at most one per synthesized cell
            pairs = self._cells()
            said.append(f"pairs: every kept pair, at most {pairs} cells")
        if recorded is None:  # every reward-labelled recorded pair
            recorded = self._recorded_pairs()
            said.append(f"recorded: every reward-labelled pair, {recorded} found")
        n = (pairs + recorded) * 2 * P.llm_runs
        budget = sum(b or 0.0 for b in (P.llm_evaluator_budget_min, P.llm_recorded_budget_min))
        for s in llm:
            self.add(
                "50_padme_meta_eval",
                s.backbone,
                f"evaluator {s.name}",
                n,
                mean_in,
                min(P.evaluator_max_tokens, 120),
                f"{how}; × {n} ((pairs + recorded pairs) × 2 × runs{'; ' if said else ''}{'; '.join(said)})",
                prefix=self.trajectory_prefix,
                max_in=self.trajectory_max or None,
                budget=(f"50 {s.backbone}", budget or None)
                if P.llm_evaluator_budget_min is not None
                else None,
            )

    def _cells(self) -> int:
        P = self.params.padme
        n_criteria = 3 if isinstance(P.criteria, str) else len(P.criteria)
        return int(P.tasks_per_source * len(P.sources) * n_criteria)

    def _recorded(self) -> list:
        """The recorded τ-bench rollouts of ``padme.recorded`` (read once; empty when absent or
        unreadable: the notebook reports that, the preview plans nothing for them)."""
        if self._recorded_rollouts is None:
            from ..padme.sources.recorded import load_recorded
            from ..paths import ROOT

            path = Path(self.params.padme.recorded or "")
            path = path if path.is_absolute() else ROOT / path
            try:
                self._recorded_rollouts = list(load_recorded(path))
            except Exception:  # noqa: BLE001 - absent or unreadable
                self._recorded_rollouts = []
        return self._recorded_rollouts

    def _recorded_pairs(self) -> int:
        from ..padme.sources.recorded import recorded_pairs

        return len(recorded_pairs(self._recorded(), "task_resolution"))

    def _trajectory_tokens(self) -> tuple[float, str]:
        from ..judges.padme.evaluators import evaluator_messages
        from ..padme.criteria import load_criteria
        from ..prompts import prompt_file, strip_header

        try:
            rollouts = self._recorded()[:SAMPLE_RECORDS]
            crit = load_criteria(None)[0]
            template = strip_header(
                prompt_file(self.params.padme.evaluator_prompt).read_text(encoding="utf-8")
            )
            prompts = [evaluator_messages(r, crit, template) for r in rollouts]  # the profile's H.5 prompt
            sizes = [count_tokens(m) for m in prompts]
            self.trajectory_prefix = prefix_tokens(prompts)
            self.trajectory_max = max(sizes, default=0)
        except Exception:  # noqa: BLE001 - absent or unreadable: a documented default
            sizes = []
        if not sizes:
            return float(
                TRAJECTORY_TOKENS_DEFAULT
            ), f"H.5 prompt at {TRAJECTORY_TOKENS_DEFAULT} tokens (no recorded trajectories)"
        return statistics.mean(sizes), f"H.5 prompt built on {len(sizes)} recorded τ-bench trajectories"

    def _system_prefix(self, which: str) -> int:
        """Tokens of an agent's system message, the prefix the gateway marks for caching on every turn
        (llm/usage.py): the shop agent's system prompt, or τ²-bench's instruction and policy for a τ²
        source (0 when its folder cannot be read: no discount is then assumed)."""
        try:
            if which == "shop":
                from ..shopsim.agents import default_system_prompt

                return text_tokens(default_system_prompt())
            from ..domains.tau2_retail.environment import agent_system_prompt
            from ..paths import ROOT

            for src in self.params.padme.sources:
                path = getattr(src, "path", None)
                if path:
                    pol = Path(path) if Path(path).is_absolute() else ROOT / path
                    return text_tokens(agent_system_prompt((pol / "policy.md").read_text(encoding="utf-8")))
        except Exception:  # noqa: BLE001 - an estimate: no readable prompt, no discount
            return 0
        return 0

    # 40: synthesis (per-unit model)
    def synthesis(self) -> None:
        P = self.params.padme
        cells = self._cells()
        attempts = 1 + P.retries / 2
        how = "per-unit model (module docstring): conversations cannot be rendered before they happen"
        if P.steering != "scripted":
            self.add(
                "40_padme_synthesis", P.steering, "steering (H.2)", cells * 3, PADME_STEER_INPUT, 300, how
            )
        if not P.scripted_agent:  # a list of agent models splits the cells evenly (padme.agents)
            m = len(P.agents)
            for i, agent in enumerate(P.agents):
                share = cells // m + (1 if i < cells % m else 0)
                n = share * 2 * attempts * PADME_AGENT_CALLS
                role = "agent" if m == 1 else f"agent ({share} of {cells} cells)"
                self.add("40_padme_synthesis", agent, role, n, PADME_CALL_INPUT, 300, how,
                         prefix=self._system_prefix("tau2"))  # fmt: skip
        if P.user != "scripted":
            n = cells * 2 * attempts * PADME_USER_CALLS
            self.add("40_padme_synthesis", P.user, "user simulator", n, PADME_CALL_INPUT, 120, how)
        for j in P.filter_judges or []:
            g = j if isinstance(j, str) else j.given()
            name = g if isinstance(g, str) else g.get("backbone")
            if name:
                self.add(
                    "40_padme_synthesis",
                    name,
                    "filter judge (H.4)",
                    cells * attempts,
                    PADME_PAIR_PROMPT,
                    300,
                    how,
                )

    # 80: shop agents (per-unit model)
    def shop(self) -> None:
        S = self.params.shopsim
        how = "per-unit model from seed 002 App. G tokens per trial (module docstring)"
        total_trials = 0
        for a in S.llm_agents:
            trials = sum(a.trial_counts().values())
            total_trials += trials
            n = trials * SHOP_AGENT_CALLS_PER_TRIAL
            self.add(
                "80_shop_agents",
                a.backbone,
                f"agent ({a.tool_mode})",
                n,
                SHOP_ASSISTANT_TOKENS_PER_TRIAL / SHOP_AGENT_CALLS_PER_TRIAL,
                min(a.max_tokens, 400),
                how,
                prefix=self._system_prefix("shop"),
                budget=(f"80 {a.backbone}", a.llm_budget_min),
            )
        trials_all = total_trials + sum(sum(S.trials.counts().values()) for _ in S.scripted_agents)
        if S.user != "scripted":
            n = trials_all * SHOP_USER_CALLS_PER_TRIAL
            self.add(
                "80_shop_agents",
                S.user,
                "user simulator",
                n,
                0.6 * SHOP_OTHER_TOKENS_PER_TRIAL / SHOP_USER_CALLS_PER_TRIAL,
                200,
                how,
            )
        if S.judge != "deterministic":
            self.add(
                "80_shop_agents",
                S.judge,
                "judge",
                trials_all * 10,
                0.4 * SHOP_OTHER_TOKENS_PER_TRIAL / 10,
                300,
                how,
            )
        if S.second_judge and S.second_judge_trials:
            self.add(
                "80_shop_agents",
                S.second_judge,
                "second judge (App. K)",
                S.second_judge_trials * 10,
                0.4 * SHOP_OTHER_TOKENS_PER_TRIAL / 10,
                300,
                how,
            )
