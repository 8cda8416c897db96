"""The pipeline's steps: ``notebooks/pipeline.yaml`` read in one place (issue 27, layers).

The notebooks, their order, the artefacts each must produce and the notebooks whose outputs each reads
(``needs``). :mod:`shopbench.pipeline` runs them; the plan check, the preview and a notebook's run
context read them from here, below the runner, so none of them imports the runner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .errors import UserError
from .paths import NOTEBOOKS_DIR

PIPELINE_FILE = NOTEBOOKS_DIR / "pipeline.yaml"


@dataclass
class Step:
    name: str
    produces: list[str] = field(default_factory=list)
    timeout_s: int | None = None
    needs: list[str] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return NOTEBOOKS_DIR / f"{self.name}.ipynb"


def load_pipeline(path: Path | None = None) -> list[Step]:
    """The steps in order (of :data:`PIPELINE_FILE` by default); ``needs`` must name earlier steps."""
    path = path or PIPELINE_FILE
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    steps: list[Step] = []
    for i, e in enumerate(data.get("notebooks") or []):
        if not isinstance(e, dict) or "name" not in e:
            raise ValueError(f"{path}: notebooks[{i}] needs a 'name'")
        s = Step(name=e["name"], produces=list(e.get("produces") or []), timeout_s=e.get("timeout_s"),
                 needs=list(e.get("needs") or []))  # fmt: skip
        if not s.path.exists():
            raise FileNotFoundError(f"{path}: notebooks[{i}] names {s.path}, which does not exist")
        earlier = {t.name for t in steps}
        late = [n for n in s.needs if n not in earlier]
        if late:
            raise ValueError(f"{path}: notebooks[{i}] ({s.name}) needs {late}, which are not earlier steps")
        steps.append(s)
    return steps


def known_only(only: Sequence[str] | None) -> list[Step]:
    """The pipeline's steps, or those ``only`` names (an unknown name is a :class:`UserError`)."""
    steps = load_pipeline()
    if only:
        unknown = set(only) - {s.name for s in steps}
        if unknown:
            raise UserError(
                f"unknown notebooks {sorted(unknown)}", fix=f"choose from {[s.name for s in steps]}"
            )
        steps = [s for s in steps if s.name in only]
    return steps


def upstream(notebook: str) -> list[str]:
    """``notebook`` and every notebook it reads from, transitively (``needs:`` in the pipeline)."""
    try:
        needs = {s.name: s.needs for s in load_pipeline()}
    except Exception:  # noqa: BLE001 - a notebook outside the pipeline: itself only
        return [notebook]
    out, todo = [], [notebook]
    while todo:
        n = todo.pop()
        if n not in out:
            out.append(n)
            todo.extend(needs.get(n, []))
    return out
