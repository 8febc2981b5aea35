"""`vllmlint capacity`: will this model fit these GPUs?

    vllmlint capacity manifests/                      every vLLM workload: model, GPU and where it came from,
                                                      budget, weights, reserve, KV cache, verdict
    vllmlint capacity --model meta-llama/Llama-3.1-70B-Instruct --gpu H100 --tp 4 --max-model-len 32768
                                                      the planning question, without manifests
    vllmlint capacity --model-config config.json --gpu L4   a model that is not in the catalog
    vllmlint capacity --model X --gpu L4,A10G,L40S,H100 --tp 1,2,4,8
                                                      every GPU x TP plan as a table, one memory bar per plan
    vllmlint capacity --list-models / --list-gpus     what the catalogs hold and the names that resolve

Exit codes: 0 every plan starts, 1 vLLM would refuse one (does not fit, TP does not divide the heads,
--max-model-len beyond the model), 2 usage error (an unknown model or GPU gets a did-you-mean).
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
        # a MIG slice: one process sees one MIG device (CUDA_VISIBLE_DEVICES takes one), so no TP across slices
        return smallest_tp_that_fits(model, gpu, max_tp=1 if gpu.mig_parent else 64, **options)
    except ValueError:
        return None


def _row(plan: Estimate, *, model_how: str, gpu_origin: str, instance_type: str | None, gpu_count: int | None,
         release_origin: str, kwargs: dict[str, Any], workload: dict[str, Any] | None = None,
         refusals: list[str] | None = None) -> dict[str, Any]:
    """One estimate as a flat, JSON-ready record."""
    smallest = _smallest_tp(plan.model, plan.gpu, kwargs)
    refusals = list(refusals or ())
    used = plan.weights_bytes + plan.reserve_bytes + plan.kv_cache_bytes
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
        "engine": plan.engine,
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
        "verdict": f"vLLM refuses to start: {refusals[0]}" if refusals else _verdict(plan),
        "refusals": refusals,
        "starts": plan.ok and not refusals,
        "unused_budget_gib": _gib(max(0, plan.budget_bytes - used)),
        "outside_budget_gib": _gib(max(0, plan.total_bytes - plan.budget_bytes)),
        "smallest_tp_that_fits": smallest.tensor_parallel_size if smallest else None,
        "smallest_tp_full_length_sequences": smallest.max_sequences if smallest else None,
        "notes": list(plan.notes),
    }


def _text(row: dict[str, Any], color: bool = False) -> str:
    where = ""
    if row["workload"]:
        w = row["workload"]
        container = f"container {w['container']}, " if w["container"] else ""
        where = f"{w['object']} ({container}{w['file']}:{w['line']})\n"
    gpu = f"{row['instance_type']} ({row['gpus_per_node']} x {row['gpu']})" if row["instance_type"] else row["gpu"]
    parts = ", ".join(f"{name} {size:.2f}" for name, size in row["reserve_parts_gib"].items())
    pairs = [
        ("model", f"{row['model']} ({row['model_how']})"),
        ("dtype", row["dtype"]),
        ("parallel", f"TP {row['tensor_parallel_size']} x PP {row['pipeline_parallel_size']}"),
        ("GPU", f"{gpu}, from {row['gpu_origin']}"),
        ("vLLM", f"{row['vllm_version']} ({row['vllm_version_origin']})"
                 + (", V0 engine (VLLM_USE_V1=0)" if row["engine"] == "V0" and _v1_default(row["vllm_version"]) else "")),
        ("budget per GPU", f"{row['budget_gib']:.2f} GiB = {row['gpu_memory_utilization']:g} x "
                           f"{row['gpu_total_gib']:.2f} GiB"),
        ("weights per GPU", f"{row['weights_gib']:.2f} GiB"),
        ("reserve per GPU", f"{row['reserve_gib']:.2f} GiB ({parts})"),
        ("KV cache per GPU", f"{row['kv_cache_gib']:.2f} GiB"),
        ("KV per token per GPU", f"{row['kv_bytes_per_token'] / 1024:.1f} KiB"),
        ("KV tokens that fit", f"{row['kv_tokens']:,}"),
        ("full-length sequences", f"{row['full_length_sequences']} of {row['max_model_len']:,} tokens"),
        ("memory per GPU", memory_bar(row, BAR_WIDTH, color)),
        ("", BAR_LEGEND),
        ("verdict", _paint(row["verdict"], _VERDICT_STYLE[row["starts"]], color)),
    ]
    pairs.extend(("vLLM refuses", reason) for reason in row["refusals"][1:])
    if row["smallest_tp_that_fits"] is not None:
        sequences = row["smallest_tp_full_length_sequences"]
        smallest, per_node = row["smallest_tp_that_fits"], row["gpus_per_node"]
        beyond = ""
        if per_node and smallest > per_node:
            beyond = f"; more than the {per_node} GPUs of one {row['instance_type']}"
        pairs.append(("smallest TP that fits", f"{smallest} ({sequences} full-length "
                      f"sequence{'' if sequences == 1 else 's'}{beyond})"))
    elif not (row["fits"] and row["kv_ok"]):
        if "-MIG-" in row["gpu"]:
            pairs.append(("smallest TP that fits", "none: a MIG slice runs TP 1 only; quantize, or use a bigger"
                          " profile or a whole GPU"))
        else:
            pairs.append(("smallest TP that fits", "none up to 64 on this GPU: quantize, or use a bigger GPU"))
    elif row["refusals"] and row["smallest_tp_that_fits"] is None:
        pairs.append(("smallest TP that fits", "none: no TP size vLLM accepts for this model fits one sequence"))
    pairs.extend(("note", note) for note in row["notes"])
    width = max(len(label) for label, _ in pairs)
    lines = [f"  {label:<{width}}  {value}" for label, value in pairs]
    return where + "\n".join(lines)


def _plan_rows(model_name: str | None, model_config: str | None, gpu_name: tuple[str, ...],
               instance_type: tuple[str, ...], kwargs: dict[str, Any], release_origin: str, tps: list[int],
               allow_long: bool) -> list[dict[str, Any]]:
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
            _fail(_unknown_model(model_name))
        model, how = match.model, match.how
        if quantization is None:
            quantization = match.quantization
    # Every --gpu and --instance-type given (repeated or comma lists) x every --tp size is one plan, in that order.
    from vllmlint.capacity.refusals import startup_refusals

    targets: list[tuple[GPU, str, str | None, int | None]] = []
    for name in _split(gpu_name):
        gpu = find_gpu(name)
        if gpu is None:
            _fail(_unknown_gpu(name))
        targets.append((gpu, "--gpu", None, None))
    for name in _split(instance_type):
        found = instance_types().get(name)
        if found is None:
            import difflib

            close = difflib.get_close_matches(name, list(instance_types()), n=3, cutoff=0.6)
            _fail(f"unknown instance type {name!r}" + (f": did you mean {_either(close)}?" if close else ""))
        targets.append((found.gpu, "--instance-type", name, found.gpu_count))
    rows = []
    for gpu, origin, instance_name, count in targets:
        for tp in tps:
            options = {**kwargs, "quantization": quantization, "tensor_parallel_size": tp}
            try:
                plan = estimate(model, gpu, **options)
            except ValueError as exc:
                _fail(str(exc))
            refusals = startup_refusals(model, tp, kwargs.get("max_model_len"), allow_long_max_model_len=allow_long)
            rows.append(_row(plan, model_how=how, gpu_origin=origin, instance_type=instance_name, gpu_count=count,
                             release_origin=release_origin, kwargs=options, refusals=refusals))
    return rows


def _either(names: list[str]) -> str:
    quoted = [f"`{name}`" for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _unknown_model(name: str | None) -> str:
    from vllmlint.capacity.names import model_suggestions

    close = model_suggestions(name or "")
    hint = f"did you mean {_either(close)}? " if close else ""
    return (f"unknown model {name!r}: {hint}Pass its config.json with --model-config, or add it to the "
            "configuration file's `models:` (`vllmlint capacity --list-models` lists the catalog)")


def _unknown_gpu(name: str) -> str:
    from vllmlint.capacity.names import gpu_suggestions

    close = gpu_suggestions(name)
    hint = f"did you mean {_either(close)}? " if close else ""
    return (f"unknown GPU {name!r}: {hint}GPU names resolve exactly (`vllmlint capacity --list-gpus` lists them, "
            "with the node-label values that name each); add others under `gpus:` in the configuration file")


def _manifest_rows(paths: tuple[str, ...], fallback_gpu: GPU | None,
                   overrides: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Every vLLM workload of the files, estimated on each GPU it may land on."""
    from vllmlint.capacity.refusals import startup_refusals
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
        # The object: a manifest's or Compose file's, a values file's entry (vllm.helm_values.ChartWorkload), else
        # the Dockerfile's image or the script.
        owner = container.pod.owner if container is not None else invocation.owner
        described = {
            "object": owner.describe() if owner is not None else
            "image" if invocation.via == "dockerfile" else "script",  # vllm.dockerfile.VIA_DOCKERFILE
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
        refusals = startup_refusals(work.model, work.tensor_parallel_size)
        for gpu, origin, instance_type, count in places:
            plan = work.estimate(gpu)
            if plan is None:
                skipped.append(f"{label}: not estimated on {gpu.id}: quantization {work.quantization} has no "
                               "known size")
                continue
            rows.append(_row(plan, model_how=match.how, gpu_origin=origin, instance_type=instance_type,
                             gpu_count=count, release_origin=release_origin, kwargs=kwargs, workload=described,
                             refusals=refusals))
    skipped.extend(f"{path}: no such file or directory" for path in missing)
    return rows, skipped


# --------------------------------------------------------------------------- planner options and pictures


def _split(values: tuple[str, ...]) -> list[str]:
    """Repeated options and comma lists as one list (`--gpu L4,A10G --gpu H100`), blanks dropped."""
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def _tp_sizes(values: tuple[str, ...]) -> list[int]:
    """--tp values (repeatable, comma lists) as distinct sizes in the order given; [1] when none."""
    sizes: list[int] = []
    for item in _split(values) or ["1"]:
        if not item.isdigit() or not 1 <= int(item) <= MAX_PARALLEL_SIZE:
            _fail(f"--tp {item!r} is not a tensor-parallel size: a whole number from 1 to {MAX_PARALLEL_SIZE}, or "
                  "a comma list such as 1,2,4,8")
        if int(item) not in sizes:
            sizes.append(int(item))
    return sizes


def _use_color(choice: str) -> bool:
    """Colour on standard output: `always`, or `auto` on a terminal that is not `TERM=dumb`, unless NO_COLOR is
    set to anything (https://no-color.org)."""
    import os

    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


_RESET = "\x1b[0m"
_VERDICT_STYLE = {True: "\x1b[32m", False: "\x1b[31m"}  # starts: green; refused or does not fit: red


def _paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{_RESET}" if color and style and text else text


# The memory bar: the GPU's whole memory, left to right: weights, reserve (activations, non-torch, CUDA graphs),
# KV cache, budget left unused, then the share gpu_memory_utilization keeps out (blank). `>` past the closing
# bracket: the weights (and reserve) exceed the GPU itself.
BAR_WIDTH = 40
TABLE_BAR_WIDTH = 30
_BAR_PARTS = (("#", "\x1b[34m"), ("=", "\x1b[33m"), ("~", "\x1b[32m"), (".", "\x1b[2m"), (" ", ""))
BAR_LEGEND = "# weights  = reserve  ~ KV cache  . unused budget  (full width: the GPU's memory; blank: outside the budget)"


def memory_bar(row: dict[str, Any], width: int = BAR_WIDTH, color: bool = False) -> str:
    """`[####==~~~~~~~~  ]` for one plan: weights | reserve | KV cache | unused budget | outside the budget, each as
    many characters as its share of the GPU's memory (boundaries rounded, so the parts always add up to width)."""
    total = row["gpu_total_gib"] or 1.0
    weights, reserve, kv, budget = row["weights_gib"], row["reserve_gib"], row["kv_cache_gib"], row["budget_gib"]
    used = weights + reserve + kv
    edges = [weights, weights + reserve, used, max(used, budget), max(used, total)]
    cells, start = [], 0
    for (char, style), edge in zip(_BAR_PARTS, edges, strict=True):
        end = round(min(edge, total) / total * width)
        if end > start:
            cells.append(_paint(char * (end - start), style, color))
            start = end
    overflow = _paint(">", "\x1b[31m", color) if weights + reserve > total else ""
    return f"[{''.join(cells)}{' ' * (width - start)}]{overflow}"


def _short_verdict(row: dict[str, Any]) -> str:
    if row["refusals"]:
        return "refused"
    if not row["fits"]:
        return "does not fit"
    if not row["kv_ok"]:
        return "KV too small"
    return "fits"


def _table(rows: list[dict[str, Any]], color: bool = False) -> str:
    """Every plan (GPU x TP) as one line with its verdict, numbers and memory bar, then what the verdicts mean."""
    first = rows[0]
    lines = [f"{first['model']} ({first['model_how']}), {first['dtype']}, max_model_len {first['max_model_len']:,}, "
             f"PP {first['pipeline_parallel_size']}, vLLM {first['vllm_version']} ({first['vllm_version_origin']})", ""]
    header = ("GPU", "TP", "verdict", "weights/GPU", "KV cache/GPU", "KV tokens", "full-length seqs")
    cells = []
    for row in rows:
        gpu = f"{row['instance_type']} ({row['gpus_per_node']} x {row['gpu']})" if row["instance_type"] else row["gpu"]
        cells.append((gpu, str(row["tensor_parallel_size"]), _short_verdict(row), f"{row['weights_gib']:.2f} GiB",
                      f"{row['kv_cache_gib']:.2f} GiB", f"{row['kv_tokens']:,}", f"{row['full_length_sequences']:,}"))
    widths = [max(len(header[i]), *(len(c[i]) for c in cells)) for i in range(len(header))]
    right = {1, 3, 4, 5, 6}

    def line(values: tuple[str, ...], styles: tuple[str, ...] | None = None) -> str:
        out = []
        for i, value in enumerate(values):
            padded = value.rjust(widths[i]) if i in right else value.ljust(widths[i])
            out.append(_paint(padded, styles[i], color) if styles and styles[i] else padded)
        return "  ".join(out)

    lines.append(line(header) + "  memory per GPU")
    for row, values in zip(rows, cells, strict=True):
        styles = ("", "", _VERDICT_STYLE[row["starts"]], "", "", "", "")
        lines.append(line(values, styles) + "  " + memory_bar(row, TABLE_BAR_WIDTH, color))
    lines += ["", f"memory per GPU: {BAR_LEGEND}"]
    if any(_short_verdict(row) == "KV too small" for row in rows):
        lines.append("KV too small: the weights fit, but the KV cache holds less than one max_model_len sequence: "
                     "vLLM refuses to start")
    for row in rows:
        for reason in row["refusals"]:
            lines.append(f"refused: {row['gpu']} TP {row['tensor_parallel_size']}: vLLM refuses to start: {reason}")
    seen: list[str] = []
    for row in rows:
        seen.extend(note for note in row["notes"] if note not in seen)
    lines.extend(f"note: {note}" for note in seen)
    return "\n".join(lines)


def _catalog_listing(which: str, fmt: str) -> str:
    """--list-models / --list-gpus: the catalogs (with the configuration's extras first), as text or JSON."""
    from vllmlint.capacity import gpus, models

    records: list[dict[str, Any]]
    header: tuple[str, ...]
    cells: list[tuple[str, ...]]
    if which == "gpus":
        records = [{"id": g.id, "name": g.name, "architecture": g.architecture,
                    "compute_capability": g.compute_capability, "cuda_total_gib": g.cuda_total_gib,
                    "cuda_total_estimated": g.cuda_total_estimated, "nvidia_smi_total_mib": g.nvidia_smi_total_mib,
                    "names": list(dict.fromkeys((*g.aliases, *g.gpu_product_labels, *g.gke_accelerator_labels,
                                                 *g.eks_accelerator_labels))),
                    "karpenter_gpu_names": list(g.karpenter_gpu_names)} for g in gpus()]
        if fmt == "json":
            return json.dumps({"gpus": records}, indent=2)
        header = ("id", "CUDA GiB", "cc", "architecture", "also resolves from")
        cells = [(r["id"], f"{r['cuda_total_gib']:.2f}{'*' if r['cuda_total_estimated'] else ''}",
                  r["compute_capability"], r["architecture"],
                  ", ".join([*r["names"], *(f"karpenter: {n}" for n in r["karpenter_gpu_names"])]) or "-")
                 for r in records]
        footer = ("* estimated: no published CUDA total was found (data/capacity/gpus.yaml says how it was derived). "
                  "Karpenter's instance-gpu-name values resolve when one GPU carries them; names compare ignoring "
                  "case, spaces and underscores.")
    else:
        records = [{"id": m.id, "aliases": list(m.aliases), "parameters_b": round(m.parameters / 1e9, 2),
                    "layers": m.num_hidden_layers, "attention_heads": m.num_attention_heads,
                    "kv_heads": m.num_key_value_heads, "max_position_embeddings": m.max_position_embeddings,
                    "torch_dtype": m.torch_dtype, "checkpoint_quantization": m.checkpoint_quantization}
                   for m in models()]
        if fmt == "json":
            return json.dumps({"models": records}, indent=2)
        header = ("id", "params", "layers", "heads/KV", "context", "also")
        cells = [(r["id"], f"{r['parameters_b']:g}B", str(r["layers"]), f"{r['attention_heads']}/{r['kv_heads']}",
                  f"{r['max_position_embeddings']:,}", ", ".join(r["aliases"]) or "-") for r in records]
        footer = ("Quantized repositories (-AWQ, -GPTQ-Int4, -FP8, ...) and -Instruct/-it variants of these names "
                  "resolve too; anything else: --model-config config.json.")
    widths = [max(len(header[i]), *(len(c[i]) for c in cells)) for i in range(len(header) - 1)]
    lines = ["  ".join(v.ljust(w) for v, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
             for row in [header, *cells]]
    return "\n".join([*lines, "", footer])


@click.command("capacity")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--model", "model_name", help="Model to plan for: a Hugging Face id or a catalogued name.")
@click.option("--model-config", type=click.Path(), help="A Hugging Face config.json, or a model folder holding one "
              "(with hf_quant_config.json), for a model that is not in the catalog.")
@click.option("--gpu", "gpu_name", help="GPU to plan for (H100, L4, A100-40GB, nvidia-l4, a MIG slice such as "
              "A100-80GB-MIG-1g.10gb...); with PATHS, assumed "
              "for workloads whose GPU the manifests do not reveal. Names resolve exactly (--list-gpus); repeat it or "
              "give a comma list (L4,A10G,H100) for one plan each.", multiple=True)
@click.option("--instance-type", help="Instance type to plan for (p5.48xlarge, g6.12xlarge, ...); repeatable, comma "
              "lists too.", multiple=True)
@click.option("--tp", "--tensor-parallel-size", "tp", multiple=True, metavar="N[,N...]",
              help="Tensor-parallel size, or a comma list (1,2,4,8) for one plan each.  [default: 1]")
@click.option("--pp", "--pipeline-parallel-size", "pp", type=click.IntRange(min=1, max=MAX_PARALLEL_SIZE), default=1,
              show_default=True)
@click.option("--max-model-len", type=str, help="Context to hold (default: the model's own); 32k and 32K work.")
@click.option("--allow-long-max-model-len", is_flag=True, help="Plan as with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (or a "
              "RoPE-scaling --hf-overrides): a --max-model-len beyond the model is not refused.")
@click.option("--gpu-memory-utilization", type=click.FloatRange(min=0.01, max=1.0),
              help="Share of GPU memory vLLM may use [default: the release's, 0.9 or 0.92].")
@click.option("--dtype", default="auto", show_default=True)
@click.option("--quantization", help="awq, gptq, fp8, ... [default: what the model name says].")
@click.option("--kv-cache-dtype", default="auto", show_default=True)
@click.option("--max-num-seqs", type=click.IntRange(min=1))
@click.option("--max-num-batched-tokens", type=click.IntRange(min=1))
@click.option("--enforce-eager", is_flag=True)
@click.option("--engine", type=click.Choice(["v0", "v1"]), help="The engine of a 0.8 - 0.10 release: v0 plans as "
              "with VLLM_USE_V1=0 (the V0 sampler and profile batch, swap space) [default: the release's, V1 from 0.8.0; "
              "V0 only before].")
@click.option("--vllm-version", help="vLLM release whose behaviour to assume [default: the newest known for "
              "plans; each workload's own release for PATHS].")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the memory bars and verdicts (auto: on a terminal, unless NO_COLOR is set or TERM=dumb).")
@click.option("--no-color", "no_color", is_flag=True, help="The same as --color never.")
@click.option("--list-models", is_flag=True, help="List the catalogued models (ids, aliases, sizes) and exit.")
@click.option("--list-gpus", is_flag=True, help="List the catalogued GPUs (ids, memory, the names that resolve to "
              "each) and exit.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file (for its "
              "`models:` and `gpus:`).")
@click.option("--no-config", is_flag=True, help="Ignore configuration files.")
@click.option("--hf-cache", is_flag=True, default=None, help="Size models the catalog lacks from this machine's "
              "Hugging Face cache (opt-in).")
@click.option("--online", is_flag=True, default=None, help="Fetch models' config.json from the Hugging Face Hub "
              "(opt-in; needs huggingface_hub: the `hub` extra).")
def command(paths, model_name, model_config, gpu_name, instance_type, tp, pp, max_model_len, gpu_memory_utilization,
            allow_long_max_model_len, color, no_color, list_models, list_gpus,
            dtype, quantization, kv_cache_dtype, max_num_seqs, max_num_batched_tokens, enforce_eager, vllm_version,
            fmt, config_path, no_config, hf_cache=None, online=None, engine=None):
    """Will this model fit these GPUs? Estimate vLLM's memory plan for the workloads in PATHS, or for
    --model/--model-config on --gpu/--instance-type."""
    from vllmlint.capacity import find_gpu, register_extra
    from vllmlint.capacity.workload import human_int

    _load_config(config_path, no_config, register_extra, hf_cache, online)
    length = None
    if list_models or list_gpus:
        click.echo(_catalog_listing("models" if list_models else "gpus", fmt))
        sys.exit(EXIT_FITS)
    tps = _tp_sizes(tp)
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

    v1_engine = _engine_choice(engine, vllm_version, bool(paths))
    use_color = _use_color("never" if no_color else color)
    if paths:
        fallback = None
        if tp or instance_type:
            _fail("--tp and --instance-type plan without manifests: with PATHS, each workload's own "
                  "--tensor-parallel-size and placement are read")
        if len(_split(gpu_name)) > 1:
            _fail("with PATHS, --gpu names the one GPU assumed where the manifests do not say: give one")
        if gpu_name:
            fallback = find_gpu(_split(gpu_name)[0])
            if fallback is None:
                _fail(_unknown_gpu(_split(gpu_name)[0]))
        rows, skipped = _manifest_rows(paths, fallback, {"vllm_version": vllm_version})
    else:
        if not (model_name or model_config):
            _fail("give manifests to read (PATHS), or --model (or --model-config) and --gpu (or --instance-type)")
        if not (_split(gpu_name) or _split(instance_type)):
            _fail("--gpu or --instance-type is needed to plan without manifests")
        kwargs = dict(pipeline_parallel_size=pp, gpu_memory_utilization=gpu_memory_utilization,
                      vllm_version=vllm_version, max_model_len=length, dtype=dtype, quantization=quantization,
                      kv_cache_dtype=kv_cache_dtype, max_num_seqs=max_num_seqs,
                      max_num_batched_tokens=max_num_batched_tokens, enforce_eager=enforce_eager)
        if v1_engine is not None:
            kwargs["v1_engine"] = v1_engine
        release_origin = "--vllm-version" if vllm_version else "assumed: the newest known release"
        rows = _plan_rows(model_name, model_config, gpu_name, instance_type, kwargs, release_origin, tps,
                          allow_long_max_model_len)
        skipped = []

    if fmt == "json":
        click.echo(json.dumps({"estimates": rows, "skipped": skipped}, indent=2))
    else:
        if len(rows) > 1 and not paths:
            click.echo(_table(rows, use_color), color=use_color)
        else:
            click.echo("\n\n".join(_text(row, use_color) for row in rows) if rows else "No workload could be estimated.",
                       color=use_color)
        for line in skipped:
            click.echo(f"vllmlint capacity: note: {line}", err=True)
    sys.exit(EXIT_FITS if all(row["starts"] for row in rows) else EXIT_DOES_NOT_FIT)


def _v1_default(version: str | None) -> bool:
    from vllmlint.capacity.estimate import uses_v1_engine

    return uses_v1_engine(version)


# V1 is the default engine from 0.8.0 (VLLM_USE_V1 defaults to "1": vllm/envs.py line 531 in 0.8.5); V0 can be
# chosen with VLLM_USE_V1=0 up to 0.10.x and is gone in 0.11.0 (data/host-memory.yaml, `engine`).
V0_LAST_MINOR = (0, 10)


def _engine_choice(engine: str | None, version: str | None, with_paths: bool) -> bool | None:
    """--engine as estimate()'s v1_engine (None: the release's own); a usage error where vLLM has no such engine."""
    if engine is None:
        return None
    if with_paths:
        _fail("--engine plans without manifests: with PATHS, each workload's VLLM_USE_V1 is read")
    from vllmlint.vllm.release import release_numbers

    numbers = release_numbers(version)
    if engine == "v0" and numbers[:2] > V0_LAST_MINOR:
        _fail(f"--engine v0: vLLM {'.'.join(map(str, numbers))} has no V0 engine (removed in 0.11.0); give "
              "--vllm-version 0.10.2 or older")
    if engine == "v1" and not _v1_default(version):
        _fail(f"--engine v1: vLLM {'.'.join(map(str, numbers))} predates the V1 engine as a choice vllmlint "
              "models (the default from 0.8.0)")
    return engine == "v1"


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
