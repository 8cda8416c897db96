"""The core types every role shares, in one neutral package that imports no other ``shopbench``
package: catalog products and evidence (:mod:`.catalog`), personas (:mod:`.personas`), PACEShop
records (:mod:`.records`), the shared retail vocabulary (:mod:`.taxonomy`) and conversations —
tool calls, messages and the one trajectory type (:mod:`.conversation`).

All of them are pydantic: documents read from files are ``BaseModel``s with unknown keys rejected;
conversation values are pydantic dataclasses.
"""

from __future__ import annotations

from . import taxonomy
from .catalog import EvidencePool, EvidenceSnippet, Product, Provenance, Query, SourceField
from .conversation import Message, Role, ToolCall, Trajectory, message_turns
from .personas import (
    Persona,
    PersonaHistory,
    PersonaPreferences,
    PersonaProfile,
    PersonaTaxonomy,
    PurchaseItem,
    ShoppingContext,
)
from .records import Defect, DefectFamily, Label, Record, Response

__all__ = [
    "Defect", "DefectFamily", "EvidencePool", "EvidenceSnippet", "Label", "Message", "Persona", "PersonaHistory",
    "PersonaPreferences", "PersonaProfile", "PersonaTaxonomy", "Product", "Provenance", "PurchaseItem", "Query",
    "Record", "Response", "Role", "ShoppingContext", "SourceField", "ToolCall", "Trajectory", "message_turns",
    "taxonomy",
]  # fmt: skip
