"""The Run:ai Model Streamer as vLLM runs it (`--load-format runai_streamer`): the variables it reads and how it
reaches an S3-compatible store, from sourced data (`data/model-streamer.yaml`, validated by
`schemas/model-streamer.schema.json`)."""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vllmlint.vllm.invocation import Invocation


@lru_cache(maxsize=1)
def streamer_data() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "model-streamer.yaml")
    return data if isinstance(data, dict) else {}


def load_format(invocation: Invocation) -> str | None:
    """`--load-format` as the invocation gives it (the last one), or None when absent or not known here."""
    options = invocation.option("--load-format")
    if not options:
        return None
    last = options[-1]
    return last.value.strip() if last.value_known and last.value else None


def uses_streamer(invocation: Invocation) -> bool:
    return load_format(invocation) in streamer_data().get("load_formats", ())


def streamer_variables() -> list[str]:
    """The RUNAI_STREAMER_* names the streamer reads, sorted."""
    return sorted(row["name"] for row in streamer_data().get("variables", []))


def aws_variables() -> tuple[list[str], tuple[str, ...]]:
    """(the AWS_* names boto3's botocore reads, sorted; the prefixes of names it builds per service)."""
    aws = streamer_data().get("aws_variables") or {}
    return sorted(aws.get("names", [])), tuple(aws.get("prefixes", []))


__all__ = ["streamer_data", "load_format", "uses_streamer", "streamer_variables", "aws_variables"]
