"""How long the language server takes to publish diagnostics, measured over its real protocol (not a test:
no assertion on time). Usage: `python -m tests.lsp_latency [RUNS] [FOLDER] [FILE]` (defaults: 5 runs, a copy of
`fixtures/`, `original/single-node-deployment.yaml`).

Each run starts a fresh server with its default settings (no `--debounce`), in a fresh copy of FOLDER, and
measures: server started -> `initialize` answered; `didOpen` of FILE -> its first diagnostics; then, five times, a
one-character incremental edit (a space typed at the end of the first line, then removed) -> the diagnostics of
that version. Prints each run and the medians: wall-clock time, and the CPU time the server used meanwhile (all
its threads, from /proc: less sensitive to a busy machine than the wall clock).
"""
from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tests.lsp_client import session

ROOT = Path(__file__).resolve().parent.parent
EDITS = 5


def cpu(state) -> float:
    """Seconds of CPU the server process used so far (user + system, all threads)."""
    fields = Path(f"/proc/{state.client._server.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_run(folder: Path, name: str) -> tuple[float, float, list[float], list[float]]:
    started = time.perf_counter()
    async with session(folder, encodings=["utf-16"], debounce=None) as state:
        initialized = time.perf_counter() - started
        cpus = [cpu(state)]
        uri = state.uri(name)
        text = (folder / name).read_text(encoding="utf-8")
        width = len(text.split("\n", 1)[0])
        t = time.perf_counter()
        state.open(name, text)
        await state.wait_diagnostics(name)
        opened = time.perf_counter() - t
        cpus.append(cpu(state))
        edits = []
        for i in range(EDITS):
            before = state.published.get(uri, 0)
            t = time.perf_counter()
            if i % 2 == 0:
                state.edit(name, (0, width), (0, width), " ")
            else:
                state.edit(name, (0, width), (0, width + 1), "")
            await state.wait_diagnostics(name, after=before)
            edits.append(time.perf_counter() - t)
            cpus.append(cpu(state))
    return initialized, opened, edits, [b - a for a, b in zip(cpus, cpus[1:], strict=False)]


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    source = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "fixtures"
    name = sys.argv[3] if len(sys.argv) > 3 else "original/single-node-deployment.yaml"
    inits, opens, edits, open_cpu, edit_cpu = [], [], [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "w"
            shutil.copytree(source, folder)
            init, opened, edit, used = asyncio.run(one_run(folder, name))
        inits.append(init)
        opens.append(opened)
        edits.extend(edit)
        open_cpu.append(used[0])
        edit_cpu.extend(used[1:])
        print(f"started -> initialized {init * 1000:.0f} ms, open -> diagnostics {opened * 1000:.0f} ms "
              f"(CPU {used[0] * 1000:.0f}), edit -> diagnostics {' '.join(f'{e * 1000:.0f}' for e in edit)} ms "
              f"(CPU {' '.join(f'{c * 1000:.0f}' for c in used[1:])})", flush=True)
    ms = lambda values: f"{statistics.median(values) * 1000:.0f} ms"  # noqa: E731
    print(f"median of {runs} runs: started -> initialized {ms(inits)}, open -> diagnostics {ms(opens)} (CPU "
          f"{ms(open_cpu)}), edit -> diagnostics {ms(edits)} (CPU {ms(edit_cpu)}; {len(edits)} edits)")


if __name__ == "__main__":
    main()
