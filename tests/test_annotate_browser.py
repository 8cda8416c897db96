"""The annotation tool in a real browser.

``python -m shopbench.annotate.serve`` serves notebook 60 with Voila on 127.0.0.1 (temporary HOME,
outputs and answers folder); headless Chromium, driven by Playwright, passes the instructions,
annotates three pairs with the keyboard, goes back once with Backspace to change an answer, opens
the reference documents, reloads the page and checks that it resumes at the first unanswered pair;
then the JSONL rows are checked.

Needs Debian's chromium (``apt-get install -y chromium``) and the Python packages playwright, voila
and anywidget; skipped with the reason otherwise. Playwright's own browser download is never used.
"""

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT.parent / "shared" / "data" / "tau_bench_airline_trajectories" / "gpt-4o-airline.json"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]  # fmt: skip


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return "chromium not installed (apt-get install -y chromium)"
    for module, pin in (
        ("playwright", "playwright==1.63.0"),
        ("voila", "voila==0.5.13"),
        ("anywidget", "anywidget==0.11.0"),
    ):
        if importlib.util.find_spec(module) is None:
            return f"python package {module} not installed (pip install {pin})"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_missing() is not None, reason=_missing() or "")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def voila(tmp_path):
    """The launcher on a free port; yields (url, answers folder, log path); stopped by its pid."""
    home = tmp_path / "home"
    home.mkdir()
    store = tmp_path / "answers"
    log = tmp_path / "voila.log"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SHOPBENCH_ANNOTAT", "JUPYTER_", "VOILA_")) and k != "SHOPBENCH_TAU_BENCH_PATH"}  # fmt: skip
    env.update(HOME=str(home), SHOPBENCH_OUTPUTS=str(tmp_path / "outputs"), PYTHONUNBUFFERED="1")
    port = _free_port()
    cmd = [sys.executable, "-m", "shopbench.annotate.serve", "--port", str(port), "--annotator", "bob",
           "--store", str(store), "--source", "tau_bench", "--tau-bench-path", str(TAU), "--n-pairs", "5"]  # fmt: skip
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"the annotation server exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
                )
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"the annotation server did not listen on {port} within 60 s:\n{log.read_text()[-3000:]}"
                    )
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/", store, log
    finally:
        proc.send_signal(signal.SIGTERM)  # Voila shuts its kernels down on SIGTERM
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this test started (server and its kernels)
            proc.wait(timeout=10)


def test_annotate_in_a_real_browser(voila):
    from playwright.sync_api import expect, sync_playwright

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
            outside = [
                u
                for u in requests
                if not u.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:"))
            ]
            assert requests and not outside, outside
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
    deadline = time.monotonic() + 15
    while "Kernel shutdown" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "Kernel shutdown" in log.read_text(), log.read_text()[-2000:]
