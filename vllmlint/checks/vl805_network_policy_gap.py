"""VL805: NetworkPolicies that do not fit the vLLM pods of the run.

Kubernetes' semantics (defaults, the union of every policy that selects a pod) are in
`vllmlint/k8s/networkpolicy.py`; the facts (DNS, distributed ports, scrapers' labels) in
`data/network-policy.yaml`. Four findings, only about pods of the run:

1. a policy whose podSelector selects no pod of the run while a vLLM pod of its namespace carries the same
   labels but for one near-miss value or key (a typo): the policy protects nothing;
2. vLLM pods isolated for egress with no rule of any policy selecting them that allows DNS (UDP 53 to
   where kube-dns can be): warning when the pod evidently resolves names (a model from the hub, a
   multi-node peer or Ray head by name), info when it serves a local path and nothing shows a name, silent
   when it also says it is offline (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE);
3. vLLM pods isolated for ingress where a ServiceMonitor, PodMonitor or `prometheus.io/scrape` annotation
   of the run scrapes a port that no ingress rule opens to anything that could be Prometheus;
4. an ingress rule that opens a distributed runtime's port (torch.distributed, Ray) to every namespace or
   every address.
"""
from __future__ import annotations

import re
from functools import lru_cache

from vllmlint.capacity.workload import RAY_KINDS, download_dir, downloaded_by_name, workloads_by
from vllmlint.checks import Context
from vllmlint.finding import Severity
from vllmlint.k8s.networkpolicy import (EGRESS, INGRESS, NetworkPolicy, Peer, PolicyRule, isolating, named_ports,
                                        network_policies, scrape_targets, union_rules, ScrapeTarget)
from vllmlint.k8s.objects import PodTemplate, namespaces_compatible
from vllmlint.k8s.pod import CONFIG_MAP, LITERAL
from vllmlint.k8s.selectors import IN
from vllmlint.vllm.groups import lws_size
from vllmlint.source.yamlmodel import Node, Scalar

_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_TRUE = ("1", "ON", "YES", "TRUE")  # huggingface_hub constants._is_true (VL710 reads the same)
_ADDRESS_FLAGS = ("--master-addr", "--data-parallel-address")


@lru_cache(maxsize=1)
def _facts() -> dict:
    from vllmlint.data import knowledge_dir, load_yaml_data

    return load_yaml_data(knowledge_dir() / "network-policy.yaml") or {}


def _describe(template: PodTemplate) -> str:
    owner = template.owner
    name = f"{owner.kind} {owner.name}" if owner.name else owner.kind
    return f"{name} ({template.role})" if template.role and owner.kind in RAY_KINDS + ("LeaderWorkerSet",) else name


def _pods_of(templates: list[PodTemplate]) -> str:
    """"the vLLM pods of Deployment a and StatefulSet b"."""
    seen: list[str] = []
    for template in templates:
        text = _describe(template)
        if text not in seen:
            seen.append(text)
    listed = seen[0] if len(seen) == 1 else ", ".join(seen[:-1]) + " and " + seen[-1]
    return f"the vLLM pods of {listed}"


def check(ctx: Context):
    policies = network_policies(ctx.world)
    if not policies:
        return
    # NetworkPolicy does not apply to hostNetwork pods (their traffic is the node's; the Kubernetes docs call
    # the behaviour undefined and most plugins ignore them): not judged.
    vllm = [t for t in ctx.world.vllm_templates() if t.owner.kind != "ComposeService" and not _host_network(t)]
    if not vllm:
        return
    yield from _typos(ctx, policies, vllm)
    if _other_policies(ctx):
        return  # another plugin's or the admin policies of the run may allow (or deny) what these leave out
    yield from _dns(ctx, policies, vllm)
    yield from _scrapes(ctx, policies, vllm)
    yield from _distributed(ctx, policies, vllm)
    yield from _group_traffic(ctx, policies, vllm)


def _other_policies(ctx: Context) -> bool:
    """The run holds a policy of another kind (Cilium, Calico, Antrea, AdminNetworkPolicy)."""
    facts = _facts()["other_policy_kinds"]
    groups = tuple(facts["api_groups"])
    return any(obj.api_version.split("/", 1)[0] in groups for obj in ctx.world.of_kind(*facts["kinds"]))


def _host_network(template: PodTemplate) -> bool:
    node = template.spec.get("hostNetwork")
    return isinstance(node, Scalar) and node.value is True


# --- 1. a policy that selects nothing, one label away from a vLLM pod --------------------------------------
def _distance(a: str, b: str) -> int:
    """Levenshtein distance (short strings: label keys and values)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _near(written: str, actual: str) -> bool:
    """A typo of `actual`: the same word in another case, or one or two edits on a word of four characters
    or more (a quarter of it at most). Never two names that differ only in their digits (`vllm-1`, `vllm-2`)
    or in one short segment (`vllm-a`, `vllm-b`; `serve-us`, `serve-eu`): those are two workloads."""
    if written == actual or abs(len(written) - len(actual)) > 2 or max(len(written), len(actual)) > 317:
        return False  # label keys are at most 253 + 1 + 63 characters, values 63
    if written.lower() == actual.lower():
        return True
    if "".join(c for c in written if not c.isdigit()) == "".join(c for c in actual if not c.isdigit()):
        return False
    a, b = re.split(r"[-_./]", written), re.split(r"[-_./]", actual)
    if len(a) == len(b):
        differ = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        if len(differ) == 1 and max(len(differ[0][0]), len(differ[0][1])) <= 2:
            return False
    shorter = min(len(written), len(actual))
    return shorter >= 4 and _distance(written, actual) <= min(2, shorter // 4)


def _near_miss(selector, template: PodTemplate):
    """(the requirement's node, what the pod carries, the requirement) when `template` carries the selector's
    labels but for one near-miss value or key; else None."""
    labels = template.labels
    failing = [r for r in selector.parsed.requirements if not r.matches(labels, template.implicit_label)]
    if len(failing) != 1 or failing[0].operator != IN or len(failing[0].values) != 1:
        return None
    requirement = failing[0]
    value = requirement.values[0]
    if requirement.key in labels and _near(value, labels[requirement.key]):
        return requirement.node, f"{requirement.key}={labels[requirement.key]}", requirement
    keys = [k for k, v in labels.items() if v == value and _near(requirement.key, k)]
    if keys:
        return requirement.key_node, f"{keys[0]}={value}", requirement
    return None


def _typos(ctx: Context, policies: list[NetworkPolicy], vllm: list[PodTemplate]):
    world = ctx.world
    for policy in policies:
        chosen = policy.pod_selector
        if chosen.everything or not chosen.parsed.valid or any(policy.selects(t) for t in world.templates):
            yield from _peer_typos(ctx, policy, vllm)
            continue
        for template in vllm:
            if not namespaces_compatible(template.namespace, policy.namespace):
                continue
            miss = _near_miss(chosen, template)
            if miss is None:
                continue
            where, meant, requirement = miss
            written = f"{requirement.key}={requirement.values[0]}"
            yield ctx.finding(where or policy.anchor(INGRESS),
                              f"NetworkPolicy {policy.name} selects no pod of the run: its podSelector asks for "
                              f"`{written}`, and {_describe(template)}'s vLLM pods in the same namespace are "
                              f"labelled `{meant}`, so the policy restricts nothing. Fix the label in the "
                              "podSelector.", about=policy.obj, value=f"typo:{written}")
            break


def _peer_typos(ctx: Context, policy: NetworkPolicy, vllm: list[PodTemplate]):
    """A `from`/`to` podSelector (alone: the policy's namespace) of a policy that selects vLLM pods, that
    selects no pod of the run while a pod of the namespace carries its labels but for one near miss."""
    if not any(policy.selects(t) for t in vllm):
        return
    world = ctx.world
    local = [t for t in world.templates if t.owner.kind != "ComposeService"
             and namespaces_compatible(t.namespace, policy.namespace)]
    for direction in (INGRESS, EGRESS):
        for rule in policy.rules(direction):
            for peer in rule.peers:
                selector = peer.pod_selector
                if not peer.same_namespace_pods or selector is None or selector.everything or \
                        not selector.parsed.valid or any(selector.selects(t) for t in local):
                    continue
                for template in local:
                    miss = _near_miss(selector, template)
                    if miss is None:
                        continue
                    where, meant, requirement = miss
                    written = f"{requirement.key}={requirement.values[0]}"
                    flow = "from them to the vLLM pods" if direction == INGRESS else "from the vLLM pods to them"
                    yield ctx.finding(where or peer.node,
                                      f"An {direction.lower()} rule of NetworkPolicy {policy.name} names pods "
                                      f"labelled `{written}`, which no pod of the run carries; the pods of "
                                      f"{_describe(template)} in the same namespace are labelled `{meant}`, so "
                                      f"traffic {flow} is blocked. Fix the label in the podSelector.",
                                      about=policy.obj, value=f"typo:{written}")
                    break


# --- 2. DNS ----------------------------------------------------------------------------------------------------
def _dns_pod_selector(peer: Peer) -> bool:
    """The peer's podSelector names the DNS pods (`k8s-app: kube-dns`...)."""
    selector = peer.pod_selector
    if selector is None or selector.everything:
        return False
    return any(selector.matches({label["key"]: label["value"]}) for label in _facts()["dns"]["pod_labels"])


def _may_reach_dns(peer: Peer, policy: NetworkPolicy) -> bool:
    """Whether the DNS pods may be among the peer's pods or addresses."""
    if not peer.readable or peer.ip_block or peer.namespace_selector is not None:
        return True  # an address block (node-local DNS, the DNS pods' CIDR) or other namespaces: may be DNS
    return policy.namespace in _facts()["dns"]["namespaces"]  # a podSelector alone: the policy's own namespace


def _dns_port(rule: PolicyRule, protocol: str, labelled: bool) -> bool:
    """Whether the rule's ports let a DNS query over `protocol` through: port 53 (or a range over it), a
    named port called like DNS's, every port, or (to pods named as DNS) any port of that protocol (DNS pods
    may listen on another port behind the Service, e.g. 8053)."""
    dns = _facts()["dns"]
    if rule.any_port:
        return True
    for port in rule.ports:
        if port.protocol != protocol:
            continue
        if port.port is None or labelled:
            return True
        if isinstance(port.port, int):
            if port.port == dns["port"] or port.end_port is not None and port.port <= dns["port"] <= port.end_port:
                return True
        elif any(word in port.port.lower() for word in dns["port_name_words"]):
            return True
    return False


def _dns_verdict(rules: list[PolicyRule]) -> str | None:
    """None when some rule lets DNS through; else what is missing, for the message."""
    tcp_only = wrong_namespace = False
    for rule in rules:
        reachable = rule.any_peer or [p for p in rule.peers if _may_reach_dns(p, rule.policy)]
        if not reachable:
            labelled = any(_dns_pod_selector(p) for p in rule.peers)
            if (labelled or not rule.any_port) and _dns_port(rule, "UDP", labelled):
                wrong_namespace = True  # meant for DNS, but every peer is a podSelector alone: the own namespace
            continue
        labelled = not rule.any_peer and all(_dns_pod_selector(p) for p in reachable)  # type: ignore[union-attr]
        if _dns_port(rule, "UDP", labelled):
            return None
        if _dns_port(rule, "TCP", labelled):
            tcp_only = True
    if wrong_namespace:
        return ("the rule that allows port 53 reaches only pods of the policy's own namespace (a `podSelector` "
                "without a `namespaceSelector`), and the DNS pods run in kube-system")
    if tcp_only:
        return ("port 53 is allowed over TCP only (a port without `protocol` is TCP), and the resolver asks over "
                "UDP")
    return "no egress rule allows UDP port 53"


def _offline(ctx: Context, template: PodTemplate) -> bool:
    for container in template.containers:
        for var in container.resolved_env(ctx.world):
            if var.name in _OFFLINE_VARS and var.origin in (LITERAL, CONFIG_MAP) and \
                    (var.value or "").strip().upper() in _TRUE:
                return True
    return False


def _is_ip(text: str) -> bool:
    import ipaddress  # here, not at start-up (1.5 ms of a one-file run)

    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


def _may_be_cached(work) -> bool:
    """A volume that may already hold the hub cache (not an emptyDir, not unknown): huggingface_hub falls
    back to cached files when it cannot reach the hub, so a blocked DNS may go unnoticed."""
    path, _ = download_dir(work)
    if path is None or work.container is None:
        return True  # the cache is somewhere the manifest does not say
    volume = work.container.backing(path).volume
    return volume is not None and volume.kind != "emptyDir"


def _names_needed(ctx: Context, template: PodTemplate, offline: bool) -> tuple[list[str], list[str]]:
    """(certain, possible): why the pod resolves names at start-up. Certain: a peer or head it reaches by
    name, a hub download with nothing that may hold a cached copy. Possible: a hub download a cache volume
    may answer, or a model the run does not name."""
    certain: list[str] = []
    possible: list[str] = []
    if template.owner.kind in RAY_KINDS and template.role != "head":
        certain.append("its Ray worker joins the head by the head Service's DNS name")
    for work in workloads_by(ctx.world, "pod").get(id(template), []):
        hub = []
        if work.model_name and downloaded_by_name(work):
            hub.append(work.model_name)
        elif not work.model_name:
            possible.append("its model is not named in the run, and vLLM's default model comes from the hub")
        for option in work.invocation.option("--tokenizer"):
            value = option.value or ""
            if option.value_known and value.count("/") == 1 and not value.startswith((".", "/", "~", "$")):
                hub.append(f"the tokenizer {value}")
        if hub and not offline:
            what = f"it downloads {' and '.join(hub)} from the Hugging Face hub (huggingface.co)"
            if _may_be_cached(work):
                possible.append(what + ", unless a volume already holds it in the hub cache")
            else:
                certain.append(what)
        for flag in _ADDRESS_FLAGS:
            for option in work.invocation.option(flag):
                token = option.value_token
                if token is None or option.value is None:
                    continue
                if token.dynamic:
                    if "LWS_LEADER_ADDRESS" in option.value:
                        certain.append(f"`{flag}` is the LeaderWorkerSet leader's DNS name ($(LWS_LEADER_ADDRESS))")
                    continue
                if not _is_ip(option.value):
                    certain.append(f"`{flag} {option.value}` is a name its peers resolve")
    return certain, possible


def _dns(ctx: Context, policies: list[NetworkPolicy], vllm: list[PodTemplate]):
    grouped: dict[int, tuple[NetworkPolicy, str, list[PodTemplate], list[str], list[str]]] = {}
    for template in vllm:
        isolated = isolating(policies, template, EGRESS)
        if not isolated:
            continue
        verdict = _dns_verdict(union_rules(isolated, EGRESS))
        if verdict is None:
            continue
        offline = _offline(ctx, template)
        certain, possible = _names_needed(ctx, template, offline)
        if not certain and offline:
            continue  # a local or cached model and HF_HUB_OFFLINE: the pod says it needs no network
        anchor = isolated[0]
        entry = grouped.setdefault(id(anchor), (anchor, verdict, [], [], []))
        entry[2].append(template)
        entry[3].extend(f"{_describe(template)}: {why}" for why in certain)
        entry[4].extend(f"{_describe(template)}: {why}" for why in possible)
    for policy, verdict, templates, certain, possible in grouped.values():
        others = [p.name for p in isolating(policies, templates[0], EGRESS) if p is not policy]
        also = f" (with {', '.join(others)})" if others else ""
        fix = ("allow DNS, in this policy or a separate allow-dns policy selecting these pods: an egress rule `to` "
               "`namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}` with `podSelector: "
               "{matchLabels: {k8s-app: kube-dns}}`, ports 53 UDP and 53 TCP.")
        head = (f"NetworkPolicy {policy.name} blocks DNS: {verdict}. It{also} isolates the egress of "
                f"{_pods_of(templates)}.")
        if certain:
            message = f"{head} Name resolution fails, so vLLM cannot start ({'; '.join(certain)}): {fix}"
            severity = ctx.severity
        else:
            if possible:
                why = f"Start-up may fail ({'; '.join(possible)})"
            else:
                why = ("The model is served from a local path and nothing in the run shows a name this pod must "
                       "resolve, so start-up may succeed")
            message = (f"{head} {why}; anything that resolves a name later (the hub, a remote tokenizer or adapter, "
                       f"usage statistics) fails. Set HF_HUB_OFFLINE=1 if the pod is meant to be offline, or {fix}")
            severity = min(ctx.severity, Severity.INFO)
        yield ctx.finding(policy.anchor(EGRESS), message, about=policy.obj,
                          value=f"dns:{policy.name}", severity=severity)


# --- 3. Prometheus's scrape ---------------------------------------------------------------------------------------
def _scraper_words(texts) -> bool:
    words = _facts()["scrapers"]["label_words"]
    return any(word in text.lower() for text in texts for word in words)


_NAMESPACE_NAME_KEYS = ("kubernetes.io/metadata.name", "name")


def _named_namespaces(peer: Peer) -> list[str] | None:
    """The namespace names a namespaceSelector lists (`kubernetes.io/metadata.name` or the conventional
    `name` label, In), when that is all it says and no podSelector narrows it to a scraper; else None."""
    selector = peer.namespace_selector
    if selector is None or selector.everything or not selector.parsed.valid:
        return None
    names: list[str] = []
    for requirement in selector.parsed.requirements:
        if requirement.key not in _NAMESPACE_NAME_KEYS or requirement.operator != IN:
            return None
        names.extend(requirement.values)
    return names or None


def _scraper_chance(ctx: Context, rule: PolicyRule) -> tuple[str, list[str]]:
    """("yes" | "unlikely" | "no", namespaces): whether a peer of the rule may be Prometheus. "unlikely": only
    namespaces named for something else (`name: ingress-nginx`) may hold it."""
    if rule.any_peer:
        return "yes", []
    unlikely: list[str] = []
    for peer in rule.peers:
        if not peer.readable or peer.ip_block:
            return "yes", []  # addresses: Prometheus may be there
        if peer.namespace_selector is not None:
            names = _named_namespaces(peer)
            pods = peer.pod_selector
            pod_words = [] if pods is None or pods.everything else \
                [r.key for r in pods.parsed.requirements] + [v for r in pods.parsed.requirements for v in r.values]
            if names is None or _scraper_words(names + pod_words):
                return "yes", []  # other namespaces that may hold Prometheus
            unlikely.extend(names)
            continue
        selector = peer.pod_selector
        if selector is None or selector.everything:
            return "yes", []  # every pod of the namespace, Prometheus's too if it runs there
        selected = [t for t in ctx.world.templates if t.owner.kind != "ComposeService"
                    and namespaces_compatible(t.namespace, rule.policy.namespace) and selector.selects(t)]
        if not selected:
            requirements = selector.parsed.requirements
            if _scraper_words([r.key for r in requirements] + [v for r in requirements for v in r.values]):
                return "yes", []  # pods of the namespace that are not in the run, named like a scraper
            continue
        for template in selected:
            images = [str(c.image.value) for c in template.containers if c.image is not None]
            if _scraper_words(list(template.labels.values()) + images + [template.owner.name]):
                return "yes", []
    return ("unlikely", unlikely) if unlikely else ("no", [])


def _scrapes(ctx: Context, policies: list[NetworkPolicy], vllm: list[PodTemplate]):
    grouped: dict[tuple[int, int], tuple[NetworkPolicy, list[NetworkPolicy], ScrapeTarget, list[PodTemplate],
                                         list[str]]] = {}
    done: set[tuple[int, int]] = set()  # (template, port): what decides the outcome; the first target names it
    chance_of: dict[int, tuple[str, list[str]]] = {}  # a rule's `_scraper_chance`, once (rules live with policies)
    for target in scrape_targets(ctx.world, vllm):
        template = target.template
        if (id(template), target.port) in done:
            continue
        done.add((id(template), target.port))
        isolated = isolating(policies, template, INGRESS)
        if not isolated:
            continue
        names = named_ports(template)
        chances = [chance_of[id(rule)] if id(rule) in chance_of else chance_of.setdefault(id(rule), _scraper_chance(
                   ctx, rule)) for rule in union_rules(isolated, INGRESS)
                   if rule.allows_port(target.port, "TCP", names) is not False]
        if any(chance == "yes" for chance, _ in chances):
            continue
        namespaces = [n for chance, listed in chances if chance == "unlikely" for n in listed]
        entry = grouped.setdefault((id(isolated[0]), target.port), (isolated[0], isolated, target, [], []))
        if template not in entry[3]:
            entry[3].append(template)
        entry[4].extend(n for n in namespaces if n not in entry[4])
    invocations = ctx.world.vllm_templates()
    for (_, scraped), (policy, isolated, target, templates, namespaces) in grouped.items():
        others = [p.name for p in isolated if p is not policy]
        also = f" (with {', '.join(others)})" if others else ""
        api = sorted({inv.api_port for t in templates for inv in invocations[t] if inv.api_port is not None})
        port, note = scraped, ""
        if api and scraped not in api:
            port = api[0]
            note = (f" (vLLM serves /metrics on its API port {port}, not {scraped}: point the scrape there too, "
                    "see VL301)")
        fix = (f"Allow TCP {port} from Prometheus's pods (a `namespaceSelector` for its namespace, with a "
               f"`podSelector` for its labels){note}.")
        if namespaces:
            listed = ", ".join(namespaces)
            yield ctx.finding(policy.anchor(INGRESS),
                              f"NetworkPolicy {policy.name} opens scraped port {scraped} only to namespace(s) "
                              f"{listed}. It{also} isolates the ingress of {_pods_of(templates)}, and {target.what} "
                              f"scrapes port {scraped}: unless Prometheus runs there, the scrape times out and the "
                              "target stays down. "
                              + fix, about=policy.obj, value=f"scrape:{scraped}",
                              severity=min(ctx.severity, Severity.INFO))
            continue
        yield ctx.finding(policy.anchor(INGRESS),
                          f"NetworkPolicy {policy.name} keeps Prometheus from scraping port {scraped}. "
                          f"It{also} isolates the ingress of {_pods_of(templates)}, and no ingress rule of the "
                          f"policies that select them lets Prometheus reach port {scraped}, "
                          f"which {target.what} scrapes: the scrape times out and the target stays down. " + fix,
                          about=policy.obj, value=f"scrape:{scraped}")


# --- 4. distributed ports open to everyone ----------------------------------------------------------------------
def _group_templates(ctx: Context, vllm: list[PodTemplate]) -> list[PodTemplate]:
    """The vLLM pod templates and the other templates of their owners (Ray workers, LWS workers)."""
    result: list[PodTemplate] = []
    for template in vllm:
        for member in ctx.world.templates_of(template.owner) or [template]:
            if member not in result and member.role != "submitter" and not _host_network(member):
                result.append(member)
    return result


def _listens(template: PodTemplate, port: int, component: str) -> bool:
    """Evidence that the pod listens on `port`: a container port, or a Ray head's default ports."""
    if any(p.number == port for c in template.containers for p in c.container_ports):
        return True
    return component == "Ray" and template.owner.kind in RAY_KINDS and template.role == "head"


def _open_peer(rule: PolicyRule) -> tuple[str, Node] | None:
    """(to whom, the node saying it) when the rule admits every namespace or every address."""
    if rule.any_peer:
        return "any source (the rule has no `from`)", rule.node
    for peer in rule.peers:
        if peer.every_namespace:
            return "every pod of every namespace (`namespaceSelector: {}`)", peer.node
        if peer.every_address:
            return f"every address (`ipBlock: {peer.cidr}`)", peer.node
    return None


def _distributed(ctx: Context, policies: list[NetworkPolicy], vllm: list[PodTemplate]):
    ports = _facts()["distributed_ports"]
    reported: set[int] = set()
    for template in _group_templates(ctx, vllm):
        isolated = isolating(policies, template, INGRESS)
        names = named_ports(template)
        for rule in union_rules(isolated, INGRESS):
            opened = _open_peer(rule)
            if opened is None or id(rule) in reported:
                continue
            whom, peer_node = opened
            if rule.any_peer and (rule.any_port or all(p.port is None for p in rule.ports)):
                continue  # an allow-all rule: the pods are not restricted at all, which is not this check's case
            found: list[tuple[dict, Node]] = []
            for fact in ports:
                number = fact["port"]
                listed = [p for p in rule.ports if p.port is not None and p.covers(number, "TCP", names) is True]
                if listed:
                    found.append((fact, listed[0].node))
                elif (rule.any_port or any(p.port is None and p.protocol == "TCP" for p in rule.ports)) and \
                        _listens(template, number, fact["component"]):
                    found.append((fact, peer_node))
            if not found:
                continue
            reported.add(id(rule))
            opened_ports = "; ".join(f"{fact['port']} ({fact['what']})" for fact, _ in found)
            components = " and ".join(dict.fromkeys(fact["component"] for fact, _ in found))
            plural = "s" if len(found) > 1 else ""
            numbers = ", ".join(str(fact["port"]) for fact, _ in found)
            # The policy, the ports and the fix on the first line (up to the first `: `); what they are follows.
            yield ctx.finding(found[0][1], f"NetworkPolicy {rule.policy.name} opens {components} port{plural} "
                              f"{numbers} to {whom}: allow them only from the group's own pods (a `podSelector` of "
                              f"their labels). An ingress rule of NetworkPolicy {rule.policy.name} opens "
                              f"port{plural} {opened_ports} of the pods of {_describe(template)} to {whom}. "
                              f"{components} trust whoever reaches these ports: anything that does can join, "
                              "disrupt or run code in the vLLM server's group.",
                              about=rule.policy.obj, value="open:" + ",".join(str(f["port"]) for f, _ in found))


# --- 5. traffic between the pods of one multi-node server ---------------------------------------------------------
def _spans_pods(ctx: Context, owner, templates: list[PodTemplate]) -> bool:
    """The owner's pods form one vLLM server over several pods (VL713's reading): a LeaderWorkerSet of size
    two or more; a StatefulSet of two or more replicas whose vLLM says `--nnodes` >= 2 or needs more ranks
    than its pod's GPUs; a Ray cluster with worker groups."""
    if owner.kind == "LeaderWorkerSet":
        return lws_size(owner) >= 2
    if owner.kind in RAY_KINDS:
        return len([t for t in templates if t.role not in ("head", "submitter")]) >= 1
    if owner.kind != "StatefulSet":
        return False
    replicas = owner.replicas
    if replicas is None or replicas.value < 2:
        return False
    for work in workloads_by(ctx.world, "owner").get(id(owner), []):
        if work.nnodes is not None and work.nnodes >= 2:
            return True
        if work.known("--tensor-parallel-size", "--pipeline-parallel-size"):
            request = work.gpu_resource
            if request is not None and request[1] >= 1 and work.world_size > request[1]:
                return True
    return False


def _all_ports(rule: PolicyRule) -> bool:
    """The rule allows every TCP port a rank may pick (no ports, a TCP entry without a port, or a range over
    the unprivileged ports)."""
    if rule.any_port:
        return True
    start = _facts()["group_traffic"]["all_ports_from"]
    for port in rule.ports:
        if port.protocol != "TCP":
            continue
        if port.port is None:
            return True
        if isinstance(port.port, int) and port.end_port is not None and port.port <= start and port.end_port >= 65535:
            return True
    return False


def _peer_group(peer: Peer, policy: NetworkPolicy, members: list[PodTemplate]) -> str:
    """"all" when the peer surely admits every member, "maybe" when it may, "no" when it admits none."""
    if not peer.readable or peer.ip_block or peer.namespace_selector is not None:
        return "maybe"  # addresses or other namespaces' labels: not judged
    selector = peer.pod_selector
    if selector is None:
        return "maybe"
    chosen = [m for m in members if namespaces_compatible(m.namespace, policy.namespace) and selector.selects(m)]
    return "all" if len(chosen) == len(members) else "some" if chosen else "no"


def _group_traffic(ctx: Context, policies: list[NetworkPolicy], vllm: list[PodTemplate]):
    seen: set[int] = set()
    for template in vllm:
        owner = template.owner
        if id(owner) in seen:
            continue
        seen.add(id(owner))
        members = [t for t in ctx.world.templates_of(owner) if t.role != "submitter" and not _host_network(t)]
        if not _spans_pods(ctx, owner, members):
            continue
        for direction, word in ((INGRESS, "from"), (EGRESS, "to")):
            for member in members:
                isolated = isolating(policies, member, direction)
                if not isolated:
                    continue
                rules = union_rules(isolated, direction)
                open_rule = False
                limited: list[str] = []
                for rule in rules:
                    reach = ["all"] if rule.any_peer else [_peer_group(p, rule.policy, members) for p in rule.peers]
                    if "maybe" in reach or ("all" in reach and _all_ports(rule)):
                        open_rule = True
                        break
                    if any(r in ("all", "some") for r in reach):
                        limited.extend(str(p.port) + (f"-{p.end_port}" if p.end_port else "")
                                       for p in rule.ports if p.port is not None)
                if open_rule:
                    continue
                ports = ", ".join(dict.fromkeys(limited)) if limited else "none"
                policy = isolated[0]
                yield ctx.finding(policy.anchor(direction),
                                  f"NetworkPolicy {policy.name} keeps the ranks of {owner.kind} {owner.name} from "
                                  f"connecting. It isolates the {direction.lower()} of the pods of "
                                  f"{_describe(member)}, part of the multi-node vLLM server of {owner.kind} "
                                  f"{owner.name}, and allows traffic {word} that server's pods only on port(s) "
                                  f"{ports}: NCCL, Gloo and vLLM's own messaging between the ranks connect "
                                  "on ports chosen at start-up, so the ranks never finish connecting. Allow every "
                                  f"port {word} the group's own pods (a rule with a `podSelector` of their labels "
                                  "and no `ports`).",
                                  about=policy.obj, value=f"group:{direction}:{owner.name}")
                break
