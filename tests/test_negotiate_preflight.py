"""Issue 25 items 1-2 against the fake OpenAI server: the gateway negotiates the structured-output form
a server accepts (once per server and model, kept on disk), a malformed request is not retried, and the
preflight stops a run with one message when a server is unreachable, refuses the key or is too small."""

from __future__ import annotations

import json
import re
import socket
import time

import pytest

from shopbench.errors import UserError
from shopbench.llm import Gateway, parse_backbones
from shopbench.llm.gateway import is_retryable
from shopbench.llm.negotiate import CapsStore, ServerCaps
from shopbench.llm.preflight import PreflightError, Subject, check_subjects
from shopbench.llm.transport import InternalServerError, is_malformed
from shopbench.testing.fake_openai import FakeOpenAIServer

CONTRACT = {
    "type": "object",
    "properties": {"verdict": {"enum": ["GOOD", "BAD"]}, "score": {"type": "integer"}},
    "required": ["verdict", "score"],
}
ANSWER = json.dumps({"verdict": "GOOD", "score": 4})
PYDANTIC_500 = (
    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
    "  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema']"
)


def _words(body: dict) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))


def llama_like(window: int = 2048, refuse=("json_schema",)):
    """A script that answers like llama_cpp.server: json_schema refused with HTTP 500 (pydantic's
    words), a prompt over ``window`` words refused with HTTP 400 naming the window, else a valid answer."""

    def script(body: dict):
        rf = body.get("response_format") or {}
        kind = rf.get("type", "text") if rf else "text"
        if kind == "json_object" and "schema" not in rf:
            kind = "json_object"
        elif kind == "json_object":
            kind = "json_object_schema"
        if kind in refuse:
            return {
                "status": 500,
                "response": {"error": {"message": PYDANTIC_500, "type": "internal_server_error"}},
            }
        n = _words(body)
        if n > window:
            msg = f"Requested tokens ({n}) exceed context window of {window}"
            return {"status": 400, "response": {"error": {"message": msg, "type": "invalid_request_error"}}}
        text = body["messages"][-1]["content"]
        if "Reply with the JSON object" in text:
            return {"content": '{"ok": true}'}
        return {"content": ANSWER}

    return script


def _forms(srv: FakeOpenAIServer) -> list[str]:
    out = []
    for b in srv.bodies:
        rf = b.get("response_format")
        out.append("text" if not rf else rf["type"] + ("+schema" if "schema" in rf else ""))
    return out


def _gateway(tmp_path, srv, log="l", **kw) -> Gateway:
    (b,) = parse_backbones([{"name": "smol", "model": "openai/smol", "api_base": srv.api_base}])
    return Gateway(cache_dir=tmp_path / "cache", log_dir=tmp_path / log, backbones=[b], progress=False,
                   backoff_s=0.001, **kw)  # fmt: skip


def _calls(gw, n=3, tag="q"):
    return [gw.call("smol", f"{tag}{i}", [{"role": "user", "content": f"Judge item {tag}{i}."}],
                    params={"max_tokens": 20}, schema=CONTRACT) for i in range(n)]  # fmt: skip


# ---- negotiation -----------------------------------------------------------------------------------------
def test_gateway_negotiates_a_form_the_server_accepts_once_and_keeps_it(tmp_path, capsys):
    with FakeOpenAIServer(script=llama_like()) as srv:
        gw = _gateway(tmp_path, srv)
        rows = gw.run(_calls(gw), "judge")
        assert [r["status"] for r in rows] == ["ok"] * 3 and all(r["attempts"] == 1 for r in rows)
        forms = _forms(srv)
        # one refused json_schema probe, one accepted json_object+schema probe, then the three calls
        assert forms == ["json_schema", "json_object+schema"] + ["json_object+schema"] * 3
        out = capsys.readouterr().out
        assert "json_object with the schema" in out and "refused: json_schema" in out
        saved = CapsStore(tmp_path / "cache").get(srv.api_base, "smol")
        assert saved is not None and saved.form == "json_object_schema" and "json_schema" in saved.refused
        assert (tmp_path / "l" / "servers.json").is_file()  # named in the run's log folder

        srv.reset()  # a new gateway (a later notebook) reads servers.json: no second negotiation
        gw2 = _gateway(tmp_path, srv, log="l2")
        rows = gw2.run(_calls(gw2, tag="r"), "judge2")
        assert [r["status"] for r in rows] == ["ok"] * 3
        assert _forms(srv) == ["json_object+schema"] * 3


def test_schema_goes_in_the_prompt_when_no_response_format_is_taken(tmp_path):
    refuse = ("json_schema", "json_object_schema", "json_object")
    with FakeOpenAIServer(script=llama_like(refuse=refuse)) as srv:
        gw = _gateway(tmp_path, srv)
        rows = gw.run(_calls(gw, 2), "judge")
        assert [r["status"] for r in rows] == ["ok", "ok"] and rows[0]["parsed"]["verdict"] == "GOOD"
        last = srv.bodies[-1]
        assert "response_format" not in last
        assert '"verdict"' in last["messages"][-1]["content"]  # the schema, appended to the prompt
        assert CapsStore(tmp_path / "cache").get(srv.api_base, "smol").form == "text"
        # the cache key is the logical request: the same call answered by the cache
        again = gw.run(_calls(gw, 2), "judge-again")
        assert all(r["cache_hit"] for r in again)


def test_a_server_restarted_with_other_settings_is_asked_again(tmp_path):
    with FakeOpenAIServer(script=llama_like()) as srv:
        CapsStore(tmp_path / "cache").put(ServerCaps(srv.api_base, "smol", form="json_schema"))  # stale
        gw = _gateway(tmp_path, srv)
        (row,) = gw.run(_calls(gw, 1), "judge")
        assert row["status"] == "ok" and row["error"] is None
        assert CapsStore(tmp_path / "cache").get(srv.api_base, "smol").form == "json_object_schema"
        assert _forms(srv).count("json_schema") == 2  # the stale call and the new negotiation's probe


# ---- malformed requests are not retried ----------------------------------------------------------------------
def test_malformed_requests_are_not_retried_transient_errors_are(tmp_path):
    def script(body):
        text = body["messages"][-1]["content"]
        if "field" in text:
            return {"status": 500, "response": {"error": {"message": PYDANTIC_500}}}
        return None

    with FakeOpenAIServer(script=script) as srv:
        gw = _gateway(tmp_path, srv, max_retries=3)
        msgs = {"bad400": "x [[fake:status=400]]", "bad422": "x [[fake:status=422]]", "field500": "field",
                "plain500": "y [[fake:status=500]]", "rate429": "z [[fake:status=429,times=1]]"}  # fmt: skip
        calls = [gw.call("smol", k, [{"role": "user", "content": v}], params={"max_tokens": 5})
                 for k, v in msgs.items()]  # fmt: skip
        rows = {r["item_id"]: r for r in gw.run(calls, "faults")}
        sent = {k: sum(1 for b in srv.bodies if b["messages"][-1]["content"] == v) for k, v in msgs.items()}
    assert rows["bad400"]["attempts"] == sent["bad400"] == 1 and rows["bad400"]["status"] == "error"
    assert rows["bad422"]["attempts"] == sent["bad422"] == 1
    assert (
        rows["field500"]["attempts"] == sent["field500"] == 1
        and "Input should be" in rows["field500"]["error"]
    )
    assert rows["plain500"]["attempts"] == sent["plain500"] == 4  # 1 + max_retries: transient
    assert rows["rate429"]["status"] == "ok" and sent["rate429"] == 2


def test_is_malformed_classifies_litellm_errors_too():
    from shopbench.llm.providers import get_litellm

    litellm = get_litellm()
    e = litellm.InternalServerError(message=PYDANTIC_500, llm_provider="openai", model="smol")
    assert is_malformed(e) and not is_retryable(e)
    assert is_retryable(litellm.InternalServerError(message="boom", llm_provider="openai", model="smol"))
    assert not is_malformed(InternalServerError("out of memory", 500))
    assert is_malformed(InternalServerError("x answered HTTP 500: unexpected keyword argument 'tools'", 500))


# ---- preflight ---------------------------------------------------------------------------------------------
def _subject(base: str, prompt: int = 300, model: str = "openai/smol") -> Subject:
    (b,) = parse_backbones([{"name": "smol", "model": model, "api_base": base}])
    return Subject(b, ["20_pace_judge_sweep"], prompt_tokens=prompt, output_tokens=120)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_preflight_unreachable_server_stops_within_seconds(tmp_path):
    t0 = time.perf_counter()
    with pytest.raises(PreflightError) as e:
        check_subjects([_subject(f"http://127.0.0.1:{_closed_port()}/v1")], cache_dir=tmp_path, log=None)
    msg = str(e.value)
    assert time.perf_counter() - t0 < 10 and isinstance(e.value, UserError)
    assert "smol (openai/smol)" in msg and "cannot be reached" in msg and "Fix: start the server" in msg


def test_preflight_refused_key_names_the_variable(tmp_path):
    def script(body):
        return {"status": 401, "response": {"error": {"message": "Invalid API key"}}}

    with FakeOpenAIServer(script=script) as srv, pytest.raises(PreflightError) as e:
        check_subjects([_subject(srv.api_base)], cache_dir=tmp_path, log=None)
    assert "refused the key (HTTP 401)" in str(e.value) and "OPENAI_API_KEY" in str(e.value)


def test_preflight_context_from_models_metadata(tmp_path):
    with FakeOpenAIServer(
        script=llama_like(window=10**6), model_meta={"max_model_len": 2048}, models=("smol",)
    ) as srv:
        with pytest.raises(PreflightError) as e:
            check_subjects([_subject(srv.api_base, prompt=4500)], cache_dir=tmp_path, log=None)
        assert not any(_words(b) > 500 for b in srv.bodies)  # the metadata said it: no probe
    msg = str(e.value)
    assert "context window of 2,048 tokens (/models max_model_len)" in msg
    need = int(re.search(r"needs about ([\d,]+) tokens", msg).group(1).replace(",", ""))
    fix = int(re.search(r"--n_ctx (\d+) or more", msg).group(1))
    assert need > 4500 and fix >= need and fix - need < 1000


def test_preflight_probes_the_window_and_passes_when_it_is_large_enough(tmp_path):
    with FakeOpenAIServer(script=llama_like(window=2048)) as srv:
        t0 = time.perf_counter()
        with pytest.raises(PreflightError) as e:
            check_subjects([_subject(srv.api_base, prompt=4000)], cache_dir=tmp_path, log=None)
        assert time.perf_counter() - t0 < 30
        assert "context window of 2,048 tokens (probe: the server's refusal names it)" in str(e.value)
        assert "--n_ctx" in str(e.value)
    lines = []
    with FakeOpenAIServer(script=llama_like(window=4000)) as srv:
        (f,) = check_subjects([_subject(srv.api_base, prompt=4000)], cache_dir=tmp_path, log=lines.append)
        assert f.ok and f.caps is not None and f.caps.form == "json_object_schema"
        # the 2x probe was refused, naming the window and its own length in the server's tokens (words)
        assert f.caps.context == 4000 and 0.5 < f.caps.token_ratio < 1.0
    with FakeOpenAIServer(script=llama_like(window=20000)) as srv:  # larger than the probe: accepted
        (f,) = check_subjects([_subject(srv.api_base, prompt=4000)], cache_dir=tmp_path, log=None)
        assert f.ok and f.caps.context is None and f.caps.context_at_least > 4000
        assert CapsStore(tmp_path).get(srv.api_base, "smol").form == "json_object_schema"
    assert lines and "ok, structured output as response_format json_object" in lines[0]


def test_pipeline_run_stops_before_any_notebook(tmp_path, monkeypatch, capsys):
    from shopbench import pipeline

    monkeypatch.setenv("SHOPBENCH_OUTPUTS", str(tmp_path / "out"))
    monkeypatch.setenv("SHOPBENCH_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "mine.yaml"
    p.write_text(
        "paceshop: {n_products: 400, n_candidate_queries: 240, n_queries: 40, n_personas: 60, n_holdout: 17,\n"
        "           test_goods: 24, dev_goods: 24, swap_slice: 24}\n"
        "backbones:\n  - local/schema-sampler\n"
        f"  - {{name: smol, model: openai/smol, api_base: 'http://127.0.0.1:{_closed_port()}/v1'}}\n"
        "judging: {llm_backbones: [smol], llm_protocols: [pacejudge], llm_subset: 4}\n",
        encoding="utf-8",
    )
    ran = []
    monkeypatch.setattr(pipeline, "run_notebook", lambda *a, **k: ran.append(a))
    with pytest.raises(SystemExit) as e:
        pipeline.main(["run", "--profile", str(p), "--only", "20_pace_judge_sweep"])
    assert e.value.code == 2 and not ran
    err = capsys.readouterr().err
    assert "smol (openai/smol)" in err and "cannot be reached" in err and "Traceback" not in err
