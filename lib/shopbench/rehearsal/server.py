"""A local provider server for rehearsals: the OpenAI and Anthropic wire formats on 127.0.0.1.

litellm's real provider code paths run unchanged against it, with only their base URLs overridden
(:func:`shopbench.rehearsal.provider_env`):

- ``openai/…``, ``fireworks_ai/…``, ``hosted_vllm/…`` (and any OpenAI-compatible path):
  ``POST /v1/chat/completions`` (streaming too, from :class:`FakeOpenAIServer`);
- ``anthropic/…``: ``POST /v1/messages``;
- OpenAI Batch API: ``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files/{id}``,
  ``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``,
  ``POST /v1/batches/{id}/cancel``;
- Anthropic Message Batches: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
  ``GET /v1/messages/batches/{id}/results``.

What it answers (seeded: the same request gets the same answer, like a model at temperature 0):

- a JSON schema in ``response_format`` (OpenAI), in ``output_format`` or a forced tool (Anthropic's
  and litellm's JSON mode): a random document satisfying the schema (enums, bounds, lengths,
  ``required``, ``$ref``, ``anyOf``), so every contract parses;
- ``tools`` offered and not forced: a tool call with arguments sampled from the tool's parameter
  schema while the conversation holds fewer than ``max_tool_turns`` tool results (then a text
  answer), so agent loops run and end;
- otherwise a short seeded text.

``usage`` is realistic in shape and plausible in size (tokens ≈ characters / 4):
OpenAI's automatic prompt caching is simulated (a prefix of ≥ ``min_cache_tokens`` seen before
is reported in ``prompt_tokens_details.cached_tokens``, in 128-token steps, as OpenAI documents),
and Anthropic's explicit caching reads ``cache_control`` breakpoints (``cache_creation_input_tokens``
on the first request with a prefix, ``cache_read_input_tokens`` after).

Faults, seeded per request: ``rate_429`` (HTTP 429 with ``Retry-After``), ``rate_5xx`` (503/500),
``batch_line_error_rate`` (a batch line answered with a per-line error); ``latency_s`` (± 50 %
jitter). The ``[[fake:…]]`` directives of :mod:`shopbench.testing.fake_openai` still apply to chat
completions. Batches end ``batch_delay_s`` after submission. The server proves code paths, not
numbers: nothing it answers is a model's judgement.

CLI: ``python -m shopbench.rehearsal.server --port 0 --seed 7`` prints ``http://127.0.0.1:<port>``
and serves until SIGTERM/SIGINT; ``--die-after N`` makes the process SIGKILL itself when the
(N+1)-th chat completion arrives (a rehearsal fleet's server killed mid-sweep).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import re
import signal
import sys
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from ..testing.fake_openai import (
    FakeOpenAIServer,
    _content_text,
    _http_response,
    _resolve_ref,
    serve_until_signal,
)

__all__ = ["ProviderServer", "main", "sample_from_schema", "tokens"]

CACHE_STEP_TOKENS = 128  # OpenAI reports cached prefixes in 128-token increments
_WORDS = ("the", "product", "matches", "request", "price", "within", "budget", "customer", "asked", "for",
          "a", "size", "colour", "item", "shipping", "available", "order", "option", "answer", "rehearsal")  # fmt: skip


def tokens(text: str) -> int:
    """The server's token count: characters / 4 (at least 1 for non-empty text)."""
    return (len(text) + 3) // 4


def _seed_of(*parts: Any) -> int:
    blob = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# ---- schema sampling ---------------------------------------------------------------------------
_NOTE_KEYS = {"minimum number of items": "minItems", "maximum number of items": "maxItems",
              "exclusive minimum value": "exclusiveMinimum", "exclusive maximum value": "exclusiveMaximum",
              "minimum value": "minimum", "maximum value": "maximum", "minimum length": "minLength",
              "maximum length": "maxLength"}  # fmt: skip
_NOTE_RE = re.compile(r"(exclusive minimum value|exclusive maximum value|minimum number of items|maximum number of "
                      r"items|minimum value|maximum value|minimum length|maximum length): (-?\d+(?:\.\d+)?)")  # fmt: skip


def _with_noted_constraints(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """Constraints a provider transform moved into the description (litellm writes Anthropic's
    unsupported keywords as "Note: minimum value: 1, maximum value: 5.") read back, as a model would."""
    desc = schema.get("description")
    if not isinstance(desc, str) or "Note:" not in desc:
        return schema
    extra: dict[str, Any] = {}
    for label, value in _NOTE_RE.findall(desc):
        num = float(value)
        extra.setdefault(_NOTE_KEYS[label], int(num) if num.is_integer() else num)
    return {**extra, **schema}


def sample_from_schema(schema: Any, rng: random.Random, _root: Any = None, _depth: int = 0) -> Any:
    """A random JSON value satisfying ``schema`` (types, ``enum``/``const``, numeric bounds, string
    lengths, ``minItems``/``maxItems``, ``$ref``/``$defs``, ``anyOf``/``oneOf``/``allOf``)."""
    root = schema if _root is None else _root
    if not isinstance(schema, Mapping) or _depth > 30:
        return None
    schema = _with_noted_constraints(schema)
    if isinstance(schema.get("$ref"), str):
        return sample_from_schema(_resolve_ref(schema["$ref"], root), rng, root, _depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        opts = schema.get(key)
        if isinstance(opts, list) and opts:
            non_null = [o for o in opts if not (isinstance(o, Mapping) and o.get("type") == "null")]
            return sample_from_schema(rng.choice(non_null or opts), rng, root, _depth + 1)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for sub in schema["allOf"]:
            sub = _resolve_ref(sub["$ref"], root) if isinstance(sub, Mapping) and "$ref" in sub else sub
            if isinstance(sub, Mapping):
                props = {**merged.get("properties", {}), **sub.get("properties", {})}
                merged.update(sub)
                merged["properties"] = props
        return sample_from_schema(merged, rng, root, _depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = (
            "object"
            if ("properties" in schema or _depth == 0)
            else "array"
            if "items" in schema
            else "string"
        )
    if kind == "object":
        props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
        return {k: sample_from_schema(v, rng, root, _depth + 1) for k, v in props.items()}
    if kind == "array":
        lo = int(schema.get("minItems") or 0)
        hi = int(schema.get("maxItems") if isinstance(schema.get("maxItems"), int) else max(lo, 3))
        items = schema.get("items") if isinstance(schema.get("items"), Mapping) else {"type": "string"}
        return [sample_from_schema(items, rng, root, _depth + 1) for _ in range(rng.randint(lo, max(lo, hi)))]
    if kind in ("number", "integer"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        hi = schema.get("maximum", schema.get("exclusiveMaximum", (lo or 0) + 10))
        lo, hi = (lo, hi) if isinstance(lo, int | float) and isinstance(hi, int | float) else (0, 10)
        if kind == "integer":
            a, b = int(-(-lo // 1)), int(hi // 1)
            if "exclusiveMinimum" in schema and a == lo:
                a += 1
            if "exclusiveMaximum" in schema and b == hi:
                b -= 1
            return rng.randint(a, max(a, b))
        return round(rng.uniform(lo, hi), 3)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    lo = int(schema.get("minLength") or 0)
    hi = schema.get("maxLength")
    text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 6)))
    if len(text) < lo:
        text += "x" * (lo - len(text))
    return text[: int(hi)] if isinstance(hi, int) else text


def _text_answer(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 40))).capitalize() + "."


# ---- the server ------------------------------------------------------------------------------
class ProviderServer(FakeOpenAIServer):
    """OpenAI Chat Completions, Anthropic Messages and both batch APIs on ``host:port``."""

    def __init__(
        self,
        *,
        seed: int = 0,
        latency_s: float = 0.0,
        rate_429: float = 0.0,
        rate_5xx: float = 0.0,
        retry_after_s: float = 0.05,
        batch_line_error_rate: float = 0.0,
        batch_delay_s: float = 0.5,
        min_cache_tokens: int = 1024,
        max_tool_turns: int = 2,
        host: str = "127.0.0.1",
        port: int = 0,
        record_requests: bool = False,
    ) -> None:
        super().__init__(
            0.0, None, host=host, port=port, models=("rehearsal",), record_requests=record_requests
        )
        self.seed = int(seed)
        self.base_latency_s = float(latency_s)
        self.rate_429 = float(rate_429)
        self.rate_5xx = float(rate_5xx)
        self.retry_after_s = float(retry_after_s)
        self.batch_line_error_rate = float(batch_line_error_rate)
        self.batch_delay_s = float(batch_delay_s)
        self.min_cache_tokens = int(min_cache_tokens)
        self.max_tool_turns = int(max_tool_turns)
        self.script = self._openai_script
        self._prefixes: set[str] = set()  # simulated provider prompt cache (prefix hashes)
        self._files: dict[str, dict[str, Any]] = {}
        self._batches: dict[str, dict[str, Any]] = {}
        self._msg_batches: dict[str, dict[str, Any]] = {}
        self._fault_n = 0
        self.served: dict[str, int] = {}
        # set by the CLI only (a server process): SIGKILL itself on the request after this many chat
        # completions (``--die-after``), so a rehearsal fleet loses a server mid-sweep
        self.die_after: int | None = None

    @property
    def base_url(self) -> str:
        """``http://host:port`` (Anthropic's base; OpenAI-style clients use :attr:`api_base`)."""
        return self.url

    def _count(self, what: str) -> None:
        with self._lock:
            self.served[what] = self.served.get(what, 0) + 1

    # ---- faults, latency, cache ------------------------------------------------------------
    def _fault(self) -> int | None:
        """A seeded fault for the next real-time request: 429, 503/500, or None."""
        if self.rate_429 <= 0 and self.rate_5xx <= 0:
            return None
        with self._lock:
            self._fault_n += 1
            n = self._fault_n
        r = random.Random(_seed_of(self.seed, "fault", n)).random()
        if r < self.rate_429:
            return 429
        if r < self.rate_429 + self.rate_5xx:
            return 503 if n % 2 else 500
        return None

    def _latency(self, key: Any) -> float:
        if self.base_latency_s <= 0:
            return 0.0
        return self.base_latency_s * random.Random(_seed_of(self.seed, "lat", key)).uniform(0.5, 1.5)

    def _auto_cached(self, model: str, prefix_text: str) -> int:
        """OpenAI-style automatic caching: the longest earlier-seen prefix, in 128-token steps."""
        total = tokens(prefix_text)
        if total < self.min_cache_tokens:
            return 0
        cached = 0
        with self._lock:
            for n_tok in range(self.min_cache_tokens, total + 1, CACHE_STEP_TOKENS):
                h = hashlib.sha256(f"{model}\x00{prefix_text[: n_tok * 4]}".encode()).hexdigest()
                if h in self._prefixes:
                    cached = n_tok
                else:
                    self._prefixes.add(h)
        return cached

    def _explicit_cache(self, model: str, prefix_text: str | None) -> tuple[int, int]:
        """Anthropic-style ``cache_control``: (read, write) tokens for the marked prefix."""
        if prefix_text is None:
            return 0, 0
        n = tokens(prefix_text)
        if n < self.min_cache_tokens:
            return 0, 0
        h = hashlib.sha256(f"anthropic\x00{model}\x00{prefix_text}".encode()).hexdigest()
        with self._lock:
            if h in self._prefixes:
                return n, 0
            self._prefixes.add(h)
        return 0, n

    # ---- what a model says -------------------------------------------------------------------
    def _decide(self, model: str, messages: list, schema: Mapping | None, tools: list[dict] | None,
                forced_tool: str | None) -> tuple[str | None, list[tuple[str, dict]]]:  # fmt: skip
        """(text, [(tool name, arguments)]) for a request, seeded by the model and the messages."""
        rng = random.Random(_seed_of(self.seed, model, messages))
        if forced_tool is not None and tools:
            spec = next((t for t in tools if t["name"] == forced_tool), tools[0])
            return None, [(spec["name"], sample_from_schema(spec.get("schema") or {"type": "object"}, rng))]
        if schema is not None:
            return json.dumps(sample_from_schema(schema, rng)), []
        if tools:
            results = sum(1 for m in messages if isinstance(m, Mapping) and m.get("role") == "tool"
                          or _is_anthropic_tool_result(m))  # fmt: skip
            if results < self.max_tool_turns and rng.random() < 0.85:
                spec = rng.choice(tools)
                return None, [
                    (spec["name"], sample_from_schema(spec.get("schema") or {"type": "object"}, rng))
                ]
        return _text_answer(rng), []

    # ---- OpenAI chat completions (a script for FakeOpenAIServer) -------------------------------
    def _openai_script(self, body: dict[str, Any]) -> dict[str, Any]:
        self._count("chat.completions")
        if self.die_after is not None and self.served["chat.completions"] > self.die_after:
            # a server process killed mid-sweep (a rehearsal fleet's victim): no reply, no clean-up;
            # the requests in flight on it see their connection drop, as with a crashed vLLM server
            os.kill(os.getpid(), signal.SIGKILL)
        fault = self._fault()
        if fault is not None:
            return {"status": fault, "retry_after": self.retry_after_s}
        return {"response": self.chat_completion(body), "latency": self._latency(body.get("messages"))}

    def chat_completion(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """An OpenAI ``chat.completion`` body for a request body (used by real-time and batch)."""
        model = str(body.get("model") or "rehearsal")
        messages = list(body.get("messages") or [])
        rf = body.get("response_format")
        schema = None
        if isinstance(rf, Mapping):
            if rf.get("type") == "json_schema":
                schema = (rf.get("json_schema") or {}).get("schema") or {"type": "object"}
            elif rf.get("type") == "json_object":
                schema = rf.get("schema") or {"type": "object", "properties": {"answer": {"type": "string"}}}
        tools = [
            {"name": t["function"]["name"], "schema": t["function"].get("parameters")}
            for t in body.get("tools") or []
            if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)
        ]
        tc = body.get("tool_choice")
        forced = (
            tc["function"]["name"]
            if isinstance(tc, Mapping) and isinstance(tc.get("function"), Mapping)
            else None
        )
        if tc == "none":
            tools = []
        text, calls = self._decide(model, messages, schema, tools or None, forced)
        prompt_text = json.dumps([body.get("tools") or [], messages], ensure_ascii=False, default=str)
        prompt_tokens = tokens(prompt_text)
        cached = self._auto_cached(model, prompt_text)
        tool_calls: list[dict[str, Any]] = [
            {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for name, args in calls
        ]  # fmt: skip
        completion_tokens = tokens(text or "") + sum(tokens(c["function"]["arguments"]) for c in tool_calls)
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None, "annotations": []}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return {
            "id": f"chatcmpl-reh{uuid.uuid4().hex[:20]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],  # fmt: skip
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },  # fmt: skip
            "service_tier": "default",
            "system_fingerprint": "fp_rehearsal",
        }

    # ---- Anthropic Messages --------------------------------------------------------------------
    def anthropic_message(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """An Anthropic ``message`` body for a Messages request body."""
        model = str(body.get("model") or "claude")
        messages = list(body.get("messages") or [])
        tools = [
            {"name": t["name"], "schema": t.get("input_schema")}
            for t in body.get("tools") or []
            if isinstance(t, Mapping) and "name" in t
        ]
        tc = body.get("tool_choice")
        forced = tc.get("name") if isinstance(tc, Mapping) and tc.get("type") == "tool" else None
        of = body.get("output_format")
        schema = of.get("schema") if isinstance(of, Mapping) and of.get("type") == "json_schema" else None
        if isinstance(tc, Mapping) and tc.get("type") == "none":
            tools = []
        text, calls = self._decide(model, messages, schema, tools or None, forced)
        blocks_in = _anthropic_blocks(body)
        full = json.dumps(blocks_in, ensure_ascii=False, default=str)
        marked = [i for i, b in enumerate(blocks_in) if isinstance(b, Mapping) and b.get("cache_control")]
        prefix = json.dumps(blocks_in[: marked[-1] + 1], ensure_ascii=False, default=str) if marked else None
        read, write = self._explicit_cache(model, prefix)
        input_tokens = max(1, tokens(full) - read - write)
        content: list[dict[str, Any]] = []
        if text is not None:
            content.append({"type": "text", "text": text})
        for name, args in calls:
            content.append(
                {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": name, "input": args}
            )
        out_tokens = tokens(text or "") + sum(tokens(json.dumps(a)) for _, a in calls)
        return {
            "id": f"msg_reh{uuid.uuid4().hex[:20]}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": out_tokens,
                "cache_creation_input_tokens": write,
                "cache_read_input_tokens": read,
                "service_tier": "standard",
            },
        }

    async def _anthropic(self, headers: dict, raw: bytes, keep_alive: bool) -> bytes:
        self._count("messages")
        try:
            body = json.loads(raw)
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("'messages' must be an array")
        except ValueError as e:
            return _anthropic_error(400, "invalid_request_error", f"bad request body: {e}", keep_alive)
        if not headers.get("x-api-key") and not headers.get("authorization"):
            return _anthropic_error(401, "authentication_error", "x-api-key header is required", keep_alive)
        fault = self._fault()
        self._record("POST", "/v1/messages", headers, body, f"status_{fault}" if fault else "ok", False)
        if fault is not None:
            kind = "rate_limit_error" if fault == 429 else "overloaded_error" if fault == 503 else "api_error"
            return _anthropic_error(fault, kind, f"rehearsal fault: HTTP {fault}", keep_alive,
                                    {"retry-after": f"{self.retry_after_s:g}"})  # fmt: skip
        delay = self._latency(body.get("messages"))
        if delay:
            await asyncio.sleep(delay)
        return _json(200, self.anthropic_message(body), keep_alive)

    # ---- OpenAI files and batches ----------------------------------------------------------------
    def _new_file(self, data: bytes, purpose: str, filename: str) -> dict[str, Any]:
        fid = f"file-reh{uuid.uuid4().hex[:20]}"
        meta = {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": filename, "purpose": purpose, "status": "processed", "expires_at": None,
                "status_details": None}  # fmt: skip
        with self._lock:
            self._files[fid] = {"meta": meta, "data": data}
        return meta

    def _file_upload(self, headers: dict, raw: bytes, keep_alive: bool) -> bytes:
        ctype = headers.get("content-type", "")
        if "multipart/form-data" not in ctype:
            return _json(400, _err("files must be uploaded as multipart/form-data"), keep_alive)
        msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw)
        fields: dict[str, Any] = {}
        filename = "upload.jsonl"
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True) or b""
            if name == "file":
                filename = part.get_filename() or filename
            fields[str(name)] = payload
        if "file" not in fields:
            return _json(400, _err("multipart body has no 'file' part"), keep_alive)
        purpose = fields.get("purpose", b"batch").decode()
        return _json(200, self._new_file(fields["file"], purpose, filename), keep_alive)

    def _batch_create(self, raw: bytes, keep_alive: bool) -> bytes:
        body = json.loads(raw or b"{}")
        fid = body.get("input_file_id")
        if fid not in self._files:
            return _json(400, _err(f"no file {fid!r}"), keep_alive)
        lines = [ln for ln in self._files[fid]["data"].decode().splitlines() if ln.strip()]
        bid = f"batch_reh{uuid.uuid4().hex[:20]}"
        now = time.time()
        batch = {
            "id": bid, "object": "batch", "endpoint": body.get("endpoint", "/v1/chat/completions"), "errors": None,
            "input_file_id": fid, "completion_window": body.get("completion_window", "24h"), "status": "in_progress",
            "output_file_id": None, "error_file_id": None, "created_at": int(now), "in_progress_at": int(now),
            "expires_at": int(now) + 86400, "finalizing_at": None, "completed_at": None, "failed_at": None,
            "expired_at": None, "cancelling_at": None, "cancelled_at": None,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": body.get("metadata") or {},
        }  # fmt: skip
        with self._lock:
            self._batches[bid] = {"batch": batch, "lines": lines, "due": now + self.batch_delay_s}
        self._count("batches")
        return _json(200, batch, keep_alive)

    def _batch_finish(self, bid: str) -> dict[str, Any]:
        entry = self._batches[bid]
        batch = entry["batch"]
        if batch["status"] != "in_progress" or time.time() < entry["due"]:
            return batch
        out, errs = [], []
        for ln in entry["lines"]:
            req = json.loads(ln)
            cid = req.get("custom_id")
            rid = f"batch_req_{uuid.uuid4().hex[:20]}"
            err = self._line_error(req.get("body") or {}, cid)
            if err is not None:
                errs.append({"id": rid, "custom_id": cid, "response": {"status_code": 400, "request_id": rid,
                             "body": {"error": {"message": err, "type": "invalid_request_error"}}},
                             "error": None})  # fmt: skip
                continue
            out.append({"id": rid, "custom_id": cid, "error": None,
                        "response": {"status_code": 200, "request_id": rid,
                                     "body": self.chat_completion(req.get("body") or {})}})  # fmt: skip
        now = int(time.time())
        if out:
            batch["output_file_id"] = self._new_file(_jsonl(out), "batch_output", f"{bid}_output.jsonl")["id"]
        if errs:
            batch["error_file_id"] = self._new_file(_jsonl(errs), "batch_output", f"{bid}_error.jsonl")["id"]
        batch.update(status="completed", finalizing_at=now, completed_at=now,
                     request_counts={"total": len(entry["lines"]), "completed": len(out), "failed": len(errs)})  # fmt: skip
        return batch

    def _line_error(self, body: Mapping[str, Any], custom_id: Any) -> str | None:
        """A per-line error: a ``[[fake:status=…]]`` directive in the request, or the seeded rate."""
        msgs = body.get("messages") or []
        text = _content_text(msgs[-1].get("content")) if msgs and isinstance(msgs[-1], Mapping) else ""
        if "[[fake:status=" in text:
            return "rehearsal per-line error requested by the request"
        if self.batch_line_error_rate > 0:
            if (
                random.Random(_seed_of(self.seed, "line", body.get("model"), custom_id, msgs)).random()
                < self.batch_line_error_rate
            ):
                return "rehearsal per-line error (seeded)"
        return None

    # ---- Anthropic message batches -----------------------------------------------------------------
    def _msg_batch_create(self, raw: bytes, keep_alive: bool) -> bytes:
        body = json.loads(raw or b"{}")
        reqs = body.get("requests")
        if not isinstance(reqs, list) or not reqs:
            return _anthropic_error(
                400, "invalid_request_error", "'requests' must be a non-empty array", keep_alive
            )
        bid = f"msgbatch_reh{uuid.uuid4().hex[:20]}"
        now = time.time()
        batch = {
            "id": bid, "type": "message_batch", "processing_status": "in_progress",
            "request_counts": {"processing": len(reqs), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
            "ended_at": None, "created_at": _iso(now), "expires_at": _iso(now + 86400), "archived_at": None,
            "cancel_initiated_at": None, "results_url": None,
        }  # fmt: skip
        with self._lock:
            self._msg_batches[bid] = {"batch": batch, "requests": reqs, "due": now + self.batch_delay_s}
        self._count("messages.batches")
        return _json(200, batch, keep_alive)

    def _msg_batch_finish(self, bid: str) -> dict[str, Any]:
        entry = self._msg_batches[bid]
        batch = entry["batch"]
        if batch["processing_status"] != "in_progress" or time.time() < entry["due"]:
            return batch
        results, ok, bad = [], 0, 0
        for r in entry["requests"]:
            cid, params = r.get("custom_id"), r.get("params") or {}
            err = self._line_error(params, cid)
            if err is not None:
                bad += 1
                results.append({"custom_id": cid, "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "invalid_request_error", "message": err}}}})  # fmt: skip
            else:
                ok += 1
                results.append(
                    {
                        "custom_id": cid,
                        "result": {"type": "succeeded", "message": self.anthropic_message(params)},
                    }
                )
        entry["results"] = _jsonl(results)
        batch.update(processing_status="ended", ended_at=_iso(time.time()),
                     results_url=f"{self.url}/v1/messages/batches/{bid}/results",
                     request_counts={"processing": 0, "succeeded": ok, "errored": bad, "canceled": 0, "expired": 0})  # fmt: skip
        return batch

    # ---- routing ---------------------------------------------------------------------------------
    async def _dispatch(self, method: str, target: str, headers: dict[str, str], raw: bytes, chunked: bool,
                        keep_alive: bool):  # fmt: skip
        path = target.split("?", 1)[0].rstrip("/") or "/"
        if path.startswith("/v1/"):
            p = path[3:]
        else:
            p = path
        if (
            p != "/messages"
            and not p.startswith("/chat/")
            and p.startswith(("/messages", "/files", "/batches"))
        ):
            self._record(method, path, headers, None, "batch_api", chunked)
        try:
            if p == "/messages" and method == "POST":
                return await self._anthropic(headers, raw, keep_alive)
            if p == "/messages/batches" and method == "POST":
                return self._msg_batch_create(raw, keep_alive)
            m = re.fullmatch(r"/messages/batches/([^/]+)(/results)?", p)
            if m and method == "GET":
                bid = m.group(1)
                if bid not in self._msg_batches:
                    return _anthropic_error(404, "not_found_error", f"no batch {bid}", keep_alive)
                batch = self._msg_batch_finish(bid)
                if m.group(2):
                    res = self._msg_batches[bid].get("results")
                    if res is None:
                        return _anthropic_error(
                            409, "invalid_request_error", "batch still in progress", keep_alive
                        )
                    return _http_response(200, res, keep_alive=keep_alive, content_type="application/binary")
                return _json(200, batch, keep_alive)
            if p == "/files" and method == "POST":
                self._count("files")
                return self._file_upload(headers, raw, keep_alive)
            m = re.fullmatch(r"/files/([^/]+)(/content)?", p)
            if m and method == "GET":
                f = self._files.get(m.group(1))
                if f is None:
                    return _json(404, _err(f"no file {m.group(1)}"), keep_alive)
                if m.group(2):
                    return _http_response(
                        200, f["data"], keep_alive=keep_alive, content_type="application/octet-stream"
                    )
                return _json(200, f["meta"], keep_alive)
            if p == "/batches" and method == "POST":
                return self._batch_create(raw, keep_alive)
            m = re.fullmatch(r"/batches/([^/]+)(/cancel)?", p)
            if m:
                bid = m.group(1)
                if bid not in self._batches:
                    return _json(404, _err(f"no batch {bid}"), keep_alive)
                if m.group(2) and method == "POST":
                    b = self._batches[bid]["batch"]
                    if b["status"] == "in_progress":
                        b.update(status="cancelled", cancelled_at=int(time.time()))
                    return _json(200, b, keep_alive)
                return _json(200, self._batch_finish(bid), keep_alive)
        except (ValueError, KeyError) as e:
            return _json(400, _err(f"bad request: {type(e).__name__}: {e}"), keep_alive)
        return await super()._dispatch(method, target, headers, raw, chunked, keep_alive)


def _is_anthropic_tool_result(m: Any) -> bool:
    c = m.get("content") if isinstance(m, Mapping) else None
    return isinstance(c, list) and any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in c)


def _anthropic_blocks(body: Mapping[str, Any]) -> list[Any]:
    """The request in Anthropic's cache order (tools, system, messages) as a flat list of blocks."""
    out: list[Any] = list(body.get("tools") or [])
    system = body.get("system")
    if isinstance(system, str):
        out.append({"type": "text", "text": system})
    elif isinstance(system, list):
        out.extend(system)
    for m in body.get("messages") or []:
        c = m.get("content") if isinstance(m, Mapping) else None
        if isinstance(c, list):
            out.extend({"role": m.get("role"), **b} if isinstance(b, Mapping) else b for b in c)
        else:
            out.append({"role": m.get("role") if isinstance(m, Mapping) else None, "text": c})
    return out


def _err(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


def _json(status: int, obj: Any, keep_alive: bool, headers: Mapping[str, str] | None = None) -> bytes:
    return _http_response(status, json.dumps(obj).encode(), keep_alive=keep_alive, extra_headers=headers)


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _anthropic_error(status: int, kind: str, message: str, keep_alive: bool,
                     headers: Mapping[str, str] | None = None) -> bytes:  # fmt: skip
    return _json(status, {"type": "error", "error": {"type": kind, "message": message}}, keep_alive, headers)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m shopbench.rehearsal.server", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--rate-429", type=float, default=0.0)
    ap.add_argument("--rate-5xx", type=float, default=0.0)
    ap.add_argument("--batch-line-error-rate", type=float, default=0.0)
    ap.add_argument("--batch-delay", type=float, default=0.5)
    ap.add_argument("--min-cache-tokens", type=int, default=1024)
    ap.add_argument("--retry-after", type=float, default=0.05)
    ap.add_argument("--max-tool-turns", type=int, default=2)
    ap.add_argument(
        "--die-after",
        type=int,
        default=None,
        help="SIGKILL this process on the chat completion after this many (a server killed mid-sweep)",
    )
    a = ap.parse_args(argv)
    srv = ProviderServer(seed=a.seed, latency_s=a.latency, rate_429=a.rate_429, rate_5xx=a.rate_5xx,
                         batch_line_error_rate=a.batch_line_error_rate, batch_delay_s=a.batch_delay,
                         min_cache_tokens=a.min_cache_tokens, retry_after_s=a.retry_after,
                         max_tool_turns=a.max_tool_turns, host=a.host, port=a.port)  # fmt: skip
    srv.die_after = a.die_after
    return serve_until_signal(srv, lambda: srv.url, lambda: f"rehearsal server: {srv.served}")


if __name__ == "__main__":
    sys.exit(main())
