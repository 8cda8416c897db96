"""Layers only point down (issue 27): the library's import graph has no cycle, and the low layers
(core, llm) import nothing above them.

The graph is read from the source with ``ast``: every ``import``/``from … import`` of a ``shopbench``
module counts, including imports written inside functions; only those under ``if TYPE_CHECKING:``
(annotations, never executed) are left out. A package's lazy re-exports (``lazy_exports``: a dict of
relative module names, resolved on first attribute access) count as imports of those modules. A package's ``__init__`` that imports its submodules is
an edge like any other, so a submodule importing from its own package's ``__init__`` is a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import shopbench

PKG_DIR = Path(shopbench.__file__).parent

# the low layers and what each may import besides itself: core holds typed data and vocabularies; the
# llm layer knows nothing of prompts, judges, environments, tasks, metrics, reports or the pipeline
# (config: ``python -m shopbench.llm install --profile X`` reads a profile)
_BASE = ("errors", "paths", "environ", "secrets", "strictjson", "processes", "_lazy", "progress", "version")
LOWER_THAN = {
    "shopbench.core": tuple(f"shopbench.{m}" for m in _BASE),
    "shopbench.llm": tuple(f"shopbench.{m}" for m in (*_BASE, "core", "config")),
}


def module_files(root: Path) -> dict[str, tuple[Path, bool]]:
    modules: dict[str, tuple[Path, bool]] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        modules[".".join(parts)] = (path, is_package)
    return modules


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the package modules it imports (function-level imports included)."""
    modules = module_files(root)
    top = root.name

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        deps: set[str] = set()

        def visit(
            node: ast.AST,
            name: str = name,
            is_package: bool = is_package,
            deps: set[str] = deps,
            lazy: bool = False,
        ) -> None:
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                for child in node.orelse:
                    visit(child, lazy=lazy)
                return
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == top and (target := resolve(alias.name)):
                        deps.add(target)
            elif lazy and isinstance(node, ast.Dict):
                for key in node.keys:
                    if (
                        isinstance(key, ast.Constant)
                        and isinstance(key.value, str)
                        and key.value.startswith(".")
                    ):
                        level = len(key.value) - len(key.value.lstrip("."))
                        if target := resolve(_relative(name, is_package, level, key.value[level:])):
                            deps.add(target)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    full = _relative(name, is_package, node.level, node.module)
                else:
                    full = node.module or ""
                if full.split(".")[0] == top:
                    for alias in node.names:
                        candidate = f"{full}.{alias.name}"
                        target = candidate if candidate in modules else resolve(full)
                        if target:
                            deps.add(target)
            for child in ast.iter_child_nodes(node):
                visit(child, lazy=lazy)

        source = path.read_text(encoding="utf-8")
        visit(ast.parse(source, filename=str(path)), lazy="lazy_exports(" in source)
        deps.discard(name)
        graph[name] = deps
    return graph


def _relative(name: str, is_package: bool, level: int, module: str | None) -> str:
    base = name.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _describe(graph: dict[str, set[str]], component: list[str]) -> str:
    members = set(component)
    lines = [f"{len(component)} modules in a cycle:"]
    lines += [f"  {m} -> {', '.join(sorted(graph[m] & members))}" for m in component]
    return "\n".join(lines)


def test_the_library_has_no_import_cycle():
    graph = import_graph(PKG_DIR)
    found = cycles(graph)
    assert not found, "\n".join(_describe(graph, c) for c in found)


def test_low_layers_import_nothing_above_them():
    graph = import_graph(PKG_DIR)
    wrong = []
    for module, deps in graph.items():
        for layer, allowed in LOWER_THAN.items():
            if module == layer or module.startswith(layer + "."):
                for dep in deps:
                    ok = (
                        dep == layer
                        or dep.startswith(layer + ".")
                        or any(dep == a or dep.startswith(a + ".") for a in allowed)
                    )
                    if not ok and dep != "shopbench":
                        wrong.append(f"{module} imports {dep}")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_finder_sees_a_cycle_through_an_import_inside_a_function(tmp_path):
    pkg = tmp_path / "shopbench"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from shopbench.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")
    (pkg / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from shopbench import c\n"
        "def f():\n    from .. import a\n    return a\n"
    )
    (pkg / "c.py").write_text("from shopbench import a\n")
    (pkg / "lazy").mkdir()
    (pkg / "lazy" / "__init__.py").write_text(
        "from .._lazy import lazy_exports\n_EXPORTS = {'.impl': ['f']}\n"
        "__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)\n"
    )
    (pkg / "lazy" / "impl.py").write_text("import shopbench.lazy\n")
    graph = import_graph(pkg)
    assert graph["shopbench.sub.b"] == {"shopbench.a"}  # TYPE_CHECKING import left out
    assert cycles(graph) == [["shopbench.a", "shopbench.sub.b"], ["shopbench.lazy", "shopbench.lazy.impl"]]


def test_every_import_in_the_library_names_a_module_and_a_name_that_exist():
    """Imports inside functions run only when their branch does: one that a move left stale would fail
    late, in the middle of a run (two did after issue 27's moves)."""
    import importlib

    stale = []
    for name, (path, is_package) in sorted(module_files(PKG_DIR).items()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            full = _relative(name, is_package, node.level, node.module) if node.level else node.module or ""
            if full.split(".")[0] != "shopbench":
                continue
            try:
                module = importlib.import_module(full)
            except ImportError as e:
                stale.append(f"{path.relative_to(PKG_DIR)}:{node.lineno}: {full}: {e}")
                continue
            for alias in node.names:
                if alias.name != "*" and not hasattr(module, alias.name):
                    try:
                        importlib.import_module(f"{full}.{alias.name}")
                    except ImportError:
                        stale.append(f"{path.relative_to(PKG_DIR)}:{node.lineno}: {full} has no {alias.name}")
    assert not stale, "\n".join(stale)
