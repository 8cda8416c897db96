"""llama.cpp in this process (issue 27: ``llm/llamacpp`` split by concept): thread settings, importing
``llama_cpp``, and :class:`LlamaCppHandler`, the litellm custom provider serving ``llamacpp/<name>``
(registered by :func:`shopbench.llm.providers.get_litellm`).

**Thread settings.** Importing :mod:`shopbench.llm.llamacpp` sets ``OMP_WAIT_POLICY=PASSIVE`` (unless the
user set a policy) before ``llama_cpp`` and its OpenMP runtime load, and every ``llama_cpp.server``
started by :func:`.server.serve` gets it in its environment (:func:`wait_policy_env`): spinning waiters
cost 3-15x on 2 shared cores. ``N_THREADS`` = 1 and ``N_BATCH`` = 512 come from an interleaved SmolLM2
sweep (:func:`shopbench.benchmarks.local_llm.settings_sweep`, 2,048-token PACEJudge prompt, load average
2-4): prompt eval was the same with 1 or 2 threads (62-78 vs 60-71 tokens/s) and generation faster
with 1 (22-24 vs 9-20 tokens/s), because a second thread only helps when a core is free; n_batch 128
and 512 did not differ. On an idle machine set ``SHOPBENCH_LLAMACPP_THREADS=2`` (docs/DESIGN.md,
"Local LLM speed").

``llama_cpp`` is imported lazily: this module imports without it, and without importing litellm
(~4 s) until :class:`LlamaCppHandler` is first accessed, so the CLI stays fast.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib
import os
import subprocess
import sys
import threading
import time
import weakref
from typing import Any

from .registry import INSTALL_COMMAND, MAX_N_CTX, PROVIDER, ModelNotInstalled, model_path, model_spec

N_THREADS = 1  # measured on the 2 shared cores (see Thread settings); SHOPBENCH_LLAMACPP_THREADS overrides
N_BATCH = 512  # prompt tokens per llama_decode; SHOPBENCH_LLAMACPP_BATCH overrides (see Thread settings)
WAIT_POLICY = "PASSIVE"  # OMP_WAIT_POLICY unless the user set one (see Thread settings)


def default_threads() -> int:
    return int(os.environ.get("SHOPBENCH_LLAMACPP_THREADS") or N_THREADS)


def default_batch() -> int:
    return int(os.environ.get("SHOPBENCH_LLAMACPP_BATCH") or N_BATCH)


# ── Thread wait policy ───────────────────────────────────────────────────────


def wait_policy_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``env`` (default ``os.environ``) with ``OMP_WAIT_POLICY`` = :data:`WAIT_POLICY`
    unless it already names a policy: the environment of every ``llama_cpp.server`` started here."""
    out = dict(os.environ if env is None else env)
    if not out.get("OMP_WAIT_POLICY"):
        out["OMP_WAIT_POLICY"] = WAIT_POLICY
    return out


def _gomp_loaded() -> bool:
    """Whether the system OpenMP runtime (``libgomp.so.1``, which llama.cpp links) is mapped already."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            return any(
                os.path.basename(line.split()[-1]).startswith("libgomp.so") for line in f if "/" in line
            )
    except OSError:
        return False


def apply_wait_policy() -> str:
    """Set ``OMP_WAIT_POLICY`` in this process (unless the user set it) and return the policy in force.

    libgomp reads the variable once, when it is loaded (with ``llama_cpp``), so this runs on import
    of :mod:`shopbench.llm.llamacpp` (any of its modules) and again before each import of ``llama_cpp``. Setting it after libgomp is loaded
    changes nothing; that case warns (import ``shopbench.llm.llamacpp`` earlier, or export the variable).
    """
    if os.environ.get("OMP_WAIT_POLICY"):
        return os.environ["OMP_WAIT_POLICY"]
    late = sys.modules.get("llama_cpp") is not None or _gomp_loaded()
    os.environ["OMP_WAIT_POLICY"] = WAIT_POLICY
    if late:
        import warnings

        warnings.warn(
            "OMP_WAIT_POLICY was set after the OpenMP runtime was loaded, so llama.cpp's threads keep "
            "spinning while they wait (3-15x slower on 2 shared cores); export OMP_WAIT_POLICY=PASSIVE "
            "or import shopbench.llm.llamacpp before llama_cpp",
            RuntimeWarning,
            stacklevel=2,
        )
    return WAIT_POLICY


# ── Importing llama_cpp ──────────────────────────────────────────────────────


def import_llama_cpp() -> Any:
    apply_wait_policy()
    return importlib.import_module("llama_cpp")


def llama_cpp_available() -> bool:
    """Whether ``llama_cpp`` imports in this interpreter (its shared library loads)."""
    try:
        import_llama_cpp()
    except Exception:
        return False
    return True


SERVER_CHECK = "import llama_cpp, llama_cpp.server.app"


def python_has_llama_cpp(python: str) -> bool:
    # abspath, not realpath: a venv's python is a symlink to the base interpreter
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        try:
            import_llama_cpp()
            importlib.import_module("llama_cpp.server.app")
        except Exception:
            return False
        return True
    return (
        subprocess.run([python, "-c", SERVER_CHECK], capture_output=True, env=wait_policy_env()).returncode
        == 0
    )


# ── litellm provider ─────────────────────────────────────────────────────────


def _text(content: Any) -> Any:
    """OpenAI content-part lists → plain text (llama.cpp chat templates expect strings)."""
    if isinstance(content, list):
        return "".join(
            p.get("text", "") if isinstance(p, dict) else str(p)
            for p in content
            if not isinstance(p, dict) or p.get("type", "text") == "text"
        )
    return content


def _messages(messages: list) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        d = dict(m) if not isinstance(m, dict) else m
        msg = {"role": d.get("role", "user"), "content": _text(d.get("content")) or ""}
        if d.get("name"):
            msg["name"] = d["name"]
        out.append(msg)
    return out


def _litellm() -> Any:
    from .._litellm import litellm  # the one module that imports litellm

    return litellm


def _bad_request(message: str, model: str = "") -> Exception:
    return _litellm().exceptions.BadRequestError(message=message, model=model, llm_provider=PROVIDER)


# llama.cpp's grammar parser refuses a repetition longer than about 1,000 ("number of rules that are
# going to be repeated multiplied by the new repetition exceeds sane defaults"), which a JSON-schema
# string with maxLength 1,200 already needs. The grammar gets a tighter bound; the contract itself is
# unchanged (outputs are validated against the caller's schema, and the cache key holds that schema).
GRAMMAR_MAX_LENGTH = 800


def grammar_schema(schema: Any) -> Any:
    """``schema`` with every ``maxLength`` above :data:`GRAMMAR_MAX_LENGTH` lowered to it."""
    if isinstance(schema, dict):
        out = {k: grammar_schema(v) for k, v in schema.items()}
        if isinstance(out.get("maxLength"), int) and out["maxLength"] > GRAMMAR_MAX_LENGTH:
            out["maxLength"] = GRAMMAR_MAX_LENGTH
        if isinstance(out.get("minLength"), int) and out["minLength"] > GRAMMAR_MAX_LENGTH:
            out["minLength"] = GRAMMAR_MAX_LENGTH
        return out
    if isinstance(schema, list):
        return [grammar_schema(v) for v in schema]
    return schema


def _response_format(rf: Any) -> dict[str, Any] | None:
    out = _response_format_raw(rf)
    if out and "schema" in out:
        out["schema"] = grammar_schema(out["schema"])
    return out


def _response_format_raw(rf: Any) -> dict[str, Any] | None:
    if rf is None:
        return None
    if hasattr(rf, "model_json_schema"):  # a pydantic model class
        return {"type": "json_object", "schema": rf.model_json_schema()}
    if not isinstance(rf, dict):
        raise _bad_request(f"unsupported response_format {rf!r}")
    kind = rf.get("type")
    if kind == "json_schema":
        js = rf.get("json_schema") or {}
        schema = js.get("schema") if isinstance(js, dict) else None
        return {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
    if kind == "json_object":
        return {"type": "json_object", **({"schema": rf["schema"]} if rf.get("schema") else {})}
    if kind in (None, "text"):
        return None
    raise _bad_request(f"unsupported response_format type {kind!r}")


_PASS_THROUGH = ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty")


LIVE_HANDLERS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_handlers() -> None:
    # Free models while the interpreter is intact: Llama.__del__ at shutdown raises
    # "TypeError: 'NoneType' object is not callable" from llama_cpp._internals.
    for h in list(LIVE_HANDLERS):
        with contextlib.suppress(Exception):
            h.close()


class _LlamaCppCore:
    """litellm custom provider for ``llamacpp/<registry name>``, run in-process.

    Each model is loaded once (lazily, on first call) and calls to one model object are
    serialized with a lock: a llama.cpp context serves one generation at a time.
    ``n_threads`` defaults to ``$SHOPBENCH_LLAMACPP_THREADS`` or 1, ``n_batch`` to
    ``$SHOPBENCH_LLAMACPP_BATCH`` or 512. llama.cpp's OpenMP threads wait on each other at every
    operation; spinning while they wait (libgomp's default) slowed generation 3-15x on 2 shared cores,
    so :func:`apply_wait_policy` makes them sleep (``OMP_WAIT_POLICY=PASSIVE``) unless the user chose a
    policy. Rates under load: ``python -m shopbench.benchmarks.local_llm`` (docs/DESIGN.md).
    ``seed`` seeds the model at load (llama-cpp-python treats 0/None as random), so a sequence of
    calls is reproducible; a per-call ``seed`` overrides it.

    ``LlamaCppHandler`` is this class mixed into ``litellm.CustomLLM``; it is built on first
    access (module ``__getattr__``) so that importing this module does not import litellm.
    """

    def __init__(
        self, n_threads: int | None = None, seed: int | None = 1234, n_ctx: int | None = None
    ) -> None:
        super().__init__()
        self.n_threads = n_threads or default_threads()
        self.n_batch = default_batch()
        self.seed = seed
        self.n_ctx = n_ctx
        self._models: dict[str, Any] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._load_lock = threading.Lock()
        LIVE_HANDLERS.add(self)

    # -- model objects --
    def _get(self, name: str) -> tuple[Any, threading.Lock]:
        spec = model_spec(name)
        with self._load_lock:
            if spec.name not in self._models:
                path = model_path(spec.name)
                try:
                    Llama = import_llama_cpp().Llama
                except Exception as e:
                    raise ModelNotInstalled(
                        f"llama-cpp-python is not importable ({e}); install it with: {INSTALL_COMMAND}"
                    ) from e
                kwargs: dict[str, Any] = dict(
                    model_path=str(path),
                    n_ctx=min(self.n_ctx or spec.n_ctx, MAX_N_CTX),
                    n_threads=self.n_threads,
                    n_batch=self.n_batch,
                    verbose=False,
                )
                if self.seed is not None:
                    kwargs["seed"] = self.seed
                self._models[spec.name] = Llama(**kwargs)
                self._locks[spec.name] = threading.Lock()
            return self._models[spec.name], self._locks[spec.name]

    def preload(self, name: str) -> float:
        """Load ``name`` now (if not loaded yet) and return the seconds it took (0.0 when it was loaded):
        so a timing of the first call measures the call, not reading the weights (issue 16 §3)."""
        t0 = time.perf_counter()
        loaded = model_spec(name).name in self._models
        self._get(name)
        return 0.0 if loaded else time.perf_counter() - t0

    def close(self) -> None:
        """Free the loaded models."""
        with self._load_lock:
            for m in self._models.values():
                with contextlib.suppress(Exception):
                    m.close()
            self._models.clear()
            self._locks.clear()

    # -- calls --
    @staticmethod
    def _kwargs(optional_params: dict) -> dict[str, Any]:
        op = optional_params or {}
        kw: dict[str, Any] = {k: op[k] for k in _PASS_THROUGH if op.get(k) is not None}
        max_tokens = op.get("max_tokens", op.get("max_completion_tokens"))
        if max_tokens is not None:
            kw["max_tokens"] = int(max_tokens)
        stop = op.get("stop")
        if stop:
            kw["stop"] = [stop] if isinstance(stop, str) else list(stop)
        rf = _response_format(op.get("response_format"))
        if rf is not None:
            kw["response_format"] = rf
        return kw

    def _call(self, model: str, messages: list, optional_params: dict, model_response: Any) -> Any:
        if (optional_params or {}).get("stream"):
            raise _bad_request("llamacpp provider does not stream", model)
        try:
            kw = self._kwargs(optional_params)
            llm, lock = self._get(model)
        except ModelNotInstalled as e:
            raise _bad_request(str(e), model) from e
        try:
            with lock:
                out = llm.create_chat_completion(messages=_messages(messages), **kw)
        except ValueError as e:  # llama-cpp-python's request errors, e.g. prompt > n_ctx
            if "context window" in str(e):
                raise _litellm().exceptions.ContextWindowExceededError(
                    message=str(e), model=model, llm_provider=PROVIDER
                ) from e
            raise _bad_request(str(e), model) from e
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        litellm = _litellm()
        resp = model_response if model_response is not None else litellm.ModelResponse()
        resp.choices[0].message.content = choice["message"].get("content") or ""
        resp.choices[0].finish_reason = choice.get("finish_reason") or "stop"
        pt, ct = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        resp.usage = litellm.Usage(prompt_tokens=pt, completion_tokens=ct, total_tokens=pt + ct)
        resp.model = f"{PROVIDER}/{model_spec(model).name}"
        resp.created = int(time.time())
        return resp

    def completion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                   model_response: Any, print_verbose: Any, encoding: Any, api_key: Any,
                   logging_obj: Any, optional_params: dict, acompletion: Any = None,
                   litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
                   timeout: Any = None, client: Any = None) -> Any:  # fmt: skip
        return self._call(model, messages, optional_params, model_response)

    async def acompletion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                          model_response: Any, print_verbose: Any, encoding: Any, api_key: Any,
                          logging_obj: Any, optional_params: dict, acompletion: Any = None,
                          litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
                          timeout: Any = None, client: Any = None) -> Any:  # fmt: skip
        return await asyncio.to_thread(self._call, model, messages, optional_params, model_response)


def handler_class() -> type:
    cls = globals().get("_HANDLER_CLASS")
    if cls is None:

        class LlamaCppHandler(_LlamaCppCore, _litellm().CustomLLM):
            __doc__ = _LlamaCppCore.__doc__

        LlamaCppHandler.__module__ = __name__
        globals()["_HANDLER_CLASS"] = cls = LlamaCppHandler
    return cls


def __getattr__(name: str) -> Any:
    if name == "LlamaCppHandler":
        return handler_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
