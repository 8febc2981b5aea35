"""Findings and the positions they point at.

A position keeps the character offset into its file (for fixes) and the 1-based line and column
(for renderers); renderers decide how to show them.
"""
from __future__ import annotations

from vllmlint.records import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from vllmlint.fix.edits import Fix
    from vllmlint.source.yamlmodel import SourceFile


class Severity(IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}: use error, warning or info") from None

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def sarif_level(self) -> str:
        return {Severity.INFO: "note", Severity.WARNING: "warning", Severity.ERROR: "error"}[self]


@dataclass(frozen=True)
class Span:
    """A region of one file: 0-based character offsets [start, end) plus 1-based line/column of both ends."""

    start: int
    end: int
    line: int
    col: int
    end_line: int
    end_col: int

    @classmethod
    def point(cls, line: int, col: int, index: int = 0) -> "Span":
        return cls(index, index, line, col, line, col)


class Positioned(Protocol):
    """What a finding can point at: a YAML node, an argv token, or any span of one file."""

    @property
    def source(self) -> SourceFile | None: ...  # None: synthetic (an image's entrypoint), in no file

    @property
    def start(self) -> int: ...  # character offsets into source.text

    @property
    def end(self) -> int: ...


@dataclass(frozen=True)
class Subject:
    """What a finding is about, independent of line numbers: used for fingerprints and baselines."""

    kind: str = ""
    namespace: str = ""
    name: str = ""
    container: str = ""


@dataclass
class Finding:
    code: str
    severity: Severity
    message: str
    path: str
    span: Span
    subject: Subject = field(default_factory=Subject)
    value: str = ""  # the offending text (a flag, an image, a port): part of the fingerprint
    fix: Fix | None = None  # when the rule can repair it
    suppressed_by: str | None = None  # justification when a suppression hides it
    redact: bool = False  # the span holds a credential (VL802): renderers show it masked, never as written

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.span.line, self.span.col, self.code, self.message)

    def fingerprint(self) -> str:
        """Stable across unrelated edits and line shifts: rule, file, object, container and value."""
        parts = [self.code, self.path, self.subject.kind, self.subject.namespace, self.subject.name,
                 self.subject.container, self.value]
        import hashlib  # here, not at start-up: only baselines, SARIF and --upgrade-to need fingerprints

        # surrogatepass: a value quoted from a file may hold a lone surrogate (an escaped half of a pair)
        return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


class NoticeLevel:
    """`Notice.level`: SARIF's notification levels (`none` is SARIF's too, for notes nobody needs to see)."""

    NOTE: Final = "note"
    WARNING: Final = "warning"
    ERROR: Final = "error"


@dataclass
class Notice:
    """A note about the run itself (a skipped template, an assumed release): stderr and SARIF notifications."""

    code: str
    message: str
    path: str = ""
    line: int = 0
    level: str = NoticeLevel.NOTE  # a NoticeLevel
    # How notes of one kind are counted on one line ("10 workloads assume vLLM 0.33.0 ..."): the phrase
    # after the count, singular and plural. Notes with the same code and summary are summarised together.
    summary: tuple[str, str] | None = None
