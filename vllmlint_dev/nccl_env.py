"""Maintainer command: list the environment variables NCCL reads, per release tag, from NCCL's own source.

    python -m vllmlint_dev.nccl_env /path/to/nccl.git v2.18.6-1 v2.19.4-1 ... v2.30.7-1

`/path/to/nccl.git` is a clone (or bare git directory) of https://github.com/NVIDIA/nccl. For each tag the
files under `src/` are searched with `git grep` (nothing is built or run) for the ways NCCL reads a variable:

- `NCCL_PARAM(Name, "IB_GID_INDEX", default)`: the variable is `NCCL_` + the string (src/include/param.h);
- `DEFINE_NCCL_PARAM(name, type, NCCL_DEBUG, ...)`: the new parameter registry (2.29 and later,
  src/include/param/param.h), the key is the variable;
- `ncclGetEnv("NCCL_X")`, `getenv("NCCL_X")`, `getEnvFunc("NCCL_X")` and the two names
  `ncclGetLevel(&level, "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL")` (src/graph/paths.cc) reads.

It prints the `nccl` rows of `data/nccl-env.yaml`: each name with the first and the last tag read that has
it, the file and line at the last one, and `transport: ib` for the names defined in NCCL's InfiniBand/RoCE
transport (`src/transport/net_ib*`). Not imported by the linter.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys

_PATTERNS = (
    (r'NCCL_PARAM\([A-Za-z0-9_]+, *"[A-Z0-9_]+"', re.compile(r'NCCL_PARAM\([A-Za-z0-9_]+, *"([A-Z0-9_]+)"'), "NCCL_"),
    (r'DEFINE_NCCL_PARAM\([A-Za-z0-9_]+, *[^,]+, *NCCL_[A-Z0-9_]+',
     re.compile(r'DEFINE_NCCL_PARAM\([A-Za-z0-9_]+, *[^,]+, *(NCCL_[A-Z0-9_]+)'), ""),
    (r'[A-Za-z]*[gG]et[eE]nv[A-Za-z]*\("NCCL_[A-Z0-9_]+"', re.compile(r'[gG]et[eE]nv[A-Za-z]*\("(NCCL_[A-Z0-9_]+)"'), ""),
    (r'ncclGetLevel\(', re.compile(r'"(NCCL_[A-Z0-9_]+)"'), ""),
)


def _grep(git_dir: str, tag: str, pattern: str) -> list[tuple[str, int, str]]:
    out = subprocess.run(["git", "--git-dir", git_dir, "grep", "-n", "-E", pattern, tag, "--", "src"],
                         capture_output=True, text=True, check=False).stdout
    rows = []
    for line in out.splitlines():
        _, path, number, text = line.split(":", 3)
        rows.append((path, int(number), text))
    return rows


def names_at(git_dir: str, tag: str) -> dict[str, str]:
    """{variable: "path:line"} for one tag (the first place it is read)."""
    found: dict[str, str] = {}
    for grep, capture, prefix in _PATTERNS:
        for path, number, text in _grep(git_dir, tag, grep):
            for name in capture.findall(text):
                found.setdefault(prefix + name, f"{path}:{number}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir")
    parser.add_argument("tags", nargs="+")
    args = parser.parse_args(argv)
    per_tag = {tag: names_at(args.git_dir, tag) for tag in args.tags}
    every = sorted({name for names in per_tag.values() for name in names})
    last_tag = args.tags[-1]
    for name in every:
        having = [tag for tag in args.tags if name in per_tag[tag]]
        where = per_tag[having[-1]][name]
        ib = ", transport: ib" if where.startswith("src/transport/net_ib") else ""
        last = "" if having[-1] == last_tag else f", last: {having[-1]}"
        sys.stdout.write(f"  - {{name: {name}, reader: nccl, first: {having[0]}{last}{ib}, "
                         f"source: \"{where} at {having[-1]}\"}}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
