"""`vllmlint flag --swap-space`: one `vllm serve` flag across the catalogued releases; `vllmlint flag --list
--vllm-version 0.29.0`: every option of one release. Reads the release catalogs only (`schemas/vllm/`)."""
from __future__ import annotations

import difflib
import json
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from vllmlint.vllm.catalog import OptionSpec

EXIT_USAGE = 2


def _ranges(present: list[str], everything: list[str]) -> list[tuple[str, str]]:
    """Runs of consecutive catalogued releases that have the flag: [(first, last), ...]."""
    runs: list[tuple[str, str]] = []
    start: str | None = None
    previous = ""
    for version in everything:
        if version in present:
            start = start or version
            previous = version
        elif start:
            runs.append((start, previous))
            start = None
    if start:
        runs.append((start, previous))
    return runs


def flag_report(flag: str) -> dict[str, Any] | None:
    """Everything the catalogs and the curated table say about one spelling; None when nothing does."""
    from vllmlint.vllm import catalog
    from vllmlint.vllm.flagtable import never_existed, removed

    head, dot, rest = flag.partition(".")
    spelling = head.replace("_", "-") if head.startswith("--") else head
    row = catalog.history(spelling)
    curated = removed().get(spelling)
    never = never_existed().get(spelling)
    if row is None and curated is None:
        return None if never is None else {"flag": spelling, "never_existed": True, "instead": never.get("instead", "")}
    report: dict[str, Any] = {"flag": spelling, "never_existed": False}
    if row is not None:
        everything = catalog.releases()
        present: list[str] = []
        deprecated: list[tuple[str, str]] = []
        newest: OptionSpec | None = None  # the option in the newest release that has the spelling
        for version in everything:
            if catalog.compare_versions(version, row["first"]) < 0 or catalog.compare_versions(version, row["last"]) > 0:
                continue
            option = catalog.load(version).option(spelling)
            if option is None:
                continue
            present.append(version)
            newest = option
            if option.deprecated and option.name not in _not_deprecated():
                deprecated.append((version, option.deprecation))
        if newest is not None:
            report.update({
                "option": newest.canonical_flag, "first_release": row["first"], "last_release": row["last"],
                "in_newest_catalog": row["last"] == catalog.newest(),
                "releases": [list(r) for r in _ranges(present, everything)],
                "type": newest.type, "takes_value": newest.takes_value, "default": newest.default,
                "choices": list(newest.choices or newest.known_values or []) or None,
                "deprecated_since": deprecated[0][0] if deprecated else None,
                "deprecation": deprecated[-1][1] if deprecated else "",
                "help": newest.help or row.get("help", ""),
            })
    if curated is not None:
        report.update({"removed_in": curated.get("removed_in"), "last_accepted": curated.get("last_accepted"),
                       "replacement": curated.get("replacement", ""), "note": curated.get("note", "")})
    return report


def _abbreviation(flag: str) -> dict[str, Any] | None:
    """argparse takes a unique prefix (`--max-num-seq`) as the full flag: report on that flag."""
    from vllmlint.vllm import catalog

    resolution = catalog.load(catalog.newest()).resolve(flag)
    if resolution.kind != catalog.ResolutionKind.PREFIX or resolution.spelling is None:
        return None
    report = flag_report(resolution.spelling)
    if report is not None:
        report["abbreviation_of"] = resolution.spelling
        report["written"] = flag
    return report


def _suggest(flag: str) -> str:
    from vllmlint.vllm import catalog

    spellings = list(catalog._index()["flags"])
    close = difflib.get_close_matches(flag.replace("_", "-"), spellings, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _print_report(report: dict[str, Any]) -> None:
    echo = click.echo
    if report.get("never_existed"):
        echo(f"{report['flag']}: never an option of the vLLM server. {report['instead']}")
        return
    if report.get("abbreviation_of"):
        echo(f"{report['written']}: a unique prefix of {report['abbreviation_of']} in {_newest()}, which argparse "
             "accepts as that flag (an older or newer release may find it ambiguous)")
    echo(report["flag"] + (f" (option {report['option']})" if report.get("option") not in (None, report["flag"]) else ""))
    if "first_release" in report:
        runs = ", ".join(a if a == b else f"{a} - {b}" for a, b in report["releases"])
        state = "still accepted by the newest catalog" if report["in_newest_catalog"] else \
            f"last accepted by {report['last_release']}"
        echo(f"  releases:    {runs} ({state})")
        echo(f"  type:        {report['type']}" + ("" if report["takes_value"] else " (switch, takes no value)"))
        if report["default"] is not None:
            echo(f"  default:     {report['default']}")
        if report.get("choices"):
            echo(f"  values:      {', '.join(map(str, report['choices']))}")
        if report["deprecated_since"]:
            echo(f"  deprecated:  since {report['deprecated_since']}" +
                 (f": {report['deprecation']}" if report["deprecation"] else ""))
    back_again = report.get("in_newest_catalog") and len(report.get("releases") or []) > 1
    if report.get("removed_in"):
        again = f"; accepted again from {report['releases'][-1][0]}" if back_again else ""
        echo(f"  removed in:  {report['removed_in']} (last accepted by {report.get('last_accepted') or '?'}){again}")
    if report.get("replacement") and not report.get("in_newest_catalog"):
        echo(f"  instead:     {report['replacement']}")
    elif report.get("replacement"):
        echo(f"  on releases without it: {report['replacement']}")
    if report.get("help"):
        echo(f"  help:        {report['help']}")


def _not_deprecated() -> set[str]:
    """Options whose help only mentions deprecation (the deprecated-flag rule's curated list)."""
    from vllmlint.registry import rule

    data = rule("VL104").data
    return {entry["option"] for entry in (data if isinstance(data, dict) else {}).get("not_deprecated", [])}


def _newest() -> str:
    from vllmlint.vllm import catalog

    return catalog.newest()


def _release_listing(version: str) -> tuple[str, list[dict[str, Any]]]:
    from vllmlint.vllm import catalog
    from vllmlint.vllm.release import is_version

    if not is_version(version):
        raise click.UsageError(f"--vllm-version {version!r} is not a release number such as 0.29.0")
    version = version.strip().lstrip("v")
    chosen: str | None
    if catalog.compare_versions(version, catalog.newest()) > 0:
        chosen = catalog.newest()
    else:
        chosen = catalog.nearest_release(version)
    if chosen is None:
        raise click.UsageError(f"no catalogued release at or before {version} (oldest: {catalog.releases()[0]})")
    release_catalog = catalog.load(chosen)
    not_deprecated = _not_deprecated()
    rows = [{"option": o.canonical_flag, "flags": list(o.flags), "type": o.type, "takes_value": o.takes_value,
             "default": o.default, "deprecated": o.deprecated and o.name not in not_deprecated}
            for o in sorted(release_catalog.options.values(), key=lambda o: o.name)
            if not o.positional and o.name != "help"]
    return chosen, rows


@click.command("flag", context_settings={"ignore_unknown_options": True, "help_option_names": ["-h", "--help"]})
@click.argument("flags", nargs=-1, type=click.UNPROCESSED)
@click.option("--list", "list_all", is_flag=True, help="List every option of one release (see --vllm-version).")
@click.option("--vllm-version", help="Release to list [default: the newest catalogued release].")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def command(flags: tuple[str, ...], list_all: bool, vllm_version: str | None, fmt: str) -> None:
    """What vLLM's server makes of FLAG across releases: `vllmlint flag --swap-space` (a flag may also
    follow `--`). With --list, every option of one release."""
    from vllmlint.vllm import catalog

    if list_all:
        version, rows = _release_listing(vllm_version or catalog.newest())
        if fmt == "json":
            click.echo(json.dumps({"release": version, "options": rows}, indent=2))
            return
        if vllm_version and version != vllm_version.strip().lstrip("v"):
            click.echo(f"# {vllm_version} is not catalogued: showing {version}, the closest release before it")
        width = max(len(r["option"]) for r in rows)
        for row in rows:
            kind = row["type"] if row["takes_value"] else "switch"
            default = "" if row["default"] is None else f"  default {row['default']}"
            click.echo(f"{row['option']:<{width}}  {kind:<7}{default}{'  DEPRECATED' if row['deprecated'] else ''}")
        return
    names = [f for f in flags if f != "--"]
    if not names:
        raise click.UsageError("name a flag (`vllmlint flag --swap-space`) or use --list")
    reports: list[dict[str, Any]] = []
    status = 0
    for name in names:
        report = flag_report(name)
        if report is None:
            report = _abbreviation(name)
        if report is None or report.get("never_existed"):
            status = EXIT_USAGE
        if report is None:
            click.echo(f"vllmlint: error: `{name}` is not a flag of any catalogued vLLM release "
                       f"({catalog.releases()[0]} - {catalog.newest()}){_suggest(name)}", err=True)
            continue
        reports.append(report)
    if fmt == "json":
        if reports:
            click.echo(json.dumps(reports if len(reports) > 1 else reports[0], indent=2, default=str))
    else:
        for index, report in enumerate(reports):
            if index:
                click.echo()
            _print_report(report)
    sys.exit(status)
