"""Claim-level hallucination checking (seed 002 §4.2, App. F examples 4-5, Table 11 typed rates).

"One structured call extracts each concrete claim from the agent's prose and types it as action,
numeric, or attribute. The verifier labels an action claim a phantom action when the tool log
contains no matching call. It checks numeric claims against catalog prices, stock, and the
state-replayed cart. Only attribute claims reach the judge, which labels them as supported,
embellished, contradicted, or ungrounded against the ground-truth catalog row. An ungrounded claim
also detects a fabricated product. With V the verifiable claims and B ⊆ V the violations, the
headline score is H = 1 − |B|/|V|." (§4.2)

This module holds the claim record, the deterministic extractor for the scripted agents' prose
conventions (``- <Title> (<id>) — $<price>: <phrase>, <phrase>.``, ``I've added <q> × <Title> to your
cart.``, ``Your cart total is $<x>.``, ``<Title> has <n> in stock.``), the rule checks of the action
and numeric channels, the deterministic attribute labeller, and the channel rates. Extraction and
attribute labelling are the judge's (its ``claims`` and ``attributes`` questions); a claim
naming a product the catalog does not hold is settled here as an ungrounded (fabricated) attribute
claim without asking the judge.

It also holds the small readers of the record that the rubric and refusal modules share (tokens,
search hits, still-needed targets, presented products).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from ...shopsim.replay import cart_after_turn, cart_before
from ...shopsim.types import ShopProduct, ToolEvent, TrialRecord

ClaimType = Literal["action", "numeric", "attribute"]
ACTIONS = ("added", "removed", "updated")
NUMERIC_KINDS = ("price", "stock", "cart_total")
ATTRIBUTE_LABELS = ("supported", "embellished", "contradicted", "ungrounded")
MONEY_TOL = 0.01  # "$0.01": a price or total within a cent is correct

# ---------------------------------------------------------------------------------------------------
# tokens


STOPWORDS = frozenset(
    "a an the and or but nor with without of in on for to from by at as is are was were be been it its "
    "it's this that these those very slightly really super quite so just also made has have had your you "
    "our we i i'm i've they their them there here which who what whose all any some each every more most "
    "than then too can will would could should may might must not no yes do does did done into onto over "
    "under up down out about per one's a bit".split()
)
_TOKEN = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")


def _stem(t: str) -> str:
    if len(t) <= 3 or t[0].isdigit():
        return t
    if t.endswith("ies") and len(t) > 4:
        return t[:-3] + "y"
    if t.endswith("es") and t[:-2].endswith(("s", "x", "ch", "sh", "z")):
        return t[:-2]
    if t.endswith("s") and not t.endswith(("ss", "us", "is")):
        return t[:-1]
    return t


def tokens(text: str | None) -> list[str]:
    """Lower-cased, lightly stemmed word tokens (plurals folded: ``twists`` -> ``twist``)."""
    if not text:
        return []
    text = str(text).lower().replace("’", "'").replace("_", " ")
    return [_stem(t) for t in _TOKEN.findall(text)]


def content_tokens(text: str | None) -> list[str]:
    """``tokens`` without stopwords: the words a claim or query commits to."""
    return [t for t in tokens(text) if t not in STOPWORDS]


def _contains_seq(seq: Sequence[str], sub: Sequence[str]) -> bool:
    n = len(sub)
    return n > 0 and any(tuple(seq[i : i + n]) == tuple(sub) for i in range(len(seq) - n + 1))


# ---------------------------------------------------------------------------------------------------
# catalog index (built once per products mapping)


@dataclass
class CatalogIndex:
    titles: dict[str, str]  # lower-cased title -> product id (smallest id on duplicate titles)
    values: dict[str, dict[str, set[tuple[str, ...]]]]  # category -> key -> known value token sequences
    max_title_words: int


_INDEX_CACHE: dict[int, tuple[Mapping[str, ShopProduct], int, CatalogIndex]] = {}


def catalog_index(products: Mapping[str, ShopProduct]) -> CatalogIndex:
    """Title index and per-category attribute vocabulary of ``products``, cached per mapping (the
    mapping is treated as immutable once indexed). Variant sizes and colours enter as keys
    ``size`` / ``colour``."""
    hit = _INDEX_CACHE.get(id(products))
    if hit is not None and hit[0] is products and hit[1] == len(products):
        return hit[2]
    titles: dict[str, str] = {}
    values: dict[str, dict[str, set[tuple[str, ...]]]] = {}
    longest = 1
    for pid in sorted(products):
        p = products[pid]
        if not isinstance(p, ShopProduct):
            raise TypeError(
                f"products[{pid!r}] is a {type(p).__name__}, not a ShopProduct; pass "
                "{p.product_id: p for p in catalog}"
            )
        titles.setdefault(p.title.strip().lower(), pid)
        longest = max(longest, len(p.title.split()))
        cat = values.setdefault(p.category, {})
        for k, v in p.attributes.items():
            t = tuple(tokens(v))
            if t:
                cat.setdefault(k, set()).add(t)
        for var in p.variants:
            for k, v in (("size", var.size), ("colour", var.colour)):
                t = tuple(tokens(v))
                if t:
                    cat.setdefault(k, set()).add(t)
    idx = CatalogIndex(titles, values, longest)
    if len(_INDEX_CACHE) >= 16:
        _INDEX_CACHE.pop(next(iter(_INDEX_CACHE)))
    _INDEX_CACHE[id(products)] = (products, len(products), idx)
    return idx


def resolve_product(name: str | None, products: Mapping[str, ShopProduct]) -> str | None:
    """A product id from an id, an exact (case-insensitive) catalog title, or ``Title (id)``."""
    if not name:
        return None
    s = str(name).strip()
    if s in products:
        return s
    m = re.fullmatch(r"(.*?)\s*\(([^()]+)\)", s)
    if m and m.group(2).strip() in products:
        return m.group(2).strip()
    idx = catalog_index(products)
    pid = idx.titles.get(s.lower())
    if pid is None and m:
        pid = idx.titles.get(m.group(1).strip().lower())
    return pid


def row_tokens(p: ShopProduct) -> set[str]:
    """Every token the catalog row supports: title, brand, category, description, attribute keys
    and values, variant sizes and colours."""
    parts = [p.title, p.brand, p.category, p.description]
    for k, v in p.attributes.items():
        parts += [k, v]
    for var in p.variants:
        parts += [var.size or "", var.colour or ""]
    return {t for part in parts for t in tokens(part)}


# ---------------------------------------------------------------------------------------------------
# claims


@dataclass(frozen=True)
class Claim:
    """One concrete claim of the agent's prose. ``action``/``quantity`` for action claims,
    ``kind``/``value`` for numeric claims (price | stock | cart_total), ``phrase`` for attribute
    claims. ``fabricated``: the claim names a product the catalog does not hold (§4.2: "An
    ungrounded claim also detects a fabricated product")."""

    turn: int
    type: ClaimType
    product_id: str | None
    text: str
    action: str | None = None
    quantity: int | None = None
    kind: str | None = None
    value: float | None = None
    phrase: str | None = None
    fabricated: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ClaimCheck:
    """A claim with its verdict: ``label`` is ok/phantom (action), correct/wrong (numeric) or one
    of ATTRIBUTE_LABELS; ``violation`` puts it in B; ``evidence`` says why."""

    claim: Claim
    label: str
    violation: bool
    evidence: str


_LIST_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(?P<body>.+?)\s*$")
_PAREN = re.compile(r"\(([^()]+)\)")
_PRICE_AFTER = re.compile(r"^\s*[—–-]+\s*\$(?P<price>\d[\d,]*(?:\.\d+)?)")
_PRICE_ANY = re.compile(r"\s[—–-]+\s*\$(?P<price>\d[\d,]*(?:\.\d+)?)")
_APOS = r"(?:'|’)"
_ADDED = re.compile(rf"\bI{_APOS}ve added (?P<q>\d+) *[×x] *(?P<title>.+?) to your cart", re.I)
_REMOVED = re.compile(rf"\bI{_APOS}ve removed (?P<title>.+?) from your cart", re.I)
_UPDATED = re.compile(rf"\bI{_APOS}ve updated (?P<title>.+?) to (?P<q>\d+)\b", re.I)
_TOTAL = re.compile(r"\bcart total is \$(?P<x>\d[\d,]*(?:\.\d+)?)", re.I)
_STOCK = re.compile(r"\bhas (?P<n>\d+) in stock\b", re.I)
_COMMA_SPLIT = re.compile(r",(?!\d{3}\b)")
_ID_LIKE = re.compile(r"[A-Za-z0-9_.-]*\d[A-Za-z0-9_.-]*")  # one token with a digit: GC031, SH-12


def _money(s: str) -> float:
    return float(s.replace(",", ""))


@dataclass(frozen=True)
class ProductLine:
    """One presented product line of the scripted-agent convention."""

    start: int  # character offset of the line in the message
    name: str  # the title as written
    product_id: str | None  # resolved catalog id, None when the catalog has no such product
    written_id: str | None
    price: float | None
    phrases: tuple[str, ...]
    text: str


def product_lines(message: str, products: Mapping[str, ShopProduct]) -> list[ProductLine]:
    """The ``- <Title> (<id>) — $<price>: <phrase>, <phrase>.`` lines of a message. A bulleted line
    is a product line only when it carries a parenthesised id or a ``— $price``."""
    out: list[ProductLine] = []
    pos = 0
    for raw in (message or "").splitlines(keepends=True):
        start, pos = pos, pos + len(raw)
        m = _LIST_LINE.match(raw.rstrip("\n"))
        if not m:
            continue
        body = m.group("body")
        cut = None  # (end of the name, written id)
        parens = list(_PAREN.finditer(body))
        for pm in parens:  # the parenthesised group that is a catalog id wins
            if pm.group(1).strip() in products:
                cut = (pm.start(), pm.end(), pm.group(1).strip())
                break
        if cut is None:
            for pm in parens:  # else an id-like group followed by the price, a colon, or the line end
                rest = body[pm.end() :]
                if not _ID_LIKE.fullmatch(pm.group(1).strip()):
                    continue
                if _PRICE_AFTER.match(rest) or re.match(r"^\s*(?::|\.?\s*$)", rest):
                    cut = (pm.start(), pm.end(), pm.group(1).strip())
                    break
        price = None
        if cut is not None:
            name, rest = body[: cut[0]].strip(), body[cut[1] :]
            written = cut[2]
            pm = _PRICE_AFTER.match(rest)
            if pm:
                price, rest = _money(pm.group("price")), rest[pm.end() :]
        else:
            pm = _PRICE_ANY.search(body)
            if pm is None:
                continue
            name, rest, written = body[: pm.start()].strip(), body[pm.end() :], None
            price = _money(pm.group("price"))
        phrases: tuple[str, ...] = ()
        cm = re.match(r"^\s*:\s*(?P<attrs>.*)$", rest)
        if cm:
            attrs = cm.group("attrs").strip().rstrip(".").strip()
            phrases = tuple(p.strip() for p in _COMMA_SPLIT.split(attrs) if p.strip())
        pid = written if written in products else resolve_product(name, products)
        out.append(ProductLine(start + (m.start("body")), name, pid, written, price, phrases, body))
    return out


def _title_before(text: str, products: Mapping[str, ShopProduct]) -> tuple[str | None, str]:
    """The longest catalog title that ``text`` ends with, or a product id as its last word (for
    ``<Title> has <n> in stock``); else ``(None, <the sentence fragment>)``."""
    idx = catalog_index(products)
    text = text.rstrip()
    frag = re.split(r"(?:[.!?:]\s+|\n|^\s*[-*•]\s*)", text)[-1].strip()
    words = list(re.finditer(r"\S+", text))
    if words and words[-1].group(0).strip("()\"'") in products:
        return words[-1].group(0).strip("()\"'"), frag
    for w in words[-idx.max_title_words :] if words else []:
        cand = text[w.start() :].strip().lower()
        if cand in idx.titles:
            return idx.titles[cand], text[w.start() :].strip()
        m = re.fullmatch(r"(.*?)\s*\(([^()]+)\)", text[w.start() :].strip())
        if m and m.group(2) in products:
            return m.group(2), m.group(0)
    return None, frag


def _fabricated(found: list, seen: set[str], pos: int, turn: int, name: str, text: str) -> None:
    """One ungrounded attribute claim per unknown product named in a message."""
    key = name.strip().lower()
    if key and key not in seen:
        seen.add(key)
        found.append(
            (pos, Claim(turn, "attribute", None, text.strip(), phrase=name.strip(), fabricated=True))
        )


def extract_claims_from_prose(traj: TrialRecord, products: Mapping[str, ShopProduct]) -> list[Claim]:
    """The deterministic extractor over every agent message (seed 002 §4.2 with our prose
    conventions), claims in message order. Phrases with no content token make no claim. A product
    line (or stock sentence) naming a product the catalog lacks yields one fabricated attribute
    claim; an action sentence naming one is an action claim on no product (so phantom)."""
    out: list[Claim] = []
    for t in traj.turns:
        msg = t.agent_message or ""
        if not msg.strip():
            continue
        seen: set[str] = set()
        found: list[tuple[int, Claim]] = []
        for line in product_lines(msg, products):
            if line.product_id is None:
                _fabricated(found, seen, line.start, t.index, line.name or (line.written_id or ""), line.text)
                continue
            if line.price is not None:
                claim = Claim(t.index, "numeric", line.product_id, line.text, kind="price", value=line.price)
                found.append((line.start, claim))
            for ph in line.phrases:
                if content_tokens(ph):
                    found.append((line.start, Claim(t.index, "attribute", line.product_id, ph, phrase=ph)))
        for rx, action in ((_ADDED, "added"), (_REMOVED, "removed"), (_UPDATED, "updated")):
            for m in rx.finditer(msg):
                pid = resolve_product(m.group("title").strip(), products)
                q = int(m.group("q")) if "q" in rx.groupindex else None
                found.append(
                    (m.start(), Claim(t.index, "action", pid, m.group(0), action=action, quantity=q))
                )
        for m in _TOTAL.finditer(msg):
            claim = Claim(t.index, "numeric", None, m.group(0), kind="cart_total", value=_money(m.group("x")))
            found.append((m.start(), claim))
        for m in _STOCK.finditer(msg):
            pid, name = _title_before(msg[: m.start()], products)
            text = f"{name} {m.group(0)}"
            if pid is None:
                _fabricated(found, seen, m.start(), t.index, name, text)
                continue
            found.append(
                (m.start(), Claim(t.index, "numeric", pid, text, kind="stock", value=float(m.group("n"))))
            )
        out += [c for _, c in sorted(found, key=lambda x: x[0])]  # stable: a line's price before its phrases
    return out


# ---------------------------------------------------------------------------------------------------
# rule checks: action and numeric channels


def _matches_action(c: Claim, e: ToolEvent, before: dict[str, int]) -> bool:
    if not e.ok or e.call.arguments.get("product_id") != c.product_id:
        return False
    name = e.call.name
    q_after = e.result.get("quantity")
    if c.action == "added":
        if name == "add_to_cart":
            return True
        return (
            name == "update_cart_quantity"
            and q_after is not None
            and int(q_after) > before.get(c.product_id, 0)
        )
    if c.action == "removed":
        if name == "remove_from_cart":
            return True
        qty = e.call.arguments.get("quantity", q_after)
        return name == "update_cart_quantity" and qty is not None and int(qty) == 0
    return name == "update_cart_quantity"


def check_action(c: Claim, traj: TrialRecord) -> ClaimCheck:
    """Phantom unless a successful call of the same family for that product exists in this turn or an
    earlier one (App. F ex. 5: later calls cannot support an earlier completion claim)."""
    events = traj.events
    if c.product_id is not None:
        for i, e in enumerate(events):
            if e.turn > c.turn:
                break
            if _matches_action(c, e, cart_before(events, i) if e.call.name == "update_cart_quantity" else {}):
                return ClaimCheck(c, "ok", False, f"{e.call.name} at turn {e.turn} round {e.round}")
    what = c.product_id or "an unknown product"
    return ClaimCheck(
        c, "phantom", True, f"no successful matching cart call for {what} at or before turn {c.turn}"
    )


def _price(products: Mapping[str, ShopProduct], pid: str, trial: str) -> float:
    if pid not in products:
        raise ValueError(
            f"trial {trial}: the replayed cart holds product {pid!r}, absent from the products mapping; "
            "pass the catalog the trial ran on"
        )
    return products[pid].price


def check_numeric(c: Claim, traj: TrialRecord, products: Mapping[str, ShopProduct]) -> ClaimCheck:
    """Prices within $0.01 of the catalog, stock equal to the catalog's (product or one variant or the
    variants' sum), cart totals within $0.01 of the replayed cart at the end of that turn."""
    v = float(c.value) if c.value is not None else float("nan")
    if c.kind == "cart_total":
        cart = cart_after_turn(traj, c.turn)
        total = round(sum(q * _price(products, p, traj.trial_id) for p, q in cart.items()), 2)
        ok = abs(v - total) <= MONEY_TOL + 1e-9
        return ClaimCheck(c, "correct" if ok else "wrong", not ok, f"replayed cart total ${total:.2f}")
    p = products.get(c.product_id) if c.product_id else None
    if p is None:
        return ClaimCheck(c, "wrong", True, "the catalog holds no such product")
    if c.kind == "price":
        ok = abs(v - p.price) <= MONEY_TOL + 1e-9
        return ClaimCheck(c, "correct" if ok else "wrong", not ok, f"catalog price ${p.price:.2f}")
    stocks = {p.stock} | {var.stock for var in p.variants}
    if p.variants:
        stocks.add(sum(var.stock for var in p.variants))
    ok = v in stocks
    return ClaimCheck(c, "correct" if ok else "wrong", not ok, f"catalog stock {sorted(stocks)}")


# ---------------------------------------------------------------------------------------------------
# deterministic attribute labeller


def _contradicted(seq: list[str], p: ShopProduct, idx: CatalogIndex) -> str | None:
    """A known value of one of the category's attribute keys (or variant size / colour) that this
    row does not hold, named by the phrase without the row's own value."""
    known = idx.values.get(p.category, {})
    row_vals: dict[str, list[tuple[str, ...]]] = {
        k: [tuple(tokens(v))] for k, v in p.attributes.items() if tokens(v)
    }
    for dim in ("size", "colour"):
        vals = [tuple(tokens(getattr(var, dim))) for var in p.variants if getattr(var, dim)]
        if vals:
            row_vals[dim] = vals
    for key in sorted(row_vals):
        own = row_vals[key]
        if key == "size" and "size" not in seq:
            continue  # bare size letters (S, M, L) are too ambiguous without the word "size"
        if any(_contains_seq(seq, o) for o in own):
            continue
        own_tokens = {t for o in own for t in o}
        for val in sorted(known.get(key, ())):
            if set(val) <= own_tokens or all(t in STOPWORDS for t in val):
                continue
            if _contains_seq(seq, val):
                return f"names {key}={' '.join(val)!r}; the row has {' / '.join(' '.join(o) for o in own)!r}"
    return None


def deterministic_attribute_label(c: Claim, products: Mapping[str, ShopProduct]) -> tuple[str, str]:
    """(label, evidence) by token support against the catalog row: all content tokens supported ->
    supported; a phrase naming another known value of one of the row's attribute keys ->
    contradicted; some tokens supported -> embellished; none -> ungrounded."""
    if c.fabricated or c.product_id not in products:
        return "ungrounded", "the catalog holds no such product"
    p = products[c.product_id]
    words = content_tokens(c.phrase or c.text)
    if not words:
        return "supported", "no content word to check"
    row = row_tokens(p)
    missing = [w for w in words if w not in row]
    if not missing:
        return "supported", "every content word is in the catalog row"
    why = _contradicted(tokens(c.phrase or c.text), p, catalog_index(products))
    if why:
        return "contradicted", why
    if len(missing) < len(words):
        return "embellished", f"unsupported by the row: {', '.join(missing)}"
    return "ungrounded", f"no content word is in the row: {', '.join(missing)}"


# ---------------------------------------------------------------------------------------------------
# shared readers of the record


def search_hits(result: dict[str, Any]) -> list[str] | None:
    """Product ids a tool result names, in order: a list of rows (search ``results``, cart ``items``),
    a nested row (``product``, ``variant``), or a top-level ``product_id`` (cart writes); None when the
    result is an error or names no product list at all (an empty list stays ``[]``)."""
    if not isinstance(result, dict) or "error" in result:
        return None
    found: list[str] | None = None
    for key in ("results", "products", "items", "lines", "cart"):
        v = result.get(key)
        if isinstance(v, list):
            found = (found or []) + [
                str(x["product_id"]) for x in v if isinstance(x, dict) and "product_id" in x
            ]
    for key in ("product", "variant"):
        v = result.get(key)
        if isinstance(v, dict) and "product_id" in v:
            found = (found or []) + [str(v["product_id"])]
    if found is None and "product_id" in result:
        found = [str(result["product_id"])]
    return found


def still_needed(traj: TrialRecord, turn: int, cart: Mapping[str, int] | None = None) -> set[str]:
    """Targets revealed at or before ``turn`` whose quantity in ``cart`` (default: the replayed cart
    at the start of that turn) is below the required quantity."""
    if cart is None:
        cart = cart_after_turn(traj, turn - 1) if turn > 0 else {}
    return {
        g.product_id
        for g in traj.scenario.items
        if traj.revealed_at.get(g.product_id, 10**9) <= turn and cart.get(g.product_id, 0) < g.quantity
    }


def presented_products(traj: TrialRecord, turn: int, products: Mapping[str, ShopProduct]) -> list[str]:
    """Products the agent's message at ``turn`` presents, in order of first mention: convention
    product lines, plus catalog products seen in tool results so far whose title or id the message
    names (free-form prose)."""
    t = traj.turns[turn]
    msg = t.agent_message or ""
    if not msg.strip():
        return []
    pos: dict[str, int] = {}
    for line in product_lines(msg, products):
        if line.product_id is not None:
            pos.setdefault(line.product_id, line.start)
    low = msg.lower()
    seen: set[str] = set()
    for e in traj.events:
        if e.turn > turn:
            break
        seen.update(search_hits(e.result) or [])
    for pid in sorted(seen - set(pos)):
        p = products.get(pid)
        if p is None:
            continue
        hits = [i for i in (low.find(p.title.lower()), msg.find(pid)) if i >= 0]
        if hits:
            pos[pid] = min(hits)
    return sorted(pos, key=lambda k: (pos[k], k))
