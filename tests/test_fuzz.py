"""Fuzz: mutated fixtures (byte flips, deleted/duplicated lines, indentation, aliases, deep nesting, CRLF,
surrogates, huge numbers, random Unicode, truncation) never crash, hang or produce unparseable output.

CI runs a fixed, bounded set of examples (hypothesis `derandomize=True`: the same inputs on every run);
`VLLMLINT_FUZZ=long pytest tests/test_fuzz.py` runs thousands, with fresh randomness each time
(`VLLMLINT_FUZZ_EXAMPLES=N` to choose how many).
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import validators

from conftest import FIXTURES
from vllmlint.data import schemas_dir
from vllmlint.engine import Linter, LintOptions
from vllmlint.formatters import Report, render

LONG = os.environ.get("VLLMLINT_FUZZ") == "long"
EXAMPLES = int(os.environ.get("VLLMLINT_FUZZ_EXAMPLES", "5000" if LONG else "300"))
SUBPROCESS_EXAMPLES = 200 if LONG else 10
SECONDS_PER_INPUT = 10.0  # a mutated fixture lints in well under a second; a hang shows as this

FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml", ".json", ".sh", ".md")
               and p.stat().st_size < 64 * 1024)
SARIF_SCHEMA = json.loads((schemas_dir() / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
SARIF_VALIDATOR = validators.validator_for(SARIF_SCHEMA)(SARIF_SCHEMA)

PROFILE = settings(max_examples=EXAMPLES, derandomize=not LONG, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck), print_blob=True)


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def _at(draw, data: bytes) -> int:
    return draw(st.integers(0, max(len(data) - 1, 0)))


@st.composite
def mutation(draw, data: bytes) -> bytes:
    kind = draw(st.sampled_from(["flip", "delete", "duplicate", "indent", "alias", "deep", "crlf", "surrogate",
                                 "number", "unicode", "truncate"]))
    lines = _lines(data)
    line = draw(st.integers(0, len(lines) - 1))
    if kind == "flip" and data:
        at = _at(draw, data)
        return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
    if kind == "delete":
        return b"".join(lines[:line] + lines[line + 1:])
    if kind == "duplicate":
        return b"".join(lines[:line + 1] + lines[line:])
    if kind == "indent":
        text = lines[line]
        if draw(st.booleans()):
            lines[line] = b" " * draw(st.integers(1, 8)) + text
        else:
            lines[line] = text.lstrip(b" ")
        return b"".join(lines)
    if kind == "alias":
        snippet = draw(st.sampled_from([b"&a [*a]", b"&b {x: *b}", b"*undefined", b"&c x", b"*c",
                                        b"&l0 [x, x, x, x, x, x, x, x, x]"]))
        text = lines[line]
        colon = text.find(b": ")
        if colon != -1:
            lines[line] = text[:colon + 2] + snippet + b"\n"
        else:
            lines.insert(line, b"bomb: " + snippet + b"\n")
        if snippet.startswith(b"&l0"):
            bomb = b"".join(b"l%d: &l%d [%s]\n" % (i, i, b", ".join([b"*l%d" % (i - 1)] * 9)) for i in range(1, 9))
            lines.insert(line + 1, bomb)
        return b"".join(lines)
    if kind == "deep":
        depth = draw(st.sampled_from([50, 101, 1000, 40_000]))
        opener, closer = draw(st.sampled_from([(b"[", b"]"), (b"{a: ", b"}"), (b"- ", b"")]))
        if opener == b"- ":
            nested = b"".join(b"  " * i + b"- \n" for i in range(min(depth, 300)))
        else:
            nested = b"x: " + opener * depth + b"1" + closer * depth + b"\n"
        return b"".join(lines[:line] + [nested] + lines[line:])
    if kind == "crlf":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if kind == "surrogate":
        escape = draw(st.sampled_from([b"\\ud83e\\udd99", b"\\ud83e", b"\\udd99", b"\\U0001F999", b"\\x00"]))
        quote = data.find(b'"', _at(draw, data))
        if quote == -1:
            return data + b'\nx: "' + escape + b'"\n'
        return data[:quote + 1] + escape + data[quote + 1:]
    if kind == "number":
        value = draw(st.sampled_from([b"9" * 400, b"1e400", b".inf", b"-.inf", b".nan", b"1000000", b"-1", b"0x" + b"f" * 64,
                                      b"0.0000001"]))
        digits = [i for i, ch in enumerate(data) if 48 <= ch <= 57]
        if not digits:
            return data + b"\nreplicas: " + value + b"\n"
        at = digits[draw(st.integers(0, len(digits) - 1))]
        end = at
        while end < len(data) and 48 <= data[end] <= 57:
            end += 1
        return data[:at] + value + data[end:]
    if kind == "unicode":
        text = draw(st.text(max_size=20)).encode("utf-8")
        at = _at(draw, data)
        return data[:at] + text + data[at:]
    if kind == "truncate" and data:
        return data[:_at(draw, data)]
    return data


@st.composite
def mutated_fixture(draw) -> tuple[str, bytes]:
    path = draw(st.sampled_from(FILES))
    data = path.read_bytes()
    for _ in range(draw(st.integers(1, 3))):
        data = draw(mutation(data))
    return path.relative_to(FIXTURES).as_posix(), data


def _lint(name: str, data: bytes):
    linter = Linter(LintOptions(vllm_version="0.29.0"))
    linter.add_bytes(data, name, Path(name).suffix.lower(), Path(name).name)
    return linter.run()


def check_outputs(name: str, data: bytes) -> None:
    started = time.perf_counter()
    result = _lint(name, data)
    report = Report(findings=result.findings, suppressed=result.suppressed, notices=result.notices,
                    rules=result.rules, sources=result.sources, files_checked=result.files_checked)
    text = render("text", report)
    text.encode("utf-8")  # never a lone surrogate in the output
    document = json.loads(render("json", report))
    assert isinstance(document, dict)
    log = json.loads(render("sarif", report))
    errors = [e.message for e in SARIF_VALIDATOR.iter_errors(log)]
    assert not errors, errors[:3]
    for fmt in ("github", "junit"):
        render(fmt, report).encode("utf-8")
    assert time.perf_counter() - started < SECONDS_PER_INPUT, f"{name}: {time.perf_counter() - started:.1f} s"


@PROFILE
@given(mutated_fixture())
def test_mutated_fixtures_never_crash_in_process(case):
    name, data = case
    check_outputs(name, data)


@settings(PROFILE, max_examples=SUBPROCESS_EXAMPLES)
@given(mutated_fixture(), st.sampled_from(["text", "json", "sarif"]))
def test_mutated_fixtures_on_the_command_line(tmp_path_factory, case, fmt):
    name, data = case
    folder = tmp_path_factory.mktemp("fuzz")
    target = folder / Path(name).name
    target.write_bytes(data)
    proc = subprocess.run([sys.executable, "-m", "vllmlint", "--no-config", "--format", fmt, target.name],
                          cwd=folder, capture_output=True, timeout=60)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert proc.returncode in (0, 1, 2), (proc.returncode, err)
    assert "Traceback" not in out + err
    if fmt == "json":
        json.loads(out)
    elif fmt == "sarif":
        assert not [e.message for e in SARIF_VALIDATOR.iter_errors(json.loads(out))]


@pytest.mark.parametrize("name", [p.relative_to(FIXTURES).as_posix() for p in FILES[:3]])
def test_unmutated_fixtures_pass_the_same_checks(name):
    check_outputs(name, (FIXTURES / name).read_bytes())
