"""Helm charts and Kustomize folders among the linted files, and the opt-in `--render`.

A chart folder (one with `Chart.yaml`) holds templates that no YAML reader can lint as written. Without
`--render` the chart is reported with a warning-level notice that says how to have it rendered, and its
templates are skipped as before (VL002 notes). With `--render`, and only then, `helm template` is run on the
chart when `helm` is on PATH (values from `--helm-values FILE`, repeatable), and its output is linted with each
document under the template file its `# Source:` comment names (repository-relative, so code scanning places
the finding in the chart's own file; the line is the rendered document's). A folder with `kustomization.yaml`
is built with `kustomize build` (or `kubectl kustomize`) under `--render` only, its output linted under the
kustomization file's name plus ` (rendered)`, as there is no better mapping; the folder's own YAML files are then
linted through the build only (not twice).

`--render` runs a program on files the linted tree controls (a chart's templates can read files, kustomize can
fetch remote bases over the network): it is never the default.
"""

from __future__ import annotations

import os
from vllmlint.records import dataclass, field
from pathlib import Path

from vllmlint.finding import Notice

CHART_FILE = "Chart.yaml"
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# Parts of a chart that `helm template` reads and no one lints as written.
CHART_PARTS = ("templates", "charts", "crds")
RENDER_TIMEOUT = 120  # seconds


@dataclass
class Rendered:
    """What `--render` made of one folder: the output to lint (or None) and the notices to print."""

    root: Path
    shown_root: str  # the folder's display path ("" for the current folder)
    tool: str | None = None
    output: str | None = None
    notices: list[Notice] = field(default_factory=list)


def chart_roots(files: list[Path]) -> list[Path]:
    """Folders of the collected files that hold a `Chart.yaml`, outermost first (a subchart under `charts/` is
    rendered by its parent)."""
    roots = sorted({f.parent for f in files if f.name == CHART_FILE}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for root in roots:
        if not any(_under(root, outer) for outer in kept):
            kept.append(root)
    return kept


def kustomize_roots(files: list[Path]) -> list[Path]:
    """Folders of the collected files that hold a kustomization file (every one: overlays and bases alike)."""
    return sorted({f.parent for f in files if f.name in KUSTOMIZATION_FILES}, key=lambda p: (len(p.parts), str(p)))


def _under(path: Path, folder: Path) -> bool:
    try:
        Path(os.path.abspath(path)).relative_to(os.path.abspath(folder))
    except ValueError:
        return False
    return True


def chart_part(path: Path, root: Path) -> bool:
    """Whether a file is one `helm template` reads (Chart.yaml, templates/, charts/, crds/): linted through the
    rendered output instead of as written."""
    try:
        relative = Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
    except ValueError:
        return False
    return relative.parts == (CHART_FILE,) or (len(relative.parts) > 1 and relative.parts[0] in CHART_PARTS)


def _join(shown_root: str, rest: str) -> str:
    return f"{shown_root}/{rest}" if shown_root and shown_root != "." else rest


def unrendered_chart_notice(shown_root: str) -> Notice:
    """The warning for a chart linted without `--render`: its templates were not checked, and how to have them."""
    where = shown_root or "."
    return Notice("VL002", f"Helm chart not rendered, its templates were not checked: run `vllmlint --render {where}` "
                  f"(runs `helm template`; values from --helm-values FILE) or `helm template {where} | vllmlint -`",
                  _join(shown_root, CHART_FILE), 0, "warning")


def render_chart(root: Path, shown_root: str, values: list[str]) -> Rendered:
    """`helm template` on one chart, or a notice saying why not."""
    result = Rendered(root, shown_root, "helm")
    import shutil

    helm = shutil.which("helm")
    where = _join(shown_root, CHART_FILE)
    if helm is None:
        result.notices.append(Notice(
            "VL005", "--render: `helm` is not on PATH, the chart's templates were not checked: install Helm, or "
            f"lint `helm template {shown_root or '.'} | vllmlint -`", where, 0, "warning"))
        return result
    command = [helm, "template", os.path.abspath(root)]
    for value in values:
        command += ["--values", os.path.abspath(value)]
    result.output = _run(command, result, where)
    return result


def render_kustomization(root: Path, shown_root: str, name: str) -> Rendered:
    """`kustomize build` (or `kubectl kustomize`) on one folder, or a notice saying why not."""
    result = Rendered(root, shown_root)
    where = _join(shown_root, name)
    import shutil

    kustomize, kubectl = shutil.which("kustomize"), shutil.which("kubectl")
    if kustomize is not None:
        result.tool, command = "kustomize", [kustomize, "build", os.path.abspath(root)]
    elif kubectl is not None:
        result.tool, command = "kubectl", [kubectl, "kustomize", os.path.abspath(root)]
    else:
        result.notices.append(Notice(
            "VL005", "--render: neither `kustomize` nor `kubectl` is on PATH, the kustomization was not built "
            "(its files are read as written)", where, 0, "warning"))
        return result
    result.output = _run(command, result, where)
    return result


def _run(command: list[str], result: Rendered, where: str) -> str | None:
    import subprocess  # only --render runs anything: the start-up of every other run does not pay for it

    name = " ".join([Path(command[0]).name] + command[1:2])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RENDER_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        result.notices.append(Notice("VL005", f"--render: `{name}` failed: {exc}", where, 0, "error"))
        return None
    if done.returncode != 0:
        error = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        result.notices.append(Notice("VL005", f"--render: `{name}` failed, not checked: {error}", where, 0, "error"))
        return None
    return done.stdout


def helm_source_path(source: str, shown_root: str) -> str:
    """A `# Source: CHART/templates/x.yaml` path as the template file's display path: the chart's name (the
    first part) replaced by the chart folder, so the finding lands in the repository's own file."""
    parts = source.strip().split("/", 1)
    return _join(shown_root, parts[1]) if len(parts) == 2 else _join(shown_root, source.strip())


def prepare(files: list[Path], render: bool, helm_values: list[str]) -> tuple[list[Path], list[Rendered], list[Notice]]:
    """The files to lint as written, what `--render` rendered, and the notices for charts left unrendered.
    Nothing is run without `render`."""
    from vllmlint.source.files import display_path

    charts = chart_roots(files)
    notices: list[Notice] = []
    rendered: list[Rendered] = []
    if not render:
        for root in charts:
            notices.append(unrendered_chart_notice(_shown(root, display_path)))
        return files, rendered, notices
    for root in charts:
        done = render_chart(root, _shown(root, display_path), helm_values)
        rendered.append(done)
        if done.output is not None:
            files = [f for f in files if not chart_part(f, root)]
    for root in kustomize_roots(files):
        if any(_under(root, chart) for chart in charts):
            continue
        name = next(f.name for f in files if f.parent == root and f.name in KUSTOMIZATION_FILES)
        done = render_kustomization(root, _shown(root, display_path), name)
        rendered.append(done)
        if done.output is not None:
            # The folder's own manifests (its resources and patches) are in the build: linted there, not twice.
            files = [f for f in files if not (f.parent == root and f.suffix.lower() in (".yaml", ".yml", ".json")
                                              or f.parent == root and f.name in KUSTOMIZATION_FILES)]
    return files, rendered, notices


def _shown(root: Path, display_path) -> str:
    shown = display_path(root)
    return "" if shown == "." else shown


def feed_rendered(linter, rendered: Rendered) -> None:
    """Lint one folder's rendered output: Helm documents under their template files, a kustomize build under
    the kustomization file's name plus ` (rendered)`."""
    from vllmlint.engine import split_helm_output

    linter.result.notices.extend(rendered.notices)
    if any(n.level == "error" for n in rendered.notices):
        linter.result.internal_error = True  # a render that failed: exit 2, not a clean run
    if rendered.output is None:
        return
    if rendered.tool == "helm":
        fallback = _join(rendered.shown_root, CHART_FILE)
        for source, chunk in split_helm_output(rendered.output, fallback) or []:
            shown = helm_source_path(source, rendered.shown_root) if source != fallback else fallback
            linter.result.files_checked += 1
            linter.add_text(chunk, shown, Path(shown).suffix.lower() or ".yaml")
        return
    name = next((n for n in KUSTOMIZATION_FILES if (rendered.root / n).exists()), KUSTOMIZATION_FILES[0])
    linter.result.files_checked += 1
    linter.add_text(rendered.output, _join(rendered.shown_root, name) + " (rendered)", ".yaml")
