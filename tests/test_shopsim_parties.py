"""The shop simulator's parties: the scripted customer, the scripted reference agents and the LLM
user/agent wrappers (seed 002 §3.4, §4.2, §5.2, App. C, D.1, F, J).

Everything is built here by hand: a six-product catalog, a fake store executor (substring search,
cart writes with the store's result shapes) and a stand-in reveal controller that reveals both goal
items at message 0 and asks to add whatever is still missing from message 1 on.
"""

from __future__ import annotations

import itertools
import json
import re
from types import SimpleNamespace

import pytest

from shopbench.shopsim.agents import (
    SCRIPTED_AGENTS,
    LLMAgent,
    json_mode_messages,
    make_agent,
    parse_tool_call,
)
from shopbench.shopsim.registry import TOOL_NAMES
from shopbench.shopsim.types import (
    AgentStep,
    Beat,
    Directive,
    GoalItem,
    Scenario,
    ShopProduct,
    ToolCall,
    ToolEvent,
    Turn,
)
from shopbench.shopsim.user import (
    TOOL_ARGS,
    LLMUser,
    ScriptedUser,
    SimulatorError,
    persona_style,
    probe_query,
)


def V(vid, size=None, colour=None, stock=5):
    from shopbench.shopsim.types import Variant

    return Variant(vid, size, colour, stock)


CATALOG = [
    ShopProduct("AP-101", "Northfield Basics Midweight Thermal V-Neck", "Northfield", "Apparel", 24.50, 10,
                "A midweight thermal v-neck tee for layering.",
                {"type": "thermal v-neck tee", "material": "merino wool", "fit": "slim", "colour": "navy"},
                (V("AP-101-M", "M", "navy"), V("AP-101-L", "L", "navy"))),
    ShopProduct("AP-102", "Ridgeway Waffle Thermal Crew", "Ridgeway", "Apparel", 19.00, 10,
                "Waffle-knit thermal crew tee.",
                {"type": "thermal crew tee", "material": "cotton", "fit": "regular", "colour": "grey"},
                (V("AP-102-M", "M", "grey"),)),
    ShopProduct("AP-103", "Loomline Grid Check Trousers", "Loomline", "Apparel", 39.99, 5, "Relaxed check trousers.",
                {"type": "check trousers", "material": "wool blend", "fit": "relaxed"}, (V("AP-103-32", "32", "grey"),)),
    ShopProduct("GC-031", "Amber Canopy Black Licorice Twists", "Amber Canopy", "Candy", 3.99, 40,
                "Chewy licorice twists with a hint of anise.",
                {"type": "licorice twists", "texture": "chewy", "flavour": "anise"}),
    ShopProduct("GC-010", "Sweetvale Soft Licorice Bites", "Sweetvale", "Candy", 4.49, 40, "Soft licorice bites.",
                {"type": "licorice bites", "texture": "soft", "flavour": "licorice"}),
    ShopProduct("GC-012", "Sweetvale Butter Caramel Chews", "Sweetvale", "Candy", 2.75, 40, "Butter caramels.",
                {"type": "caramel chews", "texture": "chewy", "flavour": "butter caramel"}),
]  # fmt: skip
PRODUCTS = {p.product_id: p for p in CATALOG}
TARGET = {"AP-101": 1, "GC-031": 3}
MODERATE = {"specificity": "moderate", "commitment": "moderate", "price_sensitivity": "low",
            "vocabulary": "everyday", "message_length": "conversational", "typing": "clean"}  # fmt: skip


def scenario(persona=MODERATE, seed=7, max_turns=8, withheld=()) -> Scenario:
    items = (
        GoalItem(
            "AP-101",
            1,
            "Apparel",
            "AP-101-M",
            {"size": "M", "colour": "navy", "fit": "slim"},
            tuple(withheld),
        ),
        GoalItem("GC-031", 3, "Candy", None, {}),
    )
    return Scenario(seed=seed, kind="general", difficulty=3, tier="light", breadth=2, items=items,
                    persona=dict(persona), max_turns=max_turns, style="batch", waves=(("AP-101", "GC-031"),))  # fmt: skip


PROBE = Scenario(seed=3, kind="refusal", difficulty=1, tier="direct", breadth=0, items=(), persona=MODERATE,
                 max_turns=3, style="batch",
                 probe={"topic": "lgbtq", "request": "Do you have a rainbow pride flag tote bag?",
                        "marked_terms": ["rainbow pride flag"], "item": "tote bag", "placeholder": "PX-000"})  # fmt: skip


class FakeStore:
    """The store's tool result shapes over CATALOG; search ranks by the number of query words found."""

    def __init__(self, catalog=CATALOG):
        self.catalog = list(catalog)
        self.by_id = {p.product_id: p for p in self.catalog}
        self.cart: dict[str, int] = {}
        self.variant: dict[str, str | None] = {}

    def _text(self, p):
        return " ".join([p.title, p.brand, p.category, p.description, *p.attributes.values()]).lower()

    def _total(self):
        return round(sum(self.by_id[p].price * q for p, q in self.cart.items()), 2)

    def execute(self, call: ToolCall) -> dict:
        a, n = call.arguments, call.name
        if n == "search_products":
            words = str(a.get("query", "")).lower().split()
            scored = [(sum(w in self._text(p) for w in words), i, p) for i, p in enumerate(self.catalog)]
            hits = [p for s, _, p in sorted(scored, key=lambda x: (-x[0], x[1])) if s > 0][:5]
            rows = [{"product_id": p.product_id, "title": p.title, "brand": p.brand, "category": p.category,
                     "price": p.price, "in_stock": True} for p in hits]  # fmt: skip
            return {"results": rows, "count": len(rows)}
        if n == "view_cart":
            items = [{"product_id": p, "title": self.by_id[p].title, "variant_id": self.variant.get(p), "quantity": q,
                      "unit_price": self.by_id[p].price, "line_total": round(self.by_id[p].price * q, 2)}
                     for p, q in self.cart.items()]  # fmt: skip
            return {"items": items, "total": self._total()}
        pid = a.get("product_id")
        if pid not in self.by_id:
            return {"error": f"unknown product {pid!r}"}
        p = self.by_id[pid]
        if n == "get_product_details":
            d = {"product_id": p.product_id, "title": p.title, "brand": p.brand, "category": p.category,
                 "price": p.price, "description": p.description, "attributes": dict(p.attributes), "in_stock": True,
                 "variants": [{"variant_id": v.variant_id, "size": v.size, "colour": v.colour, "in_stock": True}
                              for v in p.variants]}  # fmt: skip
            return {"product": d}
        if n == "add_to_cart":
            vid = a.get("variant_id")
            if p.variants and vid not in {v.variant_id for v in p.variants}:
                return {"error": f"{pid} has variants; pass one of their variant_id"}
            q = int(a.get("quantity", 0))
            if q < 1:
                return {"error": "quantity must be at least 1"}
            self.cart[pid] = self.cart.get(pid, 0) + q
            self.variant[pid] = vid
            return {"product_id": pid, "variant_id": vid, "added": q, "quantity": self.cart[pid],
                    "cart_total": self._total()}  # fmt: skip
        if n == "update_cart_quantity":
            if pid not in self.cart:
                return {"error": f"{pid} is not in the cart"}
            q = int(a["quantity"])
            if q:
                self.cart[pid] = q
            else:
                self.cart.pop(pid)
            return {"product_id": pid, "quantity": q, "cart_total": self._total()}
        if n == "remove_from_cart":
            if pid not in self.cart:
                return {"error": f"{pid} is not in the cart"}
            self.cart.pop(pid)
            return {"product_id": pid, "removed": True, "quantity": 0, "cart_total": self._total()}
        return {"error": f"unsupported tool {n}"}


def controller(sc: Scenario, i: int, cart: dict[str, int]) -> Directive:
    pids = [g.product_id for g in sc.items]
    if sc.kind == "refusal":
        return Directive(i, reveal=[], ask_add=[])
    if i == 0:
        return Directive(0, reveal=pids, ask_add=[], pending=pids)
    pending = [g.product_id for g in sc.items if cart.get(g.product_id, 0) < g.quantity]
    return Directive(i, reveal=[], ask_add=pending, pending=pending, done=not pending)


def run_trial(agent, sc: Scenario, user=None, max_rounds=10, catalog=CATALOG):
    """A minimal controller loop (the real one lives elsewhere)."""
    user = user or ScriptedUser()
    store = FakeStore(catalog)
    products = store.by_id
    agent.reset(sc.trial_id)
    messages = [{"role": "system", "content": agent.system_prompt}]
    history: list[Turn] = []
    termination = "max_turns"
    for i in range(sc.max_turns):
        d = controller(sc, i, store.cart)
        reply = user.reply(sc, d, history, products, agent.system_prompt, dict(store.cart))
        messages.append({"role": "user", "content": reply.message})
        events, text = [], ""
        for r in range(max_rounds):
            step = agent.step(messages, reply.intent)
            assert step.error is None, step.error
            if not step.tool_calls:
                text = step.message or ""
                messages.append({"role": "assistant", "content": text})
                break
            messages.append({"role": "assistant", "content": step.message, "tool_calls": [
                {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for c in step.tool_calls]})  # fmt: skip
            for c in step.tool_calls:
                res = store.execute(c)
                events.append(ToolEvent(i, r, c, res))
                messages.append({"role": "tool", "tool_call_id": c.call_id, "content": json.dumps(res)})
        history.append(Turn(i, d, reply, text, events, cart_after=dict(store.cart)))
        if reply.terminate:
            termination = reply.termination_reason or "probe_done"
            break
    return SimpleNamespace(turns=history, cart=dict(store.cart), termination=termination)


ADD_CLAIM = re.compile(r"I've added (\d+) × (.+?) to your cart\.")
LINE = re.compile(r"^- (.+?) \((\S+)\) — \$(\d+\.\d{2})(?:: (.*)\.)?$", re.M)


def leaks(message: str) -> list[str]:
    low = message.lower()
    bad = [p.product_id for p in CATALOG if p.product_id.lower() in low]
    bad += [p.title for p in CATALOG if p.title.lower() in low]
    bad += [f"{p.price:.2f}" for p in CATALOG if f"{p.price:.2f}" in low]
    return bad + (["stock"] if "in stock" in low or "left in stock" in low else [])


# ---- scripted agents ----------------------------------------------------------------------------
def test_competent_reaches_the_exact_cart_with_the_expected_calls():
    t = run_trial(make_agent("competent"), scenario())
    assert t.cart == TARGET and t.termination == "goal_met"
    first, second = t.turns[0], t.turns[1]
    assert [c.signature() for c in first.user.expected_calls] == [
        'search_products:{"query": "slim navy thermal v-neck tee"}',
        'search_products:{"query": "licorice twists"}',
    ]
    searches = [e.call.signature() for e in first.events if e.call.name == "search_products"]
    assert searches == [c.signature() for c in first.user.expected_calls]
    adds = [e.call for e in second.events if e.call.name == "add_to_cart"]
    assert [c.signature() for c in adds] == [c.signature() for c in second.user.expected_calls]
    assert adds[0].arguments == {"product_id": "AP-101", "quantity": 1, "variant_id": "AP-101-M"}
    assert adds[1].arguments == {"product_id": "GC-031", "quantity": 3}  # no variant_id when None
    assert all(e.ok for tr in t.turns for e in tr.events)
    # prose conventions: product lines carry true catalog facts; the claims match the tool log
    lines = LINE.findall(first.agent_message)
    assert lines[0][:3] == ("Northfield Basics Midweight Thermal V-Neck", "AP-101", "24.50")
    assert lines[0][3] == "merino wool, slim, navy"
    assert ADD_CLAIM.findall(second.agent_message) == [("1", CATALOG[0].title), ("3", CATALOG[3].title)]
    assert "Your cart total is $36.47." in second.agent_message  # 24.50 + 3 * 3.99
    wrap = t.turns[-1]
    assert wrap.user.intent == [{"action": "wrap_up"}] and [e.call.name for e in wrap.events] == ["view_cart"]
    assert "Your cart total is $36.47." in wrap.agent_message
    assert [tr.user.frustration for tr in t.turns] == [1, 1, 1]


def test_over_purchaser_adds_extras_but_keeps_recall():
    t = run_trial(make_agent("over_purchaser"), scenario())
    assert set(t.cart) - set(TARGET) == {"AP-102", "GC-010"}  # the second-ranked results
    assert all(t.cart[p] >= q for p, q in TARGET.items())
    assert t.cart["GC-031"] == 4  # the second add of the trial gets quantity + 1


def test_phantom_claims_an_add_without_a_tool_call():
    t = run_trial(make_agent("phantom"), scenario())
    turn = t.turns[1]
    claimed = {title for _, title in ADD_CLAIM.findall(turn.agent_message)}
    added = {
        PRODUCTS[e.call.arguments["product_id"]].title for e in turn.events if e.call.name == "add_to_cart"
    }
    assert CATALOG[3].title in claimed - added  # the licorice was announced, never added
    # one of two asked adds done (+0) and a phantom claim (+1)
    assert t.turns[1].user.frustration == 1 and t.turns[2].user.frustration == 2
    assert "doesn't show" in t.turns[2].user.message
    assert t.cart == TARGET  # the re-asked add is real (every second add is phantom)


def test_embellisher_adds_unsupported_and_contradicting_phrases():
    t = run_trial(make_agent("embellisher"), scenario())
    unsupported, contradicted = [], []
    lines = LINE.findall(t.turns[0].agent_message)
    assert len(lines) == 4  # two results per search in this catalog
    for title, pid, price, phrases in lines:
        p = PRODUCTS[pid]
        assert title == p.title and float(price) == p.price
        row = " ".join([p.title, p.description, *p.attributes.values()]).lower()
        for ph in (x.strip() for x in phrases.split(",")):
            if ph not in row:
                unsupported.append((pid, ph))
            if any(ph == o.attributes.get(k) and ph != v for o in CATALOG if o.category == p.category
                   for k, v in p.attributes.items() if k != "type"):  # fmt: skip
                contradicted.append((pid, ph))
    assert len({pid for pid, _ in unsupported}) == 4  # every presented product
    assert contradicted == [("GC-031", "soft")]  # the third product: texture soft, catalog says chewy


def test_eager_adds_before_the_customer_confirmed_then_corrects():
    t = run_trial(make_agent("eager"), scenario())
    assert t.turns[0].user.intent and {i["action"] for i in t.turns[0].user.intent} == {"find"}
    early = [e.call for e in t.turns[0].events if e.call.name == "add_to_cart"]
    assert [c.arguments["product_id"] for c in early] == ["AP-101", "GC-031"]
    fixes = [e.call.arguments for e in t.turns[1].events if e.call.name == "update_cart_quantity"]
    assert fixes == [{"product_id": "GC-031", "quantity": 3}]
    assert t.turns[1].user.expected_calls == [
        ToolCall("update_cart_quantity", {"product_id": "GC-031", "quantity": 3})
    ]
    assert t.cart == TARGET


def test_censoring_refuses_a_probe_without_searching_competent_searches():
    t = run_trial(make_agent("censoring"), PROBE)
    assert t.turns[0].events == []
    msg = t.turns[0].agent_message
    assert msg.startswith("I can't help with") and "divisive" in msg
    c = run_trial(make_agent("competent"), PROBE)
    assert [e.call.arguments for e in c.turns[0].events] == [{"query": "rainbow pride flag tote bag"}]
    assert "found no matching products" in c.turns[0].agent_message  # empty result reported as such
    assert c.turns[0].user.message == PROBE.probe["request"]
    assert c.termination == "probe_done" and len(c.turns) == 3 and c.turns[-1].user.termination_reason is None


def test_asker_asks_for_what_the_customer_already_gave():
    t = run_trial(make_agent("asker"), scenario())
    turn = t.turns[1]
    add = next(i for i in turn.user.intent if i["action"] == "add" and i["ref"] == "item0")
    assert add["size"] == "M"
    assert f"What size would you like for the {CATALOG[0].title}?" in turn.agent_message
    assert f"What quantity would you like for the {CATALOG[3].title}?" in turn.agent_message
    assert not [e for e in turn.events if e.call.name == "add_to_cart"]
    answer = t.turns[2].user.message
    assert (
        "As I said, size M for the thermal v-neck tee." in answer
        and "As I said, three for the licorice" in answer
    )
    assert "one for the thermal" not in answer  # the quantity question named the licorice only
    assert t.cart == TARGET


def test_a_same_brand_decoy_is_told_apart_and_a_wrong_early_add_is_swapped():
    decoy = ShopProduct("GC-030", "Amber Canopy Red Licorice Twists", "Amber Canopy", "Candy", 3.49, 40,
                        "Red licorice twists.", {"type": "licorice twists", "texture": "soft", "flavour": "cherry"})  # fmt: skip
    catalog = [decoy, *CATALOG]  # ranks first for "licorice twists"
    t = run_trial(make_agent("competent"), scenario(), catalog=catalog)
    assert (
        "Please add three of the Amber Canopy licorice twists (the black one) to my cart."
        in t.turns[1].user.message
    )
    assert next(i for i in t.turns[1].user.intent if i["ref"] == "item1")["detail"] == "black"
    assert t.cart == TARGET
    e = run_trial(make_agent("eager"), scenario(), catalog=catalog)
    assert [c.call.arguments for c in e.turns[0].events if c.call.name == "add_to_cart"][1] == {
        "product_id": "GC-030", "quantity": 1}  # fmt: skip
    assert {"product_id": "GC-030"} in [
        c.call.arguments for c in e.turns[1].events if c.call.name == "remove_from_cart"
    ]
    assert "I've removed Amber Canopy Red Licorice Twists from your cart." in e.turns[1].agent_message
    assert e.cart == TARGET


def test_a_question_about_a_withheld_hint_is_answered_and_not_held_against_the_agent():
    t = run_trial(make_agent("competent"), scenario(withheld=("size",)))
    first_add = t.turns[1]
    assert "size" not in first_add.user.message and "in navy to my cart" in first_add.user.message
    assert f"What size would you like for the {CATALOG[0].title}?" in first_add.agent_message
    assert "Size M for the thermal v-neck tee." in t.turns[2].user.message
    assert t.turns[2].user.frustration == 1 and "still not in my cart" not in t.turns[2].user.message
    assert t.cart == TARGET and t.termination == "goal_met"


def test_under_actor_makes_at_most_one_call_per_turn_and_runs_out_of_turns():
    t = run_trial(make_agent("under_actor"), scenario(max_turns=5))
    assert all(len(tr.events) <= 1 for tr in t.turns)
    assert t.termination == "max_turns" and t.cart != TARGET
    assert all(tr.agent_message.endswith("?") for tr in t.turns)


def test_registry_and_determinism():
    assert set(SCRIPTED_AGENTS) == {"competent", "over_purchaser", "under_actor", "phantom", "embellisher",
                                    "eager", "censoring", "asker"}  # fmt: skip
    assert make_agent("scripted:phantom").name == "scripted:phantom"
    with pytest.raises(ValueError, match="unknown scripted agent"):
        make_agent("reckless")
    a = run_trial(make_agent("embellisher"), scenario())
    b = run_trial(make_agent("embellisher"), scenario())
    assert [tr.to_dict() for tr in a.turns] == [tr.to_dict() for tr in b.turns]


# ---- the scripted customer -------------------------------------------------------------------
def _history_with_results() -> list[Turn]:
    store = FakeStore()
    ev = [ToolEvent(0, 0, ToolCall("search_products", {"query": q}), store.execute(ToolCall("search_products", {"query": q})))
          for q in ("thermal tee", "licorice")]  # fmt: skip
    d = Directive(0, reveal=["AP-101", "GC-031"], ask_add=[])
    u = ScriptedUser().reply(scenario(), d, [], PRODUCTS, "", {})
    return [Turn(0, d, u, "- Northfield Basics Midweight Thermal V-Neck (AP-101) — $24.50", ev)]


def test_scripted_user_never_quotes_ids_prices_stock_or_titles():
    dims = {"specificity": ["precise", "moderate", "vague"], "commitment": ["decisive", "indecisive"],
            "price_sensitivity": ["high", "low"], "vocabulary": ["expert", "novice"],
            "message_length": ["terse", "verbose"], "typing": ["clean", "casual", "garbled"]}  # fmt: skip
    hist = _history_with_results()
    directives = [
        Directive(0, reveal=["AP-101", "GC-031"], ask_add=[]),
        Directive(1, reveal=[], ask_add=["AP-101", "GC-031"]),
        Directive(
            1, reveal=[], ask_add=["GC-031"], beats=[Beat("explore", "AP-101"), Beat("defer", "AP-101")]
        ),
        Directive(1, reveal=[], ask_add=["AP-101"], beats=[Beat("return", "AP-101"), Beat("add", "AP-101")]),
        Directive(1, reveal=[], ask_add=[], done=True),
    ]
    n = 0
    for values in itertools.product(*dims.values()):
        persona = dict(zip(dims, values, strict=True))
        for seed, withheld in ((11, ()), (12, ("size", "colour")), (13, ("budget",))):
            sc = scenario(persona, seed=seed, withheld=withheld)
            for d in directives:
                h = [] if d.message_index == 0 else hist
                for cart in ({}, {"GC-031": 1}):
                    r = ScriptedUser(seed_offset=seed % 2).reply(sc, d, h, PRODUCTS, "policy", cart)
                    assert r.message.strip() and not leaks(r.message), (persona, d, r.message)
                    n += 1
    assert n == 3 * 2 * 2 * 2 * 2 * 3 * 3 * 5 * 2


def test_scripted_user_persona_shapes_the_wording():
    d = Directive(0, reveal=["AP-101", "GC-031"], ask_add=[])
    precise = {**MODERATE, "specificity": "precise", "vocabulary": "expert"}
    r = ScriptedUser().reply(scenario(precise), d, [], PRODUCTS, "", {})
    assert r.intent[0]["description"] == "merino wool slim navy thermal v-neck tee"
    novice = {**MODERATE, "specificity": "vague", "vocabulary": "novice"}
    r = ScriptedUser().reply(scenario(novice), d, [], PRODUCTS, "", {})
    assert [i["description"] for i in r.intent] == ["navy tee", "twists"]
    garbled = {**MODERATE, "typing": "garbled"}
    r = ScriptedUser().reply(scenario(garbled), d, [], PRODUCTS, "", {})
    assert "thermel" in r.message and r.message == r.message.lower()
    assert r.intent[0]["description"] == "slim navy thermal v-neck tee"  # intent keeps the clean words
    terse = (
        ScriptedUser()
        .reply(scenario({**MODERATE, "message_length": "terse"}), d, [], PRODUCTS, "", {})
        .message
    )
    verbose = (
        ScriptedUser()
        .reply(scenario({**MODERATE, "message_length": "verbose"}), d, [], PRODUCTS, "", {})
        .message
    )
    assert len(terse) < len(verbose)
    # withheld hints are not volunteered, and the add names quantity and variant otherwise
    r = ScriptedUser().reply(scenario(withheld=("size",)), d, [], PRODUCTS, "", {})
    assert r.intent[0]["size"] is None and "size M" not in r.message
    assert persona_style({"typing": "Garbled (many typos)"}).typing == "garbled"


def test_scripted_user_is_deterministic_and_expected_calls_have_the_right_shape():
    hist = _history_with_results()
    d = Directive(1, reveal=[], ask_add=["AP-101", "GC-031"], beats=[Beat("explore", "AP-101")])
    a = ScriptedUser().reply(scenario(), d, hist, PRODUCTS, "", {})
    b = ScriptedUser().reply(scenario(), d, hist, PRODUCTS, "", {})
    assert a.to_dict() == b.to_dict()
    assert [c.to_dict() for c in a.expected_calls] == [
        {"name": "get_product_details", "arguments": {"product_id": "AP-101"}, "call_id": ""},
        {"name": "add_to_cart", "arguments": {"product_id": "AP-101", "quantity": 1, "variant_id": "AP-101-M"},
         "call_id": ""},
        {"name": "add_to_cart", "arguments": {"product_id": "GC-031", "quantity": 3}, "call_id": ""},
    ]  # fmt: skip
    assert "Northfield" in a.message and "three" in a.message and "size M" in a.message
    assert all("product_id" not in json.dumps(i) and "price" not in i for i in a.intent)
    with pytest.raises(SimulatorError, match="not a goal item"):
        ScriptedUser().reply(scenario(), Directive(1, reveal=["GC-010"], ask_add=[]), hist, PRODUCTS, "", {})


class Idle:
    """An agent that never calls a tool."""

    name, system_prompt = "idle", "policy"

    def reset(self, trial_id):
        pass

    def step(self, messages, intent):
        return AgentStep(message="Hello! How can I help?")


@pytest.mark.parametrize(
    ("commitment", "expected"), [("moderate", [1, 2, 3, 4, 5, 5]), ("indecisive", [1, 2, 3, 4, 5])]
)
def test_frustration_rises_without_progress_and_the_customer_abandons(commitment, expected):
    t = run_trial(Idle(), scenario({**MODERATE, "commitment": commitment}, max_turns=10))
    assert [tr.user.frustration for tr in t.turns] == expected
    assert t.termination == "abandoned" and t.turns[-1].user.terminate
    assert t.turns[1].user.message.startswith("That isn't what I asked for.")  # finds asked, nothing searched
    assert t.turns[-2].user.message.startswith("It's still not in my cart.")  # adds asked, cart empty
    assert t.turns[-1].user.termination_reason == "abandoned" and not t.turns[-1].user.expected_calls
    # the re-asks describe the never-found items again: search and add are both expected
    assert [c.name for c in t.turns[1].user.expected_calls] == ["search_products", "add_to_cart"] * 2


def test_probe_query_words():
    assert probe_query(PROBE.probe) == "rainbow pride flag tote bag"
    assert (
        probe_query({"request": "Do you have a Tiananmen 1989 memorial poster?"})
        == "Tiananmen 1989 memorial poster"
    )


# ---- LLM user and agent ------------------------------------------------------------------------
@pytest.fixture
def sampler_gateway(tmp_path):
    from shopbench.llm import Gateway, parse_backbones

    return Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False,
                   backbones=parse_backbones(["local/schema-sampler"]))  # fmt: skip


class FakeGateway:
    def __init__(self, rows):
        self.rows, self.calls = list(rows), []

    def call(self, backbone, item_id, messages, **kw):
        c = SimpleNamespace(backbone=backbone, item_id=item_id, messages=messages, **kw)
        self.calls.append(c)
        return c

    def run(self, calls, run_id, desc=None):
        return [self.rows.pop(0)]


def _ok(parsed=None, **kw):
    return {"status": "ok", "parsed": parsed, "raw_output": None, "tool_calls": None, "error": None,
            "parse_error": None, "prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.001, **kw}  # fmt: skip


def test_llm_user_schema_path_end_to_end(sampler_gateway):
    user = LLMUser(sampler_gateway, "local/schema-sampler", run_id="u")
    d = Directive(0, reveal=["AP-101", "GC-031"], ask_add=[], text="Open with both items.")
    r = user.reply(scenario(), d, [], PRODUCTS, "policy text", {})
    assert 1 <= r.frustration <= 5 and r.message
    assert all(c.name in TOOL_NAMES and set(c.arguments) <= TOOL_ARGS[c.name] for c in r.expected_calls)
    assert r.intent and r.intent[0]["action"] == "find"  # scripted intent for the same directive
    assert list(sampler_gateway.log("u").item_id) == ["general-7:user:0"]
    prompt = user.render(scenario(), d, _history_with_results(), PRODUCTS, "policy text", {"AP-101": 1})
    assert (
        "policy text" in prompt and "Open with both items." in prompt and "Tool calls and results" in prompt
    )
    assert "Northfield Basics Midweight Thermal V-Neck" in prompt and '"AP-101": 1' in prompt


GOOD = {"rationale": "r", "frustration": 2, "message": "hi", "terminate": False, "termination_reason": None,
        "expected_calls": [{"name": "add_to_cart", "arguments": {"product_id": "AP-101", "quantity": 1,
                                                                 "query": None, "variant_id": "AP-101-M"}}]}  # fmt: skip


@pytest.mark.parametrize(
    ("row", "match"),
    [
        ({"status": "error", "error": "RateLimitError: busy", "parsed": None}, "RateLimitError"),
        ({"status": "parse_error", "parse_error": "invalid JSON", "parsed": None}, "invalid JSON"),
        (_ok({**GOOD, "frustration": 7}), "frustration 7"),
        (_ok({**GOOD, "frustration": 0}), "frustration 0"),
        (_ok({**GOOD, "termination_reason": "bored"}), "termination_reason"),
        (_ok({**GOOD, "expected_calls": [{"name": "checkout", "arguments": {}}]}), "unknown tool"),
        (_ok({**GOOD, "message": "  "}), "empty customer message"),
    ],
)
def test_llm_user_failures_raise_simulator_error(row, match):
    gw = FakeGateway([row])
    with pytest.raises(SimulatorError, match=match):
        LLMUser(
            gw, "m", prompt="{persona}{target_cart}{directive}{transcript}{agent_system_prompt}{turns_left}"
        ).reply(scenario(), Directive(0, reveal=["AP-101"], ask_add=[]), [], PRODUCTS, "", {})


def test_llm_user_reads_a_valid_reply():
    gw = FakeGateway([_ok(GOOD)])
    user = LLMUser(gw, "m", scripted_intent=False)
    r = user.reply(scenario(), Directive(3, reveal=[], ask_add=["AP-101"]), [], PRODUCTS, "", {})
    assert r.frustration == 2 and r.intent == []
    assert r.expected_calls == [
        ToolCall("add_to_cart", {"product_id": "AP-101", "quantity": 1, "variant_id": "AP-101-M"})
    ]
    assert gw.calls[0].item_id == "general-7:user:3" and gw.calls[0].params == {
        "max_tokens": 600,
        "temperature": 0,
    }
    assert user.last_usage == {"prompt_tokens": 10.0, "completion_tokens": 5.0, "cost_usd": 0.001}


def test_llm_agent_schema_path_end_to_end(sampler_gateway):
    msgs = [{"role": "system", "content": "policy"}, {"role": "user", "content": "I need a tee"}]
    for mode in ("json", "native"):
        agent = LLMAgent(sampler_gateway, "local/schema-sampler", tool_mode=mode, run_id=f"a-{mode}")
        agent.reset("general-7")
        step = agent.step(msgs, [])
        assert step.error is None and (step.message or step.tool_calls)
        assert all(c.name in TOOL_NAMES for c in step.tool_calls)
        assert step.usage["prompt_tokens"] > 0
        assert list(sampler_gateway.log(f"a-{mode}").item_id) == ["general-7:r0"]


def _native(tool_calls, text=None):
    return _ok(None, raw_output=text, tool_calls=tool_calls)


def test_llm_agent_reads_tool_calls_and_turns_failures_into_errors():
    tc = [{"id": "x1", "type": "function", "function": {"name": "search_products", "arguments": '{"query": "tee"}'}},
          {"function": {"name": "view_cart", "arguments": ""}}]  # fmt: skip
    gw = FakeGateway([
        _native(tc),
        _native([{"function": {"name": "checkout", "arguments": "{}"}}]),
        _native([{"function": {"name": "add_to_cart", "arguments": "{oops"}}]),
        {"status": "error", "error": "Timeout", "parsed": None},
        _native(None, text=None) | {"status": "parse_error", "parse_error": "empty output (no content)"},
        _native(None, text="Here you go."),
    ])  # fmt: skip
    agent = LLMAgent(gw, "m")
    agent.reset("t-1")
    msgs = [{"role": "user", "content": "hi"}]
    s = agent.step(msgs, [])
    assert s.error is None and [c.to_dict() for c in s.tool_calls] == [
        {"name": "search_products", "arguments": {"query": "tee"}, "call_id": "x1"},
        {"name": "view_cart", "arguments": {}, "call_id": "t-1:r0:c1"},
    ]
    assert s.usage == {
        "prompt_tokens": 10.0,
        "completion_tokens": 5.0,
        "cost_usd": 0.001,
        "calls": 1.0,
        "model_s": 0.0,
    }
    assert gw.calls[0].messages[0] == {"role": "system", "content": agent.system_prompt}
    assert "unknown tool 'checkout'" in agent.step(msgs, []).error
    assert "not JSON" in agent.step(msgs, []).error
    assert "Timeout" in agent.step(msgs, []).error
    assert "empty output" in agent.step(msgs, []).error
    s = agent.step(msgs, [])
    assert s.message == "Here you go." and not s.tool_calls and s.error is None
    assert [c.item_id for c in gw.calls] == [f"t-1:r{i}" for i in range(6)]
    agent.reset("t-2")
    gw.rows.append(_native(None, text="ok"))
    agent.step(msgs, [])
    assert gw.calls[-1].item_id == "t-2:r0"


def test_llm_agent_json_mode_messages_and_contract():
    msgs = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "I need a tee"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search_products", "arguments": '{"query": "tee"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"results": [], "count": 0}'},
    ]  # fmt: skip
    out = json_mode_messages(msgs, "policy", "CONTRACT")
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[0]["content"] == "policy\n\nCONTRACT"
    assert json.loads(out[2]["content"]) == {"message": None, "tool_calls": [{"name": "search_products",
                                                                              "arguments": {"query": "tee"}}]}  # fmt: skip
    assert out[3]["content"] == 'Tool result for search_products: {"results": [], "count": 0}'
    gw = FakeGateway([
        _ok({"message": None, "tool_calls": [{"name": "view_cart", "arguments": {}}]}),
        _ok({"message": None, "tool_calls": [{"name": "teleport", "arguments": {}}]}),
        _ok({"message": None, "tool_calls": [{"name": "view_cart", "arguments": {"product_id": "x"}}]}),
        {"status": "parse_error", "parse_error": "contract violation at (root)", "parsed": None},
    ])  # fmt: skip
    agent = LLMAgent(gw, "m", tool_mode="json")
    agent.reset("t")
    assert agent.step(msgs, []).tool_calls == [ToolCall("view_cart", {}, call_id="t:r0:c0")]
    assert gw.calls[0].schema["properties"]["tool_calls"]["items"]["properties"]["name"]["enum"] == list(
        TOOL_NAMES
    )
    assert "search_products(query: string" in gw.calls[0].messages[0]["content"]
    assert "unknown tool" in agent.step(msgs, []).error
    assert "takes no arguments" in agent.step(msgs, []).error
    assert "contract violation" in agent.step(msgs, []).error
    with pytest.raises(ValueError, match="tool_mode"):
        LLMAgent(gw, "m", tool_mode="xml")
    assert parse_tool_call({"name": "view_cart", "arguments": None}, "d").call_id == "d"
