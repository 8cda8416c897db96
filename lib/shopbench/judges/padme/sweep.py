"""Scoring rollouts and pairs with the evaluators under test (seed 003 §4 "Meta-Evaluation Sweep";
issue 13 §4 anytime scoring; issue 27: :mod:`.evaluators` split by concept).

:func:`score_rollouts` scores every distinct rollout once per (evaluator, run) and returns one row
per (evaluator, rollout, run) (:data:`SCORE_COLUMNS`); :func:`score_pairs_anytime` does so for the
rollouts of pair units (:class:`PairUnit`) in a seeded stratified order under a time budget.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ...padme.types import Criterion, Rollout
from ..spec import ModelJudge, Outcome
from .evaluators import DEFAULT_MAX_TOKENS, EvalItem, _score_fields
from .roster import EvaluatorSpec, evaluator_spec, evaluator_specs

SCORE_COLUMNS = ("evaluator", "backbone", "rollout_id", "criterion", "run", "score", "status", "parse_error", "error",
                 "reasoning", "prompt_tokens", "completion_tokens", "cost_usd", "cache_hit")  # fmt: skip


def _criterion_resolver(criterion_of) -> Callable[[Rollout], Criterion]:
    if callable(criterion_of) and not isinstance(criterion_of, Mapping):
        return criterion_of
    if isinstance(criterion_of, Mapping):

        def resolve(r: Rollout) -> Criterion:
            c = criterion_of.get(r.criterion)
            if c is None:
                raise ValueError(f"rollout {r.rollout_id}: criterion {r.criterion!r} is not in criterion_of "
                                 f"(known: {sorted(criterion_of)}); add its Criterion")  # fmt: skip
            return c

        return resolve
    raise TypeError(
        f"criterion_of: a mapping name -> Criterion or a function of the rollout, got {criterion_of!r}"
    )


def _distinct_rollouts(rollouts: Iterable[Rollout]) -> list[Rollout]:
    seen: dict[str, Rollout] = {}
    for r in rollouts:
        if not isinstance(r, Rollout):
            raise TypeError(f"score_rollouts: expected Rollout objects, got {type(r).__name__}")
        prev = seen.get(r.rollout_id)
        if prev is None:
            seen[r.rollout_id] = r
        elif prev is not r and prev.messages != r.messages:
            raise ValueError(
                f"rollout id {r.rollout_id!r} is used by two different trajectories; ids must be unique"
            )
    return list(seen.values())


def score_rollouts(
    rollouts: Iterable[Rollout],
    criterion_of: Mapping[str, Criterion] | Callable[[Rollout], Criterion],
    evaluators: Iterable,
    runs: int = 3,
    gateway=None,
    run_id: str = "padme-meta-eval",
    max_tokens: int = DEFAULT_MAX_TOKENS,
    *,
    seed: int = 0,
    template: str | None = None,
) -> pd.DataFrame:
    """Score each distinct rollout once per (evaluator, run); one row per (evaluator, rollout, run).

    ``rollouts`` may repeat (a rollout in several pairs is scored once). ``criterion_of`` maps a
    rollout's criterion name to its :class:`Criterion` (or is a function of the rollout).
    ``evaluators``: specs, names or mappings (:func:`evaluator_specs`). LM evaluators need
    ``gateway``; each is one ``gateway.run`` under run id ``f"{run_id}-{name}"`` with all its
    ``len(rollouts) × runs`` calls (``repeat = run``). Columns: :data:`SCORE_COLUMNS`."""
    if not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive integer, got {runs!r}")
    specs = evaluator_specs(evaluators, where="evaluators")
    items = _distinct_rollouts(rollouts)
    resolve = _criterion_resolver(criterion_of)
    crits = [resolve(r) for r in items]
    llm = [s for s in specs if not s.is_heuristic]
    if llm and gateway is None:
        raise ValueError(
            f"LM evaluators {[s.name for s in llm]} need a gateway (score_rollouts(..., gateway=gw))"
        )
    asked = [(r, c, run) for run in range(runs) for r, c in zip(items, crits, strict=True)]
    frames = []
    for s in specs:
        judge = s.judge(gateway, run_id, max_tokens, seed=seed, template=template)
        frames.append(_score_frame(s, asked, judge.judge(asked)))
    return _concat_scores(frames)


def _score_frame(s: EvaluatorSpec, asked: Sequence[EvalItem], outcomes: Sequence[Outcome]) -> pd.DataFrame:
    recs = [{"evaluator": s.name, "backbone": s.backbone, "rollout_id": r.rollout_id, "criterion": c.name,
             "run": run, **_score_fields(o), "prompt_tokens": o.usage.get("prompt_tokens"),
             "completion_tokens": o.usage.get("completion_tokens"), "cost_usd": o.usage.get("cost_usd"),
             "cache_hit": bool(o.usage.get("cache_hit"))}
            for (r, c, run), o in zip(asked, outcomes, strict=True)]  # fmt: skip
    return pd.DataFrame(recs, columns=list(SCORE_COLUMNS))


def _concat_scores(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=list(SCORE_COLUMNS)).astype({"score": float})
    out = pd.concat(frames, ignore_index=True)[list(SCORE_COLUMNS)]
    out["score"] = out["score"].astype(float)
    return out


@dataclass(frozen=True)
class PairUnit:
    """One pair to score in an anytime sweep: its id, its two trajectories and its stratum."""

    pair_id: str
    worse: Rollout
    better: Rollout
    stratum: tuple = ()


def pair_units(pairs: Iterable) -> list[PairUnit]:
    """One :class:`PairUnit` per synthesised :class:`~shopbench.padme.types.Pair`, stratified by
    (criterion, level contrast, source): the units notebook 50 and the ``padme_evaluator`` task
    (issue 26 §1) score."""
    return [PairUnit(p.pair_id, p.worse, p.better, (p.criterion, p.contrast, p.source)) for p in pairs]


def reward_pair_units(reward_pairs: pd.DataFrame, rollouts: Iterable[Rollout]) -> list[PairUnit]:
    """One :class:`PairUnit` per reward-labelled pair of recorded trajectories
    (:func:`shopbench.metrics.meta_eval.reward_pairs`), stratified by task."""
    by_rid = {r.rollout_id: r for r in rollouts}
    return [PairUnit(r.pair_id, by_rid[r.worse_id], by_rid[r.better_id], (r.task_id,))
            for r in reward_pairs.itertuples()]  # fmt: skip


def order_pair_units(
    units: Iterable[PairUnit], seed: int | str = 0, cap: int | None = None
) -> list[PairUnit]:
    """The fixed order in which :func:`score_pairs_anytime` scores pairs: seeded and stratified by
    ``PairUnit.stratum`` (every prefix a stratified sample), the first ``cap`` kept."""
    from ...llm.anytime import stratified_order

    order = stratified_order(list(units), lambda u: u.stratum, seed, key=lambda u: u.pair_id)
    return order[:cap] if cap is not None else order


def score_pairs_anytime(
    units: Iterable[PairUnit],
    criterion_of: Mapping[str, Criterion] | Callable[[Rollout], Criterion],
    evaluator,
    *,
    gateway,
    budget_s: float | None,
    seed: int | str = 0,
    runs: int = 1,
    run_id: str = "padme-meta-eval",
    max_tokens: int = DEFAULT_MAX_TOKENS,
    cap: int | None = None,
    template: str | None = None,
    clock=None,
):
    """One LM evaluator on pairs as an anytime sweep (:mod:`shopbench.llm.anytime`): the pairs in a
    seeded order stratified by ``PairUnit.stratum`` (capped at ``cap``), each pair's two trajectories
    × ``runs`` scored as one gateway run, until ``budget_s`` seconds of model time are spent (resumes
    from the cache; a larger budget extends the same sample). A trajectory in several pairs is scored
    once. Returns ``(scores, result)``: the :data:`SCORE_COLUMNS` rows of the pairs done and the
    :class:`~shopbench.llm.anytime.AnytimeResult` (``result.done`` are the pairs scored, ``n`` of ``N``)."""
    from ...llm.anytime import run_anytime

    if not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive integer, got {runs!r}")
    spec = evaluator_spec(evaluator)
    if spec.is_heuristic:
        raise ValueError(
            f"score_pairs_anytime: {spec.name} is a reference evaluator (no model); use score_rollouts"
        )
    resolve = _criterion_resolver(criterion_of)
    order = order_pair_units(units, seed, cap)
    judge = spec.judge(
        gateway, run_id, max_tokens, seed=int(seed) if isinstance(seed, int) else 0, template=template
    )
    assert isinstance(judge, ModelJudge)  # not a heuristic (checked above)
    scored: set[str] = set()

    def items(batch: Sequence[PairUnit], skip: Collection[str] = ()) -> list[EvalItem]:
        rolls = _distinct_rollouts(x for u in batch for x in (u.worse, u.better))
        rolls = [r for r in rolls if r.rollout_id not in skip]
        return [(r, resolve(r), k) for k in range(runs) for r in rolls]

    def calls_of(u: PairUnit):
        return judge.calls(items([u]))

    def run(batch: list[PairUnit]) -> pd.DataFrame:
        asked = items(batch, skip=scored)
        scored.update(r.rollout_id for r, _, _ in asked)
        return _score_frame(spec, asked, judge.judge(asked))

    kw = {"clock": clock} if clock is not None else {}
    res = run_anytime(
        gateway, order, calls_of, run, budget_s=budget_s, name=f"evaluator {spec.name} · {run_id}", **kw
    )
    return _concat_scores(res.results), res


__all__ = ["SCORE_COLUMNS", "PairUnit", "order_pair_units", "pair_units", "reward_pair_units", "score_pairs_anytime",
           "score_rollouts"]  # fmt: skip
