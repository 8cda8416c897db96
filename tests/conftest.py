import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


# ---- parallel runs (issue 27: `make test` runs pytest-xdist, `-n 2 --dist loadfile`) -----------------------
@pytest.fixture(scope="session", autouse=True)
def _private_default_outputs(tmp_path_factory):
    """The default outputs tree (and model-call cache) of a test that sets neither is a folder of this
    session's own temporary tree, never the repository's ``outputs/`` or a SHOPBENCH_CACHE_DIR of the
    shell: two xdist workers (each with its own temporary tree) then never build the same
    ``outputs/tasks/data/...`` folder or write one cache at once, and a test run leaves the developer's
    ``outputs/`` as it was. Tests that need their own tree still set it (the ``outputs`` fixture)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SHOPBENCH_OUTPUTS", str(tmp_path_factory.mktemp("default-outputs")))
    mp.delenv("SHOPBENCH_CACHE_DIR", raising=False)
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _browser_expect_timeout(request):
    """Playwright's ``expect`` waits 30 s, not its default 5 s, in the real-browser tests: with the other
    xdist worker busy (a notebook run, a model server) a widget's round trip through its kernel can take
    longer than 5 s. A passing check returns as soon as it holds; only a failure waits longer."""
    if request.node.path.name.endswith("_browser.py"):
        try:
            from playwright.sync_api import expect
        except ImportError:  # the file's own skip says why
            return
        expect.set_options(timeout=30_000)


@pytest.fixture
def outputs(tmp_path, monkeypatch):
    """A private outputs tree (and cache) for one test."""
    out = tmp_path / "outputs"
    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(out))
    monkeypatch.delenv("SHOPBENCH_CACHE_DIR", raising=False)
    return out


@pytest.fixture(scope="session")
def fake_server():
    from shopbench.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def server(fake_server):
    fake_server.reset()
    fake_server.latency_s = 0.0
    return fake_server


@pytest.fixture
def gateway(tmp_path):
    from shopbench.llm import Gateway

    def make(**kw):
        kw.setdefault("backoff_s", 0.01)
        kw.setdefault("progress", False)
        return Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", **kw)

    return make


# ---- PACEShop builds shared by the test files -----------------------------------------------------------
# A small build (400 products, 30 queries, 50 personas) that every stage of seed 000's pipeline runs
# through; built once per session (``paceshop_small``), or configured per test (``paceshop_config``).
SMALL_PACESHOP = dict(n_products=400, n_candidate_queries=240, n_queries=30, n_personas=50, n_holdout=14,
                      test_goods=20, dev_goods=20, swap_slice=20, s0_per_label=8, calibration_good=8,
                      calibration_bad_per_family=2)  # fmt: skip


@pytest.fixture(scope="session")
def paceshop_config():
    """``make(seed=3, **overrides)`` → a :class:`BuildConfig` of the small build."""
    from shopbench.paceshop.build import BuildConfig

    def make(seed: int = 3, **overrides):
        return BuildConfig(seed=seed, **{**SMALL_PACESHOP, **overrides})

    return make


@pytest.fixture(scope="session")
def paceshop_small(paceshop_config):
    """``(config, BuildResult)`` of the small build with seed 3, built once for the whole session."""
    from shopbench.paceshop.build import build

    cfg = paceshop_config()
    return cfg, build(cfg, progress=False)


# ---- real-browser tests (shopbench.testing.browser) ------------------------------------------------------
@pytest.fixture
def lab_server(tmp_path):
    """``start(root_dir, **env)`` → the URL of JupyterLab serving ``root_dir`` (temporary HOME and Jupyter
    folders under ``tmp_path``, ``env`` added; any inherited SHOPBENCH_OUTPUTS dropped), stopped after the test;
    its log is ``tmp_path / "lab.log"``."""
    import contextlib

    from shopbench.testing.browser import clean_env, jupyter_lab

    with contextlib.ExitStack() as stack:

        def start(root_dir, **env):
            home = tmp_path / "home"
            full = clean_env(home, drop=("JUPYTER_", "SHOPBENCH_OUTPUTS"), **env)
            return stack.enter_context(jupyter_lab(root_dir, home, tmp_path / "lab.log", full))

        yield start


@pytest.fixture
def chromium_browser():
    """Debian's headless chromium driven by Playwright (closed after the test)."""
    from playwright.sync_api import sync_playwright

    from shopbench.testing.browser import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def start_voila(tmp_path):
    """``start(*options)`` → (url, answers folder, log path): the launcher on a free port with a temporary
    HOME (``tmp_path/home``), outputs (``tmp_path/outputs``) and answers folder (``tmp_path/answers``) and
    ``options``; stopped (by its process group) after the test."""
    import contextlib

    from shopbench.testing.browser import clean_env, free_port, served

    root = Path(__file__).resolve().parents[1]
    with contextlib.ExitStack() as stack:

        def start(*options: str):
            store, log, port = tmp_path / "answers", tmp_path / "voila.log", free_port()
            env = clean_env(tmp_path / "home", drop=("SHOPBENCH_ANNOTAT", "JUPYTER_", "VOILA_", "SHOPBENCH_TAU_BENCH_PATH"),
                            SHOPBENCH_OUTPUTS=str(tmp_path / "outputs"))  # fmt: skip
            cmd = [sys.executable, "-m", "shopbench.annotate.serve", "--port", str(port), "--store", str(store),
                   *options]  # fmt: skip
            stack.enter_context(
                served(cmd, port, cwd=root, env=env, log=log, timeout_s=90, what="annotation server")
            )
            return f"http://127.0.0.1:{port}/", store, log

        yield start
