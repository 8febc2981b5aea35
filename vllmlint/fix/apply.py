"""The `--fix` driver: apply the fixes the checks attached, verify the result, write it safely.

`run_fixes` lints the files as one world, applies the available fixes (safe ones; unsafe ones too when
asked) until nothing changes, and keeps a file's changes only when its new text still parses, runs the
same vLLM commands and adds no finding to the run. Only findings the user is shown are fixed: one that a
per-file ignore or the baseline hides is left as it is (`LintOptions` carries both to the engine).

Writing never damages a file: it is skipped (with a one-line reason in `FixOutcome.refused`) when it was
reached through a symbolic link that leaves the linted paths (`--follow-links` lints such files, nothing
writes them; a link that stays inside them is written through: its target is replaced), when its mode does not let its owner
write it (a 0444 file stays 0444 and unchanged, even for root, who could), or when it changed since it
was read (an editor saved it meanwhile: `FixOutcome.stale`). Otherwise it is replaced atomically through
a temporary file in its folder, with its mode, owner and group; a file with other hard links, or whose
owner the temporary file cannot be given, is rewritten in place instead, so that it stays one file.
"""
from __future__ import annotations

from vllmlint import records
import os
import stat
from bisect import bisect_left
from collections import Counter
from vllmlint.records import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from vllmlint.fix.edits import SAFE, UNSAFE, Edit, Fix, _conflict

if TYPE_CHECKING:
    from vllmlint.engine import LintOptions, LintResult
    from vllmlint.finding import Finding
    from vllmlint.k8s.objects import World
    from vllmlint.vllm.invocation import Invocation

MAX_PASSES = 5
BOM = "\ufeff"


@dataclass
class FixOutcome:
    diff: str = ""  # unified diff of every change, paths as displayed (a file's byte-order mark kept)
    applied: int = 0  # fixes applied (in files that were written or would be)
    files: list[str] = field(default_factory=list)  # changed files, as displayed
    refused: list[tuple[str, str]] = field(default_factory=list)  # (file, why its fixes were not kept)
    stale: list[str] = field(default_factory=list)  # files not written: they changed since they were read
    result: LintResult | None = None  # the LintResult after fixing


@dataclass
class _File:
    path: Path
    shown: str
    data: bytes  # as read: compared again before writing
    original: str
    bom: bool
    text: str = ""
    applied: int = 0


def fixable(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    return (isinstance(fix, Fix) and finding.suppressed_by is None
            and (fix.safety == SAFE or (unsafe and fix.safety == UNSAFE)))


def apply_edits(text: str, edits: list[Edit]) -> str:
    """The text with non-overlapping edits applied, in one pass (edits in any order)."""
    parts = []
    position = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        parts.append(text[position:edit.start])
        parts.append(edit.replacement)
        position = max(position, edit.end)
    parts.append(text[position:])
    return "".join(parts)


def run_fixes(paths: list[str], options: LintOptions, *, unsafe: bool = False, write: bool = True,
              roots: list[str] | None = None, outside: Iterable[Path | str] = ()) -> FixOutcome:
    """Lint `paths` as one world, apply the available fixes (safe ones; unsafe too when asked) until
    nothing changes (at most MAX_PASSES passes), keep a file's changes only if they verify, then write
    the kept files (when `write`). `roots` are the paths the user gave (default `paths`): a link is
    written through only when its target is inside them. Files in `outside` (reached through a link
    that leaves them, with --follow-links) are linted and reported, never fixed or written."""
    from vllmlint.engine import collect_files, display_path

    limits = _write_roots(paths if roots is None else roots)
    frozen = {display_path(Path(path)) for path in outside}
    files: dict[str, _File] = {}
    for path in collect_files(paths)[0]:
        shown = display_path(path)
        if shown in frozen:
            continue  # linted (`lint` reads `paths`), never fixed: no fix is chosen for a file not in `files`
        try:
            data = path.read_bytes()
        except OSError:
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            continue
        if b"\x00" not in data[:8192]:
            files[shown] = _File(path, shown, data, text, data.startswith(BOM.encode()), text)

    # Fixes come from the findings the user is shown (the rules selected, minus per-file ignores and
    # the baseline); verification looks at every finding of every rule, so that a fix never trades a
    # shown finding for one the selection happens to hide.
    everything = records.replace(options, select=None, ignore=None, per_file_ignores={}, baseline=None)
    narrowed = bool(options.select or options.ignore or options.per_file_ignores or options.baseline is not None)

    def lint(with_options: LintOptions = options) -> tuple[LintResult, World]:
        return _lint_texts(paths, with_options, {f.shown: f.text for f in files.values() if f.text != f.original})

    result, world = lint()
    before, before_world = lint(everything) if narrowed else (result, world)
    outcome = FixOutcome()
    for _ in range(MAX_PASSES):
        chosen = _choose(result.findings, unsafe, files)
        if not chosen:
            break
        for shown, fixes in chosen.items():
            record = files[shown]
            record.text = apply_edits(record.text, [e for fix in fixes for e in fix.edits])
            record.applied += len(fixes)
        result, world = lint()

    # Verify; a refused file goes back to its original text, which changes the world: check again.
    while any(f.text != f.original for f in files.values()):
        changed = {f.shown for f in files.values() if f.text != f.original}
        after, after_world = lint(everything) if narrowed else (result, world)
        problems = _verify(before, before_world, after, after_world, changed)
        if not problems:
            break
        for shown, reason in problems.items():
            record = files[shown]
            record.text, record.applied = record.original, 0
            outcome.refused.append((shown, reason))
        result, world = lint()

    for shown in sorted({f.path for f in result.findings if f.path in frozen and fixable(f, unsafe)}):
        outcome.refused.append((shown, "reached through a symbolic link that leaves the linted paths: "
                                       "--follow-links lints it, no fix writes it"))
    diffs = []
    unwritten = False
    for record in sorted(files.values(), key=lambda f: f.shown):
        if record.text == record.original:
            continue
        if write:
            refusal = write_fixed(record, limits)
            if refusal is not None:
                if refusal is _STALE:
                    outcome.stale.append(record.shown)
                    refusal = "the file changed since vllmlint read it: not written (run --fix again)"
                outcome.refused.append((record.shown, refusal))
                record.text = record.original
                unwritten = True
                continue
        outcome.files.append(record.shown)
        outcome.applied += record.applied
        prefix = BOM if record.bom else ""  # line 1 as the file has it, so that `patch` finds it
        diffs.append(unified_diff(prefix + record.original, prefix + record.text, record.shown))
    outcome.diff = "".join(diffs)
    outcome.result = lint()[0] if unwritten else result
    return outcome


def _lint_texts(paths: list[str], options: LintOptions, overrides: dict[str, str]) -> tuple[LintResult, World]:
    """Lint the files of `paths`, reading `overrides` (display path -> text) instead of the disk."""
    from vllmlint.engine import Linter, collect_files, display_path

    from vllmlint.records import replace

    linter = Linter(replace(options, stream=False))  # the fixes read the world: one piece, never in chunks
    for path in collect_files(paths)[0]:
        shown = display_path(path)
        if shown in overrides:
            linter.add_bytes(overrides[shown].encode("utf-8"), shown, path.suffix.lower(), path.name)
        else:
            linter.add_file(path, shown)
    result = linter.run()
    return result, linter.world


class _Taken:
    """The edits chosen so far in one file, sorted, to find a conflict by bisection instead of a scan
    (1,000 fixes in one file made the scan quadratic)."""

    def __init__(self) -> None:
        self.edits: list[Edit] = []
        self.starts: list[int] = []
        self.widest = 0  # the longest edit: every edit that may overlap starts within that of `start`

    def conflicts(self, edit: Edit) -> bool:
        low = bisect_left(self.starts, edit.start - self.widest)
        high = bisect_left(self.starts, edit.end + 1)
        return any(_conflict(edit, other) for other in self.edits[low:high])

    def add(self, edit: Edit) -> None:
        index = bisect_left(self.starts, edit.start)
        self.starts.insert(index, edit.start)
        self.edits.insert(index, edit)
        self.widest = max(self.widest, edit.end - edit.start)


def _choose(findings: list[Finding], unsafe: bool, files: dict[str, _File]) -> dict[str, list[Fix]]:
    """Per file, fixes whose edits conflict with none already chosen (the others wait for a pass)."""
    chosen: dict[str, list[Fix]] = {}
    taken: dict[str, _Taken] = {}
    seen: set[tuple] = set()
    candidates = [f.fix for f in findings if fixable(f, unsafe) and isinstance(f.fix, Fix)]
    candidates.sort(key=lambda fix: min((e.path, e.start) for e in fix.edits))
    for fix in candidates:
        key = fix.key()
        if key in seen:
            continue  # one fix shared by several findings (two flags folded into one)
        seen.add(key)
        if any(e.path not in files for e in fix.edits):
            continue
        if any(e.path in taken and taken[e.path].conflicts(e) for e in fix.edits):
            continue
        for edit in fix.edits:
            taken.setdefault(edit.path, _Taken()).add(edit)
        # A fix's edits are all in one file in practice; count it once, against its first file.
        chosen.setdefault(fix.edits[0].path, []).append(fix)
        for path in {e.path for e in fix.edits[1:]} - {fix.edits[0].path}:
            chosen.setdefault(path, [])
    return chosen


def _verify(before: LintResult, before_world: World, result: LintResult, world: World,
            changed: set[str]) -> dict[str, str]:
    """Changed files whose new text is worse: it no longer parses, runs a different number of vLLM
    commands, or the run has findings it did not have before."""
    problems: dict[str, str] = {}
    before_errors = Counter(f.path for f in before.findings if f.code == "VL001")
    after_errors = Counter(f.path for f in result.findings if f.code == "VL001")
    for shown in changed:
        if after_errors[shown] > before_errors[shown]:
            message = next(f.message for f in result.findings if f.code == "VL001" and f.path == shown)
            problems[shown] = f"the fixed text would not parse ({message})"
    count_before = Counter(_invocation_path(i) for i in before_world.invocations)
    count_after = Counter(_invocation_path(i) for i in world.invocations)
    for shown in changed - set(problems):
        if count_before[shown] != count_after[shown]:
            problems[shown] = (f"the fixed text runs {count_after[shown]} vLLM command(s) instead of "
                               f"{count_before[shown]}")
    new = Counter(f.fingerprint() for f in result.findings) - Counter(f.fingerprint() for f in before.findings)
    if new:
        for finding in result.findings:
            if new[finding.fingerprint()] <= 0 or finding.path in problems:
                continue
            reason = f"the fix would add a finding: {finding.code} {finding.message}"
            if finding.path in changed:
                problems[finding.path] = reason
            else:  # a new finding in a file we did not touch: any changed file may have caused it
                for shown in changed - set(problems):
                    problems[shown] = reason
    return problems


def _invocation_path(invocation: Invocation) -> str:
    source = invocation.source
    return source.display_path if source is not None else ""


def _lines(text: str) -> list[str]:
    """Lines as `patch` sees them: ended by `\n` only (`str.splitlines` also splits at a lone `\r`, form
    feeds and U+2028, which made hunks `patch` could not apply)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def unified_diff(before: str, after: str, shown: str) -> str:
    import difflib

    lines = []
    for line in difflib.unified_diff(_lines(before), _lines(after), fromfile=shown, tofile=shown):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


# --- writing ----------------------------------------------------------------------------------------
_STALE = "stale"  # write_fixed's answer for a file that changed since it was read


def _write_roots(roots: Iterable[str]) -> list[str]:
    """Where a link may lead for its target to be written: each given folder, and each given file as
    named (a link named on the command line leaves it, whatever it points to)."""
    limits = []
    for root in roots:
        if os.path.isdir(root):
            limits.append(os.path.realpath(root))
        else:
            absolute = os.path.abspath(root)
            limits.append(os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute)))
    return limits


def write_fixed(record: _File, roots: list[str] | None = None) -> str | None:
    """Write a verified file; None when written, else why not (`_STALE`: it changed since it was read).
    A symbolic link is written through (its target replaced, the link kept) only when its target is
    inside `roots` (from `_write_roots`; None: never)."""
    path = str(record.path)
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"cannot write the fixed file: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode):
        from vllmlint.source.files import _within

        path = os.path.realpath(path)
        if roots is None or not _within(path, roots):
            return ("a symbolic link to outside the linted paths: vllmlint does not write through it "
                    "(fix the file it points to)")
        try:
            info = os.lstat(path)
        except OSError as exc:
            return f"cannot write the fixed file: {exc.strerror or exc}"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file: left as it is"
    if not _may_write(info, path):
        return f"read-only (mode {stat.S_IMODE(info.st_mode):04o}): left as it is"
    try:
        current = _read_no_follow(path)
    except OSError as exc:
        return f"cannot write the fixed file: {exc.strerror or exc}"
    if current != record.data:
        return _STALE
    data = (BOM.encode() if record.bom else b"") + record.text.encode("utf-8")
    try:
        if info.st_nlink > 1:
            write_in_place(path, data)  # a temporary file renamed over it would split it from its links
        else:
            write_atomically(path, data, info)
    except OSError as exc:  # a read-only folder, a full disk: that file stays as it was
        return f"cannot write the fixed file: {exc.strerror or exc}"
    return None


def _may_write(info: os.stat_result, path: str) -> bool:
    """Whether we may write the file, and its mode lets its owner write it. The mode decides for its
    owner and for root too (whom `os.access` always allows): a file made read-only is a statement that
    it must not change."""
    euid = os.geteuid() if hasattr(os, "geteuid") else -1
    if euid in (0, info.st_uid) and not info.st_mode & stat.S_IWUSR:
        return False
    return os.access(path, os.W_OK)


def _read_no_follow(path: str) -> bytes:
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(descriptor, "rb") as stream:
        return stream.read()


def write_in_place(path: str, data: bytes) -> None:
    """Rewrite the file's content, keeping its inode (links, mode, owner, ACLs stay as they are)."""
    descriptor = os.open(path, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(data)
        stream.truncate()
        stream.flush()
        os.fsync(stream.fileno())


def write_atomically(path: str, data: bytes, info: os.stat_result) -> None:
    """Write through a temporary file in the same folder and `os.replace`, giving it the file's mode,
    owner and group first. When the owner cannot be given (another user's file in a folder we may
    write), the file is rewritten in place instead: replacing it would make it ours."""
    import tempfile

    folder = os.path.dirname(path) or "."
    handle, temp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".vllmlint-fix")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        mine = os.stat(temp)
        if (mine.st_uid, mine.st_gid) != (info.st_uid, info.st_gid):
            try:
                os.chown(temp, info.st_uid, info.st_gid)
            except OSError:
                os.unlink(temp)
                write_in_place(path, data)
                return
        os.chmod(temp, stat.S_IMODE(info.st_mode))  # after chown, which clears set-id bits
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


@dataclass
class TextFixOutcome:
    """`fix_text`: the fixed text of one in-memory file (standard input), with what `FixOutcome` says."""
    text: str
    applied: int
    result: LintResult
    refused: str | None = None  # why the fixes were not kept (the text is then the original)


def fix_text(text: str, shown: str, options: LintOptions, *, unsafe: bool = False) -> TextFixOutcome:
    """`run_fixes` for one text that is not a file (`vllmlint --fix --stdin-filename x.yaml -`, an editor
    fixing on save): the same passes and the same verification, nothing written. A leading byte-order
    mark is kept."""
    from vllmlint.engine import Linter

    bom = text.startswith(BOM)
    original = text[1:] if bom else text
    suffix = _suffix(shown, original)
    record = _File(Path(shown), shown, b"", original, bom, original)

    def lint(with_options: LintOptions = options) -> tuple[LintResult, World]:
        linter = Linter(with_options)
        linter.result.files_checked += 1
        linter.add_text(record.text, shown, suffix, Path(shown).name)
        return linter.run(), linter.world

    everything = records.replace(options, select=None, ignore=None, per_file_ignores={}, baseline=None)
    narrowed = bool(options.select or options.ignore or options.per_file_ignores or options.baseline is not None)
    result, world = lint()
    before, before_world = lint(everything) if narrowed else (result, world)
    for _ in range(MAX_PASSES):
        chosen = _choose(result.findings, unsafe, {shown: record})
        fixes = chosen.get(shown)
        if not fixes:
            break
        record.text = apply_edits(record.text, [e for fix in fixes for e in fix.edits])
        record.applied += len(fixes)
        result, world = lint()
    refused = None
    if record.text != record.original:
        after, after_world = lint(everything) if narrowed else (result, world)
        problems = _verify(before, before_world, after, after_world, {shown})
        if problems:
            refused = problems[shown] if shown in problems else next(iter(problems.values()))
            record.text, record.applied = record.original, 0
            result, world = lint()
    return TextFixOutcome((BOM if bom else "") + record.text, record.applied, result, refused)


def _suffix(shown: str, text: str) -> str:
    """The suffix a text is read as: its name's, or (`-`, a name without one) what the content says, as when linted."""
    if Path(shown).suffix:
        return Path(shown).suffix.lower()
    from vllmlint.source.files import sniff_suffix

    return sniff_suffix(text)


def edit_problem(shown: str, before: str, after: str) -> str | None:
    """Why `after` (one fix applied to `before`, the text of `shown`) must not be offered, as `--fix` would refuse
    it: it no longer parses, or runs a different number of vLLM commands; None when it is fine. For an editor's
    quick fix, which is one fix on one file: the file alone is read, no rule runs (`--fix` checks more: that the
    whole run gains no finding)."""
    from vllmlint.engine import Linter, LintOptions

    def read(text: str) -> tuple[LintResult, World]:
        linter = Linter(LintOptions(select=["VL001"], fixes=False))
        linter.result.files_checked += 1
        linter.add_text(text, shown, _suffix(shown, text), Path(shown).name)
        return linter.run(), linter.world

    problems = _verify(*read(before), *read(after), {shown})
    return problems.get(shown) or next(iter(problems.values()), None)
