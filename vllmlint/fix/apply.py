"""The `--fix` driver: apply the fixes the checks attached, verify each one, write the files safely.

`run_fixes` lints the files as one world and applies the available fixes (safe ones; unsafe ones too when
asked) in rounds until nothing changes. Each round is verified against the files as they were read: the
new text must still parse, run the same vLLM commands, and add no finding to the run (any rule, any file).
When a round fails, the fixes that cause it are found by bisection (the round's fixes in file order: the
shortest failing prefix ends with one) and skipped one by one, each with one short line in
`FixOutcome.refused`; every other fix still applies, in the same file when it is independent. Only
findings the user is shown are fixed: one that a per-file ignore or the baseline hides is left as it is
(`LintOptions` carries both to the engine). docs/fixes.md says the same for users.

A file is never fixed (one line in `refused` when it has a fix) when it is reached through a symbolic
link that leaves the linted paths, when its real path is outside them, when it has other hard links (one
of its names may lie outside them), when it is not a regular file, or when its mode does not let its
owner write it (a 0444 file stays 0444 and unchanged, even for root, who could). These are decided before
fixing, so `--diff` shows exactly what `--fix` writes. A file that changed since it was read (an editor
saved it meanwhile) is not written (`FixOutcome.stale`). Otherwise it is replaced atomically through a
temporary file in its folder, with its mode, owner and group; when the owner cannot be given to the
temporary file, it is rewritten in place instead, so that it stays one file with its owner.

The diff is built from the edits themselves (`_Regions`): only the changed lines are compared, so
thousands of fixes in one file cost about as much as linting it.
"""
from __future__ import annotations

from vllmlint import records
import os
import stat
from bisect import bisect_left
from collections import Counter
from vllmlint.records import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from vllmlint.fix.edits import SAFE, UNSAFE, Edit, Fix, _conflict

if TYPE_CHECKING:
    from vllmlint.engine import LintOptions, LintResult
    from vllmlint.finding import Finding
    from vllmlint.k8s.objects import World
    from vllmlint.vllm.invocation import Invocation

MAX_PASSES = 5
MAX_CHECKS = 32  # verification lints spent finding the fixes to skip, per run; then a round's rest is dropped
BOM = "\ufeff"


@dataclass
class FixOutcome:
    diff: str = ""  # unified diff of every change, paths as displayed (a file's byte-order mark kept)
    applied: int = 0  # fixes applied (in files that were written or would be)
    files: list[str] = field(default_factory=list)  # changed files, as displayed
    refused: list[tuple[str, str]] = field(default_factory=list)  # (file, why a fix or the file was not fixed)
    stale: list[str] = field(default_factory=list)  # files not written: they changed since they were read
    result: LintResult | None = None  # the LintResult after fixing
    fixes: list[tuple[str, str, str]] = field(default_factory=list)  # (file, code, description) applied


@dataclass
class _File:
    path: Path
    shown: str
    data: bytes  # as read: compared again before writing
    original: str
    bom: bool
    text: str = ""
    applied: int = 0
    fixes: list[tuple[str, str]] = field(default_factory=list)  # (code, description) of the applied fixes
    regions: list[list[int]] = field(default_factory=list)  # `_Regions` of text against original


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
    """Lint `paths` as one world, apply the available fixes (safe ones; unsafe too when asked) in
    verified rounds (`_fix_rounds`), then write the changed files (when `write`). `roots` are the paths
    the user gave (default `paths`): a file is written only when its real path is inside them. Files in
    `outside` (reached through a link that leaves them, with --follow-links) are linted and reported,
    never fixed or written."""
    from vllmlint.engine import collect_files, display_path

    limits = _write_roots(paths if roots is None else roots)
    frozen = {display_path(Path(path)) for path in outside}
    files: dict[str, _File] = {}
    blocked: dict[str, str] = {}  # files that must not be written, and why
    for path in collect_files(paths)[0]:
        shown = display_path(path)
        if shown in frozen:
            continue  # linted (`lint` reads `paths`), never fixed: no fix is chosen for a file not in `files`
        refusal = _write_refusal(str(path), limits)
        if refusal is not None:
            blocked[shown] = refusal
            continue
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

    def lint(with_options: LintOptions) -> tuple[LintResult, World]:
        return _lint_texts(paths, with_options, {f.shown: f.text for f in files.values() if f.text != f.original})

    outcome = FixOutcome()
    result, world, first = _fix_rounds(files, lint, options, unsafe, outcome.refused)
    for shown in sorted({f.path for f in first.findings if f.path in frozen and fixable(f, unsafe)}):
        outcome.refused.append((shown, "reached through a symbolic link that leaves the linted paths: "
                                       "--follow-links lints it, no fix writes it"))
    for shown in sorted({f.path for f in first.findings if f.path in blocked and fixable(f, unsafe)}):
        outcome.refused.append((shown, blocked[shown]))
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
        outcome.fixes.extend((record.shown, code, description) for code, description in record.fixes)
        prefix = BOM if record.bom else ""  # line 1 as the file has it, so that `patch` finds it
        diffs.append(unified_diff(prefix + record.original, prefix + record.text, record.shown,
                                  _shifted(record.regions, len(prefix))))
    outcome.diff = "".join(diffs)
    outcome.result = lint(options)[0] if unwritten else result
    return outcome


class _Candidate:
    """One fix chosen in a round, with the findings it repairs (one fix may serve several)."""
    __slots__ = ("fix", "findings")

    def __init__(self, fix: Fix, finding: Finding):
        self.fix = fix
        self.findings = [finding]

    @property
    def path(self) -> str:
        return self.fix.edits[0].path

    def label(self) -> str:
        first = self.findings[0]
        return f"{first.code} at line {first.span.line}"


def _fix_rounds(files: dict[str, _File], lint: Callable[[LintOptions], tuple[LintResult, World]],
                options: LintOptions, unsafe: bool, refused: list[tuple[str, str]]
                ) -> tuple[LintResult, World, LintResult]:
    """Apply fixes to `files` (their `text`, `applied`, `fixes`, `regions`) in verified rounds; a skipped
    fix adds one line to `refused`. Returns the result and world of the fixed texts, and the first result
    (the files as read, with the user's options)."""
    # Fixes come from the findings the user is shown (the rules selected, minus per-file ignores and
    # the baseline); verification looks at every finding of every rule, so that a fix never trades a
    # shown finding for one the selection happens to hide.
    everything = records.replace(options, select=None, ignore=None, per_file_ignores={}, baseline=None)
    narrowed = bool(options.select or options.ignore or options.per_file_ignores or options.baseline is not None)
    result, world = lint(options)
    first = result
    before, before_world = lint(everything) if narrowed else (result, world)
    known = Counter(f.fingerprint() for f in before.findings)
    skipped: set[str] = set()  # fingerprints of the findings whose fix is skipped (stable across rounds)
    checks = MAX_CHECKS
    for _ in range(MAX_PASSES):
        candidates = _choose(result.findings, unsafe, files, skipped)
        if not candidates:
            break
        base = {shown: record.text for shown, record in files.items()}

        def attempt(subset: list[_Candidate], base: dict[str, str] = base
                    ) -> tuple[LintResult, World, dict[str, str]]:
            """Lint the round's texts with only `subset` applied: the problems it would bring."""
            by_file: dict[str, list[Edit]] = {}
            for candidate in subset:
                for edit in candidate.fix.edits:
                    by_file.setdefault(edit.path, []).append(edit)
            for shown, record in files.items():
                record.text = apply_edits(base[shown], by_file[shown]) if shown in by_file else base[shown]
            after, after_world = lint(everything)
            changed = {f.shown for f in files.values() if f.text != f.original}
            return after, after_world, _verify(before, before_world, after, after_world, changed, known)

        accepted = candidates
        after, after_world, problems = attempt(accepted)
        low = 0  # accepted[:low] verifies (the round's base text does)
        while problems and accepted:
            if checks < (len(accepted) - low).bit_length() + 1:
                # Not enough checks left to find the next one: keep what verifies, drop the rest.
                dropped = accepted[low:]
                others = len({c.path for c in dropped} - {dropped[0].path})
                where = f"here and in {others} other file(s)" if others else "here"
                refused.append((dropped[0].path, f"{len(dropped)} fix(es) {where} not applied: too many fixes of this "
                                                 "run would add a finding or break a file to check each one"))
                skipped.update(f.fingerprint() for c in accepted[low:] for f in c.findings)
                accepted, checks = accepted[:low], 0
                after, after_world, problems = attempt(accepted)
                break
            high, why = len(accepted), problems  # accepted[:high] does not verify
            while high - low > 1:
                middle = (low + high) // 2
                checks -= 1
                *_, found = attempt(accepted[:middle])
                if found:
                    high, why = middle, found
                else:
                    low = middle
            culprit = accepted[high - 1]
            refused.append((culprit.path, f"{culprit.label()}: {_first(why, culprit.path)}"))
            skipped.update(f.fingerprint() for f in culprit.findings)
            accepted = accepted[:high - 1] + accepted[high:]  # accepted[:low] is unchanged: it still verifies
            checks -= 1
            after, after_world, problems = attempt(accepted)
        by_file: dict[str, list[Edit]] = {}
        for candidate in accepted:
            record = files[candidate.path]
            record.applied += 1
            record.fixes.append((candidate.findings[0].code, candidate.fix.description))
            for edit in candidate.fix.edits:
                by_file.setdefault(edit.path, []).append(edit)
        for shown, edits in by_file.items():
            files[shown].regions = _compose(files[shown].regions, edits)
        if accepted:  # else the texts are the round's base again, and so is `result`
            result, world = lint(options) if narrowed else (after, after_world)
        if checks <= 0:
            break
    return result, world, first


def _first(problems: dict[str, str], shown: str) -> str:
    """The problem to name for a fix of `shown`: its own file's, else the first file's."""
    return problems.get(shown) or problems[min(problems)]


def _lint_texts(paths: list[str], options: LintOptions, overrides: dict[str, str]) -> tuple[LintResult, World]:
    """Lint the files of `paths`, reading `overrides` (display path -> text) instead of the disk."""
    from vllmlint.engine import Linter, collect_files, display_path

    from vllmlint.records import replace

    linter = Linter(replace(options, stream=False))  # the fixes read the world: one piece, never in chunks
    for path in collect_files(paths)[0]:
        shown = display_path(path)
        if shown in overrides:
            # Where it is on disk, as add_file records it: a Kustomization naming this file reads the
            # fixed text, not the disk's (else the file's objects were read twice after a fix).
            linter.real_paths.setdefault(shown, os.path.abspath(path))
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


def _choose(findings: list[Finding], unsafe: bool, files: dict[str, _File], skipped: set[str] | frozenset[str] = frozenset()
            ) -> list[_Candidate]:
    """The fixes of one round, in file order: per file, those whose edits conflict with none already
    chosen (the others wait for a round), minus the fixes of `skipped` findings (by fingerprint)."""
    taken: dict[str, _Taken] = {}
    seen: dict[tuple, _Candidate] = {}
    chosen: list[_Candidate] = []
    pairs = [(f, f.fix) for f in findings if fixable(f, unsafe) and isinstance(f.fix, Fix) and f.fix.edits]
    pairs.sort(key=lambda pair: min((e.path, e.start) for e in pair[1].edits))
    for finding, fix in pairs:
        key = fix.key()
        if key in seen:
            seen[key].findings.append(finding)  # one fix shared by several findings (two flags folded into one)
            continue
        if skipped and finding.fingerprint() in skipped:
            continue
        if any(e.path not in files for e in fix.edits):
            continue
        if any(e.path in taken and taken[e.path].conflicts(e) for e in fix.edits):
            continue
        for edit in fix.edits:
            taken.setdefault(edit.path, _Taken()).add(edit)
        seen[key] = candidate = _Candidate(fix, finding)
        chosen.append(candidate)  # a fix's edits are all in one file in practice: it counts against its first
    return chosen


def _verify(before: LintResult, before_world: World, result: LintResult, world: World,
            changed: set[str], known: Counter[str] | None = None) -> dict[str, str]:
    """What makes the fixed texts worse, by file: a changed file no longer parses or runs a different
    number of vLLM commands, or the run has a finding it did not have before (in any file). `known`: the
    fingerprints of `before`'s findings, counted (computed when not given)."""
    problems: dict[str, str] = {}
    before_errors = Counter(f.path for f in before.findings if f.code == "VL001")
    after_errors = Counter(f.path for f in result.findings if f.code == "VL001")
    for shown in changed:
        if after_errors[shown] > before_errors[shown]:
            error = next(f for f in result.findings if f.code == "VL001" and f.path == shown)
            problems[shown] = f"the fixed text would not parse (line {error.span.line}: {_short(error.message)})"
    count_before = Counter(_invocation_path(i) for i in before_world.invocations)
    count_after = Counter(_invocation_path(i) for i in world.invocations)
    for shown in changed - set(problems):
        if count_before[shown] != count_after[shown]:
            problems[shown] = (f"the fixed text runs {count_after[shown]} vLLM command(s) instead of "
                               f"{count_before[shown]}")
    if known is None:
        known = Counter(f.fingerprint() for f in before.findings)
    new = Counter(f.fingerprint() for f in result.findings) - known
    if new:
        for finding in result.findings:
            if new[finding.fingerprint()] > 0 and finding.path not in problems:
                problems[finding.path] = f"the fix would add {finding.code} at {finding.path}:{finding.span.line}"
    return problems


def _short(message: str, limit: int = 60) -> str:
    line = message.splitlines()[0] if message else ""
    return line if len(line) <= limit else line[:limit - 3].rstrip() + "..."


def _invocation_path(invocation: Invocation) -> str:
    source = invocation.source
    return source.display_path if source is not None else ""


# --- the diff -------------------------------------------------------------------------------------------
# A file's changes are kept as regions [o0, o1, c0, c1]: original[o0:o1] became text[c0:c1]; between two
# regions both texts are the same. Regions are sorted and never touch (touching ones are merged).

def _compose(regions: list[list[int]], edits: list[Edit]) -> list[list[int]]:
    """The regions of the text after `edits` (non-overlapping, in the coordinates of the text that
    `regions` describe) against the same original. Linear after sorting."""
    items: list[tuple[int, int, list[int] | None, Edit | None]] = sorted(
        [(r[2], r[3], r, None) for r in regions] + [(e.start, e.end, None, e) for e in edits
                                                     if e.start != e.end or e.replacement],
        key=lambda item: (item[0], item[1], item[3] is not None))
    composed: list[list[int]] = []
    delta = 0  # (current - original) length, over the regions before the group
    shift = 0  # (new - current) length, over the edits before the group
    index = 0
    while index < len(items):
        start, end = items[index][0], items[index][1]
        group_delta = group_shift = 0
        while index < len(items) and items[index][0] <= end:
            item_start, item_end, region, edit = items[index]
            end = max(end, item_end)
            if region is not None:
                group_delta += (region[3] - region[2]) - (region[1] - region[0])
            elif edit is not None:
                group_shift += len(edit.replacement) - (item_end - item_start)
            index += 1
        composed.append([start - delta, end - delta - group_delta, start + shift, end + shift + group_shift])
        delta += group_delta
        shift += group_shift
    return composed


def _shifted(regions: list[list[int]], by: int) -> list[list[int]]:
    return [[o0 + by, o1 + by, c0 + by, c1 + by] for o0, o1, c0, c1 in regions] if by else regions


def _lines(text: str) -> list[str]:
    """Lines as `patch` sees them: ended by `\n` only (`str.splitlines` also splits at a lone `\r`, form
    feeds and U+2028, which made hunks `patch` could not apply)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    position = text.find("\n")
    while position != -1:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts


CONTEXT = 3
MAX_MATCHED = 250_000  # old x new lines of one changed stretch compared by difflib; more: shown as replaced


def unified_diff(before: str, after: str, shown: str, regions: list[list[int]] | None = None) -> str:
    """A unified diff (`patch -p0` applies it) of `before` and `after`, 3 lines of context. With `regions`
    (`_compose`), only the changed lines are compared; without, the common head and tail are set aside
    first. Either way each changed stretch is compared by difflib only when it is small (MAX_MATCHED), so
    thousands of fixes in one file stay linear."""
    import difflib

    if before == after:
        return ""
    if regions is None:
        head = 0
        limit = min(len(before), len(after))
        while head < limit and before[head] == after[head]:
            head += 1
        tail = 0
        while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
            tail += 1
        regions = [[head, len(before) - tail, head, len(after) - tail]]
    a_lines, b_lines = _lines(before), _lines(after)
    a_starts, b_starts = _line_starts(before), _line_starts(after)
    ops: list[tuple[str, int, int, int, int]] = []
    for o0, o1, c0, c1 in _line_regions(before, after, regions):
        a0, a1 = _line_index(a_starts, o0, len(a_lines)), _line_index(a_starts, o1, len(a_lines))
        b0, b1 = _line_index(b_starts, c0, len(b_lines)), _line_index(b_starts, c1, len(b_lines))
        old, new = a_lines[a0:a1], b_lines[b0:b1]
        if old and new and len(old) * len(new) <= MAX_MATCHED:
            matched = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
        else:
            matched = [("replace", 0, len(old), 0, len(new))]
        ops.extend((tag, a0 + i1, a0 + i2, b0 + j1, b0 + j2) for tag, i1, i2, j1, j2 in matched
                   if tag != "equal" and (i1 != i2 or j1 != j2))
    if not ops:
        return ""
    out = [f"--- {shown}\n", f"+++ {shown}\n"]
    group = [ops[0]]
    for op in [*ops[1:], None]:
        if op is not None and op[1] - group[-1][2] <= 2 * CONTEXT:
            group.append(op)
            continue
        a_from = max(0, group[0][1] - CONTEXT)
        a_to = min(len(a_lines), group[-1][2] + CONTEXT)
        b_from = group[0][3] - (group[0][1] - a_from)
        b_to = group[-1][4] + (a_to - group[-1][2])
        out.append(f"@@ -{_range(a_from, a_to)} +{_range(b_from, b_to)} @@\n")
        position = a_from
        for _tag, i1, i2, j1, j2 in group:
            out.extend(" " + line for line in a_lines[position:i1])
            out.extend("-" + line for line in a_lines[i1:i2])
            out.extend("+" + line for line in b_lines[j1:j2])
            position = i2
        out.extend(" " + line for line in a_lines[position:a_to])
        group = [op] if op is not None else []
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def _range(start: int, stop: int) -> str:
    """difflib's `_format_range_unified`."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _line_index(starts: list[int], position: int, count: int) -> int:
    """The index of the line starting at `position` (a line start, or the end of the text: `count`)."""
    return min(bisect_left(starts, position), count)


def _line_regions(before: str, after: str, regions: list[list[int]]) -> list[list[int]]:
    """The regions widened to whole lines on both sides (the widening is text both share), regions that
    share a line or touch merged."""
    merged: list[list[int]] = []
    for region in regions:
        if merged and "\n" not in before[merged[-1][1]:region[0]]:
            merged[-1][1], merged[-1][3] = region[1], region[3]
        else:
            merged.append(list(region))
    widened: list[list[int]] = []
    for index, (o0, o1, c0, c1) in enumerate(merged):
        if o0 > 0 and before[o0 - 1] != "\n":
            lower = merged[index - 1][1] if index else 0
            prefix = o0 - (before.rfind("\n", lower, o0) + 1)
        else:
            prefix = 0
        at_end_a = o1 == len(before) or (o1 > 0 and before[o1 - 1] == "\n") or o1 == 0
        at_end_b = c1 == len(after) or (c1 > 0 and after[c1 - 1] == "\n") or c1 == 0
        if at_end_a and at_end_b:
            suffix = 0
        else:
            upper = merged[index + 1][0] if index + 1 < len(merged) else len(before)
            newline = before.find("\n", o1, upper)
            suffix = (newline + 1 if newline != -1 else len(before)) - o1
        if widened and widened[-1][1] == o0 - prefix:  # adjacent lines: one stretch, as difflib groups them
            widened[-1][1], widened[-1][3] = o1 + suffix, c1 + suffix
        else:
            widened.append([o0 - prefix, o1 + suffix, c0 - prefix, c1 + suffix])
    return widened


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


def _target(path: str, roots: list[str] | None) -> tuple[str, os.stat_result] | str:
    """The file a fix of `path` would write and its `lstat`, or why it must not be written: a symbolic
    link whose target (or a path whose real path) is outside `roots` (from `_write_roots`; None: links
    are never written through), a file with other hard links, not a regular file, or read-only."""
    from vllmlint.source.files import _within

    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"cannot write the fixed file: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode):
        path = os.path.realpath(path)
        if roots is None or not _within(path, roots):
            return ("a symbolic link to outside the linted paths: vllmlint does not write through it "
                    "(fix the file it points to)")
        try:
            info = os.lstat(path)
        except OSError as exc:
            return f"cannot write the fixed file: {exc.strerror or exc}"
    elif roots is not None and not _within(os.path.realpath(path), roots):
        return "reached through a symbolic link to outside the linted paths: vllmlint does not write it"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file: left as it is"
    if info.st_nlink > 1:
        return (f"the file has {info.st_nlink} hard links (another name may be outside the linted paths): "
                "left as it is")
    if not _may_write(info, path):
        return f"read-only (mode {stat.S_IMODE(info.st_mode):04o}): left as it is"
    return path, info


def _write_refusal(path: str, roots: list[str] | None) -> str | None:
    """Why a fix must not write `path` (`_target`), decided before fixing; None when it may."""
    target = _target(path, roots)
    return target if isinstance(target, str) else None


def write_fixed(record: _File, roots: list[str] | None = None) -> str | None:
    """Write a verified file; None when written, else why not (`_STALE`: it changed since it was read).
    The checks of `_target` are made again: the file may have changed since it was read."""
    target = _target(str(record.path), roots)
    if isinstance(target, str):
        return target
    path, info = target
    try:
        current = _read_no_follow(path)
    except OSError as exc:
        return f"cannot write the fixed file: {exc.strerror or exc}"
    if current != record.data:
        return _STALE
    data = (BOM.encode() if record.bom else b"") + record.text.encode("utf-8")
    try:
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
    """Rewrite the file's content, keeping its inode (mode, owner, ACLs stay as they are)."""
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
    refused: str | None = None  # why fixes were skipped (the others apply), one reason per fix, `; `-joined
    diff: str = ""  # the unified diff of the change (built from the edits: linear in their number)
    fixes: list[tuple[str, str]] = field(default_factory=list)  # (code, description) applied


def fix_text(text: str, shown: str, options: LintOptions, *, unsafe: bool = False) -> TextFixOutcome:
    """`run_fixes` for one text that is not a file (`vllmlint --fix --stdin-filename x.yaml -`, an editor
    fixing on save): the same verified rounds, nothing written. A leading byte-order mark is kept."""
    from vllmlint.engine import Linter

    bom = text.startswith(BOM)
    original = text[1:] if bom else text
    suffix = _suffix(shown, original)
    record = _File(Path(shown), shown, b"", original, bom, original)

    def lint(with_options: LintOptions) -> tuple[LintResult, World]:
        linter = Linter(with_options)
        linter.result.files_checked += 1
        linter.add_text(record.text, shown, suffix, Path(shown).name)
        return linter.run(), linter.world

    refused: list[tuple[str, str]] = []
    result, _, _ = _fix_rounds({shown: record}, lint, options, unsafe, refused)
    prefix = BOM if bom else ""
    diff = unified_diff(prefix + record.original, prefix + record.text, shown, _shifted(record.regions, len(prefix)))
    return TextFixOutcome(prefix + record.text, record.applied, result,
                          "; ".join(reason for _, reason in refused) or None, diff, list(record.fixes))


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


def fixes_listing(fixes: Iterable[tuple[str, str, str]], would: bool, local: dict[str, str] | None = None) -> str:
    """`--show-fixes`, as ruff lists them: per file (as `local` names it), how many of each fix, by rule code.
    `fixes` are (file, code, description); `would`: not written (`--diff`)."""
    by_file: dict[str, Counter[tuple[str, str]]] = {}
    for shown, code, description in fixes:
        by_file.setdefault(shown, Counter())[(code, description)] += 1
    total = sum(sum(counts.values()) for counts in by_file.values())
    if not total:
        return "No fixes would be applied.\n" if would else "No fixes applied.\n"
    lines = [f"{'Would fix' if would else 'Fixed'} {total} problem(s):"]
    for shown in sorted(by_file, key=lambda name: (local or {}).get(name, name)):
        lines.append(f"- {(local or {}).get(shown, shown)}:")
        for (code, description), count in sorted(by_file[shown].items()):
            lines.append(f"    {count} \u00d7 {code} ({description})")
    return "\n".join(lines) + "\n"
