#!/usr/bin/env python3
"""Each speed piece measured on its own: a run with it against a run with its switch turned off, in turn.

    python bench/pieces.py                          # one file, 20 runs of each side
    python bench/pieces.py --files 1000 --repeat 3  # bench.py's corpus of 1,000 files, 3 runs of each side

Runs `python -m vllmlint --no-cache --jobs 1` with the interpreter that runs this script (install the wheel to
measure what users get: the marshal copies exist only in a wheel) from a temporary folder, and reports the CPU
time of the child process (user + system), minimum and median, with and without each switch:
`VLLMLINT_NO_RECORDS`, `VLLMLINT_NO_MARSHAL`, `VLLMLINT_GC_DEFAULT` (tests/test_speed_switches.py). Nothing of this
runs in CI.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SWITCHES = ("VLLMLINT_NO_RECORDS", "VLLMLINT_NO_MARSHAL", "VLLMLINT_GC_DEFAULT")
ONE_FILE = Path(__file__).resolve().parent.parent / "fixtures" / "original" / "api-gateway.yaml"


def cpu(target: Path, env: dict[str, str], cwd: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "vllmlint", "--no-cache", "--jobs", "1", str(target)], env=env, cwd=cwd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1, help="1: the fixture api-gateway.yaml; more: bench.py's corpus")
    parser.add_argument("--repeat", type=int, default=20)
    options = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("VLLMLINT")}
    with tempfile.TemporaryDirectory() as folder:
        target = ONE_FILE
        if options.files > 1:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            import bench

            target = Path(folder) / "tree"
            bench.generate(target, options.files)
        print(f"python {sys.version.split()[0]}, {options.files} file(s), {options.repeat} runs of each side")
        for switch in SWITCHES:
            on: list[float] = []
            off: list[float] = []
            for _ in range(options.repeat):
                on.append(cpu(target, base, folder))
                off.append(cpu(target, dict(base, **{switch: "1"}), folder))
            with_, without = statistics.median(on), statistics.median(off)
            print(f"{switch:22s} with {min(on) * 1000:8.1f} ms min {with_ * 1000:8.1f} median | without "
                  f"{min(off) * 1000:8.1f} min {without * 1000:8.1f} median | saves {(without - with_) / without:6.1%}",
                  flush=True)


if __name__ == "__main__":
    main()
