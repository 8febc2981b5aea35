"""The capacity package's modules import one another without a cycle (module- or function-level imports)."""
from __future__ import annotations

import ast
from pathlib import Path

import vllmlint.capacity

PACKAGE = Path(vllmlint.capacity.__file__).parent


def _graph() -> dict[str, set[str]]:
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("vllmlint.capacity."):
                    deps.add(node.module.split(".")[2])
                elif node.module == "vllmlint.capacity":
                    deps.update(alias.name if alias.name in modules else "__init__" for alias in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name.split(".")[2] for a in node.names if a.name.startswith("vllmlint.capacity."))
        graph[path.stem] = deps - {path.stem}
    return graph


def test_no_import_cycle_inside_capacity():
    graph = _graph()
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(name: str, path: list[str]) -> bool:
        state[name] = 1
        for dep in sorted(graph.get(name, ())):
            if state.get(dep) == 1:
                cycle.extend(path[path.index(dep):] + [name, dep] if dep in path else [name, dep])
                return True
            if state.get(dep) is None and visit(dep, path + [name]):
                return True
        state[name] = 2
        return False

    for module in sorted(graph):
        if state.get(module) is None and visit(module, []):
            break
    assert not cycle, " -> ".join(cycle)
    assert {"specs", "hfconfig", "estimate", "names"} <= set(graph)
