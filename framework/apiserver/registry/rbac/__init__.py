"""Kinds of the `rbac.authorization.k8s.io` group."""
