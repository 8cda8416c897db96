"""The ``paceshop`` section: the PACEShop build (seed 000, Appendix B.1-B.2; notebook 10).

The defaults equal :class:`shopbench.paceshop.build.BuildConfig`'s (a test keeps them in step);
``BuildConfig.from_profile`` passes on only the keys the file sets.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from ._base import Count, Name, PositiveInt, Section


class EsciFiles(Section):
    """The Amazon ESCI files: the examples and the products parquet (paths relative to the repository)."""

    examples: Name
    products: Name


class EsciCatalog(Section):
    esci: EsciFiles


class JsonCatalog(Section):
    """``{json: path}``: a product JSON file (DummyJSON's ``products.json`` format)."""

    path: Name = Field(alias="json")


class L4GeneratorSpec(Section):
    """One L4 generator with its contract variant (``paceshop.generate.VARIANTS``: ``b9`` the paper's
    plain contract, ``b9_grammar`` B.9's budgets as a decoding grammar for small local models) and
    its number of shared inputs (None: ``l4_inputs``; the inputs are a prefix of one seeded order)."""

    backbone: Name
    variant: Literal["b9", "b9_grammar", "b9_grammar_labels_first"] = "b9"
    inputs: Count | None = None


def _catalog_kind(v: Any) -> str:
    if isinstance(v, dict) and "esci" in v:
        return "esci"
    if isinstance(v, dict) and "json" in v:
        return "json"
    return "esci" if isinstance(v, dict) else "synthetic"


class PaceshopParams(Section):
    """``paceshop:`` sizes and sources. Paper scale: 1,132 queries × 4 personas (B.1)."""

    n_products: PositiveInt = 4460
    n_candidate_queries: PositiveInt = 3000
    n_queries: PositiveInt = 1132
    n_personas: PositiveInt = 1200
    n_holdout: Count = 345
    n_bundles: PositiveInt = 8
    personas_per_query: PositiveInt = 4
    test_goods: Count = 680
    dev_goods: Count = 680
    swap_slice: Count = 680
    s0_per_label: Count = 50
    calibration_good: Count = 110
    calibration_bad_per_family: Count = 20
    retrieval: Literal["bm25", "minilm"] = "bm25"
    # PREF_CONFLICT / INTENT_DRIFT edit (paceshop/defects.py): "mirrored" (default; Table 26's
    # "Overview ... includes a meaningless 'Conflict Pick' category") or "literal" (B.9's
    # "Location: productCategoryList[0]" only); compare_category_readings builds the other one too
    category_edit: Literal["mirrored", "literal"] = "mirrored"
    compare_category_readings: bool = True
    # L4 cross-generator slice (B.4 "50 shared inputs"): backbone / litellm names generating GOOD responses
    # for l4_inputs shared test inputs beside the build's generator, or {backbone, variant, inputs}
    # (L4GeneratorSpec); [] skips the slice
    l4_generators: list[Name | L4GeneratorSpec] = []
    l4_inputs: Count = 50
    # L5 real-assistant slice (Table 16 "relaxed-schema import path"): a JSON / JSONL file of an
    # assistant's outputs (paceshop/relaxed.py); repository-relative; None skips the slice
    l5_outputs: str | None = None
    generator: Name = "offline"  # or the name of a backbone (LLM generator through the gateway)
    catalog: Annotated[
        Annotated[Literal["synthetic"], Tag("synthetic")]
        | Annotated[EsciCatalog, Tag("esci")]
        | Annotated[JsonCatalog, Tag("json")],
        Discriminator(_catalog_kind),
    ] = "synthetic"
