"""The inspect_ai eval log of a task run (issue 30, item 1).

Every ``shopbench eval`` run (:func:`shopbench.tasks.runner.eval`) writes, next to ``samples.*``,
``metrics.json`` and ``run.json``:

- ``inspect.jsonl`` — always: the log in inspect's own field names, as JSON lines (line 1
  ``{"format": FORMAT, "header": {...}}`` with ``eval`` (EvalSpec), ``results`` (EvalResults), ``stats``
  (EvalStats), ``status``; then one ``{"sample": {...}}`` line per sample and epoch (EvalSample));
- ``inspect.eval`` — when inspect-ai is installed (``pip install -e '.[inspect]'``): the same content
  written with :func:`inspect_ai.log.write_eval_log`; ``inspect view``, ``read_eval_log`` and
  ``inspect_ai.analysis.samples_df`` read it. ``shopbench logs convert`` makes it later from
  ``inspect.jsonl`` (:func:`convert`).

One sample per item and epoch (inspect's epochs count from 1; the workbench's ``epoch`` 0 is inspect's
1): ``input`` the prompt the subject was sent (the task's own calls, rebuilt from the same records and
prompt files), ``messages`` that prompt plus the subject's output (an agent task: its whole trajectory),
``output`` the subject's raw text, ``scores`` every per-sample score of the task with its explanation,
``metadata`` every other column of the run's samples table (record / pair / scenario ids, tier, swap
axis, defect family, ...) plus the rendered prompt's hash (from the call log) and the seed. The header
holds the run's metrics (each headline metric an EvalScore with its estimate and CI; the whole
``metrics.json`` in ``results.metadata``) and the provenance of ``run.json`` (``eval.metadata``). Every
string passes the call log's redaction (:func:`shopbench.secrets.redact`) before it is written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import UserError

FORMAT = "shopbench-inspect-log/1"
PORTABLE_NAME, EVAL_NAME = "inspect.jsonl", "inspect.eval"
INSTALL_HINT = "pip install -e '.[inspect]' (inspect-ai 0.3.285)"

__all__ = ["EVAL_NAME", "FORMAT", "PORTABLE_NAME", "build", "convert", "has_inspect", "load", "to_eval_log",
           "write", "write_task_log"]  # fmt: skip

# Per task: the target column, the per-sample score columns, and the columns holding the subject's
# output. Every other column goes to the sample's metadata.
_CHECKS = ("overview_length", "bold_count", "bold_category_match", "category_count", "category_label_length",
           "category_case_duplicates", "query_alignment", "rq_count_unique", "evidence_id_validity",
           "evidence_exact_match", "xml_round_trip", "banned_strings")  # fmt: skip
VIEWS: dict[str, dict[str, Any]] = {
    "pace_judge": {"target": "label", "scores": ("correct", "bad_prob", "overall_quality", "persona_alignment",
                                                   "component_consistency", "evidence_grounding", "format_safety"),
                   "output": "raw_output"},
    "pace_assistant": {"target": None, "output": "raw_output",
                       "scores": ("accepted", "all_12", "checks_passed", *(f"check_{c}" for c in _CHECKS),
                                  "judge_verdict", "judge_bad_prob", "judge_persona_alignment",
                                  "judge_component_consistency", "judge_evidence_grounding",
                                  "judge_format_safety")},
    "padme_evaluator": {"target": "better_id", "output": None,
                        "scores": ("correct", "score_worse", "score_better", "delta", "tie")},
    "shop_agent": {"target": None, "output": None,
                   "scores": ("goal_met", "goal_progress", "exact_cart_success_rate", "exact_cart_precision",
                              "exact_cart_recall", "hallucination", "response_helpful", "assistant_coherence",
                              "invalid_tool_call_rate", "phantom_action_rate", "hard_refusal")},
    "tau2_retail_agent": {"target": None, "output": None,
                          "scores": ("reward", "db", "nl_assertion", "communicate")},
}  # fmt: skip


def has_inspect() -> bool:
    """inspect-ai is importable (the ``inspect`` extra)."""
    import importlib.util

    return importlib.util.find_spec("inspect_ai") is not None


# ---- plain values ---------------------------------------------------------------------------------
def _plain(x: Any) -> Any:
    """JSON-safe: numpy scalars and arrays as Python values, NaN / inf as None."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if hasattr(x, "tolist") and not isinstance(x, str | bytes):  # numpy arrays and scalars
        return _plain(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if x is None or isinstance(x, str | int | float | bool):
        return x
    return str(x)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and not math.isfinite(v))


# ---- messages ------------------------------------------------------------------------------------
def chat_message(m: Mapping[str, Any]) -> dict:
    """An OpenAI-shaped chat message (the gateway's and the agent loops') as inspect's ChatMessage."""
    role = str(m.get("role") or "user")
    content = m.get("content")
    if isinstance(content, list):  # content parts: keep their text
        content = "\n".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in content)
    out: dict[str, Any] = {"role": role if role in ("system", "user", "assistant", "tool") else "user",
                           "content": "" if content is None else str(content)}  # fmt: skip
    if role == "assistant" and m.get("tool_calls"):
        calls = []
        for i, tc in enumerate(m["tool_calls"]):
            fn = tc.get("function") or {}
            args = fn.get("arguments", tc.get("arguments", {}))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    args = {"raw": args}
            calls.append({"id": str(tc.get("id") or f"call_{i}"), "function": str(fn.get("name") or tc.get("name")),
                          "arguments": args if isinstance(args, dict) else {"value": args}})  # fmt: skip
        out["tool_calls"] = calls
    if role == "tool":
        out["tool_call_id"] = m.get("tool_call_id")
        if m.get("name"):
            out["function"] = str(m["name"])
    return out


def _assistant_output(model: str, text: str | None, stop: str = "stop") -> dict:
    text = text or ""
    return {"model": model, "completion": text,
            "choices": [{"message": {"role": "assistant", "content": text, "model": model}, "stop_reason": stop}]}  # fmt: skip


# ---- building the log -----------------------------------------------------------------------------
def _call_log(calls_dir: Path) -> tuple[dict[tuple[str, int], str], dict[str, dict[str, int]]]:
    """``({(item_id, repeat): prompt_hash}, {model: token usage})`` from the gateway's call log."""
    hashes: dict[tuple[str, int], str] = {}
    usage: dict[str, dict[str, int]] = {}
    for f in sorted(Path(calls_dir).glob("*.jsonl")) if Path(calls_dir).is_dir() else []:
        for line in f.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue  # a torn last line of a killed run: the gateway skips it too
            if r.get("prompt_hash"):
                hashes[(str(r.get("item_id")), int(r.get("repeat") or 0))] = r["prompt_hash"]
            if r.get("status") == "ok" and not r.get("cache_hit"):
                u = usage.setdefault(
                    str(r.get("model")), {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
                )
                i, o = int(r.get("prompt_tokens") or 0), int(r.get("completion_tokens") or 0)
                u["input_tokens"] += i
                u["output_tokens"] += o
                u["total_tokens"] += i + o
    return hashes, usage


def _score(task: str, col: str, v: Any, row: Mapping[str, Any]) -> dict | None:
    if _missing(v):
        return None
    if isinstance(v, bool):
        value: Any = 1.0 if v else 0.0
    elif isinstance(v, int | float):
        value = float(v)
    else:
        value = str(v)
    s: dict[str, Any] = {"value": value}
    if task == "pace_judge" and col == "correct":
        s["answer"] = row.get("verdict")
        if row.get("parse_ok"):
            s["explanation"] = (f"verdict {row.get('verdict')} vs gold {row.get('label')}; family "
                                f"{row.get('defect_family')} (gold {row.get('gold_family')}); location "
                                f"{row.get('defect_location')} (gold {row.get('gold_location')}); "
                                f"rationale: {row.get('rationale')}")  # fmt: skip
        else:
            s["explanation"] = f"parse failure ({row.get('parse_error_kind')}): {row.get('parse_error')}"
    elif task == "pace_judge":
        s["explanation"] = f"the judge's {col} (1-5 axis scores; bad_prob in [0, 1])"
    elif task == "pace_assistant" and col.startswith("judge_"):
        s["explanation"] = (
            f"judge {row.get('judge_status')}: {row.get('judge_rationale') or row.get('judge_error') or ''}"
        )
    elif task == "pace_assistant":
        s["explanation"] = (f"reject: {row.get('reject_reason')}" if row.get("reject_reason")
                            else "deterministic check (shopbench.paceshop.checks)")  # fmt: skip
    elif task == "padme_evaluator":
        s["explanation"] = f"worse: {row.get('reasoning_worse')} | better: {row.get('reasoning_better')}"
    else:
        s["explanation"] = f"{col} of the trajectory (termination: {row.get('termination')})"
    return s


def _messages_of(
    row: Mapping[str, Any], prompt: list[dict] | None, model: str, output: str | None
) -> list[dict]:
    if isinstance(row.get("messages"), str):  # an agent task's trajectory (tau2_retail_agent)
        try:
            return [chat_message(m) for m in json.loads(row["messages"])]
        except (ValueError, TypeError, AttributeError):
            pass
    msgs = list(prompt or [])
    if output:
        msgs.append({"role": "assistant", "content": output, "model": model, "source": "generate"})
    return msgs


def build(task: str, rows: Any, metrics: Mapping[str, Any], provenance: Mapping[str, Any], *,
          calls_dir: Path | None = None, prompts: Mapping[str, list[dict]] | None = None,
          model: str | None = None, status: str | None = None) -> dict:  # fmt: skip
    """The portable log ``{"format", "header", "samples"}`` of one run (the module docstring), redacted.
    ``rows``: the run's samples table; ``prompts``: item id → the messages the subject was sent."""
    from ..secrets import redact_tree, secret_values

    view = VIEWS.get(task, {"target": None, "output": None, "scores": ()})
    hashes, usage = _call_log(calls_dir) if calls_dir is not None else ({}, {})
    model = model or provenance.get("model") or (provenance.get("agent") or {}).get("spec") or "none"
    seed = provenance.get("seed")
    samples = []
    records = rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)
    for raw in records:
        row = {k: _plain(v) for k, v in raw.items()}
        sid, epoch = str(row.get("sample_id")), int(row.get("epoch") or 0)
        key = str(row.get("item_id") or sid)
        prompt = (prompts or {}).get(key)
        out_col = view["output"]
        output = row.get(out_col) if out_col else None
        if isinstance(row.get("messages"), str) and output is None:
            output = _last_assistant(row["messages"])
        scores = {
            c: s for c in view["scores"] if c in row and (s := _score(task, c, row[c], row)) is not None
        }
        skip = {*view["scores"], "messages", out_col, "sample_id", "epoch"}
        meta = {k: v for k, v in row.items() if k not in skip}
        meta.update(seed=seed, prompt_hash=hashes.get((key, epoch)) or hashes.get((sid, epoch)))
        target = row.get(view["target"]) if view["target"] else None
        sample: dict[str, Any] = {
            "id": sid, "epoch": epoch + 1,
            "input": [chat_message(m) for m in prompt] if prompt else _input_text(task, row),
            "target": "" if _missing(target) else str(target),
            "messages": _messages_of(row, [chat_message(m) for m in prompt] if prompt else None, model, output),
            "output": _assistant_output(model, output if isinstance(output, str) else None),
            "scores": scores, "metadata": meta,
        }  # fmt: skip
        if row.get("unit_status") == "error":
            sample["error"] = {"message": str(row.get("unit_error") or "call error"), "traceback": "",
                               "traceback_ansi": ""}  # fmt: skip
        samples.append(sample)
    header = _header(task, metrics, provenance, model, samples, usage, status)
    return redact_tree({"format": FORMAT, "header": header, "samples": samples}, secret_values())


def _last_assistant(messages_json: str) -> str | None:
    try:
        msgs = json.loads(messages_json)
    except ValueError:
        return None
    for m in reversed(msgs if isinstance(msgs, list) else []):
        if isinstance(m, dict) and m.get("role") == "assistant" and m.get("content"):
            return str(m["content"])
    return None


def _input_text(task: str, row: Mapping[str, Any]) -> str:
    """The sample's input when the prompt is not known from the task's calls: what identifies it."""
    for k in ("query", "tau2_id", "pair_id", "record_id"):
        if row.get(k):
            return f"{k}: {row[k]}"
    return f"{task} sample {row.get('sample_id')}"


def _header(task: str, metrics: Mapping[str, Any], prov: Mapping[str, Any], model: str, samples: list[dict],
            usage: dict, status: str | None) -> dict:  # fmt: skip
    import hashlib

    metrics, prov = _plain(metrics), _plain(prov)
    created = prov.get("date") or "1970-01-01T00:00:00+00:00"
    run_id = str(prov.get("gateway_run_id") or task)
    units = metrics.get("units") or {}
    scores = []
    for name, v in (metrics.get("headline") or {}).items():
        if not isinstance(v, dict) or _missing(v.get("estimate")) or isinstance(v.get("estimate"), str):
            continue
        ms = {k: {"name": k, "value": float(v[k])} for k in ("estimate", "ci_low", "ci_high")
              if isinstance(v.get(k), int | float) and not _missing(v.get(k))}  # fmt: skip
        scores.append({"name": name, "scorer": task, "metrics": ms, "scored_samples": int(units.get("ok", 0)),
                       "unscored_samples": int(units.get("total", 0)) - int(units.get("ok", 0))})  # fmt: skip
    ids = list(dict.fromkeys(s["id"] for s in samples))
    ok = int(units.get("ok", 0)) > 0
    commit = prov.get("git_commit")
    header: dict[str, Any] = {
        "version": 2,
        "status": status or ("success" if ok else "error"),
        "eval": {
            "eval_id": hashlib.sha256(f"{run_id}|{created}".encode()).hexdigest()[:22],
            "run_id": run_id, "created": created, "task": f"shopbench/{task}", "task_id": run_id,
            "task_version": 0, "task_registry_name": f"shopbench/{task}",
            "task_args": prov.get("params") or {}, "solver": "shopbench.tasks.runner.eval",
            "dataset": {"name": task, "location": prov.get("data"), "samples": len(ids), "sample_ids": ids},
            "model": model, "model_base_url": prov.get("model_base_url"),
            "config": {"limit": prov.get("limit"), "epochs": prov.get("epochs")},
            "revision": {"type": "git", "origin": "shopbench", "commit": str(commit)} if commit else None,
            "packages": {"shopbench": str(prov.get("shopbench") or "")},
            "metadata": {"shopbench": prov, "seed": prov.get("seed"), "prompt_files": prov.get("prompts")},
        },
        "results": {"total_samples": len(samples),
                    "completed_samples": sum(1 for s in samples if "error" not in s),
                    "scores": scores, "metadata": {"metrics": metrics}},
        "stats": {"started_at": created, "completed_at": created, "model_usage": usage},
    }  # fmt: skip
    if not ok:
        header["error"] = {
            "message": "no usable answer: every unit failed",
            "traceback": "",
            "traceback_ansi": "",
        }
    return header


# ---- writing and reading ---------------------------------------------------------------------------
def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write(log: Mapping[str, Any], out_dir: Path, *, eval_file: bool = True) -> list[Path]:
    """Write ``inspect.jsonl`` (always) and ``inspect.eval`` (when inspect-ai is installed and
    ``eval_file``) into ``out_dir``; the paths written."""
    out_dir = Path(out_dir)
    lines = [json.dumps({"format": log["format"], "header": log["header"]}, ensure_ascii=False)]
    lines += [json.dumps({"sample": s}, ensure_ascii=False) for s in log["samples"]]
    _atomic(out_dir / PORTABLE_NAME, "\n".join(lines) + "\n")
    written = [out_dir / PORTABLE_NAME]
    if eval_file and has_inspect():
        written.append(write_eval(log, out_dir / EVAL_NAME))
    return written


def write_eval(log: Mapping[str, Any], path: Path) -> Path:
    """``log`` as an inspect ``.eval`` file (:func:`inspect_ai.log.write_eval_log`), atomically."""
    from inspect_ai.log import write_eval_log

    path = Path(path)
    tmp = path.with_name("." + path.stem + ".tmp.eval")
    write_eval_log(to_eval_log(log), str(tmp), format="eval")
    tmp.replace(path)
    return path


def to_eval_log(log: Mapping[str, Any]):
    """The portable log as an :class:`inspect_ai.log.EvalLog` (pydantic validation of every field)."""
    from inspect_ai.log import EvalLog

    return EvalLog.model_validate({**log["header"], "samples": log["samples"]})


def write_task_log(out: Path, t: Any, rows: Any, metrics: Mapping[str, Any], prov: Mapping[str, Any],
                   gateway: Any = None, backbone: Any = None, epochs: int = 1) -> list[Path]:  # fmt: skip
    """The hook of :func:`shopbench.tasks.runner.eval`: the run's inspect log (issue 30 item 1). The
    prompts are the task's own calls (``t.calls``), rebuilt from the same records and prompt files."""
    prompts: dict[str, list[dict]] = {}
    if backbone is not None and getattr(t, "calls_model", True):
        try:
            for c in t.calls(gateway, backbone, epochs=epochs):
                prompts.setdefault(str(c.item_id), [dict(m) for m in c.messages])
        except Exception:  # noqa: BLE001 - an agent task knows its calls only as trials run
            prompts = {}
    log = build(str(getattr(t, "name", None) or prov.get("task")), rows, metrics, prov, calls_dir=Path(out) / "calls",
                prompts=prompts)  # fmt: skip
    return write(log, Path(out))


def _bad(path: Path, what: str, fix: str) -> UserError:
    return UserError(f"{path}: {what}. Fix: {fix}")


def load(path: str | Path) -> tuple[dict, Path]:
    """``(portable log, the file read)`` from a run folder (its ``inspect.jsonl``, else ``inspect.eval``),
    an ``inspect.jsonl`` or any inspect ``.eval`` / ``.json`` log (written by inspect itself too). A
    missing, truncated or corrupt log is one :class:`~shopbench.errors.UserError` naming the file."""
    p = Path(path).expanduser()
    if p.is_dir():
        for name in (PORTABLE_NAME, EVAL_NAME):
            if (p / name).exists():
                return load(p / name)
        raise _bad(p, f"no {PORTABLE_NAME} or {EVAL_NAME} in this folder",
                   "give a run folder written by `shopbench eval` (outputs/tasks/TASK/...) or a .eval file")  # fmt: skip
    if not p.exists():
        raise _bad(p, "no such file", "give a run folder, its inspect.jsonl or an inspect .eval log")
    if p.suffix == ".jsonl":
        return _read_portable(p), p
    if p.suffix in (".eval", ".json"):
        if not has_inspect():
            raise _bad(p, "reading an inspect log needs inspect-ai", INSTALL_HINT)
        from inspect_ai.log import read_eval_log

        try:
            log = read_eval_log(str(p))
        except Exception as e:  # noqa: BLE001 - zip / JSON / validation errors: the file is broken
            raise _bad(p, f"not a readable inspect log ({type(e).__name__}: {str(e)[:160]})",
                       "the file is truncated or corrupt: rerun the task, or give another log") from None  # fmt: skip
        d = log.model_dump(mode="json", exclude_none=True)
        samples = d.pop("samples", None) or []
        return {"format": FORMAT, "header": d, "samples": samples}, p
    raise _bad(p, "not a log (expected a run folder, inspect.jsonl, .eval or .json)",
               "give the folder `shopbench eval` wrote, or an inspect log")  # fmt: skip


def _read_portable(p: Path) -> dict:
    text = p.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    fix = "the file is truncated or corrupt: rerun the task (the same command resumes with no new call)"
    if not lines:
        raise _bad(p, "empty log", fix)
    samples = []
    try:
        first = json.loads(lines[0])
    except ValueError:
        raise _bad(p, "line 1 is not JSON", fix) from None
    if not isinstance(first, dict) or first.get("format") != FORMAT or "header" not in first:
        raise _bad(p, f"line 1 is not a {FORMAT} header", "give an inspect.jsonl written by shopbench eval")
    for i, line in enumerate(lines[1:], start=2):
        try:
            d = json.loads(line)
            samples.append(d["sample"])
        except (ValueError, KeyError, TypeError):
            raise _bad(p, f"line {i} is not a sample", fix) from None
    if not text.endswith("\n"):
        raise _bad(p, "the last line is cut (no newline at the end)", fix)
    n = (first["header"].get("results") or {}).get("total_samples")
    if isinstance(n, int) and n != len(samples):
        raise _bad(p, f"the header counts {n} samples, the file holds {len(samples)}", fix)
    return {"format": FORMAT, "header": first["header"], "samples": samples}


def convert(paths: Iterable[str | Path]) -> list[Path]:
    """``shopbench logs convert``: each run folder's or ``inspect.jsonl``'s log as ``inspect.eval`` next
    to it (needs the extra). Every input is read and validated before anything is written."""
    if not has_inspect():
        raise UserError(f"converting to .eval needs inspect-ai. Fix: {INSTALL_HINT}")
    todo = []
    for path in paths:
        p = Path(path).expanduser()
        src = p / PORTABLE_NAME if p.is_dir() else p
        log, src = load(src)
        try:
            to_eval_log(log)
        except Exception as e:  # noqa: BLE001 - pydantic validation
            raise _bad(src, f"not a valid inspect log ({str(e).splitlines()[0][:160]})",
                       "rerun the task with this version of shopbench") from None  # fmt: skip
        todo.append((log, src.parent / EVAL_NAME))
    return [write_eval(log, dest) for log, dest in todo]
