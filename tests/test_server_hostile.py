"""The language server against hostile or extreme input: a request whose parameters do not validate is answered
(-32602), an open document over the size limit is not linted and says so (memory bounded), and an incremental
change in a very long line costs work bounded by the position, not a Python step per character.
Work is bounded by counts (trace events, peak memory), never by wall-clock time."""
from __future__ import annotations

import asyncio
import random
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from pygls.exceptions import JsonRpcException  # noqa: E402

import vllmlint.server.positions as positions  # noqa: E402
from tests.lsp_client import session  # noqa: E402
from vllmlint.server.positions import UTF8, UTF16, UTF32, LineIndex, offset_at  # noqa: E402

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: ["Qwen/Qwen2.5-7B-Instruct", "--swap-space=16"]
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def run(coroutine):
    return asyncio.run(coroutine)


# --- requests that do not validate --------------------------------------------------------------------
@pytest.mark.parametrize("line", [-1, 2**31])
def test_a_request_whose_params_do_not_validate_is_answered_with_invalid_params(tmp_path: Path, line: int):
    async def go():
        async with session(tmp_path) as state:
            state.open("a.yaml", "a: 1\n")
            params = {"textDocument": {"uri": state.uri("a.yaml")}, "position": {"line": line, "character": 0}}
            with pytest.raises(JsonRpcException) as caught:
                await state.raw_request("textDocument/hover", params)
            assert caught.value.code == -32602
            assert "textDocument/hover" in str(caught.value) and "$.params.position" in str(caught.value)
            # and the server goes on answering
            assert await state.hover("a.yaml", 0, 0) is None

    run(go())


# --- position conversion: exact, and bounded work -----------------------------------------------------
_BREAK = re.compile(r"\r\n|\r|\n")


def _reference(text: str, line: int, character: int, encoding: str) -> int:
    """The offset of a position, one character at a time (what the server must agree with)."""
    def width(char: str) -> int:
        code = ord(char)
        if encoding == UTF16:
            return 2 if code > 0xFFFF else 1
        if encoding == UTF8:
            return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
        return 1

    starts = [0] + [m.end() for m in _BREAK.finditer(text)]
    if line < 0:
        return 0
    if line >= len(starts):
        return len(text)
    found = _BREAK.search(text, starts[line])
    end = found.start() if found is not None else len(text)
    counted = 0
    for index in range(starts[line], end):
        if counted + width(text[index]) > character:
            return index  # inside a character: before it
        counted += width(text[index])
    return end


@pytest.mark.parametrize("chunk", [1 << 16, 1, 2, 3])
def test_offsets_agree_with_counting_one_character_at_a_time(monkeypatch, chunk: int):
    monkeypatch.setattr(positions, "_CHUNK", chunk)  # small chunks: breaks (and CRLFs) across their edges
    pieces = ["a", "\n", "\r", "\r\n", "中", "😀", "é", "\ud800", "x"]
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
        for encoding in (UTF8, UTF16, UTF32):
            index = LineIndex(text, encoding)
            for line in range(-1, 7):
                for character in range(0, 10):
                    expected = _reference(text, line, character, encoding)
                    assert offset_at(text, line, character, encoding) == expected, (text, line, character)
                    if line >= 0:
                        assert index.offset(line, character) == expected, (text, line, character)
                        if index.offset(line, 0) <= expected:
                            assert index.offset(*index.position(expected)) == expected


def _python_steps(function, *args) -> int:
    """How many Python lines run (every frame) while `function(*args)` runs."""
    steps = 0

    def trace(frame, event, arg):
        nonlocal steps
        if event == "line":
            steps += 1
        return trace

    sys.settrace(trace)
    try:
        function(*args)
    finally:
        sys.settrace(None)
    return steps


@pytest.mark.parametrize("encoding", [UTF16, UTF8])
@pytest.mark.parametrize("filler", ["x", "é", "😀"])
def test_a_position_in_a_5_mib_line_costs_a_bounded_number_of_python_steps(encoding: str, filler: str):
    size = 5 * 2**20 // len(filler.encode())
    text = '{"a": "' + filler * size + '"}\n'
    middle = len(text) // 2
    character = LineIndex(text, encoding).position(middle)[1]
    assert offset_at(text, 0, character, encoding) == middle
    # a loop over the characters before the position would take millions of steps
    assert _python_steps(offset_at, text, 0, character, encoding) < 200
    assert _python_steps(LineIndex(text, encoding).position, middle) < 200


def test_a_line_far_down_a_long_document_is_found_by_counting():
    text = "ab\n" * 1_000_000
    assert offset_at(text, 900_000, 1, UTF16) == 900_000 * 3 + 1
    steps = _python_steps(offset_at, text, 900_000, 1, UTF16)
    assert steps < 200_000  # chunks of 64 Ki characters, one chunk searched break by break: not a step per line


# --- documents over the size limit, and edits in long lines, over the protocol -----------------------
def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the peak memory from /proc")
def test_a_50_mib_document_gets_a_size_notice_and_memory_stays_bounded(tmp_path: Path):
    document = "---\n".join([DEPLOY] * (50 * 2**20 // len(DEPLOY) + 1))

    async def go():
        async with session(tmp_path) as state:
            state.open("big.yaml", document)
            diagnostics = await state.wait_diagnostics("big.yaml")
            assert [d.code for d in diagnostics] == ["VL005"], [(d.code, d.message) for d in diagnostics]
            assert "over the 10 MiB limit" in diagnostics[0].message
            for _ in range(5):  # edits of the large document stay cheap enough to answer after them
                state.edit("big.yaml", (0, 0), (0, 0), "#")
            assert await state.hover("big.yaml", 0, 0) is None
            server = state.client._server
            assert server is not None
            # the text itself is 50 MiB (and the client holds it too); parsing it took 1.7 GB
            assert _peak_rss_kib(server.pid) < 450 * 1024

    run(go())


def test_the_configured_limit_applies_to_open_documents_and_an_edit_under_it_lints_again(tmp_path: Path):
    (tmp_path / ".vllmlint.yaml").write_text("max-file-size: 1\n", encoding="utf-8")
    padding = "# " + "x" * (2 * 2**20) + "\n"  # one 2 MiB comment line above the manifest

    async def go():
        async with session(tmp_path) as state:
            state.open("deploy.yaml", padding + DEPLOY)
            diagnostics = await state.wait_diagnostics("deploy.yaml")
            assert [d.code for d in diagnostics] == ["VL005"]
            assert "over the 1 MiB limit" in diagnostics[0].message
            # delete most of the long line (incremental change): under the limit, linted
            state.edit("deploy.yaml", (0, 2), (0, 2 + 2 * 2**20 - 10), "")
            diagnostics = await state.wait_diagnostics("deploy.yaml", after=1)
            assert "VL005" not in {d.code for d in diagnostics}
            assert "VL102" in {d.code for d in diagnostics}  # --swap-space, removed

    run(go())


@pytest.mark.parametrize("encodings", [None, ["utf-8"]])
def test_incremental_edits_after_a_long_non_ascii_line_land_where_the_client_put_them(tmp_path: Path, encodings):
    long_line = "# " + "中😀x" * 300_000 + "\n"  # about 2.4 MiB, every width of character

    async def go():
        async with session(tmp_path, encodings=encodings) as state:
            text = long_line + DEPLOY
            state.open("deploy.yaml", text)
            before = await state.wait_diagnostics("deploy.yaml", predicate=lambda d: "VL102" in {x.code for x in d})
            flag = next(d for d in before if d.code == "VL102")
            # type in the middle of the long line, then replace the flag named by the diagnostic's own range
            middle = LineIndex(long_line, state.encoding).position(len(long_line) // 2)
            state.edit("deploy.yaml", middle, middle, "中😀")
            state.edit("deploy.yaml", (flag.range.start.line, flag.range.start.character),
                       (flag.range.end.line, flag.range.end.character), "--dtype=auto")
            after = await state.wait_diagnostics("deploy.yaml", after=1,
                                                 predicate=lambda d: "VL102" not in {x.code for x in d})
            assert "VL102" not in {d.code for d in after}
            assert "VL809" not in {d.code for d in after}  # the manifest still parses: nothing landed elsewhere

    run(go())
