"""Pairs for the human study (PADMÉ Section 4 "Human Validation Protocol", Appendix D.1).

A :class:`Pair` is two items (``side_a``, ``side_b``) judged on one criterion, with reference
documents the annotator may open, and ``hidden`` metadata (steering levels, the synthetic label,
the filter outcome, the source) that never reaches the annotation interface: "the steering
instruction and target levels are withheld" (Figure 3).

Importers:

* :func:`pairs_from_tau_bench` — two conversations of the same tau-bench task with different
  rewards, judged on *Task resolution*; the synthetic label is the higher-reward side.
* :func:`pairs_from_paceshop` — a GOOD PACEShop record and a BAD sibling derived from it (same
  query, same persona), judged on *Overall response quality*; the label is the GOOD side.
* :func:`synthetic_pairs` — small made-up conversation pairs for demos and tests.

:func:`assign_panels` splits pairs into disjoint sets, one per panel of annotators (the paper: two
panels of three annotators on disjoint sets of 75 pairs).

Which underlying side sits in ``side_a`` is drawn from the seed, so the label is not always A; the
interface then shuffles left/right per annotator (:func:`shopbench.annotate.store.slot_order`).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from shopbench.errors import InputError, read_text
from shopbench.padme.criteria import DEFAULT_CRITERIA
from shopbench.padme.types import Criterion

Side = Literal["side_a", "side_b"]
SIDES: tuple[Side, Side] = ("side_a", "side_b")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Appendix H.1: "The exact same criterion names and descriptions are supplied to the generator,
# filter judges, model evaluators, and human annotators". The three PADMÉ criteria are PADMÉ's own
# (:data:`shopbench.padme.criteria.DEFAULT_CRITERIA`, the one Criterion type), under the display
# names the annotation interface shows; the fourth is the PACEShop pair study's.
_DISPLAY = {"friendliness": "Friendliness", "communication_clarity": "Communication clarity",
            "task_resolution": "Task resolution"}  # fmt: skip
CRITERIA: dict[str, Criterion] = {
    **{c.name: Criterion(name=_DISPLAY[c.name], description=c.description) for c in DEFAULT_CRITERIA},
    "response_quality": Criterion(
        name="Overall response quality",
        description=(
            "How well the response serves this shopper and this query: whether the product categories, "
            "related queries and overview fit what was asked and respect the shopper's stated constraints "
            "and preferences, and whether what it claims is backed by the evidence it cites. Judge the "
            "response as a whole, not its length."
        ),
    ),
}


class Reference(_Model):
    """A document the annotator may open (policy, tool list, persona, evidence pool)."""

    title: str
    text: str
    format: Literal["text", "markdown"] = "text"


# What the annotator is shown of a conversation. Not the core conversation types
# (:class:`shopbench.core.Message`, :class:`shopbench.core.ToolCall`, the one definition every
# environment, judge and trajectory file uses): a pair file keeps each message as the source wrote it —
# OpenAI field names (``content``, ``id``), a tool call's arguments as the raw JSON text the agent
# emitted (the core type parses and re-serialises them), a tool call id only when the source gave one —
# and rejects unknown keys, because the annotation interface shows exactly that text (issue 27: a
# JSON-facing view, named apart so that ``Message`` and ``ToolCall`` mean one thing in the project).
class ShownToolCall(_Model):
    name: str
    arguments: str = "{}"  # the raw JSON string the agent emitted
    id: str | None = None


class ShownMessage(_Model):
    role: Literal["user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ShownToolCall] = Field(default_factory=list)
    name: str | None = None  # the tool's name, for role "tool"
    tool_call_id: str | None = None


class Conversation(_Model):
    messages: list[ShownMessage]


class ShopperView(_Model):
    summary: str
    hard_constraints: list[str] = Field(default_factory=list)
    soft_preferences: list[str] = Field(default_factory=list)
    brand_likes: list[str] = Field(default_factory=list)
    brand_avoids: list[str] = Field(default_factory=list)
    budget: str = ""


class EvidenceView(_Model):
    title: str
    brand: str
    snippet: str
    source_field: str


class PaceshopView(_Model):
    """What the annotator sees of a PACEShop record: query, shopper, the four-field response and the
    snippets it cites. No record id, label, tier or defect."""

    query: str
    persona: ShopperView
    overview_text: str
    productCategoryList: list[str]
    category_search_queries: list[str] = Field(default_factory=list)
    rqList: list[str]
    attribution_list: list[str]
    evidence: dict[str, EvidenceView] = Field(default_factory=dict)  # cited ids found in the pool


_CONTENT_MODELS: dict[str, type[BaseModel]] = {"conversation": Conversation, "paceshop": PaceshopView}


class Item(_Model):
    """One side of a pair. ``content`` is a :class:`Conversation` or :class:`PaceshopView` as a dict."""

    kind: Literal["conversation", "paceshop"]
    content: dict[str, Any]

    @model_validator(mode="after")
    def _check_content(self) -> Item:
        self.content = _CONTENT_MODELS[self.kind].model_validate(self.content).model_dump()
        return self

    def parsed(self) -> Conversation | PaceshopView:
        return _CONTENT_MODELS[self.kind].model_validate(self.content)  # type: ignore[return-value]


class Hidden(_Model):
    """Never shown to annotators and never sent to the browser."""

    steering_levels: dict[str, Any] | None = None
    label: Side | None = None  # the side that should win (the synthetic label)
    filter_outcome: str | None = None
    source: dict[str, Any] = Field(default_factory=dict)


class Pair(_Model):
    id: str
    criterion: Criterion
    side_a: Item
    side_b: Item
    references: list[Reference] = Field(default_factory=list)
    hidden: Hidden = Field(default_factory=Hidden)

    def side(self, name: Side) -> Item:
        return self.side_a if name == "side_a" else self.side_b


class PairImportError(InputError):
    """An input file or record cannot be turned into pairs; the message names file and record."""


# ---- pair files ------------------------------------------------------------------------------------
def write_pairs(path: str | Path, pairs: Iterable[Pair]) -> str:
    """Write pairs as JSON lines (atomically); returns the sha256."""
    from shopbench.paceshop.io import write_jsonl

    return write_jsonl(path, list(pairs))


def read_pairs(path: str | Path) -> list[Pair]:
    """Pairs written by :func:`write_pairs`: strict JSON lines, each a valid :class:`Pair`, ids unique;
    a bad line is a :class:`PairImportError` naming file, line, pair and field (issue 12 §2)."""
    from shopbench.paceshop.io import DataFileError, read_jsonl

    try:
        return read_jsonl(path, Pair, id_field="id", fix="fix or remove that line, or write the pairs again")
    except DataFileError as e:
        raise PairImportError(e.problem, file=e.file, where=e.where, field=e.field, fix=e.fix) from None


PAIR_SET_FIX = ("give the path of a pairs file written by the explorer's 'Export selection as pairs' (notebook 90) "
                "or by shopbench.annotate.write_pairs, one JSON pair per line")  # fmt: skip


def read_pair_set(path: str | Path) -> list[Pair]:
    """A pair set to annotate exactly as given (``--pairs FILE``): :func:`read_pairs`, with a missing,
    empty or malformed file a :class:`PairImportError` that names the file and says how to make one."""
    p = Path(path)
    if not p.is_file():
        problem = "is a folder, not a pairs file" if p.is_dir() else "no such pairs file"
        raise PairImportError(problem, file=p, fix=PAIR_SET_FIX)
    try:
        pairs = read_pairs(p)
    except InputError as e:  # an empty, non-UTF-8 or non-JSON file, or a line that is not a Pair
        fix = e.fix if e.where else PAIR_SET_FIX  # a bad line: fix that line; the whole file: make one
        raise PairImportError(e.problem, file=p, where=e.where, field=e.field, fix=fix) from None
    if not pairs:
        raise PairImportError("holds no pairs", file=p, fix=PAIR_SET_FIX)
    return pairs


def _short_hash(*parts: object, n: int = 10) -> str:
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:n]


def _labels(n: int, rng: random.Random) -> list[Side]:
    """Which side should win, for ``n`` pairs: half side A, half side B, in seeded order (position
    balance, PADMÉ Appendix C.2)."""
    labels: list[Side] = ["side_a" if i % 2 == 0 else "side_b" for i in range(n)]
    rng.shuffle(labels)
    return labels


def _place(label: Side, winner: Item, loser: Item) -> tuple[Item, Item]:
    """``(side_a, side_b)`` with the winner on the ``label`` side."""
    return (winner, loser) if label == "side_a" else (loser, winner)


# ---- tau-bench -------------------------------------------------------------------------------------
def _tau_messages(path: Path, i: int, conv: dict) -> tuple[list[ShownMessage], str | None]:
    """The conversation without its system prompt, and the system prompt."""
    where = f"conversation [{i}] (task_id={conv.get('task_id')!r}, trial={conv.get('trial')!r})"
    fix = "restore the published results file"
    traj = conv.get("traj")
    if not isinstance(traj, list):
        raise PairImportError(f"must be a list of messages, got {type(traj).__name__}", file=path, where=where,
                              field="traj", fix=fix)  # fmt: skip
    system, out = None, []
    for j, m in enumerate(traj):
        if not isinstance(m, dict) or "role" not in m:
            raise PairImportError("is not a message with a 'role'", file=path, where=where, field=f"traj[{j}]",
                                  fix=fix)  # fmt: skip
        role = m["role"]
        if role == "system":
            system = m.get("content") or ""
            continue
        try:
            calls = []
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                args = fn.get("arguments", "{}")
                calls.append(ShownToolCall(name=fn["name"], id=c.get("id"),
                                      arguments=args if isinstance(args, str) else json.dumps(args)))  # fmt: skip
            content = m.get("content")
            out.append(ShownMessage(role=role, content=None if content is None else str(content), tool_calls=calls,
                               name=m.get("name"), tool_call_id=m.get("tool_call_id")))  # fmt: skip
        except (KeyError, TypeError, AttributeError, ValidationError) as e:
            raise PairImportError(f"(role {role!r}) is malformed: {e}", file=path, where=where, field=f"traj[{j}]",
                                  fix=fix) from None  # fmt: skip
    return out, system


def _tool_reference(convs: list[tuple[dict, list[ShownMessage]]]) -> Reference:
    seen: dict[str, set[str]] = defaultdict(set)
    for _, msgs in convs:
        for m in msgs:
            for c in m.tool_calls:
                try:
                    args = json.loads(c.arguments)
                    keys = set(args) if isinstance(args, dict) else set()
                except json.JSONDecodeError:
                    keys = set()
                seen[c.name] |= keys
    lines = ["Tools the agent called in these conversations, with the arguments it passed:", ""]
    lines += [f"- {name}({', '.join(sorted(keys))})" for name, keys in sorted(seen.items())]
    return Reference(title="Agent tools", text="\n".join(lines), format="markdown")


def pairs_from_tau_bench(path: str | Path, policy_path: str | Path | None = None, max_pairs: int | None = None,
                         seed: int = 0) -> list[Pair]:  # fmt: skip
    """Task-resolution pairs from a tau-bench results file (a list of ``{task_id, trial, reward, traj,
    info}``): two trials of the same task with different rewards. The higher-reward side is the
    label. References: the policy (``policy_path``, else ``policy.md`` beside the file, else the
    system prompt) and the tools the agent called.

    With ``max_pairs``, pairs are drawn round-robin over tasks (seeded), so many tasks are covered.
    """
    from shopbench.paceshop.io import read_json

    path = Path(path)
    fix = "restore the published tau-bench results file (a JSON list of {task_id, trial, reward, traj, info})"
    data = read_json(path, "tau-bench results file", fix=fix, error=PairImportError)
    if not isinstance(data, list):
        raise PairImportError(
            f"expected a JSON list of conversations, got {type(data).__name__}", file=path, fix=fix
        )
    convs: list[tuple[dict, list[ShownMessage]]] = []
    system_prompt = None
    for i, conv in enumerate(data):
        if not isinstance(conv, dict):
            raise PairImportError(f"is a {type(conv).__name__}, not an object", file=path,
                                  where=f"conversation [{i}]", fix=fix)  # fmt: skip
        for key in ("task_id", "reward", "traj"):
            if key not in conv:
                raise PairImportError("is missing", file=path, field=key, fix=fix,
                                      where=f"conversation [{i}] (task_id={conv.get('task_id')!r})")  # fmt: skip
        reward = conv["reward"]
        if isinstance(reward, bool) or not isinstance(reward, int | float):
            raise PairImportError(f"{reward!r} is not a number", file=path, field="reward", fix=fix,
                                  where=f"conversation [{i}] (task_id={conv['task_id']!r})")  # fmt: skip
        msgs, system = _tau_messages(path, i, conv)
        system_prompt = system_prompt or system
        convs.append((conv, msgs))

    if policy_path is None and (path.parent / "policy.md").exists():
        policy_path = path.parent / "policy.md"
    references = []
    if policy_path is not None:
        policy_path = Path(policy_path)
        text = read_text(policy_path, "policy file")
        references.append(Reference(title="Agent policy", text=text, format="markdown"))
    elif system_prompt:
        references.append(Reference(title="Agent policy", text=system_prompt, format="markdown"))
    references.append(_tool_reference(convs))

    by_task: dict[Any, list[int]] = defaultdict(list)
    for k, (conv, _) in enumerate(convs):
        by_task[conv["task_id"]].append(k)
    rng = random.Random(f"tau-bench|{seed}")
    per_task: list[list[tuple[int, int]]] = []
    for task in sorted(by_task, key=str):
        idx = by_task[task]
        cands = [(x, y) for n, x in enumerate(idx) for y in idx[n + 1:]
                 if float(convs[x][0]["reward"]) != float(convs[y][0]["reward"])]  # fmt: skip
        rng.shuffle(cands)
        if cands:
            per_task.append(cands)
    rng.shuffle(per_task)
    chosen: list[tuple[int, int]] = []
    depth = 0
    while any(depth < len(c) for c in per_task):
        for c in per_task:
            if depth < len(c):
                chosen.append(c[depth])
        depth += 1
    if max_pairs is not None:
        chosen = chosen[:max_pairs]

    crit = CRITERIA["task_resolution"]
    pairs = []
    for (x, y), label in zip(chosen, _labels(len(chosen), rng), strict=True):
        (cx, mx), (cy, my) = convs[x], convs[y]
        if float(cx["reward"]) < float(cy["reward"]):
            (cx, mx), (cy, my) = (cy, my), (cx, mx)
        win = Item(kind="conversation", content={"messages": [m.model_dump() for m in mx]})
        lose = Item(kind="conversation", content={"messages": [m.model_dump() for m in my]})
        a, b = _place(label, win, lose)
        ca, cb = (cx, cy) if label == "side_a" else (cy, cx)
        trials = sorted([cx.get("trial"), cy.get("trial")], key=str)
        pid = f"tau-{path.stem}-task{cx['task_id']}-t{trials[0]}-t{trials[1]}"
        pairs.append(Pair(
            id=pid, criterion=crit, side_a=a, side_b=b, references=references,
            hidden=Hidden(label=label, steering_levels=None, filter_outcome=None, source={
                "dataset": "tau-bench", "file": path.name, "task_id": cx["task_id"],
                "trials": {"side_a": ca.get("trial"), "side_b": cb.get("trial")},
                "rewards": {"side_a": float(ca["reward"]), "side_b": float(cb["reward"])},
                "instruction": ((ca.get("info") or {}).get("task") or {}).get("instruction"),
            }),
        ))  # fmt: skip
    return pairs


# ---- PACEShop --------------------------------------------------------------------------------------
def _paceshop_view(r) -> PaceshopView:
    pool = {s.evidence_id: s for s in r.evidence}
    p = r.persona
    resp = r.response
    return PaceshopView(
        query=r.query,
        persona=ShopperView(
            summary=p.context_summary, hard_constraints=p.preferences.hard_constraints,
            soft_preferences=p.preferences.soft_preferences, brand_likes=p.preferences.brand_likes,
            brand_avoids=p.preferences.brand_avoids, budget=p.shopping_context.budget,
        ),
        overview_text=resp.overview_text, productCategoryList=resp.productCategoryList,
        category_search_queries=resp.category_search_queries, rqList=resp.rqList,
        attribution_list=resp.attribution_list,
        evidence={eid: EvidenceView(title=pool[eid].title, brand=pool[eid].brand, snippet=pool[eid].snippet,
                                    source_field=pool[eid].source_field)
                  for eid in resp.attribution_list if eid in pool},
    )  # fmt: skip


def _persona_reference(r) -> Reference:
    p = r.persona
    lines = [f"Household: {p.profile.household}", f"Profile: {p.profile.demographics}",
             f"Budget: {p.shopping_context.budget}; quality: {p.shopping_context.quality_sensitivity}; "
             f"shipping: {p.shopping_context.shipping_urgency}",
             f"Hard constraints: {'; '.join(p.preferences.hard_constraints) or '-'}",
             f"Soft preferences: {'; '.join(p.preferences.soft_preferences) or '-'}",
             f"Brands liked: {', '.join(p.preferences.brand_likes) or '-'}; avoided: {', '.join(p.preferences.brand_avoids) or '-'}",
             f"Attribute preferences: {'; '.join(p.preferences.attribute_preferences) or '-'}",
             "Purchase history: " + ("; ".join(f"{h.product_name} ({h.brand})" for h in p.history.purchase_history) or "-"),
             f"Recent searches: {'; '.join(p.history.recent_searches) or '-'}",
             "", p.context_summary]  # fmt: skip
    return Reference(title="Shopper profile", text="\n".join(lines))


def _evidence_reference(r) -> Reference:
    lines = [f"{s.evidence_id}  [{s.source_field}] {s.title} ({s.brand}): {s.snippet}" for s in r.evidence]
    return Reference(title="Evidence pool", text="\n".join(lines) or "(empty)")


def pairs_from_paceshop(
    records, n: int | None = None, seed: int = 0, criterion: Criterion | None = None
) -> list[Pair]:
    """GOOD-versus-BAD sibling pairs: a BAD record (kind ``bad``) and the GOOD record it derives from
    (``base_record_id``), so query and persona are the same on both sides. The label is the GOOD side.

    ``records``: :class:`~shopbench.core.Record` objects or dicts, or a build folder
    (read with :func:`shopbench.paceshop.build.load_records`). Pairs are drawn one per GOOD record
    first (seeded), so ``n`` pairs cover ``n`` different query/persona contexts when possible.
    Persona swaps are not siblings on the same persona and are left out.
    """
    from shopbench.core import Record

    origin = "records"
    if isinstance(records, (str, Path)):
        from shopbench.paceshop.build import load_records

        origin = str(records)
        records = load_records(records)
    recs = []
    for i, r in enumerate(records):
        if not isinstance(r, Record):
            rid = r.get("record_id", "?") if isinstance(r, Mapping) else "?"
            try:
                r = Record.model_validate(r)
            except ValidationError as e:
                err = e.errors()[0]
                field = ".".join(str(x) for x in err["loc"])
                raise PairImportError(
                    f"{origin}: record [{i}] {rid!r}: field '{field}': {err['msg']}"
                ) from None
        recs.append(r)
    goods = {r.record_id: r for r in recs if r.kind == "good"}
    for r in recs:
        if (r.kind == "good") != (r.label == "GOOD"):
            raise PairImportError(
                f"{origin}: record {r.record_id!r}: kind {r.kind!r} does not match label {r.label!r}"
            )
    siblings: dict[str, list] = defaultdict(list)
    for r in recs:
        if r.kind == "bad":
            if not r.base_record_id:
                raise PairImportError(f"{origin}: BAD record {r.record_id!r} has no base_record_id")
            if r.base_record_id in goods:
                siblings[r.base_record_id].append(r)
    if not siblings:
        raise PairImportError(
            f"{origin}: no BAD record whose base_record_id names a GOOD record among the {len(recs)} given"
        )
    rng = random.Random(f"paceshop|{seed}")
    bases = sorted(siblings)
    rng.shuffle(bases)
    for b in bases:
        siblings[b].sort(key=lambda r: r.record_id)
        rng.shuffle(siblings[b])
    order = []
    depth = 0
    while any(depth < len(siblings[b]) for b in bases):
        order += [(goods[b], siblings[b][depth]) for b in bases if depth < len(siblings[b])]
        depth += 1
    if n is not None:
        order = order[:n]
    crit = criterion or CRITERIA["response_quality"]
    pairs = []
    for (good, bad), label in zip(order, _labels(len(order), rng), strict=True):
        win = Item(kind="paceshop", content=_paceshop_view(good).model_dump())
        lose = Item(kind="paceshop", content=_paceshop_view(bad).model_dump())
        a, b = _place(label, win, lose)
        levels = {"side_a": 0, "side_b": bad.tier} if label == "side_a" else {"side_a": bad.tier, "side_b": 0}
        pairs.append(Pair(
            id=f"paceshop-{_short_hash(good.record_id, bad.record_id)}", criterion=crit, side_a=a, side_b=b,
            references=[_persona_reference(good), _evidence_reference(good)],
            hidden=Hidden(label=label, steering_levels=levels, filter_outcome=None, source={
                "dataset": "paceshop", "good_record_id": good.record_id, "bad_record_id": bad.record_id,
                "query_id": good.query_id, "persona_id": good.persona.persona_id, "split": bad.split,
                "tier": bad.tier, "gold_family": bad.gold_family, "gold_location": bad.gold_location,
            }),
        ))  # fmt: skip
    return pairs


# ---- synthetic -------------------------------------------------------------------------------------
_SYNTH_TASKS = [
    ("change my flight to Friday", "I moved your flight to Friday at 9:05; the fare difference was $0."),
    ("cancel my basic economy ticket", "Basic economy tickets booked more than 24 hours ago cannot be cancelled; "
     "I can't refund this one, but you keep the booking."),
    ("add a checked bag", "I added one checked bag to reservation ABC123; as a gold member it is free."),
    ("upgrade to business", "Your upgrade to business on HAT017 is confirmed; $340 was charged to your card."),
]  # fmt: skip


def synthetic_pairs(n: int = 6, seed: int = 0) -> list[Pair]:
    """Small made-up conversation pairs (a resolved and an unresolved handling of a request), for
    demos and tests when no data is at hand. The label is the resolving side."""
    rng = random.Random(f"synthetic|{seed}")
    crit = CRITERIA["task_resolution"]
    pairs = []
    for i, label in enumerate(_labels(n, rng)):
        ask, done = _SYNTH_TASKS[i % len(_SYNTH_TASKS)]
        user = ShownMessage(role="user", content=f"Hi, I'd like to {ask}. My user id is user_{i:03d}.")
        call = ShownMessage(role="assistant", tool_calls=[ShownToolCall(name="get_user_details", id=f"c{i}",
                                                              arguments=json.dumps({"user_id": f"user_{i:03d}"}))])  # fmt: skip
        result = ShownMessage(
            role="tool",
            name="get_user_details",
            tool_call_id=f"c{i}",
            content=json.dumps({"user_id": f"user_{i:03d}", "membership": "gold"}),
        )
        good = [
            user,
            call,
            result,
            ShownMessage(role="assistant", content=done),
            ShownMessage(role="user", content="Great, thanks!"),
        ]
        bad = [user, call, result, ShownMessage(role="assistant", content="I'm not able to help with that right now. "
                                           "Is there anything else?"), ShownMessage(role="user", content="Hm, okay.")]  # fmt: skip
        win = Item(kind="conversation", content={"messages": [m.model_dump() for m in good]})
        lose = Item(kind="conversation", content={"messages": [m.model_dump() for m in bad]})
        a, b = _place(label, win, lose)
        pairs.append(Pair(id=f"synthetic-{i:03d}", criterion=crit, side_a=a, side_b=b,
                          references=[Reference(title="Agent policy", text="Help the customer within the airline's rules.")],
                          hidden=Hidden(label=label, source={"dataset": "synthetic", "index": i})))  # fmt: skip
    return pairs


# ---- panels ----------------------------------------------------------------------------------------
class Panel(_Model):
    name: str
    annotators: list[str]
    pairs: list[Pair]


def assign_panels(
    pairs: Sequence[Pair], panels: Mapping[str, Sequence[str]], seed: int = 0
) -> dict[str, Panel]:
    """Split ``pairs`` into disjoint sets, one per panel (``{"panel-1": ["a1", "a2", "a3"], ...}``,
    as read from a parameter file). Every annotator of a panel judges the same pairs.

    Pairs are dealt round-robin within each criterion (seeded), so every panel gets a similar mix of
    criteria; each panel's pairs are ordered in criterion blocks (one intro screen per block) and
    shuffled within a block. An annotator in two panels, an empty panel or fewer pairs than panels
    is an error.
    """
    if not isinstance(panels, Mapping) or not panels:
        raise ValueError(f"panels must be a non-empty mapping of panel name -> annotator ids, got {panels!r}")
    seen: dict[str, str] = {}
    for name, members in panels.items():
        if isinstance(members, str) or not isinstance(members, Sequence) or not members:
            raise ValueError(f"panel {name!r} must list at least one annotator id, got {members!r}")
        for a in members:
            if not isinstance(a, str) or not a:
                raise ValueError(f"panel {name!r}: annotator ids must be non-empty strings, got {a!r}")
            if a in seen:
                raise ValueError(
                    f"annotator {a!r} is in panels {seen[a]!r} and {name!r}; panels must be disjoint"
                )
            seen[a] = name
    ids = [p.id for p in pairs]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"pair ids must be unique; repeated: {dup[:5]}")
    names = list(panels)
    if len(pairs) < len(names):
        raise ValueError(f"{len(pairs)} pairs cannot be split over {len(names)} panels")
    rng = random.Random(f"panels|{seed}")
    by_crit: dict[str, list[Pair]] = defaultdict(list)
    for p in pairs:
        by_crit[p.criterion.name].append(p)
    dealt: dict[str, list[Pair]] = {n: [] for n in names}
    k = 0
    for crit in sorted(by_crit):
        block = sorted(by_crit[crit], key=lambda p: p.id)
        rng.shuffle(block)
        for p in block:
            dealt[names[k % len(names)]].append(p)
            k += 1
    out = {}
    for name in names:
        blocks: dict[str, list[Pair]] = defaultdict(list)
        for p in dealt[name]:
            blocks[p.criterion.name].append(p)
        crits = sorted(blocks)
        rng.shuffle(crits)
        ordered = [p for c in crits for p in blocks[c]]
        out[name] = Panel(name=name, annotators=list(panels[name]), pairs=ordered)
    return out


def panel_of(assignment: Mapping[str, Panel], annotator: str) -> Panel:
    """The panel an annotator belongs to (an error naming the known annotators otherwise)."""
    for panel in assignment.values():
        if annotator in panel.annotators:
            return panel
    known = sorted(a for p in assignment.values() for a in p.annotators)
    raise KeyError(f"annotator {annotator!r} is in no panel; panels list {known}")
