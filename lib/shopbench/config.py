"""Run profiles: one YAML file per profile in ``params/`` (smoke, paper, full).

Errors name the file and the key path at fault. Keys and secrets never belong in a profile:
providers read them from the environment.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .paths import PARAMS_DIR, ROOT
from .secrets import secret_in

_MISSING = object()
_SECRET_KEY = re.compile(r"(api[_-]?key|secret|token|password)$", re.I)


from .errors import ParamError  # noqa: E402  (re-exported: the profile's error type)


@dataclass
class Profile:
    """A loaded parameter file: ``name``, ``path``, ``data`` and its ``sha256`` (for run manifests)."""

    name: str
    path: Path
    data: dict[str, Any]
    sha256: str
    text: str = field(repr=False, default="")

    def get(self, keypath: str, default: Any = _MISSING, kind: type | tuple[type, ...] | None = None) -> Any:
        """Value at a dotted key path (``"gateway.concurrency.openai"``).

        Without a default a missing key is a :class:`ParamError`; with ``kind`` a value of another
        type is one too. Both name the file and the key path.
        """
        node: Any = self.data
        for part in keypath.split("."):
            if isinstance(node, dict) and part in node:
                node = node[part]
            else:
                if default is _MISSING:
                    raise ParamError(f"{self.path}: missing key '{keypath}'")
                return default
        if kind is not None and node is not None and not _is_kind(node, kind):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise ParamError(
                f"{self.path}: key '{keypath}' must be {names}, got {type(node).__name__} {node!r}"
            )
        return node

    def error(self, keypath: str, message: str) -> ParamError:
        return ParamError(f"{self.path}: key '{keypath}': {message}")


def _is_kind(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        return False
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, kinds)


def resolve_profile_path(profile: str | Path) -> Path:
    """``"smoke"`` → ``params/smoke.yaml``; a path is taken as it is (relative to the repo if not found)."""
    p = Path(profile)
    if p.suffix in (".yaml", ".yml"):
        if not p.is_absolute() and not p.exists() and (ROOT / p).exists():
            p = ROOT / p
        return p
    return PARAMS_DIR / f"{profile}.yaml"


def load_profile(profile: str | Path) -> Profile:
    """Load and check a profile by name or path."""
    path = resolve_profile_path(profile)
    if not path.exists():
        known = sorted(q.stem for q in PARAMS_DIR.glob("*.yaml"))
        raise ParamError(f"No parameter file {path}. Known profiles: {', '.join(known)}")
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise ParamError(f"{path}{where}: not valid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(data, dict):
        raise ParamError(f"{path}: the top level must be a mapping of keys, got {type(data).__name__}")
    prof = Profile(
        name=str(data.get("profile") or path.stem),
        path=path,
        data=data,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        text=text,
    )
    _check_no_secrets(prof, data, "")
    prof.get("seed", 0, int)
    prof.get("backbones", [], list)
    prof.get("gateway", {}, dict)
    return prof


def _check_no_secrets(prof: Profile, node: Any, prefix: str) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            kp = f"{prefix}.{k}" if prefix else str(k)
            if _SECRET_KEY.search(str(k)) and v not in (None, ""):
                raise prof.error(
                    kp, "secrets never go in parameter files; set the provider's environment variable instead"
                )
            _check_no_secrets(prof, v, kp)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _check_no_secrets(prof, v, f"{prefix}[{i}]")
    elif isinstance(node, str) and (what := secret_in(node)):  # shopbench.secrets: every provider's key shape
        raise prof.error(prefix, f"this looks like an API key ({what}); keys come from the environment only")
