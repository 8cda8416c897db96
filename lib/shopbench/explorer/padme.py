"""PADMÉ pairs (seed 003): both trajectories side by side, the filter votes, and every evaluator's scores.

Reads the pairs dataset notebook 40 wrote (``padme/dataset``) and the evaluator scores notebook 50
wrote (``padme/evaluator_scores.parquet``); nothing is re-judged.

Slot order: a filter judge saw x⁺ in slot ``better_slot`` of its vote (the cascade draws the order
per judge), so the votes table says, per judge, which side it was shown first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..padme.dataset import filter_outcome, pairs_table
from ..padme.types import Pair

SIDES = ("worse", "better")


def pairs_index(pairs: Sequence[Pair]) -> pd.DataFrame:
    """One row per pair (the dataset's table without the long text columns)."""
    df = pairs_table(pairs)
    drop = [c for c in df.columns if c.startswith("steering_") or c == "votes"]
    return df.drop(columns=drop)


def votes_table(pair: Pair) -> pd.DataFrame:
    """One row per filter vote: judge, stage, the slot x⁺ was shown in (slot order), the judge's
    choice, whether it agreed with the synthetic label, a parse error, and the order-swap re-judging."""
    rows = [{"stage": v.stage, "judge": v.judge, "better_shown_in_slot": v.better_slot, "choice": v.choice,
             "agrees": v.agrees, "swapped_choice": v.swapped_choice, "parse_error": v.parse_error or ""}
            for v in pair.votes]  # fmt: skip
    return pd.DataFrame(rows, columns=["stage", "judge", "better_shown_in_slot", "choice", "agrees", "swapped_choice",
                                       "parse_error"])  # fmt: skip


def evaluator_table(pair: Pair, scores: pd.DataFrame | None) -> pd.DataFrame:
    """Every evaluator's score of both sides: rows = evaluator, columns = mean score of x⁻ and x⁺ over
    runs, runs, parse failures, and ``prefers`` (the side with the higher mean; ``tie``; ``–`` when a
    side has no valid score)."""
    cols = ["evaluator", "backbone", "worse", "better", "runs", "failures", "prefers"]
    if scores is None or scores.empty:
        return pd.DataFrame(columns=cols)
    ids = {pair.worse.rollout_id: "worse", pair.better.rollout_id: "better"}
    s = scores[scores["rollout_id"].isin(ids) & (scores["criterion"] == pair.criterion)]
    rows = []
    for (ev, bb), g in s.groupby(["evaluator", "backbone"], dropna=False, sort=True):
        side = g["rollout_id"].map(ids)
        m = {k: g.loc[side == k, "score"].mean() for k in SIDES}
        if np.isnan(m["worse"]) or np.isnan(m["better"]):
            pref = "–"
        else:
            pref = "better" if m["better"] > m["worse"] else "worse" if m["worse"] > m["better"] else "tie"
        rows.append({"evaluator": ev, "backbone": bb, "worse": m["worse"], "better": m["better"],
                     "runs": int(g["run"].nunique()), "failures": int(g["score"].isna().sum()), "prefers": pref})  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def pair_summary(pair: Pair) -> pd.DataFrame:
    """The pair's facts, one row per side: level, steering instruction, reward, rollout id, turns."""
    rows = []
    for k in SIDES:
        r = getattr(pair, k)
        rows.append({"side": k, "level": r.level, "steering": r.steering or pair.steering.get(r.level, ""),
                     "reward": r.reward, "rollout_id": r.rollout_id, "messages": len(r.messages)})  # fmt: skip
    df = pd.DataFrame(rows).set_index("side")
    df.attrs.update(pair_id=pair.pair_id, criterion=pair.criterion, contrast=pair.contrast, domain=pair.domain,
                    depth=pair.depth, kept=pair.kept, filter_outcome=filter_outcome(pair), attempt=pair.attempt)  # fmt: skip
    return df


def pair_html(pair: Pair) -> str:
    """Both trajectories side by side (x⁻ left, x⁺ right) as HTML, each headed by its steering level
    and instruction (escaped; the annotation UI's conversation renderer)."""
    from ..annotate.pairs import Conversation
    from ..annotate.render import esc, render_conversation
    from ..padme.dataset import _conversation

    cols = []
    for k in SIDES:
        r = getattr(pair, k)
        conv = Conversation.model_validate(_conversation(r.messages))
        steer = r.steering or pair.steering.get(r.level, "")
        cols.append(f"<div class='sb-side sb-side-{k}' style='flex:1;min-width:0'><h4>{'x⁻ (worse)' if k == 'worse' else 'x⁺ (better)'}"
                    f" · level <b>{esc(r.level)}</b></h4><details><summary>steering</summary><pre style='white-space:pre-wrap'>"
                    f"{esc(steer)}</pre></details>{render_conversation(conv)}</div>")  # fmt: skip
    return f"<div class='sb-pair' style='display:flex;gap:1em'>{''.join(cols)}</div>"


__all__ = ["pairs_index", "votes_table", "evaluator_table", "pair_summary", "pair_html"]
