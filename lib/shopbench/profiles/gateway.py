"""The ``gateway`` section: the model gateway's cache, time limits, retries, budget and concurrency."""

from __future__ import annotations

from typing import Annotated, Literal

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
    # "batch": calls to openai/ and anthropic/ models go through the providers' batch APIs (half price,
    # answers within the providers' 24 h window; llm/batch.py); other providers stay real-time
    mode: Literal["realtime", "batch"] = "realtime"
    batch_poll_s: Seconds = 30.0  # how often a batch's status is checked
    batch_min_calls: PositiveInt = (
        20  # sweeps with fewer batchable calls (an agent's next turn) stay real-time
    )
