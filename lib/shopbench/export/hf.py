"""``shopbench export NAME --out DIR``: a Hugging Face dataset folder (issue 30 item 3).

The folder holds one parquet file per table (``<config>/train-00000-of-00001.parquet``) and a
``README.md`` dataset card whose YAML header lists, as the Hub and ``datasets`` read them:
``configs:`` (one per table, with its ``data_files``), ``dataset_info:`` (each config's features and row
count), ``license:``, and a ``shopbench:`` block with the provenance (what was exported, from where,
the build's seed, generator and profile, the git commit, the date) and the columns stored as JSON text.
``datasets.load_dataset(DIR, "records")`` loads a config offline.

Columns: a table's scalar fields are parquet columns of their type; a field holding objects or lists
(a record's persona, evidence and response, a pair's rollouts) is one column of JSON text, named in
the card (``shopbench.json_columns``), so every config has one flat, stable schema the Hub's viewer
shows and a row reads back exactly (:func:`read_config`). Each config has one split, ``train`` (the
records' own train/dev/test split is their ``split`` column).

What is exported (NAME, and the folder read: ``--from PATH``, else ``outputs/<profile>/...`` of
``--profile``, else of the profile whose folder was written last):

- ``paceshop`` (``data/paceshop``, a notebook-10 build): ``records`` (the packaged view), ``gold_labels``
  (label, kind, tier, defect family and location, base record, swap axis per record), ``swaps``,
  ``evidence_pools``, ``subsets`` (the named subsets: S0 reference, swap slice, ...), ``queries``,
  ``personas``;
- ``padme`` (``data/padme``): ``pairs`` (``dataset/pairs.jsonl``, or the cascades' pairs) and
  ``rollouts`` (each side of each pair once);
- ``shop`` (``data/shopsim``): ``scenarios`` (one per trial) and ``trajectories`` (one per trial and
  agent), ``scores`` when notebook 80 wrote them;
- ``annotations`` (``annotations/``): every answer row of every annotator file.

Every string written (cells, card) passes the call log's redaction (:func:`shopbench.secrets.redact`):
a secret of the environment never reaches the folder. A folder written here is also a task input:
``shopbench eval pace_judge -T records=DIR`` reads its ``records`` and ``subsets`` configs.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..paths import staged_folder

__all__ = ["KINDS", "export", "is_export", "read_config"]

KINDS = ("paceshop", "padme", "shop", "annotations")
CARD = "README.md"
SPLIT = "train"
_WHERE = {"paceshop": ("data", "paceshop"), "padme": ("data", "padme"), "shop": ("data", "shopsim"),
          "annotations": ("annotations",)}  # fmt: skip


# ---- inputs ----------------------------------------------------------------------------------------
def _source(name: str, profile: str | None, source: str | Path | None) -> tuple[Path, str | None]:
    from ..paths import outputs_root

    if source is not None:
        p = Path(source).expanduser()
        if not p.is_dir():
            raise InputError("no such folder", file=p, fix=f"give --from the folder of the {name} outputs")
        return p, profile
    root = outputs_root()
    if profile is not None:
        p = root / Path(profile).stem / Path(*_WHERE[name])
        if not p.is_dir():
            raise InputError(f"profile {profile} has no {name} outputs", file=p,
                             fix=f"run its notebooks (shopbench.pipeline run --profile {profile}), or give --from PATH")  # fmt: skip
        return p, Path(profile).stem
    found = [(d / Path(*_WHERE[name])) for d in root.iterdir() if d.is_dir()] if root.is_dir() else []
    found = [p for p in found if p.is_dir() and any(p.iterdir())]
    if not found:
        raise InputError(f"no profile has {name} outputs", file=root,
                         fix="run the notebooks of a profile, or give --profile NAME or --from PATH")  # fmt: skip
    p = max(found, key=lambda q: max(f.stat().st_mtime for f in q.rglob("*")))
    return p, p.relative_to(root).parts[0]


def _jsonl(p: Path) -> list[dict]:
    out = []
    with p.open(encoding="utf-8") as f:
        for k, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except ValueError:
                raise InputError(
                    f"line {k} is not JSON", file=p, fix="rebuild that file with its notebook"
                ) from None
    return out


def _need(p: Path, fix: str) -> Path:
    if not p.exists():
        raise InputError("is missing", file=p, fix=fix)
    return p


def _paceshop(d: Path) -> tuple[dict[str, list[dict]], dict]:
    fix = "export a complete notebook-10 build (outputs/<profile>/data/paceshop)"
    man = json.loads(_need(d / "manifest.json", fix).read_text(encoding="utf-8"))
    records = _jsonl(_need(d / "records_packaged.jsonl", fix))
    gold = [{k: r.get(k) for k in ("record_id", "split", "label", "kind", "tier", "gold_family", "gold_location",
                                   "base_record_id", "swap_axis", "generator")}
            | {"defects": r.get("defects") or []} for r in records]  # fmt: skip
    tables = {"records": records, "gold_labels": gold}
    if (d / "swaps.json").exists():
        tables["swaps"] = list(json.loads((d / "swaps.json").read_text(encoding="utf-8")).get("swaps") or [])
    if (d / "evidence_pools.jsonl").exists():
        tables["evidence_pools"] = _jsonl(d / "evidence_pools.jsonl")
    if (d / "subsets.json").exists():
        subs = json.loads((d / "subsets.json").read_text(encoding="utf-8"))
        tables["subsets"] = [{"subset": k, "position": i, "record_id": x}
                             for k, v in subs.items() for i, x in enumerate(v or [])]  # fmt: skip
    for name in ("queries", "personas"):
        if (d / f"{name}.jsonl").exists():
            tables[name] = _jsonl(d / f"{name}.jsonl")
    cfg = man.get("config") or {}
    return tables, {"seed": cfg.get("seed"), "generator": cfg.get("generator"), "build_config": cfg}


def _padme(d: Path) -> tuple[dict[str, list[dict]], dict]:
    f = d / "dataset" / "pairs.jsonl"
    if f.exists():
        pairs = _jsonl(f)
    else:
        pairs = [r for c in sorted(d.glob("cascade_*.jsonl")) for r in _jsonl(c)]
    if not pairs:
        raise InputError("holds no PADME pairs (dataset/pairs.jsonl or cascade_*.jsonl)", file=d,
                         fix="run notebook 40 of the profile, or give --from the data/padme folder")  # fmt: skip
    rollouts: dict[str, dict] = {}
    for q in pairs:
        for side in ("worse", "better"):
            r = q.get(side)
            if isinstance(r, dict) and r.get("rollout_id") not in rollouts:
                rollouts[r["rollout_id"]] = r
    flat = [{k: v for k, v in q.items() if k not in ("worse", "better")}
            | {"worse_id": (q.get("worse") or {}).get("rollout_id"), "better_id": (q.get("better") or {}).get("rollout_id")}
            for q in pairs]  # fmt: skip
    seeds: list = sorted({r["seed"] for r in rollouts.values() if r.get("seed") is not None})
    return {"pairs": flat, "rollouts": list(rollouts.values())}, {"seed": seeds[0] if len(seeds) == 1 else seeds,
                                                                  "generator": "notebook 40 (PADME synthesis)"}  # fmt: skip


def _shop(d: Path) -> tuple[dict[str, list[dict]], dict]:
    files = sorted((d / "trajectories").glob("*.jsonl")) if (d / "trajectories").is_dir() else []
    if not files:
        raise InputError("holds no trajectories (trajectories/*.jsonl)", file=d,
                         fix="run notebook 80 of the profile, or give --from the data/shopsim folder")  # fmt: skip
    trajs, scen = [], {}
    for f in files:
        for t in _jsonl(f):
            s = t.get("scenario") or {}
            sid = s.get("scenario_id") or t.get("trial_id")
            if sid not in scen:
                scen[sid] = {"scenario_id": sid} | s
            trajs.append({"trial_id": t.get("trial_id"), "agent": t.get("agent"), "scenario_id": sid}
                         | {k: v for k, v in t.items() if k not in ("scenario", "trial_id", "agent")})  # fmt: skip
    tables: dict[str, list[dict]] = {"scenarios": list(scen.values()), "trajectories": trajs}
    if (d / "scores.parquet").exists():
        import pandas as pd

        tables["scores"] = json.loads(pd.read_parquet(d / "scores.parquet").to_json(orient="records"))
    return tables, {"seed": None, "generator": "notebook 80 (shop simulator)"}


def _annotations(d: Path) -> tuple[dict[str, list[dict]], dict]:
    rows = []
    for f in sorted(d.glob("*.jsonl")):
        for r in _jsonl(f):
            rows.append({"annotator_file": f.stem} | r)
    if not rows:
        raise InputError("holds no annotation file (<annotator>.jsonl)", file=d,
                         fix="give --from the folder the annotation page wrote (outputs/<profile>/annotations)")  # fmt: skip
    return {"annotations": rows}, {"seed": None, "generator": "human annotators (notebook 60 page)"}


# ---- tables ----------------------------------------------------------------------------------------
def _table(rows: list[dict], secrets) -> tuple[Any, list[str]]:
    """A pyarrow table: scalar columns typed, columns holding objects/lists (or mixed types) as JSON text."""
    import pyarrow as pa

    from ..secrets import redact

    cols: list[str] = list(dict.fromkeys(k for r in rows for k in r))
    data, json_cols = {}, []
    for c in cols:
        vals = [r.get(c) for r in rows]
        kinds = {type(v) for v in vals if v is not None}
        if kinds & {dict, list, tuple} or len(kinds - {int} if kinds == {int, float} else kinds) > 1:
            json_cols.append(c)
            arr = pa.array([None if v is None else redact(json.dumps(v, ensure_ascii=False, sort_keys=False), secrets)
                            for v in vals], pa.string())  # fmt: skip
        elif kinds == {str}:
            arr = pa.array([None if v is None else redact(v, secrets) for v in vals], pa.string())
        elif kinds == {bool}:
            arr = pa.array(vals, pa.bool_())
        elif kinds == {int}:
            arr = pa.array(vals, pa.int64())
        elif kinds <= {int, float} and kinds:
            arr = pa.array([None if v is None else float(v) for v in vals], pa.float64())
        else:  # only nulls
            arr = pa.array(vals, pa.string())
        data[c] = arr
    return pa.table(data), json_cols


_DTYPE = {"string": "string", "int64": "int64", "double": "float64", "bool": "bool"}


def _features(tbl) -> list[dict]:
    return [{"name": f.name, "dtype": _DTYPE[str(f.type)]} for f in tbl.schema]


def export(name: str, out: str | Path, *, profile: str | None = None, source: str | Path | None = None,
           license: str = "other") -> tuple[Path, dict[str, int]]:  # fmt: skip
    """Write the dataset folder ``out`` for ``name`` (module docstring); returns ``(out, {config: rows})``.
    The folder is written beside ``out`` and renamed into place: a failure leaves nothing."""
    import pyarrow.parquet as pq
    import yaml

    from .. import __version__
    from ..report.artifacts import git_commit, now_iso
    from ..secrets import redact, secret_values

    if name not in KINDS:
        raise InputError(f"nothing named {name!r} to export", fix=f"one of {', '.join(KINDS)}")
    out = Path(out).expanduser()
    if out.exists() and any(out.iterdir()):
        raise InputError("already exists and is not empty", file=out, fix="give --out a new folder")
    src, prof = _source(name, profile, source)
    tables, meta = {"paceshop": _paceshop, "padme": _padme, "shop": _shop, "annotations": _annotations}[name](
        src
    )
    secrets = secret_values()
    with staged_folder(out, "exporting") as tmp:
        configs, infos, json_cols, counts = [], [], {}, {}
        for cfg, rows in tables.items():
            tbl, jc = _table(rows, secrets)
            rel = f"{cfg}/{SPLIT}-00000-of-00001.parquet"
            (tmp / cfg).mkdir()
            pq.write_table(tbl, tmp / rel)
            configs.append({"config_name": cfg, "data_files": [{"split": SPLIT, "path": rel}]})
            infos.append({"config_name": cfg, "features": _features(tbl),
                          "splits": [{"name": SPLIT, "num_bytes": int(tbl.nbytes), "num_examples": tbl.num_rows}]})  # fmt: skip
            json_cols[cfg] = jc
            counts[cfg] = tbl.num_rows
        prov = {"name": name, "source": str(src.resolve()), "profile": prof, "seed": meta.get("seed"),
                "generator": meta.get("generator"), "git_commit": os.environ.get("SHOPBENCH_GIT_COMMIT") or git_commit(),
                "shopbench": __version__, "exported": now_iso(), "json_columns": json_cols}  # fmt: skip
        if meta.get("build_config"):
            prov["build_config"] = meta["build_config"]
        header = {"license": license, "pretty_name": f"shopbench {name}", "configs": configs,
                  "dataset_info": infos, "shopbench": prov}  # fmt: skip
        body = _card_body(name, prov, counts, json_cols)
        text = "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n\n" + body
        (tmp / CARD).write_text(redact(text, secrets), encoding="utf-8")
    return out, counts


def _card_body(name: str, prov: dict, counts: dict, json_cols: dict) -> str:
    lines = [f"# shopbench {name}", "",
             f"Exported by `shopbench export {name}` (shopbench {prov['shopbench']}, commit {prov['git_commit']}) "
             f"from `{prov['source']}` (profile {prov['profile']}, seed {prov['seed']}, generator {prov['generator']}).",
             "", "| config | rows | columns stored as JSON text |", "|---|---|---|"]  # fmt: skip
    lines += [f"| {c} | {n} | {', '.join(json_cols[c]) or '–'} |" for c, n in counts.items()]
    lines += ["", "```python", "import datasets", f'ds = datasets.load_dataset("path/to/this/folder", "{next(iter(counts))}")',
              "```", "", "Columns named as JSON text hold one JSON value per row (`json.loads`). The license above "
              "is `other` unless the exporter set one: the data is synthetic output of the shopbench workbench; "
              "check the terms of any model or source it was made from before publishing.", ""]  # fmt: skip
    return "\n".join(lines)


# ---- reading back ----------------------------------------------------------------------------------
def _header(d: Path) -> dict | None:
    p = d / CARD
    if not p.is_file():
        return None
    import yaml

    text = p.read_text(encoding="utf-8")
    if not text.startswith("---\n") or "\n---" not in text[4:]:
        return None
    try:
        h = yaml.safe_load(text[4 : text.index("\n---", 4)])
    except yaml.YAMLError:
        return None
    return h if isinstance(h, dict) and isinstance(h.get("shopbench"), dict) else None


def is_export(path: str | Path) -> bool:
    """Whether ``path`` is a dataset folder :func:`export` wrote (its card has the ``shopbench`` block)."""
    p = Path(path).expanduser()
    return p.is_dir() and _header(p) is not None


def read_config(path: str | Path, config: str) -> list[dict]:
    """The rows of ``config`` of an exported folder, JSON-text columns decoded: the exported rows back.
    A folder without that config is an :class:`~shopbench.errors.InputError` naming it."""
    import pyarrow.parquet as pq

    d = Path(path).expanduser()
    h = _header(d)
    if h is None:
        raise InputError("is not a shopbench dataset folder (no README.md card with a shopbench block)", file=d,
                         fix="give a folder `shopbench export` wrote")  # fmt: skip
    cfg = next((c for c in h.get("configs") or [] if c.get("config_name") == config), None)
    if cfg is None:
        have = [c.get("config_name") for c in h.get("configs") or []]
        raise InputError(f"has no config {config!r} (it has {', '.join(map(str, have))})", file=d / CARD,
                         fix=f"export it again with `shopbench export {h['shopbench'].get('name')} --out DIR`")  # fmt: skip
    jc = set((h["shopbench"].get("json_columns") or {}).get(config) or [])
    rows: list[dict] = []
    for f in cfg.get("data_files") or []:
        p = d / f["path"]
        if not p.is_file():
            raise InputError(
                f"config {config!r}: its data file is missing", file=p, fix="export the folder again"
            )
        try:
            tbl = pq.read_table(p)
        except Exception as e:
            raise InputError(
                f"is truncated or corrupt ({type(e).__name__})", file=p, fix="export the folder again"
            ) from None
        for r in tbl.to_pylist():
            rows.append({k: (json.loads(v) if k in jc and v is not None else v) for k, v in r.items()})
    return rows


def fingerprint(path: str | Path) -> str:
    """sha256 over the folder's files (a dataset folder's identity in a run's provenance)."""
    d = Path(path).expanduser()
    h = hashlib.sha256()
    for f in sorted(q for q in d.rglob("*") if q.is_file()):
        h.update(f.relative_to(d).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()
