"""A rehearsal fleet: several provider-server processes for the ``hosted_vllm/`` models, one killed
mid-sweep (issue 14 §5).

Issue 14 §5 asks for "several servers for one open-weight model (a list of ``api_base`` s ...) with load
balancing and failover: ... one killed mid-sweep, the sweep finishing with no lost or repeated rows".
In a real run those are your vLLM/SGLang servers, named in the profile as an ``api_base`` list; in a
rehearsal they are ``python -m shopbench.rehearsal.server`` processes on 127.0.0.1 (same seed: the
same request gets the same answer from any of them, as from replicas of one model), and the last one
is started with ``--die-after N``: it SIGKILLs itself when its (N+1)-th chat completion arrives, so
the requests in flight on it see their connection drop.

:func:`fleet` starts the processes and publishes their addresses in ``SHOPBENCH_REHEARSAL_FLEET``
(comma-separated ``…/v1`` bases) for this process and the notebook kernels;
:func:`apply_fleet` gives every ``hosted_vllm/`` backbone without an ``api_base`` of its own that
list, so its calls take the gateway's fleet path (:class:`shopbench.llm.transport.Fleet`: balancing,
cool-down, failover) exactly as an ``api_base`` list in a profile would. What happened to each server
(answered to the end, or killed by SIGKILL) is :meth:`FleetRun.states` after the run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..processes import stop_process

FLEET_ENV = "SHOPBENCH_REHEARSAL_FLEET"
FLEET_PROVIDERS = ("hosted_vllm",)  # the open-weight servers a real run would point at a fleet


@dataclass
class FleetRun:
    """The fleet's processes, their ``…/v1`` addresses and which one is set to die."""

    processes: list[subprocess.Popen] = field(default_factory=list)
    bases: list[str] = field(default_factory=list)
    kill_after: int | None = None

    def states(self) -> list[dict]:
        """One row per server: its address, whether it was set to die, and how it ended."""
        out = []
        for i, (p, base) in enumerate(zip(self.processes, self.bases, strict=True)):
            rc = p.poll()
            victim = self.kill_after is not None and i == len(self.processes) - 1
            state = ("up" if rc is None else "killed (SIGKILL)" if rc == -signal.SIGKILL
                     else f"exited with code {rc}")  # fmt: skip
            out.append({"server": i, "api_base": base, "set_to_die_after": self.kill_after if victim else None,
                        "state": state})  # fmt: skip
        return out


def _server_args(server_kw: dict) -> list[str]:
    flags = {"seed": "--seed", "latency_s": "--latency", "rate_429": "--rate-429", "rate_5xx": "--rate-5xx",
             "batch_line_error_rate": "--batch-line-error-rate", "batch_delay_s": "--batch-delay",
             "min_cache_tokens": "--min-cache-tokens", "retry_after_s": "--retry-after",
             "max_tool_turns": "--max-tool-turns"}  # fmt: skip
    args: list[str] = []
    for k, v in server_kw.items():
        if k in flags and v is not None:
            args += [flags[k], str(v)]
    return args


def start_server_process(server_kw: dict, die_after: int | None = None) -> tuple[subprocess.Popen, str]:
    """One ``python -m shopbench.rehearsal.server`` process; returns it with its ``…/v1`` address."""
    cmd = [sys.executable, "-m", "shopbench.rehearsal.server", "--port", "0", *_server_args(server_kw)]
    if die_after is not None:
        cmd += ["--die-after", str(die_after)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline().strip() if proc.stdout else ""
    if not line.startswith("http://"):
        proc.kill()
        raise RuntimeError(f"rehearsal fleet server did not start (printed {line!r})")
    return proc, line.rstrip("/") + "/v1"


@contextmanager
def fleet(servers: int, kill_after: int | None = None, **server_kw) -> Iterator[FleetRun | None]:
    """Start ``servers`` server processes (the last with ``--die-after kill_after``) and publish their
    addresses in :data:`FLEET_ENV` for the duration; fewer than 2 servers: no fleet (yields None)."""
    if servers < 2:
        yield None
        return
    run = FleetRun(kill_after=kill_after)
    saved = os.environ.get(FLEET_ENV)
    try:
        for i in range(servers):
            proc, base = start_server_process(server_kw, kill_after if i == servers - 1 else None)
            run.processes.append(proc)
            run.bases.append(base)
        os.environ[FLEET_ENV] = ",".join(run.bases)
        yield run
    finally:
        if saved is None:
            os.environ.pop(FLEET_ENV, None)
        else:
            os.environ[FLEET_ENV] = saved
        for p in run.processes:
            stop_process(p)


def fleet_bases() -> list[str]:
    """The active rehearsal fleet's ``…/v1`` addresses (empty outside a rehearsal with a fleet)."""
    return [b for b in (os.environ.get(FLEET_ENV) or "").split(",") if b]


def apply_fleet(backbones: Sequence) -> list[str]:
    """Point every ``hosted_vllm/`` backbone without its own ``api_base`` at the active fleet (as an
    ``api_base`` list in the profile would); returns the names changed."""
    bases = fleet_bases()
    changed: list[str] = []
    if len(bases) < 2:
        return changed
    for b in backbones:
        if b.provider in FLEET_PROVIDERS and not b.api_base and not b.server:
            b.api_base, b.api_bases, b.fleet = bases[0], list(bases), list(bases)
            changed.append(b.name)
    return changed


__all__ = ["FLEET_ENV", "FleetRun", "apply_fleet", "fleet", "fleet_bases", "start_server_process"]
