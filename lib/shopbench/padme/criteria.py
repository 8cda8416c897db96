"""Evaluation criteria c of PADMÉ cells (seed 003 §3.1, App. H.1).

"c consists of the name and a description of the criterion. The criterion can be any performance
axis of the agent system, such as 'task completion rate', 'user satisfaction', 'tool-use
relevance', etc. The descriptions should ideally be detailed and align with application scenarios"
(§3.1). "The exact same criterion names and descriptions are supplied to the generator, filter
judges, model evaluators, and human annotators, ensuring information parity across all pipeline
components" (H.1).

:data:`DEFAULT_CRITERIA` are the paper's three with the H.1 text as released in the human study's
``criteria.json``. :func:`load_criteria` reads other criteria from a list or a JSON/YAML file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from shopbench.padme.types import Criterion

__all__ = ["DEFAULT_CRITERIA", "CriteriaError", "criterion_named", "load_criteria"]

DEFAULT_CRITERIA: tuple[Criterion, ...] = (
    Criterion(
        name="friendliness",
        description=(
            "Warmth and consideration toward the customer: whether the agent acknowledges their situation and "
            "how they feel about it, delivers unwelcome news with care, and leaves them feeling attended to. "
            "Judge the manner, not whether the request was resolved."
        ),
    ),
    Criterion(
        name="communication_clarity",
        description=(
            "How easily the customer can follow the agent: whether the main point is findable, whether "
            "technical or policy language is explained, whether multi-part information is organised, and "
            "whether the customer is left knowing what is true and what happens next. Judge the presentation, "
            "not the warmth or the outcome."
        ),
    ),
    Criterion(
        name="task_resolution",
        description=(
            "Whether the customer's actual problem was settled: did the agent establish what was needed, take "
            "the actions that would resolve it, and leave the customer with the outcome they came for. A "
            "correct refusal counts as resolution -- if the request was not permitted, saying so plainly and "
            "explaining why resolves it, while quietly doing it anyway does not. Judge the outcome, not the "
            "manner or how well it was explained."
        ),
    ),
)

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_ -]*$")


class CriteriaError(ValueError):
    """A criteria list or file is malformed; the message names the file, the entry and the field."""


def criterion_named(name: str) -> Criterion:
    """One of :data:`DEFAULT_CRITERIA` by name."""
    for c in DEFAULT_CRITERIA:
        if c.name == name:
            return c
    raise CriteriaError(
        f"no default criterion named {name!r}; known: {[c.name for c in DEFAULT_CRITERIA]}. "
        "Give other criteria as {name, description} objects."
    )


def _read_file(path: Path):
    if not path.exists():
        raise FileNotFoundError(f"criteria file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise CriteriaError(f"{path}: not valid YAML: {e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CriteriaError(f"{path}: not valid JSON ({e}); use a .yaml/.yml suffix for YAML") from None


def load_criteria(spec: str | Path | Sequence | None = None) -> list[Criterion]:
    """Criteria from ``spec``:

    * ``None`` — :data:`DEFAULT_CRITERIA`;
    * a path (``str``/``Path``) to a JSON or YAML file holding a list of ``{name, description}``
      objects (the human study's ``criteria.json`` format) or ``{"criteria": [...]}``;
    * a list whose entries are :class:`Criterion` objects, ``{name, description}`` mappings, or
      names of default criteria (``"friendliness"``).

    Names must be unique and descriptions non-empty; an error names the file, the entry index and
    the field.
    """
    if spec is None:
        return list(DEFAULT_CRITERIA)
    where = "criteria"
    data = spec
    if isinstance(spec, (str, Path)):
        path = Path(spec)
        if isinstance(spec, str) and not path.suffix and not path.exists():
            return [criterion_named(spec)]  # a single default criterion by name
        where = str(path)
        data = _read_file(path)
        if isinstance(data, Mapping) and "criteria" in data:
            data = data["criteria"]
    if isinstance(data, (Criterion, Mapping)):
        data = [data]
    if not isinstance(data, Sequence) or isinstance(data, (str, bytes)):
        raise CriteriaError(
            f"{where}: expected a list of {{name, description}} objects, got {type(data).__name__}"
        )
    out: list[Criterion] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(data):
        if isinstance(entry, Criterion):
            c = entry
        elif isinstance(entry, str):
            try:
                c = criterion_named(entry)
            except CriteriaError as e:
                raise CriteriaError(f"{where}: entry [{i}]: {e}") from None
        elif isinstance(entry, Mapping):
            extra = sorted(set(entry) - {"name", "description"})
            if extra:
                raise CriteriaError(
                    f"{where}: entry [{i}]: unknown field(s) {extra}; a criterion has name, description"
                )
            name, desc = entry.get("name"), entry.get("description")
            if not isinstance(name, str) or not name.strip():
                raise CriteriaError(
                    f"{where}: entry [{i}], field 'name': must be a non-empty string, got {name!r}"
                )
            if not isinstance(desc, str) or not desc.strip():
                raise CriteriaError(
                    f"{where}: entry [{i}] ({name!r}), field 'description': must be a non-empty string, got {desc!r}"
                )
            c = Criterion(name=name.strip(), description=desc.strip())
        else:
            raise CriteriaError(
                f"{where}: entry [{i}]: expected an object with name and description, got {entry!r}"
            )
        if not _NAME.match(c.name):
            raise CriteriaError(
                f"{where}: entry [{i}], field 'name': {c.name!r} must start with a letter and use letters, digits, "
                "'_', '-' or spaces (it becomes part of cell ids)"
            )
        if c.name in seen:
            raise CriteriaError(
                f"{where}: entry [{i}], field 'name': {c.name!r} repeats entry [{seen[c.name]}]"
            )
        seen[c.name] = i
        out.append(c)
    if not out:
        raise CriteriaError(f"{where}: no criteria given")
    return out
