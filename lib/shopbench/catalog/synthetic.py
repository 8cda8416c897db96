"""A seeded synthetic evidence catalog in the shape of PACEShop's (seed 000, Appendix B.3.3, Table 13).

"The full released evidence catalog contains 4,460 public evidence records spanning 11 shopping
domains. Each record exposes human-readable product information extracted from public ESCI product
listings: product title, brand, color, bullet points, and description. Of these, 4,331 records
(97.1%) are product-listing only [...]. The remaining 129 records (2.9%) are review-augmented,
carrying the same product-listing fields plus public customer review snippets [...]. Every record
carries an explicit provenance flag" (B.3.3).

The project ships no ESCI data, so :func:`synthetic_catalog` invents listings with the same fields,
the Table 13 domain mix (``taxonomy.EVIDENCE_DOMAIN_COUNTS`` scaled to ``n_products``), ASIN-like
ids, log-normal prices per domain, and ``attributes`` that say which persona constraints
(``taxonomy.CONSTRAINTS``: ``attributes[spec.attribute]`` holds a ``spec.violating`` value) and
preferences (``taxonomy.PREFERENCES``: ``attributes["features"]``) a product violates or supports.
Retrieval, generators and judges read text, so every structured fact is also written in the title
or the bullets ("Merino Wool", "Fragrance-Free", "Whisper-Quiet 40 dB", "Contains small parts, not
for children under 3"); a violated constraint is always stated in the first bullets.

Extra attribute keys (ours, beyond the constraint/preference keys): ``product_type`` (the short noun
queries use, e.g. ``["stick vacuum"]``), ``free_of`` (violating values the listing explicitly rules
out, e.g. ``["peanut"]`` for "Peanut-Free") and ``weight_lbs``.

Deterministic: one ``random.Random(seed)``, fixed iteration orders, no global state.
"""

from __future__ import annotations

import math
import random
import string
from dataclasses import dataclass, field

from ..core import Product
from ..core import taxonomy as T

# ---- facets: constraint-relevant facts a product can violate or honour --------------------------


@dataclass(frozen=True)
class _Facet:
    key: str  # the attributes key (a ConstraintSpec.attribute)
    bad: str  # the violating value (a ConstraintSpec.violating value)
    good: tuple[str, ...]  # attribute values written when the product honours it ("" = none)
    bad_title: str
    good_title: str
    bad_bullet: str
    good_bullet: str
    free_of: bool = False  # honouring listings say "free of <bad>" (allergens, latex, BPA)
    good_features: tuple[str, ...] = ()
    p_bad: float = 0.22
    p_good: float = 0.5


FACETS: dict[str, _Facet] = {
    "peanut": _Facet("allergens", "peanut", (), "Peanut Butter", "Peanut-Free",
                     "Contains peanuts: made with real roasted peanut butter",
                     "Peanut-free recipe, made in a dedicated nut-free facility", free_of=True, p_bad=0.3),
    "gluten": _Facet("allergens", "gluten", (), "Whole Wheat", "Gluten-Free",
                     "Contains wheat (gluten); made with whole wheat flour",
                     "Certified gluten-free: no wheat, barley or rye", free_of=True, p_bad=0.3),
    "fragrance": _Facet("allergens", "fragrance", (), "Scented", "Fragrance-Free",
                        "Scented with added fragrance (parfum) for a fresh smell",
                        "Fragrance-free and dye-free formula, gentle on sensitive skin", free_of=True,
                        good_features=("hypoallergenic",), p_bad=0.3),
    "lanolin": _Facet("allergens", "lanolin", (), "Lanolin-Enriched", "Lanolin-Free",
                      "Enriched with lanolin for long-lasting moisture",
                      "Lanolin-free, plant-based formula", free_of=True),
    "latex": _Facet("materials", "latex", (), "Natural Latex", "Latex-Free",
                    "Made from natural rubber latex",
                    "Latex-free (nitrile and silicone), safe for latex allergies", free_of=True),
    "bpa": _Facet("materials", "bpa", (), "", "BPA-Free",
                  "Polycarbonate plastic body (contains BPA)",
                  "BPA-free, food-grade materials", free_of=True, p_bad=0.18),
    "noise": _Facet("noise", "loud", ("quiet",), "High-Power 85 dB", "Whisper-Quiet 40 dB",
                    "Powerful motor runs loud: about 85 dB at full power",
                    "Whisper-quiet operation at about 40 dB"),
    "dryclean": _Facet("maintenance", "dry-clean only", ("machine washable",), "", "Machine Washable",
                       "Care: dry-clean only, do not machine wash",
                       "Machine washable and easy to care for", good_features=("low-maintenance",)),
    "oversized": _Facet("size", "oversized", ("compact",), "Oversized", "Compact",
                        "Oversized, bulky footprint: needs plenty of floor or counter space",
                        "Compact, space-saving footprint for small spaces", good_features=("compact",)),
    "heavy": _Facet("size", "heavy", ("lightweight",), "", "Lightweight",
                    "Heavy build: weighs {w} lbs",
                    "Lightweight: weighs only {w} lbs"),
    "proprietary": _Facet("compatibility", "proprietary", ("universal",), "", "Universal",
                          "Proprietary design: works only with {brand} accessories and parts",
                          "Universal fit: works with standard accessories and parts from most brands"),
    "android": _Facet("compatibility", "android-only", ("iphone", "android"), "for Android", "iPhone & Android",
                      "Android only: the companion app is not available for iPhone (iOS)",
                      "Works with iPhone (iOS) and Android phones"),
    "fragile": _Facet("durability", "fragile", ("durable",), "", "Shatterproof",
                      "Delicate glass construction, fragile: handle with care",
                      "Durable, shatter-resistant build for everyday use"),
    "flimsy": _Facet("durability", "flimsy", ("heavy-duty",), "", "Heavy-Duty",
                     "Thin-gauge plastic construction, flimsy under heavy daily use",
                     "Heavy-duty reinforced construction built to last"),
    "smallparts": _Facet("safety_age", "small parts", ("3+",), "Ages 8+", "Ages 3+",
                         "WARNING: CHOKING HAZARD. Contains small parts, not for children under 3 years",
                         "Safe for ages 3+: no small parts, tested to ASTM F963 toy safety standards"),
}  # fmt: skip

# features (PreferenceSpec tags) -> (title word, bullet)
FEATURE_TEXT: dict[str, tuple[str, str]] = {
    "minimalist": ("Minimalist", "Minimalist design that fits any space"),
    "sleek": ("Sleek", "Sleek, modern profile"),
    "colorful": ("Colorful", "Bright, colorful design"),
    "easy-clean": ("Easy-Clean", "Easy to clean: wipes clean in seconds"),
    "dishwasher-safe": ("Dishwasher-Safe", "Dishwasher-safe removable parts"),
    "low-maintenance": ("Low-Maintenance", "Low-maintenance finish that resists smudges and wear"),
    "gift-box": ("Gift-Boxed", "Arrives in gift-ready packaging"),
    "ergonomic": ("Ergonomic", "Ergonomic shape for all-day comfort"),
    "high-performance": ("High-Performance", "High-performance build for demanding use"),
    "fast": ("Fast", "Fast, efficient performance"),
    "travel": ("Travel", "Travel-friendly size fits carry-on luggage"),
    "packable": ("Packable", "Packs down small into its own pouch"),
    "compact": ("Compact", "Compact footprint saves space"),
    "foldable": ("Foldable", "Folds flat for easy storage"),
    "premium": ("Premium", "Premium materials and finish"),
    "eco": ("Eco-Friendly", "Eco-conscious: plastic-free, recyclable packaging"),
    "recycled": ("Recycled", "Made with recycled materials"),
    "organic": ("Organic", "Made with certified organic ingredients and materials"),
    "hypoallergenic": ("Hypoallergenic", "Hypoallergenic and dermatologist tested"),
    "smart-home": ("Smart", "Works with Alexa and Google Home (smart-home ready)"),
}
# a violated fact rules out the features that would contradict it
_FEATURE_CONFLICTS: dict[str, tuple[str, ...]] = {
    "oversized": ("compact", "foldable", "packable", "travel"),
    "heavy": ("compact", "foldable", "packable", "travel"),
    "flimsy": ("premium", "high-performance"),
    "fragile": ("premium",),
    "fragrance": ("hypoallergenic",),
    "lanolin": ("hypoallergenic",),
    "latex": ("hypoallergenic",),
    "dryclean": ("easy-clean", "low-maintenance"),
    "bpa": ("eco",),
}
assert all(f in FEATURE_TEXT for p in T.PREFERENCES for f in p.features)


@dataclass(frozen=True)
class _Mat:
    phrase: str  # as written in the title, e.g. "Merino Wool"
    values: tuple[str, ...]  # attributes["materials"]
    weight: float = 1.0
    features: tuple[str, ...] = ()


def _m(phrase: str, *values: str, w: float = 1.0, feat: tuple[str, ...] = ()) -> _Mat:
    return _Mat(phrase, values, w, feat)


WOOL_KNIT = (
    _m("Merino Wool", "wool", w=1.2),
    _m("Cotton", "cotton"),
    _m("Organic Cotton", "cotton", feat=("organic",)),
    _m("Polyester Blend", "polyester"),
    _m("Acrylic", "acrylic", w=0.6),
    _m("Cashmere", "cashmere", w=0.4),
)
COTTONISH = (
    _m("Cotton", "cotton", w=1.4),
    _m("Organic Cotton", "cotton", feat=("organic",)),
    _m("Polyester", "polyester"),
    _m("Bamboo Viscose", "bamboo", w=0.5, feat=("eco",)),
)
LEATHERISH = (
    _m("Genuine Leather", "leather", w=1.2),
    _m("Canvas", "canvas"),
    _m("Nylon", "nylon"),
    _m("Recycled Polyester", "polyester", w=0.6, feat=("recycled",)),
)
SHOE_MATS = (
    _m("Leather", "leather"),
    _m("Breathable Mesh", "mesh"),
    _m("Canvas", "canvas"),
    _m("Polyester Knit", "polyester", w=0.7),
)
TEXTILE_HOME = (
    _m("Wool", "wool"),
    _m("Cotton", "cotton", w=1.3),
    _m("Polyester Microfiber", "polyester"),
    _m("Linen", "linen", w=0.6),
    _m("Jute", "jute", w=0.4, feat=("eco",)),
)
SOFA_MATS = (
    _m("Leather", "leather"),
    _m("Linen Blend", "linen"),
    _m("Polyester Velvet", "polyester"),
    _m("Cotton Twill", "cotton", w=0.6),
)
ACTIVE_MATS = (
    _m("Polyester", "polyester", w=1.2),
    _m("Nylon Spandex", "nylon"),
    _m("Cotton", "cotton"),
    _m("Merino Wool", "wool", w=0.5),
)
PLUSH_MATS = (
    _m("Soft Polyester", "polyester", w=1.3),
    _m("Organic Cotton", "cotton", feat=("organic",)),
    _m("Wool Felt", "wool", w=0.4),
)


@dataclass(frozen=True)
class _Type:
    name: str  # title noun phrase; contains a vertical keyword of keywords.py
    kind: str  # the short product type queries use
    facets: tuple[str, ...] = ()  # "heavy!" = the facet can only be violated (a sofa is never under 10 lbs)
    mats: tuple[_Mat, ...] = ()
    variants: tuple[str, ...] = ()
    pattern: str = ""  # media titles: "{work}: A Novel" (no brand prefix)
    price_x: float = 1.0  # price multiplier over the domain's log-normal


def _t(name, kind, facets=(), mats=(), variants=(), pattern="", price_x=1.0):
    return _Type(name, kind, tuple(facets), tuple(mats), tuple(variants), pattern, price_x)


@dataclass(frozen=True)
class _Domain:
    brands: tuple[str, ...]
    colors: tuple[str, ...]
    price: tuple[float, float]  # log-normal (mu, sigma) of the price in dollars
    features: tuple[str, ...]
    uses: tuple[str, ...]
    types: tuple[_Type, ...] = field(default_factory=tuple)


_BASIC_COLORS = ("Black", "White", "Gray", "Navy Blue", "Charcoal", "Beige", "Sage Green", "Dusty Rose")

DOMAINS: dict[str, _Domain] = {
    "Toys & Games": _Domain(
        brands=("Wobbleroo", "Kitebright", "Puzzlewick", "Tinkerfox", "Marblemoss", "Jollyhop", "Brickwell Toys",
                "Pipsqueak Lane", "Zigzag Otter", "Lumalark", "Cobble & Kite", "Twistle", "Starbuddy", "Hoppington",
                "Gigglefern", "Tumbleweave"),
        colors=("Multicolor", "Rainbow", "Red", "Blue", "Yellow", "Pink", "Green", "Purple"),
        price=(math.log(24), 0.6),
        features=("colorful", "gift-box", "eco", "recycled", "travel", "compact", "premium"),
        uses=("made for hours of imaginative play", "designed to build fine motor and problem-solving skills",
              "perfect for keeping kids busy on rainy afternoons", "made to bring the whole family to the table"),
        types=(
            _t("Building Blocks Set", "building blocks", ("smallparts", "bpa"), variants=("500 Pieces", "1000 Pieces", "250 Pieces")),
            _t("Jigsaw Puzzle", "jigsaw puzzle", ("smallparts", "flimsy"), variants=("1000 Pieces", "500 Pieces", "300 Pieces")),
            _t("Plush Stuffed Animal Toy", "stuffed animal", ("smallparts", "dryclean"), PLUSH_MATS, ("12 Inch", "18 Inch")),
            _t("Remote Control RC Car Toy", "rc car", ("noise", "flimsy", "smallparts", "proprietary"), price_x=1.5),
            _t("Wooden Dollhouse Playset", "dollhouse", ("smallparts", "oversized", "fragile", "heavy!"), price_x=3),
            _t("Family Board Game", "board game", ("smallparts",), variants=("2-6 Players", "2-4 Players")),
            _t("Coding Robot STEM Kit Toy", "stem kit", ("smallparts", "noise", "proprietary")),
            _t("Poseable Action Figure Toy", "action figure", ("smallparts", "bpa", "flimsy"), variants=("6 Inch", "12 Inch")),
            _t("Bath Toy Set", "bath toys", ("latex", "bpa", "smallparts")),
            _t("Magnetic Tiles Building Toy", "magnetic tiles", ("smallparts", "fragile"), variants=("60 Pieces", "100 Pieces")),
        ),
    ),
    "Electronics": _Domain(
        brands=("Voltaric", "Sonavie", "Pixelhaven", "Quantix", "Arcwave", "Lumetra", "Zephyron", "Nexiva", "Corevolt",
                "Auralink", "Byteforge", "Heliotek", "Ampora", "Glintech", "Kinetra", "Vireo Audio"),
        colors=("Black", "White", "Space Gray", "Silver", "Midnight Blue", "Graphite", "Rose Gold"),
        price=(math.log(38), 0.7),
        features=("sleek", "minimalist", "fast", "high-performance", "travel", "compact", "smart-home", "premium", "ergonomic"),
        uses=("built for everyday listening, charging and work", "made to keep your devices powered and connected",
              "an easy upgrade for a home office or dorm desk", "designed to pair in seconds and just work"),
        types=(
            _t("Over-Ear Bluetooth Headphones", "bluetooth headphones", ("android", "flimsy", "heavy"), price_x=1.5),
            _t("Bluetooth Earbuds with Charging Case", "bluetooth earbuds", ("android", "proprietary")),
            _t("USB-C Fast Wall Charger", "usb c charger", ("proprietary", "flimsy"), variants=("20W", "45W", "65W")),
            _t("Portable Power Bank", "power bank", ("heavy", "proprietary"), variants=("10000mAh", "20000mAh")),
            _t("Waterproof Bluetooth Speaker", "bluetooth speaker", ("android", "heavy", "fragile")),
            _t("Mechanical Gaming Keyboard", "mechanical keyboard", ("noise", "flimsy", "proprietary")),
            _t("Cordless Optical Mouse", "computer mouse", ("noise", "flimsy")),
            _t("IPS Computer Monitor", "computer monitor", ("oversized", "heavy!", "fragile"), variants=("24 Inch", "27 Inch", "32 Inch"), price_x=4),
            _t("1080p HD Webcam", "webcam", ("proprietary", "android")),
            _t("Smart Watch Fitness Tracker", "smart watch", ("android", "fragile"), price_x=2),
            _t("Laptop Cooling Pad", "laptop cooling pad", ("noise", "heavy")),
        ),
    ),
    "Tools & Automotive": _Domain(
        brands=("Ironvale", "Torqmaster", "Gritline", "Boltcraft", "Stonebridge Tools", "Roadwell", "Hexforge",
                "Trailmark Auto", "Anvilco", "Redline Garage", "Steelhart", "Copperjack", "Wrenchly", "Maxgrip",
                "Ridgeback Pro", "Forgemont"),
        colors=("Yellow", "Black", "Red", "Orange", "Gray", "Blue"),
        price=(math.log(34), 0.7),
        features=("high-performance", "ergonomic", "compact", "fast", "premium", "low-maintenance"),
        uses=("made for weekend projects and professional jobs alike", "a must-have for every garage and trunk",
              "designed to make quick work of repairs around the house", "built for the job site"),
        types=(
            _t("20V Cordless Drill Driver Kit", "cordless drill", ("noise", "heavy", "proprietary", "flimsy"), price_x=2),
            _t("Socket Set with Ratchet", "socket set", ("heavy", "flimsy"), variants=("40-Piece", "108-Piece")),
            _t("Precision Screwdriver Set", "screwdriver set", ("flimsy",), variants=("24-Piece", "60-Piece")),
            _t("Fiberglass Claw Hammer", "claw hammer", ("heavy", "flimsy"), variants=("16 oz", "20 oz")),
            _t("Corded Circular Saw", "circular saw", ("noise", "heavy!"), price_x=2),
            _t("Portable Tire Inflator for Car", "tire inflator", ("noise", "heavy", "proprietary")),
            _t("Windshield Wiper Blades for Car", "wiper blades", ("flimsy", "proprietary"), variants=("22 Inch", "26 Inch")),
            _t("LED Headlight Bulbs", "led headlight bulbs", ("proprietary", "fragile"), variants=("H11", "9005", "H4")),
            _t("Wet Dry Shop Vac for Garage", "shop vac", ("noise", "heavy!", "oversized"), price_x=2.5),
            _t("Nitrile Work Gloves for Garage", "work gloves", ("latex",), variants=("Large", "Medium")),
            _t("Car Seat Covers Full Set", "car seat covers", ("dryclean",), LEATHERISH),
        ),
    ),
    "Home & Kitchen": _Domain(
        brands=("Hearthly", "Maplecrest", "Kettlewood", "Linenfield", "Cozynest", "Brightloom", "Oakhollow",
                "Saltmarsh Home", "Velvetine", "Copperpot & Co", "Dwellwise", "Glasshaus", "Pebblebrook", "Nordhaven",
                "Sunmeadow Home", "Tidygrove"),
        colors=_BASIC_COLORS + ("Terracotta", "Ivory"),
        price=(math.log(35), 0.75),
        features=("minimalist", "sleek", "easy-clean", "dishwasher-safe", "low-maintenance", "compact", "foldable",
                  "smart-home", "premium", "eco", "hypoallergenic"),
        uses=("made to make everyday cooking and cleaning easier", "designed to bring warmth to any room",
              "made for small apartments and family homes alike", "designed for daily use"),
        types=(
            _t("Cordless Stick Vacuum", "stick vacuum", ("noise", "heavy", "proprietary"), price_x=4),
            _t("Digital Air Fryer", "air fryer", ("noise", "oversized", "bpa"), variants=("5.8 Qt", "4 Qt", "8 Qt"), price_x=2),
            _t("Countertop Blender", "countertop blender", ("noise", "fragile", "bpa"), price_x=2),
            _t("Programmable Coffee Maker", "coffee maker", ("noise", "fragile", "bpa"), variants=("12-Cup", "5-Cup")),
            _t("Nonstick Frying Pan", "frying pan", ("heavy", "flimsy"), variants=("10 Inch", "12 Inch")),
            _t("Chef Knife Set with Block", "knife set", ("flimsy", "heavy"), variants=("8-Piece", "15-Piece")),
            _t("Throw Blanket", "throw blanket", ("dryclean",), TEXTILE_HOME, ("50 x 60 Inch", "60 x 80 Inch")),
            _t("Area Rug", "area rug", ("dryclean", "oversized", "heavy!"), TEXTILE_HOME, ("5x7", "8x10", "3x5"), price_x=3),
            _t("Bed Sheets Set", "bed sheets", ("dryclean",), COTTONISH, ("Queen", "King", "Full", "Twin")),
            _t("Bed Pillow", "bed pillow", ("latex",), variants=("Queen", "King", "Standard")),
            _t("Loveseat Sofa", "loveseat sofa", ("oversized", "heavy!", "flimsy"), SOFA_MATS, price_x=12),
            _t("Ceramic Coffee Mug Set", "coffee mugs", ("fragile",), variants=("Set of 4", "Set of 6")),
            _t("Bath Towel Set", "bath towels", (), COTTONISH, ("6-Piece", "4-Piece")),
            _t("Reusable Kitchen Dish Gloves", "dish gloves", ("latex",)),
            _t("Bedside Table Lamp", "table lamp", ("fragile",)),
            _t("Blackout Curtains", "blackout curtains", ("dryclean",), TEXTILE_HOME, ("2 Panels", "84 Inch")),
        ),
    ),
    "Apparel & Accessories": _Domain(
        brands=("Threadwell", "Marlowe & Pine", "Northpeak", "Ashby Lane", "Kindred Knit", "Urbanfolk", "Saltwind",
                "Drift & Dune", "Harlow Row", "Everfield", "Juniper Row", "Coastline Supply", "Wrenfield",
                "Bramble & Bloom", "Stitchfox", "Foxmoor"),
        colors=_BASIC_COLORS + ("Olive", "Burgundy", "Camel", "Heather Gray"),
        price=(math.log(30), 0.6),
        features=("minimalist", "colorful", "packable", "travel", "premium", "eco", "recycled", "hypoallergenic",
                  "low-maintenance"),
        uses=("a wardrobe staple for work and weekends", "made to keep you comfortable from morning to night",
              "designed to layer easily in every season", "cut for an easy, relaxed fit"),
        types=(
            _t("Crew Neck Sweater", "sweater", ("dryclean",), WOOL_KNIT, ("Men's", "Women's")),
            _t("Classic Fit T-Shirt", "t-shirt", (), COTTONISH, ("Men's", "Women's", "Kids'")),
            _t("Pullover Hoodie", "hoodie", ("dryclean",), COTTONISH, ("Men's", "Women's", "Unisex")),
            _t("Moto Jacket", "jacket", ("dryclean", "heavy"), LEATHERISH, ("Men's", "Women's"), price_x=2.5),
            _t("Running Shoes Sneakers", "running shoes", ("heavy",), SHOE_MATS, ("Men's", "Women's")),
            _t("Chelsea Ankle Boots", "ankle boots", ("heavy",), SHOE_MATS, ("Men's", "Women's")),
            _t("Travel Backpack", "backpack", ("heavy", "flimsy"), LEATHERISH, ("25L", "35L")),
            _t("Crew Socks", "crew socks", (), WOOL_KNIT, ("6 Pairs", "3 Pairs")),
            _t("High Waist Leggings", "leggings", (), ACTIVE_MATS, ("Women's",)),
            _t("Bifold Wallet", "wallet", (), LEATHERISH, ("Men's",)),
            _t("Crossbody Handbag", "crossbody handbag", ("flimsy",), LEATHERISH),
            _t("Polarized Sunglasses", "polarized sunglasses", ("fragile", "flimsy")),
            _t("Knit Beanie Hat", "beanie hat", (), WOOL_KNIT),
            _t("Wrap Midi Dress", "wrap dress", ("dryclean",), COTTONISH, ("Women's",)),
            _t("Halloween Costume", "halloween costume", ("smallparts", "flimsy"), variants=("Kids'", "Adult")),
        ),
    ),
    "Pet & Baby": _Domain(
        brands=("Pawsome Co", "Tailwind Pets", "Bitsy Bee", "Snugglenest", "Little Acorn", "Furbloom", "Wigglepaw",
                "Cubby & Co", "Peapod Baby", "Barkwell", "Sproutmoss", "Mittenbelle", "Kitbury", "Lullabay", "Whiskerly",
                "Hushabye Lane"),
        colors=("White", "Gray", "Mint", "Blush Pink", "Sky Blue", "Oatmeal", "Black"),
        price=(math.log(22), 0.7),
        features=("easy-clean", "dishwasher-safe", "organic", "hypoallergenic", "travel", "foldable", "eco", "colorful"),
        uses=("made for busy parents and pet owners", "made to keep little ones and furry friends happy",
              "inspired by vets and pediatricians", "designed to make daily care routines simpler"),
        types=(
            _t("Dog Training Treats", "dog treats", ("peanut", "gluten"), variants=("16 oz", "8 oz")),
            _t("Baby Puffs Snack", "baby snacks", ("peanut", "gluten"), variants=("Pack of 6", "1.5 oz")),
            _t("Baby Stroller", "baby stroller", ("oversized", "heavy", "flimsy"), price_x=5),
            _t("Baby Pacifier", "pacifier", ("latex", "bpa"), variants=("0-6 Months", "6-18 Months")),
            _t("Anti-Colic Baby Bottle Set", "baby bottles", ("bpa", "fragile")),
            _t("Adjustable Dog Collar", "dog collar", ("flimsy",), LEATHERISH, ("Small", "Medium", "Large")),
            _t("Clumping Cat Litter", "cat litter", ("fragrance", "heavy"), variants=("20 lb", "40 lb")),
            _t("Cat Tree Tower", "cat tree", ("oversized", "flimsy", "heavy!"), price_x=2.5),
            _t("Baby Teether", "teether", ("bpa", "latex", "smallparts")),
            _t("Durable Dog Chew Bone", "dog chew", ("smallparts", "flimsy")),
            _t("Baby Diaper Rash Cream", "diaper cream", ("lanolin", "fragrance")),
            _t("Baby Nursing Balm", "nursing balm", ("lanolin", "fragrance")),
            _t("Aquarium Filter", "aquarium filter", ("noise", "proprietary"), variants=("10 Gallon", "30 Gallon")),
        ),
    ),
    "General Merchandise": _Domain(
        brands=("Pantrywise", "Goldleaf Market", "Honeycomb Basics", "Everyday Pantry", "Crispfield", "Harvest Lane",
                "Little Tin Co", "Maple & Mill", "Brightday", "Sundry House", "Parcelry", "Ember & Wick",
                "Oakbarrel Foods", "Glowbright", "Thriftwell", "Corner Pantry"),
        colors=("Assorted", "Natural", "Black", "Red", "Clear", "Gold"),
        price=(math.log(12), 0.6),
        features=("organic", "eco", "recycled", "gift-box", "travel", "compact", "premium"),
        uses=("a pantry and household staple", "great for lunches, road trips and the office",
              "stocked in homes across the country", "made to make everyday errands easier"),
        types=(
            _t("Chewy Granola Bars", "granola bars", ("peanut", "gluten"), variants=("Pack of 12", "18 Bars")),
            _t("Chocolate Chip Cookies", "cookies", ("peanut", "gluten"), variants=("13 oz", "Pack of 6")),
            _t("Cheddar Crackers", "crackers", ("gluten", "peanut"), variants=("10 oz", "Pack of 4")),
            _t("Trail Mix Snack Packs", "trail mix", ("peanut", "gluten"), variants=("24 Packs", "12 Packs")),
            _t("Milk Chocolate Candy Bar", "chocolate bar", ("peanut", "gluten"), variants=("3.5 oz", "Pack of 10")),
            _t("Green Tea Bags", "green tea", ("gluten",), variants=("100 Bags", "40 Bags")),
            _t("Whole Coffee Beans", "coffee beans", (), variants=("2 lb", "12 oz")),
            _t("Soy Wax Candle", "soy candle", ("fragrance", "fragile"), variants=("8 oz", "14 oz")),
            _t("Balloon Party Supplies Kit", "party balloons", ("latex", "smallparts!")),
            _t("Sewing Kit", "sewing kit", ("flimsy", "smallparts")),
            _t("AA Alkaline Batteries", "aa batteries", ("proprietary",), variants=("24 Count", "48 Count")),
            _t("Travel Umbrella", "travel umbrella", ("flimsy", "heavy")),
            _t("LED Tactical Flashlight", "led flashlight", ("proprietary", "heavy")),
            _t("Drawstring Trash Bags", "trash bags", ("fragrance", "flimsy"), variants=("13 Gallon", "30 Gallon")),
            _t("Reusable Grocery Tote Bags", "reusable tote bags", ("flimsy",), LEATHERISH),
        ),
    ),
    "Sports & Outdoors": _Domain(
        brands=("Summitline", "Trailhawk", "Ridgecrest Outdoors", "Peakform", "Riverstone", "Basecamp Co", "Stridewell",
                "Ironpeak Fitness", "Wildgrove", "Kestrel Outdoors", "Tidepool Sports", "Altura Gear", "Backcountry Lab",
                "Fieldmark", "Gritstone Athletics", "Cobalt Trail"),
        colors=("Black", "Forest Green", "Orange", "Slate Blue", "Sand", "Red", "Gray"),
        price=(math.log(36), 0.8),
        features=("packable", "travel", "foldable", "compact", "high-performance", "ergonomic", "recycled", "eco", "premium"),
        uses=("ready for the trail, the gym and the backyard", "built for weekend adventures",
              "made to help you train harder at home", "sized to fit into any gear bag"),
        types=(
            _t("Non-Slip Yoga Mat", "yoga mat", ("latex", "heavy"), variants=("6mm", "8mm")),
            _t("Adjustable Dumbbell Set", "adjustable dumbbells", ("heavy!", "oversized", "noise"), variants=("25 lb", "52.5 lb"), price_x=5),
            _t("Camping Tent", "camping tent", ("heavy", "flimsy", "oversized"), variants=("2 Person", "4 Person", "6 Person"), price_x=3),
            _t("Mummy Sleeping Bag", "sleeping bag", ("heavy",), ACTIVE_MATS),
            _t("Insulated Water Bottle", "water bottle", ("bpa", "fragile"), variants=("32 oz", "24 oz")),
            _t("Folding Treadmill", "folding treadmill", ("noise", "heavy!", "oversized"), price_x=10),
            _t("Fishing Rod and Reel Combo", "fishing rod", ("fragile", "flimsy")),
            _t("Bike Helmet", "bike helmet", ("flimsy", "heavy"), variants=("Adult", "Youth")),
            _t("Resistance Bands Set for Fitness", "resistance bands", ("latex",)),
            _t("Outdoor Camping Chair", "camping chair", ("heavy", "flimsy")),
            _t("Gym Duffel Bag", "gym bag", ("heavy",), LEATHERISH),
        ),
    ),
    "Office & School": _Domain(
        brands=("Inkwell & Co", "Papersmith", "Deskwise", "Quillmark", "Ledgerly", "Notable Goods", "Bindery Lane",
                "Classroom Co", "Graphite & Gray", "Stapleton Office", "Brightmark", "Foliohaus", "Scribewell",
                "Penrose Paper", "Tabbed", "Margin & Co"),
        colors=("Black", "Blue", "Assorted", "White", "Pastel", "Red"),
        price=(math.log(15), 0.8),
        features=("ergonomic", "minimalist", "colorful", "recycled", "eco", "compact", "premium"),
        uses=("made to keep the home office and classroom organized", "a back-to-school essential",
              "designed to make note-taking and planning easier", "built for daily desk work"),
        types=(
            _t("Gel Ink Pens", "gel pens", ("fragrance", "flimsy"), variants=("12 Count", "24 Count")),
            _t("Spiral Notebook", "spiral notebook", ("flimsy",), variants=("College Ruled", "Wide Ruled")),
            _t("All-in-One Inkjet Printer", "inkjet printer", ("noise", "proprietary", "heavy!", "oversized"), price_x=5),
            _t("Desktop Stapler", "stapler", ("flimsy", "noise")),
            _t("Ergonomic Office Chair", "office chair", ("heavy!", "oversized", "noise"), SOFA_MATS, price_x=8),
            _t("Standing Desk Converter", "standing desk", ("heavy!", "oversized", "flimsy"), price_x=8),
            _t("Dry Erase Markers", "dry erase markers", ("fragrance",), variants=("12 Count", "8 Count")),
            _t("Scientific Calculator", "scientific calculator", ("fragile", "proprietary")),
            _t("3-Ring Binder", "binder", ("flimsy",), variants=("1 Inch", "2 Inch")),
            _t("Colored Pencils for School", "colored pencils", ("smallparts", "fragile"), variants=("24 Colors", "48 Colors")),
            _t("Weekly Planner Notebook", "weekly planner", (), LEATHERISH),
        ),
    ),
    "Beauty & Health": _Domain(
        brands=("Dewbloom", "Lumiskin", "Purevella", "Silkroot", "Glowhaven", "Verdance", "Calmwater Botanicals",
                "Mossberry", "Aurelia Skin", "Haloleaf", "Softpetal", "Bareroot", "Oatlane", "Clearfield Labs",
                "Velourie", "Seabright Beauty"),
        colors=("Clear", "White", "Nude", "Berry", "Rose", "Natural"),
        price=(math.log(16), 0.5),
        features=("hypoallergenic", "organic", "eco", "travel", "premium", "gift-box"),
        uses=("made to fit easily into a morning routine", "gentle enough for everyday use",
              "made with skin-loving botanicals", "formulated to leave skin and hair feeling soft"),
        types=(
            _t("Daily Face Moisturizer", "face moisturizer", ("fragrance", "lanolin"), variants=("1.7 oz", "3.4 oz")),
            _t("Body Lotion", "body lotion", ("fragrance", "lanolin"), variants=("16 oz", "8 oz")),
            _t("Sulfate-Free Shampoo", "shampoo", ("fragrance",), variants=("12 oz", "24 oz")),
            _t("Satin Lipstick", "lipstick", ("lanolin", "fragrance")),
            _t("Mineral Sunscreen SPF 50", "mineral sunscreen", ("fragrance",), variants=("3 oz", "5 oz")),
            _t("Sonic Electric Toothbrush", "electric toothbrush", ("noise", "proprietary"), price_x=2.5),
            _t("Ionic Hair Dryer", "hair dryer", ("noise", "heavy"), price_x=2.5),
            _t("Vitamin C Face Serum", "vitamin c serum", ("fragrance",), variants=("1 oz",)),
            _t("Safety Razor", "safety razor", ("proprietary", "fragile")),
            _t("Makeup Sponge Set", "makeup sponges", ("latex",), variants=("4 Pieces", "6 Pieces")),
            _t("Lengthening Mascara", "mascara", ("lanolin", "fragrance")),
        ),
    ),
    "Books & Media": _Domain(
        brands=("Harrow & Finch Press", "Lanternfield Books", "Quayside Publishing", "Bluewillow Press", "Northgate Editions",
                "Copperleaf Media", "Riverbend Records", "Saltbox Press", "Greyhaven Studios", "Meadowlark Audio",
                "Inkstone Comics", "Brambleway Books", "Tallpine Press", "Foxglove Editions", "Oakmere Pictures",
                "Starling House"),
        colors=("", "", "Multicolor"),
        price=(math.log(15), 0.4),
        features=("gift-box", "premium", "colorful", "recycled"),
        uses=("a page-turner readers recommend to friends", "a favorite for book clubs and long weekends",
              "made for every collector's shelf", "loved by readers of all ages"),
        types=(
            _t("Novel", "novel", (), variants=("Paperback", "Hardcover"), pattern="{work}: A Novel"),
            _t("Cookbook", "cookbook", (), variants=("Hardcover", "Paperback"),
               pattern="The {cuisine} Cookbook: {n} Recipes for Every Season"),
            _t("Biography", "biography", (), variants=("Hardcover", "Paperback"), pattern="{person}: A Biography"),
            _t("Board Book", "board book", ("smallparts",), pattern="{work} (Board Book)"),
            _t("Graphic Novel", "graphic novel", (), pattern="{work}, Vol. {vol} (Graphic Novel)"),
            _t("Vinyl LP", "vinyl record", ("fragile",), pattern="{work} (Vinyl LP)"),
            _t("DVD", "dvd", ("fragile",), pattern="{work} (DVD)"),
            _t("Blu-ray", "blu-ray", ("fragile",), pattern="{work} [Blu-ray]"),
            _t("Audiobook", "audiobook", (), pattern="{work}: A Novel (Audiobook, Audio CD)"),
        ),
    ),
}  # fmt: skip

assert list(DOMAINS) == T.VERTICALS and all(len(d.brands) >= 15 for d in DOMAINS.values())

_WORK_ADJ = ("Hidden", "Last", "Silver", "Northern", "Broken", "Distant", "Lantern", "Winter", "Golden", "Salt",
             "Glass", "Wild", "Little", "Midnight", "Summer", "Iron", "Burning", "Lost", "Crimson", "Hollow")  # fmt: skip
_WORK_NOUN = ("Orchard", "Harbor", "Garden", "River", "Lighthouse", "Kingdom", "Cartographer", "Daughter", "Letters",
              "Station", "Archive", "Meridian", "Tide", "Compass", "Atlas", "Orchid", "Mountain", "House", "Sparrow",
              "Ferryman")  # fmt: skip
_CUISINES = (
    "Weeknight",
    "Sheet-Pan",
    "Mediterranean",
    "Plant-Based",
    "Slow Cooker",
    "Cast-Iron",
    "Sourdough",
)
_PEOPLE = ("Ada Marlow", "Theo Vance", "Juniper Hale", "Marcus Ellery", "Rosalind Crane", "Silas Orton",
           "Greta Lindqvist", "Ezra Pembrooke", "Nadia Solberg", "Oscar Whitlow")  # fmt: skip

_GENERIC_BULLETS = (
    "Backed by a 1-year limited warranty",
    "Designed and quality-tested by {brand}",
    "Thoughtful details for everyday use",
    "Satisfaction guaranteed: easy returns within 30 days",
    "Ships in frustration-free packaging",
)
_REVIEWS_BAD: dict[str, tuple[str, ...]] = {
    "noise": (
        "Works well but it is really loud on the high setting.",
        "Too noisy to use while the kids sleep.",
    ),
    "flimsy": ("Feels flimsy; a part cracked after a month.", "Cheap plastic, did not survive daily use."),
    "fragile": ("Arrived with a chip; more fragile than I expected.", "Be careful, it breaks easily."),
    "heavy": ("Heavier than it looks, hard to carry around.", "Solid but heavy to move."),
    "oversized": ("Much bigger than expected, takes up a lot of room.", "Did not fit our small apartment."),
    "fragrance": ("The scent is strong and lingers all day.", "Smells nice but too perfumed for me."),
    "lanolin": (
        "Rich and moisturizing; note that it has lanolin.",
        "Broke me out, I think it's the lanolin.",
    ),
    "latex": ("Good grip, but it is latex so not for allergies.", "Smells like rubber at first."),
    "proprietary": (
        "Annoying that it only works with the brand's own accessories.",
        "Needs the special cable.",
    ),
    "android": ("Couldn't install the app on my iPhone.", "Great with my Android phone."),
    "smallparts": ("Lots of tiny pieces, keep away from toddlers.", "Fun, but small parts go everywhere."),
    "peanut": ("Tastes great if you like peanut butter.", "Strong peanut flavor."),
    "gluten": ("Tasty and filling, whole wheat texture.", "Good crunch, classic wheat taste."),
    "bpa": ("Sturdy, but I wish it were BPA-free.",),
    "dryclean": ("Looks great but dry-clean only is a hassle.",),
}
_REVIEWS_GOOD: dict[str, tuple[str, ...]] = {
    "noise": ("Quiet enough to run while the baby naps.", "Barely hear it running."),
    "flimsy": ("Solid construction, holding up great.",),
    "fragile": ("Survived a couple of drops without a scratch.",),
    "heavy": ("Light and easy to carry.",),
    "oversized": ("Fits perfectly in a small space.",),
    "fragrance": ("No scent at all and it didn't irritate my sensitive skin.",),
    "lanolin": ("Gentle and no lanolin, which I'm allergic to.",),
    "latex": ("Latex-free, finally something I can use.",),
    "proprietary": ("Works with all my existing cables.",),
    "android": ("Works with both my iPhone and my partner's Android.",),
    "smallparts": ("Safe for my 3-year-old, no small pieces.",),
    "peanut": ("Safe for my son's peanut allergy, and tasty.",),
    "gluten": ("Great gluten-free option, doesn't taste like cardboard.",),
    "bpa": ("Glad it's BPA-free.",),
    "dryclean": ("Washes well and holds its shape.",),
}
_REVIEWS_GENERIC = (
    "Exactly as described, would buy again.", "Good value for the price.", "Arrived quickly and well packaged.",
    "Great quality for everyday use.", "My family loves it.", "Does the job, no complaints.",
    "Bought a second one as a gift.", "Color is true to the photos.", "Took a few days to get used to, now I love it.",
)  # fmt: skip

_ALNUM = string.digits + string.ascii_uppercase


def domain_counts(n_products: int) -> dict[str, int]:
    """Table 13 counts scaled to ``n_products`` by largest remainder (exact at 4,460)."""
    total = sum(T.EVIDENCE_DOMAIN_COUNTS.values())
    raw = {d: n_products * c / total for d, c in T.EVIDENCE_DOMAIN_COUNTS.items()}
    out = {d: int(math.floor(v)) for d, v in raw.items()}
    order = sorted(raw, key=lambda d: (-(raw[d] - out[d]), list(raw).index(d)))
    for d in order[: n_products - sum(out.values())]:
        out[d] += 1
    return out


def n_review_augmented(n_products: int) -> int:
    """``taxonomy.REVIEW_AUGMENTED`` (129 of 4,460, 2.9%) scaled to ``n_products``."""
    return round(n_products * T.REVIEW_AUGMENTED / sum(T.EVIDENCE_DOMAIN_COUNTS.values()))


def _asin(rng: random.Random, seen: set[str]) -> str:
    while True:
        pid = "B0" + "".join(rng.choice(_ALNUM) for _ in range(8))
        if pid not in seen:
            seen.add(pid)
            return pid


def _pick_mat(rng: random.Random, mats: tuple[_Mat, ...]) -> _Mat:
    return rng.choices(mats, weights=[m.weight for m in mats], k=1)[0]


def _media_title(rng: random.Random, ty: _Type) -> str:
    work = f"The {rng.choice(_WORK_ADJ)} {rng.choice(_WORK_NOUN)}"
    return ty.pattern.format(work=work, cuisine=rng.choice(_CUISINES), n=rng.choice((75, 100, 125, 150)),
                             person=rng.choice(_PEOPLE), vol=rng.randint(1, 6))  # fmt: skip


def _product(rng: random.Random, domain: str, spec: _Domain, pid: str) -> tuple[Product, tuple, tuple]:
    """One listing, plus the facets it violates and honours (the review writer uses them)."""
    ty = rng.choice(spec.types)
    brand = rng.choice(spec.brands)
    color = rng.choice(spec.colors)
    attrs: dict[str, list[str]] = {"product_type": [ty.kind]}

    def add(key: str, *values: str) -> None:
        for v in values:
            lst = attrs.setdefault(key, [])
            if v and v not in lst:
                lst.append(v)

    title_bits: list[str] = []
    bad_bullets: list[str] = []
    good_bullets: list[str] = []
    features: list[str] = []
    blocked: set[str] = set()
    bad_facets: list[str] = []
    good_facets: list[str] = []
    fmt = {"brand": brand}
    for spec_name in ty.facets:
        name = spec_name.rstrip("!")
        f = FACETS[name]
        p_bad, p_good = (0.55, 0.0) if spec_name.endswith("!") else (f.p_bad, f.p_good)
        if name == "heavy" and "oversized" in bad_facets:
            p_bad, p_good = 0.7, 0.0  # an oversized product is not also "lightweight"
        r = rng.random()
        if r < p_bad:
            state = "bad"
        elif r < p_bad + p_good:
            state = "good"
        else:
            continue
        if name == "heavy":
            w = rng.uniform(12, 48) if state == "bad" else rng.uniform(0.4, 8.5)
            fmt["w"] = f"{w:.1f}"
            add("weight_lbs", fmt["w"])
        if state == "bad":
            bad_facets.append(name)
            add(f.key, f.bad)
            bad_bullets.append(f.bad_bullet.format(**fmt))
            if f.bad_title and rng.random() < 0.7:
                title_bits.append(f.bad_title)
            blocked.update(_FEATURE_CONFLICTS.get(name, ()))
        else:
            good_facets.append(name)
            add(f.key, *f.good)
            if f.free_of:
                add("free_of", f.bad)
            good_bullets.append(f.good_bullet.format(**fmt))
            if f.good_title and rng.random() < 0.3:
                title_bits.append(f.good_title)
            features.extend(f.good_features)

    mat = _pick_mat(rng, ty.mats) if ty.mats else None
    mat_bullet = ""
    if mat is not None:
        add("materials", *mat.values)
        features.extend(mat.features)
        low = mat.phrase.lower()
        mat_bullet = f"Material: {low}" if "blend" in low else f"Material: 100% {low}"

    extra = [x for x in spec.features if x not in features]
    rng.shuffle(extra)
    features.extend(extra[: rng.randint(1, 3)])
    features = [x for i, x in enumerate(features) if x not in blocked and x not in features[:i]]
    if features:
        add("features", *features)

    # ---- title --------------------------------------------------------------------------------
    variant = rng.choice(ty.variants) if ty.variants else ""
    if ty.pattern:
        title = _media_title(rng, ty)
        if variant:
            title += f", {variant}"
    else:
        words = title_bits[:2]
        if mat is not None and rng.random() < 0.8:
            words.append(mat.phrase)
        if features and rng.random() < 0.15:
            words.insert(0, FEATURE_TEXT[features[0]][0])
        head = " ".join([*words, ty.name])
        if rng.random() < 0.85:
            head = f"{brand} {head}"
        title = (
            head
            + (f", {variant}" if variant else "")
            + (f", {color}" if color and rng.random() < 0.7 else "")
        )

    # ---- bullets: violated facts first, then the material, honoured facts, features, generic ----
    n_bullets = max(rng.randint(3, 5), len(bad_bullets) + (1 if mat_bullet else 0))
    ordered = bad_bullets + ([mat_bullet] if mat_bullet else []) + good_bullets
    ordered += [FEATURE_TEXT[x][1] for x in features]
    generic = [g.format(brand=brand) for g in _GENERIC_BULLETS]
    rng.shuffle(generic)
    ordered += generic
    bullets = ordered[:n_bullets]

    use = rng.choice(spec.uses)
    desc = f"{brand} {ty.kind}, {use}."
    if mat is not None:
        desc += f" Made with {mat.phrase.lower()}."
    if features:
        desc += f" {FEATURE_TEXT[features[-1]][1]}."
    price = max(1.99, round(rng.lognormvariate(*spec.price) * ty.price_x) - 0.01)

    product = Product(
        product_id=pid, title=title, brand=brand, color=color, bullet_points=bullets, description=desc,
        price=round(price, 2), domain=domain, attributes=attrs, source="synthetic",
    )  # fmt: skip
    return product, tuple(bad_facets), tuple(good_facets)


def _reviews(rng: random.Random, bad: tuple[str, ...], good: tuple[str, ...]) -> list[str]:
    pool: list[str] = []
    for name in bad:
        pool.extend(_REVIEWS_BAD.get(name, ()))
    for name in good:
        pool.extend(_REVIEWS_GOOD.get(name, ()))
    n = rng.randint(1, 3)
    out: list[str] = []
    if pool:
        out.append(rng.choice(pool))
    generic = list(_REVIEWS_GENERIC)
    rng.shuffle(generic)
    out.extend(generic[: n - len(out)])
    return out


def synthetic_catalog(n_products: int = 4460, seed: int = 0) -> list[Product]:
    """``n_products`` synthetic evidence records across the 11 Table 13 shopping domains.

    Domain counts follow ``taxonomy.EVIDENCE_DOMAIN_COUNTS`` scaled to ``n_products``; about 2.9% of
    the records (``taxonomy.REVIEW_AUGMENTED`` / 4,460, scaled) carry 1–3 review snippets with
    provenance ``"review"`` ("The remaining 129 records (2.9%) are review-augmented", B.3.3), the rest
    ``"metadata"``. The same seed gives the same catalog, product for product.
    """
    if n_products < 1:
        raise ValueError(f"n_products must be >= 1, got {n_products}")
    rng = random.Random(seed)
    seen: set[str] = set()
    made: list[tuple[Product, tuple, tuple]] = []
    for domain, count in domain_counts(n_products).items():
        spec = DOMAINS[domain]
        for _ in range(count):
            made.append(_product(rng, domain, spec, _asin(rng, seen)))
    rng.shuffle(made)
    reviewed = set(rng.sample(range(len(made)), n_review_augmented(n_products)))
    out: list[Product] = []
    for i, (p, bad, good) in enumerate(made):
        if i in reviewed:
            p = p.model_copy(update={"reviews": _reviews(rng, bad, good), "provenance": "review"})
        out.append(p)
    return out
