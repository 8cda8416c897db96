"""Keyword-hit tagging of queries and products (seed 000, Appendix B.3.1).

Retail vertical: "Each query is assigned to one vertical by a keyword-hit counting rule
(_pick_rule() in the released code): the assignment function concatenates the normalized query
text with the top candidate product titles and brands, then counts the number of keyword hits for
each vertical's keyword list. The vertical with the most hits wins; ties are broken by list order,
and if no keyword matches the query falls back to General Merchandise."

Shopping mission: "Assignment uses the same _pick_rule() keyword-hit counting mechanism as retail
verticals, applied to intent-indicative keyword lists. [...] The fallback category (no keyword
hits) is Broad Browse."

The paper's full lists ("10–19 terms per vertical", "7–12 terms per mission type", in the released
``v2_taxonomy.py``) are not in our copy. The lists below are ours; they contain every
representative keyword the paper names, have the stated sizes, and follow the order of
``taxonomy.VERTICALS`` / ``taxonomy.MISSIONS`` (which therefore breaks ties). "The lists are
intentionally broad rather than exhaustive: common category-indicative terms are sufficient for
coarse coverage reporting, since the taxonomy serves as an auditing tool rather than a fine-grained
classifier."

Matching details (ours): text and keywords are normalized with :func:`normalize_query` and hyphens
count as spaces (``air-fryer`` hits ``air fryer``); a keyword hits on word/phrase boundaries and
also in its plural (``+s`` / ``+es``), so ``charger`` hits ``chargers`` but ``book`` does not hit
``notebook``; every occurrence counts (one hit per non-overlapping occurrence, longest keyword
first, so ``air fryer`` and a list that also held ``fryer`` would count once).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..core import taxonomy as T

# ---- retail verticals (Table 10; 10–19 terms each, B.3.1) --------------------------------------
VERTICAL_KEYWORDS: dict[str, list[str]] = {
    "Toys & Games": [
        "toy", "lego", "puzzle", "board game", "card game", "doll", "dollhouse", "action figure",
        "building blocks", "plush", "stuffed animal", "playset", "play set", "rc car", "jigsaw", "nerf",
        "stem kit", "kids craft",
    ],
    "Electronics": [
        "usb", "charger", "headphones", "earbuds", "bluetooth", "speaker", "hdmi", "laptop", "phone case",
        "power bank", "keyboard", "mouse", "monitor", "webcam", "smart watch", "tablet", "smartphone",
        "router", "camera",
    ],
    "Tools & Automotive": [
        "drill", "wrench", "screwdriver", "socket set", "tool", "hammer", "saw", "car", "truck", "tire",
        "wiper", "motor oil", "headlight", "jumper cables", "ratchet", "pliers", "tape measure", "garage",
        "motorcycle",
    ],
    "Home & Kitchen": [
        "kitchen", "vacuum", "air fryer", "cookware", "frying pan", "knife set", "blender", "coffee maker",
        "bedding", "sheets", "pillow", "towel", "curtain", "rug", "mug", "lamp", "sofa", "throw blanket",
        "furniture",
    ],
    "Apparel & Accessories": [
        "shirt", "shoes", "backpack", "dress", "jacket", "hoodie", "socks", "jeans", "sneakers", "boots",
        "hat", "sweater", "leggings", "handbag", "wallet", "belt", "sunglasses", "watch", "costume",
    ],
    "Pet & Baby": [
        "dog", "baby", "stroller", "cat", "diaper", "pet", "puppy", "kitten", "litter", "leash", "collar",
        "crib", "pacifier", "teether", "bib", "aquarium", "infant", "toddler",
    ],
    "General Merchandise": [
        "snack", "candy", "cookies", "crackers", "granola", "coffee beans", "tea", "chocolate", "gift card",
        "party supplies", "sewing kit", "candle", "batteries", "umbrella", "trash bags", "flashlight",
        "groceries",
    ],
    "Sports & Outdoors": [
        "yoga", "camping", "tent", "bike", "fishing", "golf", "dumbbell", "water bottle", "hiking",
        "treadmill", "kayak", "basketball", "soccer", "tennis", "fitness", "sleeping bag", "outdoor", "gym",
    ],
    "Office & School": [
        "pen", "pencil", "notebook", "paper", "printer", "ink", "stapler", "desk", "office", "school",
        "binder", "marker", "calculator", "folder", "planner", "sticky notes", "workbook",
    ],
    "Beauty & Health": [
        "shampoo", "lotion", "makeup", "lipstick", "moisturizer", "serum", "sunscreen", "vitamin",
        "supplement", "toothbrush", "razor", "nail polish", "perfume", "hair dryer", "face mask", "skin care",
        "conditioner", "mascara", "deodorant",
    ],
    "Books & Media": [
        "book", "vinyl", "dvd", "novel", "paperback", "hardcover", "blu ray", "audio cd", "audiobook",
        "comic", "magazine", "album", "cookbook", "biography",
    ],
}  # fmt: skip

# ---- shopping missions (Table 11; 7–12 terms each, B.3.1) ---------------------------------------
MISSION_KEYWORDS: dict[str, list[str]] = {
    "Broad Browse": [
        "ideas", "cute", "cool", "aesthetic", "for women", "for men", "for kids", "variety", "collection",
        "deals", "cheap", "assortment",
    ],
    "Replenishment & Repeat": [
        "bulk", "refill", "pods", "value pack", "multipack", "count", "restock", "family size", "case of",
        "pack of", "supply", "subscription",
    ],
    "Problem Solution": [
        "best", "quiet", "waterproof", "relief", "remover", "repair", "odor", "stain", "non slip", "pain",
        "anti", "proof",
    ],
    "Compatibility & Replacement": [
        "compatible", "replacement", "adapter", "fits", "universal", "spare", "oem", "cartridge", "filter",
        "parts", "compatibility",
    ],
    "Gift & Event": [
        "gift", "birthday", "wedding", "christmas", "anniversary", "party", "holiday", "valentine",
        "graduation", "baby shower", "mothers day", "fathers day",
    ],
    "Feature Constrained": [
        "wireless", "organic", "compact", "portable", "lightweight", "foldable", "rechargeable",
        "fragrance free", "hypoallergenic", "gluten free", "bpa free", "eco friendly",
    ],
}  # fmt: skip

assert list(VERTICAL_KEYWORDS) == T.VERTICALS and list(MISSION_KEYWORDS) == T.MISSIONS

# ---- normalization ------------------------------------------------------------------------------
_QUOTES = str.maketrans({"“": '"', "”": '"', "″": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "‑": "-"})
_DROP = re.compile(r"[^\w\s\-\".]|_")  # keep letters, digits, '-', '"' (inches) and '.' (decimals)
_LONE_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")  # a '.' that is not a decimal point
_LONE_DASH = re.compile(r"(?<!\w)-+|-+(?!\w)")  # a dash that does not join two word characters
_SPACES = re.compile(r"\s+")


def normalize_query(text: str) -> str:
    """Lowercase; drop punctuation except the meaningful ``-`` (inside words, ``t-shirt``), ``"`` (inches,
    ``26"``) and ``.`` (decimals, ``4.0``); apostrophes vanish (``men's`` -> ``mens``); collapse
    whitespace. Idempotent: ``normalize_query(normalize_query(t)) == normalize_query(t)``."""
    t = unicodedata.normalize("NFKC", str(text)).translate(_QUOTES).lower()
    t = t.replace("'", "")  # men's -> mens, mother's day -> mothers day
    t = _DROP.sub(" ", t)
    t = _LONE_DOT.sub(" ", t)
    t = _LONE_DASH.sub(" ", t)
    return _SPACES.sub(" ", t).strip()


def match_form(text: str) -> str:
    """The form keyword matching works on: normalized, hyphens and quotes as spaces."""
    return _SPACES.sub(" ", normalize_query(text).replace("-", " ").replace('"', " ")).strip()


@lru_cache(maxsize=256)
def _compile(keywords: tuple[str, ...]) -> re.Pattern[str] | None:
    forms = sorted({match_form(k) for k in keywords if match_form(k)}, key=lambda k: (-len(k), k))
    if not forms:
        return None
    alt = "|".join(re.escape(k) for k in forms)
    return re.compile(rf"(?<![\w])(?:{alt})(?:es|s)?(?![\w])")


def pick_rule(text: str, keyword_lists: Mapping[str, Sequence[str]], fallback: str) -> str:
    """The paper's ``_pick_rule()`` (B.3.1): count the keyword hits of each list on the normalized text;
    "the [label] with the most hits wins; ties are broken by list order, and if no keyword matches"
    the text gets ``fallback``. ``keyword_lists`` is ordered (a dict keeps insertion order)."""
    form = match_form(text)
    best, best_hits = fallback, 0
    for label, kws in keyword_lists.items():
        pat = _compile(tuple(kws))
        hits = 0 if pat is None else len(pat.findall(form))
        if hits > best_hits:  # strictly more: an earlier list keeps a tie
            best, best_hits = label, hits
    return best


def tag_text(query: str, top_products: Iterable[Any] = (), k: int = 3) -> str:
    """The text both rules read: "the normalized query text [concatenated] with the top candidate
    product titles and brands" (B.3.1). ``top_products`` are ``Product``s (or objects with ``title`` and
    ``brand``) in rank order; the first ``k`` are used."""
    parts = [normalize_query(query)]
    for i, p in enumerate(top_products):
        if i >= k:
            break
        parts.append(normalize_query(getattr(p, "title", "") or ""))
        parts.append(normalize_query(getattr(p, "brand", "") or ""))
    return " ".join(x for x in parts if x)


def tag_query(query: Any, top_products: Iterable[Any] = (), k: int = 3) -> tuple[str, str]:
    """``(vertical, mission)`` of a query by :func:`pick_rule` on the query plus its top ``k`` candidate
    titles and brands: verticals fall back to General Merchandise, missions to Broad Browse (B.3.1).
    ``query`` is a string or a ``Query`` (its ``query`` text is used)."""
    q = getattr(query, "query", query)
    text = tag_text(q, top_products, k)
    return (
        pick_rule(text, VERTICAL_KEYWORDS, T.FALLBACK_VERTICAL),
        pick_rule(text, MISSION_KEYWORDS, T.FALLBACK_MISSION),
    )
