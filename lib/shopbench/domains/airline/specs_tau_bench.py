"""tau-bench's airline tool specs as its agent sees them (issue 28 item 1): the ``get_info()`` of each of
``tau_bench/envs/airline/tools/*.py`` (MIT, github.com/sierra-research/tau-bench, commit ``edad7fc``
descriptions; the recorded trajectories ran before that commit changed ``get_user_details``'s
description from "Get the details of an user." to the text below), in ``ALL_TOOLS`` order. Data:
every object requires all its properties, in order (as each ``get_info()`` lists them)."""

from __future__ import annotations

__all__ = ["TAU_BENCH_TOOL_SPECS"]


def _t(type_: str, description: str) -> dict:
    return {"type": type_, "description": description}


def _s(description: str) -> dict:
    return _t("string", description)


def _enum(*values: str) -> dict:
    return {"type": "string", "enum": list(values)}


def _obj(props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(props)}


def _array(description: str, props: dict) -> dict:
    return {"type": "array", "description": description, "items": _obj(props)}


def _fn(name: str, description: str, props: dict) -> dict:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": _obj(props)},
    }


_USER_ID = _s("The ID of the user to book the reservation, such as 'sara_doe_496'.")
_RESERVATION_ID = _s("The reservation ID, such as 'ZFA04Y'.")
_CABIN = _enum("basic_economy", "economy", "business")
_PAYMENT_ID = _s("The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', "
                 "'certificate_7815826'.")  # fmt: skip
_FLIGHT = {
    "flight_number": _s("Flight number, such as 'HAT001'."),
    "date": _s("The date for the flight in the format 'YYYY-MM-DD', such as '2024-05-01'."),
}
_PASSENGERS = _array("An array of objects containing details about each passenger.", {
    "first_name": _s("The first name of the passenger, such as 'Noah'."),
    "last_name": _s("The last name of the passenger, such as 'Brown'."),
    "dob": _s("The date of birth of the passenger in the format 'YYYY-MM-DD', such as '1990-01-01'."),
})  # fmt: skip


def _search(date_example: str) -> dict:
    return {
        "origin": _s("The origin city airport in three letters, such as 'JFK'."),
        "destination": _s("The destination city airport in three letters, such as 'LAX'."),
        "date": _s(f"The date of the flight in the format 'YYYY-MM-DD', such as '{date_example}'."),
    }


_SEARCH = "Search direct flights between two cities on a specific date."

TAU_BENCH_TOOL_SPECS: list[dict] = [
    _fn("book_reservation", "Book a reservation.", {
        "user_id": _USER_ID,
        "origin": _s("The IATA code for the origin city, such as 'SFO'."),
        "destination": _s("The IATA code for the destination city, such as 'JFK'."),
        "flight_type": _enum("one_way", "round_trip"),
        "cabin": _CABIN,
        "flights": _array("An array of objects containing details about each piece of flight.", _FLIGHT),
        "passengers": _PASSENGERS,
        "payment_methods": _array("An array of objects containing details about each payment method.", {
            "payment_id": _PAYMENT_ID, "amount": _t("number", "The amount to be paid.")}),
        "total_baggages": _t("integer", "The total number of baggage items included in the reservation."),
        "nonfree_baggages": _t("integer", "The number of non-free baggage items included in the reservation."),
        "insurance": _enum("yes", "no"),
    }),
    _fn("calculate", "Calculate the result of a mathematical expression.", {
        "expression": _s("The mathematical expression to calculate, such as '2 + 2'. The expression can contain "
                         "numbers, operators (+, -, *, /), parentheses, and spaces.")}),
    _fn("cancel_reservation", "Cancel the whole reservation.", {"reservation_id": _RESERVATION_ID}),
    _fn("get_reservation_details", "Get the details of a reservation.",
        {"reservation_id": _s("The reservation id, such as '8JX2WO'.")}),
    _fn("get_user_details", "Get the details of an user, including their reservations.",
        {"user_id": _s("The user id, such as 'sara_doe_496'.")}),
    _fn("list_all_airports", "List all airports and their cities.", {}),
    _fn("search_direct_flight", _SEARCH, _search("2024-01-01")),
    _fn("search_onestop_flight", _SEARCH, _search("2024-05-01")),
    _fn("send_certificate", "Send a certificate to a user. Be careful!",
        {"user_id": _USER_ID, "amount": _t("number", "Certificate amount to send.")}),
    _fn("think", "Use the tool to think about something. It will not obtain new information or change the "
        "database, but just append the thought to the log. Use it when complex reasoning is needed.",
        {"thought": _s("A thought to think about.")}),
    _fn("transfer_to_human_agents", "Transfer the user to a human agent, with a summary of the user's issue. Only "
        "transfer if the user explicitly asks for a human agent, or if the user's issue cannot be resolved by the "
        "agent with the available tools.", {"summary": _s("A summary of the user's issue.")}),
    _fn("update_reservation_baggages", "Update the baggage information of a reservation.", {
        "reservation_id": _RESERVATION_ID,
        "total_baggages": _t("integer", "The updated total number of baggage items included in the reservation."),
        "nonfree_baggages": _t("integer", "The updated number of non-free baggage items included in the "
                               "reservation."),
        "payment_id": _PAYMENT_ID,
    }),
    _fn("update_reservation_flights", "Update the flight information of a reservation.", {
        "reservation_id": _RESERVATION_ID,
        "cabin": _CABIN,
        "flights": _array("An array of objects containing details about each piece of flight in the ENTIRE new "
                          "reservation. Even if the a flight segment is not changed, it should still be included "
                          "in the array.", _FLIGHT),
        "payment_id": _PAYMENT_ID,
    }),
    _fn("update_reservation_passengers", "Update the passenger information of a reservation.",
        {"reservation_id": _RESERVATION_ID, "passengers": _PASSENGERS}),
]  # fmt: skip
