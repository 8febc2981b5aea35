"""Secrets and credentials: the entries of Secret objects (`data` decoded from base64, `stringData` as written)
and the credential knowledge of `data/credentials.yaml` (validated by `schemas/credentials.schema.json`): which
variables and options hold a credential, which have a file form, the token formats and the placeholder values
documentation uses. Nothing here ever returns a credential in a form meant for output: `mask()` is the only
way a value leaves this module for a message.
"""
from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from vllmlint.records import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final, Iterator

from vllmlint.source.yamlmodel import Mapping, Node, Scalar
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.k8s.objects import K8sObject


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    return load_yaml_data(knowledge_dir() / "credentials.yaml") or {}


def credential_variables() -> dict[str, dict[str, Any]]:
    """Variable name -> its row (service, file_form, sources)."""
    return {row["name"]: row for row in _table().get("variables", ())}


def credential_options() -> dict[str, dict[str, Any]]:
    """vLLM flag -> its row (`--api-key`, `--hf-token`)."""
    return {row["flag"]: row for row in _table().get("options", ())}


def credential_keys() -> frozenset[str]:
    """Secret/ConfigMap keys that hold a credential: the variable names and the documented key names."""
    return frozenset(credential_variables()) | frozenset(row["name"] for row in _table().get("keys", ()))


def file_form(variable: str) -> dict[str, Any] | None:
    """{variable, since, sources} of the file that replaces `variable`, or None when it has none."""
    row = credential_variables().get(variable)
    return row.get("file_form") if row else None


@dataclass(frozen=True)
class TokenFormat:
    name: str
    pattern: re.Pattern[str]
    prefix: str
    min_entropy: float


@lru_cache(maxsize=1)
def token_formats() -> tuple[TokenFormat, ...]:
    # Bounded on both sides by a character that cannot be part of the token, as gitleaks' unique-token regex.
    return tuple(TokenFormat(row["name"], re.compile(r"(?<![A-Za-z0-9_-])(?:" + row["pattern"] + r")(?![A-Za-z0-9_-])"),
                             row["prefix"], float(row["min_entropy"]))
                 for row in _table().get("formats", ()))


@lru_cache(maxsize=1)
def _prefixes() -> tuple[str, ...]:
    # From the table, not `token_formats()`: the prefix test runs on every value, the formats' patterns are
    # compiled only where a prefix occurs.
    return tuple(sorted({str(row["prefix"]) for row in _table().get("formats", ())}, key=lambda p: (-len(p), p)))


@lru_cache(maxsize=1)
def _any_prefix() -> re.Pattern[str]:
    return re.compile("|".join(re.escape(p) for p in _prefixes()))


def prefix_pattern() -> re.Pattern[str]:
    """Matches where any known token prefix occurs: a cheap test before `find_tokens`."""
    return _any_prefix()


def find_tokens(text: str) -> Iterator[tuple[int, int, TokenFormat]]:
    """(start, end, format) of each token of a known format in `text` (a cheap prefix test first)."""
    if _any_prefix().search(text) is None:
        return
    taken: list[tuple[int, int]] = []
    for fmt in token_formats():  # most specific formats first (data order)
        for match in fmt.pattern.finditer(text):
            start, end = match.span()
            if any(s < end and start < e for s, e in taken):
                continue
            taken.append((start, end))
            yield start, end, fmt


# --- judging a literal value ---------------------------------------------------------------------------
REAL: Final = "real"  # looks like a real credential
PLACEHOLDER: Final = "placeholder"  # a documentation sample or template placeholder
REFERENCE: Final = "reference"  # a reference to a variable or template value, resolved elsewhere
EMPTY: Final = "empty"

_REFERENCE = lazy_compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\([A-Za-z_][A-Za-z0-9_.-]*\)|\{\{.*\}\}|%[A-Za-z_]+%")
# SOPS writes encrypted values as ENC[AES256_GCM,data:...] (https://github.com/getsops/sops#encrypting-only-parts-of-a-file).
_ENCRYPTED = ("ENC[AES256_GCM,", "ENC[")
_WRAPPED = lazy_compile(r"^(<[^<>]*>|\[[^\[\]]*\]|\{[^{}]*\}|@[A-Za-z_]+@)$")


@dataclass(frozen=True)
class Judgement:
    kind: str  # REAL, PLACEHOLDER, REFERENCE or EMPTY
    reason: str = ""  # why a placeholder is one (never the value, except a published sample)
    format: TokenFormat | None = None


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def judge(value: str) -> Judgement:
    """Whether a literal written where a credential goes is a real-looking one, a placeholder, or a reference."""
    text = value.strip().strip("\"'")
    if not text:
        return Judgement(EMPTY)
    if _REFERENCE.search(text) or text.startswith(_ENCRYPTED):
        return Judgement(REFERENCE)
    table = _table().get("placeholders", {})
    lowered = text.lower()
    for row in table.get("samples", ()):
        if lowered == str(row["value"]).lower():
            return Judgement(PLACEHOLDER, f"the documentation sample `{row['value']}`")
    if _WRAPPED.match(text):
        return Judgement(PLACEHOLDER, "a value in angle brackets or braces, as templates mark what to fill in")
    for row in table.get("words", ()):
        if str(row["word"]).lower() in lowered:
            return Judgement(PLACEHOLDER, f"it contains `{row['word']}`, a placeholder word")
    fmt = next((f for s, e, f in find_tokens(text) if s == 0 and e == len(text)), None)
    body = text[len(fmt.prefix):] if fmt else _strip_prefix(text)
    if len(body) < int(table.get("min_length", 8)):
        return Judgement(PLACEHOLDER, f"it is short ({len(text)} characters)", fmt)
    if len(set(body)) < int(table.get("min_distinct", 5)):
        return Judgement(PLACEHOLDER, "it repeats a few characters", fmt)
    floor = max(float(table.get("min_entropy", 2.5)), fmt.min_entropy if fmt else 0.0)
    if entropy(body) < floor:
        return Judgement(PLACEHOLDER, "its characters are too regular for a generated token (low entropy)", fmt)
    if _sequence(body):
        return Judgement(PLACEHOLDER, "it is a run of consecutive characters", fmt)
    return Judgement(REAL, "", fmt)


def _strip_prefix(text: str) -> str:
    return next((text[len(p):] for p in _prefixes() if text.startswith(p)), text)


def _sequence(body: str) -> bool:
    """abcdef..., 123456..., as samples of the right length are often written."""
    lowered = body.lower()
    steps = [ord(b) - ord(a) for a, b in zip(lowered, lowered[1:], strict=False)]
    return len(steps) >= 6 and sum(1 for s in steps if s == 1) >= 0.8 * len(steps)


def mask(value: str) -> str:
    """What a message may show of a credential: its known prefix and its length, never a character of it."""
    text = value.strip().strip("\"'")
    prefix = next((p for p in _prefixes() if text.startswith(p)), "")
    return f"{prefix}****, {len(text)} characters"


def describe(judgement: Judgement) -> str:
    """"a Hugging Face user access token" / "a credential"."""
    if judgement.format is not None:
        name = judgement.format.name
        return f"{'an' if name[:1].lower() in 'aeio' else 'a'} {name}"
    return "a credential"


# --- Secret objects -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SecretEntry:
    """One key of a Secret: `value` decoded (None when `data` is not valid base64 or not UTF-8 text)."""

    key: str
    value: str | None
    node: Node  # the value's node as written
    encoded: bool  # from `data` (base64), not `stringData`


def secret_entries(secret: K8sObject) -> list[SecretEntry]:
    """Every `data` and `stringData` entry of a Secret, `stringData` last (the API server lets it win)."""
    result: list[SecretEntry] = []
    for part, encoded in (("data", True), ("stringData", False)):
        data = secret.node.get(part)
        if not isinstance(data, Mapping):
            continue
        for key, node in data.pairs():
            if not isinstance(node, Scalar) or node.value is None:
                continue
            text = str(node.value) if not isinstance(node.value, bool) else node.text
            result.append(SecretEntry(key, decode_base64(text) if encoded else text, node, encoded))
    return result


def decode_base64(text: str) -> str | None:
    """A Secret's `data` value decoded as the API server does (standard alphabet, padding), as UTF-8 text."""
    compact = "".join(text.split())
    try:
        raw = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
