"""PADMÉ's by-domain rows of Tables 6, 8, 15 and 16 (issue 28 item 3; seed 003 App. B, C.1, E), written
by notebook 40 (the notebook that owns PADMÉ's dataset tables).

The paper's four domains are ``airline``, ``banking_knowledge`` ("banking"), ``retail`` and ``telecom``
(§4: "airline (50), banking (97), retail (114), and telecom (114)"). Every row carries its
``evidence`` kind; a domain the run has no source for, or whose data folder is absent, gets a row that
says so (``note``) instead of numbers, never a failure.

* :func:`table16` — Table 16, "Domain complexity metrics across evaluation environments. Tool name
  overlap between domain pairs ranges from 0.03 to 0.11 by Jaccard index; banking represents the
  only domain featuring active retrieval": policy words, agent tools, user tools per domain,
  recomputed from the data with :mod:`shopbench.domains.check`'s own functions (the numbers of
  ``shopbench domains check NAME``), each beside the paper's value (``paper_*``), and the Jaccard
  index of the agent tool names for every pair of domains (``jaccard_<other>``). Evidence
  ``known-answer`` (a description of the benchmark's files; the ``paper_*`` columns are quoted).
* :func:`table6_domains` — Table 6's domain block: kept pairs per domain beside the paper's 309 / 294
  / 262 / 135, and the domain's description (tasks, policy words, agent and user tools) as this run
  recomputed it.
* :func:`table8_domains` — Table 8's domain rows (cells, draws, kept, retention, cumulative retention,
  draws per kept) of :func:`shopbench.padme.tables.retention_table`.
* :func:`table15_domains` — Table 15's domain block as the synthesis run can give it: pairs of the
  first attempt at depth D0, D1, D2 and the retention |D2| / |D0|, beside the paper's retention. The
  agreement with a human majority needs human labels, which synthesized pairs do not have (notebook
  70 computes it on the released study).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["DOMAINS", "PAPER_PAIRS", "PAPER_T15_RETENTION", "domain_paths", "domain_stats", "run_domains",
           "table15_domains", "table16", "table6_domains", "table8_domains"]  # fmt: skip

DOMAINS = ("airline", "banking_knowledge", "retail", "telecom")
PAPER_TASKS = {"airline": 50, "banking_knowledge": 97, "retail": 114, "telecom": 114}  # §4
PAPER_PAIRS = {
    "retail": 309,
    "telecom": 294,
    "banking_knowledge": 262,
    "airline": 135,
}  # Table 6, domain block
PAPER_T15_RETENTION = {
    "airline": 0.67,
    "retail": 0.64,
    "banking_knowledge": 0.69,
    "telecom": 0.77,
}  # Table 15
PAPER_JACCARD_RANGE = "0.03-0.11"  # Table 16 caption


def _tool_names(name: str) -> set[str]:
    """The agent's tool names of a domain, as ``domains check`` counts them."""
    if name == "airline":
        from ..domains.airline import TAU2_TOOL_NAMES

        return set(TAU2_TOOL_NAMES)
    if name == "retail":
        from ..domains.tau2_retail.specs import TOOL_NAMES

        return set(TOOL_NAMES)
    if name == "banking_knowledge":
        from ..domains.banking_knowledge import DEFAULT_VARIANT
        from ..domains.banking_knowledge.environment import agent_tool_specs

        return {s["function"]["name"] for s in agent_tool_specs(DEFAULT_VARIANT)}
    from ..domains.telecom import AGENT_TOOL_NAMES

    return set(AGENT_TOOL_NAMES)


def domain_stats(name: str, path: Path) -> tuple[dict[str, Any] | None, str]:
    """``(table16 dict of domains check, "")`` for the domain's folder, or ``(None, why)`` when it is
    absent or unreadable (its row then says why)."""
    from ..domains import check as C
    from ..errors import UserError

    if not path.is_dir():
        return None, f"data absent: no folder at {path}"
    try:
        if name == "airline":
            from ..domains.airline import load_airline

            return C._table16_airline(load_airline(path)), ""
        if name == "retail":
            from ..domains.tau2_retail import load_tau2

            return C._table16_retail(load_tau2(path)), ""
        if name == "banking_knowledge":
            from ..domains.banking_knowledge import load_banking

            return C._table16_banking(load_banking(path)), ""
        from ..domains.telecom import load_telecom

        return C._table16_telecom(load_telecom(path)), ""
    except (UserError, FileNotFoundError) as e:
        return None, f"data unreadable at {path}: {e}"


def _shown(path: Path) -> str:
    """``path`` relative to the repository (``../shared/data/...``), not this machine's absolute path."""
    import os

    from ..paths import ROOT

    try:
        return os.path.relpath(path.resolve(), ROOT)
    except ValueError:  # another drive
        return str(path)


def table16(paths: Mapping[str, Path]) -> pd.DataFrame:
    """Table 16 (module docstring): one row per domain of ``paths`` (``{domain: folder}``)."""
    from ..domains.check import PAPER_TABLE16

    names = {d: _tool_names(d) for d in DOMAINS}
    rows = []
    for d in DOMAINS:
        stats, why = domain_stats(d, Path(paths[d]))
        paper = PAPER_TABLE16[d]
        row: dict[str, Any] = {"domain": d, "data": _shown(Path(paths[d]))}
        for k in ("policy_words", "agent_tools", "user_tools"):
            row[k] = None if stats is None else stats[k]
            row[f"paper_{k}"] = paper[k]
        for other in DOMAINS:
            if other != d:
                a, b = names[d], names[other]
                row[f"jaccard_{other}"] = None if stats is None else round(len(a & b) / len(a | b), 4)
        row["paper_jaccard_range"] = PAPER_JACCARD_RANGE
        row["note"] = why
        row["evidence"] = "known-answer"
        rows.append(row)
    cols = ["domain", "data", *[c for k in ("policy_words", "agent_tools", "user_tools") for c in (k, f"paper_{k}")],
            *[f"jaccard_{d}" for d in DOMAINS], "paper_jaccard_range", "note", "evidence"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def _description(stats: Mapping[str, Any] | None, n_tasks: int | None) -> str:
    if stats is None:
        return ""
    tasks = "" if n_tasks is None else f"{n_tasks} tasks; "
    u = stats.get("user_tools")
    user = f", {int(u)} user-side tools" if u is not None and not pd.isna(u) and u else ""
    return f"{tasks}{int(stats['policy_words']):,}-word policy, {int(stats['agent_tools'])} agent tools{user}"


def _notes(run_domains: Mapping[str, str]) -> dict[str, str]:
    return {d: run_domains.get(d, "no source for this domain in this run's padme.sources") for d in DOMAINS}


def table6_domains(df: pd.DataFrame, t16: pd.DataFrame, tasks_in_data: Mapping[str, int],
                   tasks_drawn: Mapping[str, int], run_domains: Mapping[str, str], kind: str) -> pd.DataFrame:  # fmt: skip
    """Table 6's domain block (module docstring). ``df``: the pairs table; ``run_domains``: ``{domain:
    ""}`` for domains the run has a source for, ``{domain: why}`` for those it skipped; ``kind``: the
    synthesis run's evidence kind."""
    kept = df[df["kept"].astype(bool)] if len(df) else df
    notes = _notes(run_domains)
    rows = []
    by16 = t16.set_index("domain")
    for d in DOMAINS:
        s = by16.loc[d]
        stats = None if s["note"] else {k: s[k] for k in ("policy_words", "agent_tools", "user_tools")}
        ran = d in run_domains and not run_domains[d]
        n = int((kept["domain"] == d).sum()) if ran and len(kept) else (0 if ran else None)
        rows.append({"domain": d, "tasks_drawn": tasks_drawn.get(d) if ran else None,
                     "kept_pairs": n, "share": (n / len(kept)) if ran and len(kept) else None,
                     "paper_pairs": PAPER_PAIRS[d], "paper_share": PAPER_PAIRS[d] / 1000,
                     "description": _description(stats, tasks_in_data.get(d)),
                     "paper_description": _description({"policy_words": s["paper_policy_words"],
                                                        "agent_tools": s["paper_agent_tools"],
                                                        "user_tools": s["paper_user_tools"]}, PAPER_TASKS[d]),
                     "note": notes[d] or s["note"], "evidence": kind})  # fmt: skip
    return pd.DataFrame(rows)


def table8_domains(df: pd.DataFrame, run_domains: Mapping[str, str], kind: str, K: int) -> pd.DataFrame:
    """Table 8's domain rows (module docstring)."""
    from .tables import _retention_row

    notes = _notes(run_domains)
    rows = []
    for d in DOMAINS:
        g = df[df["domain"] == d] if len(df) else df
        row: dict[str, Any] = {"domain": d}
        if len(g):
            row |= _retention_row(g, K)
        row |= {"note": notes[d], "evidence": kind}
        rows.append(row)
    return pd.DataFrame(rows)


def table15_domains(df: pd.DataFrame, run_domains: Mapping[str, str], kind: str, K: int) -> pd.DataFrame:
    """Table 15's domain block as a synthesis run gives it (module docstring): first-attempt pairs at
    each depth and the retention |D_K| / |D_0|."""
    notes = _notes(run_domains)
    rows = []
    for d in DOMAINS:
        g = df[(df["domain"] == d) & (df["attempt"] == 0)] if len(df) else df
        row: dict[str, Any] = {"domain": d}
        if len(g):
            row |= {"D0": len(g), **{f"D{k}": int((g["depth"] >= k).sum()) for k in range(1, K + 1)}}
            row["retention"] = row[f"D{K}"] / len(g)
        row |= {"paper_retention": PAPER_T15_RETENTION[d],
                "human_agreement": "needs human labels: notebook 70 (released study)",
                "note": notes[d], "evidence": kind}  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


def run_domains(
    sources: Sequence, specs: Sequence[Mapping[str, Any]], paths: Sequence[Path]
) -> dict[str, str]:
    """``{domain: ""}`` for the τ² domains a source was built for, ``{domain: why}`` for a configured τ²
    source that could not be built (its folder absent)."""
    out: dict[str, str] = {}
    built = {getattr(s, "domain", None) for s in sources}
    for spec, path in zip(specs, paths, strict=True):
        d = str(spec.get("domain") or "retail")
        out[d] = "" if d in built else f"source skipped: data absent at {path}"
    return out


def tau2_specs(cfg: Any) -> list[dict[str, Any]]:
    """The ``{kind: tau2}`` entries of a ``padme`` section, as plain specs, in order."""
    from .experiment import _padme, _plain
    from .sources.factory import parse_source_spec

    out = []
    for spec in _padme(cfg).sources:
        d = parse_source_spec(_plain(spec))
        if str(d.get("kind")) in ("tau2", "tau2_retail"):
            out.append(d)
    return out


def domain_paths(cfg: Any, root: Path) -> dict[str, Path]:
    """``{domain: folder}`` for the four domains: the profile's τ² source for it when there is one,
    else ``../shared/data/tau2_<domain>`` (Table 16 describes every domain, run or not)."""
    from .sources.factory import tau2_path

    given = {str(d.get("domain") or "retail"): tau2_path(d, root).resolve() for d in tau2_specs(cfg)}
    return {d: given.get(d) or tau2_path({"domain": d}, root).resolve() for d in DOMAINS}
