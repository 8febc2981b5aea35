"""VL607: the GPU (or accelerator) the pod lands on cannot run this vLLM build, dtype or FP8 setting."""
import re

from vllmlint.capacity.estimate import capability_floor, fp16_unsupported, in_release_period, min_capability
from vllmlint.capacity.specs import model_type_of, vllm_gpu_support
from vllmlint.capacity.lint import also_words, capacity_workloads, judge, scope
from vllmlint.k8s.selectors import IN
from vllmlint.finding import Severity
from vllmlint.checks import Context
from vllmlint.vllm.checkpoint import quantization_refused
from vllmlint.lazyre import lazy_compile

# Upstream images built for CUDA; -rocm, -tpu, -neuron, -xpu and -cpu builds are other repositories.
_CUDA_IMAGE = re.compile(r"(^|.*/)vllm/vllm-openai$")
_OTHER_ACCELERATORS = {
    "amd.com/gpu": "AMD GPUs", "google.com/tpu": "TPUs", "habana.ai/gaudi": "Intel Gaudi accelerators",
    "aws.amazon.com/neuron": "AWS Neuron devices", "aws.amazon.com/neuroncore": "AWS Neuron cores",
    "aws.amazon.com/neurondevice": "AWS Neuron devices",
}
# AMD (g4ad), Gaudi (dl1) and Qualcomm (dl2q) instances; the Neuron ones (trn*, inf*) come from the instance
# catalog (data/capacity/instance-types.yaml `neuron_instance_types`).
_NON_NVIDIA_INSTANCE = lazy_compile(r"^(g4ad|dl1|dl2q)\.", re.I)
_INSTANCE_TYPE_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_FAMILY_KEY = "karpenter.k8s.aws/instance-family"
_ACCELERATOR_NAME_KEY = "karpenter.k8s.aws/instance-accelerator-name"
_FP8_KV = ("fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla")


def _cc(gpu) -> str:
    return f"{gpu.id} (compute capability {gpu.compute_capability})"


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        yield from _cuda_image_elsewhere(ctx, work)
        hosting = work.hosting_landings()
        if not hosting:
            yield from _half_refused(ctx, work)
            continue
        image = work.container.image if work.container is not None else None
        anchor = next((a for a in (image, work.model_token) if a is not None), None) or work.invocation.anchor
        yield from _below_floor(ctx, work, hosting, anchor)
        if work.dtype in ("bfloat16", "bf16") and work.known("--dtype"):
            failing, all_fail = judge(work, hosting, lambda p: not p.candidate.gpu.bf16)
            if failing:
                severity, rest = scope(ctx, failing, all_fail, hosting)
                gpu = failing[0][0].candidate.gpu
                yield ctx.finding(work.option_token("--dtype") or anchor, f"--dtype bfloat16 on {_cc(gpu)}, which has no "
                                  "bfloat16: vLLM refuses to start (\"Bfloat16 is only supported on GPUs with compute "
                                  f"capability of at least 8.0\"). {_instead_of_bf16(work)}"
                                  f"{also_words(failing)}{rest}", about=work.invocation, value=f"bf16:{gpu.id}",
                                  severity=severity)
        yield from _fp8(ctx, work, hosting)
        yield from _auto_dtype_and_kernels(ctx, work, hosting)
        yield from _half_refused(ctx, work)


def _below_floor(ctx, work, hosting, anchor):
    release = work.release
    floor = capability_floor(release)  # the release's floor; the newest release's when the manifest names none
    failing, all_fail = judge(work, hosting, lambda p: p.candidate.gpu.capability < floor)
    if not failing:
        return
    severity, rest = scope(ctx, failing, all_fail, hosting)
    placement = failing[0][0]
    gpu = placement.candidate.gpu
    runs = f"vLLM {release}" if release else "the newest vLLM"
    unnamed = "" if release else ", and the image names no release"
    older = " or pin a release that still supported it (0.19.x or older)" if gpu.capability >= (7, 0) else ""
    yield ctx.finding(anchor, f"{_cc(gpu)} is below the compute capability {floor[0]}.{floor[1]} that {runs} "
                      f"supports. It runs on {placement.label} (from {placement.origin}){unnamed}: its prebuilt CUDA "
                      "kernels do not target "
                      f"that GPU, so expect start-up to fail. Use a GPU of compute capability {floor[0]}.{floor[1]} or "
                      f"newer (T4, A10G, L4, A100, H100){older}.{also_words(failing)}{rest}",
                      about=work.invocation, value=f"cc:{gpu.id}", severity=severity)


def _fp8(ctx, work, hosting):
    weights = work.quantization == "fp8" or (work.quantization is None and work.model is not None
                                             and work.model.checkpoint_quantization == "fp8")
    kv = work.kv_cache_dtype in _FP8_KV
    if not (weights or kv) or not work.known("--quantization", "--kv-cache-dtype"):
        return
    what = " and ".join(w for w, on in (("FP8 weights", weights), ("an FP8 KV cache", kv)) if on)
    where = next((t for t in (work.option_token("--quantization") if weights else None,
                              work.option_token("--kv-cache-dtype"), work.model_token) if t is not None), None)
    if where is None:
        return
    # FP8 weights: Fp8Config.get_min_capability() of the release (8.0 up to 0.12, 7.5 from 0.14.1), when known.
    limit = (min_capability("fp8", work.release) or (7, 5)) if weights else (7, 5)
    failing, all_fail = judge(work, hosting, lambda p: p.candidate.gpu.capability < limit)
    if failing:
        severity, rest = scope(ctx, failing, all_fail, hosting)
        gpu = failing[0][0].candidate.gpu
        yield ctx.finding(where, f"{what} on {_cc(gpu)}: vLLM's FP8 kernels need compute capability "
                          f"{limit[0]}.{limit[1]} or newer{_in_release(work, limit)}, so start-up fails. Use a 16-bit or AWQ/GPTQ checkpoint there, or an FP8-capable GPU (L4, L40S, "
                          f"H100).{also_words(failing)}{rest}", about=work.invocation, value=f"fp8:{gpu.id}",
                          severity=severity)
        return
    emulated = [p for p in hosting if limit <= p.candidate.gpu.capability < (8, 9)]
    if emulated:
        gpu = emulated[0].candidate.gpu
        yield ctx.finding(where, f"{what} on {_cc(gpu)}: it has no FP8 tensor cores, so vLLM runs FP8 weight-only "
                          "(Marlin) kernels - it saves memory, not compute. An L4, L40S or H100 (8.9+) computes in "
                          "FP8.", about=work.invocation, value=f"fp8-weight-only:{gpu.id}", severity=Severity.INFO)


def _cuda_image_elsewhere(ctx, work):
    """A CUDA build of vLLM scheduled onto AMD, TPU, Neuron or Gaudi hardware cannot find a CUDA device."""
    container = work.container
    image = work.invocation.image
    upstream = image is not None and _CUDA_IMAGE.match(image.name)
    if container is None or image is None or not (upstream or _cuda_build(image, work.release)):
        return
    reason = None
    if work.gpu_resource is not None and work.gpu_resource[0] in _OTHER_ACCELERATORS:
        reason = f"the pod requests {work.gpu_resource[0]} ({_OTHER_ACCELERATORS[work.gpu_resource[0]]})"
    else:
        placement = container.pod.placement
        requirements = placement.node_selector + [r for term in placement.terms for r in term.requirements]
        values = [(r.key, v) for r in requirements if r.operator == IN for v in r.values]
        neuron = _neuron_only(requirements)
        if neuron is not None:
            reason = f"its node selector asks for {neuron}"
        for key, value in values if reason is None else ():
            if key in ("node.kubernetes.io/instance-type", "karpenter.k8s.aws/instance-family") and \
                    _NON_NVIDIA_INSTANCE.match(str(value) + ("." if "." not in str(value) else "")):
                reason = f"its node selector asks for {value}, which has no NVIDIA GPU"
            elif key in ("cloud.google.com/gke-tpu-accelerator", "cloud.google.com/gke-tpu-topology"):
                reason = f"its node selector asks for a TPU node ({key}: {value})"
            if reason:
                break
        if reason is None:
            reason = _neuron_pools(ctx.world, container)
    if reason:
        build = "vLLM's CUDA build" if upstream else "a CUDA build of vLLM"
        # The problem and the fix on the first line; why the pod has no NVIDIA GPU follows.
        yield ctx.finding(container.image, f"{image.raw} is {build} on hardware with no CUDA device: use the "
                          "matching build (vllm/vllm-openai-rocm for AMD, vllm/vllm-tpu for TPU, the Neuron or Gaudi "
                          f"images) for that hardware. {reason[0].upper()}{reason[1:]}, so it finds no CUDA device "
                          "and fails at start-up.", about=work.invocation,
                          value=f"cuda-image:{image.name}")


def _neuron_only(requirements) -> str | None:
    """'trn1.32xlarge, which has AWS Neuron devices (trainium) and no NVIDIA GPU' when an `In` requirement of
    the pod or its pool admits only Neuron instance types (by type, family or Karpenter's accelerator name);
    None otherwise."""
    from vllmlint.capacity.specs import neuron_instance_types

    catalog = neuron_instance_types()
    families = {i.family: i for i in catalog.values()}
    accelerators = {i.accelerator: i for i in catalog.values()}
    for requirement in requirements:
        if requirement.operator != IN or not requirement.values:
            continue
        values = [str(v) for v in requirement.values]
        if requirement.key in _INSTANCE_TYPE_KEYS:
            table = catalog
        elif requirement.key == _FAMILY_KEY:
            table = families
        elif requirement.key == _ACCELERATOR_NAME_KEY:
            table = accelerators
        else:
            continue
        if all(v in table for v in values):
            kinds = sorted({table[v].accelerator for v in values})
            verb = "has" if len(values) == 1 else "have"
            return f"{', '.join(values)}, which {verb} AWS Neuron devices ({', '.join(kinds)}) and no NVIDIA GPU"
    return None


def _neuron_pools(world, container) -> str | None:
    """When every Karpenter NodePool of the run that may take the pod launches only Neuron instance types."""
    from vllmlint.capacity.workload import admitting_pools

    pools = admitting_pools(container.pod, world)
    if not pools:
        return None
    found = [(pool, _neuron_only(pool.requirements + pool.labels)) for pool in pools]
    if any(words is None for _pool, words in found):
        return None
    pool, words = found[0]
    return f"it lands on NodePool {pool.name}, whose instance types are {words}"


def _quantized(work) -> bool:
    model = work.model
    return work.quantization is not None or (model is not None and model.checkpoint_quantization is not None)


def _auto_dtype_and_kernels(ctx, work, hosting):
    """`--dtype auto` on a GPU without bfloat16 (vLLM stops before the fp16 fallback; the float32 fallback
    for model types refused in float16), and quantization kernels below their minimum capability.
    Landings below the release's floor are left to the floor finding."""
    release = work.release
    floor = capability_floor(release)
    usable = [p for p in hosting if p.candidate.gpu.capability >= floor]
    if not usable:
        return
    model = work.model
    where = work.value_token("--dtype") or work.model_token
    auto = work.dtype == "auto" and work.known("--dtype", "model")
    if auto and model is not None and where is not None:
        fallback = str(vllm_gpu_support()["auto_dtype_fallback"]["from"])
        if release is not None and not in_release_period({"from": fallback}, release) \
                and work.checkpoint_dtype == "bfloat16" and not _quantized(work):
            failing, all_fail = judge(work, usable, lambda p: not p.candidate.gpu.bf16)
            if failing:
                severity, rest = scope(ctx, failing, all_fail, usable)
                gpu = failing[0][0].candidate.gpu
                yield ctx.finding(where, f"{model.id} is a bfloat16 checkpoint and {_cc(gpu)} has no bfloat16: with "
                                  f"--dtype auto, vLLM {release} keeps bfloat16 and stops (\"Bfloat16 is only "
                                  "supported on GPUs with compute capability of at least 8.0 ... You can use float16 "
                                  "instead by explicitly setting the `dtype` flag\"); only 0.9.0 and later fall back "
                                  f"to float16 by themselves. Add --dtype half.{also_words(failing)}{rest}",
                                  about=work.invocation, value=f"bf16-auto:{gpu.id}", severity=severity)
        elif fp16_unsupported(model, release):
            failing, all_fail = judge(work, usable, lambda p: not p.candidate.gpu.bf16)
            if failing:
                gpu = failing[0][0].candidate.gpu
                kind = model_type_of(model)
                runs = f"vLLM {release}" if release else "the newest vLLM"
                yield ctx.finding(where, f"{model.id} runs in float32 on {_cc(gpu)}: {runs} refuses float16 for "
                                  f"model type {kind} (\"Numerical instability\") and the GPU has no bfloat16, so "
                                  "--dtype auto falls back to float32, doubling the memory of weights, activations "
                                  "and KV cache (the capacity rules count it). Use a GPU with bfloat16 (compute "
                                  f"capability 8.0+: A10G, L4, A100) for this model.{also_words(failing)}",
                                  about=work.invocation, value=f"fp32-fallback:{gpu.id}", severity=Severity.INFO)
    yield from _kernel_floor(ctx, work, usable)


def _kernel_floor(ctx, work, usable):
    """`--quantization X` (or an AWQ checkpoint vLLM detects by itself) below X's get_min_capability()."""
    release = work.release
    if not work.known("--quantization"):
        return
    if work.quantization_given:
        if quantization_refused(work) is not None:
            return  # the checkpoint does not hold that method: vLLM stops on it before the capability (VL716)
        method = work.quantization
        where = work.value_token("--quantization") or work.option_token("--quantization")
    elif work.quantization == "awq" and work.known("model"):
        method, where = "awq", work.model_token  # the checkpoint's own quantization_config; awq_marlin needs more
    else:
        return
    if method == "fp8":
        return  # FP8 weights and KV cache: _fp8
    needed = min_capability(method, release)
    if needed is None or where is None:
        return
    failing, all_fail = judge(work, usable, lambda p: p.candidate.gpu.capability < needed)
    if not failing:
        return
    severity, rest = scope(ctx, failing, all_fail, usable)
    gpu = failing[0][0].candidate.gpu
    runs = f"vLLM {release}" if release else "the newest vLLM"
    given = f"--quantization {method}" if work.quantization_given else f"The AWQ checkpoint {work.model_name}"
    have = gpu.capability[0] * 10 + gpu.capability[1]
    plain = {"awq_marlin": "awq"}.get(method, "gptq") if "marlin" in method else None
    instead = f"a GPU of compute capability {needed[0]}.{needed[1]} or newer, or " + (
        f"--quantization {plain} (no Marlin kernels)" if plain else "a GPTQ or 16-bit checkpoint")
    yield ctx.finding(where, f"{given} on {_cc(gpu)}: {runs} needs compute capability {needed[0]}.{needed[1]} for "
                      f"{method} and stops (\"The quantization method {method} is not supported for the current GPU. "
                      f"Minimum capability: {needed[0]}{needed[1]}. Current capability: {have}.\"). Use {instead}."
                      f"{also_words(failing)}{rest}", about=work.invocation, value=f"{method}:{gpu.id}",
                      severity=severity)


def _half_refused(ctx, work):
    """`--dtype half` for a model type vLLM refuses in float16: a ValueError on any GPU."""
    model = work.model
    if model is None or work.dtype not in ("half", "float16") or not work.known("--dtype", "model"):
        return
    if not fp16_unsupported(model, work.release):
        return
    where = work.value_token("--dtype") or work.option_token("--dtype")
    if where is None:
        return
    kind = model_type_of(model)
    runs = f"vLLM {work.release}" if work.release else "the newest vLLM"
    yield ctx.finding(where, f"--dtype {work.dtype} for {model.id}: use --dtype bfloat16 (compute capability 8.0+) or "
                      f"drop --dtype. {runs.replace('the newest', 'The newest')} refuses float16 for model type {kind} and stops "
                      f"(\"The model type '{kind}' does not support float16. Reason: Numerical instability. "
                      "Please use bfloat16 or float32 instead.\"), on any GPU.", about=work.invocation,
                      value=f"half:{kind}")


def _instead_of_bf16(work) -> str:
    if work.model is not None and fp16_unsupported(work.model, work.release):
        return (f"vLLM refuses float16 for {work.model.id} too: use a GPU with bfloat16 (A10G, L4, A100), or "
                "--dtype float32 (twice the memory).")
    return "Use --dtype half (float16, same memory)."


def _in_release(work, limit) -> str:
    if limit == (7, 5):
        return ""
    return f" in vLLM {work.release}" if work.release else " in the newest vLLM"


def _cuda_build(image, release) -> bool:
    """Whether the image table (data/image-entrypoints.yaml `builds`) says every build the image may be is
    CUDA (vendor images such as lmcache/vllm-openai or AWS's `-gpu-` DLCs)."""
    from vllmlint.vllm.images import image_builds

    builds = image_builds(image, release)
    return bool(builds) and all(b.accelerator == "cuda" for b in builds)
