"""VL501 public-exposure: catches / does not catch, with the position and severity of every finding."""
import json

import jsonschema
import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.k8s.routes import compose_published_ports
from vllmlint.source.yamlmodel import SourceFile, parse_documents

WARN, INFO = Severity.WARNING, Severity.INFO


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL501"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL501"]


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity) for f in lint(text, filename)]


def app(args="[vllm, serve, Qwen/Qwen3-8B]", image="vllm/vllm-openai:v0.29.0", extra="", service_type="ClusterIP",
        target="8000"):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: {image}
        command: {args}
        ports: [{{containerPort: 8000, name: http}}]{extra}
---
apiVersion: v1
kind: Service
metadata: {{name: vllm}}
spec:
  type: {service_type}
  selector: {{app: vllm}}
  ports: [{{name: http, port: 80, targetPort: {target}}}]
"""


KEY = ('[vllm, serve, Qwen/Qwen3-8B, --api-key, "$(VLLM_API_KEY)"]\n'
       "        env: [{name: VLLM_API_KEY, valueFrom: {secretKeyRef: {name: k, key: k}}}]")


def ingress(path="/", cls="nginx", annotations="{}", path_type="Prefix", service="vllm"):
    return f"""---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: vllm
  annotations: {annotations}
spec:
  ingressClassName: {cls}
  rules:
  - host: llm.example.com
    http:
      paths:
      - path: {path}
        pathType: {path_type}
        backend:
          service: {{name: {service}, port: {{number: 80}}}}
"""


HTTPROUTE = """---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: vllm}
spec:
  parentRefs: [{name: public}]
  rules:
  - matches: [{path: {type: PathPrefix, value: PATH}}]
    backendRefs: [{name: vllm, port: 80}]
"""


def gateway(cls="gke-l7-global-external-managed"):
    return f"""---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: public}}
spec:
  gatewayClassName: {cls}
  listeners: [{{name: http, protocol: HTTP, port: 80}}]
"""


def httproute(path="/"):
    return HTTPROUTE.replace("PATH", path)


VIRTUAL_SERVICE = """---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: vllm}
spec:
  hosts: [llm.example.com]
  gateways: GATEWAYS
  http:
  - route:
    - destination: {host: vllm.default.svc.cluster.local, port: {number: 80}}
"""
ISTIO_GATEWAY = """---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: llm-gateway}
spec:
  selector: {istio: ingressgateway}
  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: [llm.example.com]}]
"""
OPENSHIFT_ROUTE = """---
apiVersion: route.openshift.io/v1
kind: Route
metadata: {name: vllm}
spec:
  host: vllm.apps.example.com
  to: {kind: Service, name: vllm}
  port: {targetPort: http}
"""


# --- catches: routes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    (app() + ingress(), [(37, 27, WARN)]),  # no --api-key, nothing authenticates
    (app() + ingress(cls="alb", annotations="{alb.ingress.kubernetes.io/scheme: internet-facing}"), [(37, 27, WARN)]),
    (app() + ingress(cls="alb"), [(37, 27, INFO)]),  # the ALB's default scheme is internal
    (app() + ingress(cls="gce-internal"), [(37, 27, INFO)]),
    (app() + ingress(annotations="{appgw.ingress.kubernetes.io/use-private-ip: 'true'}"), [(37, 27, INFO)]),
    (app() + ingress(annotations="{nginx.ingress.kubernetes.io/allowlist-source-range: '10.0.0.0/8'}"), [(37, 27, INFO)]),
    (app() + ingress(annotations="{nginx.ingress.kubernetes.io/whitelist-source-range: '0.0.0.0/0'}"), [(37, 27, WARN)]),
    (app(KEY) + ingress(), [(35, 15, WARN)]),  # `/` forwards /metrics and /invocations past the key
    (app(KEY) + ingress("/metrics"), [(35, 15, WARN)]),
    (app(KEY) + ingress("/invocations", path_type="Exact"), [(35, 15, WARN)]),
    (app() + OPENSHIFT_ROUTE, [(28, 29, WARN)]),
    (app() + gateway() + httproute(), [(37, 26, WARN)]),
    (app() + gateway("gke-l7-rilb") + httproute(), [(37, 26, INFO)]),  # internal GatewayClass
    (app() + httproute(), [(30, 26, INFO)]),  # its Gateway is not in the run
    (app(KEY) + gateway() + httproute("/"), [(37, 48, WARN)]),
    (app() + ISTIO_GATEWAY + VIRTUAL_SERVICE.replace("GATEWAYS", "[llm-gateway]"), [(38, 27, WARN)]),
    (app() + VIRTUAL_SERVICE.replace("GATEWAYS", "[istio-system/llm-gateway, mesh]"), [(31, 27, INFO)]),
])
def test_catches_routes(text, expected):
    assert found(text) == expected


def test_no_auth_message_names_the_route_and_the_fix():
    (finding,) = lint(app() + ingress())
    assert finding.message.startswith("Ingress vllm routes to vLLM with no authentication in front. It routes to "
                                      "Service vllm through an Ingress (class `nginx`)")
    assert "no authentication in front" in finding.message and "oauth2-proxy" in finding.message


def test_api_key_message_uses_the_release_prefixes():
    (finding,) = lint(app(KEY) + ingress())
    assert "every path, including `/metrics`, `/invocations` and `/pooling`," in finding.message
    assert "`/v1`, `/v2`, `/inference` and `/cohere` (vLLM 0.29.0)" in finding.message
    (old,) = lint(app(KEY, image="vllm/vllm-openai:v0.6.2") + ingress())
    assert "guards only `/v1` (vLLM 0.6.2)" in old.message and "`/pooling`" not in old.message


POOL_ROUTE = """---
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: vllm-pool}
spec:
  selector: {matchLabels: {app: vllm}}
  targetPorts: [{number: PORT}]
  endpointPickerRef: {name: vllm-epp, port: {number: 9002}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm-route}
spec:
  parentRefs: [{name: public}]
  rules:
  - backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: vllm-pool}]
"""


def test_inference_pool_backend():
    """An HTTPRoute to an InferencePool (Gateway API Inference Extension): the pool's pods are the backend."""
    text = app() + gateway() + POOL_ROUTE.replace("PORT", "8000")
    assert found(text) == [(44, 83, WARN)]
    assert "It routes to InferencePool vllm-pool through " in lint(text)[0].message
    assert found(app() + gateway() + POOL_ROUTE.replace("PORT", "9000")) == []  # not vLLM's port
    alpha = POOL_ROUTE.replace("inference.networking.k8s.io/v1", "inference.networking.x-k8s.io/v1alpha2").replace(
        "  selector: {matchLabels: {app: vllm}}\n  targetPorts: [{number: PORT}]",
        "  selector: {app: vllm}\n  targetPortNumber: 8000").replace(
        "group: inference.networking.k8s.io", "group: inference.networking.x-k8s.io")
    assert found(app() + gateway() + alpha) == [(44, 85, WARN)]


def test_kong_plugin_in_the_run_that_does_not_authenticate():
    plugin = "---\napiVersion: configuration.konghq.com/v1\nkind: KongPlugin\nmetadata: {name: rl}\nplugin: rate-limiting\n"
    assert found(app() + plugin + ingress(annotations="{konghq.com/plugins: rl}")) == [(42, 27, WARN)]


# --- catches: Services -------------------------------------------------------------------------------------
def test_load_balancer_and_node_port():
    assert found(app(service_type="LoadBalancer")) == [(19, 9, WARN)]
    assert found(app(service_type="NodePort")) == [(19, 9, WARN)]


def test_aws_nlb_of_the_load_balancer_controller_is_internal_by_default():
    text = app(service_type="LoadBalancer").replace(
        "metadata: {name: vllm}\nspec:\n  type", "metadata:\n  name: vllm\n  annotations: "
        "{service.beta.kubernetes.io/aws-load-balancer-type: external}\nspec:\n  type")
    assert found(text) == [(21, 9, INFO)]
    public = text.replace("{service.beta.kubernetes.io/aws-load-balancer-type: external}",
                          "{service.beta.kubernetes.io/aws-load-balancer-type: external, "
                          "service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing}")
    assert found(public) == [(21, 9, WARN)]
    by_class = app(service_type="LoadBalancer").replace("  type: LoadBalancer",
                                                        "  type: LoadBalancer\n  loadBalancerClass: service.k8s.aws/nlb")
    assert found(by_class) == [(19, 9, INFO)]


def test_a_true_value_on_an_annotation_that_wants_internal_is_not_internal():
    text = app(service_type="LoadBalancer").replace(
        "metadata: {name: vllm}\nspec:\n  type",
        "metadata:\n  name: vllm\n  annotations: {networking.gke.io/load-balancer-type: 'true'}\nspec:\n  type")
    assert found(text) == [(21, 9, WARN)]


def test_distributed_port_named_in_the_message():
    text = app(service_type="NodePort", target="29500").replace(
        "[{containerPort: 8000, name: http}]", "[{containerPort: 8000, name: http}, {containerPort: 29500}]")
    # Only the distributed port is exposed: one finding, at that port, about that port (not `--api-key`).
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col, finding.severity) == (21, 30, WARN)
    assert "distributed port 29500" in finding.message and "--api-key" not in finding.message


LB_BOTH = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: vllm}
spec:
  serviceName: vllm
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: [Qwen/Qwen3-8B]
        ports: [{containerPort: 8000}, {containerPort: 29500}]
---
apiVersion: v1
kind: Service
metadata: {name: both}
spec:
  type: LoadBalancer%s
  selector: {app: vllm}
  ports:
  - {name: http, port: 8000}
  - {name: dist, port: 29500}
"""


def test_the_distributed_port_is_its_own_finding():
    found = [(f.span.line, f.span.col, f.value) for f in lint(LB_BOTH % "")]
    assert found == [(20, 9, "LoadBalancer"), (24, 24, "distributed:29500")]
    # A suppression of the API finding (on `type:`) leaves the open rendezvous port reported.
    found = [(f.span.line, f.value) for f in lint(LB_BOTH % "  # vllmlint: disable=VL501 -- behind our gateway")]
    assert found == [(24, "distributed:29500")]


# --- catches: KubeRay's head Service ------------------------------------------------------------------------
def ray_service(head_extra="", cluster_extra="", command="exec vllm serve Qwen/Qwen3-8B --distributed-executor-backend ray"):
    return f"""apiVersion: ray.io/v1
kind: RayService
metadata: {{name: vllm-ray}}
spec:
  rayClusterConfig:{cluster_extra}
    headGroupSpec:{head_extra}
      rayStartParams: {{dashboard-host: "0.0.0.0"}}
      template:
        spec:
          containers:
          - name: ray-head
            image: vllm/vllm-openai:v0.29.0
            command: [/bin/bash, -c]
            args: ["ray start --head && {command}"]
"""


def test_kuberay_head_service_type():
    assert found(ray_service("\n      serviceType: LoadBalancer")) == [(7, 20, WARN)]
    assert found(ray_service("\n      serviceType: NodePort")) == [(7, 20, WARN)]
    internal = ray_service("\n      serviceType: LoadBalancer",
                           "\n    headServiceAnnotations: {networking.gke.io/load-balancer-type: Internal}")
    assert found(internal) == [(8, 20, INFO)]
    template = ray_service("\n      headService: {spec: {type: LoadBalancer}}")
    assert found(template) == [(7, 34, WARN)]
    (finding,) = lint(ray_service("\n      serviceType: LoadBalancer"))
    assert "8265 (the Ray dashboard and its job submission API, which runs any code on the cluster)" in finding.message


def test_kuberay_head_service_silent():
    assert found(ray_service()) == []  # ClusterIP, KubeRay's default
    assert found(ray_service("\n      serviceType: ClusterIP")) == []
    assert found(ray_service("\n      serviceType: LoadBalancer", command="sleep infinity")) == []  # no vLLM


# --- catches: host network, host ports, Compose ------------------------------------------------------------
def test_host_network_and_host_port_are_info():
    assert found(app(extra="\n      hostNetwork: true")) == [(14, 20, INFO)]
    host_port = app().replace("[{containerPort: 8000, name: http}]", "[{containerPort: 8000, name: http, hostPort: 8000}]")
    assert found(host_port) == [(13, 61, INFO)]


COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:v0.29.0
    command: [Qwen/Qwen3-8B ARGS]
    ports:
      - PORTS
"""


@pytest.mark.parametrize("ports, expected", [
    ('"8000:8000"', [(6, 9, INFO)]),
    ('"0.0.0.0:8080:8000"', [(6, 9, INFO)]),
    ('"8000"', [(6, 9, INFO)]),
    ("{target: 8000, published: 8000}", [(6, 9, INFO)]),
    ('"127.0.0.1:8000:8000"', []),
    ("{target: 8000, published: 8000, host_ip: 127.0.0.1}", []),
    ('"9090:9090"', []),  # not the API port
    ('"${VLLM_PORT:-8000}:8000"', [(6, 9, INFO)]),  # the host port from a variable: still every interface
    ('"${HOST_IP}:8000:8000"', []),  # the address from a variable: not known
])
def test_compose_ports(ports, expected):
    assert found(COMPOSE.replace("PORTS", ports).replace(" ARGS", ""), "compose.yaml") == expected


def test_compose_with_api_key_is_silent():
    text = COMPOSE.replace("PORTS", '"8000:8000"').replace(" ARGS", ", --api-key, sk-local-test")
    assert found(text, "compose.yaml") == []


def test_compose_published_ports_reads_both_syntaxes():
    source = SourceFile("c.yaml", 'ports: ["[::1]:8000:8000/tcp", "8000-8010:8000-8010", {target: 80, host_ip: ::}]\n')
    documents, _ = parse_documents(source)
    ports = compose_published_ports(documents[0].root)
    assert [(p.container_port, p.host_ip) for p in ports] == [(8000, "::1"), (80, "::")]
    source = SourceFile("c.yaml", 'ports: ["${LLM_PORT:-8008}:80", "${HOST_IP}:8000:8000", "8000:${PORT}"]\n')
    documents, _ = parse_documents(source)
    ports = compose_published_ports(documents[0].root)  # a default is read; an unset variable is unknown
    assert [(p.container_port, p.host_ip) for p in ports] == [(80, ""), (8000, "$?"), (None, "")]


# --- does not catch ----------------------------------------------------------------------------------------
SECURITY_POLICY = """---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: jwt}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: TARGET, name: NAME}]
  jwt: {providers: [{name: idp, remoteJWKS: {uri: "https://idp.example.com/jwks"}}]}
"""
CORS_ONLY = """---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: cors}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: vllm}]
  cors: {allowOrigins: ["*"]}
"""
REQUEST_AUTH = """---
apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: {name: jwt}
spec:
  selector: {matchLabels: {app: SELECTED}}
  jwtRules: [{issuer: "https://idp.example.com"}]
"""
AUTHZ_NAMESPACE = """---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: allow-nothing}
spec: {}
"""
EXT_AUTHZ = """---
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: ext-authz}
spec:
  workloadSelector: {labels: {app: vllm}}
  configPatches:
  - applyTo: HTTP_FILTER
    patch:
      operation: INSERT_BEFORE
      value: {name: envoy.filters.http.ext_authz}
"""
GATEWAY_APP = """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api-gateway}
spec:
  selector: {matchLabels: {app: api-gateway}}
  template:
    metadata: {labels: {app: api-gateway}}
    spec:
      containers: [{name: envoy, image: "envoyproxy/envoy:v1.31.0", ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: api-gateway}
spec:
  selector: {app: api-gateway}
  ports: [{port: 80, targetPort: 8080}]
"""
SIDECAR = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, Qwen/Qwen3-8B, --host, 127.0.0.1]
      - name: oauth2-proxy
        image: quay.io/oauth2-proxy/oauth2-proxy:v7.7.1
        args: [--upstream=http://127.0.0.1:8000, --http-address=0.0.0.0:4180]
        ports: [{containerPort: 4180, name: proxy}]
---
apiVersion: v1
kind: Service
metadata: {name: vllm}
spec:
  selector: {app: vllm}
  ports: [{name: http, port: 80, targetPort: proxy}]
"""


@pytest.mark.parametrize("text", [
    app() + ingress(annotations="{nginx.ingress.kubernetes.io/auth-url: 'http://oauth2-proxy.auth.svc/oauth2/auth', "
                    "nginx.ingress.kubernetes.io/auth-signin: 'https://$host/oauth2/start'}"),
    app() + ingress(annotations="{nginx.ingress.kubernetes.io/auth-type: basic, "
                    "nginx.ingress.kubernetes.io/auth-secret: basic-auth}"),
    app() + ingress(cls="alb", annotations="{alb.ingress.kubernetes.io/scheme: internet-facing, "
                    "alb.ingress.kubernetes.io/auth-type: oidc}"),
    app() + ingress(annotations="{traefik.ingress.kubernetes.io/router.middlewares: auth-forward@kubernetescrd}"),
    app(KEY) + ingress("/v1"),  # only the guarded prefix
    app(KEY) + ingress("/v1/chat/completions", path_type="Exact"),
    app(KEY) + ingress("/health", path_type="Exact"),  # a health check alone
    app(KEY) + ingress("/", annotations="{nginx.ingress.kubernetes.io/rewrite-target: /v1/$2}"),  # upstream path unknown
    app() + gateway() + httproute() + SECURITY_POLICY.replace("TARGET", "HTTPRoute").replace("NAME", "vllm"),
    app() + gateway() + httproute() + SECURITY_POLICY.replace("TARGET", "Gateway").replace("NAME", "public"),
    app() + gateway() + httproute() + REQUEST_AUTH.replace("SELECTED", "vllm"),
    app() + gateway() + httproute() + AUTHZ_NAMESPACE,
    app() + gateway() + httproute() + EXT_AUTHZ,
    app() + VIRTUAL_SERVICE.replace("GATEWAYS", "[mesh]"),  # sidecars only
    app() + VIRTUAL_SERVICE.replace("  gateways: GATEWAYS\n", ""),  # no gateways: mesh
    app() + ingress(service="api-gateway") + GATEWAY_APP,  # an API gateway in front of vLLM
    SIDECAR + ingress(),  # the Service reaches the auth proxy's port, not vLLM's
    app() + HTTPROUTE.replace("  parentRefs: [{name: public}]\n", "").replace("PATH", "/"),  # attached nowhere
    app(KEY) + OPENSHIFT_ROUTE.replace("  port: {targetPort: http}", "  path: /v1\n  port: {targetPort: http}"),
    app(KEY, extra="\n      hostNetwork: true"),  # with a key: not reported
    app(),  # a ClusterIP Service
])
def test_does_not_catch(text):
    assert found(text) == []


def test_near_misses_that_do_not_authenticate_still_report():
    """A CORS-only SecurityPolicy and a RequestAuthentication for other pods authenticate nothing here."""
    assert found(app() + gateway() + httproute() + CORS_ONLY) == [(37, 26, WARN)]
    assert found(app() + gateway() + httproute() + REQUEST_AUTH.replace("SELECTED", "other")) == [(37, 26, WARN)]
    assert found(app() + ingress(annotations="{nginx.ingress.kubernetes.io/auth-type: none}")) == [(37, 27, WARN)]


def test_original_chapter_load_balancers_keep_firing():
    from vllmlint.engine import lint_paths

    result, _ = lint_paths(["fixtures/original"], LintOptions(select=["VL501"]))
    assert sorted((f.path, f.span.line, f.severity) for f in result.findings) == [
        ("fixtures/original/api-gateway.yaml", 38, WARN),  # the nginx gateway authenticates nothing
        ("fixtures/original/multi-node-statefulset.yaml", 119, WARN),
        ("fixtures/original/single-node-deployment.yaml", 55, WARN)]
    audited, _ = lint_paths(["fixtures/audited"], LintOptions(select=["VL501"]))
    assert [f for f in audited.findings if f.severity >= WARN] == []


# --- the data ----------------------------------------------------------------------------------------------
def test_exposure_data_is_schema_valid_and_sourced():
    data = load_yaml_data(knowledge_dir() / "exposure.yaml")
    schema = json.loads((schemas_dir() / "exposure.schema.json").read_text())
    jsonschema.validate(data, schema)
    keys = {e["key"] for e in data["internal_service_annotations"]}
    assert "service.beta.kubernetes.io/aws-load-balancer-scheme" in keys
    alb = next(e for e in data["default_internal_services"] if e["applies_to"] == "Ingress")
    assert alb["public_annotation"] == "alb.ingress.kubernetes.io/scheme" and "aws-load-balancer-controller" in alb["source"]
    assert {p["port"] for p in data["distributed_ports"]} == {29500, 6379, 8265, 10001}


# --- an nginx gateway of the run in front of vLLM ----------------------------------------------------------
def nginx_gateway(config, service_type="LoadBalancer", image="nginx:1.27.3"):
    body = "\n".join("    " + line for line in config.splitlines())
    return f"""---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: api-gateway}}
spec:
  selector: {{matchLabels: {{app: api-gateway}}}}
  template:
    metadata: {{labels: {{app: api-gateway}}}}
    spec:
      containers:
      - name: nginx
        image: {image}
        volumeMounts: [{{name: conf, mountPath: /etc/nginx/conf.d}}]
      volumes: [{{name: conf, configMap: {{name: nginx-config}}}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: nginx-config}}
data:
  default.conf: |
{body}
---
apiVersion: v1
kind: Service
metadata: {{name: api-gateway}}
spec:
  type: {service_type}
  selector: {{app: api-gateway}}
  ports: [{{port: 80, targetPort: 80}}]
"""


PROXY_V1 = """server {
  listen 80;
  location /v1/ {
    proxy_pass http://vllm:80;
  }
}"""


def test_nginx_gateway_catches():
    assert found(app() + nginx_gateway(PROXY_V1)) == [(45, 20, WARN)]  # no key, no auth at the gateway
    assert found(app() + nginx_gateway(PROXY_V1, service_type="NodePort")) == [(45, 20, WARN)]
    everything = PROXY_V1.replace("location /v1/", "location /")
    assert found(app(KEY) + nginx_gateway(everything)) == [(46, 20, WARN)]  # `/` past the key
    upstream = "upstream vllm_backend {\n  server vllm.default.svc.cluster.local:80;\n}\n" + PROXY_V1.replace(
        "http://vllm:80", "http://vllm_backend")
    assert found(app() + nginx_gateway(upstream)) == [(48, 20, WARN)]
    (finding,) = lint(app() + nginx_gateway(PROXY_V1))
    assert finding.message.startswith("The nginx gateway Deployment/api-gateway forwards to vLLM without "
                                      "authenticating. It forwards to Service vllm and is exposed by Service "
                                      "api-gateway (LoadBalancer): vLLM runs without `--api-key`")


@pytest.mark.parametrize("text", [
    app() + nginx_gateway(PROXY_V1.replace("proxy_pass", "auth_request /oauth2/auth;\n    proxy_pass")),
    app() + nginx_gateway(PROXY_V1.replace("proxy_pass", "auth_basic \"LLM\";\n    proxy_pass")),
    app() + nginx_gateway(PROXY_V1.replace("proxy_pass", "if ($http_authorization != \"Bearer x\") { return 401; }\n"
                                           "    proxy_pass")),
    app() + nginx_gateway(PROXY_V1.replace("proxy_pass", "allow 10.0.0.0/8;\n    deny all;\n    proxy_pass")),
    app(KEY) + nginx_gateway(PROXY_V1),  # only /v1, with the key
    app(KEY) + nginx_gateway(PROXY_V1.replace("http://vllm:80", "http://vllm:80/v1/")),  # path replaced: not known
    app() + nginx_gateway(PROXY_V1.replace("http://vllm:80", "http://$upstream")),  # a variable
    app() + nginx_gateway(PROXY_V1, service_type="ClusterIP"),  # the gateway is not exposed
    app() + nginx_gateway(PROXY_V1, image="envoyproxy/envoy:v1.31.0"),  # not nginx
    app() + nginx_gateway(PROXY_V1.replace("http://vllm:80", "http://other:80")),  # not vLLM
    app() + nginx_gateway("# location /v1/ { proxy_pass http://vllm:80; }"),  # a comment
])
def test_nginx_gateway_does_not_catch(text):
    assert found(text) == []


def test_nginx_reader_positions_and_blocks():
    from vllmlint.source.nginx import directives

    text = 'http {\n  upstream u { server a:1; }\n  server { location = "/x" { proxy_pass http://u; } } # c\n}\n'
    found_directives = directives(text)
    assert [d.name.text for d in found_directives] == ["http", "upstream", "server", "server", "location", "proxy_pass"]
    proxy = found_directives[-1]
    assert [p.name.text for p in proxy.parents] == ["http", "server", "location"]
    assert proxy.location is found_directives[4] and [a.text for a in proxy.location.args] == ["=", "/x"]
    assert text[proxy.args[0].start:proxy.args[0].end] == "http://u"
