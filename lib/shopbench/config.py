"""Run profiles: one YAML file per profile in ``params/`` (smoke, paper, full).

A profile is validated when it is loaded (:mod:`shopbench.profiles`): an unknown key, a wrong type
or a value out of range is a :class:`ParamError` naming the file, the line, the key path and the fix.
Outputs go to ``outputs/<file stem>/``; the ``profile:`` key inside the file is a label that must
agree with the stem, so a copied profile never writes into another profile's folder. Keys and
secrets never belong in a profile: providers read them from the environment.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from .errors import ParamError, UserError, read_text
from .paths import PARAMS_DIR, ROOT, profile_dir
from .profiles import ProfileParams, param_error, validate_profile
from .secrets import secret_in

_SECRET_KEY = re.compile(r"(api[_-]?key|secret|token|password)$", re.I)
OWNER_FILE = ".profile"
"""In ``outputs/<stem>/``: the profile file that owns the folder (relative to the repository)."""

__all__ = ["OWNER_FILE", "ParamError", "Profile", "claim_outputs", "load_profile", "read_profile_data",
           "resolve_profile_path"]  # fmt: skip


@dataclass
class Profile:
    """A loaded parameter file: ``name`` (the file's stem), ``path``, the raw ``data``, its ``sha256``
    (for run manifests) and ``params``, the validated :class:`~shopbench.profiles.ProfileParams`."""

    name: str
    path: Path
    data: dict[str, Any]
    sha256: str
    text: str = field(repr=False, default="")
    lines: dict[str, int] = field(repr=False, default_factory=dict)

    @cached_property
    def params(self) -> ProfileParams:
        return validate_profile(self.data, self.path, self.lines)

    @property
    def out(self) -> Path:
        """``outputs/<stem>/``."""
        return profile_dir(self.name)

    def error(self, keypath: str, message: str, fix: str | None = None) -> ParamError:
        return param_error(self.path, keypath, message, fix)


def resolve_profile_path(profile: str | Path) -> Path:
    """``"smoke"`` → ``params/smoke.yaml``; a path is taken as it is (relative to the repo if not found)."""
    p = Path(profile)
    if p.suffix in (".yaml", ".yml"):
        if not p.is_absolute() and not p.exists() and (ROOT / p).exists():
            p = ROOT / p
        return p
    return PARAMS_DIR / f"{profile}.yaml"


def read_profile_data(profile: str | Path) -> tuple[Path, str, dict[str, Any]]:
    """The file, its text and its top-level mapping; a missing file or invalid YAML is a ParamError."""
    path = resolve_profile_path(profile)
    if not path.exists():
        known = ", ".join(sorted(q.stem for q in PARAMS_DIR.glob("*.yaml")))
        raise ParamError(
            f"no parameter file {path}. Known profiles: {known}",
            fix=f"use one of {known} (e.g. PROFILE=smoke), or give the path of a YAML file",
        )
    text = read_text(path, "parameter file")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ParamError(
            f"not valid YAML: {getattr(e, 'problem', None) or e}",
            file=path,
            where=f"line {mark.line + 1}, column {mark.column + 1}" if mark else None,
            fix="check the indentation (spaces, not tabs), the closing ] or } of lists and mappings, and a "
            "space after each ':'; quote values that contain ': ' or start with '{', '[', '*' or '&'",
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ParamError(f"the top level must be a mapping of keys, got {type(data).__name__}", file=path,
                         fix="write one 'key: value' per line at the top level (see params/smoke.yaml)")  # fmt: skip
    return path, text, data


def load_profile(profile: str | Path) -> Profile:
    """Load and validate a profile by name or path (every section; see :mod:`shopbench.profiles`)."""
    path, text, data = read_profile_data(profile)
    prof = Profile(
        name=path.stem,
        path=path,
        data=data,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        text=text,
        lines=_key_lines(text),
    )
    _check_no_secrets(prof, data, "")
    _check_prompt_override(prof)
    label = prof.params.profile
    if label is not None and label != prof.name:
        raise param_error(
            path, "profile", f"says {label!r} but the file is {path.name} (outputs go to outputs/{prof.name}/)",
            f"set 'profile: {prof.name}' or remove the key", where=_line(prof, "profile"),
        )  # fmt: skip
    return prof


def claim_outputs(prof: Profile) -> Path:
    """``outputs/<stem>/``, recorded as this profile file's; a folder another file owns is a ParamError.

    Two profile files with one stem (``params/paper.yaml`` and ``~/paper.yaml``) would otherwise write
    the same outputs."""
    out = prof.out
    me = _repo_relative(prof.path)
    owner = out / OWNER_FILE
    if owner.exists():
        other = owner.read_text(encoding="utf-8").strip()
        if other and other != me:
            raise ParamError(
                f"the output folder {out} belongs to the profile {other}, not {me}",
                file=prof.path,
                fix=f"rename your file (outputs go to outputs/<file name>/), or delete {out} if {other} is gone",
            )
    out.mkdir(parents=True, exist_ok=True)
    owner.write_text(me + "\n", encoding="utf-8")
    return out


def _check_prompt_override(prof: Profile) -> None:
    """``$SHOPBENCH_PROMPTS_DIR`` (the prompt-folder override) names an existing folder, and the
    default evaluator prompt it then supplies, when present, has the placeholders notebook 50 fills
    (issue 25 item 5; a ``padme.evaluator_prompt`` the file sets is checked by the profile model)."""
    import os

    from .profiles.padme import EVALUATOR_PROMPT, EVALUATOR_PROMPT_SLOTS, EVALUATOR_USER, check_prompt_file
    from .prompts import PROMPTS_ENV

    env = os.environ.get(PROMPTS_ENV)
    if not env:
        return
    if not Path(env).expanduser().is_dir():
        raise UserError(f"${PROMPTS_ENV} is {env}, which is not a folder", field=PROMPTS_ENV,
                        fix=f"point {PROMPTS_ENV} at a folder of prompt files (a copy of prompts/), or unset it")  # fmt: skip
    if (
        prof.params.padme.evaluator_prompt == EVALUATOR_PROMPT
        and (Path(env) / "padme_evaluator.txt").is_file()
    ):
        try:
            check_prompt_file(EVALUATOR_PROMPT, EVALUATOR_PROMPT_SLOTS, EVALUATOR_USER)
        except ValueError as e:
            problem, _, fix = str(e).partition("; ")
            raise UserError(problem, field=PROMPTS_ENV, fix=fix) from None


def _repo_relative(path: Path) -> str:
    p = path.resolve()
    try:
        return str(p.relative_to(ROOT.resolve()))
    except ValueError:
        return str(p)


def _line(prof: Profile, keypath: str) -> str | None:
    n = prof.lines.get(keypath)
    return f"line {n}" if n else None


def _key_lines(text: str) -> dict[str, int]:
    """``{"gateway.timeout_s": 14, "padme.sources[1].path": 80, ...}``: the line of every key."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    out: dict[str, int] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                kp = f"{prefix}.{k.value}" if prefix else str(k.value)
                out.setdefault(kp, k.start_mark.line + 1)
                walk(v, kp)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                out.setdefault(f"{prefix}[{i}]", v.start_mark.line + 1)
                walk(v, f"{prefix}[{i}]")

    walk(root, "")
    return out


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
