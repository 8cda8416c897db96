"""The storefront the agent shops in: catalog search and the eight tools (seed 002 §3.1 "Tool interface").

"The agent acts through eight tools. [...] The retrieval backend encodes queries and product text with
sentence-transformers/all-MiniLM-L6-v2 and ranks normalized embeddings by cosine similarity [...].
Each trial uses a fresh cart." (§3.1)

:class:`Store` holds the catalog and its search index, built once and shared by every trial;
:meth:`Store.session` opens a :class:`ShopSession` with a fresh, empty cart. ``retrieval="minilm"`` is
the paper's backend (optional dependency); the default is BM25 (``k1=1.5``, ``b=0.75``) over title
(counted twice), brand, category, type, attribute values and description, which needs nothing beyond
scipy and keeps a sweep cheap; ``"tfidf"`` is sklearn TF-IDF cosine. The choice of default is ours.

:meth:`ShopSession.execute` runs one tool call of :data:`registry.TOOL_SPECS` and never raises: bad
input (unknown tool or product, wrong or missing arguments, a variant product without a variant, too
little stock, ...) comes back as ``{"error": "<what went wrong and what to do>"}``. Successful cart
writes carry ``"product_id"`` and ``"quantity"`` (the product's new total in the cart), the two fields
state replay reconstructs the cart from. The cart holds one line per product; adding a product again
raises its quantity and the line keeps the latest variant.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from ..catalog.retrieval import _analyze, bm25_index, encode_normalized, load_minilm
from .registry import TOOL_NAMES, TOOL_SPECS
from .types import ShopProduct, ToolCall, Variant

RETRIEVAL_METHODS = ("bm25", "tfidf", "minilm")
BM25_K1, BM25_B = 1.5, 0.75
_SPEC = {s["function"]["name"]: s["function"]["parameters"] for s in TOOL_SPECS}


def _doc_text(p: ShopProduct) -> str:
    attrs = " ".join(v for k, v in p.attributes.items() if k != "type")
    return " ".join(
        [p.title, p.title, p.brand, p.category, p.attributes.get("type", ""), attrs, p.description]
    )


class Store:
    """The catalog plus its search index (built once). ``retrieval``: ``"bm25"`` (default),
    ``"tfidf"`` or ``"minilm"`` (all-MiniLM-L6-v2 via :func:`shopbench.catalog.retrieval.load_minilm`;
    ``encoder`` may be any object with a sentence-transformers style ``encode``)."""

    def __init__(
        self, products: Sequence[ShopProduct], retrieval: str = "bm25", *, encoder: Any = None
    ) -> None:
        self.products: list[ShopProduct] = list(products)
        if not self.products:
            raise ValueError("Store needs at least one product; build a catalog with control_catalog()")
        self._by_id: dict[str, ShopProduct] = {}
        for p in self.products:
            if p.product_id in self._by_id:
                raise ValueError(
                    f"duplicate product_id {p.product_id!r} in the catalog; product ids must be unique"
                )
            self._by_id[p.product_id] = p
        if retrieval not in RETRIEVAL_METHODS:
            raise ValueError(f"retrieval must be one of {RETRIEVAL_METHODS}, got {retrieval!r}")
        self.retrieval = retrieval
        self._by_category: dict[str, list[ShopProduct]] = {}
        for p in self.products:
            self._by_category.setdefault(p.category, []).append(p)
        self._cat_lower = {c.lower(): c for c in self._by_category}
        cat_index = {c: i for i, c in enumerate(self._by_category)}
        self._cat = np.array([cat_index[p.category] for p in self.products], dtype=np.int32)
        self._price = np.array([p.price for p in self.products], dtype=np.float64)
        docs = [_doc_text(p) for p in self.products]
        if retrieval == "bm25":
            self._build_bm25(docs)
        elif retrieval == "tfidf":
            self._vec = TfidfVectorizer(analyzer=_analyze, sublinear_tf=True, dtype=np.float64)
            self._x = self._vec.fit_transform(docs).tocsr()  # docs x terms, rows L2-normalised
        else:
            self._encoder = encoder if encoder is not None else load_minilm()
            self._emb = self._encode(docs)

    # ---- index --------------------------------------------------------------------------------
    def _build_bm25(self, docs: list[str]) -> None:
        vec, self._w = bm25_index(docs, BM25_K1, BM25_B)  # terms x docs
        self._vocab: dict[str, int] = vec.vocabulary_

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return encode_normalized(self._encoder, texts)

    def _scores(self, query: str) -> np.ndarray | None:
        """Relevance of every product (``None``: the query has no searchable term)."""
        if self.retrieval == "bm25":
            terms = sorted({self._vocab[t] for t in _analyze(query) if t in self._vocab})
            if not terms:
                return None
            return np.asarray(self._w[terms].sum(axis=0)).ravel()
        if self.retrieval == "tfidf":
            q = self._vec.transform([query])
            if q.nnz == 0:
                return None
            return np.asarray((self._x @ q.T).todense()).ravel()
        if not _analyze(query):
            return None
        return self._emb @ self._encode([query])[0]

    # ---- lookups ------------------------------------------------------------------------------
    def product(self, product_id: str) -> ShopProduct | None:
        return self._by_id.get(product_id)

    @property
    def categories(self) -> list[str]:
        """Category names in catalog order."""
        return list(self._by_category)

    @property
    def by_category(self) -> dict[str, list[ShopProduct]]:
        return {c: list(ps) for c, ps in self._by_category.items()}

    def resolve_category(self, name: str) -> str | None:
        """The catalog's spelling of a category name given in any letter case (``None``: unknown)."""
        return self._cat_lower.get(" ".join(str(name).split()).lower())

    def session(self) -> ShopSession:
        """A shopping session with a fresh, empty cart (one per trial)."""
        return ShopSession(self)

    def search(
        self,
        query: str,
        category: str | None = None,
        min_price: float | None = None,
        max_price: float | None = None,
        limit: int = 10,
    ) -> list[tuple[ShopProduct, float]]:
        """The top ``limit`` products for ``query`` with a positive score, best first (ties in catalog
        order), optionally within one category (any letter case) and a price range (inclusive). A query
        with no searchable term (only stopwords, or unknown words under BM25) returns ``[]``."""
        if category is not None:
            resolved = self.resolve_category(category)
            if resolved is None:
                raise ValueError(
                    f"unknown category {category!r}; valid categories: {', '.join(self.categories)}"
                )
            category = resolved
        if limit <= 0:
            return []
        scores = self._scores(str(query))
        if scores is None:
            return []
        mask = scores > 0
        if category is not None:
            mask &= self._cat == self.categories.index(category)
        if min_price is not None:
            mask &= self._price >= min_price
        if max_price is not None:
            mask &= self._price <= max_price
        cand = np.flatnonzero(mask)
        if cand.size > limit:
            cand = cand[np.argpartition(-scores[cand], limit - 1)[:limit]]
        order = np.lexsort((cand, -scores[cand]))
        return [(self.products[i], float(scores[i])) for i in cand[order]]


# ---- the session ---------------------------------------------------------------------------------

_INT = re.compile(r"^[+-]?\d+(\.0*)?$")


class _ArgError(ValueError):
    pass


def _coerce(tool: str, name: str, value: Any, schema: dict) -> Any:
    """Check one argument against its JSON-schema type; numbers given as unambiguous strings ("2",
    "2.0", "$19.99") are converted."""
    typ = schema.get("type")
    where = f"argument {name!r} of {tool}"
    if typ == "string":
        if not isinstance(value, str):
            raise _ArgError(f"{where} must be a string, got {json.dumps(value)}")
        return value.strip()
    if typ == "integer":
        if isinstance(value, bool):
            raise _ArgError(f"{where} must be an integer, got {json.dumps(value)}")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, str) and _INT.match(value.strip()):
            value = int(float(value.strip()))
        if not isinstance(value, int):
            raise _ArgError(f"{where} must be a whole number, got {json.dumps(value)}")
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is not None and value < lo:
            raise _ArgError(f"{where} must be at least {lo}, got {value}")
        if hi is not None and value > hi:
            raise _ArgError(f"{where} must be at most {hi}, got {value}")
        return value
    if typ == "number":
        if isinstance(value, bool):
            raise _ArgError(f"{where} must be a number, got {json.dumps(value)}")
        if isinstance(value, str):
            try:
                value = float(value.strip().lstrip("$").replace(",", ""))
            except ValueError:
                raise _ArgError(f"{where} must be a number, got {json.dumps(value)}") from None
        if not isinstance(value, int | float) or not math.isfinite(value):
            raise _ArgError(f"{where} must be a finite number, got {json.dumps(value)}")
        return float(value)
    return value


def _check_args(tool: str, args: dict) -> dict:
    params = _SPEC[tool]
    props: dict = params.get("properties", {})
    extra = sorted(set(args) - set(props))
    if extra:
        allowed = ", ".join(props) if props else "none (call it with {})"
        raise _ArgError(
            f"unexpected argument(s) {', '.join(map(repr, extra))} for {tool}; allowed: {allowed}"
        )
    out: dict[str, Any] = {}
    for name in props:
        if args.get(name) is None:  # null for an optional argument = not given
            if name in params.get("required", []):
                raise _ArgError(
                    f"{tool} needs argument {name!r} ({', '.join(params['required'])} are required)"
                )
            continue
        out[name] = _coerce(tool, name, args[name], props[name])
    return out


class ShopSession:
    """One trial's view of the store: the catalog (read-only) and a cart that starts empty."""

    def __init__(self, store: Store) -> None:
        self.store = store
        # product_id -> {"variant_id", "quantity"}, in the order the products were first added
        self._lines: dict[str, dict[str, Any]] = {}

    # ---- cart state ---------------------------------------------------------------------------
    @property
    def cart(self) -> dict[str, int]:
        """A copy of the cart: product_id -> quantity."""
        return {pid: line["quantity"] for pid, line in self._lines.items()}

    @property
    def cart_lines(self) -> list[dict[str, Any]]:
        """A copy of the cart lines: ``{"product_id", "variant_id", "quantity"}`` in the order added."""
        return [{"product_id": pid, "variant_id": ln["variant_id"], "quantity": ln["quantity"]}
                for pid, ln in self._lines.items()]  # fmt: skip

    @property
    def total(self) -> float:
        lines = self._lines.items()
        return round(sum((self.store._by_id[pid].price * ln["quantity"] for pid, ln in lines), 0.0), 2)

    # ---- dispatch -----------------------------------------------------------------------------
    def execute(self, call: ToolCall | dict) -> dict[str, Any]:
        """Run one tool call; never raises (bad input -> ``{"error": message}``)."""
        name: Any = "?"
        try:
            if isinstance(call, dict):
                if not isinstance(call.get("name"), str):
                    return {"error": "a tool call needs a 'name' (one of: " + ", ".join(TOOL_NAMES) + ")"}
                name, args = call["name"], call.get("arguments", {})  # raw: may be JSON text
            elif isinstance(call, ToolCall):
                name, args = call.name, call.arguments
            else:
                return {"error": f"expected a tool call, got {type(call).__name__}"}
            if name not in _SPEC:
                return {"error": f"unknown tool {name!r}; available tools: {', '.join(TOOL_NAMES)}"}
            if args is None:
                args = {}
            if isinstance(args, str):
                try:
                    args = json.loads(args) if args.strip() else {}
                except json.JSONDecodeError as e:
                    return {"error": f"arguments of {name} are not valid JSON ({e.msg}); pass a JSON object"}
            if not isinstance(args, dict):
                return {"error": f"arguments of {name} must be a JSON object, got {json.dumps(args)}"}
            return getattr(self, f"_t_{name}")(**_check_args(name, args))
        except _ArgError as e:
            return {"error": str(e)}
        except Exception as e:  # a tool must never take the trial down
            return {"error": f"internal error in {name}: {type(e).__name__}: {e}"}

    # ---- helpers ------------------------------------------------------------------------------
    def _product(self, product_id: str) -> ShopProduct:
        p = self.store.product(product_id) or self.store.product(product_id.upper())
        if p is None:
            raise _ArgError(
                f"unknown product_id {product_id!r}; use a product_id from search_products results"
            )
        return p

    @staticmethod
    def _variant_list(p: ShopProduct) -> str:
        return ", ".join(
            f"{v.variant_id} ({'in stock' if v.stock > 0 else 'out of stock'})" for v in p.variants
        )

    def _variant(self, p: ShopProduct, variant_id: str | None, required: bool) -> Variant | None:
        if not p.variants:
            if variant_id:
                raise _ArgError(f"product {p.product_id} has no variants; omit variant_id")
            return None
        if not variant_id:
            if required:
                raise _ArgError(f"product {p.product_id} comes in variants; pass variant_id, one of: "
                                f"{self._variant_list(p)}")  # fmt: skip
            return None
        for v in p.variants:
            if v.variant_id == variant_id or v.variant_id.lower() == variant_id.lower():
                return v
        raise _ArgError(
            f"unknown variant_id {variant_id!r} for product {p.product_id}; valid: {self._variant_list(p)}"
        )

    def _in_cart(self, p: ShopProduct) -> dict[str, Any]:
        line = self._lines.get(p.product_id)
        if line is None:
            in_cart = ", ".join(self._lines) or "the cart is empty"
            raise _ArgError(
                f"product {p.product_id} is not in the cart (in the cart: {in_cart}); add it with add_to_cart"
            )
        return line

    def _stock_of(self, p: ShopProduct, variant_id: str | None) -> int:
        if variant_id is None:
            return p.stock
        return next(v.stock for v in p.variants if v.variant_id == variant_id)

    # ---- the eight tools ----------------------------------------------------------------------
    def _t_search_products(self, query: str, category: str | None = None, min_price: float | None = None,
                           max_price: float | None = None, limit: int = 10) -> dict:  # fmt: skip
        if category is not None and self.store.resolve_category(category) is None:
            raise _ArgError(
                f"unknown category {category!r}; valid categories: {', '.join(self.store.categories)}"
            )
        if min_price is not None and max_price is not None and min_price > max_price:
            raise _ArgError(f"min_price ({min_price:g}) is greater than max_price ({max_price:g})")
        hits = self.store.search(query, category, min_price, max_price, limit)
        results = [{"product_id": p.product_id, "title": p.title, "brand": p.brand, "category": p.category,
                    "price": p.price, "in_stock": p.stock > 0} for p, _ in hits]  # fmt: skip
        return {"results": results, "count": len(results)}

    def _t_list_categories(self) -> dict:
        return {"categories": [{"name": c, "count": len(ps)} for c, ps in self.store._by_category.items()]}

    def _t_get_product_details(self, product_id: str) -> dict:
        p = self._product(product_id)
        return {"product": {
            "product_id": p.product_id, "title": p.title, "brand": p.brand, "category": p.category,
            "price": p.price, "description": p.description, "attributes": dict(p.attributes),
            "in_stock": p.stock > 0,
            "variants": [{"variant_id": v.variant_id, "size": v.size, "colour": v.colour, "in_stock": v.stock > 0}
                         for v in p.variants],
        }}  # fmt: skip

    def _t_get_variant_details(self, product_id: str, variant_id: str) -> dict:
        p = self._product(product_id)
        if not p.variants:
            raise _ArgError(f"product {p.product_id} has no variants; use get_product_details for its stock")
        v = self._variant(p, variant_id, required=True)
        assert v is not None  # p has variants, so a missing or unknown variant_id raised above
        return {"variant": {"product_id": p.product_id, "variant_id": v.variant_id, "size": v.size,
                            "colour": v.colour, "stock": v.stock, "price": p.price}}  # fmt: skip

    def _t_add_to_cart(self, product_id: str, quantity: int, variant_id: str | None = None) -> dict:
        p = self._product(product_id)
        v = self._variant(p, variant_id or None, required=True)
        vid = v.variant_id if v else None
        line = self._lines.get(p.product_id)
        new_total = (line["quantity"] if line else 0) + quantity
        stock = v.stock if v else p.stock
        if new_total > stock:
            what = f"variant {vid}" if vid else f"product {p.product_id}"
            have = f" (the cart already holds {line['quantity']})" if line else ""
            raise _ArgError(
                f"insufficient stock: {what} has {stock} in stock, cannot hold {new_total} in the "
                f"cart{have}; lower the quantity" + ("" if stock else " or choose another product")
            )
        self._lines[p.product_id] = {"variant_id": vid, "quantity": new_total}
        return {"product_id": p.product_id, "variant_id": vid, "added": quantity, "quantity": new_total,
                "cart_total": self.total}  # fmt: skip

    def _t_remove_from_cart(self, product_id: str) -> dict:
        p = self._product(product_id)
        line = self._in_cart(p)
        del self._lines[p.product_id]
        return {
            "product_id": p.product_id,
            "removed": line["quantity"],
            "quantity": 0,
            "cart_total": self.total,
        }

    def _t_update_cart_quantity(self, product_id: str, quantity: int) -> dict:
        p = self._product(product_id)
        line = self._in_cart(p)
        if quantity == 0:
            del self._lines[p.product_id]
        else:
            stock = self._stock_of(p, line["variant_id"])
            if quantity > stock:
                what = f"variant {line['variant_id']}" if line["variant_id"] else f"product {p.product_id}"
                raise _ArgError(
                    f"insufficient stock: {what} has {stock} in stock, cannot set quantity {quantity}"
                )
            line["quantity"] = quantity
        return {"product_id": p.product_id, "quantity": quantity, "cart_total": self.total}

    def _t_view_cart(self) -> dict:
        items = []
        for pid, ln in self._lines.items():
            p = self.store._by_id[pid]
            items.append({"product_id": pid, "title": p.title, "variant_id": ln["variant_id"],
                          "quantity": ln["quantity"], "unit_price": p.price,
                          "line_total": round(p.price * ln["quantity"], 2)})  # fmt: skip
        return {"items": items, "total": self.total}
