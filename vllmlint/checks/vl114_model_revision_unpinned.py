"""VL114: a Hugging Face repository loaded or downloaded at whatever its main branch holds when the pod starts.

Two cases, both info: a vLLM server (one pod, not a multi-node group: VL811 reports those; or a command in a
shell script or a Markdown shell block) that serves a Hub
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
from vllmlint.vllm.invocation import VIA_SCRIPT, Invocation, script_assignments

_OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_ON = ("1", "true", "yes", "on")


def _offline(invocation: Invocation, offline_files: set[str]) -> bool:
    container = invocation.container
    if container is None:  # a script: an offline variable it sets anywhere (prefix, export, line of its own)
        token = invocation.model
        return token is not None and token.source is not None and token.source.display_path in offline_files
    env = container.env
    return any((env.get(name) or "").strip().lower() in _ON for name in _OFFLINE)


def check(ctx: Context) -> Iterator[Finding | None]:
    grouped = {id(m.invocation) for g in multinode_groups(ctx.world) for m in g.members if m.invocation is not None}
    offline_files = {a.token.source.display_path for a in script_assignments(ctx.world, _OFFLINE)
                     if a.container is None and a.name in _OFFLINE and a.value.strip().strip("'\"").lower() in _ON
                     and a.token.source is not None}
    for invocation in ctx.world.invocations:
        token = invocation.model
        if token is None or token.dynamic or id(invocation) in grouped:
            continue
        if invocation.container is None and invocation.via != VIA_SCRIPT:
            continue  # an operator's resource or a Dockerfile: not read for this
        model = token.text.split("=", 1)[1] if token.text.startswith("--model=") else token.text
        if not hub_id(model) or invocation.option("--revision") or invocation.config_file is not None \
                or _offline(invocation, offline_files):
            continue
        starts, later = (("the pod starts", "a new or rescheduled pod serves") if invocation.container is not None
                         else ("the command runs", "the next run serves"))
        yield ctx.finding(token, f"Pin `{model}` to a commit with `--revision <sha>`. Without it vLLM loads "
                          f"whatever the repository's main branch holds when {starts}: a push to the "
                          f"repository changes the weights, tokenizer or chat template {later}, "
                          "and two servers may serve different snapshots. Record the revision you "
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
