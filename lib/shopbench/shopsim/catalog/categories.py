"""The control catalog's category mix (seed 002 §3.1 and Appendix A): the 19 category names in
:data:`~shopbench.shopsim.choices.CATEGORY_SHARES` order, the grocery categories and the two-letter
product-id code of each category (issue 27: ``shopsim.catalog`` split by concept)."""

from __future__ import annotations

from ..choices import CATEGORY_SHARES  # our choice; the one place for the paper-lost values

# ---- category mix (our choice; Table 4's numbers are not in our copy): shopsim.choices.CATEGORY_SHARES

CATEGORIES: tuple[str, ...] = tuple(CATEGORY_SHARES)
GROCERY_ONLY: tuple[str, ...] = ("Pantry & Dry Goods", "Dairy, Eggs & Alternatives", "Snacks & Beverages")
# the categories grocery trials draw from (products flagged ``grocery=True`` are the last three)
GROCERY_CATEGORIES: tuple[str, ...] = ("Health & Household", *GROCERY_ONLY)

CATEGORY_CODES: dict[str, str] = {
    "Clothing": "CL", "Shoes": "SH", "Jewelry & Accessories": "JA", "Home & Kitchen": "HK",
    "Beauty & Personal Care": "BP", "Electronics": "EL", "Sports & Outdoors": "SO", "Toys & Games": "TG",
    "Tools & Home Improvement": "TH", "Health & Household": "HH", "Automotive": "AU", "Books": "BK",
    "Office Products": "OP", "Pet Supplies": "PS", "Baby": "BA", "Patio & Garden": "PG",
    "Pantry & Dry Goods": "PD", "Dairy, Eggs & Alternatives": "DE", "Snacks & Beverages": "SB",
}  # fmt: skip
