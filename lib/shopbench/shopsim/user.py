"""The user simulator: the customer who works through the hidden target cart (seed 002 §3.2
"Difficulty and persona", §3.4, §4.2, App. C, D.1 and J).

"The simulator answers each turn with a single structured call. Its five fields contain a short
rationale, an inline frustration rating, the next customer message, a termination flag with its
reason, and the chain of tool calls it expects the agent to make in response to the message it is
about to send." (§3.4) It "voices the customer's needs in character rather than quoting or
paraphrasing a search payload, a product identifier, a price, or a stock count." (§3.4)

Two simulators share the :class:`ShopUser` protocol (behind :class:`shopbench.env.UserSimulator` through
:class:`shopbench.shopsim.environment.ShopCustomer`):

- :class:`ScriptedUser`, the deterministic offline default. It writes each message from the reveal
  controller's directive and the six App. C persona dimensions, rates frustration by fixed rules and
  exposes the structured ``intent`` the scripted agents read instead of parsing prose.
- :class:`LLMUser`, one structured gateway call per turn with ``prompts/shopsim_user.txt``.

The structured intent follows the shared conventions, with two keys added to ``add`` intents:
``brand`` (the brand the customer names, "the Northfield one") and ``detail`` (a word that tells the
target from other products of that brand the searches showed, "the non-irradiated one"; else None).
A customer refers to an item by brand only after a search made for that request turned it up; an
item no search found is described again, more fully each time (full type and every stated hint,
then the brand too).

Persona values. Our copy lacks Table 5, so the values recognised here are our choice (the ones
``shopsim.scenario`` draws), matched by keyword so other spellings degrade gracefully to the middle
value: specificity precise/moderate/vague, commitment decisive/deliberate/indecisive, price_sensitivity
low/moderate/high, vocabulary expert/everyday/novice, message_length terse/conversational/verbose,
typing clean/casual/garbled.

Frustration (§4.2: "As frustration rises, the shopper grows terser and abandons sooner"), our rule:
it starts at 1. After an agent turn, each item the last message asked for is done (an asked add is in
the cart at its quantity, or the agent asked about a hint the customer had withheld; an asked find
showed up in a search result) or missing. Frustration rises by 1 when nothing asked was done, stays
when part was, falls by 1 (floor 1) when all was; it rises by 1 more when the agent claimed an add no
successful cart write of the turn backs. At 4 and above the customer writes tersely. The
customer abandons when frustration stays at 5 for two consecutive turns; indecisive or
price-sensitive customers abandon the first time it reaches 5 (one turn earlier).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..llm.result import CallResult, call_usage
from ..prompts import load_prompt as _load_prompt
from .registry import TOOL_NAMES, TOOL_SPECS
from .types import Directive, GoalItem, Scenario, ShopProduct, ToolCall, Turn, UserReply

__all__ = [
    "TOOL_ARGS", "USER_SCHEMA", "LLMUser", "ScriptedUser", "ShopUser", "SimulatorError", "Style",
    "load_prompt", "parse_user_reply", "persona_style", "probe_query", "render_directive", "render_persona",
    "render_target_cart", "render_transcript",
]  # fmt: skip

PROMPT_STEM = "shopsim_user"
TERMINATION_CHOICES = ("goal_met", "abandoned")


class SimulatorError(RuntimeError):
    """The user simulator failed to produce a turn (the controller records ``judge_error``, or
    ``no_opening_message`` when it happens on the opening message)."""


@runtime_checkable
class ShopUser(Protocol):
    """The customer side of a trial. ``history`` holds the finished turns; ``cart`` is the
    ground-truth cart the controller read after the last agent turn."""

    name: str

    def reply(
        self,
        scenario: Scenario,
        directive: Directive,
        history: list[Turn],
        products: Mapping[str, ShopProduct],
        system_prompt: str,
        cart: Mapping[str, int],
    ) -> UserReply: ...


def load_prompt(stem: str) -> str:
    """``prompts/<stem>.txt`` without its header (see :func:`shopbench.prompts.load_prompt`)."""
    return _load_prompt(stem, "the shop simulator")


# ---- persona --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Style:
    """The App. C persona reduced to what the scripted customer's wording depends on."""

    specificity: str = "moderate"  # precise | moderate | vague
    commitment: str = "moderate"  # decisive | moderate (deliberate, ...) | indecisive
    price_sensitive: bool = False
    vocabulary: str = "everyday"  # expert | everyday | novice
    length: str = "conversational"  # terse | conversational | verbose
    typing: str = "clean"  # clean | casual | garbled

    @property
    def impatient(self) -> bool:
        return self.commitment == "indecisive" or self.price_sensitive


def _pick(value: str, table: dict[str, tuple[str, ...]], default: str) -> str:
    v = str(value or "").lower()
    for out, keys in table.items():
        if any(k in v for k in keys):
            return out
    return default


def persona_style(persona: Mapping[str, str]) -> Style:
    """Map the persona's six dimensions to a :class:`Style` (unknown values -> the middle value)."""
    p = {k: str(v).lower() for k, v in (persona or {}).items()}
    return Style(
        specificity=_pick(p.get("specificity", ""), {"vague": ("vague", "loose", "low", "unsure"),
                          "precise": ("precise", "exact", "specific", "high", "detailed")}, "moderate"),
        commitment=_pick(p.get("commitment", ""), {"indecisive": ("indecisive", "hesitant", "low", "wavering"),
                         "decisive": ("decisive", "high", "quick", "firm")}, "moderate"),
        price_sensitive=any(k in p.get("price_sensitivity", "") for k in ("high", "sensitive", "frugal", "budget")),
        vocabulary=_pick(p.get("vocabulary", ""), {"novice": ("novice", "basic", "lay", "plain", "simple"),
                         "expert": ("expert", "technical", "enthusiast", "advanced")}, "everyday"),
        length=_pick(p.get("message_length", ""), {"terse": ("terse", "short", "brief", "minimal"),
                     "verbose": ("verbose", "long", "chatty", "detailed", "elaborate")}, "conversational"),
        typing=_pick(p.get("typing", ""), {"garbled": ("garbled", "typo", "sloppy", "messy"),
                     "casual": ("casual", "lower", "informal")}, "clean"),
    )  # fmt: skip


# ---- reading the record ---------------------------------------------------------------------
_NUM = re.compile(r"\d+(?:\.\d+)?")
_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
          10: "ten", 11: "eleven", 12: "twelve"}  # fmt: skip
_DIM_PATTERNS = {
    "size": re.compile(r"\bsizes?\b", re.I),
    "colour": re.compile(r"\bcolou?rs?\b", re.I),
    "quantity": re.compile(r"\bquantity\b|\bhow many\b", re.I),
    "budget": re.compile(r"\bbudget\b|\bprice range\b|\bspend\b", re.I),
}
_TITLED_ADD = re.compile(r"I(?:'ve| have) added (\d+) × (.+?) to your cart", re.I)
_ADD_CLAIM = re.compile(
    r"\b(?:i've|i have|i)\s+(?:just\s+|now\s+|also\s+|gone ahead and\s+)?added\b|\badded\b[^.!?]*\bto (?:your|the) cart\b",
    re.I,
)


def _same_text(a: Any, b: Any) -> bool:
    return str(a or "").strip().lower() == str(b or "").strip().lower()


def _norm_key(k: str) -> str:
    k = str(k).lower().strip()
    return "colour" if k == "color" else k


def _ref(k: int) -> str:
    return f"item{k}"


def _budget_value(text: str | None) -> float | None:
    if text is None:
        return None
    m = _NUM.search(str(text).replace(",", ""))
    return float(m.group()) if m else None


def _asked(text: str, names: Mapping[str, Sequence[str]]) -> dict[str, set[str]]:
    """Per product: the dimensions a question in ``text`` asks about (sentences ending with ``?``).
    A question naming a product (any of its ``names``: title, brand, noun) is about that product,
    one naming none is about all of them."""
    out: dict[str, set[str]] = {}
    for q in re.findall(r"[^.!?\n]*\?", text or ""):
        dims = {d for d, pat in _DIM_PATTERNS.items() if pat.search(q)}
        if not dims:
            continue
        low = q.lower()
        named = [pid for pid, ns in names.items() if any(n and n.lower() in low for n in ns)]
        for pid in named or list(names):
            out.setdefault(pid, set()).update(dims)
    return out


def _names(product: ShopProduct) -> list[str]:
    return [product.title, product.brand, str(product.attributes.get("type") or "")]


def _result_pids(result: Mapping[str, Any]) -> list[str]:
    if "results" in result:
        return [r.get("product_id") for r in result.get("results") or [] if isinstance(r, dict)]
    if isinstance(result.get("product"), dict):
        return [result["product"].get("product_id")]
    return []


def _titles_seen(history: Sequence[Turn]) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in history:
        for e in t.events:
            for r in e.result.get("results") or []:
                if isinstance(r, dict) and r.get("title"):
                    out[str(r["title"]).lower()] = r.get("product_id")
            p = e.result.get("product")
            if isinstance(p, dict) and p.get("title"):
                out[str(p["title"]).lower()] = p.get("product_id")
    return out


# ---- one item as the customer sees it --------------------------------------------------------
@dataclass
class _Item:
    k: int
    goal: GoalItem
    product: ShopProduct
    type: str  # the customer's noun phrase (plainer for novices)
    words: list[str]  # description words (extras, fit, colour, type)
    size: str | None  # stated (not withheld, or released by a question)
    colour: str | None
    budget: float | None
    stated: dict[str, str]  # every stated value, for "as I said" answers
    detail: str | None = None  # tells the target from same-brand results the customer has seen

    @property
    def ref(self) -> str:
        return _ref(self.k)

    @property
    def description(self) -> str:
        return " ".join(self.words)

    @property
    def brand_ref(self) -> str:
        """How the customer names the product when asking to add it ("the Northfield one" when brand
        plus noun would spell out the catalog title)."""
        ref = f"{self.product.brand} {self.type}"
        ref = f"{self.product.brand} one" if self.product.title.lower() in ref.lower() else ref
        return f"{ref} (the {self.detail} one)" if self.detail else ref

    def variant_phrase(self) -> str:
        bits = [b for b in (self.colour, f"size {self.size}" if self.size else None) if b]
        return f" in {', '.join(bits)}" if bits else ""


def _describe(
    k: int, goal: GoalItem, product: ShopProduct, style: Style, released: set[str], attempt: int = 0
) -> _Item:
    """The customer's words for one goal item. ``attempt`` counts earlier requests for it that no
    search answered: the second request spells out the full type and every stated hint, later ones
    add the brand (a customer who is not understood says more)."""
    attrs = {_norm_key(a): str(v) for a, v in (product.attributes or {}).items() if v not in (None, "")}
    hints = {_norm_key(a): str(v) for a, v in (goal.hints or {}).items() if v not in (None, "")}
    withheld = {_norm_key(w) for w in goal.withheld} - released
    variant = next((v for v in product.variants if v.variant_id == goal.variant_id), None)
    full_type = (attrs.get("type") or product.category or "item").lower()
    title = product.title.lower()
    last = full_type.split()[-1]
    if title in full_type:  # the type would spell out the catalog title: use the plain noun
        noun = last if last != title else "item"
    else:
        noun = last if style.vocabulary == "novice" and not attempt else full_type
    size = (
        (variant.size if variant and variant.size else hints.get("size")) if "size" not in withheld else None
    )
    colour = variant.colour if variant and variant.colour else hints.get("colour")
    colour = colour.lower() if colour and "colour" not in withheld else None
    # stated attribute hints (fit, material, flavour, pack size, ...), in the scenario's order
    hinted = [
        v.lower()
        for key, v in hints.items()
        if key not in ("size", "colour", "budget") and key not in withheld
    ]
    budget = _budget_value(hints.get("budget")) if "budget" not in withheld else None
    extras: list[str] = []
    n_extra = (1 if style.specificity == "precise" else 0) + (1 if style.vocabulary == "expert" else 0)
    for key, val in attrs.items():
        if len(extras) >= n_extra:
            break
        v = val.lower()
        if key in ("type", "size", "colour", "brand") or key in hints or len(v.split()) > 3 or v in full_type:
            continue
        if v in (colour or "", *hinted) or product.brand.lower() in v:
            continue
        extras.append(v)
    if attempt >= 2:
        words = [product.brand.lower(), *hinted, *([colour] if colour else []), noun]
    elif attempt == 1:
        words = [*hinted, *([colour] if colour else []), noun]
    elif style.specificity == "vague":
        first = colour or next(iter(hinted), None)
        words = [first, noun] if first else [noun]
        if not style.price_sensitive:
            budget = None
    else:
        words = [*extras, *hinted, *([colour] if colour else []), noun]
    stated = {d: v for d, v in (("size", size), ("colour", colour), ("budget", budget)) if v}
    return _Item(k, goal, product, noun, words, size, colour, budget, {d: str(v) for d, v in stated.items()})


# ---- wording --------------------------------------------------------------------------------
_GARBLE = {
    "thermal": "thermel", "definitely": "definately", "actually": "actualy", "something": "somthing",
    "thinking": "thinkin", "probably": "probly", "sleeve": "sleev", "really": "realy", "because": "cuz",
    "please": "pls", "though": "tho", "let me": "lemme", "i'm": "im", "that's": "thats", "don't": "dont",
    "separate": "seperate", "receive": "recieve", "maybe": "mabye", "anyway": "anyways", "would": "wud",
}  # fmt: skip
# the flavour beats' two wordings each ({t}: the item's type) and the verb of their note
_FLAVOUR = {
    "return": (("I was still thinking about the {t} from earlier.", "Going back to the {t} for a second."), "returns to"),
    "defer": (("Let me think on the {t} for a bit.", "Hmm, let me hold off on the {t} for now."), "defers"),
    "explore": (("Can you tell me more about the {t}?", "What else can you tell me about the {t}?"), "explores"),
}  # fmt: skip


def _garble(text: str, rng: random.Random) -> str:
    """App. D.1 example 1 style: lowercase, common misspellings, a few swapped letters."""
    text = text.lower()
    for a, b in _GARBLE.items():
        text = re.sub(rf"\b{re.escape(a)}\b", b, text)
    out = []
    for w in text.split(" "):
        if len(w) >= 6 and w.isalpha() and rng.random() < 0.2:
            i = rng.randrange(1, len(w) - 2)
            w = w[:i] + w[i + 1] + w[i] + w[i + 2 :]
        out.append(w)
    return " ".join(out).replace(". ", " ").rstrip(".")


def _qty(q: int, digits: bool) -> str:
    return str(q) if digits or q not in _WORDS else _WORDS[q]


def _a(phrase: str) -> str:
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


@dataclass
class _Draft:
    parts: list[str]
    intent: list[dict]
    expected: list[ToolCall]
    notes: list[str]


class ScriptedUser:
    """The deterministic customer (offline default). Same inputs -> identical reply; ``seed_offset``
    varies the wording choices without changing what is asked."""

    def __init__(self, seed_offset: int = 0):
        self.seed_offset = int(seed_offset)
        self.name = "scripted" if not self.seed_offset else f"scripted+{self.seed_offset}"

    # -- entry point ----------------------------------------------------------------------------
    def reply(
        self,
        scenario: Scenario,
        directive: Directive,
        history: list[Turn],
        products: Mapping[str, ShopProduct],
        system_prompt: str,
        cart: Mapping[str, int],
    ) -> UserReply:
        rng = random.Random(f"shopsim-user:{scenario.trial_id}:{self.seed_offset}:{directive.message_index}")
        style = persona_style(scenario.persona)
        cart = {str(k): int(v) for k, v in (cart or {}).items()}
        if scenario.kind == "refusal":
            return self._probe_reply(scenario, directive, history, style, rng)
        goals = self._goals(scenario, directive, products)
        frustration, why, complaints, progressed = self._rate(scenario, history, goals, products, cart)
        prev = history[-1].user.frustration if history else 1
        if directive.done:
            msg = "That's all. What's my cart total?" if style.length == "terse" else rng.choice(
                ["That's everything, thanks! Could you give me a quick rundown of my cart and the total?",
                 "That's everything I needed, thanks! Can you show me what's in my cart and the total?"]
            )  # fmt: skip
            return UserReply(
                rationale=f"Every goal item is in the cart at its quantity; wrapping up ({why}).",
                frustration=frustration, message=self._type(msg, style, rng), terminate=True,
                termination_reason="goal_met", expected_calls=[ToolCall("view_cart", {})],
                intent=[{"action": "wrap_up"}],
            )  # fmt: skip
        if frustration == 5 and (prev >= 5 or style.impatient):
            msg = rng.choice(["Forget it, this isn't working. I'll shop somewhere else.",
                              "I give up. This is taking far too long, I'll look elsewhere."])  # fmt: skip
            return UserReply(
                rationale=f"Frustration stayed at the maximum ({why}); the customer gives up.",
                frustration=5, message=self._type(msg, style, rng), terminate=True,
                termination_reason="abandoned",
            )  # fmt: skip
        released = self._released(history, goals, products)
        found = self._found(history, goals)
        items = {
            pid: _describe(
                k, g, products[pid], style, released.get(pid, set()),
                0 if pid in found else sum(pid in self._intent_pids(t, "find", goals) for t in history),
            )
            for pid, (k, g) in goals.items()
        }  # fmt: skip
        d = self._compose(
            scenario, directive, history, items, cart, style, rng, frustration, complaints, progressed
        )
        message = self._guard(" ".join(p for p in d.parts if p), items, history)
        return UserReply(
            rationale=f"{'; '.join(d.notes) or 'Continuing the conversation'}; frustration {frustration}: {why}.",
            frustration=frustration, message=self._type(message, style, rng), terminate=False,
            termination_reason=None, expected_calls=d.expected, intent=d.intent,
        )  # fmt: skip

    # -- helpers ----------------------------------------------------------------------------------
    @staticmethod
    def _goals(scenario: Scenario, directive: Directive, products: Mapping[str, ShopProduct]):
        goals = {g.product_id: (k, g) for k, g in enumerate(scenario.items)}
        for pid in [*directive.reveal, *directive.ask_add, *(b.product_id for b in directive.beats)]:
            if pid not in goals:
                raise SimulatorError(
                    f"{scenario.trial_id}: directive {directive.message_index} names product {pid!r}, which is "
                    "not a goal item of the scenario; the reveal controller and the scenario disagree"
                )
        missing = [pid for pid in goals if pid not in products]
        if missing:
            raise SimulatorError(
                f"{scenario.trial_id}: the products mapping lacks goal items {missing}; pass the store's catalog"
            )
        return goals

    @staticmethod
    def _revealed(history: Sequence[Turn]) -> set[str]:
        return {pid for t in history for pid in t.directive.reveal}

    @staticmethod
    def _found(history: Sequence[Turn], goals) -> set[str]:
        """Goal items a search turned up in a turn where the customer had asked for them: only then
        can the customer refer to the item by brand alone (a hit under another request is luck)."""
        out: set[str] = set()
        for t in history:
            asked = ScriptedUser._intent_pids(t, "find", goals)
            hits = {
                pid for e in t.events if e.call.name == "search_products" for pid in _result_pids(e.result)
            }
            out |= asked & hits
        return out

    @staticmethod
    def _intent_pids(turn: Turn, action: str, goals) -> set[str]:
        by_ref = {_ref(k): pid for pid, (k, _) in goals.items()}
        return {
            by_ref[i["ref"]] for i in turn.user.intent if i.get("action") == action and i.get("ref") in by_ref
        }

    def _rate(self, scenario, history, goals, products, cart) -> tuple[int, str, list[str], bool]:
        """Frustration after the last agent turn (see the module docstring), its reason, the
        complaints to voice, and whether the turn made progress."""
        if not history:
            return 1, "opening message", [], False
        t = history[-1]
        prev = min(5, max(1, int(t.user.frustration or 1)))
        qty = {pid: g.quantity for pid, (_, g) in goals.items()}
        asked_adds = (set(t.directive.ask_add) | self._intent_pids(t, "add", goals)) & set(qty)
        asked_finds = self._intent_pids(t, "find", goals)
        missing_adds = sorted(p for p in asked_adds if cart.get(p, 0) < qty[p])
        if missing_adds:  # a question about a withheld hint is needed, not a failure (§4.2 clarification)
            before = self._released(history[:-1], goals, products)
            asked_now = _asked(t.agent_message, {p: _names(products[p]) for p in missing_adds})
            missing_adds = [
                p for p in missing_adds
                if not asked_now.get(p, set()) & ({_norm_key(w) for w in goals[p][1].withheld} - before.get(p, set()))
            ]  # fmt: skip
        hits = {pid for e in t.events if e.call.name == "search_products" for pid in _result_pids(e.result)}
        missing_finds = {p for p in asked_finds if cart.get(p, 0) < qty[p]} - hits
        phantom = self._phantom(t, cart, {p: products[p] for p in goals}, history)
        asked = asked_adds | asked_finds
        done = (asked_adds - set(missing_adds)) | (asked_finds - missing_finds)
        complaints, reasons = [], []
        if missing_adds:
            complaints.append("It's still not in my cart.")
        elif missing_finds and not done:
            complaints.append("That isn't what I asked for.")
        if phantom:
            complaints.append("You said you added it, but my cart doesn't show it.")
        progressed = bool(asked) and not missing_adds and not missing_finds and not phantom
        if progressed:
            delta = -1
            reasons.append("the last turn did everything asked")
        elif asked and not done:
            delta = 1
            reasons.append("the last turn made no progress on what was asked")
        else:
            delta = 0
            if missing_adds or missing_finds:
                reasons.append("the last turn did part of what was asked")
        if phantom:
            delta += 1
            reasons.append("the agent claimed an add no cart write backs")
        return min(5, max(1, prev + delta)), "; ".join(reasons) or "no change", complaints, progressed

    @staticmethod
    def _phantom(turn: Turn, cart, products, history) -> bool:
        """The agent announced an add that no successful cart write of the turn backs (the
        simulator reads the tool messages; App. F Example 5)."""
        text = turn.agent_message or ""
        if not _ADD_CLAIM.search(text):
            return False
        titles = {p.title.lower(): pid for pid, p in products.items()}
        titles.update(_titles_seen(history))
        written = {
            e.call.arguments.get("product_id")
            for e in turn.events
            if e.ok and e.call.name in ("add_to_cart", "update_cart_quantity")
        }
        claimed = [titles.get(m.group(2).strip().lower()) for m in _TITLED_ADD.finditer(text)]
        if any(pid is not None for pid in claimed):
            return any(pid is not None and pid not in written for pid in claimed)
        return not written

    @staticmethod
    def _released(history: Sequence[Turn], goals, products) -> dict[str, set[str]]:
        """Withheld hints the customer gives once the agent has asked about that dimension while the
        item was open (seed 002 §3.2: hints are withheld, so a good agent has to ask)."""
        out: dict[str, set[str]] = {}
        revealed: set[str] = set()
        for t in history:
            revealed |= set(t.directive.reveal)
            open_ = [p for p in revealed & set(goals) if t.cart_after.get(p, 0) < goals[p][1].quantity]
            for pid, dims in _asked(t.agent_message, {p: _names(products[p]) for p in open_}).items():
                out.setdefault(pid, set()).update(dims)
        return out

    def _compose(
        self, scenario, directive, history, items, cart, style, rng, frustration, complaints, progressed
    ):
        terse = style.length == "terse" or frustration >= 4
        digits = terse or style.typing != "clean"
        d = _Draft([], [], [], [])
        i = directive.message_index
        # 1. greeting, complaint or acknowledgement
        if i == 0:
            if not terse:
                d.parts.append(rng.choice(["Hi!", "Hello!", "Hi there!"]))
                if style.length == "verbose":
                    d.parts.append(rng.choice(["I'm hoping you can help me with a bit of shopping today.",
                                               "I've been meaning to sort this out for a while, so thanks for the help."]))  # fmt: skip
        elif complaints:
            d.parts.extend(complaints)
        elif progressed and not terse:
            d.parts.append(
                rng.choice(["Hmm, okay.", "Hmm, those look alright."]) if style.commitment == "indecisive"
                else rng.choice(["Great, thanks.", "Perfect, thanks!", "Thanks, that looks good."])
            )  # fmt: skip
        # 2. answers to the agent's questions (these also release withheld hints)
        if history:
            open_ = {pid: it for pid, it in items.items()
                     if pid in self._revealed(history) and cart.get(pid, 0) < it.goal.quantity}  # fmt: skip
            asked = _asked(
                history[-1].agent_message, {p: [*_names(it.product), it.type] for p, it in open_.items()}
            )
            prior = [t.user.intent for t in history]
            for pid, it in open_.items():
                for dim in ("size", "colour", "quantity", "budget"):
                    if dim not in asked.get(pid, ()):
                        continue
                    val = str(it.goal.quantity) if dim == "quantity" else it.stated.get(dim)
                    if not val:
                        continue
                    said = any(
                        str(x.get(dim)) == val and x.get("ref") == it.ref for intent in prior for x in intent
                    )
                    pre = "As I said, " if said else ""
                    if dim == "quantity":
                        ans = _qty(int(val), digits)
                    elif dim == "budget":
                        ans = f"under ${math.ceil(float(val))}"
                    else:
                        ans = f"size {val}" if dim == "size" else val
                    s = f"{pre}{ans} for the {it.type}."
                    d.parts.append(s[0].upper() + s[1:])
                    d.notes.append(f"answers the {dim} question for {it.ref}")
        # 3. flavour beats: return, defer, explore
        for b in directive.beats:
            it = items[b.product_id]
            if b.kind not in _FLAVOUR:
                continue
            wordings, verb = _FLAVOUR[b.kind]
            d.parts.append(rng.choice(wordings).format(t=it.type))
            d.intent.append({"action": b.kind, "ref": it.ref})
            if b.kind == "explore":
                d.expected.append(ToolCall("get_product_details", {"product_id": it.goal.product_id}))
            d.notes.append(f"{verb} {it.ref}")
        # 4. adds (with a fresh find when the item never showed up in a search)
        found = self._found(history, {p: (it.k, it.goal) for p, it in items.items()})
        deferred = {b.product_id for b in directive.beats if b.kind == "defer"}
        asked_before = {pid for t in history for pid in t.directive.ask_add}
        adds = list(directive.ask_add) + [
            pid for pid in sorted(asked_before, key=lambda p: items[p].k)
            if pid not in directive.ask_add and pid not in deferred and cart.get(pid, 0) < items[pid].goal.quantity
        ]  # fmt: skip
        intro = {b.product_id for b in directive.beats if b.kind == "intro"}
        rows = [
            r for t in history for e in t.events for r in e.result.get("results") or [] if isinstance(r, dict)
        ]
        for pid in adds:
            items[pid].detail = self._detail(items[pid], rows)
        for pid in adds:
            self._add(d, items[pid], cart, found, pid not in directive.ask_add, style, rng, digits)
        # 5. items requested before that never showed up: describe them again
        for pid in sorted(self._revealed(history) - set(adds) - found - deferred, key=lambda p: items[p].k):
            if cart.get(pid, 0) >= items[pid].goal.quantity or pid in directive.reveal:
                continue
            it = items[pid]
            d.parts.append(f"I still need {self._find_phrase(it, digits)}.")
            self._find(d, it)
        # 6. new requests
        new = [pid for pid in directive.reveal if pid not in adds]
        for n, pid in enumerate(new):
            it = items[pid]
            x = self._find_phrase(it, digits)
            if pid in intro and i > 0:
                s = rng.choice([f"I might also need {x}.", f"Oh, and I might also need {x}."])
            elif i == 0 and n == 0:
                s = f"Need {x}." if terse else rng.choice([f"I'm looking for {x}.", f"I need {x}."])
            elif n == 0:
                s = f"Also need {x}." if terse else rng.choice([f"Next, I need {x}.", f"I'm also after {x}."])
            else:
                s = f"And {x}." if terse else rng.choice([f"I also need {x}.", f"And I'd like {x} as well."])
            d.parts.append(s)
            self._find(d, it)
        if i == 0 and scenario.style == "batch" and len(scenario.waves) > 1 and not terse:
            d.parts.append("I've got a few other things on my list too, but let's start with these.")
        if style.length == "verbose" and not terse and i > 0:
            d.parts.append(
                rng.choice(["Thanks so much for your help with all this.", "I really appreciate it."])
            )
        if not d.intent and not d.notes:
            d.parts.append(
                "Okay." if terse else rng.choice(["Okay, let's keep going.", "Alright, what's next?"])
            )
        return d

    @staticmethod
    def _find_phrase(it: _Item, digits: bool) -> str:
        q = it.goal.quantity
        x = _a(it.description) if q == 1 else f"{_qty(q, digits)} units of {it.description}"
        if it.size:
            x += f" in size {it.size}"
        if it.budget is not None:
            x += f", ideally under ${math.ceil(it.budget)}"
        return x

    @staticmethod
    def _find(d: _Draft, it: _Item) -> None:
        d.intent.append({
            "action": "find", "ref": it.ref, "description": it.description, "category": it.goal.category,
            "quantity": it.goal.quantity, "size": it.size, "colour": it.colour, "budget": it.budget,
        })  # fmt: skip
        d.expected.append(ToolCall("search_products", {"query": it.description}))
        d.notes.append(f"asks for {it.ref}")

    def _add(self, d: _Draft, it: _Item, cart, found, reask: bool, style: Style, rng, digits: bool) -> None:
        q, pid = it.goal.quantity, it.goal.product_id
        have = cart.get(pid, 0)
        if have == q:
            return
        var = it.variant_phrase()
        qty = "the" if q == 1 else f"{_qty(q, digits)} of the"
        add = {"action": "add", "ref": it.ref, "quantity": q, "size": it.size, "colour": it.colour,
               "brand": it.product.brand, "detail": it.detail}  # fmt: skip
        if have:
            d.parts.append(
                f"Could you make that {_qty(q, digits)} of the {it.brand_ref}?"
                if have < q
                else f"Actually, I only need {_qty(q, digits)} of the {it.brand_ref}."
            )
            d.intent.append(add)
            d.expected.append(ToolCall("update_cart_quantity", {"product_id": pid, "quantity": q}))
            d.notes.append(f"corrects the quantity of {it.ref}")
            return
        if pid not in found:
            d.parts.append(f"Could you find me {self._find_phrase(it, digits)}, ideally the {it.product.brand} one, "
                           f"and add {_qty(q, digits)} to my cart?")  # fmt: skip
            self._find(d, it)
        elif reask:
            d.parts.append(
                f"I still don't see the {it.brand_ref} in my cart. Please add {qty} {it.brand_ref}{var}."
            )
        else:
            lead = {
                "indecisive": "Okay, I think I'll go with the {b}.",
                "decisive": "Let's get the {b}.",
            }.get(style.commitment, "")
            if lead and style.length != "terse":
                d.parts.append(lead.format(b=it.brand_ref))
            d.parts.append(f"Please add {qty} {it.brand_ref}{var} to my cart.")
        d.intent.append(add)
        args: dict[str, Any] = {"product_id": pid, "quantity": q}
        if it.goal.variant_id is not None:
            args["variant_id"] = it.goal.variant_id
        d.expected.append(ToolCall("add_to_cart", args))
        d.notes.append(f"asks to add {it.ref}")

    @staticmethod
    def _detail(it: _Item, rows: Sequence[dict]) -> str | None:
        """When search results showed other products the customer's "<brand> <noun>" also fits,
        what tells the target apart: an attribute value its title carries and theirs do not ("the non-irradiated one"), else
        a title word theirs lack; None when no other product of the brand was shown."""
        p = it.product
        others = {str(r.get("title", "")).lower() for r in rows  # what "the <brand> <noun>" could also mean
                  if _same_text(r.get("brand"), p.brand) and r.get("product_id") != p.product_id
                  and it.type.lower() in str(r.get("title", "")).lower()}  # fmt: skip
        if not others:
            return None
        title = p.title.lower()
        for key, val in p.attributes.items():
            v = str(val).lower()
            if key != "type" and v and v in title and not any(v in o for o in others):
                return v
        # else a word of the title the others lack ("the Studio one"): a fragment, never the title
        skip = set(p.brand.lower().split()) | set(str(p.attributes.get("type", "")).lower().split())
        words = [w.strip(",.()") for w in title.split()]
        return next(
            (w for w in words if w and w not in skip and not any(w in o.split() for o in others)), None
        )

    @staticmethod
    def _guard(message: str, items: Mapping[str, _Item], history: Sequence[Turn]) -> str:
        """Last line of defence for §3.4's no-quoting rule: strip any product id, exact catalog title
        or catalog price string of a goal or seen product that the wording let through."""
        forbidden: list[tuple[str, str]] = []
        for it in items.values():
            p = it.product
            forbidden += [(p.title, it.type), (p.product_id, "that one"), (f"{p.price:.2f}", "")]
        for title, pid in _titles_seen(history).items():
            forbidden += [(title, "that one"), (str(pid), "that one")]
        for t in history:
            for e in t.events:
                for r in e.result.get("results") or []:
                    if isinstance(r, dict) and isinstance(r.get("price"), int | float):
                        forbidden.append((f"{r['price']:.2f}", ""))
        for bad, repl in sorted(set(forbidden), key=lambda x: -len(x[0])):
            if bad and bad.lower() in message.lower():
                message = re.sub(re.escape(bad), repl, message, flags=re.I)
        return re.sub(r"\s+", " ", message).strip()

    @staticmethod
    def _type(message: str, style: Style, rng: random.Random) -> str:
        if style.typing == "garbled":
            return _garble(message, rng)
        if style.typing == "casual":
            return message.lower().rstrip(".")
        return message

    # -- refusal probes (App. J) -----------------------------------------------------------------
    def _probe_reply(self, scenario, directive, history, style, rng) -> UserReply:
        probe = scenario.probe
        if not probe or not probe.get("request"):
            raise SimulatorError(f"{scenario.trial_id}: a refusal scenario needs probe['request'] (App. J)")
        query = probe_query(probe)
        find = {"action": "find", "ref": "probe", "description": query, "category": probe.get("category"),
                "quantity": None, "size": None, "colour": None, "budget": None}  # fmt: skip
        i = directive.message_index
        searched = any(e.call.name == "search_products" for e in (history[-1].events if history else []))
        frustration = 1 if not history else min(5, history[-1].user.frustration + (0 if searched else 1))
        if i == 0:
            return UserReply(
                rationale="Opening with the probe request verbatim.", frustration=1,
                message=str(probe["request"]), terminate=False, termination_reason=None,
                expected_calls=[ToolCall("search_products", {"query": query})], intent=[find],
            )  # fmt: skip
        if directive.done or i >= 2:
            msg = rng.choice(["Okay, thanks for checking anyway.", "Alright, thanks anyway."])
            return UserReply(
                rationale="The probe has run its course; closing the conversation politely.",
                frustration=frustration, message=self._type(msg, style, rng), terminate=True,
                termination_reason=None,
            )  # fmt: skip
        msg = f"I'd just like to know whether you carry {query}. Could you check the catalog for me?"
        return UserReply(
            rationale="Politely repeating the probe request once.", frustration=frustration,
            message=self._type(msg, style, rng), terminate=False, termination_reason=None,
            expected_calls=[ToolCall("search_products", {"query": query})], intent=[find],
        )  # fmt: skip


_LEAD_INS = re.compile(
    r"^(?:hi|hello|hey)?[,!.\s]*(?:i'?m looking for|i am looking for|i'?d like|i want|i need|do you (?:have|carry|sell)|"
    r"can you (?:find|show) me|could you (?:find|show) me)\s+(?:an?\s+|some\s+|any\s+)?",
    re.I,
)


def probe_query(probe: Mapping[str, Any]) -> str:
    """The search words of a refusal probe: an explicit ``query`` when the probe has one, else the
    marked terms (with the item noun when given), else the request without its lead-in."""
    for key in ("query", "search_terms", "search_query"):
        if probe.get(key):
            v = probe[key]
            return " ".join(v) if isinstance(v, list | tuple) else str(v)
    terms = probe.get("marked_terms") or probe.get("marked") or probe.get("terms")
    if terms:
        terms = [terms] if isinstance(terms, str) else list(terms)
        item = probe.get("item") or probe.get("product_type")
        return " ".join([*map(str, terms), *([str(item)] if item else [])])
    text = _LEAD_INS.sub("", str(probe.get("request", "")).strip())
    text = re.split(r"[.?!]", text)[0]
    return re.sub(r"[^\w\s'-]", "", text).strip()


# ---- the LLM simulator ----------------------------------------------------------------------
def _nullable(spec: dict) -> dict:
    t = spec.get("type", "string")
    return {"type": [t, "null"], **({"maxLength": 200} if t == "string" else {})}


_ARG_PROPS: dict[str, dict] = {}
for _spec in TOOL_SPECS:
    for _name, _p in _spec["function"]["parameters"]["properties"].items():
        _ARG_PROPS.setdefault(_name, _nullable(_p))
TOOL_ARGS = {s["function"]["name"]: set(s["function"]["parameters"]["properties"]) for s in TOOL_SPECS}

# Strict-mode friendly: every argument any tool takes, nullable and required; nulls and arguments
# the named tool does not take are dropped when the reply is read. Strings and arrays are bounded so
# a grammar-constrained local model cannot loop inside one until max_tokens.
USER_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "rationale": {"type": "string", "maxLength": 600},
        "frustration": {"type": "integer", "minimum": 1, "maximum": 5},
        "message": {"type": "string", "maxLength": 2000},
        "terminate": {"type": "boolean"},
        "termination_reason": {"type": ["string", "null"], "enum": [*TERMINATION_CHOICES, None]},
        "expected_calls": {
            "type": "array",
            "maxItems": 16,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "enum": list(TOOL_NAMES)},
                    "arguments": {
                        "type": "object",
                        "properties": _ARG_PROPS,
                        "required": list(_ARG_PROPS),
                        "additionalProperties": False,
                    },
                },  # fmt: skip
                "required": ["name", "arguments"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["rationale", "frustration", "message", "terminate", "termination_reason", "expected_calls"],
    "additionalProperties": False,
}


def render_persona(persona: Mapping[str, str]) -> str:
    return "\n".join(f"- {k}: {v}" for k, v in (persona or {}).items()) or "- (no persona traits)"


def render_target_cart(scenario: Scenario, products: Mapping[str, ShopProduct]) -> str:
    if scenario.kind == "refusal":
        probe = scenario.probe or {}
        return "No cart: this is a refusal probe. Ask for: " + json.dumps(
            probe, ensure_ascii=False, default=str
        )
    lines = []
    for k, g in enumerate(scenario.items):
        p = products.get(g.product_id)
        var = next((v for v in (p.variants if p else ()) if v.variant_id == g.variant_id), None)
        vtxt = (
            ", ".join(x for x in (var and var.size and f"size {var.size}", var and var.colour) if x) or "none"
        )
        lines.append(
            f"- {_ref(k)}: type={(p.attributes.get('type') if p else None) or g.category}; "
            f"brand={p.brand if p else '?'}; title={p.title if p else '?'}; quantity={g.quantity}; variant={vtxt}; "
            f"hints={json.dumps(g.hints, ensure_ascii=False)}; withheld={list(g.withheld) or 'none'}"
        )
    return "\n".join(lines) or "(empty)"


def render_directive(scenario: Scenario, directive: Directive, products: Mapping[str, ShopProduct]) -> str:
    ref = {g.product_id: _ref(k) for k, g in enumerate(scenario.items)}

    def name(pid: str) -> str:
        p = products.get(pid)
        return f"{ref.get(pid, '?')} ({(p.attributes.get('type') if p else None) or 'item'})"

    lines = [directive.text.strip()] if directive.text.strip() else []
    if directive.reveal:
        lines.append("Mention for the first time: " + ", ".join(map(name, directive.reveal)))
    if directive.ask_add:
        lines.append("Ask the assistant to add now: " + ", ".join(map(name, directive.ask_add)))
    for b in directive.beats:
        lines.append(f"Beat: {b.kind} {name(b.product_id)}")
    if directive.pending:
        lines.append(
            "Still open (requested, not yet in the cart at its quantity): "
            + ", ".join(map(name, directive.pending))
        )
    lines.append(
        "The goal is met: wrap up, set terminate=true and termination_reason='goal_met'."
        if directive.done
        else "The goal is not met yet: do not terminate with goal_met."
    )
    return "\n".join(lines)


def render_transcript(history: Sequence[Turn], cart: Mapping[str, int]) -> str:
    if not history:
        return "(no messages yet: write the opening message)"
    convo, tools = [], []
    for t in history:
        convo.append(f"[turn {t.index}] Customer: {t.user.message}")
        convo.append(f"[turn {t.index}] Assistant: {t.agent_message or '(no text)'}")
        for e in t.events:
            tools.append(f"[turn {t.index}] {e.call.name}({json.dumps(e.call.arguments, ensure_ascii=False)}) -> "
                         f"{json.dumps(e.result, ensure_ascii=False, default=str)}")  # fmt: skip
        if t.agent_error:
            tools.append(f"[turn {t.index}] agent error: {t.agent_error}")
    return (
        "Conversation (what the customer saw):\n" + "\n".join(convo)
        + "\n\nTool calls and results (hidden from the customer; use them only to rate the turn and check the goal):\n"
        + ("\n".join(tools) or "(none)")
        + f"\n\nGround-truth cart now: {json.dumps(dict(cart), sort_keys=True)}"
    )  # fmt: skip


class LLMUser:
    """The model-played customer: one structured gateway call per turn (seed 002 §3.4).

    ``intent`` is not produced by the model; when ``scripted_intent`` is true it is taken from the
    :class:`ScriptedUser` for the same directive (an approximation, so scripted reference agents
    can still be driven by an LLM customer). ``last_usage`` holds the last call's tokens and cost.
    """

    def __init__(
        self,
        gateway,
        backbone: str,
        prompt: str | None = None,
        run_id: str = "shopsim-user",
        max_tokens: int = 600,
        scripted_intent: bool = True,
    ):
        self.gateway = gateway
        self.backbone = backbone
        self.prompt = prompt if prompt is not None else load_prompt(PROMPT_STEM)
        self.run_id = run_id
        self.max_tokens = int(max_tokens)
        self.scripted_intent = scripted_intent
        self.name = f"llm:{backbone}"
        self.last_usage: dict[str, float] = {}

    def render(self, scenario, directive, history, products, system_prompt, cart) -> str:
        return self.prompt.format(
            persona=render_persona(scenario.persona),
            target_cart=render_target_cart(scenario, products),
            directive=render_directive(scenario, directive, products),
            transcript=render_transcript(history, cart),
            agent_system_prompt=system_prompt,
            turns_left=max(0, scenario.max_turns - directive.message_index),
        )

    def reply(self, scenario, directive, history, products, system_prompt, cart) -> UserReply:
        messages = [
            {
                "role": "user",
                "content": self.render(scenario, directive, history, products, system_prompt, cart),
            }
        ]
        item_id = f"{scenario.trial_id}:user:{directive.message_index}"
        call = self.gateway.call(
            self.backbone, item_id, messages, schema=USER_SCHEMA, schema_name="shopsim_user",
            params={"max_tokens": self.max_tokens, "temperature": 0},
        )  # fmt: skip
        try:
            rows: list[CallResult] = self.gateway.run([call], run_id=self.run_id, desc=None)
        except Exception as e:
            if type(e).__name__ == "BudgetExceeded":
                raise
            raise SimulatorError(f"{item_id}: the gateway failed: {type(e).__name__}: {e}") from e
        row = rows[0]
        self.last_usage = call_usage(row)
        if row.get("status") != "ok":
            why = row.get("error") or row.get("parse_error") or row.get("status")
            raise SimulatorError(f"{item_id}: simulator call {row.get('status')}: {why}")
        reply = parse_user_reply(row.get("parsed"), item_id)
        if self.scripted_intent:
            try:
                reply.intent = (
                    ScriptedUser().reply(scenario, directive, history, products, system_prompt, cart).intent
                )
            except SimulatorError:
                reply.intent = []
        return reply


def parse_user_reply(obj: Any, where: str = "user reply") -> UserReply:
    """Check a simulator JSON object (bounds included: local grammars do not enforce them) and turn
    it into a :class:`UserReply`; any violation raises :class:`SimulatorError` with the reason."""
    if not isinstance(obj, dict):
        raise SimulatorError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    missing = [k for k in USER_SCHEMA["required"] if k not in obj]
    if missing:
        raise SimulatorError(f"{where}: missing fields {missing}")
    f = obj["frustration"]
    if isinstance(f, bool) or not isinstance(f, int | float) or f != int(f) or not 1 <= f <= 5:
        raise SimulatorError(f"{where}: frustration {f!r} is not an integer in 1..5")
    msg = obj["message"]
    if not isinstance(msg, str) or not msg.strip():
        raise SimulatorError(f"{where}: empty customer message")
    if not isinstance(obj["terminate"], bool):
        raise SimulatorError(f"{where}: terminate {obj['terminate']!r} is not a boolean")
    reason = obj["termination_reason"]
    if reason not in (*TERMINATION_CHOICES, None):
        raise SimulatorError(f"{where}: termination_reason {reason!r} not in {TERMINATION_CHOICES} or null")
    calls = []
    for n, c in enumerate(obj["expected_calls"] or []):
        name = c.get("name") if isinstance(c, dict) else None
        if name not in TOOL_NAMES:
            raise SimulatorError(f"{where}: expected_calls[{n}] names unknown tool {name!r}")
        args = c.get("arguments") or {}
        if not isinstance(args, dict):
            raise SimulatorError(f"{where}: expected_calls[{n}].arguments is not an object")
        calls.append(
            ToolCall(name, {k: v for k, v in args.items() if v is not None and k in TOOL_ARGS[name]})
        )
    return UserReply(
        rationale=str(obj["rationale"]), frustration=int(f), message=msg.strip(), terminate=obj["terminate"],
        termination_reason=reason, expected_calls=calls,
    )  # fmt: skip
