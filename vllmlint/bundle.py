"""The wheel's modules in one file: `_data/<cache tag>/modules.bin`, written by `hatch_build.py`.

Importing a module from its own `.pyc` costs about 55 microseconds before any of its code runs (the finder's
lookups, a stat, an open and a read, the header checks): a one-file run imports about 120 of vllmlint's, some
7 ms of its 85 (measured 2026-12-02 on the benchmark machine; 120 empty modules take 6.4 ms). This file holds
the code of every module of the package, compiled when the wheel was built, and `install` puts a finder first on
`sys.meta_path` that reads each module's code from it (one `pread` at a known offset) instead. Bytecode and
behaviour are the same as from the `.pyc`: the same compiler made both from the same source, `__file__`,
`__spec__`, tracebacks (`co_filename`) and `get_source` name the installed `.py`.

A module is served from the bundle only when nothing says it may differ from its source, else the usual
import reads it: the bundle is for this interpreter's bytecode (`MAGIC_NUMBER`), the process runs without `-O`,
the installed `.py` has the size it had at build time and is not newer than the bundle.

The same goes for regular expressions: `re` compiles a pattern with a parser and a compiler written in Python,
and the 54 patterns of a one-file run cost a tenth of it (33.6 M instructions, callgrind). `patterns.bin` holds,
for the patterns of `vllmlint/_patterns.py`, what `re`'s compiler hands to `_sre.compile`, computed when the
wheel was built; `install` makes each `re.Pattern` from it (in C) and puts it in `re`'s cache, where
`re.compile` finds it. A pattern object equals (`==` compares the compiled code) the one `re.compile` makes;
the table is used only by the Python and `_sre` version that made it.

`VLLMLINT_NO_BUNDLE=1` turns both off. A checkout or an editable install has neither.
"""
from __future__ import annotations

import marshal
import os
import sys
from importlib.machinery import ModuleSpec, SourceFileLoader

FORMAT = 1
NAME = "modules.bin"
PATTERNS_NAME = "patterns.bin"
# A source whose modification time is this much later than the bundle's was edited after the install: the usual
# import reads it (files installed together get times a few seconds apart).
SLACK_NS = 120 * 10**9


def pack(modules: list[tuple[str, str, bool, bytes]], magic: bytes) -> bytes:
    """The bundle of `modules` (name, path below the package folder, is a package, source bytes), compiled
    here (`hatch_build.py` runs this with the Python the wheel is for)."""
    entries: dict[str, tuple[str, bool, int, int, int]] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, relative, package, source in modules:
        code = marshal.dumps(compile(source, relative, "exec", dont_inherit=True, optimize=0))
        entries[name] = (relative, package, offset, len(code), len(source))
        blobs.append(code)
        offset += len(code)
    header = marshal.dumps((FORMAT, magic, entries))
    return len(header).to_bytes(4, "little") + header + b"".join(blobs)


def pack_patterns(patterns) -> bytes:
    """The table of `patterns` ((pattern, flags) pairs): the arguments `re`'s compiler passes to `_sre.compile`
    for each, recorded by running it (this Python's `re`, whatever its internals)."""
    import re._compiler as compiler

    made: list = []
    real = compiler._sre.compile

    def record(*arguments):
        made.append(arguments)
        return real(*arguments)

    compiler._sre.compile = record
    try:
        rows = []
        for pattern, flags in patterns:
            made.clear()
            compiler.compile(pattern, flags)
            (arguments,) = made
            text, final_flags, code, groups, groupindex, indexgroup = arguments
            # The opcodes are int subclasses (named constants): their values are what `_sre` reads.
            # The code as bytes of `_sre.CODESIZE` words: unmarshalled as one object, not an int each.
            size = compiler._sre.CODESIZE
            words = memoryview(bytearray(len(code) * size)).cast("I" if size == 4 else "H")
            for index, word in enumerate(code):
                words[index] = int(word)
            rows.append((pattern, flags, (text, int(final_flags), words.tobytes(), int(groups),
                                          dict(groupindex), tuple(indexgroup))))
    finally:
        compiler._sre.compile = real
    return marshal.dumps((FORMAT, tuple(sys.version_info[:2]), compiler._sre.MAGIC, rows))


def prime_patterns(path: str) -> int:
    """Put the compiled patterns of the table at `path` in `re`'s cache; how many (0 when the table is missing
    or made by another Python)."""
    import re

    import _sre

    cache = getattr(re, "_cache", None)
    if not isinstance(cache, dict):
        return 0
    try:
        with open(path, "rb") as handle:
            form, version, magic, rows = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return 0
    if form != FORMAT or version != tuple(sys.version_info[:2]) or magic != _sre.MAGIC:
        return 0
    primed = 0
    for pattern, flags, (text, final_flags, code, groups, groupindex, indexgroup) in rows:
        key = (str, pattern, flags)
        if key not in cache and len(cache) < 256:  # room left for the process's own patterns (re keeps 512)
            cache[key] = _sre.compile(text, final_flags, _words(code, _sre.CODESIZE), groups, groupindex,
                                      indexgroup)
            primed += 1
    return primed


def _words(code: bytes, size: int) -> list:
    return (memoryview(code).cast("I") if size == 4 else memoryview(code).cast("H")).tolist()


class _Finder:
    """Finds `vllmlint.*` modules in the bundle (see the module's docstring)."""

    def __init__(self, fd: int, base: int, entries: dict, folder: str, stamp: int):
        self.fd, self.base, self.entries, self.folder, self.stamp = fd, base, entries, folder, stamp

    def find_spec(self, name: str, path=None, target=None):
        entry = self.entries.get(name)
        if entry is None:
            return None
        relative, package, _, _, size = entry
        origin = self.folder + relative
        try:
            stat = os.stat(origin)
        except OSError:
            return None
        if stat.st_size != size or stat.st_mtime_ns > self.stamp:
            return None  # edited since the wheel was built: the usual import compiles the source
        spec = ModuleSpec(name, _Loader(name, origin, self), origin=origin, is_package=package)
        if package:
            spec.submodule_search_locations = [origin.rpartition(os.sep)[0]]
        spec.has_location = True
        return spec

    def code(self, name: str, path: str):
        _, _, offset, length, _ = self.entries[name]
        code = marshal.loads(os.pread(self.fd, length, self.base + offset))
        import _imp

        _imp._fix_co_filename(code, path)  # type: ignore[attr-defined]  # what SourceLoader does with a .pyc's code
        return code

    def invalidate_caches(self) -> None:
        pass


class _Loader(SourceFileLoader):
    """The installed `.py`'s loader (source, resources, `__file__`), with the bundle's code."""

    def __init__(self, name: str, path: str, finder: _Finder):
        super().__init__(name, path)
        self.finder = finder

    def get_code(self, fullname: str):
        if fullname == self.name:
            return self.finder.code(fullname, self.path)
        return super().get_code(fullname)


def install(package_folder: str) -> bool:
    """Put the bundle's finder first on `sys.meta_path` when the bundle is there and fits this interpreter."""
    if sys.flags.optimize or os.environ.get("VLLMLINT_NO_BUNDLE") or not hasattr(os, "pread"):
        return False
    if any(isinstance(finder, _Finder) for finder in sys.meta_path):
        return True
    folder = package_folder.rstrip(os.sep) + os.sep
    path = f"{folder}_data{os.sep}{sys.implementation.cache_tag}{os.sep}{NAME}"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        size = int.from_bytes(os.pread(fd, 4, 0), "little")
        form, magic, entries = marshal.loads(os.pread(fd, size, 4))
        try:  # the frozen module importlib.util takes it from, loaded at every start (importlib.util is not)
            from _frozen_importlib_external import MAGIC_NUMBER
        except ImportError:
            from importlib.util import MAGIC_NUMBER

        if form != FORMAT or magic != MAGIC_NUMBER:
            raise ValueError("another bundle format or bytecode")
        stamp = os.fstat(fd).st_mtime_ns + SLACK_NS
    except (OSError, EOFError, ValueError, TypeError):
        os.close(fd)
        return False
    sys.meta_path.insert(0, _Finder(fd, 4 + size, entries, folder, stamp))
    try:
        prime_patterns(f"{folder}_data{os.sep}{sys.implementation.cache_tag}{os.sep}{PATTERNS_NAME}")
    except Exception:  # a table that does not fit this re: patterns are compiled as usual
        pass
    return True
