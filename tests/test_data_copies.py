"""The wheel's marshal copies of the shipped JSON (`vllmlint.data.pack`/`unpack`): mappings kept per key say what
the JSON says, and a run that reads them gives the output of a run that reads the JSON. A checkout has no copies,
so the run below makes them in memory, as `hatch_build.py` writes them (the wheel itself: test_packaging.py)."""
import json
import marshal
import subprocess
import sys
import zlib

import pytest

from conftest import FIXTURES, ROOT
from vllmlint.data import Lazy, lazy_paths, pack, unpack


def _copy(relative: str):
    path = ROOT / relative
    raw = path.read_bytes()
    document = json.loads(zlib.decompress(raw, 31) if path.name.endswith(".gz") else raw)
    return document, unpack(marshal.loads(marshal.dumps(pack(document, lazy_paths(relative)))))


@pytest.mark.parametrize("relative", ["schemas/k8s/kubernetes-1.37.json.gz", "schemas/vllm/index.json",
                                      "schemas/k8s/index.json", "schemas/vllm/0.31.0.json"])
def test_a_copy_equals_its_json(relative):
    document, copy = _copy(relative)
    assert copy == document and document == copy


def test_packed_mappings_are_read_per_key():
    document, copy = _copy("schemas/k8s/kubernetes-1.37.json.gz")
    defs = copy["$defs"]
    assert isinstance(defs, Lazy) and not isinstance(copy["kinds"], Lazy)
    name = "io.k8s.api.core.v1.PodSpec"
    assert not defs._made
    assert name in defs and "no.such.Def" not in defs and len(defs) == len(document["$defs"])
    assert defs[name] == document["$defs"][name] and list(defs._made) == [name]
    assert defs.get("no.such.Def", 7) == 7 and defs.get(name) is defs[name]  # unmarshalled once
    with pytest.raises(KeyError):
        defs["no.such.Def"]
    assert list(defs) == list(document["$defs"]) and dict(defs) == document["$defs"]
    _, index = _copy("schemas/vllm/index.json")
    assert isinstance(index["flags"], Lazy) and isinstance(index["releases"], list)


def test_unpack_refuses_an_unknown_envelope():
    with pytest.raises(ValueError):
        unpack(("vllmlint-lazy/0", [[]], {}))
    assert unpack({"a": 1}) == {"a": 1}  # a copy without mappings kept per key is the document itself


SIMULATED_WHEEL = r"""
import json, marshal, sys, zlib
from pathlib import Path
from vllmlint import data

root = Path(sys.argv[1])
compiled = dict(zip(("compiled-data.json", "compiled-docs.json"),
                    data.split_compiled(data.compile_rules_data(root))))


def roundtrip(document, relative):
    return data.unpack(marshal.loads(marshal.dumps(data.pack(json.loads(json.dumps(document)),
                                                             data.lazy_paths(relative)))))


def copy(path):  # what a wheel's `_data/<tag>/<relative>.marshal` gives
    relative = Path(path).resolve().relative_to(root).as_posix()
    raw = Path(path).read_bytes()
    return roundtrip(json.loads(zlib.decompress(raw, 31) if relative.endswith(".gz") else raw), relative)


data._marshalled = copy
data._read_compiled = lambda name: roundtrip(compiled[name], name)
sys.argv = ["vllmlint", "--no-cache", "--format", "json", *sys.argv[2:]]
from vllmlint.entry import main
main()
"""


def test_a_run_reading_the_copies_gives_the_output_of_a_run_reading_the_json(tmp_path):
    """Every rule, every catalog and schema read through `Lazy` mappings, as in a wheel: the fixtures' JSON report
    (findings, fixes, notes) is byte for byte the checkout's."""
    command = [str(FIXTURES), "--show-notes"]
    plain = subprocess.run([sys.executable, "-m", "vllmlint", "--no-cache", "--format", "json", *command],
                           capture_output=True, text=True, cwd=tmp_path, timeout=300)
    copies = subprocess.run([sys.executable, "-c", SIMULATED_WHEEL, str(ROOT), *command], capture_output=True,
                            text=True, cwd=tmp_path, timeout=300)
    assert plain.returncode == copies.returncode == 1, copies.stderr
    assert json.loads(plain.stdout)["findings"], plain.stdout[:300]
    assert copies.stdout == plain.stdout
