"""What kind of evidence an artefact is (issue 13 §1): ``measured``, ``known-answer``, ``reference``
or ``mixed``.

- ``measured``: produced by a model or procedure that saw only what a real judge, agent or evaluator
  sees (the rendered prompt, the conversation, tool results), scored against gold it never saw. The
  paper-defined baselines that see nothing but the prompt (L1 ``local/checks``, ``local/always-bad``,
  ``local/random``, and ``local/schema-sampler``, a seeded random answer under the contract) count,
  as floors; so does a real human study re-analysed from its released annotation files.
- ``known-answer``: the outcome follows from how the data or the stand-in was built (a stand-in that
  shares code or word lists with the generator, a scripted party that reads the answer channel, a
  description of our own synthetic build, a check of the machinery such as the cache). Such numbers
  validate the metric code; they are not findings.
- ``reference``: numbers quoted from a paper, or recomputed from a paper's released numbers.
- ``rehearsal``: produced in a rehearsal (issue 14 §3), against the project's local provider server
  whose answers are schema-sampled: it proves the code path, not the numbers. In a rehearsal every
  artefact or row that would be ``measured`` is ``rehearsal`` instead (:func:`as_rehearsal`), the
  registry records ``rehearsal: true`` and :func:`audit` refuses ``measured`` anywhere in it.
- ``no-answer``: the row's producer gave no usable answer (every call failed, or every answer broke
  its contract; issue 25 item 3): the row holds its counts (``n_used`` of ``n_planned``, call errors,
  parse failures) and says why in ``outcome_note``, and has no numbers. A per-row table marks such
  rows from their ``outcome`` column (:mod:`shopbench.llm.outcomes`); :func:`audit` refuses a
  ``measured`` row whose ``n_used`` is 0.
- ``mixed``: a table holding several kinds, with the kind of each row in the column
  :data:`EVIDENCE_COLUMN` (or, for a table whose *columns* differ in kind, e.g. "ours" beside "paper",
  the kind of each column).

Every ``ctx.table`` / ``ctx.figure`` names its kind (a missing kind is an error). :func:`producer_kind`
is the one place that says which judge/agent/evaluator names are known-answer stand-ins, so the
notebooks and the audit (:func:`audit`) agree.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MEASURED, KNOWN, REFERENCE, MIXED = "measured", "known-answer", "reference", "mixed"
REHEARSAL = "rehearsal"
NO_ANSWER = "no-answer"  # issue 25 item 3: the producer gave no usable answer; the row has no numbers
KINDS = (MEASURED, KNOWN, REFERENCE, MIXED, REHEARSAL, NO_ANSWER)
OUTCOME_COLUMN = "outcome"  # shopbench.llm.outcomes: "ok" | "partial" | "no-answer"
REHEARSAL_ENV = "SHOPBENCH_REHEARSAL_SERVER"  # set by shopbench.rehearsal.serving for the run's processes
REHEARSAL_WHY = ("rehearsal against the local provider server (schema-sampled answers through the real "
                 "provider code paths): proves the code path, not the numbers")  # fmt: skip
BASE_KINDS = (MEASURED, KNOWN, REFERENCE)
ROW_KINDS = (*BASE_KINDS, NO_ANSWER)  # the kinds a per-row column may hold
EVIDENCE_COLUMN = "evidence"


class EvidenceError(ValueError):
    """An artefact without a valid evidence kind, or a known-answer row labelled ``measured``."""


# ---- who produced a row ------------------------------------------------------------------------
# Embedded backends by name: (kind, what it is). Everything under llamacpp/ or an API provider is a
# model that sees only its prompt (measured). An embedded backend not listed here is known-answer
# until someone classifies it: it may read anything.
LOCAL_BACKENDS: dict[str, tuple[str, str]] = {
    "local/checks": (MEASURED, "L1 12-check baseline (E.8.1): reads only the judge prompt"),
    "local/always-bad": (MEASURED, "degenerate baseline: always BAD"),
    "local/random": (MEASURED, "degenerate baseline: random verdict seeded by the opaque record id"),
    "local/schema-sampler": (MEASURED, "seeded random answers that satisfy the contract: a random floor, not a model"),
    "local/echo": (KNOWN, "returns the prompt: a transport check, not a model"),
    "local/oracle-rules": (KNOWN, "rule judge built on the PACEShop generator's cue lists and constraint labels"),
}  # fmt: skip
KNOWN_ANSWER_PREFIXES: dict[str, str] = {
    "scripted:": "scripted party: reads the answer channel (the customer's intent, the task's expected actions)",
    "heuristic": "PADMÉ heuristic: shares padme.heuristics.criterion_score with the heuristic filter judges, "
    "whose markers the simulated steering inserts",
    "oracle": "oracle stand-in built from the generator",
}


def producer_kind(name: Any, members: Iterable[str] = ()) -> tuple[str, str]:
    """``(kind, why)`` of a row produced by the judge / agent / evaluator ``name``.

    ``llm:<backbone>`` (a shop LLM agent) takes its backbone's kind; ``majority@k`` and protocol-mean
    rows take :func:`combine` over ``members`` (the backbones averaged or voted)."""
    s = str(name).strip()
    if s.startswith("llm:"):
        return producer_kind(s[4:])
    if s.startswith("majority@") or s in ("mean", "protocol mean"):
        kinds = [producer_kind(m)[0] for m in members]
        if not kinds:
            return KNOWN, f"{s} over no classified members"
        return combine(kinds), f"{s} over {', '.join(members)}"
    if s in LOCAL_BACKENDS:
        return LOCAL_BACKENDS[s]
    for prefix, why in KNOWN_ANSWER_PREFIXES.items():
        if s.startswith(prefix):
            return KNOWN, why
    if s.startswith("local/"):
        return KNOWN, f"{s}: an embedded backend no one has classified (it may read anything)"
    return MEASURED, "a model that sees only its prompt"


def combine(kinds: Iterable[str]) -> str:
    """One number computed from inputs of these kinds: known-answer if any input is (the outcome then
    follows in part from the construction), the common kind if all agree, else mixed."""
    ks = set(kinds)
    if not ks:
        raise EvidenceError("combine() needs at least one kind")
    if KNOWN in ks:
        return KNOWN
    return ks.pop() if len(ks) == 1 else MIXED


# ---- the evidence of one artefact ------------------------------------------------------------
@dataclass(frozen=True)
class Evidence:
    """The resolved evidence of an artefact: its kind, why, and per-row counts or per-part kinds."""

    kind: str
    why: str = ""
    rows: dict[str, int] = field(default_factory=dict)  # mixed by row: kind -> rows
    parts: dict[str, str] = field(default_factory=dict)  # mixed by column / figure series: part -> kind
    rehearsal: bool = False  # made in a rehearsal: no part of it may be measured

    def label(self) -> str:
        """The sentence appended to the caption."""
        if self.rows and len(self.rows) > 1:
            counts = ", ".join(f"{n} {k}" for k, n in sorted(self.rows.items()))
            text = f"Evidence: {self.kind}, per row in column `{EVIDENCE_COLUMN}` ({counts})"
        elif self.parts and len(set(self.parts.values())) > 1:
            by_kind: dict[str, list[str]] = {}
            for part, k in self.parts.items():
                by_kind.setdefault(k, []).append(part)
            groups = "; ".join(k + ": " + ", ".join(ps) for k, ps in by_kind.items())
            text = f"Evidence: {self.kind} by column/series ({groups})"
        else:
            text = f"Evidence: {self.kind}"
        return text + (f" — {self.why.rstrip('.')}." if self.why else ".")

    def as_dict(self) -> dict:
        return {"evidence": self.kind, "evidence_why": self.why, "evidence_rows": dict(self.rows),
                "evidence_parts": dict(self.parts), **({"rehearsal": True} if self.rehearsal else {})}  # fmt: skip


@dataclass(frozen=True)
class PerRow:
    """Evidence by row: the kind of each row from the producer named in ``column`` (a column or an
    index level), via :func:`producer_kind`; ``members`` resolves ``majority@k`` / mean rows; ``fixed``
    maps producer names to a kind chosen by the notebook (e.g. heuristics on recorded real data)."""

    column: str
    members: tuple[str, ...] = ()
    fixed: Mapping[str, str] = field(default_factory=dict)
    why: str = ""

    def kind_of(self, name: Any) -> str:
        if str(name) in self.fixed:
            return self.fixed[str(name)]
        return producer_kind(name, self.members)[0]


def per_row(
    column: str, members: Iterable[str] = (), fixed: Mapping[str, str] | None = None, why: str = ""
) -> PerRow:
    """``evidence=per_row("backbone")``: each row's kind from its producer (see :class:`PerRow`)."""
    return PerRow(column, tuple(members), dict(fixed or {}), why)


def of_producers(names: Iterable[Any], members: Iterable[str] = ()) -> str:
    """The kind of one artefact computed from all these producers (:func:`combine`)."""
    names = list(names)
    if not names:
        return KNOWN
    return combine(producer_kind(n, members)[0] for n in names)


def describe(names: Iterable[Any]) -> str:
    """What the stand-ins among ``names`` are ("local/schema-sampler: seeded random answers ..."), for
    a caption: every embedded backend, scripted party or heuristic is named with what it is."""
    seen: dict[str, str] = {}
    for n in names:
        s = str(n).strip()
        key = s[4:] if s.startswith("llm:") else s
        if key in seen or key in NO_PRODUCER:
            continue
        if key in LOCAL_BACKENDS or key.startswith(("local/", *KNOWN_ANSWER_PREFIXES)):
            seen[key] = producer_kind(key)[1]
    by_why: dict[str, list[str]] = {}
    for k, w in seen.items():
        by_why.setdefault(w, []).append(k)
    return "; ".join(f"{', '.join(ks)}: {w}" for w, ks in by_why.items())


def per_column(names: Iterable[Any], members: Iterable[str] = ()) -> dict[str, str]:
    """``{name: kind}`` for a table whose columns (or a figure whose series) are producers (agents,
    backbones, evaluators): ``evidence=per_column(tab.columns[2:])``."""
    return {str(n): producer_kind(n, members)[0] for n in names}


def ours_vs_paper(df, ours: str = KNOWN, marker: str = "paper") -> dict[str, str]:
    """``{column: kind}`` for a table that sets our numbers beside the paper's: a column whose name
    contains ``marker`` is ``reference``, every other column ``ours`` (known-answer by default: a
    description of our synthetic build)."""
    _check_kind(ours, "ours_vs_paper", BASE_KINDS)
    return {str(c): REFERENCE if marker in str(c).lower() else ours for c in df.columns}


# ---- PADMÉ (seed 003): which parts of a synthesis run are stand-ins -------------------------------
def _section(cfg: Any) -> Mapping[str, Any]:
    """A profile section as plain data: the typed section (``ctx.params.padme``) with its defaults, or a mapping."""
    return cfg.model_dump(mode="json", by_alias=True, warnings=False) if hasattr(cfg, "model_dump") else cfg


def padme_filter_kinds(cfg: Any) -> dict[str, str]:
    """``{"J1": kind, ...}`` for ``padme.filter_judges``: a heuristic judge is known-answer (it shares
    ``criterion_score`` with the markers the simulated steering inserts); an LLM judge its backbone's."""
    cfg = _section(cfg)
    out = {}
    for i, spec in enumerate(cfg.get("filter_judges") or [], start=1):
        if isinstance(spec, Mapping) and "heuristic" in spec:
            out[f"J{i}"] = KNOWN
        else:
            b = spec.get("backbone") if isinstance(spec, Mapping) else spec
            out[f"J{i}"] = producer_kind(b)[0]
    return out


def padme_synthesis_kind(cfg: Any) -> tuple[str, str]:
    """``(kind, why)`` of what a PADMÉ synthesis run's funnel, retention and reward tables report:
    known-answer when the agents are scripted (their conduct follows the steering level by
    construction), a filter judge is heuristic or a τ² source judges its NL assertions with the
    ``known-answer`` stand-in; else the combined kind of the model parts."""
    cfg = _section(cfg)
    why = []
    nl_judges = [
        s.get("nl_judge") for s in cfg.get("sources") or [] if isinstance(s, Mapping) and s.get("nl_judge")
    ]
    agent = cfg.get("agent", "scripted")
    agents = [agent] if isinstance(agent, str) else list(agent or ["scripted"])  # one backbone or a list
    if agents == ["scripted"]:
        why.append("scripted agents whose conduct follows the steering level (simulated steering)")
    if KNOWN in padme_filter_kinds(cfg).values():
        why.append(
            "heuristic filter judges that share padme.heuristics.criterion_score with the steering markers"
        )
    if KNOWN in nl_judges:
        why.append(
            "the τ² reward's NL_ASSERTION part judged by the known-answer stand-in (it reads the answer key)"
        )
    if why:
        return KNOWN, "; ".join(why)
    parts = [cfg.get("steering"), *agents, *nl_judges]
    return combine(producer_kind(p)[0] for p in parts if p), "LLM steering, agents and filter judges"


def evaluator_kinds(specs: Iterable[Any], data: str = "synthetic") -> dict[str, str]:
    """``{evaluator name: kind}`` for PADMÉ evaluator specs (``.name``, ``.backbone``, ``.is_heuristic``).

    On synthetic (steered) pairs a heuristic evaluator is known-answer: it shares the filter judges'
    scorer, whose markers the simulated steering inserts. On ``data="recorded"`` (real tau-bench
    conversations labelled by the environment's reward) nothing was steered, and the heuristic sees
    only the conversation: a measured lexical baseline."""
    out = {}
    for s in specs:
        if getattr(s, "is_heuristic", False):
            out[s.name] = MEASURED if data == "recorded" else KNOWN
        else:
            out[s.name] = producer_kind(getattr(s, "backbone", s.name))[0]
    return out


def _check_kind(kind: Any, where: str, allowed=KINDS) -> str:
    if kind not in allowed:
        raise EvidenceError(f"{where}: evidence kind {kind!r} is not one of {', '.join(allowed)}")
    return kind


def _values(df, column: str) -> list:
    if column in df.columns:
        return list(df[column])
    if column in (df.index.names or []):
        return list(df.index.get_level_values(column))
    raise EvidenceError(f"per-row evidence names column {column!r}, which the table does not have "
                        f"(columns: {list(df.columns)}, index: {list(df.index.names)})")  # fmt: skip


def rehearsal_active() -> bool:
    """Whether this process runs inside a rehearsal (:mod:`shopbench.rehearsal`)."""
    return bool(os.environ.get(REHEARSAL_ENV))


def as_rehearsal(ev: Evidence, df=None) -> tuple[Evidence, Any]:
    """``ev`` (and the table's per-row column) with every ``measured`` turned into ``rehearsal``."""
    swap = {MEASURED: REHEARSAL}
    rows: dict[str, int] = {}
    for k, n in ev.rows.items():
        rows[swap.get(k, k)] = rows.get(swap.get(k, k), 0) + n
    parts = {p: swap.get(k, k) for p, k in ev.parts.items()}
    if df is not None and EVIDENCE_COLUMN in getattr(df, "columns", ()):
        df = df.copy()
        df[EVIDENCE_COLUMN] = [swap.get(k, k) for k in df[EVIDENCE_COLUMN]]
    why = REHEARSAL_WHY + (f"; {ev.why}" if ev.why else "")
    return Evidence(swap.get(ev.kind, ev.kind), why, rows=rows, parts=parts, rehearsal=True), df


def resolve(evidence: Any, name: str, df=None, why: str = "") -> tuple[Evidence, Any]:
    """``(Evidence, df)`` for ``ctx.table``/``ctx.figure``; a table with per-row evidence comes back
    with the :data:`EVIDENCE_COLUMN` added (or checked, when the notebook made it). In a rehearsal,
    :func:`as_rehearsal` of that."""
    ev, df = _resolve(evidence, name, df, why)
    return as_rehearsal(ev, df) if rehearsal_active() else (ev, df)


def _resolve(evidence: Any, name: str, df=None, why: str = "") -> tuple[Evidence, Any]:
    where = f"artefact {name!r}"
    if evidence is None:
        raise EvidenceError(
            f"{where}: evidence= is required ({', '.join(KINDS)}; see shopbench.report.evidence)"
        )
    if isinstance(evidence, PerRow):
        if df is None:
            raise EvidenceError(f"{where}: per-row evidence needs a table")
        values = _values(df, evidence.column)
        kinds = [evidence.kind_of(v) for v in values]
        if OUTCOME_COLUMN in df.columns:  # a producer with no usable answer: its row is no finding
            kinds = [
                NO_ANSWER if o == NO_ANSWER else k for k, o in zip(kinds, df[OUTCOME_COLUMN], strict=True)
            ]
        df = df.copy()
        df[EVIDENCE_COLUMN] = kinds
        evidence, why = MIXED, why or evidence.why or describe(values)
    if isinstance(evidence, Mapping):
        parts = {str(k): _check_kind(v, f"{where} part {k!r}", BASE_KINDS) for k, v in evidence.items()}
        if df is not None:
            cols = {str(c) for c in df.columns} | {str(n) for n in df.index.names if n is not None}
            unknown = sorted(set(parts) - cols - {"*"})
            if unknown:
                raise EvidenceError(
                    f"{where}: evidence names parts {unknown} that are not columns of the table"
                )
        return Evidence(
            combine(parts.values()) if len(set(parts.values())) == 1 else MIXED, why, parts=parts
        ), df
    _check_kind(evidence, where)
    if evidence == MIXED:
        if df is None or EVIDENCE_COLUMN not in df.columns:
            raise EvidenceError(f"{where}: kind 'mixed' needs a per-row column {EVIDENCE_COLUMN!r} "
                                "(or evidence=per_row(<producer column>), or a {column: kind} mapping)")  # fmt: skip
        rows: dict[str, int] = {}
        for i, k in enumerate(df[EVIDENCE_COLUMN]):
            _check_kind(k, f"{where} row {i}", ROW_KINDS)
            rows[k] = rows.get(k, 0) + 1
        kind = next(iter(rows)) if len(rows) == 1 else MIXED
        if not rows:  # an empty table: nothing to be mixed
            kind = KNOWN
        return Evidence(kind, why, rows=rows), df
    return Evidence(evidence, why), df


# ---- audit of a registry -----------------------------------------------------------------------
PRODUCER_COLUMNS = ("backbone", "agent", "evaluator", "judge", "model", "run")
NO_PRODUCER = ("", "nan", "None", "-", "–", "mean", "protocol mean", "all", "total")


def audit(artifacts: Iterable[Mapping], read_table: Callable[[Mapping], Any] | None = None) -> list[str]:
    """Problems of a registry (issue 13 §1): an artefact without a valid kind, and a row whose
    producer is a known-answer stand-in (:func:`producer_kind`) labelled ``measured`` (by the
    artefact's kind or its per-row column). ``read_table(artefact)`` returns the saved table."""
    problems = []
    for a in artifacts:
        where = f"{a.get('kind', '?')} {a.get('name', '?')!r} ({a.get('notebook', '?')})"
        kind = a.get("evidence")
        if kind not in KINDS:
            problems.append(f"{where}: no valid evidence kind (got {kind!r})")
            continue
        if a.get("rehearsal"):  # issue 14 §3: nothing made against the rehearsal server is measured
            measured = [p for p, k in (a.get("evidence_parts") or {}).items() if k == MEASURED]
            if kind == MEASURED or MEASURED in (a.get("evidence_rows") or {}) or measured:
                problems.append(f"{where}: made in a rehearsal but labelled measured "
                                f"({'parts ' + ', '.join(measured) if measured else 'kind/rows'})")  # fmt: skip
            df = read_table(a) if (read_table is not None and a.get("kind") == "table") else None
            if df is not None and EVIDENCE_COLUMN in df.columns and MEASURED in set(df[EVIDENCE_COLUMN]):
                problems.append(f"{where}: made in a rehearsal but a row is labelled measured")
            continue
        if kind == REHEARSAL:
            problems.append(f"{where}: labelled rehearsal but not recorded as made in a rehearsal")
            continue
        fixed = a.get("evidence_fixed") or {}
        members = tuple(a.get("evidence_members") or ())  # what majority@k / mean rows combine
        for part, pk_label in (a.get("evidence_parts") or {}).items():
            pk, why = producer_kind(part)
            if pk_label == MEASURED and pk == KNOWN and part not in fixed and part.strip() not in NO_PRODUCER:
                problems.append(
                    f"{where}: part {part!r} is a known-answer stand-in ({why}) but labelled measured"
                )
        if a.get("kind") != "table" or read_table is None or kind not in (MEASURED, MIXED):
            continue
        df = read_table(a)
        if df is None:
            continue
        row_kinds = list(df[EVIDENCE_COLUMN]) if EVIDENCE_COLUMN in df.columns else [kind] * len(df)
        problems += _no_answer_problems(where, df, row_kinds)
        for col in [c for c in df.columns if str(c).lower() in PRODUCER_COLUMNS]:
            for i, (producer, rk) in enumerate(zip(df[col], row_kinds, strict=True)):
                if str(producer).strip() in NO_PRODUCER:
                    continue
                pk, why = producer_kind(producer, members)
                if rk == MEASURED and pk == KNOWN and str(producer) not in fixed:
                    problems.append(f"{where} row {i}: {col} {producer!r} is a known-answer stand-in ({why}) "
                                    "but the row is labelled measured")  # fmt: skip
    return problems


def _no_answer_problems(where: str, df, row_kinds: list) -> list[str]:
    """Rows labelled ``measured`` that rest on no usable answer (``n_used`` 0, or outcome
    ``no-answer``): a failed call must never read as a result (issue 25 item 3)."""
    out = []
    used = list(df["n_used"]) if "n_used" in df.columns else [None] * len(df)
    outcome = list(df[OUTCOME_COLUMN]) if OUTCOME_COLUMN in df.columns else [None] * len(df)
    for i, (rk, n, o) in enumerate(zip(row_kinds, used, outcome, strict=True)):
        if rk != MEASURED:
            continue
        try:
            zero = n is not None and float(n) == 0
        except (TypeError, ValueError):
            zero = False
        if zero or o == NO_ANSWER:
            what = "n_used 0" if zero else "outcome no-answer"
            out.append(f"{where} row {i}: labelled measured but rests on no usable answer ({what}); "
                       f"its kind must be {NO_ANSWER}")  # fmt: skip
    return out


__all__ = ["BASE_KINDS", "NO_ANSWER", "OUTCOME_COLUMN", "ROW_KINDS", "EVIDENCE_COLUMN", "Evidence", "EvidenceError", "KINDS", "KNOWN", "KNOWN_ANSWER_PREFIXES",
           "LOCAL_BACKENDS", "MEASURED", "MIXED", "PerRow", "REFERENCE", "REHEARSAL", "as_rehearsal", "audit",
           "rehearsal_active", "combine", "of_producers",
           "evaluator_kinds", "ours_vs_paper", "padme_filter_kinds", "padme_synthesis_kind", "per_column", "per_row", "producer_kind", "resolve"]  # fmt: skip
