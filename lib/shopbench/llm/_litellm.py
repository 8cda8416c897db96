"""The only place that imports litellm.

litellm fetches its model cost map from the network at import unless
``LITELLM_LOCAL_MODEL_COST_MAP`` is set; we set it (a user's own value wins). Embedded backends
are registered here as litellm custom providers: ``local/<name>`` (deterministic Python
backends) and ``llamacpp/<model>`` (packaged GGUF models in-process).
"""

from __future__ import annotations

import os
import threading

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")
# no network but the providers': litellm would fetch Anthropic's beta-header table on first use
os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")

import litellm  # noqa: E402

litellm.telemetry = False
litellm.suppress_debug_info = True
litellm.drop_params = True
litellm.num_retries = 0  # the gateway retries itself, with its own log of attempts

_lock = threading.Lock()
_registered = False


def get_litellm():
    """litellm with the project's embedded providers registered (idempotent)."""
    global _registered
    if not _registered:
        with _lock:
            if not _registered:
                from .llamacpp import LlamaCppHandler
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
