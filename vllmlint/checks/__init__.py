"""Rule checks: one module per rule, named after its YAML (`VL101-deprecated-entrypoint.yaml` ->
`vl101_deprecated_entrypoint.py`), each with one function `check(ctx)` that yields findings.

Checks read the model (`ctx.world`: objects, pod templates, containers, vLLM invocations) and never
parse YAML or shell themselves; `ctx.finding(...)` turns a node or token into a positioned finding.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from vllmlint.finding import Finding, Positioned, Severity, Span, Subject
from vllmlint.vllm.invocation import Invocation
from vllmlint.k8s.objects import Container, K8sObject, PodTemplate, World
from vllmlint.registry import Rule

if TYPE_CHECKING:
    from vllmlint.fix import Fix

# What a finding is about (for its subject): an invocation, a container, a pod template, an object, or None.
About = Union[Invocation, Container, PodTemplate, K8sObject, None]


@dataclass
class Context:
    world: World
    rule: Rule
    severity: Severity  # the rule's severity for this run (after overrides)

    def finding(self, where: Positioned, message: str, *, about: About = None, value: str = "",
                severity: Severity | None = None, fix: Fix | None = None) -> Finding | None:
        """A finding at a YAML node or an argv token; `about` is the object, pod or container concerned."""
        source = where.source
        if source is None:
            return None  # a synthetic token (an image's entrypoint) has no place in any file
        span: Span = source.span(where.start, where.end)
        return Finding(self.rule.code, severity or self.severity, message, source.display_path, span,
                       subject_of(about), value, fix)


def subject_of(about: About) -> Subject:
    if isinstance(about, Invocation):
        about = about.container
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
    if container is None:
        return "this script"
    owner = container.pod.owner
    return f"{owner.kind} {owner.name}" if owner.name else owner.kind
