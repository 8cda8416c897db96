"""The L5 real-assistant slice: importing an existing assistant's outputs in a looser schema
(seed 000, B.4 and Table 16).

B.4: "(v) a normalized real-assistant slice of 100 external outputs that map cleanly into the same
response contract". Table 16, "Rigid schema versus ecological validity": "Treat the fixed schema as a
judge-facing normalization layer and add a relaxed-schema import path for external outputs." —
"100 normalized real-assistant outputs stored with raw originals preserved; persona claims withheld
for this slice when persona context is unavailable."

The relaxed schema (a JSON array or JSON lines; one object per output):

==================  =========================================================================
key (aliases)        accepted values
==================  =========================================================================
``id``               (``output_id``, ``record_id``) any string or number; missing → ``l5-<n>``
``query``            (``question``, ``prompt``) string; required
``persona``          a B.7 persona object, or absent/null (persona claims are then withheld)
``response``         an object with the four fields below, or the fields at the top level
overview             ``overview_text``, ``overview``, ``summary``, ``answer``: string
categories           ``productCategoryList``, ``categories``, ``category_list``: list of strings,
                     or one string split on ``;``, ``|`` or new lines
related queries      ``rqList``, ``related_queries``, ``related``, ``follow_ups``: same
attributions         ``attribution_list``, ``citations``, ``sources``, ``evidence_ids``: strings, or
                     objects with ``id`` / ``evidence_id`` / ``product_id``
category searches    ``category_search_queries``, ``category_queries``: optional
evidence             (``evidence_ids``/``candidate_evidence``) a list of candidate ids, optional
==================  =========================================================================

Normalisation (each step that changed something is recorded as a *repair* on the output):
whitespace collapsed; list strings split; citation objects reduced to their id; exact duplicate
list items dropped; the ``**…**`` bold spans read from the overview, and when the overview bolds
nothing, each category found in the overview text is bolded (``bolded categories in overview``);
missing category searches derived from the labels (lower-cased). Nothing is truncated or invented:
an output that still breaks the contract (too long, wrong counts) is kept and its 12 checks say so.

An output is *rejected* (with its reason, never raising) when it is not an object, has no query, no
overview, or no categories. A placeholder (``...``, ``…``, ``<overview>``, ``TODO``, ``string``: what a
model copying a prompt's schema template leaves) counts as missing; a placeholder list item is dropped
and recorded as a repair. A file that cannot be read, is not JSON, or holds no output at all is an
:class:`~shopbench.errors.InputError` naming file, line and field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError

from ..core import Persona, Response
from ..core._base import Model
from ..errors import InputError, read_text
from ..strictjson import StrictJSONError, loads
from .checks import run_checks
from .response_xml import BOLD

ALIASES = {
    "id": ("id", "output_id", "record_id"),
    "query": ("query", "question", "prompt"),
    "overview_text": ("overview_text", "overview", "summary", "answer"),
    "productCategoryList": ("productCategoryList", "categories", "category_list"),
    "rqList": ("rqList", "related_queries", "related", "follow_ups"),
    "attribution_list": ("attribution_list", "citations", "sources", "evidence_ids"),
    "category_search_queries": ("category_search_queries", "category_queries"),
    "candidate_evidence": ("candidate_evidence", "evidence_pool", "evidence"),
}
_SPLIT = re.compile(r"\s*(?:;|\||\n)\s*")
# a value a model copied from a schema template instead of answering: "...", "…", "<overview>", "TODO"
_PLACEHOLDER = re.compile(
    r"^\s*(?:\.{2,}|…+|<[^<>]{0,40}>|\[[^\[\]]{0,40}\]|todo|tbd|n/?a|string|none|null)\s*$", re.I
)


def is_placeholder(value: Any) -> bool:
    """True for a template placeholder left in place of an answer ("...", "…", "<overview>", "TODO")."""
    return isinstance(value, str) and bool(_PLACEHOLDER.match(value))


FIX = "see the relaxed schema in shopbench.paceshop.relaxed (one object per output with query and response fields)"


@dataclass
class ImportedOutput:
    """One external output: the raw original (kept verbatim), the normalised response, the repairs
    made, the 12 checks and whether persona context was available."""

    output_id: str
    query: str
    raw: dict
    response: Response
    persona: Persona | None
    candidate_ids: list[str] | None
    repairs: list[str] = field(default_factory=list)
    checks: dict[str, bool] = field(default_factory=dict)
    where: str = ""  # "line 3" / "item 2" in the file

    @property
    def persona_claims_withheld(self) -> bool:
        return self.persona is None

    @property
    def assignment_id(self) -> str | None:
        """The PACEShop assignment the output answers, when the file names one (``assignment_id``)."""
        a = self.raw.get("assignment_id") if isinstance(self.raw, dict) else None
        return str(a) if a not in (None, "") else None


@dataclass
class ImportReport:
    imported: list[ImportedOutput]
    rejected: list[dict]  # {"where", "output_id", "reason"}
    file: str = ""

    def summary(self):
        """One row per output (imported or rejected): status, repairs / reason, checks passed."""
        import pandas as pd

        rows = [{"output": o.output_id, "status": "imported", "repairs": "; ".join(o.repairs) or "none",
                 "checks_passed": sum(o.checks.values()), "persona": "given" if o.persona else "withheld"}
                for o in self.imported]  # fmt: skip
        rows += [{"output": r["output_id"], "status": "rejected", "repairs": r["reason"], "checks_passed": None,
                  "persona": ""} for r in self.rejected]  # fmt: skip
        return pd.DataFrame(rows)


def _first(obj: dict, key: str) -> tuple[str | None, Any]:
    for k in ALIASES[key]:
        if k in obj:
            return k, obj[k]
    return None, None


def _clean(s: Any) -> str:
    return " ".join(str(s).split())


def _as_list(name: str, value: Any, repairs: list[str]) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        parts = [p for p in _SPLIT.split(value.strip()) if p]
        repairs.append(f"{name}: split a string into {len(parts)} items")
        value = parts
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list or a string, got {type(value).__name__}")
    out: list[str] = []
    for v in value:
        if isinstance(v, dict):
            k = next((k for k in ("id", "evidence_id", "product_id") if k in v), None)
            if k is None:
                raise ValueError(f"{name}: an object without id / evidence_id / product_id")
            repairs.append(f"{name}: reduced a citation object to its {k}")
            v = v[k]
        if v is None or isinstance(v, list | dict):
            raise ValueError(f"{name}: an item is {type(v).__name__}, expected a string")
        c = _clean(v)
        if is_placeholder(c):
            repairs.append(f"{name}: dropped placeholder {c[:20]!r}")
            continue
        if c != str(v):
            repairs.append(f"{name}: collapsed whitespace")
        if c and c not in out:
            out.append(c)
        elif c:
            repairs.append(f"{name}: dropped duplicate '{c[:30]}'")
    return out


def _dedup(xs: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(xs))


def output_checks(resp: Response, candidate_ids: Iterable[str] | None) -> dict[str, bool]:
    """The 12 checks of an imported output: against its candidate evidence when known, else against the
    ids it cites (an output's attributions are then the only ids there are); the used ids are the cited ones."""
    attr = list(resp.attribution_list)
    return run_checks(resp, list(candidate_ids) if candidate_ids is not None else attr, attr)


def normalise(obj: Any, n: int) -> ImportedOutput:
    """One output in the relaxed schema → :class:`ImportedOutput`; ``ValueError`` (with the reason)
    when it must be rejected."""
    if not isinstance(obj, dict):
        raise ValueError(f"an output must be a JSON object, got {type(obj).__name__}")
    _, oid = _first(obj, "id")
    oid = _clean(oid) if oid not in (None, "") else f"l5-{n:04d}"
    _, query = _first(obj, "query")
    if not isinstance(query, str) or not query.strip() or is_placeholder(query):
        raise ValueError("no query (query / question / prompt)")
    src = obj.get("response", obj)
    if not isinstance(src, dict):
        if isinstance(src, str):
            raise ValueError(f"response is text, not a JSON object: {' '.join(src.split())[:60]!r}")
        raise ValueError("response must be an object")
    repairs: list[str] = []
    if src is obj:
        repairs.append("response fields read from the top level")
    k, overview = _first(src, "overview_text")
    if not isinstance(overview, str) or not overview.strip() or is_placeholder(overview):
        what = f"a placeholder {overview.strip()[:20]!r}" if is_placeholder(overview) else "missing"
        raise ValueError(f"no overview (overview_text / overview / summary / answer): {what}")
    if k != "overview_text":
        repairs.append(f"overview read from '{k}'")
    ov = " ".join(overview.split())
    if ov != overview:
        repairs.append("overview: collapsed whitespace")
    k, cats = _first(src, "productCategoryList")
    cats = _dedup(_as_list("categories", cats, repairs))
    if not cats:
        raise ValueError("no categories (productCategoryList / categories / category_list)")
    _, rq = _first(src, "rqList")
    rq = _as_list("related queries", rq, repairs)
    _, attr = _first(src, "attribution_list")
    attr = _as_list("attributions", attr, repairs)
    _, csq = _first(src, "category_search_queries")
    csq = _as_list("category searches", csq, repairs)
    if not csq:
        csq = [c.lower() for c in cats]
        repairs.append("category searches derived from the labels")
    bold = [m.group(1) for m in BOLD.finditer(ov)]
    if not bold:
        for c in cats:
            m = re.search(re.escape(c), ov, re.I)
            if m:
                ov = ov[: m.start()] + f"**{ov[m.start() : m.end()]}**" + ov[m.end() :]
        bold = [m.group(1) for m in BOLD.finditer(ov)]
        if bold:
            repairs.append(f"bolded {len(bold)} categories found in the overview")
    persona = None
    if obj.get("persona") is not None:
        try:
            persona = Persona.model_validate(obj["persona"])
        except Exception as e:  # a persona in another shape: withheld, said so
            repairs.append(
                f"persona not in the B.7 schema ({str(e).splitlines()[0][:80]}); persona claims withheld"
            )
    _, cand = _first(obj, "candidate_evidence")
    cand_ids = _as_list("candidate evidence", cand, repairs) if cand is not None else None
    resp = Response(overview_text=ov, bold_categories=bold, productCategoryList=cats, category_search_queries=csq,
                    rqList=rq, attribution_list=attr)  # fmt: skip
    checks = output_checks(resp, cand_ids)
    if cand_ids is None:
        repairs.append("no candidate evidence given: evidence-id checks read the cited ids only")
    return ImportedOutput(oid, _clean(query), obj, resp, persona, cand_ids, repairs, checks)


def _parse(path: Path, text: str) -> list[tuple[str, Any]]:
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = loads(text)
        except StrictJSONError as e:
            raise InputError(f"not valid JSON: {e}", file=path, fix=FIX) from None
        return [(f"item {i}", x) for i, x in enumerate(data)]
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((f"line {i}", loads(line)))
        except StrictJSONError as e:
            raise InputError(f"not valid JSON: {e}", file=path, where=f"line {i}",
                             fix="one JSON object per line (JSON lines), or one JSON array for the whole file") from None  # fmt: skip
    return out


def provenance(path: str | Path) -> dict | None:
    """Who produced a file of outputs: ``<file>.meta.json`` beside it (written by
    :mod:`.l5_generate`: ``generated_by``, ``date``, ``command``), or None when there is none (then the
    file is not known to hold a model's outputs, e.g. the project's own fixture). A meta file that is
    not a JSON object with ``generated_by`` is an :class:`InputError` naming it."""
    meta = Path(path).with_name(Path(path).name + ".meta.json")
    if not meta.is_file():
        return None
    try:
        data = loads(read_text(meta, "provenance of the assistant outputs"))
    except StrictJSONError as e:
        raise InputError(
            f"not valid JSON: {e}", file=meta, fix="rewrite it with python -m shopbench.paceshop.l5_generate"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("generated_by"), str):
        raise InputError("has no 'generated_by' string", file=meta, where="generated_by",
                         fix="name the model that produced the outputs, or delete the file")  # fmt: skip
    return data


class StrictOutput(Model):
    """One assistant output in the strict schema (``shopbench schema assistant-output``, issue 26 §3):
    the B.9 response exactly, no alias and no repair."""

    model_config = ConfigDict(extra="forbid", title="StrictOutput")

    id: str
    query: str
    response: Response
    assignment_id: str | None = (
        None  # the PACEShop input it answers (pace_assistant judges it in that context)
    )
    persona: Persona | None = None
    candidate_evidence: list[str] | None = None


STRICT_FIX = ("write the B.9 response exactly (`shopbench schema assistant-output`, docs/guides/files.md), or "
              "import the file with the relaxed schema (load_relaxed)")  # fmt: skip


def read_strict(path: str | Path) -> ImportReport:
    """Import a JSON-lines file of outputs in the strict schema (:class:`StrictOutput`): nothing is
    repaired and nothing rejected; the first line that breaks the schema (or repeats an id) is one
    :class:`InputError` naming file, line, field and the fix, raised before anything is returned."""
    from .io import iter_jsonl

    p = Path(path)
    imported: list[ImportedOutput] = []
    seen: dict[str, int] = {}
    for lineno, obj in iter_jsonl(p, "file of assistant outputs", STRICT_FIX):
        where = f"line {lineno}"
        try:
            o = StrictOutput.model_validate(obj)
        except ValidationError as e:
            err = e.errors()[0]
            field = ".".join(str(x) for x in err["loc"]) or None
            raise InputError(err["msg"], file=p, where=where, field=field, fix=STRICT_FIX) from None
        if o.id in seen:
            raise InputError(f"repeats the id of line {seen[o.id]}", file=p, where=where, field="id",
                             fix="give every output its own id")  # fmt: skip
        seen[o.id] = lineno
        imported.append(ImportedOutput(o.id, o.query, obj, o.response, o.persona, o.candidate_evidence, [],
                                       output_checks(o.response, o.candidate_evidence), where))  # fmt: skip
    if not imported:
        raise InputError("holds no output", file=p, fix=STRICT_FIX)
    return ImportReport(imported, [], str(p))


def load_relaxed(path: str | Path) -> ImportReport:
    """Import a file of external assistant outputs (module docstring): each output normalised or
    rejected with its reason. ``InputError`` for a file that is missing, unreadable, not JSON, or
    empty."""
    p = Path(path)
    text = read_text(p, "file of assistant outputs")
    items = _parse(p, text)
    if not items:
        raise InputError("holds no output", file=p, fix=FIX)
    imported, rejected = [], []
    seen: set[str] = set()
    for n, (where, obj) in enumerate(items):
        try:
            out = normalise(obj, n)
        except ValueError as e:
            oid = obj.get("id", f"l5-{n:04d}") if isinstance(obj, dict) else f"l5-{n:04d}"
            rejected.append({"where": where, "output_id": str(oid), "reason": str(e)})
            continue
        if out.output_id in seen:
            rejected.append({"where": where, "output_id": out.output_id, "reason": "repeated id"})
            continue
        seen.add(out.output_id)
        out.where = where
        imported.append(out)
    return ImportReport(imported, rejected, str(p))
