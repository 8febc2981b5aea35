"""Kubernetes and Compose objects, their pod templates and containers, as a typed model with positions.

- `objects`: K8sObject, PodTemplate, Container and the World of one run (indexes, references, selectors);
- `pod`: volumes, mounts and the volume behind a path, env with its sources, container ports, probes,
  merged security contexts, resources, replicas and update strategies;
- `placement`: node selector, required node affinity and tolerations as one Placement; NodePools;
- `selectors`: the one Requirement / LabelSelector type (label selectors, node-selector terms, Karpenter);
- `services`: Service ports and their targets; `autoscaling`: HPA and KEDA metric targets;
- `quantity`: the one parser of resource quantities.

Every accessor returns values that keep the YAML nodes they were read from, reads a field of the wrong
type as absent, and walks nodes (never `to_python` copies), so aliases are never expanded.
"""
