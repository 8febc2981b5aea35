"""VL721 kv-transfer-wiring: catches / does not catch, with the position of every finding."""
import json
from pathlib import Path

import jsonschema
import pytest

from vllmlint.data import load_yaml_data
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent
NIXL = '\'{"kv_connector":"NixlConnector","kv_role":"kv_both"}\''


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL721"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL721"]


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


def deployment(env="[]", replicas=2, image="vllm/vllm-openai:v0.11.2", transfer=NIXL, extra="", name="decode",
               env_from=""):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: llm-d}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: vllm
        image: {image}
        command: [vllm, serve, Qwen/Qwen3-8B, --kv-transfer-config, {transfer}{extra}]
        env: {env}{env_from}
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


def pod(first_env="[]", second_env="[]", image="vllm/vllm-openai:v0.11.2", first_extra="", second_extra="",
        sidecar="", first=NIXL, second=NIXL, tp=""):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: pd}}
spec:
  containers:
  - name: prefill
    image: {image}
    command: [vllm, serve, Qwen/Qwen3-8B, --port, "8100",{tp} --kv-transfer-config, {first}{first_extra}]
    env: {first_env}
  - name: decode
    image: {image}
    command: [vllm, serve, Qwen/Qwen3-8B, --port, "8200", --kv-transfer-config, {second}{second_extra}]
    env: {second_env}
{sidecar}"""


def test_data_matches_its_schema():
    schema = json.loads((ROOT / "schemas" / "kv-transfer.schema.json").read_text())
    jsonschema.validate(load_yaml_data(ROOT / "data" / "kv-transfer.yaml"), schema)


# --- the side channel's host ---------------------------------------------------------------------------------
def test_catches_an_unset_host_in_a_replicated_workload():
    # at the --kv-transfer-config value
    assert found(deployment()) == [(13, 69, Severity.WARNING, "VLLM_NIXL_SIDE_CHANNEL_HOST=<unset>")]
    (finding,) = lint(deployment())
    assert finding.message.startswith("Set VLLM_NIXL_SIDE_CHANNEL_HOST to the pod's IP")
    assert "Deployment decode runs 2 pods" in finding.message


@pytest.mark.parametrize("value", ["0.0.0.0", "localhost", "127.0.0.1", "'[::]'"])
def test_catches_an_unreachable_host(value):
    text = deployment(env=f"[{{name: VLLM_NIXL_SIDE_CHANNEL_HOST, value: {value}}}]")
    ((line, col, severity, _),) = found(text)
    assert (line, col, severity) == (14, 58, Severity.WARNING)


def test_catches_separate_prefill_and_decode_workloads_of_one_replica_each():
    text = deployment(replicas=1, name="prefill") + "---\n" + deployment(replicas=1, name="decode")
    assert [(line, col) for line, col, _, _ in found(text)] == [(13, 69), (30, 69)]
    assert "separate pods" in lint(text)[0].message


def test_catches_a_multi_connector_that_runs_nixl():
    multi = ('\'{"kv_connector":"MultiConnector","kv_role":"kv_both","kv_connector_extra_config":{"connectors":'
             '[{"kv_connector":"NixlConnector","kv_role":"kv_both"},{"kv_connector":"LMCacheConnectorV1",'
             '"kv_role":"kv_both"}]}}\'')
    assert len(found(deployment(transfer=multi))) == 1


def test_catches_the_dotted_form():
    text = deployment(transfer="'{}', --kv-transfer-config.kv_connector, NixlConnector")
    assert len(found(text)) == 1


def test_an_unknown_release_is_judged():
    # every release with NixlConnector reads the variable, with the same default
    assert len(found(deployment(image="vllm/vllm-openai:latest"))) == 1


def test_does_not_catch_the_pod_ip():
    env = "[{name: VLLM_NIXL_SIDE_CHANNEL_HOST, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]"
    assert found(deployment(env=env)) == []


def test_does_not_catch_a_routable_literal_or_an_expansion():
    assert found(deployment(env="[{name: VLLM_NIXL_SIDE_CHANNEL_HOST, value: '$(POD_IP)'}]")) == []
    assert found(deployment(env="[{name: VLLM_NIXL_SIDE_CHANNEL_HOST, value: 10.0.0.12}]")) == []


def test_does_not_catch_one_pod():
    assert found(deployment(replicas=1)) == []


def test_does_not_catch_an_envfrom_not_in_the_run():
    text = deployment(env_from="\n        envFrom:\n        - configMapRef: {name: nixl-settings}")
    assert found(text) == []


def test_reads_an_envfrom_in_the_run():
    config_map = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: nixl-settings, namespace: llm-d}
data: {VLLM_NIXL_SIDE_CHANNEL_HOST: 0.0.0.0}
"""
    text = deployment(env_from="\n        envFrom:\n        - configMapRef: {name: nixl-settings}") + config_map
    assert [v for _, _, _, v in found(text)] == ["VLLM_NIXL_SIDE_CHANNEL_HOST=0.0.0.0"]


def test_does_not_catch_a_release_before_the_connector():
    assert found(deployment(image="vllm/vllm-openai:v0.8.5.post1")) == []


def test_does_not_catch_a_connector_without_a_side_channel():
    assert found(deployment(transfer='\'{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}\'')) == []


def test_does_not_catch_an_unknown_config():
    assert found(deployment(transfer="$(KV_CONFIG)")) == []


# --- ports ------------------------------------------------------------------------------------------------------
def test_catches_two_containers_on_the_default_port():
    # 0.11.2: both bind localhost:5600; the finding is at the second container's --kv-transfer-config
    assert found(pod()) == [(12, 81, Severity.ERROR, "prefill/decode:5600")]
    (finding,) = lint(pod())
    assert finding.message.startswith("Give the NixlConnector side channels of containers `decode` and `prefill` "
                                      "separate ports: both bind port 5600 in one pod.")


def test_catches_two_containers_on_one_explicit_port():
    env = "[{name: VLLM_NIXL_SIDE_CHANNEL_PORT, value: '5700'}]"
    assert found(pod(first_env=env, second_env=env, image="vllm/vllm-openai:latest")) == [
        (13, 54, Severity.ERROR, "prefill/decode:5700")]


def test_catches_overlapping_tensor_parallel_ranges_on_0_10_2():
    # 0.10.2: one port per TP rank, so prefill (TP 2) takes 5600-5601 and decode's 5601 collides
    first = "[{name: VLLM_NIXL_SIDE_CHANNEL_PORT, value: '5600'}]"
    second = "[{name: VLLM_NIXL_SIDE_CHANNEL_PORT, value: '5601'}]"
    text = pod(first, second, image="vllm/vllm-openai:v0.10.2", first_extra=", --tensor-parallel-size, '2'")
    assert [v for _, _, _, v in found(text)] == ["prefill/decode:5601"]
    # 0.11.2: one port per engine
    assert found(pod(first, second, first_extra=", --tensor-parallel-size, '2'")) == []


def test_catches_kv_events_on_the_side_channel_port_in_one_container():
    events = ", --kv-events-config, '{\"enable_kv_cache_events\":true,\"publisher\":\"zmq\"}'"
    text = deployment(replicas=1, image="vllm/vllm-openai:v0.10.2", extra=events)
    ((line, col, severity, value),) = found(text)
    assert (line, col, severity, value) == (13, 145, Severity.ERROR, "vllm:5557")


def test_kv_events_publisher_defaults_per_release():
    events = ", --kv-events-config, '{\"enable_kv_cache_events\":true}'"
    env = "[{name: VLLM_NIXL_SIDE_CHANNEL_PORT, value: '5557'}]"
    # 0.10.2: the publisher defaults to "null": nothing binds
    assert found(deployment(env=env, replicas=1, image="vllm/vllm-openai:v0.10.2", extra=events)) == []
    # 0.11.2: "zmq" when the events are enabled
    assert len(found(deployment(env=env, replicas=1, extra=events))) == 1


def test_does_not_catch_a_connecting_endpoint():
    events = ", --kv-events-config, '{\"enable_kv_cache_events\":true,\"endpoint\":\"tcp://indexer:5557\"}'"
    env = "[{name: VLLM_NIXL_SIDE_CHANNEL_PORT, value: '5557'}]"
    assert found(deployment(env=env, replicas=1, extra=events)) == []


def test_does_not_catch_two_addresses():
    # the pod's IP and loopback are two addresses: both listeners bind
    env = "[{name: VLLM_NIXL_SIDE_CHANNEL_HOST, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]"
    assert found(pod(first_env=env)) == []
    # both on the pod's IP collide
    assert len(found(pod(first_env=env, second_env=env))) == 1


def test_does_not_catch_defaults_on_an_unknown_release():
    assert found(pod(image="vllm/vllm-openai:latest")) == []


def test_catches_a_sidecar_declaring_the_port():
    sidecar = """  - name: metrics
    image: envoyproxy/envoy:v1.31.0
    ports:
    - containerPort: 5600
"""
    text = pod(second_env="[{name: VLLM_NIXL_SIDE_CHANNEL_PORT, value: '5700'}]", sidecar=sidecar)
    assert found(text) == [(17, 22, Severity.ERROR, "prefill/metrics:5600")]


def test_does_not_catch_the_vllm_container_declaring_its_own_port():
    text = deployment(replicas=1, env="[{name: VLLM_NIXL_SIDE_CHANNEL_PORT, value: '5600'}]").replace(
        "        resources:", "        ports:\n        - {containerPort: 5600, name: nixl}\n        resources:")
    assert found(text) == []


def test_catches_kv_events_of_two_containers_on_one_port():
    events = ", --kv-events-config, '{\"enable_kv_cache_events\":true}'"
    first = "[{name: VLLM_NIXL_SIDE_CHANNEL_PORT, value: '5600'}]"
    second = "[{name: VLLM_NIXL_SIDE_CHANNEL_PORT, value: '5700'}]"
    text = pod(first, second, first_extra=events, second_extra=events)
    assert [v for _, _, _, v in found(text)] == ["prefill/decode:5557"]
    assert "Give the KV-events publishers of containers `decode` and `prefill`" \
        in lint(text)[0].message


def test_catches_a_leader_worker_set_of_several_pods():
    text = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: decode}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 1
    workerTemplate:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.2
          command: [vllm, serve, Qwen/Qwen3-8B, --kv-transfer-config, '{"kv_connector":"NixlConnector","kv_role":"kv_both"}']
          resources:
            limits: {nvidia.com/gpu: 1}
"""
    assert [v for _, _, _, v in found(text)] == ["VLLM_NIXL_SIDE_CHANNEL_HOST=<unset>"]
    assert "LeaderWorkerSet decode runs 2 pods" in lint(text)[0].message
    assert found(text.replace("replicas: 2", "replicas: 1")) == []


def test_reads_the_underscore_spelling():
    text = deployment().replace("--kv-transfer-config", "--kv_transfer_config")
    assert len(found(text)) == 1


def test_does_not_compare_engines_with_their_own_data_parallel_ranks():
    # external load balancing: each container is one DP rank, its port is the base + its rank
    text = pod(first_extra=", --data-parallel-size, '2', --data-parallel-rank, '0'",
               second_extra=", --data-parallel-size, '2', --data-parallel-rank, '1'")
    assert found(text) == []


# --- other connectors that listen: MooncakeConnector, P2pNcclConnector (data/kv-transfer.yaml) ------------------
def two(first, second, image="vllm/vllm-openai:v0.20.2", first_env="[]", second_env="[]", tp=""):
    return pod(first_env, second_env, image, first=f"'{first}'", second=f"'{second}'", tp=tp)


MOONCAKE_P = '{"kv_connector":"MooncakeConnector","kv_role":"kv_producer"}'
MOONCAKE_D = '{"kv_connector":"MooncakeConnector","kv_role":"kv_consumer"}'


def test_catches_two_mooncake_bootstrap_servers_on_the_default_port():
    assert found(two(MOONCAKE_P, MOONCAKE_P)) == [(12, 81, Severity.ERROR, "prefill/decode:8998")]
    (finding,) = lint(two(MOONCAKE_P, MOONCAKE_P))
    assert "MooncakeConnector bootstrap server" in finding.message
    assert "VLLM_MOONCAKE_BOOTSTRAP_PORT not set: vLLM 0.20.2's default 8998" in finding.message


def test_catches_mooncake_tensor_parallel_side_channels_on_0_14_1():
    # up to 0.14.1 every TP rank listens on the base port + its rank: 8998-8999 and 8999
    env = "[{name: VLLM_MOONCAKE_BOOTSTRAP_PORT, value: '8999'}]"
    assert found(two(MOONCAKE_P, MOONCAKE_P, image="vllm/vllm-openai:v0.14.1", second_env=env,
                     tp=' --tensor-parallel-size, "2",')) == [(13, 55, Severity.ERROR, "prefill/decode:8999")]


def test_catches_mooncake_beside_nixl_on_one_port():
    nixl = '{"kv_connector":"NixlConnector","kv_role":"kv_consumer"}'
    env = "[{name: VLLM_NIXL_SIDE_CHANNEL_PORT, value: '8998'}]"
    assert found(two(MOONCAKE_P, nixl, second_env=env)) == [(13, 54, Severity.ERROR, "prefill/decode:8998")]


def test_does_not_catch_a_mooncake_decode_server():
    assert found(two(MOONCAKE_P, MOONCAKE_D)) == []
    assert found(two(MOONCAKE_P, MOONCAKE_D, image="vllm/vllm-openai:v0.14.1")) == []


def test_does_not_catch_mooncake_on_separate_ports_or_an_external_bootstrap_server():
    assert found(two(MOONCAKE_P, MOONCAKE_P, second_env="[{name: VLLM_MOONCAKE_BOOTSTRAP_PORT, value: '8999'}]")) == []
    external = ('{"kv_connector":"MooncakeConnector","kv_role":"kv_producer",'
                '"kv_connector_extra_config":{"bootstrap_server_address":"10.0.0.9:8998"}}')
    assert found(two(MOONCAKE_P, external, image="vllm/vllm-openai:v0.33.0")) == []
    # before 0.32.0 the key does not exist: the embedded server still binds
    assert found(two(MOONCAKE_P, external, image="vllm/vllm-openai:v0.29.0")) == [
        (12, 81, Severity.ERROR, "prefill/decode:8998")]


def test_does_not_catch_mooncake_where_it_is_not_known():
    # an unknown release (what it binds changed), a release not read (0.15), a release before the connector
    for image in ("vllm/vllm-openai:latest", "vllm/vllm-openai:v0.15.1", "vllm/vllm-openai:v0.12.0"):
        assert found(two(MOONCAKE_P, MOONCAKE_P, image=image)) == [], image


def test_catches_mooncake_inside_a_multi_connector():
    multi = ('{"kv_connector":"MultiConnector","kv_role":"kv_both","kv_connector_extra_config":{"connectors":['
             '{"kv_connector":"MooncakeConnector","kv_role":"kv_producer"},'
             '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}]}}')
    assert found(two(MOONCAKE_P, multi)) == [(12, 81, Severity.ERROR, "prefill/decode:8998")]
    # the child's own role counts, not the MultiConnector's
    assert found(two(MOONCAKE_P, multi.replace('"MooncakeConnector","kv_role":"kv_producer"',
                                               '"MooncakeConnector","kv_role":"kv_consumer"'))) == []


def p2p(port, role="kv_producer"):
    """As vLLM's xPyD example writes it: http_port is the server's --port (8100 prefill, 8200 decode here)."""
    http = "8100" if role == "kv_producer" else "8200"
    return ('{"kv_connector":"P2pNcclConnector","kv_role":"' + role + '"' + (f',"kv_port":"{port}"' if port else "")
            + ',"kv_connector_extra_config":{"proxy_ip":"10.0.0.2","proxy_port":"30001","http_port":"' + http + '"}}')


def test_catches_p2p_nccl_kv_ports():
    image = "vllm/vllm-openai:v0.11.2"
    # both on the default kv_port
    assert found(two(p2p(None), p2p(None, "kv_consumer"), image=image)) == [
        (12, 81, Severity.ERROR, "prefill/decode:14579")]
    # a TP=2 prefill takes 21001-21002
    assert found(two(p2p(21001), p2p(21002, "kv_consumer"), image=image, tp=' --tensor-parallel-size, "2",')) == [
        (12, 81, Severity.ERROR, "prefill/decode:21002")]


def test_does_not_catch_p2p_nccl_where_it_does_not_collide_or_is_not_known():
    assert found(two(p2p(21001), p2p(22001, "kv_consumer"), image="vllm/vllm-openai:v0.11.2")) == []
    # removed in 0.24.0; unknown release with the default port
    assert found(two(p2p(None), p2p(None, "kv_consumer"), image="vllm/vllm-openai:v0.24.0")) == []
    assert found(two(p2p(None), p2p(None, "kv_consumer"), image="vllm/vllm-openai:latest")) == []


def test_schema_requires_a_port_and_a_way_to_bind():
    schema = json.loads((ROOT / "schemas" / "kv-transfer.schema.json").read_text())
    data = load_yaml_data(ROOT / "data" / "kv-transfer.yaml")
    row = dict(next(r for r in data["connectors"] if r["name"] == "MooncakeConnector"))
    del row["binds"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**data, "connectors": [row]}, schema)


# --- encoder-cache connectors (--ec-transfer-config) -----------------------------------------------------------
def epd(consumer, producer='{"ec_connector":"ECMooncakeConnector","ec_role":"ec_producer"}',
        image="vllm/vllm-openai:v0.33.0", namespace="epd", env="[]"):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: encoder, namespace: {namespace}}}
spec:
  selector: {{matchLabels: {{role: encoder}}}}
  template:
    metadata: {{labels: {{role: encoder}}}}
    spec:
      containers:
      - name: vllm
        image: {image}
        command: [vllm, serve, Qwen/Qwen2.5-VL-3B-Instruct, --ec-transfer-config, '{producer}']
        env: {env}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: pd, namespace: {namespace}}}
spec:
  selector: {{matchLabels: {{role: pd}}}}
  template:
    metadata: {{labels: {{role: pd}}}}
    spec:
      containers:
      - name: vllm
        image: {image}
        command: [vllm, serve, Qwen/Qwen2.5-VL-3B-Instruct, --enable-mm-embeds, --ec-transfer-config, '{consumer}']
"""


def ec_mooncake(extra=""):
    return '{"ec_connector":"ECMooncakeConnector","ec_role":"ec_consumer"' + extra + '}'


def test_catches_the_mooncake_ec_consumer_on_loopback_across_pods():
    # vLLM's 1E+1PD guide writes "ec_ip": "127.0.0.1" (one host); in separate pods the encoder dials its own loopback
    assert found(epd(ec_mooncake(',"ec_ip":"127.0.0.1","ec_port":19019'))) == [
        (26, 103, Severity.WARNING, "ec_ip=127.0.0.1")]
    assert found(epd(ec_mooncake())) == [(26, 103, Severity.WARNING, "ec_ip=<unset>")]
    assert found(epd(ec_mooncake(',"ec_ip":"0.0.0.0"'))) == [(26, 103, Severity.WARNING, "ec_ip=0.0.0.0")]


def test_does_not_catch_a_routable_ec_ip_or_one_workload():
    assert found(epd(ec_mooncake(',"ec_ip":"10.12.0.7"'))) == []
    # the encoder runs another connector family (KV): the consumer has no peer workload here
    assert found(epd(ec_mooncake(), producer='{"kv_connector":"NixlConnector","kv_role":"kv_both"}')) == []
    # before the connector
    assert found(epd(ec_mooncake(), image="vllm/vllm-openai:v0.29.0")) == []


ECCPU = '{"ec_connector":"ECCPUConnector","ec_role":"ec_producer","ec_connector_extra_config":{"ec_enable_nixl":true}}'


def test_catches_the_cpu_ec_producer_side_channel_on_localhost():
    consumer = '{"ec_connector":"ECCPUConnector","ec_role":"ec_consumer"}'
    assert found(epd(consumer, producer=ECCPU)) == [(12, 83, Severity.WARNING, "VLLM_EC_SIDE_CHANNEL_HOST=<unset>")]


def test_does_not_catch_the_cpu_ec_connector_without_its_side_channel():
    consumer = '{"ec_connector":"ECCPUConnector","ec_role":"ec_consumer"}'
    # NIXL transfer off (the default): no listener
    assert found(epd(consumer, producer=ECCPU.replace("true", "false"))) == []
    env = "[{name: VLLM_EC_SIDE_CHANNEL_HOST, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]"
    assert found(epd(consumer, producer=ECCPU, env=env)) == []


def test_catches_a_p2p_nccl_http_port_that_is_not_the_servers_port():
    # vLLM's xPyD example passes "http_port":"$port" beside --port $port; the proxy sends requests to http_port
    assert found(two(p2p(21001), p2p(22001, "kv_consumer"), image="vllm/vllm-openai:v0.11.2")) == []
    wrong = two(p2p(21001), p2p(22001, "kv_consumer").replace('"http_port":"8200"', '"http_port":"8100"'),
                image="vllm/vllm-openai:v0.11.2")
    assert found(wrong) == [(12, 81, Severity.WARNING, "http_port=8100")]
    # without a proxy nothing is registered
    assert found(wrong.replace('"proxy_ip":"10.0.0.2",', "")) == []


# --- MoRIIOConnector: two listeners on every address, extra-config ports + dp rank + tp rank -----------------------
def moriio(role="kv_producer", **extra):
    """As vLLM's MoRIIO usage guide writes it (0.33.0 docs/features/moriio_connector_usage.md): the ports are
    strings of kv_connector_extra_config; http_port is the server's --port (8100 prefill, 8200 decode here)."""
    fields = {"proxy_ip": "10.0.0.2", "proxy_ping_port": "36367",
              "http_port": "8100" if role == "kv_producer" else "8200", **extra}
    return json.dumps({"kv_connector": "MoRIIOConnector", "kv_role": role, "kv_connector_extra_config": fields},
                      separators=(",", ":"))


def test_catches_moriio_handshake_and_notify_listeners_on_the_default_ports():
    # both containers on 6301 and 61005 (every worker of every role binds both), at the second's option
    assert found(two(moriio(), moriio("kv_consumer"), image="vllm/vllm-openai:v0.33.0")) == [
        (12, 81, Severity.ERROR, "prefill/decode:6301"), (12, 81, Severity.ERROR, "prefill/decode:61005")]
    first, second = lint(two(moriio(), moriio("kv_consumer"), image="vllm/vllm-openai:v0.33.0"))
    assert "MoRIIOConnector handshake listener (handshake_port not set: vLLM 0.33.0's default 6301)" in first.message
    assert "MoRIIOConnector notify listener (notify_port not set: vLLM 0.33.0's default 61005)" in second.message


def test_catches_moriio_ports_offset_by_tensor_parallel_ranks():
    # a TP=2 prefill binds 6301-6302 and 61005-61006 (base + dp rank + tp rank): the decode's 6302 collides
    decode = moriio("kv_consumer", handshake_port="6302", notify_port="7501")
    assert found(two(moriio(), decode, image="vllm/vllm-openai:v0.20.2", tp=' --tensor-parallel-size, "2",')) == [
        (12, 81, Severity.ERROR, "prefill/decode:6302")]
    # without TP the prefill binds 6301 only
    assert found(two(moriio(), decode, image="vllm/vllm-openai:v0.20.2")) == []


def test_does_not_catch_moriio_on_its_own_ports_or_where_not_known():
    # the guide's two instances on one host: 6301/6105 and 7301/7501
    apart = two(moriio(handshake_port="6301", notify_port="6105"),
                moriio("kv_consumer", handshake_port="7301", notify_port="7501"), image="vllm/vllm-openai:v0.33.0")
    assert found(apart) == []
    # an empty port takes the default, as _set_port_defaults does
    assert found(two(moriio(handshake_port="", notify_port="6105"),
                     moriio("kv_consumer", notify_port="7501"), image="vllm/vllm-openai:v0.33.0")) == [
        (12, 81, Severity.ERROR, "prefill/decode:6301")]
    # an unknown release, a release not read (0.15), a release before the connector (0.13.0)
    for image in ("vllm/vllm-openai:latest", "vllm/vllm-openai:v0.15.1", "vllm/vllm-openai:v0.13.0"):
        assert found(two(moriio(), moriio("kv_consumer"), image=image)) == [], image


@pytest.mark.parametrize("value", ["127.0.0.1", "0.0.0.0", "localhost"])
def test_catches_a_moriio_host_ip_the_peer_cannot_reach(value):
    transfer = "'" + moriio("kv_consumer", host_ip=value, http_port="8000") + "'"
    assert found(deployment(image="vllm/vllm-openai:v0.29.0", transfer=transfer)) == [
        (13, 69, Severity.WARNING, f"host_ip={value}")]
    (finding,) = lint(deployment(image="vllm/vllm-openai:v0.29.0", transfer=transfer))
    assert finding.message.startswith(f"Remove `host_ip` from kv_connector_extra_config or set it to the pod's IP, "
                                      f"not {value}: without it vLLM advertises the pod's address; ")
    assert "Deployment decode runs 2 pods" in finding.message


def test_does_not_catch_moriio_without_host_ip_or_where_it_is_not_read():
    # unset: vLLM advertises get_ip(), the pod's address
    plain = "'" + moriio("kv_consumer", http_port="8000") + "'"
    assert found(deployment(image="vllm/vllm-openai:v0.29.0", transfer=plain)) == []
    loopback = "'" + moriio("kv_consumer", host_ip="127.0.0.1", http_port="8000") + "'"
    # one pod; a routable address; 0.23.0 has no host_ip key (it advertises get_ip())
    assert found(deployment(image="vllm/vllm-openai:v0.29.0", transfer=loopback, replicas=1)) == []
    assert found(deployment(image="vllm/vllm-openai:v0.29.0", transfer=loopback.replace("127.0.0.1", "10.1.2.3"))) == []
    assert found(deployment(image="vllm/vllm-openai:v0.23.0", transfer=loopback)) == []


def test_catches_a_moriio_http_port_that_is_not_the_servers_port():
    wrong = two(moriio(handshake_port="6301", notify_port="6105"),
                moriio("kv_consumer", handshake_port="7301", notify_port="7501", http_port="8100"),
                image="vllm/vllm-openai:v0.33.0")
    assert found(wrong) == [(12, 81, Severity.WARNING, "http_port=8100")]
    assert found(wrong.replace('"proxy_ip":"10.0.0.2",', "")) == []  # no proxy: nothing registered
