"""The gateway against the real llama.cpp backends with SmolLM2: in-process (``llamacpp/...``) and
``python -m llama_cpp.server`` on 127.0.0.1 called as ``openai/<alias>`` (the vLLM/Ollama path)."""

import pytest

from shopbench.llm import Gateway, parse_backbones
from shopbench.llm.llamacpp.registry import is_installed
from shopbench.llm.llamacpp.runtime import llama_cpp_available

pytestmark = [
    pytest.mark.llamacpp,
    pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python not installed (make local-llm)"),
    pytest.mark.skipif(
        not is_installed("smollm2-135m-instruct"), reason="SmolLM2 not installed (make local-llm)"
    ),
]

CONTRACT = {
    "type": "object",
    "properties": {"verdict": {"enum": ["GOOD", "BAD"]}, "confidence": {"type": "number"}},
    "required": ["verdict", "confidence"],
}
MSG = [{"role": "user", "content": "Is a leather wallet vegan? Answer GOOD if yes, BAD if no, as JSON."}]


@pytest.mark.parametrize("spec", [
    "llamacpp/smollm2-135m-instruct",
    {"name": "smol-server", "model": "openai/smol", "server": "llamacpp", "model_name": "smollm2-135m-instruct"},
])  # fmt: skip
def test_structured_call_through_gateway(tmp_path, spec):
    (b,) = parse_backbones([spec])
    gw = Gateway(cache_dir=tmp_path / "c", log_dir=tmp_path / "l", backbones=[b], progress=False)
    calls = [
        gw.call(b.name, "q1", MSG, params={"temperature": 0, "max_tokens": 40, "seed": 1}, schema=CONTRACT)
    ]
    (row,) = gw.run(calls, "llama")
    assert row["error"] is None and row["attempts"] == 1 and row["completion_tokens"] > 0
    # the grammar makes the output JSON; the contract check is ours (ranges are never enforced by it)
    assert row["status"] in ("ok", "parse_error")
    if row["status"] == "ok":
        assert row["parsed"]["verdict"] in ("GOOD", "BAD")
    (again,) = gw.run(calls, "llama-again")
    assert again["cache_hit"] and again["raw_output"] == row["raw_output"]
