"""A checkout (an editable install) reads the pre-parsed data a wheel ships, kept in the user's cache folder under
a digest of the data files' names, sizes and times (vllmlint.data._checkout_compiled)."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = ("import json, sys; from vllmlint import data; "
         "c = data._compiled(); print(json.dumps([len(c), sorted(c)[:1], 'yaml' in sys.modules]))")


def _probe(home: Path, **extra) -> list:
    env = {k: v for k, v in os.environ.items() if k not in ("VLLMLINT_NO_CACHE", "VLLMLINT_CACHE_DIR")}
    env.update(XDG_CACHE_HOME=str(home), **extra)
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, env=env, check=True)
    return json.loads(out.stdout)


def test_a_checkout_keeps_its_parsed_data_in_the_user_cache(tmp_path):
    if (ROOT / "vllmlint" / "_data" / "compiled-data.json").exists():
        return  # an installed wheel's tree: it ships the data pre-parsed
    first = _probe(tmp_path)
    kept = sorted((tmp_path / "vllmlint" / "checkout-data").iterdir())
    assert [p.name.split("-", 1)[1] for p in kept] == ["compiled-data.json", "compiled-docs.json"]
    assert (tmp_path / "vllmlint" / "CACHEDIR.TAG").is_file()  # the folder is marked as the result cache marks it
    second = _probe(tmp_path)
    assert first[:2] == second[:2] and first[0] >= 90  # every rules/ and data/ file
    from vllmlint.data import compile_rules_data, split_compiled

    assert json.loads(kept[0].read_text()) == json.loads(json.dumps(split_compiled(compile_rules_data(ROOT))[0]))


def test_no_cache_and_a_foreign_folder_leave_it_alone(tmp_path):
    if (ROOT / "vllmlint" / "_data" / "compiled-data.json").exists():
        return
    assert _probe(tmp_path, VLLMLINT_NO_DATA_CACHE="1")[0] == 0 and not (tmp_path / "vllmlint").exists()
    mine = tmp_path / "vllmlint"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")  # a folder of the user's own: never written to
    assert _probe(tmp_path)[0] >= 90  # the data is still parsed, only not kept
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
