"""Shopping queries generated from a catalog (our stand-in for the paper's ESCI query backbone).

The paper starts from "97,227 normalized US shopping queries" (B.2) tagged along two dimensions,
"retail vertical (11 categories) and shopping mission (6 categories)" (B.2 step 1). The project ships
no ESCI data, so :func:`generate_queries` writes shopping queries from seed products with templates
per mission (the six mission framings of B.3.1: "undirected browsing, repeat/replenishment
purchases, problem-driven search, gift/event shopping, compatibility/replacement needs, and
feature-constrained filtering"), drawn in the Table 11 backbone proportions.

The template only proposes wording. Tags come from the paper's rule: "Mission type is assigned by
intent-pattern matching against query text and top product titles/brands" (Table 11), i.e.
:func:`keywords.tag_query` on the query and its top retrieved products, so a template's intended
mission and the tagged one can differ, as they would for real queries.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from ..core import Product, Query
from ..core import taxonomy as T
from .keywords import VERTICAL_KEYWORDS, match_form, normalize_query, tag_query

# Table 11 backbone counts: the mix of templates we draw from
MISSION_WEIGHTS = {
    "Broad Browse": 32889, "Replenishment & Repeat": 20166, "Problem Solution": 14533,
    "Compatibility & Replacement": 9807, "Gift & Event": 12386, "Feature Constrained": 7446,
}  # fmt: skip

# (template, where it applies): "any", "consumable" (a refillable/used-up product), "noise" (the product
# states a noise level), "outdoor" (waterproofing matters), "device" (pairs with phones and laptops),
# "durable" (not consumable: has replaceable parts)
TEMPLATES: dict[str, tuple[tuple[str, str], ...]] = {
    "Gift & Event": (
        ("{occasion} gift for {audience} {type}", "any"), ("{type} gift for {audience}", "any"),
        ("{type} {occasion} gift", "any"), ("{occasion} {type} for {audience}", "any"),
        ("{type} gift set", "any"),
    ),
    "Replenishment & Repeat": (
        ("{type} refill pack bulk", "consumable"), ("{type} bulk", "consumable"),
        ("{brand} {type} value pack", "consumable"), ("{type} pack of {n}", "consumable"),
        ("{type} {n} count", "consumable"), ("{type} family size", "consumable"),
    ),
    "Problem Solution": (
        ("best quiet {type}", "noise"), ("best {type} for {problem}", "any"), ("waterproof {type}", "outdoor"),
        ("{type} for {problem}", "any"), ("best {type}", "any"),
    ),
    "Compatibility & Replacement": (
        ("replacement {part} compatible with {brand} {type}", "durable"), ("{brand} {type} replacement {part}", "durable"),
        ("{type} compatible with {device}", "device"), ("universal {part} for {type}", "durable"),
        ("{part} adapter for {device}", "device"),
    ),
    "Feature Constrained": (
        ("wireless {type} compact", "device"), ("{feature} {type}", "any"), ("{feature} {type} {feature2}", "any"),
        ("{type} {feature}", "any"),
    ),
    "Broad Browse": (
        ("{type}", "any"), ("{color} {type}", "any"), ("{type} for {audience2}", "any"), ("{brand} {type}", "any"),
        ("{style} {type}", "any"),
    ),
}  # fmt: skip

AUDIENCES = ("mom", "dad", "her", "him", "kids", "teens", "grandma", "grandpa", "coworkers", "teacher",
             "a friend")  # fmt: skip
AUDIENCES_BROWSE = ("men", "women", "kids", "teens", "toddlers", "seniors")
OCCASIONS: dict[str, tuple[str, ...]] = {  # occasion -> who it is for (empty: anyone)
    "birthday": (), "christmas": (), "graduation": (), "housewarming": (), "anniversary": ("her", "him", "wife", "husband"),
    "wedding": ("the couple", "bride", "groom"), "baby shower": ("new parents", "mom to be"),
    "valentines day": ("her", "him", "girlfriend", "boyfriend"), "mothers day": ("mom", "grandma"),
    "fathers day": ("dad", "grandpa"),
}  # fmt: skip
STYLES = ("cute", "cool", "aesthetic", "cheap", "modern")
DEVICES = ("iphone 15", "samsung galaxy", "macbook", "ipad", "nintendo switch", "pixel phone")

PARTS: dict[str, tuple[str, ...]] = {
    "Toys & Games": ("pieces", "batteries", "remote", "storage case"),
    "Electronics": ("charger", "usb c cable", "ear tips", "battery", "charging case", "remote"),
    "Tools & Automotive": ("battery", "blades", "drill bits", "charger", "hose"),
    "Home & Kitchen": ("filter", "blade", "lid", "brush roll", "carafe", "gasket"),
    "Apparel & Accessories": ("laces", "insoles", "buckle", "strap", "zipper pull"),
    "Pet & Baby": ("bottle nipples", "stroller wheels", "filter cartridge", "cover"),
    "General Merchandise": ("refill", "bulbs", "wicks", "batteries"),
    "Sports & Outdoors": ("pump", "tent poles", "bike tube", "grip tape"),
    "Office & School": ("ink cartridge", "refills", "staples", "parts"),
    "Beauty & Health": ("brush heads", "blades", "attachments", "refills"),
    "Books & Media": ("case", "dust jacket", "sleeves"),
}
PROBLEMS: dict[str, tuple[str, ...]] = {
    "Toys & Games": ("toddlers", "road trips", "rainy days"),
    "Electronics": ("working out", "travel", "small ears", "gaming"),
    "Tools & Automotive": ("beginners", "tight spaces", "rust", "cold weather"),
    "Home & Kitchen": ("pet hair", "small spaces", "hardwood floors", "stains"),
    "Apparel & Accessories": ("rain", "cold weather", "flat feet", "travel"),
    "Pet & Baby": ("sensitive skin", "picky eaters", "shedding", "travel"),
    "General Merchandise": ("kids lunches", "travel", "odor", "power outages"),
    "Sports & Outdoors": ("beginners", "knee pain", "small spaces", "rain"),
    "Office & School": ("left handed", "small desks", "back pain", "smudging"),
    "Beauty & Health": ("sensitive skin", "dry skin", "acne", "frizz"),
    "Books & Media": ("beginners", "kids", "book clubs"),
}
FEATURES: dict[str, tuple[str, ...]] = {
    "Toys & Games": ("rechargeable", "portable", "compact", "eco friendly"),
    "Electronics": ("wireless", "portable", "rechargeable", "compact"),
    "Tools & Automotive": ("cordless", "rechargeable", "compact", "portable"),
    "Home & Kitchen": ("compact", "foldable", "cordless", "lightweight", "bpa free"),
    "Apparel & Accessories": ("organic", "lightweight", "packable", "hypoallergenic"),
    "Pet & Baby": ("bpa free", "organic", "hypoallergenic", "lightweight", "fragrance free"),
    "General Merchandise": ("organic", "gluten free", "fragrance free", "compact"),
    "Sports & Outdoors": ("lightweight", "portable", "foldable", "compact"),
    "Office & School": ("compact", "wireless", "portable", "eco friendly"),
    "Beauty & Health": ("fragrance free", "hypoallergenic", "organic", "travel size"),
    "Books & Media": ("large print", "illustrated", "portable"),
}
_GENERIC_PARTS = ("parts", "accessories")
# parts by a word of the product type (first match wins); else the domain's PARTS
PARTS_BY_WORD: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("vacuum", ("filter", "brush roll", "battery")), ("fryer", ("basket", "crisper tray")),
    ("blender", ("blade", "jar", "gasket")), ("coffee", ("carafe", "filter")), ("stroller", ("wheels", "canopy")),
    ("bottles", ("nipples",)), ("pacifier", ("clip",)), ("drill", ("battery", "charger", "drill bits")),
    ("saw", ("blade",)), ("headphones", ("ear pads", "cable")), ("earbuds", ("ear tips", "charging case")),
    ("charger", ("usb c cable",)), ("keyboard", ("keycaps", "usb receiver")), ("mouse", ("usb receiver",)),
    ("watch", ("band", "charger")), ("toothbrush", ("brush heads",)), ("razor", ("blades",)),
    ("printer", ("ink cartridge",)), ("filter", ("filter cartridge", "sponge")), ("tent", ("tent poles", "stakes")),
    ("helmet", ("pads", "chin strap")), ("treadmill", ("belt", "safety key")), ("shoes", ("laces", "insoles")),
    ("boots", ("laces", "insoles")), ("backpack", ("straps", "zipper pull")), ("sunglasses", ("lenses", "case")),
    ("collar", ("buckle",)), ("rc", ("battery", "remote")), ("lamp", ("bulb", "shade")), ("pan", ("lid",)),
    ("knife", ("sharpener",)), ("hammer", ("handle", "grip")), ("screwdriver", ("bits",)),
    ("umbrella", ("canopy",)), ("flashlight", ("battery",)), ("chair", ("casters", "cushion")),
    ("monitor", ("stand", "power cord")), ("speaker", ("charging cable",)), ("webcam", ("mount",)),
    ("inflator", ("nozzle", "hose")), ("vac", ("filter", "hose")), ("wiper", ("refills",)), ("desk", ("crossbar",)),
    ("sofa", ("cushion covers", "legs")), ("bag", ("shoulder strap",)), ("wallet", ("zipper",)),
    ("dumbbells", ("plates", "handle")), ("rod", ("reel", "line")), ("tree", ("perch", "scratching post")),
    ("dryer", ("diffuser", "nozzle")), ("calculator", ("battery", "cover")), ("stapler", ("staples",)),
)  # fmt: skip
_HEAD = re.compile(r"[,(\[|:;]| - ")
CONSUMABLE_WORDS = (
    "treats", "snack", "snacks", "puffs", "litter", "cream", "balm", "wipes", "bars", "bar", "cookies", "crackers",
    "mix", "chocolate", "tea", "coffee", "beans", "candle", "batteries", "bags", "pens", "markers", "notebook", "notes",
    "pencils", "shampoo", "lotion", "moisturizer", "sunscreen", "serum", "mascara", "lipstick", "sponges",
    "gloves", "bulbs", "blades", "filter", "refill", "diaper", "diapers", "pods", "paper", "ink", "tape",
    "balloons", "food", "vitamins", "supplement", "soap", "detergent", "toothpaste", "razor", "staples",
)  # fmt: skip
# free_of values and features written as shoppers type them
_FREE_WORDS = {"peanut": "peanut free", "gluten": "gluten free", "fragrance": "fragrance free",
               "lanolin": "lanolin free", "latex": "latex free", "bpa": "bpa free"}  # fmt: skip
_FEATURE_WORDS = {"organic": "organic", "compact": "compact", "foldable": "foldable", "packable": "packable",
                  "hypoallergenic": "hypoallergenic", "eco": "eco friendly", "recycled": "recycled",
                  "ergonomic": "ergonomic", "smart-home": "smart"}  # fmt: skip


def _applies(where: str, p: Product, kind: str) -> bool:
    if where == "any":
        return True
    if where == "consumable":
        return bool(kind) and kind.split()[-1] in CONSUMABLE_WORDS  # the head noun: not "coffee maker"
    if where == "noise":
        return "noise" in p.attributes
    if where == "outdoor":
        return p.domain in ("Apparel & Accessories", "Electronics", "Sports & Outdoors", "Tools & Automotive")
    if where == "device":
        return p.domain == "Electronics"
    if where == "durable":
        return not _applies("consumable", p, kind)
    raise ValueError(where)


def _parts(kind: str, domain: str) -> tuple[str, ...]:
    words = kind.split()
    for word, parts in PARTS_BY_WORD:
        if word in words:
            return parts
    return PARTS[domain] + _GENERIC_PARTS


def _features_of(p: Product) -> list[str]:
    """Feature words this product supports (so a feature-constrained query has real matches)."""
    out = [_FREE_WORDS[v] for v in p.attributes.get("free_of", []) if v in _FREE_WORDS]
    out += [_FEATURE_WORDS[v] for v in p.attributes.get("features", []) if v in _FEATURE_WORDS]
    if "lightweight" in p.attributes.get("size", []):
        out.append("lightweight")
    return out


def product_type(p: Product) -> str:
    """The short product noun a query names: ``attributes["product_type"]`` when the catalog knows it
    (the synthetic one does); else the longest vertical keyword in the title (``"mascara"``); else the
    last two words of the title's head (before the first comma or bracket), brand words dropped."""
    known = p.attributes.get("product_type")
    if known:
        return normalize_query(known[0])
    title = match_form(p.title)
    best = ""
    for kws in VERTICAL_KEYWORDS.values():
        for kw in kws:
            form = match_form(kw)
            if len(form) > len(best) and re.search(rf"(?<!\w){re.escape(form)}(?:es|s)?(?!\w)", title):
                best = form
    if best:
        return best
    head = _HEAD.split(p.title, maxsplit=1)[0]
    brand = set(normalize_query(p.brand).split())
    words = [w for w in normalize_query(head).split() if w not in brand and not w.isdigit()]
    return " ".join(words[-2:]) or normalize_query(p.title)


def _fill(rng: random.Random, mission: str, p: Product) -> str | None:
    dom = p.domain if p.domain in PARTS else T.FALLBACK_VERTICAL
    kind = product_type(p)
    options = [t for t, where in TEMPLATES[mission] if _applies(where, p, kind)]
    if not options:
        return None
    feats = _features_of(p) or list(FEATURES[dom])
    f1 = rng.choice(feats)
    occasion = rng.choice(list(OCCASIONS))
    slots = {
        "type": kind,
        "brand": normalize_query(p.brand),
        "color": normalize_query(p.color) or "black",
        "occasion": occasion,
        "audience": rng.choice(OCCASIONS[occasion] or AUDIENCES),
        "audience2": rng.choice(AUDIENCES_BROWSE),
        "style": rng.choice(STYLES),
        "problem": rng.choice(PROBLEMS[dom]),
        "part": rng.choice(_parts(kind, dom)),
        "device": rng.choice(DEVICES),
        "feature": f1,
        "feature2": rng.choice([f for f in FEATURES[dom] if f != f1] or [f1]),
        "n": rng.choice((2, 3, 4, 6, 12, 24, 36, 48)),
    }
    return rng.choice(options).format(**slots)


def generate_queries(
    products: Sequence[Product],
    n: int,
    seed: int = 0,
    index=None,
    k_tag: int = 3,
) -> list[Query]:
    """``n`` distinct normalized shopping queries (fewer if the catalog cannot yield that many), ids
    ``q-00000``…, each with the ``seed_product_id`` it was written from, tagged with
    :func:`keywords.tag_query` on the query and its top ``k_tag`` retrieved products (B.3.1).

    ``index`` is an :class:`~shopbench.catalog.retrieval.EvidenceIndex` over ``products`` (built
    here, BM25, when omitted)."""
    if not products:
        raise ValueError("generate_queries needs a non-empty catalog")
    rng = random.Random(seed)
    missions = list(MISSION_WEIGHTS)
    weights = [MISSION_WEIGHTS[m] for m in missions]
    seen: set[str] = set()
    drafts: list[tuple[str, str]] = []  # (query text, seed product id)
    attempts = 0
    while len(drafts) < n and attempts < 50 * max(n, 1):
        attempts += 1
        p = products[rng.randrange(len(products))]
        mission = rng.choices(missions, weights=weights, k=1)[0]
        text = normalize_query(_fill(rng, mission, p) or "")
        if text and text not in seen:
            seen.add(text)
            drafts.append((text, p.product_id))
    if index is None:
        from .retrieval import EvidenceIndex

        index = EvidenceIndex(products)
    hits = index.search_many([t for t, _ in drafts], k=k_tag)
    out: list[Query] = []
    for i, ((text, pid), h) in enumerate(zip(drafts, hits, strict=True)):
        vertical, mission = tag_query(text, [index.by_id[x] for x, _ in h], k=k_tag)
        out.append(Query(query_id=f"q-{i:05d}", query=text, vertical=vertical, mission=mission,
                         source="synthetic", seed_product_id=pid))  # fmt: skip
    return out
