"""The PADMÉ pairs dataset on disk, and exports for annotation and the human study (seed 003 §4, §5.1, App. B, D.1).

"Running the 1,125 initial cells under this setup yields 1,000 kept pairs, distributed over the four
dataset axes as Table 6 in Appendix B shows" (§4): criterion, domain, level contrast and agent
model. Every attempt's pair is written, with its depth (the largest k with p ∈ D_k) and votes, so
the filter-depth ablation and the funnel tables (``padme/tables.py``) read the same file.

Files of :func:`write_pairs_dataset` (each written atomically: temporary file, then rename):

* ``pairs.jsonl`` — one :class:`~shopbench.padme.types.Pair` per line (``Pair.to_dict``: both
  rollouts in full, steering, votes); :func:`read_pairs_dataset` reads it back.
* ``pairs.parquet`` — the flat table of :func:`pairs_table` (one row per pair, no messages).

Exports:

* :func:`to_annotation_pairs` — :class:`shopbench.annotate.pairs.Pair` objects for the annotation
  UI. "The two trajectories of a pair are presented together with the criterion being judged; the
  steering instruction and target levels are withheld" (Fig. 3): levels, the label (the side of
  x⁺), the filter outcome and the provenance go to ``hidden``. Which side holds x⁺ is a seeded
  coin per pair (so any subset of pairs exports consistently).
* :func:`export_human_study_key` — ``answer_key.json`` (``{id, correct_response, filter_outcome,
  criterion_name, group_id}`` plus ``domain, agent_model, level_contrast, cell, task, attempt``) and
  ``criteria.json`` in the PADMÉ release format of :mod:`shopbench.annotate.humanstudy`, with the
  same sides as :func:`to_annotation_pairs` for the same seed (``correct_response`` 1 = ``side_a``,
  the convention of :func:`shopbench.annotate.store.human_study_frames`). The paper annotates pairs
  "from the initial generation attempts (r = 0)" (§4): pass ``[p for p in pairs if p.attempt == 0]``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from shopbench.errors import InputError
from shopbench.paceshop.io import atomic_write
from shopbench.padme.types import LEVELS, Criterion, Pair

__all__ = [
    "DatasetError", "TABLE_COLUMNS", "export_human_study_key", "filter_outcome", "label_side", "pairs_table",
    "read_pairs_dataset", "read_pairs_table", "to_annotation_pairs", "write_pairs_dataset",
]  # fmt: skip

PAIRS_JSONL = "pairs.jsonl"
PAIRS_PARQUET = "pairs.parquet"
TABLE_COLUMNS = [
    "pair_id", "cell_id", "task_id", "domain", "source", "criterion", "contrast", "level_worse", "level_better",
    "agent_model", "user_model", "attempt", "depth", "kept", "filter_outcome", "n_votes", "votes",
    "steering_bad", "steering_ok", "steering_good", "steering_source", "rollout_steering", "reward_worse", "reward_better",
    "rollout_worse", "rollout_better",
]  # fmt: skip


class DatasetError(InputError):
    """A pairs file is malformed; the message names the file, line, field and the fix (a ValueError)."""


def filter_outcome(p: Pair) -> str:
    """``kept``, or ``judge<k>_reject`` for the judge that vetoed the pair (the release's names)."""
    return "kept" if p.kept else f"judge{p.depth + 1}_reject"


def _num(x):
    return None if x is None else float(x)


def pairs_table(pairs: Sequence[Pair]) -> pd.DataFrame:
    """One row per pair (:data:`TABLE_COLUMNS`); ``votes`` is a JSON list of the Vote fields."""
    rows = []
    for p in pairs:
        votes = [
            {k: getattr(v, k) for k in ("judge", "stage", "better_slot", "choice", "agrees", "parse_error",
                                        "swapped_choice")}
            for v in p.votes
        ]  # fmt: skip
        rows.append({
            "pair_id": p.pair_id, "cell_id": p.cell_id, "task_id": p.task_id, "domain": p.domain, "source": p.source,
            "criterion": p.criterion, "contrast": p.contrast, "level_worse": p.worse.level,
            "level_better": p.better.level, "agent_model": p.agent_model, "user_model": p.better.user_model,
            "attempt": int(p.attempt), "depth": int(p.depth), "kept": bool(p.kept), "filter_outcome": filter_outcome(p),
            "n_votes": len(p.votes), "votes": json.dumps(votes, ensure_ascii=False),
            **{f"steering_{lvl}": p.steering.get(lvl, "") for lvl in LEVELS},
            "steering_source": (p.better.meta or {}).get("steering_generator", ""),
            "rollout_steering": str((p.better.meta or {}).get("steering_source", "")),
            "reward_worse": _num(p.worse.reward), "reward_better": _num(p.better.reward),
            "rollout_worse": p.worse.rollout_id, "rollout_better": p.better.rollout_id,
        })  # fmt: skip
    df = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    for c in ("reward_worse", "reward_better"):
        df[c] = df[c].astype("float64")
    for c in ("attempt", "depth", "n_votes"):
        df[c] = df[c].astype("int64")
    df["kept"] = df["kept"].astype(bool)
    return df


def write_pairs_dataset(pairs: Sequence[Pair], out_dir: str | Path) -> dict[str, Path]:
    """Write ``pairs.jsonl`` and ``pairs.parquet`` into ``out_dir`` (atomically); returns the paths."""
    out = Path(out_dir)
    ids = [p.pair_id for p in pairs]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise DatasetError(f"pair ids must be unique; repeated: {dup[:5]}")
    jl, pq = out / PAIRS_JSONL, out / PAIRS_PARQUET

    def write_jsonl(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            for p in pairs:
                f.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")

    atomic_write(jl, write_jsonl)
    atomic_write(pq, lambda tmp: pairs_table(pairs).to_parquet(tmp, index=False))
    return {"jsonl": jl, "parquet": pq}


def read_pairs_dataset(path: str | Path) -> list[Pair]:
    """The pairs of ``pairs.jsonl`` (``path`` is the file or its folder). Every line is strictly parsed
    and checked against the packaged schema ``padme-pair`` (``shopbench schema padme-pair``, issue 26
    §3) before any pair is built: a bad line is one :class:`DatasetError` naming file, line, field and
    the fix."""
    from shopbench.schemas import read_jsonl

    path = Path(path)
    if path.is_dir():
        path = path / PAIRS_JSONL
    if not path.exists():
        raise FileNotFoundError(f"no pairs file at {path}; write one with write_pairs_dataset")
    fix = "one padme Pair per line, as write_pairs_dataset writes"
    try:
        lines = list(read_jsonl(path, "padme-pair", fix=fix))
        out = []
        for lineno, d in lines:
            try:
                out.append(Pair.from_dict(d))
            except (TypeError, KeyError, ValueError) as e:  # the schema passed: a value the types refuse
                raise InputError(f"pair {d.get('pair_id', '?')!r}: {str(e).splitlines()[0]}", file=path,
                                 where=f"line {lineno}", fix=fix) from None  # fmt: skip
    except InputError as e:
        raise DatasetError(e.problem, file=e.file, where=e.where, field=e.field, fix=e.fix) from None
    return out


def read_pairs_table(path: str | Path) -> pd.DataFrame:
    """The flat table (``pairs.parquet``; ``path`` is the file or its folder)."""
    path = Path(path)
    if path.is_dir():
        path = path / PAIRS_PARQUET
    if not path.exists():
        raise FileNotFoundError(f"no pairs table at {path}; write one with write_pairs_dataset")
    return pd.read_parquet(path)


# ---- annotation and the human study ------------------------------------------------------------
def label_side(pair_id: str, seed: int = 0) -> str:
    """The side (``side_a``/``side_b``) x⁺ is placed on for annotation: a seeded coin per pair."""
    return "side_a" if random.Random(f"padme-annotate|{seed}|{pair_id}").random() < 0.5 else "side_b"


def _conversation(messages: list[dict]) -> dict:
    from shopbench.annotate.pairs import ShownMessage, ShownToolCall

    out = []
    for m in messages:
        role = m.get("role")
        if role not in ("user", "assistant", "tool"):
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
        calls = []
        for c in m.get("tool_calls") or []:
            fn = c.get("function") if isinstance(c.get("function"), dict) else c
            args = fn.get("arguments", "{}")
            calls.append(ShownToolCall(name=str(fn.get("name")), id=c.get("id"),
                                  arguments=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)))  # fmt: skip
        out.append(ShownMessage(role=role, content=None if content is None else str(content), tool_calls=calls,
                           name=m.get("name"), tool_call_id=m.get("tool_call_id")).model_dump())  # fmt: skip
    return {"messages": out}


def _criteria_map(pairs: Sequence[Pair], criteria) -> dict[str, Criterion]:
    from shopbench.padme.criteria import DEFAULT_CRITERIA

    known = {c.name: c for c in DEFAULT_CRITERIA}
    for c in criteria or ():
        known[c.name] = c
    missing = sorted({p.criterion for p in pairs} - set(known))
    if missing:
        raise DatasetError(
            f"no description for criteria {missing}; pass criteria=[Criterion(name, description), ...]"
        )
    return known


def to_annotation_pairs(pairs: Sequence[Pair], seed: int = 0, criteria: Sequence[Criterion] | None = None):
    """The pairs as :class:`shopbench.annotate.pairs.Pair` (conversation items, the shared context
    as an "Agent policy" reference, steering withheld in ``hidden``)."""
    from shopbench.annotate.pairs import Criterion as ACriterion
    from shopbench.annotate.pairs import Hidden, Item, Reference
    from shopbench.annotate.pairs import Pair as APair
    from shopbench.judges.padme.filters import shared_context

    crit = _criteria_map(pairs, criteria)
    out = []
    for p in pairs:
        side = label_side(p.pair_id, seed)
        win = Item(kind="conversation", content=_conversation(p.better.messages))
        lose = Item(kind="conversation", content=_conversation(p.worse.messages))
        a, b = (win, lose) if side == "side_a" else (lose, win)
        xa, xb = (p.better, p.worse) if side == "side_a" else (p.worse, p.better)
        refs = []
        ctx = shared_context(p.better, p.worse)
        if ctx != "(no shared context)":
            refs.append(Reference(title="Agent policy", text=ctx, format="markdown"))
        out.append(APair(
            id=p.pair_id, criterion=ACriterion(name=p.criterion, description=crit[p.criterion].description),
            side_a=a, side_b=b, references=refs,
            hidden=Hidden(steering_levels={"side_a": xa.level, "side_b": xb.level}, label=side,
                          filter_outcome=filter_outcome(p), source={
                              "dataset": "padme", "pair_id": p.pair_id, "cell_id": p.cell_id, "task_id": p.task_id,
                              "domain": p.domain, "source": p.source, "agent_model": p.agent_model,
                              "contrast": p.contrast, "attempt": p.attempt, "depth": p.depth,
                              "rewards": {"side_a": xa.reward, "side_b": xb.reward},
                          }),
        ))  # fmt: skip
    return out


def export_human_study_key(pairs: Sequence[Pair], out_dir: str | Path, seed: int = 0,
                           criteria: Sequence[Criterion] | None = None) -> Path:  # fmt: skip
    """Write ``answer_key.json`` and ``criteria.json`` (release format) for ``pairs``; returns the folder.

    Written with :func:`shopbench.annotate.humanstudy.export_human_study` (no annotator files: the
    panels' answers come from the annotation UI). ``filter_outcome`` must be one of the release's
    ``kept``/``judge1_reject``/``judge2_reject``, so K ≤ 2."""
    from shopbench.annotate.humanstudy import ANNOTATION_COLUMNS, FILTER_OUTCOMES, export_human_study

    crit = _criteria_map(pairs, criteria)
    rows = []
    for p in pairs:
        fo = filter_outcome(p)
        if fo not in FILTER_OUTCOMES:
            raise DatasetError(
                f"pair {p.pair_id!r}: filter outcome {fo!r} is not in the release format {FILTER_OUTCOMES}"
            )
        rows.append({
            "pair_id": p.pair_id, "correct_response": 1 if label_side(p.pair_id, seed) == "side_a" else 2,
            "filter_outcome": fo, "criterion": p.criterion, "group_id": p.cell_id, "domain": p.domain,
            "agent_model": p.agent_model, "level_contrast": p.contrast, "cell": p.cell_id, "task": p.task_id,
            "attempt": int(p.attempt),
        })  # fmt: skip
    if not rows:
        raise DatasetError("export_human_study_key: no pairs given")
    key = pd.DataFrame(rows)
    names = list(dict.fromkeys(p.criterion for p in pairs))
    crit_rows = [{"name": n, "description": crit[n].description} for n in names]
    return export_human_study(pd.DataFrame(columns=ANNOTATION_COLUMNS), key, out_dir, criteria=crit_rows)
