"""Judges, filter judges, evaluators and agents under test cannot reach the answer (issue 13 §2).

The test reads the import graph of ``lib/shopbench`` with ``ast`` at the level of top-level symbols
(functions, classes, module-level names): a symbol depends on every module-level name its body uses,
in its own module or imported (``from m import x``, ``m.x`` on an imported module, imports inside
functions). From each symbol under test it follows those edges transitively and fails when one
reaches the PACEShop generator, defect, swap or persona modules, the generator's constraint and
preference specs, the shop scenario/reveal/scripted-customer internals, the PADMÉ steering, sources
(the τ² expected actions, recorded rewards), cascade or the heuristic scorer the filter judges share.

A stand-in that needs them lives in a known-answer module (``judges/oracle_rules.py`` →
``local/oracle-rules``) and is labelled known-answer wherever it appears; the second half of this file
checks that every embedded backend that reaches a forbidden symbol is classified known-answer by
:func:`shopbench.report.evidence.producer_kind`.
"""

from __future__ import annotations

import ast
from collections import deque
from functools import cache
from pathlib import Path

import pytest

import shopbench

PKG_DIR = Path(shopbench.__file__).parent
MODULE = "<module>"

# the code that answers as a judge / agent / evaluator under test ("*" = every symbol of the module)
UNDER_TEST: dict[str, tuple[str, ...]] = {
    "shopbench.judges.pace.deterministic": ("checks_judge", "always_bad_judge", "random_judge"),
    "shopbench.judges.pace.parse": ("*",),
    "shopbench.llm.local": ("_schema_sampler", "_echo"),
    "shopbench.shopsim.agents": ("LLMAgent",),
    "shopbench.judges.shop.judge": ("LLMJudge",),
    "shopbench.judges.padme.filters": ("LLMFilterJudge",),
    "shopbench.judges.padme.evaluators": (
        "evaluator_messages",
        "score_from_row",
        "EvaluatorJudgeSpec",
        "padme_evaluator",
    ),
    "shopbench.judges": ("*",),  # the one judge role every model judge goes through
    "shopbench.domains.tau2_retail.agent": ("LLMRetailAgent",),
}
# answer keys: any symbol of these modules (a prefix covers its submodules)
FORBIDDEN_MODULES = (
    "shopbench.paceshop.generate", "shopbench.paceshop.defects", "shopbench.paceshop.swaps",
    "shopbench.paceshop.personas", "shopbench.paceshop.assign", "shopbench.paceshop.build",
    "shopbench.shopsim.scenario", "shopbench.shopsim.reveal", "shopbench.shopsim.user",
    "shopbench.padme.steering", "shopbench.padme.sources", "shopbench.padme.cascade",
    "shopbench.padme.heuristics", "shopbench.padme.cells", "shopbench.domains.tau2_retail.user",
)  # fmt: skip
# answer keys inside shared vocabulary modules
FORBIDDEN_NAMES = {
    "shopbench.core.taxonomy": {"CONSTRAINTS", "CONSTRAINTS_BY_TEXT", "ConstraintSpec", "PREFERENCES",
                                    "PREFERENCES_BY_TEXT", "PreferenceSpec"},
}  # fmt: skip
# symbols of forbidden modules that carry no answer, each with the reason
ALLOWED = {
    ("shopbench.shopsim.user", "TOOL_ARGS"): "the tools' argument names (from the tool registry)",
    ("shopbench.shopsim.user", "load_prompt"): "reads a prompt file",
    ("shopbench.padme.steering", "load_prompt"): "reads a prompt file",
}


def _is_module(name: str) -> bool:
    base = PKG_DIR.parent.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _resolve(module: str, is_pkg: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    parts = module.split(".")
    base = parts if is_pkg else parts[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _bindings(node: ast.AST, module: str, is_pkg: bool) -> dict[str, tuple[str, str]]:
    """Names an import statement binds → (module, symbol) (symbol MODULE for a module object)."""
    out = {}
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                out[a.asname] = (a.name, MODULE)
            else:
                out[a.name.split(".")[0]] = (a.name.split(".")[0], MODULE)
    elif isinstance(node, ast.ImportFrom):
        src = _resolve(module, is_pkg, node.level, node.module)
        for a in node.names:
            if a.name == "*":
                continue
            sub = f"{src}.{a.name}"
            out[a.asname or a.name] = (sub, MODULE) if _is_module(sub) else (src, a.name)
    return out


@cache
def _parse(module: str):
    """(symbols → referenced (module, symbol) nodes) of one module of the package."""
    base = PKG_DIR.parent.joinpath(*module.split("."))
    path = base / "__init__.py" if (base / "__init__.py").is_file() else base.with_suffix(".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    imports: dict[str, tuple[str, str]] = {}
    defined: dict[str, list[ast.AST]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            imports.update(_bindings(stmt, module, is_pkg))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.setdefault(stmt.name, []).append(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            for n in names or [MODULE]:
                defined.setdefault(n, []).append(stmt)
        else:
            defined.setdefault(MODULE, []).append(stmt)
    symbols: dict[str, set[tuple[str, str]]] = {}
    for name, stmts in defined.items():
        refs: set[tuple[str, str]] = set()
        for stmt in stmts:
            local = dict(imports)
            for sub in ast.walk(stmt):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    b = _bindings(sub, module, is_pkg)
                    local.update(b)
                    refs |= set(b.values())
            for sub in ast.walk(stmt):
                if (
                    isinstance(sub, ast.Attribute)
                    and isinstance(sub.value, ast.Name)
                    and sub.value.id in local
                ):
                    mod, sym = local[sub.value.id]
                    if sym == MODULE:
                        refs.add((mod, sub.attr))
                elif isinstance(sub, ast.Name):
                    if sub.id in local:
                        refs.add(local[sub.id])
                    elif sub.id in defined and sub.id != name:
                        refs.add((module, sub.id))
        symbols[name] = refs
    for local_name, target in imports.items():  # a re-exported name resolves to its source
        symbols.setdefault(local_name, set()).add(target)
    return symbols


def _forbidden(node: tuple[str, str]) -> bool:
    mod, sym = node
    if node in ALLOWED:
        return False
    if any(mod == m or mod.startswith(m + ".") for m in FORBIDDEN_MODULES):
        return True
    return sym in FORBIDDEN_NAMES.get(mod, ())


def violations(start: tuple[str, str]) -> list[list[tuple[str, str]]]:
    """Every path from ``start`` to a forbidden symbol (one per forbidden symbol reached)."""
    seen = {start: [start]}
    queue, found = deque([start]), []
    while queue:
        node = queue.popleft()
        mod, sym = node
        if not mod.startswith("shopbench") or not _is_module(mod):
            continue
        if _forbidden(node) and node != start:
            found.append(seen[node])
            continue
        symbols = _parse(mod)
        nxt = symbols.get(sym, set()) if sym != MODULE else symbols.get(MODULE, set())
        for n in sorted(nxt):
            if n not in seen:
                seen[n] = seen[node] + [n]
                queue.append(n)
    return found


def _starts() -> list[tuple[str, str]]:
    out = []
    for mod, syms in UNDER_TEST.items():
        names = sorted(_parse(mod)) if syms == ("*",) else syms
        for s in names:
            assert s in _parse(mod), f"{mod} has no symbol {s!r}: update UNDER_TEST"
            out.append((mod, s))
    return out


def _fmt(path) -> str:
    return " -> ".join(f"{m}.{s}" for m, s in path)


@pytest.mark.parametrize("start", _starts(), ids=lambda s: f"{s[0].removeprefix('shopbench.')}.{s[1]}")
def test_code_under_test_reaches_no_answer_key(start):
    bad = violations(start)
    assert not bad, "reaches an answer key:\n" + "\n".join(_fmt(p) for p in bad)


@pytest.mark.parametrize("start, reaches", [
    (("shopbench.judges.pace.oracle_rules", "rules_judge"), "shopbench.paceshop.swaps"),
    (("shopbench.judges.padme.filters", "HeuristicFilterJudge"), "shopbench.padme.heuristics"),
    (("shopbench.judges.padme.sweep", "score_rollouts"), "shopbench.padme.heuristics"),
    (("shopbench.padme.sources.tau2", MODULE), "shopbench.padme.sources.steered"),
])  # fmt: skip
def test_the_graph_finds_the_known_answer_stand_ins(start, reaches):
    """The analysis can fail: the stand-ins that do see the answer are found, by the path they take."""
    paths = violations(start) if start[1] != MODULE else [[start]]
    if start[1] == MODULE:  # a whole module: some symbol of it reaches the target
        paths = [p for s in _parse(start[0]) for p in violations((start[0], s))]
    assert any(p[-1][0] == reaches for p in paths), (
        f"{start} should reach {reaches}: {[_fmt(p) for p in paths]}"
    )


def test_every_embedded_backend_that_reaches_an_answer_key_is_labelled_known_answer():
    from shopbench.llm import local_backends
    from shopbench.report.evidence import KNOWN, LOCAL_BACKENDS, producer_kind

    backends = local_backends()
    assert "oracle-rules" in backends and "rules" not in backends
    for name, b in backends.items():
        if not b.fn.__module__.startswith("shopbench."):  # registered by a test or a user plugin
            continue
        full = f"local/{name}"
        assert full in LOCAL_BACKENDS, f"{full} is not classified in shopbench.report.evidence.LOCAL_BACKENDS"
        qual = b.fn.__qualname__.split(".")[0]
        reached = violations((b.fn.__module__, qual))
        if reached:
            assert producer_kind(full)[0] == KNOWN, (
                f"{full} reaches {_fmt(reached[0])} but is labelled measured"
            )
    assert producer_kind("local/oracle-rules")[0] == KNOWN
    assert producer_kind("local/checks")[0] != KNOWN
