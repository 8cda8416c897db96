"""Import, export and simulate human studies in the PADMÉ release format.

The layout (PADMÉ Section 4 "Human Validation Protocol", Appendix D.1; the released study)::

    <dir>/panel_<k>/<annotator>.json   rows {id, criterion_name, judge_preference: 1|2, confidence: 0|50|100}
    <dir>/answer_key.json              rows {id, correct_response: 1|2, filter_outcome, criterion_name, group_id}
    <dir>/criteria.json                [{name, description}]                       (optional)
    <dir>/sampling.json                the stratified draw, with its ``cells`` list  (optional)

:func:`load_store_study` reads the project's own annotation store (``<annotator>.jsonl`` answers of
the annotation UI, with the pairs they were made on) into the same two frames.

"Six human annotators form two panels of three on disjoint sets of 75 pairs, generating 450 binary
preference choices along with confidence ratings" (Section 4). ``judge_preference`` is the slot
(1 or 2) the annotator chose; ``correct_response`` is the slot of the target (better-steered)
trajectory, i.e. the synthetic label ⋆; ``filter_outcome`` says whether the filter cascade kept the
pair (``kept``) or which judge vetoed it (``judge1_reject``, ``judge2_reject``). Confidence "0 (a
guess), 50 (leaning), 100 (certain)" is kept in file units here; the paper's 0–2 scale is
``confidence / 50`` (Appendix H.6).

:func:`load_human_study` returns two DataFrames:

- annotations: ``pair_id, annotator, panel, criterion, choice, confidence`` (one row per judgment);
- answer key: ``pair_id, correct_response, filter_outcome, criterion, group_id`` plus any extra
  fields the file carries (e.g. ``domain``) and, when ``sampling.json`` lists one cell per answer-key
  row in the same order and every cell's criterion matches the row's, ``cell``, ``domain`` and
  ``task`` derived from it (the released files carry no domain field; this positional alignment is
  checked criterion by criterion and reproduces the paper's per-domain counts of Table 15).

Every row is validated; a bad row raises :class:`HumanStudyFormatError` naming the file, the row
index (0-based, as in the JSON array) and the field.

:func:`simulate_panels` makes a study with known noise: each annotator reports the latent truth
with probability ``p`` (:func:`implied_statistics` gives the α and accuracies this implies).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..paceshop.io import read_json

ANNOTATION_COLUMNS = ["pair_id", "annotator", "panel", "criterion", "choice", "confidence"]
ANSWER_KEY_COLUMNS = ["pair_id", "correct_response", "filter_outcome", "criterion", "group_id"]
FILTER_OUTCOMES = ("kept", "judge1_reject", "judge2_reject")
CHOICES = (1, 2)
CONFIDENCES = (0, 50, 100)
DERIVED_COLUMNS = ("cell", "domain", "task")  # from sampling.json cells, not stored in answer_key.json
_PANEL = re.compile(r"^panel_(.+)$")


_FIX = "correct the row (the study layout is described in shopbench.annotate.humanstudy)"


class HumanStudyFormatError(InputError):
    """A malformed human-study file or row; ``file``, ``row`` (0-based, as in the JSON array) and
    ``field`` say where, ``fix`` what to do."""

    def __init__(self, file: str | Path, message: str, row: int | None = None, field: str | None = None, *,
                 where: str | None = None, fix: str | None = None):  # fmt: skip
        self.row = row
        super().__init__(message, file=file, where=where or (f"row {row}" if row is not None else None),
                         field=field, fix=fix or _FIX)  # fmt: skip


def _natural(s: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(s))]


def _read_json(path: Path, root: Path):
    """A study file, strictly read (UTF-8, no NaN/Infinity, no repeated keys), and the path errors name."""
    try:
        return read_json(path, "human-study file", fix="restore the study file (strict UTF-8 JSON)"), str(
            path
        )
    except InputError as e:
        raise HumanStudyFormatError(str(path), e.problem, where=e.where, field=e.field, fix=e.fix) from None


def _field(row, i: int, rel: str, name: str, *, allowed=None, kind=None, required=True):
    if name not in row or row[name] is None:
        if required:
            raise HumanStudyFormatError(
                rel, "missing", i, name, fix=f"add '{name}' to the row (or drop the row)"
            )
        return None
    v = row[name]
    if kind is str:
        if not isinstance(v, str) or not v.strip():
            raise HumanStudyFormatError(rel, f"must be a non-empty string, got {v!r}", i, name,
                                        fix=f"give '{name}' as text")  # fmt: skip
    elif kind is int:  # an integer written as such: 2.0 is not a slot (issue 12)
        if isinstance(v, bool) or not isinstance(v, int):
            raise HumanStudyFormatError(rel, f"must be an integer in {list(allowed)}, got {v!r}", i, name,
                                        fix=f"write one of {list(allowed)} (an integer, no decimal point)")  # fmt: skip
    if allowed is not None and v not in allowed:
        raise HumanStudyFormatError(rel, f"must be one of {list(allowed)}, got {v!r}", i, name,
                                    fix=f"write one of {list(allowed)}")  # fmt: skip
    return v


def _unique_id(row, i: int, rel: str, seen: dict[str, int], fix: str) -> str:
    """Row ``i``'s ``id``, recorded in ``seen`` (id -> first row); a repeated id is an error."""
    pid = _field(row, i, rel, "id", kind=str)
    if pid in seen:
        raise HumanStudyFormatError(rel, f"duplicate id {pid!r} (first at row {seen[pid]})", i, "id", fix=fix)
    seen[pid] = i
    return pid


def _rows(data, rel: str) -> list:
    if not isinstance(data, list):
        raise HumanStudyFormatError(rel, f"expected a JSON array of rows, got {type(data).__name__}",
                                    fix="the file must hold a JSON array of row objects")  # fmt: skip
    for i, r in enumerate(data):
        if not isinstance(r, dict):
            raise HumanStudyFormatError(rel, f"expected an object, got {type(r).__name__}", i,
                                        fix="each row must be a JSON object")  # fmt: skip
    return data


def read_criteria(path) -> list[dict] | None:
    """``criteria.json`` of a study folder (``[{name, description}]``), or None if absent."""
    p = Path(path) / "criteria.json"
    if not p.exists():
        return None
    data, rel = _read_json(p, Path(path))
    rows = _rows(data, rel)
    for i, r in enumerate(rows):
        _field(r, i, rel, "name", kind=str)
    return rows


def read_sampling(path) -> dict | None:
    """``sampling.json`` of a study folder, or None if absent."""
    p = Path(path) / "sampling.json"
    if not p.exists():
        return None
    data, rel = _read_json(p, Path(path))
    if not isinstance(data, dict):
        raise HumanStudyFormatError(rel, f"expected a JSON object, got {type(data).__name__}",
                                    fix="sampling.json holds one JSON object (with a 'cells' list)")  # fmt: skip
    return data


def _load_answer_key(root: Path, criteria: set | None) -> pd.DataFrame:
    p = root / "answer_key.json"
    if not p.exists():
        raise HumanStudyFormatError(str(p), "not found", fix="every study folder needs its answer_key.json")
    data, rel = _read_json(p, root)
    out, seen = [], {}
    for i, r in enumerate(_rows(data, rel)):
        pid = _unique_id(r, i, rel, seen, "every pair appears once in the answer key; drop the copy")
        crit = _field(r, i, rel, "criterion_name", kind=str)
        if criteria is not None and crit not in criteria:
            raise HumanStudyFormatError(rel, f"criterion {crit!r} is not in criteria.json {sorted(criteria)}", i,
                                        "criterion_name", fix="use a criterion criteria.json names")  # fmt: skip
        row = {"pair_id": pid,
               "correct_response": _field(r, i, rel, "correct_response", allowed=CHOICES, kind=int),
               "filter_outcome": _field(r, i, rel, "filter_outcome", allowed=FILTER_OUTCOMES, kind=str),
               "criterion": crit,
               "group_id": _field(r, i, rel, "group_id", kind=str, required=False)}  # fmt: skip
        for k, v in r.items():  # extra fields (domain, agent_model, level_contrast, ...) become columns
            if k not in ("id", "correct_response", "filter_outcome", "criterion_name", "group_id"):
                row[k] = v
        out.append(row)
    df = pd.DataFrame(out)
    if df.empty:
        raise HumanStudyFormatError(rel, "has no rows", fix="the answer key needs one row per pair")
    df["correct_response"] = df["correct_response"].astype("int64")
    return df


def _attach_cells(key: pd.DataFrame, sampling: dict | None) -> tuple[pd.DataFrame, str]:
    """Add ``cell, domain, task`` from ``sampling["cells"]`` when it aligns row by row with the key."""
    if "domain" in key.columns:
        return key, "the answer key carries a domain field"
    cells = (sampling or {}).get("cells")
    if not isinstance(cells, list) or len(cells) != len(key):
        return key, "no domain: sampling.json has no cells list of the answer key's length"
    parts = [str(c).split(".") for c in cells]
    if any(len(p) != 3 for p in parts):
        return key, "no domain: sampling.json cells are not 'domain.criterion.task'"
    if any(p[1] != c for p, c in zip(parts, key["criterion"], strict=True)):
        return key, "no domain: sampling.json cells do not align with the answer key's criteria"
    key = key.assign(cell=[str(c) for c in cells], domain=[p[0] for p in parts], task=[p[2] for p in parts])
    key.attrs["derived_columns"] = list(DERIVED_COLUMNS)
    return key, "domain and task from sampling.json cells (aligned with the answer key row by row)"


def load_human_study(path, attach_cells: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read and validate a study folder: ``(annotations, answer_key)`` (see the module docstring)."""
    root = Path(path)
    if not root.is_dir():
        raise HumanStudyFormatError(str(root), "no human-study folder here",
                                    fix="pass the folder that holds answer_key.json and panel_<k>/ folders")  # fmt: skip
    crit_rows = read_criteria(root)
    criteria = {r["name"] for r in crit_rows} if crit_rows is not None else None
    key = _load_answer_key(root, criteria)
    key_crit = dict(zip(key["pair_id"], key["criterion"], strict=True))
    panels = sorted(
        (d for d in root.iterdir() if d.is_dir() and _PANEL.match(d.name)), key=lambda d: _natural(d.name)
    )
    if not panels:
        raise HumanStudyFormatError(str(root), "no panel_<k> folders",
                                    fix="put each panel's annotator files in panel_1/, panel_2/, ...")  # fmt: skip
    rows, owner = [], {}
    for d in panels:
        label = _PANEL.match(d.name).group(1)
        panel = int(label) if label.isdigit() else label
        files = sorted(d.glob("*.json"), key=lambda f: _natural(f.stem))
        if not files:
            raise HumanStudyFormatError(str(d), "has no annotator files",
                                        fix="put one <annotator>.json per annotator in the panel folder")  # fmt: skip
        for f in files:
            ann = f.stem
            data, rel = _read_json(f, root)
            if ann in owner:
                raise HumanStudyFormatError(rel, f"annotator {ann!r} also appears in {owner[ann]}",
                                            fix="panels are disjoint: keep each annotator in one panel")  # fmt: skip
            owner[ann] = rel
            seen = {}
            for i, r in enumerate(_rows(data, rel)):
                pid = _unique_id(r, i, rel, seen, "an annotator rates each pair once; drop the copy")
                if pid not in key_crit:
                    raise HumanStudyFormatError(rel, f"id {pid!r} is not in answer_key.json", i, "id",
                                                fix="rate only pairs of the answer key")  # fmt: skip
                crit = _field(r, i, rel, "criterion_name", kind=str)
                if crit != key_crit[pid]:
                    raise HumanStudyFormatError(rel, f"{crit!r} differs from the answer key's {key_crit[pid]!r}", i,
                                                "criterion_name", fix="use the answer key's criterion")  # fmt: skip
                rows.append({"pair_id": pid, "annotator": ann, "panel": panel, "criterion": crit,
                             "choice": _field(r, i, rel, "judge_preference", allowed=CHOICES, kind=int),
                             "confidence": _field(r, i, rel, "confidence", allowed=CONFIDENCES, kind=int)})  # fmt: skip
    ann_df = pd.DataFrame(rows, columns=ANNOTATION_COLUMNS)
    ann_df[["choice", "confidence"]] = ann_df[["choice", "confidence"]].astype("int64")
    note = "attach_cells=False"
    if attach_cells:
        key, note = _attach_cells(key, read_sampling(root))
    key.attrs["notes"] = [note]
    key.attrs["source"] = str(root)  # errors found later (padme.study.prepare) name the folder
    return ann_df, key


def load_store_study(store_dir, pairs: Sequence, panels: dict[str, Sequence[str]] | None = None,
                     annotators: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """The project's own annotation store (``<store_dir>/<annotator>.jsonl``, written by the annotation
    UI of notebook 60) as :func:`load_human_study`'s two frames, so notebook 70 analyses answers made
    in the UI exactly as it analyses the released study.

    ``pairs`` are the :class:`~shopbench.annotate.pairs.Pair` objects the answers were made on (their
    hidden labels become the answer key; rebuild them as notebook 60 did, with
    :func:`shopbench.annotate.notebook.study_pairs`). Each annotator's latest answer per pair counts
    (a revision replaces the earlier row). Choices are by underlying side, never by screen slot
    (slot order differs per annotator): 1 = ``side_a``, 2 = ``side_b``; ``correct_response`` is the
    side of the synthetic label. ``panels`` (panel -> annotator ids, e.g. the profile's
    ``notebooks.60_annotate_pairs.panels``) names each annotator's panel; without it every annotator
    is in panel 1. ``annotators`` restricts the files read (default: every ``*.jsonl``).

    Errors (:class:`HumanStudyFormatError`, naming the folder or file): no such folder, no answer
    file, an answer for a pair that is not among ``pairs`` (the pairs were rebuilt with other
    settings than the UI was served with), no answered pair with a label.
    """
    from .store import AnnotationStore, human_study_frames

    root = Path(store_dir)
    if not root.is_dir():
        raise HumanStudyFormatError(str(root), "no annotation store here",
                                    fix="pass the folder the annotation UI wrote (outputs/<profile>/annotations "
                                    "or the --store of python -m shopbench.annotate.serve)")  # fmt: skip
    store = AnnotationStore(root)
    names = list(annotators) if annotators is not None else store.annotators()
    if panels:
        listed = {a for members in panels.values() for a in members}
        names = [a for a in names if a in listed]
    if not names:
        raise HumanStudyFormatError(str(root), "holds no answer file (<annotator>.jsonl)",
                                    fix="annotate some pairs first (make annotate), or pass the right folder")  # fmt: skip
    known = {p.id for p in pairs}
    for a in names:
        stray = sorted(set(store.answers(a)) - known)
        if stray:
            raise HumanStudyFormatError(
                str(store.path(a)), f"{len(stray)} answered pairs are not among the {len(known)} pairs given, "
                f"e.g. {stray[:3]}", field="pair_id",
                fix="rebuild the pairs with the settings the UI was served with (source, n_pairs, tau-bench file, "
                "profile seed)")  # fmt: skip
    members = panels or {"1": names}
    annotations, key = human_study_frames(store, pairs, {str(k): list(v) for k, v in members.items()})
    if annotations.empty:
        raise HumanStudyFormatError(str(root), f"no answers from {names}",
                                    fix="annotate some pairs first, or pass the folder that holds the answers")  # fmt: skip
    annotations = annotations[annotations["pair_id"].isin(set(key["pair_id"]))].reset_index(drop=True)
    if annotations.empty:
        raise HumanStudyFormatError(str(root), "no answered pair has a synthetic label to compare with",
                                    fix="annotate pairs that carry a label (paceshop, tau_bench or padme pairs)")  # fmt: skip
    panel = annotations["panel"].astype(str)
    annotations["panel"] = [int(p) if p.isdigit() else p for p in panel]
    annotations[["choice", "confidence"]] = annotations[["choice", "confidence"]].astype("int64")
    n_ann = annotations.groupby("pair_id")["annotator"].nunique()
    key.attrs["notes"] = [f"the project's annotation store {root}: {len(names)} annotators, {len(n_ann)} pairs answered "
                          f"({int((n_ann >= 2).sum())} by two or more)"]  # fmt: skip
    key.attrs["source"] = str(root)
    return annotations, key


def export_human_study(annotations: pd.DataFrame, answer_key: pd.DataFrame, path, criteria=None,
                       sampling: dict | None = None) -> Path:  # fmt: skip
    """Write ``annotations`` and ``answer_key`` in the layout :func:`load_human_study` reads.

    One file per annotator, ``panel_<panel>/<annotator>.json``, rows in the frame's order. Extra
    answer-key columns are written as extra fields, except ``cell/domain/task`` when they were
    derived from ``sampling.json`` (then pass ``sampling`` to write it back). ``criteria`` (a list of
    ``{name, description}``) is written to ``criteria.json`` when given.
    """
    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    missing = [c for c in ANNOTATION_COLUMNS if c not in annotations.columns]
    if missing:
        raise ValueError(f"annotations lack columns {missing}")
    missing = [c for c in ANSWER_KEY_COLUMNS[:4] if c not in answer_key.columns]
    if missing:
        raise ValueError(f"answer_key lacks columns {missing}")
    derived = set(answer_key.attrs.get("derived_columns", []))
    extra = [c for c in answer_key.columns if c not in ANSWER_KEY_COLUMNS and c not in derived]
    key_rows = []
    for r in answer_key.itertuples(index=False):
        d = r._asdict()
        row = {"id": str(d["pair_id"]), "correct_response": int(d["correct_response"]),
               "filter_outcome": str(d["filter_outcome"]), "criterion_name": str(d["criterion"])}  # fmt: skip
        if "group_id" in d and isinstance(d["group_id"], str):
            row["group_id"] = d["group_id"]
        for c in extra:
            v = d[c]
            row[c] = v.item() if isinstance(v, np.generic) else v
        key_rows.append(row)
    (root / "answer_key.json").write_text(
        json.dumps(key_rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for (panel, ann), g in annotations.groupby(["panel", "annotator"], sort=False):
        d = root / f"panel_{panel}"
        d.mkdir(exist_ok=True)
        rows = [{"id": str(r.pair_id), "criterion_name": str(r.criterion), "judge_preference": int(r.choice),
                 "confidence": int(r.confidence)} for r in g.itertuples(index=False)]  # fmt: skip
        (d / f"{ann}.json").write_text(
            json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    if criteria is not None:
        (root / "criteria.json").write_text(json.dumps(list(criteria), indent=2, ensure_ascii=False) + "\n",
                                            encoding="utf-8")  # fmt: skip
    if sampling is not None:
        (root / "sampling.json").write_text(
            json.dumps(sampling, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return root


# ---- simulation -------------------------------------------------------------------------------------------


def p_for_alpha(alpha: float) -> float:
    """The per-annotator accuracy ``p`` whose panels have nominal α = ``alpha`` (balanced truth):
    ``α = (2p − 1)²``, so ``p = (1 + √α) / 2``."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha_target must be in [0, 1] for this noise model, got {alpha}")
    return (1 + np.sqrt(alpha)) / 2


def _majority_probs(ps: Sequence[float]) -> tuple[float, float, float]:
    """P(majority = truth), P(majority = other), P(tie) for independent raters with accuracies ``ps``."""
    right = wrong = tie = 0.0
    m = len(ps)
    for pattern in itertools.product((0, 1), repeat=m):
        pr = float(np.prod([p if c else 1 - p for p, c in zip(ps, pattern, strict=True)]))
        k = sum(pattern)
        if 2 * k > m:
            right += pr
        elif 2 * k < m:
            wrong += pr
        else:
            tie += pr
    return right, wrong, tie


def implied_statistics(p_correct, panels: int = 2, per_panel: int = 3, label_accuracy: float = 0.8,
                       judge_accuracy: Sequence[float] = (0.93, 0.93)) -> dict:  # fmt: skip
    """Large-sample statistics implied by :func:`simulate_panels`' noise model (analytic).

    Each rating equals the latent truth ``T`` with probability ``p_i``; ``T`` and so every rating is
    1 or 2 with probability 1/2. Nominal α is ``1 − D_o / D_e`` with ``D_e = P(two random values
    differ) = 1/2`` and ``D_o`` = mean over rater pairs of a panel of ``p_i(1 − p_j) + p_j(1 − p_i)``;
    with equal ``p`` this is ``α = (2p − 1)²``. The pooled α averages ``D_o`` over panels (equal panel
    sizes). The synthetic label equals ``T`` with probability ``q`` (``label_accuracy``); judge ``k``
    reads ``T`` correctly with probability ``j_k`` and keeps the pair iff its read matches the label,
    so ``q_k = q Π j / (q Π j + (1 − q) Π (1 − j))`` on ``D_k`` and
    ``Agr(maj, ⋆; D_k) = q_k m + (1 − q_k)(1 − m)`` with ``m = P(maj = T | no tie)``.
    """
    n_ann = panels * per_panel
    ps = np.broadcast_to(np.asarray(p_correct, dtype=float), (n_ann,)).reshape(panels, per_panel)
    d_o, unan, maj = [], [], []
    for row in ps:
        pairs = list(itertools.combinations(row, 2))
        d_o.append(np.mean([a * (1 - b) + b * (1 - a) for a, b in pairs]) if pairs else np.nan)
        unan.append(float(np.prod(row) + np.prod(1 - row)))
        right, wrong, tie = _majority_probs(row)
        maj.append(right / (right + wrong) if right + wrong > 0 else np.nan)
    panel_alpha = [float(1 - d / 0.5) for d in d_o]
    m = float(np.mean(maj))
    q = float(label_accuracy)
    depth, keep_right, keep_wrong = {}, q, 1 - q
    retention = {}
    for k in range(len(judge_accuracy) + 1):
        if k:
            keep_right *= judge_accuracy[k - 1]
            keep_wrong *= 1 - judge_accuracy[k - 1]
        qk = keep_right / (keep_right + keep_wrong)
        agr = qk * m + (1 - qk) * (1 - m)
        depth[f"D{k}"] = {"label_vs_truth": qk, "label_accuracy": agr, "label_alpha": 2 * agr - 1}
        retention[f"D{k}"] = keep_right + keep_wrong
    for k in range(len(judge_accuracy) + 1, 3):  # fewer than two judges: nothing more is vetoed
        depth[f"D{k}"], retention[f"D{k}"] = dict(depth[f"D{k - 1}"]), retention[f"D{k - 1}"]
    return {"p_correct": ps.tolist(), "pooled_alpha": float(1 - np.mean(d_o) / 0.5),
            "panel_alpha": {str(i + 1): a for i, a in enumerate(panel_alpha)}, "unanimous_rate": float(np.mean(unan)),
            "majority_accuracy": m, "depth": depth, "retention": retention}  # fmt: skip


def simulate_panels(n_pairs: int = 150, panels: int = 2, per_panel: int = 3, p_correct=None,
                    alpha_target: float | None = None, label_accuracy: float = 0.8,
                    judge_accuracy: Sequence[float] = (0.93, 0.93), confidence_probs=(0.15, 0.3, 0.55),
                    criteria: Sequence[str] = ("friendliness", "communication_clarity", "task_resolution"),
                    domains: Sequence[str] | None = ("airline", "banking_knowledge", "retail", "telecom"),
                    seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """A simulated human study with known noise, in :func:`load_human_study`'s frames.

    Per pair: the target slot ``S`` (the synthetic label's ``correct_response``) is 1 or 2 at random;
    the latent truth ``T`` equals ``S`` with probability ``label_accuracy``; each annotator chooses
    ``T`` with probability ``p`` (``p_correct``: one value or one per annotator; or from
    ``alpha_target`` via :func:`p_for_alpha`), else the other slot; filter judge ``k`` reads ``T``
    with probability ``judge_accuracy[k]`` and vetoes the pair when its read differs from ``S``
    (cascade: ``judge1_reject``, ``judge2_reject`` or ``kept``). Confidence is drawn independently of
    correctness from ``{0, 50, 100}`` with ``confidence_probs``. Pairs are dealt round-robin to the
    panels; each panel's annotators rate all its pairs. The defaults (with ``alpha_target=0.35``)
    roughly mimic the paper: yields 76 % and 69 % at D1 and D2, Agr(maj, ⋆; D0) ≈ 0.73.
    ``answer_key.attrs["implied"]`` holds
    :func:`implied_statistics` for these parameters (the α the estimators should recover).
    """
    if p_correct is not None and alpha_target is not None:
        raise ValueError("give p_correct or alpha_target, not both")
    if p_correct is None:
        p_correct = p_for_alpha(alpha_target) if alpha_target is not None else 0.8
    n_ann = panels * per_panel
    ps = np.broadcast_to(np.asarray(p_correct, dtype=float), (n_ann,)).copy()
    if np.any((ps < 0) | (ps > 1)):
        raise ValueError(f"p_correct must be in [0, 1], got {ps}")
    rng = np.random.default_rng(seed)
    slot = rng.integers(1, 3, n_pairs)
    truth = np.where(rng.random(n_pairs) < label_accuracy, slot, 3 - slot)
    outcome = np.full(n_pairs, "kept", dtype=object)
    alive = np.ones(n_pairs, dtype=bool)
    for k, j in enumerate(judge_accuracy, start=1):
        read = np.where(rng.random(n_pairs) < j, truth, 3 - truth)
        veto = alive & (read != slot)
        outcome[veto] = f"judge{k}_reject"
        alive &= ~veto
    panel_of = np.arange(n_pairs) % panels + 1
    pair_ids = [f"sim-{i:04d}" for i in range(n_pairs)]
    crit = [criteria[i % len(criteria)] for i in range(n_pairs)]
    key = pd.DataFrame({"pair_id": pair_ids, "correct_response": slot.astype("int64"), "filter_outcome": outcome,
                        "criterion": crit, "group_id": [f"group-{p}" for p in panel_of]})  # fmt: skip
    if domains:
        key["domain"] = [domains[(i // len(criteria)) % len(domains)] for i in range(n_pairs)]
    rows = []
    conf_vals = np.array(CONFIDENCES)
    for a in range(n_ann):
        panel = a // per_panel + 1
        idx = np.flatnonzero(panel_of == panel)
        choice = np.where(rng.random(len(idx)) < ps[a], truth[idx], 3 - truth[idx])
        conf = rng.choice(conf_vals, size=len(idx), p=confidence_probs)
        for i, c, cf in zip(idx, choice, conf, strict=True):
            rows.append({"pair_id": pair_ids[i], "annotator": f"annotator_{a + 1}", "panel": panel, "criterion": crit[i],
                         "choice": int(c), "confidence": int(cf)})  # fmt: skip
    ann = pd.DataFrame(rows, columns=ANNOTATION_COLUMNS)
    implied = implied_statistics(ps, panels, per_panel, label_accuracy, judge_accuracy)
    key.attrs["implied"] = implied
    key.attrs["notes"] = [f"simulated: seed {seed}, p_correct {ps.round(4).tolist()}, label accuracy {label_accuracy}, "
                          f"judge accuracy {list(judge_accuracy)}"]  # fmt: skip
    return ann, key
