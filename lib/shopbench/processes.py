"""Stopping a child process the project started (a model server, a fake provider, a fleet member)."""

from __future__ import annotations

import subprocess


def stop_process(proc: subprocess.Popen, wait_s: float = 10.0) -> None:
    """Terminate ``proc`` if it still runs, wait up to ``wait_s`` seconds, then kill it."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
