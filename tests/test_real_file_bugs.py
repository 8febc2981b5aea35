"""Bugs found on real files (issue 26): each pinned with the file shape that showed it."""
from pathlib import Path

from vllmlint.engine import LintOptions, lint_text
from vllmlint.source.shell import read_script


def codes(text, filename, select=None, version="0.29.0"):
    result = lint_text(text, filename, LintOptions(select=select, vllm_version=version))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.code, f.span.line, f.span.col, f.value) for f in result.findings if f.code.startswith("VL1")]


# --- a documentation placeholder is a value, not two redirections ------------------------------------
KIMI = """# Kimi-K2.5

```bash
vllm serve moonshotai/Kimi-K2.5 --port <http_port> \\
  --tensor-parallel-size 8 \\
  --served-model-name kimi
```
"""


def test_placeholder_in_a_markdown_block_is_a_value():
    assert codes(KIMI, "README.md") == []


def test_placeholder_is_one_dynamic_word():
    (command,) = read_script("vllm serve m --port <http_port> --model=<your-model>\n").commands
    words = [(w.text, w.dynamic) for w in command.words]
    assert words[3:] == [("--port", False), ("<http_port>", True), ("--model=<your-model>", True)]


def test_a_real_redirection_is_still_one():
    (command,) = read_script("vllm serve m --port 8000 < input.txt > out.log\n").commands
    assert [w.text for w in command.words] == ["vllm", "serve", "m", "--port", "8000"]


def test_redirect_target_after_a_line_continuation():
    # As bash reads it: `>` writes to `log.txt` on the next line, and `--max-model-len 10` stays an argument.
    script = read_script("vllm serve m --port 8000 > \\\n  log.txt --max-model-len 10\n")
    (command,) = script.commands
    assert [w.text for w in command.words] == ["vllm", "serve", "m", "--port", "8000", "--max-model-len", "10"]


# --- argparse never takes a flag-looking word as a value ----------------------------------------------
def test_option_followed_by_a_flag_invents_no_positional():
    found = codes("vllm serve org/model --port --served-model-name alias\n", "serve.sh")
    assert found == [("VL106", 1, 22, "port")]


# --- `vllm serve serve MODEL`: the capacity rules still judge MODEL ------------------------------------
def test_serve_serve_keeps_the_model_for_the_other_rules():
    from vllmlint.vllm.invocation import find_invocations  # noqa: F401  (the reader the rules use)

    text = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {node.kubernetes.io/instance-type: g5.xlarge}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    args: [serve, meta-llama/Llama-3.1-70B-Instruct]
    resources: {limits: {nvidia.com/gpu: 1}}
"""
    result = lint_text(text, "pod.yaml", LintOptions(select=["VL601", "VL715", "VL107"]))
    found = sorted((f.code, f.span.line) for f in result.findings)
    assert ("VL601", 9) in found


# --- `--model=X`: the served name is X ------------------------------------------------------------------
SERVED = """apiVersion: apps/v1
kind: Deployment
metadata: {name: llama}
spec:
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model=/models/llama-3.1-70b", "--port", "8000"]
---
apiVersion: v1
kind: Service
metadata: {name: llama}
spec:
  selector: {app: llama}
  ports: [{port: 8000}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: client}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: curlimages/curl:8.8.0
        command: ["curl", "http://llama:8000/v1/completions", "-d", '{"model": "%s", "prompt": "hi"}']
"""


def test_inline_model_is_the_served_name():
    def vl719(model):
        result = lint_text(SERVED % model, "app.yaml", LintOptions(select=["VL719"]))
        return [(f.span.line, f.value) for f in result.findings]

    assert vl719("/models/llama-3.1-70b") == []
    assert [line for line, _ in vl719("llama")] == [31]


# --- VL715's advice fits the word it reports, and the model is still judged -----------------------------
def pod715(args):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{node.kubernetes.io/instance-type: g5.xlarge}}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.8.3
    args: {args}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def vl715(args, select=("VL715",)):
    result = lint_text(pod715(args), "pod.yaml", LintOptions(select=list(select)))
    return result.findings


def test_keyword_word_gets_the_option_not_a_model():
    (finding,) = vl715("[--model, Qwen/Qwen3-8B, trust_remote_code=True]")
    assert (finding.span.line, finding.span.col) == (9, 36)
    assert "write the option `--trust-remote-code` instead" in finding.message
    assert "--model trust_remote_code" not in finding.message


def test_a_shell_in_args_is_told_to_move_to_command():
    (finding,) = vl715("[/bin/bash, -c, 'vllm serve x']")
    assert (finding.span.line, finding.span.col) == (9, 12)
    assert "put that list in `command`" in finding.message and "--model /bin/bash" not in finding.message


def test_positional_model_is_still_judged_by_the_capacity_rules():
    found = {f.code for f in vl715("[meta-llama/Llama-3.1-70B-Instruct]", select=("VL715", "VL601"))}
    assert found == {"VL715", "VL601"}


# --- codes that moved: an old suppression still covers the new code, with VL008, not VL003 -------------
def test_old_suppressions_cover_the_moved_codes():
    cases = [
        ("VL107", "vllm/vllm-openai:v0.9.2", "[serve, Qwen/Qwen3-8B]", "VL715"),
        ("VL103", "vllm/vllm-openai:v0.29.0", '[Qwen/Qwen3-8B, "--quantization awq"]', "VL714"),
        ("VL106", "vllm/vllm-openai:v0.29.0", '[Qwen/Qwen3-8B, "--quantization awq"]', "VL714"),
    ]
    for old, image, args, new in cases:
        text = (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: vllm\n"
                f"    image: {image}\n    args: {args}  # vllmlint: disable={old} -- kept from 0.1.0\n")
        bare = lint_text(text.split("  # vllmlint")[0] + "\n", "pod.yaml", LintOptions())
        assert new in {f.code for f in bare.findings}, (old, new)
        result = lint_text(text, "pod.yaml", LintOptions())
        found = {f.code for f in result.findings}
        assert new not in found and "VL003" not in found, (old, found)
        assert "VL008" in found or any("VL008" in n.message or n.code == "VL008" for n in result.notices), old


# --- VLLM_USE_V1=0 set by a script for a 0.11+ vLLM (V0 gone) -------------------------------------------
def test_script_variables_are_judged_against_the_scripts_release():
    text = "#!/bin/sh\nexport VLLM_USE_V1=0\npip install vllm==0.12.0\nvllm serve Qwen/Qwen3-8B\n"
    result = lint_text(text, "serve.sh", LintOptions(select=["VL109"]))
    assert [(f.code, f.span.line, f.span.col, f.value) for f in result.findings] == [("VL109", 2, 8, "VLLM_USE_V1")]


def test_script_variables_stay_unjudged_without_a_known_release_or_for_docker():
    for text in ("#!/bin/sh\nVLLM_USE_V1=0 vllm serve Qwen/Qwen3-8B\n",
                 "#!/bin/sh\nVLLM_USE_V1=0 docker run vllm/vllm-openai:v0.12.0 --model Qwen/Qwen3-8B\n"):
        assert lint_text(text, "serve.sh", LintOptions(select=["VL109"])).findings == []


def test_a_container_script_export_is_judged_at_its_position():
    text = ('apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n'
            '    image: vllm/vllm-openai:v0.12.0\n'
            '    command: [sh, -c, "export VLLM_USE_V1=0 VLLM_ATTENTON_BACKEND=FLASHINFER; exec vllm serve m"]\n')
    result = lint_text(text, "pod.yaml", LintOptions(select=["VL109"]))
    assert [(f.span.line, f.span.col, f.value) for f in result.findings] == [
        (8, 31, "VLLM_USE_V1"), (8, 45, "VLLM_ATTENTON_BACKEND")]


# --- VL702's advice on a multi-node StatefulSet must not lead into VL713's deadlock -----------------------
def test_multi_node_statefulset_readiness_advice_sets_parallel_first():
    from pathlib import Path

    text = (Path(__file__).parent.parent / "fixtures/original/multi-node-statefulset.yaml").read_text()
    (finding,) = lint_text(text, "sts.yaml", LintOptions(select=["VL702"])).findings
    assert (finding.span.line, finding.span.col) == (56, 15)
    assert "Set `podManagementPolicy: Parallel` on StatefulSet vllm-inference first" in finding.message
    parallel = text.replace('  serviceName: "vllm-inference"\n',
                            '  serviceName: "vllm-inference"\n  podManagementPolicy: Parallel\n', 1)
    assert parallel != text
    (finding,) = lint_text(parallel, "sts.yaml", LintOptions(select=["VL702"])).findings
    assert "podManagementPolicy" not in finding.message and finding.message.endswith("readinessProbe on /health.")


# --- AIBrix's `-distributed` images name their upstream release --------------------------------------------
def test_aibrix_distributed_tag_maps_to_its_release():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: llm-engine\n"
            "    image: aibrix-container-registry-cn-beijing.cr.volces.com/aibrix/vllm-openai:v0.6.2-distributed\n"
            "    command: [python3, -m, vllm.entrypoints.openai.api_server, --model, m, --enable-log-requests]\n")
    result = lint_text(text, "pod.yaml", LintOptions(select=["VL105"]))
    assert [(f.code, f.span.line, f.span.col) for f in result.findings] == [("VL105", 8, 76)]
    assert "0.6.2" in result.findings[0].message


# --- the audited chapter: a container-level fsGroup belongs to the pod's securityContext ---------------------
def test_container_fsgroup_is_told_to_move_to_the_pod():
    text = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  selector: {matchLabels: {app: v}}\n"
            "  template:\n    metadata: {labels: {app: v}}\n    spec:\n      containers:\n      - name: vllm\n"
            "        image: vllm/vllm-openai:v0.29.0\n        securityContext:\n          runAsUser: 1000\n"
            "          fsGroup: 1000\n")
    (finding,) = lint_text(text, "d.yaml", LintOptions(select=["VL809"])).findings
    assert (finding.span.line, finding.span.col) == (14, 11)
    assert "`fsGroup` is a field of `spec.template.spec.securityContext`: move it there." in finding.message


# --- a pod pinned to a Karpenter pool by name is judged on that pool's GPUs only ---------------------------
def test_karpenter_nodepool_selector_picks_the_pool():
    text = POOLS
    found = lint_text(text % "Qwen/Qwen2.5-14B-Instruct", "pools.yaml", LintOptions(select=["VL601"])).findings
    assert found == []  # it fits the L40S of the pool it names; the A10G pool is another pod's
    (finding,) = lint_text(text % "meta-llama/Llama-3.1-70B-Instruct", "pools.yaml",
                           LintOptions(select=["VL601"])).findings
    assert (finding.span.line, finding.span.col) == (33, 16) and "L40S" in finding.message and "A10G" not in finding.message


POOLS = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a10g}
spec:
  template:
    spec:
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: l40s}
spec:
  template:
    spec:
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g6e.xlarge]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: v}}
  template:
    metadata: {labels: {app: v}}
    spec:
      nodeSelector: {karpenter.sh/nodepool: l40s}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: [%s, --max-model-len, "8192"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


# --- the audited chapter: --enable-lora with no adapter source ----------------------------------------------
def test_enable_lora_without_adapters_is_an_info_finding_where_the_run_shows_everything():
    from vllmlint.finding import Severity

    def pod(args, env=""):
        return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
                f"    image: vllm/vllm-openai:v0.29.0\n    args: {args}\n{env}")

    (finding,) = lint_text(pod("[m, --enable-lora]"), "p.yaml", LintOptions(select=["VL108"])).findings
    assert (finding.span.line, finding.span.col, finding.severity) == (8, 15, Severity.INFO)
    for quiet in (pod("[m, --enable-lora, --lora-modules, a=/x]"),
                  pod("[m, --enable-lora]", "    env: [{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: 'True'}]\n"),
                  pod("[m, --enable-lora]", "    envFrom: [{configMapRef: {name: elsewhere}}]\n"),
                  pod("[m, --enable-lora, --config, /etc/vllm.yaml]")):
        assert lint_text(quiet, "p.yaml", LintOptions(select=["VL108"])).findings == [], quiet
    assert lint_text("vllm serve m --enable-lora\n", "s.sh", LintOptions(select=["VL108"])).findings == []


# --- production-stack's VLLMRuntime: spec.vllmConfig.env reaches the vLLM container ----------------------------
def test_vllmruntime_env_is_judged_where_it_is_written():
    text = """apiVersion: production-stack.vllm.ai/v1alpha1
kind: VLLMRuntime
metadata: {name: rt}
spec:
  model:
    modelURL: "meta-llama/Llama-3.1-8B-Instruct"
  vllmConfig:
    port: 8000
    env:
      - name: HF_HOME
        value: "/data"
      - name: VLLM_LOGGING_LEVL
        value: DEBUG
  deploymentConfig:
    image:
      registry: "docker.io"
      name: "vllm/vllm-openai:v0.29.0"
"""
    found = lint_text(text, "rt.yaml", LintOptions(select=["VL109"])).findings
    assert [(f.span.line, f.span.col, f.value) for f in found] == [(12, 15, "VLLM_LOGGING_LEVL")]
    assert "VLLM_LOGGING_LEVEL" in found[0].message


# --- found by the long fuzz: an invocation with no word from a file --------------------------------------------
# Two containers of only `image:` (a Knative Service allows nameless containers): both run the image's own
# entrypoint on port 8000, and every rule that points at "the invocation" once raised instead of pointing at the
# container's image (VL717: internal error).
KNATIVE_TWO_IMAGES = """apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: vllm-knative
spec:
  template:
    spec:
      containers:
        - image: vllm/vllm-openai:v0.11.0
        - image: vllm/vllm-openai:v0.11.0
          resources:
            limits: {nvidia.com/gpu: "1"}
"""


def test_an_invocation_of_only_an_image_points_at_the_image():
    result = lint_text(KNATIVE_TWO_IMAGES, "kn.yaml", LintOptions())
    assert not result.internal_error, [n.message for n in result.notices]
    assert [(f.code, f.span.line, f.span.col) for f in result.findings if f.code == "VL717"] == [("VL717", 10, 18)]
    for invocation in result_invocations(KNATIVE_TWO_IMAGES):
        anchor = invocation.anchor
        assert anchor.source is not None and anchor.text == "vllm/vllm-openai:v0.11.0"


def result_invocations(text):
    from vllmlint.engine import Linter

    linter = Linter(LintOptions())
    linter.add_text(text, "kn.yaml")
    return linter.build().invocations


# --- found by the long fuzz: escaped surrogates in a repeated key ----------------------------------------------
# JSON writes a character outside the BMP as an escaped pair (`"\ud83e\udd99"`): a repeated key made of one was
# quoted in the VL001 message as two lone surrogates, and the JSON and SARIF reports failed to fingerprint it.
def test_a_repeated_key_with_an_escaped_pair_is_quoted_as_its_character():
    text = '{\n  "\\ud83e\\udd99apiVersion": "apps/v1",\n  "\\ud83e\\udd99apiVersion": "apps/v1",\n  "kind": "Pod"\n}\n'
    result = lint_text(text, "m.json", LintOptions())
    (duplicate,) = [f for f in result.findings if f.code == "VL001"]
    assert "`\U0001f999apiVersion`" in duplicate.message and (duplicate.span.line, duplicate.span.col) == (3, 3)
    assert len(duplicate.fingerprint()) == 32


def test_a_lone_surrogate_in_a_value_still_fingerprints():
    from vllmlint.finding import Finding, Severity, Span

    finding = Finding("VL001", Severity.ERROR, "m", "f.yaml", Span(0, 0, 1, 1, 1, 1), value="\ud83e")
    assert len(finding.fingerprint()) == 32


# --- a digest-pinned image: the note says the release can only come from the annotation ----------------------
def test_digest_pinned_image_note_names_the_annotation_as_the_only_source():
    # The audited chapter's Deployment: `vllm/vllm-openai@sha256:...` (v0.29.0-cu129), no annotation.
    text = (Path(__file__).resolve().parent.parent / "fixtures/audited/single-gpu-deployment.yaml").read_text()
    result = lint_text(text, "single-gpu-deployment.yaml", LintOptions())
    (note,) = [n for n in result.notices if n.code == "VL006"]
    assert "pin the image" not in note.message
    assert "pinned by digest, so vllmlint can learn its release only from the `vllmlint.io/vllm-version` " \
           "annotation" in note.message
    # A floating tag still gets "pin the image".
    result = lint_text(text.replace("@sha256:3e10e8189823e0f7ae4620c271bcdaaf64127ec7d0edc351591a508498b7684a",
                                    ":latest"), "single-gpu-deployment.yaml", LintOptions())
    (note,) = [n for n in result.notices if n.code == "VL006"]
    assert "pin the image" in note.message
