"""KServe LLMInferenceService whose `main` container writes no `command` (and often no `image`): the single-node
preset runs `vllm serve /mnt/models --served-model-name {spec.model.name}` (data/operator-workloads.yaml
`kserve_llmisvc.preset_command`), the model downloaded from spec.model.uri. Shaped like kserve/kserve
docs/samples/llmisvc/single-node-gpu/llm-inference-service-qwen2-7b-gpu-no-scheduler.yaml (aaac4e294dae)."""
from vllmlint.capacity.workload import workloads
from vllmlint.engine import LintOptions, Linter


def sample(uri="hf://Qwen/Qwen2.5-7B-Instruct", name="Qwen/Qwen2.5-7B-Instruct", extra_spec="", env=""):
    return f"""apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: qwen2-7b-instruct-single-no-scheduler
spec:
  model:
    uri: {uri}
    name: {name}
  replicas: 3
  router:
    route: {{ }}
{extra_spec}  template:
    containers:
      - name: main
{env}        resources:
          limits:
            cpu: '4'
            memory: 32Gi
            nvidia.com/gpu: "1"
          requests:
            cpu: '2'
            memory: 16Gi
            nvidia.com/gpu: "1"
        livenessProbe:
          httpGet:
            path: /health
            port: 8000
            scheme: HTTPS
          initialDelaySeconds: 120
          periodSeconds: 30
"""


def world(text):
    linter = Linter()
    linter.add_text(text, "llmisvc.yaml", ".yaml")
    return linter.build()


def lint(text, select=("ALL",)):
    linter = Linter(LintOptions(select=list(select)))
    linter.result.files_checked += 1
    linter.add_text(text, "llmisvc.yaml", ".yaml")
    result = linter.run()
    assert not result.internal_error, [n.message for n in result.notices]
    return result


def found(result, *codes):
    return sorted((f.span.line, f.span.col, f.code, f.severity.label) for f in result.findings
                  if not codes or f.code in codes)


TOOLS = """        env:
          - name: VLLM_ADDITIONAL_ARGS
            value: "--enable-auto-tool-choice --tool-call-parser llama3_json"
"""


def test_catches_a_main_container_without_image_as_a_vllm_workload():
    w = world(sample())
    [inv] = w.invocations
    assert inv.image is None  # KServe's release (and so the preset's image) is not in the run
    assert [t.text for t in inv.entry] == ["vllm", "serve"]
    assert (inv.model.text, inv.model.span.line, inv.model.span.col) == ("Qwen/Qwen2.5-7B-Instruct", 7, 10)
    [served] = inv.option("--served-model-name")
    assert (served.value, served.value_token.span.line, served.value_token.span.col) == ("Qwen/Qwen2.5-7B-Instruct", 8, 11)
    [work] = workloads(w)
    assert work.match is not None and work.match.model.id == "Qwen/Qwen2.5-7B-Instruct"


def test_catches_rules_on_the_preset_workload_at_the_uri():
    # A base checkpoint served for tool calls (chat only): VL711 at spec.model.uri.
    text = sample("hf://meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.2-1B", env=TOOLS)
    assert found(lint(text, ("VL711",))) == [(7, 10, "VL711", "warning")]


def test_catches_the_flags_of_vllm_additional_args_with_their_positions():
    [inv] = world(sample(env=TOOLS)).invocations
    [tool] = inv.option("--tool-call-parser")
    assert (tool.value, tool.value_token.span.line, tool.value_token.span.col) == ("llama3_json", 17, 66)


def test_does_not_catch_the_https_probe_whose_tls_the_preset_decides():
    # KServe's preset adds --ssl-certfile when its global config enables TLS (config-llm-template.yaml, 0.18 on).
    assert found(lint(sample(), ("VL702",))) == []


def test_does_not_resolve_a_uri_that_names_a_path():
    [inv] = world(sample(uri="s3://models/qwen2.5-7b")).invocations
    assert inv.model.text == "/mnt/models"
    assert workloads(world(sample(uri="s3://models/qwen2.5-7b")))[0].match is None


def test_does_not_assume_the_preset_with_base_refs_or_prefill():
    refs = "  baseRefs:\n    - name: my-own-template\n"
    assert world(sample(extra_spec=refs)).invocations == []
    prefill = "  prefill:\n    replicas: 1\n"
    assert world(sample(extra_spec=prefill)).invocations == []


def test_does_not_replace_a_command_the_manifest_writes():
    own = "        image: vllm/vllm-openai:v0.10.1.1\n        command: [vllm, serve, Qwen/Qwen2.5-1.5B-Instruct]\n"
    [inv] = world(sample(env=own)).invocations
    assert inv.model.text == "Qwen/Qwen2.5-1.5B-Instruct" and inv.option("--served-model-name") == []


def test_operator_tables_match_their_schemas():
    import json

    import jsonschema

    from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir

    for name in ("operator-workloads", "operator-flags"):
        schema = json.loads((schemas_dir() / f"{name}.schema.json").read_text(encoding="utf-8"))
        jsonschema.validate(load_yaml_data(knowledge_dir() / f"{name}.yaml"), schema)
    table = load_yaml_data(knowledge_dir() / "operator-workloads.yaml")["kserve_llmisvc"]
    assert table["preset_command"] == ["vllm", "serve"]
    assert [row["kserve"] for row in table["preset_images"]][:2] == ["0.16.0", "0.17.0"]


POD_IP_ARGS = """        env:
          - name: VLLM_ADDITIONAL_ARGS
            value: '--kv-events-config ''{"topic":"kv@${POD_IP}@Qwen"}'''
          - name: POD_IP
            valueFrom:
              fieldRef: {fieldPath: status.podIP}
          - name: CACHE_DIR
            value: "${HOME}/cache"
"""


def test_does_not_catch_a_reference_in_the_variable_the_preset_script_evaluates():
    # `eval "exec vllm serve ... ${VLLM_ADDITIONAL_ARGS} $@"`: a shell reads the value again, quoting decides.
    # Another variable of the same container is still Kubernetes' text: `${HOME}` there stays literal.
    assert found(lint(sample(env=POD_IP_ARGS), ("VL709",))) == [(22, 21, "VL709", "info")]
