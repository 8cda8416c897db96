"""Issue 12 §5: keys are recognised by shape for every provider the README names, and removed from
anything written even when echoed lowercased or in part. Every key here is built at run time."""

import random
import string

import pytest

from shopbench.config import ParamError, load_profile
from shopbench.llm import Call, register_local
from shopbench.secrets import key_provider, looks_like_key, redact, secret_in, secret_values

_RNG = random.Random(12)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    s = "".join(_RNG.choice(alphabet) for _ in range(n - 1))
    return s + _RNG.choice(string.digits)  # real keys are random: digits occur


FAKE_KEYS = {
    "OpenAI-style": "s" + "k-" + rand(48),
    "Anthropic": "s" + "k-ant-" + "api03-" + rand(80),
    "Google": "AI" + "za" + rand(35),
    "Fireworks": "f" + "w_" + rand(24),
    "Together": "t" + "gp_v1_" + rand(43),
    "Hugging Face": "h" + "f_" + rand(34),
    "xAI": "x" + "ai-" + rand(80),
    "Groq": "g" + "sk_" + rand(52),
    "AWS": "AK" + "IA" + rand(16, string.ascii_uppercase + string.digits),
}
PROJECT_KEY = "s" + "k-proj-" + rand(60)


@pytest.mark.parametrize("provider", list(FAKE_KEYS))
def test_every_provider_key_shape_is_recognised(provider):
    key = FAKE_KEYS[provider]
    text = f"error: invalid key {key}, see docs"
    assert looks_like_key(text)
    assert key_provider(text) == provider
    assert key not in redact(text, secrets=[]) and "[REDACTED]" in redact(text, secrets=[])


def test_project_key_and_uppercase_prefix():
    assert key_provider(PROJECT_KEY) == "OpenAI-style"
    assert looks_like_key(PROJECT_KEY.upper())  # an echo may change the case


@pytest.mark.parametrize(
    "text",
    [
        "3f2a" + "0" * 60,  # a cache key (sha256 hex)
        "123e4567-e89b-12d3-a456-426614174000",
        "task-" + "abcdefghij" * 3 + "1",
        "s" + "k-learn-compatible-estimators-everywhere",  # no digit: a phrase, not a key
        "AIza is a prefix",
        "risk-free rate of 4.5 percent",
    ],
)
def test_ordinary_tokens_are_not_keys(text):
    assert not looks_like_key(text)
    assert redact(text, secrets=[]) == text


def test_redact_is_case_insensitive_and_removes_partial_echoes():
    key = PROJECT_KEY
    cases = {
        "lowercased": f"Incorrect API key provided: {key.lower()}.",
        "uppercased": f"KEY {key.upper()} REJECTED",
        "first 12": f"Incorrect API key provided: {key[:12]}**************",
        "last 10": f"key ending in ...{key[-10:]} was revoked",
        "a middle run": f"fragment {key[20:40]} seen",
        "cut at 500 chars": ("x" * 480 + key)[:500],
    }
    for what, text in cases.items():
        out = redact(text, secrets=[key])
        low = out.lower()
        assert "[REDACTED]" in out, what
        for n in (8, 12):
            assert key[:n].lower() not in low and key[-n:].lower() not in low, (what, out)
    untouched = f"a short fragment {key[20:26]} is not an echo"
    assert redact(untouched, secrets=[key]) == untouched


def test_secret_values_skip_settings_that_are_not_secrets():
    env = {"OPENAI_API_KEY": PROJECT_KEY, "PIP_KEYRING_PROVIDER": "disabled", "SSL_CERT_FILE": "/etc/ssl/c.pem",
           "TOKENIZERS_PARALLELISM": "false", "MY_TOKEN_URL": "https://example.org/token", "HOME": "x" * 40,
           "DB_PASSWORD": "correcthorsebatterystaple"}  # fmt: skip
    assert secret_values(env) == [PROJECT_KEY, "correcthorsebatterystaple"]


def test_secret_in_names_what_it_found(monkeypatch):
    assert secret_in("key: " + FAKE_KEYS["Google"]) == "a Google key"
    mistral = rand(32)  # no prefix: only the environment says it is a key
    assert secret_in(mistral) is None
    monkeypatch.setenv("MISTRAL_API_KEY", mistral)
    assert secret_in(f"note {mistral}") == "the value of a secret environment variable"


def test_profile_with_a_google_key_is_refused(tmp_path):
    p = tmp_path / "g.yaml"
    p.write_text(
        "seed: 1\nbackbones:\n  - {model: gemini/gemini-2.0-flash, note: " + FAKE_KEYS["Google"] + "}\n"
    )
    with pytest.raises(ParamError, match=r"backbones\[0\]\.note.*Google"):
        load_profile(p)


def test_echoed_keys_never_reach_the_call_log_or_cache(server, gateway, monkeypatch, tmp_path):
    """A provider error that echoes the key lowercased, or only its first 12 characters, and a model
    answer that repeats it: none of it is written, as a whole or in part."""
    key = PROJECT_KEY
    monkeypatch.setenv("OPENAI_API_KEY", key)

    def leaky(messages, params):
        how = messages[-1]["content"]
        if how == "lower":
            raise PermissionError(f"401 Incorrect API key provided: {key.lower()}")
        if how == "prefix":
            raise PermissionError(f"401 Incorrect API key provided: {key[:12]}****************")
        return f"my key is {key.upper()}"

    register_local("leaky", leaky, "a backend whose errors echo the key")
    calls = [Call(h, "local/leaky", [{"role": "user", "content": h}]) for h in ("lower", "prefix", "answer")]
    calls.append(Call("http", "openai/fake", [{"role": "user", "content": f"[[fake:content=echo {key.lower()}]]"}],
                      api_base=server.api_base))  # fmt: skip
    gw = gateway(max_retries=0)
    rows = gw.run(calls, "leak")
    rows += gateway(max_retries=0).run(calls, "leak-again")
    assert [r["status"] for r in rows[:4]] == ["error", "error", "ok", "ok"]
    assert all("REDACTED" in (r["error"] or r["raw_output"]) for r in rows)  # litellm masks some itself
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in written) and any(p.suffix == ".sqlite" for p in written)
    for p in written:
        data = p.read_bytes().lower()
        for part in (key, key[:12], key[-12:]):
            assert part.lower().encode() not in data, f"part of the key written to {p}"
