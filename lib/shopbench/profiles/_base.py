"""The base of every profile section: unknown keys are errors and types are strict (issue 11 §5).

``extra="forbid"`` rejects a key the section does not define (``gateway.timeout_secs``); ``strict``
means YAML's ``true`` is not an integer and ``"3"`` is not a number. Sections are frozen: a notebook
reads its parameters, it never changes them.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class Section(BaseModel):
    """A profile section: strict types, no unknown keys, immutable once loaded."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, protected_namespaces=())

    def given(self) -> dict:
        """The keys the file set (nested), as plain data: what the section looked like in YAML."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


Count = Annotated[int, Field(ge=0)]
"""A number of things that may be zero (trials, pairs, retries)."""
PositiveInt = Annotated[int, Field(ge=1)]
"""A number that must be at least one (resamples, tokens, concurrency, repeats)."""
Seconds = Annotated[float, Field(gt=0)]
"""A duration in seconds, above zero."""
NonNegativeFloat = Annotated[float, Field(ge=0)]
"""A non-negative amount (a time budget in minutes; zero allowed)."""
Fraction = Annotated[float, Field(ge=0, le=1)]
"""A probability or share in [0, 1]."""
Name = Annotated[str, Field(min_length=1)]
"""A non-empty name (a backbone, a protocol, an agent)."""
