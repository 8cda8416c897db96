"""``python -m shopbench.preview``."""

import sys

from .notebooks import main

sys.exit(main())
