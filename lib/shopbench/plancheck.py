"""What a profile plans, checked before anything runs (issue 25 §2 and §6: findings 6 and 7).

``python -m shopbench.pipeline check``, the preview and ``pipeline run`` (before its first notebook)
call :func:`check_plan`, which raises one :class:`~shopbench.errors.UserError` listing every problem:

**Backbone names.** Every backbone named anywhere in the profile must resolve the way the code that
reads it resolves it:

- names the notebooks look up among the profile's ``backbones`` (and silently skip when absent, or
  fail on with ``no backbone named``): ``judging.llm_backbones`` / ``llm_runs[].backbone`` (notebook 20
  keeps only configured backbones), ``shopsim.llm_agents[].backbone``, ``shopsim.second_judge``,
  ``shopsim.user``, ``padme.steering``, ``padme.user``, ``padme.llm_filter_judges[].backbone``, the LLM
  ``padme.evaluators``: these must be **defined** in ``backbones``;
- names the code also takes as a model name when undefined (judge specs' ``resolve_backbone``, the GOOD
  generator, ``padme.agent`` as its validator documents): ``judging.deterministic_judges``,
  ``paceshop.generator`` / ``l4_generators``, ``padme.agent``, ``padme.filter_judges``,
  ``shopsim.judge``, a τ² source's ``nl_judge``, and each ``backbones[].model``: defined, or a model
  name that resolves: ``local/<embedded backend>``, ``llamacpp/<packaged model>``, or a name litellm
  knows the provider of (``openai/gpt-4o``, ``hosted_vllm/...``, ``gpt-4o``).

A name that fails gets "did you mean ...?" from the names that would pass.

**Datasets.** Each external dataset a planned notebook cannot run without must be present
(:mod:`shopbench.data`): notebook 40's τ² sources (``padme.sources: [{kind: tau2, path: ...}]``). The
error names the dataset, the path looked at and the fixes (fetch it, point the key elsewhere, or drop
the source). Datasets a notebook degrades without (``padme.recorded`` for notebook 50, which then
writes a note instead of the recorded-pair check) are returned as notes.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import pipeline_steps
from .errors import UserError


@dataclass(frozen=True)
class Ref:
    """A backbone name at ``field`` of the profile, read by ``notebook``; ``defined``: the code looks it
    up among the profile's backbones only (an undefined name is skipped or fails)."""

    field: str
    name: str
    notebook: str
    defined: bool


def _plain(e):
    return e if isinstance(e, str | dict) else e.given()


def backbone_refs(params) -> list[Ref]:
    """Every backbone name the profile's sections give, with where it is and who reads it."""
    J, P, S, C = params.judging, params.padme, params.shopsim, params.paceshop
    refs: list[Ref] = []
    add = refs.append
    for i, j in enumerate(J.deterministic_judges):
        add(Ref(f"judging.deterministic_judges[{i}]", j, "20_pace_judge_sweep", False))
    if J.llm_runs:
        for i, r in enumerate(J.llm_runs):
            add(Ref(f"judging.llm_runs[{i}].backbone", r.backbone, "20_pace_judge_sweep", True))
    else:
        for i, b in enumerate(J.llm_backbones):
            add(Ref(f"judging.llm_backbones[{i}]", b, "20_pace_judge_sweep", True))
    if C.generator != "offline":
        add(Ref("paceshop.generator", C.generator, "10_paceshop_build", False))
    for i, g in enumerate(C.l4_generators):
        add(
            Ref(
                f"paceshop.l4_generators[{i}]",
                g if isinstance(g, str) else g.backbone,
                "10_paceshop_build",
                False,
            )
        )
    if P.agents != ["scripted"]:
        for i, a in enumerate(P.agents):
            add(
                Ref(
                    "padme.agent" if isinstance(P.agent, str) else f"padme.agent[{i}]",
                    a,
                    "40_padme_synthesis",
                    False,
                )
            )
    for key in ("user", "steering"):
        if getattr(P, key) != "scripted":
            add(Ref(f"padme.{key}", getattr(P, key), "40_padme_synthesis", True))
    for i, f in enumerate(P.filter_judges or []):
        name = f if isinstance(f, str) else getattr(f, "backbone", None)
        if name:
            add(Ref(f"padme.filter_judges[{i}]" + ("" if isinstance(f, str) else ".backbone"), name,
                    "40_padme_synthesis", False))  # fmt: skip
    for i, f in enumerate(P.llm_filter_judges):
        add(Ref(f"padme.llm_filter_judges[{i}].backbone", f.backbone, "40_padme_synthesis", True))
    for i, src in enumerate(P.sources):
        nl = getattr(src, "nl_judge", None)
        if nl and nl != "known-answer":
            add(Ref(f"padme.sources[{i}].nl_judge", nl, "40_padme_synthesis", False))
    if P.evaluators is not None:
        from .judges.padme.roster import evaluator_specs

        specs = evaluator_specs([_plain(e) for e in P.evaluators], where="padme.evaluators")
        for i, s in enumerate(specs):
            if not s.is_heuristic:
                add(Ref(f"padme.evaluators[{i}].backbone", s.backbone, "50_padme_meta_eval", True))
    for i, a in enumerate(S.llm_agents):
        add(Ref(f"shopsim.llm_agents[{i}].backbone", a.backbone, "80_shop_agents", True))
    if S.noise is not None and S.noise.llm_agent is not None:  # issue 29: the noise floor's LLM agent
        add(Ref("shopsim.noise.llm_agent.backbone", S.noise.llm_agent.backbone, "80_shop_agents", True))
    if S.user != "scripted":
        add(Ref("shopsim.user", S.user, "80_shop_agents", True))
    if S.judge != "deterministic":
        add(Ref("shopsim.judge", S.judge, "80_shop_agents", False))
    if S.second_judge:
        add(Ref("shopsim.second_judge", S.second_judge, "80_shop_agents", True))
    return refs


def model_name_problem(model: str, server: str | None = None, model_name: str | None = None) -> str | None:
    """Why ``model`` is not a name the gateway can resolve (None: it is). No call, no key needed."""
    from .llm.llamacpp.registry import MODELS
    from .llm.local import local_backends

    provider, _, rest = model.partition("/")
    if server == "llamacpp" or provider == "llamacpp":
        name = model_name or rest
        return (
            None
            if name in MODELS
            else f"no packaged llama.cpp model '{name}' (packaged: {', '.join(MODELS)})"
        )
    if provider == "local":
        known = ", ".join(f"local/{n}" for n in sorted(local_backends()))
        return None if rest in local_backends() else f"no embedded backend 'local/{rest}' (embedded: {known})"
    from .llm._litellm import litellm

    try:
        litellm.get_llm_provider(model=model)
    except Exception:  # noqa: BLE001 - litellm's own words are long; ours name the fix
        return "not a model name litellm knows a provider for (such as openai/gpt-4o or hosted_vllm/<model>)"
    return None


def _known_names(defined: Sequence[str]) -> list[str]:
    from .llm.llamacpp.registry import MODELS
    from .llm.local import local_backends

    return [*defined, *(f"local/{n}" for n in local_backends()), *(f"llamacpp/{n}" for n in MODELS)]


def backbone_problems(prof) -> list[str]:
    """One sentence per backbone name that would not resolve (module docstring)."""
    from .profiles import as_plain

    entries = [as_plain(e) for e in prof.params.backbones]
    defined = [e if isinstance(e, str) else str(e.get("name") or e["model"]) for e in entries]
    out = []
    for i, e in enumerate(entries):
        model = e if isinstance(e, str) else str(e["model"])
        why = model_name_problem(model, None if isinstance(e, str) else e.get("server"),
                                 None if isinstance(e, str) else e.get("model_name"))  # fmt: skip
        if why:
            field = f"backbones[{i}]" + ("" if isinstance(e, str) else ".model")
            out.append(f"{field}: '{model}' is {why}")
    for r in backbone_refs(prof.params):
        if r.name in defined:
            continue
        if r.defined:
            close = difflib.get_close_matches(r.name, defined, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            out.append(f"{r.field}: '{r.name}' is not a backbone of this profile{hint}; {r.notebook} looks it up "
                       f"among `backbones` ({', '.join(defined) or 'none defined'}) and would skip it")  # fmt: skip
            continue
        why = model_name_problem(r.name)
        if why:
            close = difflib.get_close_matches(r.name, _known_names(defined), n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            out.append(f"{r.field}: '{r.name}' is defined nowhere{hint}: not a backbone of this profile "
                       f"({', '.join(defined) or 'none defined'}) and {why}")  # fmt: skip
    return out


# ---- datasets -------------------------------------------------------------------------------------
def _data_fix(folder: Path, key: str, drop: str) -> str:
    from .data import dataset_for

    ds = dataset_for(folder)
    get = (f"`make data` fetches {ds.title} ({ds.source}, {ds.licence}) into {ds.path()}"
           if ds is not None and ds.urls else "copy the published files there")  # fmt: skip
    return f"{get}; or point {key} at your copy; or {drop} (README, 'External data')"


def dataset_problems(prof, notebooks: Iterable[str]) -> tuple[list[str], list[str]]:
    """(errors, notes) about the external datasets the planned ``notebooks`` read (module docstring)."""
    from .data import DATASETS, missing_files
    from .padme.experiment import tau2_data_paths
    from .paths import ROOT

    planned = set(notebooks)
    errors, notes = [], []
    P = prof.params.padme
    if "40_padme_synthesis" in planned:
        tau2 = DATASETS["tau2_retail"]
        paths = iter(tau2_data_paths(P, ROOT))  # one per τ² source, in order
        for idx, src in enumerate(P.sources):
            if not _is_tau2(src):
                continue
            path = next(paths)
            dom = _tau2_domain(src)
            if (
                dom != "retail"
            ):  # issue 28 item 3: a domain slice without its data is skipped, its rows say so
                if not path.is_dir():
                    notes.append(f"padme.sources[{idx}] ({{kind: tau2, domain: {dom}}}): no data folder at {path}; "
                                 f"notebook 40 skips that source and its by-domain rows say so")  # fmt: skip
                continue
            lacking = missing_files(path, tau2) if path.is_dir() else list(tau2.required)
            if lacking:
                what = "no folder" if not path.is_dir() else f"no {', '.join(lacking)}"
                errors.append(f"padme.sources[{idx}] ({{kind: tau2}}): {tau2.title} not found at {path} ({what}); "
                              f"notebook 40 reads it. Fix: "
                              + _data_fix(path, f"padme.sources[{idx}].path", "drop that entry from padme.sources"))  # fmt: skip
    if "50_padme_meta_eval" in planned:
        rec = Path(P.recorded)
        rec = rec if rec.is_absolute() else (ROOT / rec).resolve()
        if not rec.exists():
            notes.append(f"padme.recorded: no τ-bench trajectories at {rec}; notebook 50 writes a note instead of "
                         f"the recorded-pair check ({_data_fix(rec, 'padme.recorded', 'leave it so')})")  # fmt: skip
    return errors, notes


def _tau2_domain(src) -> str:
    from .padme.sources.factory import parse_source_spec

    return str(parse_source_spec(_plain(src)).get("domain") or "retail")


def _is_tau2(src) -> bool:
    from .padme.sources.factory import parse_source_spec

    return str(parse_source_spec(_plain(src)).get("kind")) in ("tau2", "tau2_retail")


def check_plan(prof, only: Sequence[str] | None = None) -> list[str]:
    """Raise a :class:`UserError` listing every backbone-name and dataset problem of ``prof`` for the
    notebooks that will run (``only``, else all); return the notes (datasets a notebook can do without)."""
    steps = [s.name for s in pipeline_steps.load_pipeline()]
    planned = [s for s in steps if not only or s in only]
    errors = backbone_problems(prof)
    data_errors, notes = dataset_problems(prof, planned)
    errors += data_errors
    if errors:
        more = f" (and {len(errors) - 1} more: " + "; ".join(errors[1:]) + ")" if len(errors) > 1 else ""
        raise UserError(errors[0] + more, file=prof.path,
                        fix=None if data_errors and len(errors) == len(data_errors) else
                        "correct the name, or define it under `backbones:` (e.g. {name: smol, model: openai/smol, "
                        "api_base: http://127.0.0.1:8080/v1}), then run `python -m shopbench.pipeline check` again")  # fmt: skip
    return notes
