"""vllmlint/_records.py names each maker by its shape, not by its rank: adding a record class adds its own lines
and rewrites none (issue 23: one class rewrote 568 lines when the makers were numbered)."""
import difflib

from vllmlint import _records
from vllmlint_dev.records_gen import generate, maker_name


def test_adding_a_shape_only_adds_lines():
    shapes = sorted(_records.MAKERS)
    first = shapes[0]
    new = first.rsplit(",", 1)[0] + ",an_added_field:ric," + first.rsplit(",", 1)[1]
    assert new not in shapes
    before = generate(shapes).splitlines()
    after = generate(sorted([*shapes, new])).splitlines()
    changed = [line for line in difflib.unified_diff(before, after, lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed and all(line.startswith("+") for line in changed)  # nothing removed or rewritten
    assert any(maker_name(new) in line for line in changed)
    assert len(changed) < 40  # the new maker and its MAKERS line


def test_the_names_are_stable_and_distinct():
    assert all(_records.MAKERS[shape].__name__ == maker_name(shape) for shape in _records.MAKERS)
    assert len({maker_name(shape) for shape in _records.MAKERS}) == len(_records.MAKERS)
