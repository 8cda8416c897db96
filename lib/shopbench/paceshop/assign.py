"""Coverage-balanced query–persona assignment (seed 000, Appendix B.2).

"Each retained query is paired with four distinct personas using a coverage-balanced assignment
procedure that minimizes persona-taxonomy reuse and prevents the same persona from repeating on a
query." (B.2) and step 4 of the workflow: "reserve 345 holdout personas across 8 bundles for
dev/test; assign 4 personas per retained query."

The paper does not spell out the procedure; ours is a greedy pass over the queries in order. For
each of the ``k`` slots of a query it picks, among the personas not yet on this query, the one with
the lowest

    cost = 3 · persona use count                                   (every persona used about equally)
         + Σ_v [v in persona] · (uses of v among this query's already-chosen personas)   (within-query reuse)
         + mean_v [v in persona] · (global pair count of v / personas carrying v)        (global reuse)

over the Table 12 taxonomy values ``v`` (axis-qualified: household, budget, quality, urgency,
constraint families, preference families, history density, holdout flags), ties broken by a
seeded persona order. The use term is weighted 3 (``USE_WEIGHT``): with weight 1 the spread of
per-persona use at paper scale is 3–5, with 3 it is 3–4 (perfect balance) for under 2 % more
within-query reuse. Global reuse is normalised by the pool count of each value: raw counts would
keep penalising every persona that carries a common value (e.g. "sustainability"), which fights the
equal-use requirement; the normalised rate instead favours values used less than their pool share.
Candidates are restricted to personas used at most ``min_use + 1`` times (``min_use`` over the
personas still eligible), which keeps ``max use − min use ≤ 2``. Holdout personas (``holdout_bundle``
set) may only appear in dev/test, so ``holdout_capacity`` caps the number of pairs using them; once
it is reached they are no longer eligible.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..core import Persona

USE_WEIGHT = 3.0  # a persona used once more must save >= 3 value collisions to be preferred
AXES = ("household", "budget", "quality", "urgency", "constraints", "preferences", "history", "holdout_flags")


def taxonomy_values(persona: Persona) -> list[tuple[str, str]]:
    """The persona's (axis, value) Table 12 taxonomy tags."""
    out: list[tuple[str, str]] = []
    for axis in AXES:
        v = getattr(persona.taxonomy, axis)
        out.extend((axis, x) for x in (v if isinstance(v, list) else [v]))
    return out


def _matrix(personas: Sequence[Persona]) -> tuple[np.ndarray, list[tuple[str, str]]]:
    vocab: dict[tuple[str, str], int] = {}
    rows = []
    for p in personas:
        rows.append([vocab.setdefault(tv, len(vocab)) for tv in taxonomy_values(p)])
    m = np.zeros((len(personas), len(vocab)))
    for i, cols in enumerate(rows):
        m[i, cols] = 1.0
    return m, list(vocab)


def assign_personas(
    query_ids: list[str],
    personas: list[Persona],
    k: int = 4,
    seed: int = 0,
    holdout_capacity: int | None = None,
) -> list[tuple[str, str]]:
    """``k`` distinct personas per query (module docstring), as ``(query_id, persona_id)`` pairs in
    query order. At most ``holdout_capacity`` pairs use holdout personas (None: no cap)."""
    ids = [p.persona_id for p in personas]
    if len(set(ids)) != len(ids):
        raise ValueError("persona ids must be unique")
    is_holdout = np.array([p.holdout_bundle is not None for p in personas], dtype=bool)
    n_regular = int((~is_holdout).sum())
    if k > len(personas) or (holdout_capacity is not None and k > n_regular + holdout_capacity):
        raise ValueError(f"cannot give {k} distinct personas to a query with this pool and holdout capacity")
    if not query_ids:
        return []
    m, _ = _matrix(personas)
    pool_count = m.sum(axis=0)
    n_values = m.sum(axis=1)
    order = list(range(len(personas)))
    random.Random(seed).shuffle(order)
    tiebreak = np.empty(len(personas))
    tiebreak[order] = np.arange(len(personas)) * (1e-6 / len(personas))

    use = np.zeros(len(personas))
    value_use = np.zeros(m.shape[1])
    holdout_used = 0
    blocked = np.zeros(len(personas), dtype=bool)  # holdout personas once the capacity is reached
    if holdout_capacity is not None and holdout_capacity <= 0:
        blocked |= is_holdout
    pairs: list[tuple[str, str]] = []
    for qid in query_ids:
        q_counts = np.zeros(m.shape[1])
        taken = np.zeros(len(personas), dtype=bool)
        for _ in range(k):
            open_ = ~blocked & ~taken
            min_use = use[~blocked].min()
            cand = open_ & (use <= min_use + 1)
            if not cand.any():
                cand = open_
            cost = USE_WEIGHT * use + m @ q_counts + (m @ (value_use / pool_count)) / n_values + tiebreak
            cost[~cand] = np.inf
            i = int(np.argmin(cost))
            taken[i] = True
            use[i] += 1
            q_counts += m[i]
            value_use += m[i]
            pairs.append((qid, ids[i]))
            if is_holdout[i]:
                holdout_used += 1
                if holdout_capacity is not None and holdout_used >= holdout_capacity:
                    blocked |= is_holdout
    return pairs


def random_assignment(query_ids: list[str], personas: list[Persona], k: int = 4, seed: int = 0,
                      holdout_capacity: int | None = None) -> list[tuple[str, str]]:  # fmt: skip
    """Baseline: ``k`` distinct personas per query uniformly at random (same holdout cap)."""
    rng = random.Random(seed)
    ids = [p.persona_id for p in personas]
    holdout = {p.persona_id for p in personas if p.holdout_bundle is not None}
    used = 0
    pairs: list[tuple[str, str]] = []
    for qid in query_ids:
        pool = (
            ids
            if holdout_capacity is None or used < holdout_capacity
            else [i for i in ids if i not in holdout]
        )
        picked = []
        for pid in rng.sample(pool, len(pool)):
            if pid in holdout:
                if holdout_capacity is not None and used >= holdout_capacity:
                    continue
                used += 1
            picked.append(pid)
            if len(picked) == k:
                break
        pairs.extend((qid, pid) for pid in picked)
    return pairs


def taxonomy_reuse(pairs: Sequence[tuple[str, str]], personas: Sequence[Persona]) -> float:
    """Mean within-query taxonomy reuse: per query, the number of persona pairs sharing a taxonomy
    value, summed over values (Σ_v C(n_v, 2)), averaged over queries. Lower = more diverse."""
    by_id = {p.persona_id: p for p in personas}
    per_query: dict[str, Counter] = {}
    for qid, pid in pairs:
        per_query.setdefault(qid, Counter()).update(taxonomy_values(by_id[pid]))
    if not per_query:
        return 0.0
    return float(np.mean([sum(n * (n - 1) // 2 for n in c.values()) for c in per_query.values()]))
