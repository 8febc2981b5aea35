"""`vllmlint flag`: one flag's history across the release catalogs, or one release's options."""
import json

from vllmlint.vllm import catalog


def test_flag_history_as_typed(cli):
    code, out, err = cli("flag", "--swap-space")
    assert code == 0, err
    assert out.splitlines()[0] == "--swap-space"
    assert "0.6.4.post1 - 0.17.1" in out and "last accepted by 0.17.1" in out
    assert "removed in:  0.18.0" in out  # from data/removed-flags.yaml
    assert "--kv-offloading-size" in out  # the curated replacement hint
    assert "Size of the CPU swap space" in out


def test_flag_after_double_dash_and_underscores(cli):
    code, out, _ = cli("flag", "--", "--swap_space")
    assert code == 0 and out.splitlines()[0] == "--swap-space"


def test_flag_json_matches_the_catalog(cli):
    code, out, _ = cli("flag", "--kv-cache-memory-bytes", "--format", "json")
    assert code == 0
    report = json.loads(out)
    row = catalog.history("--kv-cache-memory-bytes")
    assert report["first_release"] == row["first"] == "0.10.2"
    assert report["last_release"] == row["last"]
    assert report["in_newest_catalog"] is (row["last"] == catalog.newest())
    assert report["type"] == "int" and report["takes_value"] is True


def test_deprecation_is_shown(cli):
    code, out, _ = cli("flag", "--cuda-graph-sizes")
    assert code == 0
    assert "deprecated:  since 0.11.2" in out and "--cudagraph-capture-sizes" in out


def test_unknown_flag_exits_2_with_a_suggestion(cli):
    code, out, err = cli("flag", "--swap-spac")
    assert code == 2 and out == ""
    assert "did you mean `--swap-space`?" in err


def test_a_prefix_is_explained(cli):
    code, out, _ = cli("flag", "--max-num-seq")
    assert code == 0
    assert "unique prefix of --max-num-seqs" in out


def test_never_existed_flag_gives_the_curated_answer(cli):
    code, out, _ = cli("flag", "--enable-metrics")
    assert code == 2 and "never an option of the vLLM server" in out and "/metrics" in out


def test_list_release_options(cli):
    code, out, _ = cli("flag", "--list", "--vllm-version", "0.29.0")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert len(lines) == len([o for o in catalog.load("0.29.0").options.values()
                              if not o.positional and o.name != "help"])
    assert "--swap-space" not in lines
    assert "float" in lines["--gpu-memory-utilization"] and "default 0.92" in lines["--gpu-memory-utilization"]
    assert "switch" in lines["--enforce-eager"]
    # help text that only mentions deprecation does not make an option deprecated
    assert "DEPRECATED" not in lines["--show-hidden-metrics-for-version"]


def test_list_json_and_uncatalogued_release(cli):
    code, out, _ = cli("flag", "--list", "--vllm-version", "0.11.1", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["release"] == "0.10.2"  # the closest catalogued release before 0.11.1
    names = {row["option"] for row in data["options"]}
    assert "--kv-cache-memory-bytes" in names and "--kv-offloading-size" not in names


def test_no_flag_is_a_usage_error(cli):
    code, _, err = cli("flag")
    assert code == 2 and "name a flag" in err
