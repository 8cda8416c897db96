"""Environment variables set for a while (a notebook's progress file, a rehearsal's provider URLs)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager


@contextmanager
def scoped_environ(updates: Mapping[str, str]) -> Iterator[None]:
    """``updates`` applied to ``os.environ`` (so also to child processes) until exit, then the previous
    values restored (a variable that was unset is removed again)."""
    saved = {k: os.environ.get(k) for k in updates}
    os.environ.update(updates)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
