"""One model call and the text the gateway keeps of it (issue 27: below the gateway, so the batch
path, the anytime runner and the gateway share them without importing each other).

:class:`Call` is what to ask and of whom; its :attr:`Call.key` is the response-cache key.
:func:`clean_text` / :func:`clean_json` are a model's text and tool calls as the cache and the call
log store them: every secret redacted (:func:`redact`) and storable.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import secrets
from ..strictjson import storable
from .cache import cache_key, canonical_json
from .contract import response_format

GENERATION_KEYS = ("temperature", "max_tokens", "top_p", "seed", "stop", "n", "presence_penalty",
                   "frequency_penalty", "logprobs", "top_logprobs", "tool_choice", "reasoning_effort")  # fmt: skip


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
    # several servers for this model (a fleet): each attempt goes to one of them (see transport.Fleet);
    # ``api_base`` is the first, and the cache key uses ``cache_base`` ("fleet:<model>")
    fleet: tuple[str, ...] = ()

    @functools.cached_property
    def response_format(self) -> dict | None:
        return response_format(self.schema, self.schema_name) if self.schema is not None else None

    @functools.cached_property
    def messages_json(self) -> str:
        """``canonical_json`` of the messages, once: the cache key and the prompt hash both hash it."""
        return canonical_json(list(self.messages))

    @functools.cached_property
    def prompt_hash(self) -> str:
        return hashlib.sha256(self.messages_json.encode()).hexdigest()[:16]

    @property
    def key(self) -> str:
        """The cache key, computed once per call (per code version for a ``local/`` backend)."""
        memo = self.__dict__.get("_key_memo")
        version = None
        if self.model.startswith("local/"):  # deterministic code can change; its version keys the cache
            local = sys.modules.get(f"{__package__}.local")
            if local is None:
                from . import local
            version = local.code_version(self.model.split("/", 1)[1])
        if memo is not None and memo[0] == version:
            return memo[1]
        params = self.params if version is None else {**self.params, "_local_code_version": version}
        key = cache_key(
            model=self.model,
            api_base=self.cache_base or self.api_base,
            messages=self.messages,
            params=params,
            tools=list(self.tools) if self.tools else None,
            response_format=self.response_format,
            repeat=self.repeat,
            messages_json=self.messages_json,
        )
        self.__dict__["_key_memo"] = (version, key)  # frozen dataclass: memo beside the fields
        return key

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0] if "/" in self.model else "openai"


def redact(text: str | None, values: Sequence[str] | None = None) -> str | None:
    """Text bound for disk with every secret environment value, partial echo of one
    (case-insensitive) and key-shaped token removed (:func:`shopbench.secrets.redact`). ``values``:
    the secret values to remove (a run computes :func:`shopbench.secrets.secret_values` once);
    default: read from the environment now."""
    return secrets.redact(text, values) if isinstance(text, str) else text


def clean_text(text: Any, values: Sequence[str] | None = None) -> str | None:
    """A model's text as the gateway keeps it: redacted and storable (a lone surrogate becomes its
    ``\\udXXX`` escape, so the cache, the call log and every table downstream can write it)."""
    if text is None:
        return None
    if not isinstance(text, str):  # content parts or another provider shape: kept as its JSON text
        text = json.dumps(text, ensure_ascii=False, default=str)
    return storable(redact(text, values))


def clean_json(obj: Any, values: Sequence[str] | None = None) -> Any:
    """``obj`` (tool calls) with every string redacted and storable."""
    if isinstance(obj, str):
        return storable(redact(obj, values))
    if isinstance(obj, dict):
        return {clean_json(k, values): clean_json(v, values) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean_json(v, values) for v in obj]
    if obj is None or isinstance(obj, bool | int | float):
        return obj
    return clean_json(str(obj), values)
