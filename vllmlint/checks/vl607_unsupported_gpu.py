"""VL607: the GPU (or accelerator) the pod lands on cannot run this vLLM build, dtype or FP8 setting."""
import re

from vllmlint.capacity.estimate import capability_floor
from vllmlint.capacity.lint import also_words, capacity_workloads, judge, scope
from vllmlint.k8s.selectors import IN
from vllmlint.finding import Severity
from vllmlint.checks import Context

# Upstream images built for CUDA; -rocm, -tpu, -neuron, -xpu and -cpu builds are other repositories.
_CUDA_IMAGE = re.compile(r"(^|.*/)vllm/vllm-openai$")
_OTHER_ACCELERATORS = {
    "amd.com/gpu": "AMD GPUs", "google.com/tpu": "TPUs", "habana.ai/gaudi": "Intel Gaudi accelerators",
    "aws.amazon.com/neuron": "AWS Neuron devices", "aws.amazon.com/neuroncore": "AWS Neuron cores",
    "aws.amazon.com/neurondevice": "AWS Neuron devices",
}
_NON_NVIDIA_INSTANCE = re.compile(r"^(trn\d+n?|inf\d+|g4ad|dl1|dl2q)\.", re.I)
_FP8_KV = ("fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla")


def _cc(gpu) -> str:
    return f"{gpu.id} (compute capability {gpu.compute_capability})"


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        yield from _cuda_image_elsewhere(ctx, work)
        hosting = work.hosting_landings()
        if not hosting:
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
                                  "capability of at least 8.0\"). Use --dtype half (float16, same memory)."
                                  f"{also_words(failing)}{rest}", about=work.invocation, value=f"bf16:{gpu.id}",
                                  severity=severity)
        yield from _fp8(ctx, work, hosting)


def _below_floor(ctx, work, hosting, anchor):
    release = work.release
    floor = capability_floor(release)  # the release's floor; the newest release's when the manifest names none
    failing, all_fail = judge(work, hosting, lambda p: p.candidate.gpu.capability < floor)
    if not failing:
        return
    severity, rest = scope(ctx, failing, all_fail, hosting)
    placement = failing[0][0]
    gpu = placement.candidate.gpu
    runs = f"vLLM {release}" if release else "the newest vLLM (the image names no release)"
    older = " or pin a release that still supported it (0.19.x or older)" if gpu.capability >= (7, 0) else ""
    yield ctx.finding(anchor, f"{_cc(gpu)} on {placement.label} (from {placement.origin}) is below the compute "
                      f"capability {floor[0]}.{floor[1]} that {runs} supports: its prebuilt CUDA kernels do not target "
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
    failing, all_fail = judge(work, hosting, lambda p: p.candidate.gpu.capability < (7, 5))
    if failing:
        severity, rest = scope(ctx, failing, all_fail, hosting)
        gpu = failing[0][0].candidate.gpu
        yield ctx.finding(where, f"{what} on {_cc(gpu)}: vLLM's FP8 kernels need compute capability 7.5 or newer, so "
                          "start-up fails. Use a 16-bit or AWQ/GPTQ checkpoint there, or an FP8-capable GPU (L4, L40S, "
                          f"H100).{also_words(failing)}{rest}", about=work.invocation, value=f"fp8:{gpu.id}",
                          severity=severity)
        return
    emulated = [p for p in hosting if (7, 5) <= p.candidate.gpu.capability < (8, 9)]
    if emulated:
        gpu = emulated[0].candidate.gpu
        yield ctx.finding(where, f"{what} on {_cc(gpu)}: it has no FP8 tensor cores, so vLLM runs FP8 weight-only "
                          "(Marlin) kernels - it saves memory, not compute. An L4, L40S or H100 (8.9+) computes in "
                          "FP8.", about=work.invocation, value=f"fp8-weight-only:{gpu.id}", severity=Severity.INFO)


def _cuda_image_elsewhere(ctx, work):
    """A CUDA build of vLLM scheduled onto AMD, TPU, Neuron or Gaudi hardware cannot find a CUDA device."""
    container = work.container
    image = work.invocation.image
    if container is None or image is None or not _CUDA_IMAGE.match(image.name):
        return
    reason = None
    if work.gpu_resource is not None and work.gpu_resource[0] in _OTHER_ACCELERATORS:
        reason = f"the pod requests {work.gpu_resource[0]} ({_OTHER_ACCELERATORS[work.gpu_resource[0]]})"
    else:
        placement = container.pod.placement
        requirements = placement.node_selector + [r for term in placement.terms for r in term.requirements]
        values = [(r.key, v) for r in requirements if r.operator == IN for v in r.values]
        for key, value in values:
            if key in ("node.kubernetes.io/instance-type", "karpenter.k8s.aws/instance-family") and \
                    _NON_NVIDIA_INSTANCE.match(str(value) + ("." if "." not in str(value) else "")):
                reason = f"its node selector asks for {value}, which has no NVIDIA GPU"
            elif key in ("cloud.google.com/gke-tpu-accelerator", "cloud.google.com/gke-tpu-topology"):
                reason = f"its node selector asks for a TPU node ({key}: {value})"
            if reason:
                break
    if reason:
        yield ctx.finding(container.image, f"{image.raw} is vLLM's CUDA build, but {reason}: it finds no CUDA device "
                          "and fails at start-up. Use the matching build (vllm/vllm-openai-rocm for AMD, vllm/vllm-tpu "
                          "for TPU, the Neuron or Gaudi images) for that hardware.", about=work.invocation,
                          value=f"cuda-image:{image.name}")
