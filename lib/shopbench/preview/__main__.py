"""``python -m shopbench.preview``: the cost and time preview of a profile (:mod:`.gate`)."""

import sys

from .gate import main

sys.exit(main())
