"""The banking_knowledge domain's fixed clock and deterministic record ids (issue 28 item 1),
ported from τ²-bench's ``src/tau2/domains/banking_knowledge/utils.py`` (MIT; commit a2c0247): every
scenario is set at 2025-11-14 03:40:00 EST, and a record a tool creates gets an id hashed from its
inputs, so the database after a rollout and after the task's expected actions hash alike."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from typing import Any

FIXED_DATE = date(2025, 11, 14)


def get_today() -> date:
    return FIXED_DATE


def get_today_str() -> str:
    return FIXED_DATE.strftime("%m/%d/%Y")


def get_now() -> datetime:
    return datetime(2025, 11, 14, 3, 40, 0)


def _deterministic_id(seed_string: str, length: int = 16) -> str:
    return hashlib.sha256(seed_string.encode()).digest()[: length // 2].hex()


def generate_transaction_id(user_id: str, credit_card_type: str, merchant_name: str, amount: float,
                            category: str, date: str | None = None) -> str:  # fmt: skip
    parts = ["transaction", user_id, credit_card_type, merchant_name, f"{amount:.2f}", category]
    if date:
        parts.append(date)
    return f"txn_{_deterministic_id(':'.join(parts), length=12)}"


def generate_referral_id(referrer_id: str, referred_account_type: str, date: str | None = None) -> str:
    parts = ["referral", referrer_id, referred_account_type]
    if date:
        parts.append(date)
    return _deterministic_id(":".join(parts), length=16)


def generate_application_id(card_type: str, customer_name: str, annual_income: float,
                            rho_bank_subscription: bool = False) -> str:  # fmt: skip
    return _deterministic_id(
        f"credit_card:{card_type}:{customer_name}:{annual_income}:{rho_bank_subscription}", 16
    )


def generate_verification_id(user_id: str, time_verified: str) -> str:
    return f"{user_id}_{time_verified.replace(' ', '_').replace(':', '').replace('-', '')}"


def generate_user_discoverable_tool_id(tool_name: str) -> str:
    return _deterministic_id(f"user_discoverable_tool:{tool_name}", length=16)


def generate_user_discoverable_tool_call_id(tool_name: str, arguments: dict[str, Any]) -> str:
    return _deterministic_id(
        f"user_discoverable_tool_call:{tool_name}:{json.dumps(arguments, sort_keys=True)}", 16
    )


def generate_dispute_id(user_id: str, transaction_id: str) -> str:
    return f"dsp_{_deterministic_id(f'dispute:{user_id}:{transaction_id}', length=12)}"


def generate_referral_link_id(user_id: str, card_name: str) -> str:
    return _deterministic_id(f"referral_link:{user_id}:{card_name}", length=16)


def generate_agent_discoverable_tool_id(tool_name: str) -> str:
    return _deterministic_id(f"agent_discoverable_tool:{tool_name}", length=16)


def generate_credit_card_order_id(credit_card_account_id: str, user_id: str, reason: str) -> str:
    return f"ccord_{_deterministic_id(f'credit_card_order:{credit_card_account_id}:{user_id}:{reason}', 12)}"


def generate_closure_reason_id(credit_card_account_id: str, user_id: str) -> str:
    return f"clsr_{_deterministic_id(f'closure_reason:{credit_card_account_id}:{user_id}', 12)}"


def generate_account_flag_id(credit_card_account_id: str, flag_type: str, expiration_date: str) -> str:
    return f"ccflag_{_deterministic_id(f'account_flag:{credit_card_account_id}:{flag_type}:{expiration_date}', 12)}"


def generate_credit_limit_increase_request_id(credit_card_account_id: str, user_id: str,
                                              requested_increase_amount: float) -> str:  # fmt: skip
    seed = f"cli_request:{credit_card_account_id}:{user_id}:{requested_increase_amount:.2f}"
    return f"cli_{_deterministic_id(seed, length=12)}"


def generate_debit_card_order_id(account_id: str, user_id: str, delivery_option: str) -> str:
    return f"dcord_{_deterministic_id(f'debit_card_order:{account_id}:{user_id}:{delivery_option}', 12)}"


def generate_debit_card_id(account_id: str, user_id: str, issue_date: str) -> str:
    return f"dbc_{_deterministic_id(f'debit_card:{account_id}:{user_id}:{issue_date}', 12)}"
