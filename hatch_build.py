"""Wheel build hook: pre-parse the YAML data under `rules/` and `data/` into one JSON file shipped beside it.

Start-up is most of a pre-commit run, and parsing ~40 YAML files costs more than linting one manifest. The
rules' `docs` and `examples` go to a second file (`compiled-docs.json`), read only when documentation is shown.
The YAML stays the source of truth (it ships too); `vllmlint.data.load_yaml_data` reads the JSON copy
when it exists, and tests check that both say the same. This Python's marshal copies of that JSON and of the
catalogs under `schemas/vllm/` and `schemas/k8s/` go under `_data/<cache tag>/` (`vllmlint.data.load_json`), with
the code of every module of the package in one file (`vllmlint/bundle.py`).
"""
from __future__ import annotations

import json
import marshal
import sys
import zlib
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompiledDataHook(BuildHookInterface):
    PLUGIN_NAME = "vllmlint-compiled-data"

    def initialize(self, version, build_data):
        if self.target_name != "wheel" or version == "editable":
            return  # an editable install reads the YAML of the checkout, which may change at any time
        root = Path(self.root)
        sys.path.insert(0, str(root))
        try:
            from vllmlint import bundle as module_bundle
            from vllmlint.data import MARSHALLED, compile_rules_data, lazy_paths, marshal_folder, pack, split_compiled
            from vllmlint.version import COMMIT_FILE, checkout_commit
        finally:
            sys.path.pop(0)
        folder = Path(tempfile.mkdtemp(prefix="vllmlint-build-"))
        # The commit built from, for `vllmlint --version` (vllmlint/version.py): none from an sdist.
        commit = checkout_commit(root)
        if commit:
            (folder / COMMIT_FILE).write_text(commit + "\n", encoding="ascii")
            build_data["force_include"][str(folder / COMMIT_FILE)] = f"vllmlint/_data/{COMMIT_FILE}"
        # The rules' documentation apart: a run reads the rest at every start, the documentation seldom.
        for name, part in zip(("compiled-data.json", "compiled-docs.json"), split_compiled(compile_rules_data(root))):
            (folder / name).write_text(json.dumps(part, sort_keys=True), encoding="utf-8")
            build_data["force_include"][str(folder / name)] = f"vllmlint/_data/{name}"
        # Marshal copies of what a run reads, for this Python only (`vllmlint.data.load_json`): made from the JSON
        # as shipped, so that they say exactly what it says.
        tag = marshal_folder()
        for shipped in MARSHALLED:
            source = folder / shipped if shipped.startswith("compiled-") else root / shipped
            for path in [source] if source.is_file() else sorted(source.glob("*.json*")):
                relative = path.name if shipped.startswith("compiled-") else f"{shipped}/{path.name}"
                raw = path.read_bytes()
                if path.name.endswith(".gz"):
                    raw = zlib.decompress(raw, 31)
                copy = folder / tag / f"{relative}.marshal"
                copy.parent.mkdir(parents=True, exist_ok=True)
                copy.write_bytes(marshal.dumps(pack(json.loads(raw.decode("utf-8")), lazy_paths(relative))))
                build_data["force_include"][str(copy)] = f"vllmlint/_data/{tag}/{relative}.marshal"
        # Every module's code in one file (`vllmlint/bundle.py`), compiled by this Python.
        from importlib.util import MAGIC_NUMBER

        package = root / "vllmlint"
        modules = []
        for path in sorted(package.rglob("*.py")):
            relative = path.relative_to(package)
            parts = relative.with_suffix("").parts
            if "__pycache__" in parts:
                continue
            is_package = parts[-1] == "__init__"
            name = ".".join(("vllmlint",) + (parts[:-1] if is_package else parts))
            modules.append((name, relative.as_posix(), is_package, path.read_bytes()))
        bundle = folder / tag / module_bundle.NAME
        bundle.parent.mkdir(parents=True, exist_ok=True)
        bundle.write_bytes(module_bundle.pack(modules, MAGIC_NUMBER))
        build_data["force_include"][str(bundle)] = f"vllmlint/_data/{tag}/{module_bundle.NAME}"
        # The package's regular expressions, compiled by this Python's `re` (`vllmlint/_patterns.py`).
        namespace: dict = {}
        exec(compile((package / "_patterns.py").read_text(encoding="utf-8"), "_patterns.py", "exec"), namespace)
        table = folder / tag / module_bundle.PATTERNS_NAME
        table.write_bytes(module_bundle.pack_patterns(namespace["PATTERNS"]))
        build_data["force_include"][str(table)] = f"vllmlint/_data/{tag}/{module_bundle.PATTERNS_NAME}"
