"""The checks contract (vllmlint/checks/__init__.py): a check never reads a file's text.

Every module under vllmlint/checks/ is scanned with `ast`. A value is *from a source* when it is
named `source`/`sources`/`src` (or annotated `SourceFile`), is an attribute `.source`/`.sources` of
anything (`token.source`, `ctx.world.sources`), or is derived from such a value: assigned from it, a
loop or comprehension variable over it, an item, attribute or call result of it, or what a function of
the module returns when it returns such a value. Forbidden: `.text` on a value from a source, any
`.line_text`/`.line_starts`, `getattr`/`vars`/`__dict__` on a value from a source, `attrgetter("text")`,
and reading files (`open`, `read_text`, `read_bytes`). The scan is flow-insensitive (a name derived from
a source anywhere in a module counts everywhere in it), so renaming or aliasing does not get around it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import vllmlint.checks

CHECKS = Path(vllmlint.checks.__file__).parent

# Modules that may break the contract, each with why. Empty: every check reads the model only.
ALLOWED: dict[str, str] = {}

_SOURCE_NAMES = {"source", "sources", "src", "_source"}
_SOURCE_ATTRS = {"source", "sources", "_source"}
_TEXT_ATTRS = {"line_text", "line_starts", "_line_starts"}
_FILE_READERS = {"read_text", "read_bytes"}
# Builtins whose result holds their argument's items (`next(iter(sources))`, `sorted(sources)`).
_PASSTHROUGH = {"next", "iter", "list", "tuple", "set", "frozenset", "sorted", "reversed", "min", "max",
                "enumerate", "zip", "filter", "map", "dict", "cast", "copy", "deepcopy"}


class _Scan:
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.names: set[str] = set()  # names holding a value from a source
        self.functions: set[str] = set()  # functions of the module returning one
        self._fixpoint()

    def tainted(self, node: ast.AST | None) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return node.id in _SOURCE_NAMES or node.id in self.names
        if isinstance(node, ast.Attribute):
            return node.attr in _SOURCE_ATTRS or self.tainted(node.value)
        if isinstance(node, ast.Subscript):
            return self.tainted(node.value)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and (func.id in self.functions or func.id in self.names):
                return True
            if isinstance(func, ast.Name) and func.id in _PASSTHROUGH:
                return any(self.tainted(a) for a in node.args)
            return self.tainted(func)  # a method of a value from a source (`sources.get(...)`)
        if isinstance(node, ast.Starred):
            return self.tainted(node.value)
        if isinstance(node, (ast.BoolOp,)):
            return any(self.tainted(v) for v in node.values)
        if isinstance(node, ast.BinOp):
            return self.tainted(node.left) or self.tainted(node.right)
        if isinstance(node, ast.IfExp):
            return self.tainted(node.body) or self.tainted(node.orelse)
        if isinstance(node, ast.NamedExpr):
            return self.tainted(node.value)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(self.tainted(e) for e in node.elts)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.tainted(node.elt) or any(self.tainted(g.iter) for g in node.generators)
        if isinstance(node, ast.DictComp):
            return self.tainted(node.value) or any(self.tainted(g.iter) for g in node.generators)
        if isinstance(node, ast.Dict):
            return any(self.tainted(v) for v in node.values if v is not None)
        return False

    def _params(self) -> dict[str, list[str]]:
        params = {}
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params[node.name] = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        return params

    def _calls(self, params: dict[str, list[str]]) -> bool:
        """A module function (or a lambda next to it) called with a value from a source: its parameter
        holds one too (`def body(f): return f.text` ... `body(node.source)`)."""
        changed = False
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call):
                continue
            tainted = [self.tainted(a) for a in node.args]
            if isinstance(node.func, ast.Name) and node.func.id in params:
                names = params[node.func.id]
                for name, is_tainted in zip(names, tainted, strict=False):
                    if is_tainted and name not in self.names:
                        self.names.add(name)
                        changed = True
                for keyword in node.keywords:
                    if keyword.arg in names and self.tainted(keyword.value) and keyword.arg not in self.names:
                        self.names.add(keyword.arg)
                        changed = True
            if any(tainted):
                for arg in node.args:
                    if isinstance(arg, ast.Lambda):
                        for a in arg.args.args:
                            if a.arg not in self.names:
                                self.names.add(a.arg)
                                changed = True
        return changed

    def _bind(self, target: ast.AST) -> bool:
        """Mark every name bound by `target` as holding a value from a source; True when one is new."""
        new = False
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and node.id not in self.names:
                self.names.add(node.id)
                new = True
        return new

    def _fixpoint(self) -> None:
        params = self._params()
        changed = True
        while changed:
            changed = self._calls(params)
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign) and self.tainted(node.value):
                    for target in node.targets:
                        changed |= self._bind(target)
                elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and self.tainted(node.value):
                    changed |= self._bind(node.target)
                elif isinstance(node, ast.AnnAssign) and "SourceFile" in ast.unparse(node.annotation):
                    changed |= self._bind(node.target)
                elif isinstance(node, ast.NamedExpr) and self.tainted(node.value):
                    changed |= self._bind(node.target)
                elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and self.tainted(node.iter):
                    changed |= self._bind(node.target)
                elif isinstance(node, (ast.With, ast.AsyncWith)):
                    for item in node.items:
                        if item.optional_vars is not None and self.tainted(item.context_expr):
                            changed |= self._bind(item.optional_vars)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    args = node.args
                    for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                        if arg is not None and arg.annotation is not None and "SourceFile" in ast.unparse(arg.annotation):
                            if arg.arg not in self.names:
                                self.names.add(arg.arg)
                                changed = True
                    if isinstance(node, ast.Lambda):
                        continue
                    if node.name not in self.functions and any(
                            isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) and self.tainted(n.value)
                            for n in ast.walk(node)):
                        self.functions.add(node.name)
                        changed = True

    def violations(self) -> list[tuple[int, str]]:
        found = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute):
                if node.attr == "text" and self.tainted(node.value):
                    found.append((node.lineno, f"`{ast.unparse(node)}` reads a file's text"))
                elif node.attr in _TEXT_ATTRS:
                    found.append((node.lineno, f"`{ast.unparse(node)}` reads a file's lines"))
                elif node.attr in ("__dict__", "__getattribute__") and self.tainted(node.value):
                    found.append((node.lineno, f"`{ast.unparse(node)}` reaches into a source"))
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if name in ("getattr", "vars") and node.args and self.tainted(node.args[0]):
                    found.append((node.lineno, f"`{ast.unparse(node)}` reaches into a source"))
                elif name in ("attrgetter", "methodcaller") and any(
                        isinstance(a, ast.Constant) and a.value in {"text"} | _TEXT_ATTRS for a in node.args):
                    found.append((node.lineno, f"`{ast.unparse(node)}` reads a file's text"))
                elif name == "open" or name in _FILE_READERS:
                    found.append((node.lineno, f"`{ast.unparse(node)}` reads a file"))
        return sorted(found)


def violations(code: str) -> list[tuple[int, str]]:
    return _Scan(ast.parse(code)).violations()


def check_modules() -> list[Path]:
    return sorted(p for p in CHECKS.glob("*.py"))


@pytest.mark.parametrize("path", check_modules(), ids=lambda p: p.name)
def test_no_check_reads_a_files_text(path):
    found = violations(path.read_text(encoding="utf-8"))
    if path.name in ALLOWED:
        assert found, f"{path.name} no longer reads text: remove it from ALLOWED ({ALLOWED[path.name]})"
        return
    assert not found, f"{path.name} breaks the checks contract (vllmlint/checks/__init__.py): " + "; ".join(
        f"line {line}: {what}" for line, what in found)


def test_the_allow_list_names_only_existing_modules():
    names = {p.name for p in check_modules()}
    assert set(ALLOWED) <= names
    assert not ALLOWED, "no check may read a file's text"


def test_the_contract_is_written_down():
    doc = vllmlint.checks.__doc__ or ""
    assert "never reads a file's text" in doc and "test_checks_contract" in doc


# --- the scanner catches the patterns, however written ----------------------------------------------
OLD_VL108 = '''
import re
_RAY_START = re.compile(r"\\bray\\s+start\\b")

def _ray_head_visible(ctx) -> bool:
    if any(o.kind in _RAY_KINDS for o in ctx.world.objects):
        return True
    return any(_RAY_START.search(source.text or "") for source in ctx.world.sources)
'''


@pytest.mark.parametrize("code", [
    OLD_VL108,
    "def f(h):\n    return 'x' in h.source.text[h.start:h.end]\n",
    "def f(source):\n    return source.text\n",
    "def f(ctx):\n    for f in ctx.world.sources:\n        if 'ray' in f.text:\n            return True\n",
    "def f(ctx):\n    return any('ray' in s.text for s in ctx.world.sources)\n",
    "def f(token):\n    file = token.source\n    body = file\n    return body.text\n",
    "def f(ctx):\n    first = ctx.world.sources[0]\n    return first.text\n",
    "def f(ctx):\n    return next(iter(ctx.world.sources)).text\n",
    "def owner(node):\n    return node.source\n\ndef f(node):\n    return owner(node).text\n",
    "def f(node):\n    return getattr(node.source, 'te' + 'xt')\n",
    "def f(node):\n    return vars(node.source)['text']\n",
    "def f(node):\n    return node.source.__dict__['text']\n",
    "from operator import attrgetter\nread = attrgetter('text')\n",
    "def f(node):\n    return node.source.line_text(3)\n",
    "def f(anything):\n    return anything.line_text(node.line)\n",
    "def f(p):\n    return open(p).read()\n",
    "def f(p):\n    return p.read_text()\n",
    "def f(node):\n    if (s := node.source):\n        return s.text\n",
    "def f(ctx):\n    files = {s.display_path: s for s in ctx.world.sources}\n    return files['a'].text\n",
    "from vllmlint.source.yamlmodel import SourceFile\ndef f(file: SourceFile):\n    return file.text\n",
    "def body(f):\n    return f.text\n\ndef g(node):\n    return body(node.source)\n",
    "def body(*, f):\n    return f.text\n\ndef g(node):\n    return body(f=node.source)\n",
    "def g(ctx):\n    return list(map(lambda f: f.text, ctx.world.sources))\n",
    "def g(ctx):\n    files = sorted(ctx.world.sources, key=len)\n    return files[0].text\n",
    "def g(ctx):\n    by_path = dict((s.display_path, s) for s in ctx.world.sources)\n    return by_path.get('a').text\n",
])
def test_the_scanner_catches(code):
    assert violations(code), code


@pytest.mark.parametrize("code", [
    "def f(node):\n    return node.text, node.source.display_path, node.source.span(0, 1)\n",
    "def f(invocation):\n    return [t.text for t in invocation.tokens]\n",
    "def f(ctx):\n    return [c.words for c in ctx.world.shell_commands]\n",
    "def f(scalar):\n    return scalar.source_index(3), scalar.text\n",
    "def f(metric):\n    for source in ('pods', 'object'):\n        part = metric.get(source)\n        yield part.text\n",
])
def test_the_scanner_lets_the_model_be_read(code):
    assert violations(code) == []
