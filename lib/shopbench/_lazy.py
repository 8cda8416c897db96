"""Lazy re-exports for package ``__init__`` files: the public names of a package resolve to their
private modules on first access, so ``import shopbench`` (or ``shopbench.stats``) stays light and a
notebook still writes ``from shopbench.stats import bootstrap_mean``."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]], submodules: Sequence[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package``: ``exports`` maps a submodule (relative,
    ``".bootstrap"``) to the names it provides; ``submodules`` are subpackages reachable as attributes
    (``shopbench.metrics`` after ``import shopbench``). A resolved name is cached on the package."""
    where = {name: mod for mod, names in exports.items() for name in names}
    subs = set(submodules)
    if clash := subs & set(where):
        raise ValueError(f"{package}: {sorted(clash)} named both as a submodule and as an export")

    def __getattr__(name: str) -> Any:
        if name in subs:
            return importlib.import_module(f".{name}", package)
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name], package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where) | subs)

    return __getattr__, __dir__, sorted(where)
