"""Kinds of the `networking.k8s.io` group."""
