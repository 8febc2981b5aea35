"""What the language server says about a document, from the last lint run of its folder: diagnostics, code
actions (the rules' fixes, suppression comments), hover (a flag's history, a rule's explanation, a model's
capacity) and completion (flag names and values of the workload's release).

Positions are the engine's offsets until the last step, where `LineIndex` turns them into LSP positions in
the negotiated encoding. Only lsprotocol's types are used here; the wiring is `vllmlint.server.server`.
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass
from typing import TYPE_CHECKING, Callable

from lsprotocol import types

from vllmlint.server.positions import LineIndex

if TYPE_CHECKING:
    from vllmlint.finding import Finding, Notice
    from vllmlint.k8s.objects import World
    from vllmlint.server.project import Run
    from vllmlint.vllm.catalog import OptionSpec
    from vllmlint.vllm.invocation import Invocation, Option, Token

SOURCE = "vllmlint"
_SEVERITY = {3: types.DiagnosticSeverity.Error, 2: types.DiagnosticSeverity.Warning,
             1: types.DiagnosticSeverity.Information}
_NOTICE_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
                    "note": types.DiagnosticSeverity.Hint}


def lsp_range(index: LineIndex, start: int, end: int) -> types.Range:
    line, character = index.position(start)
    end_line, end_character = index.position(max(start, end))
    return types.Range(types.Position(line, character), types.Position(end_line, end_character))


def source_text(run: Run, shown: str) -> str:
    source = run.result.sources.get(shown)
    return source.text if source is not None else ""


# --- diagnostics ----------------------------------------------------------------------------------
def findings_of(run: Run, shown: str) -> list[Finding]:
    return [f for f in run.result.findings if f.path == shown]


def diagnostics(run: Run, shown: str, encoding: str) -> list[types.Diagnostic]:
    """The findings of one file (after suppressions, per-file ignores and the baseline, as the CLI shows
    them), and the notes about it (an unrendered template, an assumed release) as hints."""
    index = LineIndex(source_text(run, shown), encoding)
    out = [_diagnostic(f, index) for f in findings_of(run, shown)]
    seen: set[tuple[str, int, str]] = set()
    for notice in run.result.notices:
        key = (notice.code, notice.line, notice.message)
        if notice.path == shown and key not in seen:
            seen.add(key)
            out.append(_notice_diagnostic(notice, index))
    return out


def _diagnostic(finding: Finding, index: LineIndex) -> types.Diagnostic:
    fix = finding.fix
    data = {"fingerprint": finding.fingerprint(), "fix": (fix.safety if fix is not None else None)}
    return types.Diagnostic(range=lsp_range(index, finding.span.start, finding.span.end),
                            message=finding.message,
                            severity=_SEVERITY.get(int(finding.severity), types.DiagnosticSeverity.Warning),
                            code=finding.code, source=SOURCE, data=data)


def _notice_diagnostic(notice: Notice, index: LineIndex) -> types.Diagnostic:
    line = max(notice.line - 1, 0)
    start = index.offset(line, 0)
    end = start + len(index.line_text(line))
    return types.Diagnostic(range=lsp_range(index, start, end), message=notice.message,
                            severity=_NOTICE_SEVERITY.get(notice.level, types.DiagnosticSeverity.Hint),
                            code=notice.code, source=SOURCE)


# --- code actions ---------------------------------------------------------------------------------
def _overlaps(finding: Finding, start: int, end: int) -> bool:
    span = finding.span
    return span.start <= end and start <= span.end


def code_actions(run: Run, shown: str, start: int, end: int, encoding: str,
                 uri_of: Callable[[str], str | None], disabled: bool = True) -> list[types.CodeAction]:
    """Quick fixes (safe ones preferred, unsafe ones labelled) and suppressions for the findings that touch
    [start, end) of the file. `uri_of`: a display path's URI (None when the file is unknown). A fix that would
    leave a file unreadable is offered disabled, with the reason, when the client shows such actions (`disabled`),
    else not at all."""
    from vllmlint.fix.edits import SAFE

    actions: list[types.CodeAction] = []
    uri = uri_of(shown)
    if uri is None:
        return actions
    index = LineIndex(source_text(run, shown), encoding)
    touched = [f for f in findings_of(run, shown) if _overlaps(f, start, end)]
    for finding in touched:
        diagnostic = _diagnostic(finding, index)
        fix = finding.fix
        if fix is not None and fix.edits:
            edit = _workspace_edit(run, fix.edits, encoding, uri_of)
            if edit is not None:
                unsafe = "" if fix.safety == SAFE else " (unsafe)"
                title = f"{finding.code}: {fix.description}{unsafe}"
                problem = _fix_problem(run, fix.edits)
                if problem is not None:  # greyed out with the reason: `--fix` would refuse it
                    if disabled:
                        actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                                                        diagnostics=[diagnostic],
                                                        disabled=types.CodeActionDisabled(reason=problem)))
                    continue
                actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                                                diagnostics=[diagnostic], is_preferred=fix.safety == SAFE, edit=edit))
    for finding in touched:
        actions.extend(_suppressions(run, shown, finding, index, uri))
    return actions


def _fix_problem(run: Run, edits) -> str | None:
    """Why a fix's edits must not be offered (a file they leave unreadable: `vllmlint.fix.apply.edit_problem`)."""
    from vllmlint.fix.apply import apply_edits, edit_problem

    for path in dict.fromkeys(e.path for e in edits):
        before = source_text(run, path)
        problem = edit_problem(path, before, apply_edits(before, [e for e in edits if e.path == path]))
        if problem is not None:
            return problem
    return None


def _workspace_edit(run: Run, edits, encoding: str, uri_of) -> types.WorkspaceEdit | None:
    changes: dict[str, list[types.TextEdit]] = {}
    for edit in edits:
        uri = uri_of(edit.path)
        if uri is None or edit.path not in run.result.sources:
            return None
        index = LineIndex(source_text(run, edit.path), encoding)
        changes.setdefault(uri, []).append(types.TextEdit(lsp_range(index, edit.start, edit.end), edit.replacement))
    return types.WorkspaceEdit(changes=changes)


def fix_all_action(run: Run, shown: str, fixed: str, applied: int, uri: str, encoding: str) -> types.CodeAction:
    """`source.fixAll`: the text `vllmlint --fix` makes of this file (its verified passes), as one edit."""
    text = source_text(run, shown)
    index = LineIndex(text, encoding)
    edit = types.TextEdit(lsp_range(index, 0, len(text)), fixed)
    return types.CodeAction(title=f"Fix all safe vllmlint problems ({applied})", kind=types.CodeActionKind.SourceFixAll,
                            edit=types.WorkspaceEdit(changes={uri: [edit]}))


# Suppression comments (vllmlint.suppressions): `# vllmlint: disable-next-line=CODE -- reason` before the line
# (in a script, before the command, which it covers with its continuation lines), or `disable-file`. The
# reason is left for the user to write after `--`: until they do, VL004 (suppression-without-reason) says so.
_UNSUPPRESSIBLE = {"VL001", "VL003", "VL004"}


def _suppressions(run: Run, shown: str, finding: Finding, index: LineIndex, uri: str) -> list[types.CodeAction]:
    if finding.code in _UNSUPPRESSIBLE or _kind(shown, index.text) == "json":
        return []  # JSON has no comments (annotate the object with `vllmlint.io/ignore` instead)
    text = index.text
    actions = []
    line_insert = _line_comment_site(shown, text, finding.span.start)
    if line_insert is not None:
        offset, indent = line_insert
        comment = f"{indent}# vllmlint: disable-next-line={finding.code} -- \n"
        actions.append(_insert_action(f"Suppress {finding.code} here (write the reason after `--`)", uri, index,
                                      offset, comment))
    offset, comment = _file_comment_site(shown, text, finding.code)
    actions.append(_insert_action(f"Suppress {finding.code} in this file (write the reason after `--`)", uri, index,
                                  offset, comment))
    return actions


def _insert_action(title: str, uri: str, index: LineIndex, offset: int, text: str) -> types.CodeAction:
    edit = types.TextEdit(lsp_range(index, offset, offset), text)
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                            edit=types.WorkspaceEdit(changes={uri: [edit]}))


def _kind(shown: str, text: str) -> str:
    suffix = shown.rsplit("/", 1)[-1].rsplit(".", 1)[-1].lower() if "." in shown.rsplit("/", 1)[-1] else ""
    if suffix in ("md", "markdown"):
        return "markdown"
    if suffix in ("sh", "bash") or (suffix not in ("yaml", "yml", "json") and text.startswith("#!")):
        return "shell"
    from vllmlint.source.files import is_dockerfile

    if is_dockerfile(shown.rsplit("/", 1)[-1]):
        return "shell"  # whole-line `#` comments, instructions read as commands
    return "json" if suffix == "json" else "yaml"


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _indent(text: str, line_start: int) -> str:
    match = re.match(r"[ \t]*", text[line_start:])
    return match.group() if match else ""


def _line_comment_site(shown: str, text: str, offset: int) -> tuple[int, str] | None:
    """(offset of the line to put a `disable-next-line` comment before, its indentation), or None where a
    comment line cannot go (inside a multi-line quoted, plain or folded YAML scalar)."""
    kind = _kind(shown, text)
    region = (0, len(text))
    if kind == "markdown":
        from vllmlint.source.markdown import SHELL_LANGS, fences

        fence = next((f for f in fences(text) if f.content_start <= offset < max(f.content_end, f.content_start + 1)),
                     None)
        if fence is None:
            return None
        region = (fence.content_start, fence.content_end)
        kind = "shell" if fence.language in SHELL_LANGS else "yaml"
    if kind == "yaml":
        scalar = _enclosing_scalar(shown, text, offset, region)
        if scalar is None:
            start = _line_start(text, offset)
            return start, _indent(text, start)
        if scalar.style != "|":
            first = _line_start(text, scalar.start)
            return (first, _indent(text, first)) if first == _line_start(text, offset) else None
        body = text.find("\n", scalar.start, scalar.end) + 1  # a literal block holds a script: its commands
        region = (body, scalar.end) if body else region
    return _command_site(text, offset, region)


def _enclosing_scalar(shown: str, text: str, offset: int, region: tuple[int, int]):
    """The scalar (of the YAML in `region`) whose text holds `offset`, or None."""
    from vllmlint.source.yamlmodel import Scalar, SourceFile, parse_documents, walk

    blanked = "".join(c if c in "\r\n" else " " for c in text[:region[0]]) + text[region[0]:region[1]]
    documents, _ = parse_documents(SourceFile(shown, blanked, shown))
    best = None
    for document in documents:
        for node in walk(document.root):
            if isinstance(node, Scalar) and node.start <= offset < node.end:
                if best is None or node.end - node.start < best.end - best.start:
                    best = node
    return best


def _command_site(text: str, offset: int, region: tuple[int, int]) -> tuple[int, str]:
    """Before the first line of the shell command holding `offset` (a `disable-next-line` in a script covers
    the whole next command, continuation lines included)."""
    from vllmlint.source.shell import read_script

    start = _line_start(text, offset)
    script = read_script(text, region[0], region[1])
    for command in script.commands:
        if command.start <= offset <= command.end:
            start = _line_start(text, command.start)
            break
    return start, _indent(text, start)


def _file_comment_site(shown: str, text: str, code: str) -> tuple[int, str]:
    kind = _kind(shown, text)
    if kind == "markdown":
        return 0, f"<!-- vllmlint: disable-file={code} -- -->\n"
    offset = 0
    if kind == "shell" and text.startswith("#!"):
        newline = text.find("\n")
        offset = len(text) if newline == -1 else newline + 1
        if newline == -1:
            return offset, f"\n# vllmlint: disable-file={code} -- \n"
    return offset, f"# vllmlint: disable-file={code} -- \n"


# --- what is under the cursor ---------------------------------------------------------------------
@dataclass
class Spot:
    invocation: Invocation
    token: Token
    option: Option | None = None  # the option whose flag or value the token is
    is_value: bool = False  # the token is the option's value (the same token for `--flag=value`: after `=`)
    is_model: bool = False
    spec: OptionSpec | None = None  # the release's option of the flag or value under the cursor


def _in(token: Token | None, offset: int, shown: str) -> bool:
    return (token is not None and token.source is not None and token.source.display_path == shown
            and token.start <= offset <= token.end)


def spot_at(world: World, shown: str, offset: int) -> Spot | None:
    """The vLLM argument under `offset` (the cursor right after a token counts as on it)."""
    for invocation in world.invocations:
        for option in invocation.options:  # a flag's own token first: it may also be read as another's value
            if _in(option.token, offset, shown):
                token = option.token
                eq = token.source.text.find("=", token.start, token.end) if token.source is not None else -1
                return Spot(invocation, token, option, is_value=option.inline and eq != -1 and offset > eq,
                            spec=option.spec)
        for option in invocation.options:
            value = option.value_token
            if _in(value, offset, shown) and value is not option.token and not (value and value.text.startswith("-")):
                assert value is not None
                return Spot(invocation, value, option, is_value=True, spec=option.spec)
        if _in(invocation.model, offset, shown):
            assert invocation.model is not None
            return Spot(invocation, invocation.model, is_model=True)
        for token in invocation.tokens:
            if _in(token, offset, shown):
                return _raw_spot(invocation, token, offset)
    return None


def _raw_spot(invocation: Invocation, token: Token, offset: int) -> Spot:
    """A token the option parse did not read as a flag (`--dtype=b` taken as the value of a half-typed flag
    before it): `--flag=value` with the cursor after `=` is still that flag's value."""
    text = token.source.text[token.start:token.end] if token.source is not None else ""
    eq = text.find("=")
    if text.lstrip("'\"").startswith("-") and eq != -1 and offset > token.start + eq:
        flag = text.lstrip("'\"")[:text.lstrip("'\"").find("=")]
        return Spot(invocation, token, is_value=True, spec=invocation.catalog.resolve(flag).option)
    return Spot(invocation, token)


# --- hover ----------------------------------------------------------------------------------------
def hover(run: Run, world: World, shown: str, offset: int, encoding: str) -> types.Hover | None:
    parts: list[str] = []
    spot = spot_at(world, shown, offset)
    if spot is not None and spot.option is not None and not spot.is_value:
        parts.append(flag_markdown(spot.invocation, spot.option))
    elif spot is not None and (spot.is_model or _names_model(spot)):
        text = capacity_markdown(world, spot.invocation)
        if text:
            parts.append(text)
    for finding in findings_of(run, shown):
        if finding.span.start <= offset <= finding.span.end:
            parts.append(rule_markdown(finding))
    if not parts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)))


def _names_model(spot: Spot) -> bool:
    return spot.invocation.model is spot.token


def _release_words(invocation: Invocation) -> str:
    release = invocation.release
    if release and not invocation.assumed:
        origin = f", {invocation.release_origin}" if invocation.release_origin else ""
        return f"vLLM {release}{origin}"
    return f"vLLM {invocation.catalog.version} (assumed: the workload's release is unknown)"


def flag_markdown(invocation: Invocation, option: Option) -> str:
    """A flag as the workload's release reads it (type, default, values, help) and its history across the
    catalogued releases (`vllmlint flag`'s report)."""
    from vllmlint.commands.flag import flag_report

    name = option.name
    spec = option.spec
    lines = [f"**`{name}`**" + (f" (option `{spec.canonical_flag}`)" if spec is not None and
                                spec.canonical_flag != name else "") + f" in {_release_words(invocation)}"]
    if spec is not None:
        kind = spec.type if spec.takes_value else "switch, takes no value"
        lines.append(f"- type: {kind}")
        if spec.default is not None:
            lines.append(f"- default: `{spec.default}`")
        values = spec.choices or spec.known_values
        if values:
            lines.append(f"- values: {', '.join(f'`{v}`' for v in values)}")
        if spec.deprecated:
            lines.append(f"- deprecated{': ' + spec.deprecation if spec.deprecation else ''}")
    else:
        lines.append(f"- not an option of vLLM {invocation.catalog.version}")
    report = flag_report(spec.canonical_flag if spec is not None else name) or flag_report(name)
    if report is not None and report.get("never_existed"):
        lines.append(f"- never an option of the vLLM server. {report.get('instead', '')}".rstrip())
    elif report is not None:
        if report.get("releases"):
            runs = ", ".join(a if a == b else f"{a} - {b}" for a, b in report["releases"])
            state = "still in the newest catalog" if report.get("in_newest_catalog") else \
                f"last accepted by {report.get('last_release')}"
            lines.append(f"- releases: {runs} ({state})")
        if report.get("removed_in"):
            lines.append(f"- removed in {report['removed_in']} (last accepted by {report.get('last_accepted') or '?'})")
        if report.get("replacement"):
            lines.append(f"- instead: {report['replacement']}")
    help_text = (spec.help if spec is not None else "") or (report or {}).get("help") or ""
    if help_text:
        lines.append("")
        lines.append(help_text)
    return "\n".join(lines)


def rule_markdown(finding: Finding) -> str:
    from vllmlint.formatters.rule_docs import help_markdown
    from vllmlint.registry import all_rules

    rule = all_rules().get(finding.code)
    if rule is None:
        return f"**{finding.code}**: {finding.message}"
    return f"### {rule.code} {rule.name}\n\n{help_markdown(rule)}"


def capacity_markdown(world: World, invocation: Invocation) -> str | None:
    """`vllmlint capacity`'s summary for this invocation: weights, KV cache and verdict on each GPU it may land
    on, or the model's checkpoint size when no GPU is known."""
    from vllmlint.capacity.workload import checkpoint_bytes, workloads
    from vllmlint.commands.capacity import _row, _text

    work = next((w for w in workloads(world) if w.invocation is invocation), None)
    if work is None:
        return None
    if work.model is None or work.match is None:
        if "model" in work.unknown:
            return "**capacity**: the model comes from a variable: not estimated"
        return (f"**capacity**: model `{work.model_name}` is not in vllmlint's catalog (add it under `models:` in "
                ".vllmlint.yaml)")
    head = f"**capacity of `{work.model_name}`** ({work.match.how}), {_release_words(invocation)}"
    if not work.estimate_inputs_known():
        return f"{head}\n\nnot estimated: the value of {', '.join(sorted(work.unknown))} is not known from the manifest"
    landings = work.hosting_landings()
    if not landings:
        size = checkpoint_bytes(work.model, work.quantization) / 2**30
        return (f"{head}\n\n- weights: {size:.2f} GiB ({work.quantization or work.model.torch_dtype})\n- GPU: not known "
                "(no GPU node selector, affinity or NodePool): run `vllmlint capacity --gpu ...` to plan")
    blocks = [head]
    release_origin = invocation.release_origin if invocation.release else "release unknown: the newest known assumed"
    for landing in landings:
        plan = work.estimate(landing.candidate.gpu)
        if plan is None:
            blocks.append(f"{landing.label}: not estimated (quantization {work.quantization} has no known size)")
            continue
        row = _row(plan, model_how=work.match.how, gpu_origin=landing.origin,
                   instance_type=landing.candidate.instance_type, gpu_count=landing.candidate.gpu_count,
                   release_origin=release_origin, kwargs=work.estimate_kwargs())
        blocks.append(f"```text\n{_text(row)}\n```")
    return "\n\n".join(blocks)


# --- completion -----------------------------------------------------------------------------------
_WORD = re.compile(r"[A-Za-z0-9_.\-]")


def _word_start(text: str, offset: int) -> int:
    start = offset
    while start > 0 and _WORD.match(text[start - 1]):
        start -= 1
    return start


def completion(world: World, shown: str, text: str, offset: int, encoding: str) -> list[types.CompletionItem]:
    """Flag names of the workload's release (the cursor on a word starting with `-`), or the values of the
    option whose value is under the cursor (`--dtype=|`, or the word after `--dtype`)."""
    spot = spot_at(world, shown, offset)
    if spot is None:
        # A word being typed that is not a token yet (`- -` is a nested list in YAML until the second `-`):
        # flags of the invocation it continues.
        invocation = _continued_invocation(world, shown, text, offset)
        if invocation is None:
            return []
        spot = Spot(invocation, invocation.anchor)
    index = LineIndex(text, encoding)
    catalog = spot.invocation.catalog
    if spot.is_value:
        spec = spot.spec
        values = (spec.choices or spec.known_values) if spec is not None else None
        if not values:
            return []
        start = offset
        while start > 0 and text[start - 1] not in "= \t\n'\"[,":
            start -= 1
        end = offset
        while end < len(text) and _WORD.match(text[end]):
            end += 1
        edit_range = lsp_range(index, start, end)
        return [types.CompletionItem(label=str(v), kind=types.CompletionItemKind.EnumMember,
                                     detail=f"{spec.canonical_flag} in vLLM {catalog.version}",  # type: ignore[union-attr]
                                     text_edit=types.TextEdit(edit_range, str(v)), sort_text=f"{i:04d}")
                for i, v in enumerate(values)]
    start = _word_start(text, offset)
    word = text[start:offset]
    if not word.startswith("-"):
        return []
    end = offset
    while end < len(text) and _WORD.match(text[end]):
        end += 1
    edit_range = lsp_range(index, start, end)
    items = []
    for option in sorted(catalog.options.values(), key=lambda o: o.name):
        if option.positional or option.name == "help":
            continue
        for flag in option.flags:
            if not flag.startswith("--"):
                continue
            kind = option.type if option.takes_value else "switch"
            default = f", default {option.default}" if option.default is not None else ""
            items.append(types.CompletionItem(
                label=flag, kind=types.CompletionItemKind.Property,
                detail=f"{kind}{default} (vLLM {catalog.version})",
                documentation=types.MarkupContent(types.MarkupKind.Markdown, option.help) if option.help else None,
                tags=[types.CompletionItemTag.Deprecated] if option.deprecated else None,
                text_edit=types.TextEdit(edit_range, flag), filter_text=flag))
    return items


def _continued_invocation(world: World, shown: str, text: str, offset: int) -> Invocation | None:
    """The invocation of this file whose arguments surround `offset`, or end at most a line above it."""
    best = None
    for invocation in world.invocations:
        tokens = [t for t in invocation.tokens if t.source is not None and t.source.display_path == shown]
        if not tokens:
            continue
        first, last = min(t.start for t in tokens), max(t.end for t in tokens)
        if first <= offset <= last or (last <= offset and text.count("\n", last, offset) <= 1):
            if best is None or last > best[0]:
                best = (last, invocation)
    return best[1] if best is not None else None
