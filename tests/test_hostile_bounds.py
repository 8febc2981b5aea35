"""Hostile input, issue 27: work and memory bounded by what the input is, counted (steps, sizes, tracemalloc
peaks), never timed. Each test failed on the code before its fix."""
import json
import sys
import tracemalloc

from conftest import run_cli
from vllmlint.engine import lint_paths


def _calls(function, *args) -> int:
    """How many Python frames (calls and generator steps) `function(*args)` runs: a measure of its work."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        count += 1
        return None

    sys.setprofile(tracer)
    try:
        function(*args)
    finally:
        sys.setprofile(None)
    return count


def _lines(function, *args) -> int:
    """How many Python lines `function(*args)` runs (loops included): a measure of its work."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        count += 1
        return tracer

    sys.settrace(tracer)
    try:
        function(*args)
    finally:
        sys.settrace(None)
    return count


def _peak(function, *args) -> int:
    """The bytes `function(*args)` allocated at its peak."""
    tracemalloc.start()
    try:
        function(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


POD_WITH_REMOVED_FLAG = ('apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n'
                         '    image: vllm/vllm-openai:v0.29.0\n    args: ["--swap-space=4"]\n')


# --- Compose interpolation ----------------------------------------------------------------------------------
def test_dotenv_values_doubling_each_other_are_refused_at_their_line(tmp_path):
    from vllmlint.source.compose import read_dotenv

    text = "C0=ab\n" + "".join(f"C{k}=${{C{k - 1}}}${{C{k - 1}}}\n" for k in range(1, 31))
    assert _peak(read_dotenv, text) < 32_000_000  # 2^30 characters a variable before
    variables, problem = read_dotenv(text)
    assert variables is None and problem is not None and problem[0] == 20  # C19: 2^20 characters
    (tmp_path / ".env").write_text(text)
    (tmp_path / "compose.yaml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.29.0\n"
                                           "    command: \"--swap-space ${C3}\"\n")
    result, _ = lint_paths([str(tmp_path)])
    assert not result.internal_error
    notes = [(n.code, n.path.endswith("/.env"), n.line) for n in result.notices if "expands past" in n.message]
    assert notes == [("VL005", True, 20)]
    # the refused file's variables are unknown: the flag is still found, its value not read
    assert any(f.code == "VL102" for f in result.findings)


def test_dotenv_values_within_the_bound_are_still_read():
    from vllmlint.source.compose import read_dotenv

    variables, problem = read_dotenv("A=x\nB=${A}-${A}\nC='${B}'\nD=\"${B}y\"\n")
    assert problem is None and variables == {"A": "x", "B": "x-x", "C": "${B}", "D": "x-xy"}


def test_nested_compose_defaults_are_a_note_and_the_other_files_are_reported(tmp_path):
    value = "x"
    for k in range(1000):
        value = "${V%d:-%s}" % (k, value)
    (tmp_path / "compose.yaml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.29.0\n"
                                           f"    command: \"--swap-space {value}\"\n")
    (tmp_path / "other.yaml").write_text(POD_WITH_REMOVED_FLAG)
    code, out, err = run_cli("--no-cache", "--format", "sarif", "-o", "out.sarif", "--format", "json", ".",
                             cwd=tmp_path)
    assert code == 1, err
    assert "internal error" not in err and "compose.yaml:4: Compose interpolation nested deeper" in err
    found = {(f["path"], f["code"]) for f in json.loads(out)["findings"]}
    assert ("other.yaml", "VL102") in found and ("compose.yaml", "VL102") in found
    assert (tmp_path / "out.sarif").exists()


def test_nesting_within_the_bound_is_still_followed():
    from vllmlint.source.compose import MAX_NESTING, interpolate

    value = "x"
    for k in range(MAX_NESTING):
        value = "${V%d:-%s}" % (k, value)
    done = interpolate(value, {})
    assert done.text == "x" and not done.unresolved
    done = interpolate("${A:-${B:-" + value + "}}", {})
    assert done.unresolved and done.text == "${A:-${B:-" + value + "}}"


def test_unknown_variables_are_interpolated_in_linear_work():
    from vllmlint.source.compose import interpolate

    small = _calls(interpolate, "${X}" * 500, {})
    large = _calls(interpolate, "${X}" * 2000, {})
    assert large < 5 * small  # 4x the input; quadratic before (the output length summed per variable)
    done = interpolate("a ${X} b $Y", {})
    assert done.text == "a ${X} b $Y" and done.unresolved_spans == [(2, 6), (9, 11)]


def test_words_of_a_command_with_many_set_variables_take_linear_memory():
    from vllmlint.source.compose import argv_words
    from vllmlint.source.yamlmodel import SourceFile, parse_documents

    def words(n):
        text = "c: \"" + " ".join("--f%d ${V%d}" % (i, i) for i in range(n)) + "\"\n"
        node = parse_documents(SourceFile("c.yaml", text))[0][0].root.get("c")
        variables = {"V%d" % i: ("value%014d" % i, ".env") for i in range(n)}
        return node, variables

    result = argv_words(*words(3))
    assert [w.text for w in result] == ["--f0", "value00000000000000", "--f1", "value00000000000001", "--f2",
                                        "value00000000000002"]
    assert result[1].notes == ["V0 from .env", "V1 from .env", "V2 from .env"] and not result[0].notes
    # 3,000 variables: every word kept a copy of every note before (72 MB)
    assert _peak(argv_words, *words(3000)) < 25_000_000


def test_interpolated_text_grows_by_a_bounded_amount():
    from vllmlint.source.compose import MAX_GROWTH, interpolate

    big = ("y" * (MAX_GROWTH // 4), ".env")
    done = interpolate("${A}" * 8, {"A": big})
    assert done.unresolved and len(done.text) <= 32 + MAX_GROWTH
    assert done.text.endswith("${A}") and done.text.startswith("y" * 100)


# --- OpenShift Template parameters ---------------------------------------------------------------------------
TEMPLATE = """apiVersion: template.openshift.io/v1
kind: Template
metadata: {name: t}
parameters:
  - name: MODEL_ID
    value: Qwen/Qwen3-8B
objects:
  - apiVersion: apps/v1
%s    kind: Deployment
    metadata: {name: vllm}
    spec:
      template:
        spec:
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.29.0
              args: ["--model=${MODEL_ID}", "--swap-space=4"]
"""


def _distinct_nodes(root) -> int:
    from vllmlint.source.yamlmodel import Mapping, Sequence

    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Mapping):
            stack.extend(value for _, value in node.items)
        elif isinstance(node, Sequence):
            stack.extend(node.items)
    return len(seen)


def test_template_objects_with_self_aliases_are_linted_and_the_other_files_reported(tmp_path):
    (tmp_path / "self.yaml").write_text(TEMPLATE % "    x: &a [*a]\n    y: &b {z: *b}\n")
    (tmp_path / "other.yaml").write_text(POD_WITH_REMOVED_FLAG)
    code, out, err = run_cli("--no-cache", "--format", "json", ".", cwd=tmp_path)
    assert code == 1 and "internal error" not in err, err
    found = {(f["path"], f["code"]) for f in json.loads(out)["findings"]}
    assert ("other.yaml", "VL102") in found and ("self.yaml", "VL102") in found


def test_template_alias_bomb_is_copied_once_per_node():
    from vllmlint.k8s.operators import openshift_template_objects
    from vllmlint.source.yamlmodel import SourceFile, UnknownScalar, parse_documents

    levels = "    l0: &l0 [x, x, x, x, x, x, x, x, \"${MODEL_ID}\"]\n" + "".join(
        f"    l{k}: &l{k} [{', '.join([f'*l{k - 1}'] * 9)}]\n" for k in range(1, 9))
    root = parse_documents(SourceFile("t.yaml", TEMPLATE % levels))[0][0].root
    before = _distinct_nodes(root.get("objects").items[0])
    [copied] = openshift_template_objects(root)  # 9^9 items once expanded: memory exhausted before
    assert _distinct_nodes(copied) <= before
    l1 = copied.get("l1")
    assert l1.items[0] is l1.items[8] and isinstance(l1.items[0].items[8], UnknownScalar)
    deep = "".join(f"    c{k}: &c{k} [*c{k - 1}]\n" for k in range(1, 3000))  # 3,000 chained aliases
    root = parse_documents(SourceFile("t.yaml", TEMPLATE % ("    c0: &c0 [x]\n" + deep)))[0][0].root
    [copied] = openshift_template_objects(root)  # RecursionError before
    assert copied.get("c2999").items[0] is copied.get("c2998")


# --- model configs and GGUF headers -----------------------------------------------------------------------------
HUGE_CONFIG = """{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
 "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
 "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16", "head_dim": %s}
"""


def test_a_config_json_with_a_4000_digit_dimension_reads_it_as_unknown(tmp_path):
    from vllmlint.capacity.hfconfig import parse_json

    assert parse_json(HUGE_CONFIG % ("9" * 4000), "c.json")["head_dim"] == "9" * 4000
    assert parse_json('[1, {"a": [-%s]}, 7]' % ("9" * 30), "c.json") == [1, {"a": ["-" + "9" * 30]}, 7]
    assert parse_json(HUGE_CONFIG % "128", "c.json")["head_dim"] == 128
    (tmp_path / "models" / "big").mkdir(parents=True)
    (tmp_path / "models" / "big" / "config.json").write_text(HUGE_CONFIG % ("9" * 4000))
    (tmp_path / "pod.yaml").write_text(
        'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n'
        '    image: vllm/vllm-openai:v0.29.0\n    args: ["--model", "/models/big", "--tensor-parallel-size", "2"]\n'
        '    resources: {limits: {nvidia.com/gpu: 2}}\n  nodeSelector: {node.kubernetes.io/instance-type: g6.12xlarge}\n')
    for args in ([".", "--no-cache"], ["capacity", "."], ["capacity", "--model-config", "models/big", "--gpu", "H100"]):
        code, out, err = run_cli(*args, cwd=tmp_path)
        assert "internal error" not in out + err and code in (0, 1), (args, err)


def _gguf(tensors, metadata) -> bytes:
    import struct

    def text(b):
        return struct.pack("<Q", len(b)) + b

    def kv(key, kind, payload):
        return text(key.encode()) + struct.pack("<I", kind) + payload

    pairs = [kv("general.architecture", 8, text(b"llama"))] + [kv("llama." + k, 4, struct.pack("<I", v)) for k, v in (
        ("block_count", 32), ("embedding_length", 4096), ("feed_forward_length", 14336), ("attention.head_count", 32),
        ("attention.head_count_kv", 8), ("context_length", 8192))] + [kv(*m) for m in metadata]
    body = [text(name.encode()) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
            + struct.pack("<IQ", kind, 0) for name, dims, kind in tensors]
    return b"GGUF" + struct.pack("<IQQ", 3, len(body), len(pairs)) + b"".join(pairs) + b"".join(body)


def test_gguf_headers_with_absurd_shapes_are_one_line_errors(tmp_path):
    import struct

    embedding = ("token_embd.weight", [4096, 128256], 1)
    cases = {"dims.gguf": _gguf([embedding, ("blk.0.attn_q.weight", [2**64 - 1] * 20, 2)], []),
             "nested.gguf": _gguf([embedding], [("x", 9, struct.pack("<IQ", 9, 1) * 5000 + struct.pack("<IQ", 4, 0))])}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        code, out, err = run_cli("capacity", "--model-config", name, "--gpu", "H100", cwd=tmp_path)
        assert code == 2 and "internal error" not in err and err.strip().count("\n") == 0, (name, err)
        assert f"--model-config {name}: " in err and "not a GGUF header" in err
    big = _gguf([embedding, ("blk.0.attn_q.weight", [2**64 - 1] * 4, 2)], [("y", 9, struct.pack("<IQ", 9, 1) * 2
                                                                                 + struct.pack("<IQ", 4, 0))])
    (tmp_path / "four.gguf").write_bytes(big)  # the most a tensor has (GGML_MAX_DIMS), arrays nested twice
    code, out, err = run_cli("capacity", "--model-config", "four.gguf", "--gpu", "H100", cwd=tmp_path)
    assert "internal error" not in err and "Traceback" not in err, err


# --- template text in block scalars ------------------------------------------------------------------------------
def test_template_text_in_many_block_scalars_is_checked_in_linear_work():
    from vllmlint.engine import _template_action
    from vllmlint.source.yamlmodel import SourceFile, parse_documents

    def work(n):
        text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + "".join(
            f"  k{i}: |\n    {{{{ .Values.x }}}}\n" for i in range(n))
        documents = parse_documents(SourceFile("h.yaml", text))[0]
        assert _template_action(text, documents) is None  # data, not a template
        return _calls(_template_action, text, documents)

    assert work(2000) < 5 * work(500)  # every match against every block scalar before: 16x
    text = "a: |\n  {{ .Values.x }}\nb: '{{ .Values.y }}'\n"
    assert _template_action(text, None) == 7
    assert _template_action(text, parse_documents(SourceFile("t.yaml", text))[0]) == 27  # outside the block


# --- a flag repeated thousands of times in one command -------------------------------------------------------------
def test_a_switch_repeated_in_one_command_is_checked_in_linear_work():
    from vllmlint.checks import vl106_invalid_flag_value as vl106
    from vllmlint.engine import LintOptions, lint_text

    def work(n, extra=""):
        """Lines run in VL106's own module while one Pod with `n` repeats of a switch is linted."""
        count = 0

        def tracer(frame, event, arg):
            nonlocal count
            if frame.f_code.co_filename != vl106.__file__:
                return None
            count += 1
            return tracer

        text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
                "    image: vllm/vllm-openai:v0.29.0\n    args: [" + ", ".join(["--enforce-eager"] * n) + extra + "]\n")
        sys.settrace(tracer)
        try:
            result = lint_text(text, "p.yaml", LintOptions(select=["VL106"]))
        finally:
            sys.settrace(None)
        return count, [f.message for f in result.findings if f.code == "VL106"]

    small, _ = work(300)
    large, _ = work(1200)
    assert large < 5 * small  # a scan of the whole command per switch before: 16x
    _, found = work(3, ", --enable-prefix-caching, true, --model, m")
    assert len(found) == 1 and "`true` after it is read as a stray positional" in found[0]


# --- Services and workloads sharing labels ------------------------------------------------------------------------
def _same_labels(n: int) -> str:
    return "---\n".join(f"""kind: Deployment
apiVersion: apps/v1
metadata: {{name: d{i}}}
spec:
  template:
    metadata: {{labels: {{a: b}}}}
    spec: {{containers: [{{name: c, image: "vllm/vllm-openai:v0.29.0"}}]}}
---
kind: Service
apiVersion: v1
metadata: {{name: s{i}}}
spec: {{selector: {{a: b}}, type: LoadBalancer, ports: [{{port: 8000}}]}}
""" for i in range(n))


def test_services_sharing_labels_with_workloads_are_matched_once_per_selector(monkeypatch):
    from vllmlint.engine import lint_text
    from vllmlint.k8s import objects

    calls = 0
    original = objects.PodTemplate.selected_by

    def counted(self, selector):
        nonlocal calls
        calls += 1
        return original(self, selector)

    monkeypatch.setattr(objects.PodTemplate, "selected_by", counted)
    n = 150
    result = lint_text(_same_labels(n), "same.yaml")
    assert calls <= 4 * n  # every Service against every workload before, per rule: n x n and more
    codes = [f.code for f in result.findings]
    assert codes.count("VL501") == n and codes.count("VL702") == n
    readiness = next(f for f in result.findings if f.code == "VL702")
    assert "Services s0, s1, s2, ... send traffic" in readiness.message


def test_rules_over_services_sharing_labels_do_linear_work():
    from vllmlint.checks import vl501_public_exposure, vl702_probe_mismatch
    from vllmlint.engine import LintOptions, lint_text

    files = {vl501_public_exposure.__file__, vl702_probe_mismatch.__file__}

    def work(n):
        count = 0

        def tracer(frame, event, arg):
            nonlocal count
            if frame.f_code.co_filename not in files:
                return None
            count += 1
            return tracer

        sys.settrace(tracer)
        try:
            lint_text(_same_labels(n), "same.yaml", LintOptions(select=["VL501", "VL702"]))
        finally:
            sys.settrace(None)
        return count

    assert work(400) < 6 * work(100)  # each Service's selection walked per Service, each workload's Services: 16x


# --- Markdown with many fences ------------------------------------------------------------------------------------
_FENCED_POD = """```yaml
apiVersion: v1
kind: Pod
metadata: {name: p%d}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    args: ["--swap-space=4", "--model", "m"]
```

"""


def test_markdown_with_many_yaml_fences_takes_memory_linear_in_its_size():
    from vllmlint.engine import lint_text

    def peak(n):
        text = "".join(_FENCED_POD % i for i in range(n))
        return _peak(lint_text, text, "r.md")

    peak(10)  # imports and caches outside the measure
    small, large = peak(100), peak(400)
    assert large < 6 * small  # a copy of the whole file per fence before: 16x
    result = lint_text("# Runbook\n\n" + _FENCED_POD % 0 + "text\n\n" + _FENCED_POD % 1, "r.md")
    lines = sorted(f.span.line for f in result.findings if f.code == "VL102")
    assert lines == [11, 24]  # the flag's lines in the Markdown file


def test_a_shell_block_after_a_long_runbook_is_read_in_few_steps():
    from vllmlint.source.shell import read_script

    def steps(lines):
        text = ("   \n" * lines) + "vllm serve m --swap-space 4\n"
        script = _lines(read_script, text)
        assert [w.text for w in read_script(text).commands[0].words] == ["vllm", "serve", "m", "--swap-space", "4"]
        return script

    steps(2)  # the patterns compiled outside the measure
    assert steps(8000) < 2 * steps(100)  # a Python step per blank character before
    words = read_script("a  b\\\n   c\n\n\n  # note\n\nd   'e  f'\n").commands
    assert [[w.text for w in c.words] for c in words] == [["a", "b", "c"], ["d", "e  f"]]
    assert words[1].line_comment_before == "# note"


_HEREDOC_BLOCK = "```bash\ncat <<'EOF' | kubectl apply -f -\n" + _FENCED_POD.split("\n", 1)[1].split("```")[0] + "EOF\n```\n"


def test_markdown_with_many_shell_blocks_takes_memory_linear_in_its_size():
    from vllmlint.engine import lint_text

    def peak(n):
        return _peak(lint_text, "".join(_HEREDOC_BLOCK % i for i in range(n)), "r.md")

    peak(10)
    small, large = peak(100), peak(400)
    assert large < 6 * small  # each shell block a copy of the file up to it before: 16x
    result = lint_text("# Run\n\n" + _HEREDOC_BLOCK % 0 + "\n```bash\nvllm serve m --swap-space 4\n```\n", "r.md")
    assert sorted(f.span.line for f in result.findings if f.code == "VL102") == [12, 17]


# --- NetworkPolicies, ServiceMonitors, Services and workloads sharing labels ---------------------------------------
def test_scrape_gaps_read_each_policy_rule_once(monkeypatch):
    from vllmlint.checks import vl805_network_policy_gap as vl805
    from vllmlint.engine import LintOptions, lint_text

    def sets(n):
        return "---\n".join(f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: d{i}}}
spec:
  selector: {{matchLabels: {{a: b}}}}
  template:
    metadata: {{labels: {{a: b}}}}
    spec: {{containers: [{{name: c, image: "vllm/vllm-openai:v0.29.0", ports: [{{containerPort: 8000, name: http}}]}}]}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {{name: n{i}}}
spec:
  podSelector: {{matchLabels: {{a: b}}}}
  ingress: [{{from: [{{podSelector: {{matchLabels: {{a: b}}}}}}], ports: [{{port: 8000}}]}}]
---
apiVersion: v1
kind: Service
metadata: {{name: s{i}, labels: {{a: b}}}}
spec: {{selector: {{a: b}}, ports: [{{port: 8000, name: http}}]}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {{name: m{i}}}
spec: {{selector: {{matchLabels: {{a: b}}}}, endpoints: [{{port: http}}]}}
""" for i in range(n))

    calls = 0
    original = vl805._scraper_chance

    def counted(ctx, rule):
        nonlocal calls
        calls += 1
        return original(ctx, rule)

    monkeypatch.setattr(vl805, "_scraper_chance", counted)
    n = 12
    result = lint_text(sets(n), "np.yaml", LintOptions(select=["VL805"]))
    assert calls <= n  # one per policy's rule; n^4 before (every monitor x Service x workload x rule)
    assert [f.code for f in result.findings] == ["VL805"]
