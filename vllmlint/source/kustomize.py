"""Kustomize folders, read as `kustomize build` would for what the rules need, without running anything.

A `kustomization.yaml` (or `.yml`, or `Kustomization`) of the run names its `resources` (local files and
folders: read into the run when they are not in it already; remote URLs are skipped with a note), an `images`
list (`newName`/`newTag`/`digest` replace the image of matching containers, so the release vLLM is checked
against changes), and patches: strategic-merge patch files (`patchesStrategicMerge`, `patches: - path:`) whose
containers are merged into the target's by name (`args`, `command` and `image` replaced, `env` merged by name),
and JSON 6902 patches (`patchesJson6902`, `patches: - path: target:`) on containers' `args`. The merged values
keep their own positions, so a removed flag a patch adds is reported in the patch file.

Patch files are partial objects: their pod templates are removed from the model, so no rule reads them as whole
workloads. A resource two top-level Kustomizations of the run both build (a base of two overlays) keeps its own
values: only transformations every build that contains it applies are applied (the model holds one copy).
Kustomize semantics: https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/ (resources, images,
patches, patchesStrategicMerge, patchesJson6902); strategic merge keys of containers and env: `name`
(k8s.io/api/core/v1/types.go, `patchMergeKey:"name"`); `args`/`command` are atomic lists (replaced).
"""
from __future__ import annotations

import os
from vllmlint.records import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from vllmlint.finding import Notice
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, SourceFile, parse_documents, scalar_str
from vllmlint.source.files import KUSTOMIZATION_NAMES, is_kustomization
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.engine import Linter
    from vllmlint.k8s.objects import Container, K8sObject

NAMES = KUSTOMIZATION_NAMES
_REMOTE = lazy_compile(r"^(?:[a-z][a-z0-9+.-]*://|git@|github\.com/|gitlab\.com/|bitbucket\.org/)|\?ref=|\.git(?://|$)")
_ARGS_PATH = lazy_compile(r"^(?P<container>/.+)/args(?:/(?P<index>-|\d+))?$")


@dataclass(eq=False)
class Kustomization:
    source: SourceFile
    root: Mapping
    folder: str  # absolute folder on disk ("" when unknown)
    files: list[str] = field(default_factory=list)  # resource files (absolute)
    children: list[Kustomization] = field(default_factory=list)
    roots: set[int] = field(default_factory=set)  # ids of the top-level Kustomizations that build this one


def _entries(root: Mapping, *keys: str) -> list[Node]:
    found: list[Node] = []
    for key in keys:
        items = root.get(key)
        if isinstance(items, Sequence):
            found.extend(items.items)
    return found


def _note(linter: Linter, code: str, message: str, node: Node, summary: tuple[str, str]) -> None:
    linter.result.notices.append(Notice(code, message, node.source.display_path, node.line, "note", summary))


def apply_kustomizations(linter: Linter) -> None:
    """Apply the run's Kustomizations to the world (called by the engine before invocations are found), from the
    files of the run only."""
    real = linter.real_paths
    if not any(is_kustomization(shown) for shown in linter.result.sources):
        return
    by_folder: dict[str, Kustomization] = {}
    loaded: list[Kustomization] = []

    def load(shown: str) -> Kustomization | None:
        source = linter.result.sources.get(shown)
        if source is None:
            return None
        documents, error = parse_documents(source)
        root = documents[0].root if documents and error is None else None
        if not isinstance(root, Mapping):
            return None
        folder = os.path.dirname(real[shown]) if shown in real else ""
        kustomization = Kustomization(source, root, folder)
        if folder:
            by_folder[folder] = kustomization
        loaded.append(kustomization)
        return kustomization

    for shown in list(linter.result.sources):
        if is_kustomization(shown) and shown in real and os.path.dirname(real[shown]) not in by_folder:
            load(shown)
    shown_of = {path: shown for shown, path in real.items()}

    resolved: set[int] = set()
    folders: set[str] = set()  # every folder that holds a file of the run (`_folders_of`, made when first asked)

    def resolve(kustomization: Kustomization, depth: int) -> None:
        if id(kustomization) in resolved:
            return
        resolved.add(id(kustomization))
        for entry in _entries(kustomization.root, "resources", "bases", "components"):
            value = scalar_str(entry)
            if not value:
                continue
            if _REMOTE.search(value):
                _note(linter, "VL005", f"remote Kustomize resource `{value}` not read: vllmlint reads local files "
                      "only (lint the output of `kustomize build` to check it)", entry,
                      ("remote Kustomize resource not read", "remote Kustomize resources not read"))
                continue
            if not kustomization.folder:
                continue
            path = os.path.normpath(os.path.join(kustomization.folder, value))
            # Only files of the run are read (the runner adds a resource the run was not given with --follow-links,
            # as it follows a symbolic link: `files_to_add`); the engine never reads another file from disk.
            child_path = _kustomization_in(path, shown_of)
            if child_path is not None:
                child = by_folder.get(path)
                if child is None and depth < 20:
                    child = load(shown_of[child_path])
                    if child is not None:
                        resolve(child, depth + 1)
                if child is not None and child is not kustomization:
                    kustomization.children.append(child)
            elif (path in shown_of or os.path.isfile(path)) and not _inside(path, kustomization.folder):
                _note(linter, "VL005", f"Kustomize resource `{value}` not read: it is outside the "
                      "kustomization's folder, and `kustomize build` refuses such files (load restrictions)",
                      entry, ("Kustomize resource outside its folder not read",
                              "Kustomize resources outside their folders not read"))
            elif path in shown_of:
                kustomization.files.append(path)
            elif os.path.exists(path) and path not in _folders_of(shown_of, folders):
                _note(linter, "VL005", f"Kustomize resource `{value}` not read: it is not among the linted files "
                      "(lint a folder that holds it too, or pass --follow-links), so what this kustomization "
                      "builds from it is not checked", entry,
                      ("Kustomize resource outside the linted files not read",
                       "Kustomize resources outside the linted files not read"))

    for kustomization in list(loaded):
        resolve(kustomization, 0)
    children = {id(child) for k in loaded for child in k.children}
    tops = [k for k in loaded if id(k) not in children]

    def mark(kustomization: Kustomization, top: int, seen: set[int]) -> None:
        if id(kustomization) in seen:
            return
        seen.add(id(kustomization))
        kustomization.roots.add(top)
        for child in kustomization.children:
            mark(child, top, seen)

    for top in tops:
        mark(top, id(top), set())
    patches = {path for k in loaded for path in _patch_paths(k)}
    _drop_patch_templates(linter, {shown_of[p] for p in patches if p in shown_of})
    objects_of = _objects_by_file(linter, shown_of)
    done: set[int] = set()
    for top in tops:
        _apply(linter, top, objects_of, shown_of, done, set())


def _folders_of(shown_of: dict[str, str], folders: set[str]) -> set[str]:
    """Every folder (at any depth) that holds a file of the run, into `folders` the first time."""
    if not folders:
        for path in shown_of:
            parent = os.path.dirname(path)
            while parent not in folders and parent != os.path.dirname(parent):
                folders.add(parent)
                parent = os.path.dirname(parent)
        folders.add("")
    return folders


def _kustomization_in(folder: str, shown_of: dict[str, str]) -> str | None:
    """The path of the kustomization file of `folder` that is a file of the run, if any."""
    return next((os.path.join(folder, n) for n in NAMES if os.path.join(folder, n) in shown_of), None)


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def files_to_add(sources: dict[str, SourceFile], real: dict[str, str]) -> list[Path]:
    """The local files the Kustomizations among `sources` (display path -> source; `real`: display path -> path
    on disk) build from that the run does not hold: a resource folder's kustomization file, a resource file inside
    its kustomization's folder (as `kustomize build` loads them). The runner adds them when it follows links
    (--follow-links), until none is new; nothing is read here but the sources given."""
    have = set(real.values())
    found: list[Path] = []
    for shown, source in sources.items():
        if not is_kustomization(shown) or shown not in real:
            continue
        documents, error = parse_documents(source)
        root = documents[0].root if documents and error is None else None
        if not isinstance(root, Mapping):
            continue
        folder = os.path.dirname(real[shown])
        for entry in _entries(root, "resources", "bases", "components"):
            value = scalar_str(entry)
            if not value or _REMOTE.search(value):
                continue
            path = os.path.normpath(os.path.join(folder, value))
            if os.path.isdir(path):
                name = next((n for n in NAMES if os.path.isfile(os.path.join(path, n))), None)
                candidates = [os.path.join(path, name)] if name is not None else []
            else:
                candidates = [path] if _inside(path, folder) and os.path.isfile(path) else []
            for candidate in candidates:
                if candidate not in have:
                    have.add(candidate)
                    found.append(Path(candidate))
        for patch in _patch_paths_of(root, folder):
            if patch not in have and _inside(patch, folder) and os.path.isfile(patch):
                have.add(patch)
                found.append(Path(patch))
    return found


def _patch_paths(kustomization: Kustomization) -> list[str]:
    if not kustomization.folder:
        return []
    return _patch_paths_of(kustomization.root, kustomization.folder)


def _patch_paths_of(root: Mapping, folder: str) -> list[str]:
    found = []
    for entry in _entries(root, "patchesStrategicMerge", "patches", "patchesJson6902"):
        value = scalar_str(entry) if isinstance(entry, Scalar) else \
            scalar_str(entry.get("path")) if isinstance(entry, Mapping) else None
        if value and "\n" not in value:
            found.append(os.path.normpath(os.path.join(folder, value)))
    return found


def _drop_patch_templates(linter: Linter, shown: set[str]) -> None:
    """Patch files hold partial objects: none of their pod templates is a workload."""
    if not shown:
        return
    world = linter.world
    world.kustomize_patches.update(shown)
    world.templates = [t for t in world.templates if t.owner.source.display_path not in shown]
    world._deferred = [o for o in world._deferred if o.source.display_path not in shown]


def _objects_by_file(linter: Linter, shown_of: dict[str, str]) -> dict[str, list[K8sObject]]:
    by_shown: dict[str, list[K8sObject]] = {}
    for obj in linter.world.objects:
        by_shown.setdefault(obj.source.display_path, []).append(obj)
    return {path: by_shown.get(shown, []) for path, shown in shown_of.items()}


def _members(kustomization: Kustomization, objects_of: dict[str, list[K8sObject]],
             seen: set[int]) -> list[tuple[K8sObject, Kustomization]]:
    """Every object the Kustomization builds, with the innermost Kustomization that names its file."""
    if id(kustomization) in seen:
        return []
    seen.add(id(kustomization))
    found: list[tuple[K8sObject, Kustomization]] = []
    for child in kustomization.children:
        found.extend(_members(child, objects_of, seen))
    for path in kustomization.files:
        found.extend((obj, kustomization) for obj in objects_of.get(path, []))
    return found


def _apply(linter: Linter, kustomization: Kustomization, objects_of, shown_of, done: set[int],
           stack: set[int]) -> None:
    """Children first (a base's patches before its overlay's images), each Kustomization once."""
    if id(kustomization) in done or id(kustomization) in stack:
        return
    stack.add(id(kustomization))
    for child in kustomization.children:
        _apply(linter, child, objects_of, shown_of, done, stack)
    done.add(id(kustomization))
    members = [obj for obj, owner in _members(kustomization, objects_of, set())
               if owner.roots <= kustomization.roots]
    if not members:
        return
    _apply_patches(linter, kustomization, members, shown_of)
    _apply_images(linter, kustomization, members)


# --- images -------------------------------------------------------------------------------------------
def _split_image(image: str) -> tuple[str, str]:
    """(name, tag-or-digest suffix with its `:`/`@`)."""
    if "@" in image:
        at = image.index("@")
        return image[:at], image[at:]
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        return image[:colon], image[colon:]
    return image, ""


def _apply_images(linter: Linter, kustomization: Kustomization, members: list[K8sObject]) -> None:
    from vllmlint.source.compose import derived_scalar

    entries = [e for e in _entries(kustomization.root, "images") if isinstance(e, Mapping)]
    if not entries:
        return
    for obj in members:
        for container in _containers(linter, obj):
            image = container.image
            if image is None or not isinstance(image.value, str):
                continue
            name, suffix = _split_image(image.value)
            for entry in entries:
                if scalar_str(entry.get("name")) != name:
                    continue
                new_name = scalar_str(entry.get("newName")) or name
                digest, tag = scalar_str(entry.get("digest")), scalar_str(entry.get("newTag"))
                new_suffix = f"@{digest}" if digest else f":{tag}" if tag else suffix
                text = new_name + new_suffix
                where = entry.get("digest") if digest else entry.get("newTag") if tag else entry.get("newName")
                if where is None or text == image.value:
                    break
                scalar = derived_scalar(image, text,
                                        [where.start] * (len(text) + 1), where.start, where.end)
                scalar.source = where.source
                _replace(container.node, "image", scalar)
                owner = f"{obj.kind} {obj.name}" if obj.name else obj.kind
                _note(linter, "VL006", f"{owner}, container {container.name or '?'}: image {text} set by the "
                      f"Kustomization's `images` (the resource says {image.value}); its release is checked", where,
                      ("workload image set by a Kustomization", "workload images set by Kustomizations"))
                break


def _containers(linter: Linter, obj: K8sObject) -> list[Container]:
    return [c for t in linter.world.templates_of(obj) for c in t.containers]


def _replace(node: Mapping, key: str, value: Node, key_node: Node | None = None) -> None:
    for i, (k, _v) in enumerate(node.items):
        if isinstance(k, Scalar) and k.text == key:
            node.items[i] = (k, value)
            break
    else:
        node.items.append((key_node or Scalar(value.start, value.start, value.source, key, key, None), value))
    node._index = None


# --- patches ------------------------------------------------------------------------------------------
def _apply_patches(linter: Linter, kustomization: Kustomization, members: list[K8sObject], shown_of) -> None:
    for entry in _entries(kustomization.root, "patchesStrategicMerge", "patches", "patchesJson6902"):
        value = scalar_str(entry) if isinstance(entry, Scalar) else \
            scalar_str(entry.get("path")) if isinstance(entry, Mapping) else None
        if not value or "\n" in value or not kustomization.folder:
            continue
        shown = shown_of.get(os.path.normpath(os.path.join(kustomization.folder, value)))
        source = linter.result.sources.get(shown) if shown else None
        if source is None:
            continue
        documents, error = parse_documents(source)
        if error is not None:
            continue
        target = entry.get("target") if isinstance(entry, Mapping) else None
        for document in documents:
            root = document.root
            if isinstance(root, Sequence):
                if isinstance(target, Mapping):
                    for obj in _targets(members, target):
                        _json6902(obj, root)
            elif isinstance(root, Mapping):
                _strategic(linter, members, root, target if isinstance(target, Mapping) else None)


def _targets(members: list[K8sObject], target: Mapping) -> list[K8sObject]:
    kind, name = scalar_str(target.get("kind")), scalar_str(target.get("name"))
    if not name or any(c in name for c in "*[]()|^$+?\\") or target.get("labelSelector") is not None:
        return []  # a regular expression or a selector: not guessed
    return [o for o in members if o.name == name and (not kind or o.kind == kind)]


def _strategic(linter: Linter, members: list[K8sObject], patch: Mapping, target: Mapping | None) -> None:
    from vllmlint.k8s.objects import objects_in
    from vllmlint.source.yamlmodel import Document

    patch_objects = list(objects_in(Document(patch.source, patch, 0)))
    if len(patch_objects) != 1 or "$patch" in patch:  # `$patch: delete`/`replace` of the whole object
        return
    patch_obj = patch_objects[0]
    if target is not None:
        found = _targets(members, target)
    else:
        found = [o for o in members if o.kind == patch_obj.kind and o.name == patch_obj.name]
    from vllmlint.k8s.objects import pod_templates

    patch_templates = [t for t in pod_templates(patch_obj) if t is not None]
    for obj in found:
        targets = linter.world.templates_of(obj)
        for patch_template in patch_templates:
            template = next((t for t in targets if t.role == patch_template.role), None)
            if template is None:
                continue
            for patch_container in patch_template.containers:
                if not patch_container.name or "$patch" in patch_container.node:
                    continue
                container = next((c for c in template.containers if c.name == patch_container.name
                                  and c.init == patch_container.init), None)
                if container is not None:
                    _merge_container(container.node, patch_container.node)


def _merge_container(node: Mapping, patch: Mapping) -> None:
    for key in ("image", "command", "args"):
        value = patch.get(key)
        if value is not None:
            _replace(node, key, value, patch.key_node(key))
    env = patch.get("env")
    if isinstance(env, Sequence):
        current = node.get("env")
        merged = Sequence(env.start, env.end, env.source)
        patched = {scalar_str(i.get("name")): i for i in env.items if isinstance(i, Mapping)}
        if any("$patch" in i for i in patched.values()):
            return
        used: set[str | None] = set()
        if isinstance(current, Sequence):
            for item in current.items:
                name = scalar_str(item.get("name")) if isinstance(item, Mapping) else None
                if name in patched:
                    used.add(name)
                    merged.items.append(patched[name])
                else:
                    merged.items.append(item)
        merged.items.extend(i for i in env.items if isinstance(i, Mapping)
                            and scalar_str(i.get("name")) not in used)
        _replace(node, "env", merged, patch.key_node("env"))


def _pointer(root: Node, path: str) -> Node | None:
    node: Node | None = root
    for part in path.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, Sequence) and part.isdigit() and int(part) < len(node.items):
            node = node.items[int(part)]
        else:
            return None
    return node


def _json6902(obj: K8sObject, operations: Sequence) -> None:
    """`add`/`replace`/`remove` on a container's `args` (the whole list or one item)."""
    for op in operations.items:
        if not isinstance(op, Mapping):
            continue
        kind, path = scalar_str(op.get("op")), scalar_str(op.get("path"))
        match = _ARGS_PATH.match(path or "")
        if kind not in ("add", "replace", "remove") or match is None:
            continue
        container = _pointer(obj.node, match["container"])
        if not isinstance(container, Mapping) or "name" not in container:
            continue
        value, index = op.get("value"), match["index"]
        if index is None:
            if kind != "remove" and isinstance(value, Sequence):
                _replace(container, "args", value, op.key_node("value"))
            continue
        args = container.get("args")
        if not isinstance(args, Sequence):
            continue
        items = list(args.items)
        if kind == "add" and isinstance(value, Scalar):
            position = len(items) if index == "-" else int(index)
            if position > len(items):
                continue
            items.insert(position, value)
        elif index != "-" and int(index) < len(items):
            if kind == "replace" and isinstance(value, Scalar):
                items[int(index)] = value
            elif kind == "remove":
                del items[int(index)]
            else:
                continue
        else:
            continue
        merged = Sequence(args.start, args.end, args.source)
        merged.items = items
        _replace(container, "args", merged)
