"""Issue 25, first "Done when" bullet (the negotiation and preflight part), against a REAL
``python -m llama_cpp.server`` serving the packaged SmolLM2, started as a user would start it: shipped
defaults (a 2,048-token context; ``response_format`` ``json_schema`` refused with HTTP 500), known to
the profile only by its ``api_base`` (no ``server: llamacpp``, no ``model_name``).

1. the preflight stops a run whose planned prompts are ~4.5k tokens (notebook 20's judge prompts) in
   under a minute, exit 2, one message naming the ``--n_ctx`` fix, before any notebook runs;
2. a request the server refuses as malformed (a ``json_schema`` response_format: HTTP 500 naming the
   field; a prompt over the window: HTTP 400) is sent once, not retried;
3. after a restart on the same port with ``--n_ctx 8192`` the preflight passes, the gateway sends the
   form the server accepts (llama.cpp's json_object + schema, not json_schema) and judge-style calls
   with a schema, one of them a real notebook-20 prompt, log no call error.

SmolLM2 comes from ``make test``, which installs the smoke profile's models (params/smoke.yaml names
``llamacpp/smollm2-135m-instruct``); run alone, the fixture installs it the same way
(``python -m shopbench.llm install --models smollm2-135m-instruct``) and skips, saying why, when that fails.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from shopbench.testing.llama_server import chat_posts, free_port, llama_server, smollm2_path

pytestmark = [pytest.mark.llamacpp]
MODEL = "smollm2-135m-instruct"
CONTRACT = {
    "type": "object",
    "properties": {"verdict": {"enum": ["GOOD", "BAD"]}, "confidence": {"type": "number"}},
    "required": ["verdict", "confidence"],
}


@pytest.fixture(scope="module")
def gguf() -> Path:
    path, why = smollm2_path()
    if path is None:
        pytest.skip(why)
    return path


_free_port, _posts = free_port, chat_posts


def test_real_llama_cpp_server_preflight_negotiation_and_no_retry(gguf, tmp_path, monkeypatch, capsys):
    from shopbench import pipeline
    from shopbench.config import load_profile
    from shopbench.judges.pace.protocols import get_protocol, messages
    from shopbench.llm import Gateway, parse_backbones
    from shopbench.preflight import preflight
    from shopbench.preview.notebooks import sample_build

    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path / "out"))
    monkeypatch.setenv("SHOPBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    port = _free_port()
    base = f"http://127.0.0.1:{port}/v1"
    prof_path = tmp_path / "mine.yaml"
    prof_path.write_text(  # README's "server fleets" setup: the server known only by its api_base
        "backbones:\n  - local/schema-sampler\n"
        f"  - {{name: smol, model: openai/smol, api_base: '{base}'}}\n"
        "judging: {llm_backbones: [smol], llm_protocols: [pacejudge], llm_subset: 3, max_tokens: 48}\n",
        encoding="utf-8",
    )
    ran: list = []
    monkeypatch.setattr(pipeline, "run_notebook", lambda *a, **k: ran.append(a))

    # ---- 1-2: shipped defaults (n_ctx 2048) ------------------------------------------------------------
    log1 = tmp_path / "server-default.log"
    with llama_server(gguf, port, log1):
        t0 = time.perf_counter()
        with pytest.raises(SystemExit) as e:
            pipeline.main(["run", "--profile", str(prof_path), "--only", "20_pace_judge_sweep"])
        took = time.perf_counter() - t0
        err = capsys.readouterr().err
        assert e.value.code == 2 and not ran and took < 60, (took, err)
        assert "smol (openai/smol)" in err and base in err and "Traceback" not in err
        assert "context window of 2,048 tokens" in err and "restart the server with --n_ctx" in err
        need = int(err.split("needs about ")[1].split(" tokens")[0].replace(",", ""))
        assert need > 4000  # the planned judge prompts (in SmolLM2's tokens) are over 4k
        posts_preflight = len(_posts(log1))
        assert posts_preflight <= 4  # json_schema refused, json_object+schema accepted, one or two probes

        # 2: malformed requests are sent once (the gateway's retries would have made 1 + 3)
        (b,) = parse_backbones([{"name": "smol", "model": "openai/smol", "api_base": base}])
        gw = Gateway(cache_dir=tmp_path / "cache-c", log_dir=tmp_path / "calls-c", backbones=[b],
                     progress=False, max_retries=3, backoff_s=0.01)  # fmt: skip
        raw_schema = {"type": "json_schema", "json_schema": {"name": "x", "schema": CONTRACT}}
        calls = [
            gw.call("smol", "json-schema", [{"role": "user", "content": "Is water wet?"}],
                    params={"max_tokens": 8, "response_format": raw_schema}),
            gw.call("smol", "too-long", [{"role": "user", "content": "the " * 3000}], params={"max_tokens": 8}),
        ]  # fmt: skip
        rows = {r["item_id"]: r for r in gw.run(calls, "malformed")}
        assert rows["json-schema"]["status"] == "error" and rows["json-schema"]["attempts"] == 1
        assert "Input should be" in rows["json-schema"]["error"]
        assert rows["too-long"]["status"] == "error" and rows["too-long"]["attempts"] == 1
        assert "maximum context length is 2048" in rows["too-long"]["error"]
        assert _posts(log1)[posts_preflight:] == ["500", "400"]  # one request each, no retry

    # ---- 3: restarted on the same port with --n_ctx 8192 ---------------------------------------------
    log2 = tmp_path / "server-8192.log"
    with llama_server(gguf, port, log2, "--n_ctx", "8192"):
        prof = load_profile(str(prof_path))
        lines: list[str] = []
        found = preflight(prof, ["20_pace_judge_sweep"], log=lines.append)  # asks again: the cache said 2048
        (f,) = [x for x in found if x.backbone == "smol"]
        assert f.ok and f.caps is not None and f.caps.context == 8192, lines
        assert f.caps.form == "json_object_schema" and "json_schema" in f.caps.refused
        n_pre = len(_posts(log2))  # the preflight's: json_schema (500), json_object+schema, the probe
        # the gateway of the notebooks reads the negotiated form from the cache folder's servers.json
        # one call at a time (llama_cpp.server answers one after the other; waiting in its queue would
        # count against the call's timeout), and room for the long prompt on two shared cores
        (b,) = parse_backbones([{"name": "smol", "model": "openai/smol", "api_base": base, "concurrency": 1}])
        gw = Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / "calls", backbones=[b], progress=False,
                     timeout_s=600)  # fmt: skip
        rec = next(r for r in sample_build(prof).records if r.split == "test")
        judge = messages(get_protocol("pacejudge"), rec)  # a real notebook-20 prompt (~4k SmolLM2 tokens)
        asks = [judge] + [[{"role": "user", "content": f"Is a {x} wallet vegan? Answer GOOD or BAD as JSON."}]
                          for x in ("leather", "cork")]  # fmt: skip
        calls = [gw.call("smol", f"j{i}", m, params={"temperature": 0, "max_tokens": 40, "seed": 1},
                         schema=CONTRACT) for i, m in enumerate(asks)]  # fmt: skip
        rows = gw.run(calls, "judge")
        assert [r["status"] for r in rows if r["status"] == "error"] == [], [r["error"] for r in rows]
        assert all(r["attempts"] == 1 and r["completion_tokens"] > 0 for r in rows)
        assert rows[0]["prompt_tokens"] > 3000  # the long prompt (refused at 2,048) fit in the new window
        assert _posts(log2)[n_pre:] == ["200"] * 3  # the gateway sent no json_schema, and no retry
        assert gw.server_caps[f"{base}|smol"].form == "json_object_schema"
        out = capsys.readouterr().out
        assert "json_object with the schema" in out  # the form is named in the run's log
        logged = [json.loads(x) for x in (tmp_path / "calls" / "judge.jsonl").read_text().splitlines()]
        assert logged and not [r for r in logged if r["status"] == "error"]
