"""`--jobs`: the rules checked by forked copies of the process, on the model built once; the output is byte for
byte the output of one process, in every format."""
import os
import sys

import pytest

from conftest import FIXTURES, bench_module, run_cli
from vllmlint.engine import LintOptions
from vllmlint.run import lint_paths, processes as engine

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="processes are forked on Linux only")



@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tree")
    bench_module().generate(folder, 60, seed=7)
    return folder


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
@pytest.mark.parametrize("where", ["fixtures", "tree"])
def test_two_processes_print_what_one_prints(fmt, where, tree):
    path = FIXTURES if where == "fixtures" else tree
    one = run_cli("--no-cache", "--jobs", "1", "--format", fmt, path)
    two = run_cli("--no-cache", "--jobs", "2", "--format", fmt, path)
    assert one[0] == 1 and one[1]  # findings: the comparison compares something
    assert two == one
    if fmt == "text" and where == "tree":
        assert run_cli("--no-cache", "-j", "3", "--format", fmt, path) == one


def test_rules_are_shared_out_and_merged_in_rule_order(monkeypatch):
    forks = []
    real_fork = os.fork

    def fork():
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    monkeypatch.setattr("threading.active_count", lambda: 1)
    serial, _ = lint_paths([str(FIXTURES)], LintOptions(jobs=1))
    parallel, _ = lint_paths([str(FIXTURES)], LintOptions(jobs=2))
    assert len(forks) == 1
    key = [(f.code, f.path, f.span, f.message, f.severity, f.fix) for f in serial.findings]
    assert [(f.code, f.path, f.span, f.message, f.severity, f.fix) for f in parallel.findings] == key
    assert [(n.code, n.message) for n in parallel.notices] == [(n.code, n.message) for n in serial.notices]


def test_a_copy_that_fails_leaves_its_rules_to_this_process(monkeypatch):
    monkeypatch.setattr("threading.active_count", lambda: 1)
    serial, _ = lint_paths([str(FIXTURES / "original")], LintOptions(jobs=1))

    def broken(*args, **kwargs):
        raise OSError("no room in the pipe")

    monkeypatch.setattr("pickle.dump", broken)  # in the copy: it sends nothing and exits 1
    parallel, _ = lint_paths([str(FIXTURES / "original")], LintOptions(jobs=2))
    assert [(f.code, f.path, f.span) for f in parallel.findings] == [(f.code, f.path, f.span) for f in serial.findings]
    assert not parallel.internal_error


def test_how_many_processes(monkeypatch):
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert engine.parallel_jobs(LintOptions(), 10_000) == 1  # the library: never forked unless asked
    assert engine.parallel_jobs(LintOptions(jobs=0), engine.PARALLEL_MIN_FILES - 1) == 1
    assert engine.parallel_jobs(LintOptions(jobs=0), engine.PARALLEL_MIN_FILES) == engine.MAX_AUTO_JOBS
    assert engine.parallel_jobs(LintOptions(jobs=3), 1) == 3
    monkeypatch.setattr(os, "getloadavg", lambda: (6.2, 5.0, 4.0))  # 6 of the 8 cores busy: 2 processes
    assert engine.parallel_jobs(LintOptions(jobs=0), 10_000) == 2
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0))  # all busy: one, unless asked
    assert engine.parallel_jobs(LintOptions(jobs=0), 10_000) == 1
    assert engine.parallel_jobs(LintOptions(jobs=2), 10_000) == 2
    monkeypatch.setattr("threading.active_count", lambda: 2)  # a threaded process (a language server): never
    assert engine.parallel_jobs(LintOptions(jobs=3), 10_000) == 1


def test_jobs_must_be_positive():
    code, _, err = run_cli("--jobs", "0", "fixtures/original/hpa.yaml")
    assert code == 2
    assert "--jobs" in err
