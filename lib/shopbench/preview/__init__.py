"""Cost and time preview of a profile, before anything is spent (issue 14 §2).

``make preview PROFILE=<name>`` (``python -m shopbench.preview --profile <name>``) and
``python -m shopbench.pipeline run`` (before its first notebook) print, per notebook × backbone:
calls, input and output tokens, dollars and hours, and write ``outputs/<profile>/paper/preview.json``.
With ``--only`` (as ``pipeline run --only``) it covers those notebooks alone; it first runs the checks of
:mod:`shopbench.plancheck` (backbone names, datasets; issue 25 §2).
It needs no key and makes no model call: prices come from litellm's bundled price map, prompts from
the project's own prompt builders.

The package, by concept: :mod:`.notebooks` walks the profile's plan notebook by notebook (calls and
tokens per notebook × backbone, and how each is estimated); :mod:`.tokens` sizes prompts and answers;
:mod:`.pricing` turns lines into dollars and hours; :mod:`.estimate` puts them together
(:func:`build_preview`); :mod:`.render` prints and writes the preview; :mod:`.budget` says how many tasks × repeats each
planned comparison needs to detect a difference (issue 29 item 5); :mod:`.gate` holds the limits,
the pipeline's check before a run and the command line (issue 27 split the former ``preview.py``).
"""

from .budget import budget_table, profile_budget, render_budget
from .estimate import build_preview
from .gate import check_before_run, main, needs_gate, refusals, run_preview
from .lines import Line, Preview
from .render import render, write

__all__ = [
    "Line",
    "Preview",
    "budget_table",
    "build_preview",
    "check_before_run",
    "main",
    "needs_gate",
    "profile_budget",
    "refusals",
    "render",
    "render_budget",
    "run_preview",
    "write",
]
