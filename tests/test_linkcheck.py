"""vllmlint_dev.linkcheck: a file whose findings another file changes is listed with the lines that differ;
files that do not touch each other are not."""
from vllmlint_dev.linkcheck import Group, difference, main

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {namespace}
spec:
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
"""

HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web-hpa
  namespace: a
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 70}
"""


def _write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return path


def test_an_hpa_is_judged_against_the_deployment_in_another_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    deployment = _write(tmp_path, "deploy.yaml", DEPLOYMENT.format(name="web", namespace="a"))
    hpa = _write(tmp_path, "hpa.yaml", HPA)
    group = Group("pair", [deployment, hpa])
    assert group.alone["hpa.yaml"] == []  # alone, the HPA's target "lives elsewhere": nothing to say
    assert list(group.differs) == ["hpa.yaml"]
    gone, added = group.differs["hpa.yaml"]
    assert gone == []
    assert len(added) == 1 and added[0].startswith("13:13: VL401 warning HPA web-hpa scales on CPU utilization")
    group.attribute()
    assert group.causes == {"hpa.yaml": [["deploy.yaml"]]}


def test_files_in_other_namespaces_with_other_names_do_not_touch(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "one.yaml", DEPLOYMENT.format(name="one", namespace="a"))
    _write(tmp_path, "two.yaml", HPA.replace("namespace: a", "namespace: b"))  # its target `web` is not here
    group = Group("apart", [tmp_path / "one.yaml", tmp_path / "two.yaml"])
    assert group.alone["one.yaml"]  # the Deployment has findings of its own, the same in both runs
    assert group.together["one.yaml"] == group.alone["one.yaml"]
    assert group.differs == {}
    assert main([str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 group(s), 2 file(s), 0 influenced by another file"


def test_the_command_prints_the_differing_lines_and_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "deploy.yaml", DEPLOYMENT.format(name="web", namespace="a"))
    _write(tmp_path, "hpa.yaml", HPA)
    assert main([".", "--attribute"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["hpa.yaml (.):", "  caused by: deploy.yaml"]
    assert out[2].startswith("  + 13:13: VL401 warning")
    assert "1 file(s) influence another" in out
    assert "  VL401: 1 line(s) differ in 1 file(s)" in out


def test_difference_is_a_multiset_difference():
    assert difference(["a", "a", "b"], ["a", "c"]) == (["a", "b"], ["c"])


def test_link_keys_batch_the_hpa_with_its_deployment_and_leave_the_rest_alone(tmp_path, monkeypatch):
    from vllmlint_dev.linkcheck import batches, key_report, link_keys

    monkeypatch.chdir(tmp_path)
    files = [_write(tmp_path, "deploy.yaml", DEPLOYMENT.format(name="web", namespace="a")),
             _write(tmp_path, "hpa.yaml", HPA),
             _write(tmp_path, "other.yaml", DEPLOYMENT.format(name="other", namespace="b"))]
    keys, _ = link_keys(files)
    assert ("N", "web") in keys.provides["deploy.yaml"] and ("N", "web") in keys.wants["hpa.yaml"]
    assert sorted(sorted(b) for b in batches(keys, ["deploy.yaml", "hpa.yaml", "other.yaml"])) == \
        [["deploy.yaml", "hpa.yaml"], ["other.yaml"]]
    group = Group("three", files)
    group.attribute()
    report = key_report(group)
    assert report["strict"] == {"batches": 2, "singletons": 1, "largest": 2, "holes": []}
