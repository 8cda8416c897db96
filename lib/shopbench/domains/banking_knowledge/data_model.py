"""The banking_knowledge data (issue 28 item 1): tau2-bench's ``db.json`` (customers, accounts,
cards, transactions: the ``TransactionalDB`` tables), ``tasks.json`` (97 tasks with
``initial_state``, ``user_tools``, ``required_documents`` and evaluation criteria), ``documents/``
(698 knowledge-base articles ``{id, title, content}``) and ``prompts/`` (the policy header, the
retrieval variants' templates), read from a folder given as a parameter
(``../shared/data/tau2_banking_knowledge``) and validated before anything runs.

Bad input (issue 28, "Bad input") is one :class:`BankingDataError` (a
:class:`~shopbench.errors.UserError`) naming the file, the record and the field: a missing or
malformed file, a document without text, a task naming an unknown tool, user tool, discoverable
tool, knowledge-base document or database table, a task whose ``initial_state`` is not
``{initialization_data: {agent_data, user_data}}`` over known tables. Other keys of
``initialization_data`` are ignored, as τ²-bench's ``InitializationData`` model ignores them
(tasks 058 and 059 put ``users``/``accounts`` there; :func:`ignored_initial_keys` lists them). A ``user_id`` in an expected
action is *not* checked against the users: the published tasks name users outside the database
on purpose (task_005 logs a verification for a made-up id the agent must not act on, task_016
submits a transaction for the customer's friend), and τ²-bench accepts them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError, read_text
from ...strictjson import parse_json
from .db import TABLES, BankDB
from .tool_names import RETRIEVAL_TOOL_NAMES
from .tools import KnowledgeTools, KnowledgeUserTools

__all__ = ["DATA_HINT", "BankingData", "BankingDataError", "Document", "ignored_initial_keys", "load_banking"]

DATA_HINT = (
    "it is tau2-bench's banking_knowledge domain (MIT; github.com/sierra-research/tau2-bench "
    "data/tau2/domains/banking_knowledge), kept beside the project at ../shared/data/tau2_banking_knowledge"
)
REWARD_BASES_KNOWN = ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")
PROMPT_FILES = ("components/policy_header.md", "components/additional_instructions.md", "full_kb.md",
                "classic_rag_bm25.md", "classic_rag_bm25_no_grep.md", "classic_rag.md", "no_knowledge.md")  # fmt: skip


class BankingDataError(InputError):
    """The banking_knowledge folder or one of its files is missing or malformed."""

    def __init__(self, problem: str, **kw: Any) -> None:
        kw["fix"] = kw.get("fix") or f"restore the published file: {DATA_HINT}"
        super().__init__(problem, **kw)


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    content: str
    file: str


@dataclass
class BankingData:
    """The loaded folder: ``db`` (the tables as ``db.json`` holds them), ``tasks``, ``documents``
    (id -> :class:`Document`, in file-name order), ``prompts`` (relative path -> text)."""

    path: Path
    db: dict[str, dict[str, Any]]
    tasks: list[dict]
    documents: dict[str, Document]
    prompts: dict[str, str]
    gold: dict[str, Any] = field(default_factory=dict)

    def task(self, task_id: str) -> dict:
        for t in self.tasks:
            if t["id"] == task_id:
                return t
        raise KeyError(task_id)

    def initial_db(self, task: Mapping | None = None) -> BankDB:
        """A fresh database with the task's ``initial_state`` applied (agent_data, then user_data)."""
        db = BankDB(self.db)
        init = ((task or {}).get("initial_state") or {}).get("initialization_data") or {}
        for part in ("agent_data", "user_data"):
            if init.get(part):
                db.update(init[part])
        return db


def _json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise BankingDataError(f"the {what} is missing", file=path)
    return parse_json(read_text(path, what), path, what=what, error=BankingDataError,
                      fix=f"restore the published file: {DATA_HINT}")  # fmt: skip


def _check_tables(obj: Any, path: Path, where: str, fld: str) -> None:
    if not isinstance(obj, Mapping):
        raise BankingDataError("is not an object of tables", file=path, where=where, field=fld)
    for name, tab in obj.items():
        pre = f"{fld}." if fld else ""
        if name not in TABLES:
            raise BankingDataError(f"names table {name!r}, which the banking database does not have (tables: "
                                   f"{', '.join(TABLES)})", file=path, where=where, field=f"{pre}{name}")  # fmt: skip
        if not isinstance(tab, Mapping) or not isinstance(tab.get("data", {}), Mapping):
            raise BankingDataError("is not a table {data: {id: record}, notes}", file=path, where=where,
                                   field=f"{pre}{name}")  # fmt: skip
        for rid, rec in (tab.get("data") or {}).items():
            if not isinstance(rec, Mapping):
                raise BankingDataError("is not a record (an object)", file=path, where=where,
                                       field=f"{pre}{name}.data.{rid}")  # fmt: skip
        if not isinstance(tab.get("notes", ""), str):
            raise BankingDataError("is not text", file=path, where=where, field=f"{pre}{name}.notes")


def _load_documents(folder: Path) -> dict[str, Document]:
    if not folder.is_dir():
        raise BankingDataError("the knowledge-base folder documents/ is missing", file=folder)
    docs: dict[str, Document] = {}
    files = sorted(folder.glob("*.json"))
    if not files:
        raise BankingDataError("the knowledge-base folder has no document (*.json)", file=folder)
    for f in files:
        d = _json(f, "knowledge-base document")
        if not isinstance(d, Mapping):
            raise BankingDataError("is not a document object {id, title, content}", file=f)
        did = d.get("id")
        if not isinstance(did, str) or not did.strip():
            raise BankingDataError("is missing or not a non-empty string", file=f, field="id")
        where = f"document {did}"
        if not isinstance(d.get("title"), str):
            raise BankingDataError("is missing or not a string", file=f, where=where, field="title")
        content = d.get("content")
        if not isinstance(content, str) or not content.strip():
            raise BankingDataError("the document has no text", file=f, where=where, field="content",
                                   fix=f"give the document its text, or remove the file; {DATA_HINT}")  # fmt: skip
        if did in docs:
            raise BankingDataError(
                f"document id {did!r} is also used by {docs[did].file}", file=f, field="id"
            )
        docs[did] = Document(did, d["title"], content, str(f))
    return docs


def _check_task(t: Any, i: int, path: Path, docs: Mapping[str, Document], kits: dict[str, list[str]]) -> None:
    where = f"task [{i}]"
    if not isinstance(t, Mapping):
        raise BankingDataError("is not an object", file=path, where=where)
    if not isinstance(t.get("id"), str):
        raise BankingDataError("is missing or not a string", file=path, where=where, field="id")
    where = f"task {t['id']}"
    us = t.get("user_scenario")
    if not isinstance(us, Mapping) or not isinstance(us.get("instructions"), str | Mapping):
        raise BankingDataError(
            "is missing or has no instructions", file=path, where=where, field="user_scenario"
        )
    crit = t.get("evaluation_criteria")
    if not isinstance(crit, Mapping):
        raise BankingDataError(
            "is missing or not an object", file=path, where=where, field="evaluation_criteria"
        )
    basis = crit.get("reward_basis") or ["DB"]
    if not isinstance(basis, list) or any(b not in REWARD_BASES_KNOWN for b in basis):
        raise BankingDataError(f"must be a list of {list(REWARD_BASES_KNOWN)}", file=path, where=where,
                               field="evaluation_criteria.reward_basis")  # fmt: skip
    acts = crit.get("actions") or []
    if not isinstance(acts, list):
        raise BankingDataError("is not a list", file=path, where=where, field="evaluation_criteria.actions")
    for j, a in enumerate(acts):
        fld = f"evaluation_criteria.actions[{j}]"
        if (
            not isinstance(a, Mapping)
            or not isinstance(a.get("name"), str)
            or not isinstance(a.get("arguments", {}), Mapping)
        ):
            raise BankingDataError(
                "is not an action {name, arguments, requestor}", file=path, where=where, field=fld
            )
        req = a.get("requestor", "assistant")
        if req not in ("assistant", "user"):
            raise BankingDataError(f"requestor {req!r} is neither 'assistant' nor 'user'", file=path, where=where,
                                   field=f"{fld}.requestor")  # fmt: skip
        known = kits["agent"] + kits["retrieval"] if req == "assistant" else kits["user"]
        if a["name"] not in known:
            raise BankingDataError(f"names tool {a['name']!r}, which the {req}'s tools do not have", file=path,
                                   where=where, field=f"{fld}.name")  # fmt: skip
        args = a.get("arguments") or {}
        for key, pool in (
            ("agent_tool_name", "agent_discoverable"),
            ("discoverable_tool_name", "user_discoverable"),
        ):
            if key in args and args[key] not in kits[pool]:
                raise BankingDataError(f"names discoverable tool {args[key]!r}, which does not exist", file=path,
                                       where=where, field=f"{fld}.arguments.{key}")  # fmt: skip
        if "arguments" in args and a["name"].startswith("call_discoverable"):
            try:
                inner = json.loads(args["arguments"])
            except (TypeError, ValueError):
                inner = None
            if not isinstance(inner, dict):
                raise BankingDataError("is not a JSON object text", file=path, where=where,
                                       field=f"{fld}.arguments.arguments")  # fmt: skip
    for j, name in enumerate(t.get("user_tools") or []):
        if name not in kits["user"]:
            raise BankingDataError(f"names user tool {name!r}, which does not exist (user tools: {kits['user']})",
                                   file=path, where=where, field=f"user_tools[{j}]")  # fmt: skip
    for j, did in enumerate(t.get("required_documents") or []):
        if did not in docs:
            raise BankingDataError(f"names document {did!r}, which is not in documents/", file=path, where=where,
                                   field=f"required_documents[{j}]")  # fmt: skip
    st = t.get("initial_state")
    if st is not None:
        if not isinstance(st, Mapping):
            raise BankingDataError("is not an object", file=path, where=where, field="initial_state")
        init = st.get("initialization_data")
        if init is not None:
            if not isinstance(init, Mapping):
                raise BankingDataError("must be an object {agent_data, user_data}", file=path, where=where,
                                       field="initial_state.initialization_data")  # fmt: skip
            for part in ("agent_data", "user_data"):
                if init.get(part) is not None:
                    _check_tables(init[part], path, where, f"initial_state.initialization_data.{part}")
        for k in ("initialization_actions", "message_history"):
            if st.get(k):
                raise BankingDataError(f"is not supported here ({k} is empty in every published task)",
                                       file=path, where=where, field=f"initial_state.{k}")  # fmt: skip


def ignored_initial_keys(tasks: list[dict]) -> dict[str, list[str]]:
    """Per task, the ``initialization_data`` keys τ²-bench ignores (neither agent_data nor user_data)."""
    out = {}
    for t in tasks:
        init = (t.get("initial_state") or {}).get("initialization_data") or {}
        extra = sorted(set(init) - {"agent_data", "user_data"})
        if extra:
            out[t["id"]] = extra
    return out


def load_banking(folder: str | Path) -> BankingData:
    """Read and check the folder (module docstring); nothing runs before this returns."""
    path = Path(folder)
    if not path.is_dir():
        raise BankingDataError("the banking_knowledge folder is missing", file=path)
    db = _json(path / "db.json", "database file")
    _check_tables(db, path / "db.json", "database", "")
    docs = _load_documents(path / "documents")
    prompts = {}
    for rel in PROMPT_FILES:
        p = path / "prompts" / rel
        if not p.is_file():
            raise BankingDataError("the prompt file is missing", file=p)
        prompts[rel] = read_text(p, "prompt file")
        for comp in re.findall(r"\{\{component:(\w+)\}\}", prompts[rel]):
            if f"components/{comp}.md" not in PROMPT_FILES:
                raise BankingDataError(
                    f"names component {comp!r}, which is not in prompts/components", file=p
                )
    tasks = _json(path / "tasks.json", "tasks file")
    if not isinstance(tasks, list) or not tasks:
        raise BankingDataError("expected a non-empty JSON list of tasks", file=path / "tasks.json")
    kits = {"agent": KnowledgeTools.tool_names(), "retrieval": list(RETRIEVAL_TOOL_NAMES),
            "agent_discoverable": KnowledgeTools.discoverable_names(), "user": KnowledgeUserTools.tool_names(),
            "user_discoverable": KnowledgeUserTools.discoverable_names()}  # fmt: skip
    seen: set[str] = set()
    for i, t in enumerate(tasks):
        _check_task(t, i, path / "tasks.json", docs, kits)
        if t["id"] in seen:
            raise BankingDataError(
                "is used by two tasks", file=path / "tasks.json", where=f"task [{i}]", field="id"
            )
        seen.add(t["id"])
    return BankingData(path, db, tasks, docs, prompts)
