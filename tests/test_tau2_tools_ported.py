"""tau2-bench's retail tool tests, rewritten for the project's tools (not copied): the 15 tests of
tau2-bench ``tests/test_domains/test_retail/test_tools_retail.py`` (commit a2c0247), each with the
same database (user sara_doe_496, pending order #W0000000, the Classic T-Shirt in two variants), the
same calls and the same assertions, run through ``RetailTools`` (fidelity "tau2") and read back as
the tool message content tau2-bench's ``Environment.get_response`` returns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shopbench.domains.tau2_retail import RetailDB, RetailTools, tool_content
from shopbench.domains.tau2_retail.data_model import tau2_records

_ADDRESS = {"address1": "123 Main St", "address2": "Apt 1", "city": "San Francisco", "state": "CA",
            "country": "USA", "zip": "94105"}  # fmt: skip
_SHIRT = {"size": "M", "color": "blue"}


@pytest.fixture
def tools() -> RetailTools:
    raw = {
        "users": {"sara_doe_496": {
            "user_id": "sara_doe_496", "name": {"first_name": "Sara", "last_name": "Doe"}, "address": dict(_ADDRESS),
            "email": "sara.doe@example.com", "orders": ["#W0000000"],
            "payment_methods": {
                "credit_card_0000000": {"source": "credit_card", "brand": "visa", "last_four": "1234",
                                        "id": "credit_card_0000000"},
                "gift_card_0000000": {"source": "gift_card", "balance": 100.0, "id": "gift_card_0000000"}}}},
        "orders": {"#W0000000": {
            "order_id": "#W0000000", "user_id": "sara_doe_496", "status": "pending", "address": dict(_ADDRESS),
            "items": [{"name": "Classic T-Shirt", "product_id": "6086499569", "item_id": "1008292230",
                       "price": 29.99, "options": dict(_SHIRT)}],
            "fulfillments": [],
            "payment_history": [{"transaction_type": "payment", "amount": 29.99,
                                 "payment_method_id": "credit_card_0000000"}]}},
        "products": {"6086499569": {"product_id": "6086499569", "name": "Classic T-Shirt", "variants": {
            "1008292230": {"item_id": "1008292230", "price": 29.99, "available": True, "options": dict(_SHIRT)},
            "1008292231": {"item_id": "1008292231", "price": 29.99, "available": True,
                           "options": {"size": "L", "color": "blue"}}}}},
    }  # fmt: skip
    return RetailTools(RetailDB(tau2_records(raw, Path("test_tools_retail"))))


def respond(tools: RetailTools, name: str, **arguments) -> str:
    """tau2-bench's ``environment.get_response(ToolCall(name=..., arguments=...)).content``."""
    return tool_content(*tools.execute(name, arguments))


def _order(tools: RetailTools) -> dict:
    return tools.get_order_details("#W0000000")


def _set_status(tools: RetailTools, status: str) -> None:  # tau2-bench sets order.status on the model
    tools.db.mut("orders", "#W0000000")["status"] = status


def test_calculate(tools):
    assert respond(tools, "calculate", expression="2 + 2") == "4.0"


def test_cancel_pending_order(tools):
    respond(tools, "cancel_pending_order", order_id="#W0000000", reason="no longer needed")
    order = _order(tools)
    assert order["status"] == "cancelled" and order["cancel_reason"] == "no longer needed"
    assert len(order["payment_history"]) == 2
    assert order["payment_history"][1]["transaction_type"] == "refund"
    assert order["payment_history"][1]["amount"] == order["payment_history"][0]["amount"]


def test_exchange_delivered_order_items(tools):
    _set_status(tools, "delivered")
    respond(tools, "exchange_delivered_order_items", order_id="#W0000000", item_ids=["1008292230"],
            new_item_ids=["1008292231"], payment_method_id="credit_card_0000000")  # fmt: skip
    order = _order(tools)
    assert order["status"] == "exchange requested"
    assert order["exchange_items"] == ["1008292230"] and order["exchange_new_items"] == ["1008292231"]
    assert order["exchange_payment_method_id"] == "credit_card_0000000"


def test_find_user_id_by_name_zip(tools):
    assert (
        respond(tools, "find_user_id_by_name_zip", first_name="Sara", last_name="Doe", zip="94105")
        == "sara_doe_496"
    )
    assert respond(tools, "find_user_id_by_name_zip", first_name="John", last_name="Doe", zip="94105") == (
        "Error: User not found")  # fmt: skip


def test_find_user_id_by_email(tools):
    assert respond(tools, "find_user_id_by_email", email="sara.doe@example.com") == "sara_doe_496"
    assert respond(tools, "find_user_id_by_email", email="nonexistent@example.com") == "Error: User not found"


def test_get_order_details(tools):
    respond(tools, "get_order_details", order_id="#W0000000")
    assert respond(tools, "get_order_details", order_id="#NONEXISTENT") == "Error: Order not found"


def test_get_product_details(tools):
    respond(tools, "get_product_details", product_id="6086499569")
    assert respond(tools, "get_product_details", product_id="NONEXISTENT") == "Error: Product not found"


def test_get_user_details(tools):
    respond(tools, "get_user_details", user_id="sara_doe_496")
    assert respond(tools, "get_user_details", user_id="NONEXISTENT") == "Error: User not found"


def test_list_all_product_types(tools):
    assert "Classic T-Shirt" in json.loads(respond(tools, "list_all_product_types"))


def test_modify_pending_order_address(tools):
    args = {"order_id": "#W0000000", "address1": "456 New St", "address2": "Apt 2", "city": "San Francisco",
            "state": "CA", "country": "USA", "zip": "94106"}  # fmt: skip
    respond(tools, "modify_pending_order_address", **args)
    address = _order(tools)["address"]
    assert (address["address1"], address["address2"], address["zip"]) == ("456 New St", "Apt 2", "94106")
    _set_status(tools, "delivered")
    assert (
        respond(tools, "modify_pending_order_address", **args)
        == "Error: Non-pending order cannot be modified"
    )


def test_modify_pending_order_items(tools):
    args = {"order_id": "#W0000000", "item_ids": ["1008292230"], "new_item_ids": ["1008292231"],
            "payment_method_id": "credit_card_0000000"}  # fmt: skip
    respond(tools, "modify_pending_order_items", **args)
    order = _order(tools)
    assert order["status"] == "pending (item modified)" and order["items"][0]["item_id"] == "1008292231"
    _set_status(tools, "delivered")
    assert (
        respond(tools, "modify_pending_order_items", **args) == "Error: Non-pending order cannot be modified"
    )


def test_modify_pending_order_payment(tools):
    args = {"order_id": "#W0000000", "payment_method_id": "gift_card_0000000"}
    respond(tools, "modify_pending_order_payment", **args)
    assert len(_order(tools)["payment_history"]) == 3  # original payment + new payment + refund
    _set_status(tools, "delivered")
    assert (
        respond(tools, "modify_pending_order_payment", **args)
        == "Error: Non-pending order cannot be modified"
    )


def test_modify_user_address(tools):
    args = {"user_id": "sara_doe_496", "address1": "789 New St", "address2": "Apt 3", "city": "San Francisco",
            "state": "CA", "country": "USA", "zip": "94107"}  # fmt: skip
    respond(tools, "modify_user_address", **args)
    address = tools.get_user_details("sara_doe_496")["address"]
    assert (address["address1"], address["address2"], address["zip"]) == ("789 New St", "Apt 3", "94107")
    assert (
        respond(tools, "modify_user_address", **{**args, "user_id": "NONEXISTENT"}) == "Error: User not found"
    )


def test_return_delivered_order_items(tools):
    _set_status(tools, "delivered")
    args = {"order_id": "#W0000000", "item_ids": ["1008292230"], "payment_method_id": "credit_card_0000000"}
    respond(tools, "return_delivered_order_items", **args)
    order = _order(tools)
    assert order["status"] == "return requested" and order["return_items"] == ["1008292230"]
    assert order["return_payment_method_id"] == "credit_card_0000000"
    _set_status(tools, "pending")
    assert (
        respond(tools, "return_delivered_order_items", **args)
        == "Error: Non-delivered order cannot be returned"
    )


def test_transfer_to_human_agents(tools):
    assert respond(tools, "transfer_to_human_agents", summary="The user wants to cancel the order.") == (
        "Transfer successful")  # fmt: skip
