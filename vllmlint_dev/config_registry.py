"""Extract, per vLLM release, what decides whether a model needs --trust-remote-code: the transformers
requirement of the wheel (METADATA `Requires-Dist`) and the model_types of vLLM's own config registry
(`_CONFIG_REGISTRY` in vllm/transformers_utils/config.py), read with `ast` (never imported). Prints the
`releases:` part of data/config-registry.yaml, consecutive releases with the same facts merged into a range.

Input: a folder with one sub-folder per release (named by its version) holding the wheel's
`vllm/transformers_utils/config.py`, its `*.dist-info/METADATA` and a file `WHEEL_DATE` (the output of
`zipinfo -T WHEEL vllm/__init__.py`: the date the wheel was built). Made with:

    pip download --no-deps --only-binary :all: vllm==X -d DIR      # for each release
    unzip DIR/*.whl 'vllm/transformers_utils/*' '*.dist-info/METADATA' -d SRC/X
    zipinfo -T DIR/*.whl vllm/__init__.py > SRC/X/WHEEL_DATE

    python -m vllmlint_dev.config_registry SRC
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

from vllmlint.vllm.release import version_key


def registry(config_py: Path) -> tuple[list[str], int]:
    """(model_types, line) of `_CONFIG_REGISTRY`: a dict literal (with `**OTHER` expansions of dicts of the
    same module) or a `LazyConfigDict(name="Class", ...)` call."""
    tree = ast.parse(config_py.read_text(encoding="utf-8"))
    assigned: dict[str, tuple[ast.expr, int]] = {}
    for node in tree.body:
        target = value = None
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target, value = node.target.id, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        if target and value is not None:
            assigned[target] = (value, node.lineno)

    def keys(expr: ast.expr) -> list[str]:
        if isinstance(expr, ast.Dict):
            result: list[str] = []
            for key, value in zip(expr.keys, expr.values, strict=True):
                if key is None and isinstance(value, ast.Name) and value.id in assigned:
                    result.extend(keys(assigned[value.id][0]))
                elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                    result.append(key.value)
            return result
        if isinstance(expr, ast.Call):
            return [k.arg for k in expr.keywords if k.arg]
        raise ValueError(f"{config_py}: unexpected _CONFIG_REGISTRY form {ast.dump(expr)[:80]}")

    value, line = assigned["_CONFIG_REGISTRY"]
    return sorted(keys(value), key=str.lower), line


def transformers_requirement(metadata: Path) -> str:
    for line in metadata.read_text(encoding="utf-8").splitlines():
        if line.startswith("Requires-Dist: transformers") and "extra ==" not in line:
            return line.split("transformers", 1)[1].split(";")[0].strip().strip("()").replace(" ", "")
    raise ValueError(f"{metadata}: no transformers requirement")


def wheel_date(path: Path) -> str:
    stamp = path.read_text(encoding="utf-8").split()[-2]  # 20250220.170942
    return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}"


def main(folder: str) -> None:
    rows = []
    for release_dir in sorted((p for p in Path(folder).iterdir() if p.is_dir() and not p.name.endswith(".tmp")),
                              key=lambda p: version_key(p.name)):
        release = release_dir.name
        types, line = registry(release_dir / "vllm" / "transformers_utils" / "config.py")
        metadata = next(release_dir.glob("*.dist-info/METADATA"))
        rows.append((release, transformers_requirement(metadata), types, line, wheel_date(release_dir / "WHEEL_DATE")))
    ranges: list[list] = []
    for row in rows:
        if ranges and ranges[-1][2] == row[1] and ranges[-1][3] == row[2]:
            ranges[-1][1] = row[0]
            ranges[-1][4] = row[4]
            ranges[-1][6].append(row[0])
        else:
            ranges.append([row[0], row[0], row[1], row[2], row[4], row[3], [row[0]]])
    for first, last, requirement, types, built, line, members in ranges:
        print(f"  - first: \"{first}\"")
        print(f"    last: \"{last}\"")
        print(f"    transformers: \"{requirement}\"")
        print(f"    last_built: \"{built}\"")
        print(f"    config_registry: [{', '.join(types)}]")
        print(f"    source: \"vllm-{first} wheel: METADATA Requires-Dist transformers{requirement}; "
              f"vllm/transformers_utils/config.py line {line} (_CONFIG_REGISTRY); the same in "
              f"{', '.join(members)}; last_built: the file dates of the vllm-{last} wheel\"")


if __name__ == "__main__":
    main(sys.argv[1])
