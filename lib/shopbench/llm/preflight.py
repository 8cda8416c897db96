"""Preflight checks: every model a run will test answers, in a form it accepts, with room for the
prompts (issue 25 item 2).

Before the first notebook runs, :func:`shopbench.preflight.preflight` (the profile's plan: which
backbones, the largest prompt each is sent; issue 27 keeps it above ``llm``) hands the subjects under
test to :func:`check_subjects`, which makes one tiny call per subject -- each backbone the planned
notebooks use -- bypassing the response cache, and stops the run within seconds
with ONE message (model, server, what failed, the fix) when a server cannot be reached, refuses the
key, refuses every structured-output form, or has a context window smaller than the largest planned
prompt. A failed check is a :class:`~shopbench.errors.UserError` (the pipeline exits 2, no traceback).

What is checked, by kind of backbone:

- an OpenAI-compatible endpoint the user runs (``openai/`` or ``hosted_vllm/`` with ``api_base``):
  :func:`.negotiate.negotiate` -- ``GET /models`` (its context window where the metadata gives one),
  one tiny call per structured-output form until one is accepted, and, when the window is unknown, a
  context probe twice the largest planned prompt (module docstring of :mod:`.negotiate`). The result is
  saved in ``<cache_dir>/servers.json``, so the notebooks' gateway sends the form found here.
- an API provider (``anthropic/...``, ``openai/...`` without ``api_base``) whose key is set: one
  tiny litellm call (``max_tokens: 1``); a missing key is the preview's business (the notebooks skip
  such a backbone), a refused one stops the run.
- a model the project runs (``llamacpp/...`` in-process, ``server: llamacpp``): no network call (the
  project starts and controls it); its context (the registry's ``n_ctx``, capped at ``MAX_N_CTX``) is
  compared with the planned prompts when the preview was built anyway (a gated run), since building it
  only for this check would add ~10 s to every offline run.
- embedded ``local/`` backends: nothing.

The largest planned prompt is the preview's (:mod:`shopbench.preview`, ``Line.max_input_tokens``: the
largest prompt of the sample it renders per notebook and backbone), in the project's token count
(litellm's gpt-4o encoding). A server's tokenizer counts differently: the context probe measures the
ratio on the server (its refusal or its usage names the probe's length in its own tokens); without a
probe the need is the estimate × :data:`.negotiate.DEFAULT_RATIO` (1.35, conservative), plus the
planned output tokens.

Callable from Python (:func:`check_subjects` with :class:`Subject` s built by hand, as the task
runner does) as well as through the pipeline.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from .backends import Backbone, api_key_for
from .negotiate import (
    DEFAULT_RATIO,
    FORM_LABELS,
    CapsStore,
    ServerCaps,
    needed_window,
    negotiate,
)
from .transport import APIConnectionError, Timeout, TransportError, run_sync

LEAN_PROVIDERS = ("openai", "hosted_vllm")
TINY_TIMEOUT_S = 30.0  # one tiny call; a cold server that needs longer is not ready for a run


class PreflightError(UserError):
    """A subject under test cannot serve the run (:func:`check_subjects`)."""


@dataclass
class Subject:
    """One backbone a planned notebook uses, with the largest prompt it will be sent."""

    backbone: Backbone
    notebooks: list[str] = field(default_factory=list)
    prompt_tokens: int = 0  # the largest planned prompt, by the project's count (the preview's)
    output_tokens: int = 0  # the planned output per call (the preview's mean; max_tokens caps it)


@dataclass
class Finding:
    """The preflight's verdict on one subject."""

    backbone: str
    model: str
    server: str
    ok: bool
    what: str
    fix: str = ""
    caps: ServerCaps | None = None

    def line(self) -> str:
        """One line (a server's words redacted: a refused key can be echoed in them)."""
        from .. import secrets

        return secrets.redact(
            f"{self.backbone} ({self.model}) at {self.server}: {'ok, ' if self.ok else ''}{self.what}"
        )


# ---- which subjects ----------------------------------------------------------------------------------
def _is_server(b: Backbone) -> bool:
    """An OpenAI-compatible endpoint the user runs (the project neither starts nor controls it)."""
    return b.server is None and bool(b.api_base or b.fleet) and b.provider in LEAN_PROVIDERS


def _is_api(b: Backbone) -> bool:
    return b.server is None and not b.api_base and b.provider not in ("local", "llamacpp")


def _is_project_run(b: Backbone) -> bool:
    return b.server == "llamacpp" or (b.server is None and b.provider == "llamacpp")


def needs_network(backbones: Iterable[Backbone]) -> bool:
    """Whether any of ``backbones`` gets a network preflight (a user's server or an API model)."""
    return any(_is_server(b) or _is_api(b) for b in backbones)


# ---- the checks ----------------------------------------------------------------------------------------
def _round_up(n: int) -> int:
    return int(math.ceil(n / 1000.0) * 1000)


def _context_fix(b: Backbone, need: int) -> str:
    n = _round_up(need)
    return (
        f"restart the server with --n_ctx {n} or more (llama_cpp.server; llama-server: -c {n}; "
        f"vLLM: --max-model-len {n}), or shrink the prompts the run sends"
    )


def _server_key(b: Backbone) -> str | None:
    key = api_key_for(b.model, b.api_base)
    if key is None:
        env = {"openai": "OPENAI_API_KEY", "hosted_vllm": "HOSTED_VLLM_API_KEY"}.get(b.provider)
        key = os.environ.get(env) if env else None
    return key


async def _check_server(s: Subject, base: str, timeout_s: float, probe_timeout_s: float) -> Finding:
    b = s.backbone
    model = b.model.split("/", 1)[1]
    f = Finding(b.name, b.model, base, False, "")
    env = {"openai": "OPENAI_API_KEY", "hosted_vllm": "HOSTED_VLLM_API_KEY"}[b.provider]
    try:
        caps = await negotiate(base, model, api_key=_server_key(b), need_tokens=s.prompt_tokens or None,
                               timeout_s=timeout_s, probe_timeout_s=probe_timeout_s)  # fmt: skip
    except (APIConnectionError, Timeout) as e:
        f.what = f"the server cannot be reached ({e})"
        f.fix = ("start the server (e.g. python -m llama_cpp.server --model <file.gguf> --port <port> "
                 "--n_ctx <tokens>), or correct this backbone's api_base in the profile")  # fmt: skip
        return f
    except TransportError as e:
        code = e.status_code
        if code in (401, 403):
            f.what = f"the server refused the key (HTTP {code})"
            f.fix = (
                f"set {env} in the environment to a key this server accepts (keys never go in the profile)"
            )
        elif code == 404:
            f.what = f"the server does not serve model {model!r} ({e})"
            f.fix = "set this backbone's model to openai/<the id the server lists at GET /v1/models>"
        elif "refused every request form" in str(e):
            f.what = f"the server refuses every structured-output form, even plain text ({e})"
            f.fix = "check the server's log; the run's output contracts need one of: " + ", ".join(
                FORM_LABELS
            )
        else:
            f.what = f"the server answered a tiny call with an error ({e})"
            f.fix = "check the server's log and restart it"
        return f
    f.caps = caps
    need = needed_window(s.prompt_tokens, s.output_tokens, caps.token_ratio)
    where = ", ".join(s.notebooks) or "the run"
    est = (f"the largest planned prompt ({where}) needs about {need:,} tokens: {s.prompt_tokens:,} by the "
           f"project's count × {caps.token_ratio or DEFAULT_RATIO:g} for this server's tokenizer"
           f"{'' if caps.token_ratio else ' (not measured)'} + {s.output_tokens:,} output")  # fmt: skip
    if s.prompt_tokens and caps.context is not None and caps.context < need:
        f.what = f"context window of {caps.context:,} tokens ({caps.context_source}) is too small; {est}"
        f.fix = _context_fix(b, need)
        return f
    if s.prompt_tokens and caps.context is None and caps.context_at_least is None and caps.context_refused:
        f.what = f"the server refused a prompt of about {caps.context_refused:,} tokens ({caps.context_source}); {est}"
        f.fix = _context_fix(b, need)
        return f
    f.ok = True
    f.what = caps.describe().split(": ", 1)[1] + (f"; needs about {need:,}" if s.prompt_tokens else "")
    return f


async def _check_api(s: Subject, timeout_s: float) -> Finding:
    from .providers import get_litellm

    b = s.backbone
    f = Finding(b.name, b.model, b.provider, False, "")
    litellm = get_litellm()
    try:
        await asyncio.wait_for(
            litellm.acompletion(model=b.model, messages=[{"role": "user", "content": "Reply OK."}],
                                max_tokens=1, timeout=timeout_s, num_retries=0),
            timeout=timeout_s,
        )  # fmt: skip
    except Exception as e:  # noqa: BLE001 - classified for the message
        code = getattr(e, "status_code", None)
        msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        if code in (401, 403):
            f.what, f.fix = (
                f"the provider refused the key (HTTP {code}: {msg})",
                "set a valid key in the environment",
            )
        elif isinstance(e, litellm.APIConnectionError | asyncio.TimeoutError | TimeoutError):
            f.what, f.fix = (
                f"the provider cannot be reached ({msg})",
                "check the network, or drop this backbone",
            )
        elif code == 400 and "max_tokens" in msg:  # a model that wants more room: the key works
            f.ok, f.what = True, "answered (max_tokens 1 refused; the key works)"
        else:
            f.what, f.fix = f"a tiny call failed ({type(e).__name__}: {msg})", "check the model name and key"
        return f
    f.ok = True
    f.what = "answered a tiny call"
    try:
        window = (litellm.get_model_info(b.model) or {}).get("max_input_tokens")
    except Exception:  # noqa: BLE001 - unknown to litellm's map: unchecked
        window = None
    if isinstance(window, int) and s.prompt_tokens and window < s.prompt_tokens:
        f.ok = False
        f.what = f"its context window is {window:,} tokens; the largest planned prompt is about {s.prompt_tokens:,}"
        f.fix = "choose a model with a larger context, or shrink the prompts"
    return f


def _check_project_run(s: Subject) -> Finding:
    from .llamacpp.registry import MAX_N_CTX, MODELS

    b = s.backbone
    name = b.model_name or b.model.split("/", 1)[-1]
    spec = MODELS.get(name)
    where = "this machine (the project starts it)"
    if spec is None:
        return Finding(b.name, b.model, where, True, "not in the model registry: context unchecked")
    window = min(spec.n_ctx, MAX_N_CTX)
    need = needed_window(s.prompt_tokens, s.output_tokens, None)
    if s.prompt_tokens and window < need:
        return Finding(b.name, b.model, where, False,
                       f"the project runs it with a {window:,}-token context; the largest planned prompt "
                       f"({', '.join(s.notebooks)}) needs about {need:,}",
                       "shrink the prompts, or choose a model with a larger n_ctx")  # fmt: skip
    return Finding(b.name, b.model, where, True, f"context {window:,} tokens ≥ about {need:,} needed")


async def _check_all(subjects: Sequence[Subject], timeout_s: float, probe_timeout_s: float,
                     project_run: bool) -> list[Finding]:  # fmt: skip
    jobs: list[Any] = []
    out: list[Finding] = []
    for s in subjects:
        b = s.backbone
        if _is_server(b):
            for base in b.fleet or [str(b.api_base)]:
                jobs.append(_check_server(s, str(base), timeout_s, probe_timeout_s))
        elif _is_api(b):
            if b.availability()[0]:
                jobs.append(_check_api(s, timeout_s))
        elif _is_project_run(b) and project_run:
            out.append(_check_project_run(s))
    return out + list(await asyncio.gather(*jobs))


def check_subjects(
    subjects: Sequence[Subject], *, cache_dir: str | Path | None = None, timeout_s: float = TINY_TIMEOUT_S,
    probe_timeout_s: float = 120.0, project_run: bool = True, raise_on_failure: bool = True,
    log: Any = print,
) -> list[Finding]:  # fmt: skip
    """Check ``subjects`` (bypassing the response cache), save each server's negotiated form in
    ``<cache_dir>/servers.json``, print one line per subject, and raise a :class:`PreflightError`
    naming every failure (model, server, what failed, the fix) unless ``raise_on_failure`` is False."""
    t0 = time.perf_counter()
    findings = run_sync(_check_all(subjects, timeout_s, probe_timeout_s, project_run))
    if cache_dir is not None:
        store = CapsStore(cache_dir)
        for f in findings:
            if f.caps is not None:
                store.put(f.caps)
    for f in findings:  # a failure is told once, in the error below
        if log is not None and (f.ok or not raise_on_failure):
            log(f"[preflight] {f.line()}")
    bad = [f for f in findings if not f.ok]
    if bad and raise_on_failure:
        fixes = list(dict.fromkeys(f.fix for f in bad if f.fix))
        raise PreflightError(
            f"preflight failed after {time.perf_counter() - t0:.1f} s: " + "; ".join(f.line() for f in bad),
            fix="; ".join(fixes) or None,
        )
    return findings
