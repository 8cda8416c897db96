"""Reading and checking a telecom data folder (issue 28): above the data model, the two toolkits and
the task builder, whose checks it runs before anything else."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ...errors import read_text
from ...strictjson import parse_json
from .data_model import DATA_HINT, TelecomData, TelecomDataError, TelecomDB, TelecomUserDB
from .tasks import check_split, check_tasks

__all__ = ["load_telecom"]


def _read_toml(path: Path, model: type[BaseModel], keyed: dict[str, str]) -> dict[str, Any]:
    if not path.exists():
        raise TelecomDataError("the file is missing", file=path)
    try:
        data = tomllib.loads(read_text(path, "telecom database file"))
    except tomllib.TOMLDecodeError as e:
        raise TelecomDataError(f"is not valid TOML: {e}", file=path) from None
    try:
        model.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = list(err.get("loc", ()))
        where = None
        if len(loc) >= 2 and isinstance(loc[1], int) and loc[0] in keyed:
            rec = data.get(str(loc[0]), [])[loc[1]]
            key = rec.get(keyed[str(loc[0])]) if isinstance(rec, dict) else None
            where = f"{loc[0]}[{loc[1]}]" + (f" ({key})" if key else "")
            loc = loc[2:]
        raise TelecomDataError(f"{err['msg']} (got {err.get('input')!r})"[:300], file=path, where=where,
                               field=".".join(str(x) for x in loc) or None) from None  # fmt: skip
    return data


def _check_refs(path: Path, db: dict[str, Any]) -> None:
    ids = {t: {r[k] for r in db.get(t, [])} for t, k in (("lines", "line_id"), ("bills", "bill_id"),
                                                          ("plans", "plan_id"), ("devices", "device_id"))}  # fmt: skip
    for i, c in enumerate(db.get("customers", [])):
        for fld, table in (("line_ids", "lines"), ("bill_ids", "bills")):
            for j, x in enumerate(c.get(fld, [])):
                if x not in ids[table]:
                    raise TelecomDataError(f"names {x!r}, which is not in [[{table}]]", file=path,
                                           where=f"customers[{i}] ({c['customer_id']})", field=f"{fld}[{j}]")  # fmt: skip
    for i, ln in enumerate(db.get("lines", [])):
        if ln["plan_id"] not in ids["plans"]:
            raise TelecomDataError(f"names plan {ln['plan_id']!r}, which is not in [[plans]]", file=path,
                                   where=f"lines[{i}] ({ln['line_id']})", field="plan_id")  # fmt: skip


def load_telecom(path: str | Path) -> TelecomData:
    """Read and validate a telecom folder (``db.toml``, ``user_db.toml``, ``tasks_small.json``,
    ``split_tasks.json``, ``main_policy.md``, ``tech_support_manual.md``). Every problem is a
    :class:`TelecomDataError` naming the file, the record and the field; the tasks are checked by
    :func:`.tasks.check_tasks` (their function calls and tool names against the two toolkits)."""
    path = Path(path)
    if not path.is_dir():
        raise TelecomDataError("the telecom data folder does not exist", file=path, fix=DATA_HINT)
    db = _read_toml(path / "db.toml", TelecomDB, {"plans": "plan_id", "customers": "customer_id",
                                                   "lines": "line_id", "bills": "bill_id", "devices": "device_id"})  # fmt: skip
    _check_refs(path / "db.toml", db)
    user_db = _read_toml(path / "user_db.toml", TelecomUserDB, {})
    texts = {}
    for name in ("main_policy.md", "tech_support_manual.md"):
        if not (path / name).exists():
            raise TelecomDataError("the file is missing", file=path / name)
        texts[name] = read_text(path / name, "policy file")
    data = TelecomData(path=path, db=db, user_db=user_db, tasks=[], split={},
                       main_policy=texts["main_policy.md"], tech_support=texts["tech_support_manual.md"])  # fmt: skip
    tp = path / "tasks_small.json"
    if not tp.exists():
        raise TelecomDataError("the file is missing", file=tp)
    tasks = parse_json(read_text(tp, "telecom tasks file"), tp, what="telecom tasks file", error=TelecomDataError,
                       fix=f"restore the published file: {DATA_HINT}")  # fmt: skip
    check_tasks(tp, tasks, data)
    data.tasks = tasks
    sp = path / "split_tasks.json"
    if not sp.exists():
        raise TelecomDataError("the file is missing", file=sp)
    split = parse_json(read_text(sp, "telecom split file"), sp, what="telecom split file", error=TelecomDataError,
                       fix=f"restore the published file: {DATA_HINT}")  # fmt: skip
    check_split(sp, split)
    data.split = split
    return data
