"""`vllmlint capacity`: will this model fit these GPUs?

    vllmlint capacity manifests/                      every vLLM workload: model, GPU and where it came from,
                                                      budget, weights, reserve, KV cache, verdict
    vllmlint capacity --model meta-llama/Llama-3.1-70B-Instruct --gpu H100 --tp 4 --max-model-len 32768
                                                      the planning question, without manifests
    vllmlint capacity --model-config config.json --gpu L4   a model that is not in the catalog

Exit codes: 0 everything estimated fits, 1 something does not, 2 usage error.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn

import click

from vllmlint.capacity import GiB
from vllmlint.capacity.estimate import MAX_PARALLEL_SIZE

if TYPE_CHECKING:
    from vllmlint.capacity.estimate import Estimate
    from vllmlint.capacity.specs import GPU, ModelSpec

EXIT_FITS, EXIT_DOES_NOT_FIT, EXIT_USAGE = 0, 1, 2


def _fail(message: str) -> NoReturn:
    click.echo(f"vllmlint capacity: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _gib(size: float) -> float:
    return round(size / GiB, 2)


def _verdict(plan: Estimate) -> str:
    if plan.ok:
        return "fits"
    if plan.fits:
        return "KV cache too small for one max-model-len sequence"
    return "does not fit: the weights exceed the budget"


def _smallest_tp(model: ModelSpec, gpu: GPU, kwargs: dict[str, Any]) -> Estimate | None:
    """The smallest power-of-two TP (up to 64) whose weights and one full-length sequence fit, or None."""
    from vllmlint.capacity import smallest_tp_that_fits

    options = {k: v for k, v in kwargs.items() if k != "tensor_parallel_size"}
    try:
        return smallest_tp_that_fits(model, gpu, max_tp=64, **options)
    except ValueError:
        return None


def _row(plan: Estimate, *, model_how: str, gpu_origin: str, instance_type: str | None, gpu_count: int | None,
         release_origin: str, kwargs: dict[str, Any], workload: dict[str, Any] | None = None) -> dict[str, Any]:
    """One estimate as a flat, JSON-ready record."""
    smallest = _smallest_tp(plan.model, plan.gpu, kwargs)
    return {
        "workload": workload,
        "model": plan.model.id,
        "model_how": model_how,
        "dtype": plan.quantization or plan.model.torch_dtype,
        "tensor_parallel_size": plan.tensor_parallel_size,
        "pipeline_parallel_size": plan.pipeline_parallel_size,
        "gpu": plan.gpu.id,
        "gpu_name": plan.gpu.name,
        "instance_type": instance_type,
        "gpus_per_node": gpu_count,
        "gpu_origin": gpu_origin,
        "vllm_version": ".".join(map(str, plan.vllm_version)),
        "vllm_version_origin": release_origin,
        "gpu_memory_utilization": plan.gpu_memory_utilization,
        "gpu_total_gib": _gib(plan.total_bytes),
        "budget_gib": _gib(plan.budget_bytes),
        "weights_gib": _gib(plan.weights_bytes),
        "reserve_gib": _gib(plan.reserve_bytes),
        "reserve_parts_gib": {name: _gib(size) for name, size in plan.reserve_parts.items()},
        "kv_cache_gib": _gib(plan.kv_cache_bytes),
        "kv_bytes_per_token": plan.kv_bytes_per_token,
        "kv_tokens": plan.kv_tokens,
        "max_model_len": plan.max_model_len,
        "full_length_sequences": plan.max_sequences,
        "fits": plan.fits,
        "kv_ok": plan.kv_ok,
        "verdict": _verdict(plan),
        "smallest_tp_that_fits": smallest.tensor_parallel_size if smallest else None,
        "smallest_tp_full_length_sequences": smallest.max_sequences if smallest else None,
        "notes": list(plan.notes),
    }


def _text(row: dict[str, Any]) -> str:
    where = ""
    if row["workload"]:
        w = row["workload"]
        where = f"{w['object']} (container {w['container']}, {w['file']}:{w['line']})\n"
    gpu = f"{row['instance_type']} ({row['gpus_per_node']} x {row['gpu']})" if row["instance_type"] else row["gpu"]
    parts = ", ".join(f"{name} {size:.2f}" for name, size in row["reserve_parts_gib"].items())
    pairs = [
        ("model", f"{row['model']} ({row['model_how']})"),
        ("dtype", row["dtype"]),
        ("parallel", f"TP {row['tensor_parallel_size']} x PP {row['pipeline_parallel_size']}"),
        ("GPU", f"{gpu}, from {row['gpu_origin']}"),
        ("vLLM", f"{row['vllm_version']} ({row['vllm_version_origin']})"),
        ("budget per GPU", f"{row['budget_gib']:.2f} GiB = {row['gpu_memory_utilization']:g} x "
                           f"{row['gpu_total_gib']:.2f} GiB"),
        ("weights per GPU", f"{row['weights_gib']:.2f} GiB"),
        ("reserve per GPU", f"{row['reserve_gib']:.2f} GiB ({parts})"),
        ("KV cache per GPU", f"{row['kv_cache_gib']:.2f} GiB"),
        ("KV per token per GPU", f"{row['kv_bytes_per_token'] / 1024:.1f} KiB"),
        ("KV tokens that fit", f"{row['kv_tokens']:,}"),
        ("full-length sequences", f"{row['full_length_sequences']} of {row['max_model_len']:,} tokens"),
        ("verdict", row["verdict"]),
    ]
    if row["smallest_tp_that_fits"] is not None:
        sequences = row["smallest_tp_full_length_sequences"]
        smallest, per_node = row["smallest_tp_that_fits"], row["gpus_per_node"]
        beyond = ""
        if per_node and smallest > per_node:
            beyond = f"; more than the {per_node} GPUs of one {row['instance_type']}"
        pairs.append(("smallest TP that fits", f"{smallest} ({sequences} full-length "
                      f"sequence{'' if sequences == 1 else 's'}{beyond})"))
    elif not (row["fits"] and row["kv_ok"]):
        pairs.append(("smallest TP that fits", "none up to 64 on this GPU: quantize, or use a bigger GPU"))
    pairs.extend(("note", note) for note in row["notes"])
    width = max(len(label) for label, _ in pairs)
    lines = [f"  {label:<{width}}  {value}" for label, value in pairs]
    return where + "\n".join(lines)


def _plan_rows(model_name: str | None, model_config: str | None, gpu_name: str | None, instance_type: str | None,
               kwargs: dict[str, Any], release_origin: str) -> list[dict[str, Any]]:
    """The planning question: one model on one GPU (or instance type) with the given settings."""
    from vllmlint.capacity import estimate, find_gpu, instance_types, resolve_model

    quantization = kwargs.get("quantization")
    if model_config:
        from vllmlint.capacity.hfconfig import ModelConfigError, load_model_config

        try:  # a config.json, or a model folder (config.json with hf_quant_config.json, tokenizer_config.json)
            model, how = load_model_config(model_config, model_name)
        except ModelConfigError as exc:
            _fail(f"--model-config {exc}")
    else:
        match = resolve_model(model_name) if model_name else None  # `command` asks for one of the two
        if model_name and (match is None or match.how not in ("exact id", "case-insensitive id")):
            from vllmlint.capacity.hfconfig import ModelConfigError, resolve_opt_in

            try:  # --hf-cache / --online: the checkpoint's own config.json
                match = resolve_opt_in(model_name) or match
            except ModelConfigError as exc:
                _fail(str(exc))
        if match is None:
            _fail(f"unknown model {model_name!r}: pass its config.json with --model-config, or add it to the "
                  "configuration file's `models:`")
        model, how = match.model, match.how
        if quantization is None:
            quantization = match.quantization
    count = None
    gpu: GPU | None
    if instance_type:
        found = instance_types().get(instance_type)
        if found is None:
            _fail(f"unknown instance type {instance_type!r}")
        gpu, count, origin = found.gpu, found.gpu_count, "--instance-type"
    else:
        gpu = (find_gpu(gpu_name) or _gpu_by_prefix(gpu_name)) if gpu_name else None  # `command` asks for one
        if gpu is None:
            from vllmlint.capacity import gpus

            _fail(f"unknown GPU {gpu_name!r}: one of {', '.join(g.id for g in gpus())}")
        origin = "--gpu"
    kwargs = {**kwargs, "quantization": quantization}
    try:
        plan = estimate(model, gpu, **kwargs)
    except ValueError as exc:
        _fail(str(exc))
    return [_row(plan, model_how=how, gpu_origin=origin, instance_type=instance_type, gpu_count=count,
                 release_origin=release_origin, kwargs=kwargs)]


def _gpu_by_prefix(name: str) -> GPU | None:
    """`H100` or `a100` on the command line: the one catalogued GPU whose id starts with it (the larger if two)."""
    from vllmlint.capacity import gpus

    wanted = name.strip().lower()
    hits = [g for g in gpus() if g.id.lower().startswith(wanted)]
    return max(hits, key=lambda g: g.cuda_total_gib) if hits else None


def _manifest_rows(paths: tuple[str, ...], fallback_gpu: GPU | None,
                   overrides: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Every vLLM workload of the files, estimated on each GPU it may land on."""
    from vllmlint.capacity.workload import workloads
    from vllmlint.engine import Linter, LintOptions, collect_files

    files, missing = collect_files(list(paths))
    linter = Linter(LintOptions(vllm_version=overrides.get("vllm_version")))
    for path in files:
        linter.add_file(path)
    world = linter.build()
    rows, skipped = [], []
    for work in workloads(world):
        invocation = work.invocation
        container = invocation.container
        anchor = work.model_token if work.model_token is not None and work.model_token.source else invocation.anchor
        line = anchor.source.line_col(anchor.start)[0] if anchor.source else 0
        described = {
            "object": container.pod.owner.describe() if container is not None else "script",
            "container": container.name if container is not None else "",
            "file": anchor.source.display_path if anchor.source else "",
            "line": line,
        }
        label = f"{described['object']} ({described['file']}:{line})"
        match = work.match
        if match is None or work.model is None:  # the model is known exactly when it was matched
            why = "its model comes from a variable" if "model" in work.unknown else \
                f"model `{work.model_name}` is not in the catalog (add it under `models:` in .vllmlint.yaml)"
            skipped.append(f"{label}: not estimated: {why}")
            continue
        if not work.estimate_inputs_known():
            flags = ", ".join(sorted(work.unknown))
            skipped.append(f"{label}: not estimated: the value of {flags} is not known from the manifest")
            continue
        places = [(p.candidate.gpu, p.origin, p.candidate.instance_type, p.candidate.gpu_count)
                  for p in work.hosting_landings()]
        if not places and fallback_gpu is not None:
            places = [(fallback_gpu, "--gpu (assumed: the manifests do not say)", None, None)]
        if not places:
            skipped.append(f"{label}: not estimated: no GPU known (no hardware node selector or NodePool); "
                           "pass --gpu to assume one")
            continue
        kwargs = work.estimate_kwargs()
        release_origin = invocation.release_origin if invocation.release else \
            "release unknown: the newest known assumed"
        for gpu, origin, instance_type, count in places:
            plan = work.estimate(gpu)
            if plan is None:
                skipped.append(f"{label}: not estimated on {gpu.id}: quantization {work.quantization} has no "
                               "known size")
                continue
            rows.append(_row(plan, model_how=match.how, gpu_origin=origin, instance_type=instance_type,
                             gpu_count=count, release_origin=release_origin, kwargs=kwargs, workload=described))
    skipped.extend(f"{path}: no such file or directory" for path in missing)
    return rows, skipped


@click.command("capacity")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--model", "model_name", help="Model to plan for: a Hugging Face id or a catalogued name.")
@click.option("--model-config", type=click.Path(), help="A Hugging Face config.json, or a model folder holding one "
              "(with hf_quant_config.json), for a model that is not in the catalog.")
@click.option("--gpu", "gpu_name", help="GPU to plan for (H100, L4, A100-40GB, nvidia-l4...); with PATHS, assumed "
              "for workloads whose GPU the manifests do not reveal.")
@click.option("--instance-type", help="Instance type to plan for (p5.48xlarge, g6.12xlarge, ...).")
@click.option("--tp", "--tensor-parallel-size", "tp", type=click.IntRange(min=1, max=MAX_PARALLEL_SIZE), default=1,
              show_default=True)
@click.option("--pp", "--pipeline-parallel-size", "pp", type=click.IntRange(min=1, max=MAX_PARALLEL_SIZE), default=1,
              show_default=True)
@click.option("--max-model-len", type=str, help="Context to hold (default: the model's own); 32k and 32K work.")
@click.option("--gpu-memory-utilization", type=click.FloatRange(min=0.01, max=1.0),
              help="Share of GPU memory vLLM may use [default: the release's, 0.9 or 0.92].")
@click.option("--dtype", default="auto", show_default=True)
@click.option("--quantization", help="awq, gptq, fp8, ... [default: what the model name says].")
@click.option("--kv-cache-dtype", default="auto", show_default=True)
@click.option("--max-num-seqs", type=click.IntRange(min=1))
@click.option("--max-num-batched-tokens", type=click.IntRange(min=1))
@click.option("--enforce-eager", is_flag=True)
@click.option("--vllm-version", help="vLLM release whose behaviour to assume [default: the newest known for "
              "plans; each workload's own release for PATHS].")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file (for its "
              "`models:` and `gpus:`).")
@click.option("--no-config", is_flag=True, help="Ignore configuration files.")
@click.option("--hf-cache", is_flag=True, default=None, help="Size models the catalog lacks from this machine's "
              "Hugging Face cache (opt-in).")
@click.option("--online", is_flag=True, default=None, help="Fetch models' config.json from the Hugging Face Hub "
              "(opt-in; needs vllmlint[hub]).")
def command(paths, model_name, model_config, gpu_name, instance_type, tp, pp, max_model_len, gpu_memory_utilization,
            dtype, quantization, kv_cache_dtype, max_num_seqs, max_num_batched_tokens, enforce_eager, vllm_version,
            fmt, config_path, no_config, hf_cache=None, online=None):
    """Will this model fit these GPUs? Estimate vLLM's memory plan for the workloads in PATHS, or for
    --model/--model-config on --gpu/--instance-type."""
    from vllmlint.capacity import find_gpu, register_extra
    from vllmlint.capacity.workload import human_int

    _load_config(config_path, no_config, register_extra, hf_cache, online)
    length = None
    if max_model_len is not None:
        length = human_int(max_model_len)
        if length is None:
            _fail(f"--max-model-len {max_model_len!r} is not a length vLLM takes: a number such as 32768 or 32k, "
                  "below 2^63")
    if vllm_version:
        from vllmlint.vllm.release import is_version

        if not is_version(vllm_version):
            _fail(f"--vllm-version {vllm_version!r} is not a release number such as 0.29.0")
        vllm_version = vllm_version.strip().lstrip("v")

    if paths:
        fallback = None
        if gpu_name:
            fallback = find_gpu(gpu_name) or _gpu_by_prefix(gpu_name)
            if fallback is None:
                _fail(f"unknown GPU {gpu_name!r}")
        rows, skipped = _manifest_rows(paths, fallback, {"vllm_version": vllm_version})
    else:
        if not (model_name or model_config):
            _fail("give manifests to read (PATHS), or --model (or --model-config) and --gpu (or --instance-type)")
        if not (gpu_name or instance_type):
            _fail("--gpu or --instance-type is needed to plan without manifests")
        kwargs = dict(tensor_parallel_size=tp, pipeline_parallel_size=pp, gpu_memory_utilization=gpu_memory_utilization,
                      vllm_version=vllm_version, max_model_len=length, dtype=dtype, quantization=quantization,
                      kv_cache_dtype=kv_cache_dtype, max_num_seqs=max_num_seqs,
                      max_num_batched_tokens=max_num_batched_tokens, enforce_eager=enforce_eager)
        release_origin = "--vllm-version" if vllm_version else "assumed: the newest known release"
        rows, skipped = _plan_rows(model_name, model_config, gpu_name, instance_type, kwargs, release_origin), []

    if fmt == "json":
        click.echo(json.dumps({"estimates": rows, "skipped": skipped}, indent=2))
    else:
        click.echo("\n\n".join(_text(row) for row in rows) if rows else "No workload could be estimated.")
        for line in skipped:
            click.echo(f"vllmlint capacity: note: {line}", err=True)
    sys.exit(EXIT_FITS if all(row["fits"] and row["kv_ok"] for row in rows) else EXIT_DOES_NOT_FIT)


def _load_config(config_path: str | None, no_config: bool, register_extra: Callable[..., None],
                 hf_cache: bool | None = None, online: bool | None = None) -> None:
    """Extra models and GPUs from the configuration file, as `vllmlint check` reads them, and where model
    files may come from (--hf-cache / --online, else the file's `hf-cache:` / `online:`)."""
    from vllmlint.capacity.hfconfig import online_problem, set_sources, sources

    set_sources(hf_cache=bool(hf_cache), online=bool(online))
    if online and online_problem():
        _fail(str(online_problem()))
    if no_config:
        return
    from vllmlint.config import ConfigError, find_config, load_config

    try:
        path = Path(config_path) if config_path else find_config(Path.cwd())
        config = load_config(path) if path else None
    except ConfigError as exc:
        _fail(str(exc))
    if config is not None and (config.models or config.gpus):
        register_extra(models=config.models, gpus=config.gpus)
    if config is not None:
        set_sources(hf_cache=config.hf_cache if hf_cache is None else hf_cache,
                    online=config.online if online is None else online)
    if sources().online and online_problem():
        _fail(str(online_problem()))
