"""Properties of `--fix` on generated manifests: vLLM commands as block lists, flow lists and `bash -c`
scripts with continuations, random removed flags (with and without values, `=` or separate), the
deprecated entrypoint, the old speculative pair, comments and unrelated objects.

For every manifest: the fixed text parses, lints without any new finding and without the findings that
were fixed, its diff applied to the original gives the written text, a second run changes nothing, and every
line the fixes had no reason to touch is unchanged and in its place."""
import os
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vllmlint.engine import LintOptions
from vllmlint.fix.apply import run_fixes

# ~50 keeps the suite fast; raise it for a deeper search (VLLMLINT_FIX_EXAMPLES=1000).
MAX_EXAMPLES = int(os.environ.get("VLLMLINT_FIX_EXAMPLES", "50"))
# (flag, value or None): removed flags every current release rejects, and kept flags.
REMOVED = [("--swap-space", "4"), ("--use-v2-block-manager", None), ("--disable-log-requests", None),
           ("--num-scheduler-steps", "8"), ("--max-seq-len-to-capture", "8192"), ("--tokenizer-pool-size", "0"),
           ("--worker-use-ray", None), ("--preemption-mode", "swap"), ("--enable-prompt-adapter", None)]
KEPT = [("--port", "8000"), ("--tensor-parallel-size", "2"), ("--enable-prefix-caching", None),
        ("--max-model-len", "4096"), ("--gpu-memory-utilization", "0.9")]
EXTRA_OBJECTS = [
    "apiVersion: v1\nkind: Service\nmetadata: {name: other}  # unrelated\nspec:\n  selector: {app: other}\n"
    "  ports:\n  - {name: http, port: 80, targetPort: 8080}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata:\n  note: \"--swap-space is gone\"\n",
]


@st.composite
def arguments(draw):
    """(argv words after the entrypoint, as (flag, value, inline) triples)."""
    removed = draw(st.lists(st.sampled_from(REMOVED), unique=True, max_size=4))
    kept = draw(st.lists(st.sampled_from(KEPT), unique=True, max_size=3))
    options = draw(st.permutations(removed + kept))
    if draw(st.booleans()):
        pair = [("--speculative-model", "Qwen/Qwen3-0.6B"), ("--num-speculative-tokens", "5")]
        folded = draw(st.lists(st.sampled_from([("--speculative-draft-tensor-parallel-size", "1"),
                                                ("--speculative-max-model-len", "2048")]), unique=True))
        options = list(options) + draw(st.permutations(pair + folded))
        options = draw(st.permutations(options))
    return [(flag, value, value is not None and draw(st.booleans())) for flag, value in options]


def words(options):
    result = []
    for flag, value, inline in options:
        if value is None:
            result.append(flag)
        elif inline:
            result.append(f"{flag}={value}")
        else:
            result.extend([flag, value])
    return result


def quote(word, style):
    """A YAML scalar for an argv word: numbers always quoted (they are strings in argv)."""
    if style == "'" or (style is None and word.replace(".", "", 1).isdigit()):
        return f"'{word}'"
    if style == '"':
        return f'"{word}"'
    return word


@st.composite
def manifests(draw):
    shim = draw(st.booleans())
    model = "Qwen/Qwen3-8B"
    options = draw(arguments())
    if shim:
        entry = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
        # --model anywhere among the options
        at = draw(st.integers(0, len(options)))
        options = options[:at] + [("--model", model, draw(st.booleans()))] + options[at:]
        argv = entry + words(options)
    else:
        argv = ["vllm", "serve", model] + words(options)
    form = draw(st.sampled_from(["block", "flow", "bash", "split"]))
    styles = [draw(st.sampled_from([None, None, "'", '"'])) for _ in argv]
    comment = draw(st.booleans())
    lines = ["# generated" if comment else None, "apiVersion: apps/v1", "kind: Deployment",
             "metadata:", "  name: vllm  # the server" if comment else "  name: vllm",
             "spec:", "  selector: {matchLabels: {app: vllm}}", "  template:",
             "    metadata: {labels: {app: vllm}}", "    spec:", "      containers:", "      - name: vllm",
             "        image: vllm/vllm-openai:v0.29.0"]
    if form == "block":
        lines.append("        command:")
        for index, word in enumerate(argv):
            if comment and draw(st.booleans()):
                lines.append(f"        # note {index}")
            lines.append(f"        - {quote(word, styles[index])}")
    elif form == "flow":
        lines.append("        command: [" + ", ".join(quote(w, s) for w, s in zip(argv, styles, strict=False)) + "]")
    elif form == "split":  # the entrypoint in a flow `command`, the rest in a block `args`
        size = 3 if shim else 2
        lines.append("        command: [" + ", ".join(quote(w, s) for w, s in zip(argv[:size], styles, strict=False)) + "]")
        if len(argv) > size:
            lines.append("        args:")
            lines.extend(f"        - {quote(w, s)}" for w, s in zip(argv[size:], styles[size:], strict=False))
    else:
        lines += ["        command:", "        - /bin/bash", "        - -c", "        - |"]
        if comment:
            lines.append("          # start vLLM")
        per_line = draw(st.integers(1, 3))
        chunks = [argv[i:i + per_line] for i in range(0, len(argv), per_line)]
        for number, chunk in enumerate(chunks):
            tail = " \\" if number < len(chunks) - 1 else ""
            indent = "          " if number == 0 else "            "
            lines.append(indent + ("exec " if number == 0 else "") + " ".join(chunk) + tail)
    lines.append("        ports:")
    lines.append("        - containerPort: 8000")
    text = "\n".join(line for line in lines if line is not None) + "\n"
    extras = draw(st.lists(st.sampled_from(EXTRA_OBJECTS), unique=True, max_size=2))
    documents = draw(st.permutations([text] + extras))
    return "---\n".join(documents)


def fingerprints(result):
    return Counter(f.fingerprint() for f in result.findings)


def untouchable(line):
    """Not a line of the vLLM command (block items, the flow list, the script): comments, other keys,
    other objects."""
    if line.startswith("        - ") and "containerPort" not in line:
        return False
    if line.startswith("        command: ["):
        return False
    return not (line.startswith("          ") and not line.strip().startswith("#"))


def shell_word(word, style):
    if style == "'":
        return f"'{word}'"
    if style == '"':
        return f'"{word}"'
    return word


@st.composite
def scripts(draw):
    """(file name, text, the lines of the vLLM command): a `.sh` script, or a script in a ConfigMap that
    a Deployment mounts and runs."""
    shim = draw(st.booleans())
    options = draw(arguments())
    if shim:
        at = draw(st.integers(0, len(options)))
        options = options[:at] + [("--model", "Qwen/Qwen3-8B", draw(st.booleans()))] + options[at:]
        argv = ["python3", "-m", "vllm.entrypoints.openai.api_server"] + words(options)
    else:
        argv = ["vllm", "serve", "Qwen/Qwen3-8B"] + words(options)
    argv = [shell_word(w, draw(st.sampled_from([None, None, "'", '"']))) if i > 1 else w
            for i, w in enumerate(argv)]
    per_line = draw(st.integers(1, 3))
    chunks = [argv[i:i + per_line] for i in range(0, len(argv), per_line)]
    command = [("exec " if number == 0 and draw(st.booleans()) else "") + " ".join(chunk)
               + (" \\" if number < len(chunks) - 1 else "") for number, chunk in enumerate(chunks)]
    command = [line if number == 0 else "  " + line for number, line in enumerate(command)]
    script = ["#!/bin/bash", "set -e", "# start the server"] + command
    if draw(st.booleans()):
        script += ["echo stopped  # after the server"]
    if draw(st.booleans()):
        return "serve.sh", "\n".join(script) + "\n", set(command)
    indent = "    "
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: scripts}\ndata:\n  run.sh: |\n"
            + "".join(indent + line + "\n" for line in script)
            + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n"
            "  selector: {matchLabels: {app: vllm}}\n  template:\n    metadata: {labels: {app: vllm}}\n"
            "    spec:\n      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.29.0\n"
            "        command: [bash, /config/run.sh]\n        volumeMounts:\n"
            "        - {name: scripts, mountPath: /config}\n      volumes:\n"
            "      - name: scripts\n        configMap: {name: scripts}\n")
    return "deploy.yaml", text, {indent + line for line in command}


@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=manifests())
def test_fix_properties(tmp_path_factory, text):
    check_fix_properties(tmp_path_factory.mktemp("fix") / "deploy.yaml", text, lambda line: not untouchable(line))


@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(generated=scripts())
def test_fix_properties_of_scripts(tmp_path_factory, generated):
    name, text, command = generated
    check_fix_properties(tmp_path_factory.mktemp("fix") / name, text, lambda line: line in command)


def check_fix_properties(path, text, touchable):
    path.write_text(text)
    from vllmlint.engine import lint_paths

    before, _ = lint_paths([str(path)])
    assert not [f for f in before.findings if f.code == "VL001"], text
    fixable = [f for f in before.findings if f.fix is not None]
    assert {f.code for f in before.findings} & {"VL101", "VL102"} <= {f.code for f in fixable}, text

    outcome = run_fixes([str(path)], LintOptions(), unsafe=True)
    fixed = path.read_text()
    assert outcome.refused == [], (outcome.refused, text)

    # 1. it parses; 2. no new findings, and the fixed ones are gone (everything generated is fixable)
    assert not [f for f in outcome.result.findings if f.code == "VL001"], fixed
    new = fingerprints(outcome.result) - fingerprints(before)
    assert not new, [f.message for f in outcome.result.findings if f.fingerprint() in new]
    assert not [f for f in outcome.result.findings if f.fix is not None], fixed
    assert not [f for f in outcome.result.findings if f.code in ("VL101", "VL102")], fixed
    assert bool(fixable) == (fixed != text)

    # 3. the diff (--diff) is what was written: applied to the original, it gives the fixed text
    from test_fix_linear import _apply

    assert (_apply(text, outcome.diff) if outcome.diff else text) == fixed, outcome.diff

    # 4. a second run changes nothing
    again = run_fixes([str(path)], LintOptions(), unsafe=True)
    assert again.applied == 0 and again.diff == "" and path.read_text() == fixed

    # 5. no debris: no new blank line, no continuation left dangling into a blank line or another command
    def blanks(t):
        return sum(1 for line in t.splitlines() if not line.strip())

    assert blanks(fixed) <= blanks(text), fixed
    fixed_lines = fixed.splitlines()

    def indentation(line):
        return len(line) - len(line.lstrip())

    for number, line in enumerate(fixed_lines):
        if line.endswith("\\"):
            first = number
            while first > 0 and fixed_lines[first - 1].endswith("\\"):
                first -= 1
            following = fixed_lines[number + 1] if number + 1 < len(fixed_lines) else ""
            # the chain goes on into an indented continuation, not a blank line or the next command
            assert following.strip() and indentation(following) > indentation(fixed_lines[first]), fixed

    # 6. lines the fixes had no reason to touch stay, unchanged and in order
    remaining = iter(fixed.splitlines())
    for line in text.splitlines():
        if not touchable(line):
            assert any(line == candidate for candidate in remaining), (line, fixed)
