"""Backbones: the models a profile names, and whether each can be called here and now.

A profile lists backbones as litellm model names, or mappings for more settings::

    backbones:
      - local/checks                                 # embedded deterministic backend
      - llamacpp/smollm2-135m-instruct               # packaged GGUF model, in-process
      - {name: smollm2-server, model: openai/smollm2, server: llamacpp,
         model_name: smollm2-135m-instruct}          # project-started llama.cpp server on 127.0.0.1
      - {name: vllm, model: hosted_vllm/Qwen2.5-7B, api_base: "http://127.0.0.1:8000/v1"}
      - {name: vllm-fleet, model: hosted_vllm/Qwen2.5-7B, concurrency: 32,  # per server
         api_base: ["http://gpu-a:8000/v1", "http://gpu-b:8000/v1"]}  # balanced, failover
      - {name: smol-fleet, model: openai/smollm2, server: llamacpp, replicas: 2,
         model_name: smollm2-135m-instruct}          # two project-started servers as one fleet
      - anthropic/claude-sonnet-4-5                  # needs ANTHROPIC_API_KEY in the environment

Keys are read from the environment by litellm; a profile never holds one.
"""

from __future__ import annotations

import atexit
import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

EMBEDDED = ("local", "llamacpp")
NO_KEY_NEEDED = "sk-no-key-required"  # placeholder for keyless local servers (llama.cpp, vLLM, Ollama)


class UnknownModelError(ValueError):
    """A model name no configured backend serves."""


class MissingKeyError(RuntimeError):
    """A provider's key is not in the environment."""


@dataclass
class Backbone:
    """One model a sweep can call: a litellm name plus optional api base and local-server spec."""

    name: str
    model: str
    api_base: str | None = None
    server: str | None = None  # "llamacpp": the project starts python -m llama_cpp.server
    model_name: str | None = None  # registry model the server loads
    concurrency: int | None = None  # calls at once (for a fleet: per server)
    params: dict[str, Any] = field(default_factory=dict)  # default generation settings
    # every server of this model (a profile's api_base list); the gateway balances over `fleet`
    api_bases: list[str] = field(default_factory=list)
    substitute_for: str | None = None  # the paper's model this one stands in for (profiles.rosters)
    fleet: list[str] = field(default_factory=list)  # several servers for this model (api_base list)
    replicas: int | None = None  # server: llamacpp: how many servers the project starts as one fleet

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0] if "/" in self.model else "openai"

    @property
    def embedded(self) -> bool:
        return self.provider in EMBEDDED and self.server is None

    def availability(self) -> tuple[bool, str]:
        """(available, reason): checks model names, installed models and keys without calling anything."""
        try:
            check_model(self.model, self.api_base, server=self.server, model_name=self.model_name)
        except Exception as e:  # the message says what to do
            return False, str(e)
        return True, "ok"

    def ensure_started(self) -> None:
        """Start the project's local server for this backbone (once per process) and set ``api_base``."""
        if self.server and not self.api_base:
            bases = [
                _start_server(self.server, self.model_name or self.name, self.model.split("/", 1)[-1], i)
                for i in range(max(1, self.replicas or 1))
            ]
            self.api_base = bases[0]
            self.fleet = bases if len(bases) > 1 else []

    def to_dict(self) -> dict:
        d = {"name": self.name, "model": self.model}
        for k in ("api_base", "server", "model_name", "concurrency", "substitute_for", "replicas"):
            if getattr(self, k):
                d[k] = getattr(self, k)
        if len(self.fleet) > 1:
            d["api_base"] = list(self.fleet)
        return d


def parse_backbones(entries: list, where: str = "backbones") -> list[Backbone]:
    out: list[Backbone] = []
    for i, e in enumerate(entries or []):
        if isinstance(e, str):
            out.append(Backbone(name=e, model=e))
        elif isinstance(e, dict) and "model" in e:
            known = {
                "name",
                "model",
                "api_base",
                "server",
                "model_name",
                "concurrency",
                "params",
                "replicas",
                "substitute_for",
            }
            extra = set(e) - known
            if extra:
                raise ValueError(f"{where}[{i}]: unknown keys {sorted(extra)}; allowed: {sorted(known)}")
            base = e.get("api_base")
            bases = (
                [str(b) for b in base] if isinstance(base, list | tuple) else ([str(base)] if base else [])
            )
            fleet: list[str] = []
            if isinstance(base, list | tuple):  # a fleet: several servers for one model
                fleet = [str(b) for b in base]
                if not fleet:
                    raise ValueError(f"{where}[{i}].api_base: an empty list; give one address or several")
                base = fleet[0]
                fleet = fleet if len(fleet) > 1 else []
            if e.get("replicas") and e.get("server") is None:
                raise ValueError(
                    f"{where}[{i}].replicas: only for a project-started server (server: llamacpp); "
                    "for servers you run, list their addresses in api_base"
                )
            out.append(
                Backbone(
                    name=str(e.get("name") or e["model"]),
                    model=str(e["model"]),
                    api_base=base,
                    api_bases=bases,
                    substitute_for=e.get("substitute_for"),
                    server=e.get("server"),
                    model_name=e.get("model_name"),
                    concurrency=e.get("concurrency"),
                    params=dict(e.get("params") or {}),
                    fleet=fleet,
                    replicas=e.get("replicas"),
                )
            )
        else:
            raise ValueError(
                f"{where}[{i}]: a backbone is a litellm model name or a mapping with 'model', got {e!r}"
            )
    names = [b.name for b in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"{where}: duplicate backbone names {sorted(dup)}; give each a distinct 'name'")
    return out


def check_model(
    model: str,
    api_base: str | None = None,
    *,
    server: str | None = None,
    model_name: str | None = None,
    configured: list[str] | None = None,
) -> None:
    """Raise a clear error when ``model`` cannot be called here: unknown name, model not
    installed (says which command installs it) or missing key (names the environment variable)."""
    from .llamacpp.registry import ModelNotInstalled, model_path
    from .llamacpp.runtime import llama_cpp_available
    from .local import local_backends

    provider, _, rest = model.partition("/")
    if server == "llamacpp":
        if not llama_cpp_available():
            raise ModelNotInstalled("llama-cpp-python is not installed; run `make local-llm`")
        model_path(model_name or rest)
        return
    if provider == "local":
        if rest not in local_backends():
            raise UnknownModelError(_unknown(model, configured))
        return
    if provider == "llamacpp":
        if not llama_cpp_available():
            raise ModelNotInstalled(f"{model}: llama-cpp-python is not installed; run `make local-llm`")
        model_path(rest)
        return
    from ._litellm import litellm  # only for a provider's model: embedded ones need no litellm (issue 26)

    try:
        litellm.get_llm_provider(model=model)
    except Exception:
        raise UnknownModelError(_unknown(model, configured)) from None
    if api_base:
        return
    missing = litellm.validate_environment(model=model).get("missing_keys") or []
    if missing:
        raise MissingKeyError(
            f"{model}: set {' and '.join(missing)} in the environment (keys never go in parameter files), "
            "or drop this backbone from the profile"
        )


def _unknown(model: str, configured: list[str] | None) -> str:
    from .llamacpp.registry import MODELS
    from .local import local_backends

    embedded = [f"local/{n}" for n in sorted(local_backends())] + [f"llamacpp/{n}" for n in sorted(MODELS)]
    msg = f"Unknown model '{model}'. Embedded backends: {', '.join(embedded)}."
    if configured:
        msg += f" Configured in this profile: {', '.join(configured)}."
    return (
        msg + " API models use litellm names such as anthropic/..., openai/..., hosted_vllm/..., ollama/..."
    )


def api_key_for(model: str, api_base: str | None) -> str | None:
    """Keys stay with litellm's environment lookup; only keyless local servers get a placeholder."""
    if api_base and model.split("/", 1)[0] in ("openai", "hosted_vllm", "ollama"):
        env = {"openai": "OPENAI_API_KEY", "hosted_vllm": "HOSTED_VLLM_API_KEY"}.get(model.split("/", 1)[0])
        if not (env and os.environ.get(env)):
            return NO_KEY_NEEDED
    return None


_servers = ExitStack()
_started: dict[str, Any] = {}  # "kind:model:alias[:replica]" -> llamacpp.Server
atexit.register(_servers.close)


def _start_server(kind: str, model_name: str, alias: str, replica: int = 0) -> str:
    if kind != "llamacpp":
        raise ValueError(f"unknown server kind {kind!r}; the project starts 'llamacpp' servers")
    key = f"{kind}:{model_name}:{alias}" + (f":{replica}" if replica else "")
    if key not in _started:
        from .llamacpp.server import serve

        _started[key] = _servers.enter_context(serve(model_name, alias=alias))
    return _started[key].api_base


def started_servers() -> dict[str, Any]:
    """The servers this process started for backbones (``llamacpp.Server`` by key), e.g. to stop one."""
    return dict(_started)
