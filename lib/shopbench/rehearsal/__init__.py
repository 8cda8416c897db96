"""Rehearsals: the real provider code paths against a local wire-compatible server (issue 14 §3).

:class:`~shopbench.rehearsal.server.ProviderServer` speaks OpenAI Chat Completions, Anthropic
Messages and both batch APIs on 127.0.0.1. :func:`provider_env` is the environment a rehearsal's
notebooks run with: every provider's base URL pointed at the server and a dummy key per provider
(set only for the child processes of a rehearsal, never in a profile or an output). :func:`serving`
starts the server, applies that environment to this process (the notebook kernels inherit it) and
restores both at exit.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from ..environ import scoped_environ
from .server import ProviderServer, sample_from_schema

DUMMY_KEY = "sk-rehearsal-not-a-key"
"""The key every provider gets in a rehearsal: the local server accepts any key."""


def provider_env(base_url: str) -> dict[str, str]:
    """Environment that sends litellm's ``openai/``, ``anthropic/``, ``fireworks_ai/`` and
    ``hosted_vllm/`` paths (and their batch/file calls) to ``base_url`` (``http://127.0.0.1:<port>``)."""
    v1 = base_url.rstrip("/") + "/v1"
    return {
        "OPENAI_API_BASE": v1,
        "OPENAI_BASE_URL": v1,
        "OPENAI_API_KEY": DUMMY_KEY,
        "ANTHROPIC_API_BASE": base_url.rstrip("/"),
        "ANTHROPIC_BASE_URL": base_url.rstrip("/"),
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "FIREWORKS_API_BASE": v1,
        "FIREWORKS_AI_API_BASE": v1,
        "FIREWORKS_API_KEY": DUMMY_KEY,
        "FIREWORKS_AI_API_KEY": DUMMY_KEY,
        "HOSTED_VLLM_API_BASE": v1,
        "HOSTED_VLLM_API_KEY": DUMMY_KEY,
        "SHOPBENCH_REHEARSAL_SERVER": base_url.rstrip("/"),
    }


@contextmanager
def pointed_at(base_url: str) -> Iterator[None]:
    """:func:`provider_env` applied to this process (and its children) for the duration; the previous
    environment is restored at exit. The preview of a rehearsal uses it with no server: it makes no
    call, and every model is callable once the server runs."""
    with scoped_environ(provider_env(base_url)):
        yield


@contextmanager
def serving(**server_kw) -> Iterator[ProviderServer]:
    """Start a :class:`ProviderServer` and point every provider at it (this process and its children)
    for the duration; the previous environment is restored and the server stopped at exit."""
    srv = ProviderServer(**server_kw)
    srv.start()
    try:
        with pointed_at(srv.url):
            yield srv
    finally:
        srv.stop()


_own: list = []


def ensure_serving(server_kw: dict) -> str:
    """The active rehearsal server's URL; when none is active (a notebook opened on its own), start
    one for the rest of this process."""
    url = active()
    if url:
        return url
    import atexit

    cm = serving(**server_kw)
    srv = cm.__enter__()
    _own.append(cm)
    atexit.register(cm.__exit__, None, None, None)
    return srv.url


def active() -> str | None:
    """The rehearsal server's base URL when this process runs inside a rehearsal, else None."""
    return os.environ.get("SHOPBENCH_REHEARSAL_SERVER") or None


__all__ = [
    "DUMMY_KEY",
    "ProviderServer",
    "active",
    "ensure_serving",
    "pointed_at",
    "provider_env",
    "sample_from_schema",
    "serving",
]
