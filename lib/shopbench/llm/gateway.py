"""The one gateway for model calls (DESIGN.md, "One gateway for model calls").

``Gateway.run(calls, run_id)`` takes a list of :class:`Call` and returns one row per call, in
order. In front of litellm sit: the on-disk cache (errors never cached), a concurrency bound per
provider, retries with exponential backoff and jitter on 429/5xx/timeouts/connection errors, a
per-call timeout, the budget guard (dry run and cost cap), the append-only call log, and the
output-contract parser. A sweep killed at any point and started again with the same ``run_id``
skips the rows already logged and gets finished-but-unlogged answers from the cache, so no row is
lost or duplicated and no successful call is repeated.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import random
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, overload

from .. import secrets
from ..progress import tqdm
from ..strictjson import storable
from ._litellm import get_litellm
from .backends import Backbone, api_key_for, check_model
from .budget import BudgetExceeded, Estimate, actual_cost, estimate_call_cost
from .cache import ResponseCache, cache_key, canonical_json
from .calllog import CallLog
from .contract import check_schema, parse_output, response_format
from .result import CallResult
from .usage import cache_tokens, plan, with_cache_control

DEFAULT_CONCURRENCY = {"llamacpp": 1, "local": 4, "default": 8}
GENERATION_KEYS = ("temperature", "max_tokens", "top_p", "seed", "stop", "n", "presence_penalty",
                   "frequency_penalty", "logprobs", "top_logprobs", "tool_choice", "reasoning_effort")  # fmt: skip
DONE = ("ok", "parse_error")


@dataclass(frozen=True)
class Call:
    """One model call: what to ask (messages, settings, output contract) and of whom."""

    item_id: str
    model: str
    messages: Sequence[dict]
    params: dict = field(default_factory=dict)
    schema: dict | None = None
    schema_name: str = "output"
    tools: Sequence[dict] | None = None
    repeat: int = 0
    api_base: str | None = None
    # what the cache key uses instead of api_base: a project-started server gets a new port each
    # run, so its calls are keyed by the model it serves ("llamacpp-server:<model>")
    cache_base: str | None = None

    @property
    def response_format(self) -> dict | None:
        return response_format(self.schema, self.schema_name) if self.schema is not None else None

    @property
    def key(self) -> str:
        params = self.params
        if self.model.startswith("local/"):  # deterministic code can change; its version keys the cache
            from .local import code_version

            params = {**params, "_local_code_version": code_version(self.model.split("/", 1)[1])}
        return cache_key(
            model=self.model,
            api_base=self.cache_base or self.api_base,
            messages=list(self.messages),
            params=params,
            tools=list(self.tools) if self.tools else None,
            response_format=self.response_format,
            repeat=self.repeat,
        )

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0] if "/" in self.model else "openai"


def prompt_hash(messages: Sequence[dict]) -> str:
    return hashlib.sha256(canonical_json(list(messages)).encode()).hexdigest()[
        :16
    ]  # canonical_json is storable


def redact(text: str | None) -> str | None:
    """Text bound for disk with every secret environment value, partial echo of one
    (case-insensitive) and key-shaped token removed (:func:`shopbench.secrets.redact`)."""
    return secrets.redact(text) if isinstance(text, str) else text


def _clean_text(text: Any) -> str | None:
    """A model's text as the gateway keeps it: redacted and storable (a lone surrogate becomes its
    ``\\udXXX`` escape, so the cache, the call log and every table downstream can write it)."""
    if text is None:
        return None
    if not isinstance(text, str):  # content parts or another provider shape: kept as its JSON text
        text = json.dumps(text, ensure_ascii=False, default=str)
    return storable(redact(text))


def _clean_json(obj: Any) -> Any:
    """``obj`` (tool calls) with every string redacted and storable."""
    if isinstance(obj, str):
        return storable(redact(obj))
    if isinstance(obj, dict):
        return {_clean_json(k): _clean_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean_json(v) for v in obj]
    if obj is None or isinstance(obj, bool | int | float):
        return obj
    return _clean_json(str(obj))


def is_retryable(exc: BaseException) -> bool:
    litellm = get_litellm()
    retry_types = (
        litellm.RateLimitError, litellm.InternalServerError, litellm.ServiceUnavailableError,
        litellm.APIConnectionError, litellm.Timeout, asyncio.TimeoutError, TimeoutError, ConnectionError,
    )  # fmt: skip
    if isinstance(exc, retry_types):
        return True
    code = getattr(exc, "status_code", None)
    return isinstance(code, int) and (code in (408, 409, 429) or code >= 500)


class _Loop:
    """A process-wide event loop in a worker thread, for the sync API inside Jupyter (whose kernel
    already runs a loop) and for keeping litellm's async clients on one loop across runs."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def run(cls, coro):
        with cls._lock:
            if cls._loop is None:
                cls._loop = asyncio.new_event_loop()
                threading.Thread(target=cls._loop.run_forever, name="shopbench-gateway", daemon=True).start()
        fut: concurrent.futures.Future = asyncio.run_coroutine_threadsafe(coro, cls._loop)
        try:
            return fut.result()
        except KeyboardInterrupt:
            fut.cancel()
            raise


class Gateway:
    """Cache + limits + retries + log + budget + contracts around ``litellm.acompletion``."""

    def __init__(
        self,
        *,
        cache_dir: str | Path,
        log_dir: str | Path,
        concurrency: dict[str, int] | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        backoff_max_s: float = 30.0,
        max_cost_usd: float | None = None,
        progress: bool = True,
        backbones: Iterable[Backbone] = (),
        mode: str = "realtime",
        batch_poll_s: float = 30.0,
        batch_min_calls: int = 20,
        budget_mode: str = "raise",
    ):
        self.cache = ResponseCache(cache_dir)
        self.log_dir = Path(log_dir)
        self.concurrency = {**DEFAULT_CONCURRENCY, **(concurrency or {})}
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.backoff_max_s = float(backoff_max_s)
        self.max_cost_usd = max_cost_usd
        # "raise": a cost-cap stop raises BudgetExceeded; "partial" (notebooks): the calls not made come
        # back as error rows ("not called: ...", never logged or cached) and the stop is recorded in
        # <log_dir>/partial.json, so the tables built from the sweep say "partial: n of N calls"
        self.budget_mode = budget_mode
        self.progress = progress
        self.backbones = {b.name: b for b in backbones}
        self.spent_usd = 0.0
        self.stats = {"calls": 0, "cache_hits": 0, "errors": 0, "parse_errors": 0, "cost_usd": 0.0}
        # "batch": OpenAI/Anthropic misses go through the providers' batch APIs (llm/batch.py)
        self.mode = mode
        self.batch_poll_s = float(batch_poll_s)
        self.batch_min_calls = int(batch_min_calls)  # smaller sweeps (an agent's next turn) stay real-time
        self._prefix_plan: dict[str, int] = {}  # call key -> Anthropic cache_control prefix (llm/usage.py)

    # ---- building calls -------------------------------------------------------------------
    def call(self, backbone: str | Backbone, item_id: str, messages: Sequence[dict], **kw: Any) -> Call:
        """A :class:`Call` to a configured backbone (by name) with its default generation settings."""
        name = backbone.name if isinstance(backbone, Backbone) else backbone
        b = self.backbones.get(name) or (backbone if isinstance(backbone, Backbone) else None)
        if b is None:
            raise KeyError(
                f"no backbone named {backbone!r}; configured: {', '.join(self.backbones) or 'none'}"
            )
        b.ensure_started()
        params = {**b.params, **kw.pop("params", {})}
        if b.server:
            kw.setdefault("cache_base", f"{b.server}-server:{b.model_name or b.name}")
        return Call(
            item_id=item_id, model=b.model, messages=list(messages), params=params, api_base=b.api_base, **kw
        )

    def _backbone_for(self, c: Call) -> Backbone | None:
        for b in self.backbones.values():
            if b.model == c.model and b.api_base == c.api_base:
                return b
        return None

    def log_path(self, run_id: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", run_id)
        return self.log_dir / f"{safe}.jsonl"

    # ---- the sweep -------------------------------------------------------------------------
    def estimate(self, calls: Sequence[Call], run_id: str | None = None) -> Estimate:
        """Dry run: how many calls a sweep would make, how many the cache and log already hold, and
        an upper-bound cost. Calls nothing."""
        pending = self._pending(calls, run_id)[0] if run_id else list(calls)
        hits = self.cache.get_many(c.key for c in pending)
        est = Estimate()
        est.cached += len(calls) - len(pending)
        est.calls += len(calls) - len(pending)
        for c in pending:
            est.add(
                c.model,
                c.key in hits,
                None if c.key in hits else estimate_call_cost(c.model, c.messages, c.params),
            )
        return est

    @overload
    def run(self, calls: Sequence[Call], run_id: str, *, dry_run: Literal[False] = False,
            desc: str | None = None) -> list[CallResult]: ...  # fmt: skip
    @overload
    def run(
        self, calls: Sequence[Call], run_id: str, *, dry_run: Literal[True], desc: str | None = None
    ) -> Estimate: ...
    @overload
    def run(
        self, calls: Sequence[Call], run_id: str, *, dry_run: bool, desc: str | None = None
    ) -> list[CallResult] | Estimate: ...
    def run(
        self, calls: Sequence[Call], run_id: str, *, dry_run: bool = False, desc: str | None = None
    ) -> list[CallResult] | Estimate:
        """Synchronous :meth:`arun` (safe inside Jupyter: runs on the gateway's own loop thread): one
        :class:`~shopbench.llm.result.CallResult` per call, in order (a dry run: the :class:`Estimate`)."""
        return _Loop.run(self.arun(calls, run_id, dry_run=dry_run, desc=desc))

    def _pending(self, calls: Sequence[Call], run_id: str) -> tuple[list[Call], dict, CallLog]:
        seen: set[tuple[str, str]] = set()
        for c in calls:
            k = (c.item_id, c.key)
            if k in seen:
                raise ValueError(
                    f"call for item {c.item_id!r} appears twice with identical settings; "
                    "give repeats distinct 'repeat' indices"
                )
            seen.add(k)
        log = CallLog(self.log_path(run_id))
        latest = log.latest()
        done = {k: r for k, r in latest.items() if r.get("status") in DONE}
        pending = [c for c in calls if (c.item_id, c.key) not in done]
        return pending, done, log

    @overload
    async def arun(self, calls: Sequence[Call], run_id: str, *, dry_run: Literal[False] = False,
                   desc: str | None = None) -> list[CallResult]: ...  # fmt: skip
    @overload
    async def arun(
        self, calls: Sequence[Call], run_id: str, *, dry_run: Literal[True], desc: str | None = None
    ) -> Estimate: ...
    @overload
    async def arun(
        self, calls: Sequence[Call], run_id: str, *, dry_run: bool, desc: str | None = None
    ) -> list[CallResult] | Estimate: ...
    async def arun(
        self, calls: Sequence[Call], run_id: str, *, dry_run: bool = False, desc: str | None = None
    ) -> list[CallResult] | Estimate:
        calls = list(calls)
        for c in {id(c.schema): c for c in calls if c.schema is not None}.values():
            check_schema(c.schema)
        if dry_run:
            return self.estimate(calls, run_id)
        pending, done, log = self._pending(calls, run_id)
        hits = self.cache.get_many(c.key for c in pending)
        misses = [c for c in pending if c.key not in hits]
        configured = [b.model for b in self.backbones.values()]
        for model, base in {(c.model, c.api_base) for c in misses}:
            check_model(model, base, configured=configured)

        new_rows: dict[tuple[str, str], dict] = {}
        bar = tqdm(total=len(calls), desc=desc or run_id, disable=not self.progress, unit="call",
                   initial=len(done), mininterval=0.5)  # fmt: skip
        counts = {"hits": 0, "fail": 0}

        def tick(n: int = 1) -> None:
            bar.update(n)
            bar.set_postfix(
                hits=counts["hits"], fail=counts["fail"], cost=f"${self.spent_usd:.4f}", refresh=False
            )

        hit_rows = []
        for c in pending:
            if c.key in hits:
                row = self._row(run_id, c, hits[c.key], cache_hit=True, attempts=0, latency=0.0, cost=0.0)
                hit_rows.append(row)
                new_rows[(c.item_id, c.key)] = row
        log.append(hit_rows)
        counts["hits"] = len(hit_rows)
        self.stats["cache_hits"] += len(hit_rows)
        self.stats["calls"] += len(hit_rows)
        tick(len(hit_rows))

        sems: dict[tuple[str, str | None], asyncio.Semaphore] = {}
        inflight: dict[str, asyncio.Future] = {}
        budget_stopped: list[Call] = []

        async def one(c: Call) -> None:
            fut = inflight.get(c.key)
            if fut is not None:  # same request under another item id: one model call, a cache hit here
                stored = await fut
                row = (
                    self._row(run_id, c, stored, cache_hit=True, attempts=0, latency=0.0, cost=0.0)
                    if stored
                    else self._error_row(run_id, c, "duplicate of a failed call", 0, 0.0)
                )
            else:
                fut = asyncio.get_running_loop().create_future()
                inflight[c.key] = fut
                stored = None
                try:
                    row, stored = await self._call_with_retries(run_id, c, sems, budget_stopped)
                finally:
                    if not fut.done():
                        fut.set_result(stored)
            if row is None:
                return
            log.append([row])
            new_rows[(c.item_id, c.key)] = row
            self.stats["calls"] += 1
            self.stats["cache_hits"] += int(row["cache_hit"])
            if row["status"] == "error":
                counts["fail"] += 1
                self.stats["errors"] += 1
            elif row["status"] == "parse_error":
                self.stats["parse_errors"] += 1
            if row["cache_hit"]:
                counts["hits"] += 1
            tick()

        self._prefix_plan.update(plan(misses))
        if self.mode == "batch":  # issue 14 §4: batchable misses go through the providers' batch APIs
            from .batch import run_batches

            misses = await run_batches(self, run_id, misses, log, new_rows, tick)
        try:
            await asyncio.gather(*(one(c) for c in misses))
        finally:
            bar.close()
        self.stats["cost_usd"] = self.spent_usd
        from ..report.partial import record as record_partial

        record_partial(self.log_dir, run_id, len(calls) - len(budget_stopped), len(calls))
        if budget_stopped and self.budget_mode == "partial":
            print(f"run {run_id!r}: cost cap ${self.max_cost_usd} reached after ${self.spent_usd:.4f}; "
                  f"{len(budget_stopped)} of {len(calls)} calls were not made (partial; raise "
                  "gateway.max_cost_usd and rerun to finish)")  # fmt: skip
            for c in budget_stopped:
                new_rows[(c.item_id, c.key)] = self._error_row(
                    run_id, c, "not called: the cost cap gateway.max_cost_usd was reached", 0, 0.0
                )
        elif budget_stopped:
            raise BudgetExceeded(
                f"run {run_id!r}: cost cap ${self.max_cost_usd} reached after ${self.spent_usd:.4f}; "
                f"{len(budget_stopped)} of {len(calls)} calls were not made. Finished calls are cached and "
                f"logged in {log.path}; raise gateway.max_cost_usd and rerun to finish."
            )
        out = []
        for c in calls:
            k = (c.item_id, c.key)
            out.append(new_rows.get(k) or done[k])
        return cast("list[CallResult]", out)

    async def _call_with_retries(
        self, run_id, c: Call, sems, budget_stopped
    ) -> tuple[dict | None, dict | None]:
        litellm = get_litellm()
        skey = (c.provider, c.api_base)
        if skey not in sems:
            b = self._backbone_for(c)
            own = (b.concurrency or (1 if b.server else None)) if b else None
            limit = own or self.concurrency.get(c.provider) or self.concurrency["default"]
            sems[skey] = asyncio.Semaphore(int(limit))
        kwargs: dict[str, Any] = {k: v for k, v in c.params.items() if k in GENERATION_KEYS}
        extra = {k: v for k, v in c.params.items() if k not in GENERATION_KEYS}
        if extra:
            kwargs["extra_body"] = extra
        if c.response_format is not None:
            kwargs["response_format"] = c.response_format
            b = self._backbone_for(c)
            if b is not None and b.server == "llamacpp":  # llama_cpp.server takes json_object + schema
                from .llamacpp import _grammar_schema  # its grammar parser needs the same length cap

                kwargs["response_format"] = {"type": "json_object", "schema": _grammar_schema(c.schema)}
        if c.tools:
            kwargs["tools"] = list(c.tools)
        if c.api_base:
            kwargs["api_base"] = c.api_base
        key = api_key_for(c.model, c.api_base)
        if key:  # a keyless local server (llama.cpp, vLLM, Ollama): free, and litellm skips its price search
            kwargs["api_key"] = key
            kwargs.setdefault("input_cost_per_token", 0.0)
            kwargs.setdefault("output_cost_per_token", 0.0)
        attempts = 0
        last_err = ""
        async with sems[skey]:
            t0 = time.perf_counter()  # latency excludes waiting for a concurrency slot
            while True:
                if self.max_cost_usd is not None:
                    est = estimate_call_cost(c.model, c.messages, c.params) or 0.0
                    if self.spent_usd + est > self.max_cost_usd:
                        budget_stopped.append(c)
                        return None, None
                attempts += 1
                try:
                    resp = await asyncio.wait_for(
                        litellm.acompletion(
                            model=c.model,
                            messages=with_cache_control(c.provider, c.messages, self._prefix_plan.get(c.key)),
                            timeout=self.timeout_s,
                            num_retries=0,
                            **kwargs,
                        ),
                        timeout=self.timeout_s,
                    )
                except Exception as e:  # noqa: BLE001 - classified below, recorded in the log
                    last_err = f"{type(e).__name__}: {str(e)[:500]}"
                    if attempts <= self.max_retries and is_retryable(e):
                        delay = min(self.backoff_max_s, self.backoff_s * 2 ** (attempts - 1))
                        await asyncio.sleep(delay * random.uniform(0.5, 1.5))
                        continue
                    return self._error_row(run_id, c, last_err, attempts, time.perf_counter() - t0), None
                break
        latency = time.perf_counter() - t0
        cost = actual_cost(resp)
        self.spent_usd += cost
        choice = resp.choices[0]
        msg = choice.message
        usage = getattr(resp, "usage", None)
        tool_calls = getattr(msg, "tool_calls", None)
        cached_read, cache_write = cache_tokens(usage)
        stored = {
            "raw_output": _clean_text(msg.content),
            "tool_calls": _clean_json(
                [tc.model_dump() if hasattr(tc, "model_dump") else tc for tc in tool_calls]
            )
            if tool_calls
            else None,
            "finish_reason": choice.finish_reason,
            "prompt_tokens": getattr(usage, "prompt_tokens", None),
            "completion_tokens": getattr(usage, "completion_tokens", None),
            "cached_tokens": cached_read,  # provider prompt cache (llm/usage.py)
            "cache_write_tokens": cache_write,
            "cost_usd": cost,
            "latency_s": latency,
            "model_returned": getattr(resp, "model", None),
        }
        self.cache.put(c.key, stored)
        return self._row(
            run_id, c, stored, cache_hit=False, attempts=attempts, latency=latency, cost=cost
        ), stored

    def _row(self, run_id, c: Call, stored: dict, *, cache_hit, attempts, latency, cost) -> dict:
        raw = _clean_text(stored.get("raw_output"))  # also for a cache row written before this rule
        parsed = parse_output(raw, c.schema, stored.get("finish_reason"))
        if stored.get("tool_calls") and stored.get("raw_output") is None and c.schema is None:
            parsed = parsed.__class__(True, value=None)
        return {
            "run_id": run_id,
            "item_id": c.item_id,
            "key": c.key,
            "model": c.model,
            "repeat": c.repeat,
            "prompt_hash": prompt_hash(c.messages),
            "status": "ok" if parsed.ok else "parse_error",
            "raw_output": raw,
            "tool_calls": _clean_json(stored.get("tool_calls")),
            "parsed": parsed.value if parsed.ok else None,
            "parse_error": parsed.error,
            "finish_reason": stored.get("finish_reason"),
            "prompt_tokens": stored.get("prompt_tokens"),
            "completion_tokens": stored.get("completion_tokens"),
            "cached_tokens": stored.get("cached_tokens"),
            "cache_write_tokens": stored.get("cache_write_tokens"),
            "cost_usd": cost,
            "latency_s": round(latency, 6),
            "model_latency_s": stored.get("latency_s"),  # of the call that produced the answer
            "cache_hit": cache_hit,
            "attempts": attempts,
            "error": None,
            "ts": time.time(),
        }

    def _error_row(self, run_id, c: Call, error: str, attempts: int, latency: float) -> dict:
        return {
            "run_id": run_id, "item_id": c.item_id, "key": c.key, "model": c.model, "repeat": c.repeat,
            "prompt_hash": prompt_hash(c.messages), "status": "error", "raw_output": None, "tool_calls": None,
            "parsed": None, "parse_error": None, "finish_reason": None, "prompt_tokens": None,
            "completion_tokens": None, "cached_tokens": None, "cache_write_tokens": None, "cost_usd": 0.0, "latency_s": round(latency, 6), "model_latency_s": None, "cache_hit": False,
            "attempts": attempts, "error": _clean_text(error), "ts": time.time(),
        }  # fmt: skip

    # ---- reading back ---------------------------------------------------------------------
    def log(self, run_id: str):
        """The call log of a run as a DataFrame (every row, in order)."""
        import pandas as pd

        return pd.DataFrame(CallLog(self.log_path(run_id)).rows())


def results_frame(rows: Sequence[dict]):
    import pandas as pd

    return pd.DataFrame(list(rows))
