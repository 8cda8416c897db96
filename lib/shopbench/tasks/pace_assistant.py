"""Task ``pace_assistant`` (issue 26 §1): the model is the shopping assistant writing the four-field
response, or an existing assistant's outputs are imported; scored by the 12 checks and a PACE judge.

samples, one of

- the model writes them (default): PACEShop inputs (query, persona, evidence pool) of the test split
  in the seeded order of notebook 10's L4/L5 slices (:func:`shopbench.paceshop.slices.record_inputs`;
  ``--limit N`` keeps the first N), from ``-T records=DIR|FILE`` or the build of ``-T profile`` (the
  sample loader of ``pace_judge``); the model answers the B.9 prompt under the JSON contract
  ``-T variant`` (:class:`shopbench.paceshop.generate.LLMGenerator`: the call, the parse and the
  acceptance rule notebook 10 uses for LLM GOOD generation and the L4 slice);
- ``-T responses=FILE``: an assistant's recorded outputs, ``-T schema=relaxed`` (default; the L5
  import path of notebook 10, :func:`shopbench.paceshop.relaxed.load_relaxed`: aliases, repairs
  recorded per output, unusable outputs rejected with their reason) or ``-T schema=strict``
  (:func:`~shopbench.paceshop.relaxed.read_strict`: the contract as it is; a line that breaks it stops
  the run with one message naming file, line, output and field). ``--model`` then only names the
  assistant (nothing is called for it). An output naming an ``assignment_id`` of the PACEShop build
  takes the persona and evidence pool of that input when it brings none of its own.

scorers: the 12 deterministic checks (:func:`shopbench.paceshop.checks.run_checks`) and the acceptance
rule of B.9 (hard checks, :data:`~shopbench.paceshop.generate.HARD_CHECKS`); then a judge
(``-T judge=MODEL``, default ``local/checks``; ``-T judge_base_url`` for a server) under a PACE
protocol (``-T protocol``, default ``pacejudge``) through the same judge step as ``pace_judge``
(:func:`shopbench.tasks.pace_judge.judge_runs`, notebook 20's sweep), once per output and epoch. An
output without a persona (none given, none from the build) is not judged: persona claims withheld
(Table 16).

metrics (bootstrap 95% CIs over outputs): accepted rate (every sample in the denominator: a failed call
or a rejected output is not accepted), all-12 pass rate and the pass rate of each check (over outputs
with a response), the judge's GOOD share and mean axis scores s_P, s_C, s_E, s_F (§4.1; ``None`` for an
axis the protocol does not score), its verdict / defect-family / location distributions, and the
assistant's and the judge's units counted apart (ok / parse failure / call error, issue 25 §3).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from .pace_judge import PROTOCOL_NAMES, parse_failure_cells
from .registry import Param, task
from .scoring import finite

VARIANT_NAMES = ("b9", "b9_grammar", "b9_grammar_labels_first")  # shopbench.paceshop.generate.VARIANTS
AXES = (("s_P", "persona_alignment"), ("s_C", "component_consistency"), ("s_E", "evidence_grounding"),
        ("s_F", "format_safety"))  # fmt: skip


@task("pace_assistant", "the model writes the four-field shopping response (B.9 prompt) for PACEShop inputs, "
      "or -T responses=FILE imports an assistant's outputs; 12 checks, acceptance and a PACE judge", params=[
    Param("responses", "path", None, "a file of an assistant's outputs to score (JSON lines); default: the "
          "model writes them"),
    Param("schema", "choice", "relaxed", "schema of the responses file", choices=("relaxed", "strict")),
    Param("judge", "str", "local/checks", "the judge model (litellm name; local/checks is the L1 baseline)"),
    Param("judge_base_url", "str", None, "an OpenAI-compatible server of the judge (then judge=openai/NAME)"),
    Param("protocol", "choice", "pacejudge", "the judge's PACE protocol", choices=PROTOCOL_NAMES),
    Param("variant", "choice", "b9", "the generation contract (b9: the paper's)", choices=VARIANT_NAMES),
    Param("records", "path", None, "records JSONL or PACEShop build folder (inputs; assignment ids of "
          "imported outputs); default: the build of `profile`"),
    Param("profile", "str", "smoke", "profile whose PACEShop build is used when no records are given"),
    Param("n_boot", "int", 1000, "bootstrap resamples per CI"),
    Param("judge_max_tokens", "int", None, "the judge's completion token cap (default: the protocol's)"),
])  # fmt: skip
def pace_assistant(**params: Any) -> PaceAssistantTask:
    return PaceAssistantTask(**params)


class PaceAssistantTask:
    name = "pace_assistant"

    def __init__(self, responses: str | None, schema: str, judge: str, judge_base_url: str | None,
                 protocol: str, variant: str, records: str | None, profile: str, n_boot: int,
                 judge_max_tokens: int | None):  # fmt: skip
        if n_boot < 0:
            raise InputError(f"-T n_boot={n_boot}: must be 0 or more")
        if judge_max_tokens is not None and judge_max_tokens < 1:
            raise InputError(f"-T judge_max_tokens={judge_max_tokens}: must be positive")
        self.responses, self.schema, self.protocol, self.variant = responses, schema, protocol, variant
        self.records_path, self.profile, self.n_boot, self.judge_max_tokens = (
            records,
            profile,
            n_boot,
            judge_max_tokens,
        )
        from .runner import _backbone

        self.judge = _backbone(judge, judge_base_url)  # a judge nothing can serve: one message, exit 2
        self.calls_model = responses is None  # with recorded outputs --model only names the assistant
        self.items: list = []  # generation: (aid, Query, Persona, EvidencePool)
        self.imported: Any = None  # import: ImportReport (limited)
        self.context: dict[str, Any] = {}  # assignment id -> its build GOOD record
        self.notes: list[str] = []
        self.data_source = ""

    # ---- samples --------------------------------------------------------------------------------
    def _build(self) -> tuple[list, dict, dict]:
        from ..core import EvidencePool, Query
        from ..paceshop.io import read_jsonl
        from .pace_judge import default_build, load_samples

        records, _, source = load_samples(self.records_path, self.profile)
        folder = (
            default_build(self.profile) if self.records_path is None else Path(self.records_path).expanduser()
        )
        queries, pools = {}, {}
        if folder.is_dir() and (folder / "evidence_pools.jsonl").exists():
            queries = {q.query_id: q for q in read_jsonl(folder / "queries.jsonl", Query)}
            pools = {p.query_id: p for p in read_jsonl(folder / "evidence_pools.jsonl", EvidencePool)}
        self._source = source
        return records, queries, pools

    def prepare(self, *, limit: int | None, seed: int) -> None:
        from ..paceshop.slices import record_inputs

        if self.responses is None:
            records, queries, pools = self._build()
            inputs = record_inputs(records, limit, seed, queries, pools)
            if not inputs:
                raise InputError("the records hold no test-split GOOD record to take inputs from", field="records",
                                 fix="give a PACEShop build folder (-T records=DIR)")  # fmt: skip
            self.items = [it for it, _ in inputs]
            self.data_source = f"test inputs of {self._source}, L4/L5 seeded order"
            return
        rep = self._import()
        n_all = len(rep.imported) + len(rep.rejected)
        keep = _first_n(rep, limit)
        rep.imported = [o for o in rep.imported if o.where in keep]
        rep.rejected = [r for r in rep.rejected if r["where"] in keep]
        self.imported = rep
        self.data_source = f"{self.schema}-schema outputs {rep.file} ({len(keep)} of {n_all})"
        if any(o.assignment_id and (o.persona is None or o.candidate_ids is None) for o in rep.imported):
            records, _, _ = self._build()
            self.context = {r.assignment_id: r for r in records if r.kind == "good"}
            self.data_source += f"; inputs of {self._source}"

    def _import(self):
        from ..paceshop.relaxed import load_relaxed, read_strict

        p = Path(self.responses).expanduser()  # type: ignore[arg-type]
        if not p.is_file():
            raise InputError("no such responses file", file=p, field="responses",
                             fix="give a JSON-lines file of assistant outputs (-T responses=FILE; docs/guides/assistant.md)")  # fmt: skip
        return read_strict(p) if self.schema == "strict" else load_relaxed(p)

    @property
    def n_samples(self) -> int:
        if self.imported is not None:
            return len(self.imported.imported) + len(self.imported.rejected)
        return len(self.items)

    def prompts(self) -> dict[str, str]:
        from ..judges.pace.protocols import PROTOCOLS
        from ..paceshop.generate import LABELS_FIRST_PROMPT, PROMPT_NAME
        from ..prompts import read_prompt

        def sha(name: str) -> str:
            return hashlib.sha256(read_prompt(name, "task pace_assistant").encode()).hexdigest()

        jp = PROTOCOLS[self.protocol].prompt
        out = {jp: sha(jp)}
        if self.responses is None:
            out[PROMPT_NAME] = sha(PROMPT_NAME)
            if self.variant == "b9_grammar_labels_first":
                out[LABELS_FIRST_PROMPT] = sha(LABELS_FIRST_PROMPT)
        else:  # the file's content is part of the run's identity: a changed file is a new run
            p = Path(self.responses).expanduser()
            out[f"responses:{p.name}"] = hashlib.sha256(p.read_bytes()).hexdigest()
        return out

    # ---- subject -------------------------------------------------------------------------------
    def _generator(self, gateway, backbone):
        from ..paceshop.generate import PROMPT_NAME, LLMGenerator
        from ..prompts import Prompt, read_prompt

        text = read_prompt(PROMPT_NAME, "task pace_assistant")
        prompt = Prompt(
            PROMPT_NAME, text, hashlib.sha256(text.encode()).hexdigest()
        )  # as ctx.prompt gives it
        return LLMGenerator(gateway, backbone.name, prompt, variant=self.variant)

    def calls(self, gateway, backbone, *, epochs: int) -> list:
        """The assistant's calls (one per input) and the judge's (one per output and epoch; for
        generated outputs the judge's calls are known only once they are written, so a preview counts
        one per input and epoch)."""
        from ..judges.pace.sweep import build_calls

        self._add_judge(gateway)
        if self.responses is None:
            return self._generator(gateway, backbone).calls(self.items)
        recs = [r for r, _ in self._judge_records()]
        return build_calls(gateway, [self.protocol], [self.judge.name], recs, epochs, self.judge_max_tokens)

    def _add_judge(self, gateway) -> None:
        gateway.backbones.setdefault(self.judge.name, self.judge)

    def _samples(self, gateway, backbone, run_id: str) -> list[dict]:
        """One dict per sample: its response (or why there is none), checks, acceptance and context."""
        from ..paceshop.generate import HARD_CHECKS
        from ..paceshop.relaxed import output_checks

        out: list[dict] = []
        if self.responses is None:
            gen = self._generator(gateway, backbone)
            rows = gateway.run(gen.calls(self.items), f"{run_id}/assistant",
                               desc=f"pace_assistant · {backbone.name} writes")  # fmt: skip
            for it, a in zip(self.items, gen.assess(rows, self.items), strict=True):
                aid, q, persona, pool = it
                row = a.row or {}
                out.append({"sample_id": aid, "assignment_id": aid, "query": q.query, "source": "generated",
                            "where": "", "status": a.status, "error": None if a.status == "ok" else a.reason,
                            "response": a.response, "checks": a.checks, "accepted": a.accepted,
                            "reason": a.reason, "repairs": [], "persona": persona, "evidence": list(pool.snippets),
                            "context": "PACEShop input", "raw_output": row.get("raw_output")})  # fmt: skip
            return out
        rep = self.imported
        for o in rep.imported:
            ctx = self.context.get(o.assignment_id) if o.assignment_id else None
            persona, evidence, checks, context, repairs = o.persona, None, o.checks, "own", list(o.repairs)
            if o.assignment_id and ctx is None and (o.persona is None or o.candidate_ids is None):
                context = f"assignment_id {o.assignment_id!r} is not in the PACEShop build"
            if ctx is not None:
                context = f"PACEShop input {o.assignment_id}"
                if persona is None:
                    persona = ctx.persona
                if o.candidate_ids is None:  # the build's pool: the checks read it
                    evidence = list(ctx.evidence)
                    checks = output_checks(o.response, [s.evidence_id for s in evidence])
                    repairs = [r for r in repairs if not r.startswith("no candidate evidence given")]
            failed = [c for c in HARD_CHECKS if not checks[c]]
            out.append({"sample_id": o.output_id, "assignment_id": o.assignment_id, "query": o.query,
                        "source": f"imported ({self.schema})", "where": o.where, "status": "ok", "error": None,
                        "response": o.response, "checks": checks, "accepted": not failed,
                        "reason": f"failed hard checks: {', '.join(failed)}" if failed else None,
                        "repairs": repairs, "persona": persona, "evidence": evidence,
                        "candidate_ids": o.candidate_ids, "context": context,
                        "raw_output": json.dumps(o.raw, ensure_ascii=False)})  # fmt: skip
        ids = {o.output_id for o in rep.imported}
        for r in rep.rejected:  # a rejected output keeps its id unless an imported one holds it (repeated id)
            out.append({"sample_id": r["output_id"] if r["output_id"] not in ids else f"{r['output_id']}@{r['where']}", "assignment_id": None, "query": None,
                        "source": f"imported ({self.schema})", "where": r["where"], "status": "parse_error",
                        "error": f"rejected: {r['reason']}", "response": None, "checks": None, "accepted": False,
                        "reason": f"rejected: {r['reason']}", "repairs": [], "persona": None, "evidence": None,
                        "context": "", "raw_output": None})  # fmt: skip
        return out

    def _judge_records(self, samples: list[dict] | None = None) -> list[tuple]:
        """``(Record, sample)`` for every sample the judge can read: a response and a persona."""
        if samples is None:
            samples = self._samples(None, None, "") if self.responses is not None else []
        return [
            (judge_record(s), s) for s in samples if s["response"] is not None and s["persona"] is not None
        ]

    def run(self, gateway, backbone, *, epochs: int, run_id: str):
        """One row per sample and epoch: the assistant's response, its checks and acceptance (the same
        in every epoch) and the judge's judgment of that epoch."""
        import pandas as pd

        from ..core import taxonomy
        from .pace_judge import judge_runs

        self._add_judge(gateway)
        samples = self._samples(gateway, backbone, run_id)
        pairs = self._judge_records(samples)
        if pairs:  # issue 25 §2: the judge answers, with room for its prompts, before it is asked
            from ..judges.pace.sweep import build_calls
            from .runner import preflight_calls

            preflight_calls(self.judge, build_calls(gateway, [self.protocol], [self.judge.name],
                                                    [r for r, _ in pairs], 1, self.judge_max_tokens))  # fmt: skip
        judged: dict[tuple[str, int], dict] = {}
        self.runs = None
        if pairs:
            runs = judge_runs(gateway, self.protocol, self.judge.name, [r for r, _ in pairs], epochs=epochs,
                              run_id=f"{run_id}/judge", max_tokens=self.judge_max_tokens,
                              desc=f"pace_assistant · {self.judge.name} judges ({self.protocol})")  # fmt: skip
            self.runs = runs
            judged = {(r["record_id"], int(r["repeat"])): r for r in runs.to_dict("records")}
        rows = []
        for s in samples:
            for k in range(epochs):
                j = judged.get((s["sample_id"], k))
                why_not = (None if j is not None else "no response" if s["response"] is None
                           else "no persona: persona claims withheld, not judged")  # fmt: skip
                row = {"sample_id": s["sample_id"], "epoch": k, "assignment_id": s["assignment_id"],
                       "query": s["query"], "source": s["source"], "where": s["where"],
                       "accepted": bool(s["accepted"]), "reject_reason": s["reason"],
                       "repairs": "; ".join(s["repairs"]) or None, "context": s["context"],
                       "checks_passed": sum(s["checks"].values()) if s["checks"] else None,
                       "all_12": all(s["checks"].values()) if s["checks"] else None}  # fmt: skip
                for c in taxonomy.CHECKS:
                    row[f"check_{c}"] = s["checks"][c] if s["checks"] else None
                row["response"] = s["response"].model_dump_json() if s["response"] is not None else None
                row["raw_output"] = s["raw_output"]
                row["unit_status"], row["unit_error"] = s["status"], s["error"]
                row["judge_status"] = j["unit_status"] if j is not None else "not judged"
                row["judge_error"] = j["unit_error"] if j is not None else why_not
                for col in ("verdict", "bad_prob", "defect_family", "defect_location", "overall_quality",
                            *(f for _, f in AXES), "parse_error_kind", "rationale"):  # fmt: skip
                    row[f"judge_{col}"] = j.get(col) if j is not None else None
                rows.append(row)
        return pd.DataFrame(rows)

    # ---- metrics -------------------------------------------------------------------------------
    def metrics(self, rows, *, seed: int) -> dict:
        import numpy as np

        from ..core import taxonomy
        from ..judges.pace.sweep import parse_failures
        from ..stats.bootstrap import bootstrap_mean

        first = rows[rows["epoch"] == 0].reset_index(drop=True)
        nb = self.n_boot

        def est(x, key: str, supported: bool = True) -> dict:
            x = np.asarray(x, dtype=float)
            if not supported:
                return {"estimate": None, "ci_low": None, "ci_high": None, "supported": False, "n": 0}
            n = int((~np.isnan(x)).sum())
            if n == 0:
                return {"estimate": None, "ci_low": None, "ci_high": None, "n": 0}
            if nb == 0:
                return {"estimate": float(np.nanmean(x)), "ci_low": None, "ci_high": None, "n": n}
            b = bootstrap_mean(x, n_boot=nb, seed=_seed(seed, key))
            return {
                "estimate": finite(b.estimate),
                "ci_low": finite(b.low),
                "ci_high": finite(b.high),
                "n": n,
            }

        has = first["unit_status"] == "ok"
        head: dict[str, Any] = {"accepted": est(first["accepted"].astype(float), "accepted")}
        resp = first[has]
        head["all_12_pass"] = est(resp["all_12"].astype(float), "all_12")
        for c in taxonomy.CHECKS:
            head[f"check_{c}"] = est(resp[f"check_{c}"].astype(float), c)
        # the judge: per output, the mean over epochs of its parsed judgments (NaN: none parsed)
        ok = rows[rows["judge_status"] == "ok"]
        per = ok.groupby("sample_id", sort=False)
        good = per["judge_verdict"].apply(lambda v: float((v == "GOOD").mean()))
        head["judge_GOOD"] = est(good.to_numpy(), "judge_GOOD")
        for short, col in AXES:
            vals = pd_numeric(ok[f"judge_{col}"])
            sup = len(ok) == 0 or bool(vals.notna().any())
            head[f"judge_{short}"] = est(
                vals.groupby(ok["sample_id"], sort=False).mean().to_numpy(), col, sup
            )

        def dist(col: str) -> dict:
            v = ok[col].fillna("NONE").astype(str)
            return {k: int(n) for k, n in v.value_counts().items()}

        jst = rows["judge_status"].value_counts()
        pf = parse_failures(self.runs) if self.runs is not None and len(self.runs) else None
        ast = first["unit_status"].value_counts()
        notes = []
        for r in first.itertuples():
            place = f"{r.where} " if r.where else ""
            if r.unit_status != "ok":
                notes.append(f"{place}{r.sample_id}: {r.unit_error}")
            elif r.repairs:
                notes.append(f"{place}{r.sample_id}: repaired: {r.repairs}")
        return {
            "headline": head,
            "distributions": {"judge verdicts": dist("judge_verdict"), "judge defect families": dist("judge_defect_family"),
                              "judge defect locations": dist("judge_defect_location")},
            "assistant": {"samples": int(len(first)), "ok": int(ast.get("ok", 0)),
                          "parse_error": int(ast.get("parse_error", 0)), "error": int(ast.get("error", 0)),
                          "accepted": int(first["accepted"].sum()), "repaired": int(first["repairs"].notna().sum()),
                          "source": "generated" if self.responses is None else f"imported ({self.schema})"},
            "judge": {"model": self.judge.name, "protocol": self.protocol, "units": int(len(rows)),
                      "ok": int(jst.get("ok", 0)), "parse_error": int(jst.get("parse_error", 0)),
                      "error": int(jst.get("error", 0)), "not_judged": int(jst.get("not judged", 0))},
            "parse_failures": parse_failure_cells(pf),
            "notes": notes,
            "ci": "bootstrap 95%, resampling outputs", "n_boot": nb,
        }  # fmt: skip


def judge_record(s: dict):
    """The PACEShop record a judge reads for one assistant output (the D.4 input bundle: query, persona,
    response in both views, the candidate evidence, the cited ids as used ids, the 12 checks). It has no
    gold label, family or location: nothing is known of them, and the judge never sees them
    (:func:`shopbench.judges.pace.protocols.bundle`)."""
    from ..core import Record
    from ..paceshop.response_xml import to_xml

    r = s["response"]
    return Record.model_construct(
        record_id=s["sample_id"], split=None, label=None, kind="assistant", tier=0,
        assignment_id=s["assignment_id"] or s["sample_id"], query_id="", query=s["query"], vertical="", mission="",
        persona=s["persona"], evidence=list(s["evidence"] or []), used_evidence_ids=list(r.attribution_list),
        response=r, response_xml=to_xml(r), checks=dict(s["checks"]), defects=[], gold_family=None,
        gold_location=None, base_record_id=None, swap_axis=None, generator="assistant",
    )  # fmt: skip


def _first_n(rep, limit: int | None) -> set[str]:
    """The places ("line 3") of the first ``limit`` outputs of the file, imported or rejected."""
    order = sorted([o.where for o in rep.imported] + [r["where"] for r in rep.rejected], key=_place)
    return set(order if limit is None else order[:limit])


def _place(where: str) -> int:
    try:
        return int(str(where).rsplit(" ", 1)[-1])
    except ValueError:
        return 0


def _seed(seed: int, key: str) -> int:
    return int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()[:8], 16)


def pd_numeric(s):
    import pandas as pd

    return pd.to_numeric(s, errors="coerce")
