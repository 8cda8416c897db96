"""Run a task: ``shopbench.eval(...)`` and ``shopbench eval ...`` are this one function (issue 26 §2–3).

:func:`eval` builds the task from its parameters, selects the samples (``limit``), asks the model
through the one gateway (cache, cost cap, retries, redaction, call log, progress bar), scores, computes
the metrics with CIs and writes the results log directory:

- ``samples.jsonl`` and ``samples.parquet``: one row per sample and epoch with its scores;
- ``metrics.json``: the headline values with CIs, and the count of ok / parse-failure / call-error units;
- ``run.json``: provenance (task, parameters, model, server, prompt files and hashes, seed, limit,
  epochs, git commit, gateway run id, versions);
- ``calls/<run_id>.jsonl``: the gateway's call log;
- ``inspect.jsonl`` and, with the ``inspect`` extra, ``inspect.eval``: the same run as an inspect_ai eval
  log (issue 30 item 1, :mod:`shopbench.interop.inspect_log`).

The run id is a hash of the task, its parameters, the model, server, limit, epochs, seed and the
prompt files' hashes, so the same command lands in the same directory and resumes there: after a
``kill -9`` the rerun repeats no call (the gateway skips logged items and re-reads answers from the
cache). Heavy imports (pandas, litellm) happen here, never in :mod:`shopbench.tasks.registry`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ParamError, UserError
from .registry import get_task

__all__ = ["EvalResult", "NoUsableAnswer", "eval", "preview", "run_identity"]


class NoUsableAnswer(RuntimeError):
    """Every unit of a run failed (call error or parse failure): the metrics hold no number."""


@dataclass
class EvalResult:
    """What :func:`eval` returns: ``samples`` (a DataFrame, one row per sample and epoch, with its
    scores), ``metrics`` (the headline values, each ``{estimate, ci_low, ci_high}``, and the unit
    counts), the results log directory and the run's provenance."""

    task: str
    model: str
    samples: Any  # pandas.DataFrame
    metrics: dict
    log_dir: Path
    provenance: dict = field(default_factory=dict)

    @property
    def counts(self) -> dict:
        return self.metrics.get("units", {})

    def __repr__(self) -> str:
        return (f"EvalResult(task={self.task!r}, model={self.model!r}, samples={len(self.samples)} rows, "
                f"units={self.counts}, log_dir='{self.log_dir}')")  # fmt: skip


# ---- identity and places ------------------------------------------------------------------------
def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s).strip("_")[:60] or "model"


def run_identity(task: str, params: dict, model: str, base_url: str | None, limit: int | None, epochs: int,
                 seed: int, prompts: dict[str, str]) -> str:  # fmt: skip
    """12 hex digits naming one run: the same command (and the same prompt files) → the same id."""
    spec = {"task": task, "params": params, "model": model, "model_base_url": base_url, "limit": limit,
            "epochs": epochs, "seed": seed, "prompts": prompts}  # fmt: skip
    return hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _check_args(limit, epochs, seed, max_cost) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ParamError(f"--limit {limit!r}: a positive integer is needed", fix="e.g. --limit 20")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ParamError(f"--epochs {epochs!r}: a positive integer is needed", fix="e.g. --epochs 3")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ParamError(f"--seed {seed!r}: an integer is needed")
    if max_cost is not None and (
        not isinstance(max_cost, int | float) or max_cost < 0 or math.isnan(max_cost)
    ):
        raise ParamError(f"--max-cost {max_cost!r}: a non-negative number of dollars is needed")


# ---- the subject under test ---------------------------------------------------------------------
def _backbone(model: str, base_url: str | None, need_key: bool = True, called: bool = True):
    """The model as a gateway backbone; a name nothing can serve is one UserError. ``called=False``: the
    task asks the model nothing (``pace_assistant -T responses=FILE``: the name labels recorded outputs)."""
    from ..llm import Backbone
    from ..llm.backends import check_model

    if not isinstance(model, str) or not model.strip():
        raise ParamError("--model is needed (or --agent module:Class for an agent task)",
                         fix="e.g. --model local/checks, or --model openai/NAME --model-base-url URL")  # fmt: skip
    if base_url is not None and not re.match(r"^https?://", base_url):
        raise ParamError(f"--model-base-url {base_url!r} is not an http(s) URL",
                         fix="e.g. --model-base-url http://127.0.0.1:8080/v1")  # fmt: skip
    if base_url is not None and model.split("/", 1)[0] not in ("openai", "hosted_vllm"):
        raise ParamError(f"--model {model}: a server at --model-base-url is reached as openai/NAME",
                         fix=f"use --model openai/{model.split('/', 1)[-1]}")  # fmt: skip
    from ..llm import MissingKeyError

    if not called:
        return Backbone(name=model, model=model, api_base=base_url.rstrip("/") if base_url else None)
    try:
        check_model(model, base_url)
    except MissingKeyError as e:
        if need_key:  # a preview counts calls and dollars without a key
            raise UserError(f"--model {model}: {e}") from None
    except Exception as e:  # UnknownModelError, ModelNotInstalled: each says what to do
        raise UserError(f"--model {model}: {e}") from None
    return Backbone(name=model, model=model, api_base=base_url.rstrip("/") if base_url else None)


def _preflight(t, gateway, backbone, run_id: str, epochs: int) -> None:
    """Issue 25 §2 before any sample is asked: the preflight of the subject under test on the task's
    planned calls (:func:`preflight_calls`); none when the call log and cache already hold every answer,
    or, for an agent task, when every trial already has its trajectory (``t.finished``): a rerun asks
    the server nothing (issue 26 §5)."""
    calls = t.calls(gateway, backbone, epochs=epochs)
    if calls and gateway.estimate(calls, run_id).to_call == 0:
        return
    finished = getattr(t, "finished", None)  # an agent task: its calls are known only as trials run
    if not calls and finished is not None and finished(gateway, backbone, epochs=epochs):
        return
    preflight_calls(backbone, calls)


def preflight_calls(backbone, calls) -> None:
    """One tiny uncached call to a user-started server or an API model (reachable, key accepted, a
    structured-output form it takes, a context window that holds the largest of ``calls``' prompts); a
    failure is one :class:`~shopbench.llm.preflight.PreflightError` (exit 2) naming the model, the
    server, what failed and the fix. Embedded ``local/`` backends need none."""
    from ..llm.budget import DEFAULT_COMPLETION_TOKENS, estimate_tokens
    from ..llm.preflight import Subject, check_subjects, needs_network
    from ..paths import default_cache_dir

    if not needs_network([backbone]):
        return
    biggest = max((estimate_tokens(list(c.messages)) for c in calls), default=0)
    out_tokens = max((int(c.params.get("max_tokens") or DEFAULT_COMPLETION_TOKENS) for c in calls), default=0)
    check_subjects(
        [Subject(backbone, ["shopbench eval"], biggest, out_tokens)], cache_dir=default_cache_dir()
    )


SERVER_CONNECTIONS, SERVER_TIMEOUT_S = 1, 600.0  # a --model-base-url server: one request at a time
PROVIDER_TIMEOUT_S = 120.0


def _gateway(log_dir: Path, backbones, max_cost: float | None, progress: bool,
             max_connections: int | None = None, timeout: float | None = None):  # fmt: skip
    """The one gateway for a task run. A user-started server (``--model-base-url``) is sent one request at
    a time unless ``max_connections`` says more: llama_cpp.server answers requests one after the other,
    and queued requests would time out and be sent again while the server still works on them (measured:
    5 concurrent 4k-token judge calls to SmolLM2 on 2 cores, 3 timed out at 120 s)."""
    from ..llm import Gateway
    from ..paths import default_cache_dir

    if max_connections is not None and (isinstance(max_connections, bool) or int(max_connections) < 1):
        raise ParamError(f"--max-connections {max_connections!r}: a positive integer is needed")
    if timeout is not None and not float(timeout) > 0:
        raise ParamError(f"--timeout {timeout!r}: a positive number of seconds is needed")
    unique = list({b.name: b for b in backbones if b is not None}.values())
    for b in unique:
        b.concurrency = (
            int(max_connections) if max_connections else (SERVER_CONNECTIONS if b.api_base else None)
        )
    server = any(b.api_base for b in unique)
    return Gateway(cache_dir=default_cache_dir(), log_dir=log_dir / "calls", max_cost_usd=max_cost,
                   progress=progress, backbones=unique, budget_mode="raise",
                   timeout_s=timeout or (SERVER_TIMEOUT_S if server else PROVIDER_TIMEOUT_S))  # fmt: skip


def _subject(t, task, model, model_base_url, agent, need_key):
    """(backbone or None, the subject's name in the run identity, the loaded agent or None): the model
    under test, or the ``--agent module:Class`` of an agent task (issue 26 §1)."""
    if agent is None:
        return _backbone(model, model_base_url, need_key, getattr(t, "calls_model", True)), model, None
    if not getattr(t, "takes_agent", False):
        raise ParamError(
            f"task {task} takes no --agent", fix="--agent is for the agent tasks (shopbench list)"
        )
    if model is not None or model_base_url is not None:
        raise ParamError("give --model or --agent, not both",
                         fix="--agent module:Class runs your agent class; --model runs a tool-calling model")  # fmt: skip
    from .agents import load_agent

    ag = load_agent(agent)
    t.use_agent(ag)
    return None, ag.identity, ag


def _extra_backbones(t, model, model_base_url, need_key) -> list:
    """The other models a task asks (an LLM customer, an LLM judge), as gateway backbones; one named
    ``openai/...`` is reached at ``--model-base-url`` when one is given."""
    out = []
    for name in getattr(t, "backbones", lambda: [])():
        url = (
            model_base_url if model_base_url and name.split("/", 1)[0] in ("openai", "hosted_vllm") else None
        )
        out.append(_backbone(name, url, need_key))
    return out


def _setup(task, model, model_base_url, limit, epochs, seed, log_dir, task_params, need_key=True, agent=None,
           shard=None):  # fmt: skip
    from .shards import apply_shard, parse_shard

    _check_args(limit, epochs, seed, None)
    shard = parse_shard(shard)  # issue 30 item 4: --shard i/n
    info = get_task(task)
    t, params = info.build(task_params)
    if hasattr(
        t, "check_epochs"
    ):  # an agent task's repeat design (-T vary) against --epochs (issue 29 item 1)
        t.check_epochs(epochs)
    backbone, subject, ag = _subject(t, task, model, model_base_url, agent, need_key)
    extra = _extra_backbones(t, model, model_base_url, need_key)
    t.prepare(limit=limit, seed=seed)
    # issue 30 item 4: keep shard (i, n) of the prepared samples (.shards); the run id stays the unsharded
    # run's, so a shard's calls are the unsharded run's calls
    t.shard = apply_shard(t, shard)
    prompts = t.prompts()
    base = backbone.api_base if backbone is not None else None
    rid = run_identity(task, _plain_params(params), subject, base, limit, epochs, seed, prompts)
    if log_dir is None:
        from ..paths import outputs_root

        label = model if ag is None else f"agent-{ag.cls.__name__}"
        tail = f"-shard{shard[0]}of{shard[1]}" if shard else ""
        log_dir = outputs_root() / "tasks" / task / f"{_slug(label)}-{rid}{tail}"
    return info, t, params, backbone, extra, ag, subject, prompts, rid, Path(log_dir)


def _plain_params(params: dict) -> dict:
    """Parameters as stored: paths absolute (the same file named two ways is one run)."""
    out = {}
    for k, v in params.items():
        out[k] = str(Path(v).expanduser().resolve()) if isinstance(v, str) and k in _PATH_KEYS else v
    return out


_PATH_KEYS = ("records", "pairs", "recorded", "prompt", "responses", "data")


# ---- eval and preview ---------------------------------------------------------------------------
def eval(  # noqa: A001 - the ecosystem's name (inspect_ai.eval); shopbench.eval
    task: str,
    model: str | None = None,
    *,
    agent: str | None = None,
    model_base_url: str | None = None,
    limit: int | None = None,
    epochs: int = 1,
    seed: int = 0,
    log_dir: str | Path | None = None,
    max_cost: float | None = None,
    progress: bool = True,
    max_connections: int | None = None,
    timeout: float | None = None,
    shard: str | None = None,
    **task_params: Any,
) -> EvalResult:
    """Run ``task`` on ``model`` (issue 26 §2–3) and return its :class:`EvalResult`; the command line
    ``shopbench eval`` calls this function. ``task_params`` are the task's ``-T`` parameters
    (``shopbench list``). ``agent="module:Class"`` runs a Python agent class instead of a model on an
    agent task (``shop_agent``, ``tau2_retail_agent``; docs/guides/agent.md). A bad argument is a :class:`~shopbench.errors.UserError`; a run in which
    every unit failed raises :class:`NoUsableAnswer` after writing its log."""
    _check_args(limit, epochs, seed, max_cost)
    info, t, params, backbone, extra, ag, subject, prompts, rid, out = _setup(
        task, model, model_base_url, limit, epochs, seed, log_dir, task_params, agent=agent, shard=shard
    )
    out.mkdir(parents=True, exist_ok=True)
    gw = _gateway(out, [backbone, *extra], max_cost, progress, max_connections, timeout)
    run_id = f"{task}-{rid}"
    if backbone is not None and getattr(t, "calls_model", True):  # an imported responses file asks no model
        _preflight(t, gw, backbone, run_id, epochs)
    for b in extra:  # the other models the task asks (an LLM customer, an LLM judge)
        preflight_calls(b, [])
    prov = _provenance(info.name, params, backbone, prompts, seed, limit, epochs, run_id, t)
    if ag is not None:
        prov["agent"] = ag.provenance()
    if t.shard is not None:  # issue 30 item 4: which block of the seeded order this log holds
        prov["shard"] = t.shard
    _write_json(out / "run.json", prov | {"status": "running"})
    rows = t.run(gw, backbone, epochs=epochs, run_id=run_id)
    metrics = t.metrics(rows, seed=seed)
    metrics["units"] = _counts(rows)
    metrics["evidence"] = _evidence(subject if ag is None else None, metrics["units"]["ok"] > 0)
    _write_samples(out, rows)
    _write_json(out / "metrics.json", metrics)
    usable = metrics["units"]["ok"] > 0
    _write_json(out / "run.json", prov | {"status": "complete" if usable else "no usable answer",
                                          "gateway": {k: gw.stats[k] for k in ("calls", "cache_hits", "errors",
                                                                               "parse_errors", "cost_usd")}})  # fmt: skip
    # issue 30 item 1: the run as an inspect eval log (inspect.jsonl; inspect.eval with the inspect extra)
    from ..interop.inspect_log import write_task_log

    write_task_log(out, t, rows, metrics, prov | {"status": "complete" if usable else "no usable answer"},
                   gw, backbone, epochs)  # fmt: skip
    res = EvalResult(info.name, subject if ag is None else ag.spec, rows, metrics, out, prov)
    if not usable:
        raise NoUsableAnswer(_no_answer_message(rows, out))
    return res


def _evidence(model: str | None, usable: bool) -> dict:
    """What kind of evidence the run's numbers are (:mod:`shopbench.report.evidence`): ``measured`` for a
    model that sees only its prompt, ``known-answer``/``reference`` for an embedded backend that reads
    the gold (``local/checks``, ``local/oracle-rules``, ...), ``no-answer`` when no unit answered. A
    Python agent class (``model`` None) is the user's own subject: measured, on the user's word that it
    reads only what the agent protocol hands it."""
    from ..report.evidence import MEASURED, NO_ANSWER, producer_kind

    if not usable:
        return {"kind": NO_ANSWER, "why": "no unit produced a usable answer: no number is reported"}
    if model is None:
        return {"kind": MEASURED, "why": "your agent class, run through the env.Agent protocol: it is measured "
                "as long as it reads only the conversation and tool results it is handed"}  # fmt: skip
    kind, why = producer_kind(model)
    return {"kind": kind, "why": why}


def preview(task: str, model: str | None = None, *, agent: str | None = None, model_base_url: str | None = None,
            limit: int | None = None, epochs: int = 1, seed: int = 0, log_dir: str | Path | None = None,
            shard: str | None = None, **task_params: Any) -> dict:  # fmt: skip
    """What :func:`eval` would do, with no call: calls, how many the cache and the run's log hold,
    estimated tokens and an upper-bound cost (the gateway's :meth:`~shopbench.llm.Gateway.estimate`)."""
    from ..llm.budget import DEFAULT_COMPLETION_TOKENS, estimate_tokens

    info, t, params, backbone, extra, ag, subject, prompts, rid, out = _setup(
        task, model, model_base_url, limit, epochs, seed, log_dir, task_params, need_key=False, agent=agent,
        shard=shard)  # fmt: skip
    gw = _gateway(out, [backbone, *extra], None, False)
    calls = t.calls(gw, backbone, epochs=epochs)
    est = gw.estimate(calls, f"{task}-{rid}") if (out / "calls").exists() else gw.estimate(calls)
    prompt_tokens = sum(estimate_tokens(list(c.messages)) for c in calls)
    completion = sum(int(c.params.get("max_tokens") or DEFAULT_COMPLETION_TOKENS) for c in calls)
    return {"task": info.name, "model": subject if ag is None else ag.spec,
            "model_base_url": backbone.api_base if backbone is not None else None, "samples": t.n_samples,
            "epochs": epochs, "calls": est.calls, "cached": est.cached, "to_call": est.to_call,
            "prompt_tokens_est": prompt_tokens, "completion_tokens_max": completion,
            "cost_usd_max": round(est.cost_usd, 6), "unpriced_models": sorted(est.unpriced_models),
            "prompts": prompts, "log_dir": str(out), "note": getattr(t, "calls_note", "")}  # fmt: skip


# ---- results log ----------------------------------------------------------------------------------
def _counts(rows) -> dict:
    """ok / parse_error / error units (a unit = one sample × epoch × call), honest (issue 25 §3)."""
    st = rows["unit_status"].value_counts()
    return {"total": int(len(rows)), "ok": int(st.get("ok", 0)), "parse_error": int(st.get("parse_error", 0)),
            "error": int(st.get("error", 0))}  # fmt: skip


def _no_answer_message(rows, out: Path) -> str:
    col = rows["unit_error"].dropna().astype(str).str.slice(0, 160)
    top = col.value_counts().head(3)
    lines = [f"no usable answer: all {len(rows)} units failed (log: {out})"]
    lines += [f"  {n} × {msg}" for msg, n in top.items()]
    return "\n".join(lines)


def _write_samples(out: Path, rows) -> None:
    tmp = out / ".samples.parquet.tmp"
    rows.to_parquet(tmp, index=False)
    tmp.replace(out / "samples.parquet")
    tmpj = out / ".samples.jsonl.tmp"
    tmpj.write_text(rows.to_json(orient="records", lines=True, force_ascii=False, default_handler=str),
                    encoding="utf-8")  # fmt: skip
    tmpj.replace(out / "samples.jsonl")


def _write_json(path: Path, obj) -> None:
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(json.dumps(_json_safe(obj), indent=1, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def _json_safe(x):
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_json_safe(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if hasattr(x, "item") and not isinstance(x, str | bytes):  # numpy scalars
        return _json_safe(x.item())
    return x


def _provenance(task, params, backbone, prompts, seed, limit, epochs, run_id, t) -> dict:
    import os

    from ..report.artifacts import git_commit, now_iso
    from ..version import __version__

    return {"task": task, "params": _plain_params(params), "model": backbone.model if backbone is not None else None,
            "model_base_url": backbone.api_base if backbone is not None else None, "prompts": prompts, "seed": seed, "limit": limit,
            "epochs": epochs, "samples": t.n_samples, "gateway_run_id": run_id,
            "git_commit": os.environ.get("SHOPBENCH_GIT_COMMIT") or git_commit(), "shopbench": __version__,
            "python": sys.version.split()[0], "date": now_iso(), "data": t.data_source}  # fmt: skip
