"""shopbench.llm.llamacpp: GGUF header, install/verify, profile scanning, and (marked llamacpp)
real round trips through litellm with SmolLM2, in-process and via llama_cpp.server."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import struct
import sys
import time
from pathlib import Path

import pytest

from shopbench.llm.llamacpp import cli as CLI
from shopbench.llm.llamacpp import gguf as G
from shopbench.llm.llamacpp import install as I
from shopbench.llm.llamacpp import registry as R
from shopbench.llm.llamacpp import runtime as RT
from shopbench.llm.llamacpp import server as S

SMOL = "smollm2-135m-instruct"


# ── a tiny GGUF writer ───────────────────────────────────────────────────────


def _s(text: str) -> bytes:
    b = text.encode()
    return struct.pack("<Q", len(b)) + b


def _kv(key: str, vtype: int, payload: bytes) -> bytes:
    return _s(key) + struct.pack("<I", vtype) + payload


def write_gguf(path: Path, arch: str = "llama", name: str = "tiny test model", tail: bytes = b"") -> Path:
    kvs = [
        _kv("general.architecture", 8, _s(arch)),
        _kv("general.name", 8, _s(name)),
        _kv(f"{arch}.context_length", 4, struct.pack("<I", 2048)),
        _kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + _s("<s>") + _s("a") + _s("bc")),
        _kv("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 3) + struct.pack("<3f", 0.0, -1.0, -2.0)),
        _kv(
            "nested",
            9,
            struct.pack("<IQ", 9, 2)
            + struct.pack("<IQ", 5, 1)
            + struct.pack("<i", 7)
            + struct.pack("<IQ", 8, 1)
            + _s("x"),
        ),  # fmt: skip
        _kv("general.file_type", 4, struct.pack("<I", 3)),
        _kv("some.float", 6, struct.pack("<f", 0.5)),
        _kv("some.flag", 7, struct.pack("<?", True)),
        _kv("some.i64", 11, struct.pack("<q", -5)),
    ]
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kvs))
    path.write_bytes(header + b"".join(kvs) + tail)
    return path


def test_read_gguf_metadata(tmp_path):
    meta = G.read_gguf_metadata(write_gguf(tmp_path / "m.gguf", tail=b"\0" * 64))
    assert meta["gguf.version"] == 3
    assert meta["gguf.tensor_count"] == 1
    assert meta["gguf.kv_count"] == 10
    assert meta["general.architecture"] == "llama"
    assert meta["general.name"] == "tiny test model"
    assert meta["llama.context_length"] == 2048
    assert meta["tokenizer.ggml.tokens"] == G.GGUFArray("string", 3)
    assert meta["tokenizer.ggml.scores"] == G.GGUFArray("float32", 3)
    assert meta["nested"] == G.GGUFArray("array", 2)
    # keys after the arrays prove the arrays were skipped exactly
    assert meta["general.file_type"] == 3
    assert meta["some.float"] == 0.5
    assert meta["some.flag"] is True
    assert meta["some.i64"] == -5


def test_read_gguf_rejects_other_files(tmp_path):
    (tmp_path / "x.bin").write_bytes(b"PK\x03\x04 not gguf")
    with pytest.raises(ValueError, match="not a GGUF file"):
        G.read_gguf_metadata(tmp_path / "x.bin")
    good = write_gguf(tmp_path / "t.gguf").read_bytes()
    (tmp_path / "cut.gguf").write_bytes(good[:60])
    with pytest.raises(ValueError, match="truncated"):
        G.read_gguf_metadata(tmp_path / "cut.gguf")


# ── paths and errors ─────────────────────────────────────────────────────────


def test_model_dir_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOPBENCH_MODEL_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("SHOPBENCH_WHEEL_DIR", str(tmp_path / "w"))
    assert R.model_dir() == tmp_path / "m"
    assert R.wheel_dir() == tmp_path / "w"
    monkeypatch.delenv("SHOPBENCH_MODEL_DIR")
    assert R.model_dir() == Path.home() / ".cache" / "shopbench" / "models"


def test_model_not_installed_names_the_command(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOPBENCH_MODEL_DIR", str(tmp_path))
    for name in R.MODELS:
        with pytest.raises(R.ModelNotInstalled, match="make local-llm") as ei:
            R.model_path(name)
        assert name in str(ei.value)
        assert isinstance(ei.value, RuntimeError)
        assert not R.is_installed(name)
    with pytest.raises(R.ModelNotInstalled) as ei:
        R.model_path("no-such-model")
    assert all(n in str(ei.value) for n in R.MODELS)


def test_registry_pins():
    assert set(R.MODELS) == {"smollm2-135m-instruct", "qwen2.5-coder-1.5b-instruct"}
    for spec in R.MODELS.values():
        assert len(spec.sha256) == 64 and int(spec.sha256, 16) >= 0
        assert 0 < spec.n_ctx <= R.MAX_N_CTX
        assert len(spec.parts) == len(spec.packages)
    qwen = R.MODELS["qwen2.5-coder-1.5b-instruct"]
    assert [p for _, p in qwen.parts][:2] == ["data/part01.bin", "data/part02.bin"]
    assert qwen.architecture == "qwen2" and R.MODELS[SMOL].architecture == "llama"


# ── install, with a fake model split over fake packages on sys.path ──────────


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    """A registry model 'fake' made of 3 importable packages' data slices."""
    blob = write_gguf(tmp_path / "whole.gguf", tail=os.urandom(3000)).read_bytes()
    site = tmp_path / "site"
    cuts = [0, 100, 1700, len(blob)]
    parts = []
    for i in range(3):
        pkg = site / f"fakemodel_part{i + 1}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i + 1:02d}.bin").write_bytes(blob[cuts[i] : cuts[i + 1]])
        parts.append((pkg.name, f"data/part{i + 1:02d}.bin"))
    monkeypatch.syspath_prepend(str(site))
    spec = R.ModelSpec(
        name="fake", packages=tuple(f"fakemodel-part{i}" for i in (1, 2, 3)), parts=tuple(parts),
        filename="fake.gguf", sha256=hashlib.sha256(blob).hexdigest(), size=len(blob),
        architecture="llama", n_ctx=2048,
    )  # fmt: skip
    monkeypatch.setitem(R.MODELS, "fake", spec)
    monkeypatch.setenv("SHOPBENCH_MODEL_DIR", str(tmp_path / "models"))

    def no_pip(cmd, what, env=None):
        raise AssertionError(f"unexpected subprocess: {cmd}")

    monkeypatch.setattr(I, "_run", no_pip)
    return spec, blob, site


def test_install_assembles_verifies_and_is_idempotent(fake_model, capsys):
    spec, blob, _ = fake_model
    out = I.install(["fake"], llama_cpp=False)
    path = out["fake"]
    assert path == R.model_dir() / "fake.gguf" == R.model_path("fake")
    assert path.read_bytes() == blob
    assert Path(str(path) + ".verified").read_text().split()[0] == spec.sha256
    line = capsys.readouterr().out
    assert "fake: installed" in line and "tiny test model" in line
    assert not list(R.model_dir().glob(".staging-*")) and not list(R.model_dir().glob("*.partial"))

    I.install(["llamacpp/fake"], llama_cpp=False)
    assert "already installed" in capsys.readouterr().out

    # a lost sidecar costs one rehash, not a re-assembly
    Path(str(path) + ".verified").unlink()
    with pytest.raises(R.ModelNotInstalled):
        R.model_path("fake")
    I.install(["fake"], llama_cpp=False)
    assert "verified existing file" in capsys.readouterr().out
    assert R.is_installed("fake")


def test_install_checksum_mismatch(fake_model, monkeypatch):
    spec, _, _ = fake_model
    monkeypatch.setitem(R.MODELS, "fake", dataclasses.replace(spec, sha256="0" * 64))
    with pytest.raises(R.ChecksumMismatch) as ei:
        I.install(["fake"], llama_cpp=False)
    msg = str(ei.value)
    assert "expected " + "0" * 64 in msg and "got " + spec.sha256 in msg
    assert not (R.model_dir() / "fake.gguf").exists()


def test_install_wrong_architecture(fake_model, monkeypatch):
    spec, _, _ = fake_model
    monkeypatch.setitem(R.MODELS, "fake", dataclasses.replace(spec, architecture="qwen2"))
    with pytest.raises(R.ModelInstallError, match="expected 'qwen2'"):
        I.install(["fake"], llama_cpp=False)


def test_install_names_missing_part(fake_model, monkeypatch):
    _, _, site = fake_model
    (site / "fakemodel_part2" / "data" / "part02.bin").unlink()
    monkeypatch.setattr(I, "_run", lambda cmd, what, env=None: None)  # "pip" installs nothing
    with pytest.raises(R.ModelInstallError, match=r"missing model part\(s\): fakemodel-part2"):
        I.install(["fake"], llama_cpp=False)


# ── profiles and CLI ─────────────────────────────────────────────────────────

PROFILE = """
name: demo
backbones:
  assistant: llamacpp/smollm2-135m-instruct
  judge: openai/gpt-4o-mini
grid:
  - {model: "llamacpp/qwen2.5-coder-1.5b-instruct", temperature: 0}
  - model: llamacpp/smollm2-135m-instruct
servers:
  - {server: llamacpp, model_name: qwen2.5-coder-1.5b-instruct, port: 8080}
  - {server: vllm, model_name: smollm2-135m-instruct}
notes: "uses llamacpp/ models"
"""


def test_models_in_profile(tmp_path):
    p = tmp_path / "profile.yaml"
    p.write_text(PROFILE)
    assert R.models_in_profile(p) == ["smollm2-135m-instruct", "qwen2.5-coder-1.5b-instruct"]
    assert R.models_in_profile({"a": [{"server": "llamacpp", "model_name": SMOL}]}) == [SMOL]
    assert R.models_in_profile({"a": {"server": "llamacpp", "model_name": "unknown"}}) == []
    assert R.models_in_profile({"a": "openai/gpt-4o"}) == []


def test_cli_profile_without_local_models(tmp_path, monkeypatch, capsys):
    p = tmp_path / "p.yaml"
    p.write_text("backbones: {assistant: openai/gpt-4o-mini}\n")
    monkeypatch.setattr(I, "ensure_llama_cpp", lambda *a, **k: pytest.fail("must not install llama-cpp"))
    assert CLI.main(["install", "--profile", str(p)]) == 0
    assert "nothing to install" in capsys.readouterr().out


def test_cli_profile_installs_only_its_models(tmp_path, monkeypatch):
    p = tmp_path / "p.yaml"
    p.write_text("judge: llamacpp/qwen2.5-coder-1.5b-instruct\n")
    calls = []
    monkeypatch.setattr(I, "install", lambda names=None, **k: calls.append(names) or {})
    assert CLI.main(["install", "--profile", str(p)]) == 0
    assert calls == [["qwen2.5-coder-1.5b-instruct"]]
    assert CLI.main(["install", "--models", f"{SMOL}, llamacpp/{SMOL}"]) == 0
    assert calls[-1] == [SMOL]


def test_cli_unknown_model_and_status(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SHOPBENCH_MODEL_DIR", str(tmp_path))
    monkeypatch.setattr(I, "ensure_llama_cpp", lambda *a, **k: pytest.fail("must not install llama-cpp"))
    assert CLI.main(["install", "--models", "gpt-5"]) == 1
    assert "known models" in capsys.readouterr().err
    assert CLI.main(["path", SMOL]) == 1
    assert "make local-llm" in capsys.readouterr().err
    assert CLI.main(["status"]) == 0
    out = capsys.readouterr().out
    assert SMOL in out and "not installed" in out


def test_cli_runs_as_module(tmp_path):
    import subprocess

    env = dict(os.environ, SHOPBENCH_MODEL_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "shopbench.llm.llamacpp", "path", SMOL],
                       capture_output=True, text=True, env=env)  # fmt: skip
    assert r.returncode == 1 and "make local-llm" in r.stderr


# ── parameter mapping (no model needed) ──────────────────────────────────────


def test_optional_params_mapping():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    kw = RT._LlamaCppCore._kwargs({
        "temperature": 0.0, "top_p": 0.9, "seed": 7, "max_completion_tokens": 12, "stop": "END",
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema, "strict": True}},
        "n": 1, "user": "u",
    })  # fmt: skip
    assert kw == {
        "temperature": 0.0, "top_p": 0.9, "seed": 7, "max_tokens": 12, "stop": ["END"],
        "response_format": {"type": "json_object", "schema": schema},
    }  # fmt: skip
    assert RT._response_format({"type": "json_object"}) == {"type": "json_object"}
    assert RT._response_format({"type": "text"}) is None
    assert RT._messages(
        [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    ) == [{"role": "user", "content": "ab"}]


def test_module_imports_without_llama_cpp():
    import subprocess

    code = (
        "import sys; sys.modules['llama_cpp'] = None\n"
        "from shopbench.llm.llamacpp import runtime\n"
        "assert not runtime.llama_cpp_available()\n"
        "assert issubclass(runtime.LlamaCppHandler, __import__('litellm').CustomLLM)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# ── real round trips (make local-llm) ────────────────────────────────────────


def _skip_reason() -> str | None:
    if not RT.llama_cpp_available():
        return f"llama-cpp-python is not installed ({R.INSTALL_COMMAND})"
    if not R.is_installed(SMOL):
        return f"{SMOL} is not installed in {R.model_dir()} ({R.INSTALL_COMMAND})"
    return None


@pytest.fixture(scope="module")
def litellm_with_handler():
    import litellm
    from litellm.utils import custom_llm_setup

    handler = RT.LlamaCppHandler()
    saved = list(litellm.custom_provider_map or [])
    litellm.custom_provider_map = [p for p in saved if p["provider"] != "llamacpp"] + [
        {"provider": "llamacpp", "custom_handler": handler}
    ]
    custom_llm_setup()
    yield litellm
    litellm.custom_provider_map = saved
    handler.close()


@pytest.mark.llamacpp
@pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")
def test_litellm_round_trip(litellm_with_handler):
    litellm = litellm_with_handler
    r = litellm.completion(
        model=f"llamacpp/{SMOL}", messages=[{"role": "user", "content": "Say hello."}],
        max_tokens=12, temperature=0,
    )  # fmt: skip
    assert isinstance(r, litellm.ModelResponse)
    assert r.choices[0].message.content.strip()
    assert r.choices[0].finish_reason in ("stop", "length")
    assert r.usage.prompt_tokens > 0 and 0 < r.usage.completion_tokens <= 12
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    assert r.model.endswith(SMOL)
    # same seed and temperature 0: the same reply; async path goes through to_thread
    r2 = asyncio.run(litellm.acompletion(
        model=f"llamacpp/{SMOL}", messages=[{"role": "user", "content": "Say hello."}],
        max_tokens=12, temperature=0,
    ))  # fmt: skip
    assert r2.choices[0].message.content == r.choices[0].message.content


@pytest.mark.llamacpp
@pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")
def test_litellm_json_schema(litellm_with_handler):
    litellm = litellm_with_handler
    schema = {
        "type": "object",
        "properties": {"product": {"type": "string", "maxLength": 20}, "price": {"type": "integer"}},
        "required": ["product", "price"],
    }
    r = litellm.completion(
        model=f"llamacpp/{SMOL}",
        messages=[{"role": "user", "content": "Name one product and its price in dollars, as JSON."}],
        max_tokens=48, temperature=0,
        response_format={"type": "json_schema", "json_schema": {"name": "offer", "schema": schema}},
    )  # fmt: skip
    data = json.loads(r.choices[0].message.content)
    assert set(data) == {"product", "price"} and isinstance(data["price"], int)


@pytest.mark.llamacpp
@pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")
def test_litellm_concurrent_calls_are_serialized(litellm_with_handler, monkeypatch):
    litellm = litellm_with_handler
    handler = next(p["custom_handler"] for p in litellm.custom_provider_map if p["provider"] == "llamacpp")
    llm, _ = handler._get(SMOL)
    real = llm.create_chat_completion
    active, peak = [0], [0]

    def spy(*a, **k):
        active[0] += 1
        peak[0] = max(peak[0], active[0])
        try:
            time.sleep(0.05)
            return real(*a, **k)
        finally:
            active[0] -= 1

    monkeypatch.setattr(llm, "create_chat_completion", spy)

    async def many():
        return await asyncio.gather(*[
            litellm.acompletion(model=f"llamacpp/{SMOL}", messages=[{"role": "user", "content": f"Count to {i}."}],
                                max_tokens=6, temperature=0)
            for i in (2, 3, 4)
        ])  # fmt: skip

    rs = asyncio.run(many())
    assert all(r.choices[0].message.content for r in rs)
    assert peak[0] == 1


@pytest.mark.llamacpp
@pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")
def test_serve_round_trip():
    import litellm

    with S.serve(SMOL, alias="smol-test") as srv:
        assert srv.api_base.startswith("http://127.0.0.1:") and srv.api_base.endswith("/v1")
        assert srv.model == "openai/smol-test" and srv.alias == "smol-test"
        r = litellm.completion(
            model=srv.model, api_base=srv.api_base, api_key="none",
            messages=[{"role": "user", "content": "Say hi."}], max_tokens=8, temperature=0,
        )  # fmt: skip
        assert r.choices[0].message.content.strip()
        assert r.usage.completion_tokens > 0
        proc = srv.process
    assert proc.poll() is not None


@pytest.mark.llamacpp
@pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")
def test_serve_reports_a_dying_server(tmp_path, monkeypatch):
    # a model file that passes our sidecar check but that llama.cpp cannot load
    spec = dataclasses.replace(R.MODELS[SMOL], name="broken", filename="broken.gguf", size=200)
    monkeypatch.setitem(R.MODELS, "broken", spec)
    monkeypatch.setenv("SHOPBENCH_MODEL_DIR", str(tmp_path))
    (tmp_path / "broken.gguf").write_bytes(b"GGUF" + b"\0" * 196)
    (tmp_path / "broken.gguf.verified").write_text(spec.sha256 + "\n")
    with pytest.raises(RuntimeError, match="exited with code"):
        with S.serve("broken", timeout=60):
            pass


def test_ensure_llama_cpp_builds_then_installs_from_wheel_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SHOPBENCH_WHEEL_DIR", str(tmp_path / "wheels"))
    state = {"installed": False}
    calls = []

    def fake_run(cmd, what, env=None):
        calls.append((cmd, env))
        if "wheel" in cmd:
            (
                tmp_path / "wheels" / f"llama_cpp_python-{I.LLAMA_CPP_VERSION}-py3-none-linux_x86_64.whl"
            ).touch()
        else:
            state["installed"] = True

    monkeypatch.setattr(I, "_run", fake_run)
    monkeypatch.setattr(I, "python_has_llama_cpp", lambda python: state["installed"])
    I.ensure_llama_cpp("/some/python")
    (build, build_env), (inst, _) = calls
    assert build[:4] == ["/some/python", "-m", "pip", "wheel"] and "-w" in build
    assert f"llama-cpp-python=={I.LLAMA_CPP_VERSION}" in build
    assert build_env["CMAKE_ARGS"] == I.PORTABLE_CMAKE_ARGS and "-DGGML_NATIVE=OFF" in I.PORTABLE_CMAKE_ARGS
    assert inst[:4] == ["/some/python", "-m", "pip", "install"]
    assert inst[inst.index("--find-links") + 1] == str(tmp_path / "wheels")
    assert f"llama-cpp-python[server]=={I.LLAMA_CPP_VERSION}" in inst
    assert "~5 min" in capsys.readouterr().out

    # cached wheel: no build; already importable: nothing at all
    calls.clear()
    state["installed"] = False
    I.ensure_llama_cpp("/some/python")
    assert [c[0][3] for c in calls] == ["install"]
    calls.clear()
    I.ensure_llama_cpp("/some/python")
    assert calls == []


def test_litellm_unknown_model_is_a_bad_request():
    import litellm

    handler = RT.LlamaCppHandler()
    saved = list(litellm.custom_provider_map or [])
    litellm.custom_provider_map = [p for p in saved if p["provider"] != "llamacpp"] + [
        {"provider": "llamacpp", "custom_handler": handler}
    ]
    try:
        with pytest.raises(litellm.BadRequestError, match="known models"):
            litellm.completion(
                model="llamacpp/gpt-5", messages=[{"role": "user", "content": "hi"}], num_retries=0
            )
    finally:
        litellm.custom_provider_map = saved


@pytest.mark.llamacpp
@pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")
def test_litellm_context_window_exceeded():
    import litellm

    handler = RT.LlamaCppHandler(n_ctx=128)
    saved = list(litellm.custom_provider_map or [])
    litellm.custom_provider_map = [p for p in saved if p["provider"] != "llamacpp"] + [
        {"provider": "llamacpp", "custom_handler": handler}
    ]
    try:
        with pytest.raises(litellm.ContextWindowExceededError):
            litellm.completion(
                model=f"llamacpp/{SMOL}", messages=[{"role": "user", "content": "word " * 300}], max_tokens=4
            )
    finally:
        litellm.custom_provider_map = saved
        handler.close()


def test_grammar_schema_caps_long_strings_only_for_the_grammar():
    from shopbench.llm.llamacpp.runtime import GRAMMAR_MAX_LENGTH, _response_format

    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 1500},
              "b": {"type": "array", "items": {"type": "string", "maxLength": 40}}}}  # fmt: skip
    rf = _response_format({"type": "json_schema", "json_schema": {"name": "x", "schema": schema}})
    assert rf["schema"]["properties"]["a"]["maxLength"] == GRAMMAR_MAX_LENGTH
    assert rf["schema"]["properties"]["b"]["items"]["maxLength"] == 40
    assert schema["properties"]["a"]["maxLength"] == 1500  # the caller's contract is untouched
