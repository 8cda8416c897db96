"""Opening a stored notebook in JupyterLab does not make it "modified" (issue 16 §5), in a real browser.

JupyterLab (loopback, temporary HOME, a root folder holding byte-for-byte copies of every notebook in
``notebooks/``) is driven by headless Chromium through Playwright. Each notebook is opened without
running anything; once its kernel is idle (JupyterLab has written the kernel's ``kernelspec`` and
``language_info`` into the model by then) the document's tab must carry no ``jp-mod-dirty`` class,
and after the server is stopped every file must be byte-for-byte what was stored. What makes a
notebook dirty when opened is fixed in the stored form (``python -m shopbench.notebook_files
normalize``), not here.

Needs Debian's chromium, playwright and jupyterlab; skipped with the reason otherwise.
"""

import shutil
from pathlib import Path

import pytest

from shopbench.testing.browser import missing, open_lab

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WHY = missing(("playwright", "jupyterlab"))
pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY is not None, reason=WHY or "")]


def test_stored_notebooks_open_unmodified(tmp_path, lab_server, chromium_browser):
    from playwright.sync_api import expect

    work = tmp_path / "lab"
    work.mkdir()
    stored = {}
    for nb in NOTEBOOKS:
        shutil.copy(nb, work / nb.name)
        stored[nb.name] = nb.read_bytes()
    assert len(stored) >= 10, sorted(stored)
    url = lab_server(work, SHOPBENCH_OUTPUTS=str(tmp_path / "outputs"))
    dirty = {}
    for name in stored:
        page = chromium_browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(60_000)
        open_lab(page, url, name, reset=True)  # opens it and waits until its kernel is idle; runs nothing
        tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text=name).first
        expect(tab).to_be_visible()
        page.wait_for_timeout(2_000)  # a metadata change lands right after the kernel's info reply
        expect(page.locator(".jp-CodeCell .jp-InputPrompt").first).to_have_text("[ ]:")  # nothing was run
        if "jp-mod-dirty" in (tab.get_attribute("class") or ""):
            dirty[name] = "tab marked modified"
        page.close()  # closing the page saves nothing (no autosave of a clean document)
    assert not dirty, (
        f"opening marks these notebooks modified: {dirty} (python -m shopbench.notebook_files normalize)"
    )
    changed = [n for n, data in stored.items() if (work / n).read_bytes() != data]
    assert not changed, f"the files changed on disk while open: {changed}"
