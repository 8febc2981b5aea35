"""Shell scripts: `docker run`/`podman run "$IMAGE"` with the image set in the same script, and `pip install
vllm==X` / `uv pip install` / a wheel URL pinning the release of the vLLM the script (or container command) starts."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, Linter, lint_paths, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm.release import install_pin

ROOT = Path(__file__).resolve().parent.parent
REMOVED = "--num-scheduler-steps 8"  # removed in vLLM 0.10.1 (accepted by 0.10.0 and older)


def world(text, filename="run.sh"):
    linter = Linter(LintOptions())
    linter.result.files_checked += 1
    linter.add_text(text, filename, Path(filename).suffix)
    return linter.build()


def releases(text, filename="run.sh"):
    return [(i.release, i.release_origin) for i in world(text, filename).invocations]


def found(text, filename="run.sh", codes=("VL102",)):
    result = lint_text(text, filename, LintOptions(select=list(codes)))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.code, f.severity) for f in result.findings]


# --- docker run / podman run with the image in a variable -----------------------------------------------------------
@pytest.mark.parametrize("program", ["docker", "podman", "nerdctl", "sudo docker"])
@pytest.mark.parametrize("word", ['"$IMAGE"', "$IMAGE", '"${IMAGE}"', "${IMAGE}"])
def test_catches_docker_run_of_an_image_the_script_sets(program, word):
    text = f"IMAGE=vllm/vllm-openai:v0.10.1\n{program} run --gpus all -p 8000:8000 {word} --model m {REMOVED}\n"
    line = text.splitlines()[1]
    assert found(text) == [(2, line.index("--num") + 1, "VL102", Severity.ERROR)]
    assert releases(text) == [("0.10.1", "image tag vllm/vllm-openai:v0.10.1, from `IMAGE=vllm/vllm-openai:v0.10.1` "
                                         "on line 1")]


def test_catches_an_image_spelled_from_several_variables_and_export():
    text = (f"export REPO=vllm/vllm-openai\nreadonly TAG=v0.10.1\n"
            f'docker run --gpus all "$REPO:$TAG" --model m {REMOVED}\n')
    assert found(text) == [(3, 46, "VL102", Severity.ERROR)]
    assert releases(text)[0][1] == ("image tag vllm/vllm-openai:v0.10.1, from `REPO=vllm/vllm-openai` on line 1, "
                                    "`TAG=v0.10.1` on line 2")


def test_catches_in_a_markdown_bash_fence_and_in_a_container_script():
    md = f"# Run\n\n```bash\nIMAGE=vllm/vllm-openai:v0.10.1\ndocker run --gpus all \"$IMAGE\" --model m {REMOVED}\n```\n"
    assert found(md, "README.md") == [(5, 42, "VL102", Severity.ERROR)]


@pytest.mark.parametrize("script, why", [
    ('IMAGE=vllm/vllm-openai:v0.10.1\nif x; then IMAGE=vllm/vllm-openai:v0.9.2; fi\ndocker run "$IMAGE" --model m', "set twice"),
    ('IMAGE=${IMAGE:-vllm/vllm-openai:v0.10.1}\ndocker run "$IMAGE" --model m', "from an expansion"),
    ('IMAGE=vllm/vllm-openai:v0.10.1 docker run "$IMAGE" --model m', "a prefix: expanded before it is set"),
    ('docker run "$IMAGE" --model m\nIMAGE=vllm/vllm-openai:v0.10.1', "set below"),
    ('docker run "$IMAGE" --model m', "never set"),
    ('IMAGE=vllm/vllm-openai:v0.10.1\ndocker run "$IMAGE:$TAG" --model m', "one part unknown"),
    ('IMAGE=vllm/vllm-openai:v0.10.1\ndocker run "$(echo $IMAGE)" --model m', "a command substitution"),
])
def test_an_image_variable_the_script_does_not_pin_stays_unknown(script, why):
    assert [r for r, _ in releases(script + f" {REMOVED}\n")] in ([None], []), why
    assert found(script + f" {REMOVED}\n", codes=("VL102",)) == [], why


# --- pip install / uv pip install / a wheel pins the release --------------------------------------------------------
@pytest.mark.parametrize("install, origin", [
    ("pip install vllm==0.10.1", "`pip install vllm==0.10.1` on line 1"),
    ("pip3 install -U 'vllm==0.10.1'", "`pip3 install vllm==0.10.1` on line 1"),
    ('pip install "vllm[audio]==0.10.1" --extra-index-url https://download.pytorch.org/whl/cu128',
     "`pip install vllm[audio]==0.10.1` on line 1"),
    ("python3 -m pip install vllm==0.10.1", "`python3 -m pip install vllm==0.10.1` on line 1"),
    ("uv pip install --system vllm==0.10.1 --torch-backend=auto", "`uv pip install vllm==0.10.1` on line 1"),
    ("uv pip install https://github.com/vllm-project/vllm/releases/download/v0.10.1/"
     "vllm-0.10.1+cu118-cp38-abi3-manylinux1_x86_64.whl",
     "`uv pip install vllm-0.10.1+cu118-cp38-abi3-manylinux1_x86_64.whl` on line 1"),
    ("pip install ./dist/vllm-0.10.1-cp38-abi3-manylinux1_x86_64.whl",
     "`pip install vllm-0.10.1-cp38-abi3-manylinux1_x86_64.whl` on line 1"),
])
def test_catches_a_release_the_script_installs(install, origin):
    text = f"{install}\nvllm serve m {REMOVED}\n"
    assert found(text) == [(2, 14, "VL102", Severity.ERROR)]
    assert releases(text) == [("0.10.1", origin)]


def test_the_wheel_url_of_vllms_install_docs_with_its_variables():
    # docs/getting_started/installation/gpu/cuda.inc.md (v0.10.0) spells the URL with `${VLLM_VERSION}`.
    text = ("export VLLM_VERSION=0.10.1.1\nexport PYTHON_VERSION=38\nuv pip install https://github.com/vllm-project/"
            "vllm/releases/download/v${VLLM_VERSION}/vllm-${VLLM_VERSION}+cu118-cp${PYTHON_VERSION}-abi3-"
            f"manylinux1_x86_64.whl\nvllm serve m {REMOVED}\n")
    assert found(text) == [(4, 14, "VL102", Severity.ERROR)]
    assert releases(text)[0][0] == "0.10.1.1"


def test_an_install_in_the_container_command_wins_over_the_image_tag():
    pod = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: vllm/vllm-openai:v0.9.2
    command: [sh, -c, "pip install vllm==0.10.1 && vllm serve m --num-scheduler-steps 8"]
"""
    assert found(pod, "pod.yaml") == [(8, 65, "VL102", Severity.ERROR)]
    assert releases(pod, "pod.yaml") == [("0.10.1", "`pip install vllm==0.10.1` on line 8")]


def test_catches_a_pin_in_a_markdown_fence_of_the_same_block():
    md = f"# Run\n\n```bash\npip install vllm==0.10.1\nvllm serve m {REMOVED}\n```\n"
    assert found(md, "README.md") == [(5, 14, "VL102", Severity.ERROR)]
    other_block = f"# Run\n\n```bash\npip install vllm==0.10.1\n```\n\n```bash\nvllm serve m {REMOVED}\n```\n"
    assert releases(other_block, "README.md") == [(None, "")]  # another block: another shell, maybe


@pytest.mark.parametrize("script", [
    "pip install vllm",  # no release
    "pip install 'vllm>=0.10.1'",  # a range
    "pip install vllm~=0.10.1",
    "pip install -r requirements.txt",
    "pip install https://wheels.vllm.ai/0123abc/vllm-0.10.2.dev5+g0123abc-cp38-abi3-manylinux1_x86_64.whl",  # dev
    "pip download vllm==0.10.1",  # not installed
    "echo pip install vllm==0.10.1",  # printed
    "# pip install vllm==0.10.1",  # a comment
    "VER=0.10.1\nif x; then VER=0.9.2; fi\npip install vllm==$VER",  # unknown which
])
def test_no_release_from_what_installs_no_one_release(script):
    assert releases(f"{script}\nvllm serve m {REMOVED}\n") == [(None, "")]


def test_an_install_after_the_server_starts_or_on_the_host_of_a_container_pins_nothing():
    assert releases(f"vllm serve m {REMOVED}\npip install vllm==0.10.1\n") == [(None, "")]
    host = f"pip install vllm==0.10.1\ndocker run --gpus all vllm/vllm-openai:latest --model m {REMOVED}\n"
    assert releases(host) == [(None, "")]  # the host's vLLM is not the image's


def test_install_pin_reads_words():
    assert install_pin(["pip", "install", "vllm==0.10.1.post1"]) == ("0.10.1.post1", "vllm==0.10.1.post1")
    assert install_pin(["uv", "pip", "install", "torch", "vllm==0.10.1"]) == ("0.10.1", "vllm==0.10.1")
    assert install_pin(["uv", "pip", "uninstall", "vllm==0.10.1"]) is None
    assert install_pin(["pip", "install", "vllm-flash-attn==2.6.1"]) is None  # another package
    assert install_pin(["pip", "install", "myvllm==0.10.1"]) is None


# --- the fixtures ---------------------------------------------------------------------------------------------------
def test_fixtures_docker_run_image_variable_and_pip_wheel_pinned():
    result, _ = lint_paths([str(ROOT / "fixtures/own/docker-run-image-variable.sh"),
                            str(ROOT / "fixtures/own/pip-wheel-pinned.sh")], LintOptions(select=["VL102"]))
    assert [(Path(f.path).name, f.span.line, f.span.col, f.code) for f in result.findings] == [
        ("docker-run-image-variable.sh", 13, 39, "VL102"),  # docker run "$IMAGE"
        ("docker-run-image-variable.sh", 19, 37, "VL102"),  # podman run "${IMAGE}"
        ("pip-wheel-pinned.sh", 9, 47, "VL102"),  # the wheel of 0.10.1.1
    ]


def test_a_pin_in_a_comment_or_after_the_server_of_a_container_command_pins_nothing():
    pod = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: python:3.12-slim
    command: [sh, -c, "SCRIPT"]
"""
    for script in ("vllm serve m; pip install vllm==0.10.1", "echo pip install vllm==0.10.1 && vllm serve m"):
        assert releases(pod.replace("SCRIPT", script), "pod.yaml") == [(None, "")]
    block = pod.replace('[sh, -c, "SCRIPT"]', "[sh, -c]\n    args:\n    - |\n      # pip install vllm==0.10.1\n"
                        "      vllm serve m")
    assert releases(block, "pod.yaml") == [(None, "")]
