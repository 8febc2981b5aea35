"""Configuration files, end to end through the CLI."""
import subprocess

from conftest import CLEAN_DEPLOYMENT as CLEAN, DEPLOYMENT, run_cli

BAD = DEPLOYMENT.replace("v0.29.0", "latest")  # VL102 and VL201


def codes(out):
    return sorted({line.split(": ")[1].split()[0] for line in out.splitlines() if ": VL" in line})


def test_yaml_config_in_a_parent_folder_selects_and_overrides_severity(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".vllmlint.yaml").write_text("ignore: [VL201]\nseverity:\n  removed-flag: warning\nfail-on: error\n")
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "bad.yaml").write_text(BAD)
    code, out, err = run_cli("bad.yaml", cwd=tmp_path / "k8s")
    assert codes(out) == ["VL102"], out + err
    assert "VL102 [warning]" in out
    assert code == 0  # fail-on: error, and the only finding is now a warning


def test_cli_flags_override_the_file(tmp_path):
    (tmp_path / ".vllmlint.yaml").write_text("select: [VL201]\nfail-on: error\n")
    (tmp_path / "bad.yaml").write_text(BAD)
    code, out, _ = run_cli("--select", "VL102", "--fail-on", "warning", "bad.yaml", cwd=tmp_path)
    assert codes(out) == ["VL102"] and code == 1


def test_no_config_and_explicit_config(tmp_path):
    (tmp_path / ".vllmlint.yaml").write_text("select: [VL201]\n")
    (tmp_path / "other.yaml").write_text("select: [VL102]\n")
    (tmp_path / "bad.yaml").write_text(BAD)
    assert codes(run_cli("bad.yaml", cwd=tmp_path)[1]) == ["VL201"]
    assert codes(run_cli("--config", "other.yaml", "bad.yaml", cwd=tmp_path)[1]) == ["VL102"]
    assert codes(run_cli("--no-config", "bad.yaml", cwd=tmp_path)[1]) == ["VL102", "VL201"]


def test_pyproject_tool_section(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.vllmlint]\nignore = ["image-unpinned"]\n')
    (tmp_path / "bad.yaml").write_text(BAD)
    assert codes(run_cli("bad.yaml", cwd=tmp_path)[1]) == ["VL102"]


def test_unknown_key_is_a_usage_error_with_line_and_suggestion(tmp_path):
    (tmp_path / ".vllmlint.yaml").write_text("# team settings\nselect: [VL1]\nfail_on: error\n")
    (tmp_path / "bad.yaml").write_text(BAD)
    code, out, err = run_cli("bad.yaml", cwd=tmp_path)
    assert code == 2 and out == ""
    assert err.strip() == "vllmlint: error: " + str(tmp_path / ".vllmlint.yaml") + \
        ":3: unknown key `fail_on` (did you mean `fail-on`?)"


def test_wrong_type_and_unknown_rule_in_config(tmp_path):
    (tmp_path / ".vllmlint.yaml").write_text("fail-on: critical\n")
    (tmp_path / "bad.yaml").write_text(BAD)
    code, _, err = run_cli("bad.yaml", cwd=tmp_path)
    assert code == 2 and ":1: `fail-on`: 'critical' is not valid here: use one of error, warning, info" in err
    (tmp_path / ".vllmlint.yaml").write_text("ignore:\n  - VL201\n  - removed-flags\n")
    code, _, err = run_cli("bad.yaml", cwd=tmp_path)
    assert code == 2 and "unknown rule `removed-flags` (did you mean `removed-flag`?)" in err


def test_pyproject_errors_name_the_key_path(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.vllmlint]\nselct = ["VL1"]\n')
    (tmp_path / "bad.yaml").write_text(BAD)
    code, _, err = run_cli("bad.yaml", cwd=tmp_path)
    assert code == 2 and "pyproject.toml: [tool.vllmlint].selct: unknown key `selct` (did you mean `select`?)" in err


def test_per_file_ignores_and_exclude_also_for_named_files(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".vllmlint.yaml").write_text(
        "per-file-ignores:\n  'legacy/**': [VL102]\nexclude: ['vendor/']\n")
    for folder in ("legacy", "vendor", "apps"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "bad.yaml").write_text(BAD)
    code, out, _ = run_cli(".", "vendor/bad.yaml", cwd=tmp_path)
    assert "vendor/" not in out
    assert "legacy/bad.yaml" in out and "legacy/bad.yaml:12" not in out  # VL201 stays, VL102 ignored there
    assert "apps/bad.yaml:12:" in out


def test_gitignored_files_are_skipped(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "bad.yaml").write_text(BAD)
    (tmp_path / "bad.yaml").write_text(BAD)
    _, out, _ = run_cli(".", "generated/bad.yaml", cwd=tmp_path)
    assert "generated/" not in out and "bad.yaml:12" in out
    (tmp_path / ".vllmlint.yaml").write_text("respect-gitignore: false\n")
    _, out, _ = run_cli(".", cwd=tmp_path)
    assert "generated/bad.yaml" in out


def test_vllm_version_from_config_is_the_default_release(tmp_path):
    (tmp_path / ".vllmlint.yaml").write_text("vllm-version: 0.6.4.post1\n")
    (tmp_path / "bad.yaml").write_text(BAD)  # :latest, so the release is unknown: the config decides
    assert "VL102" not in run_cli("bad.yaml", cwd=tmp_path)[1]  # --swap-space was fine on 0.6.4.post1
    assert "VL102" in run_cli("--vllm-version", "0.29.0", "bad.yaml", cwd=tmp_path)[1]


def test_config_extends_the_capacity_catalogs(tmp_path):
    """A team's own model and GPU, from `.vllmlint.yaml`, are sized like the catalogued ones."""
    (tmp_path / ".vllmlint.yaml").write_text("""
models:
  - id: acme/llama-70b-ft
    family: llama3.1
    architecture: LlamaForCausalLM
    parameters: 70553706496
    num_hidden_layers: 80
    hidden_size: 8192
    intermediate_size: 28672
    num_attention_heads: 64
    num_key_value_heads: 8
    head_dim: 128
    vocab_size: 128256
    tie_word_embeddings: false
    max_position_embeddings: 131072
    torch_dtype: bfloat16
    attention: {kind: gqa}
    source: our own fine-tune of meta-llama/Llama-3.1-70B-Instruct
""")
    manifest = CLEAN.replace("Qwen/Qwen3-0.6B", "acme/llama-70b-ft").replace(
        "    spec:\n      containers:", "    spec:\n      nodeSelector: {node.kubernetes.io/instance-type: g6.xlarge}\n"
        "      containers:")
    (tmp_path / "big.yaml").write_text(manifest)
    code, out, err = run_cli("--select", "VL601", "big.yaml", cwd=tmp_path)
    assert code == 1 and "VL601" in out and "acme/llama-70b-ft" in out, out + err
    assert run_cli("--no-config", "--select", "VL601", "big.yaml", cwd=tmp_path)[0] == 0  # unknown model: silent
    (tmp_path / ".vllmlint.yaml").write_text("models:\n  - id: acme/x\n")
    code, _, err = run_cli("big.yaml", cwd=tmp_path)
    assert code == 2 and ".vllmlint.yaml:2: `models[0]`:" in err


# --- issue 13: extend-select / extend-ignore, extend, the schema --------------------------------------
def test_extend_select_adds_to_the_default_rules_and_extend_ignore_to_ignore(tmp_path):
    (tmp_path / "bad.yaml").write_text(BAD)
    (tmp_path / ".vllmlint.yaml").write_text("select: [VL102]\nextend-select: [VL201]\n")
    assert codes(run_cli("bad.yaml", cwd=tmp_path)[1]) == ["VL102", "VL201"]
    (tmp_path / ".vllmlint.yaml").write_text("extend-ignore: VL201\n")  # on top of the default set
    assert codes(run_cli("bad.yaml", cwd=tmp_path)[1]) == ["VL102"]
    (tmp_path / ".vllmlint.yaml").write_text("ignore: [VL102]\nextend-ignore: [image-unpinned]\n")
    assert codes(run_cli("bad.yaml", cwd=tmp_path)[1]) == []
    # from the command line too, added to the file's selection
    (tmp_path / ".vllmlint.yaml").write_text("select: [VL102]\n")
    assert codes(run_cli("--extend-select", "VL201", "bad.yaml", cwd=tmp_path)[1]) == ["VL102", "VL201"]
    assert codes(run_cli("--extend-ignore", "VL102", "bad.yaml", cwd=tmp_path)[1]) == []
    (tmp_path / ".vllmlint.yaml").write_text("extend-select: [VL2O1]\n")
    code, _, err = run_cli("bad.yaml", cwd=tmp_path)
    assert code == 2 and "`extend-select`: unknown rule `VL2O1`" in err


def test_extend_reads_a_shared_config_and_overrides_it(tmp_path):
    (tmp_path / ".git").mkdir()  # one repository: a file of it may extend another of it
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "base.yaml").write_text("ignore: [VL201]\nfail-on: error\nseverity: {VL102: warning}\n"
                                      "extend-ignore: [VL6]\nbaseline: base.json\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "bad.yaml").write_text(BAD)
    (project / ".vllmlint.yaml").write_text("extend: ../shared/base.yaml\nseverity: {VL201: error}\n")
    (shared / "base.json").write_text('{"version": 1, "findings": []}')
    from vllmlint.config import load_config

    config = load_config(project / ".vllmlint.yaml")
    assert config.ignore == ["VL201"] and config.fail_on == "error" and config.extend_ignore == ["VL6"]
    assert config.severity == {"VL102": "warning", "VL201": "error"}
    assert config.baseline.resolve() == shared / "base.json"  # relative to the file that names it
    assert [path.resolve() for path in config.extends] == [shared / "base.yaml"]
    (shared / "base.yaml").write_text("ignore: [VL201]\nfail-on: error\nseverity: {VL102: warning}\n")
    (project / ".vllmlint.yaml").write_text("extend: ../shared/base.yaml\nignore: []\nfail-on: warning\n")
    code, out, err = run_cli("bad.yaml", cwd=project)
    assert codes(out) == ["VL102", "VL201"] and "VL102 [warning]" in out and code == 1, err


def test_extend_errors_name_the_file(tmp_path):
    (tmp_path / "a.yaml").write_text("extend: b.yaml\n")
    (tmp_path / "b.yaml").write_text("extend: a.yaml\n")
    code, _, err = run_cli("--config", "a.yaml", "x.yaml", cwd=tmp_path)
    assert code == 2 and "extends back to this file (a cycle)" in err
    (tmp_path / "c.yaml").write_text("extend: nope.yaml\n")
    code, _, err = run_cli("--config", "c.yaml", "x.yaml", cwd=tmp_path)
    assert code == 2 and "c.yaml:1: `extend`:" in err and "nope.yaml: no such configuration file" in err
    (tmp_path / "d.yaml").write_text("extend: e.yaml\n")
    (tmp_path / "e.yaml").write_text("selct: [VL1]\n")
    code, _, err = run_cli("--config", "d.yaml", "x.yaml", cwd=tmp_path)
    assert code == 2 and "e.yaml:1: unknown key `selct` (did you mean `select`?)" in err


def test_the_config_schema_is_complete_and_its_examples_valid():
    import json
    import re

    import jsonschema

    from conftest import ROOT
    from vllmlint import config as config_module

    schema = json.loads((ROOT / "schemas" / "config.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"].startswith("https://") and ".invalid" not in schema["$id"]  # SchemaStore needs a URL
    # every key the loader reads is in the schema, with a description; no key of the schema is unread
    source = open(config_module.__file__).read()
    read = set(re.findall(r'data(?:\.get)?\(?\[?"([a-z-]+)"', source)) | {"extend"}
    read |= {"select", "ignore", "extend-select", "extend-ignore"}  # read through a loop over their names
    read -= {"tool"}  # pyproject.toml's [tool.vllmlint]
    assert set(schema["properties"]) == read
    for name, prop in schema["properties"].items():
        assert prop.get("description"), name
    validator = jsonschema.Draft202012Validator(schema)
    for example in schema["examples"]:
        assert list(validator.iter_errors(example)) == []
    for name, prop in schema["properties"].items():
        for example in prop.get("examples", []):
            assert list(validator.iter_errors({name: example})) == [], name
        if "default" in prop:
            assert list(validator.iter_errors({name: prop["default"]})) == [], name
