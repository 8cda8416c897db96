"""The control catalog's per-category summary table (issue 27: ``shopsim.catalog`` split by concept)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..types import ShopProduct
from .categories import CATEGORIES


def catalog_table(products: Sequence[ShopProduct]) -> pd.DataFrame:
    """Per-category summary for the catalog table: products, share, median price, share in stock and
    products with variants. Rows follow :data:`CATEGORIES` order, then any other category by name."""
    cols = ["category", "n_products", "share", "median_price", "in_stock_share", "n_with_variants"]
    if not products:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame({
        "category": [p.category for p in products],
        "price": [p.price for p in products],
        "in_stock": [p.stock > 0 for p in products],
        "has_variants": [bool(p.variants) for p in products],
    })  # fmt: skip
    g = df.groupby("category", sort=False)
    out = pd.DataFrame({
        "n_products": g.size(),
        "median_price": g["price"].median(),
        "in_stock_share": g["in_stock"].mean(),
        "n_with_variants": g["has_variants"].sum().astype(int),
    })  # fmt: skip
    out["share"] = out["n_products"] / len(products)
    rank = {c: i for i, c in enumerate(CATEGORIES)}
    order = sorted(out.index, key=lambda c: (rank.get(c, len(rank)), c))
    return out.loc[order].reset_index(names="category")[cols]
