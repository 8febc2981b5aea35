"""The fast rendering paths give the same text as the plain ones they replace."""
from __future__ import annotations

import enum
import json

from vllmlint.finding import Finding, Severity, Span
from vllmlint.formatters.report import _top_level_breaks, dumps_indented, split_message
from vllmlint.formatters.text import excerpt
from vllmlint.source.yamlmodel import SourceFile


class _Level(enum.IntEnum):
    LOW = 1


class _Name(str, enum.Enum):
    X = "x"


def test_dumps_indented_is_json_dumps_indent_2():
    samples = [
        1, "a", None, True, False, 1.5, -0.0, 10 ** 30, float("nan"), float("inf"), float("-inf"), [], {}, [[]],
        {"a": {}}, (1, (2, [])), _Level.LOW, [_Level.LOW, _Name.X], {"k": _Level.LOW, _Name.X: 1},
        {"a": [1, {"b": [None, True, 2.0, "é\u2028\n\"\\\x00\t"]}], 7: 2, 2.5: 3, True: 1, None: [], False: ()},
        {"findings": [{"code": "VL101", "line": 3, "edits": [{"start": 0, "replacement": "vllm serve"}],
                       "subject": {"kind": "Deployment", "name": "日本"}, "fix": None, "fixable": False}]},
    ]
    for sample in samples:
        assert dumps_indented(sample) == json.dumps(sample, indent=2, ensure_ascii=False)


def test_dumps_indented_refuses_what_json_refuses():
    for bad in ({"a": object()}, {(1, 2): 1}):
        try:
            dumps_indented(bad)
        except TypeError:
            continue
        raise AssertionError(f"{bad!r} was encoded")


def _breaks_char_by_char(text: str) -> list[tuple[int, str]]:
    """The former loop over every character, the reference for the regex scan."""
    depth, code, quote, found = 0, False, False, []
    for i, ch in enumerate(text):
        if ch == "`":
            code = not code
        elif code:
            continue
        elif ch == '"':
            quote = not quote
        elif quote:
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and ch in ".:;," and text[i + 1:i + 2] == " ":
            found.append((i, ch))
    return found


def test_top_level_breaks_match_the_character_loop():
    import random

    rng = random.Random(7)
    alphabet = 'ab `"()[]{}.:;, \t.'
    texts = ['a. b: c; d, e', '`a. b` "c. d" (e. f) g. h', 'x)) . y', '. ', '', 'a.b', '"`a. "b. `c. d']
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(3000)]
    for text in texts:
        assert list(_top_level_breaks(text)) == _breaks_char_by_char(text), text
    assert list(_top_level_breaks('see (e. g) "x. y" then. Next: z')) == [(22, "."), (28, ":")]


def test_split_message_unchanged_by_the_scan():
    assert split_message("`--x` is a switch, so `--x=1` fails. Drop the value.") == (
        "`--x` is a switch, so `--x=1` fails", "Drop the value.")


def _finding(line: int, col: int, end_col: int) -> Finding:
    return Finding("VL101", Severity.WARNING, "m", "a.yaml", Span(0, 0, line, col, line, end_col))


def test_excerpt_of_ascii_tab_and_wide_lines():
    source = SourceFile("a.yaml", "key: value\n\tx: 1\n名前: v\n", "a.yaml")
    assert excerpt(_finding(1, 6, 11), source) == [" 1 | key: value", "   |      ^^^^^"]
    assert excerpt(_finding(2, 2, 3), source) == [" 2 |     x: 1", "   |     ^"]  # the tab: 4 columns
    assert excerpt(_finding(3, 5, 6), source) == [" 3 | 名前: v", "   |       ^"]  # wide: 2 columns each


def test_excerpt_shares_a_line_layout_across_findings():
    source = SourceFile("a.yaml", "a: " + "x" * 300 + "\n", "a.yaml")
    laid: dict = {}
    first = excerpt(_finding(1, 1, 2), source, lines=laid)
    second = excerpt(_finding(1, 200, 204), source, lines=laid)
    assert list(laid) == [("a.yaml", 1)]
    assert first == excerpt(_finding(1, 1, 2), source) and second == excerpt(_finding(1, 200, 204), source)
    assert second[0].startswith(" 1 | …") and second[1] == "   | " + " " * 31 + "^^^^"


def test_a_shared_line_is_masked_for_every_finding_on_it():
    from vllmlint.formatters import Report
    from vllmlint.formatters.text import render

    source = SourceFile("a.yaml", "password: hunter2hunter2\n", "a.yaml")
    secret = Finding("VL802", Severity.ERROR, "a secret", "a.yaml", Span(10, 24, 1, 11, 1, 25), redact=True)
    other = Finding("VL101", Severity.WARNING, "another", "a.yaml", Span(0, 8, 1, 1, 1, 9))
    for order in ([secret, other], [other, secret]):
        text = render(Report(findings=order, sources={"a.yaml": source}, summary=False))
        assert "hunter2" not in text
        assert text.count(" 1 | password: **************\n") == 2
