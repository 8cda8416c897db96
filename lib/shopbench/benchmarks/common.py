"""What every benchmark shares: the process's peak resident memory and the fake OpenAI server process."""

from __future__ import annotations

import resource
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ..processes import stop_process


def rss_mb() -> float:
    """Peak resident memory of this process in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def fake_server_process(latency: float) -> Iterator[str]:
    """``python -m shopbench.testing.fake_openai`` in its own process (so it does not compete with the
    gateway for the GIL); yields its API base URL."""
    proc = subprocess.Popen([sys.executable, "-m", "shopbench.testing.fake_openai", "--latency", str(latency)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        line = proc.stdout.readline().strip() if proc.stdout else ""
        if not line.startswith("http"):
            raise RuntimeError("fake OpenAI server did not start")
        yield line
    finally:
        stop_process(proc)
