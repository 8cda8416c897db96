"""The one gateway for model calls. Nothing else in the project imports litellm.

>>> gw = Gateway(cache_dir="outputs/cache", log_dir="outputs/smoke/calls")
>>> rows = gw.run([Call("q1", "local/echo", [{"role": "user", "content": "hi"}])], run_id="demo")
"""

from .backends import Backbone, MissingKeyError, UnknownModelError, check_model, parse_backbones
from .budget import BudgetExceeded, Estimate
from .contract import Parsed, parse_output
from .gateway import Call, Gateway, redact, results_frame
from .llamacpp import ModelNotInstalled
from .local import local_backends, register_local
from .result import CallResult, CallStatus

__all__ = [
    "Backbone", "BudgetExceeded", "Call", "CallResult", "CallStatus", "Estimate", "Gateway", "MissingKeyError", "ModelNotInstalled",
    "Parsed", "UnknownModelError", "check_model", "local_backends", "parse_backbones", "parse_output",
    "redact", "register_local", "results_frame",
]  # fmt: skip
