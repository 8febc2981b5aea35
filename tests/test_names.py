"""One name per thing, real types at the hand-offs, and the VL1xx rules' shared wording in a module of its own."""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from vllmlint import finding
from vllmlint.engine import Linter
from vllmlint.vllm import catalog, flags, invocation

CHECKS = Path(__file__).resolve().parent.parent / "vllmlint" / "checks"


def test_the_catalog_names_its_classes_apart_from_the_invocation_and_from_release_numbers():
    # `Option` is an option of an invocation's argv; the catalog's description of one is an OptionSpec.
    # `release` is always a version string; the object that describes one is a ReleaseCatalog.
    assert not hasattr(catalog, "Option") and not hasattr(catalog, "Release")
    release_catalog = catalog.load(catalog.newest())
    assert isinstance(release_catalog, catalog.ReleaseCatalog)
    assert isinstance(release_catalog.version, str)
    assert all(isinstance(o, catalog.OptionSpec) for o in release_catalog.options.values())
    assert not hasattr(flags, "target_release")
    spec, assumed, beyond = flags.target_catalog(None, None)
    assert spec is release_catalog and assumed and not beyond


def test_hand_offs_carry_their_types_not_object():
    option = {f.name: f.type for f in dataclasses.fields(invocation.Option)}
    assert option["resolution"] == "Resolution | None"
    assert option["status"] == "FlagStatus | None"
    assert option["extra_values"] == "list[Token]"
    assert {f.name: f.type for f in dataclasses.fields(invocation.Invocation)}["catalog"] == "ReleaseCatalog"
    assert {f.name: f.type for f in dataclasses.fields(finding.Finding)}["fix"] == "Fix | None"


def test_status_and_kind_constants_keep_their_strings():
    kinds = catalog.ResolutionKind
    assert (kinds.EXACT, kinds.ALIAS, kinds.PREFIX, kinds.AMBIGUOUS, kinds.UNKNOWN, kinds.POSITIONAL) == \
        ("exact", "alias", "prefix", "ambiguous", "unknown", "positional")
    assert (catalog.RemovalStatus.REMOVED, catalog.RemovalStatus.TOO_NEW, catalog.RemovalStatus.NEVER) == \
        ("removed", "too_new", "never")
    assert (flags.OK, flags.REMOVED, flags.TOO_NEW, flags.UNKNOWN, flags.AMBIGUOUS, flags.ABSORBED) == \
        ("ok", "removed", "too-new", "unknown", "ambiguous", "absorbed")
    assert (invocation.VIA_COMMAND, invocation.VIA_IMAGE_ENTRYPOINT, invocation.VIA_SHELL,
            invocation.VIA_CONFIGMAP_SCRIPT, invocation.VIA_SCRIPT) == \
        ("command", "image-entrypoint", "shell", "configmap-script", "script")
    assert (finding.NoticeLevel.NOTE, finding.NoticeLevel.WARNING, finding.NoticeLevel.ERROR) == \
        ("note", "warning", "error")
    assert finding.Notice("VL006", "m").level == "note"


def test_option_spec_is_what_the_flag_resolves_to():
    linter = Linter()
    linter.add_text("vllm serve m --max_model_len 4096 --no-such-flag\n", "run.sh", ".sh")
    world = linter.build()
    (found,) = world.invocations
    assert found.via == invocation.VIA_SCRIPT and found.kind == invocation.SERVE
    known, unknown = found.options
    assert known.spec is not None and known.spec.name == "max-model-len" and known.status.kind == flags.OK
    assert known.canonical == "--max-model-len"
    assert unknown.spec is None and unknown.status.kind == flags.UNKNOWN
    assert found.catalog is catalog.load(found.catalog.version)


def test_rules_share_wording_through_checks_messages_not_through_each_other():
    """A rule module imports no other rule module: what they share lives in `checks/messages.py`."""
    offenders = []
    for path in sorted(CHECKS.glob("vl[0-9]*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(n.rsplit(".", 1)[-1].startswith("vl") and n.startswith("vllmlint.checks.") for n in names):
                offenders.append(f"{path.name}: {names}")
    assert offenders == []
    from vllmlint.checks import messages

    assert {"release_phrase", "catalog_note", "value_of", "version_label"} <= set(vars(messages))


def test_the_vllm_layer_and_its_users_type_check():
    """mypy (configured in pyproject.toml) reports nothing in the vLLM layer, the findings, the VL1xx/VL201
    rules, the formatters, the commands and the config; the rest of the package is typed by its owners."""
    from mypy import api

    root = CHECKS.parent.parent
    stdout, _, _ = api.run(["--config-file", str(root / "pyproject.toml"), str(root / "vllmlint")])
    clean = ("vllmlint/vllm/", "vllmlint/finding.py", "vllmlint/checks/__init__.py", "vllmlint/checks/messages.py",
             "vllmlint/checks/vl10", "vllmlint/checks/vl111", "vllmlint/checks/vl201", "vllmlint/formatters/",
             "vllmlint/commands/", "vllmlint/config.py", "vllmlint/baseline.py", "vllmlint/data.py")
    errors = [line for line in stdout.splitlines() if ": error:" in line and _path(line, root).startswith(clean)
              and "vl108" not in _path(line, root)]  # VL108 is being rewritten on its own
    assert errors == []


def _path(line: str, root: Path) -> str:
    """The file of a mypy message, relative to the checkout."""
    path = Path(line.split(":", 1)[0]).resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
