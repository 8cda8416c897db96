"""The cost and time preview (issue 14 §2), becoming a package (issue 27): this step only moves
``preview.py`` to ``preview/notebooks.py``; the next splits it by concept."""

from .notebooks import *  # noqa: F403
from .notebooks import _Builder, _sample_build, _text_tokens  # noqa: F401
