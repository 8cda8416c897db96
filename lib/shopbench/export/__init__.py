"""Hugging Face dataset folders out of the workbench's outputs, and back in as task inputs (issue 30 item 3).

- :mod:`.hf` — :func:`~.hf.export` (``shopbench export NAME --out DIR``), :func:`~.hf.is_export`,
  :func:`~.hf.read_config` (a config's rows, as the tasks read them).
"""
