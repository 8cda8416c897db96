"""The tool registry: the eight tools the agent acts through, their function-calling schemas, their
registry category, and the extra-call penalty schedule (seed 002 §3.1 "Tool interface" and App. E).

"Each tool's category is a fixed property read from the tool registry, which is how the
tool-call-correctness metric decides whether a call mutates the cart. The k-th unjustified extra past
a category's free allowance costs initial + (k-1)*increase, so per-extra cost grows linearly and the
cumulative penalty grows quadratically. [...] An unmatched cart mutation incurs the full penalty from
its first occurrence, while read-only and exploratory calls receive limited allowances." (App. E)

Our copy of the paper lacks Table 7's numbers, so the schedule (``PENALTIES``, kept in
:mod:`shopbench.shopsim.choices`) is our choice and documented as
such: read-only lookups are "forgiven in bulk" (a generous allowance, cheap extras), search and
exploration get a small allowance, cart writes none, and ``other`` sits in between. The paper names
eight tools without listing them; ours are the seven the issue names plus ``list_categories``
(store metadata: registry category ``other``).
"""

from __future__ import annotations

from .choices import PENALTIES, Penalty

__all__ = ["CART_WRITES", "PENALTIES", "Penalty", "TOOL_CATEGORY", "TOOL_NAMES", "TOOL_SPECS", "category_of"]


def _fn(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required,
                           "additionalProperties": False},
        },
    }  # fmt: skip


_PID = {"type": "string", "description": "a product id from search results"}

TOOL_SPECS: list[dict] = [
    _fn("search_products", "Search the store catalog. Returns up to `limit` products ranked by relevance.",
        {"query": {"type": "string"},
         "category": {"type": "string", "description": "restrict to one category (see list_categories)"},
         "min_price": {"type": "number"}, "max_price": {"type": "number"},
         "limit": {"type": "integer", "minimum": 1, "maximum": 20}},
        ["query"]),
    _fn("list_categories", "List the store's product categories with their product counts.", {}, []),
    _fn("get_product_details", "Full catalog entry of one product: description, attributes, variants.",
        {"product_id": _PID}, ["product_id"]),
    _fn("get_variant_details", "Stock and options of one variant (size/colour) of a product.",
        {"product_id": _PID, "variant_id": {"type": "string"}}, ["product_id", "variant_id"]),
    _fn("add_to_cart", "Add units of a product (and variant, when it has variants) to the customer's cart.",
        {"product_id": _PID, "quantity": {"type": "integer", "minimum": 1},
         "variant_id": {"type": "string"}},
        ["product_id", "quantity"]),
    _fn("remove_from_cart", "Remove a product from the cart entirely.", {"product_id": _PID}, ["product_id"]),
    _fn("update_cart_quantity", "Set the quantity of a product already in the cart (0 removes it).",
        {"product_id": _PID, "quantity": {"type": "integer", "minimum": 0}}, ["product_id", "quantity"]),
    _fn("view_cart", "The customer's cart: lines, quantities, prices and total.", {}, []),
]  # fmt: skip

TOOL_CATEGORY: dict[str, str] = {
    "search_products": "search",
    "list_categories": "other",
    "get_product_details": "read_only",
    "get_variant_details": "read_only",
    "view_cart": "read_only",
    "add_to_cart": "cart_write",
    "remove_from_cart": "cart_write",
    "update_cart_quantity": "cart_write",
}
TOOL_NAMES = tuple(s["function"]["name"] for s in TOOL_SPECS)
CART_WRITES = frozenset(n for n, c in TOOL_CATEGORY.items() if c == "cart_write")


def category_of(tool_name: str) -> str:
    """Registry category of a tool; an unknown tool name is ``other``."""
    return TOOL_CATEGORY.get(tool_name, "other")
