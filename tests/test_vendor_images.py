"""Vendor builds of vLLM (issue 9, "Images and entrypoints"): data/image-entrypoints.yaml's vendor rows
(entrypoints from their Dockerfiles), `tag_releases` (the upstream release a fork's tag names, plugin values)
and `assumed_entrypoint` (args of an unlisted image whose repository name contains `vllm`)."""
from __future__ import annotations

import pytest

from conftest import FIXTURES
from vllmlint.engine import LintOptions, Linter, lint_paths
from vllmlint.vllm.images import assumed_entrypoint, image_build, parse_image, tag_release
from vllmlint.vllm.invocation import OPENAI_API_SERVER, SERVE, image_entrypoint


def _lint(text: str, select: list[str]):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "deploy.yaml"
        path.write_text(text)
        result, _ = lint_paths([str(path)], LintOptions(select=select))
    return result


def _world(text: str):
    linter = Linter()
    linter.add_text(text, "deploy.yaml")
    return linter.build(), linter.result


def _deployment(image: str, args: str = "", command: str = "") -> str:
    lines = ["apiVersion: apps/v1", "kind: Deployment", "metadata: {name: vllm}", "spec:", "  template:",
             "    spec:", "      containers:", "        - name: vllm", f"          image: {image}"]
    if command:
        lines.append(f"          command: {command}")
    if args:
        lines.append(f"          args: {args}")
    return "\n".join(lines) + "\n"


# --- the table ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("image, entry", [
    ("opea/vllm-gaudi:latest", ["python3", "-m", "vllm.entrypoints.openai.api_server"]),
    ("opea/vllm:1.2", ["python3", "-m", "vllm.entrypoints.openai.api_server"]),
    ("opea/vllm-rocm:latest", ["python3", "/workspace/api_server.py"]),
    ("opea/vllm-openvino:latest", []),
    ("vllm/vllm-tpu:nightly", []),
    ("quay.io/ascend/vllm-ascend:v0.9.1rc1", []),
    ("aibrix/vllm-openai:v0.7.3.self.post1", []),
    ("aibrix/vllm-openai:v0.10.2-aibrix-v0.5.0-nixl-0.7.1-20251123", None),  # entrypoint not verified
    ("rocm/vllm:rocm6.3.1_instinct_vllm0.8.3_20250410", []),  # ROCm/vllm Dockerfile.rocm: CMD bash, no ENTRYPOINT
    ("public.ecr.aws/deep-learning-containers/vllm:0.13-gpu-py312-ec2", ["/usr/local/bin/dockerd_entrypoint.sh"]),
    ("1234.dkr.ecr.us-west-2.amazonaws.com/ecr-public/deep-learning-containers/vllm:0.27.1-gpu-py312-ec2",
     ["/usr/local/bin/dockerd_entrypoint.sh"]),
    ("public.ecr.aws/deep-learning-containers/vllm:0.27.1-gpu-py312", None),  # SageMaker: another script
    ("quay.io/rh-aiservices-bu/vllm-openai-ubi9:0.4.2", ["python3", "-m", "vllm.entrypoints.openai.api_server"]),
])
def test_vendor_entrypoints(image, entry):
    ref = parse_image(image)
    assert ref is not None
    assert image_entrypoint(ref) == entry


@pytest.mark.parametrize("image, release, fork", [
    ("aibrix/vllm-openai:v0.7.3.self.post1", "0.7.3", "AIBrix"),
    ("aibrix/vllm-openai:v0.10.2-aibrix-v0.5.0-nixl-0.7.1-20251123", "0.10.2", "AIBrix"),
    ("quay.io/ascend/vllm-ascend:v0.9.1rc1", "0.9.1", "Ascend"),
    ("quay.io/ascend/vllm-ascend:v0.11.0rc0-a3", "0.11.0", "Ascend"),
    ("quay.io/ascend/vllm-ascend:v0.7.3.post1", "0.7.3", "Ascend"),
    ("rocm/vllm:rocm6.3.1_instinct_vllm0.8.3_20250410", "0.8.3", "ROCm"),
    ("rocm/vllm:rocm6.3.1_mi300_ubuntu22.04_py3.12_vllm_0.6.6", "0.6.6", "ROCm"),
    ("public.ecr.aws/deep-learning-containers/vllm:0.13-gpu-py312-ec2", "0.13", "AWS"),
    ("public.ecr.aws/deep-learning-containers/vllm:0.27.1-gpu-py312", "0.27.1", "AWS"),
])
def test_fork_tags_name_their_base_release(image, release, fork):
    ref = parse_image(image)
    assert ref is not None
    found = tag_release(ref)
    assert found is not None and found.release == release and fork in found.fork


@pytest.mark.parametrize("image", ["aibrix/vllm-openai:latest", "quay.io/ascend/vllm-ascend:main",
                                   "opea/vllm-gaudi:1.2", "rocm/vllm-dev:nightly", "lmcache/vllm-openai:v0.1.0"])
def test_tags_that_name_no_release(image):
    ref = parse_image(image)
    assert ref is not None and tag_release(ref) is None


@pytest.mark.parametrize("image, accelerator", [("opea/vllm:latest", "cpu"), ("opea/vllm-rocm:latest", "rocm"),
                                                ("quay.io/ascend/vllm-ascend:v0.9.1", "npu"),
                                                ("opea/vllm-gaudi:latest", "hpu")])
def test_vendor_accelerators(image, accelerator):
    ref = parse_image(image)
    assert ref is not None
    build = image_build(ref)
    assert build is not None and build.accelerator == accelerator


@pytest.mark.parametrize("image, assumed", [
    ("quay.io/rh-aiservices-bu/vllm-openai-ubi9:0.4.2", True),
    ("REGISTRY_PLACEHOLDER/ecr-public/deep-learning-containers/vllm:0.13-gpu-py312-ec2", True),
    ("nvcr.io/nvidia/vllm:25.09-py3", True),
    ("aibrix/vllm-mock:nightly", False),  # AIBrix's mock of the API, not vLLM
    ("quay.io/example/llm-server:1.2", False),
])
def test_assumed_entrypoint_needs_vllm_in_the_repository(image, assumed):
    ref = parse_image(image)
    assert ref is not None
    assert (assumed_entrypoint(ref) is not None) is assumed


# --- invocations -------------------------------------------------------------------------------------------
def test_gaudi_fork_args_run_its_api_server_and_the_note_names_the_fork():
    world, result = _world((FIXTURES / "own" / "opea-vllm-gaudi.yaml").read_text())
    [invocation] = world.invocations
    assert invocation.kind == OPENAI_API_SERVER and not invocation.entrypoint_assumed
    assert invocation.fork is not None and "Gaudi" in invocation.fork
    assert invocation.release is None and invocation.assumed
    assert any("Intel Gaudi fork" in n.message for n in result.notices)


def test_fixture_gaudi_removed_flag():
    result, _ = lint_paths([str(FIXTURES / "own" / "opea-vllm-gaudi.yaml")], LintOptions(select=["VL102"]))
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL102", 29, 15, "error")]


def test_fixture_unlisted_vllm_image_args_checked_with_one_note():
    path = FIXTURES / "own" / "args-only-unlisted-vllm-image.yaml"
    result, _ = lint_paths([str(path)], LintOptions(select=["VL102"]))
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL102", 21, 67, "error")]
    world, built = _world(path.read_text())
    notes = [n for n in built.notices if "not in vllmlint's image table" in n.message]
    assert len(notes) == 1 and notes[0].line == 21 and "vllm-openai-ubi9:1.2" in notes[0].message
    assert [i.image.raw for i in world.invocations if i.image is not None] == ["quay.io/example/vllm-openai-ubi9:1.2"]
    assert world.invocations[0].entrypoint_assumed and world.invocations[0].kind == OPENAI_API_SERVER


def test_fixture_ascend_fork_release_and_plugin_value():
    path = FIXTURES / "own" / "vllm-ascend.yaml"
    result, _ = lint_paths([str(path)], LintOptions(select=["VL102", "VL106"]))
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL102", 22, 21, "error")]  # `--quantization ascend` (line 21) is the plugin's: not reported
    assert "vLLM Ascend" in result.findings[0].message and "runs 0.11.0" in result.findings[0].message


def test_fixture_aibrix_rebuild_runs_its_base_release():
    path = FIXTURES / "own" / "aibrix-vllm-openai.yaml"
    result, _ = lint_paths([str(path)], LintOptions(select=["VL105"]))
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL105", 21, 96, "error")]
    assert "vLLM 0.7.3" in result.findings[0].message and "AIBrix" in result.findings[0].message


# one-line catches / does-not-catch (hadolint style)
def test_catches_removed_flag_in_args_of_unlisted_vllm_image():
    result = _lint(_deployment("registry.example.com/ml/vllm-custom:2.0", '["--model", "m", "--swap-space", "4"]'),
                   ["VL102"])
    assert [(f.span.line, f.span.col) for f in result.findings] == [(10, 34)]


def test_does_not_catch_args_of_an_image_without_vllm_in_its_name():
    result = _lint(_deployment("registry.example.com/ml/server:2.0", '["--model", "m", "--swap-space", "4"]'),
                   ["VL102"])
    assert result.findings == []


def test_does_not_catch_unlisted_image_whose_args_start_with_a_word():
    # `args: [serve, ...]` or a script: what runs depends on an entrypoint nobody verified.
    result = _lint(_deployment("registry.example.com/ml/vllm-custom:2.0", '["serve", "m", "--swap-space", "4"]'),
                   ["VL102"])
    assert result.findings == []


def test_does_not_catch_args_on_an_image_without_entrypoint():
    # vllm/vllm-tpu runs its args as the command (tpu-inference entrypoint.sh `exec "$@"`): `--model` is no
    # vLLM invocation there.
    world, _ = _world(_deployment("vllm/vllm-tpu:nightly", '["--model", "m", "--swap-space", "4"]'))
    assert world.invocations == []


def test_catches_args_that_are_the_command_on_an_image_without_entrypoint():
    result = _lint(_deployment("vllm/vllm-tpu:nightly", '["vllm", "serve", "m", "--swap-space", "4"]'), ["VL102"])
    assert [(f.span.line, f.span.col) for f in result.findings] == [(10, 40)]


def test_does_not_catch_plugin_value_but_catches_other_invalid_value():
    ok = _lint(_deployment("quay.io/ascend/vllm-ascend:v0.11.0rc0", command='["vllm", "serve", "m", "--quantization", '
                           '"ascend"]'), ["VL106"])
    assert ok.findings == []
    upstream = _lint(_deployment("vllm/vllm-openai:v0.11.0", '["m", "--quantization", "ascend"]'), ["VL106"])
    assert [(f.code, f.span.line) for f in upstream.findings] == [("VL106", 10)]


def test_opea_rocm_copied_api_server_is_the_openai_server():
    world, _ = _world(_deployment("opea/vllm-rocm:latest", '["--model", "m", "--port", "8011"]'))
    [invocation] = world.invocations
    assert invocation.kind == OPENAI_API_SERVER and invocation.api_port == 8011
    assert [t.text for t in invocation.entry] == ["python3", "/workspace/api_server.py"]


def test_compose_command_on_unlisted_vllm_image():
    compose = ("services:\n  llm:\n    image: registry.example.com/ml/vllm-custom:2.0\n"
               "    command: --model m --swap-space 4\n")
    linter = Linter()
    linter.add_text(compose, "compose.yaml")
    world = linter.build()
    assert len(world.invocations) == 1 and world.invocations[0].entrypoint_assumed


@pytest.mark.parametrize("tag, kind", [("0.13-gpu-py312-ec2", OPENAI_API_SERVER), ("0.27.1-gpu-py312-ec2", SERVE)])
def test_aws_dlc_entrypoint_script_by_release(tag, kind):
    # dockerd_entrypoint.sh ran the api_server module until the 0.22.1rc0 update, `vllm serve "$@"` since.
    world, _ = _world(_deployment(f"public.ecr.aws/deep-learning-containers/vllm:{tag}", '["--model", "m"]'))
    [invocation] = world.invocations
    assert invocation.kind == kind and not invocation.entrypoint_assumed
    assert invocation.fork is not None and "AWS" in invocation.fork


def test_catches_removed_flag_on_aws_dlc_against_its_release():
    result = _lint(_deployment("public.ecr.aws/deep-learning-containers/vllm:0.13-gpu-py312-ec2",
                               '["--model", "m", "--max-seq-len-to-capture", "8192"]'), ["VL102"])
    assert [(f.span.line, f.span.col) for f in result.findings] == [(10, 34)]
    assert "runs 0.13" in result.findings[0].message and "AWS Deep Learning Container" in result.findings[0].message


def test_catches_vendor_cuda_build_on_gaudi():
    # VL607 reads the accelerator of vendor builds from the image table: AWS's -gpu- DLC is a CUDA build.
    text = _deployment("public.ecr.aws/deep-learning-containers/vllm:0.13-gpu-py312-ec2", '["--model", "m"]') + \
        "          resources: {limits: {habana.ai/gaudi: 1}}\n"
    result = _lint(text, ["VL607"])
    assert [(f.span.line, f.span.col, f.severity.label) for f in result.findings] == [(9, 18, "error")]
    assert "a CUDA build of vLLM" in result.findings[0].message


def test_does_not_catch_gaudi_build_on_gaudi():
    text = _deployment("opea/vllm-gaudi:latest", '["--model", "m"]') + \
        "          resources: {limits: {habana.ai/gaudi: 1}}\n"
    assert _lint(text, ["VL607"]).findings == []


# --- issue 9, the last vendor families (data/image-entrypoints.yaml, read 2026-12-01) -------------------------
def _findings(text: str, select: list[str]):
    return [(f.code, f.span.line, f.span.col, f.severity.label) for f in _lint(text, select).findings]


@pytest.mark.parametrize("image, entry", [
    ("rocm/vllm:rocm7.12.0_gfx950-dcgpu_ubuntu24.04_py3.12_pytorch_2.9.1_vllm_0.16.0", []),
    ("nvcr.io/nvidia/vllm:26.05-py3", []),
    ("ghcr.io/llm-d/llm-d:0.0.8", ["python3", "-m", "vllm.entrypoints.openai.api_server"]),
    ("ghcr.io/llm-d/llm-d:v0.3.0", None),  # a later Dockerfile, not read
    ("registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.0.0", None),  # read through assumed_entrypoint
    ("public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py311-sdk2.26.0-ubuntu22.04", None),
])
def test_more_vendor_entrypoints(image, entry):
    assert image_entrypoint(parse_image(image)) == entry


@pytest.mark.parametrize("image, release", [
    ("rayproject/ray-llm:2.56.0-py312-cu130", "0.22.0"),
    ("rayproject/ray-llm:2.60.0-py312-cu130", "0.29.0"),
    ("rayproject/ray-llm:2.53.0-extra-py311-cu128", None),  # ray[llm] 2.53.0 gives a minimum only
    ("rayproject/ray-llm:2.99.0-py312-cu130", None),  # not in the table
    ("nvcr.io/nvidia/vllm:25.10-py3", "0.10.2"),
    ("nvcr.io/nvidia/vllm:26.10-py3", "0.31.0"),
    ("nvcr.io/nvidia/vllm:26.04-py3", None),  # release notes not read
    ("registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.0.0", "0.8.4"),
    ("registry.redhat.io/rhaiis/vllm-rocm-rhel9:3.0.1", "0.8.4"),
    ("registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.2.5", None),
    ("quay.io/rh-aiservices-bu/vllm-openai-ubi9:0.4.0.post1", "0.4.0.post1"),
    ("quay.io/rh-aiservices-bu/vllm-openai-ubi9:0.3.1", None),  # a `~=` pin: no one release
    ("rocm/vllm-dev:rocm6.4.2_navi_ubuntu24.04_py3.12_pytorch_2.7_vllm_0.9.2", "0.9.2"),
    ("public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.24.0.1.1.0-neuronx-py313-sdk2.32.0-ubuntu24.04",
     "0.24.0"),
    ("us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers/pytorch-vllm-serve:20250801_0916_RC01", None),
    ("ghcr.io/llm-d/llm-d:0.0.8", None),
])
def test_vendor_tag_releases(image, release):
    found = tag_release(parse_image(image))
    assert (found.release if found is not None else None) == release


@pytest.mark.parametrize("image, accelerator", [
    ("nvcr.io/nvidia/vllm:26.05-py3", "cuda"),
    ("registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.0.0", "cuda"),
    ("registry.redhat.io/rhaiis/vllm-rocm-rhel9:3.0.0", "rocm"),
    ("quay.io/rh-aiservices-bu/vllm-openai-ubi9:0.4.2", "cuda"),
    ("vault.habana.ai/gaudi-docker/1.23.0/ubuntu22.04/habanalabs/vllm-installer-2.9.0:latest", "hpu"),
    ("rayproject/ray-llm:2.56.0-py312-cu130", "cuda"),
    ("ghcr.io/llm-d/llm-d:0.0.8", "cuda"),
])
def test_more_vendor_accelerators(image, accelerator):
    build = image_build(parse_image(image))
    assert build is not None and build.accelerator == accelerator


def test_ray_llm_image_release_checks_engine_kwargs():
    # Ray 2.56.0 pins vllm[audio]==0.22.0: max_seq_len_to_capture (removed in 0.11.0) is checked against it.
    text = (FIXTURES / "own" / "rayservice-llm.yaml").read_text().replace("rayproject/ray-llm:2.46.0-py311-cu124",
                                                                         "rayproject/ray-llm:2.56.0-py312-cu130")
    result = _lint(text, ["VL102"])
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL102", 24, 17, "error")]
    assert "runs 0.22.0" in result.findings[0].message and "ray-llm" in result.findings[0].message
    world, _ = _world(text)
    assert [(i.release, i.release_origin) for i in world.invocations] == [
        ("0.22.0", "image tag rayproject/ray-llm:2.56.0-py312-cu130, based on vLLM 0.22.0")]


def test_ray_llm_minimum_only_release_stays_unknown():
    world, _ = _world((FIXTURES / "own" / "rayservice-llm.yaml").read_text())  # 2.46.0: vllm>=0.8.5 only
    assert [i.release for i in world.invocations] == [None]


def test_ngc_container_release_checks_its_vllm():
    text = _deployment("nvcr.io/nvidia/vllm:25.10-py3", command='["vllm", "serve", "m", "--num-scheduler-steps", "8"]')
    assert _findings(text, ["VL102"]) == [("VL102", 10, 43, "error")]  # removed in 0.10.1; 25.10 has 0.10.2
    assert "NGC" in _lint(text, ["VL102"]).findings[0].message


def test_ngc_args_are_the_whole_command():
    world, _ = _world(_deployment("nvcr.io/nvidia/vllm:25.10-py3", '["--model", "m"]'))
    assert world.invocations == []


def test_rocm_vllm_tag_release_and_no_entrypoint():
    image = "rocm/vllm:rocm7.12.0_gfx950-dcgpu_ubuntu24.04_py3.12_pytorch_2.9.1_vllm_0.16.0"
    text = _deployment(image, command='["vllm", "serve", "m", "--num-scheduler-steps", "8"]')
    assert _findings(text, ["VL102"]) == [("VL102", 10, 43, "error")]
    world, _ = _world(_deployment(image, '["--model", "m"]'))
    assert world.invocations == []  # `args` are the command: `--model` is no program


def test_red_hat_inference_server_3_0_is_vllm_0_8_4():
    # Red Hat documents `podman run IMAGE --model ...`: args read as the OpenAI server's, against vLLM 0.8.4.
    text = _deployment("registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.0.0",
                       '["--model", "m", "--data-parallel-size-local", "1"]')
    assert _findings(text, ["VL105"]) == [("VL105", 10, 34, "warning")]
    assert "0.8.4" in _lint(text, ["VL105"]).findings[0].message


def test_red_hat_ubi9_image_runs_the_api_server_of_its_tag():
    world, result = _world(_deployment("quay.io/rh-aiservices-bu/vllm-openai-ubi9:0.4.2", '["--model", "m"]'))
    [invocation] = world.invocations
    assert invocation.kind == OPENAI_API_SERVER and not invocation.entrypoint_assumed
    assert invocation.release == "0.4.2"  # older than the catalogs: a neighbour stands in, with a note
    assert any("vLLM 0.4.2 is not among the releases" in n.message for n in result.notices)


def test_neuron_dlc_tag_names_its_vllm():
    text = _deployment("public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py311-sdk2.26.0-ubuntu22.04",
                       command='["vllm", "serve", "m", "--async-scheduling"]')
    assert _findings(text, ["VL105"]) == [("VL105", 10, 43, "warning")]  # --async-scheduling is newer than 0.9.1
    assert "AWS Neuron" in _lint(text, ["VL105"]).findings[0].message


def test_llm_d_early_image_args_run_its_api_server():
    text = _deployment("ghcr.io/llm-d/llm-d:0.0.8", '["--model", "m", "--swap-space", "4"]')
    world, _ = _world(text)
    [invocation] = world.invocations
    assert invocation.kind == OPENAI_API_SERVER and not invocation.entrypoint_assumed and invocation.release is None
    assert _findings(text, ["VL102"]) == [("VL102", 10, 34, "error")]  # newest release assumed: --swap-space gone


def test_gaudi_vault_launcher_args_are_no_vllm_flags():
    image = "vault.habana.ai/gaudi-docker/1.23.0/ubuntu22.04/habanalabs/vllm-installer-2.9.0:latest"
    for args in ('["server", "--config-file", "c.yaml"]', '["--model", "m", "--swap-space", "4"]'):
        world, _ = _world(_deployment(image, args))
        assert world.invocations == []  # entrypoint_main's argv is a mode and config options


def test_vertex_image_release_unknown_command_checked():
    text = _deployment("us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers/pytorch-vllm-serve:"
                       "20250801_0916_RC01", '["--model=/models/m", "--swap-space=4"]',
                       command='["python3", "-m", "vllm.entrypoints.api_server"]')
    world, _ = _world(text)
    assert [i.release for i in world.invocations] == [None]  # date tags: the newest release is assumed
    assert _findings(text, ["VL101", "VL102"]) == [("VL101", 10, 38, "warning"), ("VL102", 11, 39, "error")]
