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
import os
import random
from pathlib import Path
from typing import Any

from ..errors import InputError
from .registry import Param, task
from .scoring import conversation_unit, mean_ci, pass_hat_k_cells

SPLITS = ("test", "train", "base", "all")
DEFAULT_DATA = "../shared/data/tau2_retail"  # relative to the repository root, as in the profiles
CALL_FAILED = ("model call failed", "the gateway failed")


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


class Tau2RetailAgentTask:
    name = "tau2_retail_agent"
    takes_agent = True
    calls_note = (
        "an agent's calls depend on the conversation: the count above is not known before the episodes run"
    )

    def __init__(self, data: str | None, split: str, user: str, nl_judge: str | None, fidelity: str,
                 tool_mode: str, tool_texts: str, max_turns: int, max_tokens: int, n_boot: int,
                 vary: str | None = None):  # fmt: skip
        from .repeats import parse_vary

        if n_boot < 0 or max_tokens < 1 or max_turns < 1:
            raise InputError(f"-T n_boot={n_boot} / max_tokens={max_tokens} / max_turns={max_turns}: "
                             "n_boot ≥ 0, max_tokens ≥ 1, max_turns ≥ 1")  # fmt: skip
        if not str(user).strip():
            raise InputError("-T user is empty", field="user", fix="-T user=scripted or a model name")
        self.data_path = Path(data).expanduser() if data is not None else default_data()
        self.split, self.user, self.nl_judge, self.fidelity = split, user, nl_judge or None, fidelity
        self.tool_mode, self.tool_texts, self.max_turns = tool_mode, tool_texts, max_turns
        self.max_tokens, self.n_boot = max_tokens, n_boot
        self.design = parse_vary(vary, ("agent", "user", "judge"))  # issue 29 item 1; default: as before
        self.agent: Any = None
        self.selected: list[dict] = []
        self.data_source = ""

    def use_agent(self, agent) -> None:
        self.agent = agent

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
        raws = list(self.source._raw)
        if seed:
            random.Random(f"tau2-tasks:{seed}").shuffle(raws)  # Tau2Source.tasks' order
        self.selected = raws[:limit] if limit is not None else raws
        self.data_source = f"tau2-bench retail tasks ({self.split}) of {self.data_path}"

    @property
    def n_samples(self) -> int:
        return len(self.selected)

    def prompts(self) -> dict[str, str]:
        """τ²-bench's agent system prompt (instruction + the data's policy.md), hashed."""
        return {
            "tau2_agent_system (policy.md)": hashlib.sha256(self.source.system_prompt().encode()).hexdigest()
        }

    def check_epochs(self, epochs: int) -> None:
        self.design.check_epochs(epochs)

    def calls(self, gateway, backbone, *, epochs: int) -> list:
        return []

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
            agent = self.agent.make()
            agent.reset(rid)
        else:
            agent = LLMRetailAgent(gw, backbone.name, self.source.system_prompt(), run_id=f"{run_id}/agent",
                                   item_prefix=rid, tool_mode=self.tool_mode, max_tokens=self.max_tokens,
                                   tool_texts=self.tool_texts)  # fmt: skip
        return user, agent

    def run(self, gateway, backbone, *, epochs: int, run_id: str):
        import pandas as pd

        from ..domains.tau2_retail import RetailEnvironment
        from ..progress import tqdm
        from .repeats import source_gateway

        self.design.check_epochs(epochs)
        root = gateway.log_dir.parent / "episodes"
        root.mkdir(parents=True, exist_ok=True)
        rows = []
        for k in range(epochs):
            store = root / f"epoch{k}.jsonl"
            done = {r["sample_id"]: r for r in _read_jsonl(store)}
            seeds = self.design.seeds(k)  # issue 29 item 1: a seed per source; seed 0 hits epoch 0's cache
            gw = source_gateway(gateway, seeds["agent"])
            todo = [r for r in self.selected if self.source.task_id(r) not in done]
            for raw in tqdm(
                todo,
                desc=f"tau2 episodes (epoch {k})",
                unit="episode",
                disable=not todo or not getattr(gateway, "progress", True),
            ):
                tid = self.source.task_id(raw)
                rid = f"{tid}:e{k}"
                env = RetailEnvironment(self.source.data, agent_opens=False, fidelity=self.fidelity)
                user, agent = self._parties(raw, rid, gw, backbone, run_id, user_rid=f"{tid}:e{seeds['user']}",
                                            user_gw=source_gateway(gateway, seeds["user"]))  # fmt: skip
                conv, reward, bd, gold_errors = self.source.episode(raw, env, agent, user, self.source.system_prompt(),
                                                                    rid, 0, source_gateway(gateway, seeds["judge"]))  # fmt: skip
                status, err = self._unit(conv)
                rec = {"sample_id": tid, "epoch": k, "tau2_id": str(raw["id"]), "reward": float(reward),
                       "db": bd.get("db"), "nl_assertion": bd.get("nl_assertion"),
                       "n_nl_assertions": len(raw["evaluation_criteria"].get("nl_assertions") or []), "communicate": bd.get("communicate"),
                       "basis": ",".join(bd.get("basis") or []), "unjudged": ",".join(bd.get("unjudged") or []) or None,
                       "premature": bool(bd.get("premature")), "termination": conv.termination,
                       "agent_steps": conv.steps, "tool_calls": len(conv.tools),
                       "actions_taken": json.dumps([r.call.name for r in conv.tools]),
                       "nl_error": bd.get("nl_error"), "gold_replay_errors": len(gold_errors),
                       "unit_status": status, "unit_error": err, **{f"{s}_seed": v for s, v in seeds.items()},
                       "messages": json.dumps(conv.messages, default=str)}  # fmt: skip
                _append(store, rec)
                done[tid] = rec
            rows += [done[self.source.task_id(r)] for r in self.selected if self.source.task_id(r) in done]
        df = pd.DataFrame(rows)
        for c in ("db", "nl_assertion", "communicate"):
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

        head = {"reward": ci(scored["reward"], "reward"), "db_match": ci(scored["db"], "db"),
                "nl_assertion_pass": ci(scored["nl_assertion"][scored["unjudged"].isna() & (scored["n_nl_assertions"] > 0)],
                                        "nl"),
                "premature_end": ci(scored["premature"].astype(float), "premature")}  # fmt: skip
        epochs = int(rows["epoch"].max()) + 1 if len(rows) else 0
        head.update(pass_hat_k_cells(scored, epochs))
        n_unjudged = int(scored["unjudged"].notna().sum())
        noise = None
        if epochs > 1:  # issue 29 item 3: pass^k with its CI and the variance split by source
            from .repeats import noise_summary

            fixed = (
                {"judge": "no NL judge: the NL_ASSERTION factor is not judged"} if not self.nl_judge else {}
            )
            if self.nl_judge == "known-answer":
                fixed["judge"] = "known-answer NL judge: deterministic, fixed by construction"
            noise = noise_summary(rows, task="sample_id", success="success", continuous=[], design=self.design,
                                  fixed_reasons=fixed, seed=seed, n_boot=max(self.n_boot, 200))  # fmt: skip
        return {"headline": head, "noise": noise, "compare_metrics": ["success", "reward", "db", "nl_assertion"], "unjudged_nl_assertion": n_unjudged,
                "reward_note": ("reward = product over each task's reward_basis"
                                + (f"; NL_ASSERTION not judged on {n_unjudged} episodes (factor left out; "
                                   "-T nl_judge=MODEL judges it)" if n_unjudged else "")),
                "terminations": {str(k): int(v) for k, v in rows["termination"].value_counts().items()},
                "agent": self.agent.provenance() if self.agent is not None else None, "user": self.user,
                "nl_judge": self.nl_judge, "fidelity": self.fidelity,
                "ci": "percentile bootstrap 95% over scored episodes (tasks × epochs)", "n_boot": self.n_boot}  # fmt: skip


def _read_jsonl(p: Path) -> list[dict]:
    """The finished episodes of ``p``; a line cut by a kill ends the read and is truncated away."""
    if not p.exists():
        return []
    rows, good = [], 0
    with p.open("rb") as f:
        for line in f:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                break
            good += len(line)
    if good != p.stat().st_size:
        with p.open("r+b") as f:
            f.truncate(good)
    return rows


def _append(p: Path, rec: dict) -> None:
    with p.open("a", encoding="utf-8") as f:
        f.write(json.dumps(rec, default=str) + "\n")
        f.flush()
        os.fsync(f.fileno())
