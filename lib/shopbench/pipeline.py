"""The papermill pipeline behind ``make paper`` and the notebook smoke tests of ``make test``.

The list of notebooks, their order and the artefacts each must produce live in one place,
``notebooks/pipeline.yaml`` (read by :mod:`shopbench.pipeline_steps`). ``python -m shopbench.pipeline run --profile paper`` validates the
profile, executes the notebooks with papermill into ``outputs/<profile>/notebooks/``, then writes
``outputs/<profile>/paper/run.json`` and the index (``index.md`` + ``index.html``).

A notebook whose ``needs`` (the notebooks whose outputs it reads) failed or were skipped is skipped
with the reason, instead of running into a second, misleading error. A notebook whose inputs did not
change since its last successful run is not re-executed (:mod:`shopbench.uptodate`; ``--rerun``
re-executes everything). A user error (unknown profile,
bad key or value, missing input) prints one message and exits 2, with no traceback.

Exit codes of ``run``: 0 everything ran; 1 a notebook failed or was skipped, a promised artefact is
missing, or the evidence audit found a problem; 2 a user error; 3
(:data:`~shopbench.llm.outcomes.EXIT_NO_ANSWER`) the notebooks ran but a subject under test (a model
within one sweep of the run's call logs) produced no usable answer: every call failed or every answer
broke its contract (issue 25 item 3). The subject, its counts and its three most frequent errors are
printed; its table rows have no numbers and are labelled ``no-answer``. The last line counts the calls
by kind: ok, parse failures, call errors.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from . import pipeline_steps
from .config import claim_outputs, load_profile
from .errors import exit_on_user_error
from .llm.calllog import read_logs
from .llm.outcomes import EXIT_NO_ANSWER, count_line, no_answer_subjects
from .paths import ROOT
from .pipeline_steps import Step, known_only, load_pipeline
from .plancheck import check_plan
from .preview import check_before_run, needs_gate
from .report import audit_index, build_index, git_commit, write_run_json
from .report.artifacts import now_iso, read_artifacts
from .runprogress import stopped_line, watching
from .uptodate import RunInputs, failed_calls, load_state, save_state

EXIT_STOPPED = 130  # Ctrl-C (128 + SIGINT), as a shell reports it


def run_notebook(step: Step, profile: str, out_dir: Path) -> Path:
    import papermill as pm

    from .kernels import IPCKernelManager  # no unencrypted-TCP warning per notebook (issue 16 §5)

    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{step.name}.ipynb"
    pm.execute_notebook(
        str(step.path), str(out), parameters={"profile": profile}, cwd=str(step.path.parent),
        kernel_name="python3", progress_bar=False, request_save_on_cell_execute=True,
        execution_timeout=step.timeout_s, kernel_manager_class=IPCKernelManager,
    )  # fmt: skip
    return out


def summarize_calls(calls_dir: Path) -> dict:
    from .llm.usage import summarize as provider_cache

    rows = read_logs(calls_dir) if calls_dir.exists() else []
    n = len(rows)
    hits = sum(1 for r in rows if r.get("cache_hit"))
    no_answer = [{"run_id": run_id, "model": model, "calls": t.planned, "call_errors": t.call_error,
                  "parse_failures": t.parse_failure, "top_errors": t.top(3)}
                 for (run_id, model), t in no_answer_subjects(rows).items()]  # fmt: skip
    return {
        "calls": n,
        "cache_hits": hits,
        "cache_hit_rate": (hits / n) if n else None,
        "cost_usd": round(sum(float(r.get("cost_usd") or 0) for r in rows), 6),
        "errors": sum(1 for r in rows if r.get("status") == "error"),
        "parse_errors": sum(1 for r in rows if r.get("status") == "parse_error"),
        # the provider's prompt cache beside the gateway's (issue 14 §4)
        "provider_cache": provider_cache(rows),
        # issue 25 item 3: subjects (a model within one sweep) without a single usable answer
        "no_answer_subjects": no_answer,
    }


def failure_reason(err: BaseException) -> str:
    """One line for a failed notebook: the exception's type and message (the executed notebook holds
    the traceback); a user error is its message alone."""
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    if ename is None:
        ename, evalue = type(err).__name__, str(err)
    first = (str(evalue).strip().splitlines() or [""])[0][:500]
    return first if ename in {"UserError", "InputError", "ParamError"} else f"{ename}: {first}"


def skip_reason(step: Step, outcome: dict[str, str]) -> str | None:
    """Why ``step`` cannot run: the first of its ``needs`` that failed or was skipped (else None)."""
    for need in step.needs:
        why = outcome.get(need)
        if why is not None:
            return f"{need} failed: {why}" if not why.startswith("skipped: ") else f"{need} was {why}"
    return None


def _notebook_of(artefact: dict) -> str | None:
    """The notebook that registered an artefact (the registry stores provenance fields flat)."""
    return artefact.get("notebook")


@dataclass
class UpToDate:
    """The up-to-date check of one run (:mod:`shopbench.uptodate`): the run's inputs, the state of
    the last successful runs, and the artefacts they registered (kept for notebooks not re-executed)."""

    inputs: RunInputs
    state: dict[str, dict]
    old_artifacts: list[dict]
    force: bool = False  # re-execute every notebook (``--rerun``, the rehearsal profile)
    chain: list[str] = field(default_factory=list)  # fingerprints of the steps so far

    def fingerprint(self, step: Step) -> str:
        fp = self.inputs.fingerprint(step.path, self.chain)
        self.chain.append(fp)
        return fp

    def why_not(self, step: Step, fp: str, root: Path) -> str | None:
        """None when ``step`` is up to date, else why it must be re-executed."""
        last = self.state.get(step.name) or {}
        if self.force:
            return "re-executing every notebook"
        if last.get("fingerprint") != fp:
            return "its inputs changed" if last else "no earlier run"
        if not (root / "notebooks" / step.path.name).exists():
            return "its executed notebook is missing"
        mine = {a["name"] for a in self.old_artifacts if _notebook_of(a) == step.name}
        if any(p not in mine for p in step.produces):
            return "an artefact of its last run is missing"
        if failed_calls(root / "calls", step.name):
            return "model calls of its last run failed (re-executing retries them)"
        return None

    def keep(self, step: Step, paper: Path) -> None:
        """Register again the artefacts ``step`` registered on its last run."""
        mine = [a for a in self.old_artifacts if _notebook_of(a) == step.name]
        if mine:
            with open(paper / "artifacts.jsonl", "a", encoding="utf-8") as f:
                f.writelines(json.dumps(a, ensure_ascii=False) + "\n" for a in mine)


class Stopped(Exception):
    """Ctrl-C while ``notebook`` ran, after ``done`` notebooks of this run had finished (issue 25 §4)."""

    def __init__(self, notebook: str, nbs: list[dict]) -> None:
        super().__init__(notebook)
        self.notebook, self.done = notebook, sum(1 for nb in nbs if nb["status"] in ("ok", "up to date"))


def _run_steps(prof, steps: list[Step], root: Path, nbs: list[dict], outcome: dict[str, str],
               fresh: UpToDate | None = None) -> None:  # fmt: skip
    paper = root / "paper"
    for s in steps:
        t = time.perf_counter()
        status, reason = "ok", skip_reason(s, outcome)
        fp = fresh.fingerprint(s) if fresh is not None else ""
        if reason is not None:
            status = "skipped"
            outcome[s.name] = f"skipped: {reason}"
            print(f"[{prof.name}] {s.name} skipped: {reason}", file=sys.stderr, flush=True)
        elif fresh is not None and fresh.why_not(s, fp, root) is None:
            status = "up to date"
            last = fresh.state[s.name]
            fresh.keep(s, paper)
            print(f"[{prof.name}] {s.name} up to date (inputs unchanged since {last.get('finished', '?')}; "
                  f"--rerun / FRESH=1 re-executes it)", flush=True)  # fmt: skip
        else:
            why = fresh.why_not(s, fp, root) if fresh is not None else None
            print(f"[{prof.name}] running {s.name}" + (f" ({why})" if why else "") + " ...", flush=True)
            for old in (root / "calls").glob(f"{s.name}_*.jsonl"):  # this run's calls replace the last run's
                old.unlink()
            try:
                with watching(prof.name, s.name, root):  # the notebook's sweeps on the terminal (issue 25 §4)
                    run_notebook(s, str(prof.path), root / "notebooks")
            except KeyboardInterrupt:
                raise Stopped(s.name, nbs) from None
            except (
                Exception
            ) as e:  # papermill's error names the failing cell; the notebook keeps the traceback
                if getattr(e, "ename", None) == "KeyboardInterrupt":  # the kernel saw Ctrl-C first
                    raise Stopped(s.name, nbs) from None
                status, reason = "failed", failure_reason(e)
                outcome[s.name] = reason
                print(f"[{prof.name}] {s.name} FAILED: {reason} (traceback in {root / 'notebooks' / s.path.name})",
                      file=sys.stderr)  # fmt: skip
        wall = time.perf_counter() - t
        nbs.append(
            {
                "name": s.name,
                "wall_s": round(wall, 2),
                "status": status,
                **({"reason": reason} if reason else {}),
            }
        )
        if fresh is not None:
            if status == "ok":
                fresh.state[s.name] = {"fingerprint": fp, "finished": now_iso(), "wall_s": round(wall, 2)}
            elif status != "up to date":
                fresh.state.pop(s.name, None)
            save_state(paper, fresh.state)
        if status not in ("skipped", "up to date"):
            print(f"[{prof.name}] {s.name} {status} in {wall:.1f} s", flush=True)


def run(profile: str, only: list[str] | None = None, fresh: bool = True, preview: bool = True,
        rerun: bool = False, preflight: bool = True) -> int:  # fmt: skip
    prof = load_profile(profile)
    steps = known_only(only)
    for n in check_plan(prof, only):  # issue 25 §2/§6: names and datasets, before anything starts
        print(f"[{prof.name}] note: {n}", flush=True)
    pv = None
    if preview and needs_gate(prof):  # issue 14 §2: the estimate first; over a limit nothing starts
        pv = check_before_run(str(prof.path), only)
    if preflight:  # issue 25 item 2: every model under test answers, with room for the prompts
        from .preflight import preflight as check_models

        check_models(
            prof, [s.name for s in steps], preview=pv, log=lambda m: print(f"[{prof.name}] {m}", flush=True)
        )
    root = claim_outputs(prof)
    paper = root / "paper"
    uptodate = None
    if fresh and not only:  # call logs and artefact registry describe this run; the cache is kept
        every = rerun or prof.params.rehearsal is not None
        inputs = RunInputs.of(prof.path, prof.data, pipeline_steps.PIPELINE_FILE, ROOT, root / "annotations")
        uptodate = UpToDate(inputs, load_state(paper), read_artifacts(paper), force=every)
        if every:
            shutil.rmtree(root / "calls", ignore_errors=True)
        (paper / "artifacts.jsonl").unlink(missing_ok=True)
    os.environ["SHOPBENCH_GIT_COMMIT"] = git_commit()
    # executed notebooks have no frontend: text progress bars that finish (shopbench.progress)
    os.environ.setdefault("SHOPBENCH_PROGRESS", "text")
    t0 = time.perf_counter()
    nbs: list[dict] = []
    outcome: dict[str, str] = {}  # outcome: notebook -> why it failed ("skipped: ..." when it did not run)
    fleet_run = None
    with ExitStack() as stack:
        if prof.params.rehearsal is not None:  # issue 14 §3: the local provider server, for this run only
            from .rehearsal import serving
            from .rehearsal.fleet import fleet

            srv = stack.enter_context(serving(**prof.params.rehearsal.server_kwargs()))
            print(f"[{prof.name}] rehearsal: provider server on {srv.url} (every provider's base URL points there)")  # fmt: skip
            fleet_run = stack.enter_context(fleet(**prof.params.rehearsal.fleet_kwargs()))
            if fleet_run is not None:
                print(f"[{prof.name}] rehearsal: hosted_vllm/ models on a fleet of {len(fleet_run.bases)} server "
                      f"processes; the last dies after {fleet_run.kill_after} chat completions")  # fmt: skip
        try:
            _run_steps(prof, steps, root, nbs, outcome, uptodate)
        except Stopped as e:  # one line, no traceback; the cache and ledger keep what was done
            print(stopped_line(prof.name, e.notebook, root, e.done, len(steps)), file=sys.stderr, flush=True)
            return EXIT_STOPPED
        if prof.params.rehearsal is not None:
            from .rehearsal.report import run_tables

            run_tables(prof, root, fleet_run)
    produced = {a["name"] for a in read_artifacts(paper)}
    missing = [
        f"{s.name}:{p}" for s in steps if s.name not in outcome for p in s.produces if p not in produced
    ]
    summary = {
        "profile": prof.name,
        "params_file": str(prof.path.name),
        "params_sha256": prof.sha256,
        "git_commit": os.environ["SHOPBENCH_GIT_COMMIT"],
        "date": now_iso(),
        "wall_s": round(time.perf_counter() - t0, 2),
        "notebooks": nbs,
        "missing_artifacts": missing,
        "substitutes": substitutes(prof),  # issue 14 §1: stand-ins for the papers' models, by backbone
        **summarize_calls(root / "calls"),
    }
    write_run_json(paper, summary)
    md, html = build_index(paper, summary)
    kept = sum(1 for nb in nbs if nb["status"] == "up to date")
    rate = summary["cache_hit_rate"]
    n_ok = summary["calls"] - summary["errors"] - summary["parse_errors"]
    print(f"[{prof.name}] wall {summary['wall_s']:.1f} s (notebooks: {len(nbs) - kept} executed, {kept} up to date); "
          f"call logs{' (kept from earlier runs for up-to-date notebooks)' if kept else ''}: {summary['calls']} calls "
          f"({count_line(n_ok, summary['parse_errors'], summary['errors'])}), "
          f"cache hit rate {'n/a' if rate is None else f'{rate:.1%}'}, cost ${summary['cost_usd']:.4f}")  # fmt: skip
    print(f"[{prof.name}] index: {md} and {html}")
    if missing:
        print(
            f"[{prof.name}] artefacts promised in {pipeline_steps.PIPELINE_FILE.name} but not produced: {missing}",
            file=sys.stderr,
        )
    problems = audit_index(paper)  # issue 13 §1: every artefact has a kind, no stand-in row is "measured"
    for p in problems:
        print(f"[{prof.name}] evidence: {p}", file=sys.stderr)
    report_no_answer(prof.name, summary["no_answer_subjects"])
    if outcome or missing or problems:
        return 1
    return EXIT_NO_ANSWER if summary["no_answer_subjects"] else 0


def report_no_answer(profile: str, subjects: list[dict]) -> None:
    """Print each subject that produced no usable answer, with its three most frequent errors."""
    for s in subjects:
        what = (f"{s['call_errors']} of {s['calls']} calls failed" if s["call_errors"] == s["calls"] else
                f"{s['call_errors']} calls failed, {s['parse_failures']} answers broke the contract")  # fmt: skip
        if not s["call_errors"]:
            what = f"{s['parse_failures']} of {s['calls']} answers broke the contract"
        print(f"[{profile}] NO USABLE ANSWER from {s['model']} in {s['run_id']}: {what}; its rows have no numbers "
              f"(evidence no-answer). Most frequent:", file=sys.stderr)  # fmt: skip
        for msg, n in s["top_errors"]:
            print(f"[{profile}]   {n} x {msg}", file=sys.stderr)
    if subjects:
        print(f"[{profile}] exit code {EXIT_NO_ANSWER}: {len(subjects)} subject(s) under test produced no usable "
              "answer (fix the server or model and rerun the same command; finished calls are cached)",
              file=sys.stderr)  # fmt: skip


def substitutes(prof) -> dict[str, str]:
    """``{backbone name: the paper's model it stands in for}`` (``substitute_for:`` in the profile)."""
    from .llm import parse_backbones
    from .profiles import as_plain

    return {
        b.name: b.substitute_for
        for b in parse_backbones([as_plain(e) for e in prof.params.backbones])
        if b.substitute_for
    }


def check(profile: str, only: list[str] | None = None) -> int:
    """Validate a profile without running anything (``make paper`` does this first): its keys and values,
    its backbone names and the datasets its planned notebooks read (:mod:`shopbench.plancheck`)."""
    prof = load_profile(profile)
    known_only(only)
    notes = check_plan(prof, only)
    print(f"{prof.path}: valid profile; outputs go to {prof.out}")
    for n in notes:
        print(f"note: {n}")
    return 0


@exit_on_user_error
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m shopbench.pipeline",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="execute the pipeline's notebooks with papermill and build the index",
                       description="Execute the notebooks and build the index. Exit codes: 0 ok; 1 a notebook "
                       "failed, an artefact is missing or the evidence audit found a problem; 2 a user error; "
                       f"{EXIT_NO_ANSWER} a subject under test (a model in one sweep) produced no usable answer "
                       "(every call failed or every answer broke its contract); its three most frequent errors "
                       "are printed.")  # fmt: skip
    r.add_argument("--profile", default="paper", help="profile name (params/<name>.yaml) or a YAML path")
    r.add_argument("--only", nargs="*", help="run only these notebooks (by name)")
    r.add_argument("--keep-logs", action="store_true", help="keep previous call logs and artefact registry")
    r.add_argument("--rerun", action="store_true",
                   help="re-execute every notebook, also those whose inputs did not change (make paper FRESH=1)")  # fmt: skip
    r.add_argument(
        "--no-preview",
        action="store_true",
        help="skip the cost and time preview (and its limits) before the run",
    )
    r.add_argument("--no-preflight", action="store_true",
                   help="skip the tiny call per model under test before the first notebook (issue 25)")  # fmt: skip
    sub.add_parser("list", help="print the pipeline's notebooks in order")
    c = sub.add_parser("check", help="validate a profile (every key and value) and exit")
    c.add_argument("--profile", default="paper", help="profile name (params/<name>.yaml) or a YAML path")
    c.add_argument("--only", nargs="*", help="check only for these notebooks (their datasets; as run --only)")
    a = ap.parse_args(argv)
    if a.cmd == "list":
        for s in load_pipeline():
            print(s.name, " ".join(s.produces))
        return 0
    if a.cmd == "check":
        return check(a.profile, a.only)
    try:
        return run(a.profile, a.only, fresh=not a.keep_logs, preview=not a.no_preview, rerun=a.rerun,
                   preflight=not a.no_preflight)  # fmt: skip
    except KeyboardInterrupt:  # outside a notebook (the preview, the index): one line too (issue 25 §4)
        print(f"[{a.profile}] stopped; rerun the same command to resume", file=sys.stderr)
        return EXIT_STOPPED


if __name__ == "__main__":
    sys.exit(main())
