"""The τ²-retail tool specs (issue 27: split from :mod:`.tools`, below both it and :mod:`.data_model`,
which checks a task's expected actions against :data:`TOOL_NAMES`).

The tool specs an LLM agent sees (names, descriptions, parameters), :func:`tool_specs`:

- ``"tau2"`` (default, :data:`TOOL_SPECS` = :data:`TAU2_TOOL_SPECS`): exactly what τ²-bench's agent
  is given, ``Tool.openai_schema`` of its ``RetailTools.get_tools()`` (``src/tau2/environment/tool.py``
  builds it from each method's docstring with ``docstring_parser``: the short description, plus
  "\\n\\n" and the long description when there is one; each ``Args:`` entry becomes the parameter's
  description; pydantic's ``model_json_schema()`` gives ``title``/``type``/``required``). Its texts
  are τ²-bench's (MIT, commit ``a2c0247``), in its order; ``tests/test_tau2_tool_specs.py`` compares
  them byte for byte with ``tests/fixtures/tau2_retail_tool_specs.json``, computed once from that
  commit's code.
- ``"short"`` (:data:`SHORT_TOOL_SPECS`): the project's own one-line texts, same names and parameters,
  8.7k instead of 12.3k characters as JSON; a named option for small local models with a short context
  (``LLMRetailAgent(tool_texts="short")``, source key ``tool_texts: short``). Results with it are
  not comparable with published τ²-bench numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "READ_TOOLS", "SHORT_TOOL_SPECS", "TAU2_TOOL_SPECS", "TOOL_NAMES", "TOOL_SPECS", "TOOL_TEXTS", "WRITE_TOOLS",
    "tool_specs",
]  # fmt: skip


def _s(desc: str) -> dict:
    return {"type": "string", "description": desc}


_ORDER = _s("The order id, such as '#W0000000'. Mind the '#' at the beginning.")
_PM = _s("A payment method id of the user, such as 'gift_card_0000000' or 'credit_card_0000000'.")
_ITEMS = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Item ids, such as '1008292230' (duplicates allowed).",
}
_ADDRESS = {
    "address1": _s("First address line, such as '123 Main St'."),
    "address2": _s("Second address line, such as 'Apt 1', or ''."),
    "city": _s("City."), "state": _s("State, such as 'CA'."), "country": _s("Country, such as 'USA'."),
    "zip": _s("Zip code, such as '12345'."),
}  # fmt: skip


def _fn(name: str, description: str, props: dict, required: Sequence[str] | None = None) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": props, "required": list(props if required is None else required),
        "additionalProperties": False}}}  # fmt: skip


SHORT_TOOL_SPECS: list[dict] = [
    _fn("find_user_id_by_email", "Find a user id by email. Errors if no user has it.", {"email": _s("The email.")}),
    _fn("find_user_id_by_name_zip",
        "Find a user id by first name, last name and zip code (use when the user cannot give an email).",
        {"first_name": _s("First name."), "last_name": _s("Last name."), "zip": _s("Zip code.")}),
    _fn("get_user_details", "The profile of a user: name, address, email, payment methods, orders.",
        {"user_id": _s("The user id, such as 'sara_doe_496'.")}),
    _fn("get_order_details", "The status and details of an order.", {"order_id": _ORDER}),
    _fn("get_product_details", "A product type with all its variant items (options, availability, price).",
        {"product_id": _s("The product id (not an item id).")}),
    _fn("get_item_details", "One variant item: options, availability, price.",
        {"item_id": _s("The item id (not a product id).")}),
    _fn("list_all_product_types", "Name -> product id of the store's 50 product types.", {}),
    _fn("calculate", "Evaluate an arithmetic expression (numbers, + - * / and parentheses).",
        {"expression": _s("Such as '2 + 2'.")}),
    _fn("cancel_pending_order",
        "Cancel a pending order after explicit user confirmation. Reason: 'no longer needed' or 'ordered by "
        "mistake'. Refunds go to the original payment methods (gift cards at once, others in 5-7 business days).",
        {"order_id": _ORDER, "reason": _s("'no longer needed' or 'ordered by mistake'.")}),
    _fn("modify_pending_order_items",
        "Swap items of a pending order for other available variants of the same product (once per order; "
        "the order becomes 'pending (item modified)'), paying or refunding the difference with a payment method.",
        {"order_id": _ORDER, "item_ids": _ITEMS, "new_item_ids": _ITEMS, "payment_method_id": _PM}),
    _fn("modify_pending_order_address", "Change the shipping address of a pending order.",
        {"order_id": _ORDER, **_ADDRESS}),
    _fn("modify_pending_order_payment", "Pay a pending order with another of the user's payment methods.",
        {"order_id": _ORDER, "payment_method_id": _PM}),
    _fn("modify_user_address", "Change the default address of a user.",
        {"user_id": _s("The user id."), **_ADDRESS}),
    _fn("return_delivered_order_items",
        "Request the return of items of a delivered order; the refund goes to the original payment method or "
        "a gift card. The order becomes 'return requested'.",
        {"order_id": _ORDER, "item_ids": _ITEMS, "payment_method_id": _PM}),
    _fn("exchange_delivered_order_items",
        "Exchange items of a delivered order for other available variants of the same product, settling the "
        "price difference with a payment method. The order becomes 'exchange requested'.",
        {"order_id": _ORDER, "item_ids": _ITEMS, "new_item_ids": _ITEMS, "payment_method_id": _PM}),
    _fn("transfer_to_human_agents",
        "Transfer the user to a human agent with a summary, only if the request cannot be handled with the "
        "other tools or the user asks for a human.", {"summary": _s("A summary of the user's issue.")}),
]  # fmt: skip


def _t2(name: str, description: str, params: Sequence[tuple[str, ...]]) -> dict:
    """One tool as τ²-bench's ``Tool.openai_schema`` writes it: pydantic's schema of a model named
    ``parameters`` (field title = ``name.title()`` with spaces, every argument required, no
    ``required`` key when there is none)."""
    props = {}
    for pname, pdesc, *ptype in params:
        prop: dict[str, Any] = {"description": pdesc}
        if ptype == ["array"]:
            prop["items"] = {"type": "string"}
        prop.update({"title": pname.title().replace("_", " "), "type": ptype[0] if ptype else "string"})
        props[pname] = prop
    schema: dict[str, Any] = {"properties": props}
    if props:
        schema["required"] = list(props)
    schema.update({"title": "parameters", "type": "object"})
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


# τ²-bench's texts (MIT), from the docstrings of src/tau2/domains/retail/tools.py at commit a2c0247.
_T2_ORDER = (
    "The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id."
)
_T2_ADDRESS = [
    ("address1", "The first line of the address, such as '123 Main St'."),
    ("address2", "The second line of the address, such as 'Apt 1' or ''."),
    ("city", "The city, such as 'San Francisco'."),
    ("state", "The state, such as 'CA'."),
    ("country", "The country, such as 'USA'."),
    ("zip", "The zip code, such as '12345'."),
]
TAU2_TOOL_SPECS: list[dict] = [
    _t2(
        "calculate",
        "Calculate the result of a mathematical expression.",
        [
            (
                "expression",
                "The mathematical expression to calculate, such as '2 + 2'. The expression can contain"
                " numbers, operators (+, -, *, /), parentheses, and spaces.",
            )
        ],
    ),
    _t2(
        "cancel_pending_order",
        "Cancel a pending order. If the order is already processed or delivered,\n\nit cannot be"
        " cancelled. The agent needs to explain the cancellation detail\nand ask for explicit user"
        " confirmation (yes/no) to proceed. If the user confirms,\nthe order status will be"
        " changed to 'cancelled' and the payment will be refunded.\nThe refund will be added to"
        " the user's gift card balance immediately if the payment\nwas made using a gift card,"
        " otherwise the refund would take 5-7 business days to process.\nThe function returns the"
        " order details after the cancellation.",
        [
            ("order_id", _T2_ORDER),
            (
                "reason",
                "The reason for cancellation, which should be either 'no longer needed' or 'ordered by"
                " mistake'.",
            ),
        ],
    ),
    _t2(
        "exchange_delivered_order_items",
        "Exchange items in a delivered order to new items of the same product type.\n\nFor a"
        " delivered order, return or exchange can be only done once by the agent.\nThe agent needs"
        " to explain the exchange detail and ask for explicit user confirmation (yes/no) to"
        " proceed.",
        [
            ("order_id", _T2_ORDER),
            (
                "item_ids",
                "The item ids to be exchanged, each such as '1008292230'. There could be duplicate items"
                " in the list.",
                "array",
            ),
            (
                "new_item_ids",
                "The item ids to be exchanged for, each such as '1008292230'.\nThere could be duplicate"
                " items in the list. Each new item id should match the item id\nin the same position and"
                " be of the same product.",
                "array",
            ),
            (
                "payment_method_id",
                "The payment method id to pay or receive refund for the item price difference,\nsuch as"
                " 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up\nfrom the user or"
                " order details.",
            ),
        ],
    ),
    _t2(
        "find_user_id_by_name_zip",
        "Find user id by first name, last name, and zip code. If the user is not found, the"
        " function\n\nwill return an error message. By default, find user id by email, and only"
        " call this function\nif the user is not found by email or cannot remember email.",
        [
            ("first_name", "The first name of the customer, such as 'John'."),
            ("last_name", "The last name of the customer, such as 'Doe'."),
            ("zip", "The zip code of the customer, such as '12345'."),
        ],
    ),
    _t2(
        "find_user_id_by_email",
        "Find user id by email. If the user is not found, the function will return an error message.",
        [("email", "The email of the user, such as 'something@example.com'.")],
    ),
    _t2("get_order_details", "Get the status and details of an order.", [("order_id", _T2_ORDER)]),
    _t2(
        "get_product_details",
        "Get the inventory details of a product.",
        [
            (
                "product_id",
                "The product id, such as '6086499569'. Be careful the product id is different from the"
                " item id.",
            )
        ],
    ),
    _t2(
        "get_item_details",
        "Get the inventory details of an item.",
        [
            (
                "item_id",
                "The item id, such as '6086499569'. Be careful the item id is different from the product id.",
            )
        ],
    ),
    _t2(
        "get_user_details",
        "Get the details of a user, including their orders.",
        [("user_id", "The user id, such as 'sara_doe_496'.")],
    ),
    _t2(
        "list_all_product_types",
        "List the name and product id of all product types.\n\nEach product type has a variety of"
        " different items with unique item ids and options.\nThere are only 50 product types in"
        " the store.",
        [],
    ),
    _t2(
        "modify_pending_order_address",
        "Modify the shipping address of a pending order. The agent needs to explain the"
        " modification detail and ask for explicit user confirmation (yes/no) to proceed.",
        [("order_id", _T2_ORDER), *_T2_ADDRESS],
    ),
    _t2(
        "modify_pending_order_items",
        "Modify items in a pending order to new items of the same product type. For a pending"
        " order, this function can only be called once. The agent needs to explain the exchange"
        " detail and ask for explicit user confirmation (yes/no) to proceed.",
        [
            ("order_id", _T2_ORDER),
            (
                "item_ids",
                "The item ids to be modified, each such as '1008292230'. There could be duplicate items"
                " in the list.",
                "array",
            ),
            (
                "new_item_ids",
                "The item ids to be modified for, each such as '1008292230'. There could be duplicate"
                " items in the list. Each new item id should match the item id in the same position and"
                " be of the same product.",
                "array",
            ),
            (
                "payment_method_id",
                "The payment method id to pay or receive refund for the item price difference, such as"
                " 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or"
                " order details.",
            ),
        ],
    ),
    _t2(
        "modify_pending_order_payment",
        "Modify the payment method of a pending order. The agent needs to explain the"
        " modification detail and ask for explicit user confirmation (yes/no) to proceed.",
        [
            ("order_id", _T2_ORDER),
            (
                "payment_method_id",
                "The payment method id to pay or receive refund for the item price difference, such as"
                " 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or"
                " order details.",
            ),
        ],
    ),
    _t2(
        "modify_user_address",
        "Modify the default address of a user. The agent needs to explain the modification detail"
        " and ask for explicit user confirmation (yes/no) to proceed.",
        [("user_id", "The user id, such as 'sara_doe_496'."), *_T2_ADDRESS],
    ),
    _t2(
        "return_delivered_order_items",
        "Return some items of a delivered order.\n\nThe order status will be changed to 'return"
        " requested'.\nThe agent needs to explain the return detail and ask for explicit user"
        " confirmation (yes/no) to proceed.\nThe user will receive follow-up email for how and"
        " where to return the item.",
        [
            ("order_id", _T2_ORDER),
            (
                "item_ids",
                "The item ids to be returned, each such as '1008292230'. There could be duplicate items"
                " in the list.",
                "array",
            ),
            (
                "payment_method_id",
                "The payment method id to pay or receive refund for the item price difference, such as"
                " 'gift_card_0000000' or 'credit_card_0000000'.\nThese can be looked up from the user or"
                " order details.",
            ),
        ],
    ),
    _t2(
        "transfer_to_human_agents",
        "Transfer the user to a human agent, with a summary of the user's issue.\n\nOnly transfer"
        " if\n -  the user explicitly asks for a human agent\n -  given the policy and the"
        " available tools, you cannot solve the user's issue.",
        [("summary", "A summary of the user's issue.")],
    ),
]
TOOL_SPECS = TAU2_TOOL_SPECS
TOOL_TEXTS = ("tau2", "short")


def tool_specs(texts: str = "tau2") -> list[dict]:
    """The tool specs an agent is given: ``"tau2"`` (τ²-bench's own, the default) or ``"short"``
    (the project's one-line texts for small local models)."""
    if texts == "tau2":
        return TAU2_TOOL_SPECS
    if texts == "short":
        return SHORT_TOOL_SPECS
    raise ValueError(
        f"tool_texts {texts!r}: use 'tau2' (tau2-bench's tool descriptions, the default) or "
        f"'short' (the project's one-line descriptions, for small local models)"
    )


TOOL_NAMES = tuple(s["function"]["name"] for s in TOOL_SPECS)
WRITE_TOOLS = frozenset({"cancel_pending_order", "modify_pending_order_items", "modify_pending_order_address",
                         "modify_pending_order_payment", "modify_user_address", "return_delivered_order_items",
                         "exchange_delivered_order_items"})  # fmt: skip
READ_TOOLS = frozenset(TOOL_NAMES) - WRITE_TOOLS - {"transfer_to_human_agents", "calculate"}
