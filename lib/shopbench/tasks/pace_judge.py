"""Task ``pace_judge`` (issue 26 §1): the model is a judge under a PACE protocol, scored on PACEShop records.

samples: PACEShop records of one split — ``-T records=FILE`` (a records JSONL in the packaged view) or
``-T records=DIR`` (a PACEShop build folder, e.g. ``outputs/<profile>/data/paceshop``), else the build
of ``-T profile`` (default ``smoke``) made here with the library's builder (same profile and seed →
byte-identical to notebook 10's; ~10 s, cached under ``outputs/tasks/data/``). ``--limit N`` keeps the
first N records of the seeded stratified order notebook 20 uses for its LLM runs
(:func:`shopbench.judges.pace.sweep.judge_units`: a BAD record or persona swap is followed by its GOOD base,
so paired metrics keep their pairs).

subject → scorers → metrics: the same calls as notebook 20 (:func:`shopbench.judges.pace.sweep.sweep`:
one call per record × epoch, through the gateway, parsed into the run table) and the same metrics as
notebook 30 (:func:`shopbench.metrics.pace.headline_table`: Table 3's S0–S4 closure columns and
false-fire, Table 4's strict paired S1 PJC, S2/S4 J-strict, S3 J-harmonic and PACE, each with a
base-record bootstrap CI; :func:`shopbench.judges.pace.sweep.parse_failures`: parse failures by kind).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from .registry import Param, task
from .scoring import finite

# the judge protocols of shopbench.judges.pace.protocols.PROTOCOLS (kept here so `shopbench list` imports
# nothing heavy; tests/test_cli_tasks.py checks the two lists are the same)
PROTOCOL_NAMES = ("pacejudge", "pacejudge_prefix_first", "geval", "mtbench_scalar_first", "persona_blind",
                  "persona_aware_generic", "ares", "personalens", "etapp")  # fmt: skip
SPLITS = ("test", "dev", "calibration", "all")


@task("pace_judge", "the model judges PACEShop records under a PACE protocol (S0-S4, strict paired metrics, "
      "false-fire, parse failures by kind)", params=[
    Param("protocol", "choice", "pacejudge", "judge protocol (prompt file + output contract)",
          choices=PROTOCOL_NAMES),
    Param("records", "path", None, "records JSONL (packaged view) or a PACEShop build folder; default: "
          "the build of `profile`, made here"),
    Param("profile", "str", "smoke", "profile whose PACEShop build is used when no records are given"),
    Param("split", "choice", "test", "which split of the records to judge", choices=SPLITS),
    Param("n_boot", "int", 1000, "bootstrap resamples per CI"),
    Param("max_tokens", "int", None, "completion token cap (default: the protocol's)"),
])  # fmt: skip
def pace_judge(**params: Any) -> PaceJudgeTask:
    return PaceJudgeTask(**params)


class PaceJudgeTask:
    name = "pace_judge"

    def __init__(self, protocol: str, records: str | None, profile: str, split: str, n_boot: int,
                 max_tokens: int | None):  # fmt: skip
        if n_boot < 0:
            raise InputError(f"-T n_boot={n_boot}: must be 0 or more")
        if max_tokens is not None and max_tokens < 1:
            raise InputError(f"-T max_tokens={max_tokens}: must be positive")
        self.protocol, self.records_path, self.profile, self.split = protocol, records, profile, split
        self.n_boot, self.max_tokens = n_boot, max_tokens
        self.selected: list = []
        self.s0_ids: list[str] | None = None
        self.data_source = ""

    # ---- samples --------------------------------------------------------------------------------
    def _load(self) -> tuple[list, list[str] | None]:
        records, s0, self.data_source = load_samples(self.records_path, self.profile)
        return records, s0

    def prepare(self, *, limit: int | None, seed: int) -> None:
        from ..judges.pace.sweep import judge_units

        records, s0 = self._load()
        if self.split != "all":
            kept = [r for r in records if r.split == self.split]
            if not kept:
                have = sorted({str(r.split) for r in records})
                raise InputError(f"no record of split {self.split!r} (the records hold {', '.join(have)})",
                                 field="split", fix="pick one with -T split=NAME, or -T split=all")  # fmt: skip
            records = kept
        by_id = {r.record_id: r for r in records}
        order = list(dict.fromkeys(i for u in judge_units(records, ("split",), seed=seed) for i in u))
        ids = order[:limit] if limit is not None else order
        self.selected = [by_id[i] for i in ids]
        chosen = set(ids)
        # S0 on the reference subset's records that were judged (all GOOD and BAD records without one)
        self.s0_ids = [i for i in s0 if i in chosen] if s0 else None
        if self.s0_ids == []:
            self.s0_ids = None

    @property
    def n_samples(self) -> int:
        return len(self.selected)

    def prompts(self) -> dict[str, str]:
        from ..judges.pace.protocols import PROTOCOLS
        from ..prompts import read_prompt

        name = PROTOCOLS[self.protocol].prompt
        return {
            name: hashlib.sha256(read_prompt(name, f"task pace_judge ({self.protocol})").encode()).hexdigest()
        }

    # ---- subject -------------------------------------------------------------------------------
    def calls(self, gateway, backbone, *, epochs: int) -> list:
        from ..judges.pace.sweep import build_calls

        return build_calls(gateway, [self.protocol], [backbone.name], self.selected, epochs, self.max_tokens)

    def run(self, gateway, backbone, *, epochs: int, run_id: str):
        """The run table of notebook 20 (:func:`~shopbench.judges.pace.sweep.sweep`), one row per record
        and epoch, with the per-sample score ``correct`` (verdict = gold label; a parse failure is wrong, a
        failed call has no score: None, issue 25 §3)."""
        return judge_runs(gateway, self.protocol, backbone.name, self.selected, epochs=epochs, run_id=run_id,
                          max_tokens=self.max_tokens, desc=f"pace_judge {self.protocol} · {backbone.name}")  # fmt: skip

    # ---- metrics -------------------------------------------------------------------------------
    def metrics(self, runs, *, seed: int) -> dict:
        """Tables 3 and 4 of notebook 30 for this one judge run (the ``backbone`` level of
        :func:`~shopbench.metrics.pace.headline_table`) and the parse failures by kind."""
        from ..judges.pace.protocols import PROTOCOLS
        from ..judges.pace.sweep import parse_failures
        from ..metrics.pace import headline_table

        native = {p.name: p.targets for p in PROTOCOLS.values()}
        head = headline_table(runs, s0_ids=self.s0_ids, n_boot=self.n_boot, seed=seed, native_targets=native)
        head = head[head["level"] == "backbone"]
        out: dict[str, Any] = {}
        for r in head.itertuples():
            if r.column in out:  # S0 is in both tables (S0 and S0_ref_acc)
                continue
            sup = bool(r.supported)
            # None: not a target of the protocol (supported false), or undefined on these samples (e.g.
            # no persona swap among them); never a number made up
            out[r.column] = {"estimate": finite(r.estimate) if sup else None, "ci_low": finite(r.ci_low) if sup else None,
                             "ci_high": finite(r.ci_high) if sup else None, "supported": sup, "table": r.table}  # fmt: skip
        return {"headline": out, "parse_failures": parse_failure_cells(parse_failures(runs)),
                "verdict_accuracy": (float(runs["correct"].dropna().astype(float).mean())
                                     if runs["parse_ok"].fillna(False).astype(bool).any() else None),
                "s0_subset": "S0 reference subset" if self.s0_ids else "every GOOD and BAD record judged",
                "protocol": self.protocol, "n_boot": self.n_boot}  # fmt: skip


def parse_failure_cells(pf) -> dict:
    """The metrics' ``parse_failures`` of one judge from its
    :func:`~shopbench.judges.pace.sweep.parse_failures` row (``pf``; None or empty: none counted): units,
    call errors, parse failures, their rate and the failures by kind (``pace_judge``, ``pace_assistant``)."""
    row = json.loads(pf.iloc[0].to_json()) if pf is not None and len(pf) else {}
    kinds = {k: v for k, v in row.items()
             if k not in ("protocol", "backbone", "n", "n_call_error", "n_parse_fail", "parse_fail_rate")}  # fmt: skip
    return {"n": row.get("n", 0), "call_errors": row.get("n_call_error", 0), "parse_failures": row.get("n_parse_fail", 0),
            "parse_failure_rate": row.get("parse_fail_rate"), "by_kind": kinds}  # fmt: skip


def load_samples(records_path: str | None, profile: str) -> tuple[list, list[str] | None, str]:
    """``(records, S0 reference ids or None, where they come from)``: ``records_path`` (a records JSONL
    in the packaged view or a PACEShop build folder), else the build of ``profile``
    (:func:`default_build`). The sample loader of ``pace_judge`` and ``pace_assistant`` (issue 26 §1)."""
    from ..core import Record
    from ..paceshop.build import load_records
    from ..paceshop.io import read_jsonl

    if records_path is None:
        folder = default_build(profile)
        return load_records(folder), _s0_ids(folder), f"PACEShop build of profile {profile} ({folder})"
    p = Path(records_path).expanduser()
    from ..export.hf import is_export

    if is_export(p):  # issue 30 item 3: a dataset folder `shopbench export paceshop` wrote
        return _exported(p)
    if p.is_dir():
        return load_records(p), _s0_ids(p), f"PACEShop build folder {p}"
    if not p.exists():
        raise InputError("no such records file or folder", file=p, field="records",
                         fix="give a records JSONL file or a PACEShop build folder (-T records=PATH)")  # fmt: skip
    return read_jsonl(p, Record, id_field="record_id",
                      fix="correct that line; see `shopbench schema pace-record` (docs/guides/files.md)"), None, f"records file {p}"  # fmt: skip


def judge_runs(gateway, protocol: str, judge: str, records: list, *, epochs: int, run_id: str,
               max_tokens: int | None, desc: str):  # fmt: skip
    """The run table of notebook 20 (:func:`~shopbench.judges.pace.sweep.sweep`) for one judge under one
    protocol, one row per record and epoch, with ``sample_id``, ``epoch``, the per-sample score ``correct``
    (verdict = gold label; a parse failure is wrong, a failed call None) and the unit's outcome ``unit_status`` / ``unit_error``
    (issue 25 §3). The judge step of ``pace_judge`` and ``pace_assistant`` (issue 26 §1)."""
    from ..judges.pace.sweep import sweep

    runs = sweep(gateway, [protocol], [judge], records, repeats=epochs, run_id=run_id, max_tokens=max_tokens,
                 desc=desc)  # fmt: skip
    return score_runs(runs)


def score_runs(runs):
    """A run table with the task's per-sample columns: ``sample_id``, ``epoch``, the score ``correct`` and
    the unit's outcome (shared by :func:`judge_runs` and ``shopbench score``'s re-parse, issue 30)."""
    ok = runs["parse_ok"].fillna(False).astype(bool)
    runs.insert(0, "sample_id", runs["record_id"])
    runs.insert(1, "epoch", runs["repeat"])
    runs["correct"] = (ok & (runs["verdict"] == runs["label"])).astype(object)
    runs.loc[runs["status"] == "error", "correct"] = None  # a failed call is no answer, never a score
    runs["unit_status"] = ["ok" if o else ("error" if s == "error" else "parse_error")
                           for o, s in zip(ok, runs["status"], strict=True)]  # fmt: skip
    runs["unit_error"] = [None if o else (e if s == "error" else pe)
                          for o, s, e, pe in zip(ok, runs["status"], runs["error"], runs["parse_error"],
                                                 strict=True)]  # fmt: skip
    return runs


def _exported(p: Path) -> tuple[list, list[str] | None, str]:
    """The records and S0 reference ids of an exported dataset folder (its ``records`` and ``subsets``
    configs; issue 30 item 3): the same records as the build it was exported from."""
    from pydantic import ValidationError

    from ..core import Record
    from ..export.hf import read_config

    out = []
    for k, row in enumerate(read_config(p, "records")):
        try:
            out.append(Record.model_validate(row))
        except ValidationError as e:
            err = e.errors()[0]
            raise InputError(err["msg"], file=p / "records", where=f"row {k} ({row.get('record_id')!r})",
                             field=".".join(str(x) for x in err["loc"]) or None,
                             fix="export the folder again from a complete build") from None  # fmt: skip
    try:
        subsets = read_config(p, "subsets")
    except InputError:
        subsets = []
    s0 = [
        r["record_id"] for r in sorted(subsets, key=lambda r: r["position"]) if r["subset"] == "s0_reference"
    ]
    return out, s0 or None, f"exported PACEShop dataset folder {p}"


def _s0_ids(folder: Path) -> list[str] | None:
    f = Path(folder) / "subsets.json"
    if not f.exists():
        return None
    return list(json.loads(f.read_text(encoding="utf-8")).get("s0_reference") or []) or None


def default_build(profile: str) -> Path:
    """The PACEShop build of ``profile`` under ``outputs/tasks/data/paceshop-<profile>/``, built with
    notebook 10's builder (offline generator) the first time and reused while its config is the same."""
    from dataclasses import asdict

    from ..config import load_profile
    from ..paceshop.build import BuildConfig, build, write
    from ..paths import outputs_root

    cfg = BuildConfig.from_profile(load_profile(profile))
    if cfg.generator != "offline":
        raise InputError(f"profile {profile}: its PACEShop generator is a model ({cfg.generator})",
                         field="profile", fix="build it with notebook 10 and pass the folder with -T records=DIR")  # fmt: skip
    folder = outputs_root() / "tasks" / "data" / f"paceshop-{Path(profile).stem}"
    man = folder / "manifest.json"
    if man.exists():
        try:
            if json.loads(man.read_text(encoding="utf-8")).get("config") == json.loads(
                json.dumps(asdict(cfg))
            ):
                return folder
        except ValueError:
            pass
    print(f"building the PACEShop records of profile {profile} (once) -> {folder}", file=sys.stderr)
    write(build(cfg, progress=False), folder, cfg)
    return folder
