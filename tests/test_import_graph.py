"""The layers import downward only (docs/design/layers.md): no import circle anywhere in vllmlint/, and the engine
imports nothing of the runner (vllmlint/run) or the presenters (the command line, the formatters, the server).
Every import counts, at module level and inside functions; only `if TYPE_CHECKING:` blocks (never run) are left out."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "vllmlint"


def _module_name(path: Path) -> str:
    parts = ["vllmlint", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, package: bool, modules: set[str]) -> set[str]:
    """The vllmlint modules `module` imports (a `from x import y` of a submodule y counts as y)."""
    found: set[str] = set()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("vllmlint"):
                    target = resolve(alias.name)
                    if target:
                        found.add(target)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module if package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            if base.startswith("vllmlint"):
                for alias in node.names:
                    target = resolve(f"{base}.{alias.name}") if f"{base}.{alias.name}" in modules else resolve(base)
                    if target:
                        found.add(target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in ROOT.rglob("*.py")}
    modules = set(paths)
    return {name: _imports(ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py", modules)
            for name, path in paths.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
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
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
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


def test_no_import_circle():
    cycles = _cycles(import_graph())
    assert cycles == [], cycles


def test_the_engine_imports_nothing_of_the_runner_or_the_presenters():
    graph = import_graph()
    above = ("vllmlint.run", "vllmlint.cli", "vllmlint.check", "vllmlint.check_options", "vllmlint.entry",
             "vllmlint.formatters", "vllmlint.server", "vllmlint.cache", "vllmlint.progress", "vllmlint.render",
             "vllmlint.__main__")
    wrong = sorted(name for name in graph["vllmlint.engine"] if name in above or name.startswith(
        tuple(f"{package}." for package in above)))
    assert wrong == []


def test_the_graph_sees_function_level_imports_and_skips_type_checking():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import vllmlint.b\n"
                     "def f():\n    from vllmlint import c\n    from vllmlint.d import x\n")
    modules = {"vllmlint", "vllmlint.a", "vllmlint.b", "vllmlint.c", "vllmlint.d"}
    assert _imports(tree, "vllmlint.a", False, modules) == {"vllmlint.c", "vllmlint.d"}
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_world_facts_are_memoised_through_world_fact_only():
    """Facts computed from the whole world are kept by `World.fact(compute)`, never hung off the world by attribute
    name (five such caches did it, each its own way)."""
    import re

    pattern = re.compile(r"getattr\(world, \"_|setattr\(world,|world\.__dict__|world\._vllmlint_\w+ = ")
    found = {str(path.relative_to(ROOT)) for path in ROOT.rglob("*.py") if pattern.search(path.read_text("utf-8"))}
    assert found == set()
