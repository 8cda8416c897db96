"""The τ²-retail tools (τ²-bench ``domains/retail/tools.py``, written from ``policy.md`` and the
tools' published behaviour, not copied): look-ups (users by email or name + zip, users, orders,
products, items, product types), ``calculate``, the writes (cancel / modify items / address /
payment of *pending* orders, return / exchange of *delivered* orders, the user's default address)
with their rules (status, one items-modification per order, same product and available variants,
the payment method must belong to the user, gift cards must cover what they pay, refunds of a
return go to the original method or a gift card), and ``transfer_to_human_agents``. A rule
violation is a tool error ("Error: ..." as the tool result). :data:`TOOL_SPECS` are their OpenAI
function specs. One deliberate difference from the published code: a multi-item modification
prices every item at its own new variant.
"""

from __future__ import annotations

import ast
import copy
import json
import operator
from collections.abc import Mapping, Sequence
from typing import Any

from .data_model import RetailDB

__all__ = [
    "CANCEL_REASONS", "READ_TOOLS", "TOOL_NAMES", "TOOL_SPECS", "WRITE_TOOLS", "RetailTools", "ToolError",
    "replay_actions", "tool_content",
]  # fmt: skip


class ToolError(ValueError):
    """A retail tool refused the call (bad arguments or a policy rule)."""


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


TOOL_SPECS: list[dict] = [
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
TOOL_NAMES = tuple(s["function"]["name"] for s in TOOL_SPECS)
_PARAMS = {s["function"]["name"]: s["function"]["parameters"] for s in TOOL_SPECS}
WRITE_TOOLS = frozenset({"cancel_pending_order", "modify_pending_order_items", "modify_pending_order_address",
                         "modify_pending_order_payment", "modify_user_address", "return_delivered_order_items",
                         "exchange_delivered_order_items"})  # fmt: skip
READ_TOOLS = frozenset(TOOL_NAMES) - WRITE_TOOLS - {"transfer_to_human_agents", "calculate"}
CANCEL_REASONS = ("no longer needed", "ordered by mistake")

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _arith(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _arith(node.body)
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_arith(node.left), _arith(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _arith(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    raise ToolError("Invalid expression")


class RetailTools:
    """The retail tools over one :class:`RetailDB`. :meth:`execute` never raises: it returns
    ``(ok, result)`` with ``result`` the returned object or the error text."""

    def __init__(self, db: RetailDB):
        self.db = db

    # -- dispatch ----------------------------------------------------------------------------------
    def execute(self, name: str, arguments: Mapping[str, Any] | None) -> tuple[bool, Any]:
        try:
            return True, self.call(name, arguments or {})
        except ToolError as e:
            return False, str(e)

    def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        if name not in _PARAMS:
            raise ToolError(f"Unknown tool {name!r}")
        if not isinstance(arguments, Mapping):
            raise ToolError(f"{name}: arguments must be an object")
        spec = _PARAMS[name]
        missing = [k for k in spec["required"] if k not in arguments]
        if missing:
            raise ToolError(f"{name}: missing argument(s) {missing}")
        extra = sorted(set(arguments) - set(spec["properties"]))
        if extra:
            raise ToolError(f"{name}: unexpected argument(s) {extra}")
        args = {}
        for k, v in arguments.items():
            if spec["properties"][k]["type"] == "array":
                if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                    raise ToolError(f"{name}: {k} must be a list of strings")
            elif not isinstance(v, str):
                v = str(v)
            args[k] = v
        return getattr(self, name)(**args)

    # -- helpers -----------------------------------------------------------------------------------
    def _order(self, order_id: str) -> dict:
        o = self.db.get("orders", order_id)
        if o is None:
            raise ToolError("Order not found")
        return o

    def _user(self, user_id: str) -> dict:
        u = self.db.get("users", user_id)
        if u is None:
            raise ToolError("User not found")
        return u

    def _product(self, product_id: str) -> dict:
        p = self.db.get("products", product_id)
        if p is None:
            raise ToolError("Product not found")
        return p

    def _payment_method(self, user_id: str, pm_id: str) -> dict:
        pm = self._user(user_id)["payment_methods"].get(pm_id)
        if pm is None:
            raise ToolError("Payment method not found")
        return pm

    @staticmethod
    def _is_gift_card(pm: Mapping) -> bool:
        return pm.get("source") == "gift_card"

    def _gift_card_add(self, user_id: str, pm_id: str, amount: float) -> None:
        pm = self.db.mut("users", user_id)["payment_methods"][pm_id]
        pm["balance"] = round(float(pm.get("balance", 0.0)) + amount, 2)

    @staticmethod
    def _count_check(order: Mapping, item_ids: Sequence[str]) -> None:
        have = [it["item_id"] for it in order["items"]]
        for iid in item_ids:
            if item_ids.count(iid) > have.count(iid):
                raise ToolError(f"Item {iid} not found in the order (or listed more often than ordered)")

    def _swaps(self, order: Mapping, item_ids: Sequence[str], new_item_ids: Sequence[str],
               allow_same: bool) -> tuple[list[tuple[int, dict]], float]:  # fmt: skip
        """(order item index, new variant) per swap and the summed price difference."""
        self._count_check(order, item_ids)
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        used: set[int] = set()
        swaps, diff = [], 0.0
        for old, new in zip(item_ids, new_item_ids, strict=True):
            if old == new and not allow_same:
                raise ToolError("The new item id should be different from the old item id")
            idx = next(i for i, it in enumerate(order["items"]) if it["item_id"] == old and i not in used)
            used.add(idx)
            item = order["items"][idx]
            variant = self._product(item["product_id"])["variants"].get(new)
            if variant is None or not variant.get("available"):
                raise ToolError(f"New item {new} not found or available")
            swaps.append((idx, variant))
            diff += float(variant["price"]) - float(item["price"])
        return swaps, round(diff, 2)

    # -- read tools --------------------------------------------------------------------------------
    def find_user_id_by_email(self, email: str) -> str:
        want = email.strip().casefold()
        for uid in self.db.keys("users"):
            if str(self.db.record("users", uid).get("email", "")).casefold() == want:
                return uid
        raise ToolError("User not found")

    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        f, last = first_name.strip().casefold(), last_name.strip().casefold()
        for uid in self.db.keys("users"):
            u = self.db.record("users", uid)
            if (u["name"]["first_name"].casefold() == f and u["name"]["last_name"].casefold() == last
                    and u["address"]["zip"] == zip.strip()):  # fmt: skip
                return uid
        raise ToolError("User not found")

    def get_user_details(self, user_id: str) -> dict:
        return self._user(user_id)

    def get_order_details(self, order_id: str) -> dict:
        return self._order(order_id)

    def get_product_details(self, product_id: str) -> dict:
        return self._product(product_id)

    def get_item_details(self, item_id: str) -> dict:
        for pid in self.db.keys("products"):
            v = self.db.record("products", pid)["variants"].get(item_id)
            if v is not None:
                return v
        raise ToolError("Item not found")

    def list_all_product_types(self) -> str:
        names = {self.db.record("products", pid)["name"]: pid for pid in self.db.keys("products")}
        return json.dumps(dict(sorted(names.items())))

    def calculate(self, expression: str) -> str:
        if not expression.strip() or not all(c in "0123456789+-*/(). " for c in expression):
            raise ToolError("Invalid characters in expression")
        try:
            value = _arith(ast.parse(expression, mode="eval"))
        except (SyntaxError, ZeroDivisionError) as e:
            raise ToolError(f"Invalid expression: {e}") from None
        return str(round(value, 2))

    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # -- write tools -------------------------------------------------------------------------------
    def cancel_pending_order(self, order_id: str, reason: str) -> dict:
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise ToolError(f"Invalid reason; use one of {list(CANCEL_REASONS)}")
        order = self.db.mut("orders", order_id)
        refunds = []
        for pay in order["payment_history"]:
            pm = self._payment_method(order["user_id"], pay["payment_method_id"])
            refunds.append({"transaction_type": "refund", "amount": pay["amount"],
                            "payment_method_id": pay["payment_method_id"]})  # fmt: skip
            if self._is_gift_card(pm):
                self._gift_card_add(order["user_id"], pay["payment_method_id"], float(pay["amount"]))
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return order

    def modify_pending_order_items(self, order_id: str, item_ids: list, new_item_ids: list,
                                   payment_method_id: str) -> dict:  # fmt: skip
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be modified (items can be modified only once)")
        swaps, diff = self._swaps(order, item_ids, new_item_ids, allow_same=False)
        pm = self._payment_method(order["user_id"], payment_method_id)
        if self._is_gift_card(pm) and float(pm.get("balance", 0.0)) < diff:
            raise ToolError("Insufficient gift card balance to pay for the new item")
        order = self.db.mut("orders", order_id)
        order["payment_history"].append({"transaction_type": "payment" if diff > 0 else "refund",
                                         "amount": abs(diff), "payment_method_id": payment_method_id})  # fmt: skip
        if self._is_gift_card(pm):
            self._gift_card_add(order["user_id"], payment_method_id, -diff)
        for idx, variant in swaps:
            item = order["items"][idx]
            item["item_id"], item["price"] = variant["item_id"], variant["price"]
            item["options"] = copy.deepcopy(variant["options"])
        order["status"] = "pending (item modified)"
        return order

    def modify_pending_order_address(self, order_id: str, address1: str, address2: str, city: str, state: str,
                                     country: str, zip: str) -> dict:  # fmt: skip
        if "pending" not in self._order(order_id)["status"]:
            raise ToolError("Non-pending order cannot be modified")
        order = self.db.mut("orders", order_id)
        order["address"] = {"address1": address1, "address2": address2, "city": city, "country": country,
                            "state": state, "zip": zip}  # fmt: skip
        return order

    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> dict:
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified")
        pm = self._payment_method(order["user_id"], payment_method_id)
        hist = order["payment_history"]
        if len(hist) != 1 or hist[0]["transaction_type"] != "payment":
            raise ToolError("There should be exactly one payment for a pending order")
        old_id, amount = hist[0]["payment_method_id"], float(hist[0]["amount"])
        if old_id == payment_method_id:
            raise ToolError("The new payment method should be different from the current one")
        if self._is_gift_card(pm) and float(pm.get("balance", 0.0)) < amount:
            raise ToolError("Insufficient gift card balance to pay for the order")
        order = self.db.mut("orders", order_id)
        order["payment_history"].extend([
            {"transaction_type": "payment", "amount": hist[0]["amount"], "payment_method_id": payment_method_id},
            {"transaction_type": "refund", "amount": hist[0]["amount"], "payment_method_id": old_id},
        ])  # fmt: skip
        if self._is_gift_card(pm):
            self._gift_card_add(order["user_id"], payment_method_id, -amount)
        if self._is_gift_card(self._payment_method(order["user_id"], old_id)):
            self._gift_card_add(order["user_id"], old_id, amount)
        return order

    def modify_user_address(self, user_id: str, address1: str, address2: str, city: str, state: str,
                            country: str, zip: str) -> dict:  # fmt: skip
        self._user(user_id)
        user = self.db.mut("users", user_id)
        user["address"] = {"address1": address1, "address2": address2, "city": city, "country": country,
                           "state": state, "zip": zip}  # fmt: skip
        return user

    def return_delivered_order_items(self, order_id: str, item_ids: list, payment_method_id: str) -> dict:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be returned")
        pm = self._payment_method(order["user_id"], payment_method_id)
        if (
            not self._is_gift_card(pm)
            and payment_method_id != order["payment_history"][0]["payment_method_id"]
        ):
            raise ToolError("Payment method should be the original payment method or a gift card")
        self._count_check(order, item_ids)
        order = self.db.mut("orders", order_id)
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return order

    def exchange_delivered_order_items(self, order_id: str, item_ids: list, new_item_ids: list,
                                       payment_method_id: str) -> dict:  # fmt: skip
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be exchanged")
        _, diff = self._swaps(order, item_ids, new_item_ids, allow_same=True)
        pm = self._payment_method(order["user_id"], payment_method_id)
        if self._is_gift_card(pm) and float(pm.get("balance", 0.0)) < diff:
            raise ToolError("Insufficient gift card balance to pay for the price difference")
        order = self.db.mut("orders", order_id)
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff
        return order


def tool_content(ok: bool, result: Any) -> str:
    """A tool result as the message content the agent sees (τ²-bench: errors as "Error: ...")."""
    if not ok:
        return f"Error: {result}"
    return result if isinstance(result, str) else json.dumps(result)


def replay_actions(base_db: Mapping[str, dict], actions: Sequence[Mapping]) -> tuple[RetailDB, list[str]]:
    """Run ``actions`` (``{"name", "arguments"}``) on a fresh copy; the database and the errors."""
    db = RetailDB(base_db)
    tools = RetailTools(db)
    errors = []
    for a in actions:
        ok, res = tools.execute(a["name"], a.get("arguments") or {})
        if not ok:
            errors.append(f"{a.get('action_id', a['name'])}: {a['name']}: {res}")
    return db, errors
