"""Shell splitting: commands and words with offsets; nothing is expanded or executed."""
from vllmlint.source.shell import script_from_shell_args, split_commands


def words(script):
    return [[w.text for w in c.words] for c in split_commands(script)]


def test_and_chains_semicolons_and_exec():
    assert words("pip install vllm==0.29.0 && exec vllm serve m; echo done") == [
        ["pip", "install", "vllm==0.29.0"], ["vllm", "serve", "m"], ["echo", "done"]]


def test_backslash_newline_continues_a_command():
    assert words("vllm serve m \\\n  --port 8000 \\\n  --host 0.0.0.0\n") == [
        ["vllm", "serve", "m", "--port", "8000", "--host", "0.0.0.0"]]


def test_quotes_are_removed_and_json_kept_whole():
    assert words("""vllm serve m --speculative-config '{"model": "d", "num_speculative_tokens": 5}'""") == [
        ["vllm", "serve", "m", "--speculative-config", '{"model": "d", "num_speculative_tokens": 5}']]


def test_expansions_are_dynamic():
    (command,) = split_commands('vllm serve m --rank=$RANK --port "${PORT}" --x $(cat f)')
    dynamic = {w.text: w.dynamic for w in command.words}
    assert dynamic["--rank=$RANK"] and dynamic["${PORT}"] and dynamic["$(cat f)"]
    assert not dynamic["--port"]


def test_assignments_comments_and_redirects_are_not_words():
    assert words("# start\nRANK=0 FOO=bar vllm serve m 2>&1 | tee log > /dev/null\nRANK=1\n") == [
        ["vllm", "serve", "m"], ["tee", "log"]]


def test_offsets_point_at_raw_words():
    script = "exec vllm serve m --port=8000"
    (command,) = split_commands(script)
    port = command.words[-1]
    assert script[port.start:port.end] == "--port=8000"


def test_shell_dash_c_detection():
    assert script_from_shell_args(["/bin/bash", "-c", "x"]) == 2
    assert script_from_shell_args(["sh", "-lc", "x"]) == 2
    assert script_from_shell_args(["bash", "/config/run.sh"]) is None
    assert script_from_shell_args(["python", "-c", "x"]) is None
