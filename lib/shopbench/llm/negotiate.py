"""What an OpenAI-compatible server accepts, asked once per server and model (issue 25 item 1).

Servers that speak the Chat Completions API differ in the structured-output forms they take: OpenAI
and vLLM take ``response_format: {"type": "json_schema", ...}``; ``llama_cpp.server`` refuses it
(HTTP 500, "Input should be 'text' or 'json_object'") but takes ``{"type": "json_object", "schema":
...}`` and turns the schema into a grammar; others take only ``{"type": "json_object"}`` or nothing.
:func:`negotiate` tries the forms of :data:`FORMS` in order with one tiny call each (a few output
tokens) and keeps the first the server accepts; a form it refuses as a malformed request
(:func:`.transport.is_malformed`) is skipped, any other failure (unreachable, key refused, model
unknown, a 5xx naming no field) is raised, since no form would fare better.

The forms, as the gateway sends a call with an output contract (:func:`wire_format`):

- ``json_schema``: the OpenAI ``response_format`` with the schema (strict);
- ``json_object_schema``: llama.cpp's ``{"type": "json_object", "schema": ...}`` (the schema's long
  ``maxLength`` s lowered for llama.cpp's grammar parser, :func:`.llamacpp.runtime.grammar_schema`);
- ``json_object``: JSON mode without a schema; the schema goes in the prompt (:func:`schema_instruction`);
- ``text``: no ``response_format``; the schema in the prompt, the answer parsed by the contract.

The context window comes from the server's ``/models`` metadata where it gives one (vLLM's
``max_model_len``, ``context_length``, ``max_context_length``, llama.cpp ``llama-server``'s ``/props``
``n_ctx``), else from a probe (:func:`probe_context`): a prompt of prose about twice the size the run
needs, sent with ``max_tokens: 1``. A server whose window is smaller refuses it before evaluating it,
and llama_cpp.server, vLLM and llama-server name the window and the prompt's token count in the refusal
(so the probe also measures how many of the server's tokens the project's token estimate is); a server
whose window is larger evaluates it once.

A result (:class:`ServerCaps`) is kept on disk in ``<cache_dir>/servers.json``, keyed by api base and
model (:class:`CapsStore`): the gateway reads it, and negotiates only when a server is new to it; the
preflight (:mod:`.preflight`) always asks again (a server restarted with other settings answers anew).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import secrets
from .budget import count_tokens, text_tokens
from .transport import APIConnectionError, Timeout, TransportError, client, is_malformed

FORMS = ("json_schema", "json_object_schema", "json_object", "text")
FORM_LABELS = {
    "json_schema": "response_format json_schema",
    "json_object_schema": "response_format json_object with the schema (llama.cpp grammar)",
    "json_object": "response_format json_object, the schema in the prompt",
    "text": "plain text, the schema in the prompt, parsed by the contract",
}
PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
PROBE_MESSAGES = [{"role": "user", "content": 'Reply with the JSON object {"ok": true} and nothing else.'}]
PROBE_MAX_TOKENS = 12  # a tiny answer: SmolLM2 on two shared cores answers it in about a second
CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length", "context_window", "n_ctx")
# a refusal that names the window: llama_cpp.server "Requested tokens (4568) exceed context window of
# 2048"; vLLM "maximum context length is 2048 tokens. However, you requested 4568 tokens"; llama-server
# "... available context size (2048 tokens)"; JSON fields "n_ctx": 2048, "n_prompt_tokens": 4568
_WINDOW = (
    re.compile(r"context window of (\d+)", re.I),
    re.compile(r"maximum context length is (\d+)", re.I),
    re.compile(r"context (?:size|length|window)\D{0,20}?(\d{3,})", re.I),
    re.compile(r"\bn_ctx\D{0,5}(\d+)", re.I),
)
_REQUESTED = (
    re.compile(r"Requested tokens \((\d+)\)", re.I),
    re.compile(r"you requested (\d+) tokens(?: \((\d+) in the messages)?", re.I),
    re.compile(r"n_prompt_tokens\D{0,5}(\d+)", re.I),
)


@dataclass
class ServerCaps:
    """What one server accepts for one model (:func:`negotiate`)."""

    api_base: str
    model: str  # the model id sent in requests (the part after ``openai/``)
    form: str = "json_schema"  # the structured-output form to send (:data:`FORMS`)
    refused: dict[str, str] = field(default_factory=dict)  # form -> the server's refusal
    context: int | None = None  # the context window in the server's tokens, when known
    context_source: str = ""  # where ``context`` came from
    context_at_least: int | None = None  # a prompt this long (server tokens) was accepted
    context_refused: int | None = None  # a prompt this long (the project's count) was refused
    token_ratio: float | None = None  # server tokens per token of the project's estimate (probe)
    models: list[str] = field(default_factory=list)  # the ids the server lists
    checked: float = 0.0  # when (epoch seconds)

    @property
    def key(self) -> str:
        return caps_key(self.api_base, self.model)

    def describe(self) -> str:
        """One line for the run's log: the form, what was refused, the window."""
        out = f"{self.model} at {self.api_base}: structured output as {FORM_LABELS.get(self.form, self.form)}"
        if self.refused:
            out += (
                " (refused: "
                + "; ".join(f"{f}: {' '.join(why.split())[:160]}" for f, why in self.refused.items())
                + ")"
            )
        if self.context is not None:
            out += f"; context window {self.context:,} tokens ({self.context_source})"
        elif self.context_at_least is not None:
            out += f"; context window at least {self.context_at_least:,} tokens ({self.context_source})"
        else:
            out += "; context window unknown"
        return out


def caps_key(api_base: str, model: str) -> str:
    return f"{api_base.rstrip('/')}|{model}"


class CapsStore:
    """``servers.json`` in a cache folder: :class:`ServerCaps` by :func:`caps_key`."""

    def __init__(self, cache_dir: str | Path):
        self.path = Path(cache_dir) / "servers.json"

    def _read(self) -> dict[str, dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, api_base: str, model: str) -> ServerCaps | None:
        d = self._read().get(caps_key(api_base, model))
        if not isinstance(d, dict):
            return None
        try:
            return ServerCaps(**{k: v for k, v in d.items() if k in ServerCaps.__dataclass_fields__})
        except TypeError:
            return None

    def put(self, caps: ServerCaps) -> None:
        data = self._read()
        data[caps.key] = asdict(caps)
        self._write(data)

    def drop(self, api_base: str, model: str) -> None:
        data = self._read()
        if data.pop(caps_key(api_base, model), None) is not None:
            self._write(data)

    def _write(self, data: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".json.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(self.path)


# ---- the request forms ---------------------------------------------------------------------------
def schema_instruction(schema: dict) -> str:
    """The text appended to the last user message when the schema travels in the prompt."""
    return (
        "\n\nAnswer with one JSON object and nothing else (no prose, no code fence). It must satisfy "
        "this JSON schema:\n" + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    )


def with_schema_in_prompt(messages: list[dict], schema: dict) -> list[dict]:
    """``messages`` with :func:`schema_instruction` appended to the last user message (a new user
    message when there is none, or its content is not plain text)."""
    out = [dict(m) for m in messages]
    for m in reversed(out):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            m["content"] = m["content"] + schema_instruction(schema)
            return out
    return out + [{"role": "user", "content": schema_instruction(schema).lstrip()}]


def wire_format(form: str, schema: dict, name: str = "output") -> tuple[dict | None, bool]:
    """``(response_format or None, schema goes in the prompt)`` for a call with ``schema`` in ``form``."""
    from .contract import response_format

    if form == "json_schema":
        return response_format(schema, name), False
    if form == "json_object_schema":
        from .llamacpp.runtime import grammar_schema

        return {"type": "json_object", "schema": grammar_schema(schema)}, False
    if form == "json_object":
        return {"type": "json_object"}, True
    if form == "text":
        return None, True
    raise ValueError(f"unknown structured-output form {form!r}; one of {FORMS}")


# ---- asking the server ---------------------------------------------------------------------------
async def _chat(api_base: str, body: dict, api_key: str | None, timeout_s: float) -> dict:
    data, _ = await client().chat(api_base, body, api_key=api_key, timeout_s=timeout_s)
    return data


async def _models(
    api_base: str, model: str, api_key: str | None, timeout_s: float
) -> tuple[list[str], int | None, str]:
    """(model ids the server lists, its context window if its metadata gives one, where from)."""
    data = await client().get_json(api_base.rstrip("/") + "/models", api_key=api_key, timeout_s=timeout_s)
    entries = data.get("data") if isinstance(data, dict) else data if isinstance(data, list) else None
    ids: list[str] = []
    found: dict[str, tuple[int, str]] = {}
    for e in entries or []:
        if not isinstance(e, dict):
            continue
        mid = str(e.get("id") or e.get("name") or "")
        ids.append(mid)
        for src in (e, e.get("meta") if isinstance(e.get("meta"), dict) else {}):
            for k in CONTEXT_KEYS:
                v = src.get(k)
                if isinstance(v, int) and v > 0:
                    found.setdefault(mid, (v, f"/models {k}"))
    if model in found:
        return ids, *found[model]
    if len(found) == 1:  # one model served: its window, whatever its id
        return ids, *next(iter(found.values()))
    return ids, None, ""


async def _props_context(api_base: str, api_key: str | None, timeout_s: float) -> int | None:
    """llama.cpp ``llama-server``'s ``GET /props`` (beside ``/v1``): its ``n_ctx``, if it has one."""
    root = re.sub(r"/v1/?$", "", api_base.rstrip("/"))
    try:
        data = await client().get_json(root + "/props", api_key=api_key, timeout_s=timeout_s)
    except TransportError:
        return None
    if not isinstance(data, dict):
        return None
    for src in (data, data.get("default_generation_settings") or {}):
        v = src.get("n_ctx") if isinstance(src, dict) else None
        if isinstance(v, int) and v > 0:
            return v
    return None


async def negotiate_form(
    api_base: str, model: str, *, api_key: str | None = None, timeout_s: float = 30.0,
    forms: tuple[str, ...] = FORMS,
) -> tuple[str, dict[str, str]]:  # fmt: skip
    """The first of ``forms`` the server accepts (one tiny call each) and the refusals before it.
    Raises the server's error when it fails for another reason than the form, and a
    :class:`TransportError` when it refuses every form."""
    refused: dict[str, str] = {}
    for form in forms:
        rf, in_prompt = wire_format(form, PROBE_SCHEMA, "probe")
        msgs = with_schema_in_prompt(PROBE_MESSAGES, PROBE_SCHEMA) if in_prompt else list(PROBE_MESSAGES)
        body: dict[str, Any] = {"model": model, "messages": msgs, "max_tokens": PROBE_MAX_TOKENS,
                                "temperature": 0}  # fmt: skip
        if rf is not None:
            body["response_format"] = rf
        try:
            await _chat(api_base, body, api_key, timeout_s)
        except TransportError as e:
            if is_malformed(e) and e.status_code not in (401, 403, 404):
                refused[form] = secrets.redact(str(e))  # kept on disk: no key echo
                continue
            raise
        return form, refused
    raise TransportError(
        f"{api_base} refused every request form ({'; '.join(f'{f}: {w[:200]}' for f, w in refused.items())})",
        400,
    )


def probe_text(tokens: int) -> str:
    """English prose of about ``tokens`` tokens by the project's counter (the preview's), from the
    project's judge prompt (the kind of text the run sends)."""
    from ..paths import prompts_dir

    try:
        unit = (prompts_dir() / "judge_pacejudge.txt").read_text(encoding="utf-8")
    except Exception:  # noqa: BLE001 - any prose does
        unit = "The shopper asked for a vegan leather wallet under forty dollars with RFID blocking. " * 20
    per = max(1, text_tokens(unit))
    return (unit + "\n") * max(1, math.ceil(tokens / per))


def _numbers(message: str) -> tuple[int | None, int | None]:
    """(window, requested prompt tokens) named in a context refusal."""
    window = requested = None
    for rx in _WINDOW:
        m = rx.search(message)
        if m:
            window = int(m.group(1))
            break
    for rx in _REQUESTED:
        m = rx.search(message)
        if m:
            requested = int(m.group(m.lastindex or 1))
            break
    return window, requested


async def probe_context(
    api_base: str, model: str, tokens: int, *, api_key: str | None = None, timeout_s: float = 120.0
) -> dict[str, Any]:
    """Send a prompt of about ``tokens`` tokens (the project's count) with ``max_tokens: 1``.

    Returns ``{"accepted": bool, "window": int | None, "server_tokens": int | None, "estimate": int,
    "message": str}``: ``server_tokens`` is the prompt's length in the server's tokens (from the
    answer's usage, or from the refusal), ``estimate`` the project's count of the same prompt."""
    msgs = [{"role": "user", "content": probe_text(tokens) + "\nReply with the word OK."}]
    estimate = count_tokens(msgs)
    body = {"model": model, "messages": msgs, "max_tokens": 1, "temperature": 0}
    try:
        data = await _chat(api_base, body, api_key, timeout_s)
    except TransportError as e:
        if e.status_code not in (400, 413, 422) and not is_malformed(e):
            raise
        window, requested = _numbers(str(e))
        return {"accepted": False, "window": window, "server_tokens": requested, "estimate": estimate,
                "message": str(e)}  # fmt: skip
    used = (data.get("usage") or {}).get("prompt_tokens")
    used = int(used) if isinstance(used, int | float) and used > 0 else None
    return {"accepted": True, "window": None, "server_tokens": used, "estimate": estimate, "message": ""}


async def negotiate(
    api_base: str, model: str, *, api_key: str | None = None, need_tokens: int | None = None,
    timeout_s: float = 30.0, probe_timeout_s: float = 120.0, forms: tuple[str, ...] = FORMS,
) -> ServerCaps:  # fmt: skip
    """Ask the server at ``api_base`` what it accepts for ``model`` (the id in requests).

    ``need_tokens``: the largest prompt the run plans, by the project's count (the preview's); when
    the metadata gives no window, the window is probed with a prompt twice that size. Raises the
    server's error (:class:`.transport.TransportError`) when it cannot be asked at all."""
    caps = ServerCaps(api_base=api_base, model=model, checked=time.time())
    try:
        caps.models, caps.context, caps.context_source = await _models(
            api_base, model, api_key, min(timeout_s, 15.0)
        )
    except (APIConnectionError, Timeout):
        raise
    except TransportError as e:
        if e.status_code in (401, 403):
            raise
        caps.models = []
    if caps.context is None:
        n = await _props_context(api_base, api_key, min(timeout_s, 10.0))
        if n is not None:
            caps.context, caps.context_source = n, "/props n_ctx"
    caps.form, caps.refused = await negotiate_form(
        api_base, model, api_key=api_key, timeout_s=timeout_s, forms=forms
    )
    if need_tokens and caps.context is None:
        await _probe_into(caps, need_tokens, api_key, probe_timeout_s)
    return caps


async def _probe_into(caps: ServerCaps, need_tokens: int, api_key: str | None, timeout_s: float) -> None:
    """Fill ``caps``' window from probes: twice ``need_tokens`` first; when the refusal names no
    window, ``need_tokens`` itself."""
    for size in (2 * need_tokens, need_tokens):
        try:
            r = await probe_context(caps.api_base, caps.model, size, api_key=api_key, timeout_s=timeout_s)
        except TransportError as e:
            caps.context_source = f"probe failed: {str(e)[:200]}"
            return
        if r["server_tokens"] and r["estimate"]:
            caps.token_ratio = round(r["server_tokens"] / r["estimate"], 3)
        if r["accepted"]:
            n = r["server_tokens"] or r["estimate"]
            if r["server_tokens"] and r["server_tokens"] < 0.5 * r["estimate"]:  # cut to fit, silently
                caps.context, caps.context_source = (
                    n,
                    f"probe: the server cut a {r['estimate']:,}-token prompt",
                )
            else:
                caps.context_at_least, caps.context_source = n, f"probe: a {n:,}-token prompt was accepted"
            return
        if r["window"]:
            caps.context, caps.context_source = r["window"], "probe: the server's refusal names it"
            return
        caps.context_refused = r["estimate"]
        caps.context_source = (
            f"probe: a prompt of about {r['estimate']:,} tokens was refused: {r['message'][:200]}"
        )


def needed_window(prompt_tokens: int, output_tokens: int, ratio: float | None) -> int:
    """Server tokens a call needs: the prompt (the project's count × the measured ratio, else ×
    :data:`DEFAULT_RATIO`) plus its output."""
    r = ratio if ratio and 0.5 <= ratio <= 3.0 else DEFAULT_RATIO
    return math.ceil(prompt_tokens * r * 1.03) + int(output_tokens)


DEFAULT_RATIO = 1.35
"""Server tokens per token of the project's estimate when no probe measured it: litellm's gpt-4o
encoding counts a notebook-20 judge prompt at ~3,490 tokens where SmolLM2's tokenizer counts 4,568
(issue 25: +31 %); small open models' tokenizers are the less efficient ones, so 1.35 errs on the
side of stopping."""
