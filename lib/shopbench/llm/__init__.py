"""The one gateway for model calls. Nothing else in the project imports litellm.

>>> gw = Gateway(cache_dir="outputs/cache", log_dir="outputs/smoke/calls")
>>> rows = gw.run([Call("q1", "local/echo", [{"role": "user", "content": "hi"}])], run_id="demo")

Names resolve on first use (:mod:`shopbench._lazy`), so ``import shopbench.llm.llamacpp`` (the packaged
models, read by ``shopbench list``) does not import litellm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the real types for mypy; at run time each name loads on first use
    from .anytime import budget_seconds, plan_caption, plan_columns  # noqa: F401
    from .backends import Backbone, MissingKeyError, UnknownModelError, check_model, parse_backbones  # noqa: F401
    from .budget import BudgetExceeded, Estimate  # noqa: F401
    from .call import Call, redact  # noqa: F401
    from .contract import Parsed, parse_output  # noqa: F401
    from .gateway import Gateway  # noqa: F401
    from .llamacpp.registry import ModelNotInstalled  # noqa: F401
    from .local import local_backends, register_local  # noqa: F401
    from .outcomes import OUTCOME_COLUMNS, count_line  # noqa: F401
    from .providers import preload  # noqa: F401
    from .result import CallResult, CallStatus  # noqa: F401

_EXPORTS = {
    ".anytime": ["budget_seconds", "plan_caption", "plan_columns"],
    ".backends": ["Backbone", "MissingKeyError", "UnknownModelError", "check_model", "parse_backbones"],
    ".budget": ["BudgetExceeded", "Estimate"],
    ".contract": ["Parsed", "parse_output"],
    ".call": ["Call", "redact"],
    ".gateway": ["Gateway"],
    ".llamacpp.registry": ["ModelNotInstalled"],
    ".providers": ["preload"],
    ".local": ["local_backends", "register_local"],
    ".outcomes": ["OUTCOME_COLUMNS", "count_line"],
    ".result": ["CallResult", "CallStatus"],
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
