"""The results explorer in JupyterLab, in a real browser (issue 16 §7).

JupyterLab (``--allow-root``, loopback, a free port, a temporary HOME and root folder holding a copy
of notebook 90) is driven by headless Chromium through Playwright: open the notebook, run it, pick a
Table 3 cell, see its records, open one, filter by tier, export the selection as a pair set (read back
with ``read_pairs``), and check that no table cell shows a raw missing value (``<NA>``, ``nan``,
``None``); screenshots go to ``outputs/screenshots/`` (or ``$SHOPBENCH_SCREENSHOTS``).

The results it explores: a PACEShop build and a deterministic judge sweep made here (about a
minute), or, when ``SHOPBENCH_EXPLORER_RESULTS`` names an outputs folder holding ``smoke/data``
(e.g. a finished ``make paper PROFILE=smoke``), those (then the shop and PADMÉ tabs are shown too).

Needs Debian's chromium, playwright and jupyterlab; skipped with the reason otherwise.
"""

import os
import re
import shutil
from pathlib import Path

import pytest

from shopbench.testing.browser import missing, open_lab, outside_requests

ROOT = Path(__file__).resolve().parents[1]
SHOTS = Path(os.environ.get("SHOPBENCH_SCREENSHOTS") or ROOT / "outputs" / "screenshots")
WHY = missing(("playwright", "jupyterlab", "ipywidgets", "jupyterlab_widgets"))
pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY is not None, reason=WHY or "")]


def _results(tmp_path: Path) -> Path:
    """An outputs root with ``smoke/data``: the given one, or a small build and sweep made here."""
    given = os.environ.get("SHOPBENCH_EXPLORER_RESULTS")
    if given and (Path(given) / "smoke" / "data").is_dir():
        return Path(given)
    from shopbench.judges.pace.sweep import sweep
    from shopbench.llm import Gateway
    from shopbench.paceshop.build import BuildConfig, build, write

    out = tmp_path / "outputs"
    data = out / "smoke" / "data"
    cfg = BuildConfig(seed=3, n_products=400, n_candidate_queries=240, n_queries=20, n_personas=40, n_holdout=10,
                      test_goods=12, dev_goods=8, swap_slice=12, s0_per_label=6, calibration_good=4,
                      calibration_bad_per_family=1)  # fmt: skip
    res = build(cfg, progress=False)
    write(res, data / "paceshop", cfg)
    gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", progress=False)
    recs = [r for r in res.records if r.split == "test"]
    rt = sweep(gw, ["pacejudge", "ares", "geval"], ["local/checks", "local/random", "local/always-bad"], recs,
               run_id="explorer-browser")  # fmt: skip
    (data / "judging").mkdir(parents=True)
    rt.to_parquet(data / "judging" / "run_table.parquet", index=False)
    return out


@pytest.fixture
def lab(tmp_path, lab_server):
    """JupyterLab on a root folder holding a copy of notebook 90 (the repo's copy stays unsaved)."""
    outputs = _results(tmp_path)
    work = tmp_path / "lab"
    work.mkdir()
    shutil.copy(ROOT / "notebooks" / "90_explore.ipynb", work / "90_explore.ipynb")
    return lab_server(work, SHOPBENCH_OUTPUTS=str(outputs)), tmp_path / "lab.log"


def _select(page, name: str, label: str | None = None, index: int | None = None):
    sel = page.locator(f".sb-x-{name} select").first
    if label is not None:
        sel.select_option(label=label)
    else:
        sel.select_option(index=index)
    return sel


def _shot(page, anchor: str, name: str) -> None:
    """A viewport screenshot (readable at full size) with ``anchor`` scrolled to the top."""
    page.locator(anchor).first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    page.screenshot(path=str(SHOTS / name))


def test_explorer_in_jupyterlab(lab, chromium_browser):
    from playwright.sync_api import expect

    from shopbench.annotate.pairs import read_pairs

    url, log = lab
    expect.set_options(
        timeout=60_000
    )  # each selection recomputes a cell in the kernel: slow on a loaded machine
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium_browser.new_page(viewport={"width": 1600, "height": 1300})
    page.set_default_timeout(60_000)
    errors, requests = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    open_lab(page, url, "90_explore.ipynb")
    for _ in range(3):  # a click that lands before the notebook panel is wired is lost: try again
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            expect(page.locator(".jp-InputPrompt").nth(1)).not_to_have_text("[ ]:", timeout=30_000)
            break
        except AssertionError:
            continue
    root = page.locator(".sb-x-root")
    try:
        expect(root).to_be_visible(timeout=300_000)
    except AssertionError:
        page.screenshot(path=str(SHOTS / "explorer_failed.png"))
        outs = page.locator(".jp-OutputArea-output").all_inner_texts()
        raise AssertionError(f"no explorer widget; cell outputs: {outs}") from None
    # pick a Table 3 cell: PACEJudge / local/checks / S2 detect
    _select(page, "table", label="Table 3 (PACE closure)")
    _select(page, "protocol", label="pacejudge")
    _select(page, "backbone", label="local/checks")
    _select(page, "column", label="S2_detect")
    status = page.locator(".sb-x-count")
    expect(status).to_have_text(re.compile(r"^\d+ of \d+ rows$"))
    expect(page.locator(".sb-x-status")).to_contain_text("S2_detect")
    expect(page.locator(".sb-x-status")).to_contain_text("pacejudge / local/checks")
    expect(page.locator(".sb-x-grid td.sb-sel")).to_have_count(1)
    n_all = int(status.inner_text().split(" of ")[1].split()[0])
    options = page.locator(".sb-x-records select option")
    assert options.count() == n_all > 0
    _shot(page, ".sb-x-root", "explorer_1_cell.png")
    # open one record
    _select(page, "records", index=min(1, n_all - 1))
    picked = options.nth(min(1, n_all - 1)).inner_text().replace("\xa0", " ").split(" · ")[0].split()[-1]
    detail = page.locator(".sb-x-detail")
    expect(detail.locator("h3")).to_have_text(picked)  # the record shown is the one picked
    expect(detail).to_contain_text("pacejudge / local/checks")
    expect(detail).to_contain_text("Raw output")
    expect(detail).to_contain_text("Rationale")
    expect(detail).to_contain_text("Shopper query")
    expect(detail.locator("table").first).to_contain_text("defect_family")
    _shot(page, ".sb-x-detail", "explorer_2_record.png")
    # filter by tier (S4 holds single-defect BADs only; the mean row of Table 3 S0 mixes tiers)
    _select(page, "backbone", label="mean")
    expect(page.locator(".sb-x-status")).to_contain_text("pacejudge / mean")  # one change at a time: the
    _select(page, "column", label="S0")  # kernel's reply to the first must not overwrite the second
    expect(page.locator(".sb-x-status")).to_contain_text("S0")
    before = int(status.inner_text().split(" of ")[0])
    tiers = [t for t in page.locator(".sb-x-filter-tier select option").all_inner_texts() if t != "(all)"]
    assert "0" in tiers and len(tiers) >= 2, tiers
    _select(page, "filter-tier", label="0")
    expect(status).not_to_have_text(f"{before} of {before} rows")
    after = int(status.inner_text().split(" of ")[0])
    assert 0 < after < before
    first = page.locator(".sb-x-records select option").first.inner_text().replace("\xa0", " ")
    assert " t0 " in first, first
    _shot(page, ".sb-x-status", "explorer_3_tier_filter.png")
    # export the selection (tier 0 of the mean S0 cell) as a pair set for the annotation UI
    export = page.locator(".sb-x-export-path input")
    pairs_file = Path(export.input_value())
    page.locator("button.sb-x-export").click()
    expect(page.locator(".sb-x-export-msg")).to_contain_text("wrote ")
    msg = page.locator(".sb-x-export-msg").inner_text()
    n_pairs = int(msg.split("wrote ")[1].split()[0])
    assert n_pairs > 0 and len(read_pairs(pairs_file)) == n_pairs
    assert "make annotate" in msg and str(pairs_file) in msg
    # the other tabs render (or say which notebook makes their data)
    for tab, name in (
        ("Shop trials", "explorer_4_shop.png"),
        ("PADMÉ pairs", "explorer_5_padme.png"),
    ):
        page.locator(".sb-x-tabs .lm-TabBar-tab", has_text=tab).click()
        page.wait_for_timeout(500)
        _shot(page, ".sb-x-root", name)
        cells = page.locator(".sb-x-root td").all_inner_texts()
        raw = {c.strip() for c in cells} & {"<NA>", "nan", "NaN", "None", "NaT"}
        assert not raw, f"{tab}: a raw missing value in a table cell: {raw}"  # the mark is "–"
    assert not [e for e in errors if "sb-x" in e or "shopbench" in e], errors
    assert not outside_requests(requests), outside_requests(requests)  # every asset from this machine
