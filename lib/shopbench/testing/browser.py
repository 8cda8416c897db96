"""What the real-browser tests share: Debian's chromium, a server process on a free loopback port, JupyterLab.

The browser tests (``tests/test_*_browser.py``) drive headless Chromium through Playwright against a
server this module starts: :func:`served` runs any command in its own process group, waits until
its port listens and stops it (SIGTERM, then SIGKILL of that group only) when the test ends;
:func:`jupyter_lab` is that for JupyterLab (``--allow-root`` when run as root, loopback, a token, no
news or update checks, a temporary HOME and Jupyter config/runtime folders). Playwright's own
browser download is never used: :data:`CHROMIUM` is Debian's ``chromium``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]  # fmt: skip
LAB_TOKEN = "shopbench-browser-test"
LOCAL_PREFIXES = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")


def missing(modules: Sequence[str] = ("playwright",)) -> str | None:
    """Why a browser test cannot run here (no chromium, a missing package), or None."""
    if not Path(CHROMIUM).exists():
        return "chromium not installed (apt-get install -y chromium)"
    for module in modules:
        if importlib.util.find_spec(module) is None:
            return f"python package {module} not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def outside_requests(urls: Sequence[str]) -> list[str]:
    """The requested URLs that did not go to this machine."""
    return [u for u in urls if not u.startswith(LOCAL_PREFIXES)]


class ServerFailed(RuntimeError):
    """The server exited or did not listen in time; the message ends with its log."""


@contextlib.contextmanager
def served(cmd: Sequence[str], port: int, *, cwd: str | Path, env: Mapping[str, str], log: Path,
           timeout_s: float = 120, what: str = "server") -> Iterator[subprocess.Popen]:  # fmt: skip
    """Run ``cmd`` (its own process group, output to ``log``) until it listens on 127.0.0.1:``port``;
    yield the process; stop it on exit (SIGTERM, then SIGKILL of the group it leads)."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise ServerFailed(f"the {what} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise ServerFailed(
                        f"the {what} did not listen on {port} within {timeout_s:.0f} s:\n{log.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.2)
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)  # JupyterLab and Voila shut their kernels down on SIGTERM
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the group started here (the server and its kernels)
            proc.wait(timeout=10)


def clean_env(home: Path, drop: Sequence[str] = ("JUPYTER_",), **extra: str) -> dict[str, str]:
    """This process's environment without variables starting with ``drop``, HOME and the Jupyter
    config/runtime folders under ``home`` (created), plus ``extra``."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(tuple(drop))}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1", JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), **extra)  # fmt: skip
    return env


@contextlib.contextmanager
def jupyter_lab(root_dir: Path, home: Path, log: Path, env: Mapping[str, str] | None = None,
                timeout_s: float = 120) -> Iterator[str]:  # fmt: skip
    """JupyterLab serving ``root_dir`` on a free loopback port; yields its base URL (the token is
    :data:`LAB_TOKEN`). ``env`` defaults to :func:`clean_env` of ``home``."""
    port = free_port()
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1", f"--ServerApp.root_dir={root_dir}",
           f"--IdentityProvider.token={LAB_TOKEN}", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    with served(cmd, port, cwd=root_dir, env=env or clean_env(home), log=log, timeout_s=timeout_s,
                what="jupyter lab"):  # fmt: skip
        yield f"http://127.0.0.1:{port}"


def open_lab(page, url: str, path: str, timeout_ms: int = 180_000, reset: bool = False) -> None:
    """Open ``path`` (relative to the lab's root) in JupyterLab and wait until its kernel is idle;
    dismiss the "fetch news?" prompt (the page stays offline). ``reset``: start from an empty
    workspace (documents an earlier page opened are not reopened)."""
    from playwright.sync_api import expect

    query = f"token={LAB_TOKEN}" + ("&reset" if reset else "")
    page.goto(f"{url}/lab/tree/{path}?{query}", wait_until="commit", timeout=timeout_ms)
    expect(page.locator(".jp-Notebook").first).to_be_visible(timeout=timeout_ms)
    expect(page.get_by_text("Python 3 (ipykernel) | Idle")).to_be_visible(timeout=timeout_ms)
    if page.get_by_role("button", name="No", exact=True).count():
        page.get_by_role("button", name="No", exact=True).click()


__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "LAB_TOKEN", "missing", "free_port", "outside_requests", "served",
           "ServerFailed", "clean_env", "jupyter_lab", "open_lab"]  # fmt: skip
