"""Figure presentation rules (report.figures.tidy) and the one progress bar (shopbench.progress)."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from shopbench import progress  # noqa: E402
from shopbench.report.figures import tidy, title_from  # noqa: E402


def _bars_with_empty_series():
    fig, ax = plt.subplots()
    ax.bar([0, 1], [3, 4], label="judge A")
    ax.bar([0, 1], [0, 0], label="judge B")  # drawn but invisible: zero height
    ax.plot([0, 1], [float("nan")] * 2, label="judge C")  # nothing finite
    ax.legend()
    return fig, ax


def test_tidy_titles_and_moves_legend_outside_and_drops_empty_series():
    fig, ax = _bars_with_empty_series()
    notes = tidy(fig, "demo_fig", "Accuracy per judge. Bars are means.")
    assert fig._suptitle.get_text() == "Accuracy per judge"
    leg = ax.get_legend()
    assert [t.get_text() for t in leg.get_texts()] == ["judge A"]
    assert leg.get_bbox_to_anchor() is not None and leg._loc == 2  # upper left, anchored right of the axes
    fig.canvas.draw()
    legend_box = leg.get_window_extent()
    assert legend_box.x0 >= ax.get_window_extent().x1  # outside the data area
    assert any("judge B" in n and "judge C" in n for n in notes)
    plt.close(fig)


def test_tidy_keeps_an_existing_title_and_says_when_everything_is_zero():
    fig, ax = plt.subplots()
    ax.bar(["a", "b"], [0, 0])
    ax.set_title("flips per axis")
    notes = tidy(fig, "zeros", "caption")
    assert fig._suptitle is None
    assert any("flips per axis" in n for n in notes)
    assert any(t.get_text() == "all values are zero" for t in ax.texts)
    plt.close(fig)


def test_tidy_keeps_interior_legends_inside():
    fig, (left, right) = plt.subplots(1, 2)
    left.plot([0, 1], [1, 2], label="x")
    left.legend()
    right.plot([0, 1], [1, 2], label="y")
    right.legend()
    tidy(fig, "grid", "A grid")
    assert left.get_legend()._loc != 2 or left.get_legend().get_bbox_to_anchor() is None
    fig.canvas.draw()
    assert right.get_legend().get_window_extent().x0 >= right.get_window_extent().x1
    plt.close(fig)


def test_title_from_shortens_long_captions():
    t = title_from("word " * 60, "n")
    assert len(t) <= 90 and t.endswith("…")
    assert title_from("", "paceshop_fig4_tiers") == "paceshop fig4 tiers"
    # an abbreviation does not end the first sentence (the PADMÉ figure's title read "... CIs (Eq")
    assert title_from("Evaluator accuracy with CIs (Eq. 4; ties count as wrong). More text.", "n") == (
        "Evaluator accuracy with CIs (Eq. 4; ties count as wrong)"
    )
    assert title_from("Token use per trial (App. G). Second sentence.", "n") == "Token use per trial (App. G)"
    assert title_from("Rates (see the note. Then more) Tail. Next", "n") == "Rates"  # never a dangling "("


def test_text_mode_bar_finishes_on_stdout(monkeypatch):
    monkeypatch.setenv("SHOPBENCH_PROGRESS", "text")
    buf = io.StringIO()
    for _ in progress.tqdm(range(5), desc="demo", file=buf):
        pass
    assert "demo: 100%" in buf.getvalue() and "5/5" in buf.getvalue()


@pytest.mark.parametrize("mode,total,shown", [("text", 1, False), ("off", 50, False), ("text", 50, True)])
def test_bar_is_hidden_for_single_steps_and_when_off(monkeypatch, mode, total, shown):
    monkeypatch.setenv("SHOPBENCH_PROGRESS", mode)
    buf = io.StringIO()
    bar = progress.tqdm(total=total, desc="x", file=buf)
    bar.update(total)
    bar.close()
    assert bool(buf.getvalue()) is shown


def test_seaborn_hue_legend_survives_and_categorical_axes_work():
    import pandas as pd
    import seaborn as sns

    long = pd.DataFrame(
        {"tier": ["t1", "t2"] * 3, "accuracy": [0.1, 0.2, 0.3, 0.4, 0, 0], "run": list("aabbcc")}
    )
    fig, ax = plt.subplots()
    sns.lineplot(data=long, x="tier", y="accuracy", hue="run", marker="o", ax=ax)
    tidy(fig, "tiers", "Accuracy by tier")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b", "c"]
    plt.close(fig)


def test_merge_identical_series_names_coinciding_lines_once():
    """Issue 16 §3 (Figure 4: 10 legend entries for ~4 visible lines): series equal at every x share one
    legend label; a common backbone suffix is written once; a differing or missing value keeps a series apart."""
    import pandas as pd

    from shopbench.report.figures import merge_identical_series

    rows = []
    for run, vals in {"ares / m": [0.5, 0.5], "etapp / m": [0.5, 0.5], "geval / m": [0.5, None],
                      "pace / m": [1.0, 0.2], "det (L1 checks)": [0.5, 0.5]}.items():  # fmt: skip
        rows += [{"run": run, "tier": f"t{i}", "acc": v} for i, v in enumerate(vals)]
    long = pd.DataFrame(rows)
    out = merge_identical_series(long, "run", "tier", "acc")
    assert list(dict.fromkeys(out.run)) == ["ares / m, etapp / m, det (L1 checks)", "geval / m", "pace / m"]
    assert len(out) == len(long) and out.acc.equals(long.acc)
    same_backbone = merge_identical_series(long[long.run != "det (L1 checks)"], "run", "tier", "acc")
    assert list(dict.fromkeys(same_backbone.run)) == ["ares, etapp / m", "geval / m", "pace / m"]
