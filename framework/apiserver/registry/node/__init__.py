"""Kinds of the `node.k8s.io` group."""
