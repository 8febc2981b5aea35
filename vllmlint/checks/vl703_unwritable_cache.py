"""VL703: a directory vLLM is certain to write at start-up is not writable in the container.

What is written where comes from data: data/caches.yaml (the cache directories of vLLM, huggingface_hub,
FlashInfer, Triton, ..., the variables that move them, and when each is written) and the `builds` section of
data/image-entrypoints.yaml (the image's USER and the HOME of each uid in its /etc/passwd). A directory is
judged on what backs it (`Container.backing`): a writable volume (emptyDir, PVC, hostPath, ...) is writable;
a read-only mount or source or a Secret/ConfigMap/projected/downwardAPI/image volume is not (at the hub cache,
such a volume that can hold files is a cache filled beforehand: info, suggesting HF_HUB_OFFLINE=1); the container's own
filesystem is not writable under `readOnlyRootFilesystem: true`, and for a non-root uid only its own home
and /tmp are (a HOME of `/` or `/nonexistent` is not). Anything the run cannot tell (an image not in the
table, an env value from a Secret, a uid the table does not know, an OpenShift-assigned uid) is silent. A Helm
values file is judged on the pod its chart renders (vllm.helm_pod: production-stack's HF_HOME /data or /tmp and
containerSecurityContext, llm-d's container as written).
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.capacity.workload import downloaded_by_name, workloads
from vllmlint.checks import Context
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.objects import Container, World, targets_openshift
from vllmlint.k8s.pod import CONFIG_MAP, LITERAL
from vllmlint.source.yamlmodel import Mapping, Node, Sequence, scalar_str
from vllmlint.vllm.caches import Cache, caches, compile_off_by_default, may_fall_back_to_v0
from vllmlint.vllm.helm_pod import unknown
from vllmlint.vllm.images import ImageBuild, image_builds
from vllmlint.vllm.invocation import Invocation
from vllmlint.vllm.release import version_key

# Volumes the kubelet always mounts read-only (https://kubernetes.io/docs/concepts/storage/volumes/).
_READ_ONLY_VOLUMES = ("secret", "configMap", "projected", "downwardAPI", "image")
# Of those, the ones built from API objects (1 MiB each): they cannot be a pre-populated model cache.
_OBJECT_VOLUMES = ("secret", "configMap", "projected", "downwardAPI")
# Directories any uid may write on a writable root filesystem (sticky, world-writable in the base images).
_SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")
# Options that change whether or how vLLM compiles: when one is given, compilation is not judged.
_COMPILE_OPTIONS = ("--enforce-eager", "--compilation-config", "-O", "--optimization-level", "-cc")
_TRUE = ("1", "true", "yes", "on")
# Options under which part of vLLM's inter-process traffic goes over TCP, or the front-end runs elsewhere.
_TCP_OPTIONS = ("--data-parallel", "--headless", "--api-server-count", "--disable-frontend-multiprocessing")
# Python's tempfile.gettempdir() candidates after the environment's (CPython Lib/tempfile.py).
_TEMP_DIRS = ("/tmp", "/var/tmp", "/usr/tmp")
# What a chart's pod must show for the rule to judge it (vllm.helm_pod).
_CHART_PARTS = ("volumes", "volumeMounts", "env", "securityContext")


def check(ctx: Context) -> Iterator[Finding | None]:
    seen: set[int] = set()
    for work in workloads(ctx.world):
        invocation = work.invocation
        container = work.pod_container  # a manifest's, or the pod a Helm chart renders from its values
        if container is None or container.is_compose or container.init or id(container) in seen \
                or invocation.image is None or any(unknown(container, part) for part in _CHART_PARTS):
            continue
        seen.add(id(container))
        release = invocation.release
        builds = image_builds(invocation.image, release if invocation.release_origin != "--vllm-version" else None)
        if not builds or any(b.user is None for b in builds):
            continue  # an image the table does not know the user of
        if _env_hidden(invocation, container, ctx.world):
            continue
        openshift = targets_openshift(ctx.world, container.pod.owner)
        yield from _check_container(ctx, work, invocation, container, builds, openshift)


def _check_container(ctx: Context, work, invocation: Invocation, container: Container, builds: list[ImageBuild],
                     openshift: bool) -> Iterator[Finding | None]:
    context = container.security_context
    uid = context.run_as_user
    if uid is None:
        if openshift:
            return  # OpenShift's restricted SCC assigns an arbitrary uid (and HOME=/) that the manifest does not show
        image_users = {b.user for b in builds}
        if context.run_as_non_root is True and image_users == {0}:
            image = invocation.image.raw if invocation.image else "the image"
            yield ctx.finding(context.node("runAsNonRoot") or invocation.anchor,
                              f"`runAsNonRoot: true` without `runAsUser`, but `{image}` runs as root (its Dockerfile "
                              "sets no USER): the kubelet refuses to start the container (\"container has runAsNonRoot "
                              "and image will run as root\"). Fix: set `runAsUser` (and `runAsGroup`/`fsGroup`) to a "
                              "non-root uid, and give vLLM writable cache directories.",
                              about=container, value="runAsNonRoot:image-root", severity=_error(ctx))
            return
        if len(image_users) != 1:
            return
        uid = image_users.pop()
    elif uid == 0 and context.run_as_non_root is True:
        yield ctx.finding(context.node("runAsNonRoot") or invocation.anchor,
                          "`runAsNonRoot: true` with `runAsUser: 0`: the kubelet refuses to start the container "
                          "(\"container's runAsUser breaks non-root policy\"). Fix: set `runAsUser` to a non-root uid.",
                          about=container, value="runAsNonRoot:runAsUser-0", severity=_error(ctx))
        return
    if uid is None:
        return
    read_only = context.read_only_root_filesystem is True
    if uid == 0 and not read_only:
        return  # root on a writable root filesystem writes anywhere
    env, homes = _env_and_homes(container, ctx.world, builds, uid)
    if not homes or len(homes) > 1 and not read_only:
        return  # HOME unknown; or it differs between the releases a digest may be and only HOME decides
    home_from_passwd = "HOME" not in env
    if not read_only and (uid == 0 or _home_writable(builds, uid, homes[0])):
        return  # the root filesystem is writable and so is HOME: the defaults work
    certain, jit = _written(work, invocation, builds, env)
    reason_node = context.node("readOnlyRootFilesystem") if read_only else context.node("runAsUser")

    def unwritable(cache: Cache) -> tuple[str, str] | None:
        found = [_unwritable(cache, env, home, container, builds, uid, read_only, home_from_passwd) for home in homes]
        return found[0] if all(found) else None  # not writable whatever HOME is

    problems: list[tuple[Cache, str, str]] = []
    prepopulated: tuple[Cache, str, str] | None = None
    for cache in certain:
        where = unwritable(cache)
        if where is None:
            continue
        if cache.written == "hub-download" and _read_only_store(container, where[0]):
            prepopulated = (cache, *where)  # the usual ReadOnlyMany cache filled beforehand: info at most
            continue
        problems.append((cache, *where))
    if problems:
        yield _finding(ctx, invocation, container, reason_node, problems, read_only, uid, homes[0], ctx.severity)
        return
    if prepopulated is not None:
        yield _prepopulated_finding(ctx, invocation, container, *prepopulated)
        return
    for cache in jit:
        where = unwritable(cache)
        if where is not None:
            yield _finding(ctx, invocation, container, reason_node, [(cache, *where)], read_only, uid, homes[0],
                           min(ctx.severity, Severity.INFO))
            return


def _env_hidden(invocation: Invocation, container: Container, world: World) -> bool:
    """The variables that move the caches may be set where the run does not show them: an `envFrom` source not
    in the run, or the shell script that starts vLLM naming one of them (`export HF_HOME=...`,
    `HOME=/tmp vllm serve ...`)."""
    env_from = container.node.get("envFrom")
    if isinstance(env_from, Sequence):
        for entry in env_from.items:
            if not isinstance(entry, Mapping):
                return True
            for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                ref = entry.get(key)
                if isinstance(ref, Mapping) and world.find(kind, scalar_str(ref.get("name")) or "",
                                                           container.pod.namespace) is None:
                    return True
    if invocation.script is not None:
        text = invocation.script.text
        return any(name in text for name in _moving_variables())
    return False


def _moving_variables() -> set[str]:
    names = {"HOME", "TMPDIR"}
    for cache in caches():
        names.update(location["env"] for location in cache.locations if "env" in location)
    return names


def _env_and_homes(container: Container, world: World, builds: list[ImageBuild],
                   uid: int) -> tuple[dict[str, str], list[str]]:
    """The container's env as far as it is known ("" for a variable whose value the run does not show) and the
    HOMEs vLLM may run with: the env's HOME, else the image's passwd home for the uid in each build it may be
    (several for a digest-only image whose releases disagree); [] when unknown."""
    env: dict[str, str] = {}
    for var in container.resolved_env(world):
        known = var.origin in (LITERAL, CONFIG_MAP) and var.value is not None and "$(" not in var.value
        env[var.name] = var.value if known and var.value is not None else ""
    if "HOME" in env:
        home = env["HOME"]
        return env, [home.rstrip("/") or "/"] if home.startswith("/") else []
    homes: list[str] = []
    for build in builds:
        found = build.home(uid)
        if found is None:
            return env, []  # a uid the table does not know (a system account)
        if found not in homes:
            homes.append(found)
    return env, homes


def _home_writable(builds: list[ImageBuild], uid: int, home: str) -> bool:
    return home in _SHARED_TMP or any(home.startswith(t + "/") for t in _SHARED_TMP) or \
        all(uid in b.home_writable and b.passwd.get(uid) == home for b in builds)


def _error(ctx: Context) -> Severity:
    """Error, unless the user lowered the rule's severity."""
    return Severity.ERROR if ctx.severity >= ctx.rule.severity else ctx.severity


def _written(work, invocation: Invocation, builds: list[ImageBuild],
             env: dict[str, str]) -> tuple[list[Cache], list[Cache]]:
    """(caches certain to be written at start-up for this configuration, caches only some paths write: the
    JIT caches, and the compile cache of a release that may fall back to V0); `env` holds "" for a variable
    whose value the run does not show."""
    cuda = all(b.accelerator == "cuda" for b in builds)
    release = invocation.release
    compiles = cuda and _compiles(work, invocation, env, release)
    # 0.8.0-0.10.x fall back to the V0 engine (no torch.compile) when VLLM_USE_V1 is unset and V1 lacks
    # something in use, part of which the manifest does not show (the GPU's compute capability, the model's
    # architecture): compilation is certain there only with VLLM_USE_V1=1. A digest without a tag may be
    # any release.
    image = invocation.image
    unknown_release = release is None and image is not None and image.digest is not None and image.tag is None
    falls_back = (may_fall_back_to_v0(release) or unknown_release) and env.get("VLLM_USE_V1", "").strip() != "1"
    eager = any(o.name.replace("_", "-") == "--enforce-eager" and o.value is None for o in invocation.options)
    # `--config FILE`: the file may set any option (`download-dir`, `enforce-eager`, `headless`, ...), and the
    # run does not read it: nothing that depends on the options is certain.
    from_file = invocation.config_file is not None
    certain: list[Cache] = []
    jit: list[Cache] = []
    for cache in caches():
        if not cache.applies(release):
            continue
        if from_file and cache.written in ("hub-download", "compile", "tempdir"):
            continue
        if cache.written == "hub-download" and _downloads(work, invocation, env):
            certain.append(cache)
        elif cache.written == "compile" and compiles:
            (jit if falls_back else certain).append(cache)
        elif cache.written == "tempdir" and not any(o.name.replace("_", "-").startswith(_TCP_OPTIONS)
                                                   for o in invocation.options):
            certain.append(cache)
        elif cache.written == "jit" and cuda:
            jit.append(cache)
        elif cache.written == "eager-jit" and cuda and eager:
            jit.append(cache)
    return certain, jit


def _downloads(work, invocation: Invocation, env: dict[str, str]) -> bool:
    """vLLM downloads the model from the Hugging Face hub into the hub cache (and nothing moves part of it)."""
    if not downloaded_by_name(work) or work.model_token is None or work.model_token.dynamic:
        return False
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "VLLM_USE_MODELSCOPE"):
        if name in env and (not env[name] or env[name].strip().lower() in _TRUE):
            return False
    if "TRANSFORMERS_CACHE" in env or invocation.option("--download-dir") or invocation.option("--load-format"):
        return False  # part of the files go elsewhere, or another loader fetches them
    return True


def _compiles(work, invocation: Invocation, env: dict[str, str], release: str | None) -> bool:
    """torch.compile runs at start-up: a release with the V1 engine by default, nothing that turns it off."""
    if release is not None and version_key(release) < version_key("0.8.0"):
        return False
    for option in invocation.options:
        name = option.name.replace("_", "-")
        if name in _COMPILE_OPTIONS or name.startswith(("-O", "--compilation-config", "-cc.", "--cc")):
            return False
    for name in ("TORCH_COMPILE_DISABLE", "VLLM_USE_BREAKABLE_CUDAGRAPH", "VLLM_TORCH_COMPILE_LEVEL"):
        if name in env:
            return False
    if "VLLM_USE_V1" in env and env["VLLM_USE_V1"].strip() != "1":
        return False
    off = compile_off_by_default(release)
    if off is not None:
        model = work.model
        if model is None or model.architecture in off:
            return False  # the architecture decides, and it is unknown or one that defaults to no compilation
    return True


def _writable(path: str, container: Container, builds: list[ImageBuild], uid: int, read_only: bool) -> bool | None:
    """Whether the uid can create `path`: True, False, or None when the run cannot tell."""
    backing = container.backing(path)
    if backing.mount is not None:
        if backing.volume is None:
            return None  # a mount of a volume the pod does not define: another error
        if backing.mount.read_only or backing.volume.kind in _READ_ONLY_VOLUMES or backing.volume.source_read_only:
            return False
        return True  # emptyDir is world-writable; a PVC or hostPath's permissions are not in the manifest
    if read_only:
        return False
    if uid == 0 or any(path == t or path.startswith(t + "/") for t in _SHARED_TMP):
        return True
    for build in builds:
        home = build.passwd.get(uid)
        if home is None or uid not in build.home_writable or not (path == home or path.startswith(home + "/")):
            break
    else:
        return True  # under the uid's own home in every build
    return None


def _unwritable(cache: Cache, env: dict[str, str], home: str, container: Container, builds: list[ImageBuild],
                uid: int, read_only: bool, home_from_passwd: bool) -> tuple[str, str] | None:
    """(directory, the variable that set it) when the cache's directory is certainly not writable."""
    if cache.written == "tempdir" and not env.get("VLLM_RPC_BASE_PATH") and "VLLM_RPC_BASE_PATH" not in env:
        return _no_temp_dir(env, container, builds, uid, read_only)
    located = cache.directory(env, home)
    if located is None:
        return None
    directory, via = located
    if not directory.startswith("/"):
        return None
    writable = _writable(directory, container, builds, uid, read_only)
    if writable is None and via == "HOME" and home_from_passwd and not read_only:
        # The default under the HOME the image's passwd gives a uid that owns no home there (`/` when it has no
        # entry, `/nonexistent` for nobody): creating it needs write access to a directory owned by root. A HOME
        # set in the env may be anything (a group-writable directory): not judged.
        writable = False
    return (directory, via) if writable is False else None


def _no_temp_dir(env: dict[str, str], container: Container, builds: list[ImageBuild], uid: int,
                 read_only: bool) -> tuple[str, str] | None:
    """("/tmp" or the first variable's directory, its variable) when none of tempfile.gettempdir()'s candidates
    can be written: $TMPDIR, $TEMP, $TMP, /tmp, /var/tmp, /usr/tmp, the working directory."""
    if not read_only:
        return None  # /tmp is world-writable on a writable root filesystem
    candidates: list[tuple[str, str]] = []
    for name in ("TMPDIR", "TEMP", "TMP"):
        if name in env:
            if not env[name].startswith("/"):
                return None  # unknown or relative
            candidates.append((env[name].rstrip("/") or "/", name))
    candidates.extend((path, "TMPDIR") for path in _TEMP_DIRS)
    working = container.node.get("workingDir")
    if working is not None:
        text = scalar_str(working)
        if not text or not text.startswith("/") or "$(" in text:
            return None
        candidates.append((text.rstrip("/") or "/", "workingDir"))
    else:
        workdirs = {b.workdir for b in builds}
        if len(workdirs) != 1 or None in workdirs:
            return None  # the image's working directory is not recorded
        candidates.append((str(workdirs.pop()), "workingDir"))
    for path, _ in candidates:
        if _writable(path, container, builds, uid, read_only) is not False:
            return None
    return candidates[0]


def _finding(ctx: Context, invocation: Invocation, container: Container, anchor: Node | None,
             problems: list[tuple[Cache, str, str]], read_only: bool, uid: int, home: str,
             severity: Severity) -> Finding | None:
    cache, directory, via = problems[0]
    backing = container.backing(directory)
    if backing.mount is not None and backing.volume is not None:
        why = _read_only_volume_words(backing)
    elif read_only:
        why = "`readOnlyRootFilesystem: true` and no writable volume is mounted there"
    else:
        why = f"the container runs as uid {uid}, whose HOME is `{home}`, which that uid cannot write, and no volume is mounted there"
    when = {"hub-download": f"vLLM downloads `{invocation.model_name or 'the model'}` into it at start-up",
            "compile": "vLLM creates its torch.compile cache (torch_compile_cache/) there at start-up" + (
                "" if severity >= Severity.WARNING else
                " when it runs the V1 engine (this release falls back to V0, which does not compile, when "
                "VLLM_USE_V1 is unset and V1 lacks something in use: a GPU below compute capability 8.0, "
                "some options and models)"),
            "tempdir": ("vLLM binds its engine's ZeroMQ IPC sockets there at start-up (in the first writable of "
                        "$TMPDIR, /tmp, /var/tmp, /usr/tmp and the working directory: here none is)"),
            "jit": "kernels are JIT-compiled there on some paths (FlashInfer attention, sampling, MoE)",
            "eager-jit": "Triton kernels are compiled there when torch.compile is off"}.get(cache.written, "")
    if cache.written == "tempdir" and via in ("TMPDIR", "workingDir"):
        moved = "Python's temporary directory, moved by TMPDIR or VLLM_RPC_BASE_PATH"
    elif via in ("HOME", "TMPDIR"):
        moved = f"the default under {via}, moved by {cache.moved_by}"
    else:
        moved = f"set by {via}"
    others = ""
    if len(problems) > 1:
        others = " Also not writable: " + ", ".join(f"`{d}` ({c.name}, {c.moved_by})" for c, d, _ in problems[1:]) + "."
    if severity < Severity.WARNING and cache.written == "compile":
        effect = "then fails with \"Read-only file system\" or \"Permission denied\", and the container restarts"
    elif severity < Severity.WARNING:
        effect = "vLLM fails when it first needs such a kernel"
    elif cache.written == "tempdir" and via in ("TMPDIR", "workingDir"):
        effect = "fails with \"No usable temporary directory found\", and the container restarts"
    else:
        effect = "fails with \"Read-only file system\" or \"Permission denied\", and the container restarts"
    message = (f"`{directory}` ({cache.name}) is not writable: {why}; {when} and "
               f"{effect}. It is {moved}.{others} Fix: mount an emptyDir or a PersistentVolumeClaim at a directory "
               "and point "
               f"{cache.moved_by} at it (or mount the volume at `{directory}`).")
    return ctx.finding(anchor or invocation.anchor, message, about=container, value=f"{cache.id}:{directory}",
                       severity=severity)


def _read_only_store(container: Container, path: str) -> bool:
    """`path` is on a read-only volume that may hold files put there beforehand: a `readOnly` mount, a
    `readOnly` PVC/CSI/NFS source or an image volume (not a Secret, ConfigMap, projected or downwardAPI
    volume)."""
    backing = container.backing(path)
    mount, volume = backing.mount, backing.volume
    if mount is None or volume is None or volume.kind in _OBJECT_VOLUMES:
        return False
    return mount.read_only or volume.source_read_only or volume.kind == "image"


def _read_only_volume_words(backing) -> str:
    """Why the volume holding a directory is read-only, in a few words."""
    mount, volume = backing.mount, backing.volume
    if mount.read_only:
        how = "its volumeMount sets `readOnly: true`"
    elif volume.source_read_only:
        how = f"its {volume.kind} source sets `readOnly: true`"
    else:
        how = f"the kubelet mounts {volume.kind} volumes read-only"
    return f"it is on the volume `{volume.name}` mounted at `{mount.mount_path}`, which is read-only ({how})"


def _prepopulated_finding(ctx: Context, invocation: Invocation, container: Container, cache: Cache,
                          directory: str, via: str) -> Finding | None:
    """The hub cache is a read-only volume: a cache filled beforehand (ReadOnlyMany), which works while it
    holds the repository's current commit. Online, huggingface_hub asks the Hub for that commit and reads the
    cached files without writing (a failed write of refs/ is ignored), but a newer commit, or a file missing
    from the cache, is downloaded into it, which fails (huggingface_hub 0.36.0 file_download.py lines
    1064-1066, 1109-1111 and 1124-1130; _snapshot_download.py lines 293-300)."""
    backing = container.backing(directory)
    model = invocation.model_name or "the model"
    moved = f"the default under {via}, moved by {cache.moved_by}" if via == "HOME" else f"set by {via}"
    message = (f"`{directory}` ({cache.name}, {moved}) is read-only: {_read_only_volume_words(backing)}, "
               f"so it is taken as a cache filled beforehand. vLLM reads `{model}` from it while it holds the "
               "repository's current commit, but with HF_HUB_OFFLINE unset huggingface_hub still asks the Hub, and "
               "when the repository has a newer commit (or a file is missing) it downloads into the cache and "
               "fails with \"Read-only file system\". Fix: set `HF_HUB_OFFLINE=1` so that only the cache is read "
               "(or pin `--revision` to the cached commit).")
    anchor = backing.mount.path_node if backing.mount is not None else None
    return ctx.finding(anchor or invocation.anchor, message, about=container,
                       value=f"read-only-hub:{directory}", severity=min(ctx.severity, Severity.INFO))
