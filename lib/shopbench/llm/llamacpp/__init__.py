"""Packaged GGUF models run with llama.cpp (llama-cpp-python), in this process behind litellm or as an
OpenAI-compatible server (issue 27: one module per concept).

- :mod:`.registry`: the models (:data:`~.registry.MODELS`), where each verified file lives
  (:func:`~.registry.model_path`), which of them a profile uses.
- :mod:`.gguf`: the GGUF header (metadata, architecture check).
- :mod:`.install`: ``make local-llm`` -- llama-cpp-python with portable CPU flags and the models,
  checked against pinned sha256 hashes.
- :mod:`.runtime`: thread settings, importing ``llama_cpp``, and ``LlamaCppHandler``, the litellm
  custom provider for ``llamacpp/<name>`` (registered by :mod:`shopbench.llm.providers`).
- :mod:`.server`: :func:`~.server.serve` runs ``llama_cpp.server`` as a subprocess (``openai/<alias>``).
- :mod:`.cli`: ``python -m shopbench.llm install|status|path``.

Importing this package (any of its modules) sets ``OMP_WAIT_POLICY=PASSIVE`` unless the user set a
policy, before ``llama_cpp`` and its OpenMP runtime load (:func:`.runtime.apply_wait_policy`).
"""

from .runtime import apply_wait_policy

apply_wait_policy()
