"""Start-up: what a one-file run imports and builds before it reads anything (the pre-commit case).

Structure, not timings: each test fails if something expensive comes back into every run."""
from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

from vllmlint.records import dataclass, field, repr_of

from conftest import ROOT


@dataclasses.dataclass(frozen=True)
class StdPoint:
    x: int
    label: str = "a"
    hidden: tuple = dataclasses.field(default=(), repr=False)


@dataclass(frozen=True)
class Point:
    x: int
    label: str = "a"
    hidden: tuple = field(default=(), repr=False)


@dataclasses.dataclass(eq=False)
class StdNode:
    name: str
    parent: object = None
    children: list = dataclasses.field(default_factory=list)


@dataclass(eq=False)
class Node:
    name: str
    parent: object = None
    children: list = field(default_factory=list)


def test_records_print_compare_hash_and_replace_as_the_standard_library_does():
    assert repr(Point(1, "b", (3,))) == repr(StdPoint(1, "b", (3,))).replace("StdPoint", "Point") == "Point(x=1, label='b')"
    assert Point(1) == Point(1) and Point(1) != Point(2) and hash(Point(1)) == hash(Point(1))
    assert dataclasses.replace(Point(1), label="z") == Point(1, "z")
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "label", "hidden"]
    assert Point.__repr__ is repr_of and StdPoint.__repr__ is not repr_of
    # A cycle prints `...` where it closes, as the generated repr does.
    root, std_root = Node("root"), StdNode("root")
    root.children.append(Node("leaf", root))
    std_root.children.append(StdNode("leaf", std_root))
    assert repr(root) == repr(std_root).replace("StdNode", "Node")
    assert repr(root) == "Node(name='root', parent=None, children=[Node(name='leaf', parent=..., children=[])])"
    assert Node("a") != Node("a")  # eq=False: identity
    assert Point.__doc__ == "Point"  # no inspect.signature at import


class _Imports(ast.NodeVisitor):
    def __init__(self):
        self.found: list[str] = []

    def visit_ImportFrom(self, node):
        if node.module == "dataclasses" and any(a.name == "dataclass" for a in node.names):
            self.found.append(f"line {node.lineno}: from dataclasses import dataclass")

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "dataclasses" and node.attr == "dataclass":
            self.found.append(f"line {node.lineno}: dataclasses.dataclass")
        self.generic_visit(node)


def test_every_class_of_the_package_is_made_by_vllmlint_records():
    offenders = []
    for path in sorted((ROOT / "vllmlint").rglob("*.py")):
        if path.name == "records.py":
            continue
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        offenders += [f"{path.relative_to(ROOT)} {where}" for where in visitor.found]
    assert offenders == [], "use `from vllmlint.records import dataclass, field` (see its docstring)"


def imported_by_a_one_file_run(tmp_path: Path) -> set[str]:
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", encoding="utf-8")
    code = ("import sys, runpy\nsys.argv = ['vllmlint', sys.argv[1]]\n"
            "try:\n    runpy.run_module('vllmlint', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(manifest)], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    return set(proc.stderr.strip().splitlines()[-1].split())  # the last line of stderr: the module names


# --- what only some inputs need is imported, and compiled, where they need it ------------------------------
_PROBE = """import sys, runpy
sys.argv = ['vllmlint', *sys.argv[1:]]
try:
    runpy.run_module('vllmlint', run_name='__main__')
except SystemExit:
    pass
from vllmlint.lazyre import _LazyPattern
compiled = sorted(f"{name}.{attr}" for name, module in list(sys.modules.items()) if name.startswith('vllmlint')
                  for attr, value in vars(module).items() if isinstance(value, _LazyPattern) and 'match' in vars(value))
print(' '.join(sorted(sys.modules)), file=sys.stderr)
print(' '.join(compiled) or '-', file=sys.stderr)
"""


def _probe(folder: Path, *args: str, env: dict | None = None) -> tuple[str, set[str], set[str]]:
    """A run of `vllmlint ARGS` in `folder`: (its stdout, the modules it imported, the lazy patterns it compiled)."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, cwd=folder,
                          timeout=120, env=env)
    *_, modules, compiled = proc.stderr.strip().splitlines()
    return proc.stdout, set(modules.split()), set(compiled.split()) - {"-"}


def _imported_by_python() -> set[str]:
    """What this Python imports by itself, before any code of ours: start-up (3.13's `site` reads `.pth` files as
    utf-8-sig) and `import pathlib` (3.11's imports urllib.parse, which imports ipaddress; 3.13's does not). The test
    asks only about what vllmlint imports."""
    code = "import sys, pathlib; print(' '.join(sys.modules))"
    return set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())


def _git_repository(folder: Path, tracked: dict[str, str], ignore: str) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / ".gitignore").write_text(ignore, encoding="utf-8")
    for name, text in tracked.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "-C", str(folder), "add", "--", ".gitignore", *tracked], check=True)


def test_a_one_file_vllm_run_in_a_repository_imports_and_compiles_only_what_it_uses(tmp_path):
    from conftest import DEPLOYMENT

    # The pre-commit case: a tracked manifest of a repository whose .gitignore has patterns.
    _git_repository(tmp_path, {"deploy.yaml": DEPLOYMENT}, "*.pyc\nbuild/\n")
    out, modules, compiled = _probe(tmp_path, "deploy.yaml")
    assert "deploy.yaml:12:49: VL102" in out  # it did lint
    # A tracked file needs no ignore pattern (vllmlint.source.wildmatch); near misses (difflib), shell quoting of a fix (shlex)
    # and wide characters (unicodedata) are not needed to print its findings; nor URL and address parsing (urllib.parse,
    # ipaddress: 2 and 1.5 ms of a one-file run on CPython 3.13) when the file has no URL or address to parse.
    for unused in ("vllmlint.source.wildmatch", "difflib", "heapq", "shlex", "unicodedata", "hashlib", "subprocess", "tempfile",
                   "encodings.utf_8_sig", "urllib.parse", "ipaddress"):
        assert unused not in modules - _imported_by_python(), unused
    # Nor the readers of other inputs: Compose, Markdown, nginx; nor the renamed codes when nothing is ignored.
    for unused in ("vllmlint.source.compose", "vllmlint.source.markdown", "vllmlint.source.nginx", "vllmlint.renames"):
        assert unused not in modules, unused
    # Patterns of other languages and rare inputs stay uncompiled (vllmlint.lazyre).
    for pattern in ("vllmlint.source.markdown._FENCE", "vllmlint.source.kustomize._REMOTE",
                    "vllmlint.source.helm._HELM_SOURCE", "vllmlint.suppressions._BODY", "vllmlint.source.compose._EXPORT", "vllmlint.vllm.release._WHEEL"):
        assert pattern not in compiled, pattern


def test_the_runs_that_need_those_modules_and_patterns_still_get_them(tmp_path):
    from conftest import DEPLOYMENT

    # An untracked file that .git/info/exclude ignores, beside a tracked one: wildmatch judges the untracked one.
    _git_repository(tmp_path, {"deploy.yaml": DEPLOYMENT}, "# only comments\n")
    (tmp_path / ".git" / "info" / "exclude").write_text("# git's own\nbuild/\n", encoding="utf-8")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "copy.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    typo = DEPLOYMENT.replace('--swap-space, "4"', "--enable-prefx-caching")
    (tmp_path / "notes.md").write_text(f"# Notes\n\n```yaml\n{typo}```\n", encoding="utf-8")
    out, modules, compiled = _probe(tmp_path, ".")
    assert "deploy.yaml:12:49: VL102" in out and "copy.yaml" not in out and "vllmlint.source.wildmatch" in modules
    # The Markdown fence and the misspelt flag (a did-you-mean) in notes.md.
    assert "notes.md:" in out and "`--enable-prefix-caching`" in out and "difflib" in modules
    assert "vllmlint.source.markdown._FENCE" in compiled
    # --diff shows the fix (difflib) and --fix writes it.
    diff, modules, _ = _probe(tmp_path, "--diff", "deploy.yaml")
    assert '-        command: [vllm, serve, Qwen/Qwen3-0.6B, --swap-space, "4"]' in diff and "difflib" in modules


def test_a_lazy_pattern_compiles_once_at_its_first_use_and_then_is_the_compiled_patterns():
    import re

    from vllmlint.lazyre import lazy_compile

    pattern = lazy_compile(r"(?P<word>[a-z]+)-(\d+)", re.I)
    assert "match" not in vars(pattern) and repr(pattern) == r"lazy_compile('(?P<word>[a-z]+)-(\\d+)', re.IGNORECASE)"
    assert pattern.search("x ABC-12").group("word") == "ABC"
    compiled = re.compile(r"(?P<word>[a-z]+)-(\d+)", re.I)
    assert vars(pattern)["match"] == compiled.match and pattern.sub("#", "a-1 b-2") == "# #"
    assert (pattern.pattern, pattern.flags, pattern.groups, pattern.groupindex) == \
        (compiled.pattern, compiled.flags, compiled.groups, compiled.groupindex)
    assert [m.group(2) for m in pattern.finditer("a-1 b-22")] == ["1", "22"] and pattern.split("a-1,b") == \
        ["", "a", "1", ",b"]


def test_a_cached_one_file_run_writes_and_replays_its_entry_without_tempfile_or_openssl(tmp_path):
    import hashlib
    import os

    from conftest import DEPLOYMENT

    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "VLLMLINT_NO_CACHE"}
    env["VLLMLINT_CACHE_DIR"] = str(tmp_path / "cache")
    miss, miss_modules, _ = _probe(tmp_path, "deploy.yaml", env=env)
    (entry,) = (tmp_path / "cache" / "results").glob("*.json")  # written under its key, no temporary file left
    assert len(entry.stem) == 64 and not list((tmp_path / "cache" / "results").glob(".tmp-*"))
    assert entry.stat().st_mode & 0o777 == 0o600  # as tempfile.mkstemp makes it
    hit, hit_modules, _ = _probe(tmp_path, "deploy.yaml", env=env)
    assert "deploy.yaml:12:49: VL102" in miss and hit == miss
    assert "vllmlint.checks.vl102_removed_flag" in miss_modules and "vllmlint.checks.vl102_removed_flag" not in \
        hit_modules  # replayed
    for modules in (miss_modules, hit_modules):
        for unused in ("tempfile", "shutil", "random", "hashlib", "_hashlib"):
            assert unused not in modules, unused
    from vllmlint.run import cache

    assert cache._digest(b"vllmlint").hexdigest() == hashlib.blake2b(b"vllmlint", digest_size=32).hexdigest()


def test_text_is_decoded_as_utf_8_sig_decodes_it():
    from vllmlint.source.files import read_text

    for data in (b"a: 1\n", b"\xef\xbb\xbfa: 1\n", b"\xef\xbb\xbf", b"", "k: \u00e9\u4e16\n".encode()):
        assert read_text(data) == (data.decode("utf-8-sig"), None)
    assert read_text(b"a: 1\n\xff\n") == (None, "not UTF-8 text (invalid byte at line 2)")
    assert read_text(b"\xef\xbb\xbfa: 1\nb: \xff\n")[0] is None


def test_a_one_file_run_imports_no_module_it_does_not_use(tmp_path):
    modules = imported_by_a_one_file_run(tmp_path)
    assert "vllmlint.engine" in modules  # it did run
    # Fingerprints (hashlib), running tools (subprocess: --render only), tracebacks (a bug of ours), SARIF and
    # JSON Schema are not needed to print text findings of one file; nor is click (vllmlint/entry.py parses the
    # common command line itself), nor threading (asked only where the rules may be forked: 200 files and more).
    for unused in ("hashlib", "subprocess", "traceback", "sarif_om", "jsonschema", "vllmlint.formatters.sarif",
                   "vllmlint.baseline", "vllmlint.fix.apply", "click", "vllmlint.cli", "threading"):
        assert unused not in modules, unused


def test_a_record_class_is_whole_at_definition_and_behaves_as_the_standard_librarys():
    from vllmlint import records

    @dataclass(frozen=True)
    class Base:
        a: int
        items: list = field(default_factory=list)

    @dataclass(frozen=True)
    class Derived(Base):
        b: str = "x"

    @dataclass
    class Listed:
        name: str

    class Plain(Derived):  # not decorated: its base's fields and __init__
        pass

    assert [f.name for f in dataclasses.fields(Listed)] == ["name"] and dataclasses.is_dataclass(Derived)
    assert [f.name for f in records.fields(Derived)] == ["a", "items", "b"] and records.is_record(Plain(1))
    plain = Plain(1, b="y")
    assert (plain.a, plain.items, plain.b) == (1, [], "y") and Plain(1, [], "y") == plain
    try:
        plain.a = 2
    except dataclasses.FrozenInstanceError:
        pass
    else:  # pragma: no cover
        raise AssertionError("a subclass of a frozen record is frozen")
    plain.extra = 1  # an undecorated subclass may add attributes, as with the standard library
    assert records.replace(Derived(1, b="y"), b="z") == Derived(1, [], "z")

    @dataclass(eq=True)
    class Sent:
        x: int

    received = Sent.__new__(Sent)  # as pickle makes an instance: no __init__, and nothing left to make
    received.__dict__.update(x=3)
    assert received == Sent(3) and received != Sent(4)
    assert Sent.__hash__ is None  # eq without frozen: unhashable, as dataclasses makes it


def _both(body: str, options: str = "") -> tuple[type, type]:
    """The same class made by dataclasses and by vllmlint.records."""
    made = []
    for decorator, maker in (("dataclasses.dataclass", "dataclasses.field"), ("dataclass", "field")):
        namespace = {"dataclasses": dataclasses, "dataclass": dataclass, "field": field}
        exec(f"@{decorator}({options})\nclass C:\n" + body.replace("FIELD", maker), namespace)  # noqa: S102
        made.append(namespace["C"])
    return made[0], made[1]


SHAPES = [
    ("    a: int\n    b: str = 'x'\n", ""),
    ("    a: int\n    b: list = FIELD(default_factory=list)\n    c: int = FIELD(default=3, repr=False)\n", "frozen=True"),
    ("    a: int\n    b: int = FIELD(default=0, compare=False)\n", "frozen=True"),
    ("    a: int\n    c: dict = FIELD(init=False, default_factory=dict)\n    d: int = FIELD(init=False, default=4)\n", ""),
    ("    a: int\n    b: int = 2\n", "eq=False"),
    ("    a: int = 1\n", "frozen=True, eq=False"),
    ("    pass\n", "frozen=True"),
]


def test_records_match_the_standard_library_shape_by_shape():
    import inspect

    for body, options in SHAPES:
        std, mine = _both(body, options)
        def parameters(cls):  # dataclasses also annotates the __init__ it compiles: nothing reads those
            return [(p.name, repr(p.default), p.kind) for p in inspect.signature(cls.__init__).parameters.values()]
        assert parameters(std) == parameters(mine), body
        assert [(f.name, f.init, f.repr, f.compare) for f in dataclasses.fields(std)] == \
            [(f.name, f.init, f.repr, f.compare) for f in dataclasses.fields(mine)], body
        assert std.__match_args__ == mine.__match_args__
        for attribute in ("a", "b", "c", "d"):
            assert (attribute in vars(std)) == (attribute in vars(mine)), (body, attribute)
            assert vars(std).get(attribute) == vars(mine).get(attribute), (body, attribute)
        args = [1] if "a: int\n" in body else []
        one, other, same = std(*args), mine(*args), mine(*args)
        assert repr(one).replace("test_records_match", "") == repr(other).replace("test_records_match", "")
        assert vars(one) == vars(other), body
        assert (other == same) == (one == std(*args)), body
        hashable = std.__hash__ is not None
        assert (mine.__hash__ is not None) == hashable, body
        if hashable and "eq=False" not in options:
            def hashed(obj):
                try:
                    return hash(obj)
                except TypeError:  # a list field
                    return "unhashable"
            assert (hashed(one) == "unhashable") == (hashed(other) == "unhashable") and hashed(other) == hashed(same)
        assert vars(dataclasses.replace(other)) == vars(records_replace(other)) == vars(other)
        frozen = "frozen=True" in options
        for obj in (one, other):
            try:
                obj.a = 5
                assigned = True
            except dataclasses.FrozenInstanceError:
                assigned = False
            assert assigned != frozen, body


def records_replace(obj):
    from vllmlint import records

    return records.replace(obj)


def test_records_refuse_what_the_standard_library_refuses():
    import pytest

    for body, error in (("    a: list = []\n", ValueError), ("    a: int = 1\n    b: int\n", TypeError),
                        ("    a = FIELD(default=1)\n", TypeError)):
        for decorator in ("dataclasses.dataclass", "dataclass"):
            namespace = {"dataclasses": dataclasses, "dataclass": dataclass, "field": field}
            maker = "dataclasses.field" if decorator.startswith("dataclasses") else "field"
            with pytest.raises(error):
                exec(f"@{decorator}\nclass C:\n" + body.replace("FIELD", maker), namespace)  # noqa: S102


def test_every_record_class_of_the_package_has_its_methods_compiled_ahead_of_time():
    """vllmlint/_records.py is fresh: no class of the package compiles source when it is defined."""
    proc = subprocess.run([sys.executable, "-m", "vllmlint_dev.records_gen", "--check"], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_a_one_file_run_compiles_no_record_and_imports_no_dataclasses(tmp_path):
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text((ROOT / "fixtures" / "audited" / "single-gpu-deployment.yaml").read_text(encoding="utf-8")
                        if (ROOT / "fixtures" / "audited" / "single-gpu-deployment.yaml").exists()
                        else "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", encoding="utf-8")
    code = ("import sys, runpy\nsys.argv = ['vllmlint', '--no-cache', sys.argv[1]]\n"
            "try:\n    runpy.run_module('vllmlint', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "from vllmlint import records\n"
            "print(len(records._COMPILED), 'dataclasses' in sys.modules, len(records._DEFINED), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(manifest)], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    compiled, imported, defined = proc.stderr.strip().splitlines()[-1].split()
    assert int(defined) > 50  # it did run
    assert (compiled, imported) == ("0", "False")


def test_the_console_script_tunes_the_gc_before_it_imports_the_rest_of_vllmlint():
    # Importing the console script's module imports nothing heavy: main() sets the GC threshold first, so the
    # imports of the run (the modules' code, functions and classes, which live to the end) cause no collection.
    code = ("import sys; import vllmlint.entry; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('vllmlint'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert set(out) <= {"vllmlint", "vllmlint.bundle", "vllmlint.entry", "vllmlint.gc_policy"}, out


_COMPILE_PROBE = """import builtins, sys, runpy, traceback
calls = []
real = builtins.compile
def spy(source, *args, **kwargs):
    if 'importlib' not in sys._getframe(1).f_code.co_filename:  # not the import of a module whose .pyc is stale
            calls.append(repr(source)[:60] + ' from ' + ' < '.join(f'{f.filename.rsplit("/", 2)[-1]}:{f.lineno}'
                                                              for f in traceback.extract_stack()[-4:-1]))
    return real(source, *args, **kwargs)
builtins.compile = spy
sys.argv = ['vllmlint', *sys.argv[1:]]
try:
    runpy.run_module('vllmlint', run_name='__main__')
except SystemExit:
    pass
print('\\n'.join(calls) or '-', file=sys.stderr)
"""


def test_a_one_file_run_compiles_no_source(tmp_path):
    # The first compile() of a process sets up the compiler (14 M instructions on CPython 3.13, 10 M on 3.11: 4% of a
    # one-file run). A typing.NamedTuple whose annotations are strings (`from __future__ import annotations`)
    # compiles each of them as a ForwardRef when its class is made: records (vllmlint.records) compile nothing.
    from conftest import DEPLOYMENT

    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", _COMPILE_PROBE, "--no-cache", "deploy.yaml"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert "deploy.yaml:12:49: VL102" in proc.stdout  # it did lint
    assert proc.stderr.strip().splitlines()[-1:] == ["-"], proc.stderr
