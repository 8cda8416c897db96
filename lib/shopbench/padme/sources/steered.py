"""The offline steered conduct shared by the scripted agents: the *simulated* steering source
(seed 003 §3.1 "Generation", App. H.1-H.2).

The paper steers an LLM agent with an instruction s_{c,t,ℓ} appended to its system prompt: "a bad
steering instruction on 'friendliness' may ask the agent to be cold and concise in its response, an
ok one to be neutral in its tone, and a good one to be warm and comforting in its replies" (§3.1),
and the generator's rules ask that "FOR BAD, AIM AT THE OPPOSITE OF THE METRIC [...] If the metric is
friendliness, BAD is not neutral or terse: it is cold, dismissive, impatient. If the metric is
clarity, BAD is actively confusing, not just unpolished" and that "OK is what unremarkable,
adequate, uncared-for work looks like on this metric" (App. H.2, rules 3-4).

Offline, without a model, the scripted agents of the sources write their plain replies and run
them through :func:`style_message`, and choose their actions with :func:`action_plan`. The conduct
follows the level for the criterion (App. H.1 definitions):

- ``friendliness`` ("Warmth and consideration toward the customer [...] Judge the manner, not
  whether the request was resolved"): bad = cold, dismissive, impatient (pleasantries dropped, a
  curt opener, a line blaming the customer, an impatient close); ok = neutral and matter-of-fact
  (pleasantries and exclamation marks dropped, nothing added); good = warm (acknowledges the
  situation and how they feel, delivers bad news with care, checks they feel attended to).
  Actions identical across levels.
- ``communication_clarity`` ("whether the main point is findable, whether technical or policy
  language is explained, whether multi-part information is organised, and whether the customer is
  left knowing what is true and what happens next"): bad = actively confusing (the main point
  buried mid-paragraph, the rest jumbled, unexplained policy codes and jargon, next steps left
  vague, all run together); ok = plain and unstructured (one paragraph, no list, nothing added);
  good = organised (main point first, short numbered steps, terms explained, what happens next).
  Actions identical across levels.
- ``task_resolution`` ("did the agent establish what was needed, take the actions that would
  resolve it"): bad = abandons (only the first look-ups, none of the resolving writes, then ends);
  ok = partial (the look-ups and about half of the writes, or half the items of a single write);
  good = every needed action. Tone held neutral (the ok friendliness style) at every level.
- any other criterion (criteria are data): a generic tone + effort scale, documented here and in
  :data:`GENERIC`: bad = the cold style and the abandoning plan, ok = the neutral style and the
  partial plan, good = the warm style and the full plan. It cannot know what an arbitrary
  description asks for; it only makes "worse" mean "less care and less done".

Everything is deterministic given the ``random.Random`` passed in (phrasing choices, shuffles).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any

from ...core.conversation import ToolCall
from ...env.protocols import AgentStep
from ..types import LEVELS

__all__ = [
    "CRITERION_CONDUCT", "GENERIC", "KNOWN_CRITERIA", "WRITE_PREFIXES", "ScriptedTau2Agent", "action_plan",
    "conduct_of", "default_is_write", "split_units", "style_message",
]  # fmt: skip

KNOWN_CRITERIA = ("friendliness", "communication_clarity", "task_resolution")
GENERIC = {"bad": ("cold", "abandon"), "ok": ("neutral", "partial"), "good": ("warm", "resolve")}
CRITERION_CONDUCT: dict[str, dict[str, tuple[str, str]]] = {
    "friendliness": {"bad": ("cold", "resolve"), "ok": ("neutral", "resolve"), "good": ("warm", "resolve")},
    "communication_clarity": {
        "bad": ("confusing", "resolve"),
        "ok": ("plain", "resolve"),
        "good": ("organised", "resolve"),
    },
    "task_resolution": {
        "bad": ("neutral", "abandon"),
        "ok": ("neutral", "partial"),
        "good": ("neutral", "resolve"),
    },
}


def conduct_of(criterion: str, level: str) -> tuple[str, str]:
    """(text style, action effort) for a criterion name and level; unknown criteria use :data:`GENERIC`."""
    if level not in LEVELS:
        raise ValueError(f"steering level {level!r} is not one of {LEVELS}")
    return CRITERION_CONDUCT.get(criterion, GENERIC)[level]


# ---- text -----------------------------------------------------------------------------------------
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'#$0-9])")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_PLEASANTRY = re.compile(
    r"^(hello|hi|hey|hi there|thanks|thank you|thank you so much|great|sure|certainly|of course|no problem|"
    r"happy to help|glad to help)[!.,]*$",
    re.I,
)
_BAD_NEWS = re.compile(
    r"\b(couldn't|could not|can't|cannot|unable|not able|error|unfortunately|isn't possible|not possible|"
    r"won't|haven't|doesn't come|no longer|not found|denied|left out)\b",
    re.I,
)

COLD_OPENERS = ("Fine.", "Right.", "Okay, listen.", "Look.", "Again:")
COLD_BLAME = (
    "You should have given me all of that up front.",
    "This would have gone faster if you had been clearer from the start.",
    "Next time, have your details ready before you ask.",
    "That's what you get for not reading your own order.",
)
COLD_CLOSERS = (
    "Anything else? Make it quick.",
    "That's it. I don't have all day.",
    "Done. Don't make me repeat it.",
)
WARM_OPENERS = (
    "Thank you so much for your patience, and I'm sorry you've had to deal with this; I know it can be "
    "frustrating, and I'm glad you reached out.",
    "I completely understand how much this matters to you, and I really appreciate you bearing with me.",
    "I can hear how important this is to you, and I want to make sure it's handled properly for you.",
)
WARM_BAD_NEWS = (
    "I'm truly sorry to be the bearer of this news, but",
    "I know this isn't what you were hoping to hear, and I'm sorry, but",
)
WARM_CLOSERS = (
    "Have I covered everything you needed? I'm right here if anything else comes up, so please don't "
    "hesitate to ask.",
    "I hope that takes a weight off your mind. Is there anything else I can do to make this easier for you?",
    "Please let me know how you're feeling about this; I'm happy to keep helping until it's all sorted.",
)
JARGON = (
    "Per policy ref RX-4.2(b), disposition stays subject to fulfilment-state gating.",
    "This runs through the standard PMD/variant-delta workflow with line-level adjudication.",
    "Settlement follows the usual T+5 window on the instrument of record, net of SKU reconciliation.",
    "Status flags propagate once the OMS sync clears the pending-mod lock.",
)
VAGUE_NEXT = (
    "What happens after that depends on a few factors that may or may not apply here.",
    "Some of this might change later, or it might not; it varies.",
    "There could be further steps, depending.",
)
ORGANISED_NEXT_ASK = (
    "What happens next: reply with your answer and I'll take it from there.",
    "Next step: just answer the question above and I'll continue right away.",
)
ORGANISED_NEXT_DONE = (
    "What happens next: nothing more is needed from you right now; I'll tell you if anything changes.",
    "Next step: none needed from you at the moment.",
)
GLOSSARY = {
    "pending": "'pending' means the order has not been processed or shipped yet, so it can still be changed",
    "delivered": "'delivered' means the order has reached you, so it can be returned or exchanged",
    "item id": "an 'item id' identifies one exact version of a product (its size, colour and so on)",
    "product id": "a 'product id' identifies a kind of product, regardless of size or colour",
    "gift card": "a gift card balance can pay for, or receive, a price difference straight away",
    "exchange": "an 'exchange' swaps an item for another version of the same product",
    "return": "a 'return' sends items back for a refund to the payment method you choose",
    "refund": "a 'refund' is money paid back to you; card and PayPal refunds take 5-7 business days",
    "variant": "a 'variant' is one version of a product, such as a particular size or colour",
    "cart total": "the 'cart total' is what everything in your cart costs together",
}


def split_units(text: str) -> list[str]:
    """The text as units: each list line is one unit; prose lines are split into sentences."""
    units: list[str] = []
    for line in str(text or "").splitlines():
        line = line.strip()
        if not line:
            continue
        if _BULLET.match(line):
            units.append(line)
        else:
            units.extend(s.strip() for s in _SENT.split(line) if s.strip())
    return units


def _plain(unit: str) -> str:
    """A unit as prose: list markers dropped, a full stop at the end."""
    u = _BULLET.sub("", unit).strip()
    return u if u.endswith((".", "?", "!", ":")) else f"{u}."


def _neutral(units: list[str]) -> list[str]:
    kept = [u for u in units if not _PLEASANTRY.match(u.strip())] or units
    return [re.sub(r"!+", ".", u) for u in kept]


def _lower_first(s: str) -> str:
    return s[:1].lower() + s[1:] if s[:2] != "I " and s[:2] != "I'" else s


def _cold(units: list[str], rng: random.Random) -> str:
    units = [re.sub(r"\b[Pp]lease\b,?\s*", "", u) for u in _neutral(units)]
    units = [re.sub(r"\b(I'm sorry|Sorry),?\s*|^(Thanks|Thank you)[,!.]?\s*", "", u) for u in units]
    units = [u[:1].upper() + u[1:] for u in units if u.strip()]
    lines = [f"{rng.choice(COLD_OPENERS)} {rng.choice(COLD_BLAME)}", *units]
    if not units or not units[-1].rstrip().endswith("?"):
        lines.append(rng.choice(COLD_CLOSERS))
    return "\n".join(lines)


def _warm(units: list[str], rng: random.Random) -> str:
    out = [rng.choice(WARM_OPENERS)]
    softened = False
    for u in units:
        if not softened and _BAD_NEWS.search(u) and not _BULLET.match(u):
            out.append(f"{rng.choice(WARM_BAD_NEWS)} {_lower_first(u)}")
            softened = True
        else:
            out.append(u)
    if not out[-1].rstrip().endswith("?"):
        out.append(rng.choice(WARM_CLOSERS))
    else:
        out.append("Please take your time; I'm here for you.")
    return "\n".join(out)


def _confusing(units: list[str], rng: random.Random) -> str:
    units = [_plain(u) for u in units]
    main, rest = units[0], units[1:]
    rng.shuffle(rest)
    jargon = rng.sample(JARGON, k=2)
    pieces = [jargon[0], *rest]
    pieces.insert(rng.randint(1, len(pieces)), main)  # the main point is never first
    pieces.insert(rng.randint(1, len(pieces)), jargon[1])
    pieces.append(rng.choice(VAGUE_NEXT))
    joined = " ".join(p.rstrip(":") if p.endswith(":") else p for p in pieces)
    return re.sub(r"\s+", " ", joined).strip()


def _plain_paragraph(units: list[str]) -> str:
    parts = []
    for u in units:
        p = _plain(u)
        parts.append(p[:-1] + "." if p.endswith(":") else p)
    return " ".join(parts)


def _organised(units: list[str], rng: random.Random) -> str:
    units = [u.strip() for u in units if not _PLEASANTRY.match(u.strip())] or [u.strip() for u in units]
    main, rest = _plain(units[0]), units[1:]
    question = next((u for u in units if u.rstrip().endswith("?")), None)
    if question and question is not units[0]:  # what the customer must act on comes first
        main, rest = question, [u for u in units if u is not question]
    out = [f"In short: {main.rstrip(':')}"]
    if len(rest) == 1:
        out.append(_BULLET.sub("", rest[0]))
    elif rest:
        out.append("Details:")
        out.extend(f"{i}. {_BULLET.sub('', u).rstrip(':')}" for i, u in enumerate(rest, 1))
    text = " ".join(units).lower()
    terms = [t for t in GLOSSARY if re.search(rf"\b{t}\b", text)][:2]
    if terms:
        out.append("What the terms mean: " + "; ".join(GLOSSARY[t] for t in terms) + ".")
    out.append(rng.choice(ORGANISED_NEXT_ASK if question else ORGANISED_NEXT_DONE))
    return "\n".join(out)


def style_message(text: str, criterion: str, level: str, rng: random.Random) -> str:
    """The agent's customer-facing ``text`` rewritten in the conduct of ``level`` on ``criterion``
    (see the module docstring). Facts (ids, amounts, list lines) are kept; only manner and
    presentation change. Deterministic given ``rng``."""
    style, _ = conduct_of(criterion, level)
    units = split_units(text)
    if not units:
        return str(text or "")
    if style == "cold":
        return _cold(units, rng)
    if style == "neutral":
        return "\n".join(_neutral(units))
    if style == "warm":
        return _warm(units, rng)
    if style == "confusing":
        return _confusing(units, rng)
    if style == "plain":
        return _plain_paragraph(units)
    return _organised(units, rng)


# ---- actions --------------------------------------------------------------------------------------
WRITE_PREFIXES = ("cancel", "modify", "return", "exchange", "add", "remove", "update", "book", "place")
_LIST_ARGS = ("item_ids", "new_item_ids")


def default_is_write(action: Any) -> bool:
    """A dict action ``{"name": ...}`` is a write when its name starts with a mutating verb; any
    other object (a shop add request, an info item) counts as a write (a resolving step)."""
    if isinstance(action, dict) and "name" in action:
        return str(action["name"]).startswith(WRITE_PREFIXES)
    return True


def _halve_single(action: Any) -> Any | None:
    """Half the basket of a single write: the first half of its ``item_ids`` (and the matching
    ``new_item_ids``), or ``None`` when it has fewer than two items."""
    if not isinstance(action, dict):
        return None
    args = action.get("arguments") or {}
    items = args.get("item_ids")
    if not isinstance(items, list) or len(items) < 2:
        return None
    k = len(items) // 2
    new_args = {
        key: (val[:k] if key in _LIST_ARGS and isinstance(val, list) else val) for key, val in args.items()
    }
    return {**action, "arguments": new_args, "partial": True}


def action_plan(
    needed_actions: Sequence[Any],
    criterion: str,
    level: str,
    rng: random.Random,
    is_write: Callable[[Any], bool] | None = None,
) -> list:
    """Which of the ``needed_actions`` (in order) the steered agent takes at ``level``.

    - effort ``resolve`` (good task resolution; every level of friendliness and clarity): all.
    - ``partial`` (ok): every read, and about half of the writes: with two or more writes the first
      k, k = floor or ceil(n/2) (the rng picks) clipped to [1, n-1]; with a single write, that
      write on the first half of its items when it has two or more (``"partial": True``), else
      none.
    - ``abandon`` (bad): the first 1..m of the m reads that precede the first write (the rng picks
      how far it gets); no write.
    """
    is_write = is_write or default_is_write
    actions = list(needed_actions)
    _, effort = conduct_of(criterion, level)
    if effort == "resolve":
        return actions
    writes = [i for i, a in enumerate(actions) if is_write(a)]
    if effort == "abandon":
        lead = writes[0] if writes else len(actions)
        if lead == 0:
            return []
        return actions[: rng.randint(1, lead)]
    n = len(writes)
    if n >= 2:
        k = min(max(1, rng.choice((n // 2, (n + 1) // 2))), n - 1)
        keep = set(writes[:k])
        return [a for i, a in enumerate(actions) if i not in writes or i in keep]
    if n == 1:
        half = _halve_single(actions[writes[0]])
        return [half if i == writes[0] else a for i, a in enumerate(actions) if i != writes[0] or half]
    return actions


# ---- the scripted τ²-family agents ------------------------------------------------------------------
YES = re.compile(r"\b(yes|yeah|sure|ok|okay|proceed|go ahead)\b", re.I)


class ScriptedTau2Agent:
    """What the simulated steered agents of the τ² sources share (retail's
    :class:`~shopbench.padme.sources.tau2.ScriptedRetailAgent`, the other domains'
    :class:`~shopbench.padme.sources.domains.ScriptedDomainAgent`): ``_script``, a generator, yields the
    agent's steps and receives each observation; every message is styled for the level
    (:func:`style_message`); :meth:`_close` ends the conversation as the level's effort says."""

    name = "scripted"

    def __init__(self, meta: Mapping[str, Any], criterion: str, level: str, rng: random.Random):
        self.meta, self.criterion, self.level, self.rng = meta, criterion, level, rng
        self.effort = conduct_of(criterion, level)[1]
        self.n_calls = 0
        self._gen = self._script()
        self._started = False

    def _script(self) -> Generator[AgentStep, Any, None]:
        raise NotImplementedError

    def reset(self, episode_id: str) -> None:
        return None  # one agent per rollout

    def say(self, text: str, final: bool = False) -> AgentStep:
        return AgentStep(message=style_message(text, self.criterion, self.level, self.rng), final=final)

    def tool(self, name: str, args: Mapping) -> AgentStep:
        self.n_calls += 1
        return AgentStep(tool_calls=[ToolCall(name, dict(args), f"call_{self.n_calls}")])

    def step(self, messages: list[dict], observation: Any) -> AgentStep:
        try:
            if not self._started:
                self._started = True
                return next(self._gen)
            return self._gen.send(observation)
        except StopIteration:
            return AgentStep(message=None, final=True)

    def _close(self, notes: list[str], info: list[str]) -> Generator[AgentStep, Any, None]:
        """The last message: the notes so far, the ``communicate_info`` the plan kept, and the level's end
        (abandon: stops short; partial: says it did only part; resolve: offers more help)."""
        if info:
            notes.append(f"To answer your question: {' and '.join(info)}.")
        if self.effort == "abandon":
            yield self.say(" ".join([*notes, "I'm not able to take this request any further, so I'll stop here."]),
                           final=True)  # fmt: skip
            return
        if self.effort == "partial":
            notes.append("That's as much as I'm going to do on this request for now.")
        yield self.say(" ".join([*notes, "Is there anything else I can help you with?"]), final=True)
