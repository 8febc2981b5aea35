"""vllmlint/bundle.py: a wheel's modules served from one file, and its regular expressions compiled at build time.
Here in-process, on a package made for the test and on the package's own pattern list; the wheel itself (the
bundle a real install reads) is tests/test_packaging.py's."""
import os
import re
import subprocess
import sys
import traceback
from importlib.util import MAGIC_NUMBER

import pytest

from conftest import ROOT
from vllmlint import bundle

MODULES = {
    "pkg/__init__.py": "VALUE = 'init'\n",
    "pkg/a.py": "from pkg.sub import b\n\n\ndef twice(x):\n    return b.ONE * 2 * x\n\n\ndef fail():\n    raise ValueError('from a')\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/b.py": "\"\"\"Docstring kept.\"\"\"\nONE = 1\n",
}


@pytest.fixture
def made(tmp_path):
    """A package `pkg` on disk with its bundle, and a finder for it first on sys.meta_path."""
    for relative, text in MODULES.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")
    modules = []
    for relative, text in MODULES.items():
        inside = relative[len("pkg/"):]
        package = inside.endswith("__init__.py")
        dotted = "pkg" + ("." + inside[:-len("/__init__.py")].replace("/", ".") if inside.count("/") and package
                          else "" if package else "." + inside[:-3].replace("/", "."))
        modules.append((dotted, inside, package, text.encode()))
    data = bundle.pack(modules, MAGIC_NUMBER)
    path = tmp_path / "modules.bin"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    size = int.from_bytes(data[:4], "little")
    _, _, entries = __import__("marshal").loads(data[4:4 + size])
    finder = bundle._Finder(fd, 4 + size, entries, str(tmp_path / "pkg") + os.sep,
                            os.fstat(fd).st_mtime_ns + bundle.SLACK_NS)
    sys.meta_path.insert(0, finder)
    try:
        yield tmp_path, finder
    finally:
        sys.meta_path.remove(finder)
        os.close(fd)
        for name in [n for n in sys.modules if n == "pkg" or n.startswith("pkg.")]:
            del sys.modules[name]


def test_modules_come_from_the_bundle_with_their_files_and_sources(made):
    folder, finder = made
    import pkg.a

    assert pkg.VALUE == "init" and pkg.a.twice(3) == 6
    from pkg.sub import b

    for module, relative in ((pkg, "pkg/__init__.py"), (pkg.a, "pkg/a.py"), (b, "pkg/sub/b.py")):
        assert isinstance(module.__loader__, bundle._Loader), module
        assert module.__file__ == str(folder / relative) == module.__spec__.origin
    assert pkg.__path__ == [str(folder / "pkg")] and pkg.sub.__path__ == [str(folder / "pkg" / "sub")]
    assert b.__doc__ == "Docstring kept."
    assert pkg.a.__loader__.get_source("pkg.a") == MODULES["pkg/a.py"]
    with pytest.raises(ValueError) as raised:
        pkg.a.fail()
    last = traceback.extract_tb(raised.value.__traceback__)[-1]
    assert (last.filename, last.lineno, last.line) == (str(folder / "pkg" / "a.py"), 9, "raise ValueError('from a')")


def test_an_edited_module_is_imported_from_its_source(made):
    folder, _ = made
    (folder / "pkg" / "sub" / "b.py").write_text("ONE = 10\n", encoding="utf-8")  # another size
    import pkg.a

    assert pkg.a.twice(1) == 20
    assert isinstance(pkg.a.__loader__, bundle._Loader)
    assert not isinstance(sys.modules["pkg.sub.b"].__loader__, bundle._Loader)


def test_a_module_newer_than_the_bundle_is_imported_from_its_source(made):
    folder, finder = made
    source = folder / "pkg" / "sub" / "b.py"
    later = finder.stamp + 10**9
    os.utime(source, ns=(later, later))  # same size, written after the bundle
    from pkg.sub import b

    assert not isinstance(b.__loader__, bundle._Loader) and b.ONE == 1


def test_install_refuses_another_bytecode_and_a_missing_bundle(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, bundle._Finder)])
    assert bundle.install(str(tmp_path)) is False  # no bundle
    folder = tmp_path / "_data" / sys.implementation.cache_tag
    folder.mkdir(parents=True)
    (folder / bundle.NAME).write_bytes(bundle.pack([("x", "x.py", False, b"")], b"\0\0\0\0"))
    assert bundle.install(str(tmp_path)) is False and not any(isinstance(f, bundle._Finder) for f in sys.meta_path)
    (folder / bundle.NAME).write_bytes(b"\x10\0\0\0garbage")
    assert bundle.install(str(tmp_path)) is False
    (folder / bundle.NAME).write_bytes(bundle.pack([("x", "x.py", False, b"")], MAGIC_NUMBER))
    monkeypatch.setenv("VLLMLINT_NO_BUNDLE", "1")
    assert bundle.install(str(tmp_path)) is False
    monkeypatch.delenv("VLLMLINT_NO_BUNDLE")
    assert bundle.install(str(tmp_path)) is True and isinstance(sys.meta_path[0], bundle._Finder)


def _package_patterns():
    namespace: dict = {}
    exec((ROOT / "vllmlint" / "_patterns.py").read_text(encoding="utf-8"), namespace)  # noqa: S102  # our file
    return namespace["PATTERNS"]


def test_primed_patterns_equal_what_re_compiles(tmp_path, monkeypatch):
    """Every pattern of the package's list, made from the table, is the pattern `re` compiles (`==` compares
    the compiled code, flags and groups) and matches the same."""
    import re._compiler as compiler

    patterns = _package_patterns()
    assert len(patterns) > 100
    table = tmp_path / bundle.PATTERNS_NAME
    table.write_bytes(bundle.pack_patterns(patterns))
    monkeypatch.setattr(re, "_cache", {})
    assert bundle.prime_patterns(str(table)) == len(patterns)
    for pattern, flags in patterns:
        primed = re._cache[(str, pattern, flags)]
        assert primed == compiler.compile(pattern, flags) and re.compile(pattern, flags) is primed, pattern
        assert (primed.groups, primed.groupindex, primed.flags) == (re.compile(pattern, flags).groups,
                                                                   re.compile(pattern, flags).groupindex,
                                                                   re.compile(pattern, flags).flags)
    quantity = re._cache[(str, r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)|[eE]([+-]?\d{1,4}))?$",
                          0)]
    assert quantity.match("1.5Gi").groups() == ("1.5", "Gi", None) and quantity.match("1.5Gx") is None


def test_a_table_of_another_python_is_not_used(tmp_path, monkeypatch):
    import marshal

    table = tmp_path / bundle.PATTERNS_NAME
    form, version, magic, rows = marshal.loads(bundle.pack_patterns([("a+b", 0)]))
    monkeypatch.setattr(re, "_cache", {})
    for other in ((form, (2, 7), magic, rows), (form, version, magic + 1, rows), (form + 1, version, magic, rows)):
        table.write_bytes(marshal.dumps(other))
        assert bundle.prime_patterns(str(table)) == 0 and re._cache == {}
    table.write_bytes(b"not marshal")
    assert bundle.prime_patterns(str(table)) == 0
    assert bundle.prime_patterns(str(tmp_path / "missing")) == 0


def test_the_pattern_list_holds_every_pattern_the_package_compiles():
    """vllmlint/_patterns.py is fresh: a one-file run compiles none of the package's patterns in a wheel."""
    proc = subprocess.run([sys.executable, "-m", "vllmlint_dev.patterns_gen", "--check"], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
