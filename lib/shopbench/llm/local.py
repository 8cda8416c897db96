"""Embedded deterministic backends served as the litellm custom provider ``local/<name>``.

A local backend is a plain Python function ``fn(messages, params) -> str`` registered with
:func:`register_local`. Sweeps treat it like any other backbone (cache, log, contract parsing), so
a deterministic reference judge is compared with LLM judges on equal terms. ``params`` holds the
generation settings and ``response_format`` of the call.

Built in:

- ``local/echo``: returns the last user message; a transport check, not a model.
- ``local/schema-sampler``: a seeded random document that satisfies the call's JSON schema
  (uniform over enums, booleans, and numeric ranges); the "random" baseline for any contract.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import registry

if TYPE_CHECKING:
    import litellm

LocalFn = Callable[[list[dict], dict], str]


@dataclass(frozen=True)
class LocalBackend:
    name: str
    fn: LocalFn
    description: str


def register_local(name: str, fn: LocalFn, description: str) -> None:
    """Register ``local/<name>`` (a ``backend`` in the one registry, :mod:`shopbench.core.registry`);
    later modules add their deterministic judges this way, and registering a name again replaces it."""
    registry.register("backend", name, LocalBackend(name, fn, description), factory=fn, replace=True,
                      summary=description)  # fmt: skip


@functools.cache
def code_version(name: str) -> str:
    """A hash of the source of the module that implements ``local/<name>``: part of the cache key, so
    editing a deterministic judge invalidates its cached answers (a model's weights are fixed; code is not)."""
    b = local_backends().get(name)
    if b is None:
        return ""
    try:
        src = inspect.getsource(sys.modules[b.fn.__module__])
    except (OSError, TypeError, KeyError):
        src = getattr(b.fn, "__qualname__", name)
    return hashlib.sha256(src.encode()).hexdigest()[:16]


def local_backends() -> dict[str, LocalBackend]:
    _load_plugins()
    return {e.name: e.obj for e in registry.entries("backend")}


_plugins_loaded = False


def _load_plugins() -> None:
    """Import modules that register local backends (entry point ``shopbench.local_backends``), once per
    process: scanning the installed distributions' entry points takes milliseconds, and the gateway
    looks up a backend on every call."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group="shopbench.local_backends"):
        try:
            ep.load()
        except Exception:  # a broken plugin must not hide the others
            continue


def schema_of(params: dict) -> dict | None:
    rf = params.get("response_format") or {}
    if isinstance(rf, dict) and rf.get("type") == "json_schema":
        return (rf.get("json_schema") or {}).get("schema")
    return None


def _echo(messages: list[dict], params: dict) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    return ""


def sample_schema(schema: dict, rng: random.Random) -> Any:
    """A random instance of a (simple) JSON schema: objects, arrays, enums, numbers, strings, booleans."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    for comb in ("anyOf", "oneOf"):
        if comb in schema:
            return sample_schema(rng.choice(schema[comb]), rng)
    t = schema.get("type", "object")
    if isinstance(t, list):
        t = rng.choice([x for x in t if x != "null"] or ["null"])
    if t == "object":
        props = schema.get("properties", {})
        return {k: sample_schema(v, rng) for k, v in props.items()}
    if t == "array":
        n = rng.randint(schema.get("minItems", 0), max(schema.get("minItems", 0), schema.get("maxItems", 3)))
        return [sample_schema(schema.get("items", {"type": "string"}), rng) for _ in range(n)]
    if t in ("number", "integer"):
        lo = schema.get("minimum", 0)
        hi = schema.get("maximum", lo + 1 if t == "number" else lo + 10)
        return rng.randint(int(lo), int(hi)) if t == "integer" else round(rng.uniform(lo, hi), 4)
    if t == "boolean":
        return rng.random() < 0.5
    if t == "null":
        return None
    return "sample-" + "".join(rng.choice("abcdefghij") for _ in range(6))


def _schema_sampler(messages: list[dict], params: dict) -> str:
    schema = schema_of(params) or {"type": "string"}  # free text: a random token
    digest = hashlib.sha256(json.dumps([messages, params.get("seed", 0)], sort_keys=True).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    return json.dumps(sample_schema(schema, rng))


register_local("echo", _echo, "returns the last user message (transport check, not a model)")
register_local("schema-sampler", _schema_sampler, "seeded random document satisfying the call's JSON schema")


class LocalBackendError(RuntimeError):
    """A deterministic backend raised: not transient, so never retried (``status_code`` 400)."""

    status_code = 400


def run_local(name: str, messages: list[dict], params: dict) -> str:
    """The text ``local/<name>`` answers: the registered function called directly (the gateway's path,
    with no litellm request or response objects). Raises :class:`LocalBackendError` when it fails."""
    b = registry.get("backend", name) or local_backends().get(name)
    if b is None:
        raise LocalBackendError(
            f"Unknown local backend 'local/{name}'. Registered: "
            + ", ".join(f"local/{n}" for n in sorted(local_backends()))
        )
    try:
        content = b.fn(messages, params)
    except Exception as e:  # a deterministic backend's failure is not transient: no retries
        raise LocalBackendError(f"local/{name} failed: {type(e).__name__}: {e}") from e
    if not isinstance(content, str):
        raise LocalBackendError(f"local/{name} returned {type(content).__name__}, not str")
    return content


def _model_response(model: str, content: str, messages: list[dict]) -> litellm.ModelResponse:
    from ._litellm import litellm

    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
    completion_tokens = len(content.split())
    return litellm.ModelResponse(
        id=f"local-{hashlib.sha1(content.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}",
        created=int(time.time()),
        model=model,
        choices=[{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        usage={
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    )


class _LocalCore:
    """The ``local`` provider's methods; ``LocalHandler`` is this class mixed into ``litellm.CustomLLM``,
    built on first access (module ``__getattr__``) so that importing this module -- which the gateway's
    own ``local/`` path does -- does not import litellm (issue 26, Speed)."""

    def _run(self, model: str, messages: list, optional_params: dict) -> litellm.ModelResponse:
        from litellm.llms.custom_llm import CustomLLMError

        from ._litellm import litellm

        name = model.split("/", 1)[1] if model.startswith("local/") else model
        backends = local_backends()
        if name not in backends:
            raise litellm.BadRequestError(
                message=f"Unknown local backend 'local/{name}'. Registered: "
                + ", ".join(f"local/{n}" for n in sorted(backends)),
                model=model,
                llm_provider="local",
            )
        try:
            content = backends[name].fn(messages, dict(optional_params or {}))
        except Exception as e:  # a deterministic backend's failure is not transient: no retries
            raise CustomLLMError(
                status_code=400, message=f"local/{name} failed: {type(e).__name__}: {e}"
            ) from e
        return _model_response(f"local/{name}", content, messages)

    def completion(self, model, messages, *args, optional_params=None, **kwargs):  # noqa: D401
        return self._run(model, messages, optional_params or {})

    async def acompletion(self, model, messages, *args, optional_params=None, **kwargs):
        # deterministic backends are pure Python and fast: run them inline, off the loop only if slow
        return await asyncio.to_thread(self._run, model, messages, optional_params or {})


def _handler_class() -> type:
    cls = globals().get("_HANDLER_CLASS")
    if cls is None:
        from ._litellm import litellm

        class LocalHandler(_LocalCore, litellm.CustomLLM):
            """litellm custom provider ``local``: dispatches ``local/<name>`` to the registered function."""

        LocalHandler.__module__ = __name__
        globals()["_HANDLER_CLASS"] = cls = LocalHandler
    return cls


def __getattr__(name: str) -> Any:
    if name == "LocalHandler":
        return _handler_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
