"""``shopbench score LOG [--judge MODEL] [-T key=value ...]``: re-score what a log recorded, without asking
the subject under test again (issue 30, item 2).

LOG is a run folder ``shopbench eval`` wrote, its ``inspect.jsonl`` / ``inspect.eval``, or an inspect
``.eval`` log written by inspect itself for ``shopbench/pace_judge`` (``inspect eval shopbench/pace_judge``).

- ``pace_judge`` log — the judge's recorded outputs re-parsed under a changed contract (``-T protocol=NAME``;
  default the log's own protocol, e.g. after a parser fix): the protocol's parser
  (:func:`shopbench.judges.pace.sweep.run_table`) on each sample's recorded output, then the task's own
  metrics (:meth:`shopbench.tasks.pace_judge.PaceJudgeTask.metrics`) on the same records (same records
  source, split, limit and seed as the log's run). No model is called at all.
  With ``--judge MODEL`` (another model than the log's): the same samples — the records the log names,
  in its order, with its protocol, epochs and seed — judged by MODEL (``pace_judge`` on exactly those
  records), so two judges are compared on identical inputs; the logged judge is not called (its
  answers stay in the source log), only MODEL appears in the new call log.
- ``pace_assistant`` log — the assistant's recorded outputs judged by another judge (``--judge MODEL``,
  ``-T protocol=NAME``, ``-T judge_base_url=URL``): the outputs are written as a responses file
  (``recorded_responses.jsonl``) and judged through ``pace_assistant -T responses=FILE``, which asks the
  assistant nothing; only the judge appears in the new call log.
- ``shop_agent`` log — the recorded trajectories (``<run>/trajectories/epoch<k>/``) scored by another rubric
  judge (``--judge MODEL`` or ``deterministic``; ``-T n_boot=N``) through the task's own battery
  (:func:`shopbench.shopsim.verifier.battery.score_trials`) and metrics: ``ShopAgentTask`` built with the
  log's parameters but ``judge=MODEL``, run on a new folder holding a copy of the trajectories, so every
  trial is already finished and neither the agent nor the customer simulator is asked; only the judge
  appears in the new call log (the same judge reproduces the log's metrics).
- ``padme_evaluator`` log — the log's very pairs (pairs source, prompt, limit, seed, epochs) scored by another
  evaluator (``--judge MODEL``); the logged evaluator is not called, only MODEL appears in the new call log.

First a cost preview (calls, cached, to make, upper-bound dollars) is printed; ``--preview`` stops there.
The new run folder (``--out``, default ``outputs/tasks/TASK/rescore-…``) holds the usual files and an
inspect log whose header (``eval.metadata.rescored_from``) and ``run.json`` name the log it came from
(path, sha256, eval id, model). A log from another task, a truncated or corrupt log, a record (pair) the log
names that its source no longer holds, or a shop_agent log whose run folder lacks a trial's trajectory:
one message naming the file and the fix, exit 2, nothing written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..errors import UserError
from .inspect_log import build, load, write

SUPPORTED = ("pace_judge", "pace_assistant", "shop_agent", "padme_evaluator")


def _task_of(log: dict, path: Path) -> str:
    ev = log["header"].get("eval") or {}
    name = str(ev.get("task_registry_name") or ev.get("task") or "")
    short = name.split("/", 1)[1] if name.startswith("shopbench/") else name
    if short not in SUPPORTED:
        raise UserError(f"{path}: a log of task {name or '(none)'}; shopbench score re-scores logs of "
                        f"{', '.join(SUPPORTED)}. Fix: give a log of one of those tasks "
                        "(shopbench eval pace_judge|pace_assistant|shop_agent|padme_evaluator ..., or inspect eval "
                        "shopbench/pace_judge)")  # fmt: skip
    if not log["samples"]:
        raise UserError(f"{path}: the log holds no sample. Fix: give a log written with its samples")
    return short


def _origin(log: dict, path: Path) -> dict:
    ev = log["header"].get("eval") or {}
    return {"log": str(path.resolve()), "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "eval_id": ev.get("eval_id"), "run_id": ev.get("run_id"), "task": ev.get("task"),
            "model": ev.get("model"), "created": ev.get("created")}  # fmt: skip


def _default_out(task: str, origin: dict, what: dict) -> Path:
    from ..paths import outputs_root
    from ..tasks.runner import _slug

    h = hashlib.sha256(json.dumps([origin["sha256"], what], sort_keys=True).encode()).hexdigest()[:12]
    return (
        outputs_root()
        / "tasks"
        / task
        / f"rescore-{_slug(str(what.get('judge') or what.get('protocol')))}-{h}"
    )


def _params(log: dict) -> dict:
    return dict((log["header"].get("eval") or {}).get("task_args") or {})


def _seed(log: dict) -> int:
    ev = log["header"].get("eval") or {}
    md = ev.get("metadata") or {}
    s = md.get("seed", (ev.get("task_args") or {}).get("seed", 0))
    return int(s or 0)


def score(path: str | Path, judge: str | None = None, task_args: dict | None = None, out: str | Path | None = None,
          preview_only: bool = False, max_cost: float | None = None, progress: bool = False,
          echo=print) -> Path | None:  # fmt: skip
    """Re-score the log at ``path`` (module docstring); the new run folder, or None with ``preview_only``."""
    log, src = load(path)
    task = _task_of(log, src)
    origin = _origin(log, src)
    targs = dict(task_args or {})
    if task == "pace_judge":
        return _rescore_pace_judge(log, src, origin, judge, targs, out, preview_only, echo)
    if task == "shop_agent":
        return _rescore_shop_agent(log, src, origin, judge, targs, out, preview_only, max_cost, echo)
    if task == "padme_evaluator":
        return _rejudge_padme(log, src, origin, judge, targs, out, preview_only, max_cost, echo)
    return _rescore_pace_assistant(
        log, src, origin, judge, targs, out, preview_only, max_cost, progress, echo
    )


# ---- pace_judge: re-parse under a (changed) contract ---------------------------------------------
def _rescore_pace_judge(log, src, origin, judge, targs, out, preview_only, echo) -> Path | None:
    from ..judges.pace.sweep import item_id, run_table
    from ..tasks.pace_judge import score_runs
    from ..tasks.registry import get_task
    from ..tasks.runner import _counts, _evidence, _plain_params, _write_json, _write_samples

    ev = log["header"].get("eval") or {}
    model = str(ev.get("model") or "")
    if judge is not None and judge != model:
        return _rejudge_pace_judge(log, src, origin, judge, targs, out, preview_only, echo)
    old = _params(log)
    keep = {
        k: old[k]
        for k in ("protocol", "records", "profile", "split", "max_tokens", "n_boot")
        if old.get(k) is not None
    }
    _only_targs(
        targs, {"protocol", "n_boot"}, "re-parsing a pace_judge log takes -T protocol=NAME and -T n_boot=N"
    )
    params = {**keep, **targs}
    params.setdefault("n_boot", 1000)
    if not int(params.get("n_boot") or 0):
        params["n_boot"] = 1000  # an inspect-run log's n_boot is 0 (point estimates); re-scoring gives CIs
    t, full = get_task("pace_judge").build(params)
    seed = _seed(log)
    limit = ((ev.get("config") or {}).get("limit")) or None
    t.prepare(limit=int(limit) if isinstance(limit, int) else None, seed=seed)
    by_id = {r.record_id: r for r in t.selected}
    rows, prompts = [], {}
    for s in log["samples"]:
        md = s.get("metadata") or {}
        rid = str(md.get("record_id") or s.get("id"))
        if rid not in by_id:
            raise UserError(f"{src}: sample {rid} is not among the records of the log's run ({t.data_source}). "
                            "Fix: give the records the log was run on (the run's -T records / -T profile)")  # fmt: skip
        epoch = int(s.get("epoch") or 1) - 1
        out_ = s.get("output") or {}
        choices = out_.get("choices") or []
        raw = out_.get("completion") if (out_.get("completion") or choices) else None
        err = s.get("error")
        stop = md.get("finish_reason") or (choices[0].get("stop_reason") if choices else None)
        stop = {"max_tokens": "length", "model_length": "length"}.get(str(stop), stop)
        iid = item_id(t.protocol, model, rid, epoch)
        status = "error" if (err and md.get("status", "error") == "error") or raw is None else "ok"
        rows.append({"item_id": iid, "model": model, "status": status, "raw_output": raw if status == "ok" else None,
                     "error": (err or {}).get("message") if status == "error" else None, "finish_reason": stop,
                     "cost_usd": 0.0, "cache_hit": True})  # fmt: skip
        inp = s.get("input")
        if isinstance(inp, list):
            prompts[iid] = inp
    echo(f"re-parse {len(rows)} recorded outputs of {model} under protocol {t.protocol} "
         f"(the log's: {old.get('protocol', '?')}): 0 model calls, $0.00")  # fmt: skip
    if preview_only:
        return None
    runs = score_runs(run_table(rows, t.selected))
    metrics = t.metrics(runs, seed=seed)
    metrics["units"] = _counts(runs)
    metrics["evidence"] = _evidence(model, metrics["units"]["ok"] > 0)
    what = {"protocol": t.protocol, "n_boot": t.n_boot}
    dest = Path(out) if out is not None else _default_out("pace_judge", origin, what)
    prov = {**(ev.get("metadata") or {}).get("shopbench", {}), "task": "pace_judge",
            "params": _plain_params(full), "model": model, "seed": seed, "limit": limit,
            "epochs": (ev.get("config") or {}).get("epochs"), "samples": t.n_samples,
            "rescored_from": origin, "rescore": {"kind": "re-parse", **what, "model_calls": 0},
            "status": "complete" if metrics["units"]["ok"] else "no usable answer"}  # fmt: skip
    dest.mkdir(parents=True, exist_ok=True)
    _write_samples(dest, runs)
    _write_json(dest / "metrics.json", metrics)
    _write_json(dest / "run.json", prov)
    new = build("pace_judge", runs, metrics, prov, calls_dir=None, prompts=prompts, model=model)
    new["header"]["eval"]["metadata"]["rescored_from"] = origin
    write(new, dest)
    return dest


# ---- pace_assistant: the recorded outputs judged by another judge --------------------------------
def _responses_lines(log: dict, src: Path) -> list[dict]:
    out = []
    for s in log["samples"]:
        md = s.get("metadata") or {}
        line: dict[str, Any] = {"id": str(s.get("id")), "query": md.get("query")}
        if md.get("assignment_id"):
            line["assignment_id"] = md["assignment_id"]
        resp = md.get("response")
        if isinstance(resp, str):
            try:
                resp = json.loads(resp)
            except ValueError:
                raise UserError(f"{src}: sample {s.get('id')}: its recorded response is not JSON. Fix: the log "
                                "is corrupt; rerun the task") from None  # fmt: skip
        if isinstance(resp, dict):
            line["response"] = resp
        if int(s.get("epoch") or 1) == 1:  # one output per input; the judge runs once per epoch
            out.append(line)
    return out


def _rescore_pace_assistant(log, src, origin, judge, targs, out, preview_only, max_cost, progress, echo):
    from ..tasks.runner import eval as run_eval
    from ..tasks.runner import preview

    _judge_backbone(judge, src, "pace_assistant", "local/checks", targs.get("judge_base_url"))
    ev = log["header"].get("eval") or {}
    old = _params(log)
    _only_targs(targs, {"protocol", "judge_base_url", "n_boot", "judge_max_tokens"},
                "re-judging a pace_assistant log takes -T protocol, judge_base_url, n_boot, judge_max_tokens")  # fmt: skip
    params = {
        k: old[k]
        for k in ("protocol", "records", "profile", "n_boot", "judge_max_tokens")
        if old.get(k) is not None
    }
    params.update(targs, judge=judge, schema="relaxed")
    lines = _responses_lines(log, src)
    assistant = str(ev.get("model") or "assistant")
    epochs = int((ev.get("config") or {}).get("epochs") or 1)
    seed = _seed(log)
    tmp = Path(tempfile.mkdtemp(prefix="shopbench-rescore-"))
    try:
        f = tmp / "recorded_responses.jsonl"
        f.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
        p = preview("pace_assistant", assistant, epochs=epochs, seed=seed, log_dir=tmp / "run", responses=str(f),
                    **params)  # fmt: skip
        echo(f"judge {judge} ({params.get('protocol', 'pacejudge')}) on {len(lines)} recorded outputs of "
             f"{assistant} × {epochs} epochs: {p['calls']} calls ({p['cached']} cached, {p['to_call']} to make), "
             f"≤ ${p['cost_usd_max']:.4f}; the assistant is not called")  # fmt: skip
        if preview_only:
            return None
        what = {"judge": judge, **{k: params.get(k) for k in ("protocol", "judge_base_url")}}
        dest = Path(out) if out is not None else _default_out("pace_assistant", origin, what)
        dest.mkdir(parents=True, exist_ok=True)
        final = dest / "recorded_responses.jsonl"
        shutil.copyfile(f, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    from ..tasks.runner import NoUsableAnswer

    try:
        run_eval("pace_assistant", assistant, epochs=epochs, seed=seed, log_dir=dest, max_cost=max_cost,
                 progress=progress, responses=str(final), **params)  # fmt: skip
    except NoUsableAnswer:
        pass  # the log is written; its status says so
    _mark_origin(dest, origin, {"kind": "re-judge", **what})
    return dest


def _rejudge_pace_judge(log, src, origin, judge, targs, out, preview_only, echo) -> Path | None:
    """The log's samples judged by another judge ``judge`` (module docstring): its records, in its order."""
    from ..tasks.runner import NoUsableAnswer, preview
    from ..tasks.runner import eval as run_eval

    _judge_backbone(judge, src, "pace_judge", "local/checks", targs.get("judge_base_url"))
    _only_targs(targs, {"protocol", "n_boot", "judge_base_url", "max_tokens"},
                "judging a pace_judge log's samples with --judge takes -T protocol, n_boot, judge_base_url, max_tokens")  # fmt: skip
    ev = log["header"].get("eval") or {}
    old = _params(log)
    params = {k: old[k] for k in ("protocol", "records", "profile", "split", "max_tokens", "n_boot")
              if old.get(k) is not None}  # fmt: skip
    base_url = targs.pop("judge_base_url", None)
    params.update(targs)
    epochs = int((ev.get("config") or {}).get("epochs") or 1)
    limit = (ev.get("config") or {}).get("limit")
    limit = int(limit) if isinstance(limit, int) else None
    seed = _seed(log)
    p = preview("pace_judge", judge, model_base_url=base_url, epochs=epochs, seed=seed, limit=limit, **params)
    echo(f"judge {judge} ({params.get('protocol', 'pacejudge')}) on the {p['samples']} records of {src.name} "
         f"× {epochs} epochs: {p['calls']} calls ({p['cached']} cached, {p['to_call']} to make), "
         f"≤ ${p['cost_usd_max']:.4f}; the logged judge {ev.get('model')} is not called")  # fmt: skip
    if preview_only:
        return None
    what = {"judge": judge, "protocol": params.get("protocol")}
    dest = Path(out) if out is not None else _default_out("pace_judge", origin, what)
    try:
        res = run_eval("pace_judge", judge, model_base_url=base_url, epochs=epochs, seed=seed, limit=limit,
                       log_dir=dest, progress=False, **params)  # fmt: skip
        wanted = {str(x.get("id")).split(":", 1)[0] for x in log["samples"]}
        got = set(res.samples["sample_id"].astype(str))
        if wanted - got:
            raise UserError(f"{src}: {len(wanted - got)} of the log's records are not in its records source "
                            f"any more (e.g. {sorted(wanted - got)[0]}). Fix: point -T records at the build the "
                            "log was made on")  # fmt: skip
    except NoUsableAnswer:
        pass  # the log is written; its status says so
    _mark_origin(dest, origin, {"kind": "re-judge", **what})
    return dest


def _judge_backbone(
    judge: str | None, src: Path, task: str, example: str, base_url: str | None = None
) -> None:
    """A usable ``--judge`` name, or one UserError (its message names --judge, not --model)."""
    from ..tasks.runner import _backbone

    if not judge:
        raise UserError(f"{src}: re-judging a {task} log needs --judge MODEL. Fix: e.g. --judge {example}")
    try:
        _backbone(judge, base_url, need_key=False)
    except UserError as e:
        raise UserError(str(e).replace("--model", "--judge", 1)) from None


def _only_targs(targs: dict, allowed: set[str], takes: str) -> None:
    """One UserError naming the first ``-T`` option the re-score does not take (``takes`` says what it does)."""
    if unknown := set(targs) - allowed:
        raise UserError(f"-T {sorted(unknown)[0]}: {takes}. Fix: drop the other -T options")


# ---- shop_agent: the recorded trajectories scored by another judge (issue 30 item 2) -------------
SHOP_KEEP = ("user", "profile", "trials", "tool_mode", "max_tokens", "n_boot", "vary", "temperature")


def _rescore_shop_agent(log, src, origin, judge, targs, out, preview_only, max_cost, echo) -> Path | None:
    """The log's recorded trajectories (``<run>/trajectories/epoch<k>/``) scored by the rubric judge
    ``judge`` through the task's own battery and metrics: :class:`~shopbench.tasks.shop_agent.ShopAgentTask`
    built with the log's parameters but ``judge=MODEL``, run on a new folder holding a copy of the
    trajectories, so every trial is already finished (``finished``/``run_plan``): the agent and the customer
    simulator are asked nothing, only the judge (issue 30 item 2)."""
    from ..shopsim.sweep import TrajectoryStore
    from ..tasks.registry import get_task
    from ..tasks.runner import NoUsableAnswer
    from ..tasks.runner import eval as run_eval

    if judge != "deterministic":  # the rules judge is no model
        _judge_backbone(judge, src, "shop_agent", "local/schema-sampler or deterministic")
    _only_targs(
        targs,
        {"n_boot"},
        "re-judging a shop_agent log takes -T n_boot=N only (the trajectories fix the rest)",
    )
    ev = log["header"].get("eval") or {}
    sb = (ev.get("metadata") or {}).get("shopbench") or {}
    old = _params(log)
    params = {k: old[k] for k in SHOP_KEEP if old.get(k) is not None} | targs | {"judge": judge}
    epochs = int((ev.get("config") or {}).get("epochs") or 1)
    limit = (ev.get("config") or {}).get("limit")
    limit = int(limit) if isinstance(limit, int) else None
    seed = _seed(log)
    agent_spec = (sb.get("agent") or {}).get("spec")
    model = None if agent_spec else str(ev.get("model") or "")
    base_url = None if agent_spec else sb.get("model_base_url")
    trajs = src.parent / "trajectories"
    t, _ = get_task("shop_agent").build(params)
    t.prepare(limit=limit, seed=seed)
    name = (sb.get("agent") or {}).get("name") if agent_spec else f"llm:{model}"
    want = {s.trial_id for s in t.selected}
    for k in range(epochs):
        d = trajs / f"epoch{k}"
        missing = want - (TrajectoryStore(d).done_ids(str(name)) if d.is_dir() else set())
        if missing:
            raise UserError(f"{src}: the run folder holds no recorded trajectory of {len(missing)} of its trials "
                            f"(epoch {k}, e.g. {sorted(missing)[0]}; looked in {d}). Fix: give the run folder "
                            "`shopbench eval shop_agent` wrote, with its trajectories/, of a finished run")  # fmt: skip
    subject = agent_spec or model
    echo(f"judge {judge} on the {len(want)} recorded trajectories of {subject} in {src.parent.name} × {epochs} "
         f"epochs: the judge's calls are known only as it reads each trajectory; the agent and the customer "
         f"simulator are not called")  # fmt: skip
    if preview_only:
        return None
    what = {"judge": judge}
    dest = Path(out) if out is not None else _default_out("shop_agent", origin, what)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(trajs, dest / "trajectories", dirs_exist_ok=True)
    try:
        run_eval("shop_agent", model, agent=agent_spec, model_base_url=base_url, epochs=epochs, seed=seed,
                 limit=limit, log_dir=dest, max_cost=max_cost, progress=False, **params)  # fmt: skip
    except NoUsableAnswer:
        pass  # the log is written; its status says so
    _mark_origin(dest, origin, {"kind": "re-judge", **what})
    return dest


# ---- padme_evaluator: another evaluator on the log's very pairs (issue 30 item 2) ----------------
PADME_KEEP = ("pairs", "recorded", "profile", "prompt", "criteria", "kept_only", "n_boot", "max_tokens")


def _rejudge_padme(log, src, origin, judge, targs, out, preview_only, max_cost, echo) -> Path | None:
    """The log's pairs (same pairs source, limit, seed, epochs, prompt) scored by another evaluator
    ``judge``; the logged evaluator is not called (issue 30 item 2)."""
    from ..tasks.runner import NoUsableAnswer, preview
    from ..tasks.runner import eval as run_eval

    _judge_backbone(judge, src, "padme_evaluator", "local/schema-sampler")
    _only_targs(
        targs, {"n_boot", "max_tokens"}, "re-judging a padme_evaluator log takes -T n_boot and max_tokens"
    )
    ev = log["header"].get("eval") or {}
    old = _params(log)
    params = {k: old[k] for k in PADME_KEEP if old.get(k) is not None} | targs
    epochs = int((ev.get("config") or {}).get("epochs") or 1)
    limit = (ev.get("config") or {}).get("limit")
    limit = int(limit) if isinstance(limit, int) else None
    seed = _seed(log)
    p = preview("padme_evaluator", judge, epochs=epochs, seed=seed, limit=limit, **params)
    echo(f"evaluator {judge} on the {p['samples']} pairs of {src.parent.name} × {epochs} epochs: {p['calls']} "
         f"calls ({p['cached']} cached, {p['to_call']} to make), ≤ ${p['cost_usd_max']:.4f}; the logged "
         f"evaluator {ev.get('model')} is not called")  # fmt: skip
    if preview_only:
        return None
    what = {"judge": judge}
    dest = Path(out) if out is not None else _default_out("padme_evaluator", origin, what)
    try:
        res = run_eval("padme_evaluator", judge, epochs=epochs, seed=seed, limit=limit, log_dir=dest,
                       max_cost=max_cost, progress=False, **params)  # fmt: skip
        rows = res.samples
    except NoUsableAnswer:
        import pandas as pd

        rows = pd.read_parquet(dest / "samples.parquet")
    wanted = {str(x.get("id")).split(":", 1)[0] for x in log["samples"]}
    lost = wanted - set(rows["sample_id"].astype(str))
    if lost:
        shutil.rmtree(dest, ignore_errors=True)
        raise UserError(f"{src}: {len(lost)} of the log's pairs are not in its pairs source any more (e.g. "
                        f"{sorted(lost)[0]}). Fix: point -T pairs/recorded at the data the log was made on")  # fmt: skip
    _mark_origin(dest, origin, {"kind": "re-judge", **what})
    return dest


def _mark_origin(dest: Path, origin: dict, rescore: dict) -> None:
    """Name the log a re-scored run came from in its run.json and inspect log header."""
    from ..tasks.runner import _write_json
    from .inspect_log import PORTABLE_NAME

    run = json.loads((dest / "run.json").read_text(encoding="utf-8"))
    _write_json(dest / "run.json", run | {"rescored_from": origin, "rescore": rescore})
    log, _ = load(dest / PORTABLE_NAME)
    md = log["header"]["eval"].setdefault("metadata", {})
    md["rescored_from"], md["rescore"] = origin, rescore
    write(log, dest)
