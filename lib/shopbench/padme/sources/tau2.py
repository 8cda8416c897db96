"""A τ²-bench domain read from its published folder as a PADMÉ trajectory source (seed 003 §4 "Agent
System & Criteria", App. C.3 "Environment Reward Verification").

"We build an agent trajectory collection system upon a variant of the τ³-bench repository. We rely
on its task definitions, agent framework, user simulator, tool sets, and domain-specific
environments [...] retail (114)" (§4). App. C.3 checks pairs against the benchmark's "programmatic
task success rewards [0,1], which track database transitions, disclosure verification, and action
matching independently of model annotation. Omitting the LLM judge component renders this audit
entirely deterministic."

The folder holds tau2-bench's retail domain as published: ``tasks.json`` (user scenario, expected
actions, communicate info), ``db.json`` (products with variants, users, orders), ``policy.md`` (the
agent policy) and optionally ``split_tasks.json``. What this module implements:

- :class:`RetailDB`: the database of one rollout, a copy-on-write view of the loaded ``db.json``
  (every record a tool changes is deep-copied first, so each rollout starts from a fresh copy and
  the loaded data is never modified).
- :class:`RetailTools`: the 16 retail tools (every name in the expected actions), written from
  ``policy.md`` and the tools' published behaviour: look-ups (users by email or name + zip, users,
  orders, products, items, product types), ``calculate``, the writes (cancel / modify items /
  address / payment of *pending* orders, return / exchange of *delivered* orders, the user's
  default address) with their rules (status, one items-modification per order, same product and
  available variants, the payment method must belong to the user, gift cards must cover what they
  pay, refunds of a return go to the original method or a gift card), and
  ``transfer_to_human_agents``. A rule violation is a tool error ("Error: ..." as the tool result).
  :data:`TOOL_SPECS` are their OpenAI function specs. One deliberate difference from the published
  code: a multi-item modification prices every item at its own new variant.
- :func:`action_reward`: the reward. **DB**: 1.0 iff the database after the rollout equals the
  database after replaying the task's expected actions on a fresh copy, compared through a SHA-256
  of the canonical JSON of every record (products, users, orders) that differs from ``db.json``
  (both runs start from the same data, so this equals comparing the full tables). **COMMUNICATE**:
  when ``communicate_info`` is non-empty, every item must appear in some assistant message
  (case-insensitive, commas removed from the message, as τ²-bench does). reward = DB × COMMUNICATE.
  The tasks' ``reward_basis`` also names NL_ASSERTION; its assertions are null for every retail
  task and would need an LLM judge, so it is not implemented (App. C.3 omits the judge too).
- :class:`ScriptedRetailUser`: a rule-based user following ``user_scenario.instructions``: it
  opens with the reason for the call (in the first person, without the lines addressed to the
  simulator about the agent), answers identification questions from ``known_info``, says it does
  not know what ``unknown_info`` says it does not know (it never produces an email, order id or user
  id that is not written in its instructions), confirms when asked to confirm, and ends with a
  thanks. :class:`LLMRetailUser` plays the user with a gateway model instead.
- :class:`ScriptedRetailAgent`: the *simulated* steering source. It reads the task's expected
  actions from ``task.meta`` (the answer key: this is not an agent that solves the task, it is a
  controllable stand-in for a steered agent), asks for identification, runs the
  :func:`~shopbench.padme.sources.steered.action_plan` of the expected actions for its level (one
  tool call per message, listing each write and asking for a yes first, as the policy requires)
  and runs every customer-facing message through
  :func:`~shopbench.padme.sources.steered.style_message`.
- :class:`LLMRetailAgent`: a gateway model behind the tools, system prompt = τ²-bench's agent
  instruction and the policy, with the H.3 wrapper appended.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import operator
import random
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..types import Context, Criterion, Rollout, Task
from .base import (
    RepeatGateway,
    check_level,
    is_scripted,
    make_rollout_id,
    repeat_index,
    rollout_record,
    wrap_steering,
)
from .steered import action_plan, conduct_of, style_message

__all__ = [
    "AGENT_INSTRUCTION", "READ_TOOLS", "TOOL_NAMES", "TOOL_SPECS", "WRITE_TOOLS", "LLMRetailAgent",
    "LLMRetailUser", "RetailDB", "RetailTools", "ScriptedRetailAgent", "ScriptedRetailUser", "Tau2Data",
    "Tau2DataError", "Tau2Source", "ToolError", "action_reward", "load_tau2", "replay_actions",
    "task_description",
]  # fmt: skip

DATA_HINT = (
    "it is tau2-bench's published retail domain (MIT; github.com/sierra-research/tau2-bench, "
    "data/tau2/domains/retail: tasks.json, db.json, policy.md, split_tasks.json), kept beside the project "
    "at ../shared/data/tau2_retail"
)

# τ²-bench's agent instruction and system-prompt layout (src/tau2/agent/llm_agent.py), quoted.
AGENT_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> provided below.\n"
    "In each turn you can either:\n- Send a message to the user.\n- Make a tool call.\n"
    "You cannot do both at the same time.\n\nTry to be helpful and always follow the policy."
)
GREETING = "Hi! How can I help you today?"
TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."


class Tau2DataError(ValueError):
    """The tau2 folder or one of its files is missing or malformed."""


class ToolError(ValueError):
    """A retail tool refused the call (bad arguments or a policy rule)."""


# ---- the database ---------------------------------------------------------------------------------
TABLES = ("products", "users", "orders")


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class RetailDB:
    """One rollout's database: reads see the loaded ``db.json``; a write deep-copies the record
    first (copy-on-write), so the loaded data is shared and never modified."""

    def __init__(self, base: Mapping[str, dict]):
        self.base = base
        self.changed: dict[str, dict[str, dict]] = {t: {} for t in TABLES}

    def get(self, table: str, key: str) -> dict | None:
        rec = self.changed[table].get(key)
        return rec if rec is not None else self.base[table].get(key)

    def mut(self, table: str, key: str) -> dict:
        if key not in self.changed[table]:
            self.changed[table][key] = copy.deepcopy(self.base[table][key])
        return self.changed[table][key]

    def keys(self, table: str):
        return self.base[table].keys()

    def diff(self) -> dict[str, dict[str, dict]]:
        """Every record that differs from the loaded data, by table."""
        return {
            t: {k: v for k, v in sorted(self.changed[t].items()) if v != self.base[t].get(k)} for t in TABLES
        }

    def state_hash(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`diff` (equal databases <=> equal hashes)."""
        return hashlib.sha256(_canonical(self.diff()).encode()).hexdigest()

    def snapshot(self) -> dict[str, dict[str, dict]]:
        """The full tables (a deep copy) as they stand now."""
        out = copy.deepcopy({t: dict(self.base[t]) for t in TABLES})
        for t in TABLES:
            out[t].update(copy.deepcopy(self.changed[t]))
        return out


# ---- the tools ------------------------------------------------------------------------------------
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
            if str(self.db.get("users", uid).get("email", "")).casefold() == want:
                return uid
        raise ToolError("User not found")

    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        f, last = first_name.strip().casefold(), last_name.strip().casefold()
        for uid in self.db.keys("users"):
            u = self.db.get("users", uid)
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
            v = self.db.get("products", pid)["variants"].get(item_id)
            if v is not None:
                return v
        raise ToolError("Item not found")

    def list_all_product_types(self) -> str:
        names = {self.db.get("products", pid)["name"]: pid for pid in self.db.keys("products")}
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


# ---- loading --------------------------------------------------------------------------------------
@dataclass
class Tau2Data:
    path: Path
    tasks: list[dict]
    db: dict[str, dict]
    policy: str
    split: dict[str, list[str]] | None = None
    _gold: dict[str, tuple[str, list[str]]] = field(default_factory=dict, repr=False)

    def gold(self, task: Mapping) -> tuple[str, list[str]]:
        """(state hash after replaying the expected actions on a fresh copy, replay errors)."""
        tid = str(task["id"])
        if tid not in self._gold:
            db, errors = replay_actions(self.db, task["evaluation_criteria"]["actions"])
            self._gold[tid] = (db.state_hash(), errors)
        return self._gold[tid]


def _read_json(path: Path) -> Any:
    if not path.exists():
        raise Tau2DataError(f"{path} is missing; {DATA_HINT}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise Tau2DataError(f"{path}: not valid JSON ({e}); restore the published file") from None


def _validate_task(path: Path, i: int, t: Any) -> None:
    if not isinstance(t, dict):
        raise Tau2DataError(f"{path}: task [{i}] is a {type(t).__name__}, not an object")
    tid = t.get("id")
    where = f"{path}: task {tid!r} (entry [{i}])"
    if not isinstance(tid, str | int) or isinstance(tid, bool):
        raise Tau2DataError(f"{path}: task [{i}]: field 'id' is missing or not a string")
    us = t.get("user_scenario")
    ins = us.get("instructions") if isinstance(us, dict) else None
    if not isinstance(ins, dict):
        raise Tau2DataError(f"{where}: field 'user_scenario.instructions' is missing or not an object")
    for k in ("reason_for_call", "known_info", "unknown_info", "task_instructions"):
        if ins.get(k) is not None and not isinstance(ins[k], str):
            raise Tau2DataError(f"{where}: field 'user_scenario.instructions.{k}' must be a string or null")
    if not isinstance(ins.get("reason_for_call"), str) or not ins["reason_for_call"].strip():
        raise Tau2DataError(
            f"{where}: field 'user_scenario.instructions.reason_for_call' is missing or empty"
        )
    ev = t.get("evaluation_criteria")
    if not isinstance(ev, dict):
        raise Tau2DataError(f"{where}: field 'evaluation_criteria' is missing or not an object")
    acts = ev.get("actions")
    if acts is None:
        ev["actions"] = acts = []
    if not isinstance(acts, list):
        raise Tau2DataError(f"{where}: field 'evaluation_criteria.actions' must be a list")
    for j, a in enumerate(acts):
        f = f"evaluation_criteria.actions[{j}]"
        if not isinstance(a, dict):
            raise Tau2DataError(f"{where}: field '{f}' is not an object")
        if a.get("name") not in TOOL_NAMES:
            raise Tau2DataError(f"{where}: field '{f}.name' is {a.get('name')!r}, not a retail tool "
                                f"({', '.join(TOOL_NAMES)})")  # fmt: skip
        if not isinstance(a.get("arguments"), dict):
            raise Tau2DataError(f"{where}: field '{f}.arguments' is missing or not an object")
    info = ev.get("communicate_info")
    if info is not None and (not isinstance(info, list) or not all(isinstance(x, str) for x in info)):
        raise Tau2DataError(
            f"{where}: field 'evaluation_criteria.communicate_info' must be a list of strings"
        )


def load_tau2(path: str | Path) -> Tau2Data:
    """Read and validate a τ²-bench retail folder."""
    path = Path(path)
    if not path.is_dir():
        raise Tau2DataError(f"tau2 data folder {path} does not exist; {DATA_HINT}")
    tasks = _read_json(path / "tasks.json")
    if not isinstance(tasks, list) or not tasks:
        raise Tau2DataError(f"{path / 'tasks.json'}: expected a non-empty JSON list of tasks")
    seen: set[str] = set()
    for i, t in enumerate(tasks):
        _validate_task(path / "tasks.json", i, t)
        if str(t["id"]) in seen:
            raise Tau2DataError(f"{path / 'tasks.json'}: task id {t['id']!r} appears twice")
        seen.add(str(t["id"]))
    db = _read_json(path / "db.json")
    if not isinstance(db, dict) or any(not isinstance(db.get(k), dict) for k in TABLES):
        raise Tau2DataError(
            f"{path / 'db.json'}: expected an object with 'products', 'users' and 'orders' maps"
        )
    pol = path / "policy.md"
    if not pol.exists():
        raise Tau2DataError(f"{pol} is missing; {DATA_HINT}")
    split = None
    if (path / "split_tasks.json").exists():
        split = _read_json(path / "split_tasks.json")
        if not isinstance(split, dict) or not all(isinstance(v, list) for v in split.values()):
            raise Tau2DataError(
                f"{path / 'split_tasks.json'}: expected an object of split name -> list of ids"
            )
    return Tau2Data(path=path, tasks=tasks, db=db, policy=pol.read_text(encoding="utf-8"), split=split)


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


def communicated(info: Sequence[str], messages: Sequence[Mapping]) -> list[str]:
    """The ``communicate_info`` items that appear in no assistant message (τ²-bench's check:
    case-insensitive, commas removed from the message)."""
    texts = [
        str(m.get("content") or "").lower().replace(",", "") for m in messages if m.get("role") == "assistant"
    ]
    return [x for x in info if not any(x.lower() in t for t in texts)]


def action_reward(
    db: RetailDB, gold_hash: str, info: Sequence[str], messages: Sequence[Mapping]
) -> tuple[float, dict]:
    """reward = DB × COMMUNICATE (see the module docstring) and its breakdown."""
    db_ok = db.state_hash() == gold_hash
    missing = communicated(info, messages) if info else []
    comm = None if not info else float(not missing)
    reward = float(db_ok) * (1.0 if comm is None else comm)
    return reward, {"db": float(db_ok), "communicate": comm, "missing_info": missing, "db_hash": db.state_hash(),
                    "gold_hash": gold_hash}  # fmt: skip


# ---- text helpers ---------------------------------------------------------------------------------
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ORDER_ID = re.compile(r"#W\d+")
_USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{3,5}\b")
_ZIP = re.compile(r"\b\d{5}\b")
_LONG_ID = re.compile(r"\b\d{9,}\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")

_FIRST = [
    (r"\bYou name\b", "My name"), (r"\bYou are\b", "I am"), (r"\byou are\b", "I am"), (r"\bYou're\b", "I'm"),
    (r"\byou're\b", "I'm"), (r"\bYou've\b", "I've"), (r"\byou've\b", "I've"), (r"\bYou'd\b", "I'd"),
    (r"\byou'd\b", "I'd"), (r"\bYou'll\b", "I'll"), (r"\byou'll\b", "I'll"), (r"\bYourself\b", "Myself"),
    (r"\byourself\b", "myself"), (r"\bYours\b", "Mine"), (r"\byours\b", "mine"), (r"\bYour\b", "My"),
    (r"\byour\b", "my"),
    (r"\b(to|for|with|asks|ask|tell|tells|give|gives|help|helps|let|lets|told|gave|offer|offers|call|"
     r"contact|sent|send|charge|refund|at|from|about) you\b", r"\1 me"),
    (r"\bYou\b", "I"), (r"\byou\b", "I"),
]  # fmt: skip
_THIRD = [
    (r"\bYou name\b", "Their name"), (r"\bYou are\b", "They are"), (r"\byou are\b", "they are"),
    (r"\bYou're\b", "They're"), (r"\byou're\b", "they're"), (r"\bYou've\b", "They've"), (r"\byou've\b", "they've"),
    (r"\bYou'd\b", "They'd"), (r"\byou'd\b", "they'd"), (r"\bYou'll\b", "They'll"), (r"\byou'll\b", "they'll"),
    (r"\bYourself\b", "Themselves"), (r"\byourself\b", "themselves"), (r"\bYours\b", "Theirs"),
    (r"\byours\b", "theirs"), (r"\bYour\b", "Their"), (r"\byour\b", "their"),
    (r"\b(to|for|with|asks|ask|tell|tells|give|gives|help|helps|let|lets|told|gave|offer|offers|call|"
     r"contact|sent|send|charge|refund|at|from|about) you\b", r"\1 them"),
    (r"\bYou\b", "They"), (r"\byou\b", "they"),
]  # fmt: skip


def _person(text: str, table: Sequence[tuple[str, str]]) -> str:
    for pat, rep in table:
        text = re.sub(pat, rep, text)
    return text


def first_person(text: str) -> str:
    """Instructions addressed to the simulated user ("You want ...") as the user's words ("I want ...")."""
    return _person(str(text or "").strip(), _FIRST)


def _user_sentences(reason: str) -> list[str]:
    """Sentences of the reason for call that are the user's own request (not lines telling the
    simulator how to react to the agent)."""
    out = [s for s in _SENTENCE.split(reason.strip()) if s and "agent" not in s.lower()]
    return out or [reason.strip()]


def _names_of(task: Mapping, db: Mapping[str, dict]) -> set[str]:
    names: set[str] = set()
    for a in task["evaluation_criteria"]["actions"]:
        args = a.get("arguments") or {}
        names |= {str(args[k]) for k in ("first_name", "last_name") if args.get(k)}
        uid = args.get("user_id")
        u = db["users"].get(uid) if isinstance(uid, str) else None
        if u:
            names |= {u["name"]["first_name"], u["name"]["last_name"]}
    return {n for n in names if len(n) > 1}


def task_description(task: Mapping, db: Mapping[str, dict]) -> str:
    """The reason for call in the third person without particulars (App. H.2 rule 1: "no names, no
    user or account or booking identifiers"): order, item, product and user ids, emails, zip codes,
    street addresses and the customer's names are removed."""
    reason = task["user_scenario"]["instructions"]["reason_for_call"]
    text = _person(reason, _THIRD)
    text = _EMAIL.sub("their email address", text)
    text = re.sub(r"(?:order|orders)?\s*#W\d+(?:\s*(?:,|and|or)\s*#W\d+)*", " order", text)
    text = _USER_ID.sub("their account", text)
    text = re.sub(r"\b\d+\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\s+(?:Drive|Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Way|"
                  r"Boulevard|Blvd|Court|Ct|Place|Pl)\b\.?", "a new address", text)  # fmt: skip
    text = re.sub(r"\b(?:Suite|Apt|Apartment|Unit)\s+\w+", "", text)
    text = _ZIP.sub("", _LONG_ID.sub("", text))
    for n in sorted(_names_of(task, db), key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(n)}\b", "the customer", text)
    text = re.sub(r"\border\s+order\b", "order", text)
    text = re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r"[ \t]+", " ", text))
    text = re.sub(r",\s*,", ",", text).strip()
    return f"A customer contacts the online retail store's support. {text}"


# ---- the user simulators --------------------------------------------------------------------------
_ASK_EMAIL = re.compile(r"\be-?mail\b", re.I)
_ASK_NAME_ZIP = re.compile(r"\b(name|zip|postal)\b", re.I)
_ASK_IDENTITY = re.compile(r"\bzip\b|\bpostal\b|\b(first|last|full|your) name\b", re.I)
_ASK_ORDER = re.compile(r"\border (id|number|#)|\bwhich order\b", re.I)
_ASK_PAYMENT = re.compile(r"\b(payment method|which card|pay with|refund (it |the money )?to|gift card or|"
                          r"credit card or|paypal or)\b", re.I)  # fmt: skip
_ASK_CONFIRM = re.compile(r"\(yes/no\)|\b(confirm|proceed|go ahead)\b", re.I)
_ASK_PERMISSION = re.compile(r"\b(shall i|should i|would you like me to|do you want me to)\b", re.I)
_ANYTHING_ELSE = re.compile(r"\banything else\b|\bany other\b|\bsomething else\b", re.I)
_PAY_WORDS = re.compile(r"\b(gift card|credit card|paypal|payment|refund)\b", re.I)


class ScriptedRetailUser:
    """The rule-based user of one task (see the module docstring). ``reply(agent_text, final)``
    returns ``(message, stop)``; the first call (to the agent's greeting) returns the opening.
    ``rng`` varies wording only."""

    name = "scripted"

    def __init__(self, instructions: Mapping[str, Any], rng: random.Random, max_turns: int = 20):
        self.ins = {k: str(instructions.get(k) or "").strip() for k in
                    ("reason_for_call", "known_info", "unknown_info", "task_instructions")}  # fmt: skip
        if self.ins["unknown_info"] in ("None", "."):
            self.ins["unknown_info"] = ""
        self.rng = rng
        self.max_turns = max_turns
        self.turns = 0
        self.confirmed = 0
        own = " ".join(self.ins[k] for k in ("reason_for_call", "known_info", "task_instructions"))
        self.emails = _EMAIL.findall(self.ins["known_info"])
        self.orders = _ORDER_ID.findall(own)

    def _pick(self, *options: str) -> str:
        return self.rng.choice(options)

    def opening(self) -> str:
        body = first_person(" ".join(_user_sentences(self.ins["reason_for_call"])))
        return f"{self._pick('Hi!', 'Hello,', 'Hi there.')} {body}"

    def _unknown_sentence(self, topic: str) -> str:
        """The ``unknown_info`` sentence about ``topic`` (a regex), in the first person."""
        for s in _SENTENCE.split(self.ins["unknown_info"]):
            if re.search(topic, s, re.I) and "agent" not in s.lower():
                return first_person(s).rstrip(".") + "."
        return ""

    def _identity(self, text: str) -> str:
        known = first_person(self.ins["known_info"]).rstrip(".") + "."
        if _ASK_EMAIL.search(text) and self.emails:
            return f"Sure, my email is {self.emails[0]}."
        if _ASK_EMAIL.search(text) and not _ASK_NAME_ZIP.search(text):
            dunno = self._unknown_sentence(r"\bemail") or "I don't remember my email address."
            return f"{dunno} {known}"
        if _ASK_EMAIL.search(text):
            dunno = self._unknown_sentence(r"\bemail") or "I'd rather use my name and zip code."
            return f"{dunno} {known}"
        return known

    def _order(self) -> str:
        if self.orders:
            return f"It's {' and '.join(dict.fromkeys(self.orders))}."
        return self._unknown_sentence(r"\border (number|id)") or "I don't know the order number, sorry."

    def _payment(self) -> str:
        """What the instructions say about paying: a line addressed to the simulator ("If the agent
        asks for payment method [...], say ...") gives its answer; else the first sentence of the user's
        own request that mentions a payment method."""
        for k in ("reason_for_call", "task_instructions", "unknown_info", "known_info"):
            for s in _SENTENCE.split(self.ins[k]):
                said = re.search(r"\bagent asks[^,]*\bpayment[^,]*,\s*say\s+(.+)", s, re.I)
                if said:
                    return first_person(said.group(1)).rstrip(".") + "."
        for k in ("reason_for_call", "task_instructions"):
            for s in _SENTENCE.split(self.ins[k]):
                if _PAY_WORDS.search(s) and "agent" not in s.lower():
                    return first_person(s)
        return "Please use the original payment method."

    def _yes(self) -> str:
        self.confirmed += 1
        return self._pick("Yes, please go ahead.", "Yes, that's right. Please proceed.", "Yes.")

    def reply(self, agent_text: str | None, final: bool = False) -> tuple[str, bool]:
        self.turns += 1
        if self.turns == 1:
            return self.opening(), False
        text = str(agent_text or "")
        if TRANSFER_MESSAGE.lower() in text.lower():
            return "Okay, I'll hold.", True
        if final or self.turns > self.max_turns:
            return self._pick("Okay. Thanks, bye.", "Alright, thank you.", "Thanks, that's all."), True
        q = " ".join(
            u for u in re.split(r"(?<=[.!?])\s+|\n", text) if u.rstrip().endswith("?") or "(yes/no)" in u
        )
        if q and (_ASK_EMAIL.search(q) or _ASK_IDENTITY.search(q)):
            return self._identity(q), False
        if q and _ASK_ORDER.search(q):
            return self._order(), False
        if q and _ASK_CONFIRM.search(q):
            return self._yes(), False
        if q and _ASK_PAYMENT.search(q):
            return self._payment(), False
        if q and _ASK_PERMISSION.search(q):
            return self._yes(), False
        if q and _ANYTHING_ELSE.search(q):
            return self._pick(
                "No, that's all. Thank you!", "No, that's everything. Thanks for your help!"
            ), True
        if q:
            return "As I said: " + first_person(_user_sentences(self.ins["reason_for_call"])[0]), False
        return self._pick("Okay.", "Alright.", "I see."), False


USER_SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string", "maxLength": 1500}, "stop": {"type": "boolean"}},
    "required": ["message", "stop"],
    "additionalProperties": False,
}
USER_SYSTEM = (
    "You are playing a customer contacting an online retail store's customer service agent. Follow the "
    "instructions below; they describe who you are and what you want. Reveal information only when it is "
    "needed, one piece at a time; never make up names, emails, ids or addresses you were not given; if asked "
    "for something your instructions say you do not know, say you do not know it. When your goal is done or "
    'cannot be done, thank the agent and set stop to true. Answer with JSON {{"message": ..., "stop": ...}}.'
    "\n\n# Instructions\nReason for the call: {reason_for_call}\nWhat you know: {known_info}\n"
    "What you do not know: {unknown_info}\nHow to behave: {task_instructions}"
)


class LLMRetailUser:
    """The user played by a gateway model (τ²-bench's user-simulator role), one structured call per
    turn: ``{"message", "stop"}``; the transcript is shown with the roles flipped."""

    def __init__(self, gateway, backbone: str, instructions: Mapping[str, Any], run_id: str, item_prefix: str,
                 max_tokens: int = 400, max_turns: int = 20):  # fmt: skip
        self.gateway, self.backbone, self.run_id = gateway, backbone, run_id
        self.system = USER_SYSTEM.format(
            **{
                k: str(instructions.get(k) or "")
                for k in ("reason_for_call", "known_info", "unknown_info", "task_instructions")
            }
        )
        self.item_prefix, self.max_tokens, self.max_turns = item_prefix, int(max_tokens), int(max_turns)
        self.name = f"llm:{backbone}"
        self.history: list[dict] = []
        self.usage: dict[str, float] = {}

    def reply(self, agent_text: str | None, final: bool = False) -> tuple[str, bool]:
        self.history.append({"role": "user", "content": str(agent_text or "")})
        msgs = [{"role": "system", "content": self.system}, *self.history]
        call = self.gateway.call(self.backbone, f"{self.item_prefix}:user{len(self.history)}", msgs, schema=USER_SCHEMA,
                                 schema_name="tau2_user_turn", params={"max_tokens": self.max_tokens, "temperature": 0})  # fmt: skip
        row = self.gateway.run([call], run_id=self.run_id, desc=None)[0]
        for k in ("prompt_tokens", "completion_tokens", "cost_usd"):
            self.usage[k] = self.usage.get(k, 0.0) + float(row.get(k) or 0.0)
        parsed = row.get("parsed") if row.get("status") == "ok" else None
        if not isinstance(parsed, dict) or not str(parsed.get("message") or "").strip():
            raise RuntimeError(f"{self.item_prefix}: the user model gave no usable turn: "
                               f"{row.get('error') or row.get('parse_error') or row.get('status')}")  # fmt: skip
        text = str(parsed["message"]).strip()
        self.history.append({"role": "assistant", "content": text})
        return text, bool(parsed.get("stop")) or len(self.history) // 2 >= self.max_turns


# ---- the agents -----------------------------------------------------------------------------------
@dataclass
class Act:
    """One agent step: text for the user or tool calls (``[(call id, name, arguments)]``)."""

    text: str | None = None
    calls: list[tuple[str, str, dict]] = field(default_factory=list)
    final: bool = False
    error: str | None = None
    usage: dict[str, float] = field(default_factory=dict)


def _options(opts: Mapping) -> str:
    return ", ".join(str(v) for v in opts.values())


def _money(x: Any) -> str:
    return f"${float(x):,.2f}".replace(",", "")


class ScriptedRetailAgent:
    """The simulated steered agent of one rollout (see the module docstring). ``act(last)`` takes the
    last observation (the user's message or the tool result) and returns the next :class:`Act`."""

    def __init__(self, meta: Mapping[str, Any], db: RetailDB, criterion: str, level: str, rng: random.Random):
        self.meta, self.db, self.criterion, self.level, self.rng = meta, db, criterion, level, rng
        self.effort = conduct_of(criterion, level)[1]
        self.n_calls = 0
        self._gen = self._script()
        self._started = False

    def say(self, text: str, final: bool = False) -> Act:
        return Act(text=style_message(text, self.criterion, self.level, self.rng), final=final)

    def tool(self, name: str, args: Mapping) -> Act:
        self.n_calls += 1
        return Act(calls=[(f"call_{self.n_calls}", name, dict(args))])

    def act(self, last: Any) -> Act:
        try:
            if not self._started:
                self._started = True
                return next(self._gen)
            return self._gen.send(last)
        except StopIteration:
            return Act(text=None, final=True)

    # -- describing things ---------------------------------------------------------------------------
    def _item(self, order: Mapping, iid: str) -> str:
        it = next((x for x in order.get("items", []) if x["item_id"] == iid), None)
        return f"the {it['name']} ({_options(it['options'])})" if it else f"item {iid}"

    def _variant(self, order: Mapping, old: str, new: str) -> str:
        it = next((x for x in order.get("items", []) if x["item_id"] == old), None)
        p = self.db.get("products", it["product_id"]) if it else None
        v = (p or {}).get("variants", {}).get(new)
        return f"{_options(v['options'])} at {_money(v['price'])}" if v else f"item {new}"

    def _pm(self, order_or_user: Mapping, pm_id: str) -> str:
        uid = order_or_user.get("user_id")
        u = self.db.get("users", uid) if uid else None
        pm = (u or {}).get("payment_methods", {}).get(pm_id, {})
        src = str(pm.get("source", "")).replace("_", " ")
        if pm.get("last_four"):
            return f"your {pm.get('brand', '')} credit card ending in {pm['last_four']} ({pm_id})".replace(
                "  ", " "
            )
        return f"your {src or 'payment method'} ({pm_id})"

    def describe(self, a: Mapping) -> str:
        n, args = a["name"], a.get("arguments") or {}
        oid = args.get("order_id", "")
        order = self.db.get("orders", oid) or {}
        items = args.get("item_ids") or []
        what = ", ".join(self._item(order, i) for i in items)
        partial = " (only these items for now)" if a.get("partial") else ""
        addr = ", ".join(
            str(args[k]) for k in ("address1", "address2", "city", "state", "zip", "country") if args.get(k)
        )
        if n == "cancel_pending_order":
            total = sum(
                float(p["amount"])
                for p in order.get("payment_history", [])
                if p["transaction_type"] == "payment"
            )
            return (f"I can cancel order {oid} for the reason '{args.get('reason')}'. The {_money(total)} you paid "
                    "goes back to the original payment method. Shall I go ahead? (yes/no)")  # fmt: skip
        if n == "return_delivered_order_items":
            return (f"I can return {what} from order {oid}{partial}. The refund goes to "
                    f"{self._pm(order, args.get('payment_method_id', ''))}. Shall I go ahead? (yes/no)")  # fmt: skip
        if n in ("exchange_delivered_order_items", "modify_pending_order_items"):
            swaps = "; ".join(f"{self._item(order, o)} for {self._variant(order, o, nw)}"
                              for o, nw in zip(items, args.get("new_item_ids") or [], strict=False))  # fmt: skip
            verb = "exchange" if n.startswith("exchange") else "change"
            once = " Items of a pending order can only be changed once." if verb == "change" else ""
            return (f"I can {verb} {swaps} in order {oid}{partial}. Any price difference is settled with "
                    f"{self._pm(order, args.get('payment_method_id', ''))}.{once} Please make sure these are all the "
                    "items you want changed. Shall I go ahead? (yes/no)")  # fmt: skip
        if n == "modify_pending_order_address":
            return f"I can change the shipping address of order {oid} to {addr}. Shall I go ahead? (yes/no)"
        if n == "modify_pending_order_payment":
            return (f"I can switch the payment of order {oid} to {self._pm(order, args.get('payment_method_id', ''))}. "
                    "Shall I go ahead? (yes/no)")  # fmt: skip
        if n == "modify_user_address":
            return f"I can update your default address to {addr}. Shall I go ahead? (yes/no)"
        return f"I can run {n} for you. Shall I go ahead? (yes/no)"

    @staticmethod
    def report(a: Mapping, ok: bool, result: Any) -> str:
        if not ok:
            return f"I couldn't complete that: {result}."
        if isinstance(result, dict) and "status" in result:
            extra = ""
            if result["status"] in ("return requested", "exchange requested"):
                extra = " You'll receive an email explaining how to send the items back."
            diff = result.get("exchange_price_difference")
            if diff is not None and float(diff) > 0:
                extra += f" The new items cost {_money(diff)} more, charged to the payment method you chose."
            elif diff is not None and float(diff) < 0:
                extra += (
                    f" The new items cost {_money(-float(diff))} less; that difference is refunded to you."
                )
            return f"Done: order {result.get('order_id')} is now '{result['status']}'.{extra}"
        if isinstance(result, dict) and "address" in result:
            return "Done: your default address is updated."
        return "Done."

    def note(self, a: Mapping, ok: bool, result: Any) -> str | None:
        """What a look-up told the agent, for its next message."""
        n = a["name"]
        if not ok:
            return f"I couldn't look that up: {result}."
        if n.startswith("find_user_id"):
            return "Thank you, I've found your account."
        if n == "get_order_details" and isinstance(result, dict):
            items = "; ".join(f"{it['name']} ({_options(it['options'])})" for it in result.get("items", []))
            return f"Order {result.get('order_id')} is {result.get('status')} and contains: {items}."
        if n == "get_product_details" and isinstance(result, dict):
            avail = sum(1 for v in result.get("variants", {}).values() if v.get("available"))
            return f"I've checked the {result.get('name')} options: {avail} versions are available."
        if n == "calculate":
            return f"That comes to {result}."
        return None

    # -- the script --------------------------------------------------------------------------------------
    def _script(self):
        expected = [a for a in self.meta.get("expected_actions", []) if a.get("name") in TOOL_NAMES]
        plan = action_plan(expected, self.criterion, self.level, self.rng,
                           is_write=lambda a: a.get("name") in WRITE_TOOLS)  # fmt: skip
        info = action_plan(
            list(self.meta.get("communicate_info") or []), self.criterion, self.level, self.rng
        )
        yield self.say(GREETING)
        by_email = any(a["name"] == "find_user_id_by_email" for a in expected)
        ask = ("Could you tell me the email address on your account? If you don't remember it, your first and "
               "last name and zip code will do.") if by_email else (
               "To find your account, could you give me your first and last name and your zip code?")  # fmt: skip
        if expected:
            yield self.say(ask)
        notes: list[str] = []
        for a in plan:
            args = a.get("arguments") or {}
            if a["name"] == "transfer_to_human_agents":
                yield self.tool(a["name"], args)
                yield Act(text=TRANSFER_MESSAGE, final=True)
                return
            if a["name"] in WRITE_TOOLS:
                reply = yield self.say(" ".join([*notes, self.describe(a)]))
                notes = []
                if not re.search(r"\b(yes|yeah|sure|ok|okay|proceed|go ahead)\b", str(reply), re.I):
                    notes.append("Understood, I won't make that change.")
                    continue
                ok, result = yield self.tool(a["name"], args)
                notes.append(self.report(a, ok, result))
                continue
            ok, result = yield self.tool(a["name"], args)
            line = self.note(a, ok, result)
            if line:
                notes.append(line)
        if info:
            notes.append(f"To answer your question: {' and '.join(info)}.")
        if self.effort == "abandon":
            if self.rng.random() < 0.5:
                yield self.tool(
                    "transfer_to_human_agents", {"summary": "The customer needs help with a request."}
                )
                yield Act(text=TRANSFER_MESSAGE, final=True)
                return
            yield self.say(" ".join([*notes, "I'm not able to take this request any further, so I'll stop here."]),
                           final=True)  # fmt: skip
            return
        if self.effort == "partial":
            notes.append("That's as much as I'm going to do on this request for now.")
        yield self.say(" ".join([*notes, "Is there anything else I can help you with?"]), final=True)


_JSON_AGENT = {
    "type": "object",
    "properties": {
        "message": {"type": ["string", "null"], "maxLength": 3000},
        "tool_call": {
            "type": ["object", "null"],
            "properties": {
                "name": {"type": "string", "enum": list(TOOL_NAMES)},
                "arguments": {"type": "object"},
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        },
    },
    "required": ["message", "tool_call"],
    "additionalProperties": False,
}
_JSON_CONTRACT = (
    'Answer with one JSON object {"message": <text for the user or null>, "tool_call": {"name": ..., '
    '"arguments": {...}} or null}: either a message or one tool call. The tools:\n'
)


def _json_tools() -> str:
    lines = []
    for s in TOOL_SPECS:
        fn = s["function"]
        lines.append(f"- {fn['name']}({', '.join(fn['parameters']['properties'])}): {fn['description']}")
    return "\n".join(lines)


class LLMRetailAgent:
    """A gateway model behind the retail tools: ``tool_mode="native"`` (function calling) or
    ``"json"`` (a ``{message, tool_call}`` object under a JSON schema, for models without tools)."""

    def __init__(self, gateway, backbone: str, system_prompt: str, run_id: str, item_prefix: str,
                 tool_mode: str = "native", max_tokens: int = 1024):  # fmt: skip
        if tool_mode not in ("native", "json"):
            raise ValueError(f"tool_mode {tool_mode!r}: use 'native' (function calling) or 'json'")
        self.gateway, self.backbone, self.system_prompt = gateway, backbone, system_prompt
        self.run_id, self.item_prefix, self.tool_mode, self.max_tokens = (
            run_id,
            item_prefix,
            tool_mode,
            int(max_tokens),
        )
        self.round = 0

    def _json_messages(self, messages: Sequence[Mapping]) -> list[dict]:
        out = [{"role": "system", "content": f"{self.system_prompt}\n\n{_JSON_CONTRACT}{_json_tools()}"}]
        for m in messages[1:]:
            if m["role"] == "assistant" and m.get("tool_calls"):
                fn = m["tool_calls"][0]["function"]
                out.append(
                    {
                        "role": "assistant",
                        "content": json.dumps(
                            {
                                "message": None,
                                "tool_call": {"name": fn["name"], "arguments": json.loads(fn["arguments"])},
                            }
                        ),
                    }
                )
            elif m["role"] == "assistant":
                out.append(
                    {
                        "role": "assistant",
                        "content": json.dumps({"message": m.get("content"), "tool_call": None}),
                    }
                )
            elif m["role"] == "tool":
                out.append({"role": "user", "content": f"Tool result: {m.get('content')}"})
            else:
                out.append({"role": "user", "content": str(m.get("content") or "")})
        merged: list[dict] = []
        for m in out:
            if merged and merged[-1]["role"] == m["role"]:
                merged[-1] = {"role": m["role"], "content": f"{merged[-1]['content']}\n\n{m['content']}"}
            else:
                merged.append(m)
        return merged

    def act(self, messages: Sequence[Mapping]) -> Act:
        item = f"{self.item_prefix}:r{self.round}"
        self.round += 1
        params = {"max_tokens": self.max_tokens, "temperature": 0}
        if self.tool_mode == "native":
            call = self.gateway.call(self.backbone, item, list(messages), tools=TOOL_SPECS, params=params)
        else:
            call = self.gateway.call(self.backbone, item, self._json_messages(messages), schema=_JSON_AGENT,
                                     schema_name="tau2_agent_step", params=params)  # fmt: skip
        row = self.gateway.run([call], run_id=self.run_id, desc=None)[0]
        usage = {k: float(row.get(k) or 0.0) for k in ("prompt_tokens", "completion_tokens", "cost_usd")}
        if row.get("status") == "error":
            return Act(error=f"{item}: model call failed: {row.get('error')}", usage=usage)
        calls: list[tuple[str, str, dict]] = []
        if self.tool_mode == "native":
            for i, tc in enumerate(row.get("tool_calls") or []):
                fn = tc.get("function") or {}
                raw = fn.get("arguments") or "{}"
                try:
                    args = json.loads(raw) if isinstance(raw, str) else dict(raw)
                except (json.JSONDecodeError, TypeError, ValueError):
                    args = {"_unparsable_arguments": str(raw)[:200]}
                calls.append(
                    (
                        str(tc.get("id") or f"{item}:c{i}"),
                        str(fn.get("name")),
                        args if isinstance(args, dict) else {},
                    )
                )
            text = row.get("raw_output")
        else:
            obj = row.get("parsed") if row.get("status") == "ok" else None
            if not isinstance(obj, dict):
                return Act(
                    error=f"{item}: output breaks the JSON contract: {row.get('parse_error')}", usage=usage
                )
            tc = obj.get("tool_call")
            if isinstance(tc, dict) and tc.get("name"):
                calls.append((f"{item}:c0", str(tc["name"]), dict(tc.get("arguments") or {})))
            text = obj.get("message")
        text = text.strip() if isinstance(text, str) and text.strip() else None
        if calls:
            return Act(calls=calls, usage=usage)
        if text is None:
            return Act(error=f"{item}: empty reply (no text, no tool call)", usage=usage)
        return Act(text=text, usage=usage)


# ---- the conversation -----------------------------------------------------------------------------
def _tool_call_message(calls: Sequence[tuple[str, str, dict]], text: str | None = None) -> dict:
    return {"role": "assistant", "content": text, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args, sort_keys=True)}}
        for cid, name, args in calls]}  # fmt: skip


def run_conversation(agent, user, tools: RetailTools, system_prompt: str, scripted: bool,
                     max_steps: int = 80) -> tuple[list[dict], str, dict[str, float], list[str]]:  # fmt: skip
    """Play agent and user over the tools. Returns (messages, termination, agent usage, actions taken)."""
    messages: list[dict] = [{"role": "system", "content": system_prompt}]
    usage: dict[str, float] = {}
    taken: list[str] = []
    last: Any = None
    if not scripted:  # τ²-bench's orchestrator opens with the agent's fixed greeting
        messages.append({"role": "assistant", "content": GREETING})
        text, stop = user.reply(GREETING)
        messages.append({"role": "user", "content": text})
        if stop:
            return messages, "user_stop", usage, taken
    for _ in range(max_steps):
        act = agent.act(last) if scripted else agent.act(messages)
        for k, v in act.usage.items():
            usage[k] = usage.get(k, 0.0) + v
        if act.error:
            return messages, "agent_error", usage, taken
        if act.calls:
            messages.append(_tool_call_message(act.calls))
            results = []
            for cid, name, args in act.calls:
                ok, res = tools.execute(name, args)
                taken.append(name)
                results.append((ok, res))
                messages.append(
                    {"role": "tool", "tool_call_id": cid, "name": name, "content": tool_content(ok, res)}
                )
            last = results[0] if len(results) == 1 else results
            continue
        if act.text is None:
            return messages, "agent_stop", usage, taken
        messages.append({"role": "assistant", "content": act.text})
        if act.text == TRANSFER_MESSAGE:
            return messages, "transfer", usage, taken
        text, stop = user.reply(act.text, final=act.final)
        messages.append({"role": "user", "content": text})
        last = text
        if stop:
            return messages, "user_stop", usage, taken
    return messages, "max_steps", usage, taken


# ---- the source -----------------------------------------------------------------------------------
class Tau2Source:
    """The retail domain of τ²-bench as a :class:`~shopbench.padme.sources.base.TrajectorySource`."""

    domain = "retail"
    has_reward = True

    def __init__(
        self, path: str | Path, split: str | None = None, tool_mode: str = "native", max_turns: int = 20
    ):
        self.data = load_tau2(path)
        self.name = f"tau2_{self.domain}"
        self.tool_mode = tool_mode
        self.max_turns = int(max_turns)
        if split is not None:
            if not self.data.split or split not in self.data.split:
                raise Tau2DataError(f"{self.data.path / 'split_tasks.json'}: no split {split!r}; "
                                    f"available: {sorted(self.data.split or {})}")  # fmt: skip
            ids = {str(x) for x in self.data.split[split]}
            self._raw = [t for t in self.data.tasks if str(t["id"]) in ids]
        else:
            self._raw = list(self.data.tasks)
        self._by_id = {self.task_id(t): t for t in self._raw}

    def task_id(self, raw: Mapping) -> str:
        return f"{self.domain}-{raw['id']}"

    def tool_names(self) -> tuple[str, ...]:
        return TOOL_NAMES

    def system_prompt(self) -> str:
        """τ²-bench's agent system prompt: the instruction and the domain policy."""
        return (
            f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{self.data.policy}\n</policy>"
        )

    def make_task(self, raw: Mapping) -> Task:
        ev = raw["evaluation_criteria"]
        actions = [{"name": a["name"], "arguments": a.get("arguments") or {}, "action_id": a.get("action_id")}
                   for a in ev.get("actions") or []]  # fmt: skip
        return Task(
            task_id=self.task_id(raw), domain=self.domain, source=self.name,
            description=task_description(raw, self.data.db), tool_names=TOOL_NAMES,
            meta={"tau2_id": str(raw["id"]), "instructions": dict(raw["user_scenario"]["instructions"]),
                  "expected_actions": actions, "communicate_info": list(ev.get("communicate_info") or []),
                  "n_writes": sum(a["name"] in WRITE_TOOLS for a in actions)},
        )  # fmt: skip

    def tasks(self, n: int | None = None, seed: int = 0) -> list[Task]:
        """The tasks in file order (``seed`` 0) or a seeded permutation; the first ``n``."""
        raws = list(self._raw)
        if seed:
            random.Random(f"tau2-tasks:{seed}").shuffle(raws)
        return [self.make_task(t) for t in (raws if n is None else raws[: int(n)])]

    def gold(self, task: Task) -> tuple[str, list[str]]:
        raw = self._by_id.get(task.task_id)
        if raw is None:
            raise KeyError(f"task {task.task_id!r} is not a task of {self.data.path / 'tasks.json'}")
        return self.data.gold(raw)

    def rollout(self, task: Task, criterion: Criterion, level: str, steering: str, context: Context,
                attempt: int, gateway=None) -> Rollout:  # fmt: skip
        check_level(level)
        t0 = time.perf_counter()
        raw = self._by_id.get(task.task_id)
        if raw is None:
            raise KeyError(f"task {task.task_id!r} is not a task of {self.data.path / 'tasks.json'}")
        rid = make_rollout_id(self.name, task.task_id, criterion.name, level, attempt, context.seed)
        db = RetailDB(self.data.db)
        tools = RetailTools(db)
        system = wrap_steering(self.system_prompt(), steering)
        instructions = raw["user_scenario"]["instructions"]
        scripted = is_scripted(context)
        gw = (
            None
            if scripted and context.user_model == "scripted"
            else RepeatGateway(gateway, repeat_index(attempt, context.seed))
        )
        if context.user_model == "scripted":
            user = ScriptedRetailUser(instructions, random.Random(f"{rid}:user"), max_turns=self.max_turns)
        else:
            user = LLMRetailUser(gw, context.user_model, instructions, run_id="padme-tau2-user", item_prefix=rid,
                                 max_turns=self.max_turns)  # fmt: skip
        if scripted:
            agent: Any = ScriptedRetailAgent(
                task.meta, db, criterion.name, level, random.Random(f"{rid}:agent")
            )
        else:
            agent = LLMRetailAgent(gw, context.agent_model, system, run_id="padme-tau2-agent", item_prefix=rid,
                                   tool_mode=self.tool_mode)  # fmt: skip
        messages, termination, usage, taken = run_conversation(agent, user, tools, system, scripted)
        gold_hash, gold_errors = self.data.gold(raw)
        reward, breakdown = action_reward(db, gold_hash, task.meta.get("communicate_info") or [], messages)
        if isinstance(user, LLMRetailUser):
            usage = {**usage, **{f"user_{k}": v for k, v in user.usage.items()}}
        return rollout_record(
            source=self.name, task=task, criterion=criterion, level=level, steering=steering, context=context,
            attempt=attempt, messages=messages, reward=reward, usage=usage,
            meta={"termination": termination, "reward_breakdown": breakdown, "actions_taken": taken,
                  "gold_replay_errors": gold_errors, "user": getattr(user, "name", "scripted"),
                  "wall_s": round(time.perf_counter() - t0, 4)},
        )  # fmt: skip
