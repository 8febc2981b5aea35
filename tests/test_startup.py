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
    # A tracked file needs no ignore pattern (pathspec); near misses (difflib), shell quoting of a fix (shlex)
    # and wide characters (unicodedata) are not needed to print its findings.
    for unused in ("pathspec", "difflib", "heapq", "shlex", "unicodedata", "hashlib", "subprocess", "tempfile",
                   "encodings.utf_8_sig"):
        assert unused not in modules, unused
    # Nor the readers of other inputs: Compose, Markdown, nginx; nor the renamed codes when nothing is ignored.
    for unused in ("vllmlint.source.compose", "vllmlint.source.markdown", "vllmlint.source.nginx", "vllmlint.renames"):
        assert unused not in modules, unused
    # Patterns of other languages and rare inputs stay uncompiled (vllmlint.lazyre).
    for pattern in ("vllmlint.source.markdown._FENCE", "vllmlint.source.kustomize._REMOTE",
                    "vllmlint.engine._HELM_SOURCE", "vllmlint.suppressions._BODY", "vllmlint.source.compose._EXPORT", "vllmlint.vllm.release._WHEEL"):
        assert pattern not in compiled, pattern


def test_the_runs_that_need_those_modules_and_patterns_still_get_them(tmp_path):
    from conftest import DEPLOYMENT

    # An untracked file that .git/info/exclude ignores, beside a tracked one: pathspec judges the untracked one.
    _git_repository(tmp_path, {"deploy.yaml": DEPLOYMENT}, "# only comments\n")
    (tmp_path / ".git" / "info" / "exclude").write_text("# git's own\nbuild/\n", encoding="utf-8")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "copy.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    typo = DEPLOYMENT.replace('--swap-space, "4"', "--enable-prefx-caching")
    (tmp_path / "notes.md").write_text(f"# Notes\n\n```yaml\n{typo}```\n", encoding="utf-8")
    out, modules, compiled = _probe(tmp_path, ".")
    assert "deploy.yaml:12:49: VL102" in out and "copy.yaml" not in out and "pathspec" in modules
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
    from vllmlint import cache

    assert cache._sha256(b"vllmlint").hexdigest() == hashlib.sha256(b"vllmlint").hexdigest()


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
    # JSON Schema are not needed to print text findings of one file.
    for unused in ("hashlib", "subprocess", "traceback", "sarif_om", "jsonschema", "vllmlint.formatters.sarif",
                   "vllmlint.baseline", "vllmlint.fix.apply"):
        assert unused not in modules, unused


def test_a_record_class_is_made_when_first_used_and_then_is_the_standard_librarys():
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

    assert {Base, Derived, Listed} <= set(records._PENDING)  # nothing compiled at definition
    assert [f.name for f in dataclasses.fields(Listed)] == ["name"] and Listed not in records._PENDING
    assert dataclasses.is_dataclass(Derived) and Base not in records._PENDING  # its base made first
    plain = Plain(1, b="y")
    assert (plain.a, plain.items, plain.b) == (1, [], "y") and Plain(1, [], "y") == plain
    try:
        plain.a = 2
    except dataclasses.FrozenInstanceError:
        pass
    else:  # pragma: no cover
        raise AssertionError("a subclass of a frozen record is frozen")

    @dataclass(eq=True)
    class Sent:
        x: int

    received = Sent.__new__(Sent)  # as pickle makes an instance: no __init__, so the class is still pending
    received.__dict__.update(x=3)
    records.make_all()  # what the engine does before unpickling
    assert not records._PENDING
    assert received == Sent(3) and received != Sent(4)
