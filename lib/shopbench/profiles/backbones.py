"""Entries of the top-level ``backbones`` list: a litellm model name, or a mapping with ``model``.

The keys are those :func:`shopbench.llm.parse_backbones` accepts; names must be distinct.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from ._base import Name, PositiveInt, Section


class BackboneEntry(Section):
    """``{name, model, api_base, server, model_name, concurrency, params, substitute_for, replicas}``;
    only ``model`` is required.

    ``api_base`` is one URL or a list of URLs serving the same model (a vLLM/SGLang fleet: the gateway
    balances calls over them, with failover); ``replicas`` starts that many project-started servers as
    one fleet. ``substitute_for`` names the paper's model this backbone stands in for when litellm does
    not serve that one (:mod:`shopbench.profiles.rosters`); the preview and the index show it."""

    model: Name
    name: Name | None = None
    api_base: Name | Annotated[list[Name], Field(min_length=1)] | None = None
    server: Literal["llamacpp"] | None = None  # a project-started llama_cpp.server on 127.0.0.1
    model_name: str | None = None
    concurrency: PositiveInt | None = None  # for a fleet: per server
    replicas: PositiveInt | None = None  # server: llamacpp only
    params: dict[str, Any] = {}
    substitute_for: Name | None = None

    @property
    def label(self) -> str:
        return self.name or self.model


def _kind(v: Any) -> str:
    return "name" if isinstance(v, str) else "entry"


Backbone = Annotated[
    Annotated[Name, Tag("name")] | Annotated[BackboneEntry, Tag("entry")], Discriminator(_kind)
]


def backbone_label(entry: str | BackboneEntry) -> str:
    """The name a backbone is called by (its ``name``, else its model)."""
    return entry if isinstance(entry, str) else entry.label


def as_plain(entry: str | BackboneEntry) -> str | dict:
    """The entry as YAML gave it, for :func:`shopbench.llm.parse_backbones`."""
    return entry if isinstance(entry, str) else entry.given()
