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


# --- the direct composition (yamlmodel._direct_documents) -----------------------------------------------
_TRICKY = [
    "a: 1\nb: [x, 'y', \"z\"]\nc: {d: e}\n",
    "base: &b {x: 1, y: 2}\nder:\n  <<: *b\n  y: 3\nlist:\n  <<: [*b, {z: 4}]\n",
    "a: &s shared\nb: *s\nc: [*s, *s]\n",
    "k: v\nk: w\nother: 1\n",  # a duplicate key
    "---\na: 1\n---\n---\nb: |\n  block\n  text\nc: >\n  folded\n  line\n",
    "? [complex, key]\n: value\n? {a: b}\n: 2\n",
    "t: !custom tagged\nn: ~\nb: yes\nf: 1.5\no: 0o17\nh: 0x1f\n",
    'e: "\\ud83e\\udd99 escaped"\nu: "caf\u00e9"\n',
    "",
    "# only a comment\n",
    "a: [1, [2, [3, {b: [4]}]]]\n",
]


def _shape(node):
    from vllmlint.source.yamlmodel import Mapping, Scalar, Sequence
    if isinstance(node, Scalar):
        return ("S", node.start, node.end, node.value, node.text, node.style)
    if isinstance(node, Sequence):
        return ("Q", node.start, node.end, [_shape(i) for i in node.items])
    if isinstance(node, Mapping):
        return ("M", node.start, node.end, [(_shape(k), _shape(v)) for k, v in node.items])
    return node


def test_the_direct_composition_makes_the_nodes_ruamels_nodes_convert_to(monkeypatch):
    from vllmlint.source import yamlmodel

    assert yamlmodel._direct_composer() is not None  # the C extension is installed here: the path is used
    for text in _TRICKY:
        direct_source = SourceFile("a.yaml", text)
        direct, direct_error = yamlmodel._compose_text(direct_source, text, False)
        with monkeypatch.context() as patched:
            patched.setattr(yamlmodel, "_DIRECT", [None])  # the composition through ruamel's nodes
            usual_source = SourceFile("a.yaml", text)
            usual, usual_error = yamlmodel._compose_text(usual_source, text, False)
        assert [_shape(d.root) for d in direct] == [_shape(d.root) for d in usual], text
        assert (direct_error is None) == (usual_error is None), text
        assert direct_source.duplicate_keys == usual_source.duplicate_keys, text
    (doc,), _ = parse_documents(SourceFile("a.yaml", "k: v\nk: w\n"))
    assert doc.source.duplicate_keys == [(5, 6, "k")]


def test_the_direct_composition_puts_ruamels_classes_back_even_after_an_error():
    import _ruamel_yaml
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    for text in ("a: [1, 2\n", "a: &x 1\nb: &x 2\nc: *x\n", "a: *undefined\n", "a: 1\n"):
        parse_documents(SourceFile("a.yaml", text))
        assert (_ruamel_yaml.ScalarNode, _ruamel_yaml.SequenceNode, _ruamel_yaml.MappingNode) == \
            (ScalarNode, SequenceNode, MappingNode), text
    # A duplicate anchor (the composer's message reads the first node's marks) is composed the usual way:
    (doc,), error = parse_documents(SourceFile("a.yaml", "a: &x 1\nb: &x 2\nc: *x\n"))
    assert error is None and doc.root.get("c").value == 2
    # A syntax error in the second document: the first is kept, the error says where.
    documents, error = parse_documents(SourceFile("a.yaml", "a: [1, 2]\n---\nb: {c\n"))
    assert [d.root.get("a").items[1].value for d in documents] == [2]
    assert error is not None and error.line == 4
