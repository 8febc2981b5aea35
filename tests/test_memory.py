"""The model's memory: what nodes share instead of holding their own copies (a 10,000-file run holds millions)."""
from vllmlint.source.yamlmodel import Mapping, Scalar, Sequence, SourceFile, parse_documents


def _root(text: str, name: str = "a.yaml"):
    documents, error = parse_documents(SourceFile(name, text))
    assert error is None
    return documents[0].root


def test_files_share_key_texts_offsets_and_key_tuples():
    pad = "#" * 300 + "\n"  # offsets past 256 (Python itself shares the smaller ints)
    one = _root(pad + "metadata:\n  name: vllm\n  namespace: inference\n", "one.yaml")
    two = _root(pad + "metadata:\n  name: sglg\n  namespace: inference\n", "two.yaml")
    (key_one, meta_one), = one.items
    (key_two, meta_two), = two.items
    assert key_one.text is key_two.text  # one `metadata` string for the run, not one per file
    assert meta_one.get("namespace").text is meta_two.get("namespace").text
    # The same offsets in two files are one int object (the composer makes a new one for each node).
    namespace_one, namespace_two = meta_one.items[1][0], meta_two.items[1][0]
    assert (namespace_one.start, namespace_one.end) == (326, 335)
    assert namespace_one.start is namespace_two.start and namespace_one.end is namespace_two.end
    assert meta_one.start == 313 and meta_one.start is meta_two.start
    # Mappings with the same keys share one index.
    assert meta_one.get("name").value == "vllm" and meta_two.get("name").value == "sglg"
    assert meta_one._index is meta_two._index == ("name", "namespace")
    assert one.source.line_starts == [0, 301, 311, 324, 347]
    assert one.source.line_starts[3] is two.source.line_starts[3]


def test_key_index_keeps_first_of_repeated_keys_and_skips_collection_keys():
    root = _root("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  x: 3\n  ? [k]\n  : v\n")
    merged = root.get("m")
    assert isinstance(merged, Mapping)
    # Explicit keys win over merged ones, each key once, in order; a collection key is not a key by text.
    assert merged.keys() == ["x", "y"] and merged.get("x").value == 3 and merged.get("y").value == 2
    assert [(k, v.value) for k, v in merged.pairs()] == [("x", 3), ("y", 2)]
    assert isinstance(merged._index, dict)  # repeated keys: a dict keeps the first position
    flat = _root("a: 1\n? [k]\n: v\nb: 2\n")
    assert flat._index is None and flat.get("b").value == 2 and isinstance(flat._index, tuple)
    assert flat.keys() == ["a", "b"] and "b" in flat and "k" not in flat and flat.get("k") is None
    assert [(k, v.value) for k, v in flat.pairs()] == [("a", 1), ("b", 2)]
    assert isinstance(flat.key_node("b"), Scalar) and flat.key_node("b").start == 15
    assert isinstance(flat.items[1][0], Sequence)


def test_large_mapping_and_a_mapping_changed_after_reading():
    large = _root("".join(f"k{i}: {i}\n" for i in range(40)))
    assert large.get("k39").value == 39 and len(large.keys()) == 40 and isinstance(large._index, dict)
    small = _root("a: 1\n")
    assert small.get("b") is None
    small.items.append((Scalar(0, 1, small.source, "b", "b", None), Scalar(0, 1, small.source, 2, "2", None)))
    small._index = None  # what every writer of `items` does (vllmlint.k8s.operators, vllmlint.source.kustomize)
    assert small.get("b").value == 2 and small.keys() == ["a", "b"]


def _mappings_alive() -> int:
    import gc

    return sum(1 for o in gc.get_objects() if type(o) is Mapping)


def test_a_one_shot_run_gives_its_model_back_before_the_output(tmp_path):
    import gc

    from vllmlint.engine import LintOptions
    from vllmlint.run import lint
    from vllmlint.run import runner as engine

    (tmp_path / "d.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.10.2\n"
        "        args: [--model, Qwen/Qwen3-0.6B, --swap-space=4]\n")

    def feed(linter):
        linter.add_file(tmp_path / "d.yaml")
        linter.result.files_checked = engine.RELEASE_MIN_FILES  # as large as a run must be to collect

    gc.collect()
    enabled = gc.isenabled()
    gc.disable()  # only the engine's own collection may free the model's cycles
    try:
        before = _mappings_alive()
        kept = lint(feed, LintOptions())  # a library call: the caller's GC decides
        assert kept.findings and _mappings_alive() > before  # the model is garbage held by cycles
        gc.collect()
        before = _mappings_alive()
        released = lint(feed, LintOptions(freeze_gc=True))  # the console script
        assert [f.message for f in released.findings] == [f.message for f in kept.findings]
        assert _mappings_alive() == before

        def small(linter):
            linter.add_file(tmp_path / "d.yaml")

        lint(small, LintOptions(freeze_gc=True))  # one file: a collection would cost more than it frees
        assert _mappings_alive() > before
    finally:
        if enabled:
            gc.enable()


def test_a_large_report_is_written_a_piece_at_a_time():
    from vllmlint.check import write_in_pieces

    class Stream:
        def __init__(self):
            self.pieces: list[str] = []

        def write(self, text: str) -> None:
            self.pieces.append(text)

    text = "".join(f"line {i}: é\n" for i in range(100))
    stream = Stream()
    write_in_pieces(stream, text, piece=64)
    assert "".join(stream.pieces) == text and max(map(len, stream.pieces)) == 64 and len(stream.pieces) == 18
    small = Stream()
    write_in_pieces(small, "short\n", piece=64)
    assert small.pieces == ["short\n"]


def test_scalars_keep_no_offset_map_of_their_own():
    import sys

    from vllmlint.source.yamlmodel import UnknownScalar

    text = "script: |\n  echo one\n  echo two\nname: x\n"
    root = _root(text)
    script = root.get("script")
    assert sys.getsizeof(script) <= 80  # four slots of Node and Scalar's three: 80 bytes, not 96 with a fourth
    assert script.source.scalar_offsets is None  # nothing computed until asked
    assert script.source_index(5) == text.index("one") and script.source_index(9) == text.index("echo two")
    assert list(script._offsets)[:3] == [12, 13, 14]  # kept by the file, by place, style and text
    assert list(script.source.scalar_offsets) == [(script.start, script.end, "|", "echo one\necho two\n")]
    copy = UnknownScalar(script)  # the same place and text: the same map
    assert copy._offsets is script._offsets and copy.source_index(5) == text.index("one")
    script._offsets = None
    assert script.source.scalar_offsets == {} and script.source_index(5) == text.index("one")


def test_findings_with_the_same_message_share_one_string():
    from vllmlint.engine import lint_text

    text = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: NAME}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.10.2\n"
            "        args: [--model, Qwen/Qwen3-0.6B, --swap-space=4]\n")
    one = lint_text(text.replace("NAME", "one"), "one.yaml")
    two = lint_text(text.replace("NAME", "two"), "two.yaml")
    assert len(one.findings) == len(two.findings)
    pairs = [(a, b) for a, b in zip(one.findings, two.findings, strict=True) if a.message == b.message]
    assert pairs  # some messages do not name the object
    assert all(a.message is b.message for a, b in pairs)
