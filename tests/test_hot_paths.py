"""What the run computes once (indexes, memos, one YAML composer) gives what computing it each time gave."""
from __future__ import annotations

import dataclasses
import gc

from vllmlint.engine import LintOptions, Linter
from vllmlint.source.yamlmodel import SourceFile, parse_documents

DEPLOYMENT = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {HF_HOME: /cache}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm}
spec:
  template:
    metadata: {labels: {app: llm}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1.1
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max_model_len", "4096", "-tp", "2",
                 "--port", "8000", "--max-model-len", "2048"]
          envFrom: [{configMapRef: {name: settings}}]
          env: [{name: TOKEN, value: abc}]
          ports: [{name: http, containerPort: 8000}]
          resources: {limits: {nvidia.com/gpu: 2}}
---
apiVersion: v1
kind: Service
metadata: {name: llm}
spec:
  selector: {app: llm}
  ports: [{name: http, port: 80, targetPort: http}]
"""


def _world(text: str = DEPLOYMENT):
    linter = Linter(LintOptions())
    linter.add_text(text, "deploy.yaml", ".yaml")
    return linter.build()


def test_option_lookup_by_name_keeps_argv_order_and_every_spelling():
    invocation = _world().invocations[0]
    lengths = invocation.option("--max-model-len")
    assert [(o.name, o.value) for o in lengths] == [("--max_model_len", "4096"), ("--max-model-len", "2048")]
    assert [o.name for o in invocation.option("--tensor-parallel-size")] == ["-tp"]
    # Several names: in argv order, each option once.
    both = invocation.option("--port", "--max-model-len", "--max_model_len")
    assert [o.name for o in both] == ["--max_model_len", "--port", "--max-model-len"]
    assert invocation.option("--nothing") == []
    assert invocation.api_port == 8000


def test_a_new_parse_of_the_options_is_indexed_anew():
    invocation = _world().invocations[0]
    assert len(invocation.option("--port")) == 1
    invocation.parse()  # a new options list: the index of the old one must not answer
    assert [o.value for o in invocation.option("--port")] == ["8000"]
    invocation.options = []
    assert invocation.option("--port") == []


def test_containers_remember_only_once_the_world_is_sealed():
    linter = Linter(LintOptions())
    linter.add_text(DEPLOYMENT, "deploy.yaml", ".yaml")
    template = linter.world.templates[0]
    container = template.containers[0]
    assert container._memo is None  # before the build: Kustomize and Compose may still rewrite the nodes
    world = linter.build()
    assert container._memo is not None
    env = container.resolved_env(world)
    assert [(v.name, v.value, v.origin) for v in env] == [("HF_HOME", "/cache", "configmap"), ("TOKEN", "abc",
                                                                                              "literal")]
    env.clear()  # a caller's list is its own
    assert [v.name for v in container.resolved_env(world)] == ["HF_HOME", "TOKEN"]
    assert [v.name for v in container.resolved_env(None)] == ["TOKEN"]  # another world, another answer
    assert [(p.name, p.number) for p in container.container_ports] == [("http", 8000)]
    assert container.resources.limits["nvidia.com/gpu"].node.value == 2
    ports = container.env
    ports["X"] = "y"
    assert container.env == {"TOKEN": "abc"}


def test_service_ports_are_read_once_and_copied():
    from vllmlint.k8s.services import service_ports

    world = _world()
    service = world.of_kind("Service")[0]
    first = service_ports(service)
    assert [(p.name, p.port, p.target) for p in first] == [("http", 80, "http")]
    first.clear()
    assert len(service_ports(service)) == 1


def test_reading_leaves_no_garbage_cycle():
    """ruamel's compose_all made a class and a loader referring to itself for every file: garbage cycles the
    GC had to find before each freeze of the model (engine._freeze_gc collects nothing first)."""
    texts = [DEPLOYMENT.replace("llm", f"llm-{n}") for n in range(20)]
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        parsed = [parse_documents(SourceFile(f"f{n}.yaml", text)) for n, text in enumerate(texts)]
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
    assert all(error is None and len(documents) == 3 for documents, error in parsed)
    # The composer is reused across files; a file that fails does not spoil the next.
    documents, error = parse_documents(SourceFile("bad.yaml", "a: [1, 2\nb: c\n"))
    assert error is not None and error.line == 2
    documents, error = parse_documents(SourceFile("good.yaml", "a: 1\n"))
    assert error is None and documents[0].root.get("a").value == 1


def test_model_matches_follow_the_models_registered():
    from vllmlint.capacity.names import resolve_model
    from vllmlint.capacity.specs import clear_extra, register_extra

    known = resolve_model("meta-llama/Llama-3.1-8B-Instruct")
    assert known is not None and known.model.id == "meta-llama/Llama-3.1-8B-Instruct"
    assert resolve_model("acme/house-model-7b") is None
    extra = dataclasses.replace(known.model, id="acme/house-model-7b", aliases=())
    register_extra(models=[extra])
    try:
        match = resolve_model("acme/house-model-7b")
        assert match is not None and match.model is extra  # the remembered None does not stand
    finally:
        clear_extra()
    assert resolve_model("acme/house-model-7b") is None


def test_checkpoint_bytes_remembered_equals_computed():
    from vllmlint.capacity.names import resolve_model
    from vllmlint.capacity.workload import _checkpoint_bytes, checkpoint_bytes

    model = resolve_model("meta-llama/Llama-3.1-8B-Instruct").model
    for quantization in (None, "fp8", "awq"):
        assert checkpoint_bytes(model, quantization) == _checkpoint_bytes(model, quantization)
    assert checkpoint_bytes(model, None) == checkpoint_bytes(model, None) == 16_060_522_496


def test_the_console_script_freezes_the_gc_at_exit(monkeypatch):
    import atexit

    from vllmlint import cli as cli_module

    registered = []
    before = gc.get_threshold()
    monkeypatch.setattr(cli_module, "cli", lambda: None)
    monkeypatch.setattr(atexit, "register", registered.append)
    try:
        cli_module.main()
    finally:
        gc.set_threshold(*before)
    assert gc.freeze in registered


def test_selected_templates_are_remembered_per_selector_and_copied():
    world = _world()
    service = world.of_kind("Service")[0]
    selector = service.node.get("spec").get("selector")
    first = world.selected_templates(selector, "")
    assert [t.owner.name for t in first] == ["llm"]
    first.clear()
    assert [t.owner.name for t in world.selected_templates(selector, "")] == ["llm"]
    assert world.selected_templates(None, "") == []


def test_selectable_templates_narrow_by_a_label_every_match_carries():
    from vllmlint.k8s.selectors import label_selector

    text = DEPLOYMENT + """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: other}
spec:
  template:
    metadata: {labels: {app: other}}
    spec:
      containers: [{name: c, image: busybox}]
"""
    world = _world(text)
    by_app = label_selector(world.of_kind("Service")[0].node.get("spec").get("selector"))
    assert [t.owner.name for t in world.selectable_templates(by_app)] == ["llm"]
    # A label controllers add (`pod-template-hash`) is on no manifest: it never narrows, every template may match.
    (hash_only,), _ = parse_documents(SourceFile("s.yaml", "{pod-template-hash: abc}\n"))
    assert [t.owner.name for t in world.selectable_templates(label_selector(hash_only.root))] == ["llm", "other"]


def test_placement_is_read_once_per_sealed_world():
    template = _world().templates[0]
    assert template.placement is template.placement
    assert [r.key for r in template.placement.node_selector] == []


def test_a_script_is_read_once_and_shared_within_a_run_only():
    from vllmlint.source.shell import read_script, scripts_read_once

    text = "export A=1\nvllm serve m --port 8000\n"
    with scripts_read_once():
        first = read_script(text)
        with scripts_read_once():  # a nested scope shares the outer one's memo
            assert read_script(text) is first  # the build and the rules read the same reading
        assert read_script(text) is first
        assert [w.text for w in first.assignments] == []
        assert [w.text for w in first.commands[1].words] == ["vllm", "serve", "m", "--port", "8000"]
        second_line = read_script(text, text.index("vllm"))
        assert second_line is not first and [w.text for w in second_line.commands[0].words][:2] == ["vllm", "serve"]
    # Outside a run nothing is kept: a long-lived process (the language server) holds no reading of old texts.
    assert read_script(text) is not first and read_script(text) is not read_script(text)


def test_a_lint_run_reads_each_script_once(monkeypatch):
    from vllmlint.source import shell

    reads = []
    real = shell._read_script
    monkeypatch.setattr(shell, "_read_script", lambda *a: reads.append(a[1:]) or real(*a))
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
            "    image: vllm/vllm-openai:v0.29.0\n    command: [sh, -c, 'export VLLM_X=1; vllm serve m --port 8000']\n")
    from vllmlint.engine import LintOptions, lint_text

    lint_text(text, "pod.yaml", LintOptions())
    assert reads and len(reads) == len(set(reads))  # no (text, region) read twice in one run
    assert shell._READ is None  # and the memo is gone once the run is over


def test_source_indexes_are_source_index_of_every_offset():
    text = "cmd: |\n  export A=1\n  vllm serve m \\\n    --port 8000\n"
    source = SourceFile("t.yaml", text)
    (doc,), _ = parse_documents(source)
    scalar = doc.root.get("cmd")
    offsets = scalar.source_indexes()
    assert [offsets[i] for i in range(len(scalar.text) + 1)] == [scalar.source_index(i)
                                                                  for i in range(len(scalar.text) + 1)]
    assert source.line_col(offsets[scalar.text.index("--port")]) == (4, 5)
