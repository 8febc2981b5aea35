"""The pod a Helm chart renders around a values file's vLLM server (vllmlint.vllm.helm_pod) and the pod-level
rules that read it (VL608, VL701, VL702, VL705): catches / does not catch, with the position of every finding on
the values file's own lines, or at the modelSpec entry when the value is the chart's default."""
from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.k8s.quantity import quantity_int
from vllmlint.vllm.helm_pod import chart_container, chart_default


def found(text, code, filename="values.yaml"):
    result = lint_text(text, filename, LintOptions(select=[code]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.message) for f in result.findings if f.code == code]


def where(text, code):
    return [(line, col) for line, col, _ in found(text, code)]


def containers(text):
    linter = Linter()
    linter.add_text(text, "values.yaml", ".yaml")
    return [chart_container(invocation) for invocation in linter.build().invocations]


def stack(entry="", spec="", image="vllm/vllm-openai", tag="v0.10.1", model="Qwen/Qwen2.5-14B-Instruct"):
    return f"""servingEngineSpec:
  runtimeClassName: ""
{spec}  modelSpec:
  - name: "qwen"
    repository: "{image}"
    tag: "{tag}"
    modelURL: "{model}"
    replicaCount: 1
    requestCPU: 8
    requestMemory: "64Gi"
    requestGPU: 4
{entry}"""


def modelservice(decode="", container=""):
    return f"""modelArtifacts:
  uri: "hf://Qwen/Qwen3-8B"
  name: "Qwen/Qwen3-8B"
  size: 40Gi
decode:
  create: true
  parallelism:
    tensor: 2
{decode}  containers:
  - name: "vllm"
    image: "ghcr.io/llm-d/llm-d-cuda:v0.4.0"
    modelCommand: vllmServe
    mountModelVolume: true
{container}prefill:
  create: false
"""


EXTRA_TP = """    vllmConfig:
      extraArgs: ["--tensor-parallel-size", "4"]
"""


# --- VL608: /dev/shm ------------------------------------------------------------------------------------------
def test_catches_tensor_parallel_size_in_extra_args_at_the_flag():
    assert where(stack(EXTRA_TP), "VL608") == [(13, 19)]


def test_the_message_says_how_the_chart_mounts_dev_shm():
    message = found(stack(EXTRA_TP), "VL608")[0][2]
    assert "vllmConfig.tensorParallelSize" in message and "shmSize" in message


def test_does_not_catch_vllm_config_tensor_parallel_size():
    """The chart mounts a 20Gi memory-backed emptyDir at /dev/shm when vllmConfig has the key."""
    assert where(stack("    vllmConfig:\n      tensorParallelSize: 4\n"), "VL608") == []


def test_does_not_catch_an_extra_volume_at_dev_shm():
    entry = EXTRA_TP + """    extraVolumes:
    - name: dshm
      emptyDir: {medium: Memory, sizeLimit: 16Gi}
    extraVolumeMounts:
    - name: dshm
      mountPath: /dev/shm
"""
    assert where(stack(entry), "VL608") == []


def test_does_not_catch_lmcache_enable_pd_which_shares_the_nodes_ipc():
    entry = EXTRA_TP + "    lmcacheConfig:\n      enabled: true\n      enablePD: true\n"
    assert where(stack(entry), "VL608") == []


def test_does_not_catch_extra_volumes_it_cannot_read():
    """extraVolumes as a map: what the chart renders is unknown, the rule is silent."""
    entry = EXTRA_TP + "    extraVolumes: {dshm: {emptyDir: {medium: Memory}}}\n"
    assert where(stack(entry), "VL608") == []


def test_catches_llm_d_tensor_parallelism_without_dev_shm_at_the_tensor_key():
    """The chart writes --tensor-parallel-size from parallelism.tensor: the flag sits at the key."""
    assert where(modelservice(), "VL608") == [(8, 5)]


def test_does_not_catch_llm_d_with_a_memory_backed_dev_shm():
    decode = "  volumes:\n  - {name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}}\n"
    container = "    volumeMounts:\n    - {name: dshm, mountPath: /dev/shm}\n"
    assert where(modelservice(decode, container), "VL608") == []


def test_does_not_catch_llm_d_extra_config_volumes_with_a_template_action():
    """A pod-level extraConfig is rendered with tpl: its volumes are unknown."""
    decode = "  extraConfig:\n    volumes: '{{ .Values.shmVolumes }}'\n"
    assert where(modelservice(decode), "VL608") == []


# --- VL701: the startup budget --------------------------------------------------------------------------------
LLAMA_70B = dict(model="meta-llama/Llama-3.1-70B-Instruct")
TP4 = "    vllmConfig:\n      tensorParallelSize: 4\n"


def test_catches_a_short_startup_probe_at_its_failure_threshold():
    spec = "  startupProbe:\n    initialDelaySeconds: 5\n    failureThreshold: 3\n"
    assert where(stack(TP4, spec, **LLAMA_70B), "VL701") == [(5, 23)]


def test_catches_the_charts_liveness_probe_at_the_entry_when_the_startup_probe_is_removed():
    """`startupProbe: null` deletes the chart's startup probe; its liveness probe (15 + 3 x 10 s) is the chart's
    default: reported at the modelSpec entry, and said to be the chart's."""
    text = stack(TP4, "  startupProbe: null\n", model="meta-llama/Llama-3.1-405B-Instruct")
    [(line, col, message)] = found(text, "VL701")
    assert (line, col) == (5, 5)
    assert "liveness probe" in message and "(the chart's default)" in message and "45 s" in message


def test_does_not_catch_the_charts_own_startup_probe():
    """15 + 60 x 10 s (helm/values.yaml lines 314-327) is above the lower bound of a 70B model."""
    assert where(stack(TP4, **LLAMA_70B), "VL701") == []


def test_a_zero_in_the_values_is_the_templates_default():
    """`failureThreshold | default 3`: 0 is empty to sprig's default."""
    [container] = containers(stack(TP4, "  startupProbe:\n    failureThreshold: 0\n"))
    probe = container.probe("startup")
    assert probe.timing("failureThreshold") == 3 and chart_default(probe.timings["failureThreshold"].node, container)
    assert probe.timing("periodSeconds") == 10


# --- VL702: the probe's port ----------------------------------------------------------------------------------
def test_catches_a_moved_container_port_with_the_charts_probes_at_the_entry():
    text = stack(spec="  containerPort: 8080\n")
    findings = found(text, "VL702")
    assert [(line, col) for line, col, _ in findings] == [(5, 5)] * 3
    assert all("checks port 8000 (the chart's default)" in message and "servingEngineSpec.containerPort" in message
               for _, _, message in findings)


def test_catches_a_probe_port_the_file_writes_at_its_value():
    spec = "  containerPort: 8080\n  startupProbe: null\n  livenessProbe: null\n  readinessProbe:\n" \
           "    httpGet: {path: /health, port: 8000}\n"
    assert where(stack(spec=spec), "VL702") == [(7, 36)]


def test_does_not_catch_probes_moved_with_the_port():
    spec = "  containerPort: 8080\n" + "".join(f"  {kind}:\n    httpGet: {{port: 8080}}\n"
                                              for kind in ("startupProbe", "livenessProbe", "readinessProbe"))
    assert where(stack(spec=spec), "VL702") == []


def test_does_not_catch_the_lora_sidecar_pod():
    """enableLoRA with pvcStorage adds a sidecar container: another program of the pod may listen on 8000."""
    entry = '    enableLoRA: true\n    pvcStorage: "50Gi"\n'
    assert where(stack(entry, "  containerPort: 8080\n"), "VL702") == []


# --- VL705: the memory limit ----------------------------------------------------------------------------------
CPU_IMAGE = dict(image="public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo", tag="v0.9.1",
                 model="TinyLlama/TinyLlama-1.1B-Chat-v1.0")
KV_40 = "    env:\n    - name: VLLM_CPU_KVCACHE_SPACE\n      value: \"40\"\n"


def test_catches_limit_memory_below_the_cpu_kv_cache_at_the_value():
    assert where(stack('    limitMemory: "8Gi"\n' + KV_40, **CPU_IMAGE), "VL705") == [(12, 18)]


def test_catches_resources_as_written_at_the_limit():
    entry = "    resources:\n      limits: {memory: 8Gi, cpu: 4}\n" + KV_40
    assert where(stack(entry, **CPU_IMAGE), "VL705") == [(13, 24)]


def test_does_not_catch_without_a_memory_limit():
    """requestMemory only schedules; the chart writes a memory limit only for limitMemory."""
    assert where(stack(KV_40, **CPU_IMAGE), "VL705") == []


def test_does_not_catch_a_limit_that_holds_the_cache():
    assert where(stack('    limitMemory: "64Gi"\n' + KV_40, **CPU_IMAGE), "VL705") == []


# --- the pod itself -------------------------------------------------------------------------------------------
def test_production_stack_pod_as_the_chart_renders_it():
    entry = '    limitMemory: "32Gi"\n    pvcStorage: "50Gi"\n    shmSize: "8Gi"\n' + TP4
    [container] = containers(stack(entry))
    pod = container.pod
    assert [(v.name, v.kind) for v in pod.volumes] == [("storage", "persistentVolumeClaim"), ("shm", "emptyDir")]
    assert pod.volume("shm").medium == "Memory" and pod.volume("shm").size_limit == 8 * 2**30
    assert [m.mount_path for m in container.volume_mounts] == ["/data", "/dev/shm"]
    assert container.env["HF_HOME"] == "/data"
    assert container.resources is not None and container.resource("limits", "nvidia.com/gpu").value == 4
    assert container.ports == [("container-port", 8000), ("zmq-port", 55555), ("ucx-port", 9999)]
    assert sorted(p.kind for p in container.probes) == ["liveness", "readiness", "startup"]


def test_llm_d_role_level_dra_requests_no_gpu():
    """_helpers-dra.tpl lines 6-28: <role>.accelerator.dra turns the device-plugin request off."""
    [container] = containers(modelservice("  accelerator:\n    dra: true\n"))
    assert container.resource("limits", "nvidia.com/gpu") is None
    [plain] = containers(modelservice())
    assert quantity_int(plain.resource("limits", "nvidia.com/gpu")) == 2


def test_llm_d_model_volume_and_hf_home():
    [container] = containers(modelservice())
    assert [(v.name, v.size_limit) for v in container.pod.volumes] == [("metrics-volume", None),
                                                                      ("model-storage", 40 * 2**30)]
    assert container.env["HF_HOME"] == "/model-cache"


# --- VL609 / VL706: where the weights are downloaded ----------------------------------------------------------
LLAMA_8B_MS = """modelArtifacts:
  uri: "hf://meta-llama/Llama-3.1-8B-Instruct"
  name: "meta-llama/Llama-3.1-8B-Instruct"
{size}decode:
  create: true
  containers:
  - name: "vllm"
    image: "ghcr.io/llm-d/llm-d-cuda:v0.4.0"
    modelCommand: vllmServe
    mountModelVolume: true
prefill:
  create: false
"""


def test_catches_llm_d_default_model_volume_size_at_the_container():
    """modelArtifacts.size defaults to 5Mi (values.yaml line 74): the chart's default, at the container entry."""
    [(line, col, message)] = found(LLAMA_8B_MS.format(size=""), "VL609")
    assert (line, col) == (7, 5)
    assert "(sizeLimit 5Mi), the chart's default" in message and "modelArtifacts.size" in message


def test_vl609_first_line_says_weights_against_the_volume():
    from vllmlint.formatters.report import split_message

    [(_, _, message)] = found(LLAMA_8B_MS.format(size="  size: 5Gi\n"), "VL609")
    head, rest = split_message(message)
    assert head == ("the weights of meta-llama/Llama-3.1-8B-Instruct (about 15.0 GiB) do not fit the 5.0 GiB they "
                    "are downloaded to")
    assert rest.startswith("The download goes to /model-cache/hub (env HF_HOME), on the emptyDir `model-storage` "
                           "(sizeLimit 5Gi), fills it, and the kubelet evicts the pod"), rest


def test_catches_a_small_model_artifacts_size_at_its_value():
    assert where(LLAMA_8B_MS.format(size="  size: 5Gi\n"), "VL609") == [(4, 9)]


def test_does_not_catch_a_model_artifacts_size_that_holds_the_weights():
    assert where(LLAMA_8B_MS.format(size="  size: 40Gi\n"), "VL609") == []


def test_catches_production_stack_weights_on_the_writable_layer_at_the_model():
    text = stack(TP4, model="meta-llama/Llama-3.1-70B-Instruct")
    [(line, col, message)] = found(text, "VL706")
    assert (line, col) == (7, 15)
    assert "/tmp/hub (env HF_HOME)" in message and "set pvcStorage" in message


def test_does_not_catch_production_stack_weights_on_pvc_storage():
    text = stack('    pvcStorage: "300Gi"\n' + TP4, model="meta-llama/Llama-3.1-70B-Instruct")
    assert where(text, "VL706") == []


def test_catches_production_stack_pvc_storage_smaller_than_the_weights_at_its_value():
    """pvc.yaml lines 26-28: the chart's claim requests pvcStorage; HF_HOME is /data on it (lines 226-230)."""
    [(line, col, message)] = found(stack('    pvcStorage: "20Gi"\n'), "VL609")
    assert (line, col) == (12, 17)
    assert "do not fit the 20.0 GiB" in message and "/data/hub (env HF_HOME)" in message
    assert "PersistentVolumeClaim the chart creates" in message and "raise pvcStorage" in message
    assert "no space left" in message and "evicts" not in message


def test_catches_the_8b_model_on_a_5gi_pvc_storage():
    text = stack('    pvcStorage: "5Gi"\n', model="meta-llama/Llama-3.1-8B-Instruct")
    assert where(text, "VL609") == [(12, 17)]


def test_does_not_catch_pvc_storage_that_holds_the_weights():
    assert where(stack('    pvcStorage: "50Gi"\n'), "VL609") == []


def test_does_not_catch_pvc_storage_bound_to_an_existing_volume():
    """pvcMatchLabels (a selector) or storageClass "" binds a PersistentVolume of any size at least the request."""
    assert where(stack('    pvcStorage: "20Gi"\n    pvcMatchLabels:\n      model: qwen\n'), "VL609") == []
    assert where(stack('    pvcStorage: "20Gi"\n    storageClass: ""\n'), "VL609") == []


def test_catches_pvc_storage_with_a_named_storage_class():
    assert where(stack('    pvcStorage: "20Gi"\n    storageClass: "gp3"\n'), "VL609") == [(12, 17)]


def test_does_not_catch_pvc_storage_when_the_download_goes_to_the_shared_storage():
    """sharedPvcStorage.enabled: HF_HOME is /data/shared-pvc-storage, another claim (lines 226-228)."""
    text = "sharedPvcStorage:\n  enabled: true\n" + stack('    pvcStorage: "20Gi"\n')
    assert where(text, "VL609") == []


def test_does_not_catch_pvc_storage_for_an_unknown_model():
    assert where(stack('    pvcStorage: "1Gi"\n', model="acme/private-model"), "VL609") == []


def test_does_not_catch_pvc_storage_with_a_download_dir_elsewhere():
    entry = '    pvcStorage: "5Gi"\n    vllmConfig:\n      extraArgs: ["--download-dir", "/models"]\n'
    assert where(stack(entry), "VL609") == []


def test_does_not_catch_an_llm_d_claim_the_chart_does_not_create():
    """pvc+hf://: the claim is the user's own (_helpers.tpl lines 370-376); modelArtifacts.size sizes no claim."""
    text = LLAMA_8B_MS.format(size="  size: 1Gi\n").replace("hf://", "pvc+hf://models/")
    assert where(text, "VL609") == []


# --- VL703: unwritable caches ---------------------------------------------------------------------------------
READ_ONLY = "  containerSecurityContext:\n    readOnlyRootFilesystem: true\n"


def test_catches_a_read_only_root_filesystem_at_the_values_field():
    assert where(stack('    pvcStorage: "50Gi"\n', READ_ONLY), "VL703") == [(4, 29)]


def test_does_not_catch_an_extra_volume_at_tmp_and_the_cache():
    entry = '''    pvcStorage: "50Gi"
    extraVolumes: [{name: tmp, emptyDir: {}}, {name: cache, emptyDir: {}}]
    extraVolumeMounts: [{name: tmp, mountPath: /tmp}, {name: cache, mountPath: /root/.cache}]
'''
    assert where(stack(entry, READ_ONLY), "VL703") == []


def test_does_not_catch_env_from_a_config_map_the_run_does_not_hold():
    """servingEngineSpec.configs makes an envFrom ConfigMap: the variables that move the caches are unknown."""
    spec = READ_ONLY + "  configs:\n    HF_HOME: /data\n"
    assert where(stack('    pvcStorage: "50Gi"\n', spec), "VL703") == []


# --- VL704: no GPU --------------------------------------------------------------------------------------------
def no_gpu(entry="", spec='  runtimeClassName: ""\n'):
    return f"""servingEngineSpec:
{spec}  modelSpec:
  - name: "opt125m"
    repository: "vllm/vllm-openai"
    tag: "v0.10.1"
    modelURL: "facebook/opt-125m"
    requestCPU: 6
    requestMemory: "16Gi"
{entry}"""


def test_catches_a_fractional_request_gpu_at_its_value():
    [(line, col, message)] = found(no_gpu("    requestGPU: 0.5\n"), "VL704")
    assert (line, col) == (10, 17) and "truncates it to 0" in message


def test_catches_no_request_gpu_at_the_tag():
    [(line, col, message)] = found(no_gpu(), "VL704")
    assert (line, col) == (6, 10) and "set requestGPU" in message


def test_does_not_catch_the_charts_default_runtime_class_nvidia():
    """helm/values.yaml line 368: runtimeClassName "nvidia" exposes the node's GPUs when the file leaves it."""
    assert where(no_gpu(spec=""), "VL704") == []


def test_does_not_catch_a_gpu_request():
    assert where(no_gpu("    requestGPU: 1\n"), "VL704") == []


def test_does_not_catch_llm_d_dra():
    text = LLAMA_8B_MS.format(size="  size: 40Gi\n").replace("decode:\n", "accelerator:\n  dra: true\ndecode:\n")
    assert where(text, "VL704") == []


# --- llm-d's routing proxy ------------------------------------------------------------------------------------
PROBED = """modelArtifacts:
  uri: "hf://Qwen/Qwen3-8B"
  name: "Qwen/Qwen3-8B"
  size: 40Gi
{routing}decode:
  create: true
  containers:
  - name: "vllm"
    image: "ghcr.io/llm-d/llm-d-cuda:v0.4.0"
    modelCommand: vllmServe
    mountModelVolume: true
    readinessProbe:
      httpGet: {{path: /health, port: 8000}}
prefill:
  create: false
"""


def test_does_not_catch_a_decode_probe_on_the_routing_proxys_port():
    """The decode pod's routing proxy (a native sidecar on routing.servicePort, 8000) listens there; vLLM is on
    8200."""
    assert where(PROBED.format(routing=""), "VL702") == []


def test_with_the_proxy_off_the_probe_must_check_the_service_port():
    """Proxy disabled: vLLM serves routing.servicePort (8000) itself, so the probe on 8000 is right."""
    assert where(PROBED.format(routing="routing:\n  proxy:\n    enabled: false\n"), "VL702") == []
    moved = PROBED.format(routing="routing:\n  servicePort: 9000\n  proxy:\n    enabled: false\n")
    assert where(moved, "VL702") == [(17, 38)]


def test_the_vllm_container_is_the_charts_not_the_proxy():
    [container] = containers(PROBED.format(routing=""))
    assert container.name == "vllm" and [c.name for c in container.pod.containers if c.init] == ["routing-proxy"]


def test_catches_a_kv_offload_larger_than_the_charts_default_shm_size_at_the_flag():
    """The chart's /dev/shm is 20Gi (`default "20Gi" $modelSpec.shmSize`); vLLM 0.29 keeps the offload in it."""
    entry = '''    vllmConfig:
      tensorParallelSize: 2
      extraArgs: ["--kv-offloading-size", "40"]
'''
    [(line, col, message)] = found(stack(entry, tag="v0.29.0"), "VL608")
    assert (line, col) == (14, 19)
    assert "sizeLimit, the chart's default" in message and "set shmSize" in message and "41Gi" in message
    from vllmlint.formatters.report import split_message

    assert split_message(message)[0] == ("vLLM 0.29.0 keeps the 40.0 GiB CPU KV-cache offload buffer in /dev/shm, "
                                         "but its memory-backed /dev/shm is capped at 20.0 GiB")
    assert where(stack(entry + '    shmSize: "48Gi"\n', tag="v0.29.0"), "VL608") == []


def test_catches_llm_d_gpus_written_without_memory_as_info_at_the_gpu_value():
    text = modelservice(container="    resources:\n      limits:\n        nvidia.com/gpu: \"2\"\n")
    result = lint_text(text, "values.yaml", LintOptions(select=["VL705"]))
    assert [(f.span.line, f.span.col, f.severity.name) for f in result.findings] == [(16, 25, "INFO")]


def test_catches_llm_d_without_resources_as_info_at_the_container():
    """No `resources` in the values: the chart renders dataLocal x tensor GPUs and nothing else (_helpers.tpl lines
    286-326; examples/output-gaudi.yaml lines 95-99), a BestEffort pod, reported at the container's name."""
    result = lint_text(modelservice(), "values.yaml", LintOptions(select=["VL705"]))
    assert [(f.span.line, f.span.col, f.severity.name) for f in result.findings] == [(10, 5, "INFO")]
    message = result.findings[0].message
    assert message.startswith("Request memory (and CPU) for container vllm: the chart renders its resources with 2 "
                              "nvidia.com/gpu (from accelerator.type and parallelism) but no memory or CPU"), message


def test_catches_llm_d_resources_with_cpu_only_at_the_resources_key():
    text = modelservice(container="    resources:\n      limits:\n        cpu: \"16\"\n")
    [(line, col, message)] = found(text, "VL705")
    assert (line, col) == (14, 5)
    assert message.startswith("Request memory for container vllm: the resources the chart renders reserve no RAM")


def test_does_not_catch_llm_d_with_a_memory_request_and_chart_gpus():
    text = modelservice(container="    resources:\n      requests:\n        memory: 64Gi\n        cpu: \"8\"\n")
    assert where(text, "VL705") == []


def test_does_not_catch_llm_d_on_cpu():
    assert where("accelerator:\n  type: cpu\n" + modelservice(), "VL705") == []


def test_does_not_catch_llm_d_dra_without_resources():
    """DRA: the accelerator is a resource claim, no count the chart adds (_helpers.tpl lines 298-304)."""
    assert where("accelerator:\n  dra: true\n" + modelservice(), "VL705") == []


def test_does_not_catch_llm_d_without_resources_beside_a_limit_range():
    """A LimitRange in the run may give the container a default memory request."""
    limit_range = ("apiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults}\nspec:\n  limits:\n"
                   "  - type: Container\n    defaultRequest: {memory: 8Gi}\n")
    linter = Linter(LintOptions(select=["VL705"]))
    linter.add_text(modelservice(), "values.yaml", ".yaml")
    assert [f.code for f in linter.run().findings] == ["VL705"]  # the same run without the LimitRange
    linter = Linter(LintOptions(select=["VL705"]))
    linter.add_text(modelservice(), "values.yaml", ".yaml")
    linter.add_text(limit_range, "limits.yaml", ".yaml")
    assert linter.run().findings == []


def test_does_not_catch_production_stack_chart_resources():
    """chart.resources requires requestMemory and requestCPU (_helpers.tpl lines 170-171): never BestEffort."""
    assert where(stack(), "VL705") == []
    no_memory = stack().replace('    requestMemory: "64Gi"\n', "").replace("    requestCPU: 8\n", "")
    assert where(no_memory, "VL705") == []


# --- VL707: the Deployment's rollout --------------------------------------------------------------------------
def test_catches_the_stack_charts_default_strategy_at_the_replica_count():
    # chart.engineStrategy: maxSurge 100%, maxUnavailable 0 when servingEngineSpec.strategy is not set
    ((line, col, message),) = found(stack(), "VL707")
    assert (line, col) == (8, 5)  # replicaCount
    assert message.startswith("modelSpec entry `qwen` needs 4 spare nvidia.com/gpu to roll out: with maxSurge 100% "
                              "(the chart's default) = 1, maxUnavailable 0 (the chart's default) of 1 replica, the "
                              "chart's Deployment starts a new pod before any old pod stops")
    assert "Set servingEngineSpec.strategy" in message


def test_the_first_line_is_short_with_a_longer_entry_name():
    from vllmlint.formatters.report import split_message

    ((_, _, message),) = found(stack().replace('"qwen"', '"mistral-7b-instr"'), "VL707")
    head, _ = split_message(message)
    assert head == "modelSpec entry `mistral-7b-instr` needs 4 spare nvidia.com/gpu to roll out"


def test_catches_the_stack_default_at_the_entry_without_a_replica_count():
    text = stack().replace("    replicaCount: 1\n", "")
    ((line, col, message),) = found(text, "VL707")
    assert (line, col) == (4, 5)  # the modelSpec entry
    assert "of 1 replica (replicaCount not set: the API's default)" in message


def test_catches_a_written_stack_strategy_at_max_unavailable():
    spec = "  strategy:\n    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}\n"
    ((line, col, message),) = found(stack(spec=spec), "VL707")
    assert (line, col) == (4, 34)
    assert "with maxSurge 1, maxUnavailable 0 of 1 replica" in message
    assert "chart's default" not in message


def test_does_not_catch_the_stack_chart_with_recreate_keda_or_no_gpu():
    assert found(stack(spec="  strategy:\n    type: Recreate\n"), "VL707") == []
    assert found(stack(spec="  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n"), "VL707") == []
    # keda.enabled: no replicas in the template (a ScaledObject scales it)
    assert found(stack(entry="    keda:\n      enabled: true\n"), "VL707") == []
    assert found(stack().replace("requestGPU: 4", "requestGPU: 0"), "VL707") == []
    # four replicas and a written 25%/25%: one old pod goes first
    spec = "  strategy: {rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}\n"
    assert found(stack(spec=spec).replace("replicaCount: 1", "replicaCount: 4"), "VL707") == []


def test_catches_llm_d_without_a_strategy_at_the_role():
    # no decode.strategy: the template writes none, Kubernetes's 25%/25% on the chart's 1 replica
    ((line, col, message),) = found(modelservice(), "VL707")
    assert (line, col) == (5, 1)  # decode
    assert ("with maxSurge 25% by default = 1, maxUnavailable 25% by default = 0 of 1 replica (decode.replicas not "
            "set: the chart's default)") in message
    assert "needs 2 spare nvidia.com/gpu" in message  # parallelism.tensor 2
    assert "Set decode.strategy" in message


def test_catches_llm_d_replicas_at_their_key():
    ((line, col, _),) = found(modelservice(decode="  replicas: 2\n"), "VL707")
    assert (line, col) == (9, 3)


def test_does_not_catch_llm_d_with_a_strategy_prefill_at_zero_or_multinode():
    one_at_a_time = "  strategy:\n    rollingUpdate: {maxSurge: 0, maxUnavailable: 1}\n"
    assert found(modelservice(decode=one_at_a_time), "VL707") == []
    assert found(modelservice(decode="  replicas: 0\n"), "VL707") == []
    assert found("multinode: true\n" + modelservice(), "VL707") == []
    # the chart's prefill default is 0 replicas
    prefill = modelservice().replace("decode:", "prefill:", 1).replace("prefill:\n  create: false\n", "")
    assert found(prefill, "VL707") == []


# --- VL802: a credential written in the values file ------------------------------------------------------------
REAL_HF = "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"


def test_vl802_catches_a_literal_hf_token_the_chart_stores_in_a_secret_at_its_value():
    """production-stack's `hf_token: <string>`: the chart puts it in a Secret it renders, from this file."""
    ((line, col, message),) = found(stack(f"    hf_token: {REAL_HF}\n"), "VL802")
    assert (line, col) == (12, 15)
    assert message.startswith("hf_token of modelSpec qwen is a Hugging Face")
    assert REAL_HF not in message


def test_vl802_catches_a_literal_token_in_an_env_list_of_either_chart():
    env = f"    env:\n    - name: HF_TOKEN\n      value: {REAL_HF}\n"
    assert where(stack(env), "VL802") == [(14, 14)]
    assert where(modelservice(container=env), "VL802") == [(16, 14)]


def test_vl802_catches_the_api_key_of_the_whole_file_once_by_its_path():
    text = stack(spec='  vllmApiKey: "Zq8vLr2NwX4tKp7m"\n')
    ((line, col, message),) = found(text, "VL802")
    assert (line, col) == (3, 15) and message.startswith("servingEngineSpec.vllmApiKey is a credential")
    assert "`vllmApiKey: {secretName: ..., secretKey: ...}`" in message


def test_vl802_a_placeholder_is_info():
    ((line, col, message),) = found(stack("    hf_token: <hf-token>\n"), "VL802")
    assert (line, col) == (12, 15) and "placeholder" in message


def test_vl802_does_not_catch_a_secret_reference():
    assert where(stack("    hf_token:\n      secretName: hf\n      secretKey: token\n"), "VL802") == []
    env = "    env:\n    - name: HF_TOKEN\n      valueFrom: {secretKeyRef: {name: hf, key: token}}\n"
    assert where(stack(env), "VL802") == []
