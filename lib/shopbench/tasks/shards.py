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
import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, ParamError

__all__ = ["MERGEABLE", "apply_shard", "block", "merge", "parse_shard", "sample_ids"]

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


def _ids(t) -> list[str]:
    """The ids of a prepared task's samples, in its seeded order."""
    if hasattr(t, "units") and hasattr(t, "pairs_df"):  # padme_evaluator
        return [str(u.pair_id) for u in t.units]
    if getattr(t, "imported", None) is not None:  # pace_assistant with recorded outputs
        return [str(w) for w in _wheres(t.imported)]
    if hasattr(t, "items") and not hasattr(
        t, "selected"
    ):  # pace_assistant generating: (aid, query, persona, pool)
        return [str(it[0]) for it in t.items]
    sel = t.selected
    if hasattr(t, "source") and hasattr(t.source, "task_id"):  # tau2_retail_agent
        return [str(t.source.task_id(r)) for r in sel]
    return [str(getattr(s, "record_id", None) or s.trial_id) for s in sel]


def _wheres(rep) -> list:
    """The recorded outputs' places (file line), in file order (pace_assistant's ``--limit`` order)."""

    def key(w):
        m = re.search(r"\d+", str(w))
        return (int(m[0]) if m else 0, str(w))

    return sorted({o.where for o in rep.imported} | {r["where"] for r in rep.rejected}, key=key)


def sample_ids(t) -> list[str]:
    """Public: the prepared task's sample ids in its seeded order (what a shard partitions)."""
    return _ids(t)


def apply_shard(t, shard: tuple[int, int] | None) -> dict | None:
    """Keep shard ``(i, n)`` of the prepared task ``t``'s samples (module docstring); return what the
    shard's ``run.json`` records: index, count, rule, its sample ids, the total and the hash of the full
    order (which the merge checks)."""
    if shard is None:
        return None
    i, n = shard
    ids = _ids(t)
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
            "order_sha256": _order_hash(ids)}  # fmt: skip


def _order_hash(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


# ---- merge --------------------------------------------------------------------------------------
_SAME = ("task", "params", "model", "model_base_url", "seed", "limit", "epochs", "prompts", "gateway_run_id")


def _read_json(p: Path, what: str) -> dict:
    if not p.is_file():
        raise InputError(f"has no {p.name}: not a complete results log ({what})", file=p.parent,
                         fix="give the log folder a finished `shopbench eval ... --shard i/n` wrote; rerun that "
                             "shard's command to finish it")  # fmt: skip
    try:
        out = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"is truncated or corrupt ({e})", file=p,
                         fix="rerun that shard's `shopbench eval ... --shard i/n` command (it resumes; no call "
                             "is repeated)") from None  # fmt: skip
    if not isinstance(out, dict):
        raise InputError("is not a JSON object", file=p, fix="rerun that shard's command")
    return out


def _read_rows(d: Path):
    import pandas as pd

    p = d / "samples.parquet"
    if not p.is_file():
        raise InputError("has no samples.parquet: the shard did not finish", file=d,
                         fix="rerun that shard's `shopbench eval ... --shard i/n` command")  # fmt: skip
    try:
        return pd.read_parquet(p)
    except Exception as e:  # pyarrow's ArrowInvalid and friends: a cut file
        raise InputError(f"is truncated or corrupt ({type(e).__name__}: {e})", file=p,
                         fix="rerun that shard's `shopbench eval ... --shard i/n` command") from None  # fmt: skip


def _read_lines(p: Path) -> list[str]:
    data = p.read_bytes()
    if data and not data.endswith(b"\n"):
        raise InputError("ends in a cut line (a killed write)", file=p,
                         fix="rerun that shard's `shopbench eval ... --shard i/n` command: it repairs the log "
                             "and finishes")  # fmt: skip
    lines = data.decode("utf-8", errors="replace").splitlines()
    for k, line in enumerate(lines, 1):
        try:
            json.loads(line)
        except ValueError:
            raise InputError(f"line {k} is not JSON (a truncated or corrupt log)", file=p,
                             fix="rerun that shard's command") from None  # fmt: skip
    return lines


def merge(
    logs: list[str | Path],
    out: str | Path,
    caches: Sequence[str | Path] = (),
    cache_out: str | Path | None = None,
):
    """Merge shard logs into one results log at ``out`` (module docstring); returns the
    :class:`~shopbench.tasks.runner.EvalResult` of the merged run. Everything is checked and read
    before the first write; the log is written to a temporary folder renamed into place at the end."""
    import pandas as pd

    from ..secrets import redact, secret_values
    from .registry import get_task
    from .runner import EvalResult, _counts, _evidence, _write_json, _write_samples

    dirs = [Path(x).expanduser() for x in logs]
    out = Path(out).expanduser()
    if len(dirs) < 1:
        raise ParamError("give the shard logs to merge", fix="shopbench merge LOG... --out LOG")
    if out.exists() and any(out.iterdir()):
        raise InputError("already exists and is not empty", file=out, fix="give --out a new folder")
    for d in dirs:
        if not d.is_dir():
            raise InputError("is not a results log folder", file=d, fix="give the folders `shopbench eval "
                             "--shard i/n` printed after `log:`")  # fmt: skip
    runs = [_read_json(d / "run.json", "run.json") for d in dirs]
    for d, r in zip(dirs, runs, strict=True):
        if not isinstance(r.get("shard"), dict):
            raise InputError("is not a shard (its run.json has no shard)", file=d / "run.json",
                             fix="merge the logs of `shopbench eval ... --shard i/n` runs")  # fmt: skip
        if r.get("status") != "complete":
            raise InputError(f"did not finish (status {r.get('status')!r})", file=d / "run.json",
                             fix="rerun that shard's command (it resumes where it stopped)")  # fmt: skip
    first = runs[0]
    for d, r in zip(dirs[1:], runs[1:], strict=True):
        for k in _SAME:
            if json.dumps(r.get(k), sort_keys=True) != json.dumps(first.get(k), sort_keys=True):
                what = {"prompts": "prompt hashes", "seed": "seed", "task": "task"}.get(k, k)
                raise InputError(f"differs from {dirs[0]} in its {what} ({first.get(k)!r} vs {r.get(k)!r}): "
                                 "not a shard of the same run", file=d / "run.json",
                                 fix="merge only the shards of one command (same task, -T, --model, --seed, "
                                     "--limit, --epochs and prompt files)")  # fmt: skip
    n = first["shard"]["count"]
    seen: dict[int, Path] = {}
    for d, r in zip(dirs, runs, strict=True):
        s = r["shard"]
        if s["count"] != n:
            raise InputError(f"is shard {s['index']}/{s['count']}, the others are of {n}", file=d / "run.json",
                             fix="merge the shards of one --shard i/n split")  # fmt: skip
        if s["index"] in seen:
            raise InputError(f"is shard {s['index']}/{n} again (also {seen[s['index']]}): the shards overlap",
                             file=d, fix="give each shard's log once")  # fmt: skip
        seen[s["index"]] = d
    missing = [i for i in range(n) if i not in seen]
    if missing:
        raise InputError(f"the shards miss {', '.join(f'{i}/{n}' for i in missing)}: samples are missing",
                         file=dirs[0].parent,
                         fix=f"run `shopbench eval ... --shard {missing[0]}/{n}` and merge its log too")  # fmt: skip
    order = sorted(range(len(dirs)), key=lambda k: runs[k]["shard"]["index"])
    dirs, runs = [dirs[k] for k in order], [runs[k] for k in order]
    all_ids = [x for r in runs for x in r["shard"]["sample_ids"]]
    dup = sorted({x for x in all_ids if all_ids.count(x) > 1}) if len(set(all_ids)) != len(all_ids) else []
    if dup:
        raise InputError(f"the shards overlap: sample {dup[0]!r} is in more than one", file=dirs[0].parent,
                         fix="rerun the shards of one --shard i/n split with the same command")  # fmt: skip
    if len(all_ids) != first["shard"]["total"] or _order_hash(all_ids) != first["shard"]["order_sha256"]:
        raise InputError(f"the shards' samples ({len(all_ids)}) are not the run's {first['shard']['total']} in "
                         "its order", file=dirs[0].parent, fix="rerun the shards with the same command")  # fmt: skip
    task = first["task"]
    if task not in MERGEABLE:
        raise InputError(f"merging {task} shards is not supported: its metrics read the run's side tables",
                         file=dirs[0], fix=f"run {task} unsharded (tasks that merge: {', '.join(MERGEABLE)})")  # fmt: skip
    frames = []
    for d, r in zip(dirs, runs, strict=True):
        rows = _read_rows(d)
        extra = set(rows["sample_id"].astype(str)) - set(r["shard"]["sample_ids"])
        if extra:
            raise InputError(f"holds sample {sorted(extra)[0]!r}, not of its shard", file=d / "samples.parquet",
                             fix="rerun that shard's command into a new --log-dir")  # fmt: skip
        frames.append(rows)
    metrics0 = [_read_json(d / "metrics.json", "metrics.json") for d in dirs]
    call_files: dict[str, list[str]] = {}
    stores: dict[str, list[str]] = {}
    for d in dirs:
        for f in sorted(d.rglob("*.jsonl")):
            rel = f.relative_to(d).as_posix()
            if rel in ("samples.jsonl",):
                continue
            (call_files if rel.startswith("calls/") else stores).setdefault(rel, []).extend(_read_lines(f))
    cache_dbs = [_read_cache(_cache_db(Path(c).expanduser())) for c in caches]
    # ---- the merged rows, in the unsharded order; the metrics of the task rebuilt unsharded
    rows = pd.concat(frames, ignore_index=True)
    if _epoch_major(frames):
        rows = rows.sort_values("epoch", kind="stable").reset_index(drop=True)
    t, _ = get_task(task).build(first["params"])
    t.prepare(limit=first["limit"], seed=first["seed"])
    if isinstance(metrics0[0].get("judge"), str):
        t.judge_name = metrics0[0]["judge"]  # shop_agent: the judge's name its run set
    metrics = t.metrics(rows, seed=first["seed"])
    if "agent" in metrics0[0]:
        metrics["agent"] = metrics0[0]["agent"]
    metrics["units"] = _counts(rows)
    metrics["evidence"] = metrics0[0].get("evidence") or _evidence(None, metrics["units"]["ok"] > 0)
    # ---- write (a temporary folder, renamed into place)
    secrets = secret_values()
    tmp = out.with_name(f".{out.name}.merging")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        for col in rows.columns:
            if rows[col].dtype == object:
                rows[col] = [redact(v, secrets) if isinstance(v, str) else v for v in rows[col]]
        _write_samples(tmp, rows)
        _write_json(tmp / "metrics.json", _redact_obj(metrics, secrets))
        for rel, lines in {**call_files, **stores}.items():
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(redact(x, secrets) + "\n" for x in lines), encoding="utf-8")
        gw = {k: sum((r.get("gateway") or {}).get(k) or 0 for r in runs)
              for k in ("calls", "cache_hits", "errors", "parse_errors", "cost_usd")}  # fmt: skip
        prov = {k: v for k, v in first.items() if k not in ("shard", "gateway", "status")}
        prov |= {"samples": first["shard"]["total"], "status": "complete", "gateway": gw,
                 "merged_from": [{"log": str(d.resolve()), "shard": f"{r['shard']['index']}/{n}",
                                  "samples": len(r["shard"]["sample_ids"]), "git_commit": r.get("git_commit"),
                                  "date": r.get("date")} for d, r in zip(dirs, runs, strict=True)],
                 "shard_rule": RULE}  # fmt: skip
        _write_json(tmp / "run.json", _redact_obj(prov, secrets))
        if out.exists():
            out.rmdir()
        tmp.replace(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    n_cached = _merge_caches(cache_dbs, cache_out) if cache_dbs else 0
    prov["caches_merged"] = n_cached
    return EvalResult(task, first.get("model") or str(metrics.get("agent")), rows, metrics, out, prov)


def _redact_obj(x, secrets):
    from ..secrets import redact

    if isinstance(x, str):
        return redact(x, secrets)
    if isinstance(x, dict):
        return {k: _redact_obj(v, secrets) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_redact_obj(v, secrets) for v in x]
    return x


def _epoch_major(frames) -> bool:
    """Whether the task writes every sample of epoch 0 before epoch 1 (the agent tasks) rather than each
    sample's epochs together: the shards' own rows tell (a shard whose rows are not sorted by epoch is
    sample-major)."""
    for f in frames:
        e = f["epoch"].to_numpy()
        if len(e) > 1 and (e[1:] < e[:-1]).any():
            return False
    return True


def _cache_db(d: Path) -> Path:
    p = d / "responses.sqlite" if d.is_dir() else d
    if not p.is_file():
        raise InputError("holds no response cache (responses.sqlite)", file=d,
                         fix="give --cache the SHOPBENCH_CACHE_DIR a shard ran with")  # fmt: skip
    return p


def _read_cache(p: Path) -> list[tuple]:
    """Every (key, answer, time) of a shard's response cache (read before anything is written)."""
    import sqlite3

    src = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    try:
        return src.execute("SELECT key, value, created FROM responses").fetchall()
    except sqlite3.DatabaseError as e:
        raise InputError(f"is not a response cache ({e})", file=p,
                         fix="give --cache the SHOPBENCH_CACHE_DIR a shard ran with") from None  # fmt: skip
    finally:
        src.close()


def _merge_caches(caches: list[list[tuple]], cache_out: str | Path | None) -> int:
    """Copy every answer of the shards' response caches into ``cache_out`` (default this machine's cache
    dir); answers are keyed by the hash of what was asked, so a key present twice holds the same answer."""
    from ..llm.cache import ResponseCache
    from ..paths import default_cache_dir

    dest = ResponseCache(cache_out or default_cache_dir())
    con = dest._conn()
    n = 0
    for rows in caches:
        con.execute("BEGIN IMMEDIATE")
        con.executemany("INSERT OR IGNORE INTO responses (key, value, created) VALUES (?, ?, ?)", rows)
        con.execute("COMMIT")
        n += len(rows)
    return n
