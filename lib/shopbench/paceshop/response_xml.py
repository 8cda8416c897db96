"""A stable XML view (and a JSON view) of the four-field PACEShop response (seed 000, B.4, B.6, D.2 D6).

"the candidate response is instantiated as a structured object y = (y^ov, y^cat, y^rq, y^attr)"
(B.6); the L1 validator runs an "XML round-trip" check on every record (D.2 D6: "Twelve
deterministic validation checks (overview length, bold–category match, category and related-query
counts and uniqueness, evidence-ID validity, XML round-trip, banned-string screening)"), and
"candidates that fail hard schema, evidence-ID, or XML round-trip checks are rejected" (B.9).

The view::

    <response>
      <overview_text>…</overview_text>
      <productCategoryList><category search_query="…">label</category>…</productCategoryList>
      <rqList><rq>…</rq>…</rqList>
      <attribution_list><evidence_id>…</evidence_id>…</attribution_list>
    </response>

Escaping is ElementTree's (``&``, ``<``, ``>`` and quotes in attributes). ``bold_categories`` is
not stored: :func:`from_xml` recovers it from the ``**…**`` spans of the overview. The view is
lossless, so ``from_xml(to_xml(r)) == r``, exactly when there are no more search queries than
categories (a category without one carries no ``search_query`` attribute), ``bold_categories``
equals the overview's bold spans and every string is XML-representable (no control characters, no
carriage returns). Otherwise it holds what it can and the round trip, and with it the
``xml_round_trip`` check, fails. Nothing is repaired.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from ..core import Response

BOLD = re.compile(r"\*\*([^*]+)\*\*")
_CHILDREN = ("overview_text", "productCategoryList", "rqList", "attribution_list")


def bold_spans(text: str) -> list[str]:
    """The ``**…**`` spans of an overview, in order (the text between the markers, unstripped)."""
    return BOLD.findall(text)


def to_xml(r: Response) -> str:
    """The XML view of a response (one line, UTF-8 text, no declaration)."""
    root = ET.Element("response")
    ET.SubElement(root, "overview_text").text = r.overview_text
    cats = ET.SubElement(root, "productCategoryList")
    for i, label in enumerate(r.productCategoryList):
        el = ET.SubElement(cats, "category")
        if i < len(r.category_search_queries):
            el.set("search_query", r.category_search_queries[i])
        el.text = label
    rqs = ET.SubElement(root, "rqList")
    for q in r.rqList:
        ET.SubElement(rqs, "rq").text = q
    attrs = ET.SubElement(root, "attribution_list")
    for eid in r.attribution_list:
        ET.SubElement(attrs, "evidence_id").text = eid
    return ET.tostring(root, encoding="unicode")


def _children(el: ET.Element, tag: str) -> list[ET.Element]:
    out = list(el)
    bad = [c.tag for c in out if c.tag != tag]
    if bad:
        raise ValueError(f"<{el.tag}> may hold only <{tag}> elements, found <{bad[0]}>")
    return out


def from_xml(text: str) -> Response:
    """Parse the XML view back into a :class:`Response` (strict: unknown or missing elements raise
    ``ValueError``; ``bold_categories`` are the overview's ``**…**`` spans)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise ValueError(f"not well-formed XML: {e}") from None
    if root.tag != "response":
        raise ValueError(f"root element must be <response>, found <{root.tag}>")
    tags = [c.tag for c in root]
    if tags != list(_CHILDREN):
        raise ValueError(f"<response> must hold exactly {', '.join(_CHILDREN)} in order; found {tags}")
    ov, cats, rqs, attrs = list(root)
    overview = ov.text or ""
    labels, queries = [], []
    for c in _children(cats, "category"):
        labels.append(c.text or "")
        if "search_query" in c.attrib:
            queries.append(c.attrib["search_query"])
    return Response(
        overview_text=overview,
        bold_categories=bold_spans(overview),
        productCategoryList=labels,
        category_search_queries=queries,
        rqList=[c.text or "" for c in _children(rqs, "rq")],
        attribution_list=[c.text or "" for c in _children(attrs, "evidence_id")],
    )


def to_struct_json(r: Response) -> str:
    """The response as the six-key JSON object of the B.9 contract ("Return JSON only with keys:
    overview_text, bold_categories, productCategoryList, category_search_queries, rqList,
    attribution_list"), keys in that order, compact, non-ASCII kept."""
    return json.dumps(r.model_dump(), ensure_ascii=False, separators=(",", ":"))
