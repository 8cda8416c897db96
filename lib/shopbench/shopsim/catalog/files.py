"""Catalog files (issue 27: ``shopsim.catalog`` split by concept): :func:`load_products` reads our
JSONL/JSON product records or DummyJSON's products, checking every field (a bad record raises
:class:`CatalogFileError` naming the file, the record and the fix); :func:`save_products` writes
JSONL atomically."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ... import strictjson
from ...errors import InputError
from ...paceshop.io import atomic_write, parse_json, read_input_text
from ..types import ShopProduct, Variant
from .categories import CATEGORY_CODES, GROCERY_ONLY


class CatalogFileError(InputError):
    """A catalog file that cannot be read: the message names the file, the record and the fix."""


_FIX = "fix the record, or regenerate the file with shopsim.save_products()"

# DummyJSON category -> ours; "groceries" is split by tag below.
DUMMYJSON_CATEGORIES: dict[str, str] = {
    "beauty": "Beauty & Personal Care", "fragrances": "Beauty & Personal Care", "skin-care": "Beauty & Personal Care",
    "furniture": "Home & Kitchen", "home-decoration": "Home & Kitchen", "kitchen-accessories": "Home & Kitchen",
    "laptops": "Electronics", "smartphones": "Electronics", "tablets": "Electronics",
    "mobile-accessories": "Electronics", "mens-shirts": "Clothing", "tops": "Clothing",
    "womens-dresses": "Clothing", "mens-shoes": "Shoes", "womens-shoes": "Shoes",
    "mens-watches": "Jewelry & Accessories", "womens-watches": "Jewelry & Accessories",
    "womens-bags": "Jewelry & Accessories", "womens-jewellery": "Jewelry & Accessories",
    "sunglasses": "Jewelry & Accessories", "sports-accessories": "Sports & Outdoors",
    "motorcycle": "Automotive", "vehicle": "Automotive", "groceries": "Pantry & Dry Goods",
}  # fmt: skip
_GROCERY_TAGS = {
    "dairy": "Dairy, Eggs & Alternatives", "desserts": "Dairy, Eggs & Alternatives",
    "beverages": "Snacks & Beverages", "coffee": "Snacks & Beverages", "snacks": "Snacks & Beverages",
    "pet supplies": "Pet Supplies", "health supplements": "Health & Household",
    "household essentials": "Health & Household",
}  # fmt: skip


def _err(path: Path, where: str, msg: str) -> CatalogFileError:
    return CatalogFileError(msg, file=path, where=where, fix=_FIX)


def _where(i: int, rec: Any, line: int | None = None) -> str:
    rid = rec.get("product_id", rec.get("id")) if isinstance(rec, dict) else None
    head = (f"line {line}, " if line is not None else "") + f"record {i}"
    return head + (f" (id {rid!r})" if rid is not None else "")


def _from_shop_record(path: Path, i: int, rec: dict, line: int | None = None) -> ShopProduct:
    where = _where(i, rec, line)
    for key, typ, label in (("product_id", str, "a non-empty string"), ("title", str, "a non-empty string"),
                            ("brand", str, "a string"), ("category", str, "a non-empty string"),
                            ("description", str, "a string")):  # fmt: skip
        v = rec.get(key)
        if not isinstance(v, typ) or (label.startswith("a non-empty") and not v.strip()):
            raise _err(path, where, f"field {key!r} must be {label}, got {v!r}")
    price = rec.get("price")
    if isinstance(price, bool) or not isinstance(price, int | float) or not math.isfinite(price) or price < 0:
        raise _err(path, where, f"field 'price' must be a number >= 0, got {price!r}")
    stock = rec.get("stock")
    if isinstance(stock, bool) or not isinstance(stock, int) or stock < 0:
        raise _err(path, where, f"field 'stock' must be an integer >= 0, got {stock!r}")
    attrs = rec.get("attributes", {})
    if not isinstance(attrs, dict):
        raise _err(path, where, f"field 'attributes' must be an object of fact name -> text, got {attrs!r}")
    clean: dict[str, str] = {}
    for k, v in attrs.items():
        if isinstance(v, dict | list) or v is None:
            raise _err(path, where, f"attribute {k!r} must be a text or number value, got {v!r}")
        clean[str(k)] = str(v)
    raw_variants = rec.get("variants", [])
    if not isinstance(raw_variants, list | tuple):
        raise _err(path, where, f"field 'variants' must be a list, got {raw_variants!r}")
    variants = []
    for j, v in enumerate(raw_variants):
        if not isinstance(v, dict) or not isinstance(v.get("variant_id"), str) or not v["variant_id"]:
            raise _err(
                path, where, f"variants[{j}] must be an object with a non-empty 'variant_id', got {v!r}"
            )
        vs = v.get("stock", 0)
        if isinstance(vs, bool) or not isinstance(vs, int) or vs < 0:
            raise _err(path, where, f"variants[{j}].stock must be an integer >= 0, got {vs!r}")
        size, colour = v.get("size"), v.get("colour")
        if (size is not None and not isinstance(size, str)) or (
            colour is not None and not isinstance(colour, str)
        ):
            raise _err(
                path, where, f"variants[{j}] size/colour must be text or null, got {size!r}/{colour!r}"
            )
        variants.append(Variant(variant_id=v["variant_id"], size=size, colour=colour, stock=vs))
    if len({v.variant_id for v in variants}) != len(variants):
        raise _err(path, where, "variant ids must be unique within a product")
    if variants and stock != sum(v.stock for v in variants):
        raise _err(path, where, f"field 'stock' ({stock}) must equal the sum of variant stock "
                                f"({sum(v.stock for v in variants)}); set it to that sum")  # fmt: skip
    grocery = rec.get("grocery", False)
    if not isinstance(grocery, bool):
        raise _err(path, where, f"field 'grocery' must be true or false, got {grocery!r}")
    return ShopProduct(
        product_id=rec["product_id"], title=rec["title"], brand=rec["brand"], category=rec["category"],
        price=float(price), stock=stock, description=rec["description"], attributes=clean,
        variants=tuple(variants), grocery=grocery,
    )  # fmt: skip


def _from_dummyjson(path: Path, i: int, rec: dict, line: int | None = None) -> ShopProduct:
    """A DummyJSON product -> ShopProduct. Category mapped by :data:`DUMMYJSON_CATEGORIES` (groceries
    split by tag); id ``<code><id:05d>``; ``type`` = the most specific tag (the lower-cased title
    when there is only one tag); tags, warranty, shipping, return policy and SKU kept as attributes;
    price and stock as given (not clipped); no variants."""
    where = _where(i, rec, line)
    rid = rec.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str) or str(rid).strip() == "":
        raise _err(path, where, f"field 'id' must be an integer or text, got {rid!r}")
    title = rec.get("title")
    if not isinstance(title, str) or not title.strip():
        raise _err(path, where, f"field 'title' must be a non-empty string, got {title!r}")
    price = rec.get("price")
    if isinstance(price, bool) or not isinstance(price, int | float) or not math.isfinite(price) or price < 0:
        raise _err(path, where, f"field 'price' must be a number >= 0, got {price!r}")
    stock = rec.get("stock", 0)
    if isinstance(stock, bool) or not isinstance(stock, int) or stock < 0:
        raise _err(path, where, f"field 'stock' must be an integer >= 0, got {stock!r}")
    tags = rec.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _err(path, where, f"field 'tags' must be a list of strings, got {tags!r}")
    src_cat = str(rec.get("category") or "")
    category = DUMMYJSON_CATEGORIES.get(src_cat)
    if category is None:
        raise _err(path, where, f"field 'category' {src_cat!r} has no mapping to the shop categories; "
                                f"known: {sorted(DUMMYJSON_CATEGORIES)}")  # fmt: skip
    if src_cat == "groceries":
        category = next((_GROCERY_TAGS[t] for t in tags if t in _GROCERY_TAGS), category)
    brand = rec.get("brand") or "Unbranded"
    specific = [t for t in tags if t.lower() not in {src_cat.replace("-", " "), category.lower()}]
    # a lone tag is a department ("fruits", "meat"): the title names the product better
    attrs = {"type": (specific[-1] if specific and len(tags) > 1 else title).strip().lower()}
    if tags:
        attrs["tags"] = ", ".join(tags)
    for src, key in (("warrantyInformation", "warranty"), ("shippingInformation", "shipping"),
                     ("returnPolicy", "return_policy"), ("sku", "sku")):  # fmt: skip
        if rec.get(src) not in (None, ""):
            attrs[key] = str(rec[src])
    desc = rec.get("description") or ""
    if not isinstance(desc, str):
        raise _err(path, where, f"field 'description' must be a string, got {desc!r}")
    return ShopProduct(
        product_id=f"{CATEGORY_CODES[category]}{str(rid).strip().zfill(5)}",
        title=title.strip(), brand=str(brand), category=category, price=round(float(price), 2), stock=stock,
        description=desc.strip(), attributes=attrs, grocery=category in GROCERY_ONLY,
    )  # fmt: skip


def load_products(path: str | os.PathLike) -> list[ShopProduct]:
    """Read a catalog file: JSONL or a JSON list of ``ShopProduct.to_dict()`` records, or DummyJSON
    products (a JSON list, or an object with a ``"products"`` list, of records with id/title/brand/
    category/price/stock/description/tags). Raises :class:`CatalogFileError` naming the file, the
    record and the fix."""
    path = Path(path)
    if not path.is_file():
        raise CatalogFileError("catalog file not found", file=path, fix="pass the path of a .jsonl/.json product file "
                               "or build one with control_catalog() + save_products()")  # fmt: skip
    records, lines = _read_catalog(path)
    products: list[ShopProduct] = []
    first: dict[str, int] = {}
    for i, rec in enumerate(records):
        line = lines[i] if lines else None
        if not isinstance(rec, dict):
            raise _err(path, _where(i, None, line), f"must be a JSON object, got {type(rec).__name__}")
        if "product_id" in rec:
            p = _from_shop_record(path, i, rec, line)
        elif "id" in rec and "title" in rec:
            p = _from_dummyjson(path, i, rec, line)
        else:
            raise _err(path, _where(i, rec, line), "neither a shop product (needs 'product_id') nor a DummyJSON "
                                                   "product (needs 'id' and 'title')")  # fmt: skip
        if p.product_id in first:
            raise _err(path, _where(i, rec, line), f"duplicate product_id {p.product_id!r} (first at record "
                                                   f"{first[p.product_id]}); product ids must be unique")  # fmt: skip
        first[p.product_id] = i
        products.append(p)
    if not products:
        raise CatalogFileError("no product records", file=path, fix="the file must hold at least one product")
    return products


def _read_catalog(path: Path) -> tuple[list[Any], list[int] | None]:
    """The records of a catalog file and, for JSONL, the line of each (strict JSON, UTF-8)."""
    fix = "it must hold at least one product record"
    text = read_input_text(path, "catalog file", fix, CatalogFileError)
    try:
        data = strictjson.loads(text, max_bytes=max(strictjson.MAX_BYTES, len(text)))
    except strictjson.StrictJSONError:
        if path.suffix.lower() == ".json" or "\n" not in text.strip():
            parse_json(text, path, what="catalog", error=CatalogFileError,
                       fix="a .json catalog must be a list of product objects")  # fmt: skip
        records, lines = [], []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                records.append(parse_json(line, path, where=f"line {n}", what="catalog", error=CatalogFileError,
                                          fix="a .jsonl catalog holds one product object per line"))  # fmt: skip
                lines.append(n)
        return records, lines
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict) and isinstance(data.get("products"), list):
        return data["products"], None
    if isinstance(data, dict):
        return [data], [1]  # a one-line JSONL file
    raise CatalogFileError(f"expected a list of products or an object with a 'products' list, got "
                           f"{type(data).__name__}", file=path, fix="give a JSON list of product objects "
                           "(or one product object per line)")  # fmt: skip


def save_products(path: str | os.PathLike, products: Iterable[ShopProduct]) -> Path:
    """Write ``products`` as JSONL (one ``to_dict()`` per line) atomically: a temp file in the same
    directory, then ``os.replace``."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            for p in products:
                f.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")

    return atomic_write(path, write)
