"""Maintainer command: write data/model-registry.yaml, which vLLM release's model registry has which architecture.

    python -m vllmlint_dev.model_registry --write                 # re-read the releases the file lists
    python -m vllmlint_dev.model_registry --write --vllm 0.34.0   # add a vLLM release
    python -m vllmlint_dev.model_registry --write --transformers 5.26.0
    python -m vllmlint_dev.model_registry --check                 # compare with the file, write nothing

For each vLLM release the wheel is downloaded (`pip download --no-deps`), and read without importing anything:
`vllm/model_executor/models/registry.py` is parsed with `ast`, and the keys of `_VLLM_MODELS` (the dict the
`ModelRegistry` is built from, a literal made of `**_TEXT_GENERATION_MODELS`, `**_EMBEDDING_MODELS`,
`**_MULTIMODAL_MODELS`, `**_SPECULATIVE_DECODING_MODELS`, `**_TRANSFORMERS_BACKEND_MODELS` ... expansions) are
the architectures the release knows, each with the dict it came from. The Transformers backend of a release is
the keys of its `_FALLBACK_MODEL` (0.7.x: `TransformersModel`), `_TRANSFORMERS_MODELS` or
`_TRANSFORMERS_BACKEND_MODELS` dict: a release without one has no fallback for an architecture it lacks. The
wheel's build date (the zip date of `vllm/__init__.py`) is when the release's image was built: it holds a
transformers published before it.

For each transformers release the wheel is read for the classes defined in `transformers/models/**/modeling_*.py`
(`getattr(transformers, architecture)` is what vLLM's Transformers backend looks up: a class no modeling file
defines cannot be found), with the wheel's date as the publication date.

The file stores, per architecture, the first and last release read that have it (releases in between that lack
it under `missing`), the registry dict it is in, and the transformers release (the earliest published) that
first defines a class of that name; per release read, its date, whether it has a Transformers backend and the
registry's lines. `--cache DIR` keeps the facts read from each wheel as JSON, so that a re-run downloads only
new releases. Not imported by the linter (the runtime side is `vllmlint.vllm.model_registry`).
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from vllmlint.vllm.release import version_key

REGISTRY = "vllm/model_executor/models/registry.py"
# Dicts of registry.py whose entries are the Transformers backend itself (the fallback's own classes).
BACKEND_DICTS = ("_FALLBACK_MODEL", "_TRANSFORMERS_MODELS", "_TRANSFORMERS_BACKEND_MODELS")
# The registry dict an architecture is in, as the data file names it.
KINDS = {
    "_TEXT_GENERATION_MODELS": "text-generation",
    "_EMBEDDING_MODELS": "embedding",
    "_CROSS_ENCODER_MODELS": "cross-encoder",
    "_LATE_INTERACTION_MODELS": "late-interaction",
    "_REWARD_MODELS": "reward",
    "_TOKEN_CLASSIFICATION_MODELS": "token-classification",
    "_SEQUENCE_CLASSIFICATION_MODELS": "sequence-classification",
    "_MULTIMODAL_MODELS": "multimodal",
    "_SPECULATIVE_DECODING_MODELS": "speculative-decoding",
    "_TRANSFORMERS_SUPPORTED_MODELS": "transformers-supported",
    "_FALLBACK_MODEL": "transformers-backend",
    "_TRANSFORMERS_MODELS": "transformers-backend",
    "_TRANSFORMERS_BACKEND_MODELS": "transformers-backend",
}
# A class a modeling file defines, or a name it binds at top level (`XForCausalLM = YForCausalLM`, an alias).
_CLASS = re.compile(r"^(?:class ([A-Za-z_][A-Za-z0-9_]*)\b|([A-Z][A-Za-z0-9_]*) *=[^=])", re.M)


# --------------------------------------------------------------------------- reading one vLLM wheel


def read_registry(text: str, where: str = REGISTRY) -> dict[str, Any]:
    """The architectures of one release's registry.py: {"models": {arch: dict name}, "lines": [first, last]
    of the `_VLLM_MODELS` literal, "backend": [the Transformers backend's own keys]}."""
    tree = ast.parse(text)
    assigned: dict[str, ast.expr] = {}
    lines: dict[str, tuple[int, int]] = {}
    for node in tree.body:
        target = value = None
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target, value = node.target.id, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        if target and value is not None:
            assigned[target] = value
            lines[target] = (node.lineno, node.end_lineno or node.lineno)

    def entries(name: str, expr: ast.expr) -> list[tuple[str, Any, str]]:
        """(architecture, value, the dict it comes from) of a dict literal, in order."""
        if not isinstance(expr, ast.Dict):
            raise ValueError(f"{where}: {name} is not a dict literal ({ast.dump(expr)[:80]})")
        found: list[tuple[str, Any, str]] = []
        for key, value in zip(expr.keys, expr.values, strict=True):
            if key is None and isinstance(value, ast.Name) and value.id in assigned:
                found.extend(entries(value.id, assigned[value.id]))
            elif key is None and isinstance(value, ast.DictComp):
                found.extend((k, v, name) for k, v, _ in comprehension(name, value))
            elif key is None:
                raise ValueError(f"{where}: {name} expands something unknown ({ast.dump(value)[:80]})")
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.append((key.value, _literal(value), name))
            else:
                raise ValueError(f"{where}: {name} has a key that is no string ({ast.dump(key)[:80]})")
        return found

    def comprehension(name: str, expr: ast.DictComp) -> list[tuple[str, Any, str]]:
        """`{k: (mod, arch) for k, (mod, arch) in _TEXT_GENERATION_MODELS.items() if arch == "X"}` (0.6-0.33
        `_EMBEDDING_MODELS`): evaluated over the entries of the dict it iterates, with `==`/`!=` filters."""
        generator = expr.generators[0] if len(expr.generators) == 1 else None
        source = generator.iter if generator is not None else None
        if not (generator is not None and isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute)
                and source.func.attr == "items" and isinstance(source.func.value, ast.Name)
                and source.func.value.id in assigned and isinstance(expr.key, ast.Name)
                and isinstance(expr.key, ast.Name)):
            raise ValueError(f"{where}: {name} has a comprehension this tool does not read")
        result = []
        for key, value, origin in entries(source.func.value.id, assigned[source.func.value.id]):
            scope: dict[str, Any] = {}
            _bind(generator.target, (key, value), scope)
            if all(_test(condition, scope) for condition in generator.ifs):
                result.append((key, value, origin))
        return result

    if "_VLLM_MODELS" not in assigned:
        raise ValueError(f"{where}: no _VLLM_MODELS")
    models: dict[str, str] = {}
    for arch, _value, origin in entries("_VLLM_MODELS", assigned["_VLLM_MODELS"]):
        models.setdefault(arch, origin)  # the dict it is first listed in (an embedding dict re-lists LlamaForCausalLM)
    unknown = sorted({origin for origin in models.values() if origin not in KINDS})
    if unknown:
        raise ValueError(f"{where}: registry dicts this tool does not know: {unknown} (add them to KINDS)")
    first, last = lines["_VLLM_MODELS"]
    spans = sorted(lines[name] for name in set(models.values()) | {"_VLLM_MODELS"})
    backend_dicts = sorted({origin for origin in models.values() if origin in BACKEND_DICTS})
    return {"models": models, "lines": [min(s[0] for s in spans), max(s[1] for s in spans)],
            "vllm_models_lines": [first, last],
            "backend": sorted(a for a, origin in models.items() if origin in BACKEND_DICTS),
            "backend_dicts": [f"{name} line {lines[name][0]}" for name in backend_dicts]}


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _bind(target: ast.expr, value: Any, scope: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        scope[target.id] = value
    elif isinstance(target, ast.Tuple) and isinstance(value, tuple) and len(value) == len(target.elts):
        for element, item in zip(target.elts, value, strict=True):
            _bind(element, item, scope)
    else:
        raise ValueError(f"cannot bind {ast.dump(target)[:60]}")


def _test(node: ast.expr, scope: dict[str, Any]) -> bool:
    """A comprehension's filter: `name == "text"` or `name != "text"`."""
    if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
            and isinstance(node.left, ast.Name) and node.left.id in scope):
        other = _literal(node.comparators[0])
        equal = scope[node.left.id] == other
        return equal if isinstance(node.ops[0], ast.Eq) else not equal
    raise ValueError(f"a filter this tool does not read: {ast.dump(node)[:80]}")


def read_vllm_wheel(wheel: Path) -> dict[str, Any]:
    with zipfile.ZipFile(wheel) as zf:
        facts = read_registry(zf.read(REGISTRY).decode("utf-8"))
        facts["built"] = "%04d-%02d-%02d" % zf.getinfo("vllm/__init__.py").date_time[:3]
    return facts


# --------------------------------------------------------------------------- reading one transformers wheel


def read_transformers_wheel(wheel: Path) -> dict[str, Any]:
    """{"classes": the class names defined (or bound at top level) in transformers/models/**/modeling_*.py,
    "published": wheel date}."""
    classes: set[str] = set()
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith("transformers/models/") and name.rsplit("/", 1)[-1].startswith("modeling_") \
                    and name.endswith(".py"):
                for defined, bound in _CLASS.findall(zf.read(name).decode("utf-8", errors="replace")):
                    classes.add(defined or bound)
        published = "%04d-%02d-%02d" % zf.getinfo("transformers/__init__.py").date_time[:3]
    return {"classes": sorted(classes), "published": published}


# --------------------------------------------------------------------------- downloads and the cache


def _facts(package: str, version: str, cache: Path | None) -> dict[str, Any]:
    cached = cache / f"{package}-{version}.json" if cache is not None else None
    if cached is not None and cached.is_file():
        return json.loads(cached.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix=f"{package}-wheel-") as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        f"{package}=={version}", "-d", tmp], check=True)
        wheel = next(Path(tmp).glob("*.whl"))
        facts = read_vllm_wheel(wheel) if package == "vllm" else read_transformers_wheel(wheel)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(facts, sort_keys=True), encoding="utf-8")
    return facts


# --------------------------------------------------------------------------- the data file


def build(vllm: dict[str, dict[str, Any]], transformers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The data file's content from the facts of every vLLM and transformers release read."""
    releases = sorted(vllm, key=version_key)
    present: dict[str, list[str]] = {}
    for release in releases:
        for arch in vllm[release]["models"]:
            present.setdefault(arch, []).append(release)
    t_versions = sorted(transformers, key=lambda v: (transformers[v]["published"], version_key(v)))
    defined_first: dict[str, str] = {}
    for version in t_versions:  # earliest published first
        for name in transformers[version]["classes"]:
            defined_first.setdefault(name, version)
    architectures: dict[str, Any] = {}
    for arch in sorted(present, key=str.lower):
        having = present[arch]
        first, last = having[0], having[-1]
        row: dict[str, Any] = {"first": first}
        if last != releases[-1]:
            row["last"] = last
        span = releases[releases.index(first):releases.index(last) + 1]
        missing = [r for r in span if r not in set(having)]
        if missing:
            row["missing"] = missing
        row["kind"] = KINDS[vllm[last]["models"][arch]]
        if arch in defined_first:
            row["transformers"] = defined_first[arch]
        architectures[arch] = row
    return {
        "schema_version": 1,
        "releases": [{
            "version": r,
            "built": vllm[r]["built"],
            "transformers_backend": bool(vllm[r]["backend"]),
            "source": f"vllm-{r} wheel: {REGISTRY} lines {vllm[r]['lines'][0]}-{vllm[r]['lines'][1]} "
                      f"(_VLLM_MODELS at line {vllm[r]['vllm_models_lines'][0]})"
                      + (f"; Transformers backend: {', '.join(_backend_dicts(vllm[r]))}" if vllm[r]["backend"]
                         else "; no Transformers backend"),
        } for r in releases],
        "transformers_releases": [{"version": v, "published": transformers[v]["published"]}
                                  for v in sorted(transformers, key=version_key)],
        "architectures": architectures,
    }


def _backend_dicts(facts: dict[str, Any]) -> list[str]:
    """`_TRANSFORMERS_MODELS line 224` for the source of a release (facts cached before this field: the keys)."""
    return facts.get("backend_dicts") or facts["backend"]


_HEADER = """\
# Which vLLM release's model registry has which architecture (config.json `architectures`), and what its
# Transformers fallback can reach. Generated by `python -m vllmlint_dev.model_registry --write`: do not edit.
#
# How vLLM picks the model class (vllm/model_executor/models/registry.py, e.g. vllm-0.13.0 lines 495-503 and
# 928-990): the architectures of config.json are looked up in `_VLLM_MODELS`; when none is there and
# --model-impl is auto (the default) or transformers, the Transformers backend is tried
# (`_try_resolve_transformers`: `getattr(transformers, architecture)`, or the repository's own `AutoModel` class
# under `auto_map`, which must be `is_backend_compatible()`); else vLLM stops with "Model architectures [...]
# are not supported for now". 0.6.x has no Transformers backend; 0.7.x resolves the fallback in
# vllm/model_executor/model_loader/utils.py (`resolve_transformers_fallback`), the same lookup.
#
# releases: every vLLM release read (its wheel), with the wheel's build date (`built`: the zip date of
#   vllm/__init__.py; the image published with the release holds a transformers published before it),
#   whether its registry has a Transformers backend (`_FALLBACK_MODEL`, `_TRANSFORMERS_MODELS` or
#   `_TRANSFORMERS_BACKEND_MODELS`), and the lines read.
# transformers_releases: every transformers release read, with its wheel's date (`published`).
# architectures: arch -> first / last release read whose registry has it (`last` absent: still in the newest
#   read), `missing` (releases in between without it), `kind` (the registry dict of the last release that has
#   it), `transformers` (the earliest published transformers release read whose transformers/models/**/modeling_*.py
#   defines a class of that name; absent: none of the releases read defines it).
"""


def render(doc: dict[str, Any]) -> str:
    """Compact YAML: one line per release and per architecture (values are quoted where YAML 1.1 would
    read a number)."""
    def scalar(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, list):
            return "[" + ", ".join(scalar(v) for v in value) + "]"
        return json.dumps(str(value), ensure_ascii=False)

    def flow(row: dict[str, Any]) -> str:
        return "{" + ", ".join(f"{k}: {scalar(v)}" for k, v in row.items()) + "}"

    out = [_HEADER.rstrip("\n"), f"schema_version: {doc['schema_version']}", "releases:"]
    out += [f"  - {flow(row)}" for row in doc["releases"]]
    out.append("transformers_releases:")
    out += [f"  - {flow(row)}" for row in doc["transformers_releases"]]
    out.append("architectures:")
    out += [f"  {arch}: {flow(row)}" for arch, row in doc["architectures"].items()]
    return "\n".join(out) + "\n"


def default_path() -> Path:
    from vllmlint.data import knowledge_dir
    return knowledge_dir() / "model-registry.yaml"


def _listed(path: Path) -> tuple[list[str], list[str]]:
    if not path.is_file():
        return [], []
    from vllmlint.data import load_yaml_data
    doc = load_yaml_data(path)
    return ([str(r["version"]) for r in doc.get("releases") or ()],
            [str(r["version"]) for r in doc.get("transformers_releases") or ()])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vllmlint_dev.model_registry",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the data file")
    parser.add_argument("--check", action="store_true", help="fail when the file differs from a re-read")
    parser.add_argument("--vllm", nargs="*", default=[], help="vLLM releases to add to those the file lists")
    parser.add_argument("--transformers", nargs="*", default=[], help="transformers releases to add")
    parser.add_argument("--cache", type=Path, default=None, help="keep the facts read from each wheel here")
    parser.add_argument("--out", type=Path, default=None, help="the data file (default: data/model-registry.yaml)")
    args = parser.parse_args(argv)
    out = args.out or default_path()
    vllm_versions, transformers_versions = _listed(out)
    vllm_versions = sorted(set(vllm_versions) | set(args.vllm), key=version_key)
    transformers_versions = sorted(set(transformers_versions) | set(args.transformers), key=version_key)
    if not vllm_versions or not transformers_versions:
        parser.error("no releases to read: name them with --vllm and --transformers")
    vllm = {v: _facts("vllm", v, args.cache) for v in vllm_versions}
    transformers = {v: _facts("transformers", v, args.cache) for v in transformers_versions}
    text = render(build(vllm, transformers))
    if args.check:
        same = out.is_file() and out.read_text(encoding="utf-8") == text
        print(f"{out}: {'up to date' if same else 'differs from a re-read'}")
        return 0 if same else 1
    if args.write:
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}: {len(vllm)} vLLM releases, {len(transformers)} transformers releases, "
              f"{text.count(chr(10))} lines")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
