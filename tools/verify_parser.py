"""Check the static catalog against vLLM's real `vllm serve` parser.

    python tools/verify_parser.py 0.29.0 [--keep]

Creates a throwaway venv, installs the CPU torch that lies on this machine's
disk, `vllm==X` without dependencies, then only the light pure-Python packages
the parser import asks for (one ModuleNotFoundError at a time). It builds the
serve parser with the CPU platform forced, dumps every option string and the
parser's behaviour (abbreviations, underscores), and diffs that against
`schemas/vllm/X.json`. The venv is deleted afterwards.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# import name -> PyPI name where they differ
PIP_NAMES = {
    "yaml": "pyyaml", "PIL": "pillow", "cv2": "opencv-python-headless", "google": "protobuf",
    "zmq": "pyzmq", "sklearn": "scikit-learn", "cpuinfo": "py-cpuinfo", "msgspec": "msgspec",
    "huggingface_hub": "huggingface-hub", "importlib_metadata": "importlib-metadata",
    "multipart": "python-multipart", "dotenv": "python-dotenv", "jose": "python-jose",
    "mistral_common": "mistral-common", "compressed_tensors": "compressed-tensors",
    "gguf": "gguf", "lark": "lark", "partial_json_parser": "partial-json-parser",
    "prometheus_fastapi_instrumentator": "prometheus-fastapi-instrumentator",
    "llguidance": "llguidance", "xgrammar": "xgrammar", "outlines": "outlines",
    "openai_harmony": "openai-harmony", "model_hub": "model-hub", "typing_extensions": "typing-extensions",
    "depyf": "depyf", "setuptools": "setuptools", "pkg_resources": "setuptools",
    "diskcache": "diskcache", "cachetools": "cachetools", "cbor2": "cbor2", "pybase64": "pybase64",
    "blake3": "blake3", "ijson": "ijson", "anthropic": "anthropic", "setproctitle": "setproctitle",
}

# converter names seen on real parsers -> the catalog's type words
REAL_TYPE_KIND = {
    "int": "int", "human_readable_int": "int", "human_readable_int_or_auto": "int", "float": "float",
    "str": "str", "nullable_str": "str", "loads": "json", "parse_dataclass": "json",
    "union_dict_and_str": "json", "from_cli": "json", "from_json": "json",
}

PIP_NAMES_REVERSE = {"python-multipart": "multipart"}

DUMP = r'''
import argparse, json, os, sys
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
result = {}
# Some releases' CpuPlatform.import_kernels probe CPU features through torch APIs that torch 2.13 lacks
# (0.17.1: torch._C._cpu._is_avx512_supported). Answer "no" so the import goes on; parsers do not care.
import torch
for _probe in ("_is_avx512_supported", "_is_avx2_supported", "_is_avx512_bf16_supported",
               "_is_amx_tile_supported", "_is_avx512_vnni_supported"):
    if not hasattr(torch._C._cpu, _probe):
        setattr(torch._C._cpu, _probe, lambda: False)
        result.setdefault("torch_shims", []).append(_probe)
try:
    import vllm.platforms as platforms
    from vllm.platforms.cpu import CpuPlatform
    platforms._current_platform = CpuPlatform()
except Exception as exc:  # older layouts resolve the platform differently
    result["platform_note"] = repr(exc)
parser = None
try:
    from vllm.entrypoints.cli.serve import ServeSubcommand
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    top = FlexibleArgumentParser(prog="vllm")
    subparsers = top.add_subparsers(dest="subparser")
    parser = ServeSubcommand().subparser_init(subparsers)
    result["entry"] = "ServeSubcommand.subparser_init"
except ImportError as exc:
    if "ServeSubcommand" not in str(exc) and "cli.serve" not in str(exc) and "vllm.entrypoints.cli" not in str(exc):
        raise
    # Old layout: vllm.scripts.main() builds the parsers inline. Run it up to parse_args and keep
    # the "serve" subparser it created.
    from vllm.utils import FlexibleArgumentParser
    created = {}
    original_add_parser = argparse._SubParsersAction.add_parser
    def add_parser(self, name, **kw):
        created[name] = original_add_parser(self, name, **kw)
        return created[name]
    class Stop(Exception):
        pass
    original_parse_args = FlexibleArgumentParser.parse_args
    def stop(self, *args, **kwargs):
        created["<top>"] = self
        raise Stop()
    argparse._SubParsersAction.add_parser = add_parser
    FlexibleArgumentParser.parse_args = stop
    import vllm.scripts
    sys.argv = ["vllm", "serve", "m"]
    try:
        vllm.scripts.main()
    except Stop:
        pass
    FlexibleArgumentParser.parse_args = original_parse_args
    parser, top = created["serve"], created["<top>"]
    result["entry"] = "vllm.scripts.main (captured serve subparser)"
def type_name(t):
    if t is None:
        return None
    name = getattr(t, "__name__", repr(t))
    if name.startswith("_") and getattr(t, "__closure__", None):   # optional_type(int) and friends
        inner = [c.cell_contents for c in t.__closure__ if callable(c.cell_contents)]
        if inner:
            return type_name(inner[0])
    return name
actions = []
for action in parser._actions:
    actions.append({
        "option_strings": list(action.option_strings), "dest": action.dest,
        "nargs": action.nargs if not isinstance(action.nargs, type) else str(action.nargs),
        "type": type_name(action.type),
        "choices": [str(c) for c in action.choices] if isinstance(action.choices, (list, tuple, set, frozenset)) else None,
        "default": repr(action.default)[:80],
        "action": type(action).__name__,
    })
result["actions"] = actions
# every string argparse matches, including ones hidden from help (0.33 hides --no-enable-x)
result["accepted"] = sorted(parser._option_string_actions)
result["allow_abbrev"] = parser.allow_abbrev
def try_parse(argv):
    try:
        ns = top.parse_args(["serve", "m"] + argv)
        keep = ("max_model_len", "max_num_seqs", "gpu_memory_utilization", "tokenizer_mode", "optimization_level",
                "tensor_parallel_size", "quantization",
                "compilation_config", "enable_log_requests", "disable_log_requests")
        return {k: repr(v)[:60] for k, v in vars(ns).items() if k in keep}
    except SystemExit as exc:
        return "exit %s" % exc.code
result["probes"] = {
    "--max_model_len 10": try_parse(["--max_model_len", "10"]),
    "--max-num-seq 3": try_parse(["--max-num-seq", "3"]),
    "--gpu-memory-util 0.5": try_parse(["--gpu-memory-util", "0.5"]),
    "--max 1": try_parse(["--max", "1"]),
    "--tokenizer-mode bogus": try_parse(["--tokenizer-mode", "bogus"]),
    "--dtype bogus": try_parse(["--dtype", "bogus"]),
    "-O3": try_parse(["-O3"]),
    "--disable-log-requests": try_parse(["--disable-log-requests"]),
    "--swap-space 4": try_parse(["--swap-space", "4"]),
    "-tp4": try_parse(["-tp4"]),
    "-qfp8": try_parse(["-qfp8"]),
    "--compilation-config.mode 3": try_parse(["--compilation-config.mode", "3"]),
}
print("@@JSON@@" + json.dumps(result))
'''


def run(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def build_real_parser(version: str, venv: Path, log, seed: list[str]) -> dict:
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(py), "-m", "pip", "install", "--quiet"]
    # The CPU torch lies in /opt/wheels (pip's find-links); pin its local version so no CUDA build is fetched.
    res = run(pip + ["torch==2.13.0+cpu", "-v"])
    source = re.findall(r"(Processing|Downloading|Using cached) (\S*torch-2\.13\.0\S*)", res.stdout + res.stderr)
    log(f"torch install rc={res.returncode}: {source[:1]}")
    if res.returncode:
        raise SystemExit(res.stderr[-2000:])
    res = run(pip + ["--no-deps", f"vllm=={version}"])
    if res.returncode:
        raise SystemExit(res.stderr[-2000:])
    installed = []
    if seed:
        log(f"seeding: {' '.join(seed)}")
        res = run(pip + ["-c", str(venv / "constraints.txt"), *seed])
        if res.returncode:
            raise SystemExit(res.stderr[-2000:])
        installed.extend(seed)
    env = dict(os.environ, VLLM_TARGET_DEVICE="cpu", VLLM_LOGGING_LEVEL="ERROR", CUDA_VISIBLE_DEVICES="")
    for _attempt in range(60):
        res = run([str(py), "-c", DUMP], env=env, cwd=str(venv))
        if res.returncode == 0 and "@@JSON@@" in res.stdout:
            result = json.loads(res.stdout.split("@@JSON@@", 1)[1])
            result["installed"] = installed
            return result
        missing = re.findall(r"No module named '([\w.]+)'", res.stderr)
        if not missing:   # some libraries say what to install instead (fastapi: python-multipart)
            missing = [PIP_NAMES_REVERSE.get(m, m) for m in re.findall(r"pip install ([\w-]+)", res.stderr)]
        if not missing:
            raise SystemExit("parser build failed:\n" + res.stderr[-4000:])
        top = missing[-1].split(".")[0]
        package = PIP_NAMES.get(top, top.replace("_", "-"))
        if package in installed:
            raise SystemExit(f"{package} installed but {missing[-1]} still missing:\n" + res.stderr[-3000:])
        log(f"installing {package} (for {missing[-1]})")
        res2 = run(pip + ["-c", str(venv / "constraints.txt"), package])
        if res2.returncode:
            raise SystemExit(f"pip install {package} failed:\n{res2.stderr[-2000:]}")
        installed.append(package)
    raise SystemExit("gave up after 60 missing modules")


def diff(version: str, real: dict) -> dict:
    from vllmlint.vllm import catalog
    release_catalog = catalog.load(version)
    real_strings = set(real.get("accepted") or {s for a in real["actions"] for s in a["option_strings"]})
    real_positionals = {a["dest"] for a in real["actions"] if not a["option_strings"]}
    ours = {s for opt in release_catalog.options.values() if not opt.positional for s in opt.flags}
    our_positionals = {name for name, opt in release_catalog.options.items() if opt.positional}
    type_diffs, choice_diffs = [], []
    by_flag = {s: opt for opt in release_catalog.options.values() for s in opt.flags}
    for action in real["actions"]:
        long = next((s for s in action["option_strings"] if s.startswith("--")), None)
        opt = by_flag.get(long)
        if opt is None:
            continue
        real_choices = action["choices"]
        our_choices = [str(c) for c in opt.choices] if opt.choices_enforced and opt.choices else None
        if our_choices is None and opt.choices_unknown and opt.known_values:
            our_choices = [str(c) for c in opt.known_values]   # registry names stand in for run-time choices
        if (real_choices or None) != (our_choices or None) and not (real_choices and our_choices and set(real_choices) == set(our_choices)):
            choice_diffs.append({"flag": long, "real": real_choices, "catalog": our_choices})
        real_type = REAL_TYPE_KIND.get(action["type"], action["type"]) if action["type"] else None
        if real_type is None and action["action"] in ("_StoreAction", "_AppendAction"):
            real_type = "str"      # argparse's default converter
        if real_type in ("int", "float", "str", "json") and real_type != opt.type:
            type_diffs.append({"flag": long, "real_type": action["type"], "catalog_type": opt.type})
    return {
        "only_in_real_parser": sorted(real_strings - ours),
        "only_in_catalog": sorted(ours - real_strings),
        "positionals": {"real": sorted(real_positionals), "catalog": sorted(our_positionals)},
        "choice_diffs": choice_diffs,
        "type_diffs": type_diffs,
        "real_allow_abbrev": real["allow_abbrev"], "catalog_allow_abbrev": release_catalog.allow_abbrev,
        "probes": real["probes"],
        "probe_predictions": {p: _predict(release_catalog, p) for p in real["probes"]},
        "counts": {"real_option_strings": len(real_strings), "catalog_option_strings": len(ours)},
    }


def _predict(release_catalog, probe: str) -> str:
    token, *value = probe.split()
    res = release_catalog.resolve(token)
    verdict = f"{res.kind}:{res.option.name if res.option else list(res.candidates)[:4]}"
    if res.option is not None and value and res.option.choices_enforced and res.option.choices \
            and value[0] not in [str(c) for c in res.option.choices]:
        verdict += " (value rejected by choices)"
    return verdict


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("version")
    ap.add_argument("--keep", action="store_true", help="keep the venv (for debugging)")
    ap.add_argument("--out", type=Path, help="write the JSON report here")
    ap.add_argument("--save-real", type=Path, help="also save the real parser dump (JSON)")
    ap.add_argument("--from-real", type=Path, help="diff a saved dump instead of building a venv")
    ap.add_argument("--seed", default="", help="packages to install up front (saves one import round per package)")
    args = ap.parse_args()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    if args.from_real:
        real = json.loads(args.from_real.read_text())
    else:
        venv = Path(tempfile.mkdtemp(prefix=f"vllm-verify-{args.version}-")) / "venv"
        try:
            venv.mkdir()
            (venv / "constraints.txt").write_text("torch==2.13.0+cpu\n")
            real = build_real_parser(args.version, venv, log, args.seed.split() if args.seed else [])
        finally:
            if not args.keep:
                shutil.rmtree(venv.parent, ignore_errors=True)
        if args.save_real:
            args.save_real.write_text(json.dumps(real))
    report = {"version": args.version, "entry": real.get("entry"), "installed": real.get("installed"),
              "platform_note": real.get("platform_note"), **diff(args.version, real)}
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
