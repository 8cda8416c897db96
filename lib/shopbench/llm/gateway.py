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
import contextlib
import os
import random
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast, overload

from .. import secrets
from ..progress import report as report_progress
from ..progress import tqdm
from .backends import Backbone, api_key_for, check_model
from .budget import BudgetExceeded, Estimate, actual_cost, estimate_call_cost, price_per_token
from .cache import ResponseCache
from .call import GENERATION_KEYS, Call, clean_json, clean_text
from .calllog import CallLog
from .contract import check_schema, parse_output
from .negotiate import CapsStore, ServerCaps, caps_key, negotiate, wire_format, with_schema_in_prompt
from .result import CallResult
from .transport import Fleet, TransportError, client, is_malformed, run_sync
from .usage import cache_tokens, plan, with_cache_control

# providers whose calls with an ``api_base`` are OpenAI-compatible endpoints: they go over the lean
# transport (:mod:`shopbench.llm.transport`) unless ``SHOPBENCH_GATEWAY_TRANSPORT=litellm``
LEAN_PROVIDERS = ("openai", "hosted_vllm")
TRANSPORT_ENV = "SHOPBENCH_GATEWAY_TRANSPORT"
LOG_FLUSH_ROWS = 256  # call-log rows buffered at most before one write ...
LOG_FLUSH_S = 0.5  # ... or seconds since the last write (a killed run's lost rows are rebuilt from the cache)
INLINE_LOCAL_S = 0.02  # a local backend averaging under this runs on the loop, not in a worker thread

DEFAULT_CONCURRENCY = {"llamacpp": 1, "local": 4, "default": 8}
DONE = ("ok", "parse_error")


def _log_start(done: dict) -> float | None:
    """When the call log began: the earliest ``ts`` of its rows (None: a new or empty log)."""
    stamps = [r["ts"] for r in done.values() if isinstance(r.get("ts"), int | float)]
    return min(stamps) if stamps else None


def _made_in_this_log(stored: dict, log_start: float | None) -> bool:
    """Whether a cached answer was made by the run this log belongs to, and its row lost to a kill.
    A new or empty log (the pipeline deletes a notebook's logs before executing it again) begins a new
    run: the answers an earlier run made are cache hits, not this run's calls or spending. An answer
    cached before answers carried ``made_ts`` counts as this run's when the log has rows (as before)."""
    if log_start is None:
        return False
    made = stored.get("made_ts")
    return True if not isinstance(made, int | float) else made >= log_start - 1.0


_FORM_ERROR = re.compile(r"response_format|json_schema|json_object|schema|grammar", re.I)


def get_litellm():
    """litellm with the embedded providers registered, imported on first need: a run on ``local/``
    backends or the lean transport never imports it (seconds saved; issue 26, Speed)."""
    from .providers import get_litellm as registered

    return registered()


def is_retryable(exc: BaseException) -> bool:
    """Whether a failed attempt is worth another: 408/409/429, a 5xx, a timeout or a dropped
    connection -- but never a request the server refused as malformed (:func:`.transport.is_malformed`:
    any other 4xx, or a 5xx whose body names a request field; issue 25 item 1)."""
    if is_malformed(exc):
        return False
    if isinstance(exc, TransportError) and exc.status_code is not None:
        code = exc.status_code
        return code in (408, 409, 429) or code >= 500
    if isinstance(exc, asyncio.TimeoutError | TimeoutError | ConnectionError):
        return True
    if "litellm" in sys.modules:  # else ``exc`` cannot be one of litellm's exceptions: no import for it
        litellm = get_litellm()
        retry_types = (
            litellm.RateLimitError, litellm.InternalServerError, litellm.ServiceUnavailableError,
            litellm.APIConnectionError, litellm.Timeout, asyncio.TimeoutError, TimeoutError, ConnectionError,
        )  # fmt: skip
        if isinstance(exc, retry_types):
            return True
    code = getattr(exc, "status_code", None)
    return isinstance(code, int) and (code in (408, 409, 429) or code >= 500)


class _GroupCommit:
    """Cache rows committed in groups off the event loop: each caller waits until its own row is
    committed (so a success is on disk before its log row is queued), and the answers that arrive
    while one commit runs share the next one (one SQLite transaction, in a worker thread)."""

    def __init__(self, cache: ResponseCache):
        self.cache = cache
        self.pending: list[tuple[str, dict, asyncio.Future]] = []
        self.task: asyncio.Task | None = None

    async def put(self, key: str, value: dict) -> None:
        fut = asyncio.get_running_loop().create_future()
        self.pending.append((key, value, fut))
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._drain())
        await fut

    async def _drain(self) -> None:
        while self.pending:
            await asyncio.sleep(0)  # answers arriving in the same loop turn join this group
            batch, self.pending = self.pending, []
            try:
                await asyncio.to_thread(self.cache.put_many, [(k, v) for k, v, _ in batch])
            except BaseException as e:  # every waiter learns its row was not committed
                for *_, f in batch:
                    if not f.done():
                        f.set_exception(e if isinstance(e, Exception) else RuntimeError(repr(e)))
                if not isinstance(e, Exception):
                    raise
                continue
            for *_, f in batch:
                if not f.done():
                    f.set_result(None)


class Gateway:
    """Cache + limits + retries + log + budget + contracts in front of three transports: litellm for
    the providers, the lean OpenAI-compatible client (:mod:`.transport`) for endpoints the project
    starts or names, and a direct function call for embedded ``local/`` backends."""

    # every row's status/parsed/parse_error is parse_output(raw_output, call.schema, finish_reason):
    # a judge that made the call reads the check off the row (contract.row_outcome; issue 27)
    checks_contract = True

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
        transport: str | None = None,
        on_run_end: Callable[[str, int, int], None] | None = None,
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
        # back as error rows ("not called: ...", never logged or cached)
        self.budget_mode = budget_mode
        # issue 27: the gateway knows nothing of reports. After each run it calls
        # on_run_end(run_id, calls made, calls planned) (the difference: calls the cost cap stopped);
        # a notebook's context installs shopbench.report.partial.record for its calls folder, so the
        # tables built from a capped sweep say "partial: n of N calls"
        self.on_run_end = on_run_end
        self.progress = progress
        self.backbones = {b.name: b for b in backbones}
        # "auto": lean transport for OpenAI-compatible endpoints and local backends; "litellm": every
        # call through litellm (the transport before issue 14, kept for comparison and as an escape hatch)
        self.transport = transport or os.environ.get(TRANSPORT_ENV) or "auto"
        if self.transport not in ("auto", "litellm"):
            raise ValueError(f"transport must be 'auto' or 'litellm', got {self.transport!r}")
        self.fleets: dict[tuple[str, ...], Fleet] = {}
        self._local_time: dict[str, list[float]] = {}  # backend -> [calls, seconds] (inline or thread)
        self.spent_usd = 0.0
        self.stats = {"calls": 0, "cache_hits": 0, "errors": 0, "parse_errors": 0, "cost_usd": 0.0}
        # "batch": OpenAI/Anthropic misses go through the providers' batch APIs (llm/batch.py)
        self.mode = mode
        self.batch_poll_s = float(batch_poll_s)
        self.batch_min_calls = int(batch_min_calls)  # smaller sweeps (an agent's next turn) stay real-time
        self._prefix_plan: dict[str, int] = {}  # call key -> Anthropic cache_control prefix (llm/usage.py)
        # issue 25 item 1: the structured-output form each OpenAI-compatible server accepts, negotiated
        # once per server and model and kept in <cache_dir>/servers.json (llm/negotiate.py)
        self.caps_store = CapsStore(cache_dir)
        self.server_caps: dict[str, ServerCaps] = {}
        self._caps_locks: dict[str, asyncio.Lock] = {}
        self._renegotiated: set[str] = set()

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
        if len(b.fleet) > 1:
            kw.setdefault("fleet", tuple(b.fleet))
            kw.setdefault("cache_base", f"fleet:{b.model}")  # whichever server answers, the same model
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

    def transport_for(self, c: Call) -> str:
        """``"local"``, ``"openai-compat"`` (the lean client) or ``"litellm"``: how ``c`` is sent."""
        if self.transport == "litellm":
            return "litellm"
        if c.provider == "local":
            return "local"
        if (c.api_base or c.fleet) and c.provider in LEAN_PROVIDERS:
            return "openai-compat"
        return "litellm"

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
        return run_sync(self.arun(calls, run_id, dry_run=dry_run, desc=desc))

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
        redaction = secrets.secret_values()  # once per run, not twice per call

        new_rows: dict[tuple[str, str], dict] = {}
        bar = tqdm(total=len(calls), desc=desc or run_id, disable=not self.progress, unit="call",
                   initial=len(calls) - len(pending), mininterval=0.5)  # fmt: skip
        # issue 25 item 3: the bar counts answers by kind (ok / parse failure / call error), not only hits
        counts = {"hits": 0, "fail": 0, "ok": 0, "parse": 0}

        def tick(n: int = 1, rows: Sequence[Mapping[str, Any]] = ()) -> None:
            for r in rows:  # rows recorded elsewhere (provider batches): count them by kind here
                counts[{"ok": "ok", "error": "fail"}.get(r.get("status"), "parse")] += 1
            bar.update(n)  # a disabled bar does nothing, but still reports to the pipeline (issue 25 §4)
            report_progress(bar, errors=counts["fail"], parse_failures=counts["parse"])
            if bar.disable:
                return
            bar.set_postfix(ok=counts["ok"], parse_fail=counts["parse"], call_err=counts["fail"],
                            hits=counts["hits"], cost=f"${self.spent_usd:.4f}", refresh=False)  # fmt: skip

        hit_rows = []
        reconciled: set[str] = set()
        log_start = _log_start(done)
        for c in pending:
            if c.key in hits:
                stored = hits[c.key]
                if (
                    stored.get("run_id") == run_id
                    and c.key not in reconciled
                    and _made_in_this_log(stored, log_start)
                ):
                    # answered in this run before it was killed, its log row not yet written: the row
                    # it would have had (a fresh call, its attempts and cost), not a cache hit
                    reconciled.add(c.key)
                    cost = float(stored.get("cost_usd") or 0.0)
                    self.spent_usd += cost
                    row = self._row(run_id, c, stored, cache_hit=False, attempts=int(stored.get("attempts") or 1),
                                    latency=float(stored.get("latency_s") or 0.0), cost=cost,
                                    redaction=redaction)  # fmt: skip
                else:
                    row = self._row(run_id, c, stored, cache_hit=True, attempts=0, latency=0.0, cost=0.0,
                                    redaction=redaction)  # fmt: skip
                    counts["hits"] += 1
                hit_rows.append(row)
                counts["ok" if row["status"] == "ok" else "parse"] += 1  # errors are never cached
                new_rows[(c.item_id, c.key)] = row
        log.append(hit_rows)
        self.stats["cache_hits"] += counts["hits"]
        self.stats["calls"] += len(hit_rows)
        tick(len(hit_rows))

        sems: dict[tuple[str, str | None], asyncio.Semaphore] = {}
        inflight: dict[str, asyncio.Future] = {}
        budget_stopped: list[Call] = []
        # answers of local backends (pure functions, free to recompute) are committed to the cache in
        # groups, just before the log rows that use them; every other answer is committed on arrival
        deferred: list[tuple[str, dict]] = []

        def commit_deferred() -> None:
            if deferred:
                self.cache.put_many(deferred)
                deferred.clear()

        writer = log.writer(max_rows=LOG_FLUSH_ROWS, max_delay_s=LOG_FLUSH_S, before_flush=commit_deferred)
        committer = _GroupCommit(self.cache)

        async def one(c: Call) -> None:
            fut = inflight.get(c.key)
            if fut is not None:  # same request under another item id: one model call, a cache hit here
                stored = await fut
                row = (
                    self._row(
                        run_id,
                        c,
                        stored,
                        cache_hit=True,
                        attempts=0,
                        latency=0.0,
                        cost=0.0,
                        redaction=redaction,
                    )  # fmt: skip
                    if stored
                    else self._error_row(run_id, c, "duplicate of a failed call", 0, 0.0)
                )
            else:
                fut = asyncio.get_running_loop().create_future()
                inflight[c.key] = fut
                stored = None
                try:
                    row, stored = await self._call_with_retries(
                        run_id, c, sems, budget_stopped, redaction, deferred, committer
                    )
                finally:
                    if not fut.done():
                        fut.set_result(stored)
            if row is None:
                return
            writer.add(row)
            new_rows[(c.item_id, c.key)] = row
            self.stats["calls"] += 1
            self.stats["cache_hits"] += int(row["cache_hit"])
            if row["status"] == "error":
                counts["fail"] += 1
                self.stats["errors"] += 1
            elif row["status"] == "parse_error":
                counts["parse"] += 1
                self.stats["parse_errors"] += 1
            else:
                counts["ok"] += 1
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
            writer.flush()
            bar.close()
        self.stats["cost_usd"] = self.spent_usd
        if self.on_run_end is not None:
            self.on_run_end(run_id, len(calls) - len(budget_stopped), len(calls))
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

    # ---- one call ---------------------------------------------------------------------------
    def _request(self, c: Call, form: str | None = None) -> dict[str, Any]:
        """The OpenAI-style request fields of ``c`` beyond model and messages (litellm keyword arguments).
        ``form``: the structured-output form the server accepts (:mod:`.negotiate`; None: json_schema,
        or llama.cpp's json_object + schema for a project-started llama.cpp server). A form that puts
        the schema in the prompt adds ``messages`` (the call's, with the schema appended)."""
        kwargs: dict[str, Any] = {k: v for k, v in c.params.items() if k in GENERATION_KEYS}
        extra = {k: v for k, v in c.params.items() if k not in GENERATION_KEYS}
        if extra:
            kwargs["extra_body"] = extra
        if c.response_format is not None and c.schema is not None:
            b = self._backbone_for(c)
            if form is None and b is not None and b.server == "llamacpp":  # json_object + schema
                form = "json_object_schema"
            rf, in_prompt = wire_format(form or "json_schema", c.schema, c.schema_name)
            if rf is not None:
                kwargs["response_format"] = rf
            if in_prompt:
                kwargs["messages"] = with_schema_in_prompt(list(c.messages), c.schema)
        if c.tools:
            kwargs["tools"] = list(c.tools)
        return kwargs

    # ---- negotiation (issue 25 item 1) ------------------------------------------------------------
    def _negotiable(self, c: Call, how: str) -> bool:
        """A call with a contract to an OpenAI-compatible endpoint the project did not start."""
        if how != "openai-compat" or c.schema is None:
            return False
        b = self._backbone_for(c)
        return not (b is not None and b.server == "llamacpp")

    @staticmethod
    def _compat_key(c: Call, base: str | None) -> str | None:
        """The key an OpenAI-compatible endpoint gets: the placeholder for a keyless one, else the
        provider's environment key (never logged)."""
        key = api_key_for(c.model, base)
        if key is None:
            env = {"openai": "OPENAI_API_KEY", "hosted_vllm": "HOSTED_VLLM_API_KEY"}.get(c.provider)
            key = os.environ.get(env) if env else None
        return key

    async def _form_for(self, c: Call, how: str, fresh: bool = False) -> str | None:
        """The structured-output form to send ``c`` in: the server's negotiated form (memory, then
        ``<cache_dir>/servers.json``, else negotiated now and saved), None when not negotiable.
        ``fresh``: ask the server again (once per server and gateway), after it refused the form."""
        if not self._negotiable(c, how):
            return None
        base = c.api_base or (c.fleet[0] if c.fleet else None)
        if base is None:
            return None
        model = c.model.split("/", 1)[1]
        k = caps_key(base, model)
        if fresh:
            if k in self._renegotiated:
                return self.server_caps[k].form if k in self.server_caps else None
            self._renegotiated.add(k)
            self.server_caps.pop(k, None)
        elif k in self.server_caps:
            return self.server_caps[k].form
        lock = self._caps_locks.setdefault(k, asyncio.Lock())
        async with lock:
            if k in self.server_caps:
                return self.server_caps[k].form
            caps = None if fresh else self.caps_store.get(base, model)
            how_known = f"from {self.caps_store.path}"
            if caps is None:
                try:
                    caps = await negotiate(base, model, api_key=self._compat_key(c, base),
                                           timeout_s=min(self.timeout_s, 60.0))  # fmt: skip
                except Exception as e:  # noqa: BLE001 - the calls themselves will fail and say why
                    print(f"[gateway] {model} at {base}: could not negotiate the structured-output form "
                          f"({type(e).__name__}: {str(e)[:200]}); sending json_schema", flush=True)  # fmt: skip
                    self.server_caps[k] = ServerCaps(base, model, context_source="not negotiated")
                    return "json_schema"
                self.caps_store.put(caps)
                how_known = f"negotiated now, saved in {self.caps_store.path}"
            self.server_caps[k] = caps
            self._note_caps(caps, how_known)
        return caps.form

    def _note_caps(self, caps: ServerCaps, how_known: str) -> None:
        """Name a server's negotiated form in the run's log: a printed line and ``<log_dir>/servers.json``."""
        print(f"[gateway] {caps.describe()} ({how_known})", flush=True)
        try:
            CapsStore(self.log_dir).put(caps)
        except OSError:
            pass

    def _fleet(self, c: Call) -> Fleet | None:
        if len(c.fleet) < 2:
            return None
        f = self.fleets.get(c.fleet)
        if f is None:
            b = self._backbone_for(c)
            limit = (b.concurrency if b else None) or (1 if b and b.server else None)
            f = self.fleets[c.fleet] = Fleet(
                c.fleet, limit or self.concurrency.get(c.provider) or self.concurrency["default"]
            )
        return f

    async def _send(self, c: Call, how: str, base: str | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        """One attempt: the answer as ``{content, tool_calls, finish_reason, usage, model, cost}``."""
        if how == "local":
            return await self._send_local(c, kwargs)
        key = api_key_for(c.model, base)
        if how == "openai-compat":
            real_key = key is None  # a keyed endpoint (an OpenAI-compatible server behind a key)
            key = self._compat_key(c, base)
            body = {"model": c.model.split("/", 1)[1], "messages": list(c.messages)}
            body.update({k: v for k, v in kwargs.items() if k != "extra_body"})
            body.update(kwargs.get("extra_body") or {})
            assert base is not None
            data, _ = await client().chat(base, body, api_key=key, timeout_s=self.timeout_s)
            choice = data["choices"][0]
            msg = choice.get("message") or {}
            usage = data.get("usage") or {}
            cost = 0.0
            if real_key:  # keyless servers are free; a keyed one is priced as litellm would price it
                price = price_per_token(c.model)
                if price is not None:
                    cost = (usage.get("prompt_tokens") or 0) * price[0] + (
                        usage.get("completion_tokens") or 0
                    ) * price[1]
            return {"content": msg.get("content"), "tool_calls": msg.get("tool_calls") or None,
                    "finish_reason": choice.get("finish_reason"), "usage": usage, "model": data.get("model"),
                    "cost": cost}  # fmt: skip
        litellm = get_litellm()
        kw = dict(kwargs)
        messages = kw.pop("messages", None) or list(c.messages)
        if base:
            kw["api_base"] = base
        if key:  # a keyless local server (llama.cpp, vLLM, Ollama): free, and litellm skips its price search
            kw["api_key"] = key
            kw.setdefault("input_cost_per_token", 0.0)
            kw.setdefault("output_cost_per_token", 0.0)
        resp = await asyncio.wait_for(
            litellm.acompletion(
                model=c.model,
                messages=with_cache_control(c.provider, messages, self._prefix_plan.get(c.key)),
                timeout=self.timeout_s,
                num_retries=0,
                **kw,
            ),
            timeout=self.timeout_s,
        )
        choice = resp.choices[0]
        msg = choice.message
        usage = getattr(resp, "usage", None)
        tool_calls = getattr(msg, "tool_calls", None)
        return {
            "content": msg.content,
            "tool_calls": [tc.model_dump() if hasattr(tc, "model_dump") else tc for tc in tool_calls]
            if tool_calls
            else None,
            "finish_reason": choice.finish_reason,
            "usage": usage.model_dump() if hasattr(usage, "model_dump") else dict(usage or {}),
            "model": getattr(resp, "model", None),
            "cost": actual_cost(resp),
        }

    async def _send_local(self, c: Call, kwargs: dict[str, Any]) -> dict[str, Any]:
        """An embedded deterministic backend, called directly: inline on the loop when its calls have
        averaged under :data:`INLINE_LOCAL_S` (no thread hop), else in a worker thread."""
        from .local import run_local

        name = c.model.split("/", 1)[1]
        params = {k: v for k, v in kwargs.items() if k not in ("extra_body", "messages")}
        params.update(kwargs.get("extra_body") or {})
        seen = self._local_time.setdefault(name, [0, 0.0])
        t0 = time.perf_counter()
        if seen[0] >= 8 and seen[1] / seen[0] < INLINE_LOCAL_S:
            content = run_local(name, list(c.messages), params)
        else:
            content = await asyncio.to_thread(run_local, name, list(c.messages), params)
        seen[0] += 1
        seen[1] += time.perf_counter() - t0
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in c.messages)
        return {"content": content, "tool_calls": None, "finish_reason": "stop", "model": c.model, "cost": 0.0,
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content.split())}}  # fmt: skip

    async def _call_with_retries(
        self,
        run_id,
        c: Call,
        sems,
        budget_stopped,
        redaction: Sequence[str] | None = None,
        deferred: list[tuple[str, dict]] | None = None,
        committer: _GroupCommit | None = None,
    ) -> tuple[dict | None, dict | None]:
        how = self.transport_for(c)
        fleet = self._fleet(c)
        sem: Any = contextlib.nullcontext()
        if fleet is None:  # a fleet bounds each of its servers itself
            skey = (c.provider, c.api_base)
            if skey not in sems:
                b = self._backbone_for(c)
                own = (b.concurrency or (1 if b.server else None)) if b else None
                limit = own or self.concurrency.get(c.provider) or self.concurrency["default"]
                sems[skey] = asyncio.Semaphore(int(limit))
            sem = sems[skey]
        form = await self._form_for(c, how)
        kwargs = self._request(c, form)
        attempts = 0
        last_err = ""
        base: str | None = c.api_base
        async with sem:
            t0 = time.perf_counter()  # latency excludes waiting for a concurrency slot
            while True:
                if self.max_cost_usd is not None:
                    est = estimate_call_cost(c.model, c.messages, c.params) or 0.0
                    if self.spent_usd + est > self.max_cost_usd:
                        budget_stopped.append(c)
                        return None, None
                attempts += 1
                if fleet is not None:
                    base = await fleet.acquire(avoid=base if attempts > 1 else None)
                try:
                    answer = await self._send(c, how, base, kwargs)
                except Exception as e:  # noqa: BLE001 - classified below, recorded in the log
                    retryable = is_retryable(e)
                    if fleet is not None and base is not None:
                        await fleet.release(base, failed=retryable)
                    last_err = f"{type(e).__name__}: {str(e)[:500]}"
                    if form is not None and is_malformed(e) and _FORM_ERROR.search(str(e)):
                        # the server refuses the form it was negotiated for (restarted with other
                        # settings?): ask it again, once per server, and resend in the new form
                        new = await self._form_for(c, how, fresh=True)
                        if new is not None and new != form:
                            form, kwargs = new, self._request(c, new)
                            continue
                    if attempts <= self.max_retries and retryable:
                        if fleet is not None and base is not None and fleet.another_up(base):
                            continue  # fail over to another server at once
                        delay = min(self.backoff_max_s, self.backoff_s * 2 ** (attempts - 1))
                        delay *= random.uniform(0.5, 1.5)
                        after = getattr(e, "retry_after", None)
                        if isinstance(after, int | float) and after > 0:  # the server said when
                            delay = max(delay, min(float(after), self.backoff_max_s))
                        await asyncio.sleep(delay)
                        continue
                    return self._error_row(run_id, c, last_err, attempts, time.perf_counter() - t0), None
                if fleet is not None and base is not None:
                    await fleet.release(base)
                break
            # still holding the slot: a call counts as in flight until its answer is committed
            latency = time.perf_counter() - t0
            cost = float(answer["cost"] or 0.0)
            self.spent_usd += cost
            usage = answer["usage"] or {}
            cached_read, cache_write = cache_tokens(usage)
            stored = {
                "raw_output": clean_text(answer["content"], redaction),
                "tool_calls": clean_json(answer["tool_calls"], redaction) if answer["tool_calls"] else None,
                "finish_reason": answer["finish_reason"],
                "prompt_tokens": usage.get("prompt_tokens"),
                "completion_tokens": usage.get("completion_tokens"),
                "cached_tokens": cached_read,  # provider prompt cache (llm/usage.py)
                "cache_write_tokens": cache_write,
                "cost_usd": cost,
                "latency_s": latency,
                "model_returned": answer["model"],
                "run_id": run_id,  # lets a resumed run rebuild this call's log row if the kill lost it
                "made_ts": time.time(),  # ... when it was made after the log's first row (_made_in_this_log)
                "attempts": attempts,
            }
            if how == "local" and deferred is not None:
                deferred.append((c.key, stored))
            elif committer is not None:
                await committer.put(c.key, stored)
            else:
                self.cache.put(c.key, stored)
            return self._row(
                run_id,
                c,
                stored,
                cache_hit=False,
                attempts=attempts,
                latency=latency,
                cost=cost,
                redaction=redaction,
                cleaned=True,  # just redacted with the same values: not a second time
            ), stored

    def _row(
        self,
        run_id,
        c: Call,
        stored: dict,
        *,
        cache_hit,
        attempts,
        latency,
        cost,
        redaction=None,
        cleaned=False,
    ) -> dict:
        """The call-log row of ``c`` answered by ``stored``. Text is redacted again unless ``cleaned``
        (``stored`` was redacted with this run's values a moment ago): a cache row written before the
        rule, or while another secret was set, gets this run's redaction."""
        if cleaned:
            raw, tool_calls = stored.get("raw_output"), stored.get("tool_calls")
        else:
            raw = clean_text(stored.get("raw_output"), redaction)
            tool_calls = clean_json(stored.get("tool_calls"), redaction)
        parsed = parse_output(raw, c.schema, stored.get("finish_reason"))
        if stored.get("tool_calls") and stored.get("raw_output") is None and c.schema is None:
            parsed = parsed.__class__(True, value=None)
        return {
            "run_id": run_id,
            "item_id": c.item_id,
            "key": c.key,
            "model": c.model,
            "repeat": c.repeat,
            "prompt_hash": c.prompt_hash,
            "status": "ok" if parsed.ok else "parse_error",
            "raw_output": raw,
            "tool_calls": tool_calls,
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
            "prompt_hash": c.prompt_hash, "status": "error", "raw_output": None, "tool_calls": None,
            "parsed": None, "parse_error": None, "finish_reason": None, "prompt_tokens": None,
            "completion_tokens": None, "cached_tokens": None, "cache_write_tokens": None, "cost_usd": 0.0, "latency_s": round(latency, 6), "model_latency_s": None, "cache_hit": False,
            "attempts": attempts, "error": clean_text(error), "ts": time.time(),
        }  # fmt: skip

    # ---- reading back ---------------------------------------------------------------------
    def log(self, run_id: str):
        """The call log of a run as a DataFrame (every row, in order)."""
        import pandas as pd

        return pd.DataFrame(CallLog(self.log_path(run_id)).rows())
