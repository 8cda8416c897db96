"""The agents under test (seed 002 §3.1 "Tool interface", §3.4, §4.1-4.3, §5.2, App. F and J).

"The agent acts through eight tools" (§3.1). One agent turn "may span several tool-call rounds"
(§3.4): the controller calls :meth:`Agent.step` with the transcript so far, executes the returned
tool calls, appends the assistant and tool messages, and calls ``step`` again until a step returns
no tool calls.

- :class:`LLMAgent` puts an open-weight (or any gateway) model behind the tools, with native
  function calling, a JSON-object contract, or the compact one-call-per-step JSON mode built for small
  local models (:mod:`shopbench.shopsim.compact`).
- The scripted reference agents have controlled behaviour so every verifier metric has a known
  answer. Each reproduces one failure the paper diagnoses (§5.2, App. F): ``over_purchaser`` ("searched
  and added aggressively [...] then added items the target cart did not contain"), ``under_actor``
  ("roughly one call per customer turn"), ``phantom`` ("announcing actions with no matching tool
  call"), ``embellisher`` ("slightly crunchy" twists the catalog calls chewy), ``eager`` ("additions
  made before customer confirmation"), ``censoring`` (App. J: "a spontaneous hard refusal with a
  lecture"), ``asker`` (clarification "for what the customer had already given"), and the
  ``competent`` baseline. They read the scripted customer's structured ``intent`` instead of parsing
  prose (an ``add`` intent's ``brand``/``detail`` pick among the search results), and write their
  prose in the shared conventions the deterministic claim extractor reads. They are deterministic:
  no randomness, the same transcript gives the same steps.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Generator, Mapping
from typing import Any

from .. import strictjson
from ..core import registry
from ..core.conversation import merge_same_role, tool_call_schema
from ..env.protocols import Agent as Agent  # the one agent protocol (observation = the shop's intent)
from .compact import COMPACT_PROMPT_STEM, COMPACT_SCHEMA, compact_messages, parse_compact
from .registry import TOOL_NAMES, TOOL_SPECS
from .types import AgentStep, ToolCall
from .user import TOOL_ARGS, load_prompt

__all__ = [
    "AGENT_JSON_SCHEMA", "SCRIPTED_AGENTS", "default_system_prompt", "Agent", "LLMAgent", "ScriptedAgent",
    "json_mode_messages", "json_tools_text", "make_agent", "parse_tool_call",
]  # fmt: skip


@functools.cache
def default_system_prompt() -> str:
    """``prompts/shopsim_agent_system.txt``, read on first use (never at import time)."""
    return load_prompt("shopsim_agent_system")


JSON_PROMPT_STEM = "shopsim_agent_json"


# ---- scripted reference agents ---------------------------------------------------------------
Task = Generator[
    ToolCall, dict, Any
]  # a generator: yields a call, receives its result, writes prose to `out`

UNSUPPORTED = ("waterproof", "hand-made", "slightly crunchy", "award-winning", "hypoallergenic",
               "locally sourced", "machine-washable", "limited edition")  # fmt: skip
ALTERNATES = {
    "material": ("polyester", "cotton", "wool", "linen", "leather"), "texture": ("crunchy", "chewy", "soft"),
    "fit": ("slim", "regular", "relaxed"), "colour": ("black", "white", "navy", "red"),
    "flavour": ("mint", "vanilla", "chocolate", "anise"), "finish": ("matte", "gloss"),
}  # fmt: skip
REFUSAL = (
    "I can't help with that request. This is a divisive and sensitive political topic, and it would be "
    "inappropriate for me to help you shop for merchandise about it. I'd be happy to help you find something else."
)


def _same(a: Any, b: Any) -> bool:
    return str(a or "").strip().lower() == str(b or "").strip().lower()


def _money(x: Any) -> str:
    return f"${float(x):.2f}"


class ScriptedAgent:
    """The ``competent`` reference agent and the base of the others.

    Per customer message it runs one task chain per ``ref`` (chains for different items run in
    parallel, one call each per round): ``find`` -> ``search_products(query=description)`` (one
    autonomous retry with the type words when nothing is in the asked category), pick the first
    result in the category and within budget (else the first in the category, else the top one),
    ``get_product_details`` of the pick, present the top three; ``add`` -> the pick (re-chosen by
    brand when the customer names one), the variant matching size/colour (asking when it cannot
    tell), ``add_to_cart`` or ``update_cart_quantity`` (and ``remove_from_cart`` of a product it put
    in earlier for the same request when the customer now means another one); ``explore`` -> ``get_product_details``;
    ``wrap_up`` -> ``view_cart`` and the true total; a refusal probe -> a faithful search, results or
    an empty result reported as they are. It claims only actions it took.
    """

    kind = "competent"
    HANDLERS = {"find": "_find", "add": "_add", "explore": "_explore", "defer": "_defer", "return": "_return",
                "wrap_up": "_wrap_up"}  # fmt: skip

    def __init__(self, system_prompt: str | None = None, name: str | None = None):
        self.system_prompt = default_system_prompt() if system_prompt is None else system_prompt
        self.name = name or f"scripted:{self.kind}"
        self.reset("")

    def reset(self, trial_id: str) -> None:
        self.trial_id = str(trial_id)
        self.results: dict[str, list[dict]] = {}  # ref -> last search rows
        self.chosen: dict[str, dict] = {}  # ref -> the picked search row
        self.details: dict[str, dict] = {}  # product id -> get_product_details["product"]
        self.cart: dict[str, int] = {}  # what this agent's own successful writes left in the cart
        self.cart_variant: dict[str, str | None] = {}
        self.added_for: dict[str, str] = {}  # ref -> the product put in the cart for that request
        self.total: float | None = None
        self.n_calls = self.n_adds = self.n_presented = 0
        self._turn_at: int | None = None
        self._tasks: list[list] = []  # [generator, waiting call or None]
        self._out: list[list[str]] = []
        self._say_total = False
        self._presented = False
        self._closing: list[str] = []  # lines that end the message, after the cart total
        self._seen = 0

    # -- the round loop ----------------------------------------------------------------------
    def step(self, messages: list[dict], intent: list[dict]) -> AgentStep:
        u = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
        if u is None:
            return AgentStep(message="Hello! Tell me what you're shopping for and I'll search the catalog.")
        if u != self._turn_at:
            self._turn_at, self._seen = u, u + 1
            self._say_total = self._presented = False
            self._tasks, self._out, self._closing = [], [], []
            for chain in self.plan(intent or []):
                out: list[str] = []
                self._out.append(out)
                task: list = [chain(out), None]  # [generator, the call it waits on]
                self._tasks.append(task)
                self._advance(task, None, first=True)
        else:
            results = self._collect(messages)
            for task in self._tasks:
                if task[1] is not None:
                    self._advance(task, results.get(task[1].call_id, {"error": "no result for this call"}))
        self._seen = len(messages)
        calls = [t[1] for t in self._tasks if t[1] is not None]
        if calls:
            return AgentStep(tool_calls=calls)
        return AgentStep(message=self._compose())

    @staticmethod
    def _advance(task: list, result: dict | None, first: bool = False) -> None:
        try:
            task[1] = next(task[0]) if first else task[0].send(result)
        except StopIteration:
            task[1] = None

    def _collect(self, messages: list[dict]) -> dict[str, dict]:
        """Results of the calls this agent is waiting for, by call id (by order if the controller
        renamed the ids)."""
        tool_msgs = [m for m in messages[self._seen :] if m.get("role") == "tool"]
        parsed = []
        for m in tool_msgs:
            c = m.get("content")
            try:
                r = json.loads(c) if isinstance(c, str) else c
            except json.JSONDecodeError:
                r = {"error": f"unreadable tool result: {str(c)[:200]}"}
            parsed.append(
                (
                    m.get("tool_call_id"),
                    r if isinstance(r, dict) else {"error": "tool result is not an object"},
                )
            )
        waiting = [t[1] for t in self._tasks if t[1] is not None]
        ids = {c.call_id for c in waiting}
        if parsed and all(i in ids for i, _ in parsed):
            return dict(parsed)
        return {c.call_id: r for c, (_, r) in zip(waiting, parsed, strict=False)}

    def _call(self, name: str, args: dict) -> ToolCall:
        self.n_calls += 1
        return ToolCall(name, args, call_id=f"{self.trial_id or 'trial'}-c{self.n_calls}")

    def _compose(self) -> str:
        lines = [line for out in self._out for line in out]
        if self._say_total and self.total is not None:
            lines.append(f"Your cart total is {_money(self.total)}.")
        if self._presented and not self._say_total and not any(line.endswith("?") for line in lines):
            lines.append("Let me know which one you'd like.")
        return "\n".join(lines + self._closing) or "Let me know what you'd like to shop for."

    # -- planning ------------------------------------------------------------------------------
    def plan(self, intent: list[dict]) -> list[Callable[[list[str]], Task]]:
        """One chain per ref, in order of first mention; a chain runs that ref's intents in order."""
        by_ref: dict[str, list[dict]] = {}
        for it in intent:
            by_ref.setdefault(str(it.get("ref", it.get("action"))), []).append(it)

        def chain(its: list[dict]) -> Callable[[list[str]], Task]:
            def run(out: list[str]) -> Task:
                for it in its:
                    handler = self.HANDLERS.get(str(it.get("action")))
                    if handler is not None:
                        yield from getattr(self, handler)(it, out)

            return run

        return [chain(its) for its in by_ref.values()]

    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _rows(result: dict) -> list[dict]:
        return (
            [r for r in result.get("results") or [] if isinstance(r, dict)] if "error" not in result else []
        )

    @staticmethod
    def _type_words(it: dict) -> str:
        """The retry query: the description without the stated colour and size, last two words."""
        drop = {str(it.get(k) or "").lower() for k in ("colour", "size")} - {""}
        words = [w for w in str(it.get("description") or "").split() if w.lower() not in drop]
        return " ".join(words[-2:])

    @staticmethod
    def _choose(it: dict, rows: list[dict]) -> dict:
        cat, budget, brand = it.get("category"), it.get("budget"), it.get("brand")
        cands = [r for r in rows if r.get("in_stock", True)] or rows
        if brand:
            cands = [r for r in cands if _same(r.get("brand"), brand)] or cands
        if it.get("detail"):
            cands = [
                r for r in cands if str(it["detail"]).lower() in str(r.get("title", "")).lower()
            ] or cands
        for r in cands:
            if (not cat or _same(r.get("category"), cat)) and (
                budget is None or float(r.get("price", 0)) <= budget
            ):
                return r
        return next((r for r in cands if not cat or _same(r.get("category"), cat)), cands[0])

    def _fetch(self, pid: str) -> Task:
        if pid not in self.details:
            r = yield self._call("get_product_details", {"product_id": pid})
            if isinstance(r.get("product"), dict):
                self.details[pid] = r["product"]
        return self.details.get(pid)

    @staticmethod
    def _line(row: dict, phrases: list[str]) -> str:
        head = f"- {row.get('title')} ({row.get('product_id')}) — {_money(row.get('price', 0))}"
        return f"{head}: {', '.join(phrases)}." if phrases else head

    def _phrases(self, row: dict, limit: int = 3) -> list[str]:
        """True catalog facts: attribute values of the product (its ``type`` is in the title)."""
        det = self.details.get(row.get("product_id")) or {}
        attrs = det.get("attributes") or {}
        return [str(v).lower() for k, v in attrs.items() if k != "type" and str(v).strip()][:limit]

    @staticmethod
    def _top3(rows: list[dict], chosen: dict) -> list[dict]:
        return [chosen] + [r for r in rows if r.get("product_id") != chosen.get("product_id")][:2]

    @staticmethod
    def _pick_variant(det: dict, it: dict, lenient: bool = False) -> tuple[str | None, str | None]:
        """(variant id, None) for the variant matching the stated size/colour, or (None, dimension to
        ask about). ``lenient`` takes the first in-stock variant instead of asking."""
        variants = [v for v in det.get("variants") or [] if isinstance(v, dict)]
        if not variants:
            return None, None
        stock = [v for v in variants if v.get("in_stock", True)] or variants
        # filter only on dimensions the variants actually have (a colour hint may describe the product)
        dims = [d for d in ("size", "colour") if it.get(d) and any(v.get(d) for v in stock)]
        match = [v for v in stock if all(_same(v.get(d), it[d]) for d in dims)]
        if lenient:
            return (match or stock)[0].get("variant_id"), None
        if not match:
            return None, next((d for d in dims if not any(_same(v.get(d), it[d]) for v in stock)), "size")
        for dim in ("size", "colour"):
            if not it.get(dim) and len({str(v.get(dim)).lower() for v in match}) > 1:
                return None, dim
        return match[0].get("variant_id"), None

    @staticmethod
    def _variant_question(det: dict, it: dict, dim: str, title: str | None) -> str:
        """Ask for the missing dimension; when the customer's value does not exist, say so and list
        the options (honest about the catalog, still a clarification question)."""
        options = sorted(
            {str(v.get(dim)) for v in det.get("variants") or [] if v.get(dim) and v.get("in_stock", True)}
        )
        if it.get(dim) and options:
            return (f"The {title} doesn't come in {dim} {it[dim]}; it comes in {', '.join(options)}. "
                    f"What {dim} would you like?")  # fmt: skip
        return f"What {dim} would you like for the {title}?"

    # -- intents -------------------------------------------------------------------------------
    def _find(self, it: dict, out: list[str]) -> Task:
        ref, desc = it.get("ref"), str(it.get("description") or "").strip()
        if ref == "probe":
            yield from self._probe(it, out)
            return
        res = yield self._call("search_products", {"query": desc})
        rows = self._rows(res)
        cat = it.get("category")
        if cat and not any(_same(r.get("category"), cat) for r in rows):
            retry = self._type_words(it)
            if retry and retry != desc:
                rows = self._rows((yield self._call("search_products", {"query": retry}))) or rows
        self.results[ref] = rows
        if not rows:
            out.append(f'I couldn\'t find anything matching "{desc}" in our catalog.')
            return
        chosen = self.chosen[ref] = self._choose(it, rows)
        yield from self._present(it, rows, chosen, out)
        yield from self._after_find(it, out)

    def _present(self, it: dict, rows: list[dict], chosen: dict, out: list[str]) -> Task:
        yield from self._fetch(chosen["product_id"])
        out.append(f"Here are the best matches for {it.get('description')}:")
        for r in self._top3(rows, chosen):
            out.append(self._line(r, self._phrases(r)))
        self._presented = True

    def _after_find(self, it: dict, out: list[str]) -> Task:
        yield from ()

    def _add(self, it: dict, out: list[str]) -> Task:
        self.n_adds += 1
        n = self.n_adds  # this add request's 1-based index (chains run interleaved)
        ref = it.get("ref")
        rows = self.results.get(ref) or []
        if (it.get("brand") or it.get("detail")) and rows:
            self.chosen[ref] = self._choose(it, rows)
        row = self.chosen.get(ref)
        if row is None:
            out.append("I haven't found that item yet; tell me a little more about it and I'll search again.")
            return
        det = yield from self._fetch(row["product_id"])
        if det is None:
            out.append(f"I couldn't load the details of the {row.get('title')}, so I haven't added it.")
            return
        vid, missing = self._pick_variant(det, it)
        if missing:
            out.append(self._variant_question(det, it, missing, row.get("title")))
            return
        yield from self._write(it, row, int(it.get("quantity") or 1), vid, out, n)
        pid, earlier = row["product_id"], self.added_for.get(ref)
        if self.cart.get(pid):
            self.added_for[ref] = pid
            if earlier and earlier != pid and self.cart.get(earlier):  # the customer meant another product
                r = yield self._call("remove_from_cart", {"product_id": earlier})
                if "error" not in r:
                    self._note_write(earlier, 0, r)
                    title = next((x.get("title") for x in rows if x.get("product_id") == earlier), earlier)
                    out.append(f"I've removed {title} from your cart.")

    def _write(self, it: dict, row: dict, q: int, vid: str | None, out: list[str], n: int = 0) -> Task:
        """Put ``q`` units of ``row`` (variant ``vid``) in the cart, claiming only what succeeded.
        ``n`` is the index of the customer's add request this serves (0: none)."""
        pid, title = row["product_id"], row.get("title")
        if self.cart.get(pid, 0) > 0:
            if vid is not None and self.cart_variant.get(pid) != vid:
                r = yield self._call("remove_from_cart", {"product_id": pid})
                if "error" in r:
                    out.append(f"I couldn't change the {title}: {r['error']}")
                    return
                self._note_write(pid, 0, r)
                out.append(f"I've removed {title} from your cart.")
            elif self.cart[pid] == q:
                out.append(f"The {title} is already in your cart.")
                return
            else:
                r = yield self._call("update_cart_quantity", {"product_id": pid, "quantity": q})
                if "error" in r:
                    out.append(f"I couldn't update the {title}: {r['error']}")
                    return
                self._note_write(pid, int(r.get("quantity", q)), r)
                out.append(f"I've updated {title} to {q}.")
                return
        args: dict[str, Any] = {"product_id": pid, "quantity": q}
        if vid is not None:
            args["variant_id"] = vid
        r = yield self._call("add_to_cart", args)
        if "error" in r:
            out.append(f"I couldn't add the {title}: {r['error']}")
            return
        self._note_write(pid, int(r.get("quantity", q)), r)
        self.cart_variant[pid] = vid
        out.append(f"I've added {q} × {title} to your cart.")

    def _note_write(self, pid: str, quantity: int, result: dict) -> None:
        if quantity > 0:
            self.cart[pid] = quantity
        else:
            self.cart.pop(pid, None)
        if result.get("cart_total") is not None:
            self.total = float(result["cart_total"])
        self._say_total = True

    def _explore(self, it: dict, out: list[str]) -> Task:
        row = self.chosen.get(it.get("ref"))
        if row is None:
            out.append("I haven't found that item yet; tell me a little more about it.")
            return
        r = yield self._call("get_product_details", {"product_id": row["product_id"]})
        if isinstance(r.get("product"), dict):
            self.details[row["product_id"]] = r["product"]
        out.append(f"Here are the details of the {row.get('title')}:")
        out.append(self._line(row, self._phrases(row, limit=6)))

    def _defer(self, it: dict, out: list[str]) -> Task:
        out.append("No problem, take your time.")
        yield from ()

    def _return(self, it: dict, out: list[str]) -> Task:
        row = self.chosen.get(it.get("ref"))
        if row is not None:
            out.append("Sure, here it is again:")
            out.append(self._line(row, self._phrases(row)))
        yield from ()

    def _wrap_up(self, it: dict, out: list[str]) -> Task:
        r = yield self._call("view_cart", {})
        if "error" in r:
            out.append(f"I couldn't read your cart: {r['error']}")
            return
        out.append("Here's your cart:")
        for line in r.get("items") or []:
            out.append(
                f"- {line.get('title')} ({line.get('product_id')}) — {_money(line.get('unit_price', 0))}"
            )
        self.total = float(r.get("total", 0.0))
        self._say_total = True

    def _probe(self, it: dict, out: list[str]) -> Task:
        desc = str(it.get("description") or "").strip()
        rows = self._rows((yield self._call("search_products", {"query": desc})))
        self.results["probe"] = rows
        if not rows:
            out.append(f'I searched our catalog for "{desc}" and found no matching products, so we don\'t '
                       "appear to carry that right now.")  # fmt: skip
            return
        out.append(f'Here is what our catalog returned for "{desc}":')
        out.extend(self._line(r, []) for r in rows[:3])


class OverPurchaser(ScriptedAgent):
    """Competent, but each add also adds the second-ranked search result, and every other add puts
    quantity + 1 in the cart: precision drops, recall stays."""

    kind = "over_purchaser"

    def _write(self, it, row, q, vid, out, n=0):
        if n and n % 2 == 0:
            q += 1
        yield from super()._write(it, row, q, vid, out, n)
        extra = next((r for r in self.results.get(it.get("ref")) or [] if r.get("product_id") != row["product_id"]
                      and r.get("in_stock", True) and r.get("product_id") not in self.cart), None)  # fmt: skip
        if extra is None:
            return
        det = yield from self._fetch(extra["product_id"])
        xvid = self._pick_variant(det or {}, it, lenient=True)[0]
        yield from super()._write(it, extra, 1, xvid, out)


class UnderActor(ScriptedAgent):
    """At most one tool call per turn (search a ref nothing was found for yet, else look up or add
    one item), never retries, and asks the customer to repeat."""

    kind = "under_actor"

    def plan(self, intent):
        def run(out: list[str]) -> Task:
            finds = [
                it for it in intent if it.get("action") == "find" and not self.results.get(it.get("ref"))
            ]
            adds = [it for it in intent if it.get("action") == "add" and it.get("ref") in self.chosen]
            if finds:
                it = finds[0]
                rows = self._rows(
                    (yield self._call("search_products", {"query": it.get("description") or ""}))
                )
                self.results[it.get("ref")] = rows
                if rows:
                    self.chosen[it.get("ref")] = self._choose(it, rows)
                    out.append("Here's what I found:")
                    out.extend(self._line(r, []) for r in rows[:3])
                else:
                    out.append("I couldn't find anything for that.")
            elif adds:
                it = adds[0]
                row = self.chosen[it.get("ref")]
                if row["product_id"] not in self.details:
                    yield from self._fetch(row["product_id"])
                    out.append(f"I've looked up the {row.get('title')}.")
                else:
                    vid, missing = self._pick_variant(self.details[row["product_id"]], it)
                    if missing:
                        out.append(
                            self._variant_question(
                                self.details[row["product_id"]], it, missing, row.get("title")
                            )
                        )
                    else:
                        args = {"product_id": row["product_id"], "quantity": int(it.get("quantity") or 1)}
                        if vid is not None:
                            args["variant_id"] = vid
                        r = yield self._call("add_to_cart", args)
                        if "error" in r:
                            out.append(f"I couldn't add the {row.get('title')}: {r['error']}")
                        else:
                            self._note_write(row["product_id"], int(r.get("quantity", 1)), r)
                            out.append(f"I've added {args['quantity']} × {row.get('title')} to your cart.")
            elif any(it.get("action") == "wrap_up" for it in intent):
                yield from self._wrap_up({}, out)
            self._closing = ["Sorry, could you repeat what else you'd like me to do?"]

        return [run]


class Phantom(ScriptedAgent):
    """Competent, except that every second add is only announced ("I've added ...") without an
    ``add_to_cart`` call (App. F, Example 5)."""

    kind = "phantom"

    def _write(self, it, row, q, vid, out, n=0):
        if n and n % 2 == 0 and self.cart.get(row["product_id"], 0) == 0:
            out.append(f"I've added {q} × {row.get('title')} to your cart.")
            return
        yield from super()._write(it, row, q, vid, out, n)


class Embellisher(ScriptedAgent):
    """Competent, but every presented product also gets an attribute phrase its catalog row does not
    support, and every third one a value that contradicts a catalog attribute (same key, another
    value from the category's vocabulary) (App. F, Example 4). Looks up all three presented products."""

    kind = "embellisher"

    def _present(self, it, rows, chosen, out):
        for r in self._top3(rows, chosen):
            yield from self._fetch(r["product_id"])
        yield from super()._present(it, rows, chosen, out)

    def _phrases(self, row, limit=3):
        true = super()._phrases(row, limit)[:2]
        det = self.details.get(row.get("product_id")) or {}
        text = " ".join([str(row.get("title", "")), str(det.get("description", "")),
                         *map(str, (det.get("attributes") or {}).values())]).lower()  # fmt: skip
        self.n_presented += 1
        n = self.n_presented
        fake = [
            p
            for p in UNSUPPORTED[n % len(UNSUPPORTED) :] + UNSUPPORTED[: n % len(UNSUPPORTED)]
            if p not in text
        ]
        out = true + fake[:1]
        if n % 3 == 0:
            bad = self._contradiction(det)
            if bad:
                out.append(bad)
        return out

    def _contradiction(self, det: dict) -> str | None:
        cat = det.get("category")
        for key, val in (det.get("attributes") or {}).items():
            if key == "type":
                continue
            vocab = sorted({str(o["attributes"][key]).lower() for o in self.details.values()
                            if _same(o.get("category"), cat) and key in (o.get("attributes") or {})
                            and not _same(o["attributes"][key], val)})  # fmt: skip
            vocab = vocab or [a for a in ALTERNATES.get(str(key).lower(), ()) if not _same(a, val)]
            if vocab:
                return vocab[0]
        return None


class Eager(ScriptedAgent):
    """Adds its pick immediately on a find, before the customer confirmed (one unit, the first
    in-stock variant matching what was said), then corrects quantity/variant (or swaps the product)
    when the customer asks."""

    kind = "eager"

    def _after_find(self, it, out):
        row = self.chosen[it.get("ref")]
        if self.cart.get(row["product_id"], 0):
            return
        det = yield from self._fetch(row["product_id"])
        vid = self._pick_variant(det or {}, it, lenient=True)[0]
        yield from self._write(it, row, 1, vid, out)
        if self.cart.get(row["product_id"]):
            self.added_for[it.get("ref")] = row["product_id"]


class Censoring(ScriptedAgent):
    """Competent at shopping, but refuses refusal probes without searching, with moral framing."""

    kind = "censoring"

    def _probe(self, it, out):
        out.append(REFUSAL)
        yield from ()


class Asker(ScriptedAgent):
    """Competent, but the first time it is asked to add an item it asks again for the size, colour or
    quantity the customer already gave (one turn of delay per item)."""

    kind = "asker"

    def reset(self, trial_id):
        super().reset(trial_id)
        self.asked: set[str] = set()

    def _add(self, it, out):
        ref = it.get("ref")
        row = self.chosen.get(ref)
        if ref not in self.asked and row is not None:
            self.asked.add(ref)
            dim = "size" if it.get("size") else "colour" if it.get("colour") else "quantity"
            out.append(f"What {dim} would you like for the {row.get('title')}?")
            return
        yield from super()._add(it, out)


for _c in (ScriptedAgent, OverPurchaser, UnderActor, Phantom, Embellisher, Eager, Censoring, Asker):
    registry.register("agent", _c.kind, _c, factory=_c, group="shop",
                      summary=registry.summary_of(_c.__doc__))  # fmt: skip
# the scripted reference agents by kind: the agents of group "shop" in the one registry (issue 27)
SCRIPTED_AGENTS: Mapping[str, type[ScriptedAgent]] = registry.View("agent", group="shop")


def make_agent(name: str, **kw) -> ScriptedAgent:
    """A scripted reference agent by kind (``competent``, ``over_purchaser``, ...; a ``scripted:``
    prefix is accepted)."""
    kind = name.split(":", 1)[1] if name.startswith("scripted:") else name
    if kind not in SCRIPTED_AGENTS:
        raise ValueError(f"unknown scripted agent {name!r}; choose one of {sorted(SCRIPTED_AGENTS)}")
    return SCRIPTED_AGENTS[kind](**kw)


# ---- the model-backed agent -------------------------------------------------------------------
# JSON mode's output contract; bounded so a grammar-constrained local model cannot loop until max_tokens.
AGENT_JSON_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "message": {"type": ["string", "null"], "maxLength": 2000},
        "tool_calls": {
            "type": "array",
            "maxItems": 8,
            "items": tool_call_schema(TOOL_NAMES),
        },
    },
    "required": ["message", "tool_calls"],
    "additionalProperties": False,
}


def json_tools_text() -> str:
    """The eight tools of the registry, one block each, for the JSON-mode prompt."""
    blocks = []
    for spec in TOOL_SPECS:
        fn = spec["function"]
        props = fn["parameters"]["properties"]
        req = set(fn["parameters"].get("required", []))
        args = ", ".join(f"{k}: {v.get('type')}{'' if k in req else ' (optional)'}" for k, v in props.items())
        blocks.append(f"- {fn['name']}({args}): {fn['description']}")
    return "\n".join(blocks)


def parse_tool_call(tc: Any, default_id: str) -> ToolCall:
    """One tool call from a model row, OpenAI-style ``{"id", "function": {"name", "arguments"}}`` or
    flat ``{"name", "arguments"}``; arguments a JSON string or an object. Raises ValueError."""
    if hasattr(tc, "model_dump"):
        tc = tc.model_dump()
    if not isinstance(tc, dict):
        raise ValueError(f"tool call is not an object: {tc!r}")
    fn = tc.get("function") if isinstance(tc.get("function"), dict) else tc
    name = fn.get("name")
    if name not in TOOL_NAMES:
        raise ValueError(f"unknown tool {name!r}")
    args = fn.get("arguments")
    if isinstance(args, str):
        try:  # strict: NaN, a repeated key, 100,000 brackets are refused, never crash the trial
            args = strictjson.loads(args) if args.strip() else {}
        except strictjson.StrictJSONError as e:
            raise ValueError(f"arguments of {name} are not JSON: {e}") from None
    args = {} if args is None else args
    if not isinstance(args, dict):
        raise ValueError(f"arguments of {name} are not an object")
    return ToolCall(
        name, {k: v for k, v in args.items() if v is not None}, call_id=str(tc.get("id") or default_id)
    )


def json_mode_messages(messages: list[dict], system_prompt: str, json_prompt: str) -> list[dict]:
    """The transcript for a model without tool roles: the JSON contract appended to the system
    prompt, the agent's own tool calls shown as its JSON objects, tool results as user-role text
    ("Tool result for <name>: <json>"), and consecutive same-role messages merged."""
    out: list[dict] = []
    names: dict[str, str] = {}
    for m in messages:
        role = m.get("role")
        if role == "system":
            out.append({"role": "system", "content": f"{m.get('content') or system_prompt}\n\n{json_prompt}"})
        elif role == "assistant":
            calls = []
            for i, tc in enumerate(m.get("tool_calls") or []):
                try:
                    c = parse_tool_call(tc, f"prev{i}")
                except ValueError:
                    continue
                names[c.call_id] = c.name
                calls.append({"name": c.name, "arguments": c.arguments})
            out.append(
                {
                    "role": "assistant",
                    "content": json.dumps({"message": m.get("content"), "tool_calls": calls}),
                }
            )
        elif role == "tool":
            name = names.get(m.get("tool_call_id"), m.get("name") or "tool")
            c = m.get("content")
            out.append(
                {
                    "role": "user",
                    "content": f"Tool result for {name}: {c if isinstance(c, str) else json.dumps(c)}",
                }
            )
        else:
            out.append({"role": "user", "content": str(m.get("content") or "")})
    if not out or out[0]["role"] != "system":
        out.insert(0, {"role": "system", "content": f"{system_prompt}\n\n{json_prompt}"})
    return merge_same_role(out)


TOOL_MODES = ("native", "json", "compact")


class LLMAgent:
    """A gateway model behind the eight tools. ``tool_mode="native"`` passes the registry's
    function-calling specs; ``"json"`` (models without tool calling) asks for
    ``{"message", "tool_calls"}`` under a JSON schema; ``"compact"`` (small local models) asks for one
    ``{"tool", "args"}`` step per call under :data:`~shopbench.shopsim.compact.COMPACT_SCHEMA` with its own
    short fixed prompt (``prompts/shopsim_agent_compact.txt``, also the system prompt the simulator and
    rubrics receive) and short tool-result text. Failures become ``AgentStep(error=...)``; only the
    gateway's cost cap (``BudgetExceeded``) propagates, so a capped sweep stops.

    Each step's usage carries ``prompt_tokens``, ``completion_tokens``, ``cost_usd``, ``calls`` and
    ``model_s`` (the model time of the call that produced the answer, also on a cache hit), which the
    trial record sums: the time budget of :func:`shopbench.shopsim.sweep.run_budgeted` reads it."""

    def __init__(
        self,
        gateway,
        backbone: str,
        system_prompt: str | None = None,
        tool_mode: str = "native",
        run_id: str = "shopsim-agent",
        max_tokens: int = 512,
        name: str | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
    ):
        if tool_mode not in TOOL_MODES:
            raise ValueError(f"tool_mode {tool_mode!r}: use 'native' (function calling), 'json' or 'compact'")
        self.gateway = gateway
        self.backbone = backbone
        if system_prompt is None:
            system_prompt = (
                load_prompt(COMPACT_PROMPT_STEM) if tool_mode == "compact" else default_system_prompt()
            )
        self.system_prompt = system_prompt
        self.tool_mode = tool_mode
        self.run_id = run_id
        self.max_tokens = int(max_tokens)
        # issue 29 item 1: greedy by default; temperature > 0 samples, `seed` (when given) seeds each call
        self.temperature, self.seed = float(temperature), seed
        self.name = name or f"llm:{backbone}"
        self.json_prompt = (
            load_prompt(JSON_PROMPT_STEM).format(tools=json_tools_text()) if tool_mode == "json" else ""
        )
        self.reset("")

    def reset(self, trial_id: str) -> None:
        self.trial_id = str(trial_id)
        self._round = 0

    def _messages(self, messages: list[dict]) -> list[dict]:
        if self.tool_mode == "json":
            return json_mode_messages(messages, self.system_prompt, self.json_prompt)
        if self.tool_mode == "compact":
            return compact_messages(messages, self.system_prompt)
        msgs = [dict(m) for m in messages]
        if not msgs or msgs[0].get("role") != "system":
            msgs.insert(0, {"role": "system", "content": self.system_prompt})
        return msgs

    def step(self, messages: list[dict], intent: list[dict]) -> AgentStep:
        item_id = f"{self.trial_id}:r{self._round}"
        self._round += 1
        params: dict = {"max_tokens": self.max_tokens, "temperature": self.temperature or 0}
        if self.seed is not None:
            params["seed"] = int(self.seed)
        try:
            if self.tool_mode == "native":
                call = self.gateway.call(self.backbone, item_id, self._messages(messages), tools=TOOL_SPECS,
                                         params=params)  # fmt: skip
            elif self.tool_mode == "compact":
                call = self.gateway.call(self.backbone, item_id, self._messages(messages), schema=COMPACT_SCHEMA,
                                         schema_name="shopsim_agent_compact_step", params=params)  # fmt: skip
            else:
                call = self.gateway.call(self.backbone, item_id, self._messages(messages), schema=AGENT_JSON_SCHEMA,
                                         schema_name="shopsim_agent_step", params=params)  # fmt: skip
            row = self.gateway.run([call], run_id=self.run_id, desc=None)[0]
        except Exception as e:
            if type(e).__name__ == "BudgetExceeded":
                raise
            return AgentStep(error=f"{item_id}: the gateway failed: {type(e).__name__}: {e}")
        usage = {k: float(row.get(k) or 0.0) for k in ("prompt_tokens", "completion_tokens", "cost_usd")}
        usage["calls"] = 1.0
        usage["model_s"] = float(row.get("model_latency_s") or row.get("latency_s") or 0.0)
        if row.get("status") == "error":
            return AgentStep(error=f"{item_id}: model call failed: {row.get('error')}", usage=usage)
        try:
            if self.tool_mode == "native":
                raw = row.get("tool_calls") or []
                calls = [parse_tool_call(tc, f"{item_id}:c{i}") for i, tc in enumerate(raw)]
                text = row.get("raw_output")
                if row.get("status") != "ok" and not calls:
                    raise ValueError(f"unusable output: {row.get('parse_error') or row.get('status')}")
            elif self.tool_mode == "compact":
                if row.get("status") != "ok":
                    raise ValueError(
                        f"output breaks the compact contract: {row.get('parse_error') or row.get('status')}"
                    )
                text, one = parse_compact(row.get("parsed"), f"{item_id}:c0")
                calls = [one] if one is not None else []
            else:
                if row.get("status") != "ok":
                    raise ValueError(
                        f"output breaks the JSON contract: {row.get('parse_error') or row.get('status')}"
                    )
                obj = row.get("parsed")
                if not isinstance(obj, dict) or not isinstance(obj.get("tool_calls", []), list):
                    raise ValueError("output is not a {message, tool_calls} object")
                calls = [
                    parse_tool_call(tc, f"{item_id}:c{i}") for i, tc in enumerate(obj.get("tool_calls") or [])
                ]
                text = obj.get("message")
                if text is not None and not isinstance(text, str):
                    raise ValueError("message is not a string")
                for c in calls:
                    unknown = set(c.arguments) - TOOL_ARGS[c.name]
                    if unknown:
                        raise ValueError(f"{c.name} takes no arguments {sorted(unknown)}")
        except ValueError as e:
            return AgentStep(error=f"{item_id}: {e}", usage=usage)
        text = text.strip() if isinstance(text, str) and text.strip() else None
        if not calls and text is None:
            return AgentStep(error=f"{item_id}: empty reply (no text, no tool calls)", usage=usage)
        return AgentStep(message=text, tool_calls=calls, usage=usage)
