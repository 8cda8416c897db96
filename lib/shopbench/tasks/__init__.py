"""Tasks: one evaluation each, run by one command or one call (issue 26 §1–3).

A task has one shape (as in inspect_ai): samples (the built dataset or the user's file) → the subject
under test (a model by litellm name, or an OpenAI-compatible server) → scorers → metrics with CIs → a
results log. Each task calls the same library functions as the notebook that runs the experiment, so
there is one path from prompt to number.

- :mod:`.registry` — :func:`task` (the decorator), :class:`Param`, :func:`get_task`, :func:`tasks`;
  imports nothing heavy, so ``shopbench list`` answers at once;
- :mod:`.pace_judge` — ``pace_judge``: a model as a PACE judge on PACEShop records (notebooks 20, 30);
- :mod:`.pace_assistant` — ``pace_assistant``: a model as the shopping assistant (B.9 prompt), or an
  assistant's recorded outputs, scored by the 12 checks and a PACE judge (notebook 10's generation path);
- :mod:`.padme_evaluator` — ``padme_evaluator``: a model as a pointwise PADMÉ evaluator (notebook 50);
- :mod:`.runner` — :func:`eval` (``shopbench.eval``, ``shopbench eval``) and :func:`preview`.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    ".registry": ["Param", "TaskInfo", "get_task", "task", "tasks"],
    ".runner": ["EvalResult", "NoUsableAnswer", "eval", "preview"],
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
