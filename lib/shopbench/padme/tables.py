"""The PADMÉ dataset tables, as pure functions over the pairs table (seed 003 §5.1, App. B, C.1–C.3, G).

Input: the flat table of :func:`shopbench.padme.dataset.pairs_table` (or the pairs themselves), one
row per generated pair (every attempt), with ``depth``, ``kept``, ``filter_outcome`` and ``votes``.

* :func:`funnel_table` — Table 1, "Data curation funnel over 1,125 cells across retry attempts":
  per attempt r the cells attempted, pairs generated, pairs passing J_1 … J_K (passing J_K = kept),
  the retention of that attempt and the cumulative yield over the initial cells. "Per-attempt
  retention decays predictably across retries, as subsequent retries operate exclusively on
  previously rejected cells" (§5.1).
* :func:`retention_table` — Table 8, "Cell retention metrics by subset": "The retention rate
  measures the proportion of retained final pairs against the total number of generation draws
  across all attempts. The cumulative retention rate denotes the proportion of retained final pairs
  relative to the original set of target cells prior to retries. Draws per retention measures the
  average number of generation attempts required to yield one retained pair." Also the rejections
  per judge ("the first filter judge J_1 accounts for the vast majority of rejections").
* :func:`composition_table` — Table 6: the kept pairs over the four axes (criterion, domain, level
  contrast, agent model); "each pair carries exactly one level per axis".
* :func:`position_table` — Table 9 / C.2 "Position balance audit": per judge, how often x⁺ was shown
  in slot 1 and how often the judge chose slot 1, each with a two-sided exact binomial test
  against 0.5 (:func:`shopbench.stats.tests.position_balance`, scipy's ``binomtest``).
* :func:`reward_table` — Table 10 / C.3 "Environment reward verification": "The reward gap
  represents the score of the higher-steered trajectory minus that of the lower-steered
  trajectory", per criterion and contrast, for kept pairs and for all pairs, with a paired test:
  the exact McNemar test (a two-sided sign test on the discordant pairs) when rewards are binary,
  else the Wilcoxon signed-rank test. Groups without rewards (sources without an environment
  reward) show "–".
* :func:`cost_tables` — Tables 20–21 / App. G: cost per kept pair and cache-hit rate per pipeline
  role from gateway call logs. Note: the paper's Table 21 reports the provider's *prompt-prefix*
  cache; the gateway logs its own *response* cache (``cache_hit``: the whole call answered from
  disk), which is what a rerun saves here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "AXES", "composition_table", "cost_tables", "funnel_table", "position_table", "retention_table", "reward_table",
    "votes_long",
]  # fmt: skip

AXES = ("criterion", "domain", "contrast", "agent_model")
DASH = "–"


def _frame(data) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        df = data
    else:
        from shopbench.padme.dataset import pairs_table

        df = pairs_table(list(data))
    missing = [c for c in ("pair_id", "cell_id", "attempt", "depth", "kept") if c not in df.columns]
    if missing:
        raise ValueError(f"the pairs table lacks columns {missing}; build it with padme.dataset.pairs_table")
    return df


def _K(df: pd.DataFrame, K: int | None) -> int:
    if K is not None:
        return int(K)
    if "n_votes" in df.columns and len(df):
        return (
            int(df.loc[df["kept"].astype(bool), "n_votes"].max())
            if df["kept"].any()
            else int(df["n_votes"].max())
        )
    return int(df["depth"].max()) if len(df) else 0


def _div(a, b) -> float:
    return float(a) / float(b) if b else float("nan")


# ---- Table 1 -----------------------------------------------------------------------------------
def funnel_table(data, K: int | None = None) -> pd.DataFrame:
    """Table 1: one row per attempt (0 = the initial generation) and a ``total`` row.

    ``K`` defaults to the number of votes on kept pairs (pass it when nothing was kept)."""
    df = _frame(data)
    K = _K(df, K)
    n_cells = df.loc[df["attempt"] == 0, "cell_id"].nunique()
    rows, cum = [], 0
    for r in sorted(df["attempt"].unique()):
        g = df[df["attempt"] == r]
        kept = int(g["kept"].sum())
        cum += kept
        row = {"attempt": int(r), "cells_attempted": int(g["cell_id"].nunique()), "pairs_generated": len(g)}
        row |= {f"passed_J{k}": int((g["depth"] >= k).sum()) for k in range(1, K + 1)}
        row |= {"kept": kept, "retention": _div(kept, len(g)), "cumulative_kept": cum,
                "cumulative_yield": _div(cum, n_cells)}  # fmt: skip
        rows.append(row)
    kept = int(df["kept"].sum())
    total = {"attempt": "total", "cells_attempted": int(n_cells), "pairs_generated": len(df)}
    total |= {f"passed_J{k}": int((df["depth"] >= k).sum()) for k in range(1, K + 1)}
    total |= {"kept": kept, "retention": _div(kept, len(df)), "cumulative_kept": kept,
              "cumulative_yield": _div(kept, n_cells)}  # fmt: skip
    rows.append(total)
    return pd.DataFrame(rows).set_index("attempt")


# ---- Table 8 -----------------------------------------------------------------------------------
def _retention_row(g: pd.DataFrame, K: int) -> dict:
    cells, draws, kept = g["cell_id"].nunique(), len(g), int(g["kept"].sum())
    row = {"cells": int(cells), "draws": draws, "kept": kept}
    row |= {
        f"rejected_J{k}": int(((g["depth"] == k - 1) & ~g["kept"].astype(bool)).sum())
        for k in range(1, K + 1)
    }
    row |= {"retention": _div(kept, draws), "cumulative_retention": _div(kept, cells),
            "draws_per_kept": _div(draws, kept)}  # fmt: skip
    return row


def retention_table(data, axes: Sequence[str] = AXES, K: int | None = None) -> pd.DataFrame:
    """Table 8: per subset (axis, value) and overall. ``rejected_J<k>``: pairs that J_k vetoed."""
    df = _frame(data)
    K = _K(df, K)
    rows = [{"axis": "all", "subset": "all", **_retention_row(df, K)}]
    for axis in axes:
        if axis not in df.columns:
            raise ValueError(f"retention_table: no column {axis!r}; known {list(df.columns)}")
        for value, g in df.groupby(axis, sort=True):
            rows.append({"axis": axis, "subset": value, **_retention_row(g, K)})
    return pd.DataFrame(rows).set_index(["axis", "subset"])


# ---- Table 6 -----------------------------------------------------------------------------------
def composition_table(data, axes: Sequence[str] = AXES) -> pd.DataFrame:
    """Table 6: kept pairs per level of each axis (``pairs``, ``share``), largest first."""
    df = _frame(data)
    kept = df[df["kept"].astype(bool)]
    rows = []
    for axis in axes:
        counts = kept[axis].value_counts() if len(kept) else pd.Series(dtype="int64")
        for value, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))):
            rows.append({"axis": axis, "level": value, "pairs": int(n), "share": _div(n, len(kept))})
    return pd.DataFrame(rows, columns=["axis", "level", "pairs", "share"]).set_index(["axis", "level"])


# ---- Table 9 -----------------------------------------------------------------------------------
def votes_long(data) -> pd.DataFrame:
    """One row per (pair, judge vote) with the pair's axes: ``judge, stage, better_slot, choice,
    agrees, parse_error, swapped_choice``."""
    df = _frame(data)
    rows = []
    keep = [c for c in ("pair_id", "cell_id", "attempt", *AXES, "kept") if c in df.columns]
    for rec in df[keep + ["votes"]].itertuples(index=False):
        d = rec._asdict()
        votes = json.loads(d.pop("votes") or "[]")
        for v in votes:
            rows.append({**d, **v})
    cols = keep + ["judge", "stage", "better_slot", "choice", "agrees", "parse_error", "swapped_choice"]
    return pd.DataFrame(rows, columns=cols)


def position_table(data, by: Sequence[str] = ()) -> pd.DataFrame:
    """Table 9 per judge (and per subset of the ``by`` axes): ``better_slot1`` — how often x⁺ was
    shown in slot 1 (n, k, share, exact binomial p against 0.5); ``chose_slot1`` — how often the
    judge chose slot 1 among its parsed answers; ``parse_errors``."""
    from shopbench.stats.tests import position_balance

    v = votes_long(data)
    rows = []
    for judge in list(dict.fromkeys(v["judge"])):
        g = v[v["judge"] == judge]
        groups = [("all", "all", g)]
        for axis in by:
            groups += [(axis, val, gg) for val, gg in g.groupby(axis, sort=True)]
        for axis, val, gg in groups:
            shown = position_balance(gg["better_slot"].astype(float).to_numpy(), slot=1)
            chose = position_balance(gg["choice"].dropna().astype(float).to_numpy(), slot=1)
            rows.append({
                "judge": judge, "axis": axis, "subset": val, "n": shown["n"], "better_slot1": shown["k"],
                "better_slot1_share": shown["share"], "better_slot1_p": shown["p"], "n_choices": chose["n"],
                "chose_slot1": chose["k"], "chose_slot1_share": chose["share"], "chose_slot1_p": chose["p"],
                "parse_errors": int(gg["choice"].isna().sum()),
            })  # fmt: skip
    return pd.DataFrame(rows).set_index(["judge", "axis", "subset"]) if rows else pd.DataFrame()


# ---- Table 10 ----------------------------------------------------------------------------------
def paired_reward_test(better, worse) -> tuple[str, float]:
    """(test name, two-sided p) for paired rewards: exact McNemar (sign test on discordant pairs)
    when every reward is 0 or 1, else the Wilcoxon signed-rank test (zero differences dropped).
    p = 1.0 when no pair differs."""
    from scipy.stats import binomtest, wilcoxon

    b, w = np.asarray(better, dtype=float), np.asarray(worse, dtype=float)
    if np.isin(np.concatenate([b, w]), (0.0, 1.0)).all():
        up, down = int((b > w).sum()), int((b < w).sum())
        return "exact McNemar", float(binomtest(up, up + down, 0.5).pvalue) if up + down else 1.0
    d = b - w
    if not np.any(d != 0):
        return "Wilcoxon signed-rank", 1.0
    return "Wilcoxon signed-rank", float(wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue)


def _reward_row(g: pd.DataFrame) -> dict:
    r = g.dropna(subset=["reward_worse", "reward_better"])
    if r.empty:
        return {"n": 0, **{k: DASH for k in ("mean_better", "mean_worse", "gap", "equal", "higher", "lower",
                                              "test", "p")}}  # fmt: skip
    b, w = r["reward_better"].to_numpy(float), r["reward_worse"].to_numpy(float)
    test, p = paired_reward_test(b, w)
    return {"n": len(r), "mean_better": float(b.mean()), "mean_worse": float(w.mean()), "gap": float((b - w).mean()),
            "equal": int((b == w).sum()), "higher": int((b > w).sum()), "lower": int((b < w).sum()),
            "test": test, "p": p}  # fmt: skip


def reward_table(data) -> pd.DataFrame:
    """Table 10: environment-reward gap x⁺ − x⁻ per criterion x contrast (with ``all`` rows), for
    ``kept`` pairs and ``all`` pairs; "–" where the pairs carry no reward."""
    df = _frame(data)
    rows = []
    for subset, d in (("kept", df[df["kept"].astype(bool)]), ("all", df)):
        rows.append({"pairs": subset, "criterion": "all", "contrast": "all", **_reward_row(d)})
        for crit, g in d.groupby("criterion", sort=True):
            rows.append({"pairs": subset, "criterion": crit, "contrast": "all", **_reward_row(g)})
            for con, gg in g.groupby("contrast", sort=True):
                rows.append({"pairs": subset, "criterion": crit, "contrast": con, **_reward_row(gg)})
    return pd.DataFrame(rows).set_index(["pairs", "criterion", "contrast"])


# ---- Tables 20-21 ------------------------------------------------------------------------------
def cost_tables(logs: Mapping[str, pd.DataFrame], n_kept: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(Table 20, Table 21) from gateway call logs by pipeline role (``{"steering": df,
    "trajectories": df, "filter J1": df, ...}``, each :meth:`shopbench.llm.Gateway.log`).

    Table 20 per role and total: calls, prompt/completion tokens, token share, cost (USD), cost
    share, cost per kept pair. Table 21 per role and model: calls, cache hits, hit rate (the gateway's
    response cache); beside it the provider's prompt cache over the calls actually made (issue 14 §4):
    prompt tokens, cached-read and cache-write tokens, and ``provider_hit_rate`` = cached-read /
    prompt tokens (:func:`shopbench.llm.usage.summarize`); one ``all`` row per role."""
    from ..llm.usage import summarize as provider_cache

    t20, t21 = [], []
    for role, log in logs.items():
        log = log if log is not None else pd.DataFrame()
        for col in ("model", "prompt_tokens", "completion_tokens", "cost_usd", "cache_hit", "cached_tokens",
                    "cache_write_tokens", "status"):  # fmt: skip
            if col not in log.columns:
                log = log.assign(**{col: pd.Series(dtype="float64" if col != "model" else "object")})
        pt = float(pd.to_numeric(log["prompt_tokens"], errors="coerce").fillna(0).sum())
        ct = float(pd.to_numeric(log["completion_tokens"], errors="coerce").fillna(0).sum())
        cost = float(pd.to_numeric(log["cost_usd"], errors="coerce").fillna(0).sum())
        t20.append({"role": role, "calls": len(log), "prompt_tokens": pt, "completion_tokens": ct,
                    "tokens": pt + ct, "cost_usd": cost})  # fmt: skip
        hits = log["cache_hit"].fillna(False).astype(bool)
        for model, g in [("all", log)] + list(log.groupby("model", sort=True)):
            h = hits.loc[g.index]
            pc = provider_cache(g.to_dict("records"))
            t21.append({"role": role, "model": model, "calls": len(g), "cache_hits": int(h.sum()),
                        "hit_rate": _div(int(h.sum()), len(g)), "provider_prompt_tokens": pc["provider_prompt_tokens"],
                        "provider_cached_tokens": pc["provider_cached_tokens"],
                        "provider_cache_write_tokens": pc["provider_cache_write_tokens"],
                        "provider_hit_rate": pc["provider_cache_hit_rate"]})  # fmt: skip
    t20df = pd.DataFrame(
        t20, columns=["role", "calls", "prompt_tokens", "completion_tokens", "tokens", "cost_usd"]
    )
    tot = t20df[["calls", "prompt_tokens", "completion_tokens", "tokens", "cost_usd"]].sum()
    t20df = pd.concat([t20df, pd.DataFrame([{"role": "total", **tot.to_dict()}])], ignore_index=True)
    t20df["token_share"] = [_div(x, tot["tokens"]) for x in t20df["tokens"]]
    t20df["cost_share"] = [_div(x, tot["cost_usd"]) for x in t20df["cost_usd"]]
    t20df["cost_per_kept_pair"] = [_div(x, n_kept) for x in t20df["cost_usd"]]
    t21df = pd.DataFrame(t21, columns=["role", "model", "calls", "cache_hits", "hit_rate", "provider_prompt_tokens",
                                       "provider_cached_tokens", "provider_cache_write_tokens", "provider_hit_rate"])  # fmt: skip
    return t20df.set_index("role"), t21df.set_index(["role", "model"])
