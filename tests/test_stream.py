"""Large runs in chunks (vllmlint.stream): the output is byte for byte the output of one run over every file, in
every format, however the files fall into chunks; files whose findings depend on a file of another chunk are
linted again with it."""
import shutil
import sys

import pytest

from conftest import FIXTURES, bench_module, run_cli
from vllmlint import stream
from vllmlint.engine import Linter, LintOptions, ordered_notices
from vllmlint.finding import Notice
from vllmlint.links import components
from vllmlint.source.files import collect_files
from vllmlint.source.yamlmodel import SourceFile



@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tree")
    bench_module().generate(folder, 40, seed=11)
    return folder


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """The fixtures without their Kustomize folder (a Kustomization makes a run one piece: see below)."""
    folder = tmp_path_factory.mktemp("examples") / "fixtures"
    shutil.copytree(FIXTURES, folder)
    shutil.rmtree(folder / "own" / "kustomize")
    return folder


def _lint(paths, chunked: tuple[int, int] | None, monkeypatch, **options):
    """The whole result as lines, and the sizes of the batches linted a second time."""
    monkeypatch.setenv(stream.SIZES_ENV, f"{chunked[0]}:{chunked[1]}" if chunked else "1000000000:1")
    second: list[int] = []
    lint = stream._lint

    def spy(chunk_options, chunk, linter, read, progress):
        if read is None:
            second.append(len(chunk))
        return lint(chunk_options, chunk, linter, read, progress)

    monkeypatch.setattr(stream, "_lint", spy)
    linter = Linter(LintOptions(stream=True, **options))
    files, _ = collect_files([str(p) for p in paths])
    for path in files:
        linter.add_file(path)
    result = linter.run()
    lines = [f"F {f.path}:{f.span} {f.code} {f.severity} {f.message} {f.subject} {f.value} "
             f"{f.fix.key() if f.fix else None}" for f in result.findings]
    lines += [f"S {f.path}:{f.span} {f.code} {f.suppressed_by}" for f in result.suppressed]
    lines += [f"I {f.path}:{f.span} {f.code}" for f in result.ignored]
    lines += [f"N {n}" for n in result.notices]
    lines.append(f"C {result.files_checked} {result.workloads} {result.invocations} {result.objects} "
                 f"{result.internal_error} {result.skipped} {list(result.sources)} {[r.code for r in result.rules]}")
    return lines, second


@pytest.mark.parametrize("chunk", [1, 2, 7])
def test_chunks_give_the_one_piece_result_on_the_examples(examples, chunk, monkeypatch):
    whole, _ = _lint([examples], None, monkeypatch)
    chunked, second = _lint([examples], (1, chunk), monkeypatch)
    assert len(whole) > 150  # the comparison compares something: findings, notes, counts
    assert chunked == whole
    assert second  # the examples link files to each other (an HPA and its Deployment, Services and their pods)


@pytest.mark.skipif(sys.platform != "linux", reason="processes are forked on Linux only")
@pytest.mark.parametrize("where", ["examples", "tree"])
def test_chunks_linted_by_forked_copies_give_the_same_result(where, examples, tree, monkeypatch):
    path = examples if where == "examples" else tree
    whole, _ = _lint([path], None, monkeypatch)
    assert _lint([path], (1, 3), monkeypatch, jobs=2)[0] == whole
    assert _lint([path], (1, 5), monkeypatch, jobs=3)[0] == whole


def test_unlinked_files_are_linted_once(tree, monkeypatch):
    whole, _ = _lint([tree], None, monkeypatch)
    chunked, second = _lint([tree], (1, 3), monkeypatch)
    assert chunked == whole and len(whole) > 100
    assert second == []  # 40 applications that share no key: every chunk's shares stand


def test_a_link_across_chunks_is_linted_again(tmp_path, monkeypatch):
    (tmp_path / "a-hpa.yaml").write_text(HPA)
    (tmp_path / "b-filler.yaml").write_text(FILLER)
    (tmp_path / "c-deployment.yaml").write_text(DEPLOYMENT)
    whole, _ = _lint([tmp_path], None, monkeypatch)
    alone, _ = _lint([tmp_path / "a-hpa.yaml"], None, monkeypatch)
    chunked, second = _lint([tmp_path], (1, 1), monkeypatch)
    assert chunked == whole
    assert second == [2]  # the HPA and its Deployment, together; the filler's share stands
    mine = [line for line in whole if line.startswith("F ") and "a-hpa.yaml" in line]
    assert mine != [line for line in alone if line.startswith("F ")]  # the Deployment changes the HPA's findings


def test_a_fact_the_chunk_lacks_is_lent_by_a_provider(tmp_path, monkeypatch):
    # The monitor selects its own Service, so only "does the run have a vLLM pod" links it to another file (VL806
    # is silent in a run without one); its chunk has none, the run has one: it is linted again with that file.
    (tmp_path / "a-monitor.yaml").write_text(MONITOR)
    (tmp_path / "b-deployment.yaml").write_text(DEPLOYMENT)
    whole, _ = _lint([tmp_path], None, monkeypatch)
    chunked, second = _lint([tmp_path], (1, 1), monkeypatch)
    assert chunked == whole
    assert second == [2]


def test_links_a_chunk_cannot_see_are_followed_until_none_is_new(tmp_path, monkeypatch):
    # The Deployment runs vLLM only through a script another file holds: alone, its chunk has no vLLM pod. Linted
    # again with the script, it provides one; then the monitor, whose chunk had none, is linted again with both.
    (tmp_path / "a-monitor.yaml").write_text(MONITOR)
    (tmp_path / "b-deploy.yaml").write_text(SCRIPTED)
    (tmp_path / "c-script.yaml").write_text(SCRIPT)
    whole, _ = _lint([tmp_path], None, monkeypatch)
    chunked, second = _lint([tmp_path], (1, 1), monkeypatch)
    assert chunked == whole
    assert second == [2, 3]  # the Deployment and its script; then the monitor with them
    assert any("workloads" not in line and " 1 1 " in line for line in whole if line.startswith("C "))


def test_options_the_merge_applies(examples, tmp_path, monkeypatch):
    """Per-file ignores (in each chunk) and a baseline (on the merged result) as in one piece."""
    from vllmlint.baseline import load_baseline, write_baseline

    findings = _findings(examples, monkeypatch)
    write_baseline(tmp_path / "baseline.json", findings[::3])
    options = {"per_file_ignores": {findings[0].path: ["VL8"]}, "select": ["VL1", "VL7", "VL8"],
               "baseline": load_baseline(tmp_path / "baseline.json")}
    whole, _ = _lint([examples], None, monkeypatch, **options)
    assert any(line.startswith("I ") for line in whole)
    assert _lint([examples], (1, 2), monkeypatch, **options)[0] == whole


def _findings(path, monkeypatch):
    monkeypatch.setenv(stream.SIZES_ENV, "1000000000:1")
    linter = Linter(LintOptions())
    for file in collect_files([str(path)])[0]:
        linter.add_file(file)
    return linter.run().findings


def test_a_kustomization_makes_the_run_one_piece(monkeypatch):
    # Its build reads resources from disk whichever chunk asks: the keys cannot speak for it.
    entries = [(p, str(p)) for p in collect_files([str(FIXTURES)])[0]]
    monkeypatch.setenv(stream.SIZES_ENV, "1:1")
    assert not stream.streamable(Linter(LintOptions(stream=True)), entries)
    assert stream.streamable(Linter(LintOptions(stream=True)), [e for e in entries if "kustomize" not in e[1]])


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_the_command_line_prints_the_same(examples, fmt):
    one = run_cli("--no-cache", "--format", fmt, examples)
    chunked = run_cli("--no-cache", "--format", fmt, examples, env={stream.SIZES_ENV: "1:3"})
    assert one[0] == 1 and one[1]
    assert chunked == one


def test_components_join_only_through_keys():
    provides = {"a": {("N", "x")}, "b": set(), "c": {("A", "vllm", "")}, "d": {("G", "vllm-pods")}}
    wants = {"b": {("N", "x")}, "e": {("A", "vllm", "ns")}, "f": {("G", "vllm-pods")}}
    groups = components(provides, wants, list("abcdef"))
    assert sorted(map(sorted, groups)) == [["a", "b"], ["c", "e"], ["d"], ["f"]]  # a fact joins nothing


def test_notes_follow_the_files_and_an_outside_release_is_noted_once():
    sources = {name: SourceFile(name, "") for name in ("a.yaml", "b.yaml")}
    outside = ("vLLM release outside vllmlint's catalog checked against a neighbour",
               "vLLM releases outside vllmlint's catalog checked against neighbours")
    notes = [Notice("VL006", "vLLM 9.9.9 is newer", "b.yaml", 3, summary=outside), Notice("VL001", "bug", ""),
             Notice("VL002", "template", "b.yaml", 1), Notice("VL006", "vLLM 9.9.9 is newer", "a.yaml", 5,
                                                             summary=outside)]
    assert [(n.path, n.line) for n in ordered_notices(notes, sources)] == [("a.yaml", 5), ("b.yaml", 1), ("", 0)]


# --- the per-file cache (vllmlint.filecache) -------------------------------------------------------------------
def _lines_of(result) -> list[str]:
    lines = [f"{f.path}:{f.span.line}:{f.span.col} {f.code} {f.message}" for f in result.findings]
    lines += [f"N {n.code} {n.path}:{n.line} {n.message}" for n in result.notices]
    return lines + [f"C {result.files_checked} {result.workloads} {result.invocations} {result.objects}"]


def _cached_run(paths, folder, monkeypatch, chunk=3):
    """A run through the result cache, in chunks: (its lines, the names of the files it linted)."""
    from vllmlint.engine import lint

    monkeypatch.setenv(stream.SIZES_ENV, f"1:{chunk}")
    linted: list[str] = []
    original = stream._lint

    def spy(chunk_options, chunk, linter, read, progress):
        linted.extend(shown.rsplit("/", 1)[-1] for _, shown in chunk)
        return original(chunk_options, chunk, linter, read, progress)

    monkeypatch.setattr(stream, "_lint", spy)
    files = collect_files([str(p) for p in paths])[0]
    result = lint(lambda linter: [linter.add_file(f) for f in files], LintOptions(stream=True, cache_dir=str(folder)))
    for entry in (folder / "results").glob("*.json"):
        entry.unlink()  # the next run misses the whole-run result: only the per-file cache can spare work
    return _lines_of(result), sorted(linted)


def _fresh(paths, monkeypatch) -> list[str]:
    monkeypatch.setenv(stream.SIZES_ENV, "1000000000:1")
    linter = Linter(LintOptions())
    for path in collect_files([str(p) for p in paths])[0]:
        linter.add_file(path)
    return _lines_of(linter.run())


def test_files_nobody_links_to_are_not_linted_again(tree, tmp_path, monkeypatch):
    first, linted = _cached_run([tree], tmp_path / "cache", monkeypatch)
    assert len(linted) == 40 and list((tmp_path / "cache" / "files").glob("*.json"))
    again, linted = _cached_run([tree], tmp_path / "cache", monkeypatch)
    assert linted == []  # every share from the cache
    assert again == first == _fresh([tree], monkeypatch)
    assert len(first) > 100


def test_an_edit_re_lints_the_file_and_what_it_is_linked_to(tmp_path, monkeypatch):
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "a-hpa.yaml").write_text(HPA)
    (folder / "b-filler.yaml").write_text(FILLER)
    (folder / "c-deployment.yaml").write_text(DEPLOYMENT)
    (folder / "d-other.yaml").write_text(FILLER.replace("unrelated", "other"))
    cache_folder = tmp_path / "cache"
    _cached_run([folder], cache_folder, monkeypatch, chunk=1)
    again, linted = _cached_run([folder], cache_folder, monkeypatch, chunk=1)
    assert linted == ["a-hpa.yaml", "c-deployment.yaml"]  # linked: only their keys are kept, they are linted together
    assert again == _fresh([folder], monkeypatch)
    (folder / "c-deployment.yaml").write_text(DEPLOYMENT.replace("resources: {limits:",
                                                                 "resources: {requests: {cpu: '2'}, limits:"))
    (folder / "d-other.yaml").write_text(FILLER.replace("unrelated", "edited"))
    after, linted = _cached_run([folder], cache_folder, monkeypatch, chunk=1)
    # The edited files in their chunks (their keys are new), then the Deployment again with the HPA it is linked to.
    assert linted == ["a-hpa.yaml", "c-deployment.yaml", "c-deployment.yaml", "d-other.yaml"]
    assert after == _fresh([folder], monkeypatch)
    assert after != again  # the edit changed the HPA's findings (VL401: requests now set)


def test_a_kept_share_whose_facts_changed_is_linted_again(tmp_path, monkeypatch):
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "a-monitor.yaml").write_text(MONITOR)
    (folder / "b-deployment.yaml").write_text(DEPLOYMENT)
    cache_folder = tmp_path / "cache"
    _cached_run([folder], cache_folder, monkeypatch, chunk=2)  # one chunk: the monitor's has a vLLM pod
    _, linted = _cached_run([folder], cache_folder, monkeypatch, chunk=2)
    assert linted == []
    (folder / "b-deployment.yaml").write_text(FILLER)  # the run has no vLLM pod any more
    after, linted = _cached_run([folder], cache_folder, monkeypatch, chunk=2)
    assert linted == ["b-deployment.yaml", "a-monitor.yaml"] or linted == ["a-monitor.yaml", "b-deployment.yaml"]
    assert after == _fresh([folder], monkeypatch)


def test_a_damaged_index_is_a_miss(tree, tmp_path, monkeypatch):
    first, _ = _cached_run([tree], tmp_path / "cache", monkeypatch)
    [index] = (tmp_path / "cache" / "files").glob("*.json")
    index.write_text('{"format": "vllmlint-file-cache 1", "files": {"x": 1', encoding="utf-8")
    again, linted = _cached_run([tree], tmp_path / "cache", monkeypatch)
    assert len(linted) == 40 and again == first


HPA = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: vllm, namespace: ml}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: ml}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: [--model, Qwen/Qwen2.5-7B-Instruct, --port, "8000"]
        ports: [{containerPort: 8000}]
        resources: {limits: {nvidia.com/gpu: 1}}
"""

FILLER = """apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated, namespace: other}
data: {a: b}
"""

MONITOR = """apiVersion: v1
kind: Service
metadata: {name: metrics, namespace: mon, labels: {team: m}}
spec:
  selector: {app: nothing-here}
  ports: [{name: http, port: 8000}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: scrape, namespace: mon}
spec:
  selector: {matchLabels: {team: m}}
  endpoints: [{port: metrics}]
"""


def test_a_cached_run_streams_and_replays_the_same(examples, tmp_path):
    one = run_cli("--no-cache", examples)
    env = {stream.SIZES_ENV: "1:3", "VLLMLINT_CACHE_DIR": str(tmp_path / "cache"), "VLLMLINT_NO_CACHE": ""}
    assert run_cli(examples, env=env) == one  # a miss: the cache's recorded bytes are linted in chunks
    assert run_cli(examples, env=env) == one  # a hit

SCRIPTED = """apiVersion: apps/v1
kind: Deployment
metadata: {name: server, namespace: ml}
spec:
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      containers:
      - name: main
        image: python:3.11
        command: [bash, /scripts/start.sh]
        volumeMounts: [{name: scripts, mountPath: /scripts}]
        resources: {limits: {nvidia.com/gpu: 1}}
      volumes:
      - name: scripts
        configMap: {name: start-script}
"""

SCRIPT = """apiVersion: v1
kind: ConfigMap
metadata: {name: start-script, namespace: ml}
data:
  start.sh: |
    #!/bin/bash
    exec vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000
"""


def test_fix_writes_what_a_run_in_one_piece_writes(tree, tmp_path):
    # `--fix` reads the world its lint built to choose and check the fixes: it lints in one piece, whatever the size.
    one, chunked = tmp_path / "one", tmp_path / "chunked"
    shutil.copytree(tree, one)
    shutil.copytree(tree, chunked)
    a = run_cli("--no-cache", "--fix", one, env={stream.SIZES_ENV: "1000000000:1"})
    b = run_cli("--no-cache", "--fix", chunked, env={stream.SIZES_ENV: "1:3"})
    assert b == tuple(part.replace(str(one), str(chunked)) if isinstance(part, str) else part for part in a)
    assert "fixed" in a[2] and "fixed 0 " not in a[2]
    for path in one.rglob("*.yaml"):
        assert (chunked / path.relative_to(one)).read_text() == path.read_text()
