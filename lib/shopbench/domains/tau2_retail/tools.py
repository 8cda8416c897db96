"""The τ²-retail tools as τ²-bench's ``src/tau2/domains/retail/tools.py`` (MIT) runs them, written
from its published behaviour, not copied: look-ups (users by email or name + zip, users, orders,
products, items, product types), ``calculate``, the writes (cancel / modify items / address /
payment of *pending* orders, return / exchange of *delivered* orders, the user's default address)
and ``transfer_to_human_agents``. A refused call is a tool error, "Error: <text>" as the tool
result.

The tool specs an LLM agent sees (names, descriptions, parameters) are in :mod:`.specs`.

Two fidelities (:data:`FIDELITIES`), chosen with :func:`make_tools`:

- ``"tau2"`` (default), :class:`RetailTools`: τ²-bench's behaviour, step for step, so that the
  same calls give byte-identical tool outputs, the same error texts and the same final database
  (checked against fixtures computed by running τ²-bench's own code:
  ``reference/tau2_retail_replay.jsonl``, shown by :func:`.fidelity.fidelity_table`). That includes its quirks: a multi-item
  ``modify_pending_order_items`` gives every modified item the *last* new variant's price and
  options; the price difference is stored unrounded (``121.20000000000005``); any exception is the
  tool's error (Python's own ``TypeError`` text for a missing or unexpected argument,
  "RetailTools.calculate() missing 1 required positional argument: 'expression'");
  ``calculate`` evaluates ``**`` and ``//``; a write can fail half-way after changing a gift card.
- ``"corrected"``, :class:`CorrectedRetailTools`: the project's fixes, each listed in
  :data:`CORRECTIONS` with what it changes (``CorrectedRetailTools(db, corrections=(name, ...))``
  switches them one by one; :func:`.fidelity.fidelity_table` counts what each changes alone). Use it
  only where a result need not be comparable with published τ²-bench numbers.

Where the ``"tau2"`` tools knowingly differ: ``calculate`` refuses an integer power whose result
would exceed about 100,000 bits (τ²-bench's ``eval`` would compute it for minutes or run out of
memory before ``float()`` overflows), answering with the ``OverflowError`` text ``float()`` gives
for it, and answers "Invalid expression" for a ``**`` inside a call such as ``(2**3)(1)`` (eval:
"'int' object is not callable"). A non-string address argument fails with pydantic's validation
text, whose link names the installed pydantic version (2.14 here and in the fixtures).
"""

from __future__ import annotations

import ast
import copy
import json
import math
import operator
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from .data_model import RetailDB
from .specs import TOOL_NAMES, TOOL_SPECS

__all__ = [
    "CANCEL_REASONS", "CORRECTIONS", "FIDELITIES",
    "CorrectedRetailTools", "RetailTools", "ToolError", "check_fidelity", "make_tools", "replay_actions",
    "tool_content",
]  # fmt: skip


class ToolError(ValueError):
    """A retail tool refused the call (bad arguments or a policy rule); τ²-bench raises ``ValueError``."""


_PARAMS = {s["function"]["name"]: s["function"]["parameters"] for s in TOOL_SPECS}
CANCEL_REASONS = ("no longer needed", "ordered by mistake")


FIDELITIES = ("tau2", "corrected")
CORRECTIONS: dict[str, str] = {
    "per_item_variant": (
        "modify_pending_order_items with several items: each modified item takes its own new variant's price and "
        "options. tau2-bench sets every modified item's price and options to those of the last new variant in "
        "the list (its second loop reuses the variable of the first), so the order's items no longer add up to "
        "what was charged (tasks 20, 21, 36, 37, 100)."),
    "rounded_difference": (
        "modify_pending_order_items: the price difference is rounded to cents before it is stored in "
        "payment_history and charged to or refunded from a gift card. tau2-bench stores the raw float sum "
        "(task 101, order #W4219264: 121.20000000000005)."),
    "distinct_lines": (
        "modify_pending_order_items / exchange_delivered_order_items with a repeated item id: each listed id "
        "takes its own order line. tau2-bench prices every repeat at the first line with that id."),
    "checked_arguments": (
        "every call's arguments are checked against the tool's spec first: a missing, unexpected or mistyped "
        "argument is an error naming it and the tool ('get_order_details: missing argument(s) [\'order_id\']'), "
        "numbers given for string fields are read as strings. tau2-bench passes the arguments to the Python "
        "method: Python's TypeError text ('RetailTools.get_order_details() missing 1 required positional "
        "argument: \'order_id\''), and a wrong type fails wherever the method trips on it."),
    "atomic_writes": (
        "a write that fails changes nothing: cancel_pending_order and modify_pending_order_payment look up "
        "every payment method before touching a gift card. tau2-bench can refund or charge a gift card and "
        "then fail on a later payment method."),
    "trimmed_lookups": (
        "find_user_id_by_email / find_user_id_by_name_zip ignore surrounding spaces and compare case-folded. "
        "tau2-bench compares .lower() without trimming: ' sara@example.com' is 'User not found'."),
    "arithmetic_only": (
        "calculate evaluates numbers, + - * / and parentheses, as its description says. tau2-bench evals the "
        "expression: '2**3' is 8.0, '7//2' is 3.0."),
    "explained_errors": (
        "error texts name the fix: an invalid cancel reason lists the two reasons; an item not in the order says "
        "so; a second items-modification says items can be modified only once; a refund to another card says a "
        "gift card is allowed. tau2-bench: 'Invalid reason', '<id> not found', 'Non-pending order cannot be "
        "modified', 'Payment method should be the original payment method'."),
}  # fmt: skip


def check_fidelity(fidelity: str) -> str:
    if fidelity not in FIDELITIES:
        raise ValueError(f"fidelity {fidelity!r}: use 'tau2' (tau2-bench's behaviour, the default) or "
                         f"'corrected' (the project's fixes: {', '.join(CORRECTIONS)})")  # fmt: skip
    return fidelity


class UserAddress(BaseModel):
    """τ²-bench's ``UserAddress`` (field order and string types): the address tools build one, so a
    non-string argument fails with pydantic's own validation text, as there."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


_POW_BITS = 100_000  # an integer power beyond this many bits cannot become a float (see the module docstring)
_BINOPS: dict[type, Any] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                            ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}  # fmt: skip


def _has_pow(node: ast.AST) -> bool:
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) for n in ast.walk(node))


def _guarded_eval(node: ast.AST) -> Any:
    """Python's own arithmetic on a parsed expression that contains ``**`` (same values, same
    exception texts), refusing an integer power too large to ever become a float."""
    if isinstance(node, ast.Expression):
        return _guarded_eval(node.body)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _guarded_eval(node.left), _guarded_eval(node.right)
        if (
            isinstance(node.op, ast.Pow)
            and type(left) is int
            and type(right) is int
            and right > 0
            and abs(left) > 1
        ):
            if right * math.log2(abs(left)) > _POW_BITS:
                raise OverflowError("int too large to convert to float")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _guarded_eval(node.operand)
        return -v if isinstance(node.op, ast.USub) else +v
    if not _has_pow(node):  # a part without a power: Python's eval, as tau2-bench (no names can occur)
        expr = ast.Expression(body=node)  # type: ignore[arg-type]  # node is an expression node here
        return eval(compile(expr, "<string>", "eval"), {"__builtins__": None}, {})
    raise ValueError("Invalid expression")


class RetailTools:
    """τ²-bench's retail tools over one :class:`RetailDB` (see the module docstring).
    :meth:`execute` never raises: it returns ``(ok, result)`` with ``result`` the returned object
    or the error text (τ²-bench's ``Environment.get_response``: any exception is the error)."""

    fidelity = "tau2"

    def __init__(self, db: RetailDB):
        self.db = db

    # -- dispatch (tau2-bench: Environment.get_response -> make_tool_call -> ToolKitBase.use_tool) ---------
    def execute(self, name: str, arguments: Mapping[str, Any] | None) -> tuple[bool, Any]:
        try:
            return True, self.call(name, arguments if arguments is not None else {})
        except Exception as e:  # noqa: BLE001 - tau2-bench turns every exception into the tool's error
            return False, str(e)

    def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        if not isinstance(arguments, Mapping):
            raise ToolError(f"{name}: arguments must be an object")
        if "requestor" in arguments:  # make_tool_call(name, requestor=..., **arguments)
            raise TypeError("tau2.environment.environment.Environment.make_tool_call() got multiple values for "
                            "keyword argument 'requestor'")  # fmt: skip
        for clash in ("self", "tool_name"):
            if clash in arguments:
                raise TypeError(f"Environment.make_tool_call() got multiple values for argument '{clash}'")
        if name not in _PARAMS:
            raise ToolError(f"Tool '{name}' not found.")
        return getattr(self, name)(**arguments)

    # -- getters (tau2-bench's _get_order, _get_user, _get_product, _get_variant, _get_payment_method) ----
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

    def _variant(self, product_id: str, variant_id: str) -> dict:
        variants = self._product(product_id)["variants"]
        if variant_id not in variants:
            raise ToolError("Variant not found")
        return variants[variant_id]

    def _payment_method(self, user_id: str, pm_id: str) -> dict:
        pms = self._user(user_id)["payment_methods"]
        if pm_id not in pms:
            raise ToolError("Payment method not found")
        return pms[pm_id]

    @staticmethod
    def _is_gift_card(pm: Mapping) -> bool:
        return pm.get("source") == "gift_card"

    def _gift_card_add(self, user_id: str, pm_id: str, amount: float) -> None:
        """balance += amount, then rounded to cents (as τ²-bench does after every gift-card change)."""
        pm = self.db.mut("users", user_id)["payment_methods"][pm_id]
        pm["balance"] = round(pm["balance"] + amount, 2)

    @staticmethod
    def _first_line(order: Mapping, item_id: str) -> dict | None:
        return next((it for it in order["items"] if it["item_id"] == item_id), None)

    # -- read tools --------------------------------------------------------------------------------
    def find_user_id_by_email(self, email: str) -> str:
        for uid in self.db.keys("users"):
            if self.db.record("users", uid)["email"].lower() == email.lower():
                return uid
        raise ToolError("User not found")

    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        for uid in self.db.keys("users"):
            u = self.db.record("users", uid)
            if (u["name"]["first_name"].lower() == first_name.lower() and u["name"]["last_name"].lower() == last_name.lower()
                    and u["address"]["zip"] == zip):  # fmt: skip
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
            variants = self.db.record("products", pid)["variants"]
            if item_id in variants:
                return variants[item_id]
        raise ToolError("Item not found")

    def list_all_product_types(self) -> str:
        names = {self.db.record("products", pid)["name"]: self.db.record("products", pid)["product_id"]
                 for pid in self.db.keys("products")}  # fmt: skip
        return json.dumps(names, sort_keys=True)

    def calculate(self, expression: str) -> str:
        """τ²-bench: ``str(round(float(eval(expression, {"__builtins__": None}, {})), 2))`` after a
        character check; here Python's parser and arithmetic, with the power guard of the module
        docstring."""
        if not all(char in "0123456789+-*/(). " for char in expression):
            raise ToolError("Invalid characters in expression")
        with warnings.catch_warnings():  # "(1)(2)": Python warns "perhaps you missed a comma?"
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(
                expression.lstrip(" \t"), "<string>", mode="eval"
            )  # eval() strips leading blanks
            value = _guarded_eval(tree)
        return str(round(float(value), 2))

    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # -- write tools (each step in tau2-bench's order, so a failure leaves what it leaves there) -------------
    def cancel_pending_order(self, order_id: str, reason: str) -> dict:
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be cancelled")
        if reason not in {"no longer needed", "ordered by mistake"}:
            raise ToolError("Invalid reason")
        refunds = []
        for pay in order["payment_history"]:
            pm_id = pay["payment_method_id"]
            refunds.append(
                {"transaction_type": "refund", "amount": pay["amount"], "payment_method_id": pm_id}
            )
            user = self._user(order["user_id"])
            if self._is_gift_card(self._payment_method(user["user_id"], pm_id)):
                self._gift_card_add(user["user_id"], pm_id, pay["amount"])
        order = self.db.mut("orders", order_id)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return order

    def _count_check(self, order: Mapping, item_ids: Sequence[str], message: str) -> None:
        have = [it["item_id"] for it in order["items"]]
        for iid in item_ids:
            if item_ids.count(iid) > have.count(iid):
                raise ToolError(message.format(iid=iid))

    def _price_difference(self, order: Mapping, item_ids: Sequence[str], new_item_ids: Sequence[str],
                          same_check: bool) -> tuple[Any, dict | None]:  # fmt: skip
        """The summed price difference (an int 0 when nothing is swapped) and the last new variant."""
        diff: Any = 0
        variant = None
        for old, new in zip(item_ids, new_item_ids):  # noqa: B905 - lengths were checked
            if same_check and old == new:
                raise ToolError("The new item id should be different from the old item id")
            item = self._first_line(order, old)
            if item is None:
                raise ToolError(f"Item {old} not found")
            variant = self._variant(item["product_id"], new)
            if not variant["available"]:
                raise ToolError(f"New item {new} not found or available")
            diff += variant["price"] - item["price"]
        return diff, variant

    def modify_pending_order_items(self, order_id: str, item_ids: list[str], new_item_ids: list[str],
                                   payment_method_id: str) -> dict:  # fmt: skip
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be modified")
        self._count_check(order, item_ids, "{iid} not found")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        diff, variant = self._price_difference(order, item_ids, new_item_ids, same_check=True)
        pm = self._payment_method(order["user_id"], payment_method_id)
        if self._is_gift_card(pm) and pm["balance"] < diff:
            raise ToolError("Insufficient gift card balance to pay for the new item")
        order = self.db.mut("orders", order_id)
        order["payment_history"].append({"transaction_type": "payment" if diff > 0 else "refund",
                                         "amount": float(abs(diff)), "payment_method_id": payment_method_id})  # fmt: skip
        if self._is_gift_card(pm):
            self._gift_card_add(order["user_id"], payment_method_id, -diff)
        for old, new in zip(item_ids, new_item_ids):  # noqa: B905
            item = self._first_line(order, old)
            if item is None:
                raise ToolError(f"Item {old} not found")
            assert variant is not None
            # tau2-bench: item.price = variant.price; item.options = variant.options -- the LAST variant
            item["item_id"], item["price"], item["options"] = new, variant["price"], dict(variant["options"])
        order["status"] = "pending (item modified)"
        return order

    def _address(self, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict:
        return UserAddress(address1=address1, address2=address2, city=city, state=state, country=country,
                           zip=zip).model_dump()  # fmt: skip

    def modify_pending_order_address(self, order_id: str, address1: str, address2: str, city: str, state: str,
                                     country: str, zip: str) -> dict:  # fmt: skip
        if "pending" not in self._order(order_id)["status"]:
            raise ToolError("Non-pending order cannot be modified")
        address = self._address(address1, address2, city, state, country, zip)
        order = self.db.mut("orders", order_id)
        order["address"] = address
        return order

    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> dict:
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified")
        pm = self._payment_method(order["user_id"], payment_method_id)
        hist = order["payment_history"]
        if len(hist) != 1 or hist[0]["transaction_type"] != "payment":
            raise ToolError("There should be exactly one payment for a pending order")
        if hist[0]["payment_method_id"] == payment_method_id:
            raise ToolError("The new payment method should be different from the current one")
        amount = hist[0]["amount"]
        if self._is_gift_card(pm) and pm["balance"] < amount:
            raise ToolError("Insufficient gift card balance to pay for the order")
        order = self.db.mut("orders", order_id)
        old_id = order["payment_history"][0]["payment_method_id"]
        order["payment_history"].extend([
            {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
            {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id},
        ])  # fmt: skip
        if self._is_gift_card(pm):
            self._gift_card_add(order["user_id"], payment_method_id, -amount)
        if self._is_gift_card(self._payment_method(order["user_id"], old_id)):
            self._gift_card_add(order["user_id"], old_id, amount)
        return order

    def modify_user_address(self, user_id: str, address1: str, address2: str, city: str, state: str,
                            country: str, zip: str) -> dict:  # fmt: skip
        self._user(user_id)
        address = self._address(address1, address2, city, state, country, zip)
        user = self.db.mut("users", user_id)
        user["address"] = address
        return user

    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> dict:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be returned")
        user = self._user(order["user_id"])
        pm = self._payment_method(user["user_id"], payment_method_id)
        if (
            not self._is_gift_card(pm)
            and payment_method_id != order["payment_history"][0]["payment_method_id"]
        ):
            raise ToolError(self._msg_return_pm)
        self._count_check(order, item_ids, self._msg_return_item)
        order = self.db.mut("orders", order_id)
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return order

    _msg_return_pm = "Payment method should be the original payment method"
    _msg_return_item = "Some item not found"

    def exchange_delivered_order_items(self, order_id: str, item_ids: list[str], new_item_ids: list[str],
                                       payment_method_id: str) -> dict:  # fmt: skip
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be exchanged")
        self._count_check(order, item_ids, "Number of {iid} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match.")
        diff, _ = self._price_difference(order, item_ids, new_item_ids, same_check=False)
        diff = round(diff, 2)
        pm = self._payment_method(order["user_id"], payment_method_id)
        if self._is_gift_card(pm) and pm["balance"] < diff:
            raise ToolError("Insufficient gift card balance to pay for the price difference")
        order = self.db.mut("orders", order_id)
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff
        return order


_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _arith(node: ast.AST) -> float:
    """``+ - * /``, parentheses and numbers only (the :data:`CORRECTIONS` ``arithmetic_only``)."""
    if isinstance(node, ast.Expression):
        return _arith(node.body)
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        return _ARITH[type(node.op)](_arith(node.left), _arith(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _arith(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    raise ToolError("Invalid expression: use numbers, + - * / and parentheses")


class CorrectedRetailTools(RetailTools):
    """The tools with the project's corrections (:data:`CORRECTIONS`); only errors the tools raise on
    purpose (:class:`ToolError`) are tool errors, anything else is a bug and propagates.

    ``corrections`` (default: all of :data:`CORRECTIONS`) switches them one by one, so that what each
    changes can be measured alone (:mod:`.fidelity`); with none, the tools behave as :class:`RetailTools`
    (τ²-bench), which ``tests/test_tau2_fidelity.py`` checks on every fixture call."""

    fidelity = "corrected"

    def __init__(self, db: RetailDB, corrections: Iterable[str] | None = None):
        super().__init__(db)
        chosen = frozenset(CORRECTIONS if corrections is None else corrections)
        unknown = sorted(chosen - set(CORRECTIONS))
        if unknown:
            raise ValueError(f"corrections {unknown}: use names of CORRECTIONS ({', '.join(CORRECTIONS)})")
        self.corrections = chosen
        self._msg_return_pm = self._say(RetailTools._msg_return_pm,
                                        "Payment method should be the original payment method or a gift card")  # fmt: skip
        self._msg_item = "Item {iid} not found in the order (or listed more often than ordered)"
        self._msg_return_item = self._say(RetailTools._msg_return_item, self._msg_item)

    def _on(self, correction: str) -> bool:
        return correction in self.corrections

    def _say(self, tau2_text: str, explained_text: str) -> str:  # explained_errors
        return explained_text if self._on("explained_errors") else tau2_text

    def execute(self, name: str, arguments: Mapping[str, Any] | None) -> tuple[bool, Any]:
        if self.corrections != frozenset(CORRECTIONS):  # τ²-bench's parts raise Python errors as tool errors
            return super().execute(name, arguments)
        try:
            return True, self.call(name, arguments or {})
        except ToolError as e:
            return False, str(e)

    def call(self, name: str, arguments: Mapping[str, Any]) -> Any:  # checked_arguments
        if not self._on("checked_arguments"):
            try:
                return super().call(name, arguments)
            except TypeError as e:  # Python names the method's class; tau2-bench's is RetailTools
                own = f"{type(self).__name__}.{name}()"
                if str(e).startswith(own):
                    raise TypeError(f"RetailTools.{str(e)[len(type(self).__name__) + 1 :]}") from None
                raise
        if name not in _PARAMS:
            raise ToolError(f"Unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}")
        if not isinstance(arguments, Mapping):
            raise ToolError(f"{name}: arguments must be an object")
        spec = _PARAMS[name]
        missing = [k for k in spec.get("required", []) if k not in arguments]
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
            elif isinstance(v, dict | list):
                raise ToolError(f"{name}: {k} must be a string")
            elif not isinstance(v, str):
                v = str(v)
            args[k] = v
        return getattr(self, name)(**args)

    def find_user_id_by_email(self, email: str) -> str:  # trimmed_lookups
        if not self._on("trimmed_lookups"):
            return super().find_user_id_by_email(email)
        want = email.strip().casefold()
        for uid in self.db.keys("users"):
            if str(self.db.record("users", uid)["email"]).casefold() == want:
                return uid
        raise ToolError("User not found")

    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:  # trimmed_lookups
        if not self._on("trimmed_lookups"):
            return super().find_user_id_by_name_zip(first_name, last_name, zip)
        f, last = first_name.strip().casefold(), last_name.strip().casefold()
        for uid in self.db.keys("users"):
            u = self.db.record("users", uid)
            if (u["name"]["first_name"].casefold() == f and u["name"]["last_name"].casefold() == last
                    and u["address"]["zip"] == zip.strip()):  # fmt: skip
                return uid
        raise ToolError("User not found")

    def calculate(self, expression: str) -> str:  # arithmetic_only
        if not self._on("arithmetic_only"):
            return super().calculate(expression)
        if not expression.strip() or not all(c in "0123456789+-*/(). " for c in expression):
            raise ToolError("Invalid characters in expression")
        try:
            value = _arith(ast.parse(expression.strip(), mode="eval"))
        except (SyntaxError, ZeroDivisionError) as e:
            raise ToolError(f"Invalid expression: {e}") from None
        return str(round(value, 2))

    def cancel_pending_order(self, order_id: str, reason: str) -> dict:  # atomic_writes, explained_errors
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise ToolError(self._say("Invalid reason", f"Invalid reason; use one of {list(CANCEL_REASONS)}"))
        if not self._on("atomic_writes"):
            return super().cancel_pending_order(order_id, reason)
        pms = [
            self._payment_method(order["user_id"], p["payment_method_id"]) for p in order["payment_history"]
        ]
        order = self.db.mut("orders", order_id)
        refunds = []
        for pay, pm in zip(order["payment_history"], pms, strict=True):
            refunds.append({"transaction_type": "refund", "amount": pay["amount"],
                            "payment_method_id": pay["payment_method_id"]})  # fmt: skip
            if self._is_gift_card(pm):
                self._gift_card_add(order["user_id"], pay["payment_method_id"], float(pay["amount"]))
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return order

    def _swaps(self, order: Mapping, item_ids: Sequence[str], new_item_ids: Sequence[str],
               same_check: bool) -> tuple[list[int], list[dict], Any]:  # fmt: skip
        """Per swap the order line it prices (distinct_lines: each listed id its own line; otherwise
        the first line with that id, as τ²-bench) and the new variant, and the summed price difference
        (a float; τ²-bench starts the sum at the int 0, kept unless rounded_difference is on)."""
        used: set[int] = set()
        lines, variants = [], []
        diff: Any = 0.0 if self._on("rounded_difference") else 0
        for old, new in zip(item_ids, new_item_ids, strict=True):
            if same_check and old == new:
                raise ToolError("The new item id should be different from the old item id")
            free = [i for i, it in enumerate(order["items"]) if it["item_id"] == old and i not in used]
            if not free:  # only without distinct_lines can this not happen after the count check
                raise ToolError(f"Item {old} not found")
            idx = free[0]
            if self._on("distinct_lines"):
                used.add(idx)
            item = order["items"][idx]
            if self._on("explained_errors"):
                variant = self._product(item["product_id"])["variants"].get(new)
                if variant is None or not variant.get("available"):
                    raise ToolError(f"New item {new} not found or available")
            else:
                variant = self._variant(item["product_id"], new)
                if not variant["available"]:
                    raise ToolError(f"New item {new} not found or available")
            lines.append(idx)
            variants.append(variant)
            diff += float(variant["price"]) - float(item["price"])
        return lines, variants, diff

    def modify_pending_order_items(self, order_id: str, item_ids: list[str], new_item_ids: list[str],
                                   payment_method_id: str) -> dict:  # fmt: skip
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError(self._say("Non-pending order cannot be modified",
                                      "Non-pending order cannot be modified (items can be modified only once)"))  # fmt: skip
        self._count_check(order, item_ids, self._say("{iid} not found", self._msg_item))
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        lines, variants, diff = self._swaps(order, item_ids, new_item_ids, same_check=True)
        if self._on("rounded_difference"):
            diff = round(diff, 2)
        pm = self._payment_method(order["user_id"], payment_method_id)
        if self._is_gift_card(pm) and float(pm.get("balance", 0.0)) < diff:
            raise ToolError("Insufficient gift card balance to pay for the new item")
        order = self.db.mut("orders", order_id)
        order["payment_history"].append({"transaction_type": "payment" if diff > 0 else "refund",
                                         "amount": float(abs(diff)), "payment_method_id": payment_method_id})  # fmt: skip
        if self._is_gift_card(pm):
            self._gift_card_add(order["user_id"], payment_method_id, -diff)
        for k, (old, new) in enumerate(zip(item_ids, new_item_ids, strict=True)):
            if self._on("distinct_lines"):
                idx: int | None = lines[k]
            else:  # tau2-bench's second loop looks each old id up again, after the earlier swaps
                idx = next((i for i, it in enumerate(order["items"]) if it["item_id"] == old), None)
                if idx is None:
                    raise ToolError(f"Item {old} not found")
            variant = variants[k] if self._on("per_item_variant") else variants[-1]
            item = order["items"][idx]
            item["item_id"], item["price"] = new, variant["price"]
            item["options"] = copy.deepcopy(variant["options"])
        order["status"] = "pending (item modified)"
        return order

    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> dict:  # atomic_writes
        order = self._order(order_id)
        hist = order["payment_history"]
        if self._on("atomic_writes") and "pending" in order["status"] and len(hist) == 1:
            self._payment_method(order["user_id"], hist[0]["payment_method_id"])  # the old method exists
        return super().modify_pending_order_payment(order_id, payment_method_id)

    def exchange_delivered_order_items(self, order_id: str, item_ids: list[str], new_item_ids: list[str],
                                       payment_method_id: str) -> dict:  # fmt: skip
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be exchanged")
        self._count_check(order, item_ids, self._say("Number of {iid} not found.", self._msg_item))
        if len(item_ids) != len(new_item_ids):
            raise ToolError(self._say("The number of items to be exchanged should match.",
                                      "The number of items to be exchanged should match"))  # fmt: skip
        _, _, diff = self._swaps(order, item_ids, new_item_ids, same_check=False)
        diff = round(diff, 2)
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


def make_tools(db: RetailDB, fidelity: str = "tau2") -> RetailTools:
    """The tools of one rollout: ``"tau2"`` (τ²-bench's behaviour) or ``"corrected"`` (:data:`CORRECTIONS`)."""
    return CorrectedRetailTools(db) if check_fidelity(fidelity) == "corrected" else RetailTools(db)


def tool_content(ok: bool, result: Any) -> str:
    """A tool result as the message content the agent sees (τ²-bench's ``Environment.to_json_str``:
    a string as it is, a record as ``json.dumps`` of it; errors as "Error: ...")."""
    if not ok:
        return f"Error: {result}"
    return result if isinstance(result, str) else json.dumps(result, default=str)


def replay_actions(base_db: Mapping[str, dict], actions: Sequence[Mapping],
                   fidelity: str = "tau2") -> tuple[RetailDB, list[str]]:  # fmt: skip
    """Run ``actions`` (``{"name", "arguments"}``) on a fresh copy; the database and the errors
    (τ²-bench's gold replay logs a failing expected action and goes on, as here)."""
    db = RetailDB(base_db)
    tools = make_tools(db, fidelity)
    errors = []
    for a in actions:
        ok, res = tools.execute(a["name"], a.get("arguments") or {})
        if not ok:
            errors.append(f"{a.get('action_id', a['name'])}: {a['name']}: {res}")
    return db, errors
