"""Text of the τ²-retail users: the instructions addressed to the simulated user ("You want ...")
in the first person, and the task description the PADMÉ steering generator may see (App. H.2
rule 1: no names, no user or account or booking identifiers)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["first_person", "task_description"]

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ORDER_ID = re.compile(r"#W\d+")
_USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{3,5}\b")
_ZIP = re.compile(r"\b\d{5}\b")
_LONG_ID = re.compile(r"\b\d{9,}\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")

_FIRST = [
    (r"\bYou name\b", "My name"), (r"\bYou are\b", "I am"), (r"\byou are\b", "I am"), (r"\bYou're\b", "I'm"),
    (r"\byou're\b", "I'm"), (r"\bYou've\b", "I've"), (r"\byou've\b", "I've"), (r"\bYou'd\b", "I'd"),
    (r"\byou'd\b", "I'd"), (r"\bYou'll\b", "I'll"), (r"\byou'll\b", "I'll"), (r"\bYourself\b", "Myself"),
    (r"\byourself\b", "myself"), (r"\bYours\b", "Mine"), (r"\byours\b", "mine"), (r"\bYour\b", "My"),
    (r"\byour\b", "my"),
    (r"\b(to|for|with|asks|ask|tell|tells|give|gives|help|helps|let|lets|told|gave|offer|offers|call|"
     r"contact|sent|send|charge|refund|at|from|about) you\b", r"\1 me"),
    (r"\bYou\b", "I"), (r"\byou\b", "I"),
]  # fmt: skip
_THIRD = [
    (r"\bYou name\b", "Their name"), (r"\bYou are\b", "They are"), (r"\byou are\b", "they are"),
    (r"\bYou're\b", "They're"), (r"\byou're\b", "they're"), (r"\bYou've\b", "They've"), (r"\byou've\b", "they've"),
    (r"\bYou'd\b", "They'd"), (r"\byou'd\b", "they'd"), (r"\bYou'll\b", "They'll"), (r"\byou'll\b", "they'll"),
    (r"\bYourself\b", "Themselves"), (r"\byourself\b", "themselves"), (r"\bYours\b", "Theirs"),
    (r"\byours\b", "theirs"), (r"\bYour\b", "Their"), (r"\byour\b", "their"),
    (r"\b(to|for|with|asks|ask|tell|tells|give|gives|help|helps|let|lets|told|gave|offer|offers|call|"
     r"contact|sent|send|charge|refund|at|from|about) you\b", r"\1 them"),
    (r"\bYou\b", "They"), (r"\byou\b", "they"),
]  # fmt: skip


def _person(text: str, table: Sequence[tuple[str, str]]) -> str:
    for pat, rep in table:
        text = re.sub(pat, rep, text)
    return text


def first_person(text: str) -> str:
    """Instructions addressed to the simulated user ("You want ...") as the user's words ("I want ...")."""
    return _person(str(text or "").strip(), _FIRST)


def _user_sentences(reason: str) -> list[str]:
    """Sentences of the reason for call that are the user's own request (not lines telling the
    simulator how to react to the agent)."""
    out = [s for s in _SENTENCE.split(reason.strip()) if s and "agent" not in s.lower()]
    return out or [reason.strip()]


def _names_of(task: Mapping, db: Mapping[str, dict]) -> set[str]:
    names: set[str] = set()
    for a in task["evaluation_criteria"]["actions"]:
        args = a.get("arguments") or {}
        names |= {str(args[k]) for k in ("first_name", "last_name") if args.get(k)}
        uid = args.get("user_id")
        u = db["users"].get(uid) if isinstance(uid, str) else None
        if u:
            names |= {u["name"]["first_name"], u["name"]["last_name"]}
    return {n for n in names if len(n) > 1}


def task_description(task: Mapping, db: Mapping[str, dict]) -> str:
    """The reason for call in the third person without particulars (App. H.2 rule 1: "no names, no
    user or account or booking identifiers"): order, item, product and user ids, emails, zip codes,
    street addresses and the customer's names are removed."""
    reason = task["user_scenario"]["instructions"]["reason_for_call"]
    text = _person(reason, _THIRD)
    text = _EMAIL.sub("their email address", text)
    text = re.sub(r"(?:order|orders)?\s*#W\d+(?:\s*(?:,|and|or)\s*#W\d+)*", " order", text)
    text = _USER_ID.sub("their account", text)
    text = re.sub(r"\b\d+\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\s+(?:Drive|Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Way|"
                  r"Boulevard|Blvd|Court|Ct|Place|Pl)\b\.?", "a new address", text)  # fmt: skip
    text = re.sub(r"\b(?:Suite|Apt|Apartment|Unit)\s+\w+", "", text)
    text = _ZIP.sub("", _LONG_ID.sub("", text))
    for n in sorted(_names_of(task, db), key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(n)}\b", "the customer", text)
    text = re.sub(r"\border\s+order\b", "order", text)
    text = re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r"[ \t]+", " ", text))
    text = re.sub(r",\s*,", ",", text).strip()
    return f"A customer contacts the online retail store's support. {text}"
