"""Facts -> words for the control catalog (seed 002 §3.1): the description clause of each fact, the
title casing and :func:`describe`, which writes a product's 1-3 sentence description from its facts
and nothing else (issue 27: ``shopsim.catalog`` split by concept)."""

from __future__ import annotations

import re

# How each fact is phrased in a description. "{v}" is the value, "{a}" the value with its article.
CLAUSES: dict[str, str] = {
    "material": "made of {v}",
    "fit": "cut in {a} fit",
    "feature": "with {v}",
    "pattern": "in {a} pattern",
    "pack_size": "in {a}",
    "colour_family": "in {v}",
    "stone": "set with {v}",
    "finish": "with {a} finish",
    "band": "on {a}",
    "water_resistance": "water-resistant to {v}",
    "handle": "with {a} handle",
    "wattage": "rated at {v}",
    "bed_size": "in {v} size",
    "weight": "weighing {v}",
    "style": "in {a} style",
    "skin_type": "for {v} skin",
    "ingredient": "formulated with {v}",
    "hair_type": "for {v} hair",
    "scent": "scented with {v}",
    "formula": "with {a} formula",
    "connectivity": "with {v} connectivity",
    "battery_life": "with up to {v} of battery life",
    "storage": "with {v} of storage",
    "memory": "with {v} of memory",
    "screen": "with {a} display",
    "length": "measuring {v}",
    "jacket": "with {a} jacket",
    "output": "delivering {v}",
    "ports": "with {v}",
    "works_with": "compatible with {v}",
    "power_source": "powered by {v}",
    "capacity": "with {a} capacity",
    "season": "rated for {v} use",
    "temp_rating": "rated to {v}",
    "fill": "filled with {v}",
    "lumens": "putting out {v}",
    "ball_size": "in {v}",
    "players": "for {v}",
    "play_time": "with {a} play time",
    "age_range": "recommended for {v}",
    "pieces": "with {v}",
    "height": "standing {v} tall",
    "colours": "with {v}",
    "kit": "sold as {a}",
    "voltage": "running on {a} battery platform",
    "colour_temp": "giving {v} light",
    "surface": "suited to {v} projects",
    "ply": "with {v} sheets",
    "diet": "labelled {v}",
    "servings": "with {v} per container",
    "fitment": "with {v}",
    "book_format": "published as {a}",
    "pages": "running {v}",
    "language": "written in {v}",
    "audience": "written for {v} readers",
    "ruling": "with {v} pages",
    "sheets": "with {v}",
    "tip": "with {a} tip",
    "ink": "with {v}",
    "protein": "made with real {v}",
    "pet_size": "sized for {v} pets",
    "weight_limit": "supporting children {v}",
    "diaper_size": "in {v}",
    "flavour": "in {v} flavour",
    "texture": "with {a} texture",
    "roast": "in {a} roast",
    "origin": "sourced from {v}",
    "form": "sold {v}",
    "width": "in {a} width",
}
# facts whose value may serve as the title's descriptor ("Merino Wool Crew Sweater", "Organic Oat Milk")
TITLE_KEYS = ("diet", "flavour", "material", "scent", "roast")
# facts that describe colour: dropped when the product has colour variants
COLOUR_KEYS = frozenset({"colour_family"})
_ACRONYMS = frozenset("usb usb-c led hdmi ssd rgb uv upf eva tpe abs pvc bpa".split())


def _article(word: str) -> str:
    """``a`` or ``an`` by sound: "an 8 oz cup", "an 18V", "an 11-inch", "a UV-protective", "a USB-C"."""
    w = word.lower()
    digits = re.match(r"\d+", w)
    if digits:
        d = digits.group()
        return "an" if d.startswith("8") or (len(d) in (2, 5) and d[:2] in ("11", "18")) else "a"
    if w.startswith(("uni", "use", "usb", "uv", "upf", "one")):
        return "a"
    return "an" if w[:1] in ("a", "e", "i", "o", "u") else "a"


def title_case(phrase: str) -> str:
    """``"thermal v-neck tee"`` -> ``"Thermal V-Neck Tee"``; acronyms upper-cased, the rest untouched."""

    def word(w: str) -> str:
        if w.lower() in _ACRONYMS:
            return w.upper()
        return "-".join(p[:1].upper() + p[1:] for p in w.split("-"))

    return " ".join(word(w) for w in phrase.split(" "))


def clause(key: str, value: str) -> str:
    """The description phrase of one fact (``material``, ``"merino wool"`` -> ``"made of merino wool"``)."""
    tpl = CLAUSES.get(key, key.replace("_", " ") + " {v}")
    return tpl.replace("{a}", f"{_article(value)} {value}").replace("{v}", value)


def describe(brand: str, attributes: dict[str, str]) -> str:
    """The 1-3 sentence description written from a product's facts (and nothing else), in catalog
    listing style: sentence one names the type and brand and carries the first two facts ("Crew socks
    from Harbor & Pine, made of merino wool and in a 3-pack."), then one short sentence per further fact.
    ``attributes`` must hold ``type``; the other keys are used in their dict order."""
    kind = attributes["type"]
    facts = [clause(k, v) for k, v in attributes.items() if k != "type"]
    head = f"{kind[:1].upper()}{kind[1:]} from {brand}"
    if facts:
        head += ", " + " and ".join(facts[:2])
    sentences = [head + "."] + [f[:1].upper() + f[1:] + "." for f in facts[2:]]
    return " ".join(sentences)
