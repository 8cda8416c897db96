"""A real HTTP server on 127.0.0.1 that speaks (enough of) the OpenAI chat-completions API.

Used by the gateway tests and benchmarks: it runs an asyncio HTTP/1.1 server (keep-alive, Content-Length
or chunked request bodies) in a background thread, so the code under test talks to it through its normal
HTTP client stack (openai SDK, litellm, httpx, aiohttp).

Endpoints: ``POST /v1/chat/completions`` (and ``/chat/completions``), ``GET /v1/models`` (and
``/v1/models/{id}``), ``GET /health``.

Default reply (deterministic, derived from the request):

* ``response_format.type == "json_schema"``: a JSON document satisfying the (simple) schema -- first
  ``enum``/``const`` value, ``"ok"`` for strings, ``0.5`` clipped into ``[minimum, maximum]`` for numbers
  (rounded up for integers), ``true`` for booleans, one item for arrays, every property for objects;
  ``$ref``/``$defs``, ``anyOf``/``oneOf`` (first non-null branch) and ``allOf`` are followed.
* ``response_format.type == "json_object"``: ``{"echo": <last user message>}``.
* otherwise ``"echo: " + <last user message content>`` (verbatim, directives included).

``usage.prompt_tokens`` = whitespace-separated words over all messages, ``completion_tokens`` = words in
the reply, ``finish_reason`` ``"stop"``, ``model`` echoed, ``id`` unique.  ``"stream": true`` is answered
with a server-sent-event stream of ``chat.completion.chunk`` objects.

Per-request behaviour is steered by directives in the LAST user message, ``[[fake:key=value,...]]``
(several blocks may appear; later keys win)::

    [[fake:latency=0.3]]           sleep 0.3 s before replying
    [[fake:status=429]]            reply HTTP 429 + OpenAI error JSON (429 also sends ``retry-after: 0``)
    [[fake:status=500]]            ... any status 400-599
    [[fake:status=429,times=2]]    the faults in this directive apply to the first 2 requests whose last
                                   user message has exactly this text, later ones get the normal reply
    [[fake:timeout]]               never reply; hold the connection until the client closes it
    [[fake:malformed]]             content is invalid JSON: ``{"verdict": "GOOD", "score": ``
    [[fake:truncated]]             content cut mid-way, ``finish_reason: "length"``
    [[fake:content=%7B%22a%22%3A1%7D]]  reply exactly ``urllib.parse.unquote(value)`` (the value runs
                                   to the closing ``]]``, so put ``content=`` last or %-encode commas)
    [[fake:disconnect]]            close the socket without sending any HTTP response
    [[fake:finish_reason=content_filter]]  override the finish reason
    [[fake:status=503,retry_after=0.01]]  send ``retry-after: 0.01`` with the error (the openai SDK ignores
                                   ``retry-after: 0`` and backs off ~0.5-1 s; any value in (0, 60] is obeyed)

Flags accept ``=1/true/yes`` or ``=0/false/no``.  ``times`` limits the faults (latency, status, timeout,
malformed, truncated, disconnect, finish_reason, retry_after); ``content`` always applies, so
``[[fake:malformed,times=1]][[fake:content=...]]`` is "bad JSON once, then good JSON".  An unknown key is
answered with HTTP 400 so typos in tests fail loudly.

Server-wide control: ``FakeOpenAIServer(latency_s=..., script=...)``.  ``script(body_dict)`` may return a
dict with the same keys as a directive (plus ``response``: a JSON body to send verbatim, with ``status`` when given, and ``headers``:
extra response headers); precedence is ``latency_s`` < script < directive.  Both attributes can be
reassigned while the server runs.

CLI: ``python -m shopbench.testing.fake_openai --port 0 --latency 0.1`` prints the api_base on stdout and
serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import re
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote

__all__ = [
    "MALFORMED_CONTENT",
    "DirectiveError",
    "FakeOpenAIServer",
    "RecordedRequest",
    "example_from_schema",
    "main",
    "parse_directives",
]

MALFORMED_CONTENT = '{"verdict": "GOOD", "score": '
"""Content sent for ``[[fake:malformed]]``."""

ScriptFn = Callable[[dict[str, Any]], Mapping[str, Any] | None]

_DIRECTIVE_RE = re.compile(r"\[\[fake:(.*?)\]\]", re.DOTALL)
_FLAG_KEYS = frozenset({"timeout", "malformed", "truncated", "disconnect"})
_FAULT_KEYS = frozenset({"latency", "status", "finish_reason", "retry_after"}) | _FLAG_KEYS
_DIRECTIVE_KEYS = _FAULT_KEYS | {"times", "content"}
_SCRIPT_KEYS = _DIRECTIVE_KEYS | {"response", "headers"}
_TRUE = frozenset({"", "1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
_MODELS_PATHS = frozenset({"/v1/models", "/models"})
_MAX_HEADER_BYTES = 1 << 20


class DirectiveError(ValueError):
    """A ``[[fake:...]]`` directive (or a script result) could not be understood."""


class _Disconnect:
    """Sentinel result: close the connection without a response."""


class _Hang:
    """Sentinel result: never answer; wait for the client to hang up."""


_DISCONNECT = _Disconnect()
_HANG = _Hang()


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request the server received (recorded on arrival, before any latency)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON body (dict) for chat requests; None when absent or unparseable
    behaviour: str  # "ok", "content", "malformed", "truncated", "timeout", "disconnect", "status_429", ...
    chunked: bool  # the request body used Transfer-Encoding: chunked
    received_at: float = field(default_factory=time.time)


# --------------------------------------------------------------------------------------------------------
# Directive parsing and behaviour resolution
# --------------------------------------------------------------------------------------------------------


def _parse_flag(key: str, value: str) -> bool:
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise DirectiveError(f"fake directive {key!r} expects a flag, got {value!r}")


def _coerce(key: str, value: Any, *, from_text: bool) -> Any:
    """Validate/convert one directive or script value."""
    try:
        if key in _FLAG_KEYS:
            return _parse_flag(key, value) if from_text else bool(value)
        if key in ("latency", "retry_after"):
            out = float(value)
            if not math.isfinite(out) or out < 0:
                raise ValueError
            return out
        if key == "status":
            out = int(value)
            if not 100 <= out <= 599:
                raise ValueError
            return out
        if key == "times":
            out = int(value)
            if out < 0:
                raise ValueError
            return out
        if key in ("content", "finish_reason"):
            return str(value)
        if key == "response":
            if not isinstance(value, Mapping | list):
                raise ValueError
            return value
        if key == "headers":
            return {str(k): str(v) for k, v in dict(value).items()}
    except (TypeError, ValueError):
        raise DirectiveError(f"bad value for fake directive {key!r}: {value!r}") from None
    raise DirectiveError(f"unknown fake directive key {key!r}")


def parse_directives(text: str) -> dict[str, Any]:
    """Parse every ``[[fake:...]]`` block in ``text`` into one dict (later keys win).

    >>> parse_directives("hi [[fake:status=429,times=2]] [[fake:content=a%2Cb]]")
    {'status': 429, 'times': 2, 'content': 'a,b'}
    """
    spec: dict[str, Any] = {}
    for match in _DIRECTIVE_RE.finditer(text):
        items = match.group(1).split(",")
        for i, item in enumerate(items):
            key, eq, value = item.partition("=")
            key = key.strip().lower()
            if not key:
                continue
            if key == "content":
                # content runs to the end of the directive (commas included), then is %-decoded.
                spec["content"] = unquote(",".join([value, *items[i + 1 :]]))
                break
            if key not in _DIRECTIVE_KEYS:
                raise DirectiveError(f"unknown fake directive key {key!r} in {match.group(0)!r}")
            if not eq and key not in _FLAG_KEYS:
                raise DirectiveError(f"fake directive {key!r} needs a value, e.g. {key}=1")
            spec[key] = _coerce(key, value, from_text=True)
    return spec


def _content_text(content: Any) -> str:
    """Text of a message ``content`` (string or list of content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return str(content)


def _last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def _count_words(messages: list[Any]) -> int:
    return sum(len(_content_text(m.get("content")).split()) for m in messages if isinstance(m, Mapping))


# --------------------------------------------------------------------------------------------------------
# JSON-schema example generation
# --------------------------------------------------------------------------------------------------------


def _resolve_ref(ref: str, root: Mapping[str, Any]) -> Any:
    if not ref.startswith("#"):
        return {}
    node: Any = root
    for token in ref[1:].split("/"):
        if not token:
            continue
        token = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        else:
            return {}
    return node


def _number_example(schema: Mapping[str, Any], integer: bool) -> float | int:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    # draft-4 style boolean exclusive bounds
    if xlo is True and lo is not None:
        xlo, lo = lo, None
    if xhi is True and hi is not None:
        xhi, hi = hi, None
    xlo = xlo if isinstance(xlo, int | float) and not isinstance(xlo, bool) else None
    xhi = xhi if isinstance(xhi, int | float) and not isinstance(xhi, bool) else None
    value: float = 0.5
    if lo is not None and value < lo:
        value = lo
    if xlo is not None and value <= xlo:
        value = xlo + (1 if integer else 0.5)
    if hi is not None and value > hi:
        value = hi
    if xhi is not None and value >= xhi:
        value = xhi - (1 if integer else 0.5)
        if xlo is not None and value <= xlo:
            value = (xlo + xhi) / 2
    if integer:
        up = math.ceil(value)
        if (hi is not None and up > hi) or (xhi is not None and up >= xhi):
            up = math.floor(value)
        return int(up)
    return value


def _string_example(schema: Mapping[str, Any]) -> str:
    fmt = schema.get("format")
    text = (
        {
            "date-time": "1970-01-01T00:00:00Z",
            "date": "1970-01-01",
            "time": "00:00:00",
            "email": "ok@example.com",
            "uri": "https://example.com/",
            "url": "https://example.com/",
            "uuid": "00000000-0000-4000-8000-000000000000",
        }.get(fmt, "ok")
        if isinstance(fmt, str)
        else "ok"
    )
    min_len, max_len = schema.get("minLength"), schema.get("maxLength")
    if isinstance(min_len, int) and len(text) < min_len:
        text += "k" * (min_len - len(text))
    if isinstance(max_len, int) and len(text) > max_len:
        text = text[:max_len]
    return text


def example_from_schema(schema: Any, _root: Any = None, _depth: int = 0) -> Any:
    """A deterministic JSON value satisfying a simple JSON schema (see the module docstring)."""
    root = schema if _root is None else _root
    if not isinstance(schema, Mapping) or _depth > 40:
        return None
    if isinstance(schema.get("$ref"), str):
        return example_from_schema(_resolve_ref(schema["$ref"], root), root, _depth + 1)
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            non_null = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
            return example_from_schema((non_null or options)[0], root, _depth + 1)
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and all_of:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for sub in all_of:
            if isinstance(sub, Mapping) and isinstance(sub.get("$ref"), str):
                sub = _resolve_ref(sub["$ref"], root)
            if isinstance(sub, Mapping):
                props = {**merged.get("properties", {}), **sub.get("properties", {})}
                merged.update(sub)
                if props:
                    merged["properties"] = props
        return example_from_schema(merged, root, _depth + 1)

    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        if "properties" in schema or _depth == 0:
            kind = "object"
        elif "items" in schema or "prefixItems" in schema:
            kind = "array"
        else:
            kind = "string"

    if kind == "object":
        props = schema.get("properties")
        if not isinstance(props, Mapping):
            return {}
        return {name: example_from_schema(sub, root, _depth + 1) for name, sub in props.items()}
    if kind == "array":
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(prefix, list):
            return [example_from_schema(s, root, _depth + 1) for s in prefix]
        if isinstance(items, list):  # draft-4 tuple form
            return [example_from_schema(s, root, _depth + 1) for s in items]
        count = max(int(schema.get("minItems") or 0), 1)
        if isinstance(schema.get("maxItems"), int):
            count = min(count, schema["maxItems"])
        item_schema = items if isinstance(items, Mapping) else {"type": "string"}
        return [example_from_schema(item_schema, root, _depth + 1) for _ in range(count)]
    if kind in ("number", "integer"):
        return _number_example(schema, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string_example(schema)


def _default_reply(body: Mapping[str, Any], last_user: str) -> str:
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping):
        kind = response_format.get("type")
        if kind == "json_schema":
            spec = response_format.get("json_schema")
            schema = spec.get("schema") if isinstance(spec, Mapping) else None
            if not isinstance(schema, Mapping):
                schema = {"type": "object"}
            return json.dumps(example_from_schema(schema))
        if kind == "json_object":
            return json.dumps({"echo": last_user})
    return "echo: " + last_user


# --------------------------------------------------------------------------------------------------------
# HTTP plumbing
# --------------------------------------------------------------------------------------------------------


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _http_response(
    status: int,
    payload: bytes,
    *,
    keep_alive: bool,
    content_type: str = "application/json",
    extra_headers: Mapping[str, str] | None = None,
) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {_reason(status)}",
        f"content-type: {content_type}",
        f"content-length: {len(payload)}",
        f"connection: {'keep-alive' if keep_alive else 'close'}",
        f"x-request-id: req_{uuid.uuid4().hex}",
    ]
    if extra_headers:
        lines.extend(f"{k}: {v}" for k, v in extra_headers.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload


def _error_body(status: int, message: str) -> bytes:
    kind, code = {
        400: ("invalid_request_error", None),
        401: ("invalid_request_error", "invalid_api_key"),
        403: ("invalid_request_error", "unsupported_country_region_territory"),
        404: ("invalid_request_error", "model_not_found"),
        429: ("requests", "rate_limit_exceeded"),
        503: ("server_error", "service_unavailable"),
    }.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}}).encode()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            # trailer section: header lines until an empty line
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)  # CRLF after the chunk data


# --------------------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------------------


class FakeOpenAIServer:
    """Fake OpenAI chat-completions server on ``host:port`` (port 0 = pick a free one).

    >>> with FakeOpenAIServer(latency_s=0.0) as srv:   # doctest: +SKIP
    ...     client = openai.OpenAI(base_url=srv.api_base, api_key="sk-test")
    """

    def __init__(
        self,
        latency_s: float = 0.0,
        script: ScriptFn | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        models: tuple[str, ...] = ("fake",),
        record_requests: bool = True,
        model_meta: dict[str, Any] | None = None,
    ) -> None:
        self.latency_s = float(latency_s)
        self.script = script
        self.host = host
        self.models = tuple(models)
        # extra fields of every /v1/models entry, e.g. vLLM's {"max_model_len": 4096} (issue 25)
        self.model_meta = dict(model_meta or {})
        self.record_requests = record_requests
        self._requested_port = port
        self.port: int | None = None

        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._counts: Counter[str] = Counter()
        self._total = 0
        self._chunked = 0
        self._times_seen: Counter[str] = Counter()
        self._ids = itertools.count(1)

        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._conn_tasks: set[asyncio.Task[Any]] = set()
        self._open_connections = 0
        self._peak_connections = 0
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    # ---- lifecycle ----------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://host:port`` (no ``/v1``)."""
        if self.port is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return f"http://{self.host}:{self.port}"

    @property
    def api_base(self) -> str:
        """``http://host:port/v1`` -- pass as ``base_url`` (openai) or ``api_base`` (litellm)."""
        return self.url + "/v1"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> FakeOpenAIServer:
        """Bind and serve in a background thread; returns ``self`` once the port is known."""
        if self._thread is not None:
            raise RuntimeError("FakeOpenAIServer already started")
        self._ready.clear()
        self._startup_error = None
        self._thread = threading.Thread(target=self._run, name="FakeOpenAIServer", daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("FakeOpenAIServer did not start within 30 s")
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise self._startup_error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Close the listener and every open connection (hanging ones included), then join the thread."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        with contextlib.suppress(RuntimeError):  # loop already closed
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> FakeOpenAIServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(
                    self._handle_connection,
                    self.host,
                    self._requested_port,
                    limit=_MAX_HEADER_BYTES,
                    backlog=2048,
                )
            )
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as exc:  # noqa: BLE001 - re-raised in start()
            self._startup_error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._shutdown())
            loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = list(self._conn_tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
        with contextlib.suppress(Exception):
            await asyncio.get_running_loop().shutdown_asyncgens()

    # ---- stats ----------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Snapshot of every recorded request (oldest first)."""
        with self._lock:
            return list(self._requests)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """Snapshot of the JSON bodies of the chat-completion requests received."""
        with self._lock:
            return [r.body for r in self._requests if r.path in _CHAT_PATHS and isinstance(r.body, dict)]

    @property
    def total_requests(self) -> int:
        """Every HTTP request handled (chat, models, errors), counted even when not recorded."""
        with self._lock:
            return self._total

    @property
    def chunked_requests(self) -> int:
        """How many request bodies arrived with ``Transfer-Encoding: chunked``."""
        with self._lock:
            return self._chunked

    @property
    def counts(self) -> Counter[str]:
        """Requests per behaviour: ``ok``, ``content``, ``malformed``, ``truncated``, ``timeout``,
        ``disconnect``, ``status_<code>``, ``response``, ``models``, ``health``, ``bad_request``,
        ``not_found``, ``script_error``."""
        with self._lock:
            return Counter(self._counts)

    @property
    def peak_connections(self) -> int:
        """Most TCP connections open at the same time since start/``reset()`` -- shows client pool caps."""
        with self._lock:
            return self._peak_connections

    def count(self, behaviour: str) -> int:
        with self._lock:
            return self._counts[behaviour]

    def reset(self) -> None:
        """Forget recorded requests, counters and the per-message ``times`` tallies."""
        with self._lock:
            self._requests.clear()
            self._counts.clear()
            self._times_seen.clear()
            self._total = 0
            self._chunked = 0
            self._peak_connections = self._open_connections

    def _record(
        self, method: str, path: str, headers: dict[str, str], body: Any, behaviour: str, chunked: bool
    ) -> None:
        with self._lock:
            self._total += 1
            self._counts[behaviour] += 1
            if chunked:
                self._chunked += 1
            if self.record_requests:
                self._requests.append(RecordedRequest(method, path, headers, body, behaviour, chunked))

    # ---- connection handling ---------------------------------------------------------------------------

    async def _handle_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._conn_tasks.add(task)
        with self._lock:
            self._open_connections += 1
            self._peak_connections = max(self._peak_connections, self._open_connections)
        try:
            await self._serve_connection(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            # stop() cancels open connections; end quietly (3.11's start_server callback would otherwise
            # log the CancelledError as an unhandled exception).
            pass
        finally:
            if task is not None:
                self._conn_tasks.discard(task)
            with self._lock:
                self._open_connections -= 1
            writer.close()

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return  # client closed the (idle) connection
            except asyncio.LimitOverrunError:
                writer.write(_http_response(431, _error_body(431, "headers too large"), keep_alive=False))
                await writer.drain()
                return
            lines = head.decode("latin-1").lstrip("\r\n").split("\r\n")
            try:
                method, target, version = lines[0].split(" ", 2)
            except ValueError:
                writer.write(_http_response(400, _error_body(400, "bad request line"), keep_alive=False))
                await writer.drain()
                return
            headers: dict[str, str] = {}
            for line in lines[1:]:
                if line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            if headers.get("expect", "").lower() == "100-continue":
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            chunked = "chunked" in headers.get("transfer-encoding", "").lower()
            if chunked:
                raw = await _read_chunked(reader)
            else:
                length = int(headers.get("content-length") or 0)
                raw = await reader.readexactly(length) if length > 0 else b""
            connection = headers.get("connection", "").lower()
            keep_alive = (
                "close" not in connection if version.upper() == "HTTP/1.1" else "keep-alive" in connection
            )

            result = await self._dispatch(method.upper(), target, headers, raw, chunked, keep_alive)
            if result is _DISCONNECT:
                writer.transport.abort()
                return
            if result is _HANG:
                while await reader.read(65536):  # until the client gives up (EOF) or stop() cancels us
                    pass
                return
            assert isinstance(result, bytes)
            writer.write(result)
            await writer.drain()
            if not keep_alive:
                return

    async def _dispatch(
        self, method: str, target: str, headers: dict[str, str], raw: bytes, chunked: bool, keep_alive: bool
    ) -> bytes | _Disconnect | _Hang:
        path = target.split("?", 1)[0]
        if len(path) > 1:
            path = path.rstrip("/")
        if path in _CHAT_PATHS:
            if method != "POST":
                self._record(method, path, headers, None, "not_found", chunked)
                return _http_response(405, _error_body(405, f"{method} not allowed"), keep_alive=keep_alive)
            return await self._chat(path, headers, raw, chunked, keep_alive)
        if method == "GET" and path in _MODELS_PATHS:
            self._record(method, path, headers, None, "models", chunked)
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "shopbench-fake", **self.model_meta}
                for m in self.models
            ]
            return _http_response(
                200, json.dumps({"object": "list", "data": data}).encode(), keep_alive=keep_alive
            )
        if method == "GET" and (path.startswith("/v1/models/") or path.startswith("/models/")):
            self._record(method, path, headers, None, "models", chunked)
            model = unquote(path.split("/models/", 1)[1])
            payload = {"id": model, "object": "model", "created": 0, "owned_by": "shopbench-fake"}
            return _http_response(200, json.dumps(payload).encode(), keep_alive=keep_alive)
        if method == "GET" and path in ("/health", "/v1/health"):
            self._record(method, path, headers, None, "health", chunked)
            return _http_response(200, b'{"status": "ok"}', keep_alive=keep_alive)
        self._record(method, path, headers, None, "not_found", chunked)
        return _http_response(404, _error_body(404, f"no route for {method} {path}"), keep_alive=keep_alive)

    def _resolve(self, body: dict[str, Any], last_user: str) -> dict[str, Any]:
        spec: dict[str, Any] = {"latency": self.latency_s}
        script = self.script
        if script is not None:
            override = script(body)
            if override:
                for key, value in override.items():
                    if key not in _SCRIPT_KEYS:
                        raise DirectiveError(f"unknown key {key!r} returned by the fake script")
                    spec[key] = _coerce(key, value, from_text=False)
        spec.update(parse_directives(last_user))
        times = spec.get("times")
        if times is not None:
            with self._lock:
                self._times_seen[last_user] += 1
                seen = self._times_seen[last_user]
            if seen > times:
                for key in _FAULT_KEYS:
                    spec.pop(key, None)
                spec["latency"] = self.latency_s
        return spec

    async def _chat(
        self, path: str, headers: dict[str, str], raw: bytes, chunked: bool, keep_alive: bool
    ) -> bytes | _Disconnect | _Hang:
        def bad(message: str, body: Any = None, behaviour: str = "bad_request", status: int = 400) -> bytes:
            self._record("POST", path, headers, body, behaviour, chunked)
            return _http_response(status, _error_body(status, message), keep_alive=keep_alive)

        try:
            body = json.loads(raw) if raw else None
        except ValueError as exc:
            return bad(f"request body is not valid JSON: {exc}")
        if not isinstance(body, dict):
            return bad("request body must be a JSON object")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return bad("'messages' must be a non-empty array", body)
        last_user = _last_user_text(messages)
        try:
            spec = self._resolve(body, last_user)
        except DirectiveError as exc:
            return bad(str(exc), body)
        except Exception as exc:  # noqa: BLE001 - a broken script should surface as a 500, not kill the server
            return bad(f"fake script raised {type(exc).__name__}: {exc}", body, "script_error", 500)

        status = spec.get("status")
        if spec.get("disconnect"):
            behaviour = "disconnect"
        elif spec.get("timeout"):
            behaviour = "timeout"
        elif "response" in spec:  # sent verbatim, with ``status`` when given (an error body of the test's)
            behaviour = "response"
        elif status is not None and status >= 400:
            behaviour = f"status_{status}"
        elif spec.get("malformed"):
            behaviour = "malformed"
        elif spec.get("truncated"):
            behaviour = "truncated"
        elif "content" in spec:
            behaviour = "content"
        else:
            behaviour = "ok"
        self._record("POST", path, headers, body, behaviour, chunked)

        if behaviour == "timeout":
            return _HANG
        latency = spec.get("latency") or 0.0
        if latency > 0:
            await asyncio.sleep(latency)
        if behaviour == "disconnect":
            return _DISCONNECT

        extra = dict(spec.get("headers") or {})
        if behaviour.startswith("status_"):
            assert status is not None
            if "retry_after" in spec:
                extra.setdefault("retry-after", f"{spec['retry_after']:g}")
            elif status == 429:
                extra.setdefault("retry-after", "0")
            message = f"fake error: HTTP {status} requested by the test ({_reason(status)})"
            return _http_response(
                status, _error_body(status, message), keep_alive=keep_alive, extra_headers=extra
            )
        if behaviour == "response":
            payload = json.dumps(spec["response"]).encode()
            return _http_response(status or 200, payload, keep_alive=keep_alive, extra_headers=extra)

        content = spec["content"] if "content" in spec else _default_reply(body, last_user)
        finish_reason = "stop"
        if spec.get("malformed"):
            content = MALFORMED_CONTENT
        if spec.get("truncated"):
            content = content[: len(content) // 2]
            finish_reason = "length"
        finish_reason = spec.get("finish_reason") or finish_reason
        model = body.get("model") if isinstance(body.get("model"), str) else "fake"
        prompt_tokens = _count_words(messages)
        n = body.get("n") if isinstance(body.get("n"), int) and body.get("n", 1) > 0 else 1
        completion_tokens = len(content.split()) * n
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        completion_id = f"chatcmpl-fake{next(self._ids)}-{uuid.uuid4().hex[:12]}"
        created = int(time.time())

        if body.get("stream"):
            payload = self._stream_payload(
                body, completion_id, created, model, content, finish_reason, usage, n
            )
            extra.setdefault("cache-control", "no-cache")
            return _http_response(
                status or 200,
                payload,
                keep_alive=keep_alive,
                content_type="text/event-stream; charset=utf-8",
                extra_headers=extra,
            )

        message = {"role": "assistant", "content": content, "refusal": None, "annotations": []}
        response = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {"index": i, "message": message, "logprobs": None, "finish_reason": finish_reason}
                for i in range(n)
            ],
            "usage": usage,
            "service_tier": "default",
            "system_fingerprint": "fp_fake",
        }
        return _http_response(
            status or 200, json.dumps(response).encode(), keep_alive=keep_alive, extra_headers=extra
        )

    @staticmethod
    def _stream_payload(
        body: dict[str, Any],
        completion_id: str,
        created: int,
        model: str,
        content: str,
        finish_reason: str,
        usage: dict[str, int],
        n: int,
    ) -> bytes:
        def chunk(choices: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> str:
            obj = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": "fp_fake",
                "choices": choices,
                **(extra or {}),
            }
            return "data: " + json.dumps(obj) + "\n\n"

        pieces = re.findall(r"\S*\s*", content) if content else []
        pieces = [p for p in pieces if p]
        events = []
        for i in range(n):
            events.append(
                chunk(
                    [
                        {
                            "index": i,
                            "delta": {"role": "assistant", "content": ""},
                            "logprobs": None,
                            "finish_reason": None,
                        }
                    ]
                )
            )
            for piece in pieces:
                events.append(
                    chunk(
                        [{"index": i, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}]
                    )
                )
            events.append(
                chunk([{"index": i, "delta": {}, "logprobs": None, "finish_reason": finish_reason}])
            )
        options = body.get("stream_options")
        if isinstance(options, Mapping) and options.get("include_usage"):
            events.append(chunk([], {"usage": usage}))
        events.append("data: [DONE]\n\n")
        return "".join(events).encode()


# --------------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m shopbench.testing.fake_openai",
        description="Serve a fake OpenAI chat-completions API; prints the api_base, runs until SIGTERM/SIGINT.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = pick a free port (default)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each reply")
    args = parser.parse_args(argv)

    server = FakeOpenAIServer(latency_s=args.latency, host=args.host, port=args.port)
    return serve_until_signal(
        server, lambda: server.api_base,
        lambda: f"fake_openai: served {server.total_requests} requests {dict(server.counts)}",
    )  # fmt: skip


def serve_until_signal(
    server, address: Callable[[], str], farewell: Callable[[], str], poll_s: float = 0.5
) -> int:
    """A server command's main loop: start ``server`` (``start()``/``stop()``), print ``address()``
    on stdout for the parent process, serve until SIGTERM or SIGINT, then stop and print
    ``farewell()`` on stderr. Returns the exit status 0."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    server.start()
    print(address(), flush=True)
    try:
        while not stop.wait(poll_s):
            pass
    finally:
        server.stop()
        print(farewell(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())


def is_preflight(body: Mapping[str, Any]) -> bool:
    """Whether a request is one of the gateway's own preflight or negotiation calls (issue 25 §1–2:
    the structured-output probe or the context-window probe), not a call of the sweep under test."""
    from ..llm.negotiate import PROBE_MESSAGES

    text = _last_user_text(list(body.get("messages") or []))
    return text.startswith(PROBE_MESSAGES[0]["content"]) or text.endswith("\nReply with the word OK.")


def answering_preflight(script: Callable[[dict], Any]) -> Callable[[dict], Any]:
    """``script`` behind an answer to the preflight's calls (:func:`is_preflight`): ``{"ok": true}``,
    the reply a healthy server gives, so a test's script sees only the sweep's own requests."""

    def wrapped(body: dict) -> Any:
        return {"content": '{"ok": true}'} if is_preflight(body) else script(body)

    return wrapped
