"""A PADMÉ trajectory source from its profile spec (seed 003 §3.1 "Generation"): :func:`make_source`
builds the shop or τ² source named by ``{"kind": ...}``, :func:`parse_source_spec` reads a spec.

This factory sits above the concrete sources (issue 27, "Layers that only point down"): :mod:`.base`
holds only the interface and the shared helpers, and :mod:`.shop` and :mod:`.tau2` build on it, so
nothing below this module imports a concrete source. The concrete modules are imported when a source
of their kind is built, so ``import shopbench.padme.sources`` stays light.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .base import TrajectorySource

__all__ = [
    "DEFAULT_TAU2_PATH",
    "TAU2_DOMAINS",
    "make_source",
    "parse_source_spec",
    "tau2_domain",
    "tau2_path",
]

DEFAULT_TAU2_PATH = "../shared/data/tau2_retail"
_SHOP_KEYS = {"kind", "n_products", "catalog_seed", "difficulties", "min_items", "max_items", "tool_mode",
              "retrieval", "max_turns"}  # fmt: skip
_TAU2_KEYS = {"kind", "path", "split", "tool_mode", "max_turns", "fidelity", "reward_basis", "nl_judge",
              "tool_texts"}  # fmt: skip
_DOMAIN_KEYS = {"kind", "domain", "path", "split", "tool_mode", "max_turns", "retrieval", "tasks"}
TAU2_DOMAINS = ("airline", "banking_knowledge", "retail", "telecom")


def tau2_domain(spec: Mapping[str, Any]) -> str:
    """The domain a ``{kind: tau2}`` spec names (default ``retail``); an unknown one is a ValueError."""
    dom = str(spec.get("domain") or "retail")
    if dom not in TAU2_DOMAINS:
        raise ValueError(f"tau2 source spec: unknown domain {dom!r}; use one of {list(TAU2_DOMAINS)}")
    return dom


def tau2_path(spec: Mapping[str, Any], root: Path) -> Path:
    """The folder a ``{kind: tau2}`` spec names: ``path`` (relative to ``root``), else
    ``../shared/data/tau2_<domain>``."""
    dom = tau2_domain(spec)
    path = Path(spec.get("path") or (DEFAULT_TAU2_PATH if dom == "retail" else f"../shared/data/tau2_{dom}"))
    return path if path.is_absolute() else Path(root) / path


def parse_source_spec(spec: Mapping[str, Any] | str) -> dict[str, Any]:
    """A source spec as a dict with ``kind`` (``"tau2:<path>"`` -> ``{"kind": "tau2", "path": ...}``)."""
    if isinstance(spec, str):
        kind, _, arg = spec.partition(":")
        out: dict[str, Any] = {"kind": kind.strip()}
        if arg:
            out["path"] = arg.strip()
        return out
    if not isinstance(spec, Mapping):
        raise ValueError(f"a source spec is a dict like {{'kind': 'shop'}} or a string like 'tau2:<path>', "
                         f"got {type(spec).__name__}")  # fmt: skip
    if "kind" not in spec:
        raise ValueError(f"source spec {dict(spec)!r} has no 'kind'; use 'shop' or 'tau2'")
    return dict(spec)


def _check_keys(d: Mapping[str, Any], allowed: set[str], what: str) -> None:
    unknown = set(d) - allowed
    if unknown:
        raise ValueError(f"{what}: unknown keys {sorted(unknown)}; allowed {sorted(allowed)}")


def make_source(spec: Mapping[str, Any] | str, root: Path) -> TrajectorySource:
    """A source from a spec: ``{"kind": "shop", "n_products": 2000}``, ``{"kind": "tau2", "path":
    "../shared/data/tau2_retail"}``, ``{"kind": "tau2", "domain": "airline", "tasks": 3}`` (any τ²-family
    domain: :class:`~shopbench.padme.sources.domains.DomainSource`; a missing folder is a
    FileNotFoundError, which :func:`shopbench.padme.experiment.build_sources` reports and skips) (relative paths are resolved against ``root``, the repository
    root), or the strings ``"shop"``, ``"tau2"`` (the default path) and ``"tau2:<path>"``.

    Recorded trajectories are not a source (they cannot be steered): use
    :func:`shopbench.padme.sources.recorded.load_recorded` for meta-evaluation."""
    d = parse_source_spec(spec)
    kind = str(d["kind"])
    if kind == "shop":
        _check_keys(d, _SHOP_KEYS, "shop source spec")
        from .shop import ShopSource

        return ShopSource(**{k: v for k, v in d.items() if k != "kind"})
    if kind in ("tau2", "tau2_retail") and tau2_domain(d) != "retail":
        # issue 28 item 3: airline, banking_knowledge, telecom through the domain interface
        _check_keys(d, _DOMAIN_KEYS, f"tau2 source spec (domain {d['domain']!r})")
        from .domains import DomainSource

        path = tau2_path(d, root)
        if not path.is_dir():
            raise FileNotFoundError(f"no {d['domain']} data folder at {path}")
        return DomainSource(path, **{k: v for k, v in d.items() if k not in ("kind", "path")})
    if kind in ("tau2", "tau2_retail"):
        d.pop("domain", None)  # retail: the source of issue 15, unchanged
        _check_keys(d, _TAU2_KEYS, "tau2 source spec")
        from .tau2 import Tau2Source

        return Tau2Source(tau2_path(d, root), **{k: v for k, v in d.items() if k not in ("kind", "path")})
    if kind in ("recorded", "tau_bench"):
        raise ValueError(
            "recorded trajectories cannot be steered, so they are not a rollout source; load them with "
            "shopbench.padme.sources.recorded.load_recorded(path) and build meta-evaluation pairs with "
            "recorded_pairs(rollouts, criterion)"
        )
    raise ValueError(f"unknown source kind {kind!r}; use 'shop' or 'tau2'")
