"""VL723: `--load-format runai_streamer` with the Run:ai Model Streamer's settings misspelt, or an S3-compatible
store reached with the AWS SDK's virtual-hosted addressing.

The streamer and boto3 read a fixed set of names (`data/model-streamer.yaml`, sourced from the streamer's code and
botocore): a `RUNAI_*` or `AWS_*` name that is none of them but close to one (the near-miss test of VL109,
`vllmlint.checks.near_miss`) is a typo nothing reads. The `AWS_*` names are judged only when the model is read
from `s3://`. The streamer's CPU buffer is counted by memory-limit-too-small (VL705).
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.checks import Context
from vllmlint.checks.near_miss import near_miss
from vllmlint.finding import Finding
from vllmlint.k8s.pod import CONFIG_MAP, LITERAL, env_from_refs
from vllmlint.vllm.invocation_env import CONTAINER, OPERATOR, SeenVar, invocation_env
from vllmlint.vllm.streamer import aws_variables, load_format, streamer_data, streamer_variables


def check(ctx: Context) -> Iterator[Finding | None]:
    formats = set(streamer_data().get("load_formats", ()))
    scopes: dict[int, list[SeenVar]] = {}  # what holds one environment -> the variables it sets
    for seen in invocation_env(ctx.world, ("RUNAI_", "AWS_")):
        scopes.setdefault(id(seen.scope), []).append(seen)
    for env in scopes.values():
        invocation = next((i for i in env[0].invocations if load_format(i) in formats), None)
        if invocation is None:
            continue
        fmt = load_format(invocation) or ""
        model = invocation.model_name or ""
        s3 = model.startswith("s3://") and not (invocation.model is not None and invocation.model.dynamic)
        yield from _near_misses(ctx, env, s3, fmt)
        if s3:
            yield from _endpoint(ctx, env)


def _near_misses(ctx: Context, env: list[SeenVar], s3: bool, fmt: str) -> Iterator[Finding | None]:
    streamer = streamer_variables()
    aws, prefixes = aws_variables()
    known = set(streamer) | set(aws)
    present = {var.name for var in env}
    for var in env:
        name = var.name
        if name in known:
            continue
        if name.startswith("RUNAI_"):
            candidates, whose = streamer, "the Run:ai Model Streamer"
        elif name.startswith("AWS_") and s3 and not name.startswith(prefixes):
            candidates, whose = aws, "the streamer's S3 client (boto3)"
        else:
            continue
        meant = near_miss(name, candidates)
        if meant is None or meant in present:
            continue  # not close to a real name, or the real one is set too (the other is a leftover)
        yield ctx.finding(var.where, f"Rename `{name}` to `{meant}`: {whose} reads `{meant}`, and "
                          f"no one reads `{name}`, so with `--load-format {fmt}` the setting is silently ignored.",
                          about=var.about, value=f"{name}->{meant}")


def _literal(var: SeenVar | None) -> str | None:
    if var is None or var.origin not in (LITERAL, CONFIG_MAP) or var.value is None or "$" in var.value:
        return None
    return var.value.strip()


def _may_be_set(ctx: Context, var: SeenVar) -> bool:
    """Whether the environment may hold variables the run does not show: an `envFrom` object not in the run, a
    script's or an image's environment (the shell, `docker run -e`, an `--env-file`)."""
    if var.kind == OPERATOR:
        return False
    if var.kind != CONTAINER:
        return True
    container = var.about
    if container.is_compose:
        return False
    namespace = container.pod.namespace
    return any(ref.name is None or ctx.world.find(ref.kind, ref.name, namespace) is None
               for ref in env_from_refs(container.node))


def _endpoint(ctx: Context, env: list[SeenVar]) -> Iterator[Finding | None]:
    fact = streamer_data().get("s3_compatible") or {}
    by_name = {var.name: var for var in env}
    endpoint_var = by_name.get(fact.get("endpoint_env", "AWS_ENDPOINT_URL"))
    endpoint = _literal(endpoint_var)
    if endpoint is None or endpoint_var is None:
        return
    from urllib.parse import urlsplit  # here, not at start-up (2 ms of a one-file run)

    try:
        host = (urlsplit(endpoint if "://" in endpoint else "https://" + endpoint).hostname or "").lower()
    except ValueError:
        return
    if not host or any(host == h or host.endswith("." + h) for h in fact.get("aws_hosts", ())):
        return  # AWS itself: virtual-hosted addressing is right
    name = fact.get("addressing_env", "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING")
    path_style = [str(v) for v in fact.get("path_style_values", ["0"])]
    addressing = by_name.get(name)
    advice = f"Set `{name}=0` for the S3-compatible endpoint {host}"
    why = ("the streamer's S3 client uses virtual-hosted addressing (https://BUCKET." + host + "/...) unless it is 0, "
           "which an S3-compatible store (MinIO, Ceph, an IP address) does not serve: the load fails with "
           "\"File access error\".")
    if addressing is not None:
        value = _literal(addressing)
        if value is None or value in path_style:
            return
        # after the `: `, off the first line; the value as written (`false`, `no`, ...)
        parse = f"the streamer reads it as an integer, and `{value}` does not parse; " \
            if not value.lstrip("-").isdigit() else ""
        yield ctx.finding(addressing.value_at, f"{advice}, not `{value}`: {parse}{why}", about=addressing.about,
                          value=f"{name}={value}")
        return
    if _may_be_set(ctx, endpoint_var):
        return
    yield ctx.finding(endpoint_var.value_at, f"{advice}: without it {why}", about=endpoint_var.about,
                      value=f"{name}=<unset>")
