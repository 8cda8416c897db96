"""The telecom data (issue 28 item 1): the company's records (``db.toml``: plans, devices, lines,
customers, bills) and the customer's phone (``user_db.toml``: the device state; the surroundings —
name, phone number, abroad, what the network allows — start at their defaults), the published tasks
(``tasks_small.json``), ``split_tasks.json`` and the policy (``main_policy.md`` and
``tech_support_manual.md``), read from a folder given as a parameter (``../shared/data/tau2_telecom``).

The record models are written from τ²-bench's ``src/tau2/domains/telecom/data_model.py`` and
``user_data_model.py`` (MIT; read, not copied): the same field names, types, defaults, order and
descriptions, so that a tool output (``model_dump`` then ``json.dumps(default=str)``, as τ²-bench
writes it) and the JSON schema of a tool parameter are the published ones. Each rollout validates a
fresh copy of the loaded dicts, so no rollout changes the loaded data.

Bad input is a :class:`TelecomDataError` (a :class:`~shopbench.errors.UserError`) naming the file,
the record and the field, raised when the folder is loaded, before any tool call or model call.
"""

# mypy: disable-error-code="call-arg,arg-type"
# (pydantic fields with defaults, which mypy without the pydantic plugin reads as required)
# ruff: noqa: UP042  (str, Enum) as τ²-bench writes its enums: the same str(), format() and repr()
from __future__ import annotations

import datetime
import hashlib
import json
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...errors import InputError

__all__ = [
    "DATA_HINT", "REWARD_BASES_KNOWN", "APNSettings", "Bill", "Customer", "Device", "Line", "MockPhoneAttributes",
    "Plan", "TelecomDB", "TelecomData", "TelecomDataError", "TelecomUserDB", "dict_hash",
]  # fmt: skip

DATA_HINT = (
    "it is tau2-bench's telecom domain (MIT; github.com/sierra-research/tau2-bench data/tau2/domains/telecom), "
    "kept beside the project at ../shared/data/tau2_telecom"
)
REWARD_BASES_KNOWN = ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")
DEFAULT_START_DATE = datetime.date(2025, 1, 1)


class TelecomDataError(InputError):
    """The telecom folder or one of its files is missing or malformed (issue 28, "Bad input")."""

    def __init__(self, problem: str, **kw: Any) -> None:
        kw["fix"] = kw.get("fix") or f"restore the published file: {DATA_HINT}"
        super().__init__(problem, **kw)


class NoExtra(BaseModel):
    """τ²-bench's ``BaseModelNoExtra``."""

    model_config = ConfigDict(extra="forbid")


def dict_hash(obj: Any) -> str:
    """τ²-bench's ``get_dict_hash``: SHA-256 of ``json.dumps(obj, sort_keys=True, default=str)``."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


# --- the company's records (τ²-bench data_model.py) ------------------------------------------------
class Address(NoExtra):
    street: str = Field(description="Street address including house/apartment number")
    city: str = Field(description="City name")
    state: str = Field(description="State or province code (e.g., CA, NY)")
    zip_code: str = Field(description="Postal/ZIP code")


class Plan(NoExtra):
    plan_id: str = Field(description="Unique identifier for the plan")
    name: str = Field(description="Display name of the plan")
    data_limit_gb: float = Field(description="Monthly data allowance in gigabytes (GB)")
    price_per_month: float = Field(description="Monthly price of the plan in USD")
    data_refueling_price_per_gb: float = Field(description="Price per gigabyte for data refueling")


class DeviceType(str, Enum):
    PHONE = "phone"
    ROUTER = "router"
    TABLET = "tablet"
    WATCH = "watch"
    OTHER = "other"


class Device(NoExtra):
    device_id: str = Field(description="Unique identifier for the device")
    device_type: DeviceType = Field(description="Type/category of the device")
    model: str = Field(description="Model name/number of the device")
    imei: str | None = Field(None, description="International Mobile Equipment Identity number")
    is_esim_capable: bool = Field(description="Whether the device supports eSIM technology")
    activated: bool = Field(False, description="Whether the device has been activated on the network")
    activation_date: datetime.datetime | None = Field(None, description="Date and time when the device was activated (format: YYYY-MM-DDTHH:MM:SS, timezone: EST)")  # fmt: skip
    last_esim_transfer_date: datetime.datetime | None = Field(None, description="Last date an eSIM profile was transferred to this device (format: YYYY-MM-DDTHH:MM:SS, timezone: EST)")  # fmt: skip


class LineStatus(str, Enum):
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_ACTIVATION = "Pending Activation"
    CLOSED = "Closed"


class Line(NoExtra):
    line_id: str = Field(description="Unique identifier for the line")
    phone_number: str = Field(description="Phone number associated with the line")
    status: LineStatus = Field(LineStatus.PENDING_ACTIVATION, description="Current status of the line")
    plan_id: str = Field(description="Plan associated with this line")
    device_id: str | None = Field(None, description="Device associated with this line")
    data_used_gb: float = Field(0.0, description="Data used in the current billing cycle in gigabytes (GB)")
    data_refueling_gb: float = Field(
        0.0, description="Data refueled in the current billing cycle in gigabytes (GB)"
    )
    roaming_enabled: bool = Field(False, description="Whether international roaming is enabled for this line")
    contract_end_date: datetime.date | None = Field(None, description="End date of the current contract, if applicable (format: YYYY-MM-DD, timezone: EST)")  # fmt: skip
    last_plan_change_date: datetime.date | None = Field(None, description="Date of the most recent plan change (format: YYYY-MM-DD, timezone: EST)")  # fmt: skip
    last_sim_replacement_date: datetime.date | None = Field(None, description="Date of the most recent SIM card replacement (format: YYYY-MM-DD, timezone: EST)")  # fmt: skip
    suspension_start_date: datetime.date | None = Field(None, description="Start date of the current suspension period, if applicable (format: YYYY-MM-DD, timezone: EST)")  # fmt: skip


class LineItem(NoExtra):
    description: str = Field(description="Descriptive text for the line item")
    amount: float = Field(description="Monetary amount in USD (positive for charges, negative for credits)")
    date: datetime.date = Field(
        description="Date the line item was applied (format: YYYY-MM-DD, timezone: EST)"
    )
    item_type: str = Field(
        description="Category of the line item (e.g., Plan Charge, Overage, Fee, Credit, Payment)"
    )


class BillStatus(str, Enum):
    DRAFT = "Draft"
    ISSUED = "Issued"
    AWAITING_PAYMENT = "Awaiting Payment"
    PAID = "Paid"
    OVERDUE = "Overdue"
    DISPUTED = "Disputed"


class Bill(NoExtra):
    bill_id: str = Field(description="Unique identifier for the bill")
    customer_id: str = Field(description="ID of the customer this bill belongs to")
    period_start: datetime.date = Field(description="Start date of the billing period (format: YYYY-MM-DD, timezone: EST)")  # fmt: skip
    period_end: datetime.date = Field(description="End date of the billing period (format: YYYY-MM-DD, timezone: EST)")  # fmt: skip
    issue_date: datetime.date = Field(description="Date the bill was issued/generated (format: YYYY-MM-DD, timezone: EST)")  # fmt: skip
    total_due: float = Field(description="Total amount due in USD")
    due_date: datetime.date = Field(
        description="Date by which payment is due (format: YYYY-MM-DD, timezone: EST)"
    )
    line_items: list[LineItem] = Field(default_factory=list, description="Individual charges, credits, and payments on this bill")  # fmt: skip
    status: BillStatus = Field(BillStatus.DRAFT, description="Current status of the bill")


class AccountStatus(str, Enum):
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_VERIFICATION = "Pending Verification"
    CLOSED = "Closed"


class PaymentMethodType(str, Enum):
    CREDIT_CARD = "Credit Card"
    DEBIT_CARD = "Debit Card"
    PAYPAL = "PayPal"


class PaymentMethod(NoExtra):
    method_type: PaymentMethodType = Field(description="Type of payment method")
    account_number_last_4: str = Field(description="Last 4 digits of the account number")
    expiration_date: str = Field(
        description="The expiration date of the payment method in the format MM/YYYY"
    )


class Customer(NoExtra):
    customer_id: str = Field(description="Unique identifier for the customer")
    full_name: str = Field(description="Customer's full name")
    date_of_birth: str = Field(
        description="Customer's date of birth for identity verification (format: YYYY-MM-DD)"
    )
    email: str = Field(description="Customer's email address")
    phone_number: str = Field(description="Customer's primary contact phone number")
    address: Address = Field(description="Customer's billing address")
    account_status: AccountStatus = Field(AccountStatus.PENDING_VERIFICATION, description="Current status of the customer account")  # fmt: skip
    payment_methods: list[PaymentMethod] = Field(default_factory=list, description="Stored payment methods for this customer")  # fmt: skip
    line_ids: list[str] = Field(default_factory=list, description="Phone/data lines owned by this customer")
    bill_ids: list[str] = Field(default_factory=list, description="Bills associated with this customer")
    created_at: datetime.datetime = Field(DEFAULT_START_DATE, description="Date and time when the customer account was created (format: YYYY-MM-DDTHH:MM:SS, timezone: EST)")  # type: ignore[assignment]  # fmt: skip
    last_extension_date: datetime.date | None = Field(None, description="Date of the most recent payment extension (used for quarterly limit check) (format: YYYY-MM-DD, timezone: EST)")  # fmt: skip
    goodwill_credit_used_this_year: float = Field(0.0, description="Amount of goodwill credit used in the current calendar year")  # fmt: skip


class TelecomDB(NoExtra):
    """The company's records of one rollout."""

    plans: list[Plan] = Field(default_factory=list, description="Available service plans")
    customers: list[Customer] = Field(default_factory=list, description="All customers in the system")
    lines: list[Line] = Field(default_factory=list, description="All lines in the system")
    bills: list[Bill] = Field(default_factory=list, description="All bills in the system")
    devices: list[Device] = Field(default_factory=list, description="All devices in the system")

    def get_hash(self) -> str:
        return dict_hash(self.model_dump())


# --- the customer's phone (τ²-bench user_data_model.py) --------------------------------------------
class SimStatus(str, Enum):
    ACTIVE = "active"
    MISSING = "missing"
    LOCKED_PIN = "locked_pin"
    LOCKED_PUK = "locked_puk"


class NetworkTechnology(str, Enum):
    NONE = "none"
    TWO_G = "2G"
    THREE_G = "3G"
    FOUR_G = "4G"
    FIVE_G = "5G"


class NetworkModePreference(str, Enum):
    FOUR_G_5G_PREFERRED = "4g_5g_preferred"
    FOUR_G_ONLY = "4g_only"
    THREE_G_ONLY = "3g_only"
    TWO_G_ONLY = "2g_only"


class SignalStrength(str, Enum):
    NONE = "none"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class PerformanceLevel(str, Enum):
    UNKNOWN = "unknown"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class NetworkStatus(str, Enum):
    CONNECTED = "connected"
    SEARCHING = "searching"
    NO_SERVICE = "no_service"
    EMERGENCY_ONLY = "emergency_only"


class APNNames(str, Enum):
    INTERNET = "internet"
    BROKEN = "broken"


class APNSettings(NoExtra):
    """Represents the configuration for a single Access Point Name (APN)."""

    apn_name: APNNames = Field(APNNames.INTERNET, description="The name identifier for the APN connection.")
    reset_at_reboot: bool = Field(
        False, description="Whether the APN settings will be reset at the next reboot."
    )
    mms_apn: str | None = Field("mms", description="Specific APN name used for MMS traffic, if different from general data.")  # fmt: skip
    mmsc_url: str | None = Field("http://mms.carrier.com/mms/wapenc", description="The URL of the Multimedia Messaging Service Center (MMSC). Crucial for MMS.")  # fmt: skip
    mms_proxy: str | None = Field(None, description="The proxy server address required for MMS traffic on some networks.")  # fmt: skip
    mms_port: int | None = Field(None, description="The proxy server port required for MMS traffic on some networks.")  # fmt: skip


class VpnDetails(NoExtra):
    """Holds details about the VPN connection if active."""

    server_address: str | None = Field(None, description="Address of the connected VPN server.")
    protocol: str | None = Field(None, description="VPN protocol being used (e.g., WireGuard, OpenVPN).")
    server_performance: PerformanceLevel = Field(default=PerformanceLevel.UNKNOWN, validate_default=True, description="Estimated performance/latency of the VPN connection.")  # fmt: skip


class AppPermissions(NoExtra):
    """Represents the permissions relevant to an application."""

    sms: bool = Field(False, description="Permission to send/read SMS/MMS.")
    storage: bool = Field(False, description="Permission to access device storage.")
    phone: bool = Field(False, description="Permission to make/manage phone calls.")
    network: bool = Field(False, description="Permission to access network state/internet.")


class AppStatus(NoExtra):
    """Represents the status of a specific application relevant to issues."""

    app_name: str
    permissions: AppPermissions = Field(default_factory=AppPermissions, description="Structured permissions relevant to the application.")  # fmt: skip


def _default_apps() -> dict[str, AppStatus]:
    return {"messaging": AppStatus(app_name="messaging", permissions=AppPermissions(sms=True, storage=True, phone=True)),
            "browser": AppStatus(app_name="browser", permissions=AppPermissions(network=True, storage=True))}  # fmt: skip


class MockPhoneAttributes(NoExtra):
    """Data model representing the state attributes of a mock phone device."""

    sim_card_status: SimStatus = Field(default=SimStatus.ACTIVE, validate_default=True, description="Current status of the physical or eSIM card.")  # fmt: skip
    sim_card_missing: bool = Field(False, description="Whether the SIM card is missing.")
    airplane_mode: bool = Field(False, description="Whether Airplane Mode, which disables all radios, is currently enabled.")  # fmt: skip
    network_signal_strength: SignalStrength = Field(default=SignalStrength.GOOD, validate_default=True, description="Current strength of the cellular network signal.")  # fmt: skip
    network_technology_connected: NetworkTechnology = Field(default=NetworkTechnology.FIVE_G, validate_default=True, description="The type of cellular network technology currently connected (e.g., 5G, 4G).")  # fmt: skip
    network_connection_status: NetworkStatus = Field(default=NetworkStatus.CONNECTED, validate_default=True, description="High-level network status description (e.g., 'Connected', 'Searching', 'Emergency Calls Only', 'No Service').")  # fmt: skip
    battery_level: int = Field(80, description="The current battery level, from 0 to 100 percent.")
    data_enabled: bool = Field(True, description="Whether the master switch for Mobile/Cellular Data usage is enabled.")  # fmt: skip
    roaming_enabled: bool = Field(False, description="Whether the user setting to allow data usage while roaming is enabled.")  # fmt: skip
    network_mode_preference: NetworkModePreference = Field(default=NetworkModePreference.FOUR_G_5G_PREFERRED, validate_default=True, description="User's preferred network type (e.g., prefer 4G/5G, use 3G only).")  # fmt: skip
    active_apn_settings: APNSettings = Field(default_factory=APNSettings, description="The currently active Access Point Name configuration.")  # fmt: skip
    wifi_enabled: bool = Field(False, description="Whether the Wi-Fi radio is enabled.")
    wifi_connected: bool = Field(
        False, description="Whether the device is currently connected to a Wi-Fi network."
    )
    wifi_ssid: str | None = Field(None, description="The name (SSID) of the connected Wi-Fi network, if any.")
    wifi_signal_strength: SignalStrength = Field(default=SignalStrength.NONE, validate_default=True, description="Strength of the connected Wi-Fi signal.")  # fmt: skip
    wifi_calling_enabled: bool = Field(False, description="Whether the Wi-Fi Calling feature is enabled.")
    wifi_calling_mms_over_wifi: bool = Field(False, description="Preference/capability to send/receive MMS over Wi-Fi (depends on carrier and device support).")  # fmt: skip
    data_saver_mode: bool = Field(False, description="Whether the system-wide Data Saver mode is enabled to reduce data consumption.")  # fmt: skip
    vpn_enabled_setting: bool = Field(False, description="Whether a VPN profile is configured and potentially set to be 'always on' or manually enabled in settings.")  # fmt: skip
    vpn_connected: bool = Field(
        False, description="Whether there currently is an active VPN connection tunnel."
    )
    vpn_details: VpnDetails | None = Field(
        None, description="Details about the active VPN connection, if connected."
    )
    app_statuses: dict[str, AppStatus] = Field(default_factory=_default_apps, description="Status of specific applications relevant to troubleshooting (e.g., messaging app, browser).")  # fmt: skip


class PaymentRequest(NoExtra):
    """Represents a payment made by the user."""

    bill_id: str = Field(description="The ID of the bill.")
    amount_due: float = Field(description="The amount of the payment in USD.")
    paid: bool = Field(description="Whether the payment has been made.", default=False)


def _default_signal() -> dict[NetworkTechnology, SignalStrength]:
    return {NetworkTechnology.TWO_G: SignalStrength.POOR, NetworkTechnology.THREE_G: SignalStrength.FAIR,
            NetworkTechnology.FOUR_G: SignalStrength.GOOD, NetworkTechnology.FIVE_G: SignalStrength.EXCELLENT}  # fmt: skip


class UserSurroundings(NoExtra):
    """Represents the physical surroundings of the user."""

    name: str | None = Field(None, description="The name of the user.")
    phone_number: str | None = Field(None, description="The phone number of the user.")
    is_abroad: bool = Field(False, description="Whether the user is currently abroad.")
    roaming_allowed: bool = Field(False, description="Whether the user is allowed to roam.")
    signal_strength: dict[NetworkTechnology, SignalStrength] = Field(default_factory=_default_signal, description="Signal strength for each network technology where the user is located.")  # fmt: skip
    mobile_data_usage_exceeded: bool = Field(False, description="Whether the user has exceeded their data usage limit.")  # fmt: skip
    line_active: bool = Field(True, description="Whether the user has an active line.")
    payment_request: PaymentRequest | None = Field(
        None, description="The payment that the agent has requested."
    )


class TelecomUserDB(NoExtra):
    """The customer's phone and surroundings of one rollout."""

    device: MockPhoneAttributes = Field(default_factory=MockPhoneAttributes, description="Mock phone device")
    surroundings: UserSurroundings = Field(default_factory=UserSurroundings, description="User's physical surroundings")  # fmt: skip

    def get_hash(self) -> str:
        return dict_hash(self.model_dump())


# --- the folder ------------------------------------------------------------------------------------
@dataclass
class TelecomData:
    """The loaded folder: the two databases as validated plain dicts (each rollout validates a fresh
    copy), the published tasks, the split, the policy parts."""

    path: Path
    db: dict[str, Any]
    user_db: dict[str, Any]
    tasks: list[dict]
    split: dict[str, list[str]]
    main_policy: str
    tech_support: str
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def policy(self) -> str:
        """τ²-bench's telecom policy as the agent gets it (``get_environment``, manual policy)."""
        return (f"<main_policy>\n{self.main_policy}\n</main_policy>\n<tech_support_policy>\n{self.tech_support}"
                "\n</tech_support_policy>")  # fmt: skip

    def new_db(self) -> TelecomDB:
        return TelecomDB.model_validate(self.db)

    def new_user_db(self) -> TelecomUserDB:
        return TelecomUserDB.model_validate(self.user_db)
