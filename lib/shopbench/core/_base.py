"""The one base class of the core document types (pydantic, ``extra="forbid"``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    """The base of every core document type: pydantic, unknown fields rejected."""

    model_config = ConfigDict(extra="forbid")
