"""Fuzz: mutated fixtures (byte flips, deleted/duplicated lines, indentation, aliases, deep nesting, CRLF,
surrogates, huge numbers, random Unicode, truncation) and hostile shapes (Compose interpolation nesting, `.env`
chains, OpenShift Templates with aliases, Markdown with many fences, huge integers in a model's config.json) and
long globs (`.gitignore`, `exclude`, `per-file-ignores`) never crash, hang or produce unparseable output.

Bounded by size and work, never by the clock: every input is at most MAX_INPUT_BYTES, and linting it may run at
most WORK_BASE + WORK_PER_BYTE x its size Python calls (counted by a profile hook, which stops the lint past the
budget): a hang or a quadratic path fails the same on a loaded machine as on an idle one.

CI runs a fixed, bounded set of examples (hypothesis `derandomize=True`: the same inputs on every run);
`VLLMLINT_FUZZ=long pytest tests/test_fuzz.py` runs thousands, with fresh randomness each time
(`VLLMLINT_FUZZ_EXAMPLES=N` to choose how many; `VLLMLINT_FUZZ_PROGRESS=FILE` appends a line per 100 inputs
linted, with the number of failures, so a long run stopped early still says how far it went;
`VLLMLINT_FUZZ_WORKERS=N` shares the long run's inputs among N processes, each with its own seed, and adds up
their counts: one run on every core).
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import validators

from conftest import FIXTURES
from vllmlint.data import schemas_dir
from vllmlint.engine import Linter, LintOptions
from vllmlint.formatters import Report, render

LONG = os.environ.get("VLLMLINT_FUZZ") == "long"
EXAMPLES = int(os.environ.get("VLLMLINT_FUZZ_EXAMPLES", "5000" if LONG else "300"))
SUBPROCESS_EXAMPLES = 200 if LONG else 10
HOSTILE_EXAMPLES = EXAMPLES if LONG else 40  # several files each, some of hundreds of KB
MAX_INPUT_BYTES = 1 << 20  # every generated input (all its files together) is at most this
# Python calls (profile events) linting one input may take: a fixture takes about 20,000; the budget is generous
# and linear in the input, so only a hang or a path superlinear in the input reaches it. The base covers the one
# bounded costly path known: deep flow nesting after a document libyaml rejects is probed by the pure-Python
# parser, whose scanner checks up to 1,024 characters of possible simple keys per token before the probe stops past
# MAX_DEPTH: about 9.6 M calls whatever the depth (test_the_pure_depth_probe_is_bounded; found by the long fuzz).
WORK_BASE = 12_000_000
WORK_PER_BYTE = 300
PROGRESS = os.environ.get("VLLMLINT_FUZZ_PROGRESS")
WORKERS = int(os.environ.get("VLLMLINT_FUZZ_WORKERS", "1"))

FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml", ".json", ".sh", ".md")
               and p.stat().st_size < 64 * 1024)
SARIF_SCHEMA = json.loads((schemas_dir() / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
SARIF_VALIDATOR = validators.validator_for(SARIF_SCHEMA)(SARIF_SCHEMA)

PROFILE = settings(max_examples=EXAMPLES, derandomize=not LONG, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck), print_blob=True)


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def _at(draw, data: bytes) -> int:
    return draw(st.integers(0, max(len(data) - 1, 0)))


@st.composite
def mutation(draw, data: bytes) -> bytes:
    kind = draw(st.sampled_from(["flip", "delete", "duplicate", "indent", "alias", "deep", "crlf", "surrogate",
                                 "number", "unicode", "truncate"]))
    lines = _lines(data)
    line = draw(st.integers(0, len(lines) - 1))
    if kind == "flip" and data:
        at = _at(draw, data)
        return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
    if kind == "delete":
        return b"".join(lines[:line] + lines[line + 1:])
    if kind == "duplicate":
        return b"".join(lines[:line + 1] + lines[line:])
    if kind == "indent":
        text = lines[line]
        if draw(st.booleans()):
            lines[line] = b" " * draw(st.integers(1, 8)) + text
        else:
            lines[line] = text.lstrip(b" ")
        return b"".join(lines)
    if kind == "alias":
        snippet = draw(st.sampled_from([b"&a [*a]", b"&b {x: *b}", b"*undefined", b"&c x", b"*c",
                                        b"&l0 [x, x, x, x, x, x, x, x, x]"]))
        text = lines[line]
        colon = text.find(b": ")
        if colon != -1:
            lines[line] = text[:colon + 2] + snippet + b"\n"
        else:
            lines.insert(line, b"bomb: " + snippet + b"\n")
        if snippet.startswith(b"&l0"):
            bomb = b"".join(b"l%d: &l%d [%s]\n" % (i, i, b", ".join([b"*l%d" % (i - 1)] * 9)) for i in range(1, 9))
            lines.insert(line + 1, bomb)
        return b"".join(lines)
    if kind == "deep":
        depth = draw(st.sampled_from([50, 101, 1000, 40_000]))
        opener, closer = draw(st.sampled_from([(b"[", b"]"), (b"{a: ", b"}"), (b"- ", b"")]))
        if opener == b"- ":
            nested = b"".join(b"  " * i + b"- \n" for i in range(min(depth, 300)))
        else:
            nested = b"x: " + opener * depth + b"1" + closer * depth + b"\n"
        return b"".join(lines[:line] + [nested] + lines[line:])
    if kind == "crlf":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if kind == "surrogate":
        escape = draw(st.sampled_from([b"\\ud83e\\udd99", b"\\ud83e", b"\\udd99", b"\\U0001F999", b"\\x00"]))
        quote = data.find(b'"', _at(draw, data))
        if quote == -1:
            return data + b'\nx: "' + escape + b'"\n'
        return data[:quote + 1] + escape + data[quote + 1:]
    if kind == "number":
        value = draw(st.sampled_from([b"9" * 400, b"1e400", b".inf", b"-.inf", b".nan", b"1000000", b"-1", b"0x" + b"f" * 64,
                                      b"0.0000001"]))
        digits = [i for i, ch in enumerate(data) if 48 <= ch <= 57]
        if not digits:
            return data + b"\nreplicas: " + value + b"\n"
        at = digits[draw(st.integers(0, len(digits) - 1))]
        end = at
        while end < len(data) and 48 <= data[end] <= 57:
            end += 1
        return data[:at] + value + data[end:]
    if kind == "unicode":
        text = draw(st.text(max_size=20)).encode("utf-8")
        at = _at(draw, data)
        return data[:at] + text + data[at:]
    if kind == "truncate" and data:
        return data[:_at(draw, data)]
    return data


def _dockerfile_seeds() -> list[tuple[str, bytes]]:
    """The rules' Dockerfile examples (no fixture is a Dockerfile): the Dockerfile reader is fuzzed too."""
    from ruamel.yaml import YAML

    from vllmlint.data import rules_dir

    seeds = []
    for rule in sorted(rules_dir().glob("VL*.yaml")):
        examples = YAML(typ="safe").load(rule.read_text(encoding="utf-8")).get("examples") or {}
        for group in ("fails", "passes"):
            for number, example in enumerate(examples.get(group) or []):
                if example.get("filename") == "Dockerfile":
                    seeds.append((f"{rule.stem}/{group}{number}/Dockerfile", example["source"].encode("utf-8")))
    return seeds


SEEDS = [(p.relative_to(FIXTURES).as_posix(), p) for p in FILES] + _dockerfile_seeds()


@st.composite
def mutated_fixture(draw) -> tuple[str, bytes]:
    name, seed = draw(st.sampled_from(SEEDS))
    data = seed.read_bytes() if isinstance(seed, Path) else seed
    for _ in range(draw(st.integers(1, 3))):
        data = draw(mutation(data))
    return name, data


# --- hostile shapes: inputs of several files that stress one reader each --------------------------------------
_POD = (b"apiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\nspec:\n  containers:\n  - name: vllm\n"
        b"    image: vllm/vllm-openai:v0.29.0\n    args: [\"--swap-space=4\", \"--model\", \"m\"]\n")
_COMPOSE = (b"services:\n  vllm:\n    image: vllm/vllm-openai:${TAG:-v0.29.0}\n    command: \"%s\"\n"
            b"    environment:\n      - HF_TOKEN=${HF_TOKEN}\n")
_TEMPLATE = (b"apiVersion: template.openshift.io/v1\nkind: Template\nmetadata: {name: t}\nparameters:\n"
             b"  - name: MODEL_ID\n    value: Qwen/Qwen3-8B\nobjects:\n  - apiVersion: apps/v1\n%s    kind: Deployment\n"
             b"    metadata: {name: vllm}\n    spec:\n      template:\n        spec:\n          containers:\n"
             b"            - name: vllm\n              image: vllm/vllm-openai:v0.29.0\n"
             b"              args: [\"--model=${MODEL_ID}\", \"--swap-space=4\"]\n")
_CONFIG = (b'{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": %s, "intermediate_size": '
           b'14336, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": %s, "vocab_size": 128256, '
           b'"max_position_embeddings": %s, "torch_dtype": "bfloat16", "head_dim": %s}')
_SERVING = (b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
            b"    image: vllm/vllm-openai:v0.29.0\n    args: [\"--model\", \"/models/big\", \"--max-model-len\", \"9000\"]\n"
            b"    resources: {limits: {nvidia.com/gpu: 1}}\n  nodeSelector: {node.kubernetes.io/instance-type: g6.xlarge}\n")
_NUMBERS = [b"128", b"0", b"-1", b"9" * 30, b"9" * 400, b"9" * 4000, b"1e400", b"Infinity", b"NaN", b'"x"', b"[1]"]


@st.composite
def hostile_input(draw) -> tuple[str, bytes, tuple[tuple[str, bytes], ...]]:
    """(name, bytes, other files) of one hostile shape, at most MAX_INPUT_BYTES in all."""
    shape = draw(st.sampled_from(["compose-nesting", "dotenv-chain", "template-alias", "fences", "config-integers"]))
    if shape == "compose-nesting":
        depth = draw(st.sampled_from([1, 10, 63, 64, 65, 66, 300, 3000]))
        value = b"x"
        for k in range(depth):
            value = b"${V%d%s%s}" % (k, draw(st.sampled_from([b":-", b"-", b":+", b"+", b":?"])), value)
        flags = b"--swap-space " + value + b" " + b" ".join([b"${X}", b"$Y", b"${Z:-4}"] * draw(st.integers(0, 2000)))
        env = b"".join(b"V%d=%s\n" % (k, draw(st.sampled_from([b"", b"1", b"${V0}"]))) for k in
                       range(draw(st.integers(0, 5))))
        return "compose.yaml", _COMPOSE % flags, ((".env", env),)
    if shape == "dotenv-chain":
        lines = [b"C0=" + draw(st.sampled_from([b"ab", b"x" * 1000, b"'${C0}'", b""]))]
        for k in range(1, draw(st.integers(1, 40))):
            refs = draw(st.integers(0, 4))
            lines.append(b"C%d=%s" % (k, b"".join(b"${C%d}" % draw(st.integers(0, k - 1)) for _ in range(refs))))
        command = b"--swap-space ${C%d} --max-model-len ${C1:-4}" % draw(st.integers(0, len(lines) - 1))
        return "compose.yaml", _COMPOSE % command, ((".env", b"\n".join(lines) + b"\n"),)
    if shape == "template-alias":
        snippet = draw(st.sampled_from([b"    x: &a [*a]\n", b"    x: &b {y: *b}\n", b"    apiVersion: &a [*a]\n",
                                        b"    l0: &l0 [x, \"${MODEL_ID}\", x, x, x, x, x, x, x]\n" + b"".join(
                                            b"    l%d: &l%d [%s]\n" % (i, i, b", ".join([b"*l%d" % (i - 1)] * 9))
                                            for i in range(1, 9)),
                                        b"    c0: &c0 [x]\n" + b"".join(b"    c%d: &c%d [*c%d]\n" % (i, i, i - 1)
                                                                         for i in range(1, 2000))]))
        return "template.yaml", _TEMPLATE % snippet, ()
    if shape == "fences":
        count = draw(st.sampled_from([1, 10, 100, 400]))
        kind = draw(st.sampled_from([b"```yaml\n%s```\n\n", b"```bash\ncat <<EOF | kubectl apply -f -\n%sEOF\n```\n",
                                     b"```\n%s```\n", b"```bash\n%s\n"]))
        return "runbook.md", b"".join(kind % (_POD % i) for i in range(count)), ()
    numbers = [draw(st.sampled_from(_NUMBERS)) for _ in range(4)]
    return "pod.yaml", _SERVING, (("models/big/config.json", _CONFIG % tuple(numbers)),)


class WorkExceeded(Exception):
    """Linting one input ran past its work budget."""


def _lint(name: str, data: bytes, extra: tuple[tuple[str, bytes], ...] = ()):
    """Lint the files of one input, stopping with WorkExceeded past the work budget (counted, not timed)."""
    files = ((name, data),) + tuple(extra)
    size = sum(len(content) for _, content in files)
    assert size <= MAX_INPUT_BYTES, f"{name}: a generated input of {size} bytes"
    budget = WORK_BASE + WORK_PER_BYTE * size
    work = 0

    def count(frame, event, arg):
        nonlocal work
        work += 1
        if work > budget:
            sys.setprofile(None)
            raise WorkExceeded(f"{name}: linting {size} bytes ran past {budget:,} Python calls")

    linter = Linter(LintOptions(vllm_version="0.29.0"))
    sys.setprofile(count)
    try:
        for shown, content in files:
            linter.add_bytes(content, shown, Path(shown).suffix.lower(), Path(shown).name)
        return linter.run()
    finally:
        sys.setprofile(None)


_progress = {"linted": 0, "failed": 0}


def _record(failed: bool) -> None:
    """With VLLMLINT_FUZZ_PROGRESS: one line per 100 inputs (and per failure) in that file."""
    _progress["linted"] += 1
    _progress["failed"] += failed
    if PROGRESS and (failed or _progress["linted"] % 100 == 0):
        with open(PROGRESS, "a", encoding="utf-8") as log:
            log.write(f"{_progress['linted']} inputs, {_progress['failed']} failed\n")


def check_outputs(name: str, data: bytes, extra: tuple[tuple[str, bytes], ...] = ()) -> None:
    try:
        _check_outputs(name, data, extra)
    except BaseException:
        _record(True)
        raise
    _record(False)


def _check_outputs(name: str, data: bytes, extra: tuple[tuple[str, bytes], ...]) -> None:
    result = _lint(name, data, extra)
    assert not result.internal_error, [n.message for n in result.notices if n.level == "error"][:3]
    report = Report(findings=result.findings, suppressed=result.suppressed, notices=result.notices,
                    rules=result.rules, sources=result.sources, files_checked=result.files_checked)
    text = render("text", report)
    text.encode("utf-8")  # never a lone surrogate in the output
    assert "internal error" not in text
    document = json.loads(render("json", report))
    assert isinstance(document, dict)
    log = json.loads(render("sarif", report))
    errors = [e.message for e in SARIF_VALIDATOR.iter_errors(log)]
    assert not errors, errors[:3]
    for fmt in ("github", "junit"):
        render(fmt, report).encode("utf-8")


@PROFILE
@given(mutated_fixture())
def test_mutated_fixtures_never_crash_in_process(case):
    name, data = case
    check_outputs(name, data)


@settings(PROFILE, max_examples=HOSTILE_EXAMPLES)
@given(hostile_input())
def test_hostile_shapes_never_crash_in_process(case):
    check_outputs(*case)


@st.composite
def long_glob(draw) -> tuple[str, str]:
    """(pattern, path): many `*` (and `**`, `?`, sets) against long names, the shape that made a backtracking
    matcher exponential."""
    stars = draw(st.integers(1, 30))
    letter = draw(st.sampled_from(["a", "?", "[ab]", "**/a", "a/"]))
    pattern = draw(st.sampled_from(["", "/", "!"])) + ("*" + letter) * stars + draw(st.sampled_from(["*b", "b", "/", "*"]))
    name = "a" * draw(st.integers(1, 200))
    path = "/".join([name] * draw(st.integers(1, 6))) + draw(st.sampled_from(["", "/x.yaml", "b"]))
    return pattern, path


@settings(PROFILE, max_examples=HOSTILE_EXAMPLES)
@given(long_glob())
def test_long_globs_match_in_bounded_work(case):
    """`.gitignore` lines and configuration globs (exclude, per-file-ignores) of many `*` against long paths: the
    matcher's work is counted like a lint's, linear in the input with a fixed base."""
    from vllmlint.source.wildmatch import IgnoreRules, path_matches

    pattern, path = case
    budget = 200_000 + WORK_PER_BYTE * (len(pattern) + len(path))
    work = 0

    def count(frame, event, arg):
        nonlocal work
        work += 1
        if work > budget:
            sys.setprofile(None)
            raise WorkExceeded(f"{pattern!r} against {len(path)} characters ran past {budget:,} Python calls")

    sys.setprofile(count)
    try:
        path_matches(pattern, path)
        rules = IgnoreRules([pattern, "!" + pattern.lstrip("!")])
        rules.decide(path, False)
        rules.decide(path, True)
    finally:
        sys.setprofile(None)


@pytest.mark.skipif(not LONG or WORKERS > 1, reason="the long run only (VLLMLINT_FUZZ=long), in this process")
@PROFILE
@given(st.one_of(mutated_fixture().map(lambda case: (*case, ())), hostile_input()))
def test_long_run_mixes_mutations_and_hostile_shapes(case):
    """One test for a long run stopped at any point: both kinds of input from the first one on."""
    check_outputs(*case)


@pytest.mark.skipif(not LONG or WORKERS < 2, reason="the long run in VLLMLINT_FUZZ_WORKERS processes only")
def test_long_run_in_worker_processes(tmp_path):
    """The long run above, its EXAMPLES shared among WORKERS processes (seeds 1 to N, so a failure can be run
    again): every process must end with 0 failures, and their counts add up to the run's."""
    share = -(-EXAMPLES // WORKERS)
    logs = [Path(PROGRESS + f".{k}") if PROGRESS else tmp_path / f"progress.{k}" for k in range(1, WORKERS + 1)]
    env = {key: value for key, value in os.environ.items() if key != "VLLMLINT_FUZZ_WORKERS"}
    workers = [subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                 f"{Path(__file__)}::test_long_run_mixes_mutations_and_hostile_shapes",
                                 f"--hypothesis-seed={k}"],
                                env=dict(env, VLLMLINT_FUZZ_EXAMPLES=str(share), VLLMLINT_FUZZ_PROGRESS=str(log)),
                                cwd=Path(__file__).parent.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
               for k, log in enumerate(logs, start=1)]
    outs = [tmp_path / f"worker.{k}.txt" for k in range(1, WORKERS + 1)]
    for worker in workers:  # a worker that fails ends the run: the others are stopped, their inputs not counted
        while worker.poll() is None and all(w.poll() in (None, 0) for w in workers):
            time.sleep(1)
    for worker in workers:
        if worker.poll() is None:
            worker.terminate()
    outputs = [worker.communicate()[0].decode("utf-8", "replace") for worker in workers]
    for out, output in zip(outs, outputs, strict=True):
        out.write_text(output, encoding="utf-8")
    counts = []
    for k, (worker, output, log) in enumerate(zip(workers, outputs, logs, strict=True), start=1):
        assert worker.returncode == 0, f"worker {k} (--hypothesis-seed={k}):\n{output[-4000:]}"
        last = log.read_text(encoding="utf-8").splitlines()[-1]  # "N inputs, 0 failed"
        linted, failed = int(last.split()[0]), int(last.split(", ")[1].split()[0])
        assert failed == 0, last
        counts.append(linted)
    print(f"long fuzz run: {sum(counts):,} inputs in {WORKERS} processes ({counts}), 0 failed")
    assert sum(counts) >= EXAMPLES - 100 * WORKERS  # the logs count in hundreds


@settings(PROFILE, max_examples=SUBPROCESS_EXAMPLES)
@given(mutated_fixture(), st.sampled_from(["text", "json", "sarif"]))
def test_mutated_fixtures_on_the_command_line(tmp_path_factory, case, fmt):
    name, data = case
    folder = tmp_path_factory.mktemp("fuzz")
    target = folder / Path(name).name
    target.write_bytes(data)
    proc = subprocess.run([sys.executable, "-m", "vllmlint", "--no-config", "--format", fmt, target.name],
                          cwd=folder, capture_output=True, timeout=60)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert proc.returncode in (0, 1, 2), (proc.returncode, err)
    assert "Traceback" not in out + err
    if fmt == "json":
        json.loads(out)
    elif fmt == "sarif":
        assert not [e.message for e in SARIF_VALIDATOR.iter_errors(json.loads(out))]


@pytest.mark.parametrize("name", [p.relative_to(FIXTURES).as_posix() for p in FILES[:3]])
def test_unmutated_fixtures_pass_the_same_checks(name):
    check_outputs(name, (FIXTURES / name).read_bytes())


def test_the_work_budget_stops_a_lint_that_runs_past_it(monkeypatch):
    """The bound is real: a budget too small for the input stops the lint with WorkExceeded."""
    data = (FIXTURES / FILES[0].relative_to(FIXTURES)).read_bytes()
    _lint(FILES[0].name, data)  # within the budget
    monkeypatch.setattr(sys.modules[__name__], "WORK_BASE", 100)
    monkeypatch.setattr(sys.modules[__name__], "WORK_PER_BYTE", 0)
    with pytest.raises(WorkExceeded):
        _lint(FILES[0].name, data)
    assert sys.getprofile() is None


def test_the_pure_depth_probe_is_bounded():
    """A document libyaml rejects (an indented first line) followed by deep flow nesting: the pure parser's depth
    probe costs the same whatever the depth (the long fuzz found it past the former 3 M-call base)."""
    head = "  apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"

    def calls(depth: int) -> int:
        text = (head + "---\nx: " + "[" * depth + "1" + "]" * depth + "\n").encode()
        n = 0

        def count(frame, event, arg):
            nonlocal n
            n += 1

        linter = Linter(LintOptions(vllm_version="0.29.0"))
        sys.setprofile(count)
        try:
            linter.add_bytes(text, "d.yaml", ".yaml", "d.yaml")
            linter.run()
        finally:
            sys.setprofile(None)
        return n

    calls(1_000)  # what a first run loads once (the pure parser's modules) is not the probe's cost
    deep, deeper = calls(8_000), calls(64_000)
    assert deeper <= deep * 1.01 and deeper < WORK_BASE

