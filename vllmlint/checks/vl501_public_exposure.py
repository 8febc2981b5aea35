from vllmlint.finding import Severity
from vllmlint.k8s.services import service_selector
from vllmlint.source.yamlmodel import Mapping, scalar_str
from vllmlint.checks import Context

INTERNAL_ANNOTATIONS = {
    "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
    "service.beta.kubernetes.io/aws-load-balancer-internal": None,  # any true-ish value
    "networking.gke.io/load-balancer-type": "internal",
    "cloud.google.com/load-balancer-type": "internal",
    "service.beta.kubernetes.io/azure-load-balancer-internal": "true",
    "service.beta.kubernetes.io/oci-load-balancer-internal": "true",
    "service.kubernetes.io/ibm-load-balancer-cloud-provider-ip-type": "private",
}


def _restricted(service) -> str | None:
    """Why an exposed Service is not open to the internet, if it says so."""
    for key, expected in INTERNAL_ANNOTATIONS.items():
        value = service.annotations.get(key)
        if value is None:
            continue
        lowered = value.strip().lower()
        if (expected is None and lowered in ("true", "0.0.0.0/0") or lowered == "true") or lowered == expected:
            return f"annotated internal (`{key}`)"
    ranges = service.spec.get("loadBalancerSourceRanges") if service.spec else None
    if ranges is not None and getattr(ranges, "items", None):
        return "limited by `loadBalancerSourceRanges`"
    return None


def check(ctx: Context):
    vllm_templates = ctx.world.vllm_templates()
    for service in ctx.world.of_kind("Service"):
        spec = service.spec
        if not isinstance(spec, Mapping):
            continue
        kind = scalar_str(spec.get("type"))
        if kind not in ("LoadBalancer", "NodePort"):
            continue
        selected = [t for t in ctx.world.selected_templates(service_selector(service), service.namespace)
                    if t in vllm_templates]
        if not selected:
            continue
        restricted = _restricted(service)
        if restricted and kind == "LoadBalancer":
            yield ctx.finding(spec.get("type") or spec, f"Service {service.name} exposes vLLM through a {kind}, "
                              f"{restricted}: keep an authenticated gateway in front, since `--api-key` guards only "
                              "`/v1`, `/v2`, `/inference` and `/cohere`.", about=service, value=kind,
                              severity=Severity.INFO)
            continue
        reach = "every node's IP" if kind == "NodePort" else "a public load balancer"
        yield ctx.finding(spec.get("type") or spec, f"Service {service.name} exposes vLLM on {reach} ({kind}): vLLM has no "
                          "authentication by default and `--api-key` guards only `/v1`, `/v2`, `/inference` and "
                          "`/cohere` (not `/metrics`, `/health`, `/invocations`): use a ClusterIP Service behind an "
                          "authenticated gateway or Ingress.", about=service, value=kind)
