"""Up-to-date notebooks: ``make paper`` re-executes a notebook only when something it is made from changed.

The same rule as ``make`` itself. Each notebook of a run gets a *fingerprint*, a hash of everything its
outputs are made from:

- the stored notebook (its bytes), ``notebooks/pipeline.yaml`` and the profile file (its bytes);
- the library: every file of the imported ``shopbench`` package, and the prompts folder;
- the Python version and every installed distribution's name and version;
- the external files the profile names (each string value that is an existing path, relative to the
  repository or to the profile's folder, e.g. ``../shared/data/tau2_retail``), those the notebook's
  ``parameters`` cell names (relative to ``notebooks/``, e.g. ``../../shared/data/padme_human_study``)
  and the profile's annotation answers (``outputs/<profile>/annotations``): path, size and mtime of
  each file under them;
- which provider settings are present: the *names* of environment variables ending in ``_API_KEY``,
  ``_API_BASE``, ``_API_VERSION``, ``_ACCESS_KEY_ID`` or starting with ``SHOPBENCH_`` (never a value);
- the fingerprints of every earlier notebook of the pipeline, so a change upstream re-executes
  everything after it.

A notebook is **up to date** when its fingerprint equals the one stored after its last successful
run (``outputs/<profile>/paper/notebooks_state.json``), its executed copy exists, every artefact it
must produce is registered from that run, and none of that run's model calls failed with an error a
retry could change (a prompt longer than the model's context window cannot; a timeout or a refused
key can, and re-executing retries it). An up-to-date notebook is not re-executed: its artefact registrations and
call logs are kept, and ``run.json`` says ``up to date``.

What the fingerprint leaves out, on purpose: the contents of the model-call cache (a notebook reads
only the calls its own prompts name, and the anytime sweeps stop on the costs recorded for those
calls, so the same inputs give the same outputs), and the values of credentials. ``make paper
FRESH=1`` (``--rerun``) re-executes every notebook anyway; the rehearsal profile always re-executes
(its point is the server drills).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATE_FILE = "notebooks_state.json"
_ENV_NAME = re.compile(r"(_API_KEY|_API_BASE|_API_VERSION|_ACCESS_KEY_ID)$|^SHOPBENCH_")
#: variables the pipeline sets for its own notebooks (they say nothing about the inputs)
_ENV_IGNORED = {"SHOPBENCH_GIT_COMMIT", "SHOPBENCH_PROGRESS"}
_MAX_FILES_PER_PATH = 50_000


def _update_file(h: Any, path: Path, name: str) -> None:
    h.update(name.encode() + b"\0")
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    h.update(b"\0")


def tree_digest(folder: Path, pattern: str = "*") -> str:
    """sha256 over every file under ``folder`` matching ``pattern`` (relative paths and contents);
    ``__pycache__`` and hidden folders are left out. A missing folder hashes as ``missing``."""
    h = hashlib.sha256()
    if not folder.is_dir():
        return "missing"
    for p in sorted(folder.rglob(pattern)):
        rel = p.relative_to(folder)
        if not p.is_file() or any(part == "__pycache__" or part.startswith(".") for part in rel.parts):
            continue
        _update_file(h, p, rel.as_posix())
    return h.hexdigest()


def library_digest() -> str:
    """The ``shopbench`` package's files and the prompts folder (:mod:`shopbench.paths`)."""
    from .prompts import prompts_dir

    return hashlib.sha256(
        (tree_digest(Path(__file__).parent) + tree_digest(prompts_dir(), "*.txt")).encode()
    ).hexdigest()


def environment_digest(environ: Mapping[str, str] | None = None) -> str:
    """Python version, installed distributions (name==version) and the *names* of provider settings."""
    environ = os.environ if environ is None else environ
    dists = sorted(
        f"{(d.metadata['Name'] or '').lower()}=={d.version}" for d in importlib.metadata.distributions()
    )
    names = sorted(k for k in environ if _ENV_NAME.search(k) and k not in _ENV_IGNORED)
    payload = json.dumps({"python": sys.version, "dists": dists, "env_names": names})
    return hashlib.sha256(payload.encode()).hexdigest()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def external_paths(data: Mapping[str, Any], bases: Iterable[Path]) -> list[Path]:
    """The existing files and folders a profile's string values name (relative to one of ``bases``)."""
    found: dict[str, Path] = {}
    for s in _strings(data):
        if "/" not in s and "\\" not in s:
            continue
        for base in bases:
            p = (base / s) if not Path(s).is_absolute() else Path(s)
            if p.exists():
                found[str(p.resolve())] = p.resolve()
                break
    return [found[k] for k in sorted(found)]


_QUOTED = re.compile(r"\"([^\"\n]+)\"|'([^'\n]+)'")


def notebook_paths(notebook: Path) -> list[Path]:
    """Existing files and folders named by string literals in the notebook's ``parameters`` cell
    (relative to the notebook's folder): the data a notebook reads by default."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells") or []
    except (OSError, ValueError):
        return []
    literals = [
        a or b
        for c in cells
        if "parameters" in (c.get("metadata", {}).get("tags") or [])
        for a, b in _QUOTED.findall("".join(c.get("source") or []))
    ]
    return external_paths({"literals": literals}, [notebook.parent])


def external_digest(paths: Iterable[Path]) -> str:
    """Path, size and mtime of every file under ``paths`` (stat only: these are data others made).
    A missing path and an empty folder hash alike: a run that creates an empty annotations folder
    does not make the next run's inputs differ."""
    h = hashlib.sha256()
    for root in paths:
        if not root.exists():
            continue
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        if not files:
            continue
        for p in files[:_MAX_FILES_PER_PATH]:
            st = p.stat()
            h.update(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        h.update(f"{root}\0{len(files)}\n".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class RunInputs:
    """What every notebook of one run shares (computed once per run)."""

    profile_bytes: bytes
    pipeline_bytes: bytes
    library: str
    environment: str
    external: str
    annotations: Path | None = None  # the profile's annotation answers (read by notebooks 60 and 70)

    @classmethod
    def of(
        cls,
        profile_path: Path,
        profile_data: Mapping[str, Any],
        pipeline_file: Path,
        root: Path,
        annotations: Path | None = None,
    ) -> RunInputs:
        return cls(
            annotations=annotations,
            profile_bytes=profile_path.read_bytes(),
            pipeline_bytes=pipeline_file.read_bytes(),
            library=library_digest(),
            environment=environment_digest(),
            external=external_digest(external_paths(profile_data, [root, profile_path.parent])),
        )

    def fingerprint(self, notebook: Path, earlier: Iterable[str]) -> str:
        """One notebook's fingerprint: the run's inputs, the notebook's bytes, earlier fingerprints."""
        h = hashlib.sha256()
        for blob in (self.profile_bytes, self.pipeline_bytes, notebook.read_bytes()):
            h.update(hashlib.sha256(blob).digest())
        here = [p for p in [*notebook_paths(notebook), self.annotations] if p is not None and p.exists()]
        for text in (self.library, self.environment, self.external, external_digest(here), *earlier):
            h.update(text.encode() + b"\0")
        return h.hexdigest()


def load_state(paper_dir: Path) -> dict[str, dict[str, Any]]:
    """``{notebook: {fingerprint, finished, wall_s}}`` of the last successful runs (empty if none or unreadable)."""
    path = paper_dir / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_state(paper_dir: Path, state: Mapping[str, Mapping[str, Any]]) -> None:
    paper_dir.mkdir(parents=True, exist_ok=True)
    tmp = paper_dir / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, paper_dir / STATE_FILE)


#: errors a retry cannot change while the inputs stay the same (the prompt is too long for the model)
PERMANENT_ERRORS = ("ContextWindowExceededError",)


def failed_calls(calls_dir: Path, notebook: str) -> int:
    """Model calls of ``notebook`` (its call logs, ``<notebook>_*.jsonl``) that ended in an error a
    retry could change (every error but :data:`PERMANENT_ERRORS`; an unreadable row counts)."""
    n = 0
    for p in sorted(calls_dir.glob(f"{notebook}_*.jsonl")):
        with open(p, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    row = json.loads(line)
                    n += row.get("status") == "error" and not str(row.get("error") or "").startswith(
                        PERMANENT_ERRORS
                    )
                except (ValueError, AttributeError):
                    n += 1  # an unreadable row: rerun rather than trust it
    return n


__all__ = ["PERMANENT_ERRORS", "STATE_FILE", "RunInputs", "environment_digest", "external_digest", "external_paths", "failed_calls",
           "library_digest", "load_state", "notebook_paths", "save_state", "tree_digest"]  # fmt: skip
