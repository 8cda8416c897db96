"""The only place that imports litellm.

litellm fetches its model cost map from the network at import unless
``LITELLM_LOCAL_MODEL_COST_MAP`` is set; we set it (a user's own value wins). The embedded backends
are registered as litellm custom providers above this module, by :func:`shopbench.llm.providers.get_litellm`
(issue 27: this module imports nothing of the project, so the backends may import it).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")
# no network but the providers': litellm would fetch Anthropic's beta-header table on first use
os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")

import litellm  # noqa: E402

litellm.telemetry = False
litellm.suppress_debug_info = True
litellm.drop_params = True
litellm.num_retries = 0  # the gateway retries itself, with its own log of attempts
