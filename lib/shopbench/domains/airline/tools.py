"""The airline tools (issue 28 item 1), written from tau-bench's and tau2-bench's published code
(MIT; read, not copied), in two readings (:data:`FIDELITIES`):

- ``"tau2"`` (default), :class:`AirlineTools`: τ²-bench's ``src/tau2/domains/airline/tools.py``,
  the 14 tools its agent gets (``get_flight_status`` instead of tau-bench's ``think``), with its
  behaviour: a booking takes the seats (``available_seats`` drops by the number of passengers), a
  flight change also changes the cabin, errors are τ²-bench's texts ("Reservation X not found"),
  outputs are ``json.dumps`` of its pydantic records (a user's ``user_id``, float gift-card and
  certificate amounts, a reservation's ``status`` null when absent, ``DirectFlight`` rows). The
  specs the agent sees (:data:`TAU2_TOOL_SPECS`) are built as τ²-bench builds them
  (``Tool.openai_schema``): each tool's docstring (short description, "\\n\\n" and the long one
  when there is one; an ``Args:`` entry is the parameter's description) and pydantic's JSON schema
  of a model named ``parameters`` over the method's annotations.
- ``"tau_bench"``, :class:`TauBenchAirlineTools`: tau-bench's ``tau_bench/envs/airline/tools``
  (the 14 tools with ``think``), the reading its recorded conversations ran under: plain-dict
  records as the files hold them, tau-bench's texts and quirks (``get_reservation_details`` of an
  unknown id says "Error: user not found"; ``search_onestop_flight`` fills the second leg's seats
  and prices from the first leg's date; a booking takes no seats; a flight change keeps the old
  cabin). Specs: :data:`~.specs_tau_bench.TAU_BENCH_TOOL_SPECS`, tau-bench's ``get_info()``.

In both, a call never raises: ``execute(name, arguments)`` returns ``(ok, content)``, the content
being the tool message the agent sees; a wrong argument (missing, unexpected, wrong type) is the
error text the benchmark itself returns (Python's ``TypeError`` text, "Error: ..."), as τ-bench's
environment turns any exception into the observation.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, create_model

from .data_model import TABLES, AirlineDB
from .specs_tau_bench import TAU_BENCH_TOOL_SPECS
from .tool_names import TAU2_TOOL_DOCS, TAU2_TOOL_NAMES

__all__ = [
    "FIDELITIES", "TAU2_TOOL_SPECS", "TAU_BENCH_TOOL_SPECS", "AirlineTools", "TauBenchAirlineTools", "make_tools",
    "tool_specs",
]  # fmt: skip

FIDELITIES = ("tau2", "tau_bench")


class _Table:
    """A table of one rollout as a dict: a record read for use is a copy kept in the rollout's
    changes (copy-on-read), so tools written over plain dicts, as both benchmarks write them, change
    only this rollout's records."""

    def __init__(self, db: AirlineDB, name: str):
        self.db, self.name = db, name
        self.base, self.changed = db.base[name], db.changed[name]

    def __contains__(self, key: Any) -> bool:
        try:
            return key in self.changed or key in self.base
        except TypeError:  # an unhashable key (a list given as an id): a dict raises this too
            raise

    def __getitem__(self, key: str) -> dict:
        if key not in self.changed:
            self.changed[key] = copy.deepcopy(self.base[key])
        return self.changed[key]

    def __setitem__(self, key: str, value: dict) -> None:
        self.changed[key] = value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def keys(self) -> list[str]:
        return list(self.base) + [k for k in self.changed if k not in self.base]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def values(self) -> Iterator[dict]:
        """The records, read-only views of unchanged ones (a search reads all 300 flights)."""
        for k in self.keys():
            yield self.changed.get(k) or self.base[k]


def _data(db: AirlineDB) -> dict[str, _Table]:
    return {t: _Table(db, t) for t in TABLES}


# ---------------------------------------------------------------------------------------------------
# τ²-bench: input records (pydantic, as τ²-bench validates tool arguments) and output shapes.
# Field names, types and descriptions are τ²-bench's (src/tau2/domains/airline/data_model.py).
FlightType = Literal["round_trip", "one_way"]
CabinClass = Literal["business", "economy", "basic_economy"]
Insurance = Literal["yes", "no"]


class FlightInfo(BaseModel):
    flight_number: str = Field(description="Flight number, such as 'HAT001'.")
    date: str = Field(description="The date for the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.")


class Passenger(BaseModel):
    first_name: str = Field(description="Passenger's first name")
    last_name: str = Field(description="Passenger's last name")
    dob: str = Field(description="Date of birth in YYYY-MM-DD format")


class Payment(BaseModel):
    payment_id: str = Field(description="Unique identifier for the payment")
    amount: int = Field(description="Payment amount in dollars")


class Reservation(BaseModel):
    """The fields τ²-bench validates when ``book_reservation`` builds the record (before any check)."""

    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: FlightType
    cabin: CabinClass
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Insurance


def _pm_shape(pm: Mapping) -> dict:
    head = {"source": pm.get("source"), "id": pm.get("id")}
    if pm.get("source") == "credit_card":
        return {**head, "brand": pm.get("brand"), "last_four": pm.get("last_four")}
    return {**head, "amount": float(pm["amount"])}


def tau2_user(uid: str, u: Mapping) -> dict:
    """A user as τ²-bench's ``User.model_dump()`` writes it."""
    a = u["address"]
    return {
        "user_id": uid, "name": {"first_name": u["name"]["first_name"], "last_name": u["name"]["last_name"]},
        "address": {"address1": a.get("address1"), "address2": a.get("address2"), "city": a.get("city"),
                    "country": a.get("country"), "state": a.get("state"), "zip": a.get("zip")},
        "email": u.get("email"), "dob": u.get("dob"),
        "payment_methods": {k: _pm_shape(v) for k, v in u["payment_methods"].items()},
        "saved_passengers": [{"first_name": p["first_name"], "last_name": p["last_name"], "dob": p["dob"]}
                             for p in u["saved_passengers"]],
        "membership": u.get("membership"), "reservations": list(u["reservations"]),
    }  # fmt: skip


def tau2_reservation(r: Mapping) -> dict:
    """A reservation as τ²-bench's ``Reservation.model_dump()`` writes it."""
    return {
        "reservation_id": r["reservation_id"], "user_id": r["user_id"], "origin": r["origin"],
        "destination": r["destination"], "flight_type": r["flight_type"], "cabin": r["cabin"],
        "flights": [{"flight_number": f["flight_number"], "origin": f["origin"], "destination": f["destination"],
                     "date": f["date"], "price": f["price"]} for f in r["flights"]],
        "passengers": [{"first_name": p["first_name"], "last_name": p["last_name"], "dob": p["dob"]}
                       for p in r["passengers"]],
        "payment_history": [{"payment_id": p["payment_id"], "amount": p["amount"]} for p in r["payment_history"]],
        "created_at": r["created_at"], "total_baggages": r["total_baggages"],
        "nonfree_baggages": r["nonfree_baggages"], "insurance": r["insurance"], "status": r.get("status"),
    }  # fmt: skip


def _direct(f: Mapping, date: str, day: Mapping, with_date: str | None = None) -> dict:
    return {"flight_number": f["flight_number"], "origin": f["origin"], "destination": f["destination"],
            "status": "available", "scheduled_departure_time_est": f["scheduled_departure_time_est"],
            "scheduled_arrival_time_est": f["scheduled_arrival_time_est"], "date": with_date,
            "available_seats": dict(day["available_seats"]), "prices": dict(day["prices"])}  # fmt: skip


_AIRPORTS = (("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
             ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"),
             ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"), ("MCO", "Orlando"),
             ("EWR", "Newark"), ("CLT", "Charlotte"), ("MSP", "Minneapolis"), ("DTW", "Detroit"),
             ("PHL", "Philadelphia"), ("LGA", "LaGuardia"))  # fmt: skip


def _calculate(expression: str) -> str:
    if not all(char in "0123456789+-*/(). " for char in expression):
        raise ValueError("Invalid characters in expression")
    # the characters allowed leave only arithmetic; ** is the one operator that can run away
    if "**" in expression:
        raise ValueError("Invalid characters in expression")
    return str(round(float(eval(expression, {"__builtins__": None}, {})), 2))  # noqa: S307


class AirlineTools:
    """τ²-bench's airline tools over one :class:`AirlineDB` (module docstring). The methods are the
    tools (their names and parameters are the published ones); :meth:`execute` runs one call."""

    fidelity = "tau2"

    def __init__(self, db: AirlineDB):
        self.db = db
        self.data = _data(db)

    # dispatch: τ²-bench's Environment.get_response -> make_tool_call -> ToolKitBase.use_tool
    def execute(self, name: str, arguments: Mapping[str, Any] | None) -> tuple[bool, str]:
        try:
            res = self.call(name, dict(arguments) if isinstance(arguments, Mapping) else arguments)
        except Exception as e:  # noqa: BLE001 - τ²-bench turns every exception into the tool's error
            return False, f"Error: {e}"
        return True, res if isinstance(res, str) else json.dumps(res, default=str)

    def call(self, name: str, arguments: Any) -> Any:
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise TypeError("tau2.environment.environment.Environment.make_tool_call() argument after ** must be "
                            f"a mapping, not {type(arguments).__name__}")  # fmt: skip
        if "requestor" in arguments:
            raise TypeError("tau2.environment.environment.Environment.make_tool_call() got multiple values for "
                            "keyword argument 'requestor'")  # fmt: skip
        if name not in TAU2_TOOL_NAMES:
            raise ValueError(f"Tool '{name}' not found.")
        return getattr(self, name)(**arguments)

    # helpers (τ²-bench's _get_user, _get_reservation, _get_flight, _get_flight_instance)
    def _user(self, user_id: str) -> dict:
        if user_id not in self.data["users"]:
            raise ValueError(f"User {user_id} not found")
        return self.data["users"][user_id]

    def _reservation(self, reservation_id: str) -> dict:
        if reservation_id not in self.data["reservations"]:
            raise ValueError(f"Reservation {reservation_id} not found")
        return self.data["reservations"][reservation_id]

    def _flight(self, flight_number: str) -> dict:
        if flight_number not in self.data["flights"]:
            raise ValueError(f"Flight {flight_number} not found")
        return self.data["flights"][flight_number]

    def _instance(self, flight_number: str, date: str) -> dict:
        flight = self._flight(flight_number)
        if date not in flight["dates"]:
            raise ValueError(f"Flight {flight_number} not found on date {date}")
        return flight["dates"][date]

    def _new_reservation_id(self) -> str:
        for rid in ("HATHAT", "HATHAU", "HATHAV"):
            if rid not in self.data["reservations"]:
                return rid
        raise ValueError("Too many reservations")

    def _search(self, date: str, origin: str | None, destination: str | None,
                leave_after: str | None = None) -> list[dict]:  # fmt: skip
        out = []
        for f in self.data["flights"].values():
            day = f["dates"].get(date)
            if (
                (origin is None or f["origin"] == origin)
                and (destination is None or f["destination"] == destination)
                and day is not None
                and day["status"] == "available"
                and (leave_after is None or f["scheduled_departure_time_est"] >= leave_after)
            ):
                out.append(_direct(f, date, day))
        return out

    def _payment_for_update(self, user: dict, payment_id: str, total_price: int) -> dict | None:
        if payment_id not in user["payment_methods"]:
            raise ValueError("Payment method not found")
        pm = user["payment_methods"][payment_id]
        if pm["source"] == "certificate":
            raise ValueError("Certificate cannot be used to update reservation")
        if pm["source"] == "gift_card" and pm["amount"] < total_price:
            raise ValueError("Gift card balance is not enough")
        if pm["source"] == "gift_card":
            pm["amount"] = float(pm["amount"]) - total_price
        return {"payment_id": payment_id, "amount": total_price} if total_price != 0 else None

    # the tools, in τ²-bench's order
    def book_reservation(self, user_id: str, origin: str, destination: str, flight_type: FlightType,
                         cabin: CabinClass, flights: list[FlightInfo | dict], passengers: list[Passenger | dict],
                         payment_methods: list[Payment | dict], total_baggages: int, nonfree_baggages: int,
                         insurance: Insurance) -> dict:  # fmt: skip
        fls: list[Any] = (
            [FlightInfo(**cast(dict, f)) for f in flights]
            if all(isinstance(f, dict) for f in flights)
            else flights
        )
        pas: list[Any] = (
            [Passenger(**cast(dict, p)) for p in passengers]
            if all(isinstance(p, dict) for p in passengers)
            else passengers
        )
        pms: list[Any] = (
            [Payment(**cast(dict, p)) for p in payment_methods]
            if all(isinstance(p, dict) for p in payment_methods)
            else payment_methods
        )
        user = self._user(user_id)
        rid = self._new_reservation_id()
        res = Reservation(reservation_id=rid, user_id=user_id, origin=origin, destination=destination,
                          flight_type=flight_type, cabin=cabin, passengers=pas,
                          payment_history=pms, created_at="2024-05-15T15:00:00",
                          total_baggages=total_baggages, nonfree_baggages=nonfree_baggages,
                          insurance=insurance).model_dump()  # fmt: skip
        record: dict = {**{k: res[k] for k in ("reservation_id", "user_id", "origin", "destination", "flight_type",
                                                "cabin")}, "flights": [], "passengers": res["passengers"],
                        "payment_history": res["payment_history"]}  # fmt: skip
        record.update({k: res[k] for k in ("created_at", "total_baggages", "nonfree_baggages", "insurance")})
        total_price = 0
        days = []
        for fi in fls:
            flight = self._flight(fi.flight_number)
            day = self._instance(fi.flight_number, fi.date)
            if day["status"] != "available":
                raise ValueError(f"Flight {fi.flight_number} not available on date {fi.date}")
            if day["available_seats"][cabin] < len(pas):
                raise ValueError(f"Not enough seats on flight {fi.flight_number}")
            price = day["prices"][cabin]
            record["flights"].append({"flight_number": fi.flight_number, "origin": flight["origin"],
                                      "destination": flight["destination"], "date": fi.date, "price": price})  # fmt: skip
            days.append(day)
            total_price += price * len(pas)
        if insurance == "yes":
            total_price += 30 * len(pas)
        total_price += 50 * nonfree_baggages
        for p in pms:
            if p.payment_id not in user["payment_methods"]:
                raise ValueError(f"Payment method {p.payment_id} not found")
            upm = user["payment_methods"][p.payment_id]
            if upm["source"] in ("gift_card", "certificate") and upm["amount"] < p.amount:
                raise ValueError(f"Not enough balance in payment method {p.payment_id}")
        paid = sum(p.amount for p in pms)
        if paid != total_price:
            raise ValueError(f"Payment amount does not add up, total price is {total_price}, but paid {paid}")
        for p in pms:
            upm = user["payment_methods"][p.payment_id]
            if upm["source"] == "gift_card":
                upm["amount"] = float(upm["amount"]) - p.amount
            elif upm["source"] == "certificate":
                user["payment_methods"].pop(p.payment_id)
        for day in days:
            day["available_seats"][cabin] -= len(pas)
        self.data["reservations"][rid] = record
        user["reservations"].append(rid)
        return tau2_reservation(record)

    def calculate(self, expression: str) -> str:
        return _calculate(expression)

    def cancel_reservation(self, reservation_id: str) -> dict:
        r = self._reservation(reservation_id)
        r["payment_history"].extend([{"payment_id": p["payment_id"], "amount": -p["amount"]}
                                     for p in r["payment_history"]])  # fmt: skip
        r["status"] = "cancelled"
        return tau2_reservation(r)

    def get_reservation_details(self, reservation_id: str) -> dict:
        return tau2_reservation(self._reservation(reservation_id))

    def get_user_details(self, user_id: str) -> dict:
        return tau2_user(user_id, self._user(user_id))

    def list_all_airports(self) -> list[dict]:
        return [{"iata": c, "city": n} for c, n in _AIRPORTS]

    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[dict]:
        return self._search(date, origin, destination)

    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list[dict]]:
        out = []
        for r1 in self._search(date, origin, None):
            r1["date"] = date
            date2 = f"2024-05-{int(date[-2:]) + 1}" if "+1" in r1["scheduled_arrival_time_est"] else date
            for r2 in self._search(date2, r1["destination"], destination, r1["scheduled_arrival_time_est"]):
                r2["date"] = date2
                out.append([r1, r2])
        return out

    def send_certificate(self, user_id: str, amount: int) -> str:
        user = self._user(user_id)
        for pid in (f"certificate_{i}" for i in (3221322, 3221323, 3221324)):
            if pid not in user["payment_methods"]:
                user["payment_methods"][pid] = {"source": "certificate", "id": pid, "amount": float(amount)}
                return f"Certificate {pid} added to user {user_id} with amount {amount}."
        raise ValueError("Too many certificates")

    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    def update_reservation_baggages(self, reservation_id: str, total_baggages: int, nonfree_baggages: int,
                                    payment_id: str) -> dict:  # fmt: skip
        r = self._reservation(reservation_id)
        user = self._user(r["user_id"])
        total_price = 50 * max(0, nonfree_baggages - r["nonfree_baggages"])
        payment = self._payment_for_update(user, payment_id, total_price)
        if payment is not None:
            r["payment_history"].append(payment)
        r["total_baggages"] = total_baggages
        r["nonfree_baggages"] = nonfree_baggages
        return tau2_reservation(r)

    def update_reservation_flights(self, reservation_id: str, cabin: CabinClass, flights: list[FlightInfo | dict],
                                   payment_id: str) -> dict:  # fmt: skip
        fls: list[Any] = (
            [FlightInfo(**cast(dict, f)) for f in flights]
            if all(isinstance(f, dict) for f in flights)
            else flights
        )
        r = self._reservation(reservation_id)
        user = self._user(r["user_id"])
        n = len(r["passengers"])
        total_price = 0
        new_flights = []
        for fi in fls:
            same = next((f for f in r["flights"] if f["flight_number"] == fi.flight_number and f["date"] == fi.date
                         and cabin == r["cabin"]), None)  # fmt: skip
            if same is not None:
                total_price += same["price"] * n
                new_flights.append(same)
                continue
            flight = self._flight(fi.flight_number)
            day = self._instance(fi.flight_number, fi.date)
            if day["status"] != "available":
                raise ValueError(f"Flight {fi.flight_number} not available on date {fi.date}")
            if day["available_seats"][cabin] < n:
                raise ValueError(f"Not enough seats on flight {fi.flight_number}")
            rf = {"flight_number": fi.flight_number, "origin": flight["origin"], "destination": flight["destination"],
                  "date": fi.date, "price": day["prices"][cabin]}  # fmt: skip
            total_price += rf["price"] * n
            new_flights.append(rf)
        total_price -= sum(f["price"] for f in r["flights"]) * n
        payment = self._payment_for_update(user, payment_id, total_price)
        if payment is not None:
            r["payment_history"].append(payment)
        r["flights"] = new_flights
        r["cabin"] = cabin
        return tau2_reservation(r)

    def update_reservation_passengers(self, reservation_id: str, passengers: list[Passenger | dict]) -> dict:
        pas: list[Any] = (
            [Passenger(**cast(dict, p)) for p in passengers]
            if all(isinstance(p, dict) for p in passengers)
            else passengers
        )
        r = self._reservation(reservation_id)
        if len(pas) != len(r["passengers"]):
            raise ValueError("Number of passengers does not match")
        r["passengers"] = [p.model_dump() if isinstance(p, BaseModel) else copy.deepcopy(p) for p in pas]
        return tau2_reservation(r)

    def get_flight_status(self, flight_number: str, date: str) -> str:
        return self._instance(flight_number, date)["status"]


def _tau2_spec(name: str) -> dict:
    short, long, arg_docs = TAU2_TOOL_DOCS[name]
    sig = inspect.signature(getattr(AirlineTools, name), eval_str=True)
    params: dict[str, Any] = {}
    for pname, p in list(sig.parameters.items())[1:]:
        params[pname] = (p.annotation, Field(..., description=arg_docs[pname]))
    model = create_model("parameters", **params)
    return {"type": "function", "function": {"name": name, "description": short + ("\n\n" + long if long else ""),
                                             "parameters": model.model_json_schema()}}  # fmt: skip


TAU2_TOOL_SPECS: list[dict] = [_tau2_spec(n) for n in TAU2_TOOL_NAMES]
"""The 14 tools as τ²-bench's agent sees them (its order)."""


# ---------------------------------------------------------------------------------------------------
# tau-bench (v1): one class per tool with a static ``invoke(data, ...)`` as tau-bench writes them, so
# that a wrong argument gives tau-bench's own TypeError text ("BookReservation.invoke() missing 1
# required positional argument: 'cabin'").
def _v1_price_flight(data: dict, flight: dict, cabin: str, n: int) -> str | None:
    """tau-bench's check of a new flight segment for ``n`` passengers (the flight exists, flies that
    date, is available, has the seats in ``cabin``), then its price, origin and destination set on
    it; the error text, else None."""
    fn = flight["flight_number"]
    if fn not in data["flights"]:
        return f"Error: flight {fn} not found"
    fdata = data["flights"][fn]
    if flight["date"] not in fdata["dates"]:
        return f"Error: flight {fn} not found on date {flight['date']}"
    day = fdata["dates"][flight["date"]]
    if day["status"] != "available":
        return f"Error: flight {fn} not available on date {flight['date']}"
    if day["available_seats"][cabin] < n:
        return f"Error: not enough seats on flight {fn}"
    flight["price"] = day["prices"][cabin]
    flight["origin"] = fdata["origin"]
    flight["destination"] = fdata["destination"]
    return None


class BookReservation:
    @staticmethod
    def invoke(data: dict, user_id: str, origin: str, destination: str, flight_type: str, cabin: str,
               flights: list, passengers: list, payment_methods: list, total_baggages: int,
               nonfree_baggages: int, insurance: str) -> str:  # fmt: skip
        reservations, users = data["reservations"], data["users"]
        if user_id not in users:
            return "Error: user not found"
        rid = "HATHAT"
        if rid in reservations:
            rid = "HATHAU"
            if rid in reservations:
                rid = "HATHAV"
        reservation: dict[str, Any] = {
            "reservation_id": rid, "user_id": user_id, "origin": origin, "destination": destination,
            "flight_type": flight_type, "cabin": cabin, "flights": copy.deepcopy(flights), "passengers": passengers,
            "payment_history": payment_methods, "created_at": "2024-05-15T15:00:00",
            "total_baggages": total_baggages, "nonfree_baggages": nonfree_baggages, "insurance": insurance,
        }  # fmt: skip
        total_price = 0
        for flight in reservation["flights"]:
            err = _v1_price_flight(data, flight, cabin, len(passengers))
            if err:
                return err
            total_price += flight["price"] * len(passengers)
        if insurance == "yes":
            total_price += 30 * len(passengers)
        total_price += 50 * nonfree_baggages
        user = users[user_id]
        for pm in payment_methods:
            pid, amount = pm["payment_id"], pm["amount"]
            if pid not in user["payment_methods"]:
                return f"Error: payment method {pid} not found"
            if user["payment_methods"][pid]["source"] in ["gift_card", "certificate"]:
                if user["payment_methods"][pid]["amount"] < amount:
                    return f"Error: not enough balance in payment method {pid}"
        if sum(p["amount"] for p in payment_methods) != total_price:
            return (f"Error: payment amount does not add up, total price is {total_price}, but paid "
                    f"{sum(p['amount'] for p in payment_methods)}")  # fmt: skip
        for pm in payment_methods:
            pid, amount = pm["payment_id"], pm["amount"]
            if user["payment_methods"][pid]["source"] == "gift_card":
                user["payment_methods"][pid]["amount"] -= amount
            elif user["payment_methods"][pid]["source"] == "certificate":
                del user["payment_methods"][pid]
        reservations[rid] = reservation
        user["reservations"].append(rid)
        return json.dumps(reservation)


class Calculate:
    @staticmethod
    def invoke(data: dict, expression: str) -> str:
        if not all(char in "0123456789+-*/(). " for char in expression):
            return "Error: invalid characters in expression"
        if "**" in expression:  # see the module docstring of tau2_retail.tools: a power can run for minutes
            return "Error: invalid characters in expression"
        try:
            return str(round(float(eval(expression, {"__builtins__": None}, {})), 2))  # noqa: S307
        except Exception as e:  # noqa: BLE001 - tau-bench: f"Error: {e}"
            return f"Error: {e}"


class CancelReservation:
    @staticmethod
    def invoke(data: dict, reservation_id: str) -> str:
        reservations = data["reservations"]
        if reservation_id not in reservations:
            return "Error: reservation not found"
        r = reservations[reservation_id]
        refunds = [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in r["payment_history"]]
        r["payment_history"].extend(refunds)
        r["status"] = "cancelled"
        return json.dumps(r)


class GetReservationDetails:
    @staticmethod
    def invoke(data: dict, reservation_id: str) -> str:
        if reservation_id in data["reservations"]:
            return json.dumps(data["reservations"][reservation_id])
        return "Error: user not found"  # sic: tau-bench's text


class GetUserDetails:
    @staticmethod
    def invoke(data: dict, user_id: str) -> str:
        if user_id in data["users"]:
            return json.dumps(data["users"][user_id])
        return "Error: user not found"


class ListAllAirports:
    @staticmethod
    def invoke(data: dict) -> str:
        return json.dumps(dict(_AIRPORTS))


def _v1_row(flight: Mapping, day: Mapping) -> dict:
    out = {k: v for k, v in flight.items() if k != "dates"}
    out.update(day)
    return out


class SearchDirectFlight:
    @staticmethod
    def invoke(data: dict, origin: str, destination: str, date: str) -> str:
        results = []
        for f in data["flights"].values():
            if f["origin"] == origin and f["destination"] == destination:
                if date in f["dates"] and f["dates"][date]["status"] == "available":
                    results.append(_v1_row(f, f["dates"][date]))
        return json.dumps(results)


class SearchOnestopFlight:
    @staticmethod
    def invoke(data: dict, origin: str, destination: str, date: str) -> str:
        flights = list(data["flights"].values())
        results = []
        for f1 in flights:
            if f1["origin"] != origin:
                continue
            for f2 in flights:
                if f2["destination"] == destination and f1["destination"] == f2["origin"]:
                    date2 = (
                        f"2024-05-{int(date[-2:]) + 1}" if "+1" in f1["scheduled_arrival_time_est"] else date
                    )
                    if f1["scheduled_arrival_time_est"] > f2["scheduled_departure_time_est"]:
                        continue
                    if date in f1["dates"] and date2 in f2["dates"]:
                        if (
                            f1["dates"][date]["status"] == "available"
                            and f2["dates"][date2]["status"] == "available"
                        ):
                            r1 = _v1_row(f1, f1["dates"][date])
                            r1["date"] = date
                            r2 = _v1_row(f2, f2["dates"][date])  # sic: tau-bench reads the first leg's date
                            r2["date"] = date2
                            results.append([r1, r2])
        return json.dumps(results)


class SendCertificate:
    @staticmethod
    def invoke(data: dict, user_id: str, amount: int) -> str | None:
        users = data["users"]
        if user_id not in users:
            return "Error: user not found"
        user = users[user_id]
        for i in [3221322, 3221323, 3221324]:
            pid = f"certificate_{i}"
            if pid not in user["payment_methods"]:
                user["payment_methods"][pid] = {"source": "certificate", "amount": amount, "id": pid}
                return f"Certificate {pid} added to user {user_id} with amount {amount}."
        return None  # sic: tau-bench returns nothing after three certificates


class Think:
    @staticmethod
    def invoke(data: dict, thought: str) -> str:
        return ""


class TransferToHumanAgents:
    @staticmethod
    def invoke(data: dict, summary: str) -> str:
        return "Transfer successful"


def _v1_payment_check(
    users: Mapping, r: Mapping, payment_id: str, total_price: Any
) -> tuple[str | None, Any]:
    if payment_id not in users[r["user_id"]]["payment_methods"]:
        return "Error: payment method not found", None
    pm = users[r["user_id"]]["payment_methods"][payment_id]
    if pm["source"] == "certificate":
        return "Error: certificate cannot be used to update reservation", None
    if pm["source"] == "gift_card" and pm["amount"] < total_price:
        return "Error: gift card balance is not enough", None
    return None, pm


class UpdateReservationBaggages:
    @staticmethod
    def invoke(
        data: dict, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> str:
        users, reservations = data["users"], data["reservations"]
        if reservation_id not in reservations:
            return "Error: reservation not found"
        r = reservations[reservation_id]
        total_price = 50 * max(0, nonfree_baggages - r["nonfree_baggages"])
        err, pm = _v1_payment_check(users, r, payment_id, total_price)
        if err:
            return err
        r["total_baggages"] = total_baggages
        r["nonfree_baggages"] = nonfree_baggages
        if pm["source"] == "gift_card":
            pm["amount"] -= total_price
        if total_price != 0:
            r["payment_history"].append({"payment_id": payment_id, "amount": total_price})
        return json.dumps(r)


class UpdateReservationFlights:
    @staticmethod
    def invoke(data: dict, reservation_id: str, cabin: str, flights: list, payment_id: str) -> str:
        users, reservations = data["users"], data["reservations"]
        if reservation_id not in reservations:
            return "Error: reservation not found"
        r = reservations[reservation_id]
        total_price = 0
        flights = copy.deepcopy(flights)
        n = len(r["passengers"])
        for flight in flights:
            same = [f for f in r["flights"] if f["flight_number"] == flight["flight_number"]
                    and f["date"] == flight["date"] and cabin == r["cabin"]]  # fmt: skip
            if same:
                total_price += same[0]["price"] * n
                flight["price"] = same[0]["price"]
                flight["origin"] = same[0]["origin"]
                flight["destination"] = same[0]["destination"]
                continue
            err = _v1_price_flight(data, flight, cabin, n)
            if err:
                return err
            total_price += flight["price"] * n
        total_price -= sum(f["price"] for f in r["flights"]) * n
        err, pm = _v1_payment_check(users, r, payment_id, total_price)
        if err:
            return err
        if pm["source"] == "gift_card":
            pm["amount"] -= total_price
        r["flights"] = flights
        if total_price != 0:
            r["payment_history"].append({"payment_id": payment_id, "amount": total_price})
        return json.dumps(r)


class UpdateReservationPassengers:
    @staticmethod
    def invoke(data: dict, reservation_id: str, passengers: list) -> str:
        reservations = data["reservations"]
        if reservation_id not in reservations:
            return "Error: reservation not found"
        r = reservations[reservation_id]
        if len(passengers) != len(r["passengers"]):
            return "Error: number of passengers does not match"
        r["passengers"] = passengers
        return json.dumps(r)


_V1_TOOLS: dict[str, Any] = {
    "book_reservation": BookReservation, "calculate": Calculate, "cancel_reservation": CancelReservation,
    "get_reservation_details": GetReservationDetails, "get_user_details": GetUserDetails,
    "list_all_airports": ListAllAirports, "search_direct_flight": SearchDirectFlight,
    "search_onestop_flight": SearchOnestopFlight, "send_certificate": SendCertificate, "think": Think,
    "transfer_to_human_agents": TransferToHumanAgents, "update_reservation_baggages": UpdateReservationBaggages,
    "update_reservation_flights": UpdateReservationFlights, "update_reservation_passengers": UpdateReservationPassengers,
}  # fmt: skip
_ERR = re.compile(r"^Error\b")


class TauBenchAirlineTools:
    """tau-bench's airline tools over one :class:`AirlineDB` (module docstring). :meth:`execute` is
    its ``Env.step`` for a tool action: any exception is "Error: <exception>", an unknown name is
    "Unknown action <name>"."""

    fidelity = "tau_bench"

    def __init__(self, db: AirlineDB):
        self.db = db
        self.data = _data(db)

    def execute(self, name: str, arguments: Mapping[str, Any] | None) -> tuple[bool, str]:
        tool = _V1_TOOLS.get(name)
        if tool is None:
            return False, f"Unknown action {name}"
        try:
            kwargs = dict(arguments) if isinstance(arguments, Mapping) else arguments
            res = tool.invoke(data=self.data, **(kwargs if kwargs is not None else {}))
        except Exception as e:  # noqa: BLE001 - tau-bench's Env.step: observation = f"Error: {e}"
            return False, f"Error: {e}"
        text = res if isinstance(res, str) else json.dumps(res)
        return not _ERR.match(text), text


def make_tools(db: AirlineDB, fidelity: str = "tau2") -> AirlineTools | TauBenchAirlineTools:
    """The tools of one rollout in a reading of :data:`FIDELITIES`."""
    if fidelity == "tau2":
        return AirlineTools(db)
    if fidelity == "tau_bench":
        return TauBenchAirlineTools(db)
    raise ValueError(f"airline fidelity {fidelity!r}: use one of {list(FIDELITIES)}")


def tool_specs(fidelity: str = "tau2") -> list[dict]:
    """The specs (name, description, parameters) an agent sees in a reading."""
    if fidelity not in FIDELITIES:
        raise ValueError(f"airline fidelity {fidelity!r}: use one of {list(FIDELITIES)}")
    return copy.deepcopy(TAU2_TOOL_SPECS if fidelity == "tau2" else TAU_BENCH_TOOL_SPECS)


def replay_actions(base_db: Mapping[str, Mapping[str, dict]], actions: Sequence[Mapping], fidelity: str = "tau2",
                   args_key: str = "arguments") -> tuple[AirlineDB, list[str]]:  # fmt: skip
    """Run ``actions`` (``{"name", args_key}``) on a fresh database; the database and the errors
    (both benchmarks' gold replays go on past a failing action, as here)."""
    db = AirlineDB(base_db)
    tools = make_tools(db, fidelity)
    errors = []
    for a in actions:
        ok, res = tools.execute(a["name"], a.get(args_key) or {})
        if not ok:
            errors.append(f"{a.get('action_id', a['name'])}: {a['name']}: {res}")
    return db, errors
