"""``llama_cpp.server`` as an OpenAI-compatible subprocess for a packaged model (issue 27:
``llm/llamacpp`` split by concept); it is called as ``openai/<alias>``."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ...processes import stop_process
from .registry import INSTALL_COMMAND, MAX_N_CTX, ModelNotInstalled, model_path, model_spec
from .runtime import default_batch, default_threads, python_has_llama_cpp, wait_policy_env


@dataclass
class Server:
    """A running ``llama_cpp.server``; ``model`` is the litellm model name to call it with."""

    api_base: str
    alias: str
    model: str
    port: int
    process: subprocess.Popen
    log_path: Path


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


@contextlib.contextmanager
def serve(
    name: str,
    port: int | None = None,
    host: str = "127.0.0.1",
    alias: str | None = None,
    timeout: float = 120.0,
    n_ctx: int | None = None,
    n_threads: int | None = None,
) -> Iterator[Server]:
    """Run ``python -m llama_cpp.server`` for a registry model while the block runs.

    Yields a :class:`Server` (``.api_base`` ``http://HOST:PORT/v1``, ``.alias``,
    ``.model`` ``openai/<alias>``); the process is terminated on exit.
    """
    spec = model_spec(name)
    path = model_path(spec.name)
    if not python_has_llama_cpp(sys.executable):
        raise ModelNotInstalled(
            f"llama-cpp-python (with its server extra) is not importable; install it with: {INSTALL_COMMAND}"
        )
    alias = alias or spec.name
    port = port or _free_port(host)
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", host,
           "--port", str(port), "--model_alias", alias,
           "--n_ctx", str(min(n_ctx or spec.n_ctx, MAX_N_CTX)), "--n_threads", str(n_threads or default_threads()),
           "--n_batch", str(default_batch())]  # fmt: skip
    log = tempfile.NamedTemporaryFile(prefix=f"llamacpp-server-{spec.name}-", suffix=".log", delete=False)
    log_path = Path(log.name)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=wait_policy_env())  # fmt: skip
    log.close()
    api_base = f"http://{host}:{port}/v1"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"llama_cpp.server for {spec.name} exited with code {proc.returncode} before "
                    f"answering on {api_base}; last output:\n{_tail(log_path)}"
                )
            try:
                with urllib.request.urlopen(api_base + "/models", timeout=2) as r:
                    if r.status == 200:
                        json.load(r)
                        break
            except (urllib.error.URLError, OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"llama_cpp.server for {spec.name} did not answer GET {api_base}/models within "
                    f"{timeout:.0f}s; last output:\n{_tail(log_path)}"
                )
            time.sleep(0.25)
        yield Server(api_base=api_base, alias=alias, model=f"openai/{alias}", port=port,
                     process=proc, log_path=log_path)  # fmt: skip
    finally:
        stop_process(proc)
        log_path.unlink(missing_ok=True)
