"""``shopbench merge`` (issue 30 item 4): shard logs of one run → the unsharded run's results log,
its metrics recomputed on the shards' rows (the same digits as one machine's run), call logs and caches
merged. Above the runner, whose writers it reuses; the partition itself is :mod:`.shards`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, ParamError
from ..paths import staged_folder
from .shards import MERGEABLE, RULE, order_hash

__all__ = ["merge"]

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

    from ..secrets import redact, redact_tree, secret_values
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
    if len(all_ids) != first["shard"]["total"] or order_hash(all_ids) != first["shard"]["order_sha256"]:
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
    with staged_folder(out, "merging") as tmp:
        for col in rows.columns:
            if rows[col].dtype == object:
                rows[col] = [redact(v, secrets) if isinstance(v, str) else v for v in rows[col]]
        _write_samples(tmp, rows)
        _write_json(tmp / "metrics.json", redact_tree(metrics, secrets))
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
        _write_json(tmp / "run.json", redact_tree(prov, secrets))
    n_cached = _merge_caches(cache_dbs, cache_out) if cache_dbs else 0
    prov["caches_merged"] = n_cached
    return EvalResult(task, first.get("model") or str(metrics.get("agent")), rows, metrics, out, prov)


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
