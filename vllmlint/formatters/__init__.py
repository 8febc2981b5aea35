"""Output formats. A formatter only renders a finished `Report`; it never reads YAML or runs rules.

    from vllmlint.formatters import Report, render
    sys.stdout.write(render("text", report))

`render` returns the whole output as one string that ends with a newline unless it is empty (quiet text
output of a clean run is empty), so write it as is rather than `print` it. Each format module is imported
only when asked for: the SARIF one pulls in sarif-om, which the text path must not pay for. The report and the
helpers the formats share are in `vllmlint.formatters.report` (re-exported here).
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from vllmlint.formatters.report import (  # noqa: F401  (the package's API)
    Report, understood_nothing, notice_kinds, rules_by_code, is_fixable, edit_positions, rule_name, sentence, split_message, dumps_indented, FORMATS, SHORT_MESSAGE)

if TYPE_CHECKING:
    from collections.abc import Iterator

_MODULES = {"text": "text", "concise": "text", "json": "json_format", "sarif": "sarif", "github": "github", "junit": "junit"}


def render(fmt: str, report: Report) -> str:
    """The report in format `fmt` (one of FORMATS)."""
    module_name = _MODULES.get(fmt)
    if fmt == "concise":
        report.concise = True
    if module_name is None:
        raise ValueError(f"unknown output format {fmt!r}: use one of {', '.join(FORMATS)}")
    return import_module(f"{__name__}.{module_name}").render(report)


def render_pieces(fmt: str, report: Report) -> Iterator[str]:
    """`render(fmt, report)` in pieces to write one after the other: the text format's come line by line, so a
    large report is never in memory whole; the others are one piece."""
    if fmt in ("text", "concise"):
        from vllmlint.formatters.text import render_pieces as text_pieces

        report.concise = report.concise or fmt == "concise"
        yield from text_pieces(report)
        return
    yield render(fmt, report)
