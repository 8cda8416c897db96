"""The ``rehearsal`` section (issue 14 §3): run the profile against the project's local provider server.

With this section present, the pipeline (and a notebook opened on its own) starts
:class:`shopbench.rehearsal.ProviderServer` on 127.0.0.1, points every provider's base URL at it with a
dummy key (in this process and the notebook kernels only), and labels every artefact ``rehearsal``
instead of ``measured``: the run proves the code path, not the numbers.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ._base import Count, Fraction, PositiveInt, Section


class RehearsalParams(Section):
    """``rehearsal:`` of a profile: the local provider server's seed, latency and faults."""

    seed: Count = 0
    latency_s: Annotated[float, Field(ge=0)] = 0.0  # mean per-call latency (± 50 % jitter)
    rate_429: Fraction = 0.0  # share of real-time calls answered 429 with Retry-After
    rate_5xx: Fraction = 0.0  # share answered 503/500
    retry_after_s: Annotated[float, Field(ge=0)] = 0.05
    batch_line_error_rate: Fraction = 0.0  # share of batch lines answered with a per-line error
    batch_delay_s: Annotated[float, Field(ge=0)] = 0.5  # a batch ends this long after submission
    min_cache_tokens: PositiveInt = 1024  # shortest prefix the simulated provider caches
    max_tool_turns: Count = 2  # tool results after which an agent answers in text
    # issue 14 §5: ``hosted_vllm/`` models (your own vLLM/SGLang servers in a real run) are served by
    # this many server processes as one fleet (an ``api_base`` list); 0 or 1: by the main server
    fleet_servers: Count = 0
    # the fleet's last server SIGKILLs itself when this many chat completions have reached it (a
    # server killed mid-sweep: the calls in flight on it fail over to the others); null: none dies
    fleet_kill_after: Count | None = None

    def server_kwargs(self) -> dict:
        """Keyword arguments of :class:`shopbench.rehearsal.server.ProviderServer`."""
        return self.model_dump(exclude={"fleet_servers", "fleet_kill_after"})

    def fleet_kwargs(self) -> dict:
        """Keyword arguments of :func:`shopbench.rehearsal.fleet`."""
        return {"servers": self.fleet_servers, "kill_after": self.fleet_kill_after, **self.server_kwargs()}
