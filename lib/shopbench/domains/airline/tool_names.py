"""The airline tools' names and τ²-bench's texts for them (issue 27: split from :mod:`.tools`, below both
it and :mod:`.data_model`, which checks a task's expected actions against :data:`ALL_TOOL_NAMES`)."""

from __future__ import annotations

from .specs_tau_bench import TAU_BENCH_TOOL_SPECS

__all__ = [
    "ALL_TOOL_NAMES",
    "READ_TOOLS",
    "TAU2_TOOL_DOCS",
    "TAU2_TOOL_NAMES",
    "TAU_BENCH_TOOL_NAMES",
    "WRITE_TOOLS",
]

# τ²-bench's docstrings of the tools (MIT; src/tau2/domains/airline/tools.py at commit a2c0247): the
# description is built from them as τ²-bench's Tool does (short, "\n\n", long), Args are the
# parameters' descriptions.
TAU2_TOOL_DOCS: dict[str, tuple[str, str, dict[str, str]]] = {
    "book_reservation": ("Book a reservation.", "", {
        "user_id": "The ID of the user to book the reservation such as 'sara_doe_496'`.",
        "origin": "The IATA code for the origin city such as 'SFO'.",
        "destination": "The IATA code for the destination city such as 'JFK'.",
        "flight_type": "The type of flight such as 'one_way' or 'round_trip'.",
        "cabin": "The cabin class such as 'basic_economy', 'economy', or 'business'.",
        "flights": "An array of objects containing details about each piece of flight.",
        "passengers": "An array of objects containing details about each passenger.",
        "payment_methods": "An array of objects containing details about each payment method.",
        "total_baggages": "The total number of baggage items to book the reservation.",
        "nonfree_baggages": "The number of non-free baggage items to book the reservation.",
        "insurance": "Whether the reservation has insurance."}),
    "calculate": ("Calculate the result of a mathematical expression.", "", {
        "expression": "The mathematical expression to calculate, such as '2 + 2'. The expression can contain "
                      "numbers, operators (+, -, *, /), parentheses, and spaces."}),
    "cancel_reservation": ("Cancel the whole reservation.", "", {
        "reservation_id": "The reservation ID, such as 'ZFA04Y'."}),
    "get_reservation_details": ("Get the details of a reservation.", "", {
        "reservation_id": "The reservation ID, such as '8JX2WO'."}),
    "get_user_details": ("Get the details of a user, including their reservations.", "", {
        "user_id": "The user ID, such as 'sara_doe_496'."}),
    "list_all_airports": ("Returns a list of all available airports.", "", {}),
    "search_direct_flight": ("Search for direct flights between two cities on a specific date.", "", {
        "origin": "The origin city airport in three letters, such as 'JFK'.",
        "destination": "The destination city airport in three letters, such as 'LAX'.",
        "date": "The date of the flight in the format 'YYYY-MM-DD', such as '2024-01-01'."}),
    "search_onestop_flight": ("Search for one-stop flights between two cities on a specific date.", "", {
        "origin": "The origin city airport in three letters, such as 'JFK'.",
        "destination": "The destination city airport in three letters, such as 'LAX'.",
        "date": "The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'."}),
    "send_certificate": ("Send a certificate to a user. Be careful!", "", {
        "user_id": "The ID of the user to book the reservation, such as 'sara_doe_496'.",
        "amount": "The amount of the certificate to send."}),
    "transfer_to_human_agents": (
        "Transfer the user to a human agent, with a summary of the user's issue.",
        "Only transfer if\n -  the user explicitly asks for a human agent\n -  given the policy and the available "
        "tools, you cannot solve the user's issue.", {"summary": "A summary of the user's issue."}),
    "update_reservation_baggages": ("Update the baggage information of a reservation.", "", {
        "reservation_id": "The reservation ID, such as 'ZFA04Y'",
        "total_baggages": "The updated total number of baggage items included in the reservation.",
        "nonfree_baggages": "The updated number of non-free baggage items included in the reservation.",
        "payment_id": "The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', "
                      "'certificate_7815826'."}),
    "update_reservation_flights": ("Update the flight information of a reservation.", "", {
        "reservation_id": "The reservation ID, such as 'ZFA04Y'.",
        "cabin": "The cabin class of the reservation",
        "flights": "An array of objects containing details about each piece of flight in the ENTIRE new "
                   "reservation. Even if the a flight segment is not changed, it should still be included in the "
                   "array.",
        "payment_id": "The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', "
                      "'certificate_7815826'."}),
    "update_reservation_passengers": ("Update the passenger information of a reservation.", "", {
        "reservation_id": "The reservation ID, such as 'ZFA04Y'.",
        "passengers": "An array of objects containing details about each passenger."}),
    "get_flight_status": ("Get the status of a flight.", "", {
        "flight_number": "The flight number.", "date": "The date of the flight."}),
}  # fmt: skip

TAU2_TOOL_NAMES: tuple[str, ...] = tuple(TAU2_TOOL_DOCS)
TAU_BENCH_TOOL_NAMES: tuple[str, ...] = tuple(s["function"]["name"] for s in TAU_BENCH_TOOL_SPECS)
ALL_TOOL_NAMES: tuple[str, ...] = tuple(dict.fromkeys(TAU2_TOOL_NAMES + TAU_BENCH_TOOL_NAMES))
WRITE_TOOLS = frozenset({"book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
                         "update_reservation_flights", "update_reservation_passengers"})  # fmt: skip
READ_TOOLS = frozenset({"get_reservation_details", "get_user_details", "list_all_airports", "search_direct_flight",
                        "search_onestop_flight", "get_flight_status"})  # fmt: skip
