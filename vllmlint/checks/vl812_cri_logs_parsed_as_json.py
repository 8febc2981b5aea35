"""VL812: a fluentd `tail` source reads the kubelet's container log files with a JSON parser.

On containerd and CRI-O nodes each line of `/var/log/containers/*.log` is CRI-framed (`<time> <stream> <P|F>
<message>`), so no line is JSON and `@type json` rejects all of them. The fluentd configuration is read from
ConfigMap values with `vllmlint.source.fluentd`; the paths and parser types are this rule's `data`. Only where
the run holds a vLLM workload or the path names vLLM's pods, so that the logs are vLLM's.
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.checks import Context
from vllmlint.finding import Finding
from vllmlint.source.yamlmodel import Mapping, Scalar
from vllmlint.vllm.invocation import Token


def _sources(found):
    """Every `<source>` section, also inside `<label>` blocks."""
    for section in found:
        if section.name == "source":
            yield section
        elif section.name == "label":
            yield from _sources(section.sections)


def check(ctx: Context) -> Iterator[Finding | None]:
    from vllmlint.source.fluentd import sections  # only a ConfigMap that holds a fluentd `<source>` is read

    data = ctx.rule.data if isinstance(ctx.rule.data, dict) else {}
    paths = tuple(data.get("container_log_paths") or ())
    json_types = set(data.get("json_parsers") or ())
    if not paths or not json_types:
        return
    vllm_run = any(i.container is not None for i in ctx.world.invocations)
    for config_map in ctx.world.of_kind("ConfigMap"):
        values = config_map.node.get("data")
        if not isinstance(values, Mapping):
            continue
        for _key, value in values.pairs():
            if not isinstance(value, Scalar) or not isinstance(value.value, str) or "<source>" not in value.text:
                continue
            for source in _sources(sections(value.text)):
                kind, path = source.param("@type"), source.param("path")
                if kind is None or kind.value != "tail" or path is None or not any(p in path.value for p in paths):
                    continue
                if not (vllm_run or "vllm" in path.value.lower()):
                    continue
                parses = [s for s in source.sections if s.name == "parse"]
                parser = parses[-1].param("@type") if parses else source.param("format")
                if parser is None or parser.value.strip("\"'") not in json_types:  # `"#{ENV[...]}"`: not known
                    continue
                where = Token(parser.value, value.source, value.source_index(parser.value_start),
                              value.source_index(parser.end))
                yield ctx.finding(where, f"Parse `{path.value}` with `@type cri` instead of `json`. The cri parser is "
                                  "fluent-plugin-parser-cri; nest `<parse> @type json </parse>` in it for JSON "
                                  "messages. On "
                                  "containerd and CRI-O nodes (every EKS node from Kubernetes 1.24, when dockershim "
                                  "was removed) the kubelet writes each container log line CRI-framed, `<time> "
                                  "<stdout|stderr> <P|F> <message>`, so no line is JSON: the json parser rejects "
                                  "every line (\"pattern not matched\") and the vLLM logs never reach the output. "
                                  "Only nodes on Docker Engine (cri-dockerd) write JSON lines; for a mixed fleet, "
                                  "`@type multi_format` with a cri pattern first.", about=config_map,
                                  value=f"json:{path.value}")
