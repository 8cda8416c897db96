"""Notebook 60 (annotate pairs): its helpers, and the script that writes it.

``python -m shopbench.annotate.notebook`` (re)writes ``notebooks/60_annotate_pairs.ipynb``;
:func:`notebook` builds the same notebook for any parameters (the browser test serves one from a
temporary folder).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from ..paths import NOTEBOOKS_DIR
from .pairs import (
    Pair,
    PairImportError,
    assign_panels,
    pairs_from_paceshop,
    pairs_from_tau_bench,
    panel_of,
    read_pair_set,
    read_pairs,
    synthetic_pairs,
)

NOTEBOOK_NAME = "60_annotate_pairs"
TAU_BENCH_DEFAULT = "../../shared/data/tau_bench_airline_trajectories/gpt-4o-airline.json"
# a PACEShop build of a few seconds, for when the profile's build (notebook 10) is not there
SMALL_PACESHOP = dict(seed=3, n_products=400, n_candidate_queries=240, n_queries=10, n_personas=40, n_holdout=10,
                      test_goods=8, dev_goods=8, swap_slice=8, s0_per_label=4, calibration_good=4,
                      calibration_bad_per_family=1)  # fmt: skip


def note(message: str) -> None:
    """A note for the researcher: printed in a notebook, sent to the server log under Voila
    (annotators never see developer notes or local paths)."""
    from .serve import in_voila

    if in_voila():
        print(f"[annotate] note: {message}", file=sys.__stderr__, flush=True)
    else:
        print(f"note: {message}")


def resolve(path: str | Path, base: Path = NOTEBOOKS_DIR) -> Path:
    """An absolute path as it is; a relative one against the notebooks folder (the notebook's cwd)."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else (base / p).resolve()


def _paceshop_records(ctx):
    from shopbench.paceshop.build import BuildConfig, build, load_records

    out = ctx.data_dir / "paceshop"
    if (out / "manifest.json").exists():
        return load_records(out)
    note(f"no PACEShop build in {out} (notebook 10 makes the profile's); using a small build made here")
    return build(BuildConfig(**SMALL_PACESHOP), progress=False).records


def study_pairs(ctx, source: str, tau_bench_path: str | Path | None, n_pairs: int | None,
                annotator: str | None = None, strict: bool = False,
                pairs_file: str | Path | None = None) -> list[Pair]:  # fmt: skip
    """The pairs this notebook shows, with fallbacks that say what they did.

    ``pairs_file`` (a pair set, e.g. the explorer's export; relative to the notebooks folder): exactly
    the pairs in that file, in its order — ``source``, ``n_pairs`` and panels are not applied, and a
    missing or malformed file is a :class:`PairImportError` naming it (never a fallback).

    ``source``: ``tau_bench`` (a missing file falls back to PACEShop), ``padme`` (the pairs notebook 40
    synthesized, ``<data>/padme/annotation_pairs.jsonl``; missing, it falls back to PACEShop) or
    ``paceshop`` (the profile's build, else a small build; a failing build falls back to synthetic pairs). With a ``panels``
    mapping in the profile (``notebooks.60_annotate_pairs.panels`` or top-level ``panels``:
    panel -> annotator ids), the ``n_pairs`` pairs are split into disjoint panel sets and the
    annotator gets their panel's; an annotator in no panel is an error when ``strict`` (serving
    annotators), else a note and all pairs (a papermill run as "demo").
    """
    if pairs_file:
        pairs_set = read_pair_set(resolve(pairs_file))
        note(
            f"annotating the {len(pairs_set)} pairs of {resolve(pairs_file)} (source, n_pairs and panels not applied)"
        )
        return pairs_set
    if source not in ("tau_bench", "paceshop", "padme"):
        raise ValueError(f"source must be 'tau_bench', 'padme' or 'paceshop', got {source!r}")
    pairs: list[Pair] = []
    if source == "padme":
        path = ctx.data_dir / "padme" / "annotation_pairs.jsonl"
        if path.exists():
            pairs = read_pairs(path)[: n_pairs or None]
        else:
            note(f"no synthesized pairs at {path} (run notebook 40); annotating PACEShop pairs instead")
            source = "paceshop"
    if source == "tau_bench":
        path = resolve(tau_bench_path or TAU_BENCH_DEFAULT)
        if path.exists():
            pairs = pairs_from_tau_bench(path, max_pairs=n_pairs, seed=ctx.seed)
        else:
            note(f"tau-bench file {path} not found; annotating PACEShop pairs instead")
            source = "paceshop"
    if source == "paceshop":
        try:
            pairs = pairs_from_paceshop(_paceshop_records(ctx), n=n_pairs, seed=ctx.seed)
        except (PairImportError, OSError, ValueError) as e:
            note(f"no PACEShop pairs ({e}); annotating synthetic pairs instead")
            pairs = synthetic_pairs(n_pairs or 6, seed=ctx.seed)
    panels = ctx.params.notebooks.annotate_pairs.panels
    if panels and annotator is not None:
        assignment = assign_panels(pairs, panels, seed=ctx.seed)
        try:
            pairs = panel_of(assignment, annotator).pairs
        except KeyError:
            if strict:
                raise
            note(f"annotator {annotator!r} is in no panel of the profile; showing all {len(pairs)} pairs")
    return pairs


def pairs_table(pairs: list[Pair]):
    """One row per pair, hidden metadata included (for the researcher, never the annotator)."""
    import pandas as pd

    rows = []
    for p in pairs:
        src = p.hidden.source
        rows.append({"pair_id": p.id, "criterion": p.criterion.name, "kind": p.side_a.kind,
                     "label": p.hidden.label, "dataset": src.get("dataset"),
                     "steering_levels": p.hidden.steering_levels, "references": len(p.references)})  # fmt: skip
    return pd.DataFrame(rows).set_index("pair_id") if rows else pd.DataFrame()


def answers_table(store, annotator: str, pairs: list[Pair]):
    """The annotator's latest answers, with whether each agrees with the synthetic label."""
    import pandas as pd

    labels = {p.id: p.hidden.label for p in pairs}
    cols = [
        "pair_id",
        "choice",
        "chosen_item",
        "confidence",
        "revision",
        "time_spent_s",
        "answered_at",
        "agrees_with_label",
    ]
    rows = [{**a.model_dump(include=set(cols)), "agrees_with_label": a.chosen_item == labels.get(a.pair_id)}
            for a in store.answers(annotator).values() if a.pair_id in labels]  # fmt: skip
    return pd.DataFrame(rows, columns=cols).set_index("pair_id")


# ---- the notebook ----------------------------------------------------------------------------------
INTRO = """# 60 · Annotating pairs (human study)

The human validation of PADMÉ (Section 4, Appendix D.1): annotators see the two sides of a pair with
the criterion in the header, pick the better one (click, or ←/→), rate their confidence 0/50/100
(1/2/3) and press Enter; Backspace goes back to revise. The instructions (Appendix H.6) are shown
once per annotator, and an intro screen whenever the criterion changes. Reference documents (the
policy, the tools, the shopper profile, the evidence pool) are closed until opened, one at a time.

Answers are appended to `<store_dir>/<annotator>.jsonl`, one row per answer, synced to disk at once;
reopening resumes at the first unanswered pair. Which side is shown on the left is drawn per
annotator and pair, and recorded. Labels and steering levels stay in the kernel: the browser gets
only the rendered sides.

For annotators: `make annotate` serves this notebook with Voila (only the widget is shown; URL
parameter `?annotator=ID`); `make annotate ANNOTATE_ARGS="--pairs FILE"` serves exactly the pairs of a
pair set, e.g. a selection exported from the explorer (notebook 90). Under papermill the widget just
renders, and the tables below list the pairs (with their hidden labels) and the stored answers."""

PARAMS = """profile = "smoke"  # a name in params/ or a path to a YAML file
annotator = "demo"  # answers go to <store_dir>/<annotator>.jsonl
source = "paceshop"  # "paceshop" (GOOD vs BAD siblings), "tau_bench" (task-resolution pairs) or "padme" (notebook 40)
tau_bench_path = "{tau}"  # relative to notebooks/, or absolute
store_dir = None  # None: outputs/<profile>/annotations/
n_pairs = {n}
pairs_file = None  # a pair set to annotate exactly (JSONL, e.g. the explorer's export); None: pairs from `source`"""

SETUP = """from pathlib import Path

from shopbench import start
from shopbench.annotate import AnnotationStore, annotate, answers_table, in_voila, pairs_table, settings, study_pairs

s = settings(profile=profile, annotator=annotator, source=source, tau_bench_path=tau_bench_path,
             store_dir=store_dir, n_pairs=n_pairs, pairs_file=pairs_file)
ctx = start(s["profile"], notebook="60_annotate_pairs")
store = AnnotationStore(s["store_dir"] or ctx.out / "annotations")
pairs = study_pairs(ctx, s["source"], s["tau_bench_path"], s["n_pairs"], s["annotator"], strict=in_voila(),
                    pairs_file=s["pairs_file"])"""

WIDGET = """annotate(pairs, s["annotator"], store.root, seed=ctx.seed)"""

TABLES_MD = """## The pairs and the stored answers

Shown outside Voila only (the pairs table holds the labels): the pairs in annotation order, and the
annotator's latest answer per pair with whether it agrees with the synthetic label."""

TABLES = """if not in_voila():
    print(f"{len(pairs)} pairs for {s['annotator']!r}; answers in {store.path(s['annotator'])}")
    ctx.table(pairs_table(pairs), "annotate_pairs", "Pairs in annotation order, with their hidden labels, steering levels and source dataset.",
              evidence="known-answer", why="the pairs and labels this run built or loaded")
    answers = answers_table(store, s["annotator"], pairs)
    ctx.table(answers, "annotate_answers", "The annotator's latest answer per pair and agreement with the synthetic label.",
              evidence="measured", why="a person's choices, made without the label")
    display(pairs_table(pairs))
    display(answers)"""


def notebook(tau_bench_path: str = TAU_BENCH_DEFAULT, n_pairs: int = 12) -> nbformat.NotebookNode:
    v4 = nbformat.v4
    nb = v4.new_notebook()
    from ..notebook_files import kernel_metadata  # as JupyterLab writes it: opening it changes nothing

    nb.metadata.update(kernel_metadata())
    params = v4.new_code_cell(PARAMS.format(tau=tau_bench_path, n=n_pairs))
    params.metadata["tags"] = ["parameters"]
    nb.cells = [v4.new_markdown_cell(INTRO), params, v4.new_code_cell(SETUP), v4.new_code_cell(WIDGET),
                v4.new_markdown_cell(TABLES_MD), v4.new_code_cell(TABLES)]  # fmt: skip
    for i, c in enumerate(nb.cells):  # stable ids: rewriting the notebook changes nothing
        c["id"] = f"annotate-{i:02d}"
    return nb


def write(path: str | Path = NOTEBOOKS_DIR / f"{NOTEBOOK_NAME}.ipynb", **kw) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook(**kw), str(path))
    return path


if __name__ == "__main__":
    print(write(*sys.argv[1:2]))
