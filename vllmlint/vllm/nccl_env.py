"""Which NCCL-related environment variables something in a vLLM container reads (`data/nccl-env.yaml`,
validated by `schemas/nccl-env.schema.json`): NCCL's own (read from its source per release tag), PyTorch's
TORCH_NCCL_* and the NCCL_* names it renamed, aws-ofi-nccl's OFI_NCCL_* (EFA), the IB SHARP plugin's, GKE's
GPUDirect-TCPX/TCPXO plugins'; the variables vLLM's GPU worker deletes from its environment; the torch each
vLLM release pins; what NCCL's InfiniBand transport drives."""
from __future__ import annotations

from vllmlint.records import dataclass
from functools import lru_cache

from vllmlint.vllm.release import version_key


@dataclass(frozen=True)
class NcclVariable:
    name: str
    reader: str  # nccl, pytorch, aws-ofi-nccl, nccl-rdma-sharp-plugins, gke-gpudirect-tcpx, gke-gpudirect-tcpxo
    source: str
    first: str | None = None  # NCCL tags (nccl rows)
    last: str | None = None
    ib_transport: bool = False  # defined by NCCL's InfiniBand/RoCE transport
    renamed_to: str | None = None
    renamed_in: str | None = None
    deprecated: bool = False
    removed: bool = False


@lru_cache(maxsize=1)
def _table() -> dict:
    from vllmlint.data import knowledge_dir, load_yaml_data

    return load_yaml_data(knowledge_dir() / "nccl-env.yaml") or {}


@lru_cache(maxsize=1)
def known_variables() -> dict[str, NcclVariable]:
    """Every variable of the table by name."""
    result = {}
    for row in _table().get("variables") or ():
        result[row["name"]] = NcclVariable(row["name"], row["reader"], row["source"], row.get("first"), row.get("last"),
                                           row.get("transport") == "ib", row.get("renamed_to"), row.get("renamed_in"),
                                           bool(row.get("deprecated")), bool(row.get("removed")))
    return result


def checked_prefixes() -> tuple[str, ...]:
    """The prefixes whose unknown names are reported (NCCL_, TORCH_NCCL_, OFI_NCCL_)."""
    return tuple(_table().get("checked_prefixes") or ())


def readers() -> dict[str, dict]:
    return dict(_table().get("readers") or {})


@dataclass(frozen=True)
class Removal:
    name: str
    first: str
    last: str
    sources: tuple[str, ...]

    def applies(self, release: str) -> bool:
        return version_key(self.first) <= version_key(release) <= version_key(self.last)

    def source_for(self, release: str) -> str:
        """The source line of this release, else the newest one's."""
        prefix = f"vllm {release} "
        return next((s for s in self.sources if s.startswith(prefix)), self.sources[-1])


def removed_by_vllm(name: str) -> Removal | None:
    for row in _table().get("vllm_removes") or ():
        if row["name"] == name:
            return Removal(row["name"], str(row["first"]), str(row["last"]), tuple(row["sources"]))
    return None


def torch_pin(release: str) -> tuple[str, str] | None:
    """(torch version, source) a vLLM release pins, when the table has that release."""
    for row in _table().get("torch_pins") or ():
        if str(row["vllm"]) == release:
            return str(row["torch"]), str(row["source"])
    return None


def efa_resource() -> str:
    """The extended resource EKS's EFA device plugin advertises (vpc.amazonaws.com/efa)."""
    return str((_table().get("ib_transport") or {}).get("efa_resource") or "vpc.amazonaws.com/efa")


__all__ = ["NcclVariable", "known_variables", "checked_prefixes", "readers", "Removal", "removed_by_vllm", "torch_pin",
           "efa_resource"]


def shipped_nccl(release: str) -> str | None:
    """The NCCL version the torch a vLLM release pins requires (its wheel's nvidia-nccl-cu12/cu13 pin), when the
    table has that release."""
    for row in _table().get("torch_pins") or ():
        if str(row["vllm"]) == release:
            return str(row["nccl"])
    return None


def tag_minor(tag: str) -> tuple[int, int]:
    """(2, 28) for the NCCL tag `v2.28.9-1` or the version `2.28.9`."""
    major, minor = tag.lstrip("v").split("-", 1)[0].split(".")[:2]
    return int(major), int(minor)


@lru_cache(maxsize=1)
def known_names() -> frozenset[str]:
    """The names of `known_variables()`, without building its rows (a run whose containers set no NCCL
    variable needs only this)."""
    return frozenset(row["name"] for row in _table().get("variables") or ())
