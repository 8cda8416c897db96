"""The preview as a gate: ``python -m shopbench.preview`` and the pipeline's check before a run
(issue 14 §2): the limits a run must not exceed, and the refusal when it would."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from ..errors import UserError, exit_on_user_error
from ..pipeline_steps import known_only
from .budget import DEFAULT_DETECT
from .estimate import build_preview
from .lines import Preview
from .pricing import model_kind
from .render import render, write

DESCRIPTION = "Cost and time preview of a profile, before anything is spent (issue 14 §2)."


# ---- limits ---------------------------------------------------------------------------------------
def refusals(pv: Preview, gateway) -> list[str]:
    """Why a run of this profile must not start (empty: it may). Counts what would run now: backbones
    whose key is missing are skipped by the notebooks, so their cost is not spent."""
    out = []
    api = [x for x in pv.lines if x.kind == "api"]
    api_now = pv.total(["api"], only_available=True)
    if gateway.max_cost_usd is not None and api_now["usd"] > gateway.max_cost_usd:
        out.append(f"the estimate is ${api_now['usd']:,.2f} for the API calls, above gateway.max_cost_usd = "
                   f"${gateway.max_cost_usd:,.2f}: raise gateway.max_cost_usd in the profile (or shrink the run)")  # fmt: skip
    local_now = pv.total(["llamacpp", "embedded"], only_available=True)
    if gateway.max_local_hours is not None and local_now["hours"] > gateway.max_local_hours:
        out.append(f"the local models' part is estimated at {local_now['hours']:,.1f} h on this machine, above "
                   f"gateway.max_local_hours = {gateway.max_local_hours}: raise gateway.max_local_hours (or shrink "
                   "the local runs)")  # fmt: skip
    if api and not any(x.available for x in api):
        missing = sorted({x.reason.split(": set ", 1)[-1].split(" in the environment")[0] for x in api
                          if "set " in x.reason})  # fmt: skip
        out.append(f"none of the profile's {len({x.model for x in api})} API models can be called here (keys "
                   f"missing: {', '.join(missing) or 'see the availability column'}); this profile runs the papers' "
                   "models, so without keys it would produce none of their tables. Set the keys in the "
                   "environment, or run an offline profile (make paper)")  # fmt: skip
    return out


def run_preview(
    profile: str,
    quiet: bool = False,
    only: Sequence[str] | None = None,
    detect: float | None = DEFAULT_DETECT,
    strict_budget: bool = True,
) -> tuple[Preview, list[str], Path]:
    """Build, print and write the preview of ``profile`` (its notebooks in ``only``, else all) after the
    checks of :func:`shopbench.plancheck.check_plan`, with the budget to detect ``detect`` (issue 29
    item 5); returns it with its refusals and the file."""
    from ..config import claim_outputs, load_profile
    from ..plancheck import check_plan

    prof = load_profile(profile)
    notes = check_plan(prof, only)  # an undefined backbone or a missing dataset: one message, exit 2
    with ExitStack() as stack:
        if prof.params.rehearsal is not None:  # a rehearsal's models answer from the local server
            from ..rehearsal import active, pointed_at

            if not active():
                stack.enter_context(pointed_at("http://127.0.0.1:0"))
        pv = build_preview(prof, only=only, detect=detect, strict_budget=strict_budget)
        if only:
            pv.notes.append(f"only the notebooks {', '.join(only)} (--only)")
        pv.notes.extend(notes)
        refused = refusals(pv, prof.params.gateway)
    path = write(pv, claim_outputs(prof) / "paper", refused)
    if not quiet:
        print(render(pv))
        print(f"\npreview: {path}")
        for r in refused:
            print(f"WOULD REFUSE TO START: {r}")
    return pv, refused, path


def needs_gate(prof) -> bool:
    """Whether a run of ``prof`` is gated by the preview: it names a model that costs money or time off
    this machine, or sets ``max_local_hours``. Offline profiles (smoke, paper) skip the preview's sample
    build."""
    from ..llm import parse_backbones
    from ..profiles import as_plain

    g = prof.params.gateway
    kinds = {"llamacpp" if b.server else model_kind(b.model)
             for b in parse_backbones([as_plain(e) for e in prof.params.backbones])}  # fmt: skip
    return g.max_local_hours is not None or bool(kinds & {"api", "self-hosted"})


def check_before_run(profile: str, only: Sequence[str] | None = None) -> Preview:
    """The pipeline's gate: print the preview, raise a :class:`UserError` when a limit is exceeded;
    returns the preview (the preflight reuses its prompt sizes, issue 25)."""
    pv, refused, path = run_preview(profile, only=only, strict_budget=False)
    if refused:
        raise UserError("this run would exceed its limits: " + "; ".join(refused),
                        fix=f"see {path}; change the setting named above and run again")  # fmt: skip
    return pv


@exit_on_user_error
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shopbench.preview", description=DESCRIPTION)
    ap.add_argument("--profile", default="paper", help="profile name (params/<name>.yaml) or a YAML path")
    ap.add_argument("--only", nargs="*", help="preview only these notebooks (as pipeline run --only)")
    ap.add_argument("--detect", type=float, default=DEFAULT_DETECT, metavar="DELTA",
                    help="the difference the budget section is about (default 0.05 = 5 points; issue 29 item 5)")  # fmt: skip
    a = ap.parse_args(argv)
    if a.only:
        known_only(a.only)
    run_preview(a.profile, only=a.only, detect=a.detect)
    return 0  # a preview informs; the pipeline refuses (check_before_run)
