"""Kubernetes and Compose objects, their pod templates and containers, as a typed model with positions."""
