"""The result cache (vllmlint.cache): a re-run over the same inputs replays the result, byte for byte; any edit
(to any file: cross-file results included), a corrupt or foreign entry, or `--no-cache` lints again."""
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from vllmlint.run import cache
from vllmlint.engine import Linter, LintOptions
from vllmlint.run import lint

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: ai}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, Qwen/Qwen3-0.6B]
        resources: {limits: {nvidia.com/gpu: 1}}
"""
HPA = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: vllm, namespace: ai}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
"""


# A few fixtures of every kind the engine reads, with findings and notes (the machinery is tested on small trees:
# the long runs are the benchmark's).
FILES = ["fixtures/original/hpa.yaml", "fixtures/original/single-node-deployment.yaml",
         "fixtures/original/metrics-service-monitor.yaml", "fixtures/original/speculative-decoding.sh",
         "fixtures/own/runbook-kubectl-heredoc.md", "fixtures/own/manifest.json"]
TWO = FILES[:2]
SMALL = ["hpa.yaml", "single-node-deployment.yaml", "speculative-decoding.sh"]


def small_tree(tree: Path) -> None:
    """A copy of three of fixtures/original (a tree of its own, for tests that edit it)."""
    tree.mkdir()
    for name in SMALL:
        shutil.copy(FIXTURES / "original" / name, tree / name)


def cached(tmp_path: Path, *args, cwd=None, env=None):
    env = {"VLLMLINT_NO_CACHE": "", "VLLMLINT_CACHE_DIR": str(tmp_path / "cache"), **(env or {})}
    return run_cli(*args, cwd=cwd, env=env)


def entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "results").glob("*.json"))


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_cached_run_prints_what_an_uncached_run_prints(tmp_path, fmt):
    uncached = run_cli("--format", fmt, *FILES)
    first = cached(tmp_path, "--format", fmt, *FILES)
    assert len(entries(tmp_path)) == 1
    second = cached(tmp_path, "--format", fmt, *FILES)
    assert first == uncached
    assert second == uncached
    assert len(entries(tmp_path)) == 1  # the second run read the entry; it wrote no other


def test_the_second_run_replays_without_linting(tmp_path, monkeypatch):
    options = LintOptions(cache_dir=str(tmp_path / "cache"))

    def feed(linter):
        linter.add_file(FIXTURES / "original" / "hpa.yaml")
        linter.add_file(FIXTURES / "original" / "single-node-deployment.yaml")

    first = lint(feed, options)
    assert first.findings
    monkeypatch.setattr(Linter, "build", lambda self: pytest.fail("linted again although nothing changed"))
    second = lint(feed, options)
    assert [(f.code, f.path, f.span, f.message, f.severity) for f in second.findings] == \
           [(f.code, f.path, f.span, f.message, f.severity) for f in first.findings]
    assert second.findings[0].severity.label == first.findings[0].severity.label  # a Severity, not an int
    assert [r.code for r in second.rules] == [r.code for r in first.rules]
    assert second.sources.keys() == first.sources.keys()
    assert (second.files_checked, second.workloads, second.objects) == (first.files_checked, first.workloads,
                                                                        first.objects)


def test_an_entry_keeps_no_copy_of_the_files_it_read(tmp_path, monkeypatch):
    """The texts of the inputs are not in the entry (the key hashed their bytes: a hit read the same); the
    replayed sources are the texts read, a BOM and CRLF line ends included, and standard input keeps its copy."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "deploy.yaml").write_bytes(b"\xef\xbb\xbf" + DEPLOYMENT.replace("\n", "\r\n").encode())
    (tree / "hpa.yaml").write_text(HPA)
    options = LintOptions(cache_dir=str(tmp_path / "cache"))

    def feed(linter):
        for name in ("deploy.yaml", "hpa.yaml"):
            linter.add_file(tree / name)
        linter.add_stdin(b"kind: ConfigMap  # from stdin\n", "stdin.yaml")

    first = lint(feed, options)
    (entry,) = entries(tmp_path)
    kept = cache._read(entry)
    assert "scaleTargetRef" not in kept and "# from stdin" in kept
    monkeypatch.setattr(Linter, "build", lambda self: pytest.fail("linted again although nothing changed"))
    second = lint(feed, options)
    assert {shown: s.text for shown, s in second.sources.items()} == \
        {shown: s.text for shown, s in first.sources.items()}
    assert second.sources[next(k for k in first.sources if k.endswith("deploy.yaml"))].text.startswith("apiVersion")
    assert [(f.code, f.span) for f in second.findings] == [(f.code, f.span) for f in first.findings]


def test_an_edit_to_the_deployment_changes_the_hpa_files_cross_file_finding(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "deploy.yaml").write_text(DEPLOYMENT)
    (tree / "hpa.yaml").write_text(HPA)
    code, out, _ = cached(tmp_path, "--select", "VL401", "--format", "json", str(tree))
    found = [(f["code"], f["path"].rsplit("/", 1)[-1], f["line"]) for f in json.loads(out)["findings"]]
    assert found == [("VL401", "hpa.yaml", 10)]  # the HPA scales on CPU; the Deployment requests none
    assert code == 1
    # The Deployment (another file) now requests CPU: the HPA file, unchanged, has no finding any more.
    (tree / "deploy.yaml").write_text(DEPLOYMENT.replace("{limits: {nvidia.com/gpu: 1}}",
                                                         "{requests: {cpu: '2'}, limits: {nvidia.com/gpu: 1}}"))
    code, out, _ = cached(tmp_path, "--select", "VL401", "--format", "json", str(tree))
    assert json.loads(out)["findings"] == []
    assert code == 0
    # And back: the first entry is still valid for the first content.
    (tree / "deploy.yaml").write_text(DEPLOYMENT)
    code, out, _ = cached(tmp_path, "--select", "VL401", "--format", "json", str(tree))
    assert [f["code"] for f in json.loads(out)["findings"]] == ["VL401"]
    assert len(entries(tmp_path)) == 2


def test_options_are_part_of_the_key(tmp_path):
    path = "fixtures/original/single-node-deployment.yaml"
    _, everything, _ = cached(tmp_path, "--format", "json", path)
    _, selected, _ = cached(tmp_path, "--format", "json", "--select", "VL201", path)
    _, pinned, _ = cached(tmp_path, "--format", "json", "--select", "VL201", "--vllm-version", "0.10.2", path)
    assert len({f["code"] for f in json.loads(everything)["findings"]}) > 1
    assert {f["code"] for f in json.loads(selected)["findings"]} == {"VL201"}
    assert json.loads(pinned)["findings"] == json.loads(selected)["findings"]
    assert len(entries(tmp_path)) == 3


@pytest.mark.parametrize("garbage", ["", "{not json", '{"format": "vllmlint-result-cache 0", "result": {}}',
                                     json.dumps({"format": cache.FORMAT, "external": [], "result": {
                                         "findings": [{"__dc__": "os:system", "f": {}}]}})])
def test_a_corrupt_or_foreign_entry_is_ignored_and_rewritten(tmp_path, garbage):
    expected = run_cli(*TWO)
    cached(tmp_path, *TWO)
    [entry] = entries(tmp_path)
    entry.write_text(garbage)
    assert cached(tmp_path, *TWO) == expected
    assert json.loads(cache._read(entry))["format"] == cache.FORMAT


def test_no_cache_neither_reads_nor_writes(tmp_path):
    expected = run_cli(*TWO)
    assert cached(tmp_path, "--no-cache", *TWO) == expected
    assert not (tmp_path / "cache").exists()
    env = {"VLLMLINT_NO_CACHE": "1", "VLLMLINT_CACHE_DIR": str(tmp_path / "cache")}
    assert run_cli(*TWO, env=env) == expected
    assert not (tmp_path / "cache").exists()


def test_a_kustomization_is_never_cached(tmp_path):
    """Its build reads files from disk that the key does not see."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "deploy.yaml").write_text(DEPLOYMENT)
    (tree / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    cached(tmp_path, str(tree))
    assert entries(tmp_path) == []


def test_a_file_read_outside_the_inputs_invalidates_the_entry(tmp_path, monkeypatch):
    outside = tmp_path / "config.json"
    outside.write_text("{}")
    runs = []
    real_build = Linter.build

    def build(self):
        runs.append(1)
        cache.note_external_read(outside)
        return real_build(self)

    monkeypatch.setattr(Linter, "build", build)
    options = LintOptions(cache_dir=str(tmp_path / "cache"))

    def feed(linter):
        linter.add_file(FIXTURES / "original" / "hpa.yaml")

    lint(feed, options)
    lint(feed, options)
    assert len(runs) == 1
    outside.write_text('{"changed": true}')
    os.utime(outside, ns=(1, 1))
    lint(feed, options)
    assert len(runs) == 2


def test_entries_are_written_whole_and_pruned(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    for number in range(5):
        path = tmp_path / f"f{number}.yaml"
        path.write_text(DEPLOYMENT.replace("name: vllm,", f"name: vllm-{number},"))
        lint(lambda linter, path=path: linter.add_file(path), LintOptions(cache_dir=str(tmp_path / "cache")))
    names = os.listdir(tmp_path / "cache" / "results")
    assert len(names) == 3
    assert not [n for n in names if n.startswith(".tmp-")]  # a temporary file moved into place, none left


def test_concurrent_runs_share_the_cache(tmp_path):
    import subprocess
    import sys

    env = dict(os.environ, VLLMLINT_NO_CACHE="", VLLMLINT_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    expected = run_cli(*FILES)
    procs = [subprocess.Popen([sys.executable, "-m", "vllmlint", *FILES], cwd=FIXTURES.parent, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    done = [p.communicate(timeout=300) for p in procs]
    outputs = [(p.returncode, out.decode(), err.decode()) for p, (out, err) in zip(procs, done, strict=True)]
    assert outputs == [expected] * 3
    assert len(entries(tmp_path)) == 1
    assert cached(tmp_path, *FILES) == expected


def test_cache_dir(monkeypatch, tmp_path):
    assert cache.cache_dir({"VLLMLINT_CACHE_DIR": str(tmp_path)}) == tmp_path
    monkeypatch.setattr(cache.sys, "platform", "linux")
    assert cache.cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/vllmlint")
    assert cache.cache_dir({}) == Path.home() / ".cache" / "vllmlint"


def test_upgrade_to_lints_the_inputs_twice_through_the_cache(tmp_path):
    """--upgrade-to compares two runs over the same inputs: both see every file, cached or not."""
    args = ("--format", "json", "--upgrade-to", "0.31.0", *FILES)
    expected = run_cli(*args)
    assert json.loads(expected[1])["findings"]
    assert cached(tmp_path, *args) == expected
    assert cached(tmp_path, *args) == expected


@pytest.mark.parametrize("chosen", [{"hf_cache": True}, {"online": True}])
def test_models_sized_from_this_machine_or_the_hub_are_never_cached(tmp_path, monkeypatch, chosen):
    """--hf-cache / --online: findings depend on what the key cannot see."""
    import types

    fake = types.ModuleType("vllmlint.capacity.hfconfig")
    fake.sources = lambda: types.SimpleNamespace(**{"hf_cache": False, "online": False, **chosen})
    monkeypatch.setitem(sys.modules, "vllmlint.capacity.hfconfig", fake)
    options = LintOptions(cache_dir=str(tmp_path / "cache"))
    lint(lambda linter: linter.add_file(FIXTURES / "original" / "hpa.yaml"), options)
    assert entries(tmp_path) == []
    fake.sources = lambda: types.SimpleNamespace(hf_cache=False, online=False)
    lint(lambda linter: linter.add_file(FIXTURES / "original" / "hpa.yaml"), options)
    assert len(entries(tmp_path)) == 1


def renders(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "renders").glob("*.txt"))


def test_the_text_of_a_cached_result_is_kept_for_the_same_settings(tmp_path):
    uncached = run_cli(*FILES)
    assert cached(tmp_path, *FILES) == uncached  # linted: the result and its text are kept
    [kept] = renders(tmp_path)
    assert cache._read(kept) in uncached[1]
    cache._write(kept, "KEPT TEXT\n")  # what a re-run writes, proven by a marker
    for whole in shown_entries(tmp_path):
        whole.unlink()  # the run's whole output, kept too (below): this one shows the kept text
    code, out, err = cached(tmp_path, *FILES)
    assert (code, err) == uncached[::2] and out.startswith("KEPT TEXT\n")
    # Other settings are other texts: rendered, and kept beside the first.
    assert cached(tmp_path, "--statistics", *FILES) == run_cli("--statistics", *FILES)
    elsewhere = cached(tmp_path, *[f"../{f}" for f in FILES], cwd=FIXTURES)  # paths relative to another folder
    assert elsewhere == run_cli(*[f"../{f}" for f in FILES], cwd=FIXTURES) and elsewhere[0] == 1
    assert len(renders(tmp_path)) == 3
    assert cached(tmp_path, "--format", "json", *FILES) == run_cli("--format", "json", *FILES)
    assert len(renders(tmp_path)) == 3  # only the text format is kept


def test_a_large_text_is_not_kept(tmp_path, monkeypatch):
    from vllmlint.formatters import Report

    monkeypatch.setattr(cache, "RENDER_MAX", 10)
    monkeypatch.setattr(cache, "_remembered", None)
    report = Report()
    assert list(cache.rendered("text", report, iter(["a" * 20]))) == ["a" * 20]  # no cached result: as made
    result = lint(lambda linter: None, LintOptions())
    cache._remember(result, "k", tmp_path / "cache")
    report = Report(findings=result.findings, suppressed=result.suppressed, sources=result.sources)
    assert list(cache.rendered("text", report, iter(["a" * 20]))) == ["a" * 20]
    assert renders(tmp_path) == []
    assert list(cache.rendered("text", report, iter(["short"]))) == ["short"]
    assert [cache._read(p) for p in renders(tmp_path)] == ["short"]


def shown_entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "shown").glob("*.json"))


@pytest.mark.parametrize("args", [(), ("--quiet",), ("--show-notes",), ("--statistics",), ("--exit-zero",),
                                  ("--fail-on", "error"), ("--select", "VL102"), ("--color", "always")])
def test_a_cached_run_is_shown_again_as_it_was_shown(tmp_path, args):
    """Standard output, standard error and the exit code of a cached text run, written again from the kept
    output (vllmlint.check._Shown), are those of a run without the cache."""
    tree = tmp_path / "tree"
    small_tree(tree)
    command = ["--color", "never", *args, str(tree), str(tmp_path / "missing.yaml")] if args == ("--exit-zero",) \
        else [*args, str(tree)] if "--color" in args else ["--color", "never", *args, str(tree)]
    uncached = run_cli(*command)
    runs = [cached(tmp_path, *command) for _ in range(3)]
    assert all(run == uncached for run in runs), (uncached, runs)
    assert len(shown_entries(tmp_path)) == (0 if args == ("--exit-zero",) else 1)  # an exit 2 is never kept


def test_the_kept_output_is_written_without_reading_the_result(tmp_path):
    """A re-run writes the kept output (proven by a marker put in it), while its result entry is the one it
    showed; a result entry rewritten (here: damaged) takes the kept output with it: linted and shown again."""
    tree = tmp_path / "tree"
    small_tree(tree)
    first = cached(tmp_path, "--color", "never", str(tree))
    (whole,) = shown_entries(tmp_path)
    kept = json.loads(cache._read(whole))
    kept["writes"] = [[0, "KEPT OUTPUT\n"]]
    cache._write(whole, json.dumps(kept))
    assert cached(tmp_path, "--color", "never", str(tree)) == (first[0], "KEPT OUTPUT\n", "")
    (entry,) = entries(tmp_path)
    entry.write_text("not json", encoding="utf-8")
    assert cached(tmp_path, "--color", "never", str(tree)) == first
    assert json.loads(cache._read(entry))["format"] == cache.FORMAT  # linted, and kept again


def test_what_changes_the_output_is_not_shown_from_another_run(tmp_path):
    """An edit, another current folder, another terminal setting, a new collection notice or configuration:
    each is shown as a run without the cache shows it."""
    tree = tmp_path / "tree"
    small_tree(tree)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = ["--color", "never", str(tree)]
    cached(tmp_path, *command)
    assert cached(tmp_path, *command, cwd=elsewhere) == run_cli(*command, cwd=elsewhere)
    assert cached(tmp_path, *command, env={"FORCE_COLOR": "1"})[1] == run_cli(*command, env={"FORCE_COLOR": "1"})[1]
    (tree / "broken.yaml").symlink_to(tree / "nowhere.yaml")  # a VL005 notice of the collection, no input more
    assert cached(tmp_path, *command) == run_cli(*command)
    (tree / "broken.yaml").unlink()
    (tree / ".vllmlint.yaml").write_text("fail-on: error\n", encoding="utf-8")
    assert cached(tmp_path, *command, cwd=tree) == run_cli(*command, cwd=tree)
    hpa = tree / "hpa.yaml"
    hpa.write_text(hpa.read_text(encoding="utf-8").replace("averageUtilization: 70", "averageUtilization: 71"),
                   encoding="utf-8")
    assert cached(tmp_path, *command) == run_cli(*command)


# --- issue 27: nothing lost, nothing faked ----------------------------------------------------------------------
def _runs(tmp_path: Path, folder: Path, count: int) -> None:
    for number in range(count):
        path = tmp_path / f"in{number}.yaml"
        path.write_text(DEPLOYMENT.replace("name: vllm,", f"name: vllm-{number},"))
        lint(lambda linter, path=path: linter.add_file(path), LintOptions(cache_dir=str(folder)))


def test_the_cache_never_deletes_or_writes_among_files_it_did_not_make(tmp_path, monkeypatch):
    """`cache-prune-deletes-user-files`: a folder of the user's own (a `results/` of 40 files) pointed at as the
    cache folder: nothing of it is deleted, nothing written in it. A folder the cache made keeps its newest
    entries and deletes only names it makes."""
    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    project = tmp_path / "project"
    (project / "results").mkdir(parents=True)
    for number in range(40):
        (project / "results" / f"run-{number}.json").write_text(f'{{"experiment": {number}}}')
    _runs(tmp_path, project, 5)
    assert sorted(os.listdir(project)) == ["results"]
    assert len(os.listdir(project / "results")) == 40
    own = tmp_path / "own"
    _runs(tmp_path, own, 1)
    assert (own / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55\n")
    (own / "results" / "notes.json").write_text("{}")  # a file of the user's, put in the cache's folder
    (own / "results" / ("0" * 64 + ".yaml")).write_text("{}")  # a name the cache never makes
    _runs(tmp_path, own, 5)
    names = os.listdir(own / "results")
    assert "notes.json" in names and "0" * 64 + ".yaml" in names
    assert len([n for n in names if n.endswith(".json") and n != "notes.json"]) == 3  # pruned to its newest
    earlier = tmp_path / "earlier"  # what an earlier version wrote (no mark yet): still the cache's own
    (earlier / "results").mkdir(parents=True)
    (earlier / "results" / ("a" * 64 + ".json")).write_text("{}")
    _runs(tmp_path, earlier, 1)
    assert (earlier / "CACHEDIR.TAG").is_file() and len(os.listdir(earlier / "results")) == 2
    foreign = tmp_path / "foreign"  # another tool's cache folder (its own CACHEDIR.TAG): not vllmlint's
    foreign.mkdir()
    (foreign / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n# pip\n")
    _runs(tmp_path, foreign, 1)
    assert os.listdir(foreign) == ["CACHEDIR.TAG"]


def _damage_summary(entry: Path) -> None:
    """The repro's damage: a notice's summary made an object, the JSON still valid (the digest line kept)."""
    head, _, body = entry.read_text(encoding="utf-8").partition("\n")
    data = json.loads(body)
    notice = next(n for n in data["result"]["notices"] if isinstance(n.get("f", {}).get("summary"), dict))
    notice["f"]["summary"] = {"__tuple__": [{}]}
    entry.write_text(head + "\n" + json.dumps(data), encoding="utf-8")


def test_a_damaged_entry_that_still_parses_costs_one_lint_never_an_error(tmp_path):
    """`damaged-cache-entry-fails-every-run`: entries carry a digest; one that does not match is a miss."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "deploy.yaml").write_text(DEPLOYMENT.replace("vllm/vllm-openai:v0.29.0", "vllm/vllm-openai:latest")
                                      .replace("command: [vllm, serve, Qwen/Qwen3-0.6B]",
                                               "command: [vllm, serve, Qwen/Qwen3-0.6B, --swap-space=4]"))
    expected = run_cli("--format", "json", str(tree))
    assert expected[0] == 1
    assert cached(tmp_path, "--format", "json", str(tree)) == expected
    (entry,) = entries(tmp_path)
    _damage_summary(entry)
    assert cached(tmp_path, "--format", "json", str(tree)) == expected  # linted again, and rewritten
    assert cached(tmp_path, "--format", "json", str(tree)) == expected
    json.loads(cache._read(entry))  # whole again
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0x01  # one flipped bit
    entry.write_bytes(bytes(data))
    assert cached(tmp_path, "--format", "json", str(tree)) == expected
    # The kept text output (shown/): a lone surrogate put in it is never written out.
    text = run_cli(str(tree))
    cached(tmp_path, str(tree))
    assert cached(tmp_path, str(tree)) == text
    (whole,) = shown_entries(tmp_path)
    whole.write_text(whole.read_text(encoding="utf-8").replace("VL102", "VL102\\ud800", 1), encoding="utf-8")
    assert cached(tmp_path, str(tree)) == text
    cache._write(whole, cache._read(whole).replace("VL102", "VL102\\ud800", 1))  # even with a matching digest
    assert cached(tmp_path, str(tree)) == text


def test_an_entry_never_imports_a_module(tmp_path):
    """A class named in an entry is one of a module already imported (or of the result's own few): naming
    `vllmlint.__main__` (which runs the command line when imported) is refused, not imported."""
    import sys

    sys.modules.pop("vllmlint.__main__", None)
    for name in ("vllmlint.__main__:X", "vllmlint.server.server:Server", "os:system", "vllmlint.finding:Finding.x"):
        with pytest.raises(ValueError):
            cache._class(name)
    assert "vllmlint.__main__" not in sys.modules
    assert cache._class("vllmlint.finding:Notice").__name__ == "Notice"
