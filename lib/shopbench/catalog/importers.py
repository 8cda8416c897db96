"""Catalog importers: the ESCI parquet pair the paper builds on, and generic JSON product lists.

"We begin from 97,227 normalized US shopping queries and 4,460 public evidence records across 11
shopping domains. Queries are tagged by coarse auditing metadata, including retail vertical and
shopping mission, while evidence records expose product titles, brands, metadata, and available
review snippets" (B.2). "Each record exposes human-readable product information extracted from
public ESCI product listings: product title, brand, color, bullet points, and description" (B.3.3).

:func:`load_esci` reads the Shopping Queries Dataset (ESCI) files: ``shopping_queries_dataset_examples``
(``example_id, query, query_id, product_id, product_locale, esci_label, small_version,
large_version, split``) and ``shopping_queries_dataset_products`` (``product_id, product_title,
product_description, product_bullet_point, product_brand, product_color, product_locale``). The
project ships no ESCI data; :func:`write_esci_fixture` writes a small pair in the same schema from the
synthetic catalog, for tests.

:func:`load_json_products` reads a generic JSON product list (e.g. DummyJSON's ``products.json``).

Bad input raises :class:`CatalogError` naming the file, the row or record, the field and what to do.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..core import Product, Query
from ..core import taxonomy as T
from ..errors import InputError
from ..paceshop.io import read_json
from .keywords import VERTICAL_KEYWORDS, normalize_query, pick_rule, tag_query

EXAMPLE_COLUMNS = ["example_id", "query", "query_id", "product_id", "product_locale", "esci_label",
                   "small_version", "large_version", "split"]  # fmt: skip
PRODUCT_COLUMNS = ["product_id", "product_title", "product_description", "product_bullet_point", "product_brand",
                   "product_color", "product_locale"]  # fmt: skip
ESCI_LABELS = ("E", "S", "C", "I")
_TAGS = re.compile(r"<[^>]+>")


class CatalogError(InputError):
    """A catalog file that cannot be imported; the message names the file, the record and the field."""


def _plain(v: Any) -> Any:
    """A numpy scalar as the Python value it holds (for messages: ``3``, not ``np.int64(3)``)."""
    return v.item() if hasattr(v, "item") else v


def _text(v: Any) -> str:
    """A cell as clean text: None/NaN -> "", HTML tags dropped, whitespace collapsed."""
    if v is None:
        return ""
    if isinstance(v, float) and v != v:  # NaN
        return ""
    return " ".join(_TAGS.sub(" ", str(v)).split())


def _bullets(v: Any) -> list[str]:
    """ESCI ``product_bullet_point`` holds one bullet per line."""
    if v is None or (isinstance(v, float) and v != v):
        return []
    return [b for b in (_text(line) for line in str(v).splitlines()) if b]


def product_domain(title: str, brand: str, extra: str = "") -> str:
    """Shopping domain of a product: :func:`keywords.pick_rule` over its title and brand (plus
    ``extra`` text such as a JSON category), falling back to General Merchandise."""
    return pick_rule(" ".join([title, brand, extra]), VERTICAL_KEYWORDS, T.FALLBACK_VERTICAL)


# ---- ESCI --------------------------------------------------------------------------------------


def _read_parquet(path: Path, columns: list[str], what: str):
    import pandas as pd
    import pyarrow.parquet as pq

    if not path.is_file():
        raise CatalogError("no such file", file=path, fix=f"pass the path of the ESCI {what} parquet file")
    try:
        names = pq.read_schema(path).names
    except Exception as e:  # pyarrow raises several types for non-parquet input
        raise CatalogError(f"not a readable parquet file ({e})", file=path,
                           fix=f"pass the ESCI {what} parquet file") from None  # fmt: skip
    missing = [c for c in columns if c not in names]
    if missing:
        raise CatalogError(f"column(s) {missing} missing; the ESCI {what} file needs {columns} (has {names})",
                           file=path, field=missing[0],
                           fix="check that the examples and products paths are not swapped")  # fmt: skip
    try:
        return pd.read_parquet(path, columns=columns)
    except Exception as e:  # a damaged row group
        raise CatalogError(f"cannot read the parquet data ({e})", file=path,
                           fix=f"re-download the ESCI {what} file") from None  # fmt: skip


def load_esci(
    examples_path: str | Path, products_path: str | Path, locale: str = "us"
) -> tuple[list[Product], list[Query]]:
    """Products and queries of one ESCI locale.

    Products: every ``products`` row of the locale (first row wins for a repeated ``product_id``), bullets
    split on newlines, HTML stripped, ``domain`` by :func:`keywords.pick_rule` on title + brand.
    Queries: one per distinct normalized query text (first ``query_id`` wins, id ``esci-<query_id>``),
    tagged with :func:`keywords.tag_query` on the query and its first three E-labelled (Exact) products;
    ``seed_product_id`` is the first E product and ``esci_labels`` maps each judged product of the
    catalog to its ESCI label (E/S/C/I, first judgement wins). Queries that normalize to nothing are
    skipped. These are the real queries the paper's Tables 10 and 11 describe (B.2: "97,227 normalized
    US shopping queries"); :func:`shopbench.paceshop.build.build` uses them instead of generating any.
    """
    ex_path, pr_path = Path(examples_path), Path(products_path)
    pr = _read_parquet(pr_path, PRODUCT_COLUMNS, "products")
    ex = _read_parquet(ex_path, EXAMPLE_COLUMNS, "examples")
    pr = pr[pr["product_locale"] == locale]
    ex = ex[ex["product_locale"] == locale]

    products: dict[str, Product] = {}
    cols = [pr[c].tolist() for c in PRODUCT_COLUMNS[:6]]
    for row, (pid, title, desc, bullets, brand, color) in zip(pr.index.tolist(), zip(*cols, strict=True),
                                                               strict=True):  # fmt: skip
        pid = _text(pid)
        if not pid:
            raise CatalogError("is empty; every product needs an id", file=pr_path, where=f"row {row}",
                               field="product_id", fix="fix or drop the row")  # fmt: skip
        if pid in products:
            continue
        where = f"row {row} (product_id={pid!r})"
        if title is not None and not isinstance(title, str) and title == title:  # NaN is a missing title
            raise CatalogError(f"is {type(title).__name__} {title!r}, not text", file=pr_path, where=where,
                               field="product_title", fix="product titles are text; check the column")  # fmt: skip
        title = _text(title)
        if not title:
            raise CatalogError("is empty; every evidence record needs a title", file=pr_path, where=where,
                               field="product_title", fix="fix or drop the row")  # fmt: skip
        brand = _text(brand)
        products[pid] = Product(
            product_id=pid, title=title, brand=brand, color=_text(color), bullet_points=_bullets(bullets),
            description=_text(desc), domain=product_domain(title, brand), source="esci",
        )  # fmt: skip

    for col in ("query", "query_id", "product_id", "esci_label"):
        bad = ex[ex[col].isna()]
        if len(bad):
            row = bad.index[0]
            raise CatalogError(f"is missing ({len(bad)} rows)", file=ex_path,
                               where=f"row {row} (example_id={_plain(ex.at[row, 'example_id'])!r})", field=col,
                               fix="fix or drop those rows")  # fmt: skip
    bad = ex[~ex["esci_label"].isin(ESCI_LABELS)]
    if len(bad):
        row = bad.index[0]
        raise CatalogError(f"is {_plain(ex.at[row, 'esci_label'])!r}", file=ex_path,
                           where=f"row {row} (example_id={_plain(ex.at[row, 'example_id'])!r})", field="esci_label",
                           fix=f"use one of {list(ESCI_LABELS)}")  # fmt: skip

    exact: dict[Any, list[str]] = {}
    labels: dict[Any, dict[str, str]] = {}
    for qid, pid, label in zip(ex["query_id"].tolist(), ex["product_id"].tolist(), ex["esci_label"].tolist(),
                               strict=True):  # fmt: skip
        pid = _text(pid)
        if pid not in products:
            continue
        labels.setdefault(qid, {}).setdefault(pid, str(label))
        if label == "E":
            exact.setdefault(qid, []).append(pid)
    first = ex.drop_duplicates("query_id", keep="first")
    queries: list[Query] = []
    seen: set[str] = set()
    for qid, raw in zip(first["query_id"].tolist(), first["query"].tolist(), strict=True):
        text = normalize_query(raw)
        if not text or text in seen:
            continue
        seen.add(text)
        e = exact.get(qid, [])
        vertical, mission = tag_query(text, [products[p] for p in e[:3]])
        queries.append(Query(query_id=f"esci-{_plain(qid)}", query=text, vertical=vertical, mission=mission,
                             source="esci", seed_product_id=e[0] if e else None,
                             esci_labels=labels.get(qid, {})))  # fmt: skip
    return list(products.values()), queries


def write_esci_fixture(
    directory: str | Path, n_queries: int = 40, seed: int = 0, n_products: int = 400
) -> tuple[Path, Path]:
    """Write a small ESCI-schema pair (``examples.parquet``, ``products.parquet``) made from the
    synthetic catalog: ``n_queries`` generated queries, each judged against its top 8 BM25 products
    (ranks 1–3 E, 4–5 S, 6 C, 7–8 I), plus a few ``jp``-locale rows that a ``us`` load must skip.
    Returns the two paths."""
    import pandas as pd

    from .queries import generate_queries
    from .retrieval import EvidenceIndex
    from .synthetic import synthetic_catalog

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    products = synthetic_catalog(n_products, seed=seed)
    index = EvidenceIndex(products)
    queries = generate_queries(products, n_queries, seed=seed, index=index)
    labels = ["E", "E", "E", "S", "S", "C", "I", "I"]
    rows: list[dict] = []
    for qn, (q, hits) in enumerate(
        zip(queries, index.search_many([q.query for q in queries], 8), strict=True)
    ):
        raw = q.query.upper() if qn % 3 == 0 else q.query  # normalization must undo this
        for rank, (pid, _) in enumerate(hits):
            rows.append({"example_id": len(rows), "query": raw, "query_id": 1000 + qn, "product_id": pid,
                         "product_locale": "us", "esci_label": labels[rank], "small_version": 1,
                         "large_version": 1, "split": "train" if qn % 5 else "test"})  # fmt: skip
    for j, p in enumerate(products[:3]):  # another locale, same schema
        rows.append({"example_id": len(rows), "query": f"jp query {j}", "query_id": 9000 + j, "product_id": p.product_id,
                     "product_locale": "jp", "esci_label": "E", "small_version": 0, "large_version": 1,
                     "split": "train"})  # fmt: skip
    prows = [{"product_id": p.product_id, "product_title": p.title, "product_description": p.description,
              "product_bullet_point": "\n".join(p.bullet_points), "product_brand": p.brand,
              "product_color": p.color, "product_locale": "us"} for p in products]  # fmt: skip
    prows += [
        {**prows[j], "product_title": "JP " + prows[j]["product_title"], "product_locale": "jp"}
        for j in range(3)
    ]
    ex_path, pr_path = out / "examples.parquet", out / "products.parquet"
    pd.DataFrame(rows, columns=EXAMPLE_COLUMNS).to_parquet(ex_path, index=False)
    pd.DataFrame(prows, columns=PRODUCT_COLUMNS).to_parquet(pr_path, index=False)
    return ex_path, pr_path


# ---- generic JSON ------------------------------------------------------------------------------

_BULLET_KEYS = ("bullet_points", "bullets", "features", "highlights")
_INFO_KEYS = ("warrantyInformation", "shippingInformation", "returnPolicy", "availabilityStatus")


def _json_error(path: Path, index: int, rid: Any, field: str, problem: str, fix: str) -> CatalogError:
    who = f"record {index}" + (f" (id={rid!r})" if rid is not None else "")
    return CatalogError(problem, file=path, where=who, field=field, fix=fix)


def _str_list(path: Path, i: int, rid: Any, field: str, v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [x for x in (_text(line) for line in v.splitlines()) if x]
    if isinstance(v, list) and all(isinstance(x, str | int | float) for x in v):
        return [x for x in (_text(x) for x in v) if x]
    raise _json_error(path, i, rid, field, f"is {type(v).__name__}", "give a list of strings (or one string)")


def load_json_products(path: str | Path) -> list[Product]:
    """Products from a JSON file holding a list of product objects, or an object with a ``products`` list.

    Fields read: ``id`` (else ``json-<index>``), ``title`` or ``name`` (required), ``brand``,
    ``description``, ``price`` (a number), ``category``, ``tags``, ``color``, bullets from
    ``bullet_points``/``bullets``/``features``/``highlights`` (else the listing's warranty, shipping,
    return-policy and availability lines), ``reviews[].comment`` (then provenance ``"review"``).
    ``category`` and ``tags`` are kept in ``attributes`` and help :func:`product_domain`.
    """
    path = Path(path)
    if not path.is_file():
        raise CatalogError("no such file", file=path, fix="pass the path of a JSON product list")
    data = read_json(path, "JSON product list", fix="fix the file", error=CatalogError)
    if isinstance(data, dict):
        if not isinstance(data.get("products"), list):
            raise CatalogError("top-level object has no 'products' list", file=path, field="products",
                               fix='give a list of products or {"products": [...]}')  # fmt: skip
        data = data["products"]
    if not isinstance(data, list):
        raise CatalogError(f"top level is {type(data).__name__}", file=path,
                           fix='give a list of product objects or {"products": [...]}')  # fmt: skip
    out: list[Product] = []
    seen: dict[str, int] = {}
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise CatalogError(f"is {type(rec).__name__}, not an object", file=path, where=f"record {i}",
                               fix="each product must be a JSON object with at least a title")  # fmt: skip
        rid = rec.get("id")
        if rid is not None and not isinstance(rid, str | int):
            raise _json_error(path, i, None, "id", f"is {type(rid).__name__}", "use a string or integer id")
        title = rec.get("title", rec.get("name"))
        if not isinstance(title, str) or not title.strip():
            problem = (
                "is missing or empty"
                if title is None or isinstance(title, str)
                else f"is {type(title).__name__}"
            )
            fix = "every product needs a non-empty 'title' (or 'name') string; fix the record or drop it"
            raise _json_error(path, i, rid, "title", problem, fix)
        pid = str(rid) if rid is not None else f"json-{i}"
        if pid in seen:
            raise _json_error(
                path, i, rid, "id", f"repeats record {seen[pid]}'s id", "give every product its own id"
            )
        seen[pid] = i
        price = rec.get("price")
        if price is not None and (isinstance(price, bool) or not isinstance(price, int | float) or price < 0):
            raise _json_error(
                path, i, rid, "price", f"is {price!r}", "give a non-negative number or leave it out"
            )
        for key in ("brand", "description", "category", "color"):
            v = rec.get(key)
            if v is not None and not isinstance(v, str):
                raise _json_error(
                    path, i, rid, key, f"is {type(v).__name__}", "give a string or leave it out"
                )
        reviews_raw = rec.get("reviews") or []
        if not isinstance(reviews_raw, list):
            raise _json_error(path, i, rid, "reviews", f"is {type(reviews_raw).__name__}",
                              "give a list of {\"comment\": ...} objects")  # fmt: skip
        reviews: list[str] = []
        for j, r in enumerate(reviews_raw):
            comment = r.get("comment") if isinstance(r, dict) else r if isinstance(r, str) else None
            if comment is None and not isinstance(r, dict):
                raise _json_error(path, i, rid, f"reviews[{j}]", f"is {type(r).__name__}",
                                  "give an object with a 'comment' string")  # fmt: skip
            if comment is not None and not isinstance(comment, str):
                raise _json_error(path, i, rid, f"reviews[{j}].comment", f"is {type(comment).__name__}",
                                  "give a string")  # fmt: skip
            if comment and comment.strip():
                reviews.append(_text(comment))
        bullets: list[str] = []
        for key in _BULLET_KEYS:
            if key in rec:
                bullets = _str_list(path, i, rid, key, rec[key])
                break
        else:
            bullets = [_text(rec[k]) for k in _INFO_KEYS if isinstance(rec.get(k), str) and rec[k].strip()]
        category = _text(rec.get("category"))
        tags = _str_list(path, i, rid, "tags", rec.get("tags"))
        attrs: dict[str, list[str]] = {}
        if category:
            attrs["category"] = [category]
        if tags:
            attrs["tags"] = tags
        brand = _text(rec.get("brand"))
        title = _text(title)
        extra = " ".join([category.replace("-", " "), *tags])
        out.append(Product(
            product_id=pid, title=title, brand=brand, color=_text(rec.get("color")), bullet_points=bullets,
            description=_text(rec.get("description")), price=float(price) if price is not None else None,
            domain=product_domain(title, brand, extra), attributes=attrs, reviews=reviews,
            provenance="review" if reviews else "metadata", source=f"json:{path.name}",
        ))  # fmt: skip
    return out
