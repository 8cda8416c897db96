"""``gateway.mode: batch`` (issue 14 §4): OpenAI's Batch API and Anthropic's Message Batches through
litellm's batch functions, merged into the same cache and call log as real-time calls.

For each sweep the gateway hands over its misses (calls not in the log, not in the cache). Calls to
``openai/…`` and ``anthropic/…`` models are grouped by (provider, model, api base) and submitted as
batches of at most :data:`MAX_LINES` lines (one line per distinct request: calls that differ only in
item id share a line); the rest go on through the real-time path, and so does a sweep with fewer than
``gateway.batch_min_calls`` batchable requests (an agent's or a simulated user's next turn). Then the batches are polled every
``gateway.batch_poll_s`` seconds until they end, their results downloaded, and each line becomes a
call-log row exactly like a real-time call's (cached when it succeeded; a per-line error is logged
with ``status: error`` and never cached, so a rerun asks again).

Resume: every submitted batch is recorded, before it is polled, in ``<run_id>.batches`` next to
the call log (batch id, provider, model, the request key of every line). A run killed while its
batches are in flight and started again with the same ``run_id`` polls those batches instead of
submitting the same requests again; once a batch's rows are in the log it is marked merged.

How each provider's batch is made:

- OpenAI: ``litellm.acreate_file`` (purpose ``batch``, JSONL of ``/v1/chat/completions`` bodies),
  ``litellm.acreate_batch``, ``litellm.aretrieve_batch``, ``litellm.afile_content`` for the output
  and error files.
- Anthropic: litellm 1.110 has no ``create_batch`` for Anthropic, so the batch is created with one
  ``POST /v1/messages/batches`` whose per-request ``params`` are built by litellm's own
  ``AnthropicConfig`` (the body ``litellm.acompletion`` would send); polling and results use
  ``litellm.aretrieve_batch`` and ``litellm.afile_content`` (which turns Anthropic's results into
  OpenAI's batch-output format).

Prices: a batch line costs what litellm's ``batch_cost_calculator`` says (the cost map's
``*_batches`` rates; half the real-time rate where the map has none), which :func:`batch_price_factor`
exposes for the preview.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .calllog import CallLog
from .providers import get_litellm

BATCH_PROVIDERS = ("openai", "anthropic")
MAX_LINES = 10_000
TERMINAL = ("completed", "failed", "expired", "cancelled")
ANTHROPIC_VERSION = "2023-06-01"
JSON_TOOL_NAMES = ("json_tool_call",)  # litellm's forced tool for response_format on Anthropic
DEFAULT_BATCH_FACTOR = 0.5  # OpenAI and Anthropic both bill batches at half the real-time rate


class BatchError(RuntimeError):
    """A batch could not be submitted or read back."""


def batchable(model: str) -> bool:
    """Whether calls to ``model`` can go through a provider batch API here."""
    return model.split("/", 1)[0] in BATCH_PROVIDERS if "/" in model else False


def batch_price_factor(model: str) -> float:
    """Batch price / real-time price for ``model`` from litellm's cost map (input rates), else 0.5."""
    litellm = get_litellm()
    for name in (model, model.split("/", 1)[-1]):
        info = litellm.model_cost.get(name)
        if info and info.get("input_cost_per_token"):
            b = info.get("input_cost_per_token_batches")
            return float(b) / float(info["input_cost_per_token"]) if b else DEFAULT_BATCH_FACTOR
    return DEFAULT_BATCH_FACTOR


# ---- the state file ------------------------------------------------------------------------------
def state_path(log_path: Path) -> Path:
    """``<run_id>.batches`` (JSON lines) beside the call log ``<run_id>.jsonl`` (not ``*.jsonl``: the
    run summary reads every ``*.jsonl`` under ``calls/`` as call rows)."""
    return log_path.with_name(log_path.stem + ".batches")


def open_batches(state: CallLog) -> dict[str, dict]:
    """Submitted batches whose rows are not all in the call log yet, by batch id."""
    subs: dict[str, dict] = {}
    for ev in state.rows():
        if ev.get("event") == "submitted":
            subs[ev["batch_id"]] = ev
        elif ev.get("event") == "merged":
            subs.pop(ev.get("batch_id"), None)
    return subs


# ---- request bodies ------------------------------------------------------------------------------
def _openai_body(gw, c) -> dict:
    from .call import GENERATION_KEYS

    body: dict[str, Any] = {"model": c.model.split("/", 1)[1], "messages": list(c.messages)}
    body.update({k: v for k, v in c.params.items() if k in GENERATION_KEYS})
    if c.response_format is not None:
        body["response_format"] = c.response_format
    if c.tools:
        body["tools"] = list(c.tools)
    return body


def _anthropic_params(gw, c) -> dict:
    """The Messages body litellm would send for this call (litellm's AnthropicConfig transform)."""
    from .call import GENERATION_KEYS
    from .usage import with_cache_control

    litellm = get_litellm()
    cfg = litellm.AnthropicConfig()
    model = c.model.split("/", 1)[1]
    non_default: dict[str, Any] = {k: v for k, v in c.params.items() if k in GENERATION_KEYS}
    if c.response_format is not None:
        non_default["response_format"] = c.response_format
    if c.tools:
        non_default["tools"] = list(c.tools)
    optional = cfg.map_openai_params(non_default_params=non_default, optional_params={}, model=model,
                                     drop_params=True)  # fmt: skip
    messages = with_cache_control("anthropic", c.messages, gw._prefix_plan.get(c.key))
    data = cfg.transform_request(model=model, messages=messages, optional_params=optional,
                                 litellm_params={}, headers={})  # fmt: skip
    data.pop("stream", None)
    data.setdefault("max_tokens", 4096)
    return dict(data)


# ---- submit, poll, read back -------------------------------------------------------------------
async def _submit(gw, provider: str, model: str, api_base: str | None, lines: list[tuple[str, Any]]) -> str:
    litellm = get_litellm()
    if provider == "openai":
        payload = "".join(
            json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions",
                        "body": _openai_body(gw, c)}) + "\n"
            for cid, c in lines
        )  # fmt: skip
        kw = {"api_base": api_base} if api_base else {}
        f = await litellm.acreate_file(file=(f"shopbench-{uuid.uuid4().hex[:8]}.jsonl", payload.encode()),
                                       purpose="batch", custom_llm_provider="openai", **kw)  # fmt: skip
        b = await litellm.acreate_batch(completion_window="24h", endpoint="/v1/chat/completions",
                                        input_file_id=f.id, custom_llm_provider="openai", **kw)  # fmt: skip
        return str(b.id)
    import httpx

    base = (api_base or os.environ.get("ANTHROPIC_API_BASE") or os.environ.get("ANTHROPIC_BASE_URL")
            or "https://api.anthropic.com").rstrip("/")  # fmt: skip
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise BatchError("anthropic batch: set ANTHROPIC_API_KEY in the environment")
    reqs = [{"custom_id": cid, "params": _anthropic_params(gw, c)} for cid, c in lines]
    async with httpx.AsyncClient(timeout=gw.timeout_s) as client:
        r = await client.post(f"{base}/v1/messages/batches", json={"requests": reqs},
                              headers={"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION})  # fmt: skip
    if r.status_code >= 400:
        raise BatchError(f"anthropic batch create: HTTP {r.status_code}: {r.text[:300]}")
    return str(r.json()["id"])


async def _content(provider: str, file_id: str, api_base: str | None) -> list[dict]:
    litellm = get_litellm()
    kw = {"api_base": api_base} if api_base else {}
    resp = await litellm.afile_content(file_id=file_id, custom_llm_provider=provider, **kw)
    data = resp.content if hasattr(resp, "content") else resp
    raw = bytes(data) if isinstance(data, bytes | bytearray) else str(data).encode()
    lines = [json.loads(ln) for ln in raw.decode().splitlines() if ln.strip()]
    if provider == "anthropic" and any("result" in ln and "response" not in ln for ln in lines):
        # litellm 1.110's generic file_content path hands back Anthropic's own results format; its
        # Anthropic files handler has the transform to OpenAI's batch-output lines (usage, tool_use)
        handler = litellm.llms.anthropic.files.handler.AnthropicFilesHandler()
        raw = handler._transform_anthropic_batch_results_to_openai_format(raw)
        lines = [json.loads(ln) for ln in raw.decode().splitlines() if ln.strip()]
    return lines


def _stored(gw, provider: str, model: str, body: dict, latency: float) -> dict:
    """A result line's chat.completion body as the gateway's cache entry."""
    from .call import clean_json, clean_text
    from .usage import cache_tokens

    litellm = get_litellm()
    choice = (body.get("choices") or [{}])[0]
    msg = choice.get("message") or {}
    content, tool_calls = msg.get("content"), msg.get("tool_calls") or None
    finish = choice.get("finish_reason")
    if (not content) and tool_calls and len(tool_calls) == 1:
        fn = tool_calls[0].get("function") or {}
        if (
            fn.get("name") in JSON_TOOL_NAMES
        ):  # litellm's JSON mode on Anthropic: the answer is the tool input
            content, tool_calls, finish = fn.get("arguments"), None, "stop"
    usage = body.get("usage") or {}
    read, write = cache_tokens(usage)
    try:
        u = litellm.Usage(**usage)
        cost = sum(litellm.cost_calculator.batch_cost_calculator(u, model.split("/", 1)[1], provider))
    except Exception:  # noqa: BLE001 - an unpriced model costs what we cannot know; say 0
        cost = 0.0
    return {
        "raw_output": clean_text(content),
        "tool_calls": clean_json(tool_calls) if tool_calls else None,
        "finish_reason": finish,
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "cached_tokens": read,
        "cache_write_tokens": write,
        "cost_usd": float(cost),
        "latency_s": latency,
        "model_returned": body.get("model"),
        "batch": True,
    }


async def _wait(gw, sub: dict, desc: Callable[[str], None]) -> Any:
    litellm = get_litellm()
    kw = {"api_base": sub["api_base"]} if sub.get("api_base") else {}
    while True:
        b = await litellm.aretrieve_batch(batch_id=sub["batch_id"], custom_llm_provider=sub["provider"], **kw)
        desc(f"{sub['batch_id'][:18]} {b.status}")
        if b.status in TERMINAL:
            return b
        await asyncio.sleep(gw.batch_poll_s)


async def run_batches(gw, run_id: str, misses: Sequence[Any], log: CallLog, new_rows: dict, tick) -> list:
    """Send the batchable ``misses`` through provider batches (resuming recorded ones), log their rows
    into ``log`` and ``new_rows``; return the calls left for the real-time path."""
    state = CallLog(state_path(log.path))
    by_key: dict[str, list[Any]] = {}
    for c in misses:
        by_key.setdefault(c.key, []).append(c)
    opened = open_batches(state)
    covered = {k for sub in opened.values() for k in sub["keys"].values()}
    rest = [c for c in misses if not batchable(c.model)]
    groups: dict[tuple[str, str, str | None], list[Any]] = {}
    for key, cs in by_key.items():
        c = cs[0]
        if batchable(c.model) and key not in covered:
            groups.setdefault((c.provider, c.model, c.api_base), []).append(c)
    if sum(len(cs) for cs in groups.values()) < gw.batch_min_calls:  # an agent's turn, a handful of calls
        rest.extend(x for cs in groups.values() for c in cs for x in by_key[c.key])
        groups = {}
    # submit new batches (recorded before anything waits on them)
    for (provider, model, api_base), cs in groups.items():
        for i in range(0, len(cs), MAX_LINES):
            chunk = cs[i : i + MAX_LINES]
            lines = [(f"r{j}", c) for j, c in enumerate(chunk)]
            if gw.max_cost_usd is not None:  # a batch that would pass the cap is left to the real-time guard
                from .budget import estimate_call_cost

                est = sum((estimate_call_cost(c.model, c.messages, c.params) or 0.0) for c in chunk)
                if gw.spent_usd + est * batch_price_factor(model) > gw.max_cost_usd:
                    rest.extend(x for c in chunk for x in by_key[c.key])
                    continue
            try:
                bid = await _submit(gw, provider, model, api_base, lines)
            except Exception as e:  # noqa: BLE001 - the calls are logged as errors, the sweep goes on
                err = f"batch submit failed: {type(e).__name__}: {str(e)[:400]}"
                _log_errors(gw, run_id, [x for c in chunk for x in by_key[c.key]], err, log, new_rows, tick)
                continue
            sub = {"event": "submitted", "batch_id": bid, "provider": provider, "model": model,
                   "api_base": api_base, "keys": {cid: c.key for cid, c in lines}, "ts": time.time()}  # fmt: skip
            state.append([sub])
            opened[bid] = sub
    if opened:
        print(f"[{run_id}] {len(opened)} provider batch(es) in flight: {', '.join(opened)}", flush=True)

    def desc(text: str) -> None:
        pass

    async def finish(sub: dict) -> None:
        t0 = float(sub.get("ts") or time.time())
        try:
            b = await _wait(gw, sub, desc)
            results: dict[str, dict] = {}
            for fid in (getattr(b, "output_file_id", None), getattr(b, "error_file_id", None)):
                if fid:
                    for line in await _content(sub["provider"], fid, sub.get("api_base")):
                        results[str(line.get("custom_id"))] = line
            batch_err = None if b.status == "completed" else f"batch {b.status}"
        except Exception as e:  # noqa: BLE001 - recorded per call; the batch stays open for a rerun
            err = f"batch {sub['batch_id']} unreadable: {type(e).__name__}: {str(e)[:400]}"
            calls = [x for k in sub["keys"].values() for x in by_key.get(k, [])]
            _log_errors(gw, run_id, calls, err, log, new_rows, tick)
            return
        latency = time.time() - t0
        rows = []
        for cid, key in sub["keys"].items():
            calls = by_key.get(key, [])
            line = results.get(cid)
            resp = (line or {}).get("response") or {}
            body = resp.get("body") or {}
            if line is None or resp.get("status_code") != 200 or "choices" not in body:
                why = (
                    batch_err
                    or ((body.get("error") or {}).get("message") if isinstance(body, dict) else None)
                    or (line or {}).get("error")
                    or "no result line"
                )
                err = f"batch line {cid} of {sub['batch_id']}: {why}"
                rows += [gw._error_row(run_id, c, str(err), 1, latency) for c in calls]
                continue
            stored = _stored(gw, sub["provider"], sub["model"], body, latency)
            gw.cache.put(key, stored)
            gw.spent_usd += stored["cost_usd"]
            for n, c in enumerate(calls):
                rows.append(gw._row(run_id, c, stored, cache_hit=n > 0, attempts=1, latency=latency,
                                    cost=stored["cost_usd"] if n == 0 else 0.0))  # fmt: skip
        _record(gw, rows, log, new_rows, tick, by_key)
        state.append([{"event": "merged", "batch_id": sub["batch_id"], "ts": time.time()}])

    await asyncio.gather(*(finish(sub) for sub in list(opened.values())))
    return rest


def _record(gw, rows: list[dict], log: CallLog, new_rows: dict, tick, by_key) -> None:
    if not rows:
        return
    log.append(rows)
    for r in rows:
        new_rows[(r["item_id"], r["key"])] = r
        gw.stats["calls"] += 1
        gw.stats["cache_hits"] += int(r["cache_hit"])
        gw.stats["errors"] += r["status"] == "error"
        gw.stats["parse_errors"] += r["status"] == "parse_error"
    tick(len(rows), rows)


def _log_errors(gw, run_id, calls, err, log, new_rows, tick) -> None:
    _record(gw, [gw._error_row(run_id, c, err, 1, 0.0) for c in calls], log, new_rows, tick, None)


__all__ = ["BATCH_PROVIDERS", "BatchError", "batch_price_factor", "batchable", "open_batches", "run_batches",
           "state_path"]  # fmt: skip
