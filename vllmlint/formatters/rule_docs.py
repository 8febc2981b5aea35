"""A rule's documentation as one text: plain (for `vllmlint explain` and SARIF `help.text`) and Markdown
(for SARIF `help.markdown`). Both read only the rule's YAML `docs`, so every place shows the same words."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from vllmlint.registry import Rule

# (key in the rule's `docs`, heading, is it a code block)
SECTIONS = (
    ("what_it_does", "What it does", False),
    ("why_is_this_bad", "Why is this bad", False),
    ("example", "Example", True),
    ("use_instead", "Use instead", True),
    ("fix_safety", "Fix safety", False),
    ("options", "Options", False),
)


def _sections(rule: Rule) -> Iterator[tuple[str, str, bool]]:
    docs = rule.docs or {}
    for key, heading, is_code in SECTIONS:
        body = (docs.get(key) or "").strip("\n")
        if body.strip():
            yield heading, body, is_code


def _code_language(code: str) -> str:
    return "sh" if code.lstrip().startswith("#!") else "yaml"


def help_text(rule: Rule) -> str:
    """Plain text: a title line, the summary, then each section under its heading; code indented."""
    fix = f", fix: {rule.fix}" if rule.fix and rule.fix != "none" else ""
    parts = [f"{rule.code} {rule.name} ({rule.severity.label}{fix})", rule.summary.strip()]
    for heading, body, is_code in _sections(rule):
        if is_code:
            body = "\n".join(("    " + line) if line.strip() else "" for line in body.splitlines())
        parts.append(f"{heading}\n{body.rstrip()}")
    references = (rule.docs or {}).get("references") or []
    if references:
        parts.append("References\n" + "\n".join(f"- {ref}" for ref in references))
    return "\n\n".join(parts) + "\n"


def help_markdown(rule: Rule) -> str:
    """Markdown: the same content, sections as `##` headings, examples as fenced code blocks."""
    parts = [rule.summary.strip()]
    for heading, body, is_code in _sections(rule):
        if is_code:
            fence = "````" if "```" in body else "```"
            body = f"{fence}{_code_language(body)}\n{body.rstrip()}\n{fence}"
        parts.append(f"## {heading}\n\n{body.rstrip()}")
    references = (rule.docs or {}).get("references") or []
    if references:
        parts.append("## References\n\n" + "\n".join(f"- <{ref}>" for ref in references))
    return "\n\n".join(parts) + "\n"
