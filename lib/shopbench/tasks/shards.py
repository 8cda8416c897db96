"""Shards of a task run and their merge (issue 30 item 4: "past one machine, the way clusters run it").

**The partition** (``shopbench eval TASK ... --shard i/n``, ``0 <= i < n``): the task first selects its
samples exactly as an unsharded run does (its seeded order, then ``--limit``); shard ``i`` keeps the
contiguous block ``[floor(i*N/n), floor((i+1)*N/n))`` of that order (N samples). The blocks are disjoint,
cover every sample, depend only on the task, its parameters, ``--limit`` and ``--seed``, and keep the
order, so concatenating the shards' rows in shard order (then, for tasks that write every sample of epoch
0 before epoch 1, a stable sort by epoch) is the unsharded run's row table, row for row. A shard runs
under the unsharded run's gateway run id: its calls have the same item ids and cache keys as the
unsharded run's, and the merged call log resumes an unsharded run with no call repeated.

**The merge** (``shopbench merge LOG... --out LOG``) checks that the logs are shards of one run (same
task, parameters, model, seed, limit, epochs, prompt hashes; every index ``0..n-1`` once; sample blocks
disjoint and together the unsharded order, checked by its hash), then recomputes the task's metrics on
the merged rows with the task rebuilt unsharded: the same numbers, to the last digit, as one run.
The call logs (``calls/*.jsonl``) and the tasks' stores (``episodes/``, ``trajectories/``) are
concatenated in shard order; ``--cache DIR`` merges the shards' response caches into this machine's.
Every text written passes the call log's redaction (:func:`shopbench.secrets.redact`). Bad input is one
:class:`~shopbench.errors.UserError` (file and fix, exit 2) raised before anything is written.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ..errors import ParamError

__all__ = ["MERGEABLE", "RULE", "apply_shard", "block", "order_hash", "parse_shard", "sample_ids"]

RULE = "contiguous blocks of the task's seeded order: shard i keeps [floor(i*N/n), floor((i+1)*N/n))"
# tasks whose metrics are a function of the row table and the prepared task (the others read side tables
# their run keeps in memory: PADME's score table, the assistant task's judge table)
MERGEABLE = ("pace_judge", "shop_agent", "tau2_retail_agent")
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(spec: Any) -> tuple[int, int] | None:
    """``"i/n"`` → ``(i, n)`` with ``0 <= i < n``; None → None; anything else a ParamError."""
    if spec is None:
        return None
    if isinstance(spec, tuple) and len(spec) == 2:
        spec = f"{spec[0]}/{spec[1]}"
    m = _SHARD.match(str(spec))
    if not m or not 0 <= int(m[1]) < int(m[2]):
        raise ParamError(f"--shard {spec!r}: give i/n with 0 <= i < n",
                         fix="e.g. --shard 0/3, --shard 1/3, --shard 2/3 (SLURM: --shard $SLURM_ARRAY_TASK_ID/3 "
                             "with #SBATCH --array=0-2)")  # fmt: skip
    return int(m[1]), int(m[2])


def block(n_items: int, i: int, n: int) -> slice:
    """Shard ``i`` of ``n`` over ``n_items`` samples: a contiguous block; the blocks partition the range."""
    return slice(i * n_items // n, (i + 1) * n_items // n)


def sample_ids(t) -> list[str]:
    """The ids of a prepared task's samples, in its seeded order (what a shard partitions)."""
    if hasattr(t, "units") and hasattr(t, "pairs_df"):  # padme_evaluator
        return [str(u.pair_id) for u in t.units]
    if getattr(t, "imported", None) is not None:  # pace_assistant with recorded outputs
        return [str(w) for w in _wheres(t.imported)]
    if hasattr(t, "items") and not hasattr(
        t, "selected"
    ):  # pace_assistant generating: (aid, query, persona, pool)
        return [str(it[0]) for it in t.items]
    sel = t.selected
    if hasattr(t, "task_id"):  # the τ² episode tasks (tau2_agent, tau2_retail_agent)
        return [str(t.task_id(r)) for r in sel]
    return [str(getattr(s, "record_id", None) or s.trial_id) for s in sel]


def _wheres(rep) -> list:
    """The recorded outputs' places (file line), in file order (pace_assistant's ``--limit`` order)."""

    def key(w):
        m = re.search(r"\d+", str(w))
        return (int(m[0]) if m else 0, str(w))

    return sorted({o.where for o in rep.imported} | {r["where"] for r in rep.rejected}, key=key)


def apply_shard(t, shard: tuple[int, int] | None) -> dict | None:
    """Keep shard ``(i, n)`` of the prepared task ``t``'s samples (module docstring); return what the
    shard's ``run.json`` records: index, count, rule, its sample ids, the total and the hash of the full
    order (which the merge checks)."""
    if shard is None:
        return None
    i, n = shard
    ids = sample_ids(t)
    part = block(len(ids), i, n)
    keep = set(ids[part])
    if hasattr(t, "units") and hasattr(t, "pairs_df"):
        t.units = t.units[part]
        t.pairs_df = t.pairs_df[t.pairs_df["pair_id"].isin(keep)].reset_index(drop=True)
    elif getattr(t, "imported", None) is not None:
        t.imported.imported = [o for o in t.imported.imported if str(o.where) in keep]
        t.imported.rejected = [r for r in t.imported.rejected if str(r["where"]) in keep]
    elif hasattr(t, "items") and not hasattr(t, "selected"):
        t.items = t.items[part]
    else:
        t.selected = t.selected[part]
        if getattr(t, "s0_ids", None):  # pace_judge: S0 on the shard's records of the reference subset
            t.s0_ids = [x for x in t.s0_ids if x in keep] or None
    return {"index": i, "count": n, "rule": RULE, "sample_ids": ids[part], "total": len(ids),
            "order_sha256": order_hash(ids)}  # fmt: skip


def order_hash(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


# ---- merge --------------------------------------------------------------------------------------
