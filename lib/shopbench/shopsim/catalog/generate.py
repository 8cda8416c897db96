"""The seeded control-catalog generator (seed 002 §3.1): products per category by largest-remainder
rounding, a log-normal price model per category and type, facts, titles, variants and stock (issue 27:
``shopsim.catalog`` split by concept).

Deterministic: each category draws from its own ``random.Random`` seeded by ``(seed, category)``, with
fixed iteration orders and no global state.
"""

from __future__ import annotations

import math
import random
import re

from ..choices import CATEGORY_SHARES  # our choice; the one place for the paper-lost values
from ..types import ShopProduct, Variant
from .categories import CATEGORY_CODES
from .specs import SPECS, CategorySpec
from .words import COLOUR_KEYS, TITLE_KEYS, describe, title_case

MIN_PRICE, MAX_PRICE = 0.50, 3000.00
P_OUT_OF_STOCK = 0.05  # share of products with no stock at all
P_VARIANT_OUT = 0.12  # share of variants of an in-stock product that are sold out
MAX_STOCK = 60

# ---- generation ------------------------------------------------------------------------------------


def category_counts(n_products: int, shares: dict[str, float] | None = None) -> dict[str, int]:
    """Products per category: largest-remainder rounding of ``share * n_products`` (ties broken by
    category order), then every category raised to at least one product (taken from the largest)."""
    shares = CATEGORY_SHARES if shares is None else shares
    if n_products < len(shares):
        raise ValueError(f"n_products={n_products} is too small: every one of the {len(shares)} categories "
                         f"needs at least one product; use n_products >= {len(shares)}")  # fmt: skip
    total = sum(shares.values())
    quotas = {c: round(s / total * n_products, 9) for c, s in shares.items()}  # 12.9999999 -> 13
    counts = {c: math.floor(q) for c, q in quotas.items()}
    order = sorted(shares, key=lambda c: (-(quotas[c] - counts[c]), list(shares).index(c)))
    for c in order[: n_products - sum(counts.values())]:
        counts[c] += 1
    for c in shares:
        if counts[c] == 0:
            donor = max(shares, key=lambda d: counts[d])
            counts[donor] -= 1
            counts[c] = 1
    return counts


def _price_model(cat: CategorySpec) -> tuple[dict[str, float], float]:
    """Per-type median prices and the within-type log-sigma (the type factors' log-spread is taken out
    of the category sigma, floor 0.2)."""
    types = [(t, f) for g in cat.groups for t, f in g.types]
    logs = [math.log(f) for _, f in types]
    mean = sum(logs) / len(logs)
    var = sum((x - mean) ** 2 for x in logs) / len(logs)
    within = math.sqrt(max(cat.sigma**2 - var, 0.2**2))
    return {t: cat.median * math.exp(math.log(f) - mean) for t, f in types}, within


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", s.lower()).strip("-")


def _make_category(cat: CategorySpec, n: int, seed: int) -> list[ShopProduct]:
    rng = random.Random(f"shopsim-catalog:{seed}:{cat.name}")
    code = CATEGORY_CODES[cat.name]
    medians, within = _price_model(cat)
    choices = [(g, t) for g in cat.groups for t, _ in g.types]  # every type equally likely
    seen_titles: set[str] = set()
    out: list[ShopProduct] = []
    for i in range(1, n + 1):
        pid = f"{code}{i:05d}"
        group, kind = choices[rng.randrange(len(choices))]
        mode = group.variants if group.variants is not None else cat.variants
        p_var = group.p_variants if group.p_variants is not None else cat.p_variants
        has_variants = mode is not None and rng.random() < p_var
        # facts: the group's first key always, then a sample of the others, 2-4 in all
        keys = [k for k, _ in group.facets if not (has_variants and k in COLOUR_KEYS)]
        pools = dict(group.facets)
        k = rng.randint(min(2, len(keys)), min(4, len(keys)))
        chosen = [keys[0], *rng.sample(keys[1:], k - 1)] if keys else []
        chosen.sort(key=keys.index)
        attrs: dict[str, str] = {"type": kind}
        for key in chosen:
            attrs[key] = rng.choice(pools[key])
        # title: brand + one descriptor (a title-able fact, else a neutral style word) + type; exactly
        # one descriptor, so no title is a word-subset of another's (a search for one finds it first).
        # Redrawn on a collision, so titles stay (almost always) unique.
        title_fact = next((attrs[k] for k in TITLE_KEYS if k in attrs), None)
        title = ""
        for _ in range(8):
            brand = rng.choice(cat.brands)
            use_fact = title_fact is not None and rng.random() < 0.5
            descriptor = title_case(title_fact) if use_fact and title_fact else rng.choice(cat.styles)
            title = f"{brand} {descriptor} {title_case(kind)}"
            if cat.grocery and "pack_size" in attrs:
                title += f", {attrs['pack_size']}"
            if title not in seen_titles:
                break
        seen_titles.add(title)
        price = rng.lognormvariate(math.log(medians[kind]), within)
        price = round(min(MAX_PRICE, max(MIN_PRICE, price)), 2)
        out_of_stock = rng.random() < P_OUT_OF_STOCK
        variants: list[Variant] = []
        if has_variants:
            colours = group.colours or cat.colours
            picked = rng.sample(colours, rng.randint(2, min(4, len(colours))))
            sizes: list[str | None] = [None]
            if mode == "size_colour":
                all_sizes = group.sizes or cat.sizes
                span = rng.randint(min(3, len(all_sizes)), min(6, len(all_sizes)))
                start = rng.randint(0, len(all_sizes) - span)
                sizes = list(all_sizes[start : start + span])
            for colour in picked:
                for size in sizes:
                    vid = "-".join([pid, *([size] if size else []), _slug(colour)])
                    stock = 0 if out_of_stock or rng.random() < P_VARIANT_OUT else rng.randint(1, MAX_STOCK)
                    variants.append(Variant(variant_id=vid, size=size, colour=colour, stock=stock))
            if not out_of_stock and not any(v.stock for v in variants):
                v0 = variants[0]
                variants[0] = Variant(v0.variant_id, v0.size, v0.colour, rng.randint(1, MAX_STOCK))
            stock = sum(v.stock for v in variants)
        else:
            stock = 0 if out_of_stock else rng.randint(1, MAX_STOCK)
        out.append(ShopProduct(
            product_id=pid, title=title, brand=brand, category=cat.name, price=price, stock=stock,
            description=describe(brand, attrs), attributes=attrs, variants=tuple(variants),
            grocery=cat.grocery,
        ))  # fmt: skip
    return out


def control_catalog(n_products: int = 10_000, seed: int = 0) -> list[ShopProduct]:
    """The seeded control catalog: ``n_products`` products over the 19 categories of
    :data:`CATEGORY_SHARES` (counts by :func:`category_counts`), in category order. Same arguments ->
    identical products."""
    counts = category_counts(n_products)
    out: list[ShopProduct] = []
    for cat in SPECS:
        out.extend(_make_category(cat, counts[cat.name], seed))
    return out
