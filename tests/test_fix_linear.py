"""`--fix` and `--diff` stay linear in the number of fixes (issue 27: fix-diff-quadratic-in-difflib,
repeated-flags-in-one-command-quadratic). Counts, not timings: the same on every machine."""
import difflib
import random
import shutil
import subprocess

import pytest

from vllmlint.engine import LintOptions, Linter
from vllmlint.fix.apply import _compose, apply_edits, run_fixes, unified_diff
from vllmlint.fix.edits import SAFE, Edit, drop_options_fix

POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{0}}}\nspec:\n  containers:\n  - name: vllm\n"
       "    image: vllm/vllm-openai:v0.29.0\n    args: [\"--swap-space=4\", \"--model\", \"m\"]\n")


def _pods(count: int) -> str:
    return "---\n".join(POD.format(i) for i in range(count))


@pytest.fixture
def matcher_sizes(monkeypatch):
    """The (old lines, new lines) of every difflib comparison made."""
    sizes = []
    real = difflib.SequenceMatcher

    def counting(junk, a, b, *args, **kwargs):
        sizes.append((len(a), len(b)))
        return real(junk, a, b, *args, **kwargs)

    monkeypatch.setattr(difflib, "SequenceMatcher", counting)
    return sizes


def test_the_diff_of_many_fixes_in_one_file_compares_only_the_changed_lines(tmp_path, monkeypatch, matcher_sizes):
    monkeypatch.chdir(tmp_path)
    count = 400
    (tmp_path / "m.yaml").write_text(_pods(count))
    outcome = run_fixes(["m.yaml"], LintOptions(), write=False)
    assert outcome.applied == count and outcome.refused == []
    # Old code: difflib over the whole file, one comparison of 3,600 x 3,600 lines (quadratic in the
    # repeated lines). Now one comparison of 1 x 1 line per changed line.
    assert matcher_sizes and max(a * b for a, b in matcher_sizes) <= 4
    assert sum(a * b for a, b in matcher_sizes) <= 4 * count
    assert outcome.diff.count("\n-    args: [\"--swap-space=4\", \"--model\", \"m\"]\n") == count
    if shutil.which("patch"):  # the diff is what --fix writes
        (tmp_path / "fix.diff").write_text(outcome.diff)
        subprocess.run(["patch", "-s", "-p0", "-i", "fix.diff"], cwd=tmp_path, check=True)
        patched = (tmp_path / "m.yaml").read_text()
        (tmp_path / "m.yaml").write_text(_pods(count))
        assert run_fixes(["m.yaml"], LintOptions()).applied == count
        assert (tmp_path / "m.yaml").read_text() == patched


def test_a_diff_without_regions_is_bounded(matcher_sizes):
    # Two texts of 20,000 lines differing everywhere: without the edits, one comparison would be 4e8 line pairs;
    # over MAX_MATCHED it is shown as replaced, and it still applies.
    before = "".join(f"a{i}\n" for i in range(20000))
    after = "".join(f"b{i}\n" for i in range(20000))
    diff = unified_diff(before, after, "x")
    assert all(a * b <= 250_000 for a, b in matcher_sizes)
    assert diff.count("\n-a") == 20000 and diff.count("\n+b") == 20000


def test_one_argv_list_is_scanned_once_for_all_its_fixes():
    # 3,000 repeats of a removed flag in one list: each fix asked whether the whole list is one text (a
    # Kustomize patch can merge lists from several files), 9 million steps. Now once per list.
    class CountingList(list):
        iterations = 0

        def __iter__(self):
            CountingList.iterations += 1
            return super().__iter__()

    count = 3000
    linter = Linter(LintOptions(select=["VL001"]))
    linter.add_text(POD.format(0).replace('"--swap-space=4", ', '"--swap-space=4", ' * count), "p.yaml")
    world = linter.build()
    (invocation,) = world.invocations
    sequence = invocation.container.args
    sequence.items = CountingList(sequence.items)
    options = [o for o in invocation.options if o.name == "--swap-space"]
    assert len(options) == count
    fixes = [drop_options_fix(invocation, [option], SAFE, "drop") for option in options]
    assert all(fix is not None for fix in fixes)
    assert CountingList.iterations <= 2
    text = invocation.container.args.source.text
    assert apply_edits(text, [e for fix in fixes for e in fix.edits]).count("--swap-space") == 0


def test_regions_compose_over_rounds_and_give_a_diff_that_rebuilds_the_text():
    rng = random.Random(7)
    pieces = ["a", "b\n", "\n", "x y\n", "- item\n", ""]
    for _ in range(500):
        original = text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        regions: list = []
        for _ in range(rng.randint(1, 3)):
            points = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 6))))
            edits = [Edit("f", points[i], points[i + 1] if rng.random() < 0.7 else points[i], rng.choice(pieces))
                     for i in range(0, len(points) - 1, 2)]
            regions = _compose(regions, edits)
            text = apply_edits(text, edits)
        for o0, o1, c0, c1 in regions:  # outside the regions both texts are the same
            assert 0 <= o0 <= o1 <= len(original) and 0 <= c0 <= c1 <= len(text)
        assert _rebuild(original, regions, text) == text
        diff = unified_diff(original, text, "f", regions)
        assert (diff == "") == (original == text)
        if diff:
            assert _apply(original, diff) == text


def _rebuild(original, regions, text):
    parts, position = [], 0
    for o0, o1, c0, c1 in regions:
        parts += [original[position:o0], text[c0:c1]]
        position = o1
    return "".join(parts) + original[position:]


def _apply(before: str, diff: str) -> str:
    """Apply a unified diff as `patch` would (hunks in order, context checked)."""
    import re

    lines = before.split("\n")
    lines = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    out, position, previous = [], 0, ""
    rows = diff.splitlines(keepends=True)[2:]
    for row in rows:
        header = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@\n", row)
        if header:
            length = int(header.group(2)) if header.group(2) is not None else 1
            start = int(header.group(1)) - 1 if length else int(header.group(1))
            out.extend(lines[position:start])
            position = start
            continue
        if row.startswith("\\"):
            if previous == "+":
                out[-1] = out[-1][:-1]
            continue
        previous, body = row[0], row[1:]
        if previous in " -":
            assert lines[position] in (body, body[:-1]), (lines[position], row)
            if previous == " ":
                out.append(lines[position])
            position += 1
        else:
            out.append(body)
    return "".join(out + lines[position:])
