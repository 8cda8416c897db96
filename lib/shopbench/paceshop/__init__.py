"""PACEShop: the benchmark of seed 000 (Sections 3.1–3.2, Appendix B).

- :mod:`.build` — the whole build (:class:`BuildConfig` → :func:`build` (re-exported as
  ``build_benchmark``) → :func:`write`) and
  :func:`load_records`, which validates every line of a records file;
- the data model (Product, Query, EvidencePool, Persona, Response, Defect, Record) and the taxonomy
  (verticals, missions, persona facets, the seven defect families, the 12 checks) live in
  :mod:`shopbench.core`, shared by every paper; they are re-exported here;
- :mod:`.personas`, :mod:`.assign`, :mod:`.generate`, :mod:`.defects`, :mod:`.swaps`, :mod:`.checks`
  — the build stages; :mod:`.tables` — Tables 8–13 and 17 of the built benchmark.

The names below, and the submodules in ``_SUBMODULES``, are imported on first use.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    ".build": ["BuildConfig", "BuildResult", "build_benchmark", "write", "load_records", "category_reading_records"],
    "..core": ["Product", "Query", "EvidencePool", "EvidenceSnippet", "Persona", "Response", "Defect", "Record"],
    "..core.taxonomy": ["FAMILIES", "DEFECTS", "CHECKS"],
    ".io": ["DataFileError", "read_jsonl", "write_jsonl"],
    ".tables": ["table8_summary", "table10_verticals", "table11_missions", "table12_personas",
                "table13_evidence", "table17_defects", "checks_table", "worked_record"],
}  # fmt: skip
# modules a notebook uses as a whole (``from shopbench.paceshop import tables``; issue 27)
_SUBMODULES = ["tables", "choices", "relaxed", "slices", "reported"]
__getattr__, __dir__, _names = lazy_exports(__name__, _EXPORTS, _SUBMODULES)
__all__ = [*_names, *_SUBMODULES]
