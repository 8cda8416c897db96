"""The preflight of a profile's run (issue 25 item 2): every model the planned notebooks test answers,
in a form it accepts, with room for the prompts.

Issue 27: this is the part that needs the profile's plan -- which backbones the planned notebooks use
and the largest prompt each is sent (the preview's ``Line.max_input_tokens``) -- so it lives at the
pipeline's layer; the checks themselves (one tiny call per subject, the negotiation, one message per
failure) are :mod:`shopbench.llm.preflight`, which knows nothing of profiles or previews.

``pipeline run`` calls :func:`preflight` after the preview and before claiming the outputs; it is
callable from Python too (``preflight(profile, notebooks)``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .config import load_profile
from .llm.backends import Backbone, parse_backbones
from .llm.preflight import TINY_TIMEOUT_S, Finding, Subject, check_subjects, needs_network
from .paths import default_cache_dir
from .profiles import as_plain


def subjects_from_preview(
    pv: Any, backbones: dict[str, Backbone], notebooks: Iterable[str] | None = None
) -> list[Subject]:
    """The subjects of a :class:`shopbench.preview.Preview`: one per backbone its lines for the
    ``notebooks`` name (all when None), skipping backbones the notebooks skip (no key, not installed)."""
    planned = set(notebooks) if notebooks is not None else None
    out: dict[str, Subject] = {}
    for x in pv.lines:
        if (planned is not None and x.notebook not in planned) or not x.available or x.calls <= 0:
            continue
        b = backbones.get(x.backbone) or Backbone(name=x.backbone, model=x.model)
        if b.provider == "local" and b.server is None:
            continue
        s = out.setdefault(b.name, Subject(b))
        if x.notebook not in s.notebooks:
            s.notebooks.append(x.notebook)
        biggest = int(getattr(x, "max_input_tokens", 0) or round(x.input_tokens / x.calls))
        s.prompt_tokens = max(s.prompt_tokens, biggest)
        s.output_tokens = max(s.output_tokens, round(x.output_tokens / x.calls))
    return list(out.values())


def planned_subjects(prof: Any, notebooks: Iterable[str] | None = None, preview: Any = None) -> list[Subject]:
    """The subjects of a loaded profile for the ``notebooks`` planned (all when None). The preview is
    built only when a subject needs the network (else the project-run models are checked only with a
    ``preview`` given, see the module docstring)."""
    backbones = {b.name: b for b in parse_backbones([as_plain(e) for e in prof.params.backbones])}
    if preview is None:
        if not needs_network(backbones.values()):
            return []
        from .preview import build_preview

        preview = build_preview(prof)
    return subjects_from_preview(preview, backbones, notebooks)


def cache_dir_of(prof: Any) -> Path:
    """The response cache folder the profile's gateway uses (``shopbench.context``), where the
    negotiated forms are kept."""
    g = prof.params.gateway
    return (
        Path(g.cache_dir)
        if g.cache_dir
        else (Path(prof.out) / "cache" if prof.params.rehearsal else default_cache_dir())
    )


def preflight(
    profile: Any, notebooks: Iterable[str] | None = None, *, preview: Any = None, log: Any = print,
    raise_on_failure: bool = True,
) -> list[Finding]:  # fmt: skip
    """The preflight of a profile (a name, a path or a loaded profile) for the ``notebooks`` planned
    (all when None). ``preview``: the run's preview, when already built (its prompt sizes are reused;
    it also enables the context check of the models the project runs). A rehearsal profile's models
    answer from the project's own servers: nothing is checked."""
    prof = load_profile(str(profile)) if isinstance(profile, str | Path) else profile
    if prof.params.rehearsal is not None:
        return []
    subjects = planned_subjects(prof, notebooks, preview)
    if not subjects:
        return []
    g = prof.params.gateway
    return check_subjects(subjects, cache_dir=cache_dir_of(prof), timeout_s=min(TINY_TIMEOUT_S, g.timeout_s),
                          probe_timeout_s=g.timeout_s, project_run=preview is not None,
                          raise_on_failure=raise_on_failure, log=log)  # fmt: skip
