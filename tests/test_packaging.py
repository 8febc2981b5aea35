"""The linter as users get it: a wheel installed into a fresh virtual environment, and the pre-commit hook
run by the real pre-commit. Slow-ish (they install packages), and the only way to know the data ships."""
import json
import os
import shutil
import subprocess
import sys
import venv

import pytest

from conftest import CLEAN_DEPLOYMENT as GOOD, DEPLOYMENT as BAD, FIXTURES, ROOT



def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_"))}
    env["NO_COLOR"] = "1"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """vllmlint installed from its wheel into a fresh venv, outside the source tree."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"), str(ROOT)],
                   check=True, env=_env(), timeout=600)
    (wheel,) = (work / "dist").glob("vllmlint-*.whl")
    venv.create(work / "venv", with_pip=True)
    python = work / "venv" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, env=_env(), timeout=600)
    return work, work / "venv" / "bin" / "vllmlint", wheel


def test_wheel_carries_rules_and_schemas(installed):
    _, _, wheel = installed
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    for folder in ("rules", "schemas"):
        shipped = {n for n in names if f"/_data/{folder}/" in n}
        on_disk = [p for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix in (".yaml", ".json", ".md")]
        assert len(shipped) >= len(on_disk) > 0, folder


def test_wheel_compiled_data_says_what_the_yaml_says(installed):
    _, _, wheel = installed
    import zipfile

    from vllmlint.data import DOC_KEYS, compile_rules_data

    archive = zipfile.ZipFile(wheel)
    shipped = json.loads(archive.read("vllmlint/_data/compiled-data.json"))
    docs = json.loads(archive.read("vllmlint/_data/compiled-docs.json"))
    assert not any(k in shipped["rules/VL102-removed-flag.yaml"] for k in DOC_KEYS)  # the documentation apart
    merged = {key: {**value, **docs.get(key, {})} for key, value in shipped.items()}
    assert merged == json.loads(json.dumps(compile_rules_data(ROOT)))


def test_installed_linter_runs_on_the_fixtures_from_another_folder(installed):
    work, vllmlint, _ = installed
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run([str(vllmlint), str(FIXTURES)], cwd=elsewhere, capture_output=True, env=_env(), timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr.decode()
    assert "VL102" in out and "VL101" in out and "Traceback" not in proc.stderr.decode()
    sarif = subprocess.run([str(vllmlint), "--format", "sarif", str(FIXTURES)], cwd=elsewhere,
                           capture_output=True, env=_env(), timeout=120)
    assert json.loads(sarif.stdout)["runs"][0]["results"]
    explain = subprocess.run([str(vllmlint), "explain", "VL102"], cwd=elsewhere, capture_output=True, env=_env())
    assert explain.returncode == 0 and b"Why is this bad" in explain.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_pre_commit_try_repo_with_the_real_hook(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "bad.yaml").write_text(BAD)
    (repo / "good.yaml").write_text(GOOD)
    subprocess.run(git + ["-C", str(repo), "add", "."], check=True)
    subprocess.run(git + ["-C", str(repo), "commit", "-qm", "manifests"], check=True)
    env = _env()
    env["PRE_COMMIT_HOME"] = str(tmp_path / "cache")
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "vllmlint", "--all-files"],
                          cwd=repo, capture_output=True, env=env, timeout=900)
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode == 1, out
    assert "bad.yaml:12:49: VL102" in out
    assert "good.yaml:" not in out


def test_wheel_marshal_copies_say_what_the_json_says_and_a_run_reads_them(installed):
    """`hatch_build.py` writes this Python's marshal copies of the JSON a run reads (`vllmlint.data.load_json`);
    a Python without copies of its own (another version's wheel) reads the JSON and gets the same."""
    work, vllmlint, wheel = installed
    import marshal
    import zipfile
    import zlib

    archive = zipfile.ZipFile(wheel)
    prefix = f"vllmlint/_data/{sys.implementation.cache_tag}/"
    copies = {n[len(prefix):-len(".marshal")]: n for n in archive.namelist()
              if n.startswith(prefix) and n.endswith(".marshal")}
    assert {n[len(prefix):] for n in archive.namelist() if n.startswith(prefix) and not n.endswith(".marshal")} \
        == {"modules.bin", "patterns.bin"}  # vllmlint/bundle.py's
    catalogs = {f"schemas/{p.parent.name}/{p.name}" for folder in ("vllm", "k8s")
                for p in (ROOT / "schemas" / folder).glob("*.json*")}
    assert "schemas/k8s/kubernetes-1.37.json.gz" in catalogs and "schemas/vllm/0.31.0.json" in catalogs
    assert set(copies) == catalogs | {"compiled-data.json", "compiled-docs.json"}
    from vllmlint.data import Lazy, unpack

    for relative, name in sorted(copies.items()):
        raw = archive.read(f"vllmlint/_data/{relative}")
        copy = unpack(marshal.loads(archive.read(name)))
        assert copy == json.loads(zlib.decompress(raw, 31) if relative.endswith(".gz") else raw), relative
    # The large mappings are unmarshalled per key.
    assert isinstance(unpack(marshal.loads(archive.read(copies["compiled-data.json"]))), Lazy)
    assert isinstance(unpack(marshal.loads(archive.read(copies["schemas/k8s/kubernetes-1.37.json.gz"])))["$defs"],
                      Lazy)
    manifest = work / "deploy.yaml"
    manifest.write_text(BAD, encoding="utf-8")
    code = ("import sys, runpy\nsys.argv = ['vllmlint', '--no-cache', sys.argv[1]]\n"
            "try:\n    runpy.run_module('vllmlint', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "json_imported = 'json' in sys.modules\n"
            "from vllmlint import data\nfrom vllmlint.k8s import schemas\nfrom vllmlint.vllm import catalog\n"
            "read = (catalog._index(), schemas.index(), schemas._bundle('kubernetes-1.37.json.gz'))\n"
            "for cached in (data._compiled, catalog._index, schemas.index, schemas._bundle):\n"
            "    cached.cache_clear()\n"
            "data.marshal_folder = lambda: 'cpython-0'  # a Python with no copies of its own\n"
            "again = (catalog._index(), schemas.index(), schemas._bundle('kubernetes-1.37.json.gz'))\n"
            "print(json_imported, 'json' in sys.modules, read == again, bool(data._compiled()), file=sys.stderr)\n")
    proc = subprocess.run([str(vllmlint.parent / "python"), "-c", code, str(manifest)], cwd=work, capture_output=True,
                          text=True, env=_env(), timeout=120)
    assert "VL102" in proc.stdout
    # No json module for the run itself; the JSON read without copies says the same.
    assert proc.stderr.strip().splitlines()[-1] == "False True True True", proc.stderr


def test_wheel_serves_its_modules_and_patterns_from_the_build_and_lints_as_the_checkout(installed):
    """The wheel's module bundle and pattern table (vllmlint/bundle.py) are read by a real install, and the
    installed linter's JSON report on the fixtures is the checkout's, byte for byte; with the bundle turned off
    as well. An installed module edited afterwards is read from its source."""
    work, vllmlint, _ = installed
    python = str(vllmlint.parent / "python")
    probe = ("import re, vllmlint\nprimed = (str, r'^(vl\\d+)_\\w+\\.py$', 0) in re._cache\n"
             "import vllmlint.engine, vllmlint.checks.vl101_deprecated_entrypoint as c\n"
             "from vllmlint import bundle\n"
             "print(type(vllmlint.engine.__loader__) is bundle._Loader, type(c.__loader__) is bundle._Loader,\n"
             "      primed, vllmlint.engine.__file__)\n")
    out = subprocess.run([python, "-c", probe], capture_output=True, text=True, cwd=work, env=_env(), timeout=120)
    served, check_served, primed, where = out.stdout.split()
    assert (served, check_served, primed) == ("True", "True", "True"), out.stderr
    assert where.startswith(str(work / "venv")) and where.endswith("vllmlint/engine.py")
    off = subprocess.run([python, "-c", probe], capture_output=True, text=True, cwd=work,
                         env={**_env(), "VLLMLINT_NO_BUNDLE": "1"}, timeout=120)
    assert off.stdout.split()[:3] == ["False", "False", "False"], off.stderr
    command = ["--no-cache", "--format", "json", "--show-notes", str(FIXTURES)]
    checkout = subprocess.run([sys.executable, "-m", "vllmlint", *command], capture_output=True, text=True,
                              cwd=work, env=_env(), timeout=300)
    wheel = subprocess.run([str(vllmlint), *command], capture_output=True, text=True, cwd=work, env=_env(),
                           timeout=300)
    plain = subprocess.run([str(vllmlint), *command], capture_output=True, text=True, cwd=work,
                           env={**_env(), "VLLMLINT_NO_BUNDLE": "1"}, timeout=300)
    assert json.loads(checkout.stdout)["findings"] and checkout.returncode == wheel.returncode == 1
    assert wheel.stdout == checkout.stdout == plain.stdout
    # An edit after the install: the edited module is compiled from its source, the others still bundled.
    edited = vllmlint.parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / \
        "site-packages" / "vllmlint" / "lazyre.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nEDITED = True\n", encoding="utf-8")
    probe = ("import vllmlint.lazyre as l, vllmlint.engine as e\nfrom vllmlint import bundle\n"
             "print(l.EDITED, type(l.__loader__) is bundle._Loader, type(e.__loader__) is bundle._Loader)\n")
    out = subprocess.run([python, "-c", probe], capture_output=True, text=True, cwd=work, env=_env(), timeout=120)
    assert out.stdout.split() == ["True", "False", "True"], out.stderr
