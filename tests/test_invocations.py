"""From containers and scripts to vLLM invocations: which programs are vLLM, and their argv with positions."""
from vllmlint.engine import Linter


def world_of(text, filename="m.yaml"):
    linter = Linter()
    linter.add_text(text, filename, "." + filename.rsplit(".", 1)[-1])
    return linter.build()


def pod(command=None, args=None, image="vllm/vllm-openai:v0.29.0", env=""):
    lines = ["apiVersion: v1", "kind: Pod", "metadata: {name: p}", "spec:", "  containers:", "  - name: c",
             f"    image: {image}"]
    if command is not None:
        lines.append(f"    command: {command}")
    if args is not None:
        lines.append(f"    args: {args}")
    if env:
        lines.append(f"    env: {env}")
    return "\n".join(lines) + "\n"


def only(world):
    assert len(world.invocations) == 1, world.invocations
    return world.invocations[0]


def test_vllm_serve_in_a_command_list():
    inv = only(world_of(pod(command="[vllm, serve, Qwen/Qwen3-0.6B, --port, '9000']")))
    assert inv.kind == "serve" and inv.via == "command"
    assert inv.model.text == "Qwen/Qwen3-0.6B"
    assert inv.api_port == 9000


def test_python_module_entrypoint_with_model_option():
    inv = only(world_of(pod(command="[python3, -m, vllm.entrypoints.openai.api_server]",
                            args="[--model, m, --port=8080]")))
    assert inv.kind == "openai-api-server"
    assert inv.model.text == "m" and inv.api_port == 8080


def test_demo_api_server_is_its_own_kind():
    assert only(world_of(pod(command="[python, -m, vllm.entrypoints.api_server]"))).kind == "demo-api-server"


def test_other_programs_are_not_vllm():
    assert world_of(pod(command="[python, bench.py, --rank, '0']", image="python:3.12-slim")).invocations == []
    assert world_of(pod(command="[nginx, -g, 'daemon off;']", image="nginx:1.27")).invocations == []


def test_bash_dash_c_string_with_continuations_keeps_positions():
    text = pod(command='["/bin/bash", "-c"]', args="\n    - |\n      pip install vllm==0.29.0 && \\\n"
               "      exec vllm serve m \\\n        --swap-space 4")
    world = world_of(text)
    inv = only(world)
    assert inv.via == "shell"
    (option,) = inv.option("--swap-space")
    assert option.value == "4"
    span = option.token.span
    assert (span.line, span.col) == (13, 9)
    assert text.splitlines()[span.line - 1][span.col - 1:span.end_col - 1] == "--swap-space"


def test_kubernetes_expands_dollar_paren_from_env():
    env = "[{name: PORT, value: '2080'}]"
    assert only(world_of(pod(command="[vllm, serve, m, --port, $(PORT)]", env=env))).api_port == 2080


def test_unresolvable_values_are_unknown():
    inv = only(world_of(pod(command="[vllm, serve, m, --port, $(NOPE)]")))
    assert inv.api_port is None
    inv = only(world_of(pod(command="[sh, -c, 'vllm serve m --port $PORT']")))
    assert inv.api_port is None


def test_script_mounted_from_a_configmap():
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data:
  run.sh: |
    #!/bin/bash
    python -m vllm.entrypoints.openai.api_server \\
      --model=/models/m \\
      --rank=$RANK
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  template:
    spec:
      containers:
      - name: c
        image: vllm/vllm-openai:v0.29.0
        command: [bash, /config/run.sh]
        volumeMounts: [{name: cfg, mountPath: /config}]
      volumes:
      - name: cfg
        configMap: {name: cfg, defaultMode: 0755}
"""
    inv = only(world_of(text))
    assert inv.via == "configmap-script"
    (rank,) = inv.option("--rank")
    assert rank.token.span.line == 9 and rank.token.dynamic


def test_standalone_shell_script():
    inv = only(world_of("#!/bin/sh\nray start --head\nvllm serve m --headless\n", "start.sh"))
    assert inv.kind == "serve" and inv.container is None
    assert [o.name for o in inv.options] == ["--headless"]


def test_boolean_switch_does_not_swallow_the_next_token():
    inv = only(world_of(pod(command="[vllm, serve, m, --enable-prefix-caching, --port, '8000']")))
    assert [(o.name, o.value) for o in inv.options] == [("--enable-prefix-caching", None), ("--port", "8000")]


def test_pod_templates_of_custom_resources():
    lws = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: l}
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers: [{name: leader, image: vllm/vllm-openai:v0.29.0, command: [vllm, serve, m]}]
    workerTemplate:
      spec:
        containers: [{name: worker, image: vllm/vllm-openai:v0.29.0, command: [vllm, serve, m, --headless]}]
"""
    world = world_of(lws)
    assert sorted(t.role for t in world.templates) == ["leader", "worker"]
    assert len(world.invocations) == 2
    ray = """apiVersion: ray.io/v1
kind: RayService
metadata: {name: r}
spec:
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers: [{name: head, image: rayproject/ray:2.40.0, command: [bash, -c, "ray start --head && vllm serve m"]}]
    workerGroupSpecs:
    - groupName: gpu
      template:
        spec:
          containers: [{name: w, image: rayproject/ray:2.40.0}]
"""
    world = world_of(ray)
    assert sorted(t.role for t in world.templates) == ["gpu", "head"]
    assert only(world).container.name == "head"
    kserve = """apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: rt}
spec:
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.29.0
    command: [python3, -m, vllm.entrypoints.openai.api_server]
    args: [--port=8080, --model=/mnt/models]
"""
    assert only(world_of(kserve)).api_port == 8080


def test_list_kind_and_cronjob():
    text = """apiVersion: v1
kind: List
items:
- apiVersion: batch/v1
  kind: CronJob
  metadata: {name: cj}
  spec:
    jobTemplate:
      spec:
        template:
          spec:
            containers: [{name: c, image: vllm/vllm-openai:v0.29.0, command: [vllm, serve, m]}]
"""
    world = world_of(text)
    assert [o.kind for o in world.objects] == ["CronJob"]
    assert only(world).container.name == "c"


def test_compose_services():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.29.0
    entrypoint: ["vllm", "serve"]
    command: Qwen/Qwen3-0.6B --port 8001 --swap-space 4
"""
    inv = only(world_of(text, "compose.yaml"))
    assert inv.container.pod.owner.kind == "ComposeService"
    assert inv.api_port == 8001 and inv.option("--swap-space")


def test_release_comes_from_annotation_then_image_tag_then_pip_pin():
    assert only(world_of(pod(command="[vllm, serve, m]", image="vllm/vllm-openai:v0.29.0-cu129"))).release == "0.29.0"
    assert only(world_of(pod(command="[vllm, serve, m]",
                             image="registry.local:5000/mirror/vllm/vllm-openai:0.6.4.post1"))).release == "0.6.4.post1"
    assert only(world_of(pod(command="[vllm, serve, m]", image="myorg/vllm-openai:v0.29.0"))).release is None
    assert only(world_of(pod(command="[vllm, serve, m]", image="vllm/vllm-openai:v0.7.3.self.post1"))).release is None
    assert only(world_of(pod(command="[vllm, serve, m]", image="vllm/vllm-openai@sha256:" + "a" * 64))).release is None
    pinned = pod(command='[bash, -c, "pip install vllm==0.10.2 && vllm serve m"]', image="python:3.12-slim")
    assert only(world_of(pinned)).release == "0.10.2"
    annotated = pod(command="[vllm, serve, m]", image="vllm/vllm-openai:v0.29.0").replace(
        "metadata: {name: p}", "metadata: {name: p, annotations: {vllmlint.io/vllm-version: 0.31.0}}")
    inv = only(world_of(annotated))
    assert inv.release == "0.31.0" and "annotation" in inv.release_origin


def test_docker_run_and_uv_run_start_vllm_too():
    script = ('docker run --runtime nvidia --gpus all -v ~/.cache:/root/.cache --env "HF_TOKEN=$T" -p 8000:8000 '
              '--ipc=host vllm/vllm-openai:v0.29.0 --model m --swap-space 8\n'
              'uv run --with vllm vllm serve m --port 9000\n'
              'docker run -d --name web nginx:1.27 --swap-space 3\n')
    world = world_of(script, "run.sh")
    docker, uv = world.invocations
    assert docker.kind == "serve" and docker.release == "0.29.0" and docker.image.repository == "vllm/vllm-openai"
    assert [o.name for o in docker.options] == ["--model", "--swap-space"]
    assert docker.option("--swap-space")[0].token.span.line == 1
    assert uv.kind == "serve" and uv.api_port == 9000
    old = world_of("docker run vllm/vllm-openai:v0.6.4.post1 --model m\n", "run.sh").invocations[0]
    assert old.kind == "openai-api-server"  # that image's entrypoint was the api_server module
    assert world_of("docker run --entrypoint bash vllm/vllm-openai:v0.29.0 -c true\n", "run.sh").invocations == []


def test_a_config_file_makes_the_port_unknown_unless_the_command_line_gives_it():
    # vLLM inserts the file's options before the command line's (FlexibleArgumentParser._pull_args_from_config),
    # so the file may set `port`, and a --port on the command line wins. `--config=FILE` never reads the file.
    assert only(world_of(pod(command="[vllm, serve, m, --config, /etc/vllm/c.yaml]"))).api_port is None
    assert only(world_of(pod(command="[vllm, serve, m, --config, /etc/vllm/c.yaml, --port, '9000']"))).api_port == 9000
    assert only(world_of(pod(command="[vllm, serve, m, --config=/etc/vllm/c.yaml]"))).api_port == 8000
