"""The lean transport: OpenAI-compatible endpoints that the project starts or names, without litellm.

litellm stays the transport for the providers (Anthropic, OpenAI's own API, Fireworks, ...): it knows
their wire formats, keys and prices. An endpoint that already speaks the OpenAI Chat Completions API
-- ``python -m llama_cpp.server``, vLLM (``hosted_vllm/``), SGLang, Ollama's ``/v1`` API, any
``openai/<model>`` with an ``api_base`` -- needs none of that, and litellm's per-call work (request
translation, logging objects, cost lookups: 4.5-8 ms of CPU per call on this machine, issue 14) was
the gateway's throughput limit. Such calls go here instead: one ``aiohttp`` session per event loop
(keep-alive, no connection cap: the gateway's per-provider limit is the cap), the request body the
OpenAI API defines, and the response read back into the fields the gateway stores.

Errors are raised as the exception classes below, named as litellm names them (so a call log reads
the same whichever transport made the call) and carrying ``status_code`` (and ``retry_after`` from a
``Retry-After`` header), so :func:`shopbench.llm.gateway.is_retryable` classifies both alike:
429/5xx/408/409, timeouts and dropped connections are retried, other 4xx are not, and neither is a
5xx whose body names a request field (:func:`is_malformed`, issue 25 item 1: llama_cpp.server answers
a ``json_schema`` response_format with HTTP 500 "Input should be 'text' or 'json_object'").

:class:`Fleet` spreads one model's calls over several servers (a list of ``api_base`` s): each call
goes to the healthy server with the fewest calls in flight (ties in turn); a server that refuses,
drops, times out or answers 5xx is taken out for a cool-down (doubling while it keeps failing) and the
call is retried at once on another one.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import json
import re
import threading
import time
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a request is made: a run on local/ backends never needs it (issue 26)
    import aiohttp

# ---- errors (names as litellm's, so call logs read the same) -------------------------------------------


class TransportError(Exception):
    """An HTTP error answer from an OpenAI-compatible endpoint."""

    def __init__(self, message: str, status_code: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after


class BadRequestError(TransportError):
    pass


class AuthenticationError(TransportError):
    pass


class PermissionDeniedError(TransportError):
    pass


class NotFoundError(TransportError):
    pass


class RateLimitError(TransportError):
    pass


class InternalServerError(TransportError):
    pass


class ServiceUnavailableError(TransportError):
    pass


class APIConnectionError(TransportError, ConnectionError):
    """The server could not be reached, or dropped the connection before answering."""


class Timeout(TransportError, TimeoutError):
    """No answer within the call's timeout."""


# a server's words for "your request has a field I cannot take" (pydantic/FastAPI validation, OpenAI's
# invalid_request_error, Python keyword errors in the server's handler); in a 5xx body they make the
# error a malformed request, not a transient failure (issue 25 item 1)
REQUEST_FIELD = re.compile(
    r"response_format|json_schema|Input should be|Field required|Extra inputs are not permitted|"
    r"extra_forbidden|validation error|Unrecognized request argument|unexpected keyword argument|"
    r"invalid_request_error|Unsupported parameter|unsupported value",
    re.I,
)


def is_malformed(exc: BaseException) -> bool:
    """Whether ``exc`` says the server refused the request itself (sending it again gets the same
    answer): an HTTP 4xx other than 408/409/429, or a 5xx whose message names a request field
    (:data:`REQUEST_FIELD`). Works for :class:`TransportError` and litellm's exceptions alike."""
    code = getattr(exc, "status_code", None)
    if not isinstance(code, int):
        return False
    if 400 <= code < 500:
        return code not in (408, 409, 429)
    return code >= 500 and bool(REQUEST_FIELD.search(str(exc)))


_BY_STATUS: dict[int, type[TransportError]] = {
    400: BadRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
    422: BadRequestError, 429: RateLimitError, 500: InternalServerError, 503: ServiceUnavailableError,
}  # fmt: skip


def _error_for(status: int, text: str, base: str, retry_after: float | None) -> TransportError:
    cls = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else BadRequestError)
    try:
        detail = json.loads(text).get("error", text)
        if isinstance(detail, dict):
            detail = detail.get("message") or detail
    except (ValueError, AttributeError):
        detail = text
    return cls(f"{base} answered HTTP {status}: {str(detail)[:500]}", status, retry_after)


def _retry_after(headers: Any) -> float | None:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


# ---- the client ----------------------------------------------------------------------------------------


class OpenAICompatClient:
    """POST ``{api_base}/chat/completions`` over one keep-alive ``aiohttp`` session per event loop."""

    def __init__(self) -> None:
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = (
            weakref.WeakKeyDictionary()
        )
        atexit.register(self._close_all)

    def _session(self) -> aiohttp.ClientSession:
        import aiohttp

        loop = asyncio.get_running_loop()
        s = self._sessions.get(loop)
        if s is None or s.closed:
            connector = aiohttp.TCPConnector(
                limit=0, limit_per_host=0, ttl_dns_cache=300, keepalive_timeout=30
            )
            s = aiohttp.ClientSession(
                connector=connector, json_serialize=json.dumps, auto_decompress=True, trust_env=False
            )
            self._sessions[loop] = s
        return s

    async def _request(self, method: str, url: str, label: str, headers: dict, timeout_s: float, *,
                       data: bytes | None = None, optional: tuple[int, ...] = ()) -> tuple[int, str]:  # fmt: skip
        """One HTTP request: ``(status, body text)``. An HTTP error (other than an ``optional`` status),
        a timeout or a broken connection is raised as the :class:`TransportError` subclass litellm would
        raise, named by ``label`` (the server's base URL, or the URL asked)."""
        import aiohttp

        try:
            async with self._session().request(
                method, url, data=data, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout_s)
            ) as r:
                text = await r.text(errors="replace")
                if r.status >= 400 and r.status not in optional:
                    raise _error_for(r.status, text, label, _retry_after(r.headers))
                return r.status, text
        except TransportError:
            raise
        except TimeoutError as e:
            raise Timeout(f"{label}: request timed out after {timeout_s:g} s", 408) from e
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, OSError) as e:
            raise APIConnectionError(f"{label}: connection failed: {type(e).__name__}: {e}") from e

    async def chat(
        self, api_base: str, body: dict, *, api_key: str | None, timeout_s: float
    ) -> tuple[dict, float]:
        """The decoded JSON answer and its wall time; raises a :class:`TransportError` subclass."""
        url = api_base.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        data = json.dumps(body).encode()  # ASCII escapes: a lone surrogate in a prompt stays valid JSON
        t0 = time.perf_counter()
        _, text = await self._request("POST", url, api_base, headers, timeout_s, data=data)
        try:
            answer = json.loads(text)
        except ValueError as e:
            raise InternalServerError(f"{api_base} answered non-JSON: {text[:200]!r}", 502) from e
        if not isinstance(answer, dict) or not answer.get("choices"):
            raise InternalServerError(f"{api_base} answered without choices: {text[:300]}", 502)
        return answer, time.perf_counter() - t0

    async def get_json(
        self, url: str, *, api_key: str | None = None, timeout_s: float = 10.0
    ) -> dict | list | None:
        """``GET url`` decoded as JSON: None when the server answers 404/405 or not JSON (an optional
        endpoint such as ``/props``); raises a :class:`TransportError` subclass otherwise."""
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        status, text = await self._request("GET", url, url, headers, timeout_s, optional=(404, 405))
        if status in (404, 405):
            return None
        try:
            return json.loads(text)
        except ValueError:
            return None

    def _close_all(self) -> None:
        for loop, s in list(self._sessions.items()):
            if s.closed or loop.is_closed():
                continue
            try:
                if loop.is_running():
                    asyncio.run_coroutine_threadsafe(s.close(), loop).result(2)
                else:
                    loop.run_until_complete(s.close())
            except Exception:  # exiting: a session that cannot close cleanly is dropped
                pass


_client: OpenAICompatClient | None = None


def client() -> OpenAICompatClient:
    global _client
    if _client is None:
        _client = OpenAICompatClient()
    return _client


# ---- fleets --------------------------------------------------------------------------------------------


class Fleet:
    """Several servers for one model: least-in-flight balancing, per-server limits and failover.

    ``limit`` is the number of calls each server takes at once. A server that fails (connection
    refused or dropped, timeout, 5xx) is skipped for ``cooldown_s`` (doubled on each further failure,
    at most ``max_cooldown_s``); when every server is cooling down, the one back soonest is tried.
    """

    def __init__(
        self, bases: Sequence[str], limit: int, cooldown_s: float = 2.0, max_cooldown_s: float = 60.0
    ):
        if not bases:
            raise ValueError("a fleet needs at least one api_base")
        self.bases = list(dict.fromkeys(bases))
        self.limit = max(1, int(limit))
        self.cooldown_s = cooldown_s
        self.max_cooldown_s = max_cooldown_s
        self.inflight = dict.fromkeys(self.bases, 0)
        self.down_until = dict.fromkeys(self.bases, 0.0)
        self.failures = dict.fromkeys(self.bases, 0)
        self.served = dict.fromkeys(self.bases, 0)
        self._turn = 0
        self._conds: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Condition] = (
            weakref.WeakKeyDictionary()
        )

    def _condition(self) -> asyncio.Condition:
        """The condition of the running loop (the health state is shared; waiting is per loop)."""
        loop = asyncio.get_running_loop()
        cond = self._conds.get(loop)
        if cond is None:
            cond = self._conds[loop] = asyncio.Condition()
        return cond

    def healthy(self, now: float | None = None) -> list[str]:
        now = time.monotonic() if now is None else now
        return [b for b in self.bases if self.down_until[b] <= now]

    def _pick(self, avoid: str | None) -> str | None:
        now = time.monotonic()
        up = [b for b in self.healthy(now) if self.inflight[b] < self.limit]
        if avoid is not None and len(up) > 1:
            up = [b for b in up if b != avoid] or up
        if not up:
            if self.healthy(now):
                return None  # healthy servers are all busy: wait for a slot
            soonest = min(self.bases, key=lambda b: self.down_until[b])  # all down: probe the first back
            return soonest if self.inflight[soonest] < self.limit else None
        self._turn += 1
        n = len(self.bases)
        return min(up, key=lambda b: (self.inflight[b], (self.bases.index(b) - self._turn) % n))

    async def acquire(self, avoid: str | None = None) -> str:
        """A server's address with a slot taken on it (give it back with :meth:`release`)."""
        cond = self._condition()
        async with cond:
            while True:
                base = self._pick(avoid)
                if base is not None:
                    self.inflight[base] += 1
                    return base
                try:  # woken by a release, or re-check when a cool-down ends
                    await asyncio.wait_for(cond.wait(), timeout=0.25)
                except TimeoutError:
                    pass

    async def release(self, base: str, failed: bool = False) -> None:
        cond = self._condition()
        async with cond:
            self.inflight[base] -= 1
            if failed:
                self.failures[base] += 1
                wait = min(self.max_cooldown_s, self.cooldown_s * 2 ** (self.failures[base] - 1))
                self.down_until[base] = time.monotonic() + wait
            else:
                self.failures[base] = 0
                self.down_until[base] = 0.0
                self.served[base] += 1
            cond.notify_all()

    def another_up(self, base: str) -> bool:
        """Whether a server other than ``base`` is healthy (a failover needs no backoff then)."""
        return any(b != base for b in self.healthy())


# ---- one event loop for the synchronous API ------------------------------------------------------------
_loop_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def run_sync(coro: Any) -> Any:
    """Run ``coro`` on a process-wide event loop in a worker thread and return its result: for the
    sync API inside Jupyter (whose kernel already runs a loop) and for keeping the async clients
    (this module's sessions, litellm's) on one loop across runs. Used by the gateway, the negotiation
    and the preflight (issue 27: here, below all three)."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="shopbench-gateway", daemon=True).start()
    fut: concurrent.futures.Future = asyncio.run_coroutine_threadsafe(coro, _loop)
    try:
        return fut.result()
    except KeyboardInterrupt:
        fut.cancel()
        raise
