"""Kustomize folders read without running anything: resources, images, strategic-merge and JSON 6902 patches."""
import subprocess
from pathlib import Path

from conftest import FIXTURES, run_cli
from vllmlint.engine import LintOptions, lint_paths
from vllmlint.run import lint_paths as run_lint_paths

KUSTOMIZE = FIXTURES / "own" / "kustomize"


def _found(paths, select=("VL102",), follow_links=True):
    """Linted by the runner; `follow_links`: the resources outside `paths` are read (--follow-links)."""
    result, missing = run_lint_paths([str(p) for p in paths], LintOptions(select=list(select),
                                                                         follow_links=follow_links))
    assert not missing
    return result, {(f.path.split("kustomize/")[-1], f.span.line, f.span.col, f.code, f.severity.label)
                    for f in result.findings}


def test_overlay_patch_args_are_linted_in_the_patch_file_against_the_overlay_image():
    result, found = _found([KUSTOMIZE / "overlays" / "prod"], select=("VL005", "VL006", "VL102"))
    assert found == {
        ("overlays/prod/args-patch.yaml", 11, 75, "VL102", "error"),  # strategic merge: args replaced by name
        ("overlays/prod/json-patch.yaml", 4, 10, "VL102", "error"),  # JSON 6902 add to args/-
    }
    # the base's own --num-scheduler-steps is gone: the patch replaced the args
    assert result.invocations == 1
    messages = [n.message for n in result.notices]
    assert any("image vllm/vllm-openai:v0.10.1.1 set by the Kustomization's `images`" in m for m in messages)
    assert any("remote Kustomize resource" in m and "github.com/example" in m for m in messages)


def test_base_alone_keeps_its_own_values():
    # the base's own image (v0.10.0, the last release that accepted --num-scheduler-steps), not the overlay's
    result, found = _found([KUSTOMIZE / "base"], select=("VL006", "VL102"))
    assert found == set() and result.invocations == 1
    assert not [n for n in result.notices if n.code == "VL006"]  # its release is known: no assumption
    _, found = _found([KUSTOMIZE / "overlays" / "prod"])
    assert found  # the overlay's v0.10.1.1 refuses the flags its patches add


def test_overlay_alone_notes_the_base_it_cannot_read_and_never_reads_it():
    """issue 27 `kustomize-overlay-alone-reports-clean`: without --follow-links a base outside the linted paths is
    not read (as a symbolic link out of them is not), and a note says so: never a silent "All checks passed"."""
    result, found = _found([KUSTOMIZE / "overlays" / "prod"], select=("VL005", "VL102"), follow_links=False)
    assert found == set() and result.invocations == 0
    notes = [n for n in result.notices if "`../../base` not read" in n.message]
    assert len(notes) == 1 and notes[0].path.endswith("overlays/prod/kustomization.yaml") and notes[0].line == 6
    assert "--follow-links" in notes[0].message
    # the engine alone (the library's lint_paths): the same set of files, the same note
    engine_result, _ = lint_paths([str(KUSTOMIZE / "overlays" / "prod")], LintOptions(select=["VL005", "VL102"]))
    assert [n.message for n in engine_result.notices] == [n.message for n in result.notices]


def test_every_mode_reads_the_same_files(tmp_path):
    """The CLI's plain run, --fix and the pre-commit shape (files by name) read one set of files: the overlay's
    base only with --follow-links, in every one of them."""
    tree = tmp_path / "tree"
    subprocess.run(["cp", "-r", str(KUSTOMIZE), str(tree)], check=True)
    overlay = tree / "overlays" / "prod"
    plain = run_cli("--no-cache", "--select", "VL102,VL005", "--show-notes", str(overlay))
    assert plain[0] == 0 and "`../../base` not read" in plain[2]
    fixed = run_cli("--fix", "--select", "VL102,VL005", "--show-notes", str(overlay))
    assert "VL102" not in fixed[1] and "`../../base` not read" in fixed[2]
    named = run_cli("--no-cache", "--select", "VL102,VL005", "--show-notes", str(overlay / "args-patch.yaml"),
                    str(overlay / "kustomization.yaml"))
    assert named[0] == 0 and "`../../base` not read" in named[2]
    whole = run_cli("--no-cache", "--select", "VL102", str(tree))
    assert whole[0] == 1 and whole[1].count("VL102") == 2


def test_base_outside_the_tree_is_never_read(tmp_path):
    """issue 27 `kustomize-base-outside-tree-read-under-fix`: a folder anywhere on the machine named as a base is
    neither read nor quoted, in a plain run or under --fix."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    (tmp_path / "elsewhere" / "deploy.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: someone-elses-app}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.29.0\n    args: [\"--api-key=sk-PRIVATE-OUTSIDE-KEY\", \"--swap-space=4\"]\n")
    repo = tmp_path / "repo" / "k"
    repo.mkdir(parents=True)
    (repo / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    (repo / "kustomization.yaml").write_text("resources:\n- cm.yaml\n- ../../elsewhere\n")
    for args in (["--no-cache"], ["--fix"], ["--diff"]):
        code, out, err = run_cli(*args, "--show-notes", str(tmp_path / "repo"))
        assert "deploy.yaml" not in out + err and "PRIVATE" not in out + err and "sk-" not in out + err, args
        assert args == ["--diff"] or "`../../elsewhere` not read" in out + err, args
    from vllmlint.server.project import Project  # the language server's runs: the same files

    run = Project(tmp_path / "repo").lint({})
    assert sorted(Path(s).name for s in run.result.sources) == ["cm.yaml", "kustomization.yaml"]
    assert [n for n in run.result.notices if "`../../elsewhere` not read" in n.message]


def test_whole_folder_is_read_as_the_overlay():
    _, found = _found([KUSTOMIZE])
    assert {f[0] for f in found} == {"overlays/prod/args-patch.yaml", "overlays/prod/json-patch.yaml"}


def test_patch_files_are_not_whole_workloads():
    result, found = _found([KUSTOMIZE / "overlays" / "prod"], select=["ALL"])
    assert not [f for f in found if f[0].startswith("overlays/") and f[3] != "VL102"]
    assert result.workloads == 1


def test_base_of_two_overlays_keeps_its_own_release(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("resources:\n  - deployment.yaml\n")
    (base / "deployment.yaml").write_text((KUSTOMIZE / "base" / "deployment.yaml").read_text())
    for name, tag in (("a", "v0.10.1.1"), ("b", "v0.9.2")):
        overlay = tmp_path / name
        overlay.mkdir()
        (overlay / "kustomization.yaml").write_text(
            f"resources:\n  - ../base\nimages:\n  - name: vllm/vllm-openai\n    newTag: {tag}\n")
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL006", "VL102"]))
    assert [n for n in result.notices if "set by the Kustomization" in n.message] == []


def test_env_is_merged_by_name_and_image_digest(tmp_path):
    (tmp_path / "kustomization.yaml").write_text(
        "resources:\n  - d.yaml\npatchesStrategicMerge:\n  - p.yaml\nimages:\n  - name: vllm/vllm-openai\n"
        "    newName: registry.example.com/vllm/vllm-openai\n    newTag: v0.10.1.1\n")
    (tmp_path / "d.yaml").write_text((KUSTOMIZE / "base" / "deployment.yaml").read_text().replace(
        "          ports:", "          env:\n            - name: A\n              value: '1'\n          ports:"))
    (tmp_path / "p.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          env:\n            - name: B\n              value: '2'\n")
    from vllmlint.engine import Linter
    from pathlib import Path

    linter = Linter(LintOptions(select=["VL102"]))
    for name in ("kustomization.yaml", "d.yaml", "p.yaml"):
        linter.add_file(Path(tmp_path / name))
    world = linter.build()
    [container] = world.containers
    assert container.env == {"A": "1", "B": "2"}
    assert container.image is not None and container.image.value == "registry.example.com/vllm/vllm-openai:v0.10.1.1"
    [invocation] = world.invocations
    assert invocation.release == "0.10.1.1"


def test_hostile_kustomizations_do_not_crash(tmp_path):
    for name, other in (("a", "b"), ("b", "a")):  # a cycle, a self reference, a file outside the folder
        folder = tmp_path / name
        folder.mkdir()
        (folder / "kustomization.yaml").write_text(f"resources:\n  - ../{other}\n  - .\n  - ../outside.yaml\n"
                                                   "patches:\n  - path: missing.yaml\n  - patch: |-\n      x\n")
    (tmp_path / "outside.yaml").write_text((KUSTOMIZE / "base" / "deployment.yaml").read_text())
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "kustomization.yaml").write_text("resources:\n  - ../outside.yaml\n")
    result, _ = lint_paths([str(tmp_path / "c")], LintOptions(select=["VL005", "VL102"]))
    assert not result.internal_error
    assert result.findings == []  # kustomize refuses the file: not read
    assert any("outside the kustomization's folder" in n.message for n in result.notices)
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["ALL"]))
    assert not result.internal_error


def test_patch_named_by_a_kustomization_without_apiversion_is_partial_for_vl809(tmp_path):
    (tmp_path / "kustomization.yaml").write_text("resources:\n  - d.yaml\npatches:\n  - path: gpu.yaml\n")
    (tmp_path / "d.yaml").write_text((KUSTOMIZE / "base" / "deployment.yaml").read_text())
    (tmp_path / "gpu.yaml").write_text((KUSTOMIZE / "overlays" / "prod" / "args-patch.yaml").read_text())
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL809"]))
    assert result.findings == []  # no `spec.selector` required of a patch
    result, _ = lint_paths([str(tmp_path / "gpu.yaml")], LintOptions(select=["VL809"]))
    assert [(f.span.line, f.code) for f in result.findings] == [(6, "VL809")]  # alone it is a whole object


def test_a_resource_given_with_the_run_is_read_and_a_missing_one_is_not_noted(tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml, missing.yaml]\n")
    (tmp_path / "base" / "deploy.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.29.0\n    args: [--swap-space=4]\n")
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text("resources: [../base]\nimages:\n"
                                                             "- {name: vllm/vllm-openai, newTag: v0.10.0}\n")
    result, found = _found([tmp_path], select=("VL005", "VL102"), follow_links=False)
    assert not [n for n in result.notices if "not read" in n.message]  # the base is in the run; missing.yaml is no file
    assert not found  # the overlay's image (0.10.0) still accepts --swap-space: the overlay was applied
    alone, found = _found([tmp_path / "base"], select=("VL005", "VL102"), follow_links=False)
    assert found and not [n for n in alone.notices if "not read" in n.message]
