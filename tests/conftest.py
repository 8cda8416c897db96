import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


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
