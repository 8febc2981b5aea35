"""VL711 chat-template-missing: catches / does-not-catch, every finding pinned at line, column and severity."""
import pytest

from vllmlint.capacity.specs import clear_extra, register_extra
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def pod(image, lines, extra=""):
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n  - name: vllm\n"
            f"    image: {image}\n" + "".join(f"    {line}\n" for line in lines) + extra)


def findings(text, codes=("VL711",), filename="example.yaml", **options):
    result = lint_text(text, filename, LintOptions(select=list(codes), **options))
    assert not result.internal_error, result.notices
    return [f for f in result.findings if f.code in codes]


def where(text, **kw):
    return [(f.span.line, f.span.col, f.severity) for f in findings(text, **kw)]


BASE = "meta-llama/Llama-2-7b-hf"
IMG = "vllm/vllm-openai:v0.29.0"
W, N = Severity.WARNING, Severity.INFO
JOB = ("---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: client}\nspec:\n  template:\n    spec:\n"
       "      containers:\n      - name: c\n        image: curlimages/curl:8.10.1\n"
       "        command: [curl, 'http://vllm:8000/v1/chat/completions', -d, '{}']\n")
ROUTE = ("---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n"
         "  rules:\n  - matches: [{path: {type: PathPrefix, value: /v1/chat/completions}}]\n")
SERVICE = ("---\napiVersion: v1\nkind: Service\nmetadata: {name: vllm}\nspec:\n  selector: {app: vllm}\n"
           "  ports: [{port: 8000}]\n")


def served_pod(image, lines, extra=""):
    """The pod with a label, and a Service `vllm` that selects it on port 8000 (vLLM's default API port)."""
    return pod(image, lines).replace("metadata: {name: vllm}", "metadata: {name: vllm, labels: {app: vllm}}") \
        + SERVICE + extra


def curl_job(url, body="{}"):
    return JOB.replace("'http://vllm:8000/v1/chat/completions', -d, '{}'", f"'{url}', -d, '{body}'")


BENCH = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: bench}\nspec:\n  containers:\n  - name: b\n"
         "    image: vllm/vllm-openai:v0.29.0\n    command: [vllm, bench, serve, --backend, openai-chat{}]\n")
CONFIGMAP = ("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: client-config}\ndata:\n"
             "  OPENAI_URL: http://qwen-chat:8000/v1/chat/completions\n")
OTHER_SERVER = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: qwen, labels: {app: qwen}}\nspec:\n  containers:\n"
                "  - name: vllm\n    image: vllm/vllm-openai:v0.29.0\n    args: [Qwen/Qwen2.5-7B-Instruct]\n---\n"
                "apiVersion: v1\nkind: Service\nmetadata: {name: qwen-chat}\nspec:\n  selector: {app: qwen}\n"
                "  ports: [{port: 8000}]\n")
SIDECAR = ("apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n  - name: vllm\n"
           f"    image: {IMG}\n    args: [{BASE}]\n  - name: ui\n    image: ghcr.io/example/chat-ui:1.0\n"
           "    env: [{name: OPENAI_URL, value: 'http://localhost:8000/v1/chat/completions'}]\n")
LORA = [f"args: [{BASE}, --enable-lora, --lora-modules, sql=/adapters/sql]"]
SCRIPT_CHAT = "vllm serve meta-llama/Llama-2-7b-hf &\ncurl localhost:8000/v1/chat/completions -d '{}'\n"

CATCHES = [
    ("positional, no chat use: info", pod(IMG, [f"args: [{BASE}]"]), [(8, 12, N)]),
    ("--model on the api_server image", pod("vllm/vllm-openai:v0.8.5", [f"args: [--model, {BASE}]"]), [(8, 21, N)]),
    ("a curl Job calls chat through the server's Service: warning", served_pod(IMG, [f"args: [{BASE}]"], JOB),
     [(8, 12, W)]),
    ("a curl Job calls a host that is no Service of the run: info", pod(IMG, [f"args: [{BASE}]"], JOB), [(8, 12, N)]),
    ("a ConfigMap URL of another server's Service: info", served_pod(IMG, [f"args: [{BASE}]"], CONFIGMAP + OTHER_SERVER),
     [(8, 12, N)]),
    ("a ConfigMap URL of a Service not in the run: info", served_pod(IMG, [f"args: [{BASE}]"], CONFIGMAP), [(8, 12, N)]),
    ("a ConfigMap URL of this server's Service: warning",
     served_pod(IMG, [f"args: [{BASE}]"], CONFIGMAP.replace("qwen-chat", "vllm")), [(8, 12, W)]),
    ("a Service port mapped to the API port", served_pod(IMG, [f"args: [{BASE}]"],
                                                         curl_job("http://vllm/v1/chat/completions")).replace(
        "ports: [{port: 8000}]", "ports: [{port: 80, targetPort: 8000}]"), [(8, 12, W)]),
    ("the Service reaches another port than the API's: info",
     served_pod(IMG, [f"args: [{BASE}, --port, '8001']"], JOB), [(8, 12, N)]),
    ("localhost in the server's own pod: warning", SIDECAR, [(8, 12, W)]),
    ("a route's path names no host, two vLLM servers: info",
     pod(IMG, [f"args: [{BASE}]"], ROUTE + OTHER_SERVER), [(8, 12, N)]),
    ("a benchmark sending to the server's Service", served_pod(IMG, [f"args: [{BASE}]"],
                                                               BENCH.replace("{}", ", --base-url, 'http://vllm:8000'")),
     [(8, 12, W)]),
    ("a benchmark on its own pod's localhost: info", pod(IMG, [f"args: [{BASE}]"], BENCH.replace("{}", "")),
     [(8, 12, N)]),
    ("LoRA: a chat request naming an adapter: info", served_pod(IMG, LORA, curl_job(
        "http://vllm:8000/v1/chat/completions", '{"model": "sql", "messages": []}')), [(8, 12, N)]),
    ("LoRA: a chat request naming the base model: warning", served_pod(IMG, LORA, curl_job(
        "http://vllm:8000/v1/chat/completions", f'{{"model": "{BASE}", "messages": []}}')), [(8, 12, W)]),
    ("LoRA: a chat request naming no model: info", served_pod(IMG, LORA, JOB), [(8, 12, N)]),
    ("LoRA: tool calling alone: info", pod(IMG, [LORA[0][:-1] + ", --enable-auto-tool-choice, --tool-call-parser, "
                                                 "llama3_json]"]), [(8, 12, N)]),
    ("runtime LoRA loading: a request naming no model: info",
     served_pod(IMG, ["env: [{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: 'True'}]",
                      f"args: [{BASE}, --enable-lora]"], JOB), [(9, 12, N)]),
    ("--enable-lora without adapters or runtime loading: warning",
     served_pod(IMG, [f"args: [{BASE}, --enable-lora]"], JOB), [(8, 12, W)]),
    ("an HTTPRoute on the chat path: warning", pod(IMG, [f"args: [{BASE}]"], ROUTE), [(8, 12, W)]),
    ("tool calling switched on: warning", pod(IMG, [f"args: [{BASE}, --enable-auto-tool-choice, --tool-call-parser, "
                                                   "llama3_json]"]), [(8, 12, W)]),
    ("case-insensitive id", pod(IMG, ["args: [meta-llama/llama-2-7b-hf]"]), [(8, 12, N)]),
    ("--tokenizer naming the same repository", pod(IMG, [f"args: [{BASE}, --tokenizer, {BASE}]"]), [(8, 12, N)]),
    ("--task generate", pod("vllm/vllm-openai:v0.8.5", [f"args: [--model, {BASE}, --task, generate]"]),
     [(8, 21, N)]),
    ("unknown release: the newest is assumed", pod("vllm/vllm-openai:latest", [f"args: [{BASE}]"]), [(8, 12, N)]),
    ("--revision main is the catalog's branch", pod(IMG, [f"args: [{BASE}, --revision, main]"]), [(8, 12, N)]),
    ("--tokenizer-revision main wins over --revision", pod(IMG, [f"args: [{BASE}, --revision, v2, "
                                                                "--tokenizer-revision, main]"]), [(8, 12, N)]),
    ("$(VAR) resolved from env", pod(IMG, [f"env: [{{name: MODEL, value: {BASE}}}]", 'args: ["$(MODEL)"]']),
     [(9, 12, N)]),
]
SILENT = [
    ("--chat-template given", pod(IMG, [f"args: [{BASE}, --chat-template, /t/llama2.jinja]"])),
    ("--chat-template from a $(VAR)", pod(IMG, [f'args: [{BASE}, --chat-template, "$(TEMPLATE)"]'])),
    ("a chat-tuned model", pod(IMG, ["args: [meta-llama/Llama-3.1-8B-Instruct]"], JOB)),
    ("a variant the fact is not about", pod(IMG, ["args: [meta-llama/Llama-2-7b-chat-hf]"], JOB)),
    ("a quantized copy", pod(IMG, ["args: [TheBloke/Llama-2-7b-hf-AWQ]"], JOB)),
    ("a local path matched by its words", pod(IMG, ["args: [/models/llama-2-7b-hf]"], JOB)),
    ("a model not in the catalog", pod(IMG, ["args: [facebook/opt-125m]"], JOB)),
    ("another tokenizer", pod(IMG, [f"args: [{BASE}, --tokenizer, meta-llama/Llama-2-7b-chat-hf]"], JOB)),
    ("the mistral tokenizer", pod(IMG, [f"args: [{BASE}, --tokenizer-mode, mistral]"], JOB)),
    ("an embedding task", pod("vllm/vllm-openai:v0.8.5", [f"args: [--model, {BASE}, --task, embed]"], JOB)),
    ("the pooling runner", pod(IMG, [f"args: [{BASE}, --runner, pooling]"], JOB)),
    ("--convert embed", pod(IMG, [f"args: [{BASE}, --convert, embed]"], JOB)),
    ("a runner from $(VAR)", pod(IMG, [f'args: [{BASE}, --runner, "$(RUNNER)"]'], JOB)),
    ("the demo api_server has no chat endpoint",
     pod(IMG, [f"command: [python3, -m, vllm.entrypoints.api_server, --model, {BASE}]"], JOB)),
    ("a release older than the table", pod("vllm/vllm-openai:v0.5.4", [f"command: [vllm, serve, {BASE}]"])),
    ("a model from an unresolved $(VAR)", pod(IMG, ['args: ["$(MODEL)"]'], JOB)),
    ("chat use alone is no finding", JOB),
    ("--revision of another branch: its tokenizer may differ", pod(IMG, [f"args: [{BASE}, --revision, chat]"], JOB)),
    ("--revision=<commit>", pod(IMG, [f"args: [{BASE}, --revision=0123abcd]"], JOB)),
    ("--tokenizer-revision of another branch", pod(IMG, [f"args: [{BASE}, --tokenizer-revision, v2]"], JOB)),
    ("--revision from a $(VAR)", pod(IMG, [f'args: [{BASE}, --revision, "$(REV)"]'], JOB)),
]


@pytest.mark.parametrize("title,text,expected", CATCHES, ids=[c[0] for c in CATCHES])
def test_catches(title, text, expected):
    assert where(text) == expected


@pytest.mark.parametrize("title,text", SILENT, ids=[c[0] for c in SILENT])
def test_does_not_catch(title, text):
    assert where(text) == []


def test_script_with_a_chat_request_is_a_warning():
    assert where(SCRIPT_CHAT, filename="run.sh") == [(1, 12, W)]


def test_message_names_the_model_the_release_the_error_and_the_evidence():
    [finding] = findings(served_pod(IMG, [f"args: [{BASE}]"], JOB))
    message = finding.message
    assert message.startswith(f"`{BASE}` has no chat template")
    assert "vLLM 0.29.0" in message and "default chat template is no longer allowed" in message
    assert "Job client calls /v1/chat/completions (example.yaml:" in message
    assert "`--chat-template`" in message
    [info] = findings(pod(IMG, [f"args: [{BASE}]"]))
    assert "Nothing in the run shows chat use" in info.message
    [unlinked] = findings(pod(IMG, [f"args: [{BASE}]"], JOB))
    assert "not certainly sent to this server" in unlinked.message
    [adapter] = findings(served_pod(IMG, LORA, JOB))
    assert "LoRA adapters are served" in adapter.message and "naming the base model" in adapter.message


def test_an_assumed_release_stays_off_the_first_line():
    from vllmlint.formatters.report import split_message

    [finding] = findings(pod("vllm/vllm-openai:latest", ["args: [meta-llama/Llama-3.1-70B]"]))
    head, rest = split_message(finding.message)
    assert head.startswith("`meta-llama/Llama-3.1-70B` has no chat template and vLLM ") and len(head) <= 120, head
    assert "the workload's release is unknown" in rest and "assumed" not in head


def test_a_fallback_template_of_vllm_silences_it():
    # A model whose config.json model_type has a fallback in vLLM's registry (PaliGemma from 0.9.2).
    entry = {"id": "example/paligemma-base", "family": "paligemma", "architecture": "PaliGemmaForConditionalGeneration",
             "parameters": 6740000000, "num_hidden_layers": 32, "hidden_size": 4096, "intermediate_size": 11008,
             "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "vocab_size": 32000,
             "tie_word_embeddings": False, "max_position_embeddings": 4096, "torch_dtype": "float16",
             "attention": {"kind": "mha"}, "source": "test entry",
             "has_chat_template": {"value": False, "model_type": "paligemma", "source": "test entry"}}
    register_extra(models=[entry])
    try:
        assert where(pod(IMG, ["args: [example/paligemma-base]"], JOB)) == []
        # 0.8.5 had no fallback registry yet: the same model is reported there.
        assert where(served_pod("vllm/vllm-openai:v0.8.5", ["args: [--model, example/paligemma-base]"], JOB)) \
            == [(8, 21, W)]
    finally:
        clear_extra()


def test_chat_use_in_another_namespace_does_not_count():
    server = served_pod(IMG, [f"args: [{BASE}]"]).replace("metadata: {name: vllm, labels",
                                                          "metadata: {name: vllm, namespace: a, labels").replace(
        "metadata: {name: vllm}", "metadata: {name: vllm, namespace: a}")
    other = JOB.replace("metadata: {name: client}", "metadata: {name: client, namespace: b}")
    same = JOB.replace("metadata: {name: client}", "metadata: {name: client, namespace: a}")
    assert where(server + other) == [(8, 12, N)]
    assert where(server + same) == [(8, 12, W)]


def test_a_config_file_may_set_chat_template():
    # vLLM inserts the file's options (chat-template too): vllm/utils/__init__.py 0.10.1.1 lines 1953-1980.
    assert where(pod(IMG, [f"args: [{BASE}, --config, /etc/vllm/config.yaml]"])) == []
    assert where(pod(IMG, [f"args: [{BASE}, --max-model-len, '4096']"])) == [(8, 12, N)]


# --- base checkpoints catalogued beside their chat-tuned entry (models.yaml `repositories`) ---------------
@pytest.mark.parametrize("name", ["meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.2-3B", "meta-llama/Meta-Llama-3-8B",
                                  "meta-llama/Llama-3.1-70B"])
def test_catches_a_base_checkpoint_listed_in_repositories(name):
    # The resolver sizes it as its -Instruct entry; the template fact is the base repository's own.
    assert where(pod(IMG, [f"args: [{name}]"])) == [(8, 12, N)]
    assert where(served_pod(IMG, [f"args: [{name}]"], JOB)) == [(8, 12, W)]


def test_catches_the_mistral_7b_base_entry():
    # an entry of its own (vocabulary 32000, a 4096 sliding window), its tokenizer_config.json without a template
    assert where(pod(IMG, ["args: [mistralai/Mistral-7B-v0.1]"])) == [(8, 12, N)]
    assert where(served_pod(IMG, ["args: [mistralai/Mistral-7B-v0.1, --max-model-len, '8192']"], JOB)) == [(8, 12, W)]
    # its chat-tuned repositories and quantized copies are not what the fact describes
    assert where(served_pod(IMG, ["args: [mistralai/Mistral-7B-Instruct-v0.1]"], JOB)) == []
    assert where(served_pod(IMG, ["args: [TheBloke/Mistral-7B-v0.1-AWQ]"], JOB)) == []


def test_catches_a_base_checkpoint_behind_the_openai_chat_route_on_vllm_serve():
    text = pod("vllm/vllm-openai:v0.10.1.1", ["command: [vllm, serve, meta-llama/Llama-3.2-1B]"], ROUTE)
    [finding] = findings(text)
    assert (finding.span.line, finding.span.col, finding.severity) == (8, 28, W)
    assert finding.message.startswith("`meta-llama/Llama-3.2-1B` has no chat template")


def test_does_not_catch_the_chat_tuned_entry_of_a_listed_base():
    assert where(served_pod(IMG, ["args: [meta-llama/Llama-3.2-1B-Instruct]"], JOB)) == []
    assert where(served_pod(IMG, ["args: [meta-llama/Llama-3.1-70B-Instruct, -tp, '4']"], JOB)) == []


def test_does_not_catch_an_official_quantized_copy():
    # listed in `repositories` for its quantization only: nothing is known about its tokenizer
    assert where(served_pod(IMG, ["args: [Qwen/Qwen2.5-7B-Instruct-AWQ]"], JOB)) == []


def test_does_not_catch_a_base_checkpoint_without_a_sourced_fact():
    # meta-llama/Llama-3.1-8B: no source for its tokenizer_config.json was readable, so no fact: silent.
    assert where(served_pod(IMG, ["args: [meta-llama/Llama-3.1-8B]"], JOB)) == []


def test_does_not_catch_a_listed_base_with_a_chat_template_given():
    assert where(pod(IMG, ["args: [meta-llama/Llama-3.2-1B, --chat-template, /t/llama3.jinja]"], JOB)) == []
