"""The llm layer points down only (issue 27): ``shopbench.llm`` imports nothing of the layers above it
(prompts, judges, environments, tasks, metrics, report, pipeline, preview, context, ...) and its modules
form no import cycle. Imports inside functions count; ``TYPE_CHECKING`` blocks do not."""

from __future__ import annotations

import ast
from pathlib import Path

import shopbench

PKG = Path(shopbench.__file__).parent
# base utilities the llm layer may use (layer 0), and config: ``python -m shopbench.llm install
# --profile X`` reads a profile (config imports only profiles, errors, paths, secrets)
BELOW = (
    "core",
    "errors",
    "paths",
    "environ",
    "secrets",
    "strictjson",
    "processes",
    "_lazy",
    "progress",
    "config",
)


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The shopbench modules ``name`` imports (the longest known prefix of each imported name)."""
    is_pkg = path.name == "__init__.py"

    def resolve(n: str) -> str:
        while n and n not in known:
            n = n.rpartition(".")[0]
        return n

    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if (
            isinstance(node, ast.If)
            and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"
        ):
            for n in node.orelse:
                visit(n)
            return
        if isinstance(node, ast.Import):
            found.update(resolve(a.name) for a in node.names if a.name.startswith("shopbench"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                full = ".".join(base + ([node.module] if node.module else []))
            else:
                full = node.module or ""
            if full.startswith("shopbench"):
                found.update(resolve(f"{full}.{a.name}") if f"{full}.{a.name}" in known else resolve(full)
                             for a in node.names)  # fmt: skip
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard(name)
    return {m for m in found if m}


def _llm_graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {
        m: _imports(m, p, known)
        for m, p in mods.items()
        if m == "shopbench.llm" or m.startswith("shopbench.llm.")
    }


def _is_llm(m: str) -> bool:
    return m == "shopbench.llm" or m.startswith("shopbench.llm.")


def test_llm_imports_only_itself_and_the_base_utilities():
    allowed = {f"shopbench.{b}" for b in BELOW}
    above = {
        m: sorted(
            d for d in deps if not _is_llm(d) and not any(d == a or d.startswith(a + ".") for a in allowed)
        )
        for m, deps in _llm_graph().items()
    }
    assert not {m: d for m, d in above.items() if d}, "llm must not import the layers above it"


def test_llm_modules_form_no_import_cycle():
    graph = {m: {d for d in deps if _is_llm(d)} for m, deps in _llm_graph().items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d) :] + [d]
            if d not in state and (cycle := walk(d)):
                return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            cycle = walk(m)
            assert cycle is None, " -> ".join(cycle)


def test_the_checker_sees_imports_inside_functions(tmp_path):
    """The graph counts an import written inside a function (how the old cycles hid)."""
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from ..report.partial import record\n", encoding="utf-8")
    deps = _imports("shopbench.llm.m", src, {"shopbench.report.partial", "shopbench.report"})
    assert deps == {"shopbench.report.partial"}
