"""``python -m shopbench.llm.llamacpp install|status|path`` (same as ``python -m shopbench.llm``)."""

import sys

from . import main

sys.exit(main())
