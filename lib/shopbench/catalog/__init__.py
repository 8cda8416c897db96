"""Product catalogs, queries and evidence retrieval for PACEShop (seed 000, Appendix B.3, B.8).

- :mod:`.importers` — ESCI and JSON product files in, :class:`CatalogError` naming file, record, field;
- :mod:`.synthetic` — the offline synthetic catalog;
- :mod:`.queries` — shopping queries from a catalog;
- :mod:`.retrieval` — the BM25 / MiniLM evidence index and the per-query evidence pools;
- :mod:`.keywords` — the keyword tagger of queries and texts.

The names below are imported on first use.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    ".importers": ["CatalogError", "load_esci", "load_json_products", "write_esci_fixture"],
    ".synthetic": ["synthetic_catalog"],
    ".queries": ["generate_queries"],
    ".retrieval": ["EvidenceIndex", "MiniLMUnavailable", "build_pools"],
    ".keywords": ["tag_query", "tag_text"],
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
