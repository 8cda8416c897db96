"""The annotation tool in a real browser.

``python -m shopbench.annotate.serve`` serves notebook 60 with Voila on 127.0.0.1 (temporary HOME,
outputs and answers folder); headless Chromium, driven by Playwright, passes the instructions,
annotates three pairs with the keyboard, goes back once with Backspace to change an answer, opens
the reference documents, reloads the page and checks that it resumes at the first unanswered pair;
then the JSONL rows are checked. A second test serves a pair set exported by the explorer
(``--pairs FILE``) and checks that exactly those pairs are annotated, in order, with the shopper and
query shown once above the sides (screenshot ``annotate_pair_set.png`` in ``outputs/screenshots/`` or
``$SHOPBENCH_SCREENSHOTS``).

Needs Debian's chromium (``apt-get install -y chromium``) and the Python packages playwright, voila
and anywidget; skipped with the reason otherwise. Playwright's own browser download is never used.
"""

import json
import os
import time
from pathlib import Path

import pytest

from shopbench.testing.browser import missing, outside_requests

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT.parent / "shared" / "data" / "tau_bench_airline_trajectories" / "gpt-4o-airline.json"
SHOTS = Path(os.environ.get("SHOPBENCH_SCREENSHOTS") or ROOT / "outputs" / "screenshots")
WHY = missing(("playwright", "voila", "anywidget"))
pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY is not None, reason=WHY or "")]


@pytest.fixture
def voila(start_voila):
    return start_voila(
        "--annotator", "bob", "--source", "tau_bench", "--tau-bench-path", str(TAU), "--n-pairs", "5"
    )


def test_annotate_in_a_real_browser(voila):
    from playwright.sync_api import expect, sync_playwright

    from shopbench.testing.browser import CHROMIUM, CHROMIUM_ARGS

    url, store, log = voila
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(20_000)
            errors, requests = [], []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(url + "?annotator=alice")
            root = page.locator("[data-testid=annotate-root]")
            expect(root).to_have_attribute(
                "data-screen", "instructions", timeout=90_000
            )  # kernel start + notebook
            expect(page.get_by_text("Before you start")).to_be_visible()

            def press(key, **attrs):
                page.keyboard.press(key)
                for name, value in attrs.items():
                    expect(root).to_have_attribute(f"data-{name.replace('_', '-')}", value)

            press("Enter", screen="intro")
            criterion = "Task resolution" if TAU.exists() else "Overall response quality"  # PACEShop fallback
            expect(page.locator(".sb-intro-name")).to_have_text(criterion)
            press("n", screen="pair", pair_index="1")
            expect(page.locator(".sb-progress")).to_have_text("1 / 5")
            expect(page.locator(".sb-criterion-name")).to_have_text(criterion)

            # collapsed by default; references open one at a time
            assert page.locator(".sb-slot details[open], .sb-ref[open]").count() == 0
            refs = page.locator(".sb-ref > summary")
            assert refs.count() == 2
            refs.nth(0).click()
            expect(page.locator(".sb-ref").nth(0)).to_have_attribute("open", "")
            refs.nth(1).click()
            expect(page.locator(".sb-ref").nth(1)).to_have_attribute("open", "")
            expect(page.locator(".sb-ref").nth(0)).not_to_have_attribute("open", "")
            calls = page.locator(".sb-slot-A details.sb-call > summary")
            if calls.count():
                expect(calls.first).to_contain_text("Agent calls ")
                calls.first.click()
                expect(page.locator(".sb-slot-A details.sb-call").first).to_have_attribute("open", "")

            press("ArrowRight", choice="B")
            press("3", confidence="100")
            press("Enter", pair_index="2", choice="")
            press("ArrowLeft", choice="A")
            press("1", confidence="0")
            press("Enter", pair_index="3", choice="")
            press("ArrowRight", choice="B")
            press("2", confidence="50")
            press("Enter", pair_index="4", choice="")
            press("Backspace", pair_index="3", choice="B", confidence="50")  # back to revise
            press("ArrowLeft", choice="A")
            press("3", confidence="100")
            press("Enter", pair_index="4", choice="")
            expect(page.locator(".sb-progress")).to_have_text("4 / 5")

            page.reload()
            expect(root).to_have_attribute("data-screen", "intro", timeout=90_000)  # instructions only once
            expect(page.locator(".sb-intro")).to_contain_text("Pair 4 of 5 · 3 answered")
            press("n", screen="pair", pair_index="4")
            assert "side_a" not in page.content() and "side_b" not in page.content()
            assert not errors, errors
            # offline-clean: every request goes to this machine (no CDN fonts, no analytics)
            assert requests and not outside_requests(requests), outside_requests(requests)
            # no developer notes or local paths on the annotator's screen (they go to the server log)
            text = page.locator("body").inner_text()
            assert "note:" not in text and str(ROOT) not in text and str(store) not in text
        finally:
            browser.close()

    rows = [json.loads(line) for line in (store / "alice.jsonl").read_text().splitlines()]
    assert not (store / "bob.jsonl").exists()  # the page's ?annotator= wins over the server's default
    assert [(r["choice"], r["confidence"], r["revision"]) for r in rows] == [
        ("B", 100, 0), ("A", 0, 0), ("B", 50, 0), ("A", 100, 1)]  # fmt: skip
    assert [r["pair_id"] for r in rows][3] == rows[2]["pair_id"] and len({r["pair_id"] for r in rows}) == 3
    for r in rows:
        assert r["annotator"] == "alice" and r["time_spent_s"] >= 0
        assert r["chosen_item"] == r["slot_order"][0 if r["choice"] == "A" else 1]
        assert sorted(r["slot_order"]) == ["side_a", "side_b"]
    # the first page's kernel was shut down when it was left (xsrf disabled for the shutdown request)
    # a poll: it ends as soon as the line appears (60 s: the other xdist worker may keep the CPU busy)
    deadline = time.monotonic() + 60
    while "Kernel shutdown" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "Kernel shutdown" in log.read_text(), log.read_text()[-2000:]


def test_annotate_an_exported_pair_set(start_voila, chromium_browser, paceshop_small, tmp_path):
    """``serve --pairs FILE`` (``make annotate ANNOTATE_ARGS="--pairs FILE"``) serves exactly the pairs the
    explorer exported, in order; the PACEShop shopper and query are shown once above the two sides."""
    from playwright.sync_api import expect

    from shopbench.explorer.pace import export_pairs

    records = {r.record_id: r for r in paceshop_small[1].records}
    bad = [r.record_id for r in records.values() if r.kind == "bad" and r.base_record_id in records][:3]
    path, n = export_pairs(records, bad, tmp_path / "pairsets" / "selection.jsonl", seed=1)
    exported = [json.loads(line)["id"] for line in path.read_text().splitlines()]
    url, store, log = start_voila("--annotator", "carol", "--pairs", str(path))
    assert f"pairs: the {n} pairs of {path}" in log.read_text()
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(30_000)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url, wait_until="commit", timeout=240_000)  # Voila runs the notebook before the page loads
    root = page.locator("[data-testid=annotate-root]")
    expect(root).to_have_attribute("data-screen", "instructions", timeout=240_000)
    page.keyboard.press("Enter")
    expect(page.locator(".sb-intro-name")).to_have_text("Overall response quality")
    page.keyboard.press("n")
    expect(root).to_have_attribute("data-screen", "pair")
    expect(page.locator(".sb-progress")).to_have_text(f"1 / {n}")
    shared = page.locator("[data-testid=shared-context]")
    expect(shared).to_contain_text("Shopper query:")
    assert page.locator("body").inner_text().count("Shopper query:") == 1  # once, above both sides
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "annotate_pair_set.png"))
    for i in range(1, n + 1):
        expect(root).to_have_attribute("data-pair-index", str(i))
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("2")
        expect(root).to_have_attribute("data-confidence", "50")
        page.keyboard.press("Enter")
    expect(root).to_have_attribute("data-screen", "done")
    assert not outside_requests(requests), outside_requests(requests)
    rows = [json.loads(line) for line in (store / "carol.jsonl").read_text().splitlines()]
    assert [r["pair_id"] for r in rows] == exported  # exactly the exported pairs, in their order
