"""The runner: how a run is carried out, above the engine (vllmlint.engine, which it calls and which never imports
it). Which files (discovery, Kustomize resources followed with --follow-links), the result cache (`cache`), the
processes that check the rules (`processes`), the garbage collector's policy, and the `lint` entry the command line,
the language server and `--fix` call. Every run is linted in one piece: one world of every file, whatever the run's
size or mode, so no finding depends on which files were read together (docs/design/layers.md).
"""
from __future__ import annotations

from vllmlint.run.runner import Feed, lint, lint_paths  # noqa: F401  (the runner's API)
