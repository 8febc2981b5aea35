"""The least time vLLM needs from container start until its API port answers (`data/load-time.yaml`).

Every rate and constant there is chosen to make the estimate shorter than any real start-up: a probe budget
below it is too short on any hardware. The download of weights vLLM fetches itself is not counted: no rate is
known to be faster than every real download (see `download` in the data file). Only VL701 reads it.
"""
from __future__ import annotations

from vllmlint.records import dataclass
from functools import lru_cache
from typing import Any

from vllmlint.capacity.workload import Workload, checkpoint_bytes


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
    load: float
    capture: float

    @property
    def total(self) -> float:
        """What each start needs at the least, restarts included (a download, if any, comes on top)."""
        return self.startup + self.load + self.capture


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
    # Several pods (multi-node tensor or pipeline parallelism) each load only their share, at the same time.
    # One GPU per pod when the request is not known: the most spread.
    gpus = work.gpu_resource[1] if work.gpu_resource is not None and work.gpu_resource[1] > 0 else 1
    pods = max(work.nnodes or 1, -(-work.world_size // gpus))
    return LoadTime(weights, _value("startup_seconds"), weights / pods / _value("load_bytes_per_second"),
                    0.0 if work.enforce_eager else _value("cuda_graph_capture_seconds"))


__all__ = ["LoadTime", "estimate", "assumptions"]
