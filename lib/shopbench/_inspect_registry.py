"""The workbench's tasks as inspect_ai tasks (issue 30, item 1, second part).

pyproject.toml declares this module under inspect's entry-point group (``[project.entry-points.inspect_ai]
shopbench = "shopbench._inspect_registry"``), so with the ``inspect`` extra installed::

    inspect eval shopbench/pace_judge --model openai/NAME --limit 5 [-T protocol=geval] [-T records=DIR]
    inspect eval shopbench/pace_judge --model mockllm/model --limit 2

runs inside inspect's own harness (its model providers, its concurrency, its log and viewer) with the
workbench's samples, prompts, output contract, parser and metrics:

- dataset: the records ``pace_judge`` judges (:class:`shopbench.tasks.pace_judge.PaceJudgeTask`: the same
  records file / build folder / profile build, split and seeded stratified order, so inspect's
  ``--limit N`` keeps the same first N records as ``shopbench eval pace_judge --limit N``), each with the
  exact messages the workbench sends (:func:`shopbench.judges.pace.protocols.messages`), target the gold
  label, metadata the gold columns (record / base-record ids, tier, swap axis, defect family, location);
- solver: ``generate()`` with the protocol's temperature and max_tokens and its JSON contract as the
  response schema;
- scorer :func:`pace_judgment`: the protocol's own parser (:func:`shopbench.judges.pace.parse.parse_judgment`:
  contract, repairs, parse-failure kinds, the Ŝ ⊆ E check); value C when the verdict equals the gold label;
  explanation: verdict, family, location and rationale, or the parse failure and its kind;
- metrics: ``accuracy`` / ``stderr`` of the verdict and notebook 30's headline metrics
  (:func:`shopbench.metrics.pace.headline_table`, point estimates: S2_detect, S4_family, false_fire,
  PACE, parse_failure_rate) over the epoch-reduced samples.

Only ``pace_judge`` is here. Why the others are not (docs/guides/inspect.md): ``pace_assistant`` scores
the assistant with a second model (the PACE judge) on the parsed four-field response, ``padme_evaluator``
scores pairs (two generations per sample compared), and ``shop_agent`` / ``tau2_retail_agent`` need the
workbench's simulated customer and shop/tau2 environment in the loop; their runs still reach inspect as
``.eval`` logs (:mod:`shopbench.interop.inspect_log`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import CORRECT, INCORRECT, SampleScore, Score, Target, accuracy, metric, scorer, stderr
from inspect_ai.solver import TaskState, generate


def _offline_tokenizer() -> None:
    """inspect counts tokens with tiktoken's o200k_base (mockllm's usage, compaction), which tiktoken
    downloads on first use; litellm (a pinned dependency) ships that file, so point tiktoken's cache at
    it (as litellm does for its own counts) unless the user set TIKTOKEN_CACHE_DIR: no network needed."""
    import importlib.util
    import os
    from pathlib import Path

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations or "TIKTOKEN_CACHE_DIR" in os.environ:
        return
    d = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    if (d / "fb374d419588a4632f3f557e76b4b70aebbca790").exists():  # sha1 of o200k_base's URL
        os.environ["TIKTOKEN_CACHE_DIR"] = str(d)


_offline_tokenizer()

# the metadata a PACE metric needs from each sample's score (gold columns + the parsed judgment)
_HEADLINE = ("S2_detect", "S4_family", "false_fire", "PACE")


def _chat(m: dict):
    role, content = m.get("role"), str(m.get("content") or "")
    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "assistant":
        return ChatMessageAssistant(content=content)
    return ChatMessageUser(content=content)


def _plain(x: Any) -> Any:
    from .interop.inspect_log import _plain as plain

    return plain(x)


@task
def pace_judge(protocol: str = "pacejudge", records: str | None = None, profile: str = "smoke",
               split: str = "test", seed: int = 0, max_tokens: int | None = None) -> Task:  # fmt: skip
    """``shopbench/pace_judge``: the model judges PACEShop records under a PACE protocol (issue 30 item 1)."""
    from .judges.pace.protocols import get_protocol, messages
    from .judges.pace.sweep import _gold
    from .tasks.registry import get_task

    t, params = get_task("pace_judge").build(
        {
            "protocol": protocol,
            "records": records,
            "profile": profile,
            "split": split,
            "n_boot": 0,
            "max_tokens": max_tokens,
        }  # fmt: skip
    )
    t.prepare(limit=None, seed=seed)
    p = get_protocol(protocol)
    samples = []
    for r in t.selected:
        gold = _plain(_gold(r))
        samples.append(Sample(id=r.record_id, input=[_chat(m) for m in messages(p, r)], target=str(r.label),
                              metadata={"record_id": r.record_id, **gold}))  # fmt: skip
    gen = p.params(max_tokens)
    schema = p.contract_for(t.selected[0]) if t.selected else None
    config = GenerateConfig(temperature=gen.get("temperature"), max_tokens=gen.get("max_tokens"))
    if schema is not None:
        from inspect_ai.model import ResponseSchema
        from inspect_ai.util import JSONSchema

        config = config.merge(GenerateConfig(response_schema=ResponseSchema(
            name=p.schema_name, json_schema=JSONSchema.model_validate(schema))))  # fmt: skip
    return Task(
        dataset=MemoryDataset(samples, name="paceshop", location=t.data_source),
        solver=generate(),
        scorer=pace_judgment(protocol, t.s0_ids),
        config=config,
        metadata={
            "shopbench_task": "pace_judge",
            "params": _plain(params),
            "prompts": t.prompts(),
            "seed": seed,
        },
    )


def judgment_row(protocol: str, model: str, record_id: str, epoch: int, raw: str | None, stop: str | None,
                 gold: dict, record: Any = None) -> dict:  # fmt: skip
    """One run-table row (notebook 20's columns) from an output text: the protocol's parse + the gold."""
    from .judges.pace.parse import parse_judgment

    row = {"raw_output": raw, "status": "ok" if raw is not None else "error", "finish_reason": stop}
    cand = record if record is not None else gold.get("candidate_evidence_ids")
    parsed = parse_judgment(protocol, row, cand)
    ok = bool(parsed["parse_ok"])
    return {"protocol": protocol, "backbone": model, "record_id": record_id, "repeat": epoch,
            "item_id": f"{protocol}|{model}|{record_id}|{epoch}", "status": row["status"], "raw_output": raw,
            **parsed, **gold, "correct": ok and parsed.get("verdict") == gold.get("label")}  # fmt: skip


def explain(row: dict) -> str:
    """The score's explanation: what the judge said against the gold, or why it did not parse."""
    if not row.get("parse_ok"):
        return f"parse failure ({row.get('parse_error_kind')}): {row.get('parse_error')}"
    return (f"verdict {row.get('verdict')} vs gold {row.get('label')}; family {row.get('defect_family')} "
            f"(gold {row.get('gold_family')}); location {row.get('defect_location')} (gold "
            f"{row.get('gold_location')}); rationale: {row.get('rationale')}")  # fmt: skip


def headline(rows: list[dict], s0_ids: list[str] | None) -> dict[str, float]:
    """Notebook 30's headline point estimates for one judge's run table rows (n_boot 0)."""
    import pandas as pd

    from .judges.pace.protocols import PROTOCOLS
    from .judges.pace.sweep import RUN_COLUMNS
    from .metrics.pace import headline_table

    if not rows:
        return {}
    df = pd.DataFrame(rows)
    for c in RUN_COLUMNS:
        if c not in df:
            df[c] = None
    native = {p.name: p.targets for p in PROTOCOLS.values()}
    head = headline_table(df, s0_ids=s0_ids, n_boot=0, seed=0, native_targets=native)
    head = head[head["level"] == "backbone"]
    out: dict[str, float] = {}
    for r in head.itertuples():
        est = float(r.estimate) if r.estimate is not None and bool(r.supported) else math.nan
        out.setdefault(str(r.column), est)
    return out


def _rows(scores: list[SampleScore]) -> list[dict]:
    """The run-table rows the scorer stored in each (epoch-reduced) score's metadata."""
    return [json.loads(str(md["row"])) for s in scores if (md := s.score.metadata or {}).get("row")]


def _headline_metric(name: str, s0_ids: list[str] | None):
    @metric(name=name)
    def m():
        def compute(scores: list[SampleScore]) -> float:
            v = headline(_rows(scores), s0_ids).get(name, math.nan)
            return float(v) if v == v else math.nan

        return compute

    return m()


@metric
def parse_failure_rate():
    def compute(scores: list[SampleScore]) -> float:
        rows = _rows(scores)
        return sum(not r.get("parse_ok") for r in rows) / len(rows) if rows else math.nan

    return compute


def pace_judgment(protocol: str = "pacejudge", s0_ids: list[str] | None = None):
    """The workbench's PACE scorer as an inspect scorer (its parse, its correctness, its metrics)."""

    @scorer(metrics=[accuracy(), stderr(), parse_failure_rate(), *(_headline_metric(n, s0_ids) for n in _HEADLINE)],
            name="pace_judgment")  # fmt: skip
    def make():
        async def score(state: TaskState, target: Target) -> Score:
            md = state.metadata
            gold = {k: v for k, v in md.items() if k != "record_id"}
            out = state.output
            stop = out.choices[0].stop_reason if out and out.choices else None
            raw = out.completion if out and (out.completion or out.choices) else None
            finish = {"max_tokens": "length", "model_length": "length"}.get(str(stop), stop)
            row = judgment_row(protocol, str(state.model), str(state.sample_id), state.epoch - 1, raw, finish,
                               gold)  # fmt: skip
            return Score(value=CORRECT if row["correct"] else INCORRECT, answer=row.get("verdict"),
                         explanation=explain(row), metadata={"row": json.dumps(_plain(row))})  # fmt: skip

        return score

    return make()
