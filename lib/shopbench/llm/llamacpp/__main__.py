"""``python -m shopbench.llm.llamacpp install|status|path`` (same as ``python -m shopbench.llm``)."""

import sys

from .cli import main

sys.exit(main())
