"""litellm with the project's embedded backends registered as custom providers: ``local/<name>``
(deterministic Python backends, :mod:`.local`) and ``llamacpp/<model>`` (packaged GGUF models
in-process, :mod:`.llamacpp.runtime`).

Issue 27: the registration lives above :mod:`._litellm` (which only imports and configures litellm)
and above the backends (which subclass litellm's ``CustomLLM`` through it), so the imports point down.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_registered = False


def get_litellm():
    """litellm with the project's embedded providers registered (idempotent)."""
    global _registered
    from ._litellm import litellm  # on first need: importing this module stays light

    if not _registered:
        with _lock:
            if not _registered:
                from .llamacpp.runtime import LlamaCppHandler
                from .local import LocalHandler

                providers = [
                    {"provider": "local", "custom_handler": LocalHandler()},
                    {"provider": "llamacpp", "custom_handler": LlamaCppHandler()},
                ]
                names = {p["provider"] for p in providers}
                litellm.custom_provider_map = [
                    p for p in (litellm.custom_provider_map or []) if p["provider"] not in names
                ] + providers
                from litellm.utils import custom_llm_setup

                custom_llm_setup()
                _registered = True
    return litellm


def preload(model: str) -> float:
    """Load ``llamacpp/<name>`` (or ``<name>``) in the in-process provider the gateway uses; the load
    time in seconds (0.0 if it was loaded already). Notebook 00 reports it apart from call latency."""
    from .llamacpp.runtime import LIVE_HANDLERS

    get_litellm()  # registers the provider (and so its handler)
    handlers = list(LIVE_HANDLERS)
    if not handlers:
        raise RuntimeError("the llamacpp provider is not registered")
    return handlers[0].preload(model.split("/", 1)[-1])
