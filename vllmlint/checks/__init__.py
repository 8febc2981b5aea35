"""Rule checks: one module per rule, named after its YAML (`VL101-deprecated-entrypoint.yaml` ->
`vl101_deprecated_entrypoint.py`), each with one function `check(ctx)` that yields findings.

Checks read the model (`ctx.world`: objects, pod templates, containers, vLLM invocations, shell
commands) and never parse YAML or shell themselves; `ctx.finding(...)` turns a node or token into a
positioned finding.

The contract: a check never reads a file's text (`source.text`, `SourceFile.line_text()`, slices of
it). Text search finds what the model would not call real: a `# TODO: ray start` comment looked like a
Ray head to VL108 and silenced it. What a check needs from a file is in the model: a scalar's `text`
and positions, an invocation's tokens, `world.shell_commands` for every command that runs. When the
model lacks something, add it to the model (source/, k8s/, vllm/), not a text search to the check.
`tests/test_checks_contract.py` enforces this with an AST scan of every module of this package.
"""
from __future__ import annotations

from vllmlint.records import dataclass, field
from typing import TYPE_CHECKING, Callable, TypeVar, Union

from vllmlint.finding import Finding, Positioned, Severity, Span, Subject
from vllmlint.vllm.invocation import Invocation
from vllmlint.k8s.objects import Container, K8sObject, PodTemplate, World
from vllmlint.registry import Rule
from vllmlint.source.yamlmodel import fix_surrogates

if TYPE_CHECKING:
    from vllmlint.fix.edits import Fix

# What a finding is about (for its subject): an invocation, a container, a pod template, an object, or None.
About = Union[Invocation, Container, PodTemplate, K8sObject, None]

T = TypeVar("T")


@dataclass
class Context:
    world: World
    rule: Rule
    severity: Severity  # the rule's severity for this run (after overrides)
    fix_errors: list[str] = field(default_factory=list)  # fix builders that failed (the engine reports them)

    def build_fix(self, builder: Callable[..., T], *args) -> T | None:
        """`builder(*args)`: a fix (or whatever the builder returns). A builder that raises costs the fix
        (None), never the finding, and the engine reports it as an internal error naming the rule (exit 2)."""
        try:
            return builder(*args)
        except Exception:  # a bug of ours in a fix builder: the finding stands, the run says so
            import traceback  # only a failing fix builder needs it

            detail = traceback.format_exc(limit=-2).strip().splitlines()
            self.fix_errors.append(f"{getattr(builder, '__name__', 'fix')}: {detail[-1]}")
            return None

    def lazy_fix(self, builder: Callable[..., Fix | None], *args) -> PendingFix:
        """`builder(*args)`, called only if the finding is shown and the output or `--fix` uses fixes (the
        engine resolves it at the end of the run, `engine.resolve_fixes`); errors are reported as build_fix's."""
        return PendingFix(builder, args)

    def finding(self, where: Positioned, message: str, *, about: About = None, value: str = "",
                severity: Severity | None = None, fix: Fix | PendingFix | None = None) -> Finding | None:
        """A finding at a YAML node or an argv token; `about` is the object, pod or container concerned."""
        source = where.source
        if source is None:
            return None  # a synthetic token (an image's entrypoint) has no place in any file
        span: Span = source.span(where.start, where.end)
        if fix is not None and _is_dockerfile(source.path):
            fix = None  # the fix edits write YAML and shell text: none is built for a Dockerfile's words
        if fix is not None and isinstance(about, Invocation) and _release_guessed(about):
            fix = _unsafe(fix)  # judged against an assumed release: the one that runs may accept what it drops
        if not (message.isascii() and value.isascii()):
            # A check may quote what it decoded itself (VL106 reads JSON flag values, where `"\ud83e"` is
            # a lone surrogate): no encoding can write one, so JSON, SARIF and fingerprints would fail.
            message, value = fix_surrogates(message), fix_surrogates(value)
        from sys import intern  # one string for the same message (a third of a large run's are repeats)

        return Finding(self.rule.code, severity or self.severity, intern(message), source.display_path, span,
                       subject_of(about), value, fix)  # type: ignore[arg-type]  # a PendingFix until resolved


def _release_guessed(invocation: Invocation) -> bool:
    """The run assumed the newest release (nothing names it: no release tag, annotation or `--vllm-version`) for an
    image that is not vLLM's own: a fork's or a private build, whose release may be any. (vLLM's own image untagged
    or `latest` is the newest release at pull time, and a script runs the vLLM installed: the newest is the guess
    that holds.)"""
    if not invocation.assumed or invocation.image is None:
        return False
    from vllmlint.vllm.release import upstream_image

    return invocation.fork is not None or not upstream_image(invocation.image)


def _unsafe(fix: Fix | PendingFix) -> Fix | PendingFix:
    """The fix, never safe: a fix promises the same behaviour on the release that runs (`Fix.safety`), which a run
    that guessed the release of a fork's or private image cannot promise: the build may still accept the flag a
    safe fix would delete. `--unsafe-fixes` still applies it."""
    if isinstance(fix, PendingFix):
        return PendingFix(_built_unsafe, (fix.builder, *fix.args))
    from vllmlint.fix.edits import UNSAFE
    from vllmlint.records import replace

    return replace(fix, safety=UNSAFE)


def _built_unsafe(builder: Callable, *args) -> Fix | None:
    fix = builder(*args)
    return _unsafe(fix) if fix is not None else None  # type: ignore[return-value]  # a built Fix stays a Fix


def _is_dockerfile(path: str) -> bool:
    from vllmlint.source.files import is_dockerfile

    return is_dockerfile(path.replace("\\", "/").rsplit("/", 1)[-1])


def subject_of(about: About) -> Subject:
    if isinstance(about, Invocation):
        about = about.container if about.container is not None or about.owner is None else about.owner
    if isinstance(about, Container):
        owner = about.pod.owner
        return Subject(owner.kind, owner.namespace, owner.name, about.name)
    if isinstance(about, PodTemplate):
        return Subject(about.owner.kind, about.owner.namespace, about.owner.name)
    if isinstance(about, K8sObject):
        return Subject(about.kind, about.namespace, about.name)
    return Subject()


def describe_workload(invocation: Invocation) -> str:
    container = invocation.container
    if container is None and invocation.owner is None:
        return "this image" if invocation.via == "dockerfile" else "this script"  # vllm.dockerfile.VIA_DOCKERFILE
    owner = container.pod.owner if container is not None else invocation.owner
    kind = "Compose service" if owner.kind == "ComposeService" else owner.kind  # as Compose's own messages say
    name = f"{kind} {owner.name}" if owner.name else kind
    fork = getattr(invocation, "fork", None)
    return f"{name} ({fork})" if fork else name


class PendingFix:
    """A fix not built yet (`Context.lazy_fix`): the builder and its arguments. The engine builds it for the
    findings the user is shown when the run needs fixes, and drops it otherwise; nothing after the engine
    ever sees one."""

    __slots__ = ("builder", "args")

    def __init__(self, builder: Callable, args: tuple):
        self.builder, self.args = builder, args

    def build(self) -> tuple[Fix | None, str | None]:
        """(the fix or None, None) or (None, what failed) when the builder raised (a bug of ours)."""
        try:
            return self.builder(*self.args), None
        except Exception:
            import traceback  # only a failing fix builder needs it

            detail = traceback.format_exc(limit=-2).strip().splitlines()
            return None, f"{getattr(self.builder, '__name__', 'fix')}: {detail[-1]}"
