"""Issue 9: under --render, findings of the rendered output go back to the files as written. Helm: each document
is under the template its `# Source:` names, and a position goes to the template's line with the same text (same
column past the indentation), or to the one place the finding's own text (or a `--flag=` name) is written; else
to the template's first line, with a note in the message. Kustomize: each object of the build goes to the
resource file that holds it (same kind, same name or one a prefix/suffix lengthened, no other namespace written),
then to the line the same way (else the object's first line). The tools are fake scripts on PATH."""
import json
import os
import stat

from conftest import run_cli

TEMPLATE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: "vllm/vllm-openai:{{ .Values.tag }}"
          args:
            - --model
            - {{ .Values.model }}
            - --tensor-parallel-size
            - "2"
            - --num-scheduler-steps={{ .Values.steps }}
            {{- toYaml .Values.extraArgs | nindent 12 }}
          resources:
            limits:
              nvidia.com/gpu: 4
"""
RENDERED = """---
# Source: serve/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: release-name-vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: "vllm/vllm-openai:v0.11.0"
          args:
            - --model
            - meta-llama/Llama-3.1-8B-Instruct
            - --tensor-parallel-size
            - "2"
            - --num-scheduler-steps=8
            - --seed
            - "x"
          resources:
            limits:
              nvidia.com/gpu: 4
"""


def _tool(tmp_path, name, output):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (tmp_path / f"{name}.out").write_text(output)
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\ncat '{tmp_path / (name + '.out')}'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def _run(tmp_path, env, *args):
    code, out, err = run_cli("--render", "--format", "json", *args, cwd=tmp_path, env=env)
    assert code in (0, 1), err
    return [(f["path"], f["line"], f["column"], f["end_column"] if "end_column" in f else None, f["code"],
             f["message"]) for f in json.loads(out)["findings"]]


def _chart(tmp_path, template=TEMPLATE):
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: serve\nversion: 0.1.0\n")
    (tmp_path / "chart" / "templates" / "deployment.yaml").write_text(template)


def test_helm_findings_go_to_the_template_lines(tmp_path):
    _chart(tmp_path)
    env = _tool(tmp_path, "helm", RENDERED)
    found = {(path, line, col, code) for path, line, col, _, code, _ in _run(tmp_path, env, "--select",
                                                                              "VL102,VL106,VL606,VL608", "chart")}
    assert found == {
        # `--num-scheduler-steps=8` rendered from `--num-scheduler-steps={{ .Values.steps }}`: the flag's name
        ("chart/templates/deployment.yaml", 16, 15, "VL102"),
        # the same line as written: `- --tensor-parallel-size` and `nvidia.com/gpu: 4`
        ("chart/templates/deployment.yaml", 14, 15, "VL608"),
        ("chart/templates/deployment.yaml", 20, 31, "VL606"),
        # `--seed x` came from the values (`toYaml .Values.extraArgs`): not in the template, so at its first line
        ("chart/templates/deployment.yaml", 1, 1, "VL106"),
    }


def test_helm_unmapped_finding_says_so(tmp_path):
    _chart(tmp_path)
    env = _tool(tmp_path, "helm", RENDERED)
    (finding,) = _run(tmp_path, env, "--select", "VL106", "chart")
    assert finding[:3] == ("chart/templates/deployment.yaml", 1, 1)
    assert finding[5].endswith("(line 19 of what `helm template` rendered from it: its text is not in "
                               "chart/templates/deployment.yaml as written, so the finding is placed at the file's "
                               "first line)")


def test_helm_span_is_the_written_text(tmp_path):
    _chart(tmp_path)
    env = _tool(tmp_path, "helm", RENDERED)
    code, out, _ = run_cli("--render", "--select", "VL102", "--format", "json", "chart", cwd=tmp_path, env=env)
    (finding,) = json.loads(out)["findings"]
    # the flag's name as written, without the rendered `=8`
    assert (finding["line"], finding["column"], finding["end_line"], finding["end_column"]) == (16, 15, 16, 36)
    assert finding["fix"] is None  # the fix edits the rendered text, which is no file: dropped


def test_helm_ambiguous_line_is_not_guessed(tmp_path):
    # `- "2"` is written twice in the template: the finding on it is not put on either line.
    _chart(tmp_path, TEMPLATE.replace('            - --num-scheduler-steps={{ .Values.steps }}\n',
                                      '            - --pipeline-parallel-size\n            - "2"\n'))
    env = _tool(tmp_path, "helm", RENDERED.replace("            - --num-scheduler-steps=8\n",
                                                   '            - --pipeline-parallel-size\n            - "2"\n'))
    found = [(path, line, col, code) for path, line, col, _, code, _ in _run(tmp_path, env, "--select", "VL606",
                                                                             "chart")]
    assert found == []  # TP 2 x PP 2 = 4: nothing to report; the run still maps without error


BASE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.0
          args:
            - --model
            - facebook/opt-125m
            - --tensor-parallel-size
            - "2"
            - --num-scheduler-steps
            - "8"
          resources:
            limits:
              nvidia.com/gpu: 4
"""
BUILT = """apiVersion: v1
kind: ConfigMap
metadata:
  name: prod-settings
  namespace: llm
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: prod-vllm
  namespace: llm
spec:
  template:
    spec:
      containers:
      - args:
        - --model
        - facebook/opt-125m
        - --tensor-parallel-size
        - "2"
        - --num-scheduler-steps
        - "8"
        - --swap-space
        - "4"
        image: vllm/vllm-openai:v0.11.0
        name: vllm
        resources:
          limits:
            nvidia.com/gpu: 4
---
apiVersion: v1
kind: Pod
metadata:
  name: generated
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.0
    args: [--model, m, --num-scheduler-steps, "8"]
"""


def _kustomize(tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "kustomization.yaml").write_text("resources:\n  - deployment.yaml\n")
    (tmp_path / "base" / "deployment.yaml").write_text(BASE)
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text(
        "namePrefix: prod-\nnamespace: llm\nresources:\n  - ../base\n  - configmap.yaml\n  - https://example.com/x\n"
        "images:\n  - {name: vllm/vllm-openai, newTag: v0.11.0}\n")
    (tmp_path / "overlay" / "configmap.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n")
    return _tool(tmp_path, "kustomize", BUILT)
