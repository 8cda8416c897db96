"""Task ``shop_agent`` (issue 26 §1): an agent shops in the seeded simulator; the 44-metric battery.

subject: a tool-calling model (``--model local/... | openai/NAME --model-base-url URL | any litellm
name``; ``-T tool_mode=native|json|compact``) as :class:`shopbench.shopsim.agents.LLMAgent`, or
``--agent module:Class``, a Python class implementing :class:`shopbench.env.Agent`
(:mod:`shopbench.tasks.agents`, docs/guides/agent.md).

samples: the scenarios notebook 80 plays for ``-T profile`` (default ``smoke``): the profile's catalog
(:func:`shopbench.shopsim.experiment.build_environment`) and trial counts (or ``-T trials=general=N,
grocery=N,refusal=N``) planned with the profile's scenario seed
(:func:`~shopbench.shopsim.experiment.plan_scenarios`), in the seeded difficulty-stratified order of
notebook 80's LLM agents (:func:`~shopbench.shopsim.experiment.stratified_order`, ``--seed``), the
first ``--limit`` of them. The customer is ``-T user=scripted`` (the deterministic simulator) or a
model (the LLM customer); the rubric judge ``-T judge=deterministic`` or a model.

run: notebook 80's path — :func:`~shopbench.shopsim.experiment.run_plan` (trajectories appended to
``<log>/trajectories/epoch<k>/`` as each trial finishes: a rerun plays no finished trial again and, for
a model, asks no call again) — then :func:`~shopbench.shopsim.verifier.battery.score_trials`.
Each trial (× epoch) is one unit (:mod:`shopbench.llm.outcomes`):

- ``error``: no measurement — the agent raised or returned an error step (a Python agent), the agent's
  model call failed, or the customer simulator failed (``judge_error``, ``no_opening_message``). The
  trial is recorded (trajectory, ``unit_error``) and counted, never scored;
- ``parse_error``: the agent's model answered outside its tool contract; the trial ended as
  ``assistant_error`` and is scored (a parse failure is data);
- ``ok``: every other trial, scored (a tool-round ceiling hit is the agent's own failure, App. D).

metrics: the battery (:func:`~shopbench.shopsim.verifier.battery.summarize`'s mean, SD and valid n of
each of the 44 metrics over the scored trials) with a percentile bootstrap CI of each mean, overall and
per generator tier (direct, light, multi_item, complex); the headline is Table 14's exact-cart success
on general trials with its bootstrap CI overall and per tier
(:func:`~shopbench.metrics.shop.intervals.bootstrap_success`) and the main outcome metrics.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from ..errors import InputError
from .registry import Param, task
from .scoring import CALL_FAILED, finite, mean_ci

TOOL_MODES = ("native", "json", "compact")
HEADLINE_KEYS = ("goal_rate", "goal_progress", "exact_cart_precision", "exact_cart_recall", "avg_total_tool_calls",
                 "invalid_tool_call_rate", "inline.user_frustration", "max_turns", "assistant_error")  # fmt: skip
# the customer simulator failed: no measurement of the agent
USER_FAILED = ("judge_error", "no_opening_message")
ROUND_CEILING = "tool-round ceiling reached"
# per-trial outcomes `shopbench compare` pairs (issue 29 item 3): success = exact cart on a general trial
COMPARE_METRICS = ("success", "goal_progress", "goal_rate", "exact_cart_precision", "exact_cart_recall",
                   "avg_total_tool_calls", "invalid_tool_call_rate", "inline.user_frustration")  # fmt: skip


def parse_trials(text: str | None) -> dict[str, int] | None:
    """``"general=4,grocery=2,refusal=1"`` → counts (kinds not named: 0); a bad string is an InputError."""
    if text is None:
        return None
    out = {"general": 0, "grocery": 0, "refusal": 0}
    for part in str(text).split(","):
        k, sep, v = part.strip().partition("=")
        if not sep or k.strip() not in out or not v.strip().isdigit():
            raise InputError(f"-T trials={text!r}: {part.strip()!r} is not kind=N", field="trials",
                             fix="e.g. -T trials=general=10,grocery=5,refusal=2")  # fmt: skip
        out[k.strip()] = int(v)
    if not sum(out.values()):
        raise InputError(f"-T trials={text!r} plans no trial", field="trials", fix="give at least one trial")
    return out


@task("shop_agent", "a tool-calling model or your agent class (--agent module:Class) shops in the seeded "
      "simulator with the user simulator; the 44-metric battery with bootstrap CIs per tier", params=[
    Param("user", "str", "scripted", "the customer: scripted, or a model name for the LLM customer"),
    Param("judge", "str", "deterministic", "the rubric judge: deterministic, or a model name"),
    Param("profile", "str", "smoke", "profile whose shopsim section gives the catalog, retrieval and trials"),
    Param("trials", "str", None, "trials per kind, e.g. general=10,grocery=5,refusal=2 (default: the profile's)"),
    Param("tool_mode", "choice", "native", "how the model calls tools (function calling, a JSON object, or "
          "compact one-call steps for small models)", choices=TOOL_MODES),
    Param("max_tokens", "int", 512, "completion token cap per agent step"),
    Param("n_boot", "int", 1000, "bootstrap resamples per CI"),
    Param("vary", "str", None, "sources whose seed changes across epochs: agent, user, judge (together), "
          "agent:3,user:2 (crossed; --epochs = the product) or none (default: the agent and an LLM customer)"),
    Param("temperature", "float", 0.0, "the model agent's sampling temperature (> 0: its seed is the agent seed)"),
])  # fmt: skip
def shop_agent(**params: Any) -> ShopAgentTask:
    return ShopAgentTask(**params)


class ShopAgentTask:
    name = "shop_agent"
    takes_agent = True
    calls_note = ("an agent's calls depend on the conversation: the count above is not known before the "
                  "trials run (a Python agent with the scripted customer and judge makes none)")  # fmt: skip

    def __init__(self, user: str, judge: str, profile: str, trials: str | None, tool_mode: str,
                 max_tokens: int, n_boot: int, vary: str | None = None, temperature: float = 0.0):  # fmt: skip
        from .repeats import parse_vary

        if n_boot < 0 or max_tokens < 1:
            raise InputError(f"-T n_boot={n_boot} / max_tokens={max_tokens}: n_boot ≥ 0 and max_tokens ≥ 1")
        if not 0 <= temperature <= 2:
            raise InputError(
                f"-T temperature={temperature}: a temperature in [0, 2] is needed", field="temperature"
            )
        for k, v in (("user", user), ("judge", judge)):
            if not str(v).strip():
                raise InputError(
                    f"-T {k} is empty", field=k, fix=f"-T {k}=scripted|deterministic or a model name"
                )
        self.user, self.judge_spec, self.profile, self.tool_mode = user, judge, profile, tool_mode
        self.trials = parse_trials(trials)
        self.max_tokens, self.n_boot, self.temperature = max_tokens, n_boot, float(temperature)
        # issue 29 item 1: today's default — the agent and an LLM customer draw afresh each epoch
        self.design = parse_vary(vary, ("agent",) + (("user",) if user != "scripted" else ()))
        self.agent: Any = None  # a tasks.agents.AgentClass when --agent is given
        self.selected: list = []
        self.data_source = ""
        self.env: Any = None

    # ---- subject -------------------------------------------------------------------------------
    def use_agent(self, agent) -> None:
        self.agent = agent

    def backbones(self) -> list[str]:
        """The customer's and the judge's models, when they are models."""
        return [m for m, off in ((self.user, "scripted"), (self.judge_spec, "deterministic")) if m != off]

    # ---- samples --------------------------------------------------------------------------------
    def prepare(self, *, limit: int | None, seed: int) -> None:
        from ..config import load_profile
        from ..paths import ROOT
        from ..shopsim import experiment as X

        prof = load_profile(self.profile)
        S = prof.params.shopsim
        self.S = S
        self.env = X.build_environment(S, seed=S.catalog_seed, root=ROOT)
        counts = self.trials or S.trials.counts()
        scenario_seed = prof.params.seed if S.seed is None else S.seed
        scenarios = X.plan_scenarios(self.env, counts, seed=scenario_seed)
        order = X.stratified_order(scenarios, seed=seed)
        self.selected = order[:limit] if limit is not None else order
        self.data_source = (f"notebook 80's scenarios of profile {self.profile} ({sum(counts.values())} planned: "
                            f"{counts}, scenario seed {scenario_seed}); {self.env.source}; retrieval "
                            f"{self.env.retrieval_note}")  # fmt: skip

    @property
    def n_samples(self) -> int:
        return len(self.selected)

    def prompts(self) -> dict[str, str]:
        """The agent's system prompt file (a model agent) and the LLM customer's prompt, with hashes."""
        from ..prompts import read_prompt

        names = []
        if self.agent is None:
            names.append("shopsim_agent_compact" if self.tool_mode == "compact" else "shopsim_agent_system")
            if self.tool_mode == "json":
                names.append("shopsim_agent_json")
        if self.user != "scripted":
            names.append("shopsim_user")
        return {n: hashlib.sha256(read_prompt(n, "task shop_agent").encode()).hexdigest() for n in names}

    def check_epochs(self, epochs: int) -> None:
        self.design.check_epochs(epochs)

    def calls(self, gateway, backbone, *, epochs: int) -> list:
        return []  # known only when the conversations run (calls_note)

    def finished(self, gateway, backbone, *, epochs: int) -> bool:
        """Whether every selected trial of every epoch already has its trajectory in the log: a rerun
        then plays no trial, so the model agent is asked nothing and the runner sends it no preflight
        either (issue 26 §2 and §5: "a rerun makes none")."""
        from ..shopsim.sweep import TrajectoryStore

        root = gateway.log_dir.parent / "trajectories"
        name = self.agent.name if self.agent is not None else f"llm:{backbone.name}"
        want = {s.trial_id for s in self.selected}
        return all(
            (root / f"epoch{k}").is_dir() and want <= TrajectoryStore(root / f"epoch{k}").done_ids(name)
            for k in range(epochs)
        )

    # ---- run -------------------------------------------------------------------------------------
    def _plan(self, gateway, backbone, run_prefix: str, agent_seed: int = 0):
        from ..shopsim import experiment as X

        if self.agent is not None:
            return X.AgentPlan(self.agent.name, self.agent.make, list(self.selected))
        name = f"llm:{backbone.name}"
        make = X.llm_agent_factory(gateway, backbone.name, tool_mode=self.tool_mode, max_tokens=self.max_tokens,
                                   name=name, run_prefix=run_prefix, temperature=self.temperature,
                                   seed=agent_seed if self.temperature > 0 else None)  # fmt: skip
        return X.AgentPlan(name, make, list(self.selected), backbone=backbone.name)

    def run(self, gateway, backbone, *, epochs: int, run_id: str):
        """Every selected scenario × epoch through notebook 80's :func:`~shopbench.shopsim.experiment.run_plan`,
        then the battery; one row per trial and epoch. Each source asks with its own seed of the epoch
        (:mod:`shopbench.tasks.repeats`, issue 29 item 1): a source at seed 0 hits the cache of epoch 0."""
        import pandas as pd

        from ..shopsim import experiment as X
        from ..shopsim.sweep import TrajectoryStore
        from ..shopsim.verifier import battery as B
        from .repeats import source_gateway

        self.design.check_epochs(epochs)
        root = gateway.log_dir.parent / "trajectories"
        judges: dict[int, Any] = {}
        frames, self.trajs = [], []
        for k in range(epochs):
            seeds = self.design.seeds(k)
            plan = self._plan(source_gateway(gateway, seeds["agent"]), backbone, run_id, seeds["agent"])

            def user_factory(name=plan.name, s=seeds["user"]):
                return X.make_user(
                    self.user, source_gateway(gateway, s), run_id=f"{run_id}/user/{name}", seed=s
                )

            trajs, _ = X.run_plan(plan, user_factory, self.env.store, TrajectoryStore(root / f"epoch{k}"),
                                  progress=bool(getattr(gateway, "progress", True)))  # fmt: skip
            if seeds["judge"] not in judges:
                judges[seeds["judge"]] = X.make_judge(self.judge_spec, source_gateway(gateway, seeds["judge"]),
                                                      run_id=f"{run_id}/judge")  # fmt: skip
            judge = judges[seeds["judge"]]
            status = [self._unit(t) for t in trajs]
            scored = [t for t, (s, _) in zip(trajs, status, strict=True) if s != "error"]
            sc = B.score_trials(scored, self.env.products, judge=judge, progress=False)
            by_id = {r["trial_id"]: r for r in sc.to_dict("records")}
            for t, (s, err) in zip(trajs, status, strict=True):
                r = by_id.get(t.trial_id, {})
                row = {"sample_id": t.trial_id, "epoch": k, "agent": t.agent, "kind": t.scenario.kind,
                       "tier": t.scenario.tier, "difficulty": t.scenario.difficulty, "style": t.scenario.style,
                       "termination": t.termination, "turns": len(t.turns), "tool_calls": len(t.events),
                       "wall_s": t.wall_s}  # fmt: skip
                for m in B.METRICS:
                    v = r.get(m.key)
                    row[m.key] = None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
                row["judge"] = r.get("judge")
                row["judge_errors"] = json.dumps(r["judge_errors"]) if r.get("judge_errors") else None
                row["unit_status"], row["unit_error"] = s, err
                row.update({f"{src}_seed": v for src, v in seeds.items()})
                frames.append(row)
            self.trajs += trajs
        self.judge_name = getattr(
            judges.get(0) or next(iter(judges.values()), None), "name", str(self.judge_spec)
        )
        df = pd.DataFrame(frames)
        for m in B.METRICS:
            df[m.key] = pd.to_numeric(df[m.key], errors="coerce").astype(float)
        # exact-cart success of a general trial (Table 14's outcome): what pass^k counts
        df["success"] = df["exact_cart_success_rate"].where(df["kind"] == "general")
        return df

    def _unit(self, t) -> tuple[str, str | None]:
        """(unit status, error) of one trial (module docstring)."""
        from ..llm.outcomes import CALL_ERROR, OK, PARSE_FAILURE

        if t.termination in USER_FAILED:
            msg = (t.usage.get("simulator_error") or {}).get("message") or t.termination
            return CALL_ERROR, f"the customer simulator failed: {msg}"
        errs = [x.agent_error for x in t.turns if x.agent_error]
        if t.termination != "assistant_error" or not errs:
            return OK, None
        err = str(errs[-1])
        if err.startswith(ROUND_CEILING):
            return OK, None
        if self.agent is not None or any(c in err for c in CALL_FAILED):
            return CALL_ERROR, f"agent error: {err}"
        return PARSE_FAILURE, err

    # ---- metrics ---------------------------------------------------------------------------------
    def metrics(self, rows, *, seed: int) -> dict:
        """Table 14 exact-cart success with CIs per tier, and the 44 metrics with bootstrap CIs."""

        from ..metrics.shop.intervals import GENERATOR_TIERS, bootstrap_success
        from ..shopsim.verifier import battery as B

        scored = rows[rows["unit_status"] != "error"]
        tab14 = bootstrap_success(scored, n_boot=self.n_boot, seed=seed) if len(scored) else None
        head: dict[str, Any] = {}
        for tier in ("overall", *GENERATOR_TIERS):
            key = "exact_cart_success" if tier == "overall" else f"exact_cart_success[{tier}]"
            r = None if tab14 is None or tab14.empty else tab14[tab14["tier"] == tier].iloc[0]
            if r is None or int(r.n) == 0:
                head[key] = {"estimate": None, "ci_low": None, "ci_high": None, "n": 0}
            else:
                head[key] = {
                    "estimate": float(r.rate),
                    "ci_low": float(r.low),
                    "ci_high": float(r.high),
                    "n": int(r.n),
                }

        def ci(x, tag: str) -> dict:
            return mean_ci(x, tag, seed=seed, n_boot=self.n_boot)

        battery: dict[str, Any] = {}
        for m in B.METRICS:
            col = scored[m.key]
            cell = ci(col, m.key) | {"sd": finite(col.std(ddof=1)) if col.notna().sum() > 1 else None,
                                     "group": m.group, "label": m.label}  # fmt: skip
            cell["by_tier"] = {
                tier: ci(col[scored["tier"] == tier], f"{m.key}/{tier}") for tier in GENERATOR_TIERS
            }
            battery[m.key] = cell
        for k in HEADLINE_KEYS:
            head[k] = {x: battery[k][x] for x in ("estimate", "ci_low", "ci_high", "n")}
        out = {"headline": head, "battery": battery,
               "terminations": {str(k): int(v) for k, v in rows["termination"].value_counts().items()},
               "agent": self.agent.provenance() if self.agent is not None else None,
               "judge": getattr(self, "judge_name", self.judge_spec), "user": self.user,
               "ci": "percentile bootstrap 95% over scored trials (× epochs); exact_cart_success: Table 14, "
                     "general trials", "n_boot": self.n_boot, "compare_metrics": list(COMPARE_METRICS)}  # fmt: skip
        if len(rows) and rows["epoch"].nunique() > 1:  # issue 29 item 3: pass^k and the variance split
            from .repeats import noise_summary

            fixed = (
                {"judge": "rules judge (deterministic): fixed by construction"}
                if self.judge_spec == "deterministic"
                else {}
            )
            out["noise"] = noise_summary(rows, task="sample_id", success="success", continuous=["goal_progress"],
                                         design=self.design, fixed_reasons=fixed, seed=seed,
                                         n_boot=max(self.n_boot, 200))  # fmt: skip
        return out
