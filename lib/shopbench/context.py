"""A notebook run: the profile, its output folders, the model gateway, prompts and reporting.

Every notebook begins with::

    ctx = shopbench.context.start(profile, notebook="00_backends")

and then calls ``ctx.gateway``, ``ctx.prompt(name)``, ``ctx.table(...)``, ``ctx.figure(...)``.
The context records which prompt files the notebook's code read (every prompt loader reports to it:
:func:`shopbench.prompts.record_prompts_with`) and which backbones it used, keeps them for the notebooks
that read this one's data (:mod:`shopbench.report.provenance`), and so each artefact it saves carries
its provenance, its upstream notebooks' included, into the paper index (issue 25 item 5).
"""

from __future__ import annotations

import functools
import hashlib
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from .config import Profile, claim_outputs, load_profile
from .paths import default_cache_dir
from .pipeline_steps import upstream
from .profiles import ProfileParams, as_plain
from .prompts import Prompt, read_prompt, read_prompt_file, record_prompts_with, strip_header
from .report.artifacts import Provenance, git_commit, now_iso, save_figure, save_table


@dataclass
class RunContext:
    profile: Profile
    notebook: str
    prompts_used: dict[str, str] = field(default_factory=dict)
    backbones_used: set[str] = field(default_factory=set)
    _gateway: object | None = None
    _backbones: list | None = None
    _commit: str | None = None

    @property
    def params(self) -> ProfileParams:
        """The validated profile: ``ctx.params.padme.evaluator_runs``, ``ctx.params.gateway.timeout_s``;
        a notebook's own settings under ``ctx.params.notebooks`` (``.agreement.n_perm`` for 70_agreement)."""
        return self.profile.params

    @property
    def out(self) -> Path:
        """``outputs/<profile file stem>/``."""
        return self.profile.out

    @property
    def paper_dir(self) -> Path:
        return self.out / "paper"

    @property
    def data_dir(self) -> Path:
        d = self.out / "data"
        d.mkdir(parents=True, exist_ok=True)
        return d

    @property
    def seed(self) -> int:
        return self.params.seed

    # ---- models ------------------------------------------------------------------------------
    @property
    def backbones(self):
        """The profile's backbones, parsed once (the gateway shares these objects)."""
        if self._backbones is None:
            from .llm import parse_backbones

            try:
                self._backbones = parse_backbones([as_plain(b) for b in self.params.backbones])
            except ValueError as e:
                raise self.profile.error("backbones", str(e)) from None
            if self.params.rehearsal is not None:  # hosted_vllm/ on the rehearsal's fleet (issue 14 §5)
                from .rehearsal.fleet import apply_fleet

                apply_fleet(self._backbones)
        return self._backbones

    def available_backbones(self, verbose: bool = True):
        """Backbones that can be called here; the others are listed with the reason."""
        ok = []
        for b in self.backbones:
            avail, why = b.availability()
            if avail:
                ok.append(b)
            elif verbose:
                print(f"skipping backbone {b.name}: {why}")
        return ok

    @property
    def gateway(self):
        if self._gateway is None:
            from .llm import Gateway
            from .report.partial import record as record_partial

            g = self.params.gateway
            # a rehearsal's answers are keyed by the real model names: never in the shared cache
            cache_dir = g.cache_dir or (self.out / "cache" if self.params.rehearsal else default_cache_dir())
            self._gateway = Gateway(
                cache_dir=cache_dir,
                log_dir=self.out / "calls",
                concurrency=dict(g.concurrency),
                timeout_s=g.timeout_s,
                max_retries=g.max_retries,
                max_cost_usd=g.max_cost_usd,
                progress=g.progress,
                backbones=self.backbones,
                mode=g.mode,
                batch_poll_s=g.batch_poll_s,
                batch_min_calls=g.batch_min_calls,
                budget_mode="partial",  # a cost-cap stop leaves partial tables, never a failed notebook
                on_run_end=functools.partial(record_partial, self.out / "calls"),  # issue 27: the hook
            )
        return self._gateway

    def use_backbones(self, names) -> None:
        before = len(self.backbones_used)
        self.backbones_used.update(names)
        if len(self.backbones_used) != before:
            self._save_inputs()

    # ---- prompts -----------------------------------------------------------------------------
    def prompt(self, name: str) -> Prompt:
        text = read_prompt(name, f"notebook {self.notebook}")
        sha = hashlib.sha256(text.encode()).hexdigest()
        self.saw_prompt(name, sha)  # also when another context is the current recorder
        return Prompt(name, text, sha)

    def prompt_file(self, path: str | Path, needed_by: str | None = None) -> Prompt:
        """A prompt file named by a profile key (``padme.evaluator_prompt``; resolved by
        :func:`shopbench.prompts.prompt_file`), header stripped; its hash goes into the provenance."""
        name, text, sha = read_prompt_file(path, needed_by or f"notebook {self.notebook}")
        self.saw_prompt(name, sha)
        return Prompt(name, strip_header(text), sha)

    def saw_prompt(self, name: str, sha256: str) -> None:
        """Record a prompt read by any loader while this context is the current one."""
        if self.prompts_used.get(name) != sha256:
            self.prompts_used[name] = sha256
            self._save_inputs()

    def _save_inputs(self) -> None:
        from .report.provenance import record_inputs

        record_inputs(self.paper_dir, self.notebook, self.prompts_used, self.backbones_used, now_iso())

    # ---- reporting ---------------------------------------------------------------------------
    def provenance(self) -> Provenance:
        from .report.provenance import upstream_inputs

        if self._commit is None:
            self._commit = os.environ.get("SHOPBENCH_GIT_COMMIT") or git_commit()
        return Provenance(
            notebook=self.notebook,
            profile=self.profile.name,
            params_file=str(self.profile.path.name),
            params_sha256=self.profile.sha256,
            prompts=dict(self.prompts_used),
            backbones=sorted(self.backbones_used),
            git_commit=self._commit,
            date=now_iso(),
            upstream=upstream_inputs(self.paper_dir, upstream(self.notebook)[1:]),
        )

    def table(self, df, name: str, caption: str, *, evidence, why: str = "", **kw):
        """Save a table (CSV + Markdown + LaTeX) with a caption and register it for the index.

        ``evidence`` (required): ``"measured"``, ``"known-answer"``, ``"reference"``, ``"mixed"`` (with
        an ``evidence`` column), ``ctx.evidence.per_row("<producer column>")`` or ``{column: kind}``
        (:mod:`shopbench.report.evidence`); ``why`` says what makes it that kind (shown in the caption)."""
        save_table(df, name, caption, self.paper_dir, self.provenance(), evidence=evidence, why=why,
                   partial=self.partial(), **kw)  # fmt: skip
        return df

    def figure(self, fig, name: str, caption: str, *, evidence, why: str = "", **kw):
        """Save a figure (PNG + PDF) with a caption and register it for the index; ``evidence`` as
        for :meth:`table` (a kind, or ``{series: kind}``)."""
        save_figure(fig, name, caption, self.paper_dir, self.provenance(), evidence=evidence, why=why,
                    partial=self.partial(), **kw)  # fmt: skip
        return fig

    def partial(self) -> dict | None:
        """The cost-capped runs this notebook's artefacts are built from (its own and those of the
        notebooks it reads), or None (:mod:`shopbench.report.partial`)."""
        from .report.partial import for_notebooks

        return for_notebooks(self.out / "calls", upstream(self.notebook))

    @property
    def evidence(self):
        """:mod:`shopbench.report.evidence` (``ctx.evidence.per_row``, ``.producer_kind``, kinds)."""
        from .report import evidence

        return evidence


def start(profile: str | Path = "smoke", notebook: str = "notebook") -> RunContext:
    """Open a run: load and validate the profile (a :class:`~shopbench.errors.ParamError` names the
    file, key and fix), claim its output folder, seed Python's and NumPy's generators."""
    prof = load_profile(profile)
    claim_outputs(prof)
    seed = prof.params.seed
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:
        pass
    if prof.params.rehearsal is not None:  # a rehearsal notebook opened on its own starts its server
        from .rehearsal import ensure_serving

        ensure_serving(prof.params.rehearsal.server_kwargs())
    ctx = RunContext(prof, notebook)
    (ctx.out / "calls").mkdir(parents=True, exist_ok=True)
    ctx.paper_dir.mkdir(parents=True, exist_ok=True)
    ctx._save_inputs()  # this run's record replaces the notebook's last one
    record_prompts_with(ctx.saw_prompt)  # every prompt read from now on is this notebook's
    return ctx
