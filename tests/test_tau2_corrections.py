"""Each of the project's corrections (``fidelity="corrected"``, :data:`CORRECTIONS`) against tau2-bench's
behaviour (``fidelity="tau2"``, the default), on a small database built here: the correction changes
what it says and the default does what tau2-bench's ``src/tau2/domains/retail/tools.py`` does."""

from __future__ import annotations

from pathlib import Path

from shopbench.domains.tau2_retail import CORRECTIONS, RetailDB, make_tools
from shopbench.domains.tau2_retail.data_model import tau2_records

_ADDR = dict.fromkeys(("address1", "address2", "city", "country", "state", "zip"), "x") | {"zip": "94105"}


def _db() -> dict:
    variants = {i: {"item_id": i, "options": {"size": s}, "available": True, "price": p}
                for i, s, p in (("1", "S", 10.0), ("2", "M", 15.0), ("3", "L", 20.0))}  # fmt: skip
    raw = {
        "products": {"P": {"name": "Shirt", "product_id": "P", "variants": variants}},
        "users": {"u_1": {"user_id": "u_1", "name": {"first_name": "Sara", "last_name": "Doe"}, "address": _ADDR,
                          "email": "sara@example.com", "orders": ["#W1", "#W2"],
                          "payment_methods": {"gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 50.0},
                                              "paypal_1": {"source": "paypal", "id": "paypal_1"}}}},
        "orders": {
            # two lines of the same item bought at different prices; paid by gift card and a deleted card
            "#W1": {"order_id": "#W1", "user_id": "u_1", "address": _ADDR, "status": "pending", "fulfillments": [],
                    "items": [{"name": "Shirt", "product_id": "P", "item_id": "1", "price": 10.0, "options": {"size": "S"}},
                              {"name": "Shirt", "product_id": "P", "item_id": "1", "price": 12.0, "options": {"size": "S"}}],
                    "payment_history": [{"transaction_type": "payment", "amount": 12.0, "payment_method_id": "gift_card_1"},
                                        {"transaction_type": "payment", "amount": 10.0, "payment_method_id": "credit_card_9"}]},
            "#W2": {"order_id": "#W2", "user_id": "u_1", "address": _ADDR, "status": "pending", "fulfillments": [],
                    "items": [{"name": "Shirt", "product_id": "P", "item_id": "1", "price": 10.0, "options": {"size": "S"}},
                              {"name": "Shirt", "product_id": "P", "item_id": "2", "price": 15.0, "options": {"size": "M"}}],
                    "payment_history": [{"transaction_type": "payment", "amount": 25.0, "payment_method_id": "paypal_1"}]},
        },
    }  # fmt: skip
    return tau2_records(raw, Path("test"))


def _both():
    base = _db()
    return make_tools(RetailDB(base), "tau2"), make_tools(RetailDB(base), "corrected")


def _balance(tools) -> float:
    return tools.db.get("users", "u_1")["payment_methods"]["gift_card_1"]["balance"]


def test_every_correction_is_tested_here():
    assert set(CORRECTIONS) == {"per_item_variant", "rounded_difference", "distinct_lines", "checked_arguments",
                                "atomic_writes", "trimmed_lookups", "arithmetic_only", "explained_errors"}  # fmt: skip


def test_per_item_variant():
    """tau2-bench: ``item.price = variant.price; item.options = variant.options`` after the pricing loop."""
    t, c = _both()
    args = {
        "order_id": "#W2",
        "item_ids": ["1", "2"],
        "new_item_ids": ["2", "3"],
        "payment_method_id": "paypal_1",
    }
    ok, out = t.execute("modify_pending_order_items", args)
    assert ok and [(i["item_id"], i["price"], i["options"]) for i in out["items"]] == [
        ("3", 20.0, {"size": "L"}), ("2", 15.0, {"size": "M"})]  # fmt: skip
    # tau2-bench's second loop: "1" -> "2" on line 0, then the first line with id "2" (line 0 again) -> "3"
    ok, out = c.execute("modify_pending_order_items", args)
    assert ok and [(i["item_id"], i["price"]) for i in out["items"]] == [("2", 15.0), ("3", 20.0)]


def test_rounded_difference():
    base = _db()
    base["products"]["P"]["variants"]["2"]["price"] = 10.1
    base["products"]["P"]["variants"]["3"]["price"] = 20.2
    t, c = make_tools(RetailDB(base), "tau2"), make_tools(RetailDB(base), "corrected")
    args = {
        "order_id": "#W2",
        "item_ids": ["1", "2"],
        "new_item_ids": ["2", "3"],
        "payment_method_id": "paypal_1",
    }
    # the difference 10.1 - 10.0 + 20.2 - 15.0 in floats
    raw = (10.1 - 10.0) + (20.2 - 15.0)
    assert t.execute("modify_pending_order_items", args)[1]["payment_history"][-1]["amount"] == raw != 5.3
    assert c.execute("modify_pending_order_items", args)[1]["payment_history"][-1]["amount"] == 5.3


def test_distinct_lines():
    """tau2-bench prices every repeat of an id at the first line with it (10.0 twice here, not 10.0 and 12.0)."""
    t, c = _both()
    for tools in (t, c):
        tools.db.mut("orders", "#W1")["status"] = "delivered"
    args = {
        "order_id": "#W1",
        "item_ids": ["1", "1"],
        "new_item_ids": ["2", "2"],
        "payment_method_id": "gift_card_1",
    }
    assert t.execute("exchange_delivered_order_items", args)[1]["exchange_price_difference"] == 10.0
    assert c.execute("exchange_delivered_order_items", args)[1]["exchange_price_difference"] == 8.0


def test_atomic_writes():
    """tau2-bench refunds the gift card, then fails on the second payment's unknown method."""
    t, c = _both()
    args = {"order_id": "#W1", "reason": "no longer needed"}
    assert t.execute("cancel_pending_order", args) == (False, "Payment method not found")
    assert _balance(t) == 62.0 and t.db.get("orders", "#W1")["status"] == "pending"
    assert c.execute("cancel_pending_order", args) == (False, "Payment method not found")
    assert _balance(c) == 50.0


def test_trimmed_lookups_arithmetic_checked_arguments_and_explained_errors():
    t, c = _both()
    assert t.execute("find_user_id_by_email", {"email": " Sara@example.com "}) == (False, "User not found")
    assert c.execute("find_user_id_by_email", {"email": " Sara@example.com "}) == (True, "u_1")
    assert t.execute("find_user_id_by_name_zip", {"first_name": "sara", "last_name": "DOE", "zip": 94105}) == (
        False, "User not found")  # fmt: skip
    assert c.execute("find_user_id_by_name_zip", {"first_name": "sara", "last_name": "DOE", "zip": 94105}) == (
        True, "u_1")  # fmt: skip
    assert t.execute("calculate", {"expression": "2**3"}) == (True, "8.0")
    assert not c.execute("calculate", {"expression": "2**3"})[0]
    assert t.execute("get_order_details", {"order_id": "#W1", "x": 1}) == (
        False, "RetailTools.get_order_details() got an unexpected keyword argument 'x'")  # fmt: skip
    assert c.execute("get_order_details", {"order_id": "#W1", "x": 1}) == (
        False, "get_order_details: unexpected argument(s) ['x']")  # fmt: skip
    assert t.execute("cancel_pending_order", {"order_id": "#W2", "reason": "too slow"}) == (
        False,
        "Invalid reason",
    )
    assert "'no longer needed', 'ordered by mistake'" in c.execute(
        "cancel_pending_order", {"order_id": "#W2", "reason": "too slow"})[1]  # fmt: skip
    assert t.execute("modify_pending_order_items", {"order_id": "#W2", "item_ids": ["9"], "new_item_ids": ["2"],
                                                    "payment_method_id": "paypal_1"}) == (False, "9 not found")  # fmt: skip
