"""The ``gateway`` section: the model gateway's cache, time limits, retries, budget and concurrency."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ._base import Count, PositiveInt, Seconds, Section


class GatewayParams(Section):
    """``gateway:`` of a profile (read by :attr:`shopbench.context.RunContext.gateway`).

    ``concurrency`` maps a provider (``openai``, ``llamacpp``, ``local``…) to how many calls may run at
    once: an integer ≥ 1 (``0`` used to fall back to 8 and ``many`` failed mid-sweep; both are load errors).
    """

    cache_dir: str | None = None  # None: outputs/cache, shared by all profiles
    timeout_s: Seconds = 120.0
    max_retries: Count = 4
    max_cost_usd: Annotated[float, Field(ge=0)] | None = (
        None  # None: no budget; 0.0: any paid call stops the run
    )
    max_local_hours: Annotated[float, Field(gt=0)] | None = (
        None  # None: no limit; else a run whose local-model part is estimated longer refuses to start
    )
    progress: bool = True
    concurrency: dict[str, PositiveInt] = {}
