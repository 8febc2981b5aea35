"""The switches that turn one speed piece off, to measure it on its own (bench/FIGURES.md): each takes effect, and
none changes what a run reports (a speed piece never changes the findings)."""
import subprocess
import sys

import pytest

from conftest import FIXTURES, run_cli

PROBE = {
    # The generated record makers (vllmlint/_records.py) are not used: every class compiles its own methods.
    "VLLMLINT_NO_RECORDS": "import vllmlint.engine, vllmlint.records as r; print(r._MAKERS == {} and bool(r._COMPILED))",
    # The console script leaves the cyclic GC's thresholds alone.
    "VLLMLINT_GC_DEFAULT": "import gc, sys; sys.argv = ['vllmlint', '--version']; from vllmlint.entry import main\n"
                           "try:\n    main()\nexcept SystemExit:\n    pass\nprint(gc.get_threshold()[0] < 1000)",
    # The wheel's marshal copies are not read (a checkout has none: the flag is what says so).
    "VLLMLINT_NO_MARSHAL": "import vllmlint.data as d; print(d._NO_MARSHAL)",
}


@pytest.mark.parametrize("variable", sorted(PROBE))
def test_each_switch_takes_effect_and_only_when_set(variable):
    def probe(env):
        return subprocess.run([sys.executable, "-c", PROBE[variable]], capture_output=True, text=True, env=env,
                              timeout=60).stdout.strip().splitlines()[-1]

    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith(("VLLMLINT_NO_RECORDS", "VLLMLINT_GC_DEFAULT",
                                                                       "VLLMLINT_NO_MARSHAL"))}
    assert probe(dict(base, **{variable: "1"})) == "True"
    assert probe(base) == "False"


def test_no_switch_changes_the_report():
    args = ("--format", "json", "--show-notes", "--no-cache", FIXTURES)
    code, plain, _ = run_cli(*args)
    assert code == 1 and '"findings"' in plain
    for variable in sorted(PROBE):
        assert run_cli(*args, env={variable: "1"})[:2] == (code, plain), variable
