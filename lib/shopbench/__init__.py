"""shopbench: a research workbench for shopping assistants, shopping agents and their LLM judges.

What a notebook uses, importable from here (each name is loaded on first use, so ``import shopbench``
stays light)::

    import shopbench as sb
    ctx = sb.start("smoke", notebook="my_notebook")      # profile, gateway, reporting
    rows = ctx.gateway.run([sb.Call("q1", "local/echo", [{"role": "user", "content": "hi"}])], "demo")
    sb.metrics.headline_table(run_table)                 # PACE Tables 3 and 4 with CIs

- :func:`start` opens a notebook run (:mod:`shopbench.context`); :func:`load_profile` reads a profile;
- :class:`Gateway` / :class:`Call` — the one gateway for model calls (:mod:`shopbench.llm`);
- :func:`load_prompt` — the one prompt loader (``prompts/`` or ``$SHOPBENCH_PROMPTS_DIR``; :mod:`shopbench.prompts`);
- :func:`save_table` / :func:`save_figure` / :func:`build_index` — reporting (:mod:`shopbench.report`);
- :class:`UserError` and its kinds — the errors a user can act on (:mod:`shopbench.errors`);
- :func:`explore` — the results explorer in a notebook (:mod:`shopbench.explorer`);
- :func:`eval` — run one task on one model (:mod:`shopbench.tasks`, the same function as the
  ``shopbench eval`` command; ``shopbench.tasks.preview`` counts its calls — not re-exported here, where
  ``shopbench.preview`` is the cost-preview package);
- :func:`compare` — two results logs paired (``shopbench compare``, issue 29);
- the role packages as attributes: ``metrics``, ``stats``, ``judges``, ``llm``, ``report``, ``catalog``,
  ``paceshop``, ``padme``, ``shopsim``, ``annotate``, ``explorer``.
"""

from __future__ import annotations

from ._lazy import lazy_exports
from .version import __version__

_EXPORTS = {
    ".context": ["start", "RunContext"],
    ".config": ["load_profile", "Profile"],
    ".errors": ["UserError", "InputError", "ParamError"],
    ".paths": ["outputs_root", "profile_dir", "ROOT", "NOTEBOOKS_DIR"],
    ".prompts": ["load_prompt", "prompts_dir", "Prompt"],
    ".llm": ["Gateway", "Call", "parse_backbones"],
    ".report": ["save_table", "save_figure", "build_index"],
    ".explorer": ["explore"],
    ".tasks.runner": ["eval"],
    ".tasks.repeats": ["compare"],
}
_SUBPACKAGES = [
    "metrics",
    "stats",
    "judges",
    "llm",
    "report",
    "catalog",
    "paceshop",
    "padme",
    "shopsim",
    "annotate",
    "explorer",
    "tasks",
]
__getattr__, __dir__, _names = lazy_exports(__name__, _EXPORTS, _SUBPACKAGES)
__all__ = ["__version__", *_names]
