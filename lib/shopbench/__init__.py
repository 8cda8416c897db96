"""shopbench: a research workbench for shopping assistants, shopping agents and their LLM judges.

Public entry points:

- :func:`shopbench.context.start` opens a notebook run (profile, gateway, reporting).
- :mod:`shopbench.llm` is the one gateway for model calls.
- :mod:`shopbench.report` saves tables and figures and builds the paper index.
"""

__version__ = "0.1.0"
