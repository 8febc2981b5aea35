"""VL114: a Hugging Face repository loaded or downloaded at whatever its main branch holds when the pod starts.

Two cases, both info: a vLLM server (one pod, not a multi-node group: VL811 reports those) that serves a Hub
repository id without `--revision`, and a `snapshot_download(...)` without `revision=` (or `hf download` /
`huggingface-cli download` without `--revision`) in a container's command (`vllmlint.vllm.downloads`). Local
paths, URLs and buckets need no revision; an id that is not a literal, a `--config` file (which may set the
revision) and offline mode (`HF_HUB_OFFLINE=1`: only the local cache is read) are left alone.
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.checks import Context
from vllmlint.finding import Finding
from vllmlint.vllm.downloads import hub_downloads, hub_id
from vllmlint.vllm.groups import multinode_groups
from vllmlint.vllm.invocation import Invocation

_OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def _offline(invocation: Invocation) -> bool:
    container = invocation.container
    env = container.env if container is not None else {}
    return any((env.get(name) or "").strip().lower() in ("1", "true", "yes", "on") for name in _OFFLINE)


def check(ctx: Context) -> Iterator[Finding | None]:
    grouped = {id(m.invocation) for g in multinode_groups(ctx.world) for m in g.members if m.invocation is not None}
    for invocation in ctx.world.invocations:
        token = invocation.model
        if token is None or token.dynamic or invocation.container is None or id(invocation) in grouped:
            continue
        model = token.text.split("=", 1)[1] if token.text.startswith("--model=") else token.text
        if not hub_id(model) or invocation.option("--revision") or invocation.config_file is not None \
                or _offline(invocation):
            continue
        yield ctx.finding(token, f"Pin `{model}` to a commit with `--revision <sha>`. Without it vLLM loads "
                          "whatever the repository's main branch holds when the pod starts: a push to the "
                          "repository changes the weights, tokenizer or chat template a new or rescheduled pod "
                          "serves, and two replicas may serve different snapshots. Record the revision you "
                          "tested (the commit id on the repository's page) and pass it.", about=invocation,
                          value=f"revision:{model}")
    for download in hub_downloads(ctx.world):
        if download.pinned:
            continue
        how = "`revision=\"<sha>\"`" if download.how == "snapshot_download" else "`--revision <sha>`"
        yield ctx.finding(download.anchor, f"Pin `{download.repo_id}` to a commit with {how}. This "
                          f"{download.how} fetches whatever the repository's main branch holds when it runs, so "
                          "the files it leaves for vLLM change with every push and differ from the snapshot you "
                          "tested; a revision also lets every node of a multi-node server load the same weights.",
                          about=download.container, value=f"revision:{download.repo_id}")
