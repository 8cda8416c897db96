"""A lexical reference scorer for the PADMÉ criteria (seed 003 App. H.1) — a heuristic, not a judge.

:func:`criterion_score` rates one trajectory on one criterion in [0, 1] from what the customer can
see and what the agent did: assistant messages, tool calls and tool results. It never reads the
steering level, the steering text or the environment reward of a :class:`~shopbench.padme.types.Rollout`
(those are the synthetic label and its verification, and a scorer that saw them would be cheating).
It is deterministic and needs no model, so offline pipelines (the heuristic filter judges of
``judges/padme/filters.py``, the offline evaluators of meta-evaluation) have something with real signal to
run on. It is a *heuristic reference*: marker counts stand in for the criteria's definitions and are
easy to fool. It is never the judge of record; results that matter come from LM judges and humans.

The paper's definitions (H.1) and what each heuristic counts:

* ``friendliness`` — "Warmth and consideration toward the customer: whether the agent acknowledges
  their situation and how they feel about it, delivers unwelcome news with care, and leaves them
  feeling attended to." Warmth/acknowledgement markers (apologies, empathy, thanks, offers of more
  help) minus coldness markers (impatience, blame, curt commands), per assistant turn.
* ``communication_clarity`` — "whether the main point is findable, whether technical or policy
  language is explained, whether multi-part information is organised, and whether the customer is
  left knowing what is true and what happens next." Structure (numbered or bulleted steps, a short
  main-point-first opening sentence, explained terms, a "what happens next" statement) minus
  confusion (internal jargon codes, hedged jumble, run-on messages), per assistant turn.
* ``task_resolution`` — "did the agent establish what was needed, take the actions that would
  resolve it, and leave the customer with the outcome they came for. A correct refusal counts as
  resolution." Successful write actions (state-changing tool calls whose result is not an error)
  relative to the actions the user asked for (request verbs in user turns), plus closure (the last
  assistant turn confirms an outcome, or declines with a reason).
* any other criterion — lexical overlap: the share of the description's content words (5-letter
  prefixes, stop words removed) that occur in the assistant's text. A weak generic fallback.

Each marker score maps a net count ``n`` over ``m`` assistant turns to ``0.5 + 0.5·tanh(n / m)``.
"""

from __future__ import annotations

import math
import re

from shopbench.padme.types import Criterion, Rollout

__all__ = ["criterion_score", "assistant_text", "KNOWN_CRITERIA"]

KNOWN_CRITERIA = ("friendliness", "communication_clarity", "task_resolution")

# ---- markers -----------------------------------------------------------------------------------
_WARM = [
    r"\bsorry\b", r"\bapologi[sz]e", r"\bi understand\b", r"\bunderstandabl", r"\bthank", r"\bhappy to\b",
    r"\bglad\b", r"\bof course\b", r"\bi appreciate\b", r"\bfrustrat", r"\bi know (this|that|it)\b",
    r"\bdon'?t worry\b", r"\bno worries\b", r"\bhope\b", r"\bcompletely understand", r"\bmy pleasure\b",
    r"\byou'?re welcome\b", r"\bwonderful\b", r"\bgreat news\b", r"\btake care\b", r"\bi'?m here\b",
    r"\banything else i can\b", r"\bfeel free\b", r"\bthat must\b", r"\bunfortunately\b",
    r"\bi'?d be (happy|glad)\b", r"\bwarm", r"\bkindly\b",
]  # fmt: skip
_COLD = [
    r"\bas (i|already) (said|stated|explained)\b", r"\bi already\b", r"\bnot my (problem|job)\b",
    r"\bobviously\b", r"\bwhatever\b", r"\byou (need|have) to\b", r"\byou must\b", r"\bread the\b",
    r"\bnext\.\s*$", r"\bdenied\b", r"^\s*no\.", r"\bcan'?t help\b", r"\bnothing (more|else) to\b",
    r"\bpay attention\b", r"\bhurry\b", r"\bquickly\b", r"\bjust give me\b", r"\bthat'?s it\b",
    r"\bdone\.\s*$", r"\bsupply\b", r"\bprovide (it|the|your)\b", r"\bmove on\b", r"\birrelevant\b",
    r"\bwhy would\b", r"\bnot (possible|allowed)\.\s*$",
]  # fmt: skip
_STRUCT_LINE = [r"^\s*\d+[.)]\s", r"^\s*[-*•]\s"]
_STRUCT_TEXT = [
    r"\bwhich means\b", r"\bthis means\b", r"\bin other words\b", r"\bi\.e\.", r"\bthat is,", r"\bmeaning\b",
    r"\bnext,?\b", r"\bwhat happens next\b", r"\byou('ll| will) (receive|get|see)\b", r"\bnext step", r"\bfrom here\b",
    r"\bin short\b", r"\bto summari[sz]e\b", r"\bhere'?s what\b", r"\bfirst,", r"\bsecond,", r"\bfinally,",
]  # fmt: skip
_CONFUSE = [
    r"\b[A-Z]{2,}[_-][A-Z0-9_-]+\b", r"§", r"\bper (sec|pol|cl)\.", r"\bstatus code\b", r"\b(rma|sla|tbd|n/a)\b",
    r"\bmaybe\b", r"\bpossibly\b", r"\bsort of\b", r"\bkind of\b", r"\bor something\b", r"\bi think\b",
    r"\bnot sure\b", r"\betc\.? etc", r"\.\.\.", r"\banyway\b", r"\bor whatever\b", r"\bif that makes sense\b",
    r"\bsomehow\b", r"\bunless not\b", r"\bper the thing\b",
]  # fmt: skip

_WRITE_PREFIXES = (
    "cancel", "modify", "update", "exchange", "return", "book", "add", "remove", "create", "transfer", "place",
    "buy", "purchase", "set", "change", "send", "apply", "refund", "upgrade", "delete", "submit", "checkout",
    "pay", "reset", "enable", "disable", "activate", "suspend", "resume", "toggle", "open", "close", "make",
)  # fmt: skip
_READ_PREFIXES = ("get", "list", "find", "search", "lookup", "check", "calculate", "think", "view", "read")
_REQUEST_VERBS = [
    r"\bcancel", r"\breturn", r"\bexchange", r"\bmodify", r"\bchange", r"\bupdate", r"\bbook", r"\brefund",
    r"\badd\b", r"\bremove", r"\bupgrade", r"\bbuy\b", r"\brebook", r"\bswitch", r"\breset",
    r"\bfix\b", r"\bactivate", r"\bsuspend", r"\bpay\b", r"\btransfer",
]  # fmt: skip
_ERROR = re.compile(
    r"\berror\b|\bnot found\b|\bfailed\b|\binvalid\b|\bcannot\b|\bnot allowed\b|\bexception\b", re.I
)
_CONFIRM = re.compile(
    r"\bhas been\b|\bhave been\b|\bis now\b|\bsuccessfully\b|\bcompleted?\b|\bconfirmed\b|\bprocessed\b|\bis done\b"
    r"|\ball set\b|\bwent through\b",
    re.I,
)
_REFUSE = re.compile(r"\b(can ?not|can't|unable to|not (able|permitted|allowed|eligible))\b", re.I)
_REASON = re.compile(r"\bbecause\b|\bsince\b|\bpolicy\b|\bas the\b|\bdue to\b|\brules?\b", re.I)

_STOP = set(
    "the and for that with this from their they them what whether which when where have has had will would "
    "should could about into than then there these those your you not how does did done being been were was "
    "its it's judge manner outcome agent customer".split()
)


def _compile(pats: list[str], flags: int = re.I | re.M) -> list[re.Pattern]:
    return [re.compile(p, flags) for p in pats]


_WARM_RE, _COLD_RE = _compile(_WARM), _compile(_COLD)
_STRUCT_LINE_RE, _STRUCT_TEXT_RE = _compile(_STRUCT_LINE), _compile(_STRUCT_TEXT)
_CONFUSE_RE = [
    re.compile(p, re.M) if p.startswith(r"\b[A-Z]") else re.compile(p, re.I | re.M) for p in _CONFUSE
]
_REQUEST_RE = _compile(_REQUEST_VERBS)


# ---- trajectory access -------------------------------------------------------------------------
def _text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _assistant_turns(rollout: Rollout) -> list[str]:
    return [
        t for m in rollout.messages if m.get("role") == "assistant" and (t := _text(m.get("content")).strip())
    ]


def assistant_text(rollout: Rollout) -> str:
    """All customer-visible assistant text of a trajectory, one turn per paragraph."""
    return "\n\n".join(_assistant_turns(rollout))


def _tool_calls(m: dict) -> list[tuple[str, str | None]]:
    out = []
    for c in m.get("tool_calls") or []:
        if not isinstance(c, dict):
            continue
        fn = c.get("function") if isinstance(c.get("function"), dict) else c
        name = fn.get("name")
        if isinstance(name, str):
            out.append((name, c.get("id")))
    return out


def _count(patterns: list[re.Pattern], text: str) -> int:
    return sum(len(p.findall(text)) for p in patterns)


def _squash(net: float, turns: int) -> float:
    return 0.5 + 0.5 * math.tanh(net / max(1, turns))


# ---- per-criterion heuristics ------------------------------------------------------------------
def _friendliness(rollout: Rollout) -> float:
    turns = _assistant_turns(rollout)
    if not turns:
        return 0.0
    text = "\n".join(turns)
    return _squash(_count(_WARM_RE, text) - _count(_COLD_RE, text), len(turns))


def _clarity(rollout: Rollout) -> float:
    turns = _assistant_turns(rollout)
    if not turns:
        return 0.0
    good = bad = 0
    for t in turns:
        good += min(3, _count(_STRUCT_LINE_RE, t)) + _count(_STRUCT_TEXT_RE, t)
        bad += _count(_CONFUSE_RE, t)
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", t) if s.strip()]
        if sentences and len(sentences[0].split()) <= 20 and len(sentences) > 1:
            good += 1  # main point first: a short opening sentence before the details
        words = len(t.split())
        if sentences and words / len(sentences) > 35:
            bad += 1  # run-on message
    return _squash(good - bad, len(turns))


def _is_write(name: str) -> bool:
    low = name.lower()
    if low.startswith(_READ_PREFIXES):
        return False
    return low.startswith(_WRITE_PREFIXES)


def _calls_with_results(msgs: list[dict]) -> list[tuple[str, str | None]]:
    """Every tool call of the assistant, in order, with the text of its result (``None`` if none
    came back). A tool message is matched by ``tool_call_id``, else to the earliest open call."""
    calls: list[list] = []  # [name, id, result]
    for m in msgs:
        role = m.get("role")
        if role == "assistant":
            calls += [[name, cid, None] for name, cid in _tool_calls(m)]
        elif role == "tool":
            cid = m.get("tool_call_id")
            open_calls = [c for c in calls if c[2] is None]
            match = next(
                (c for c in open_calls if cid and c[1] == cid), open_calls[0] if open_calls else None
            )
            if match is not None:
                match[2] = _text(m.get("content"))
    return [(c[0], c[2]) for c in calls]


def _task_resolution(rollout: Rollout) -> float:
    msgs = rollout.messages
    ok_writes = failed_writes = 0
    for name, result in _calls_with_results(msgs):
        if not _is_write(name):
            continue
        if result is not None and _ERROR.search(result[:400]):
            failed_writes += 1
        else:
            ok_writes += 1
    user_text = "\n".join(_text(m.get("content")) for m in msgs if m.get("role") == "user")
    asked = sum(1 for p in _REQUEST_RE if p.search(user_text))
    turns = _assistant_turns(rollout)
    last = turns[-1] if turns else ""
    confirmed = bool(_CONFIRM.search(last))
    refused = bool(_REFUSE.search(last)) and bool(_REASON.search(last))
    if asked == 0:
        asked = 1 if (ok_writes or failed_writes) else 0
    if asked == 0:
        action = 1.0 if turns else 0.0
    elif ok_writes == 0 and failed_writes == 0 and refused:
        action = 0.5  # declined with a reason: may be the correct refusal, which counts as resolution
    else:
        action = min(1.0, ok_writes / asked) - 0.25 * min(1, failed_writes)
    closure = 1.0 if confirmed else (0.7 if refused else 0.0)
    return max(0.0, min(1.0, 0.7 * max(0.0, action) + 0.3 * closure))


def _content_words(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[a-z][a-z']+", text.lower()) if len(w) > 3 and w not in _STOP}


def _overlap(rollout: Rollout, criterion: Criterion) -> float:
    want = _content_words(f"{criterion.name.replace('_', ' ')} {criterion.description}")
    if not want:
        return 0.0
    have = _content_words(assistant_text(rollout))
    return len(want & have) / len(want)


_SCORERS = {
    "friendliness": _friendliness,
    "communication_clarity": _clarity,
    "task_resolution": _task_resolution,
}


def criterion_score(rollout: Rollout, criterion: Criterion) -> float:
    """A heuristic score in [0, 1] of ``rollout`` on ``criterion`` (see the module docstring).

    Reads only ``rollout.messages`` (assistant text, tool calls, tool results and the user's
    requests); never the level, steering or reward. Criterion names are matched case-insensitively
    with spaces as underscores ("Communication clarity" is ``communication_clarity``); any other
    criterion uses the lexical-overlap fallback."""
    key = criterion.name.strip().lower().replace(" ", "_").replace("-", "_")
    scorer = _SCORERS.get(key)
    value = scorer(rollout) if scorer else _overlap(rollout, criterion)
    return float(max(0.0, min(1.0, value)))
