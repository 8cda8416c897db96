"""The per-call shortcuts of the gateway's hot path (issue 14 §6) give exactly what the long way gives:
the cache key assembled around the once-serialised messages equals the key of the whole mapping (so
existing caches stay valid), and the template split of a judge prompt equals the regex match."""

from __future__ import annotations

import hashlib

import pytest

from shopbench.llm import Call
from shopbench.llm.cache import cache_key, canonical_json


def _whole_key(**kw) -> str:
    payload = {"model": kw["model"], "api_base": kw["api_base"] or "", "messages": kw["messages"],
               "params": kw["params"], "tools": kw["tools"], "response_format": kw["response_format"],
               "repeat": kw["repeat"]}  # fmt: skip
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


@pytest.mark.parametrize("kw", [
    {"model": "openai/x", "api_base": None, "messages": [{"role": "user", "content": "hi \ud800 é ∑ \"q\"\n"}],
     "params": {"b": 1, "a": [1, 2], "z": {"y": None}}, "tools": [{"type": "function", "function": {"name": "f"}}],
     "response_format": {"type": "json_schema"}, "repeat": 3},
    {"model": "local/checks", "api_base": "http://x/v1", "messages": [], "params": {}, "tools": None,
     "response_format": None, "repeat": 0},
    {"model": "m", "api_base": "", "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}],
     "params": {"x": 1.5, "seed": 0}, "tools": None, "response_format": None, "repeat": 1},
])  # fmt: skip
def test_cache_key_is_the_whole_mapping_key(kw):
    assert cache_key(**kw) == _whole_key(**kw)
    c = Call("i", kw["model"], kw["messages"], params=kw["params"], tools=kw["tools"], repeat=kw["repeat"],
             api_base=kw["api_base"])  # fmt: skip
    assert c.prompt_hash == hashlib.sha256(canonical_json(list(kw["messages"])).encode()).hexdigest()[:16]


def test_template_split_equals_the_regex():
    from shopbench.judges.pace import protocols as P
    from shopbench.paceshop.build import BuildConfig, build

    cfg = BuildConfig(seed=3, n_products=300, n_candidate_queries=120, n_queries=12, n_personas=30, n_holdout=6,
                      test_goods=8, dev_goods=8, swap_slice=8, s0_per_label=4, calibration_good=4,
                      calibration_bad_per_family=1)  # fmt: skip
    for r in build(cfg, progress=False).records[:25]:
        for name in P.PROTOCOLS:
            text = P._user_text(P.messages(name, r))
            m = P._pattern(name).fullmatch(text)
            assert m is not None and P._split(name, text) == m.groupdict(), name
    # extract_bundle (split first, the regex when the split declines) names the protocol
    name = next(iter(P.PROTOCOLS))
    text = P._user_text(P.messages(name, r))
    assert P.extract_bundle([{"role": "user", "content": text}])[0].name == name
