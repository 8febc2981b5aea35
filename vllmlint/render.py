"""Helm charts and Kustomize folders among the linted files, and the opt-in `--render`.

A chart folder (one with `Chart.yaml`) holds templates that no YAML reader can lint as written. Without
`--render` the chart is reported with a warning-level notice that says how to have it rendered, and its
templates are skipped as before (VL002 notes). With `--render`, and only then, `helm template` is run on the
chart when `helm` is on PATH (values from `--helm-values FILE`, repeatable), and its output is linted with each
document under the template file its `# Source:` comment names (repository-relative, so code scanning places
the finding in the chart's own file). After the rules ran, `map_rendered` moves each position to the file as
written: the template's line with the same text, else the file's first line with a note.

Kustomize folders are never built, with or without `--render`: vllmlint's own reader (`source/kustomize.py`)
applies their resources, patches and images transformer with every position kept, so a finding lands where the
value is written (the overlay's patch that sets a flag) and each object is linted once. `kustomize build` placed
every finding at the top of a base file and linted a base's objects again under every overlay that builds it.

`--render` runs a program on files the linted tree controls (a chart's templates can read files): it is never
the default.
"""

from __future__ import annotations

import os
from vllmlint.records import dataclass, field
from pathlib import Path

from vllmlint.finding import Notice
from vllmlint.source.files import CHART_FILE

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
    return files, rendered, notices


def _shown(root: Path, display_path) -> str:
    shown = display_path(root)
    return "" if shown == "." else shown


def feed_rendered(linter, rendered: Rendered) -> None:
    """Lint a chart's rendered output: each Helm document under its template file."""
    from vllmlint.source.helm import split_helm_output

    linter.result.notices.extend(rendered.notices)
    if any(n.level == "error" for n in rendered.notices):
        linter.result.internal_error = True  # a render that failed: exit 2, not a clean run
    if rendered.output is None:
        return
    fallback = _join(rendered.shown_root, CHART_FILE)
    for source, chunk in split_helm_output(rendered.output, fallback) or []:
        shown = helm_source_path(source, rendered.shown_root) if source != fallback else fallback
        linter.result.files_checked += 1
        linter.add_text(chunk, shown, Path(shown).suffix.lower() or ".yaml")
        mapping = helm_mapping(chunk, shown, source, rendered) if source != fallback else None
        if mapping is not None:
            linter.render_mappings.append(mapping)
            linter.map_positions = map_rendered


# --- rendered positions mapped back to the files as written --------------------------------------------------
@dataclass
class Segment:
    """A part [start, end) of a rendered text that came from one file as written: `path` (display path) with
    `text`, and `region`, the offsets in `text` of the object it is (None: the whole file)."""

    start: int
    end: int
    path: str
    text: str
    region: tuple[int, int] | None = None


@dataclass
class RenderedText:
    """A rendered text linted under `shown`, and where each of its parts came from."""

    shown: str
    text: str
    tool: str  # what the text is, named in messages: "the `kustomize build` output"
    segments: list[Segment] = field(default_factory=list)

    def segment_at(self, offset: int) -> Segment | None:
        return next((s for s in self.segments if s.start <= offset < s.end or s.start == offset == s.end), None)


def _read_file(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def helm_mapping(chunk: str, shown: str, source: str, rendered: Rendered) -> RenderedText | None:
    """A Helm document group under its template file: the template's text, when the file is in the chart."""
    parts = source.strip().split("/", 1)
    text = _read_file(rendered.root / parts[1]) if len(parts) == 2 else None
    if text is None:
        return None
    return RenderedText(shown, chunk, "what `helm template` rendered from it", [Segment(0, len(chunk), shown, text)])


def _object_key(root) -> tuple[str, str, str | None] | None:
    """(kind, name, namespace or None) of a document's object."""
    from vllmlint.source.yamlmodel import Mapping, path_at, scalar_str

    if not isinstance(root, Mapping):
        return None
    kind, name = scalar_str(root.get("kind")), scalar_str(path_at(root, "metadata", "name"))
    if not kind or not name:
        return None
    return kind, name, scalar_str(path_at(root, "metadata", "namespace")) or None


def _documents(path: str, text: str) -> list[tuple[tuple[str, str, str | None], int, int]]:
    """(object key, start, end) of every object document of a YAML text: a document runs to the next one."""
    from vllmlint.source.yamlmodel import SourceFile, parse_documents

    documents, _ = parse_documents(SourceFile(path, text, path))
    roots = [d.root for d in documents if d.root is not None]
    found = []
    for i, root in enumerate(roots):
        key = _object_key(root)
        end = roots[i + 1].start if i + 1 < len(roots) else len(text)
        if key is not None:
            found.append((key, root.start, end))
    return found


def _line_in(target, key: str, region: tuple[int, int]) -> int | None:
    """The one line of `target` inside `region` whose text, stripped, is `key`; None when none or several."""
    first, last = target.line_col(region[0])[0], target.line_col(max(region[0], region[1] - 1))[0]
    found = [n for n in range(first, last + 1) if target.line_text(n).strip() == key]
    return found[0] if len(found) == 1 else None


def _mapped_offset(rendered, target, offset: int, length: int, region: tuple[int, int]) -> tuple[int, int] | None:
    """Where a rendered span (offset, length) is in the file as written: on the one line with the same text (same
    column past the indentation), else at the one occurrence of the finding's own text (a flag written in the
    template whose line has a `{{ }}` expression); None when neither is unambiguous."""
    line, col = rendered.line_col(offset)
    text = rendered.line_text(line)
    key = text.strip()
    if key:
        number = _line_in(target, key, region)
        if number is not None:
            written = target.line_text(number)
            indent_r, indent_w = len(text) - len(text.lstrip()), len(written) - len(written.lstrip())
            within = min(max(0, col - 1 - indent_r), len(written) - indent_w)
            return target.line_starts[number - 1] + indent_w + within, length
    token = rendered.text[offset:offset + length]
    part = target.text[region[0]:region[1]]
    # `--flag=VALUE` rendered from `--flag={{ .Values.x }}`: the flag's own name, when it is written once.
    for text in (token, token.split("=", 1)[0] if token.startswith("--") else ""):
        if len(text.strip()) >= 3 and "\n" not in text and part.count(text) == 1:
            return region[0] + part.index(text), len(text)
    return None


def map_rendered(result, mappings: list[RenderedText]) -> None:
    """Findings (and notices) of rendered texts moved to the files as written: the template file's line and
    column for Helm, the resource file holding the object for a kustomize build. A position whose text is not
    found unambiguously goes to the file's first line (the object's, for kustomize), and the message says so.
    Fixes are dropped: their edits are offsets into the rendered text, which is no file."""
    from vllmlint.finding import Span
    from vllmlint.source.yamlmodel import SourceFile

    by_shown = {m.shown: m for m in mappings}
    if not by_shown:
        return
    rendered_sources = {m.shown: SourceFile(m.shown, m.text, m.shown) for m in mappings}
    targets: dict[str, SourceFile] = {}

    def target_of(segment: Segment) -> SourceFile:
        if segment.path not in targets:
            targets[segment.path] = SourceFile(segment.path, segment.text, segment.path)
        return targets[segment.path]

    for finding in [*result.findings, *result.suppressed]:
        mapping = by_shown.get(finding.path)
        segment = mapping.segment_at(finding.span.start) if mapping is not None else None
        if mapping is None or segment is None:
            continue
        rendered, target = rendered_sources[mapping.shown], target_of(segment)
        region = segment.region or (0, len(segment.text))
        length = max(0, finding.span.end - finding.span.start)
        mapped = _mapped_offset(rendered, target, finding.span.start, length, region)
        if mapped is None:
            start = region[0]
            line = rendered.line_col(finding.span.start)[0]
            finding.message += (f" (line {line} of {mapping.tool}: its text is not in {segment.path} "
                                "as written, so the finding is placed at the "
                                f"{'object' if segment.region else 'file'}'s first line)")
            finding.span = Span.point(*target.line_col(start), index=start)
        else:
            start, length = mapped
            line_end = target.text.find("\n", start)
            end = min(start + length, len(target.text) if line_end == -1 else line_end)
            finding.span = target.span(start, end)
        finding.path, finding.fix = segment.path, None
    for notice in result.notices:
        mapping = by_shown.get(notice.path)
        if mapping is None or notice.line < 1:
            continue
        rendered = rendered_sources[mapping.shown]
        offset = rendered.line_starts[min(notice.line, len(rendered.line_starts)) - 1]
        segment = mapping.segment_at(offset)
        if segment is None:
            continue
        target = target_of(segment)
        region = segment.region or (0, len(segment.text))
        key = rendered.line_text(notice.line).strip()
        number = _line_in(target, key, region) if key else None
        notice.path, notice.line = segment.path, number or target.line_col(region[0])[0]
    for path, source in targets.items():
        result.sources[path] = source
    result.findings.sort(key=lambda f: f.sort_key)
