"""Malformed but parseable manifests are user input: no rule may crash on them (an internal error exits 2)."""
import io
import random

import pytest
from ruamel.yaml import YAML

from conftest import FIXTURES
from vllmlint.engine import lint_text

ODD_VALUES = [5, "x", [], {}, None, [8000], True, {"a": "b"}]
SOURCES = ["original/single-node-deployment.yaml", "original/multi-node-statefulset.yaml",
           "original/karpenter-nodepool.yaml", "original/metrics-service-monitor.yaml", "original/hpa.yaml",
           "audited/benchmark-reproduce.yaml", "audited/single-gpu-deployment.yaml", "own/lws.yaml",
           "own/kserve.yaml", "own/rayservice.yaml", "own/compose.yaml", "own/env-expansion.yaml"]


def _paths(node, prefix=()):
    """Every place in a document: (path, container) pairs."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix + (key,)
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield prefix + (index,)
            yield from _paths(value, prefix + (index,))


def _set(document, path, value):
    target = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


@pytest.mark.parametrize("name", SOURCES)
def test_odd_types_anywhere_never_crash_a_rule(name):
    yaml = YAML(typ="safe", pure=True)
    text = (FIXTURES / name).read_text()
    documents = [d for d in yaml.load_all(text) if d is not None]
    rng = random.Random(name)  # fixed per file: the same cases on every run
    for _ in range(40):
        mutated = [YAML(typ="safe", pure=True).load(io.StringIO(_dump(d))) for d in documents]
        which = rng.randrange(len(mutated))
        places = list(_paths(mutated[which]))
        if not places:
            continue
        path = rng.choice(places)
        value = rng.choice(ODD_VALUES)
        _set(mutated[which], path, value)
        result = lint_text("---\n".join(_dump(d) for d in mutated), "k8s/" + name.rsplit("/", 1)[-1])
        assert not result.internal_error, (name, path, value, [n.message for n in result.notices])


def _dump(document) -> str:
    stream = io.StringIO()
    YAML(typ="safe", pure=True).dump(document, stream)
    return stream.getvalue()
