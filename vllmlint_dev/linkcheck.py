"""Dev tool: which files change another file's findings (the ground truth of cross-file influence).

    python -m vllmlint_dev.linkcheck PATH... [--each-folder] [--attribute] [--notices] [--json FILE]

The files under the PATHs (collected as the command line collects them) are linted once each, alone, and
once all together, in this process with `vllmlint.engine` (default options, no cache, no fixes). A file
whose finding lines differ between the two runs is influenced by another file of the group: the lines only
the lone run has are printed with `-`, the lines only the joint run has with `+`. `--each-folder` makes
every folder directly under each PATH its own group (the corpus's repository folders, the fixtures'
scenario folders); without it the PATHs are one group.

`--attribute` also names the files that cause each difference: for an influenced file F, the other files
of the group are bisected (F linted with a half of them, the half that changes F's findings is split again)
down to single files that change F's findings when linted with F alone. Influence that only a combination
of files has (two files that each cancel the other) is reported against the smallest set bisection finds.

Not shipped behaviour: nothing under `vllmlint/` imports this module.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from vllmlint.engine import Linter, LintOptions
from vllmlint.links import Keys, file_keys
from vllmlint.source.files import collect_files


def _options() -> LintOptions:
    return LintOptions(fixes=False, jobs=1, cache_dir=None)


def finding_lines(files: list[Path], notices: bool = False) -> dict[str, list[str]]:
    """Display path -> the sorted finding lines (`line:col: CODE severity message`) of one run over `files`.
    Every file of the run has an entry, an empty list when it has no finding."""
    linter = Linter(_options())
    for path in files:
        linter.add_file(path)
    result = linter.run()
    lines: dict[str, list[str]] = {shown: [] for shown in result.sources}
    for finding in result.findings + result.suppressed:
        hidden = " (suppressed)" if finding.suppressed_by is not None else ""
        lines.setdefault(finding.path, []).append(
            f"{finding.span.line}:{finding.span.col}: {finding.code} {finding.severity.label}{hidden} "
            f"{finding.message}")
    if notices:
        for notice in result.notices:
            if notice.path:
                lines.setdefault(notice.path, []).append(f"{notice.line}:0: {notice.code} note {notice.message}")
    return {shown: sorted(found) for shown, found in lines.items()}


def _shown(path: Path) -> str:
    linter = Linter(_options())
    linter.add_file(path)
    return next(iter(linter.result.sources), str(path))


def difference(alone: list[str], together: list[str]) -> tuple[list[str], list[str]]:
    """(lines only the lone run has, lines only the joint run has), as multisets."""
    a, t = Counter(alone), Counter(together)
    return sorted((a - t).elements()), sorted((t - a).elements())


def code_of(line: str) -> str:
    return line.split(" ", 2)[1]


class Group:
    """One group of files: each alone, all together, and what differs."""

    def __init__(self, name: str, files: list[Path], notices: bool = False):
        self.name = name
        self.files = files
        self.notices = notices
        self.shown = {path: _shown(path) for path in files}
        self.alone: dict[str, list[str]] = {}
        for path in files:
            run = finding_lines([path], notices)
            # A file alone may bring others it reads from disk (a kustomization's resources): keep only its own.
            self.alone[self.shown[path]] = run.get(self.shown[path], [])
        self.together = finding_lines(files, notices)
        self.differs: dict[str, tuple[list[str], list[str]]] = {}
        for path in files:
            shown = self.shown[path]
            gone, added = difference(self.alone[shown], self.together.get(shown, []))
            if gone or added:
                self.differs[shown] = (gone, added)
        self.causes: dict[str, list[list[str]]] = {}

    def attribute(self) -> None:
        by_shown = {shown: path for path, shown in self.shown.items()}
        for shown in self.differs:
            target = by_shown[shown]
            others = [path for path in self.files if path != target]
            self.causes[shown] = [[self.shown[p] for p in cause] for cause in self._bisect(target, others)]

    def _changes(self, target: Path, others: list[Path]) -> bool:
        shown = self.shown[target]
        return finding_lines([target, *others], self.notices).get(shown, []) != self.alone[shown]

    def _bisect(self, target: Path, others: list[Path]) -> list[list[Path]]:
        if not others or not self._changes(target, others):
            return []
        if len(others) == 1:
            return [others]
        half = len(others) // 2
        found = self._bisect(target, others[:half]) + self._bisect(target, others[half:])
        return found or [self._shrink(target, others)]  # only a combination changes the target's findings

    def _shrink(self, target: Path, cause: list[Path]) -> list[Path]:
        """A smaller combination that still changes the target's findings: each file left out in turn, and
        kept out when the rest still changes them (a Route needs the Service and the Deployment behind it)."""
        kept = list(cause)
        for path in list(cause):
            rest = [p for p in kept if p != path]
            if rest and self._changes(target, rest):
                kept = rest
        return kept

    def report(self) -> dict:
        return {"group": self.name, "files": len(self.files),
                "influenced": {shown: {"alone_only": gone, "together_only": added,
                                       "causes": self.causes.get(shown)}
                               for shown, (gone, added) in self.differs.items()}}


def groups_of(paths: list[str], each_folder: bool) -> list[tuple[str, list[Path]]]:
    if not each_folder:
        files, _ = collect_files(paths)
        return [(" ".join(paths), files)]
    groups = []
    for top in paths:
        for entry in sorted(Path(top).iterdir()):
            files, _ = collect_files([str(entry)])
            if files:
                groups.append((str(entry), files))
    return groups


def summary(groups: list[Group]) -> list[str]:
    files = sum(len(g.files) for g in groups)
    influenced = sum(len(g.differs) for g in groups)
    by_rule: Counter[str] = Counter()
    files_by_rule: dict[str, set[str]] = {}
    for group in groups:
        for shown, (gone, added) in group.differs.items():
            for line in gone + added:
                by_rule[code_of(line)] += 1
                files_by_rule.setdefault(code_of(line), set()).add(shown)
    out = [f"{len(groups)} group(s), {files} file(s), {influenced} influenced by another file"]
    causes = {c for g in groups for found in g.causes.values() for cause in found for c in cause}
    if any(g.causes for g in groups):
        out.append(f"{len(causes)} file(s) influence another")
    for code, count in sorted(by_rule.items()):
        out.append(f"  {code}: {count} line(s) differ in {len(files_by_rule[code])} file(s)")
    return out


# --- link keys (docs/design/cross-file-links.md, vllmlint/links.py): a partition of the files, checked against the
# ground truth. Files that share a key one provides and another wants go into one batch (union-find: the batches are
# the connected components).
def link_keys(files: list[Path]) -> tuple[Keys, dict[str, str]]:
    """The keys of every file of one joint run, and display path -> real path."""
    linter = Linter(_options())
    for path in files:
        linter.add_file(path)
    world = linter.build()
    real = dict(linter.real_paths)
    return file_keys(world, real), real


def batches(keys: Keys, files: list[str], broadcast: bool = False) -> list[list[str]]:
    """The connected components of the files under shared keys (a key joins its providers and its wanters when
    it has both; `A` keys of namespace "" join every namespace's). `broadcast`: whole-run keys (`G`) join
    nothing, as if each batch were given the run's summary of them (a fact computed on the merged index)."""
    parent = {f: f for f in files}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    def widen(key: tuple) -> tuple:
        return key[:2] if key[0] == "A" and key[2] == "" else key

    provided: dict[tuple, set[str]] = {}
    wanted: dict[tuple, set[str]] = {}
    for shown, found in keys.provides.items():
        for key in found:
            provided.setdefault(key, set()).add(shown)
    for shown, found in keys.wants.items():
        for key in found:
            wanted.setdefault(key, set()).add(shown)
    # namespace "" is compatible with every namespace: an `A` key of "" meets every namespace's
    for table in (provided, wanted):
        for key in [k for k in table if k[0] == "A" and k[2] == ""]:
            for other in [k for k in list(provided) + list(wanted) if k[:2] == key[:2]]:
                table.setdefault(other, set()).update(table[key])
    for key, providers in provided.items():
        wanters = wanted.get(key, set())
        if broadcast and key[0] == "G":
            continue
        if not wanters or (wanters == providers and len(providers) == 1):
            continue
        members = [m for m in providers | wanters if m in parent]
        for member in members[1:]:
            union(members[0], member)
    groups: dict[str, list[str]] = {}
    for shown in files:
        groups.setdefault(find(shown), []).append(shown)
    return list(groups.values())


def _meeting(wanted: set[tuple], provided: set[tuple]) -> set[tuple]:
    """The wanted keys some provided key meets (an `A` key of namespace "" meets every namespace's)."""
    found = wanted & provided
    for key in wanted - found:
        if key[0] == "A" and any(k[:2] == key[:2] and (k[2] == "" or key[2] == "") for k in provided):
            found.add(key)
    return found


def key_report(group: Group) -> dict:
    """The batches the keys make for a group, and the measured influences they miss (holes)."""
    keys, _ = link_keys(group.files)
    shown = [group.shown[p] for p in group.files]
    report: dict = {"files": len(shown), "explained": {}}
    for target in group.differs:
        for cause in group.causes.get(target) or []:
            shared: set[tuple] = set()
            for one in cause:
                for a, b in ((target, one), (one, target)):
                    shared |= _meeting(keys.wants.get(a, set()), keys.provides.get(b, set()))
            for a in cause:  # a chain: the causes' own links to each other
                for b in cause:
                    if a != b:
                        shared |= _meeting(keys.wants.get(a, set()), keys.provides.get(b, set()))
            report["explained"][f"{target} <- {', '.join(cause)}"] = sorted(shared)
    global_providers: dict[tuple, set[str]] = {}
    for name, found in keys.provides.items():
        for key in found:
            if key[0] == "G":
                global_providers.setdefault(key, set()).add(name)
    for mode, broadcast in (("strict", False), ("broadcast", True)):
        made = batches(keys, shown, broadcast)
        batch_of = {f: i for i, batch in enumerate(made) for f in batch}
        holes = []
        for target in group.differs:
            # broadcast: the files providing a whole-run key the target wants are copied into its batch
            copied = {f for key in keys.wants.get(target, ()) for f in global_providers.get(key, ())} \
                if broadcast else set()
            causes = group.causes.get(target) or [[f for f in shown if f != target]]
            for cause in causes:
                if any(batch_of.get(c) != batch_of.get(target) and c not in copied for c in cause):
                    holes.append((target, cause))
        report[mode] = {"batches": len(made), "singletons": sum(1 for b in made if len(b) == 1),
                        "largest": max((len(b) for b in made), default=0), "holes": holes}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vllmlint_dev.linkcheck", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--each-folder", action="store_true", help="one group per folder directly under each PATH")
    parser.add_argument("--attribute", action="store_true", help="name the files causing each difference")
    parser.add_argument("--notices", action="store_true", help="compare the notes with a path too")
    parser.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    parser.add_argument("--keys", action="store_true", help="partition the files by link keys and check the "
                        "partition against the measured influence (implies --attribute)")
    args = parser.parse_args(argv)
    groups = []
    for name, files in groups_of(args.paths, args.each_folder):
        group = Group(name, files, args.notices)
        if args.attribute or args.keys:
            group.attribute()
        groups.append(group)
        for shown, (gone, added) in group.differs.items():
            print(f"{shown} ({name}):")
            for cause in group.causes.get(shown) or []:
                print(f"  caused by: {', '.join(cause)}")
            for line in gone:
                print(f"  - {line}")
            for line in added:
                print(f"  + {line}")
    for line in summary(groups):
        print(line)
    if args.keys:
        reports = [key_report(group) for group in groups]
        files = sum(r["files"] for r in reports)
        for found in reports:
            for pair, shared in found["explained"].items():
                print(f"link: {pair}: {' '.join('/'.join(str(part) for part in key) for key in shared) or 'NO KEY'}")
        for mode in ("strict", "broadcast"):
            for found in reports:
                for target, cause in found[mode]["holes"]:
                    print(f"hole ({mode}): {target} is influenced by {', '.join(cause)} in another batch")
            print(f"keys, {mode}: {sum(r[mode]['batches'] for r in reports)} batch(es), "
                  f"{sum(r[mode]['singletons'] for r in reports)} singleton(s) of {files} file(s), "
                  f"largest {max((r[mode]['largest'] for r in reports), default=0)}, "
                  f"{sum(len(r[mode]['holes']) for r in reports)} hole(s)")
    if args.json:
        Path(args.json).write_text(json.dumps([g.report() for g in groups], indent=1) + "\n")
    return 1 if any(g.differs for g in groups) else 0


if __name__ == "__main__":
    sys.exit(main())
