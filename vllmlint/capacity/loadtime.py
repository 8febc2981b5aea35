"""The least time vLLM needs from container start until its API port answers (`data/load-time.yaml`).

Every rate and constant there is chosen to make the estimate shorter than any real start-up: a probe budget
below it is too short on any hardware. Only VL701 reads it.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from vllmlint.capacity.workload import Workload, checkpoint_bytes, download_dir, downloaded_by_name

EVERY_START, FIRST_START, NOT_COUNTED = "every_start", "first_start", "not_counted"


@lru_cache(maxsize=1)
def assumptions() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "load-time.yaml")
    return data if isinstance(data, dict) else {}


def _value(name: str) -> float:
    return float(assumptions()[name]["value"])


@dataclass(frozen=True)
class LoadTime:
    weights: int  # bytes of the checkpoint
    startup: float  # seconds
    download: float  # seconds, 0 when not downloaded (or not counted)
    load: float
    capture: float
    download_when: str  # EVERY_START, FIRST_START or NOT_COUNTED
    cache: str  # where the hub cache is, for messages ("" when nothing is downloaded)

    @property
    def every_start(self) -> float:
        """What each start needs, restarts included."""
        return self.startup + self.load + self.capture + (self.download if self.download_when == EVERY_START else 0)

    @property
    def first_start(self) -> float:
        return self.startup + self.load + self.capture + (self.download if self.download_when != NOT_COUNTED else 0)


def _download(work: Workload) -> tuple[str, str]:
    """(when the download is paid, where the hub cache is) for a model vLLM downloads itself."""
    container = work.container
    if container is None or not downloaded_by_name(work):
        return NOT_COUNTED, ""
    env = container.env
    if any((env.get(name) or "").strip() == "1" for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        return NOT_COUNTED, ""
    if any(c.init for c in container.pod.containers):
        return NOT_COUNTED, ""  # an init container may fill the cache first
    path, why = download_dir(work)
    if path is None:
        return NOT_COUNTED, ""
    rules = assumptions().get("download") or {}
    backing = container.backing(path)
    if backing.mount is None:
        return str(rules.get("writable_layer", NOT_COUNTED)), f"{path} ({why}) on the container's writable layer"
    volume = backing.volume
    if volume is not None and volume.kind == "emptyDir":
        return str(rules.get("emptyDir", NOT_COUNTED)), f"{path} ({why}) on the emptyDir `{volume.name}`"
    return str(rules.get("other_volume", NOT_COUNTED)), ""


def estimate(work: Workload) -> LoadTime | None:
    """The lower bound for one vLLM invocation; None when the model is not in the catalog or a setting makes
    the load speed unknown (`--load-format` other than the default loaders)."""
    model = work.model
    if model is None or not assumptions():
        return None
    load_format = work.options.get("--load-format")
    if load_format is not None:
        if not load_format.value_known or load_format.value not in (assumptions().get("load_formats") or []):
            return None
    try:
        weights = checkpoint_bytes(model, work.match.quantization if work.match else None)
    except ValueError:
        return None
    when, cache = _download(work)
    # Several pods (multi-node tensor or pipeline parallelism) each load only their share, at the same time;
    # each still downloads the whole repository. One GPU per pod when the request is not known: the most spread.
    gpus = work.gpu_resource[1] if work.gpu_resource is not None and work.gpu_resource[1] > 0 else 1
    pods = max(work.nnodes or 1, -(-work.world_size // gpus))
    return LoadTime(weights, _value("startup_seconds"), weights / _value("download_bytes_per_second"),
                    weights / pods / _value("load_bytes_per_second"),
                    0.0 if work.enforce_eager else _value("cuda_graph_capture_seconds"), when, cache)


__all__ = ["LoadTime", "estimate", "assumptions", "EVERY_START", "FIRST_START", "NOT_COUNTED"]
