"""What vLLM's OpenAI server answers to a probe, per release, from `data/server-endpoints.yaml`.

`served(path, release)` says whether a GET on `path` reaches a route (True), answers 404 (False) or cannot be
known (None: a flag decides, the release is unknown or between two sampled releases that disagree). Only
False is evidence: checks report nothing else. `guarded(path, release)` says whether `--api-key` makes the
path answer 401 without an Authorization header.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from vllmlint.vllm.release import version_key


@lru_cache(maxsize=1)
def table() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "server-endpoints.yaml")
    return data if isinstance(data, dict) else {}


def _key(release: str | None) -> tuple[int, ...] | None:
    if release is None:
        return None
    try:
        return version_key(str(release))
    except ValueError:
        return None


@lru_cache(maxsize=1)  # of the table: the same for every probe
def _sampled_range() -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    keys = [k for k in (_key(r) for r in table().get("sampled_releases") or []) if k is not None]
    return (min(keys), max(keys)) if keys else None


def known_release(release: str | None) -> tuple[int, ...] | None:
    """The release as a sort key when the table can speak for it (within the sampled releases)."""
    key = _key(release)
    bounds = _sampled_range()
    if key is None or bounds is None or not bounds[0][:3] <= key[:3] <= bounds[1][:3]:
        return None
    return key


def normalize(path: str) -> str:
    """A probe's path as the router matches it: without the query and without a trailing slash (FastAPI
    answers `/health/` with a 307 redirect to `/health`, which the kubelet counts as success)."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    if not path.startswith("/"):
        path = "/" + path  # the kubelet's URL always has an absolute path (`health` asks for /health)
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    return path


def _matches(entry: dict[str, Any], path: str) -> bool:
    target = str(entry.get("path") or "")
    kind = entry.get("match")
    if kind == "prefix":
        return path == target or path.startswith(target.rstrip("/") + "/") or path.startswith(target)
    if kind == "pattern":
        want, got = target.strip("/").split("/"), path.strip("/").split("/")
        return len(want) == len(got) and all(w.startswith("{") or w == g for w, g in zip(want, got, strict=True))
    return path == target


@lru_cache(maxsize=4096)  # a function of the table, the path and the release: probes repeat them
def served(path: str, release: str | None) -> bool | None:
    path = normalize(path)
    key = known_release(release)
    if key is None and _key(release) is not None:
        return None  # a release older or newer than every sampled one: not known
    entries = [e for e in table().get("paths") or [] if _matches(e, path)]
    if not entries:
        return False  # no sampled release serves it
    if key is None:
        return None  # some release serves it: which one runs is not known
    answer: bool | None = False
    for entry in entries:
        first, absent, last = _key(entry.get("first")), _key(entry.get("absent_before")), _key(entry.get("last"))
        if first is not None and first <= key and (last is None or key <= last):
            if entry.get("conditional"):
                answer = None
            else:
                return True
        elif first is not None and key < first and (absent is None or absent < key):
            answer = None  # between the newest release without it and the oldest with it: not known
    return answer


def post_only(path: str, release: str | None) -> bool | None:
    """Whether a GET on `path`, which no GET route serves, answers 405 Method Not Allowed (True: a route that
    takes no GET is always registered there), 404 (False: no sampled release has any route there) or either
    (None: the route is conditional, or the release is unknown or between two sampled ones that disagree).
    Starlette answers 405 to a request whose path matches a route but not its methods (`Route.handle`,
    https://github.com/encode/starlette/blob/master/starlette/routing.py). For messages only."""
    path = normalize(path)
    entries = [e for e in table().get("post_only") or [] if _matches(e, path)]
    if not entries:
        return False
    key = known_release(release)
    if key is None:
        return None
    answer: bool | None = False
    for entry in entries:
        first, absent, last = _key(entry.get("first")), _key(entry.get("absent_before")), _key(entry.get("last"))
        if first is not None and first <= key and (last is None or key <= last):
            return None if entry.get("conditional") else True
        if first is not None and key < first and (absent is None or absent < key):
            answer = None  # between the newest release without it and the oldest with it: not known
    return answer


@lru_cache(maxsize=4096)
def guarded(path: str, release: str | None) -> bool | None:
    """Whether `--api-key` protects `path` in `release` (True / False / None: not known)."""
    path = normalize(path)
    rows = table().get("auth") or []
    key = known_release(release)
    if key is None:
        if rows and all(any(path.startswith(p) for p in row.get("prefixes") or []) for row in rows):
            return True  # protected in every sampled release
        if not any(path.startswith(p) for row in rows for p in row.get("prefixes") or []):
            return False
        return None
    for row in rows:
        first, last = _key(row.get("first")), _key(row.get("last"))
        if first is not None and last is not None and first[:3] <= key[:3] <= last[:3]:
            return any(path.startswith(p) for p in row.get("prefixes") or [])
    return None


def always_served(release: str | None) -> list[str]:
    """Exact paths every matching release serves unconditionally (for messages: what to probe instead)."""
    key = known_release(release)
    result = []
    for entry in table().get("paths") or []:
        if entry.get("conditional") or entry.get("match") != "exact":
            continue
        first = _key(entry.get("first"))
        if key is None and entry.get("absent_before") is not None:
            continue
        if key is not None and (first is None or key < first):
            continue
        result.append(str(entry["path"]))
    return result


def checks_model(path: str, release: str | None) -> bool:
    """Whether a POST to `path` answers 404 "The model `x` does not exist." for a name the server does not
    serve (`model_checked`): in `release`, or, when the release is unknown (or outside the sampled ones), in
    every sampled release. False when not known: the path is not listed, or the release may predate it."""
    path = normalize(path)
    entry = next((e for e in table().get("model_checked") or [] if e.get("path") == path), None)
    first = _key(entry.get("first")) if entry else None
    if first is None:
        return False
    key = known_release(release)
    if key is None:
        bounds = _sampled_range()
        return bounds is not None and first[:3] <= bounds[0][:3]
    return first[:3] <= key[:3]


__all__ = ["table", "served", "post_only", "guarded", "normalize", "always_served", "known_release", "checks_model"]


# --- which of a container's probes reach vLLM's own API port -----------------------------------------
def invocations_by_container(world) -> list[list]:
    """The invocations of each Kubernetes container of the run (Compose services and init containers left out),
    grouped by container in the order of the run: a probe belongs to the container, not to one invocation."""
    groups: dict[int, list] = {}
    for invocation in world.invocations:
        container = invocation.container
        if container is None or container.is_compose or container.init:
            continue
        groups.setdefault(id(container), []).append(invocation)
    return list(groups.values())


def server_invocations(invocations: list) -> list | None:
    """The invocations of one container that start vLLM's OpenAI HTTP server, or None when one of them makes
    the port's behaviour unknown to this table: `--headless` (no API server), `--grpc` (gRPC on the port),
    `--uds` (a Unix socket, no TCP port), `--data-parallel-multi-port-external-lb` (several ports), the demo
    server (`vllm.entrypoints.api_server`)."""
    from vllmlint.vllm.invocation import OPENAI_API_SERVER, SERVE

    result = []
    for invocation in invocations:
        if invocation.kind not in (SERVE, OPENAI_API_SERVER):
            return None
        if invocation.option("--headless", "--grpc", "--uds", "--data-parallel-multi-port-external-lb"):
            return None  # (the last: a supervisor on --port and one server per local rank on the ports after it,
            # 0.29.0 vllm/entrypoints/launchers/dp_supervisor.py:110)
        result.append(invocation)
    return result or None


def api_ports(invocations: list) -> set[int] | None:
    """The ports the container's vLLM servers listen on (`Invocation.api_port`: `--port`, default 8000, after
    `$(VAR)` expansion); None when one is unknown.

    `--config FILE` makes vLLM read options from a YAML file, `port` among them, inserted before the command
    line's own options so that the command line wins (FlexibleArgumentParser._pull_args_from_config: 0.6.2
    vllm/utils.py:1126, :1196-1197; 0.10.1.1 vllm/utils/__init__.py:1784-1785, :1909, :1960-1980; 0.33.0
    vllm/utils/argparse_utils.py:371-372, :516, :568-602). The file is not read here: with `--config` and no `--port` on the
    command line the port is unknown."""
    ports = set()
    for invocation in invocations:
        if invocation.option("--config") and not invocation.option("--port"):
            return None
        port = invocation.api_port
        if port is None:
            return None
        ports.add(port)
    return ports


def probe_targets_port(probe, ports: set[int]) -> bool:
    """An httpGet or tcpSocket probe on one of `ports` of the pod itself (no `host`: the pod's IP)."""
    if probe.handler not in ("httpGet", "tcpSocket") or probe.port is None or probe.handler_node is None:
        return False
    if probe.handler_node.get("host") is not None:
        return False
    return probe.port in ports


# --- which prefixes `--api-key` guards, for messages ------------------------------------------------------
def guarded_prefixes(release: str | None) -> tuple[list[str], str]:
    """(the prefixes `--api-key` guards in `release`, the releases that row covers as "0.27.0 to 0.33.0"); for an
    unknown release, the newest sampled row's."""
    rows = [r for r in table().get("auth") or [] if r.get("prefixes")]
    if not rows:
        return [], ""
    key = known_release(release)
    chosen = rows[-1]
    for row in rows:
        first, last = _key(row.get("first")), _key(row.get("last"))
        if key is not None and first is not None and last is not None and first[:3] <= key[:3] <= last[:3]:
            chosen = row
    return [str(p) for p in chosen["prefixes"]], f"{chosen.get('first')} to {chosen.get('last')}"


def api_key_set(container, invocations: list, world) -> bool | None:
    """Whether the server runs with `--api-key` or `VLLM_API_KEY` (True), without (False), or not known (None: a
    value from the environment that may be empty, a variable whose source is not in the run). An empty
    `--api-key ""` sets no key (vLLM keeps only non-empty keys: 0.33.0
    vllm/entrypoints/serve/middleware/register.py:33)."""
    from vllmlint.k8s.pod import CONFIG_MAP, LITERAL, SECRET

    answer: bool | None = False
    for invocation in invocations:
        for option in invocation.option("--api-key"):
            if not option.value_known:
                answer = None
            elif option.value not in ("", None):
                return True
    if container is None:
        return answer
    for var in container.resolved_env(world):
        if var.name != "VLLM_API_KEY":
            continue
        if var.origin == SECRET:
            return True
        if var.origin in (LITERAL, CONFIG_MAP):
            if (var.value or "").strip():
                return True
            continue
        return None
    return answer
