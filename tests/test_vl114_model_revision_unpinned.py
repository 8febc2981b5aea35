"""VL114 model-revision-unpinned: a Hub repository served without --revision, or downloaded by
snapshot_download / hf download without a revision (vllmlint.vllm.downloads reads the `python -c` script)."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def found(text, filename="deploy.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL114"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.value, f.severity) for f in result.findings]


def server(args, env=""):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: {args}{env}
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


def job(script, python="python"):
    body = "\n".join("            " + line if line else "" for line in script.splitlines())
    return f"""apiVersion: batch/v1
kind: Job
metadata: {{name: download}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: download
        image: python:3.12-slim
        command:
          - {python}
          - -c
          - |
{body}
"""


# --- catches ---------------------------------------------------------------------------------------------
def test_catches_a_server_on_the_main_branch():
    assert found(server("[Qwen/Qwen3-0.6B, --max-model-len, '2048']")) == [
        (12, 16, "revision:Qwen/Qwen3-0.6B", Severity.INFO)]


def test_catches_the_model_option():
    assert [f[2] for f in found(server("[--model=Qwen/Qwen3-0.6B]"))] == ["revision:Qwen/Qwen3-0.6B"]


def test_catches_the_chapters_snapshot_download_with_a_module_level_id():
    script = ('from huggingface_hub import snapshot_download\nimport os\n\nmodel_id = '
              '"meta-llama/Llama-3.1-70B-Instruct"\nsnapshot_download(repo_id=model_id, local_dir="/models/x")\n')
    assert found(job(script)) == [(19, 13, "revision:meta-llama/Llama-3.1-70B-Instruct", Severity.INFO)]


def test_catches_an_attribute_call_and_python3_by_path():
    script = 'import huggingface_hub\nhuggingface_hub.snapshot_download("Qwen/Qwen3-8B")\n'
    assert found(job(script, "/usr/bin/python3")) == [(16, 29, "revision:Qwen/Qwen3-8B", Severity.INFO)]


@pytest.mark.parametrize("command", ["[hf, download, Qwen/Qwen3-8B, --local-dir, /models/q]",
                                     "[huggingface-cli, download, --local-dir, /models/q, Qwen/Qwen3-8B]"])
def test_catches_the_cli(command):
    text = f"""apiVersion: v1
kind: Pod
metadata: {{name: fetch}}
spec:
  containers:
  - name: fetch
    image: python:3.12-slim
    command: {command}
"""
    assert [f[2] for f in found(text)] == ["revision:Qwen/Qwen3-8B"]


def test_message_says_what_to_do_first():
    result = lint_text(server("[Qwen/Qwen3-0.6B]"), "deploy.yaml", LintOptions(select=["VL114"]))
    assert result.findings[0].message.startswith("Pin `Qwen/Qwen3-0.6B` to a commit with `--revision <sha>`.")


# --- does not catch --------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", ["[Qwen/Qwen3-0.6B, --revision, c1899de289a04d12100db370d81485cdf75e47ca]",
                                  "[/models/llama-3.1-70b]", "[s3://bucket/model]", "[$(MODEL)]",
                                  "[Qwen/Qwen3-0.6B, --config, /etc/vllm/config.yaml]"])
def test_does_not_catch_pinned_local_or_unknown_models(args):
    assert found(server(args)) == []


def test_does_not_catch_offline_mode():
    env = "\n        env: [{name: HF_HUB_OFFLINE, value: '1'}]"
    assert found(server("[Qwen/Qwen3-0.6B]", env)) == []


@pytest.mark.parametrize("script", [
    'from huggingface_hub import snapshot_download\nsnapshot_download("Qwen/Qwen3-8B", revision="abc")\n',
    'from huggingface_hub import snapshot_download\nsnapshot_download(repo_id=name)\n',  # not a literal
    'from huggingface_hub import snapshot_download\nkw = {}\nsnapshot_download("Qwen/Qwen3-8B", **kw)\n',
    'from huggingface_hub import snapshot_download\nsnapshot_download("/local/dir")\n',
    'from huggingface_hub import snapshot_download\nm = "a/b"\nm = "c/d"\nsnapshot_download(m)\n',  # bound twice
    'snapshot_download("Qwen/Qwen3-8B"\n',  # not Python
])
def test_does_not_catch_pinned_or_unknown_downloads(script):
    assert found(job(script)) == []


def test_does_not_catch_the_cli_with_a_revision_or_for_a_dataset():
    for command in ("[hf, download, Qwen/Qwen3-8B, --revision, abc]",
                    "[hf, download, --repo-type, dataset, org/data]"):
        text = f"""apiVersion: v1
kind: Pod
metadata: {{name: fetch}}
spec:
  containers:
  - name: fetch
    image: python:3.12-slim
    command: {command}
"""
        assert found(text) == [], command


def test_does_not_catch_a_multi_node_group_vl811_reports():
    text = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
        - name: vllm-leader
          image: vllm/vllm-openai:v0.29.0
          command: [vllm, serve, Qwen/Qwen3-8B, --tensor-parallel-size, "8", --pipeline-parallel-size, "2",
                    --nnodes, "2", --node-rank, "0", --master-addr, $(LWS_LEADER_ADDRESS)]
          resources: {limits: {nvidia.com/gpu: 8}}
    workerTemplate:
      spec:
        containers:
        - name: vllm-worker
          image: vllm/vllm-openai:v0.29.0
          command: [vllm, serve, Qwen/Qwen3-8B, --tensor-parallel-size, "8", --pipeline-parallel-size, "2",
                    --nnodes, "2", --node-rank, "1", --master-addr, $(LWS_LEADER_ADDRESS), --headless]
          resources: {limits: {nvidia.com/gpu: 8}}
"""
    assert found(text) == []


# --- shell scripts and Markdown shell blocks: a server started from the command line ------------------------
SPECULATIVE = """python -m vllm.entrypoints.openai.api_server \\
  --model meta-llama/Llama-3.1-70B-Instruct \\
  --speculative-model meta-llama/Llama-3.1-8B-Instruct \\
  --num-speculative-tokens 5
"""


def test_catches_the_chapters_shell_command():
    # catches: the April chapter's speculative-decoding command (fixtures/original/speculative-decoding.sh).
    assert found(SPECULATIVE, "serve.sh") == [(2, 11, "revision:meta-llama/Llama-3.1-70B-Instruct", Severity.INFO)]


def test_catches_a_markdown_shell_block():
    text = "# Serve\n\n```bash\nvllm serve Qwen/Qwen3-8B --port 8000\n```\n"
    assert found(text, "README.md") == [(4, 12, "revision:Qwen/Qwen3-8B", Severity.INFO)]


def test_does_not_catch_a_pinned_or_offline_script():
    # does not catch: `--revision` given, or the script runs vLLM offline (prefix or export).
    assert found("vllm serve Qwen/Qwen3-8B --revision c1899de289a04d12100db370d81485cdf75e47ca\n", "serve.sh") == []
    assert found("HF_HUB_OFFLINE=1 vllm serve Qwen/Qwen3-8B\n", "serve.sh") == []
    assert found("export HF_HUB_OFFLINE=1\nvllm serve Qwen/Qwen3-8B\n", "serve.sh") == []
    assert found("vllm serve /models/target --port 8000\n", "serve.sh") == []
