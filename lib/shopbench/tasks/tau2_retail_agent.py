"""Task ``tau2_retail_agent`` (issue 26 §1): an agent serves τ²-bench retail customers; the task reward.

subject: a tool-calling model (``--model ...``; ``-T tool_mode=native|json``) as
:class:`shopbench.domains.tau2_retail.LLMRetailAgent` with τ²-bench's system prompt (instruction +
policy) and tool texts, or ``--agent module:Class`` (:mod:`shopbench.tasks.agents`; it is given the
same system prompt as the first message and the 16 retail tools by name, see docs/guides/agent.md).

samples: the tasks of ``-T data=DIR`` (τ²-bench's published retail folder; default
``../shared/data/tau2_retail`` beside the repository, where the profiles point; a missing or malformed
folder is a :class:`~shopbench.domains.tau2_retail.Tau2DataError`, exit 2) of ``-T split`` (``test``,
``train``, ``base`` or ``all``), in file order (``--seed 0``) or a seeded permutation, the first
``--limit``. The customer is ``-T user=scripted`` (:class:`~shopbench.domains.tau2_retail.ScriptedRetailUser`)
or a model (:class:`~shopbench.domains.tau2_retail.LLMRetailUser`).

run: each episode is :meth:`shopbench.padme.sources.tau2.Tau2Source.episode` — PADMÉ's rollout path: the
one conversation loop, then τ²-bench's reward **over the basis each task names**
(:func:`~shopbench.domains.tau2_retail.environment.task_reward`: DB, and NL_ASSERTION judged by
``-T nl_judge=MODEL|known-answer``; without a judge the NL_ASSERTION factor is left out and counted as
``unjudged``, App. C.3's deterministic audit). Finished episodes are appended to
``<log>/episodes/epoch<k>.jsonl``: a rerun plays none again. Units (:mod:`shopbench.llm.outcomes`):
``error`` — the agent raised or returned an error step (a Python agent), its model call failed, or the
customer simulator failed: recorded and counted, never a reward; ``parse_error`` — the model answered
outside its tool contract (reward 0, scored); ``ok`` — the rest.

metrics: the mean reward with its bootstrap CI (over tasks × epochs), the DB-match rate, the NL-assertion
pass rate over the judged episodes of tasks that have assertions, premature endings, pass^k for k = 1..epochs (τ²-bench's estimator over
the tasks every epoch scored), terminations.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

from .registry import Param, task
from .tau2_agent import Tau2EpisodeTask

SPLITS = ("test", "train", "base", "all")
DEFAULT_DATA = "../shared/data/tau2_retail"  # relative to the repository root, as in the profiles


@task("tau2_retail_agent", "a tool-calling model or your agent class (--agent module:Class) serves tau2-bench "
      "retail customers; reward over the basis each task names, pass^k", params=[
    Param("data", "path", None, f"tau2-bench retail folder (default {DEFAULT_DATA} beside the repository)"),
    Param("split", "choice", "test", "which tasks (split_tasks.json), or all", choices=SPLITS),
    Param("user", "str", "scripted", "the customer: scripted, or a model name for the LLM customer"),
    Param("nl_judge", "str", None, "judge of the NL_ASSERTION factor: a model name or known-answer (default: "
          "not judged, the factor left out and counted)"),
    Param("fidelity", "choice", "tau2", "tool behaviour: tau2-bench's, or the project's corrections",
          choices=("tau2", "corrected")),
    Param("tool_mode", "choice", "native", "how the model calls tools", choices=("native", "json")),
    Param("tool_texts", "choice", "tau2", "tool descriptions the model sees", choices=("tau2", "short")),
    Param("max_turns", "int", 20, "customer turns before the customer ends the conversation"),
    Param("max_tokens", "int", 1024, "completion token cap per agent step"),
    Param("n_boot", "int", 1000, "bootstrap resamples per CI"),
    Param("vary", "str", None, "sources whose seed changes across epochs: agent, user, judge (together), "
          "agent:3,user:2 (crossed; --epochs = the product) or none (default: all three)"),
])  # fmt: skip
def tau2_retail_agent(**params: Any) -> Tau2RetailAgentTask:
    return Tau2RetailAgentTask(**params)


def default_data() -> Path:
    from ..paths import ROOT

    return (ROOT / DEFAULT_DATA).resolve()


class Tau2RetailAgentTask(Tau2EpisodeTask):
    name = "tau2_retail_agent"
    numeric = ("db", "nl_assertion", "communicate")
    compare_metrics = ("success", "reward", "db", "nl_assertion")
    settings = ("nl_judge", "fidelity")

    def __init__(self, data: str | None, split: str, user: str, nl_judge: str | None, fidelity: str,
                 tool_mode: str, tool_texts: str, max_turns: int, max_tokens: int, n_boot: int,
                 vary: str | None = None):  # fmt: skip
        super().__init__(user, max_turns, max_tokens, n_boot, vary, ("agent", "user", "judge"))
        self.data_path = Path(data).expanduser() if data is not None else default_data()
        self.split, self.nl_judge, self.fidelity = split, nl_judge or None, fidelity
        self.tool_mode, self.tool_texts = tool_mode, tool_texts

    def backbones(self) -> list[str]:
        out = [] if self.user == "scripted" else [self.user]
        if self.nl_judge and self.nl_judge != "known-answer":
            out.append(self.nl_judge)
        return out

    # ---- samples --------------------------------------------------------------------------------
    def prepare(self, *, limit: int | None, seed: int) -> None:
        from ..padme.sources.tau2 import Tau2Source

        self.source = Tau2Source(self.data_path, split=None if self.split == "all" else self.split,
                                 tool_mode=self.tool_mode, max_turns=self.max_turns, fidelity=self.fidelity,
                                 reward_basis="task", nl_judge=self.nl_judge, tool_texts=self.tool_texts)  # fmt: skip
        self._select(list(self.source._raw), limit, seed)
        self.data_source = f"tau2-bench retail tasks ({self.split}) of {self.data_path}"

    def task_id(self, raw: dict) -> str:
        return self.source.task_id(raw)

    def prompts(self) -> dict[str, str]:
        """τ²-bench's agent system prompt (instruction + the data's policy.md), hashed."""
        return {
            "tau2_agent_system (policy.md)": hashlib.sha256(self.source.system_prompt().encode()).hexdigest()
        }

    # ---- run -------------------------------------------------------------------------------------
    def _parties(self, raw, rid: str, gw, backbone, run_id: str, user_rid: str | None = None, user_gw=None):
        """The customer (its draw: ``user_rid``, the task and the user seed, and ``user_gw``) and the agent."""
        from ..domains.tau2_retail import LLMRetailAgent, LLMRetailUser, ScriptedRetailUser

        instructions = raw["user_scenario"]["instructions"]
        user_rid = user_rid or rid
        if self.user == "scripted":
            user: Any = ScriptedRetailUser(
                instructions, random.Random(f"{user_rid}:user"), max_turns=self.max_turns
            )
        else:
            user = LLMRetailUser(user_gw or gw, self.user, instructions, run_id=f"{run_id}/user", item_prefix=user_rid,
                                 max_turns=self.max_turns)  # fmt: skip
        if self.agent is not None:
            agent = self._own_agent(rid)
        else:
            agent = LLMRetailAgent(gw, backbone.name, self.source.system_prompt(), run_id=f"{run_id}/agent",
                                   item_prefix=rid, tool_mode=self.tool_mode, max_tokens=self.max_tokens,
                                   tool_texts=self.tool_texts)  # fmt: skip
        return user, agent

    def _episode(self, raw: dict, tid: str, k: int, seeds: dict, gws: dict, backbone, run_id: str) -> dict:
        from ..domains.tau2_retail import RetailEnvironment

        rid = f"{tid}:e{k}"
        env = RetailEnvironment(self.source.data, agent_opens=False, fidelity=self.fidelity)
        user, agent = self._parties(raw, rid, gws["agent"], backbone, run_id, user_rid=f"{tid}:e{seeds['user']}",
                                    user_gw=gws["user"])  # fmt: skip
        conv, reward, bd, gold_errors = self.source.episode(raw, env, agent, user, self.source.system_prompt(),
                                                            rid, 0, gws["judge"])  # fmt: skip
        status, err = self._unit(conv)
        return {"sample_id": tid, "epoch": k, "tau2_id": str(raw["id"]), "reward": float(reward),
                "db": bd.get("db"), "nl_assertion": bd.get("nl_assertion"),
                "n_nl_assertions": len(raw["evaluation_criteria"].get("nl_assertions") or []), "communicate": bd.get("communicate"),
                "basis": ",".join(bd.get("basis") or []), "unjudged": ",".join(bd.get("unjudged") or []) or None,
                "premature": bool(bd.get("premature")), "termination": conv.termination,
                "agent_steps": conv.steps, "tool_calls": len(conv.tools),
                "actions_taken": json.dumps([r.call.name for r in conv.tools]),
                "nl_error": bd.get("nl_error"), "gold_replay_errors": len(gold_errors),
                "unit_status": status, "unit_error": err, **{f"{s}_seed": v for s, v in seeds.items()},
                "messages": json.dumps(conv.messages, default=str)}  # fmt: skip

    # ---- metrics ---------------------------------------------------------------------------------
    def _headline(self, scored, ci) -> dict:
        return {"reward": ci(scored["reward"], "reward"), "db_match": ci(scored["db"], "db"),
                "nl_assertion_pass": ci(scored["nl_assertion"][scored["unjudged"].isna() & (scored["n_nl_assertions"] > 0)],
                                        "nl"),
                "premature_end": ci(scored["premature"].astype(float), "premature")}  # fmt: skip

    def _fixed_reasons(self) -> dict[str, str]:
        if self.nl_judge == "known-answer":
            return {"judge": "known-answer NL judge: deterministic, fixed by construction"}
        return {} if self.nl_judge else {"judge": "no NL judge: the NL_ASSERTION factor is not judged"}

    def _details(self, scored, ci, n_unjudged: int) -> dict:
        return {"unjudged_nl_assertion": n_unjudged,
                "reward_note": ("reward = product over each task's reward_basis"
                                + (f"; NL_ASSERTION not judged on {n_unjudged} episodes (factor left out; "
                                   "-T nl_judge=MODEL judges it)" if n_unjudged else ""))}  # fmt: skip
