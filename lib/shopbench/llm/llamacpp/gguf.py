"""The GGUF file header (issue 27: ``llm/llamacpp`` split by concept): key/value metadata read without
the tensor data, and the architecture check an installed model file must pass."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .registry import ModelInstallError, ModelSpec

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


def check_gguf(spec: ModelSpec, path: Path) -> dict[str, Any]:
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
