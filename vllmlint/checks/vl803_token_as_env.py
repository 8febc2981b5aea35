"""VL803: a Hugging Face token given to a container from a Secret through its environment (`valueFrom.secretKeyRef`,
or `envFrom` of a Secret of the run holding the variable), where the reader also takes it from a file.

Which variables have a file form, and since which release of the reader, is data (`data/credentials.yaml`
`file_form`): huggingface_hub reads HF_TOKEN, then HUGGING_FACE_HUB_TOKEN, then the file named by
HF_TOKEN_PATH (0.23.0 src/huggingface_hub/utils/_token.py:111-118, constants.py:130). VLLM_API_KEY has no file
form (vllm/envs.py reads only the variable): silent. A Secret named by `envFrom` that is not in the run has
unknown keys: silent.
"""
from __future__ import annotations

from vllmlint.k8s import secrets
from vllmlint.k8s.pod import SECRET
from vllmlint.source.yamlmodel import Mapping
from vllmlint.checks import Context


def check(ctx: Context):
    vllm = {id(i.container) for i in ctx.world.invocations if i.container is not None}
    for container in ctx.world.containers:
        if container.is_compose:
            continue  # Compose secrets are files already (`secrets:`); its environment is not a Secret's
        reported: set[int] = set()
        for var in container.resolved_env(ctx.world):
            if var.origin != SECRET:
                continue
            form = secrets.file_form(var.name)
            if form is None:
                continue
            via_env_from = isinstance(var.node, Mapping) and var.node.get("secretRef") is not None
            where = var.node if via_env_from else (var.source or var.node)
            if id(where) in reported:
                continue  # one envFrom entry bringing HF_TOKEN and HUGGING_FACE_HUB_TOKEN: one finding
            reported.add(id(where))
            how = f"Secret {var.ref_name} (through `envFrom`)" if via_env_from else \
                f"Secret {var.ref_name} (key {var.ref_key})"
            key = var.ref_key or "token"
            if id(container) in vllm:
                how_to = (f"set {form['variable']} to the file of key {key}: vLLM's huggingface_hub reads it when no "
                          f"token variable is set ({form['since']} and later; every vLLM release since 0.8.5 "
                          "requires huggingface-hub 0.30.0 or later).")
            else:
                how_to = (f"read the token from the file of key {key}: tools built on huggingface_hub (`hf download`, "
                          f"snapshot_download without token=) do it when {form['variable']} names the file "
                          f"({form['since']} and later); a script or program that reads the variable itself must "
                          "read the file instead.")
            message = (f"{var.name} is set from {how} as an environment variable: it shows in /proc/<pid>/environ "
                       "of the container, is inherited by every process the container starts, and ends up in crash "
                       "reports and debug dumps of the environment. Mount the Secret as a file instead (a `secret` "
                       f"volume, read-only) and {how_to}")
            yield ctx.finding(where, message, about=container, value=f"{var.name}:{var.ref_name}")
