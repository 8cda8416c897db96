"""Annotate → agree in one place, in a real browser (issue 16 §2).

Three annotators answer the same four τ-bench pairs in the Voila annotation page (headless
Chromium driven by Playwright, keyboard only); notebook 70 is then run with papermill on the answers
the page wrote (``annotation_store``); its Krippendorff's α and Cohen's κ are checked against values
computed here, independently, from the raw JSONL answers with the ``krippendorff`` package and
scikit-learn's ``cohen_kappa_score``, and its label accuracy against the pairs' hidden labels.

Needs Debian's chromium (``apt-get install -y chromium``), playwright, voila and anywidget; skipped
with the reason otherwise. Playwright's own browser download is never used.
"""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from shopbench.testing.browser import CHROMIUM, CHROMIUM_ARGS, missing

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT.parent / "shared" / "data" / "tau_bench_airline_trajectories" / "gpt-4o-airline.json"
N_PAIRS = 4
# per annotator: (screen slot, confidence key) for each pair; the underlying side each slot shows is
# drawn per annotator and pair, and read back from the answers
PLAN = {
    "alice": [("ArrowLeft", "3"), ("ArrowRight", "2"), ("ArrowLeft", "3"), ("ArrowRight", "1")],
    "bob": [("ArrowLeft", "2"), ("ArrowRight", "3"), ("ArrowRight", "3"), ("ArrowRight", "2")],
    "carol": [("ArrowRight", "1"), ("ArrowRight", "3"), ("ArrowLeft", "2"), ("ArrowRight", "3")],
}


WHY = (f"tau-bench trajectories not found at {TAU}" if not TAU.exists()
       else missing(("playwright", "voila", "anywidget", "papermill", "krippendorff", "sklearn")))  # fmt: skip
pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY is not None, reason=WHY or "")]


@pytest.fixture
def served(start_voila, tmp_path):
    """The annotation server (profile smoke, τ-bench pairs); yields (url, answers, outputs, HOME)."""
    url, store, _log = start_voila("--profile", "smoke", "--source", "tau_bench", "--tau-bench-path", str(TAU),
                                   "--n-pairs", str(N_PAIRS))  # fmt: skip
    return url, store, tmp_path / "outputs", tmp_path / "home"


def _annotate(url: str, store: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for annotator, plan in PLAN.items():
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.set_default_timeout(30_000)
                errors = []
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                # Voila runs the notebook before the page finishes loading: wait for the widget, not "load"
                page.goto(f"{url}?annotator={annotator}", wait_until="commit", timeout=240_000)
                root = page.locator("[data-testid=annotate-root]")
                expect(root).to_have_attribute("data-screen", "instructions", timeout=240_000)
                page.keyboard.press("Enter")
                expect(root).to_have_attribute("data-screen", "intro")
                page.keyboard.press("n")
                expect(root).to_have_attribute("data-screen", "pair")
                for i, (side, conf) in enumerate(plan, 1):
                    expect(root).to_have_attribute("data-pair-index", str(i))
                    page.keyboard.press(side)
                    expect(root).to_have_attribute("data-choice", "A" if side == "ArrowLeft" else "B")
                    page.keyboard.press(conf)
                    expect(root).to_have_attribute("data-confidence", {"1": "0", "2": "50", "3": "100"}[conf])
                    page.keyboard.press("Enter")
                expect(root).to_have_attribute("data-screen", "done")
                assert not errors, errors
                page.close()
        finally:
            browser.close()
    for annotator, plan in PLAN.items():
        rows = [json.loads(x) for x in (store / f"{annotator}.jsonl").read_text().splitlines()]
        assert [(r["choice"], r["confidence"]) for r in rows] == [
            ("A" if s == "ArrowLeft" else "B", {"1": 0, "2": 50, "3": 100}[c]) for s, c in plan
        ]


def _expected(store: Path):
    """α, κ and label accuracy computed here from the raw answers, not with shopbench.stats."""
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    from shopbench.annotate.pairs import pairs_from_tau_bench
    from shopbench.config import load_profile

    latest = {}
    for a in PLAN:
        for line in (store / f"{a}.jsonl").read_text().splitlines():
            r = json.loads(line)
            latest[(a, r["pair_id"])] = 1 if r["chosen_item"] == "side_a" else 2
    pair_ids = sorted({p for _, p in latest})
    matrix = np.array([[latest.get((a, p), np.nan) for p in pair_ids] for a in PLAN], dtype=float)
    alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal", value_domain=[1, 2])
    kappas = {}
    for i, j in itertools.combinations(range(len(PLAN)), 2):
        k = cohen_kappa_score(matrix[i], matrix[j], labels=[1, 2])
        kappas[(list(PLAN)[i], list(PLAN)[j])] = k
    seed = load_profile("smoke").params.seed
    labels = {
        p.id: (1 if p.hidden.label == "side_a" else 2)
        for p in pairs_from_tau_bench(TAU, max_pairs=N_PAIRS, seed=seed)
    }
    assert set(pair_ids) == set(labels)
    maj = [np.bincount(matrix[:, k].astype(int), minlength=3).argmax() for k in range(len(pair_ids))]
    accuracy = float(np.mean([m == labels[p] for m, p in zip(maj, pair_ids, strict=True)]))
    return alpha, kappas, accuracy, matrix


def test_annotate_then_agreement(served, tmp_path, monkeypatch):
    import papermill as pm

    from shopbench.kernels import IPCKernelManager
    from shopbench.paths import NOTEBOOKS_DIR

    url, store, outputs, home = served
    _annotate(url, store)
    alpha, kappas, accuracy, matrix = _expected(store)
    assert np.isfinite(alpha) and -1 <= alpha < 1  # the plan gives a non-degenerate panel

    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(outputs))
    monkeypatch.setenv("HOME", str(home))
    out_nb = tmp_path / "70_agreement.ipynb"
    pm.execute_notebook(
        str(NOTEBOOKS_DIR / "70_agreement.ipynb"), str(out_nb), cwd=str(NOTEBOOKS_DIR), kernel_name="python3",
        progress_bar=False, kernel_manager_class=IPCKernelManager, execution_timeout=900,
        parameters={"profile": "smoke", "annotation_store": str(store), "annotation_source": "tau_bench",
                    "annotation_n_pairs": N_PAIRS, "tau_bench_path": str(TAU)},
    )  # fmt: skip
    summary = json.loads((outputs / "smoke" / "agreement" / "summary.json").read_text())
    assert summary["simulated"] is False and "annotation store" in summary["source"]
    assert summary["n_pairs"] == N_PAIRS
    assert summary["pooled_alpha"] == pytest.approx(alpha, abs=1e-9)
    pw = {
        (r["a"], r["b"]): r for r in summary["tables"]["padme_tab12_pairwise_kappa"] if r["panel"] != "mean"
    }
    assert len(pw) == len(kappas)
    for (a, b), k in kappas.items():
        got = pw.get((a, b)) or pw[(b, a)]
        if np.isnan(k):
            assert got["kappa"] is None or np.isnan(got["kappa"])
        else:
            assert got["kappa"] == pytest.approx(k, abs=1e-9), (a, b)
    assert summary["label_accuracy"]["D0"] == pytest.approx(accuracy)
    # the executed notebook says where its answers came from, and that the paper comparison says nothing
    text = out_nb.read_text()
    assert (
        "the project's annotation store" in text
        and "These are answers made in the project's annotation UI" in text
    )
