"""The YAML model: positions, Kubernetes-style scalar resolution, merge keys, aliases, errors."""
import time

from vllmlint.source.yamlmodel import Mapping, Scalar, SourceFile, parse_documents, resolve_plain, walk


def parse(text):
    documents, error = parse_documents(SourceFile("t.yaml", text))
    return documents, error


def test_scalars_resolve_like_kubernetes_yaml_1_1():
    (doc,), _ = parse("mode: 0755\nflag: on\noff_: OFF\nq: 'on'\nhex: 0x1F\nf: 0.95\nn: ~\nver: 0.29.0\nport: '8000'\n")
    values = {key: node.value for key, node in doc.root.pairs()}
    assert values == {"mode": 493, "flag": True, "off_": False, "q": "on", "hex": 31, "f": 0.95, "n": None,
                      "ver": "0.29.0", "port": "8000"}


def test_resolve_plain_edge_cases():
    assert resolve_plain("yes") is True
    assert resolve_plain("No") is False
    assert resolve_plain("nO") == "nO"  # mixed case is a string in YAML 1.1
    assert resolve_plain("0o17") == 15
    assert resolve_plain("1_000") == 1000
    assert resolve_plain("v1") == "v1"
    assert resolve_plain("-1") == -1
    assert resolve_plain("1e3") == 1000.0


def test_keys_are_text_even_when_yaml_1_1_would_make_them_booleans():
    (doc,), _ = parse("n: 1\ny: 2\n")
    assert doc.root.keys() == ["n", "y"]


def test_positions_are_one_based_and_exact():
    source = SourceFile("t.yaml", "a:\n  - x\n  - image: nginx:latest\n")
    (doc,), _ = parse_documents(source)
    image = doc.root.get("a").items[1].get("image")
    assert (image.span.line, image.span.col, image.span.end_col) == (3, 12, 24)
    assert source.text[image.start:image.end] == "nginx:latest"


def test_offsets_inside_block_scalars_map_to_the_file():
    text = "cmd: |\n  vllm serve m \\\n    --port 8000\n"
    source = SourceFile("t.yaml", text)
    (doc,), _ = parse_documents(source)
    scalar = doc.root.get("cmd")
    offset = scalar.source_index(scalar.text.index("--port"))
    assert source.line_col(offset) == (3, 5)


def test_offsets_inside_quoted_scalars():
    text = 'cmd: "vllm serve m --port 8000"\n'
    source = SourceFile("t.yaml", text)
    (doc,), _ = parse_documents(source)
    scalar = doc.root.get("cmd")
    assert source.line_col(scalar.source_index(scalar.text.index("--port"))) == (1, 20)


def test_merge_keys_and_anchors():
    (doc,), _ = parse("base: &b {image: vllm/vllm-openai:v0.29.0, name: a}\nc:\n  <<: *b\n  name: c\n")
    merged = doc.root.get("c")
    assert merged.get("name").value == "c"  # an explicit key wins over the merged one
    assert merged.get("image").value == "vllm/vllm-openai:v0.29.0"


def test_multi_document_and_error_keeps_earlier_documents():
    documents, error = parse("a: 1\n---\nb: 2\n---\nc: [1, 2\n")
    assert [d.root.keys() for d in documents] == [["a"], ["b"]]
    assert error is not None and error.line >= 5


def test_alias_bomb_is_walked_once_per_node():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    (doc,), _ = parse("\n".join(lines) + "\n")
    started = time.perf_counter()
    count = sum(1 for _ in walk(doc.root))
    assert count < 200  # 10**12 nodes if aliases were expanded
    assert time.perf_counter() - started < 2


def test_json_manifests_parse():
    (doc,), error = parse('{"kind": "Pod", "apiVersion": "v1", "spec": {"containers": []}}')
    assert error is None and isinstance(doc.root, Mapping)
    assert isinstance(doc.root.get("kind"), Scalar)


def test_documents_of_the_same_shape_stay_distinct():
    # Regression: a conversion memo keyed by id() once returned an earlier document for a later one.
    text = "\n---\n".join(f"kind: K{i}\nspec: {{a: [1, 2], b: {{c: d}}}}" for i in range(6)) + "\n"
    documents, error = parse(text)
    assert error is None
    assert [d.root.get("kind").value for d in documents] == [f"K{i}" for i in range(6)]


def test_duplicate_keys_are_recorded_and_lone_cr_breaks_lines():
    source = SourceFile("t.yaml", "a: 1\nb: 2\na: 3\n")
    (doc,), _ = parse_documents(source)
    assert doc.root.get("a").value == 1
    assert [(source.line_col(start), key) for start, _, key in source.duplicate_keys] == [((3, 1), "a")]
    source = SourceFile("t.yaml", "a: 1\rb: 2\r")
    (doc,), _ = parse_documents(source)
    assert doc.root.get("b").span.line == 2
