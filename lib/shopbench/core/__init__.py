"""The core types every role shares, in one neutral package that imports no other ``shopbench``
package: catalog products and evidence (:mod:`.catalog`), personas (:mod:`.personas`), PACEShop
records (:mod:`.records`), the shared retail vocabulary (:mod:`.taxonomy`), conversations — tool
calls, messages and the one trajectory type (:mod:`.conversation`) — and the one registry of
judges, metrics, agents, tasks and local backends (:mod:`.registry`).

All of them are pydantic: documents read from files are ``BaseModel``s with unknown keys rejected;
conversation values are pydantic dataclasses. Names resolve on first use (:mod:`shopbench._lazy`), so
``shopbench list`` reads the registry without importing pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the real types for mypy; at run time each name loads on first use
    from . import registry, taxonomy  # noqa: F401
    from .catalog import EvidencePool, EvidenceSnippet, Product, Provenance, Query, SourceField  # noqa: F401
    from .conversation import Message, Role, ToolCall, Trajectory, message_turns  # noqa: F401
    from .personas import (  # noqa: F401
        Persona,
        PersonaHistory,
        PersonaPreferences,
        PersonaProfile,
        PersonaTaxonomy,
        PurchaseItem,
        ShoppingContext,
    )
    from .records import Defect, DefectFamily, Label, Record, Response  # noqa: F401

_EXPORTS = {
    ".catalog": ["EvidencePool", "EvidenceSnippet", "Product", "Provenance", "Query", "SourceField"],
    ".conversation": ["Message", "Role", "ToolCall", "Trajectory", "message_turns"],
    ".personas": ["Persona", "PersonaHistory", "PersonaPreferences", "PersonaProfile", "PersonaTaxonomy",
                  "PurchaseItem", "ShoppingContext"],
    ".records": ["Defect", "DefectFamily", "Label", "Record", "Response"],
}  # fmt: skip
_SUBMODULES = ["registry", "taxonomy"]
__getattr__, __dir__, _names = lazy_exports(__name__, _EXPORTS, _SUBMODULES)
__all__ = [*_names, *_SUBMODULES]
