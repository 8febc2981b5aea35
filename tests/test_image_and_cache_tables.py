"""data/image-entrypoints.yaml, data/caches.yaml and data/accelerators.yaml: schema-valid, patterns that compile,
and the lookups VL703/VL704 rely on answering what the sources say."""
import json
import re

import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.vllm.caches import caches, compile_off_by_default
from vllmlint.vllm.images import parse_image
from vllmlint.vllm.images import image_build, image_builds
from vllmlint.vllm.invocation import image_entry


@pytest.mark.parametrize("data, schema", [("image-entrypoints.yaml", "image-entrypoints.schema.json"),
                                          ("caches.yaml", "caches.schema.json"),
                                          ("accelerators.yaml", "accelerators.schema.json"),
                                          ("image-variants.yaml", "image-variants.schema.json")])
def test_matches_schema(data, schema):
    import jsonschema

    document = json.loads((schemas_dir() / schema).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(document)
    errors = [e.message for e in jsonschema.Draft202012Validator(document).iter_errors(
        load_yaml_data(knowledge_dir() / data))]
    assert errors == []


def test_patterns_compile():
    table = load_yaml_data(knowledge_dir() / "image-entrypoints.yaml")
    for row in table["images"] + table["builds"]:
        re.compile(row["repository"])
        re.compile(row.get("tag", ""))
    markers = load_yaml_data(knowledge_dir() / "accelerators.yaml")
    for key in ("resources", "annotations", "scheduler_names"):
        for row in markers[key]:
            re.compile(row["pattern"])


@pytest.mark.parametrize("image, accelerator, home_1000", [
    ("vllm/vllm-openai:v0.9.2", "cuda", "/"),
    ("vllm/vllm-openai:v0.27.0", "cuda", "/"),
    ("vllm/vllm-openai:v0.28.0", "cuda", "/home/ubuntu"),
    ("vllm/vllm-openai:latest", "cuda", "/home/ubuntu"),
    ("vllm/vllm-openai:v0.19.0-ubuntu2404", "cuda", "/home/ubuntu"),
    ("vllm/vllm-openai:v0.26.0-x86_64-cu129-ubuntu2404", "cuda", "/home/ubuntu"),
    ("vllm/vllm-openai:v0.14.1-rocm", "rocm", None),
    ("vllm/vllm-openai-cpu:v0.29.0-arm64", "cpu", "/"),
    ("vllm/vllm-tpu:nightly", "tpu", None),
])
def test_builds(image, accelerator, home_1000):
    build = image_build(parse_image(image))
    assert build is not None and build.accelerator == accelerator
    assert build.home(1000) == home_1000


def test_users_from_the_dockerfiles():
    old, new = image_build(parse_image("vllm/vllm-openai:v0.21.0")), image_build(parse_image("vllm/vllm-openai:v0.22.0"))
    assert old is not None and new is not None
    assert old.user == new.user == 0 and old.home(0) == "/root"
    assert old.home(2000) == "/" and new.home(2000) == "/home/vllm"
    assert new.home(65534) == "/nonexistent" and new.home(33) is None  # a system account: not judged


def test_a_digest_may_be_any_release():
    builds = image_builds(parse_image("vllm/vllm-openai@sha256:" + "a" * 64))
    assert sorted({b.home(1000) for b in builds}) == ["/", "/home/ubuntu"]
    assert len(image_builds(parse_image("vllm/vllm-openai:v0.29.0@sha256:" + "a" * 64))) == 1


def test_entrypoint_lookup_unchanged():
    assert image_entry(parse_image("vllm/vllm-openai:v0.9.2"))["positional_arg"] == "rejected"
    assert image_entry(parse_image("vllm/vllm-openai:v0.26.0-ubuntu2404"))["entrypoint"] == ["vllm", "serve"]


def test_cache_locations():
    by_id = {c.id: c for c in caches()}
    hub = by_id["hf-hub"]
    assert hub.directory({}, "/root") == ("/root/.cache/huggingface/hub", "HOME")
    assert hub.directory({"XDG_CACHE_HOME": "/c"}, "/root") == ("/c/huggingface/hub", "XDG_CACHE_HOME")
    assert hub.directory({"HF_HOME": "/h", "XDG_CACHE_HOME": "/c"}, "/") == ("/h/hub", "HF_HOME")
    assert hub.directory({"HF_HUB_CACHE": "/x", "HF_HOME": "/h"}, "/") == ("/x", "HF_HUB_CACHE")
    assert hub.directory({"HF_HOME": ""}, "/") is None  # set, value unknown
    assert by_id["vllm-cache-root"].directory({"XDG_CACHE_HOME": "/c"}, "/") == ("/c/vllm", "XDG_CACHE_HOME")
    assert by_id["flashinfer-jit"].directory({"XDG_CACHE_HOME": "/c"}, "/home/u") == ("/home/u/.cache/flashinfer", "HOME")
    assert by_id["vllm-cache-root"].applies("0.8.0") and not by_id["vllm-cache-root"].applies("0.7.3")


def test_compile_off_by_default():
    assert compile_off_by_default("0.28.0") is None
    off = compile_off_by_default("0.29.0")
    assert off is not None and "DeepseekV32ForCausalLM" in off and "Qwen3ForCausalLM" not in off


def test_vl704_markers_match_what_their_rows_match():
    """VL704 compiles each list of data/accelerators.yaml as one alternation: it matches a name exactly when one
    of the list's rows does (no row may carry a flag that only holds alone)."""
    from vllmlint.checks.vl704_no_gpu_requested import _markers

    markers = load_yaml_data(knowledge_dir() / "accelerators.yaml")
    names = ["nvidia.com/gpu", "nvidia.com/mig-1g.5gb", "amd.com/gpu", "gpu.intel.com/i915", "google.com/tpu",
             "aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "aws.amazon.com/neuronx", "habana.ai/gaudi",
             "volcano.sh/vgpu-number", "hami.io/gpu", "example.com/fpga", "requests.nvidia.com/gpu",
             "cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "node.kubernetes.io/x", "gpu-fraction",
             "gpu-memory", "run.ai/x", "scheduler.run.ai/x", "nvidia.com/use-gputype", "volcano", "kai-scheduler",
             "default-scheduler", ""]
    for combined, key in zip(_markers(), ("resources", "annotations", "scheduler_names"), strict=True):
        rows = [re.compile(row["pattern"]) for row in markers[key]]
        for name in names:
            assert bool(combined.fullmatch(name)) == any(p.fullmatch(name) for p in rows), (key, name)
