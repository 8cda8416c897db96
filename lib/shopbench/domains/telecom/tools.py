"""The agent's 13 telecom tools over the company's records (issue 28 item 1), written from τ²-bench's
``src/tau2/domains/telecom/tools.py`` (MIT; read, not copied): the published names, parameters and
docstrings (the descriptions the agent sees, :func:`.toolkit.tool_spec`), its checks, its error
texts (a ``ValueError`` raised by a tool is the ``"Error: ..."`` message the agent gets, as is a
wrong argument's ``TypeError``), its outputs (pydantic records dumped as τ²-bench dumps them).

Beside the tools, the functions τ²-bench's tasks call on the company side and that the agent is not
given: ``set_data_usage`` and ``suspend_line_for_overdue_bill`` (task set-up), the ``assert_*``
checks (environment assertions). "Today" is τ²-bench's fixed 2025-02-25.
"""

from __future__ import annotations

import uuid
from datetime import date, timedelta
from typing import Any

from .data_model import Bill, BillStatus, Customer, Device, Line, LineItem, LineStatus, Plan, TelecomDB
from .toolkit import WRITE, call_tool, is_tool, tool_names, tool_spec

__all__ = ["AGENT_TOOL_NAMES", "AGENT_TOOL_SPECS", "TelecomTools", "get_today"]


def get_today() -> date:
    """τ²-bench's ``get_today``: 2025-02-25."""
    return date(2025, 2, 25)


def _find(records: list, field: str, value: Any, missing: str) -> Any:
    """The first record whose ``field`` is ``value`` (τ²-bench's lookups); ValueError(``missing``) if none."""
    for record in records:
        if getattr(record, field) == value:
            return record
    raise ValueError(missing)


class TelecomTools:
    """Tools for the telecom domain implementing the functions described in the PRD."""

    def __init__(self, db: TelecomDB) -> None:
        self.db = db

    def execute(self, name: str, arguments: Any) -> tuple[bool, str]:
        return call_tool(self, AGENT_TOOL_NAMES, name, arguments)

    # Customer Lookup
    @is_tool()
    def get_customer_by_phone(self, phone_number: str) -> Customer:
        """
        Finds a customer by their primary contact or line phone number.

        Args:
            phone_number: The phone number to search for.

        Returns:
            Customer object if found, None otherwise.
        """
        for customer in self.db.customers:
            if customer.phone_number == phone_number:
                return customer
            for line_id in customer.line_ids:
                line = self._get_line_by_id(line_id)
                if line and line.phone_number == phone_number:
                    return customer
        raise ValueError(f"Customer with phone number {phone_number} not found")

    @is_tool()
    def get_customer_by_id(self, customer_id: str) -> Customer:
        """
        Retrieves a customer directly by their unique ID.

        Args:
            customer_id: The unique identifier of the customer.

        Returns:
            Customer object if found, None otherwise.
        """
        return _find(
            self.db.customers, "customer_id", customer_id, f"Customer with ID {customer_id} not found"
        )

    @is_tool()
    def get_customer_by_name(self, full_name: str, dob: str) -> list[Customer]:
        """
        Searches for customers by name and DOB. May return multiple matches if names are similar,
        DOB helps disambiguate.

        Args:
            full_name: The full name of the customer.
            dob: Date of birth for verification, in the format YYYY-MM-DD.

        Returns:
            List of matching Customer objects.
        """
        return [
            c
            for c in self.db.customers
            if c.full_name.lower() == full_name.lower() and c.date_of_birth == dob
        ]

    def _get_line_by_phone(self, phone_number: str) -> Line:
        return _find(
            self.db.lines, "phone_number", phone_number, f"Line with phone number {phone_number} not found"
        )

    def _get_line_by_id(self, line_id: str) -> Line:
        return _find(self.db.lines, "line_id", line_id, f"Line with ID {line_id} not found")

    def _get_plan_by_id(self, plan_id: str) -> Plan:
        return _find(self.db.plans, "plan_id", plan_id, f"Plan with ID {plan_id} not found")

    def _get_device_by_id(self, device_id: str) -> Device:
        return _find(self.db.devices, "device_id", device_id, f"Device with ID {device_id} not found")

    def _get_bill_by_id(self, bill_id: str) -> Bill:
        return _find(self.db.bills, "bill_id", bill_id, f"Bill with ID {bill_id} not found")

    def _get_target_line(self, customer_id: str, line_id: str) -> Line:
        customer = self.get_customer_by_id(customer_id)
        if line_id not in customer.line_ids:
            raise ValueError(f"Line {line_id} not found for customer {customer_id}")
        return self._get_line_by_id(line_id)

    @is_tool()
    def get_details_by_id(self, id: str) -> Any:  # noqa: A002 - the published parameter name
        """
        Retrieves the details for a given ID.
        The ID must be a valid ID for a Customer, Line, Device, Bill, or Plan.

        Args:
            id: The ID of the object to retrieve.

        Returns:
            The object corresponding to the ID.

        Raises:
            ValueError: If the ID is not found or if the ID format is invalid.
        """
        if id.startswith("L"):
            return self._get_line_by_id(id)
        if id.startswith("D"):
            return self._get_device_by_id(id)
        if id.startswith("B"):
            return self._get_bill_by_id(id)
        if id.startswith("C"):
            return self.get_customer_by_id(id)
        if id.startswith("P"):
            return self._get_plan_by_id(id)
        raise ValueError(f"Unknown ID format or type: {id}")

    @is_tool(WRITE)
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> dict[str, Any]:
        """
        Suspends a specific line (max 6 months).
        Checks: Line status must be Active.
        Logic: Sets line status to Suspended, records suspension_start_date.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to suspend.
            reason: Reason for suspension.

        Returns:
            Dictionary with success status, message, and updated line if applicable.

        Raises:
            ValueError: If customer or line not found, or if line is not active.
        """
        target_line = self._get_target_line(customer_id, line_id)
        if target_line.status != LineStatus.ACTIVE:
            raise ValueError("Line must be active to suspend")
        target_line.status = LineStatus.SUSPENDED
        target_line.suspension_start_date = get_today()
        return {
            "message": "Line suspended successfully. $5/month holding fee will apply.",
            "line": target_line,
        }

    @is_tool(WRITE)
    def resume_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """
        Resumes a suspended line.
        Checks: Line status must be Suspended or Pending Activation.
        Logic: Sets line status to Active, clears suspension_start_date.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to resume.

        Returns:
            Dictionary with success status, message, and updated line if applicable.

        Raises:
            ValueError: If customer or line not found, or if line is not suspended or pending activation.
        """
        target_line = self._get_target_line(customer_id, line_id)
        if target_line.status not in [LineStatus.SUSPENDED, LineStatus.PENDING_ACTIVATION]:
            raise ValueError("Line must be suspended to resume")
        target_line.status = LineStatus.ACTIVE
        target_line.suspension_start_date = None
        return {"message": "Line resumed successfully", "line": target_line}

    @is_tool()
    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> list[Bill]:
        """
        Retrieves a list of the customer's bills, most recent first.

        Args:
            customer_id: ID of the customer.
            limit: Maximum number of bills to return.

        Returns:
            List of Bill objects, ordered by issue date (newest first).

        Raises:
            ValueError: If the customer is not found.
        """
        customer = self.get_customer_by_id(customer_id)
        bills = [self._get_bill_by_id(b) for b in customer.bill_ids]
        return sorted(bills, key=lambda b: b.issue_date, reverse=True)[:limit]

    @is_tool(WRITE)
    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        """
        Sends a payment request to the customer for a specific bill.
        Checks:
            - Customer exists
            - Bill exists and belongs to the customer
            - No other bills are already awaiting payment for this customer
        Logic: Sets bill status to AWAITING_PAYMENT and notifies customer.
        Warning: This method does not check if the bill is already PAID.
        Always check the bill status before calling this method.

        Args:
            customer_id: ID of the customer who owns the bill.
            bill_id: ID of the bill to send payment request for.

        Returns:
            Message indicating the payment request has been sent.

        Raises:
            ValueError: If customer not found, bill not found, or if another bill is already awaiting payment.
        """
        customer = self.get_customer_by_id(customer_id)
        if self._get_bills_awaiting_payment(customer):
            raise ValueError("A bill is already awaiting payment for this customer")
        if bill_id not in customer.bill_ids:
            raise ValueError(f"Bill {bill_id} not found for customer {customer_id}")
        bill = self._get_bill_by_id(bill_id)
        bill.status = BillStatus.AWAITING_PAYMENT
        return f"Payment request sent to the customer for bill {bill.bill_id}"

    def _get_bills_awaiting_payment(self, customer: Customer) -> list[Bill]:
        out = []
        for bill_id in customer.bill_ids:
            bill = self._get_bill_by_id(bill_id)
            if bill and bill.status == BillStatus.AWAITING_PAYMENT:
                out.append(bill)
        return out

    def _set_bill_to_paid(self, bill_id: str) -> str:
        self._get_bill_by_id(bill_id).status = BillStatus.PAID
        return f"Bill {bill_id} set to paid"

    def _apply_one_time_charge(self, customer_id: str, amount: float, description: str) -> None:
        customer = self.get_customer_by_id(customer_id)
        draft = None
        for bill_id in customer.bill_ids:
            bill = self._get_bill_by_id(bill_id)
            if bill and bill.status == BillStatus.DRAFT:
                draft = bill
                break
        if not draft:  # τ²-bench names the new draft bill with a random uuid (FIDELITY.md)
            nm = get_today().replace(day=1) + timedelta(days=32)
            nm = nm.replace(day=1)
            end = nm.replace(month=nm.month + 1 if nm.month < 12 else 1,
                             year=nm.year if nm.month < 12 else nm.year + 1) - timedelta(days=1)  # fmt: skip
            new_id = f"B{uuid.uuid4().hex[:8]}"
            draft = Bill(bill_id=new_id, customer_id=customer_id, period_start=nm, period_end=end, issue_date=nm,
                         total_due=0, due_date=nm + timedelta(days=14), status=BillStatus.DRAFT)  # fmt: skip
            self.db.bills.append(draft)
            customer.bill_ids.append(new_id)
        draft.line_items.append(LineItem(description=description, amount=amount, date=get_today(),
                                         item_type="Credit" if amount < 0 else "Charge"))  # fmt: skip
        draft.total_due += amount

    @is_tool()
    def get_data_usage(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """
        Retrieves current billing cycle data usage for a line, including data
        refueling amount, data limit, and cycle end date.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to check usage for.

        Returns:
            Dictionary with usage information.

        Raises:
            ValueError: If customer, line, or plan not found.
        """
        target_line = self._get_target_line(customer_id, line_id)
        plan = self._get_plan_by_id(target_line.plan_id)
        today = get_today()
        cycle_end = date(today.year, today.month + 1 if today.month < 12 else 1, 1) - timedelta(days=1)
        return {"line_id": line_id, "data_used_gb": target_line.data_used_gb, "data_limit_gb": plan.data_limit_gb,
                "data_refueling_gb": target_line.data_refueling_gb, "cycle_end_date": cycle_end}  # fmt: skip

    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> str:
        """Sets the data usage for a line (task set-up; not a tool)."""
        target_line = self._get_target_line(customer_id, line_id)
        target_line.data_used_gb = data_used_gb
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    @is_tool(WRITE)
    def enable_roaming(self, customer_id: str, line_id: str) -> Any:
        """
        Enables international roaming on a line.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to enable roaming for.

        Returns:
            Message indicating the roaming has been enabled.

        Raises:
            ValueError: If customer or line not found.
        """
        target_line = self._get_target_line(customer_id, line_id)
        if target_line.roaming_enabled:
            return "Roaming was already enabled"
        target_line.roaming_enabled = True
        return "Roaming enabled successfully"

    @is_tool(WRITE)
    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        """
        Disables international roaming on a line.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to disable roaming for.

        Returns:
            Message indicating the roaming has been enabled.

        Raises:
            ValueError: If customer or line not found.
        """
        target_line = self._get_target_line(customer_id, line_id)
        if not target_line.roaming_enabled:
            return "Roaming was already disabled"
        target_line.roaming_enabled = False
        return "Roaming disabled successfully"

    @is_tool("generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """
        Transfer the user to a human agent, with a summary of the user's issue.
        Only transfer if
         -  the user explicitly asks for a human agent
         -  given the policy and the available tools, you cannot solve the user's issue.

        Args:
            summary: A summary of the user's issue.

        Returns:
            A message indicating the user has been transferred to a human agent.
        """
        return "Transfer successful"

    @is_tool(WRITE)
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> dict[str, Any]:
        """
        Refuels data for a specific line, adding to the customer's bill.
        Checks: Line status must be Active, Customer owns the line.
        Logic: Adds data to the line and charges customer based on the plan's refueling rate.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to refuel data for.
            gb_amount: Amount of data to add in gigabytes.

        Returns:
            Dictionary with success status, message, charge amount, and updated line if applicable.

        Raises:
            ValueError: If customer, line, or plan not found, or if checks fail.
        """
        target_line = self._get_target_line(customer_id, line_id)
        if gb_amount <= 0:
            raise ValueError("Refuel amount must be positive")
        plan = self._get_plan_by_id(target_line.plan_id)
        charge = gb_amount * plan.data_refueling_price_per_gb
        target_line.data_refueling_gb += gb_amount
        self._apply_one_time_charge(customer_id, charge,
                                    f"Data refueling: {gb_amount} GB at ${plan.data_refueling_price_per_gb}/GB")  # fmt: skip
        return {"message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
                "new_data_refueling_gb": target_line.data_refueling_gb, "charge": charge}  # fmt: skip

    # --- task set-up (not tools) ---
    def suspend_line_for_overdue_bill(self, customer_id: str, line_id: str, new_bill_id: str,
                                      contract_ended: bool) -> str:  # fmt: skip
        """Suspends a line for an unpaid bill (task set-up; not a tool)."""
        line = self._get_line_by_id(line_id)
        if line.status != LineStatus.ACTIVE:
            raise ValueError("Line must be active to suspend for unpaid bill")
        plan = self._get_plan_by_id(line.plan_id)
        amount = plan.price_per_month
        if amount <= 0:
            raise ValueError("Amount must be positive for overdue bill")
        customer = self.get_customer_by_id(customer_id)
        if any(self._get_bill_by_id(b).status == BillStatus.OVERDUE for b in customer.bill_ids):
            raise ValueError("Customer already has an overdue bill")
        last = get_today().replace(day=1) - timedelta(days=1)
        first = last.replace(day=1)
        bill = Bill(bill_id=new_bill_id, customer_id=customer_id, period_start=first, period_end=last,
                    issue_date=first, total_due=0, due_date=first + timedelta(days=14), status=BillStatus.OVERDUE)  # fmt: skip
        bill.line_items.append(LineItem(description=f"Charge for line {line.line_id}", amount=amount, date=get_today(),
                                        item_type="Charge" if amount > 0 else "Credit"))  # fmt: skip
        bill.total_due += amount
        self.db.bills.append(bill)
        customer.bill_ids.append(new_bill_id)
        line.status = LineStatus.SUSPENDED
        line.suspension_start_date = get_today()
        if contract_ended:
            line.contract_end_date = last
        return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"

    # --- environment assertions (not tools) ---
    def assert_data_refueling_amount(self, customer_id: str, line_id: str, expected_amount: float) -> bool:
        return abs(self._get_target_line(customer_id, line_id).data_refueling_gb - expected_amount) < 1e-6

    def assert_line_status(self, customer_id: str, line_id: str, expected_status: LineStatus | str) -> bool:
        return bool(self._get_target_line(customer_id, line_id).status == expected_status)

    def assert_overdue_bill_exists(self, customer_id: str, overdue_bill_id: str) -> bool:
        customer = self.get_customer_by_id(customer_id)
        if overdue_bill_id not in customer.bill_ids:
            raise ValueError(f"Overdue bill {overdue_bill_id} not found")
        if self._get_bill_by_id(overdue_bill_id).status != BillStatus.OVERDUE:
            raise ValueError(f"Overdue bill {overdue_bill_id} is not overdue")
        return True

    def assert_no_overdue_bill(self, overdue_bill_id: str) -> bool:
        try:
            bill = self._get_bill_by_id(overdue_bill_id)
        except ValueError:
            return True
        return bill.status == BillStatus.PAID


AGENT_TOOL_NAMES: tuple[str, ...] = tool_names(TelecomTools)
AGENT_TOOL_SPECS: list[dict] = [tool_spec(TelecomTools, n) for n in AGENT_TOOL_NAMES]
"""The 13 tools as τ²-bench's agent sees them."""
