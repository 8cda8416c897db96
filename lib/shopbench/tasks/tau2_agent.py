"""Task ``tau2_agent`` (issue 28 item 4): an agent serves the customers of any τ²-family domain —
``-T domain=airline|banking_knowledge|retail|telecom`` — on the domain's reward.

subject: a tool-calling model (``--model ...``; ``-T tool_mode=native|json``) behind the domain's tools
(:class:`shopbench.domains.tau2_retail.LLMRetailAgent` given the domain's specs), or ``--agent
module:Class`` (:mod:`shopbench.tasks.agents`): it gets τ²-bench's system prompt (instruction + the
domain's policy) as ``messages[0]``, and, when the class has ``set_tools(specs)``, the domain's tool
specs before each episode (docs/guides/agent.md).

samples: the tasks of ``-T data=DIR`` (default ``../shared/data/tau2_<domain>``; a missing or malformed
folder is the domain's own one-line error, exit 2) of ``-T split`` (the domain's splits; telecom's
``small`` is the 20 published tasks, its others are built from ids), in file order (``--seed 0``) or a
seeded permutation, the first ``--limit``.

the customer: ``-T user=scripted`` (:class:`~shopbench.domains.parties.ScriptedDomainUser`; on a task
whose expected actions include user actions it performs them when asked — it reads the gold actions,
so that episode's evidence is ``known-answer``) or a model (:class:`~shopbench.domains.parties.LLMDomainUser`,
evidence ``llm-user``); banking and telecom users call their own tools in their turn (dual control).

run: one conversation per task and epoch (:func:`shopbench.env.run_conversation`), then the domain's
reward on the task's basis (:meth:`shopbench.domains.base.Domain.reward`; NL_ASSERTION is not judged
here: left out and counted as ``unjudged``). Episodes are appended to ``<log>/episodes/epoch<k>.jsonl``;
a rerun plays none again. Units as ``tau2_retail_agent``'s: ``error`` (agent raised, its model call
failed, or the customer simulator failed: counted, never a reward), ``parse_error`` (the model broke
its tool contract: reward 0, scored), ``ok``.

metrics: the mean reward with its bootstrap CI, per evidence kind too; premature endings; pass^k for
k = 1..epochs over the tasks every epoch scored; terminations; tool errors per episode.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from typing import Any

from ..errors import InputError
from .registry import Param, task
from .scoring import CALL_FAILED, conversation_unit, mean_ci, pass_hat_k_cells

DOMAIN_NAMES = ("airline", "banking_knowledge", "retail", "telecom")
SPLITS = ("all", "test", "train", "base", "small", "full")


class Tau2EpisodeTask:
    """What ``tau2_agent`` and ``tau2_retail_agent`` share (issue 26 §1, issue 29): the checks of their
    common parameters, the subject, the episode loop (each finished episode appended to
    ``<log>/episodes/epoch<k>.jsonl``, a rerun plays none again; a seed per source and epoch), the
    episode's unit and the metrics' frame (headline with pass^k, the noise split, terminations). A task
    gives its samples' ids (``task_id``), one episode's record (``_episode``), its headline cells
    (``_headline``), the judge's fixed reason (``_fixed_reasons``) and its own metric keys (``_details``)."""

    takes_agent = True
    calls_note = (
        "an agent's calls depend on the conversation: the count above is not known before the episodes run"
    )
    numeric: tuple[str, ...] = ("db",)  # record fields read as floats
    continuous: tuple[str, ...] = ()  # fields whose variance the noise summary splits besides success
    compare_metrics: tuple[str, ...] = ("success", "reward")
    settings: tuple[str, ...] = ()  # attributes the metrics report after the user
    label = "tau2"  # the progress bar's

    def __init__(self, user: str, max_turns: int, max_tokens: int, n_boot: int, vary: str | None,
                 sources: tuple[str, ...]):  # fmt: skip
        from .repeats import parse_vary

        if n_boot < 0 or max_tokens < 1 or max_turns < 1:
            raise InputError(f"-T n_boot={n_boot} / max_tokens={max_tokens} / max_turns={max_turns}: "
                             "n_boot ≥ 0, max_tokens ≥ 1, max_turns ≥ 1")  # fmt: skip
        if not str(user).strip():
            raise InputError("-T user is empty", field="user", fix="-T user=scripted or a model name")
        self.user, self.max_turns, self.max_tokens, self.n_boot = user, max_turns, max_tokens, n_boot
        self.design = parse_vary(vary, sources)  # issue 29 item 1; default: the sources that varied before
        self.agent: Any = None
        self.selected: list[dict] = []
        self.data_source = ""

    def use_agent(self, agent) -> None:
        self.agent = agent

    @property
    def n_samples(self) -> int:
        return len(self.selected)

    def check_epochs(self, epochs: int) -> None:
        self.design.check_epochs(epochs)

    def calls(self, gateway, backbone, *, epochs: int) -> list:
        return []

    def _select(self, raws: list[dict], limit: int | None, seed: int) -> None:
        """The tasks in file order (``seed`` 0) or a seeded permutation (as ``Tau2Source.tasks``); the first ``limit``."""
        if seed:
            random.Random(f"tau2-tasks:{seed}").shuffle(raws)
        self.selected = raws[:limit] if limit is not None else raws

    def _own_agent(self, rid: str) -> Any:
        """The user's agent class (``--agent``), made and reset for episode ``rid``."""
        agent = self.agent.make()
        agent.reset(rid)
        return agent

    # ---- run -------------------------------------------------------------------------------------
    def run(self, gateway, backbone, *, epochs: int, run_id: str):
        import pandas as pd

        from ..progress import tqdm
        from ..shopsim.sweep import append_record, read_records
        from .repeats import source_gateway

        self.design.check_epochs(epochs)
        root = gateway.log_dir.parent / "episodes"
        root.mkdir(parents=True, exist_ok=True)
        rows = []
        for k in range(epochs):
            store = root / f"epoch{k}.jsonl"
            done = {r["sample_id"]: r for r in read_records(store)}
            seeds = self.design.seeds(k)  # issue 29 item 1: a seed per source; seed 0 hits epoch 0's cache
            gws = {s: source_gateway(gateway, v) for s, v in seeds.items()}
            todo = [r for r in self.selected if self.task_id(r) not in done]
            for raw in tqdm(todo, desc=f"{self.label} episodes (epoch {k})", unit="episode",
                            disable=not todo or not getattr(gateway, "progress", True)):  # fmt: skip
                tid = self.task_id(raw)
                rec = self._episode(raw, tid, k, seeds, gws, backbone, run_id)
                append_record(store, rec, default=str)
                done[tid] = rec
            rows += [done[self.task_id(r)] for r in self.selected if self.task_id(r) in done]
        df = pd.DataFrame(rows)
        for c in self.numeric:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
        # a call-error unit has no reward: it is counted, never averaged
        df.loc[df["unit_status"] == "error", "reward"] = float("nan")
        df["success"] = (df["reward"] >= 1.0).astype(float).where(df["reward"].notna())  # what pass^k counts
        return df

    def _unit(self, conv) -> tuple[str, str | None]:
        return conversation_unit(conv, own_agent=self.agent is not None, call_failed=CALL_FAILED)

    # ---- metrics ---------------------------------------------------------------------------------
    def metrics(self, rows, *, seed: int) -> dict:
        scored = rows[rows["unit_status"] != "error"]

        def ci(x, tag: str) -> dict:
            return mean_ci(x, tag, seed=seed, n_boot=self.n_boot)

        epochs = int(rows["epoch"].max()) + 1 if len(rows) else 0
        head = {**self._headline(scored, ci), **pass_hat_k_cells(scored, epochs)}
        n_unjudged = int(scored["unjudged"].notna().sum())
        noise = None
        if epochs > 1:  # issue 29 item 3: pass^k with its CI and the variance split by source
            from .repeats import noise_summary

            noise = noise_summary(rows, task="sample_id", success="success", continuous=list(self.continuous),
                                  design=self.design, fixed_reasons=self._fixed_reasons(), seed=seed,
                                  n_boot=max(self.n_boot, 200))  # fmt: skip
        return {"headline": head, "noise": noise, "compare_metrics": list(self.compare_metrics),
                **self._details(scored, ci, n_unjudged),
                "terminations": {str(k): int(v) for k, v in rows["termination"].value_counts().items()},
                "agent": self.agent.provenance() if self.agent is not None else None, "user": self.user,
                **{k: getattr(self, k) for k in self.settings},
                "ci": "percentile bootstrap 95% over scored episodes (tasks × epochs)", "n_boot": self.n_boot}  # fmt: skip

    # ---- what each task gives (class docstring) -------------------------------------------------
    task_id: Callable[[dict], str]
    _episode: Callable[..., dict]  # (raw, tid, epoch, seeds, gateways by source, backbone, run_id) → record
    _headline: Callable[[Any, Callable], dict]  # (scored rows, ci) → headline cells before pass^k
    _fixed_reasons: Callable[[], dict[str, str]]
    _details: Callable[[Any, Callable, int], dict]  # (scored rows, ci, n_unjudged) → the task's own keys


@task("tau2_agent", "a tool-calling model or your agent class (--agent module:Class) serves the customers of a "
      "tau2 domain (-T domain=airline|banking_knowledge|retail|telecom); reward on each task's basis, pass^k", params=[
    Param("domain", "choice", "retail", "the tau2 domain", choices=DOMAIN_NAMES),
    Param("data", "path", None, "the domain's folder (default ../shared/data/tau2_<domain> beside the repository)"),
    Param("split", "choice", "all", "which tasks (telecom: small = the 20 published; others built from ids)",
          choices=SPLITS),
    Param("user", "str", "scripted", "the customer: scripted, or a model name for the LLM customer"),
    Param("tool_mode", "choice", "native", "how the model calls tools", choices=("native", "json")),
    Param("retrieval", "str", None, "banking_knowledge: the retrieval variant (default bm25_grep)"),
    Param("max_turns", "int", 20, "customer turns before the customer ends the conversation"),
    Param("max_tokens", "int", 1024, "completion token cap per agent step"),
    Param("n_boot", "int", 1000, "bootstrap resamples per CI"),
    Param("vary", "str", None, "sources whose seed changes across epochs: agent, user (together), agent:3,user:2 "
          "(crossed; --epochs = the product) or none; default agent,user (issue 29)"),
])  # fmt: skip
def tau2_agent(**params: Any) -> Tau2AgentTask:
    return Tau2AgentTask(**params)


class Tau2AgentTask(Tau2EpisodeTask):
    name = "tau2_agent"
    continuous = ("reward",)

    def __init__(self, domain: str, data: str | None, split: str, user: str, tool_mode: str, retrieval: str | None,
                 max_turns: int, max_tokens: int, n_boot: int, vary: str | None = None):  # fmt: skip
        super().__init__(user, max_turns, max_tokens, n_boot, vary, ("agent", "user"))
        if retrieval is not None and domain != "banking_knowledge":
            raise InputError(f"-T retrieval is for banking_knowledge, not {domain}", field="retrieval",
                             fix="leave it out")  # fmt: skip
        self.domain_name, self.data_dir, self.split = domain, data, split
        self.tool_mode, self.retrieval, self.label = tool_mode, retrieval, domain

    def backbones(self) -> list[str]:
        return [] if self.user == "scripted" else [self.user]

    # ---- samples --------------------------------------------------------------------------------
    def prepare(self, *, limit: int | None, seed: int) -> None:
        from ..domains.base import load_domain

        opts = {"retrieval": self.retrieval} if self.domain_name == "banking_knowledge" else {}
        self.dom = load_domain(self.domain_name, self.data_dir, **opts)
        self._select(self.dom.tasks(self.split), limit, seed)
        self.data_source = f"tau2-bench {self.domain_name} tasks ({self.split}) of {self.dom.path}"

    def task_id(self, raw: dict) -> str:
        return self.dom.task_id(raw)

    def prompts(self) -> dict[str, str]:
        """The agent's system prompt (instruction + the domain's policy), hashed."""
        first = self.selected[0] if self.selected else {}
        text = self.dom.system_prompt(first) if first else ""
        return {f"tau2_agent_system ({self.domain_name} policy)": hashlib.sha256(text.encode()).hexdigest()}

    # ---- run -------------------------------------------------------------------------------------
    def _parties(
        self, raw: dict, rid: str, gw, backbone, run_id: str, user_rid: str | None = None, user_gw: Any = None
    ) -> tuple[Any, Any, str]:
        """The customer (seeded by ``user_rid`` on ``user_gw``: its own noise source) and the agent."""
        from ..domains.parties import LLMDomainUser, ScriptedDomainUser
        from ..domains.tau2_retail import LLMRetailAgent

        ins = self.dom.user_instructions(raw)
        user_actions = [a for a in self.dom.gold_actions(raw) if a["requestor"] == "user"]
        if self.user == "scripted":
            user: Any = ScriptedDomainUser(
                ins,
                random.Random(f"{user_rid or rid}:user"),
                user_actions,
                max_turns=self.max_turns,
                account_questions=self.domain_name != "retail",
            )
            evidence = "known-answer" if user.known_answer else "scripted-user"
        else:
            user = LLMDomainUser(user_gw if user_gw is not None else gw, self.user, ins, run_id=f"{run_id}/user",
                                 item_prefix=user_rid or rid, domain=self.domain_name,
                                 tools=self.dom.user_tool_specs(raw), max_turns=self.max_turns)  # fmt: skip
            evidence = "llm-user"
        specs = self.dom.tool_specs(raw)
        if self.agent is not None:
            agent = self._own_agent(rid)
            set_tools = getattr(agent.inner, "set_tools", None)
            if callable(set_tools) and agent._reset_error is None:
                try:
                    set_tools(specs)
                except Exception as e:  # a user's hook failing is that episode's agent error
                    agent._reset_error = f"set_tools raised {type(e).__name__}: {e}"
        else:
            agent = LLMRetailAgent(gw, backbone.name, self.dom.system_prompt(raw), run_id=f"{run_id}/agent",
                                   item_prefix=rid, tool_mode=self.tool_mode, max_tokens=self.max_tokens, specs=specs)  # fmt: skip
        return user, agent, evidence

    def _episode(self, raw: dict, tid: str, k: int, seeds: dict, gws: dict, backbone, run_id: str) -> dict:
        from ..env.orchestrator import run_conversation

        rid = f"{tid}:e{k}"
        env = self.dom.environment(raw, agent_opens=False)
        user, agent, evidence = self._parties(raw, rid, gws["agent"], backbone, run_id,
                                              user_rid=f"{tid}:e{seeds['user']}", user_gw=gws["user"])  # fmt: skip
        conv = run_conversation(env, agent, user, self.dom.system_prompt(raw))
        reward, bd = self.dom.reward(raw, env, conv)
        status, err = self._unit(conv)
        tools = conv.tools
        return {"sample_id": tid, "epoch": k, "domain": self.domain_name, "tau2_id": str(raw["id"]),
                "reward": float(reward), "evidence": evidence, "basis": ",".join(bd.get("basis") or []),
                "db": bd.get("db"), "unjudged": ",".join(bd.get("unjudged") or []) or None,
                "premature": bool(bd.get("premature")), "termination": conv.termination,
                "agent_steps": conv.steps, "tool_calls": sum(r.role == "assistant" for r in tools),
                "user_tool_calls": sum(r.role == "user" for r in tools),
                "tool_errors": sum(not _ok(r.outcome.result) for r in tools),
                "actions_taken": json.dumps([[r.role, r.call.name] for r in tools]),
                "unit_status": status, "unit_error": err, "user": getattr(user, "name", self.user),
                "breakdown": json.dumps(bd, default=str),
                "messages": json.dumps(conv.messages, default=str),
                **{f"{s}_seed": v for s, v in seeds.items()}}  # fmt: skip

    # ---- metrics ---------------------------------------------------------------------------------
    def _headline(self, scored, ci) -> dict:
        return {"reward": ci(scored["reward"], "reward"),
                "premature_end": ci(scored["premature"].astype(float), "premature")}  # fmt: skip

    def _fixed_reasons(self) -> dict[str, str]:
        return {"judge": "no judge: the domain's reward is computed, NL assertions are left out"}

    def _details(self, scored, ci, n_unjudged: int) -> dict:
        return {"reward_by_evidence": {str(e): ci(g["reward"], f"reward:{e}") for e, g in scored.groupby("evidence")},
                "domain": self.domain_name, "unjudged_nl_assertion": n_unjudged,
                "reward_note": ("reward = product over each task's reward_basis (the domain's reward)"
                                + (f"; NL_ASSERTION not judged on {n_unjudged} episodes (factor left out)" if n_unjudged else "")
                                + "; evidence known-answer: the scripted user performed the task's gold user actions"),
                "tool_errors_per_episode": float(scored["tool_errors"].mean()) if len(scored) else None}  # fmt: skip


def _ok(result: Any) -> bool:
    """Whether a tool outcome's result ``(ok, content)`` was a success."""
    return bool(result[0]) if isinstance(result, tuple | list) and result else True
