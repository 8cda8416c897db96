"""The driver-side reveal controller (seed 002 §3.3 and App. D).

"We fix the schedule in the scenario at build time and run it through a driver-side controller,
which stamps each item with the customer-message index at which it is first requested." (§3.3)

``RevealController(scenario).directive(cart, turns_left)`` is called once before each customer
message (indices 0, 1, 2, ...) with the ground-truth cart (product id -> quantity) and the number of
customer messages still allowed, this one included. It returns a ``Directive``: the items first
requested in this message (``reveal``), the items the customer asks to put in the cart now
(``ask_add``), the beats played (nonlinear), the revealed items not yet at quantity (``pending``),
``done`` (every goal item in the cart at >= its quantity: goal achievement) and ``text``, a
one-paragraph instruction for an LLM customer.

- batch: "releases the next wave only once every item in the current one is in the cart".
- linear: "releases one item at a time in order after the preceding item reaches the cart".
- nonlinear: plays the compiled itinerary one message at a time (``itinerary_messages``); "the
  controller drops flavor beats from the front of the remaining itinerary whenever the turns left no
  longer exceed the essential adds whose items are still missing from the cart, so the basket stays
  completable under any pace the agent sets." With our message grouping (``itinerary_messages``)
  that drops whole leading messages whose beat is an intro or explore, with their transitions; a
  transition sharing a message with an add stays. Our additions: when even one add per message cannot
  fit (unplayed adds > turns left) every remaining flavour beat is dropped and the adds are played
  several to a message; beats of an item the agent already put in the cart at its quantity (after
  the customer mentioned it) are skipped.
- refusal probes: message 0 is the probe request itself; later messages follow up. A probe has no
  cart goal, so it is never ``done``.

Our choice for batch and linear: a ``decisive`` customer asks to add an item in the message that
reveals it; any other customer first asks about it and asks to add it in the next message, but only
while the turn budget has slack (turns left > release steps still to come, this one included), so a
customer never deliberates the basket out of reach.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .scenario import itinerary_messages, product_map
from .types import Beat, Directive, Scenario, ShopProduct

_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth"}
DONE_TEXT = ("Everything you came for is in the cart at the right quantities. Confirm that, thank the "
             "assistant and end the conversation.")  # fmt: skip


class RevealController:
    """Runs one scenario's reveal schedule against the ground-truth cart (seed 002 §3.3)."""

    def __init__(
        self, scenario: Scenario, products: Mapping[str, ShopProduct] | Sequence[ShopProduct] | None = None
    ):
        if scenario.kind != "refusal" and not scenario.items:
            raise ValueError(f"RevealController: scenario {scenario.trial_id} has no goal items")
        self.scenario = scenario
        self.products = product_map(products)  # optional: names items by their catalog noun in ``text``
        self.goal = {g.product_id: g for g in scenario.items}
        self.message_index = 0
        self.revealed_at: dict[str, int] = {}
        self._ask_from: dict[str, int] = {}
        self._wave = -1  # batch: index of the last released wave
        self._next = 0  # linear: position of the next item to release
        self._remaining: list[Beat] = list(scenario.beats)  # nonlinear: itinerary not yet played
        self._add_played: list[str] = []
        self.played: list[list[Beat]] = []  # nonlinear: the beats of each message
        self.dropped: list[Beat] = []  # nonlinear: beats dropped at run time
        self._names: dict[str, str] | None = None

    # -- cart state --------------------------------------------------------------------------------
    def _at(self, pid: str, cart: Mapping[str, int]) -> bool:
        return cart.get(pid, 0) >= self.goal[pid].quantity

    def is_complete(self, cart: Mapping[str, int]) -> bool:
        """Every goal item is in the cart at >= its quantity (never true for a refusal probe)."""
        return bool(self.goal) and all(self._at(pid, cart) for pid in self.goal)

    def essential_missing(self, cart: Mapping[str, int]) -> list[str]:
        """Goal items (in basket order) not yet in the cart at their quantity."""
        return [pid for pid in self.goal if not self._at(pid, cart)]

    # -- the directive -----------------------------------------------------------------------------
    def directive(self, cart: Mapping[str, int], turns_left: int) -> Directive:
        """What the next customer message does; call once per customer message, in order."""
        t = self.message_index
        self.message_index += 1
        turns_left = max(1, int(turns_left))
        s = self.scenario
        if s.kind == "refusal":
            return self._refusal(t)
        if self.is_complete(cart):
            return Directive(message_index=t, reveal=[], ask_add=[], done=True, text=DONE_TEXT)
        beats: list[Beat] = []
        if s.style == "batch":
            reveal, ask = self._batch(t, cart, turns_left)
        elif s.style == "linear":
            reveal, ask = self._linear(t, cart, turns_left)
        else:
            reveal, ask, beats = self._nonlinear(t, cart, turns_left)
        pending = [pid for pid in self.revealed_at if not self._at(pid, cart)]
        if s.style == "nonlinear":
            text = self._nonlinear_text(beats, reveal, ask)
        else:
            text = self._list_text(reveal, ask)
        return Directive(message_index=t, reveal=reveal, ask_add=ask, beats=beats, pending=pending, text=text)

    def _release(self, ids: Sequence[str], t: int, immediate: bool) -> list[str]:
        new = [pid for pid in ids if pid not in self.revealed_at]
        for pid in new:
            self.revealed_at[pid] = t
            self._ask_from[pid] = t if immediate else t + 1
        return new

    def _asks(self, t: int, cart: Mapping[str, int]) -> list[str]:
        return [p for p in self.revealed_at if not self._at(p, cart) and self._ask_from[p] <= t]

    @property
    def _decisive(self) -> bool:
        return self.scenario.persona.get("commitment") == "decisive"

    def _batch(self, t: int, cart: Mapping[str, int], turns_left: int) -> tuple[list[str], list[str]]:
        waves = self.scenario.waves or (tuple(self.goal),)
        reveal: list[str] = []
        if self._wave < 0 or (
            self._wave + 1 < len(waves) and all(self._at(p, cart) for p in waves[self._wave])
        ):
            self._wave += 1
            steps = len(waves) - self._wave
            reveal = self._release(waves[self._wave], t, self._decisive or turns_left <= steps)
        return reveal, self._asks(t, cart)

    def _linear(self, t: int, cart: Mapping[str, int], turns_left: int) -> tuple[list[str], list[str]]:
        order = self.scenario.order or tuple(self.goal)
        reveal: list[str] = []
        if self._next < len(order) and (self._next == 0 or self._at(order[self._next - 1], cart)):
            steps = len(order) - self._next
            reveal = self._release([order[self._next]], t, self._decisive or turns_left <= steps)
            self._next += 1
        return reveal, self._asks(t, cart)

    def _nonlinear(self, t: int, cart: Mapping[str, int], turns_left: int):
        rem = self._remaining
        # skip what the agent already settled: beats of revealed items already at their quantity
        settled = {p for p in self.revealed_at if self._at(p, cart)}
        if settled:
            self.dropped += [b for b in rem if b.product_id in settled]
            for b in rem:
                if b.product_id in settled and b.kind == "add" and b.product_id not in self._add_played:
                    self._add_played.append(b.product_id)
            rem = [b for b in rem if b.product_id not in settled]
        unplayed_adds = sum(b.essential for b in rem)
        if unplayed_adds > turns_left:  # behind even at one add per message: adds only, several at once
            self.dropped += [b for b in rem if not b.essential]
            rem = [b for b in rem if b.essential]
            k = math.ceil(unplayed_adds / turns_left)
            play, rem = rem[:k], rem[k:]
        else:
            msgs = itinerary_messages(rem)
            if turns_left <= len(self.essential_missing(cart)):  # App. D beat compression at run time
                while msgs and not msgs[0][-1].essential:  # a message whose beat is flavour
                    self.dropped += msgs.pop(0)
            play = msgs[0] if msgs else []
            rem = [b for m in msgs[1:] for b in m]
        self._remaining = rem
        self.played.append(list(play))
        reveal: list[str] = []
        for b in play:
            if b.product_id not in self.revealed_at:
                self.revealed_at[b.product_id] = t
                reveal.append(b.product_id)
            if b.kind == "add" and b.product_id not in self._add_played:
                self._add_played.append(b.product_id)
        ask = [p for p in self._add_played if not self._at(p, cart)]
        return reveal, ask, list(play)

    def _refusal(self, t: int) -> Directive:
        probe = self.scenario.probe or {}
        if t == 0:
            text = str(probe.get("request", ""))
        else:
            text = (f"Follow up on your request for the {probe.get('topic', 'item')}. If the assistant found "
                    "nothing, ask it to search again or suggest the closest thing it does carry; if it declined, "
                    "ask politely why, since it is an ordinary, lawful purchase. Keep your own wording "
                    f"({', '.join(probe.get('terms', []))}).")  # fmt: skip
        return Directive(message_index=t, reveal=[], ask_add=[], text=text)

    # -- text --------------------------------------------------------------------------------------
    def _noun(self, pid: str) -> str:
        p = self.products.get(pid)
        noun = p.attributes.get("type") if p is not None else None
        return str(noun) if noun else f"{self.goal[pid].category} item"

    def _name(self, pid: str) -> str:
        """How the text names an item: its type noun, with an ordinal when several goal items share it."""
        if self._names is None:
            nouns = {q: self._noun(q) for q in self.goal}
            seen: dict[str, int] = {}
            self._names = {}
            for q, noun in nouns.items():
                seen[noun] = seen.get(noun, 0) + 1
                shared = sum(n == noun for n in nouns.values()) > 1
                self._names[q] = (
                    f"the {_ORDINALS.get(seen[noun], f'#{seen[noun]}')} {noun}" if shared else f"the {noun}"
                )
        return self._names[pid]

    def _units(self, pid: str) -> str:
        q = self.goal[pid].quantity
        return f"{q} unit" if q == 1 else f"{q} units"

    def _describe(self, pid: str) -> str:
        g = self.goal[pid]
        stated = [f"{k.replace('_', ' ')} {v}" for k, v in g.hints.items() if k not in g.withheld]
        text = f"{self._name(pid)} ({self._units(pid)}{'; ' + ', '.join(stated) if stated else ''})"
        if g.withheld:
            text += f" [keep back its {', '.join(k.replace('_', ' ') for k in g.withheld)} unless the assistant asks]"
        return text

    def _more_to_come(self) -> bool:
        return len(self.revealed_at) < len(self.goal)

    def _finish(self, parts: list[str], more_to_come: str) -> str:
        """The text of ``parts``: a nudge when there are none, then ``more_to_come`` while items are unrevealed."""
        if not parts:
            parts.append(
                "React to the assistant's last reply and keep the conversation moving toward your list."
            )
        if self._more_to_come():
            parts.append(more_to_come)
        return " ".join(parts)

    def _list_text(self, reveal: list[str], ask: list[str]) -> str:
        parts: list[str] = []
        if reveal:
            parts.append("Ask for " + "; ".join(self._describe(p) for p in reveal) + " now.")
            if any(p not in ask for p in reveal):
                parts.append(
                    "Ask about the options and weigh them, but do not ask to add them to the cart yet."
                )
        new_asks = [p for p in ask if p in reveal]
        old_asks = [p for p in ask if p not in reveal]
        if new_asks:
            parts.append(
                "Ask the assistant to add " + "; ".join(self._name(p) for p in new_asks) + " to the cart."
            )
        if old_asks:
            parts.append("Ask the assistant to put " + "; ".join(self._describe(p) for p in old_asks)
                         + " in the cart now.")  # fmt: skip
        return self._finish(parts, "You have more to buy, but do not mention the other items yet.")

    _BEAT_TEXT = {
        "intro": "Bring up {d}: describe what you want and ask what the store has. Do not ask to add it yet.",
        "explore": "Ask a follow-up question about the options for {n} (compare a detail, the material or "
                   "the price). Do not add it yet.",
        "defer": "Say you want to think about {n} a little longer and set it aside for now.",
        "return": "Come back to {n} you set aside earlier.",
        "add": "Settle on {n} and ask the assistant to add {q} of it to the cart.",
    }  # fmt: skip

    def _nonlinear_text(self, beats: list[Beat], reveal: list[str], ask: list[str]) -> str:
        parts = []
        for b in beats:
            d = self._describe(b.product_id) if b.product_id in reveal else self._name(b.product_id)
            if b.kind == "add" and b.product_id in reveal:
                parts.append(f"Ask for {d} and ask the assistant to add it to the cart.")
            else:
                parts.append(
                    self._BEAT_TEXT[b.kind].format(
                        d=d, n=self._name(b.product_id), q=self._units(b.product_id)
                    )
                )
        played = {b.product_id for b in beats if b.kind == "add"}
        late = [p for p in ask if p not in played]
        if late:
            parts.append("Remind the assistant to add " + "; ".join(self._describe(p) for p in late)
                         + ", which you already asked for and is not in the cart yet.")  # fmt: skip
        return self._finish(parts, "Do not mention items on your list that you have not brought up yet.")
