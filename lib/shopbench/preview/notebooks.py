"""Cost and time preview of a profile, before anything is spent (issue 14 §2).

``make preview PROFILE=<name>`` (``python -m shopbench.preview --profile <name>``) and
``python -m shopbench.pipeline run`` (before its first notebook) print, per notebook × backbone:
calls, input and output tokens, dollars and hours, and write ``outputs/<profile>/paper/preview.json``.
With ``--only`` (as ``pipeline run --only``) it covers those notebooks alone; it first runs the checks of
:mod:`shopbench.plancheck` (backbone names, datasets; issue 25 §2).
It needs no key and makes no model call: prices come from litellm's bundled price map, prompts from
the project's own prompt builders.

How each notebook's numbers are made (each line's ``method`` says which):

- **10_paceshop_build** with an LLM generator: one call per assignment (``n_queries`` ×
  ``personas_per_query``, an upper bound: queries without an evidence pool drop out). Input tokens:
  the B.9 prompt rendered by :class:`shopbench.paceshop.generate.LLMGenerator` for assignments of a
  small sample build (same catalog kind and sizes per record); output tokens: the offline generator's
  contract-shaped response to the same assignments.
- **20_pace_judge_sweep**: calls = judged records × protocols × repeats, records = the test split
  at the profile's sizes (``test_goods`` × 5 + the swap slice) capped by each run's ``subset``.
  Input tokens: each protocol's prompt rendered by :func:`shopbench.judges.protocols.messages` on the
  sample build's test records; output tokens: the answer ``local/schema-sampler`` gives under the
  protocol's contract (a contract-shaped answer), capped at ``max_tokens``.
- **50_padme_meta_eval**: calls = (``llm_evaluator_pairs`` + ``llm_recorded_pairs``) × 2
  trajectories × runs per LLM evaluator. Input tokens: the H.5 prompt rendered by
  :func:`shopbench.padme.evaluators.evaluator_messages` on the recorded τ-bench trajectories
  (``padme.recorded``; 3,000 tokens a trajectory when they are absent); output: the contract answer.
- **40_padme_synthesis** and **80_shop_agents**: conversations cannot be rendered before they happen,
  so their calls come from per-trial and per-rollout counts, documented below and marked
  ``method: per-unit model``. Seed 002 App. G: "the assistant averages 417K tokens per trial, while
  the user simulator and judge add 347K"; we split the latter as 60 % simulator, 40 % judge, and
  take 20 agent calls and 10 customer turns per trial. PADMÉ: per cell, 3 steering calls, 2 rollouts
  × (1 + ``retries`` / 2) attempts × 12 agent and 6 user calls of 4,000 input tokens, and K filter
  judge calls per attempt on a 6,000-token pair prompt; with a list of agent models each gets its
  share of the cells (``n // m``, the first ``n % m`` one more: the balanced round-robin of
  :mod:`shopbench.padme.agents`; which model gets an extra cell is seeded there, not here).

Hours: an anytime sweep (``llm_budget_min``, ``llm_evaluator_budget_min`` + ``llm_recorded_budget_min``)
is capped at its budget; its calls and tokens stay the plan's (the budget stops it earlier). API
models at ``1 s + output tokens / 60 tokens/s`` per call, divided by the provider's
concurrency; self-hosted servers (``hosted_vllm/``, ``ollama/`` …, and any backbone with ``api_base``: a
server the user runs) at ``1 s + output / 50`` per call
× concurrency per server; llama.cpp models from ``outputs/bench/local_llm.json`` when present (prompt
and generation tokens/s), else :data:`LOCAL_RATES` (measured 2026-12-01, docs/DESIGN.md); embedded
``local/`` backends at :data:`EMBEDDED_S_PER_CALL` each, one at a time (pure Python under the GIL).

Dollars: litellm's input and output price per token; cached input tokens (provider prompt caching,
:func:`cached_input_tokens`) at the cache-read price. Unpriced models are listed, never counted as
free.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError, exit_on_user_error
from ..pipeline_steps import known_only

EMBEDDED_S_PER_CALL = 0.075
"""Issue 14: 16,320 deterministic judge calls at 0.065–0.084 s mean latency each in notebook 20."""
LOCAL_RATES: dict[str, tuple[float, float]] = {
    "smollm2-135m-instruct": (94.0, 12.0),
    "qwen2.5-coder-1.5b-instruct": (24.7, 3.2),
}
"""llama.cpp prompt and generation tokens/s on the 2 shared cores when ``local_llm.json`` is absent:
SmolLM2 as measured 2026-12-01 (docs/DESIGN.md, "Local LLM speed"); Qwen2.5-1.5B was not timed, so
SmolLM2's rates ÷ 3.8, the ratio of their idle per-call times (~65 s vs ~17 s)."""
LOCAL_FLOOR_RATIO = 1.22
"""Measured call time ÷ (prompt ÷ prompt rate + output ÷ generation rate) for SmolLM2 (DESIGN)."""
API_S_BASE, API_TOKENS_PER_S = 1.0, 60.0
SELF_HOSTED_S_BASE, SELF_HOSTED_TOKENS_PER_S = 1.0, 50.0
SELF_HOSTED = ("hosted_vllm", "ollama", "ollama_chat", "vllm", "openai_like")
SAMPLE_RECORDS = 24
SHOP_ASSISTANT_TOKENS_PER_TRIAL, SHOP_OTHER_TOKENS_PER_TRIAL = 417_000, 347_000
SHOP_AGENT_CALLS_PER_TRIAL, SHOP_USER_CALLS_PER_TRIAL = 20, 10
PADME_AGENT_CALLS, PADME_USER_CALLS, PADME_CALL_INPUT = 12, 6, 4000
PADME_PAIR_PROMPT, PADME_STEER_INPUT = 6000, 1500
TRAJECTORY_TOKENS_DEFAULT = 3000


@dataclass
class Line:
    """One notebook × backbone: what the run would send."""

    notebook: str
    backbone: str
    model: str
    role: str
    calls: int
    input_tokens: int
    output_tokens: int
    kind: str = "api"  # api | self-hosted | llamacpp | embedded
    method: str = ""
    cached_input_tokens: int = 0
    prefix_tokens: int = 0  # the fixed prefix each call shares with the sweep's others (provider caching)
    max_input_tokens: int = 0  # the largest single prompt of the sample (the preflight's need, issue 25)
    usd: float | None = 0.0
    hours: float = 0.0
    available: bool = True
    reason: str = ""
    substitute_for: str | None = None
    batch: bool = False  # priced at the provider's batch rate (gateway.mode: batch)
    #: (sweep key, minutes): an anytime sweep's time budget, shared by the lines with the same key;
    #: their hours are capped at it (calls and tokens stay the plan's: the budget stops it earlier)
    budget: tuple[str, float] | None = None


# conversation turns: a handful of calls per sweep (under gateway.batch_min_calls), so real-time even
# in batch mode (llm/batch.py); every other role is a sweep the batch APIs take
TURN_ROLES = ("agent", "user simulator", "steering")


@dataclass
class Preview:
    profile: str
    lines: list[Line] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def total(self, kinds: Sequence[str] | None = None, only_available: bool = False) -> dict:
        ls = [
            x
            for x in self.lines
            if (kinds is None or x.kind in kinds) and (x.available or not only_available)
        ]
        return {
            "calls": sum(x.calls for x in ls),
            "input_tokens": sum(x.input_tokens for x in ls),
            "output_tokens": sum(x.output_tokens for x in ls),
            "usd": round(sum(x.usd or 0.0 for x in ls), 2),
            "hours": round(sum(x.hours for x in ls), 2),
            "unpriced": sorted({x.model for x in ls if x.usd is None}),
        }

    def as_dict(self) -> dict:
        return {
            "profile": self.profile,
            "lines": [asdict(x) for x in self.lines],
            "totals": {
                "all": self.total(),
                "api": self.total(["api"]),
                "api_available": self.total(["api"], only_available=True),
                "self_hosted": self.total(["self-hosted"]),
                "local": self.total(["llamacpp", "embedded"]),
                "local_available": self.total(["llamacpp", "embedded"], only_available=True),
            },
            "notes": self.notes,
        }


# ---- pricing and timing ---------------------------------------------------------------------------
def _kind(model: str) -> str:
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    if provider == "local":
        return "embedded"
    if provider == "llamacpp":
        return "llamacpp"
    if provider in SELF_HOSTED:
        return "self-hosted"
    return "api"


def _backbone_kind(b, model: str) -> str:
    """A profile backbone's kind: a project-started server is ``llamacpp``; one with ``api_base`` (a
    server the user runs, whatever its provider prefix, e.g. ``openai/smol`` on a llama.cpp server) is
    ``self-hosted``: time, not a bill (issue 25 §2); else by the model's provider (:func:`_kind`)."""
    if b is not None and b.server:
        return "llamacpp"
    if b is not None and (b.api_base or b.api_bases) and _kind(model) != "embedded":
        return "self-hosted"
    return _kind(model)


CACHE_MIN_TOKENS = 1024  # OpenAI caches prefixes of >= 1,024 tokens; Anthropic's minimum for Sonnet/Opus
OPENAI_CACHE_STEP = 128  # OpenAI caches in 128-token increments past the minimum
AUTOMATIC_CACHE_PROVIDERS = ("openai", "azure")  # prefix caching with no marking
MARKED_CACHE_PROVIDERS = ("anthropic",)  # the gateway marks the prefix with cache_control (llm/usage.py)


def cached_input_tokens(line: Line) -> int:
    """Input tokens the provider would serve from its prompt cache (issue 14 §4).

    The gateway marks the fixed prefix of Anthropic prompts with ``cache_control`` (llm/usage.py) and
    OpenAI caches prefixes of >= 1,024 tokens on its own (in 128-token steps). A sweep's first call
    writes the prefix; every later call reads it: ``(calls - 1) × prefix_tokens`` when the prefix
    reaches the providers' 1,024-token minimum, else 0. Other providers: 0 (no caching assumed).
    An estimate: the 5-minute cache lifetime is assumed kept alive by the sweep itself, and Anthropic's
    cache-write surcharge (1.25× input on the first call) is left out."""
    provider = line.model.split("/", 1)[0] if "/" in line.model else "openai"
    prefix = int(line.prefix_tokens)
    if line.calls < 2 or prefix < CACHE_MIN_TOKENS:
        return 0
    if provider in AUTOMATIC_CACHE_PROVIDERS:
        prefix = prefix // OPENAI_CACHE_STEP * OPENAI_CACHE_STEP
    elif provider not in MARKED_CACHE_PROVIDERS:
        return 0
    return min((line.calls - 1) * prefix, line.input_tokens)


def prefix_tokens(prompts: Sequence[Sequence[dict]]) -> int:
    """Tokens of the fixed prefix a sweep's prompts share, as the gateway would mark it: the system
    message when every prompt opens with the same one, else the longest common prefix of the first
    user messages cut at a line break (``llm.usage.shared_prefix``)."""
    from ..llm.usage import shared_prefix

    firsts = [p[0] for p in prompts if p]
    if len(firsts) < 2:
        return 0
    texts = [str(m.get("content") or "") for m in firsts]
    if all(m.get("role") == "system" for m in firsts) and len(set(texts)) == 1:
        return _text_tokens(texts[0])
    n = shared_prefix(texts)
    return _text_tokens(texts[0][:n]) if n else 0


def price(model: str, inp: int, cached: int, out: int) -> float | None:
    """Dollars from litellm's price map (cached input at the cache-read price); None when unpriced."""
    from ..llm._litellm import litellm

    if _kind(model) in ("embedded", "llamacpp", "self-hosted"):
        return 0.0  # this machine, or your own servers: time, not a bill (see the hours)
    for name in (model, model.split("/", 1)[-1]):
        info = litellm.model_cost.get(name)
        if info and info.get("input_cost_per_token") is not None:
            i = float(info.get("input_cost_per_token") or 0.0)
            o = float(info.get("output_cost_per_token") or 0.0)
            c = info.get("cache_read_input_token_cost")
            c = i if c is None else float(c)
            return (inp - cached) * i + cached * c + out * o
    return None


def local_rates(bench_dir: Path) -> dict[str, tuple[float, float]]:
    """Prompt and generation tokens/s per llama.cpp model: measured (``local_llm.json``) or defaults."""
    rates = dict(LOCAL_RATES)
    f = bench_dir / "local_llm.json"
    if f.is_file():
        try:
            res = {
                r["name"]: r.get("value")
                for r in json.loads(f.read_text(encoding="utf-8")).get("results", [])
            }
        except (OSError, ValueError, AttributeError, KeyError, TypeError):
            return rates
        for key, model, prefix in (
            ("smollm2", "smollm2-135m-instruct", ""),
            ("qwen", "qwen2.5-coder-1.5b-instruct", "qwen_"),
        ):
            p, g = res.get(f"{prefix}prompt_tokens_per_s"), res.get(f"{key}_generation_tokens_per_s")
            if isinstance(p, int | float) and isinstance(g, int | float) and p > 0 and g > 0:
                rates[model] = (float(p), float(g))
    return rates


def _hours(
    line: Line, concurrency: int, rates: dict[str, tuple[float, float]], model_name: str | None = None
) -> float:
    if line.calls == 0:
        return 0.0
    mean_in, mean_out = line.input_tokens / line.calls, line.output_tokens / line.calls
    if line.kind == "embedded":
        return line.calls * EMBEDDED_S_PER_CALL / 3600
    if line.kind == "llamacpp":
        p, g = rates.get(model_name or line.model.split("/", 1)[-1], LOCAL_RATES["smollm2-135m-instruct"])
        return line.calls * LOCAL_FLOOR_RATIO * (mean_in / p + mean_out / g) / 3600
    if line.kind == "self-hosted":
        per = SELF_HOSTED_S_BASE + mean_out / SELF_HOSTED_TOKENS_PER_S
    else:
        per = API_S_BASE + mean_out / API_TOKENS_PER_S
    return line.calls * per / max(1, concurrency) / 3600


# ---- prompt sizes --------------------------------------------------------------------------------
_TOKENIZER = "gpt-4o"


def count_tokens(messages: Sequence[dict]) -> int:
    """Tokens of a prompt by litellm's token counter (a tiktoken encoding; providers' own tokenizers
    differ by some percent). Falls back to characters / 4 when the encoding cannot load."""
    from ..llm._litellm import litellm

    try:
        return int(litellm.token_counter(model=_TOKENIZER, messages=list(messages)))
    except Exception:  # noqa: BLE001 - an estimate; the characters rule is the budget guard's own
        return sum(len(str(m.get("content", ""))) for m in messages) // 4 + 4 * len(messages)


def _text_tokens(text: str) -> int:
    return count_tokens([{"role": "assistant", "content": text}])


def _sample_build(prof) -> Any:
    """A small PACEShop build (offline generator) from the profile's catalog and seed: its records have
    the shape of the full build's, so their prompts have its sizes."""
    from ..paceshop.build import BuildConfig, build

    cfg = BuildConfig.from_profile(prof)
    cfg.generator = "offline"
    small = dict(n_products=min(cfg.n_products, 400), n_candidate_queries=min(cfg.n_candidate_queries, 240),
                 n_queries=min(cfg.n_queries, 12), n_personas=min(cfg.n_personas, 60),
                 n_holdout=min(cfg.n_holdout, 14), test_goods=min(cfg.test_goods, 8), dev_goods=min(cfg.dev_goods, 8),
                 swap_slice=min(cfg.swap_slice, 8), s0_per_label=2, calibration_good=2,
                 calibration_bad_per_family=1)  # fmt: skip
    for k, v in small.items():
        setattr(cfg, k, v)
    key = json.dumps(asdict(cfg), sort_keys=True, default=str)
    if key not in _BUILDS:  # one sample build per configuration and process
        _BUILDS.clear()
        _BUILDS[key] = build(cfg, progress=False)
    return _BUILDS[key]


_BUILDS: dict[str, Any] = {}


def _schema_answer_tokens(schema: dict | None, max_tokens: int | None, seed: int = 0) -> int:
    """Tokens of a seeded random answer that satisfies ``schema`` (what ``local/schema-sampler`` sends:
    a contract-shaped answer), capped at ``max_tokens``; the cap itself for free text."""
    import random

    from ..llm.local import sample_schema

    cap = int(max_tokens or 512)
    if not schema:
        return cap
    try:
        text = json.dumps(sample_schema(schema, random.Random(seed)))
    except Exception:  # noqa: BLE001 - an estimate: fall back to the cap
        return cap
    return min(_text_tokens(text), cap)


# ---- per notebook ---------------------------------------------------------------------------------
class _Builder:
    def __init__(self, prof):
        from ..llm import parse_backbones
        from ..profiles import as_plain

        self.prof = prof
        self.params = prof.params
        self.backbones = {b.name: b for b in parse_backbones([as_plain(e) for e in self.params.backbones])}
        self._build = None
        self._recorded_rollouts: list | None = None
        self.preview = Preview(prof.name)
        self.trajectory_prefix = 0  # the H.5 prompt's fixed prefix (set by _trajectory_tokens)
        self.trajectory_max = 0  # the largest H.5 prompt (set by _trajectory_tokens)

    @property
    def build(self):
        if self._build is None:
            self._build = _sample_build(self.prof)
        return self._build

    def model(self, name: str) -> str:
        b = self.backbones.get(name)
        return b.model if b is not None else name

    def add(self, notebook: str, backbone: str, role: str, calls: int, mean_in: float, mean_out: float,
            method: str, prefix: int = 0, budget: tuple[str, float | None] | None = None,
            max_in: float | None = None) -> None:  # fmt: skip
        model = self.model(backbone)
        b = self.backbones.get(backbone)
        kind = _backbone_kind(b, model)
        self.preview.lines.append(Line(
            notebook=notebook, backbone=backbone, model=model, role=role, calls=int(calls),
            input_tokens=int(round(calls * mean_in)), output_tokens=int(round(calls * mean_out)), kind=kind,
            method=method, substitute_for=b.substitute_for if b is not None else None, prefix_tokens=int(prefix),
            budget=(budget[0], float(budget[1])) if budget is not None and budget[1] is not None else None,
            max_input_tokens=int(round(max_in if max_in is not None else mean_in)),
        ))  # fmt: skip

    # 10: GOOD generation
    def paceshop(self) -> None:
        from ..paceshop.build import _prompt
        from ..paceshop.generate import LLMGenerator

        P = self.params.paceshop
        if P.generator == "offline":
            return
        res = self.build
        qby = {q.query_id: q for q in res.queries}
        goods = res.by_kind("good")[:SAMPLE_RECORDS]
        gen = LLMGenerator(None, P.generator, _prompt("paceshop_good_generation"))
        ins, outs = [], []
        for g in goods:
            item = (g.assignment_id, qby[g.query_id], g.persona, res.pools[g.query_id])
            ins.append(count_tokens([{"role": "user", "content": gen.render(item)}]))
            outs.append(_text_tokens(g.response.model_dump_json()))
        n = P.n_queries * P.personas_per_query
        self.add(
            "10_paceshop_build",
            P.generator,
            "generator",
            n,
            statistics.mean(ins),
            statistics.mean(outs),
            f"B.9 prompt built for {len(ins)} sampled assignments, × {n} (n_queries × personas_per_query)",
            max_in=max(ins),
        )

    # 20: judge sweep
    def judging(self) -> None:
        from ..judges.protocols import PROTOCOLS, get_protocol, messages

        J, P = self.params.judging, self.params.paceshop
        goods = min(P.test_goods, P.n_queries * P.personas_per_query // 3)
        n_test = goods * 5 + min(P.swap_slice, goods) if J.split == "test" else goods * 5
        recs = [r for r in self.build.records if r.split == "test"][:SAMPLE_RECORDS] or self.build.records[
            :SAMPLE_RECORDS
        ]
        sizes: dict[str, tuple[float, float]] = {}
        prefixes: dict[str, int] = {}
        biggest: dict[str, int] = {}  # the largest prompt per protocol (issue 25 preflight)

        def size(pname: str) -> tuple[float, float]:
            if pname not in sizes:
                p = get_protocol(pname)
                params = p.params(J.max_tokens)
                ins, outs, prompts = [], [], []
                for r in recs:
                    msgs = messages(p, r)
                    prompts.append(msgs)
                    ins.append(count_tokens(msgs))
                    outs.append(_schema_answer_tokens(getattr(p, "contract", None), params.get("max_tokens"),
                                                      len(ins)))  # fmt: skip
                sizes[pname] = (statistics.mean(ins), statistics.mean(outs))
                biggest[pname] = max(ins)
                prefixes[pname] = prefix_tokens(prompts)
            return sizes[pname]

        how = f"prompts built for {len(recs)} sampled test records; × {n_test} test records"
        for judge in J.deterministic_judges:
            for pname in J.deterministic_protocols:
                i, o = size(pname)
                self.add(
                    "20_pace_judge_sweep",
                    judge,
                    f"reference judge ({pname})",
                    n_test * J.repeats,
                    i,
                    o,
                    how,
                    prefix=prefixes[pname],
                    max_in=biggest[pname],
                )
        for run in J.runs():
            for pname in run.protocols or list(PROTOCOLS):
                i, o = size(pname)
                n = (n_test if run.subset is None else min(run.subset, n_test)) * J.repeats
                self.add(
                    "20_pace_judge_sweep",
                    run.backbone,
                    f"judge ({pname})",
                    n,
                    i,
                    o,
                    f"prompts built for {len(recs)} sampled test records; × {n} "
                    f"(subset {'all' if run.subset is None else run.subset})",
                    prefix=prefixes[pname],
                    budget=(f"20 {run.backbone}", run.llm_budget_min),
                    max_in=biggest[pname],
                )

    # 50: evaluators
    def evaluators(self) -> None:
        from ..padme.evaluators import evaluator_specs, evaluators_from_profile

        P = self.params.padme
        try:
            specs = evaluators_from_profile(self.prof)
        except Exception:  # noqa: BLE001 - the notebook reports a bad roster; the preview counts what it can
            specs = evaluator_specs([e if isinstance(e, str) else e.given() for e in P.evaluators or []])
        llm = [s for s in specs if not s.is_heuristic]
        if not llm:
            return
        mean_in, how = self._trajectory_tokens()
        pairs, recorded = P.llm_evaluator_pairs, P.llm_recorded_pairs
        said = []
        if pairs is None:  # every kept pair: at most one per synthesized cell
            pairs = self._cells()
            said.append(f"pairs: every kept pair, at most {pairs} cells")
        if recorded is None:  # every reward-labelled recorded pair
            recorded = self._recorded_pairs()
            said.append(f"recorded: every reward-labelled pair, {recorded} found")
        n = (pairs + recorded) * 2 * P.llm_runs
        budget = sum(b or 0.0 for b in (P.llm_evaluator_budget_min, P.llm_recorded_budget_min))
        for s in llm:
            self.add(
                "50_padme_meta_eval",
                s.backbone,
                f"evaluator {s.name}",
                n,
                mean_in,
                min(P.evaluator_max_tokens, 120),
                f"{how}; × {n} ((pairs + recorded pairs) × 2 × runs{'; ' if said else ''}{'; '.join(said)})",
                prefix=self.trajectory_prefix,
                max_in=self.trajectory_max or None,
                budget=(f"50 {s.backbone}", budget or None)
                if P.llm_evaluator_budget_min is not None
                else None,
            )

    def _cells(self) -> int:
        P = self.params.padme
        n_criteria = 3 if isinstance(P.criteria, str) else len(P.criteria)
        return int(P.tasks_per_source * len(P.sources) * n_criteria)

    def _recorded(self) -> list:
        """The recorded τ-bench rollouts of ``padme.recorded`` (read once; empty when absent or
        unreadable: the notebook reports that, the preview plans nothing for them)."""
        if self._recorded_rollouts is None:
            from ..padme.sources.recorded import load_recorded
            from ..paths import ROOT

            path = Path(self.params.padme.recorded or "")
            path = path if path.is_absolute() else ROOT / path
            try:
                self._recorded_rollouts = list(load_recorded(path))
            except Exception:  # noqa: BLE001 - absent or unreadable
                self._recorded_rollouts = []
        return self._recorded_rollouts

    def _recorded_pairs(self) -> int:
        from ..padme.sources.recorded import recorded_pairs

        return len(recorded_pairs(self._recorded(), "task_resolution"))

    def _trajectory_tokens(self) -> tuple[float, str]:
        from ..padme.criteria import load_criteria
        from ..padme.evaluators import evaluator_messages
        from ..paths import prompt_file, strip_header

        try:
            rollouts = self._recorded()[:SAMPLE_RECORDS]
            crit = load_criteria(None)[0]
            template = strip_header(
                prompt_file(self.params.padme.evaluator_prompt).read_text(encoding="utf-8")
            )
            prompts = [evaluator_messages(r, crit, template) for r in rollouts]  # the profile's H.5 prompt
            sizes = [count_tokens(m) for m in prompts]
            self.trajectory_prefix = prefix_tokens(prompts)
            self.trajectory_max = max(sizes, default=0)
        except Exception:  # noqa: BLE001 - absent or unreadable: a documented default
            sizes = []
        if not sizes:
            return float(
                TRAJECTORY_TOKENS_DEFAULT
            ), f"H.5 prompt at {TRAJECTORY_TOKENS_DEFAULT} tokens (no recorded trajectories)"
        return statistics.mean(sizes), f"H.5 prompt built on {len(sizes)} recorded τ-bench trajectories"

    def _system_prefix(self, which: str) -> int:
        """Tokens of an agent's system message, the prefix the gateway marks for caching on every turn
        (llm/usage.py): the shop agent's system prompt, or τ²-bench's instruction and policy for a τ²
        source (0 when its folder cannot be read: no discount is then assumed)."""
        try:
            if which == "shop":
                from ..shopsim.agents import default_system_prompt

                return _text_tokens(default_system_prompt())
            from ..domains.tau2_retail.environment import agent_system_prompt
            from ..paths import ROOT

            for src in self.params.padme.sources:
                path = getattr(src, "path", None)
                if path:
                    pol = Path(path) if Path(path).is_absolute() else ROOT / path
                    return _text_tokens(agent_system_prompt((pol / "policy.md").read_text(encoding="utf-8")))
        except Exception:  # noqa: BLE001 - an estimate: no readable prompt, no discount
            return 0
        return 0

    # 40: synthesis (per-unit model)
    def synthesis(self) -> None:
        P = self.params.padme
        cells = self._cells()
        attempts = 1 + P.retries / 2
        how = "per-unit model (module docstring): conversations cannot be rendered before they happen"
        if P.steering != "scripted":
            self.add(
                "40_padme_synthesis", P.steering, "steering (H.2)", cells * 3, PADME_STEER_INPUT, 300, how
            )
        if not P.scripted_agent:  # a list of agent models splits the cells evenly (padme.agents)
            m = len(P.agents)
            for i, agent in enumerate(P.agents):
                share = cells // m + (1 if i < cells % m else 0)
                n = share * 2 * attempts * PADME_AGENT_CALLS
                role = "agent" if m == 1 else f"agent ({share} of {cells} cells)"
                self.add("40_padme_synthesis", agent, role, n, PADME_CALL_INPUT, 300, how,
                         prefix=self._system_prefix("tau2"))  # fmt: skip
        if P.user != "scripted":
            n = cells * 2 * attempts * PADME_USER_CALLS
            self.add("40_padme_synthesis", P.user, "user simulator", n, PADME_CALL_INPUT, 120, how)
        for j in P.filter_judges or []:
            g = j if isinstance(j, str) else j.given()
            name = g if isinstance(g, str) else g.get("backbone")
            if name:
                self.add(
                    "40_padme_synthesis",
                    name,
                    "filter judge (H.4)",
                    cells * attempts,
                    PADME_PAIR_PROMPT,
                    300,
                    how,
                )

    # 80: shop agents (per-unit model)
    def shop(self) -> None:
        S = self.params.shopsim
        how = "per-unit model from seed 002 App. G tokens per trial (module docstring)"
        total_trials = 0
        for a in S.llm_agents:
            trials = sum(a.trial_counts().values())
            total_trials += trials
            n = trials * SHOP_AGENT_CALLS_PER_TRIAL
            self.add(
                "80_shop_agents",
                a.backbone,
                f"agent ({a.tool_mode})",
                n,
                SHOP_ASSISTANT_TOKENS_PER_TRIAL / SHOP_AGENT_CALLS_PER_TRIAL,
                min(a.max_tokens, 400),
                how,
                prefix=self._system_prefix("shop"),
                budget=(f"80 {a.backbone}", a.llm_budget_min),
            )
        trials_all = total_trials + sum(sum(S.trials.counts().values()) for _ in S.scripted_agents)
        if S.user != "scripted":
            n = trials_all * SHOP_USER_CALLS_PER_TRIAL
            self.add(
                "80_shop_agents",
                S.user,
                "user simulator",
                n,
                0.6 * SHOP_OTHER_TOKENS_PER_TRIAL / SHOP_USER_CALLS_PER_TRIAL,
                200,
                how,
            )
        if S.judge != "deterministic":
            self.add(
                "80_shop_agents",
                S.judge,
                "judge",
                trials_all * 10,
                0.4 * SHOP_OTHER_TOKENS_PER_TRIAL / 10,
                300,
                how,
            )
        if S.second_judge and S.second_judge_trials:
            self.add(
                "80_shop_agents",
                S.second_judge,
                "second judge (App. K)",
                S.second_judge_trials * 10,
                0.4 * SHOP_OTHER_TOKENS_PER_TRIAL / 10,
                300,
                how,
            )


def build_preview(prof, bench_dir: Path | None = None, only: Sequence[str] | None = None) -> Preview:
    """The preview of a loaded profile (:func:`shopbench.config.load_profile`): no key, no call; with
    ``only``, of those notebooks alone (``pipeline run --only``, issue 25 §2)."""
    from ..llm.backends import Backbone
    from ..llm.batch import batch_price_factor, batchable
    from ..paths import outputs_root

    b = _Builder(prof)
    for notebook, section in (("20_pace_judge_sweep", b.judging), ("10_paceshop_build", b.paceshop),
                              ("40_padme_synthesis", b.synthesis), ("50_padme_meta_eval", b.evaluators),
                              ("80_shop_agents", b.shop)):  # fmt: skip
        if not only or notebook in only:
            section()
    pv = b.preview
    rates = local_rates(bench_dir or outputs_root() / "bench")
    conc = {**{"llamacpp": 1, "local": 4, "default": 8}, **dict(prof.params.gateway.concurrency)}
    for line in pv.lines:
        bb = b.backbones.get(line.backbone) or Backbone(name=line.backbone, model=line.model)
        provider = bb.provider
        c = bb.concurrency or conc.get(provider) or conc["default"]
        if line.kind == "self-hosted":
            c *= max(1, len(bb.api_bases))
        line.cached_input_tokens = cached_input_tokens(line)
        line.usd = 0.0 if line.kind != "api" else price(line.model, line.input_tokens, line.cached_input_tokens,
                                                          line.output_tokens)  # fmt: skip
        if (line.usd and prof.params.gateway.mode == "batch" and batchable(line.model)
                and not line.role.startswith(TURN_ROLES)):  # fmt: skip
            line.batch = True
            line.usd *= batch_price_factor(line.model)
        line.hours = _hours(line, c, rates, bb.model_name)
        line.available, line.reason = bb.availability() if line.kind != "embedded" else (True, "ok")
        if line.usd is not None:
            line.usd = round(line.usd, 4)
    _cap_at_budgets(pv.lines)
    pv.notes.append("tokens by litellm's token counter (one tiktoken encoding for every model)")
    pv.notes.append(f"local llama.cpp rates: {rates}")
    if any(x.usd is None for x in pv.lines):
        pv.notes.append(
            "no price in litellm's map for: "
            + ", ".join(sorted({x.model for x in pv.lines if x.usd is None}))
        )
    return pv


def _cap_at_budgets(lines: Sequence[Line]) -> None:
    """Cap the hours of each anytime sweep (the lines sharing a ``budget`` key) at its time budget,
    shared in proportion; round every line's hours."""
    groups: dict[str, tuple[float, list[Line]]] = {}
    for line in lines:
        if line.budget is not None:
            groups.setdefault(line.budget[0], (line.budget[1], []))[1].append(line)
    for minutes, group in groups.values():
        total = sum(x.hours for x in group)
        if total > minutes / 60:
            for x in group:
                x.hours *= minutes / 60 / total
                x.method += f"; hours capped by the sweep's {minutes:g}-min budget (plan: {total:.1f} h)"
    for line in lines:
        line.hours = round(line.hours, 3)


# ---- limits ---------------------------------------------------------------------------------------
def refusals(pv: Preview, gateway) -> list[str]:
    """Why a run of this profile must not start (empty: it may). Counts what would run now: backbones
    whose key is missing are skipped by the notebooks, so their cost is not spent."""
    out = []
    api = [x for x in pv.lines if x.kind == "api"]
    api_now = pv.total(["api"], only_available=True)
    if gateway.max_cost_usd is not None and api_now["usd"] > gateway.max_cost_usd:
        out.append(f"the estimate is ${api_now['usd']:,.2f} for the API calls, above gateway.max_cost_usd = "
                   f"${gateway.max_cost_usd:,.2f}: raise gateway.max_cost_usd in the profile (or shrink the run)")  # fmt: skip
    local_now = pv.total(["llamacpp", "embedded"], only_available=True)
    if gateway.max_local_hours is not None and local_now["hours"] > gateway.max_local_hours:
        out.append(f"the local models' part is estimated at {local_now['hours']:,.1f} h on this machine, above "
                   f"gateway.max_local_hours = {gateway.max_local_hours}: raise gateway.max_local_hours (or shrink "
                   "the local runs)")  # fmt: skip
    if api and not any(x.available for x in api):
        missing = sorted({x.reason.split(": set ", 1)[-1].split(" in the environment")[0] for x in api
                          if "set " in x.reason})  # fmt: skip
        out.append(f"none of the profile's {len({x.model for x in api})} API models can be called here (keys "
                   f"missing: {', '.join(missing) or 'see the availability column'}); this profile runs the papers' "
                   "models, so without keys it would produce none of their tables. Set the keys in the "
                   "environment, or run an offline profile (make paper)")  # fmt: skip
    return out


# ---- output ---------------------------------------------------------------------------------------
def _fmt_usd(v: float | None) -> str:
    return "unpriced" if v is None else f"${v:,.2f}"


def render(pv: Preview) -> str:
    rows = [("notebook", "backbone", "role", "calls", "input tok", "output tok", "$", "hours", "available")]
    for x in pv.lines:
        name = x.backbone + (f" (for {x.substitute_for})" if x.substitute_for else "")
        rows.append((x.notebook, name, x.role, f"{x.calls:,}", f"{x.input_tokens:,}", f"{x.output_tokens:,}",
                     _fmt_usd(x.usd) + (" b" if x.batch else ""), f"{x.hours:,.2f}",
                     "yes" if x.available else "no key/model"))  # fmt: skip
    widths = [min(60, max(len(r[i]) for r in rows)) for i in range(len(rows[0]))]
    lines = ["  ".join(str(c)[:w].ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    d = pv.as_dict()["totals"]
    lines += [
        "",
        f"API: {d['api']['calls']:,} calls, {_fmt_usd(d['api']['usd'])}, {d['api']['hours']:,.1f} h at the configured "
        f"concurrency; callable now (keys set): {_fmt_usd(d['api_available']['usd'])}",
        f"self-hosted servers: {d['self_hosted']['calls']:,} calls, {d['self_hosted']['hours']:,.1f} h",
        f"local (this machine): {d['local']['calls']:,} calls, {d['local']['hours']:,.1f} h",
    ]
    if any(x.batch for x in pv.lines):
        lines.append(
            "b: at the provider's batch price (gateway.mode: batch; litellm's batch rate, else half)"
        )
    lines += [f"note: {n}" for n in pv.notes]
    methods = sorted({f"{x.notebook}: {x.method}" for x in pv.lines})
    lines += ["how:"] + [f"  {m}" for m in methods]
    return "\n".join(lines)


def write(pv: Preview, paper_dir: Path, refused: list[str]) -> Path:
    paper_dir.mkdir(parents=True, exist_ok=True)
    path = paper_dir / "preview.json"
    data = pv.as_dict()
    data["refusals"] = refused
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def run_preview(
    profile: str, quiet: bool = False, only: Sequence[str] | None = None
) -> tuple[Preview, list[str], Path]:
    """Build, print and write the preview of ``profile`` (its notebooks in ``only``, else all) after the
    checks of :func:`shopbench.plancheck.check_plan`; returns it with its refusals and the file."""
    from ..config import claim_outputs, load_profile
    from ..plancheck import check_plan

    prof = load_profile(profile)
    notes = check_plan(prof, only)  # an undefined backbone or a missing dataset: one message, exit 2
    with ExitStack() as stack:
        if prof.params.rehearsal is not None:  # a rehearsal's models answer from the local server
            from ..rehearsal import active, pointed_at

            if not active():
                stack.enter_context(pointed_at("http://127.0.0.1:0"))
        pv = build_preview(prof, only=only)
        if only:
            pv.notes.append(f"only the notebooks {', '.join(only)} (--only)")
        pv.notes.extend(notes)
        refused = refusals(pv, prof.params.gateway)
    path = write(pv, claim_outputs(prof) / "paper", refused)
    if not quiet:
        print(render(pv))
        print(f"\npreview: {path}")
        for r in refused:
            print(f"WOULD REFUSE TO START: {r}")
    return pv, refused, path


def needs_gate(prof) -> bool:
    """Whether a run of ``prof`` is gated by the preview: it names a model that costs money or time off
    this machine, or sets ``max_local_hours``. Offline profiles (smoke, paper) skip the preview's sample
    build."""
    from ..llm import parse_backbones
    from ..profiles import as_plain

    g = prof.params.gateway
    kinds = {"llamacpp" if b.server else _kind(b.model)
             for b in parse_backbones([as_plain(e) for e in prof.params.backbones])}  # fmt: skip
    return g.max_local_hours is not None or bool(kinds & {"api", "self-hosted"})


def check_before_run(profile: str, only: Sequence[str] | None = None) -> Preview:
    """The pipeline's gate: print the preview, raise a :class:`UserError` when a limit is exceeded;
    returns the preview (the preflight reuses its prompt sizes, issue 25)."""
    pv, refused, path = run_preview(profile, only=only)
    if refused:
        raise UserError("this run would exceed its limits: " + "; ".join(refused),
                        fix=f"see {path}; change the setting named above and run again")  # fmt: skip
    return pv


@exit_on_user_error
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shopbench.preview", description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="paper", help="profile name (params/<name>.yaml) or a YAML path")
    ap.add_argument("--only", nargs="*", help="preview only these notebooks (as pipeline run --only)")
    a = ap.parse_args(argv)
    if a.only:
        known_only(a.only)
    run_preview(a.profile, only=a.only)
    return 0  # a preview informs; the pipeline refuses (check_before_run)


if __name__ == "__main__":
    sys.exit(main())
